#!/usr/bin/env python3
"""Write testdata/cambi_goldens.json: libvmaf's ``cambi`` outputs on synthetic banded pairs
and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_cambi_goldens.py --libvmaf LIBVMAF_SO [--oracle ORACLE] \\
        [--netflix DIR] [--out PATH]

libvmaf is never built here: ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built outside
the project (Netflix/vmaf f85a8536, ``-Denable_asm=false``, gcc ``-O3`` without ``-march``),
driven through ctypes by the shared oracle (``libvmaf_vmaf_oracle.py ... any NAMES
cambi[:KEY=VALUE...]``, SIMD masked: the scalar C path) for every frame's value at full
precision. Each case runs twice, each in a fresh process, and must give the same doubles
both times; every name asked for must come back.

The synthetic pairs are luma-only (4:0:0) files made here (:func:`pair_planes`),
deterministically, with integer arithmetic and NumPy's PCG64 bit stream
(``random_raw``, stable across versions). Both frames come from one smooth diagonal and
radial ramp over a few dozen codes: the reference with a +-1 grain (no flat areas, so
hardly any banding), the distorted frame quantised to bands one 8-bit code (4 codes at
10 bits, 16 at 12) or half that apart, wide and flat (what CAMBI measures); ``dither``
pairs add a +-1 noise over a third of the distorted frame (the anti-dithering filter and
the zero-derivative mask), ``texture`` pairs a noise texture over a quarter (no mask
there). Each frame moves the ramp. Sizes go
from 216 samples (libvmaf's least) through odd sizes to 1920x1080.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
DEFAULT_NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_vmaf_oracle.py")
)
OUT = os.path.join(HERE, "cambi_goldens.json")
COLLECTOR_DEFAULT_NAME = "Cambi_feature_cambi_score"

# name -> (width, height, bit depth, frames, kind, band step, codes spanned, seed)
PAIRS: dict[str, tuple[int, int, int, int, str, int, int, int]] = {
    "band8_216x216": (216, 216, 8, 2, "band", 1, 12, 1),
    "band8_333x217": (333, 217, 8, 2, "dither", 1, 20, 2),
    "band8_320x240": (320, 240, 8, 3, "texture", 1, 16, 3),
    "band10_480x270": (480, 270, 10, 2, "band", 4, 64, 4),
    "band10_641x361": (641, 361, 10, 2, "dither", 2, 48, 5),
    "band12_400x300": (400, 300, 12, 1, "band", 16, 256, 6),
    "band8_1920x1080": (1920, 1080, 8, 1, "dither", 1, 40, 7),
    "band10_1920x1080": (1920, 1080, 10, 1, "texture", 4, 160, 8),
}

# case -> (pair, options)
CASES: dict[str, tuple[str, str]] = {
    **{f"default_{p}": (p, "") for p in PAIRS},
    "full_ref_216": ("band8_216x216", "full_ref=true"),
    "full_ref_10": ("band10_480x270", "full_ref=true"),
    "window_33": ("band8_320x240", "window_size=33"),
    "window_127": ("band10_641x361", "window_size=127"),
    "window_15": ("band8_333x217", "window_size=15"),
    "topk_0.2": ("band8_320x240", "topk=0.2"),
    "topk_1": ("band10_480x270", "topk=1"),
    "topk_small": ("band8_216x216", "topk=0.0001"),
    "cambi_topk_0.9": ("band8_333x217", "cambi_topk=0.9"),
    "tvi_0.05": ("band8_320x240", "tvi_threshold=0.05"),
    "tvi_0.001": ("band10_480x270", "tvi_threshold=0.001"),
    "mlc_0": ("band8_216x216", "max_log_contrast=0"),
    "mlc_4": ("band10_641x361", "max_log_contrast=4"),
    "mlc_5": ("band8_333x217", "max_log_contrast=5"),
    "max_val": ("band8_320x240", "cambi_max_val=0.5"),
    "vlt_10": ("band8_320x240", "cambi_vis_lum_threshold=10"),
    "vlt_2": ("band10_480x270", "cambi_vis_lum_threshold=2.5"),
    "eotf_pq": ("band10_480x270", "eotf=pq"),
    "cambi_eotf_pq": ("band8_333x217", "cambi_eotf=pq:full_ref=true"),
    "enc_bitdepth_10": ("band8_333x217", "enc_bitdepth=10"),
    "enc_bitdepth_8": ("band10_641x361", "enc_bitdepth=8"),
    "enc_same": ("band8_320x240", "enc_width=320:enc_height=240"),
    "enc_larger": ("band8_320x240", "enc_width=640:enc_height=480"),
    "enc_scaled": ("band10_641x361", "enc_width=401:enc_height=227"),
    "enc_scaled_8": ("band8_333x217", "enc_width=300:enc_height=200"),
    "enc_scaled_full_ref": ("band8_320x240", "enc_width=250:enc_height=190:full_ref=true"),
    "src_scaled_full_ref": (
        "band10_641x361",
        "enc_width=500:enc_height=300:src_width=600:src_height=340:full_ref=true",
    ),
    "speedup_1080": ("band8_1920x1080", "cambi_high_res_speedup=1080"),
    "speedup_unused": ("band8_320x240", "cambi_high_res_speedup=1080"),
    "mixed": ("band10_480x270", "window_size=45:topk=0.3:tvi_threshold=0.03:full_ref=true"),
}

# pair -> (reference, distorted, width, height, pixel format, bit depth) in the Netflix folder
NETFLIX_PAIRS: dict[str, tuple[str, str, int, int, str, int]] = {
    "src01_8": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8),
    "src01_10": (
        "src01_hrc00_576x324.yuv420p10le.yuv",
        "src01_hrc01_576x324.yuv420p10le.yuv",
        576,
        324,
        "420",
        10,
    ),
}
NETFLIX_CASES: dict[str, tuple[str, str]] = {
    "netflix_8": ("src01_8", "full_ref=true"),
    "netflix_10": ("src01_10", "full_ref=true"),
    "netflix_8_window_33": ("src01_8", "window_size=33"),
    "netflix_10_enc_scaled": ("src01_10", "enc_width=400:enc_height=250"),
}


def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
    """n integers in {-1, 0, 1} from PCG64's raw 64-bit words."""
    return (rng.bit_generator.random_raw(n) % np.uint64(3)).astype(np.int64) - 1


def pair_planes(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference's and the distorted frames (frames, height, width): a ramp over
    ``span`` codes with a radial bump, the reference with +-1 grain, the distorted one
    quantised to bands ``step`` codes apart."""
    w, h, bd, frames, kind, step, span, seed = PAIRS[name]
    rng = np.random.Generator(np.random.PCG64(seed))
    top = (1 << bd) - 1
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    refs, diss = [], []
    for k in range(frames):
        # in 1/1024ths of a code
        ramp = (x * 3 + y * 2 + 7 * k) * span * 1024 // (3 * w + 2 * h)
        r2 = (x - w // 3) ** 2 + (y - h // 2) ** 2
        bump = span * 1024 // 4 * (w * w // 8) // (w * w // 8 + r2)
        fine = ((top + 1) // 6) * 1024 + ramp + bump
        ref = fine // 1024 + _noise(rng, w * h).reshape(h, w)
        dis = fine // (step * 1024) * step
        if kind == "dither":
            third = x < w // 3
            dis = np.where(third, dis + _noise(rng, w * h).reshape(h, w), dis)
        elif kind == "texture":
            quarter = (x >= w // 2) & (y >= h // 2)
            tex = (rng.bit_generator.random_raw(w * h) % np.uint64(9)).astype(np.int64) - 4
            dis = np.where(quarter, dis + tex.reshape(h, w) * step, dis)
        ref = np.clip(ref, 0, top)
        dis = np.clip(dis, 0, top)
        dtype = np.uint8 if bd == 8 else np.uint16
        refs.append(ref.astype(dtype))
        diss.append(dis.astype(dtype))
    return np.stack(refs), np.stack(diss)


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes (4:0:0, little-endian above 8 bits)."""
    ref, dis = pair_planes(name)
    if ref.dtype != np.uint8:
        ref, dis = ref.astype("<u2"), dis.astype("<u2")
    return ref.tobytes(), dis.tobytes()


def write_pair(name: str, folder: str) -> tuple[str, str]:
    """Write pair ``name`` into ``folder``; the reference's and distorted file's paths."""
    ref, dis = pair_bytes(name)
    paths = (os.path.join(folder, f"{name}_ref.yuv"), os.path.join(folder, f"{name}_dis.yuv"))
    for path, data in zip(paths, (ref, dis), strict=True):
        with open(path, "wb") as f:
            f.write(data)
    return paths


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def output_names(options: str) -> tuple[str, ...]:
    """The names admcuda writes for ``options`` (admcuda.vmaf.cambi.output_names); the
    oracle is asked for exactly these (the default score under its collector name), so a
    wrong name comes back missing and stops the script."""
    from admcuda.vmaf.plan import parse_feature_arg

    _, opts = parse_feature_arg("cambi" + (f"={options}" if options else ""))
    from admcuda.vmaf.cambi import output_names as names

    return names(opts)  # type: ignore[arg-type]


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    names = output_names(options)
    asked = [COLLECTOR_DEFAULT_NAME if n == "cambi" else n for n in names]
    spec = "cambi" + (":" + options if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", ",".join(asked), spec]  # fmt: skip
    runs = [subprocess.run(cmd, check=True, capture_output=True, text=True).stdout for _ in "ab"]
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = json.loads(runs[0])["frames"]
    out = []
    for row in frames:
        if list(row) != asked:
            raise SystemExit(f"the oracle gave {list(row)}, not {asked}: {cmd}")
        out.append({n: row[a] for n, a in zip(names, asked, strict=True)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 shared library")
    parser.add_argument("--oracle", default=DEFAULT_ORACLE)
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    entries: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in PAIRS:
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        for case, (pair, options) in CASES.items():
            w, h, bd = PAIRS[pair][:3]
            ref, dis = (os.path.join(tmp, f"{pair}_{s}.yuv") for s in ("ref", "dis"))
            frames = _oracle(args, ref, dis, (w, h, "400", bd), options)
            entries[case] = {"pair": pair, "options": options, "frames": frames}
    for case, (pair, options) in NETFLIX_CASES.items():
        ref, dis, w, h, fmt, bd = NETFLIX_PAIRS[pair]
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[pair] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        frames = _oracle(args, ref, dis, (w, h, fmt, bd), options)
        entries[case] = {"pair": pair, "options": options, "frames": frames}
    provenance = {
        "tool": "libvmaf's cambi (src/feature/cambi.c, cambi.h, luminance_tools.c) through "
        "the C API (vmaf_feature_score_at_index: per-frame doubles at full precision), "
        f"the default score asked for as {COLLECTOR_DEFAULT_NAME} and kept under the "
        "name libvmaf's tool prints, cambi",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "code_path": "scalar C path (asm disabled, SIMD masked), gcc -O3 -std=c11 without -march",
        "command": "python3 testdata/make_cambi_goldens.py --libvmaf LIBVMAF_SO",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": entries}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write testdata/ssim_goldens.json: libvmaf's ``float_ssim`` and ``float_ms_ssim`` outputs
on synthetic pairs and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_ssim_goldens.py --libvmaf LIBVMAF_SO [--oracle ORACLE] \\
        [--netflix DIR] [--out PATH]

libvmaf is never built here: ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built outside
the project (Netflix/vmaf f85a8536, ``-Denable_asm=false``, gcc ``-O3`` without ``-march``),
driven through ctypes by the shared oracle (``libvmaf_vmaf_oracle.py ... any NAMES
float_ssim[:KEY=VALUE...]``, SIMD masked: the scalar C path; these features have no SIMD
path) for every frame's value at full precision. Each case runs twice, each in a fresh
process, and must give the same doubles both times.

The synthetic pairs are luma-only (4:0:0) files made here (:func:`pair_bytes`),
deterministically, from NumPy's PCG64 bit stream (``random_raw``, stable across versions)
with integer arithmetic only. Kinds: ``noise`` (a gradient with noise, and that plus
bounded noise, clipped), ``high`` (samples near the bit depth's peak), ``same`` (the
reference twice), ``flat`` (8x8 blocks of one value; the distorted frame changes a few
blocks, so most windows are flat and identical: the structure term's clamp) and
``invert`` (peak minus the reference: negative structure, so MS-SSIM's ``pow`` of a
negative mean gives NaN). Sizes go down to frames smaller than the 11-sample window,
where libvmaf divides 0.0 by a count of window positions that is 0 or negative (NaN,
-0.0). Tests make the pairs again from :data:`PAIRS` and check their sha256 before
comparing.
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
DEFAULT_NETFLIX = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "netflix"))
DEFAULT_ORACLE = os.path.normpath(
    os.path.join(HERE, "..", "..", "shared", "tools", "libvmaf_vmaf_oracle.py")
)
OUT = os.path.join(HERE, "ssim_goldens.json")

SSIM_NAMES = "float_ssim,float_ssim_l,float_ssim_c,float_ssim_s"
MS_SSIM_NAMES = ",".join(
    ["float_ms_ssim"] + [f"float_ms_ssim_{t}_scale{i}" for t in "lcs" for i in range(5)]
)
NAMES = {"float_ssim": SSIM_NAMES, "float_ms_ssim": MS_SSIM_NAMES}

# name -> (width, height, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, int, int, str, int]] = {
    "n8_33x17": (33, 17, 8, 3, "noise", 1),
    "n8_111x67": (111, 67, 8, 2, "noise", 2),
    "n8_11x11": (11, 11, 8, 2, "noise", 3),
    "n8_10x10": (10, 10, 8, 1, "noise", 4),
    "n8_8x8": (8, 8, 8, 1, "noise", 5),
    "high10_37x23": (37, 23, 10, 3, "high", 6),
    "n12_40x24": (40, 24, 12, 2, "noise", 7),
    "n16_35x21": (35, 21, 16, 2, "noise", 8),
    "same8_30x20": (30, 20, 8, 2, "same", 9),
    "flat8_48x32": (48, 32, 8, 2, "flat", 10),
    "inv8_33x17": (33, 17, 8, 1, "invert", 11),
    "n8_389x385": (389, 385, 8, 1, "noise", 12),
    "n8_645x641": (645, 641, 8, 1, "noise", 13),
    "n10_514x512": (514, 512, 10, 1, "noise", 14),
    "n8_181x177": (181, 177, 8, 2, "noise", 15),
    "n16_176x176": (176, 176, 16, 2, "noise", 16),
    "high10_190x200": (190, 200, 10, 2, "high", 17),
    "n12_177x180": (177, 180, 12, 1, "noise", 18),
    "inv8_180x180": (180, 180, 8, 1, "invert", 19),
    "same10_176x180": (176, 180, 10, 1, "same", 20),
    "flat8_192x176": (192, 176, 8, 2, "flat", 21),
    "n8_1920x1080": (1920, 1080, 8, 1, "noise", 22),
}

# name -> (feature, pair, options as --feature FEATURE=... takes them, "" for none)
CASES: dict[str, tuple[str, str, str]] = {
    "ssim_8_odd": ("float_ssim", "n8_33x17", "enable_lcs=true"),
    "ssim_8_db": ("float_ssim", "n8_33x17", "enable_db=true"),
    "ssim_8_clip_db": ("float_ssim", "n8_33x17", "enable_db=true:clip_db=true"),
    "ssim_8_window": ("float_ssim", "n8_11x11", "enable_lcs=true"),
    "ssim_8_under_window": ("float_ssim", "n8_10x10", "enable_lcs=true"),
    "ssim_8_under_window_db": ("float_ssim", "n8_10x10", "enable_db=true:clip_db=true"),
    "ssim_8_8x8": ("float_ssim", "n8_8x8", "enable_lcs=true:enable_db=true"),
    "ssim_8_scale1": ("float_ssim", "n8_111x67", "enable_lcs=true:scale=1"),
    **{
        f"ssim_8_scale{s}": ("float_ssim", "n8_111x67", f"enable_lcs=true:scale={s}")
        for s in range(2, 11)
    },
    "ssim_8_scale2_under_window": ("float_ssim", "n8_33x17", "enable_lcs=true:scale=2"),
    "ssim_10_high": ("float_ssim", "high10_37x23", "enable_lcs=true"),
    "ssim_12": ("float_ssim", "n12_40x24", "enable_lcs=true:enable_db=true"),
    "ssim_16": ("float_ssim", "n16_35x21", "enable_lcs=true:enable_db=true:clip_db=true"),
    "ssim_same_8": ("float_ssim", "same8_30x20", "enable_lcs=true"),
    "ssim_same_8_db": ("float_ssim", "same8_30x20", "enable_db=true"),
    "ssim_same_8_clip_db": ("float_ssim", "same8_30x20", "enable_db=true:clip_db=true"),
    "ssim_flat_8": ("float_ssim", "flat8_48x32", "enable_lcs=true"),
    "ssim_invert_8": ("float_ssim", "inv8_33x17", "enable_lcs=true"),
    "ssim_invert_8_db": ("float_ssim", "inv8_33x17", "enable_db=true:clip_db=true"),
    "ssim_8_auto2_odd": ("float_ssim", "n8_389x385", "enable_lcs=true"),
    "ssim_8_auto3_odd": ("float_ssim", "n8_645x641", "enable_lcs=true"),
    "ssim_10_auto2": ("float_ssim", "n10_514x512", "enable_lcs=true"),
    "ssim_10_scale5": ("float_ssim", "n10_514x512", "scale=5"),
    "ms_ssim_8_odd": ("float_ms_ssim", "n8_181x177", "enable_lcs=true"),
    "ms_ssim_8_db": ("float_ms_ssim", "n8_181x177", "enable_db=true"),
    "ms_ssim_8_clip_db": ("float_ms_ssim", "n8_181x177", "enable_db=true:clip_db=true"),
    "ms_ssim_16_smallest": ("float_ms_ssim", "n16_176x176", "enable_lcs=true"),
    "ms_ssim_10_high": ("float_ms_ssim", "high10_190x200", "enable_lcs=true"),
    "ms_ssim_12": ("float_ms_ssim", "n12_177x180", "enable_lcs=true:enable_db=true"),
    "ms_ssim_invert_8": ("float_ms_ssim", "inv8_180x180", "enable_lcs=true"),
    "ms_ssim_invert_8_db": ("float_ms_ssim", "inv8_180x180", "enable_db=true"),
    "ms_ssim_same_10": ("float_ms_ssim", "same10_176x180", "enable_lcs=true"),
    "ms_ssim_same_10_clip_db": (
        "float_ms_ssim", "same10_176x180", "enable_db=true:clip_db=true",
    ),
    "ms_ssim_flat_8": ("float_ms_ssim", "flat8_192x176", "enable_lcs=true"),
    "ssim_8_1080p": ("float_ssim", "n8_1920x1080", "enable_lcs=true"),
    "ms_ssim_8_1080p": ("float_ms_ssim", "n8_1920x1080", "enable_lcs=true"),
}  # fmt: skip

# Netflix pairs (read from ../shared/netflix, never copied): name -> (ref, dis, w, h, fmt,
# bit depth), and their cases
NETFLIX_PAIRS: dict[str, tuple[str, str, int, int, str, int]] = {
    "src01_8": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8),
    "src01_10": (
        "src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv",
        576, 324, "420", 10,
    ),
    "scaled_48f": ("ref_160x90_48f.yuv", "dis_160x90_48f.yuv", 160, 90, "420", 8),
}  # fmt: skip
NETFLIX_CASES: dict[str, tuple[str, str, str]] = {
    "netflix_48f_ssim": ("float_ssim", "scaled_48f", "enable_lcs=true"),
    "netflix_48f_ssim_scale2": ("float_ssim", "scaled_48f", "enable_lcs=true:scale=2"),
    "netflix_48f_ssim_clip_db": ("float_ssim", "scaled_48f", "enable_db=true:clip_db=true"),
    "netflix_8_ssim": ("float_ssim", "src01_8", "enable_lcs=true"),
    "netflix_8_ssim_scale3": ("float_ssim", "src01_8", "enable_lcs=true:scale=3"),
    "netflix_10_ssim": ("float_ssim", "src01_10", "enable_lcs=true:enable_db=true"),
    "netflix_8_ms_ssim": ("float_ms_ssim", "src01_8", "enable_lcs=true"),
    "netflix_8_ms_ssim_clip_db": ("float_ms_ssim", "src01_8", "enable_db=true:clip_db=true"),
    "netflix_10_ms_ssim": ("float_ms_ssim", "src01_10", "enable_lcs=true"),
}


def pair_planes(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference's and the distorted frames of the synthetic pair ``name``, each
    ``(frames, h, w)`` of uint8 (8 bits) or uint16."""
    w, h, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    n = w * h
    refs, diss = [], []
    for f in range(frames):
        raw = bits.random_raw(3 * n).astype(np.uint64)
        y, x = np.divmod(np.arange(n, dtype=np.int64), w)
        base = ((x * 7 + y * 5 + f * 11) << max(bd - 6, 0)) % (top + 1)
        jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
        spread = max(top // 16, 2)
        noise = (raw[n : 2 * n] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
        if kind == "high":
            ref = top - jitter // 2
        elif kind == "flat":
            block = (y // 8) * ((w + 7) // 8) + x // 8
            levels = (raw[2 * n :] % np.uint64(top + 1)).astype(np.int64)
            ref = levels[block]
        else:
            ref = (base + jitter) % (top + 1)
        if kind == "same":
            dis = ref
        elif kind == "invert":
            dis = top - ref
        elif kind == "flat":
            changed = (levels[block * 7 % n] % 5 == 0).astype(np.int64)
            dis = np.clip(ref + changed * (noise // 2 + 3), 0, top)
        else:
            dis = np.clip(ref + noise, 0, top)
        dtype = np.uint8 if bd == 8 else np.uint16
        refs.append(ref.astype(dtype).reshape(h, w))
        diss.append(dis.astype(dtype).reshape(h, w))
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


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, case: tuple) -> list:
    w, h, fmt, bd = geometry
    feature, _, options = case
    spec = feature + (":" + options if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", NAMES[feature], spec]  # fmt: skip
    runs = [subprocess.run(cmd, check=True, capture_output=True, text=True).stdout for _ in "ab"]
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    return json.loads(runs[0])["frames"]


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
        for case, spec in CASES.items():
            w, h, bd = PAIRS[spec[1]][:3]
            ref, dis = (os.path.join(tmp, f"{spec[1]}_{s}.yuv") for s in ("ref", "dis"))
            frames = _oracle(args, ref, dis, (w, h, "400", bd), spec)
            entries[case] = {"feature": spec[0], "pair": spec[1], "options": spec[2],
                             "frames": frames}  # fmt: skip
    for case, spec in NETFLIX_CASES.items():
        ref, dis, w, h, fmt, bd = NETFLIX_PAIRS[spec[1]]
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[spec[1]] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        frames = _oracle(args, ref, dis, (w, h, fmt, bd), spec)
        entries[case] = {"feature": spec[0], "pair": spec[1], "options": spec[2],
                         "frames": frames}  # fmt: skip
    provenance = {
        "tool": "libvmaf's float_ssim and float_ms_ssim (src/feature/float_ssim.c, "
        "float_ms_ssim.c, ssim.c, ms_ssim.c, iqa/) through the C API "
        "(vmaf_feature_score_at_index: per-frame doubles at full precision; NaN and "
        "Infinity as Python's json writes them)",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "code_path": "scalar C path (asm disabled, SIMD masked; these features have no SIMD "
        "path), gcc -O3 -std=c11 without -march",
        "command": "python3 testdata/make_ssim_goldens.py --libvmaf LIBVMAF_SO",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": entries}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Write testdata/float_vif_goldens.json: libvmaf's ``float_vif`` outputs (the four scale
scores and its ``debug`` outputs) on synthetic pairs, with and without its options, and on
the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_float_vif_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``float_vif`` is one of libvmaf's float features, which its
build leaves out unless configured with ``-Denable_float=true``: ``LIBVMAF_SO`` is a
libvmaf 3.2.0 shared library built outside the project that way (Netflix/vmaf f85a8536,
``-Denable_asm=false -Denable_float=true``), driven through ctypes by the shared oracle
(``libvmaf_vmaf_oracle.py ... any NAMES float_vif:debug=true[:OPTIONS]``, SIMD masked: the
scalar C path) for every frame's values at full precision, twice, each in a fresh
process. ``VMAF_TOOL`` is the ``vmaf`` tool of the same build: where it reads the pair (not
4:0:0, which it takes no ``-p`` for), its JSON is read too and each value it prints must be
the oracle's printed with ``%.6f`` (``null`` where the value is not finite), under the
name it prints (``vif_scale0`` for ``VMAF_feature_vif_scale0_score``).

The synthetic pairs are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only:

- ``noise``: a gradient with jitter over the bit depth's whole range as the reference,
  the reference plus bounded noise (clipped) as the distorted frame.
- ``blur``: the same reference, the distorted frame its 3x3 box blur (integer).
- ``same``: a noisy reference against itself.
- ``grey``: both frames at 128 on the 8-bit scale: no variance anywhere.
- ``const``: the two frames at two other levels: no variance, other means.
- ``swing``: 0 against the bit depth's peak.
- ``flat``: a reference at 128 on the 8-bit scale against a noisy distorted frame.

Chroma, which ``float_vif`` does not read, is mid-grey. Odd sides are 4:0:0 or 4:4:4 (an
odd 4:2:0 height overruns the oracle's pictures); the least side is 16, the least at
which every scale's filter reads inside its picture at the default kernel scale (16, 8,
4 and 2 samples a side for filters of 17, 9, 5 and 3 taps). The option cases run some of
the pairs again with ``float_vif``'s options (``OPTION_CASES``): every prescale method,
kernel scales, ``vif_skip_scale0``, ``vif_enhn_gain_limit``, ``vif_sigma_nsq`` (0 too) and
the minimum values; their names carry libvmaf's suffixes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
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
OUT = os.path.join(HERE, "float_vif_goldens.json")
SCORES = tuple(f"VMAF_feature_vif_scale{s}_score" for s in range(4))
DEBUG = ("vif", "vif_num", "vif_den") + tuple(
    f"vif_{k}_scale{s}" for s in range(4) for k in ("num", "den")
)
ALIASES = {f: f"vif_scale{s}" for s, f in enumerate(SCORES)}
# float_vif.c's feature parameters: option -> (alias, default text as %g prints it)
PARAMS = {
    "vif_enhn_gain_limit": ("egl", "100"),
    "vif_kernelscale": ("ks", "1"),
    "vif_prescale": ("ps", "1"),
    "vif_prescale_method": ("pm", "nearest"),
    "vif_scale1_min_val": ("s1miv", "0"),
    "vif_scale2_min_val": ("s2miv", "0"),
    "vif_scale3_min_val": ("s3miv", "0"),
    "vif_sigma_nsq": ("snsq", "2"),
    "vif_skip_scale0": ("ssclz", "false"),
}

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_400_odd": (33, 17, "400", 8, 3, "noise", 1),
    "n8_420": (48, 32, "420", 8, 2, "noise", 2),
    "n10_400_odd": (35, 19, "400", 10, 3, "noise", 3),
    "n10_422": (40, 24, "422", 10, 2, "noise", 4),
    "n12_444_odd": (21, 23, "444", 12, 2, "noise", 5),
    "n16_400_odd": (37, 18, "400", 16, 3, "noise", 6),
    "n16_420": (64, 36, "420", 16, 2, "noise", 7),
    "min8_400": (16, 16, "400", 8, 2, "noise", 8),
    "min16_444": (16, 17, "444", 16, 2, "noise", 9),
    "min10_400": (17, 16, "400", 10, 2, "noise", 26),
    "wide8_400": (1999, 16, "400", 8, 1, "noise", 10),
    "tall10_400": (16, 257, "400", 10, 1, "noise", 11),
    "blur8_420": (64, 48, "420", 8, 2, "blur", 12),
    "blur12_444": (45, 29, "444", 12, 2, "blur", 13),
    "same8_420": (32, 18, "420", 8, 1, "same", 14),
    "same10_444": (17, 17, "444", 10, 1, "same", 15),
    "grey8_444": (19, 18, "444", 8, 1, "grey", 16),
    "grey12_400": (19, 18, "400", 12, 1, "grey", 24),
    "const10_400": (23, 19, "400", 10, 1, "const", 25),
    "const16_420": (24, 20, "420", 16, 1, "const", 17),
    "swing8_444": (18, 18, "444", 8, 1, "swing", 18),
    "swing16_400": (19, 17, "400", 16, 1, "swing", 19),
    "flat8_420": (20, 18, "420", 8, 1, "flat", 20),
    "flat10_400": (21, 17, "400", 10, 1, "flat", 21),
    "big8_420": (1920, 1080, "420", 8, 1, "noise", 22),
    "big16_400": (1280, 720, "400", 16, 1, "blur", 23),
}

# case name -> (pair, float_vif options as libvmaf's --feature takes them)
OPTION_CASES: dict[str, tuple[str, str]] = {
    "n8_420__ssclz": ("n8_420", "vif_skip_scale0=true"),
    "n10_422__egl1": ("n10_422", "vif_enhn_gain_limit=1"),
    "n16_420__egl1.5": ("n16_420", "vif_enhn_gain_limit=1.5"),
    "blur8_420__ks2": ("blur8_420", "vif_kernelscale=2"),
    "blur8_420__ks0.5": ("blur8_420", "vif_kernelscale=0.5"),
    "n16_420__ks1.5": ("n16_420", "vif_kernelscale=1.5"),
    "n12_444_odd__snsq0.5": ("n12_444_odd", "vif_sigma_nsq=0.5"),
    "grey8_444__snsq0": ("grey8_444", "vif_sigma_nsq=0"),
    "n8_400_odd__snsq0": ("n8_400_odd", "vif_sigma_nsq=0"),
    "n8_400_odd__miv": (
        "n8_400_odd", "vif_scale1_min_val=0.9:vif_scale2_min_val=0.95:vif_scale3_min_val=1",
    ),
    "n10_400_odd__ps2_nearest": ("n10_400_odd", "vif_prescale=2"),
    "n10_422__ps0.8_bilinear": ("n10_422", "vif_prescale=0.8:vif_prescale_method=bilinear"),
    "n12_444_odd__ps1.5_bicubic": (
        "n12_444_odd", "vif_prescale=1.5:vif_prescale_method=bicubic",
    ),
    "n16_420__ps0.75_lanczos4": ("n16_420", "vif_prescale=0.75:vif_prescale_method=lanczos4"),
    "n8_420__ps1.3_bicubic": ("n8_420", "vif_prescale=1.3:vif_prescale_method=bicubic"),
    "n8_420__ps1.3_lanczos4": ("n8_420", "vif_prescale=1.3:vif_prescale_method=lanczos4"),
    "n16_420__combined": (
        "n16_420", "vif_skip_scale0=true:vif_kernelscale=1.5:vif_enhn_gain_limit=1.2",
    ),
    "min8_400__ps1_bilinear": ("min8_400", "vif_prescale_method=bilinear"),
}  # fmt: skip

# Netflix pairs (read from ../shared/netflix, never copied): name -> (ref, dis, w, h, fmt,
# bit depth)
NETFLIX_PAIRS: dict[str, tuple[str, str, int, int, str, int]] = {
    "src01_8": ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8),
    "src01_10": (
        "src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv",
        576, 324, "420", 10,
    ),
    "scaled_48f": ("ref_160x90_48f.yuv", "dis_160x90_48f.yuv", 160, 90, "420", 8),
}  # fmt: skip


def _chroma_shape(w: int, h: int, fmt: str) -> tuple[int, int] | None:
    """A chroma plane's (rows, columns) as the file holds it (an odd side rounded up)."""
    if fmt == "400":
        return None
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    return -(-h >> sy), -(-w >> sx)


def pair_planes(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The reference's and the distorted luma planes of the synthetic pair ``name``, each
    ``(frames, h, w)`` of uint8 (8 bits) or uint16."""
    w, h, _, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    n = w * h
    dtype = np.uint8 if bd == 8 else np.uint16
    refs, diss = [], []
    for f in range(frames):
        raw = bits.random_raw(2 * n).astype(np.uint64)
        y, x = np.divmod(np.arange(n, dtype=np.int64), w)
        base = ((x * 7 + y * 5 + f * 11) << max(bd - 6, 0)) % (top + 1)
        jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
        ref = ((base + jitter) % (top + 1)).reshape(h, w)
        spread = max(top // 16, 2)
        noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64).reshape(h, w) - spread
        if kind in ("flat", "grey"):
            ref = np.full((h, w), 128 << (bd - 8), np.int64)
        elif kind == "const":
            ref = np.full((h, w), top // 3, np.int64)
        dis = np.clip(ref + noise, 0, top)
        if kind == "const":
            dis = np.full((h, w), top // 5, np.int64)
        elif kind == "blur":
            padded = np.pad(ref, 1, mode="edge")
            dis = sum(padded[i : i + h, j : j + w] for i in range(3) for j in range(3)) // 9
        elif kind in ("same", "grey"):
            dis = ref
        elif kind == "swing":
            ref, dis = np.zeros((h, w), np.int64), np.full((h, w), top, np.int64)
        refs.append(ref.astype(dtype))
        diss.append(dis.astype(dtype))
    return np.stack(refs), np.stack(diss)


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's luma, then mid-grey chroma where the layout has it."""
    w, h, fmt, bd = PAIRS[name][:4]
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    chroma = _chroma_shape(w, h, fmt)
    grey = b"" if chroma is None else np.full(chroma, 1 << (bd - 1), dtype).tobytes() * 2
    files = []
    for clip in pair_planes(name):
        files.append(b"".join(frame.astype(dtype).tobytes() + grey for frame in clip))
    return files[0], files[1]


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


def _options(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split(":")) if text else {}


def collector_names(options: str) -> dict[str, str]:
    """Provided feature -> the name libvmaf's collector files it under with ``options``:
    the name itself at the defaults, else its alias and ``_ALIAS[_VALUE]`` for each
    parameter off its default, sorted by option name (``vmaf_feature_name_from_options``).
    The values given here are written as ``%g`` prints them."""
    given = _options(options)
    suffix = ""
    for name in sorted(given):
        alias, default = PARAMS[name]
        if given[name] == default:
            continue
        suffix += f"_{alias}" if given[name] == "true" else f"_{alias}_{given[name]}"
    if not suffix:
        return {f: f for f in SCORES + DEBUG}
    return {f: ALIASES.get(f, f) + suffix for f in SCORES + DEBUG}


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    names = collector_names(options)
    feature = "float_vif:debug=true" + (f":{options}" if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", ",".join(names.values()), feature]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if json.dumps(runs[0]) != json.dumps(runs[1]):
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(tuple(f) != tuple(names.values()) for f in frames):
        raise SystemExit(f"the oracle did not give every output: {cmd}")
    return frames


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    """libvmaf's tool's frames (printed names and values) for the pair."""
    w, h, fmt, bd = geometry
    feature = "float_vif=debug=true" + (f":{options}" if options else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", feature, "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _printed(value: float) -> float | None:
    return float(f"{value:.6f}") if math.isfinite(value) else None


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    frames = _oracle(args, ref, dis, geometry, options)
    if geometry[2] != "400":
        shown = _tool(args, ref, dis, geometry, options)
        ours = [{ALIASES.get(k, k): _printed(v) for k, v in f.items()} for f in frames]
        if shown != ours or any(list(s) != list(o) for s, o in zip(shown, ours, strict=True)):
            raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref} ({options})")
    return {"options": options, "frames": frames}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 built with float features")
    parser.add_argument("--vmaf", required=True, help="the vmaf tool of the same build")
    parser.add_argument("--oracle", default=DEFAULT_ORACLE)
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    cases: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in PAIRS:
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            cases[name] = {"pair": name, **_entry(args, ref, dis, PAIRS[name][:4], "")}
            for case, (pair, options) in OPTION_CASES.items():
                if pair == name:
                    entry = _entry(args, ref, dis, PAIRS[name][:4], options)
                    cases[case] = {"pair": name, **entry}
            os.remove(ref)
            os.remove(dis)
    for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        entry = _entry(args, ref, dis, (w, h, fmt, bd), "")
        cases[f"netflix_{name}"] = {"pair": name, **entry}
    provenance = {
        "tool": "libvmaf's float_vif (src/feature/float_vif.c, vif.c, vif_tools.c, "
        "picture_copy.c) with debug=true through the C API (per-frame values, full "
        "precision); the vmaf tool's JSON of the same build checked against them where it "
        "reads the pair",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0 -O3 -std=c11 without -march (no FMA contraction), x86_64",
        "code_path": "scalar C path (SIMD masked: vif_filter1d_s's fallback loops)",
        "command": "python3 testdata/make_float_vif_goldens.py --libvmaf LIBVMAF_SO "
        "--vmaf VMAF_TOOL",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
        "names": "collector names; libvmaf's files print VMAF_feature_vif_scaleN_score as "
        "vif_scaleN and the others as they are",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

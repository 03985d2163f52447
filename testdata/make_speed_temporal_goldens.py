#!/usr/bin/env python3
"""Write testdata/speed_temporal_goldens.json: libvmaf's ``speed_temporal`` score per
frame on synthetic clips and on the Netflix pairs of ``../shared/netflix``, with and
without its options.

Usage::

    python3 testdata/make_speed_temporal_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built
outside the project (Netflix/vmaf f85a8536, ``-Denable_asm=false -Denable_float=true``:
``speed.c``'s covariance sums take their scalar C kernel, the AVX2 and AVX-512 ones being
left out of the build), driven through ctypes by the shared oracle
(``libvmaf_vmaf_oracle.py ... any NAME speed_temporal[:KEY=VALUE...]``, SIMD masked) for
every frame's score at full precision, twice, each in a fresh process. The name asked
for is the collector's (``Speed_temporal_feature_speed_temporal_score``, or with a
feature parameter off its default the suffixed name, printed as it is). ``VMAF_TOOL`` is
the ``vmaf`` tool of the same build: where it reads the pair (not 4:0:0, which it takes
no ``-p`` for), its JSON is read too and each value it prints must be the oracle's
printed with ``%.6f``, under its printed name.

The synthetic clips are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only:
a canvas of 8x8 cells of random levels over a ramp, each reference frame a window of it
moved by 3 samples across and 2 down from the frame before; the distorted frame the
reference quantised, plus noise of its own. ``speed_temporal`` reads the luma alone (of
any layout), the difference of each frame from the one before:

- ``texture``: the moving window; every covariance regular.
- ``still``: one frame repeated on both sides: every difference is 0, both covariance
  matrices singular.
- ``refstill``: the reference repeated, the distorted one's noise new each frame: the
  reference's covariance alone singular (libvmaf then scores 0).
- ``disstill``: the distorted frame repeated, the reference moving.

The least size is 80x80, the least whose luma leaves a 5x5 block after decimation by 16
(there a block's covariance has one sample: singular on both sides); odd sides are 4:0:0
or 4:4:4 (an odd 4:2:0 height overruns the oracle's pictures). ``speed_prescale`` above
1 is read where it leaves the height as it is (libvmaf keeps a frame in a buffer of the
luma's height and scales into it).
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
OUT = os.path.join(HERE, "speed_temporal_goldens.json")

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "t8_420": (320, 240, "420", 8, 4, "texture", 1),
    "t8_400_odd": (333, 257, "400", 8, 4, "texture", 2),
    "t10_422": (352, 288, "422", 10, 3, "texture", 3),
    "t12_444_odd": (321, 243, "444", 12, 3, "texture", 4),
    "t16_400_odd": (337, 251, "400", 16, 3, "texture", 5),
    "t16_420": (384, 256, "420", 16, 3, "texture", 6),
    "min8_400": (80, 80, "400", 8, 3, "texture", 7),
    "one8_420": (320, 240, "420", 8, 1, "texture", 8),
    "still8_420": (320, 240, "420", 8, 3, "still", 9),
    "refstill8_444": (321, 241, "444", 8, 3, "refstill", 10),
    "disstill10_420": (320, 240, "420", 10, 3, "disstill", 11),
    "wide8_400": (1999, 81, "400", 8, 3, "texture", 12),
    "big8_420": (640, 360, "420", 8, 3, "texture", 13),
    "long8_420": (320, 240, "420", 8, 9, "texture", 14),
}

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

# case name -> (pair, options as libvmaf's --feature takes them)
CASES: dict[str, tuple[str, str]] = {
    "t8_420": ("t8_420", ""),
    "t8_420_ref_diff": ("t8_420", "speed_use_ref_diff=true"),
    "t8_420_sigma_floor": ("t8_420", "speed_sigma_nn=1.2:speed_nn_floor=0.5"),
    "t8_420_max_val": ("t8_420", "speed_max_val=0.01"),
    "t8_400_odd": ("t8_400_odd", ""),
    "t8_400_odd_ks_0.5": ("t8_400_odd", "speed_kernelscale=0.5"),
    "t8_400_odd_ks_3": ("t8_400_odd", "speed_kernelscale=3"),
    "t10_422": ("t10_422", ""),
    "t10_422_ks_1.5": ("t10_422", "speed_kernelscale=1.5:speed_sigma_nn=0.1"),
    "t10_422_ks_2/3": ("t10_422", "speed_kernelscale=0.666667"),
    "t12_444_odd": ("t12_444_odd", ""),
    "t12_444_odd_ref_diff": ("t12_444_odd", "speed_use_ref_diff=true:speed_nn_floor=1"),
    "t16_400_odd": ("t16_400_odd", ""),
    "t16_420": ("t16_420", ""),
    "t16_420_ks_2": ("t16_420", "speed_kernelscale=2:speed_sigma_nn=2"),
    "min8_400": ("min8_400", ""),
    "one8_420": ("one8_420", ""),
    "still8_420": ("still8_420", ""),
    "still8_420_floor": ("still8_420", "speed_nn_floor=0.2"),
    "refstill8_444": ("refstill8_444", ""),
    "refstill8_444_ref_diff": ("refstill8_444", "speed_use_ref_diff=true"),
    "disstill10_420": ("disstill10_420", ""),
    "wide8_400": ("wide8_400", ""),
    "wide8_400_nearest_1.004": ("wide8_400", "speed_prescale=1.004"),
    "wide8_400_bilinear_1.004": (
        "wide8_400", "speed_prescale=1.004:speed_prescale_method=bilinear",
    ),
    "big8_420": ("big8_420", ""),
    "big8_420_nearest_0.5": ("big8_420", "speed_prescale=0.5"),
    "big8_420_bilinear_0.75": ("big8_420", "speed_prescale=0.75:speed_prescale_method=bilinear"),
    "big8_420_bilinear_0.6": ("big8_420", "speed_prescale=0.6:speed_prescale_method=bilinear"),
    "big8_420_nearest_0.9_ks": ("big8_420", "speed_prescale=0.9:speed_kernelscale=0.5"),
    "big8_420_all": (
        "big8_420",
        "speed_kernelscale=1.5:speed_prescale=0.8:speed_prescale_method=bilinear:"
        "speed_sigma_nn=0.5:speed_nn_floor=0.25:speed_max_val=20:speed_use_ref_diff=true",
    ),
    "long8_420": ("long8_420", ""),
    "long8_420_ref_diff_ks": ("long8_420", "speed_use_ref_diff=true:speed_kernelscale=0.5"),
    "netflix_src01_8": ("src01_8", ""),
    "netflix_src01_8_ref_diff": ("src01_8", "speed_use_ref_diff=true"),
    "netflix_src01_10": ("src01_10", ""),
    "netflix_scaled_48f": ("scaled_48f", ""),
}  # fmt: skip

# libvmaf's speed_temporal option table, as far as names go: option -> (alias, kind, default)
_NAMING = {
    "speed_kernelscale": ("ks", "double", 1.0),
    "speed_prescale": ("ps", "double", 1.0),
    "speed_prescale_method": ("psm", "string", "nearest"),
    "speed_sigma_nn": ("snn", "double", 0.29),
    "speed_nn_floor": ("nnf", "double", 0.0),
    "speed_max_val": ("mxv", "double", 1000.0),
    "speed_use_ref_diff": ("urd", "bool", "false"),
}


def collector_name(options: str) -> str:
    """The collector's name of the score: ``Speed_temporal_feature_speed_temporal_score``,
    or with a feature parameter off its default ``speed_temporal`` suffixed by each such
    parameter's alias (and value, but for a bool), parameters in alphabetical order."""
    given = dict(kv.split("=", 1) for kv in options.split(":") if kv)
    suffix = ""
    for name in sorted(_NAMING):
        alias, kind, default = _NAMING[name]
        if name not in given:
            continue
        value = given[name]
        if kind == "bool":
            suffix += f"_{alias}" if value != default else ""
        elif kind == "string":
            suffix += f"_{alias}_{value}" if value != default else ""
        else:
            suffix += f"_{alias}_{float(value):g}" if float(value) != default else ""
    return f"speed_temporal{suffix}" if suffix else "Speed_temporal_feature_speed_temporal_score"


def printed(collector: str) -> str:
    """The name libvmaf's writers print for a collector name."""
    if collector == "Speed_temporal_feature_speed_temporal_score":
        return "speed_temporal"
    return collector


def _chroma_shape(w: int, h: int, fmt: str) -> tuple[int, int] | None:
    """A chroma plane's (rows, columns) as the file holds it (an odd side rounded up)."""
    if fmt == "400":
        return None
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    return -(-h >> sy), -(-w >> sx)


def _draw(bits: Any, n: int, modulus: int) -> np.ndarray:
    """``n`` integers in ``[0, modulus)`` from PCG64's raw 64-bit words."""
    return (bits.random_raw(n) % np.uint64(modulus)).astype(np.int64)


def pair_planes(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """The reference's and the distorted clip of the synthetic pair ``name``: per frame,
    its planes (luma, then Cb and Cr where the pair has them), uint8 (8 bits) or uint16."""
    w, h, fmt, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    dtype = np.uint8 if bd == 8 else np.uint16
    ch, cw = (h + 2 * frames, w + 3 * frames)
    cells = _draw(bits, (ch // 8 + 1) * (cw // 8 + 1), (top + 1) // 2).reshape(ch // 8 + 1, -1)
    y, x = np.mgrid[0:ch, 0:cw]
    canvas = np.kron(cells, np.ones((8, 8), np.int64))[:ch, :cw]
    canvas = canvas + (x * 3 + y * 5) * (top + 1) // (8 * (3 * cw + 5 * ch))
    step = 1 << max(bd - 4, 1)
    spread = max(top // 32, 2)
    chroma = _chroma_shape(w, h, fmt)
    refs: list[list[np.ndarray]] = []
    diss: list[list[np.ndarray]] = []
    noise = _draw(bits, h * w, 2 * spread + 1).reshape(h, w) - spread
    for f in range(frames):
        moved = 0 if kind in ("still", "refstill") else f
        ref = canvas[2 * moved : 2 * moved + h, 3 * moved : 3 * moved + w]
        if f and kind not in ("still", "disstill"):
            noise = _draw(bits, h * w, 2 * spread + 1).reshape(h, w) - spread
        dis = np.clip(ref // step * step + noise, 0, top)
        if kind == "disstill" and f:
            dis = diss[0][0].astype(np.int64)
        ref_planes = [ref.astype(dtype)]
        dis_planes = [dis.astype(dtype)]
        if chroma is not None:
            cy, cx = np.mgrid[0 : chroma[0], 0 : chroma[1]]
            for p in (1, 2):
                level = ((cx * p + cy * (3 - p) + 7 * f) << max(bd - 7, 0)) % (top + 1)
                ref_planes.append(level.astype(dtype))
                dis_planes.append((top - level).astype(dtype))
        refs.append(ref_planes)
        diss.append(dis_planes)
    return refs, diss


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's planes one after another."""
    bd = PAIRS[name][3]
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    files = []
    for clip in pair_planes(name):
        files.append(b"".join(p.astype(dtype).tobytes() for frame in clip for p in frame))
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


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    name = collector_name(options)
    feature = "speed_temporal" + (f":{options}" if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", name, feature]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(list(f) != [name] for f in frames):
        raise SystemExit(f"the oracle did not give every output: {cmd}")
    return [{printed(k): v for k, v in f.items()} for f in frames]


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    """libvmaf's tool's frames (printed names and values) for the pair."""
    w, h, fmt, bd = geometry
    feature = "speed_temporal" + (f"={options}" if options else "")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", feature, "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    frames = _oracle(args, ref, dis, geometry, options)
    if geometry[2] != "400":
        shown = _tool(args, ref, dis, geometry, options)
        ours = [{k: float(f"{v:.6f}") for k, v in f.items()} for f in frames]
        if shown != ours or any(list(s) != list(o) for s, o in zip(shown, ours, strict=True)):
            raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref} {options}")
    return {"options": options, "frames": frames}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 shared library")
    parser.add_argument("--vmaf", required=True, help="the vmaf tool of the same build")
    parser.add_argument("--oracle", default=DEFAULT_ORACLE)
    parser.add_argument("--netflix", default=DEFAULT_NETFLIX)
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    cases: dict[str, Any] = {}
    pairs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, tuple[str, str, tuple]] = {}
        for name in PAIRS:
            ref, dis = write_pair(name, tmp)
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            paths[name] = (ref, dis, PAIRS[name][:4])
        for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
            ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
            pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
            paths[name] = (ref, dis, (w, h, fmt, bd))
        for key, (pair, options) in CASES.items():
            ref, dis, geometry = paths[pair]
            cases[key] = {"pair": pair, **_entry(args, ref, dis, geometry, options)}
    provenance = {
        "tool": "libvmaf's speed_temporal (src/feature/speed.c, vif_tools.c, picture_copy.c) "
        "through the C API (per-frame values, full precision); the vmaf tool's JSON of the "
        "same build checked against them where it reads the pair",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0 -O3 -std=c11 without -march (no FMA contraction), x86_64",
        "code_path": "scalar C path (asm disabled, so compute_cov_kernel_scalar: the AVX2 "
        "and AVX-512 covariance kernels are left out; SIMD masked)",
        "command": "python3 testdata/make_speed_temporal_goldens.py --libvmaf LIBVMAF_SO "
        "--vmaf VMAF_TOOL",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
        "names": "printed names (speed_temporal and its suffixed forms)",
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

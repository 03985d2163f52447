#!/usr/bin/env python3
"""Write testdata/ciede_goldens.json: libvmaf's ``ciede`` output (``ciede2000``) on
synthetic pairs and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_ciede_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built
outside the project (Netflix/vmaf f85a8536, ``-Denable_asm=false -Denable_float=true``;
``ciede`` is built with or without the float features), driven through ctypes by the
shared oracle (``libvmaf_vmaf_oracle.py ... any ciede2000 ciede``, SIMD masked: the
scalar C path, and ``ciede`` has no other) for every frame's value at full precision,
twice, each in a fresh process. ``VMAF_TOOL`` is the ``vmaf`` tool of the same build: its
JSON is read too and each value it prints must be the oracle's printed with ``%.6f``
(``null`` where the value is not finite).

The synthetic pairs are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only,
every plane of every frame:

- ``noise``: gradients with jitter over the bit depth's range as the reference (chroma
  swinging around mid-grey), the reference plus bounded noise (clipped) as the distorted
  frame;
- ``wild``: reference and distorted samples drawn independently over the whole range, so
  that hues lie anywhere around the circle and the hue-difference branches all run;
- ``neutral``: ``noise`` with about a quarter of each frame's pixels set to black
  without colour (luma 16, both chroma 128, scaled to the bit depth), whose CIELAB ``a``
  and ``b`` are exactly 0: the zero-chroma branches of the hue terms;
- ``same``: the reference twice (every difference 0, so the score is infinite);
- ``swing``: 0 against the bit depth's peak in every plane.

Sides: 4:4:4 pairs may be odd (down to 1x1, below what admcuda's inputs take: those go
through ``score_clip``); 4:2:0 and 4:2:2 sides are even, since on an odd halved side
libvmaf's ciede reads chroma outside the picture (admcuda refuses those inputs). On 4:2:2
libvmaf's ciede reads each luma row's width of chroma samples from a chroma row's start
(see ``reference/ciede.py``); the widths here make that read end in the row's padding
(``n8_422``: 24 samples from a row of 12 in a stride of 32), run on into the next row
(``n8_422_wide``: 80 from 40 in 64; ``w12_422``: 36 from 18 in 32) or take two whole rows
(``n10_422``: 128 from 64 in 64).
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
OUT = os.path.join(HERE, "ciede_goldens.json")
NAMES = "ciede2000"

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_420": (48, 32, "420", 8, 2, "noise", 1),
    "n8_444_odd": (33, 17, "444", 8, 2, "noise", 2),
    "n8_422": (24, 18, "422", 8, 2, "noise", 3),
    "n8_422_wide": (80, 18, "422", 8, 1, "noise", 4),
    "n10_420": (36, 20, "420", 10, 2, "noise", 5),
    "n10_422": (128, 18, "422", 10, 1, "noise", 6),
    "n12_444_odd": (21, 23, "444", 12, 2, "noise", 7),
    "n12_420": (34, 18, "420", 12, 1, "noise", 8),
    "n16_420": (34, 20, "420", 16, 2, "noise", 9),
    "n16_444": (18, 17, "444", 16, 1, "noise", 10),
    "w8_444": (32, 24, "444", 8, 2, "wild", 11),
    "w10_420": (40, 24, "420", 10, 1, "wild", 12),
    "w12_422": (36, 18, "422", 12, 1, "wild", 13),
    "w16_444": (20, 18, "444", 16, 1, "wild", 14),
    "grey8_420": (32, 18, "420", 8, 2, "neutral", 15),
    "grey10_444": (19, 18, "444", 10, 1, "neutral", 16),
    "same8_420": (34, 18, "420", 8, 2, "same", 17),
    "same16_444": (18, 18, "444", 16, 1, "same", 18),
    "swing8_444": (18, 18, "444", 8, 1, "swing", 19),
    "swing12_420": (18, 18, "420", 12, 1, "swing", 20),
    "tiny8_444": (3, 2, "444", 8, 2, "noise", 21),
    "one16_444": (1, 1, "444", 16, 2, "wild", 22),
    "tiny10_420": (2, 2, "420", 10, 1, "wild", 23),
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


def plane_shapes(w: int, h: int, fmt: str) -> list[tuple[int, int]]:
    """Each plane's (rows, columns) as the file holds it (an odd side rounded up)."""
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    chroma = (-(-h >> sy), -(-w >> sx))
    return [(h, w), chroma, chroma]


def _noise_planes(bits: Any, shapes: list, top: int, f: int) -> tuple[list, list]:
    refs, diss = [], []
    for p, (rows, cols) in enumerate(shapes):
        n = rows * cols
        raw = bits.random_raw(2 * n).astype(np.uint64)
        y, x = np.divmod(np.arange(n, dtype=np.int64), cols)
        shift = max(top.bit_length() - 6, 0)
        if p == 0:
            base = ((x * 7 + y * 5 + f * 11) << shift) % (top + 1)
        else:  # around mid-grey, swinging by up to 3/8 of the range either way
            swing = ((x * (3 + 2 * p) + y * (5 - p) + f * 13) << shift) % (top + 1)
            base = (top + 1) // 2 - (3 * (top + 1)) // 8 + (3 * swing) // 4
        jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
        ref = np.clip(base + jitter, 0, top)
        spread = max(top // 16, 2)
        noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
        refs.append(ref.reshape(rows, cols))
        diss.append(np.clip(ref + noise, 0, top).reshape(rows, cols))
    return refs, diss


def _neutral(bits: Any, planes: list, bd: int) -> None:
    """Set about half the luma samples to 16 and half the chroma samples to 128 (scaled):
    about a quarter of the pixels are black without colour."""
    for p, plane in enumerate(planes):
        raw = bits.random_raw(plane.size).astype(np.uint64)
        pick = (raw % np.uint64(2) == 0).reshape(plane.shape)
        plane[pick] = (16 if p == 0 else 128) << (bd - 8)


def pair_planes(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """The reference's and the distorted frames of the synthetic pair ``name``: per frame
    the Y, Cb and Cr planes as the file holds them, uint8 (8 bits) or uint16."""
    w, h, fmt, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    dtype = np.uint8 if bd == 8 else np.uint16
    shapes = plane_shapes(w, h, fmt)
    refs, diss = [], []
    for f in range(frames):
        if kind == "swing":
            ref = [np.zeros(s, np.int64) for s in shapes]
            dis = [np.full(s, top, np.int64) for s in shapes]
        elif kind == "wild":
            ref, dis = [], []
            for rows, cols in shapes:
                raw = bits.random_raw(2 * rows * cols).astype(np.uint64) % np.uint64(top + 1)
                ref.append(raw[: rows * cols].astype(np.int64).reshape(rows, cols))
                dis.append(raw[rows * cols :].astype(np.int64).reshape(rows, cols))
        else:
            ref, dis = _noise_planes(bits, shapes, top, f)
            if kind == "same":
                dis = [p.copy() for p in ref]
            elif kind == "neutral":
                _neutral(bits, ref, bd)
                _neutral(bits, dis, bd)
        refs.append([p.astype(dtype) for p in ref])
        diss.append([p.astype(dtype) for p in dis])
    return refs, diss


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's Y, Cb and Cr planes, little-endian above 8 bits."""
    bd = PAIRS[name][3]
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    files = []
    for frames in pair_planes(name):
        files.append(b"".join(p.astype(dtype).tobytes() for planes in frames for p in planes))
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


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> list:
    w, h, fmt, bd = geometry
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", NAMES, "ciede"]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if json.dumps(runs[0]) != json.dumps(runs[1]):
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(list(f) != NAMES.split(",") for f in frames):
        raise SystemExit(f"the oracle did not give {NAMES}: {cmd}")
    return frames


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> list:
    """libvmaf's tool's frames (printed values; None for its null) for the pair."""
    w, h, fmt, bd = geometry
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", "ciede", "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _printed(value: float) -> float | None:
    return float(f"{value:.6f}") if math.isfinite(value) else None


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> dict:
    frames = _oracle(args, ref, dis, geometry)
    printed = _tool(args, ref, dis, geometry)
    if printed != [{k: _printed(v) for k, v in f.items()} for f in frames]:
        raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref}")
    return {"options": "", "frames": frames}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0's shared library")
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
            cases[name] = {"pair": name, **_entry(args, ref, dis, PAIRS[name][:4])}
    for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        cases[f"netflix_{name}"] = {"pair": name, **_entry(args, ref, dis, (w, h, fmt, bd))}
    provenance = {
        "tool": "libvmaf's ciede (src/feature/ciede.c) through the C API (per-frame values, "
        "full precision); the vmaf tool's JSON of the same build checked against them",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0 (-O3 -std=c11, no -march, no -ffast-math), x86_64, glibc 2.36's libm",
        "code_path": "scalar C path (asm disabled, SIMD masked; ciede has no SIMD path)",
        "command": "python3 testdata/make_ciede_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
        "names": NAMES,
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

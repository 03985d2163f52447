#!/usr/bin/env python3
"""Write testdata/psnr_hvs_goldens.json: libvmaf's ``psnr_hvs`` outputs (``psnr_hvs_y``,
``psnr_hvs_cb``, ``psnr_hvs_cr``, ``psnr_hvs``) on synthetic pairs and on the Netflix
pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_psnr_hvs_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built
outside the project (Netflix/vmaf f85a8536, ``-Denable_asm=false -Denable_float=true``;
``psnr_hvs`` is built with or without the float features), driven through ctypes by the
shared oracle (``libvmaf_vmaf_oracle.py ... any psnr_hvs_y,... psnr_hvs``, SIMD masked:
the scalar C path, and ``psnr_hvs`` has no other) for every frame's four values at full
precision, twice, each in a fresh process. ``VMAF_TOOL`` is the ``vmaf`` tool of the same
build: where it reads the pair (not an odd 4:2:0 or 4:2:2 width, on which it crashes),
its JSON is read too and each value it prints must be the oracle's printed with ``%.6f``
(``null`` where the value is not finite).

The synthetic pairs are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only,
every plane of every frame:

- ``noise``: gradients with jitter over the bit depth's range as the reference, the
  reference plus bounded noise (clipped) as the distorted frame;
- ``wild``: reference and distorted samples drawn independently over the whole range
  (the DCT's largest coefficients, no masking left);
- ``tiles``: 16x16 tiles of one value each as the reference (8x8 blocks without
  variance, whose masking is 0) and the reference plus noise in one tile of two;
- ``same``: the reference twice (every error 0, so every output is infinite);
- ``swing``: 0 against the bit depth's peak in every plane.

Sides: odd sizes in every layout but 4:2:0 heights (the oracle copies the file's
rounded-up chroma rows into pictures of the rounded-down size: an odd width's extra
column lands in the row's padding, unread, but an odd 4:2:0 height's extra row of Cr
lands past the picture, so no pair has one), the odd 4:2:0 and 4:2:2 widths ones whose
rounded-up chroma would hold a column of blocks more than libvmaf reads; planes under 8
samples a side, which hold no 8x8 block and score NaN (``tiny8_420``'s chroma,
``seven8_444``'s every plane); and one 1920x1080 8-bit pair (``full8_420``, not
committed: tests make it again from :data:`PAIRS` and check its sha256), over whose 42196
luma blocks the float32 error sum rounds as it goes.
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
OUT = os.path.join(HERE, "psnr_hvs_goldens.json")
NAMES = "psnr_hvs_y,psnr_hvs_cb,psnr_hvs_cr,psnr_hvs"

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_420": (48, 32, "420", 8, 2, "noise", 1),
    "n8_420_odd": (29, 18, "420", 8, 2, "noise", 2),
    "n8_422": (40, 24, "422", 8, 2, "noise", 3),
    "n8_444": (24, 20, "444", 8, 2, "noise", 4),
    "n10_420": (36, 20, "420", 10, 2, "noise", 5),
    "n10_422_odd": (43, 17, "422", 10, 2, "noise", 6),
    "n10_444_odd": (23, 19, "444", 10, 2, "noise", 7),
    "n12_420": (64, 36, "420", 12, 2, "noise", 8),
    "n12_444_odd": (21, 23, "444", 12, 2, "noise", 9),
    "w8_444": (32, 24, "444", 8, 2, "wild", 10),
    "w10_422": (40, 18, "422", 10, 1, "wild", 11),
    "w12_420": (48, 40, "420", 12, 1, "wild", 12),
    "t8_420": (64, 48, "420", 8, 2, "tiles", 13),
    "t12_444": (48, 32, "444", 12, 1, "tiles", 14),
    "same8_420": (34, 18, "420", 8, 2, "same", 15),
    "same12_444": (24, 18, "444", 12, 1, "same", 16),
    "swing8_420": (40, 18, "420", 8, 1, "swing", 17),
    "swing12_444": (18, 18, "444", 12, 1, "swing", 18),
    "eight8_444": (8, 8, "444", 8, 2, "noise", 19),
    "tiny8_420": (12, 10, "420", 8, 1, "noise", 20),
    "seven8_444": (7, 9, "444", 8, 1, "noise", 21),
    "full8_420": (1920, 1080, "420", 8, 1, "noise", 22),
}

ODD = frozenset(n for n, p in PAIRS.items() if p[2] != "444" and p[0] % 2)
"""The pairs libvmaf's tool does not read (an odd 4:2:0 or 4:2:2 width): the oracle alone."""

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


def _noise(bits: Any, rows: int, cols: int, top: int, p: int, f: int) -> tuple[Any, Any]:
    n = rows * cols
    raw = bits.random_raw(2 * n).astype(np.uint64)
    y, x = np.divmod(np.arange(n, dtype=np.int64), cols)
    shift = max(top.bit_length() - 6, 0)
    base = ((x * (7 + 2 * p) + y * (5 - p) + f * 11) << shift) % (top + 1)
    ref = np.clip(base + (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64), 0, top)
    spread = max(top // 16, 2)
    noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
    return ref.reshape(rows, cols), np.clip(ref + noise, 0, top).reshape(rows, cols)


def _tiles(bits: Any, rows: int, cols: int, top: int) -> tuple[Any, Any]:
    ty, tx = -(-rows // 16), -(-cols // 16)
    raw = bits.random_raw(ty * tx + rows * cols).astype(np.uint64)
    values = (raw[: ty * tx] % np.uint64(top + 1)).astype(np.int64).reshape(ty, tx)
    ref = values.repeat(16, axis=0).repeat(16, axis=1)[:rows, :cols]
    spread = max(top // 16, 2)
    noise = (raw[ty * tx :] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
    noisy = (np.arange(ty)[:, None] + np.arange(tx)[None, :]) % 2 == 0
    noisy = noisy.repeat(16, axis=0).repeat(16, axis=1)[:rows, :cols]
    dis = np.where(noisy, np.clip(ref + noise.reshape(rows, cols), 0, top), ref)
    return ref, dis


def pair_planes(name: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """The reference's and the distorted frames of the synthetic pair ``name``: per frame
    the Y, Cb and Cr planes as the file holds them, uint8 (8 bits) or uint16."""
    w, h, fmt, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    dtype = np.uint8 if bd == 8 else np.uint16
    refs, diss = [], []
    for f in range(frames):
        ref, dis = [], []
        for p, (rows, cols) in enumerate(plane_shapes(w, h, fmt)):
            if kind == "swing":
                r, d = np.zeros((rows, cols), np.int64), np.full((rows, cols), top, np.int64)
            elif kind == "wild":
                raw = bits.random_raw(2 * rows * cols).astype(np.uint64) % np.uint64(top + 1)
                r = raw[: rows * cols].astype(np.int64).reshape(rows, cols)
                d = raw[rows * cols :].astype(np.int64).reshape(rows, cols)
            elif kind == "tiles":
                r, d = _tiles(bits, rows, cols, top)
            else:
                r, d = _noise(bits, rows, cols, top, p, f)
                if kind == "same":
                    d = r.copy()
            ref.append(r.astype(dtype))
            dis.append(d.astype(dtype))
        refs.append(ref)
        diss.append(dis)
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
           "any", NAMES, "psnr_hvs"]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if json.dumps(runs[0]) != json.dumps(runs[1]):
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(list(f) != NAMES.split(",") for f in frames):
        raise SystemExit(f"the oracle did not give the four outputs: {cmd}")
    return frames


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> list:
    """libvmaf's tool's frames (printed values; None for its null) for the pair."""
    w, h, fmt, bd = geometry
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", "psnr_hvs", "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _printed(value: float) -> float | None:
    return float(f"{value:.6f}") if math.isfinite(value) else None


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, tool: bool) -> dict:
    frames = _oracle(args, ref, dis, geometry)
    if tool:
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
            entry = _entry(args, ref, dis, PAIRS[name][:4], name not in ODD)
            cases[name] = {"pair": name, **entry}
    for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        entry = _entry(args, ref, dis, (w, h, fmt, bd), True)
        cases[f"netflix_{name}"] = {"pair": name, **entry}
    provenance = {
        "tool": "libvmaf's psnr_hvs (src/feature/third_party/xiph/psnr_hvs.c) through the C "
        "API (per-frame values, full precision); the vmaf tool's JSON of the same build "
        "checked against them where it reads the pair",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0 (-O3 -std=c11, no -march, no -ffast-math), x86_64, glibc 2.36's libm",
        "code_path": "scalar C path (asm disabled, SIMD masked; psnr_hvs has no SIMD path)",
        "command": "python3 testdata/make_psnr_hvs_goldens.py --libvmaf LIBVMAF_SO "
        "--vmaf VMAF_TOOL",
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

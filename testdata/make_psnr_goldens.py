#!/usr/bin/env python3
"""Write testdata/psnr_goldens.json: libvmaf's ``psnr`` outputs on synthetic pairs and on
the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_psnr_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here: ``LIBVMAF_SO`` is a libvmaf 3.2.0 shared library built outside
the project (Netflix/vmaf f85a8536, ``-Denable_asm=false``), driven through ctypes by the
shared oracle (``libvmaf_vmaf_oracle.py ... any psnr_y,...,mse_cr psnr[:KEY=VALUE...]``,
SIMD masked: the scalar C path) for every frame's value at full precision. libvmaf 3.2.0's
``vmaf`` tool (``VMAF_TOOL``; its integer PSNR has no SIMD path) writes the JSON whose
``aggregate_metrics`` give ``enable_apsnr``'s values, which only its output files hold,
printed with six decimals.

The synthetic pairs are made here (:func:`pair_bytes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only: a
gradient with noise as the reference, the reference plus bounded noise (clipped to the
bit depth) as the distorted frame, chroma included; ``same`` pairs repeat the reference,
``swing`` pairs put 0 against the bit depth's peak. Tests make them again from
:data:`PAIRS` and check their sha256 before comparing.

An odd side: libvmaf's pictures hold chroma halved and rounded down, the file's planes
rounded up. libvmaf's tool crashes on odd 4:2:0 and 4:2:2 widths, so pairs with an odd
width (:data:`ODD`), and 4:0:0 pairs (the tool takes no ``-p 400``), are scored by the
oracle alone (no order, no aggregate_metrics from the tool: ``null``); the oracle copies
each file row into the picture's row, whose
padding takes the extra sample, so the picture's part is scored, as libvmaf's readers
would. An odd 4:2:0 height overruns the oracle's pictures: no pair has one.
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
OUT = os.path.join(HERE, "psnr_goldens.json")
NAMES = "psnr_y,psnr_cb,psnr_cr,mse_y,mse_cb,mse_cr"

# name -> (width, height, pixel format, bit depth, frames, kind, seed); kind is "noise"
# (reference plus bounded noise), "same" (the reference twice) or "swing" (0 against peak)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_420_odd": (33, 18, "420", 8, 3, "noise", 1),
    "n8_420": (34, 18, "420", 8, 3, "noise", 14),
    "n8_422": (32, 18, "422", 8, 2, "noise", 2),
    "n8_444": (24, 20, "444", 8, 2, "noise", 3),
    "n8_400": (40, 18, "400", 8, 2, "noise", 4),
    "n10_420": (36, 20, "420", 10, 3, "noise", 5),
    "n10_422_odd": (37, 17, "422", 10, 2, "noise", 6),
    "n12_444": (20, 22, "444", 12, 2, "noise", 7),
    "n16_420": (34, 20, "420", 16, 2, "noise", 8),
    "n16_400": (26, 18, "400", 16, 2, "noise", 9),
    "same8_420": (34, 18, "420", 8, 2, "same", 10),
    "same10_444": (20, 18, "444", 10, 2, "same", 11),
    "swing16_444": (18, 18, "444", 16, 1, "swing", 12),
    "swing8_420": (40, 18, "420", 8, 1, "swing", 13),
}

# name -> (pair, psnr options as --feature psnr=... takes them, "" for none)
CASES: dict[str, tuple[str, str]] = {
    "default_8_420": ("n8_420", ""),
    "mse_8_420": ("n8_420", "enable_mse=true"),
    "apsnr_8_420": ("n8_420", "enable_apsnr=true"),
    "odd_8_420": ("n8_420_odd", "enable_mse=true:min_sse=1"),
    "all_8_422": ("n8_422", "enable_mse=true:enable_apsnr=true"),
    "default_8_444": ("n8_444", ""),
    "luma_8_444": ("n8_444", "enable_chroma=false:enable_mse=true:enable_apsnr=true"),
    "default_8_400": ("n8_400", "enable_mse=true:enable_apsnr=true"),
    "default_10_420": ("n10_420", "enable_mse=true"),
    "reduced_10_420": ("n10_420", "reduced_hbd_peak=true:enable_apsnr=true"),
    "min_sse_10_422": ("n10_422_odd", "min_sse=0.5:enable_mse=true"),
    "default_12_444": ("n12_444", "enable_apsnr=true"),
    "reduced_12_444": ("n12_444", "reduced_hbd_peak=true"),
    "default_16_420": ("n16_420", "enable_mse=true:enable_apsnr=true"),
    "reduced_16_420": ("n16_420", "reduced_hbd_peak=true:min_sse=3"),
    "default_16_400": ("n16_400", "reduced_hbd_peak=true:enable_apsnr=true"),
    "same_8_420": ("same8_420", "enable_mse=true:enable_apsnr=true"),
    "same_min_sse_8_420": ("same8_420", "min_sse=0.5"),
    "same_min_sse_big_8_420": ("same8_420", "min_sse=2000"),
    "same_10_444": ("same10_444", "reduced_hbd_peak=true:enable_apsnr=true"),
    "same_min_sse_10_444": ("same10_444", "min_sse=1.5"),
    "swing_16_444": ("swing16_444", "enable_mse=true:enable_apsnr=true"),
    "swing_8_420": ("swing8_420", "enable_mse=true:enable_apsnr=true"),
}

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
NETFLIX_CASES: dict[str, tuple[str, str]] = {
    "netflix_8": ("src01_8", "enable_mse=true:enable_apsnr=true"),
    "netflix_8_min_sse": ("src01_8", "min_sse=0.5"),
    "netflix_10": ("src01_10", "enable_mse=true:enable_apsnr=true"),
    "netflix_10_reduced": ("src01_10", "reduced_hbd_peak=true:min_sse=2"),
    "netflix_48f": ("scaled_48f", "enable_apsnr=true"),
}


ODD = frozenset(n for n, p in PAIRS.items() if p[2] != "444" and p[0] % 2)


def _shapes(w: int, h: int, fmt: str) -> list[tuple[int, int]]:
    if fmt == "400":
        return [(h, w)]
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    c = (-(-h >> sy), -(-w >> sx))
    return [(h, w), c, c]


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``."""
    w, h, fmt, bd, frames, kind, seed = PAIRS[name]
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator
    top = (1 << bd) - 1
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    ref_planes, dis_planes = [], []
    for f in range(frames):
        for p, (rows, cols) in enumerate(_shapes(w, h, fmt)):
            n = rows * cols
            raw = bits.random_raw(2 * n).astype(np.uint64)
            y, x = np.divmod(np.arange(n, dtype=np.int64), cols)
            base = ((x * 7 + y * 5 + f * 11 + p * 13) << max(bd - 6, 0)) % (top + 1)
            jitter = (raw[:n] % np.uint64(max(top // 8, 2))).astype(np.int64)
            ref = (base + jitter) % (top + 1)
            if kind == "same":
                dis = ref
            elif kind == "swing":
                ref = np.zeros(n, np.int64)
                dis = np.full(n, top, np.int64)
            else:
                spread = max(top // (16 + 8 * p), 2)
                noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
                dis = np.clip(ref + noise, 0, top)
            ref_planes.append(ref.astype(dtype).tobytes())
            dis_planes.append(dis.astype(dtype).tobytes())
    return b"".join(ref_planes), b"".join(dis_planes)


def write_pair(name: str, folder: str) -> tuple[str, str]:
    """Write pair ``name`` into ``folder``; the reference's and distorted file's paths."""
    ref, dis = pair_bytes(name)
    paths = (os.path.join(folder, f"{name}_ref.yuv"), os.path.join(folder, f"{name}_dis.yuv"))
    for path, data in zip(paths, (ref, dis), strict=True):
        with open(path, "wb") as f:
            f.write(data)
    return paths


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256(path: str) -> str:
    with open(path, "rb") as f:
        return _sha256_bytes(f.read())


def _oracle(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> list:
    w, h, fmt, bd = geometry
    feature = "psnr" + (":" + options if options else "")
    cmd = [sys.executable, args.oracle, args.libvmaf, ref, dis, str(w), str(h), fmt, str(bd),
           "any", NAMES, feature]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    return runs[0]["frames"]


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    """libvmaf's tool's JSON for the pair: its keys in order and its aggregate_metrics."""
    w, h, fmt, bd = geometry
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        feature = "psnr" + ("=" + options if options else "")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", feature, "-n", "-q", "--cpumask", "4294967295",
               "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            doc = json.load(f)
    return {
        "order": list(doc["pooled_metrics"]),
        "frames": [f["metrics"] for f in doc["frames"]],
        "aggregate_metrics": doc["aggregate_metrics"],
    }


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple, options: str) -> dict:
    w, h, fmt, bd = geometry
    frames = _oracle(args, ref, dis, geometry, options)
    if fmt == "400" or (fmt != "444" and w % 2):
        return {"options": options, "order": None, "frames": frames, "aggregate_metrics": None}
    tool = _tool(args, ref, dis, geometry, options)
    order = tool["order"]
    assert all(list(f) == sorted(order, key=NAMES.split(",").index) for f in frames)
    return {
        "options": options,
        "order": order,
        "frames": [{name: frame[name] for name in order} for frame in frames],
        "aggregate_metrics": tool["aggregate_metrics"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libvmaf", required=True, help="libvmaf 3.2.0 shared library")
    parser.add_argument("--vmaf", required=True, help="libvmaf 3.2.0's vmaf tool")
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
        for case, (name, options) in CASES.items():
            w, h, fmt, bd = PAIRS[name][:4]
            ref, dis = (os.path.join(tmp, f"{name}_{s}.yuv") for s in ("ref", "dis"))
            entries[case] = {"pair": name, **_entry(args, ref, dis, (w, h, fmt, bd), options)}
    for case, (name, options) in NETFLIX_CASES.items():
        ref, dis, w, h, fmt, bd = NETFLIX_PAIRS[name]
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        entries[case] = {"pair": name, **_entry(args, ref, dis, (w, h, fmt, bd), options)}
    provenance = {
        "tool": "libvmaf's integer psnr (src/feature/integer_psnr.c) through the C API "
        "(per-frame values, full precision) and the vmaf tool's JSON (aggregate_metrics, "
        "printed %.6f; null where libvmaf's value is not finite)",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "code_path": "scalar C path (asm disabled, SIMD masked; psnr has no SIMD path)",
        "command": "python3 testdata/make_psnr_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL",
        "script_sha256": _sha256(__file__),
        "date": "2026-12-07",
        "names": NAMES,
    }
    doc = {"_provenance": provenance, "pairs": pairs, "cases": entries}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

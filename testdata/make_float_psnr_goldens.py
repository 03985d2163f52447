#!/usr/bin/env python3
"""Write testdata/float_psnr_goldens.json: libvmaf's ``float_psnr`` output on synthetic
pairs and on the Netflix pairs of ``../shared/netflix``.

Usage::

    python3 testdata/make_float_psnr_goldens.py --libvmaf LIBVMAF_SO --vmaf VMAF_TOOL \\
        [--oracle ORACLE] [--netflix DIR] [--out PATH]

libvmaf is never built here. ``float_psnr`` is one of libvmaf's float features, which its
build leaves out unless configured with ``-Denable_float=true``: ``LIBVMAF_SO`` is a
libvmaf 3.2.0 shared library built outside the project that way (Netflix/vmaf f85a8536,
``-Denable_asm=false -Denable_float=true``), driven through ctypes by the shared oracle
(``libvmaf_vmaf_oracle.py ... any float_psnr float_psnr``, SIMD masked: the scalar C
path) for every frame's value at full precision, twice, each in a fresh process.
``VMAF_TOOL`` is the ``vmaf`` tool of the same build: where it reads the pair (not 4:0:0,
which it takes no ``-p`` for), its JSON is read too and each value it prints must be the
oracle's printed with ``%.6f``.

The synthetic pairs are made here (:func:`pair_planes`), deterministically, from NumPy's
PCG64 bit stream (``random_raw``, stable across versions) with integer arithmetic only.

- ``noise``: a gradient with jitter over the bit depth's whole range as the reference,
  the reference plus bounded noise (clipped) as the distorted frame.
- ``swing``: 0 against the bit depth's peak (at 16 bits the peak's float32 square rounds
  below the peak's square in double: a PSNR just above 0).
- ``same``: a noisy reference against itself: the bit depth's PSNR cap.
- ``steps``: one frame per count of samples off by one step of the bit depth: none, one,
  the most that still leaves the PSNR above its cap, one more (just under it), and all.
- ``long``: 2048x1536 16-bit frames, near the peak against near 0, one sample in eight
  off by a small odd step instead, so that the float32 squares' sum passes ``2**37`` and
  the double sum rounds as it goes: only a sum taken sample after sample, as libvmaf's
  loop takes it, gives its doubles. That pair (6 MB a file) is not committed; tests make
  it again from :data:`PAIRS` and check its sha256.

Chroma, which ``float_psnr`` does not read, is mid-grey. Odd sides are 4:0:0 or 4:4:4: an
odd 4:2:0 height overruns the oracle's pictures.
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
OUT = os.path.join(HERE, "float_psnr_goldens.json")
NAMES = "float_psnr"

# libvmaf's cap per bit depth (float_psnr.c's init), for the ``steps`` pairs' counts
PSNR_MAX = {8: 60, 10: 72, 12: 84, 16: 108}

# name -> (width, height, pixel format, bit depth, frames, kind, seed)
PAIRS: dict[str, tuple[int, int, str, int, int, str, int]] = {
    "n8_400_odd": (33, 17, "400", 8, 3, "noise", 1),
    "n8_420": (48, 32, "420", 8, 2, "noise", 2),
    "n10_400_odd": (35, 19, "400", 10, 3, "noise", 3),
    "n10_422": (40, 24, "422", 10, 2, "noise", 4),
    "n12_444_odd": (21, 23, "444", 12, 2, "noise", 5),
    "n16_400_odd": (37, 18, "400", 16, 3, "noise", 6),
    "n16_420": (64, 36, "420", 16, 2, "noise", 7),
    "tiny8_400": (3, 2, "400", 8, 2, "noise", 8),
    "one16_400": (1, 1, "400", 16, 2, "noise", 9),
    "swing8_444": (18, 18, "444", 8, 1, "swing", 10),
    "swing10_400": (17, 19, "400", 10, 1, "swing", 11),
    "swing16_400": (19, 17, "400", 16, 1, "swing", 12),
    "same8_420": (32, 18, "420", 8, 1, "same", 13),
    "same10_444": (17, 17, "444", 10, 1, "same", 14),
    "same12_400": (19, 18, "400", 12, 1, "same", 15),
    "same16_420": (24, 20, "420", 16, 1, "same", 16),
    "steps8_444": (20, 20, "444", 8, 5, "steps", 17),
    "steps10_420": (20, 20, "420", 10, 5, "steps", 18),
    "steps12_400": (23, 21, "400", 12, 5, "steps", 19),
    "steps16_444": (20, 20, "444", 16, 5, "steps", 20),
    "long16_400": (2048, 1536, "400", 16, 1, "long", 21),
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


def _chroma_shape(w: int, h: int, fmt: str) -> tuple[int, int] | None:
    """A chroma plane's (rows, columns) as the file holds it (an odd side rounded up)."""
    if fmt == "400":
        return None
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[fmt]
    return -(-h >> sy), -(-w >> sx)


def step_counts(n: int, bd: int) -> list[int]:
    """The ``steps`` pairs' counts of samples off by one step, frame by frame, for ``n``
    samples: 0, 1, the most whose PSNR is still above the cap, one more, ``n``.

    ``k`` samples off by one step of ``2**bd - 1`` levels give a PSNR of
    ``10 * log10((2**bd - 1)**2 * n / k)``, above ``PSNR_MAX[bd]`` while
    ``k * 10**(PSNR_MAX[bd] / 10) < (2**bd - 1)**2 * n``: compared in whole numbers, both
    sides to the 10th power."""
    top = (1 << bd) - 1
    cap = PSNR_MAX[bd]
    k = 0
    while (k + 1) ** 10 * 10**cap < (top * top * n) ** 10:
        k += 1
    return [0, 1, k, k + 1, n]


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
        ref = (base + jitter) % (top + 1)
        if kind == "swing":
            ref = np.zeros(n, np.int64)
            dis = np.full(n, top, np.int64)
        elif kind == "same":
            dis = ref.copy()
        elif kind == "steps":
            # one step down (up where the sample is 0), at the first k samples of a shuffle
            k = step_counts(n, bd)[f]
            where = np.argsort(raw[n:], kind="stable")[:k]
            dis = ref.copy()
            dis[where] = np.where(ref[where] > 0, ref[where] - 1, 1)
        elif kind == "long":
            ref, dis = _far_apart(raw, n, top)
        else:
            spread = max(top // 16, 2)
            noise = (raw[n:] % np.uint64(2 * spread + 1)).astype(np.int64) - spread
            dis = np.clip(ref + noise, 0, top)
        refs.append(ref.reshape(h, w).astype(dtype))
        diss.append(dis.reshape(h, w).astype(dtype))
    return np.stack(refs), np.stack(diss)


def _far_apart(raw: np.ndarray, n: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference samples within 2047 of ``top``, distorted ones below 2048; one sample in
    eight is instead the reference less a small odd step (below 4096): large squares push
    the sum up, small ones carry its lowest bits."""
    ref = top - (raw[:n] % np.uint64(2048)).astype(np.int64)
    dis = (raw[n:] % np.uint64(2048)).astype(np.int64)
    small = (raw[n:] >> np.uint64(32)) % np.uint64(8) == 0
    dis[small] = ref[small] - (((raw[n:][small] >> np.uint64(40)) % np.uint64(4096)) | 1).astype(
        np.int64
    )
    return ref, dis


def pair_bytes(name: str) -> tuple[bytes, bytes]:
    """The reference's and the distorted file's bytes of the synthetic pair ``name``: each
    frame's luma, then its chroma planes (mid-grey) where the pair has them."""
    w, h, fmt, bd = PAIRS[name][:4]
    chroma = _chroma_shape(w, h, fmt)
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    grey = b""
    if chroma is not None:
        grey = np.full(2 * chroma[0] * chroma[1], 1 << (bd - 1), dtype).tobytes()
    files = []
    for planes in pair_planes(name):
        files.append(b"".join(p.astype(dtype).tobytes() + grey for p in planes))
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
           "any", NAMES, "float_psnr"]  # fmt: skip
    runs = [json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            for _ in range(2)]  # fmt: skip
    if runs[0] != runs[1]:
        raise SystemExit(f"two oracle runs differ: {cmd}")
    frames = runs[0]["frames"]
    if not frames or any(list(f) != NAMES.split(",") for f in frames):
        raise SystemExit(f"the oracle did not give float_psnr: {cmd}")
    return frames


def _tool(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> list:
    """libvmaf's tool's frames (printed values) for the pair."""
    w, h, fmt, bd = geometry
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        cmd = [args.vmaf, "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
               "-b", str(bd), "--feature", "float_psnr", "-n", "-q",
               "--cpumask", "4294967295", "--json", "-o", out]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True)
        with open(out) as f:
            return [frame["metrics"] for frame in json.load(f)["frames"]]


def _entry(args: argparse.Namespace, ref: str, dis: str, geometry: tuple) -> dict:
    frames = _oracle(args, ref, dis, geometry)
    if geometry[2] != "400":
        printed = _tool(args, ref, dis, geometry)
        ours = [{k: float(f"{v:.6f}") for k, v in f.items()} for f in frames]
        if printed != ours:
            raise SystemExit(f"libvmaf's tool and the oracle disagree on {ref}")
    return {"options": "", "frames": frames}


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
            cases[name] = {"pair": name, **_entry(args, ref, dis, PAIRS[name][:4])}
    for name, (ref, dis, w, h, fmt, bd) in NETFLIX_PAIRS.items():
        ref, dis = (os.path.join(args.netflix, p) for p in (ref, dis))
        pairs[name] = {"ref_sha256": _sha256(ref), "dis_sha256": _sha256(dis)}
        cases[f"netflix_{name}"] = {"pair": name, **_entry(args, ref, dis, (w, h, fmt, bd))}
    provenance = {
        "tool": "libvmaf's float_psnr (src/feature/float_psnr.c, psnr.c, picture_copy.c) "
        "through the C API (per-frame values, full precision); the vmaf tool's JSON of the "
        "same build checked against them where it reads the pair",
        "libvmaf_version": "3.2.0",
        "libvmaf_commit": "Netflix/vmaf f85a853692a8c730d0270cd733c8bb30b5b93b7c (2026-08-14)",
        "build": "meson setup --buildtype release -Ddefault_library=shared "
        "-Denable_asm=false -Denable_float=true -Dbuilt_in_models=true -Denable_tools=true, "
        "gcc 12.2.0, x86_64",
        "code_path": "scalar C path (asm disabled, SIMD masked; float_psnr has no SIMD path)",
        "command": "python3 testdata/make_float_psnr_goldens.py --libvmaf LIBVMAF_SO "
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

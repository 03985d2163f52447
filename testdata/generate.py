#!/usr/bin/env python3
"""Deterministic reference/distorted raw-YUV test pairs for admcuda.

Every pair is cut from scikit-image sample images that ship inside the
scikit-image wheel (PNG only, so decoding is lossless and needs no network) and
distorted with codec-like operations written here in integer NumPy arithmetic:
binomial (Gaussian) and box blur, additive seeded noise, 8x8 block-mean
quantisation, down/up rescaling, banding and unsharp masking. No scikit-image or
SciPy filter and no float transcendental takes part, so the bytes depend only on
the source PNGs and on NumPy's PCG64 bit stream (``random_raw``), both stable
across versions; each file's sha256 is recorded in :data:`PAIRS` and checked.
Some references are not images: full-swing patterns (binary noise, checkerboards,
hard stripes; :func:`pattern_luma`) and flat frames.

High bit depths are real: luma is kept at 24-bit precision through sampling,
then a light blur, a smooth gradient and a tone curve are applied before it is
scaled to the full ``2**bitdepth - 1`` range, so every low bit varies.

Files are full planar YUV frames: the Y plane, then U and V (420: ceil(w/2) x
ceil(h/2); 422: ceil(w/2) x h; 444: w x h; 400: none), 8-bit or little-endian
uint16. Chroma is constant mid-grey.

Usage::

    python3 testdata/generate.py                      # committed pairs -> testdata/pairs
    python3 testdata/generate.py --all --outdir DIR   # every pair, large ones too
    python3 testdata/generate.py --print-sha --all --outdir DIR

As a module: ``PAIRS`` (one dict per golden case) and ``generate(outdir, names)``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["PAIRS", "FILES", "VMAF_STEMS", "generate", "frame_bytes", "pattern_luma", "render_pair"]

PAIRS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pairs")

# Luma is carried as integers where full white is 255 << 16 (BT.601 weights in Q16).
LUMA_SHIFT = 16
LUMA_WHITE = 255 << LUMA_SHIFT
BT601_R, BT601_G, BT601_B = 19595, 38470, 7471  # sum 65536
# Sub-pixel sampling positions are Q8 (1 source pixel = 256).
POS_SHIFT = 8
POS_ONE = 1 << POS_SHIFT
# High-bit-depth preparation: gradient amplitude in 8-bit levels, tone-curve lift k = 1/4.
HIBIT_GRADIENT_X = 6 << LUMA_SHIFT
HIBIT_GRADIENT_Y = -4 << LUMA_SHIFT
HIBIT_TONE_NUM, HIBIT_TONE_DEN = 1, 4
# Irwin-Hall noise: sum of four uniform 16-bit integers, std = 65536 / sqrt(3).
NOISE_STD_Q = 37838
MOSAIC_TILE_H, MOSAIC_TILE_W = 300, 400
MOSAIC_TILES = (("astronaut", "coffee", "camera"), ("chelsea", "moon", "immunohistochemistry"))


# ---------------------------------------------------------------- sources


def _skimage_image(name: str) -> np.ndarray:
    import skimage.data

    return np.asarray(getattr(skimage.data, name)())


def source_luma(name: str) -> np.ndarray:
    """Luma of a scikit-image sample image (or ``mosaic``) as int64, white = 255 << 16."""
    if name == "mosaic":
        rows = []
        for row in MOSAIC_TILES:
            tiles = []
            for tile in row:
                lum = source_luma(tile)
                y0 = (lum.shape[0] - MOSAIC_TILE_H) // 2
                x0 = (lum.shape[1] - MOSAIC_TILE_W) // 2
                tiles.append(lum[y0 : y0 + MOSAIC_TILE_H, x0 : x0 + MOSAIC_TILE_W])
            rows.append(np.concatenate(tiles, axis=1))
        return np.concatenate(rows, axis=0)
    img = _skimage_image(name)
    if img.dtype == np.bool_:
        img = np.where(img, 235, 16).astype(np.uint8)
    if img.dtype != np.uint8:
        raise TypeError(f"{name}: expected uint8, got {img.dtype}")
    img = img.astype(np.int64)
    if img.ndim == 2:
        return img << LUMA_SHIFT
    return BT601_R * img[..., 0] + BT601_G * img[..., 1] + BT601_B * img[..., 2]


# ---------------------------------------------------------------- integer helpers


def _round_div(a: np.ndarray | int, d: int) -> np.ndarray:
    """Round-half-up integer division, exact for negative numerators."""
    return (2 * np.asarray(a, dtype=np.int64) + d) // (2 * d)


def _sample_bilinear(src: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Bilinear sample at Q8 positions (edges clamped); integer, rounds once."""
    h, w = src.shape
    ys = np.clip(ys.astype(np.int64), 0, (h - 1) << POS_SHIFT)
    xs = np.clip(xs.astype(np.int64), 0, (w - 1) << POS_SHIFT)
    y0, fy = ys >> POS_SHIFT, ys & (POS_ONE - 1)
    x0, fx = xs >> POS_SHIFT, xs & (POS_ONE - 1)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = fy[:, None], fx[None, :]
    a = src[y0[:, None], x0[None, :]] * (POS_ONE - fx) + src[y0[:, None], x1[None, :]] * fx
    b = src[y1[:, None], x0[None, :]] * (POS_ONE - fx) + src[y1[:, None], x1[None, :]] * fx
    acc = a * (POS_ONE - fy) + b * fy
    return (acc + (1 << (2 * POS_SHIFT - 1))) >> (2 * POS_SHIFT)


def _sep_filter(img: np.ndarray, taps: Sequence[int]) -> np.ndarray:
    """Separable integer FIR (edge replicate), unnormalised: result scaled by sum(taps)**2."""
    r = len(taps) // 2
    p = np.pad(img.astype(np.int64), ((0, 0), (r, r)), mode="edge")
    w = img.shape[1]
    acc = sum(int(t) * p[:, k : k + w] for k, t in enumerate(taps))
    p = np.pad(acc, ((r, r), (0, 0)), mode="edge")
    h = img.shape[0]
    return sum(int(t) * p[k : k + h, :] for k, t in enumerate(taps))


def _gauss5(img: np.ndarray) -> np.ndarray:
    return _round_div(_sep_filter(img, (1, 4, 6, 4, 1)), 256)


def _clip(img: np.ndarray, bitdepth: int) -> np.ndarray:
    return np.clip(img, 0, (1 << bitdepth) - 1)


# ---------------------------------------------------------------- content


PATTERNS = ("noise", "check", "vstripe", "hstripe", "dstripe")


def pattern_luma(spec: dict[str, Any], frame: int, bitdepth: int, w: int, h: int) -> np.ndarray:
    """Full-swing reference luma (int64, every sample 0 or ``2**bitdepth - 1``) of one frame.

    ``pattern`` is ``(kind, period)``: ``noise`` draws one PCG64 bit per sample (its stream
    keyed by the pair's seed and the frame), ``check`` is a checkerboard of ``period`` x
    ``period`` cells, ``vstripe``/``hstripe``/``dstripe`` are hard vertical, horizontal and
    diagonal stripes ``period`` samples wide. The periodic patterns move by one sample per
    frame.
    """
    kind, period = spec["pattern"]
    if kind not in PATTERNS:
        raise ValueError(f"unknown pattern {kind!r}")
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    if kind == "noise":
        raw = np.random.default_rng([spec["seed"], frame]).bit_generator.random_raw(w * h)
        on = (np.asarray(raw, dtype=np.uint64) >> np.uint64(63)).astype(np.int64).reshape(h, w)
    elif kind == "check":
        on = ((y // period) + (x + frame) // period) % 2
    elif kind == "vstripe":
        on = ((x + frame) // period) % 2
    elif kind == "hstripe":
        on = ((y + frame) // period) % 2
    else:
        on = ((x + y + frame) // period) % 2
    return on * ((1 << bitdepth) - 1)


def render_frame_luma(
    spec: dict[str, Any], frame: int, bitdepth: int, w: int, h: int
) -> np.ndarray:
    """Reference luma plane (int64, ``0 .. 2**bitdepth - 1``) of one frame."""
    if "pattern" in spec:
        return pattern_luma(spec, frame, bitdepth, w, h)
    if "flat" in spec:
        return np.full((h, w), int(spec["flat"]) << (bitdepth - 8), dtype=np.int64)
    src = source_luma(spec["image"])
    step = spec["step"]
    if "path" in spec:
        # An explicit per-frame offset: pauses, jumps and sub-pixel steps give motion
        # scores that change from frame to frame (and a zero where the window stays).
        y0 = spec["origin"][0] + spec["path"][frame][0]
        x0 = spec["origin"][1] + spec["path"][frame][1]
    else:
        y0 = spec["origin"][0] + frame * spec["shift"][0]
        x0 = spec["origin"][1] + frame * spec["shift"][1]
    ys = y0 + step * np.arange(h, dtype=np.int64)
    xs = x0 + step * np.arange(w, dtype=np.int64)
    if (
        ys[-1] >> POS_SHIFT >= src.shape[0]
        or xs[-1] >> POS_SHIFT >= src.shape[1]
        or y0 < 0
        or x0 < 0
    ):
        raise ValueError(f"{spec['image']}: window leaves the source image")
    lum = _sample_bilinear(src, ys, xs)
    if bitdepth > 8:
        lum = _round_div(_sep_filter(lum, (1, 2, 1)), 16)
        gx = (np.arange(w, dtype=np.int64) * HIBIT_GRADIENT_X) // max(w - 1, 1)
        gy = (np.arange(h, dtype=np.int64) * HIBIT_GRADIENT_Y) // max(h - 1, 1)
        lum = np.clip(lum + gy[:, None] + gx[None, :], 0, LUMA_WHITE)
        lum = lum + (lum * (LUMA_WHITE - lum) * HIBIT_TONE_NUM) // (LUMA_WHITE * HIBIT_TONE_DEN)
    return (lum * ((1 << bitdepth) - 1) + LUMA_WHITE // 2) // LUMA_WHITE


def _noise(shape: tuple[int, int], seed: int, sigma16: int, bitdepth: int) -> np.ndarray:
    """Approximately Gaussian noise, std ``sigma16 / 16`` 8-bit levels, from PCG64 raw output."""
    raw = np.random.default_rng(seed).bit_generator.random_raw(shape[0] * shape[1])
    raw = np.asarray(raw, dtype=np.uint64)
    mask = np.uint64(0xFFFF)
    s = sum(((raw >> np.uint64(16 * k)) & mask).astype(np.int64) for k in range(4)) - 2 * 0xFFFF
    return _round_div(s * (sigma16 << (bitdepth - 8)), NOISE_STD_Q * 16).reshape(shape)


def _flip(img: np.ndarray, seed: int, per_mille: int, bitdepth: int) -> np.ndarray:
    """Invert (``2**bitdepth - 1 - v``) each sample with probability ``per_mille / 1000``."""
    raw = np.random.default_rng(seed).bit_generator.random_raw(img.size)
    draw = (np.asarray(raw, dtype=np.uint64) >> np.uint64(54)).astype(np.int64)  # 0..1023
    hit = (draw * 1000 < per_mille * 1024).reshape(img.shape)
    return np.where(hit, ((1 << bitdepth) - 1) - img, img)


def _block_quant(img: np.ndarray, q_dc: int, q_ac: int) -> np.ndarray:
    """8x8 block-mean quantisation: block DC rounded to ``q_dc``, residual to ``q_ac``."""
    h, w = img.shape
    bh, bw = -(-h // 8), -(-w // 8)
    pad = np.zeros((bh * 8, bw * 8), dtype=np.int64)
    pad[:h, :w] = img
    cnt = np.zeros_like(pad)
    cnt[:h, :w] = 1
    sums = pad.reshape(bh, 8, bw, 8).sum(axis=(1, 3))
    cnts = cnt.reshape(bh, 8, bw, 8).sum(axis=(1, 3))
    mean = (2 * sums + cnts) // (2 * cnts)
    mean = np.repeat(np.repeat(mean, 8, axis=0), 8, axis=1)[:h, :w]
    dc = _round_div(mean, q_dc) * q_dc
    ac = _round_div(img - mean, q_ac) * q_ac
    return dc + ac


def _rescale(img: np.ndarray, factor: int, down: str, up: str) -> np.ndarray:
    """Downscale by an integer factor (box mean or nearest) and back up (bilinear or nearest)."""
    h, w = img.shape
    if down == "box":
        ph, pw = -(-h // factor) * factor, -(-w // factor) * factor
        p = np.pad(img, ((0, ph - h), (0, pw - w)), mode="edge")
        small = _round_div(
            p.reshape(ph // factor, factor, pw // factor, factor).sum(axis=(1, 3)), factor * factor
        )
    elif down == "nearest":
        small = img[::factor, ::factor]
    else:
        raise ValueError(down)
    if up == "nearest":
        return small[np.arange(h) // factor][:, np.arange(w) // factor]
    if up != "bilinear":
        raise ValueError(up)
    iy, ix = np.arange(h, dtype=np.int64), np.arange(w, dtype=np.int64)
    if down == "box":
        # A box-mean sample sits at the centre of its block: src = (dst + 0.5) / factor - 0.5.
        ys = ((2 * iy + 1 - factor) * POS_ONE) // (2 * factor)
        xs = ((2 * ix + 1 - factor) * POS_ONE) // (2 * factor)
    else:
        # A decimated sample sits on the first pixel of its block: src = dst / factor.
        ys, xs = (iy * POS_ONE) // factor, (ix * POS_ONE) // factor
    return _sample_bilinear(small, ys, xs)


def distort(
    img: np.ndarray, ops: Sequence[tuple[str, dict[str, int | str]]], bitdepth: int, seed: int
) -> np.ndarray:
    """Apply a chain of codec-like distortions to one luma plane (integer in, integer out).

    Amplitudes and steps are given in 8-bit levels and scaled by ``2**(bitdepth-8)``.
    """
    scale = 1 << (bitdepth - 8)
    out = img.astype(np.int64)
    for k, (op, p) in enumerate(ops):
        if op == "gauss5":
            out = _gauss5(out)
        elif op == "box":
            n = int(p["n"])
            out = _round_div(_sep_filter(out, (1,) * n), n * n)
        elif op == "noise":
            out = out + _noise(out.shape, seed * 16 + k, int(p["sigma16"]), bitdepth)
        elif op == "block":
            out = _block_quant(out, int(p["q_dc"]) * scale, int(p["q_ac"]) * scale)
        elif op == "rescale":
            out = _rescale(out, int(p["factor"]), str(p["down"]), str(p["up"]))
        elif op == "band":
            step = int(p["step"]) * scale
            out = (out // step) * step + step // 2
        elif op == "flip":
            out = _flip(out, seed * 16 + k, int(p["per_mille"]), bitdepth)
        elif op == "sharpen":
            out = out + _round_div((out - _gauss5(out)) * int(p["num"]), int(p["den"]))
        else:
            raise ValueError(f"unknown distortion {op!r}")
        out = _clip(out, bitdepth)
    return out


# ---------------------------------------------------------------- files


def chroma_size(w: int, h: int, fmt: str) -> tuple[int, int]:
    """(width, height) of each chroma plane; (0, 0) for 400."""
    return {
        "420": ((w + 1) // 2, (h + 1) // 2),
        "422": ((w + 1) // 2, h),
        "444": (w, h),
        "400": (0, 0),
    }[fmt]


def frame_bytes(luma: np.ndarray, fmt: str, bitdepth: int) -> bytes:
    """One raw planar frame: Y, then U and V filled with mid-grey."""
    h, w = luma.shape
    dt = np.dtype(np.uint8) if bitdepth == 8 else np.dtype("<u2")
    if luma.min() < 0 or luma.max() >= 1 << bitdepth:
        raise ValueError("luma out of range")
    cw, ch = chroma_size(w, h, fmt)
    chroma = np.full(2 * cw * ch, 128 << (bitdepth - 8), dtype=dt)
    return luma.astype(dt).tobytes() + chroma.tobytes()


# File specs: one per ref/dis pair. step/origin/shift are Q8 source-pixel units.
FILES: dict[str, dict[str, Any]] = {
    "camera_17x17_420_8b_gauss": dict(
        w=17,
        h=17,
        fmt="420",
        bitdepth=8,
        frames=3,
        seed=1,
        image="camera",
        step=1792,
        origin=(40 << 8, 130 << 8),
        shift=(9 << 8, 6 << 8),
        ops=[("gauss5", {})],
    ),
    "astronaut_18x22_444_8b_noise": dict(
        w=18,
        h=22,
        fmt="444",
        bitdepth=8,
        frames=3,
        seed=2,
        image="astronaut",
        step=1280,
        origin=(20 << 8, 140 << 8),
        shift=(4 << 8, 7 << 8),
        ops=[("noise", {"sigma16": 64})],
    ),
    "coffee_24x30_420_8b_block": dict(
        w=24,
        h=30,
        fmt="420",
        bitdepth=8,
        frames=3,
        seed=3,
        image="coffee",
        step=2560,
        origin=(10 << 8, 150 << 8),
        shift=(5 << 8, 11 << 8),
        ops=[("block", {"q_dc": 6, "q_ac": 20})],
    ),
    "camera_20x64_420_8b_noise": dict(
        w=20,
        h=64,
        fmt="420",
        bitdepth=8,
        frames=3,
        seed=13,
        image="camera",
        step=1536,
        origin=(60 << 8, 200 << 8),
        shift=(3 << 8, 5 << 8),
        ops=[("noise", {"sigma16": 80})],
    ),
    "chelsea_33x37_422_8b_band": dict(
        w=33,
        h=37,
        fmt="422",
        bitdepth=8,
        frames=3,
        seed=4,
        image="chelsea",
        step=1536,
        origin=(30 << 8, 120 << 8),
        shift=(6 << 8, -9 << 8),
        ops=[("band", {"step": 12})],
    ),
    "coins_97x55_400_8b_rescale": dict(
        w=97,
        h=55,
        fmt="400",
        bitdepth=8,
        frames=3,
        seed=5,
        image="coins",
        step=768,
        origin=(60 << 8, 40 << 8),
        shift=(7 << 8, 5 << 8),
        ops=[("rescale", {"factor": 2, "down": "nearest", "up": "bilinear"})],
    ),
    "astronaut_160x90_420_8b_boxnoise": dict(
        w=160,
        h=90,
        fmt="420",
        bitdepth=8,
        frames=3,
        seed=6,
        image="astronaut",
        step=768,
        origin=(12 << 8, 10 << 8),
        shift=(3 << 8, 5 << 8),
        ops=[("box", {"n": 3}), ("noise", {"sigma16": 40})],
    ),
    "chelsea_128x72_444_8b_sharpen": dict(
        w=128,
        h=72,
        fmt="444",
        bitdepth=8,
        frames=3,
        seed=7,
        image="chelsea",
        step=640,
        origin=(60 << 8, 60 << 8),
        shift=(3 << 8, 4 << 8),
        ops=[("sharpen", {"num": 3, "den": 2})],
    ),
    "immunohistochemistry_160x90_422_10b_blockgauss": dict(
        w=160,
        h=90,
        fmt="422",
        bitdepth=10,
        frames=3,
        seed=8,
        image="immunohistochemistry",
        step=640,
        origin=(80 << 8, 70 << 8),
        shift=(5 << 8, 3 << 8),
        ops=[("gauss5", {}), ("block", {"q_dc": 4, "q_ac": 10})],
    ),
    "coffee_192x108_420_12b_band": dict(
        w=192,
        h=108,
        fmt="420",
        bitdepth=12,
        frames=3,
        seed=9,
        image="coffee",
        step=640,
        origin=(40 << 8, 100 << 8),
        shift=(4 << 8, 6 << 8),
        ops=[("gauss5", {}), ("band", {"step": 3})],
    ),
    "moon_200x120_400_16b_rescale": dict(
        w=200,
        h=120,
        fmt="400",
        bitdepth=16,
        frames=3,
        seed=10,
        image="moon",
        step=512,
        origin=(100 << 8, 60 << 8),
        shift=(2 << 8, 7 << 8),
        ops=[
            ("rescale", {"factor": 2, "down": "box", "up": "nearest"}),
            ("noise", {"sigma16": 12}),
        ],
    ),
    "mosaic_1919x1079_420_8b_block": dict(
        w=1919,
        h=1079,
        fmt="420",
        bitdepth=8,
        frames=2,
        seed=11,
        image="mosaic",
        step=141,
        origin=(0, 40 << 8),
        shift=(50, 3 << 8),
        ops=[("block", {"q_dc": 4, "q_ac": 12}), ("noise", {"sigma16": 16})],
    ),
    "mosaic_1280x720_420_10b_rescale": dict(
        w=1280,
        h=720,
        fmt="420",
        bitdepth=10,
        frames=2,
        seed=12,
        image="mosaic",
        step=212,
        origin=(0, 60 << 8),
        shift=(100, 2 << 8),
        ops=[
            ("rescale", {"factor": 2, "down": "box", "up": "bilinear"}),
            ("noise", {"sigma16": 10}),
        ],
    ),
}

_ORIGINAL_STEMS = tuple(FILES)  # the pairs of the first goldens, in their order

# Full-swing patterns (every reference sample 0 or 2**b - 1): scale-0 bands reach their
# extremes, so the reciprocal table's negative half, the decouple gain's rounding and its
# clamp decide results there (see README.md, "What each group of cases pins down").
_FULL_SWING: dict[str, tuple[tuple[str, int], int, list]] = {
    "binnoise_128x96_400_8b_noise": (("noise", 1), 8, [("noise", {"sigma16": 320})]),
    "binnoise_128x96_400_16b_flip": (("noise", 1), 16, [("flip", {"per_mille": 100})]),
    "binnoise_96x64_400_8b_flipnoise": (
        ("noise", 1),
        8,
        [("flip", {"per_mille": 50}), ("noise", {"sigma16": 160})],
    ),
    "check2_96x64_400_8b_flip": (("check", 2), 8, [("flip", {"per_mille": 100})]),
    "check2_96x64_400_16b_noise": (("check", 2), 16, [("noise", {"sigma16": 320})]),
    "vstripe1_96x64_400_8b_noise": (("vstripe", 1), 8, [("noise", {"sigma16": 320})]),
    "hstripe2_64x48_400_16b_rescale": (
        ("hstripe", 2),
        16,
        [("rescale", {"factor": 2, "down": "box", "up": "bilinear"})],
    ),
    "dstripe3_96x64_400_8b_flipnoise": (
        ("dstripe", 3),
        8,
        [("flip", {"per_mille": 50}), ("noise", {"sigma16": 160})],
    ),
}
for _seed, (_stem, (_pattern, _bd, _ops)) in enumerate(_FULL_SWING.items(), start=40):
    _w, _h = (int(v) for v in _stem.split("_")[1].split("x"))
    FILES[_stem] = dict(
        w=_w, h=_h, fmt="400", bitdepth=_bd, frames=3, seed=_seed, pattern=_pattern, ops=_ops
    )

FILES.update(
    {
        # Flat references: every detail band is zero, so with adm_noise_weight=0 the
        # denominator is zero (libvmaf: adm2 = 1, AIM uninitialised).
        "flat_64x48_400_8b_noise": dict(
            w=64, h=48, fmt="400", bitdepth=8, frames=2, seed=60, flat=100,
            ops=[("noise", {"sigma16": 64})],
        ),
        "flat_64x48_400_10b_noise": dict(
            w=64, h=48, fmt="400", bitdepth=10, frames=2, seed=61, flat=100,
            ops=[("noise", {"sigma16": 64})],
        ),
        # Shapes near the minimum. Width 17..32: libvmaf reads column -1 at scale 3
        # (repeatable). Height 33: the smallest whose scale 3 reads no row -1.
        "camera_17x200_420_8b_noise": dict(
            w=17, h=200, fmt="420", bitdepth=8, frames=3, seed=62, image="camera",
            step=512, origin=(50 << 8, 200 << 8), shift=(3 << 8, 2 << 8),
            ops=[("noise", {"sigma16": 64})],
        ),
        "chelsea_17x33_444_8b_band": dict(
            w=17, h=33, fmt="444", bitdepth=8, frames=3, seed=63, image="chelsea",
            step=1024, origin=(40 << 8, 150 << 8), shift=(5 << 8, 7 << 8),
            ops=[("band", {"step": 10})],
        ),
        "moon_33x260_400_16b_noise": dict(
            w=33, h=260, fmt="400", bitdepth=16, frames=3, seed=64, image="moon",
            step=384, origin=(60 << 8, 200 << 8), shift=(4 << 8, 3 << 8),
            ops=[("gauss5", {}), ("noise", {"sigma16": 24})],
        ),
        "mosaic_1000x33_400_8b_block": dict(
            w=1000, h=33, fmt="400", bitdepth=8, frames=3, seed=65, image="mosaic",
            step=256, origin=(280 << 8, 100 << 8), shift=(2 << 8, 3 << 8),
            ops=[("block", {"q_dc": 6, "q_ac": 16})],
        ),
        # Height 17..32 and width 49 or more: libvmaf's scale-3 row -1 includes samples
        # outside the scale-0 CSF region, which its buffer never receives (zero on a
        # fresh heap, see README.md: heap_fields).
        "coffee_200x24_420_8b_gauss": dict(
            w=200, h=24, fmt="420", bitdepth=8, frames=3, seed=66, image="coffee",
            step=512, origin=(100 << 8, 100 << 8), shift=(7 << 8, 5 << 8),
            ops=[("gauss5", {})],
        ),
        "astronaut_640x20_420_8b_sharpen": dict(
            w=640, h=20, fmt="420", bitdepth=8, frames=3, seed=67, image="astronaut",
            step=192, origin=(200 << 8, 10 << 8), shift=(9 << 8, 1 << 8),
            ops=[("sharpen", {"num": 3, "den": 2})],
        ),
        "mosaic_1000x17_400_8b_noise": dict(
            w=1000, h=17, fmt="400", bitdepth=8, frames=3, seed=68, image="mosaic",
            step=256, origin=(120 << 8, 150 << 8), shift=(11 << 8, 5 << 8),
            ops=[("noise", {"sigma16": 48})],
        ),
        "mosaic_1920x32_400_8b_rescale": dict(
            w=1920, h=32, fmt="400", bitdepth=8, frames=2, seed=69, image="mosaic",
            step=159, origin=(400 << 8, 0), shift=(13 << 8, 1 << 8),
            ops=[("rescale", {"factor": 2, "down": "nearest", "up": "bilinear"})],
        ),
    }
)  # fmt: skip

# Multi-frame pairs for the VIF, motion and model goldens (testdata/vmaf_goldens.json; no ADM
# golden case uses them). Offsets are Q8 source pixels, one per frame; an offset repeated from
# the frame before leaves the reference unchanged, so that frame's motion SAD is exactly zero.
_PATH_SHORT = [
    (0, 0),
    (2 << 8, 3 << 8),
    (2 << 8, 3 << 8),
    (5 << 8, 4 << 8),
    (9 << 8, 9 << 8),
    (10 << 8, 11 << 8),
    (10 << 8, 16 << 8),
    (4 << 8, 18 << 8),
]
_PATH_SUBPEL = [
    (0, 0),
    (96, 160),
    (96, 160),
    (352, 416),
    (1408, 864),
    (1536, 928),
    (2176, 2208),
    (2304, 3328),
    (2304, 3328),
    (2560, 3456),
    (3968, 4096),
    (4096, 5376),
]
VMAF_STEMS = (
    "coffee_112x64_420_10b_blocknoise",
    "chelsea_96x56_422_12b_rescalenoise",
    "camera_80x48_400_8b_rescale",
    "moon_64x40_444_16b_sharpen",
    "astronaut_65x41_420_8b_boxnoise",
)
FILES.update(
    {
        "coffee_112x64_420_10b_blocknoise": dict(
            w=112, h=64, fmt="420", bitdepth=10, frames=8, seed=70, image="coffee",
            step=640, origin=(100 << 8, 120 << 8), path=_PATH_SHORT,
            ops=[("block", {"q_dc": 4, "q_ac": 12}), ("noise", {"sigma16": 24})],
        ),
        "chelsea_96x56_422_12b_rescalenoise": dict(
            w=96, h=56, fmt="422", bitdepth=12, frames=8, seed=71, image="chelsea",
            step=512, origin=(60 << 8, 150 << 8), path=_PATH_SHORT,
            ops=[("rescale", {"factor": 2, "down": "box", "up": "bilinear"}),
                 ("noise", {"sigma16": 20})],
        ),
        "camera_80x48_400_8b_rescale": dict(
            w=80, h=48, fmt="400", bitdepth=8, frames=10, seed=72, image="camera",
            step=768, origin=(150 << 8, 120 << 8), path=_PATH_SUBPEL[:10],
            ops=[("rescale", {"factor": 3, "down": "nearest", "up": "nearest"})],
        ),
        "moon_64x40_444_16b_sharpen": dict(
            w=64, h=40, fmt="444", bitdepth=16, frames=6, seed=73, image="moon",
            step=1024, origin=(150 << 8, 180 << 8), path=_PATH_SHORT[:6],
            ops=[("sharpen", {"num": 1, "den": 1}), ("noise", {"sigma16": 16})],
        ),
        "astronaut_65x41_420_8b_boxnoise": dict(
            w=65, h=41, fmt="420", bitdepth=8, frames=12, seed=74, image="astronaut",
            step=1024, origin=(60 << 8, 150 << 8), path=_PATH_SUBPEL,
            ops=[("box", {"n": 3}), ("noise", {"sigma16": 48})],
        ),
    }
)  # fmt: skip

# Files above this size are regenerated by the tests instead of being committed.
COMMIT_LIMIT_BYTES = 300_000

# sha256 of every file, recorded from a run with NumPy 2.4.6 / scikit-image 0.26.0 and checked
# identical with NumPy 1.26.4 / scikit-image 0.22.0.
_SHA256: dict[str, str] = {
    "camera_20x64_420_8b_noise_dis.yuv": (
        "c9257f617dccdc1860d55417ad73d5ee5eb6d6b2016026513aa9c8fed17a59e2"
    ),
    "camera_20x64_420_8b_noise_ref.yuv": (
        "dae653660bc58ef809b603bdd1c727dceb3e13094f8144fa325ec91384474f02"
    ),
    "astronaut_160x90_420_8b_boxnoise_dis.yuv": (
        "2befe99466f4d16d7659b9fead29de88f45e3070c53513e439526fcc19dd3805"
    ),
    "astronaut_160x90_420_8b_boxnoise_ref.yuv": (
        "62fad9ba3d43065211c6038af2d1632fb787ab777b4a43d6ca915308d390e3a2"
    ),
    "astronaut_18x22_444_8b_noise_dis.yuv": (
        "38ca49b5193d2a6fb583625061de4e17616d9eb28941624c6e9beb93a0993187"
    ),
    "astronaut_18x22_444_8b_noise_ref.yuv": (
        "4a1246d1304d55be85e3c4233522931b563f92dedce19afcd019c6e92bf04611"
    ),
    "camera_17x17_420_8b_gauss_dis.yuv": (
        "4c0b16b2d9f1ce70d5a8933c04ca2400144192394dfcf7ed8ab5c4b6faeae687"
    ),
    "camera_17x17_420_8b_gauss_ref.yuv": (
        "7e1e321f5f5e2c02212462fd34b99da015fba5e4fceb4acdbb0d309e63a359ff"
    ),
    "chelsea_128x72_444_8b_sharpen_dis.yuv": (
        "cdea91fb972d0da1ea121e3edbb6018d9123bc995dc98d653ed8b73ab839690c"
    ),
    "chelsea_128x72_444_8b_sharpen_ref.yuv": (
        "cffda39ad76bc8736c81433358315653b5fdbd9b84bb86029e99d17cf191cc0d"
    ),
    "chelsea_33x37_422_8b_band_dis.yuv": (
        "2c06f758a6ddfd225f8d0717b913ef3864eb8dc5ce8e30f0b9d8f50f5bec853f"
    ),
    "chelsea_33x37_422_8b_band_ref.yuv": (
        "a0cff27b29a9cb36b92745ed818c39fff1dc33032777bda1e48dc216ff211044"
    ),
    "coffee_192x108_420_12b_band_dis.yuv": (
        "7e846a2a2662b07532ee283f2c08f5c7e5649124f09c5412e84da294ed129d35"
    ),
    "coffee_192x108_420_12b_band_ref.yuv": (
        "fabec72ec3e6fdf4bf2d00d2e69f1c81beb39d76418a4421f928674ccf606ff9"
    ),
    "coffee_24x30_420_8b_block_dis.yuv": (
        "04b49a9d24a04fe49375b472df95be888871942c6242c09a16f33342fdf2da9d"
    ),
    "coffee_24x30_420_8b_block_ref.yuv": (
        "0affc4deb30c864e453f131b65061c132283d657c2d032c81a7a874033e729e0"
    ),
    "coins_97x55_400_8b_rescale_dis.yuv": (
        "0029b9c5d07cd7473d4ad107198f3ea243f0ef52d9da1b75bdab71bd20940df7"
    ),
    "coins_97x55_400_8b_rescale_ref.yuv": (
        "fe0b0d6889e997b9fca84e6ed9506f22a6d4beb21a37b423f251697e1edc60f6"
    ),
    "immunohistochemistry_160x90_422_10b_blockgauss_dis.yuv": (
        "4ba2180221d6e4e439ee777fc25bcb0b1a3cfb97f2100cb21d8bfe7d9a60c56f"
    ),
    "immunohistochemistry_160x90_422_10b_blockgauss_ref.yuv": (
        "0b210c9b9323cae03e4c5759dfd8b354a4d687514ae5b5178ebaa8fe5753a30c"
    ),
    "moon_200x120_400_16b_rescale_dis.yuv": (
        "fde77c7a4d0ec4ecf8bdf4222df8c02d6eb6ceda1a923cc0a39a9933311950e3"
    ),
    "moon_200x120_400_16b_rescale_ref.yuv": (
        "42449ab6066576e1a9d9a7963cbb78ac3a9e0fadfaff308ab6d9615486188ed7"
    ),
    "mosaic_1280x720_420_10b_rescale_dis.yuv": (
        "b33cc06a9d7d3472e73f6ec914d6536e41735c06bb000de5cfd59447e0c33c56"
    ),
    "mosaic_1280x720_420_10b_rescale_ref.yuv": (
        "0c4c795a380d75a1abdb08718fdfbb7941f3f59be9b66e381f27bad3217d62fd"
    ),
    "mosaic_1919x1079_420_8b_block_dis.yuv": (
        "45c4387834ced7057ae5d9e3e296428a37ebe837b984357a53347f3ff15fb7ac"
    ),
    "mosaic_1919x1079_420_8b_block_ref.yuv": (
        "362036780ade3b0944675e747a40f3e955b4c9d385bf7b1ce6953e63e4cc1470"
    ),
    "binnoise_128x96_400_8b_noise_ref.yuv": (
        "373589e513eee9d0b10f78ed973de809f4784fd46f8849182cc8d7a379603268"
    ),
    "binnoise_128x96_400_8b_noise_dis.yuv": (
        "497965e322d74825cf853d6144c44e6a3f13c49dcf873b68445d3ec4c8bd9f38"
    ),
    "binnoise_128x96_400_16b_flip_ref.yuv": (
        "4661d465cb4703aa4bf663e7949c12c8ed8b4f8f64bb54ff63c9c242c234a188"
    ),
    "binnoise_128x96_400_16b_flip_dis.yuv": (
        "de876d0a52902ce03c302cd6e7b6838a6f43cc0e10fa8b2b0266b74647b11b2e"
    ),
    "binnoise_96x64_400_8b_flipnoise_ref.yuv": (
        "91c3b809c343bdbe17c482143b6fd23aed11f8918c83cf29ae73e72a823fd358"
    ),
    "binnoise_96x64_400_8b_flipnoise_dis.yuv": (
        "5f1983bbaa0c1078d62694f565819cb0eb98b21152f513b5c4fc8c12f965e9b9"
    ),
    "check2_96x64_400_8b_flip_ref.yuv": (
        "bac27c0b643ca6ea4f38625506d0481b46592f29a2b86583bb21e5711d16b9bd"
    ),
    "check2_96x64_400_8b_flip_dis.yuv": (
        "36108464add5dbc58eef6f085587d982e834b04000315a6be365b013cf0957b7"
    ),
    "check2_96x64_400_16b_noise_ref.yuv": (
        "6a940f2c8519b760c9ef9bc0f7505a005a9e0380a9e44b3884d6aae6825f3980"
    ),
    "check2_96x64_400_16b_noise_dis.yuv": (
        "5e3d07e14c3763dcce9166fa50f9c3abf54d28786681eb8de74d0ed616ee2905"
    ),
    "vstripe1_96x64_400_8b_noise_ref.yuv": (
        "bcbbfc098f0f0a30f4e90ec1b23279e06e6597673f29417eb906958eea748a26"
    ),
    "vstripe1_96x64_400_8b_noise_dis.yuv": (
        "220919e20214a282d0b027bb2476901ca4541f5bb9d154998b8ae4834e933201"
    ),
    "hstripe2_64x48_400_16b_rescale_ref.yuv": (
        "01c4c78bd4aa75ab1e41d3535c84bd5819e4282c27a096d62037b013ba0cc663"
    ),
    "hstripe2_64x48_400_16b_rescale_dis.yuv": (
        "e154f4288aa6a29160814e3da6cd2f43693b427e476e3659694b63b5d5d160cc"
    ),
    "dstripe3_96x64_400_8b_flipnoise_ref.yuv": (
        "d74d839514d3e1f6ea40b2bee2d03599f59d498daf2c77d914d9953eec3b3ec2"
    ),
    "dstripe3_96x64_400_8b_flipnoise_dis.yuv": (
        "2f419e065c5df88075b74b7fc41af249b0af691ccc7e7e387045b04d4ff43665"
    ),
    "flat_64x48_400_8b_noise_ref.yuv": (
        "c11b6ea9ff608222daf7184c843d8754ae9569cd3b05925d569666b408c451e3"
    ),
    "flat_64x48_400_8b_noise_dis.yuv": (
        "4ca2bf229e96ae5c56b50c768ccf04e0054c318ced4362cadea99b40e5f3a05e"
    ),
    "flat_64x48_400_10b_noise_ref.yuv": (
        "d28a346dabd95c43db0eb4528cb8c31e7e43a2d53d99ade495aaf92e69418aae"
    ),
    "flat_64x48_400_10b_noise_dis.yuv": (
        "c1bb33511f57a817139b6d1dfd74556ee2e423d2634a1e1e12a65e8d479f2c30"
    ),
    "camera_17x200_420_8b_noise_ref.yuv": (
        "06c9356a27133c94a728bb9d8da59d71480dcc0cc5288a98c9d3bf14072e2ea6"
    ),
    "camera_17x200_420_8b_noise_dis.yuv": (
        "27b75aa5b31b25891748123e2f285a4b80acc569458cd07f761aa87ae9910539"
    ),
    "chelsea_17x33_444_8b_band_ref.yuv": (
        "db7213d9260fa0f4d62db176ffe7ef1c797c6a3c65bf5d073d4139b5d921750c"
    ),
    "chelsea_17x33_444_8b_band_dis.yuv": (
        "6e3bb294c43b674b67aae06c601ecce3a192fcb589885f907b37ed5cf2784d90"
    ),
    "moon_33x260_400_16b_noise_ref.yuv": (
        "cba61389592baab2251ac03027d48347b62863a5fcee1c713a8e1cc07220bb86"
    ),
    "moon_33x260_400_16b_noise_dis.yuv": (
        "ca4b88cd0fbadf0e4501eb8a593ced44bfbfd03032b033321c80b36861694c2e"
    ),
    "mosaic_1000x33_400_8b_block_ref.yuv": (
        "32cc1756cce6bda377763de822a8818a97b50f4ac3614b63898b72eedeee2b55"
    ),
    "mosaic_1000x33_400_8b_block_dis.yuv": (
        "a08af8d4a116fd5542e7526f7d5f214864737c2d4722ad89f6d024f79e34af32"
    ),
    "coffee_200x24_420_8b_gauss_ref.yuv": (
        "159c96e2aa272759d79ff72eba2bc3d96b98ccbbdc3079b5a57e611ea22eb6b8"
    ),
    "coffee_200x24_420_8b_gauss_dis.yuv": (
        "aa84bfc5bf33269f1ec2b3a5e582c1b8cee2ca425fa798d37ccb7f562963c019"
    ),
    "astronaut_640x20_420_8b_sharpen_ref.yuv": (
        "656a925db75be6db7c2483c7c4809819abf566a1d35f3e1d27644448c530275c"
    ),
    "astronaut_640x20_420_8b_sharpen_dis.yuv": (
        "d7aa12af8c014f224848bb17bd3dffa2669614450438e9fd36c627d4f26fe752"
    ),
    "mosaic_1000x17_400_8b_noise_ref.yuv": (
        "d12e137bdae732e5af4fea98b96642190e2bbaed27f98f377195a1a1e536e973"
    ),
    "mosaic_1000x17_400_8b_noise_dis.yuv": (
        "0e60d8c06c86bf3aca0b4493af49ce13aa9118be52b0dbe4460de58a93bbf633"
    ),
    "mosaic_1920x32_400_8b_rescale_ref.yuv": (
        "f32f8411b6fbb3e3fc3030b794314be7220720eedcf2fe13f488e707efcdf392"
    ),
    "mosaic_1920x32_400_8b_rescale_dis.yuv": (
        "7a0929d0a1ca8addc6421a280953dc69118ba63106b6f8967b64383193a5edc4"
    ),
    "coffee_112x64_420_10b_blocknoise_dis.yuv": (
        "5af28cef16db5be29e5a4e632ce68e52a566560895638eb33ef65b90132f61aa"
    ),
    "coffee_112x64_420_10b_blocknoise_ref.yuv": (
        "a7c7726a0fd6a61e35ae064a0bcaca3999696841d74311002b8a7335a09035a8"
    ),
    "chelsea_96x56_422_12b_rescalenoise_dis.yuv": (
        "faabb0c114a66dd31745566799dce73e1ef2d4d94b3ceea7f35733b1cfed1eaf"
    ),
    "chelsea_96x56_422_12b_rescalenoise_ref.yuv": (
        "fabcd7fad8bb8b7855c8119faad336350ffeffee5c030454a5e9cd9e24d261e1"
    ),
    "camera_80x48_400_8b_rescale_dis.yuv": (
        "43b03ea7186a9e3f017be7a92100e833094c29d4331af9de727f87556e5b865b"
    ),
    "camera_80x48_400_8b_rescale_ref.yuv": (
        "862693ec48d3bf4215dc5755b7297a50d7e401a75eee11046f57db94e41d6f58"
    ),
    "moon_64x40_444_16b_sharpen_dis.yuv": (
        "a7e664cd19c74c3499de11ab15b340aba0fb5d6a0c0ef300152ee118b81eae9c"
    ),
    "moon_64x40_444_16b_sharpen_ref.yuv": (
        "66f96639df1978ed6603baa65f012e2224f95310ad94400337c675694e1f13ee"
    ),
    "astronaut_65x41_420_8b_boxnoise_dis.yuv": (
        "0a44838a06ff9ce40d35f290e914903d889e0a0723dc72c033f064150fa945df"
    ),
    "astronaut_65x41_420_8b_boxnoise_ref.yuv": (
        "02a4fa55a8331c403897b9b9c9ad4baf1a37fe87b0d8b86d001aa24f4cdde134"
    ),
}


def _source_name(f: dict[str, Any]) -> str:
    if "pattern" in f:
        kind, period = f["pattern"]
        return f"pattern {kind}" + ("" if kind == "noise" else f", period {period}")
    if "flat" in f:
        return f"flat {f['flat']} (8-bit level)"
    return f["image"]


def _file_names(stem: str) -> tuple[str, str]:
    return f"{stem}_ref.yuv", f"{stem}_dis.yuv"


def _case(
    name: str, stem: str, options: dict[str, str] | None = None, same: bool = False
) -> dict[str, Any]:
    f = FILES[stem]
    ref, dis = _file_names(stem)
    if same:
        dis = ref
    size = (f["w"] * f["h"] + 2 * np.prod(chroma_size(f["w"], f["h"], f["fmt"]))) * (
        1 if f["bitdepth"] == 8 else 2
    )
    size = int(size) * f["frames"]
    return {
        "name": name,
        "ref": ref,
        "dis": dis,
        "w": f["w"],
        "h": f["h"],
        "fmt": f["fmt"],
        "bitdepth": f["bitdepth"],
        "frames": f["frames"],
        "options": dict(options or {}),
        "ref_sha256": _SHA256.get(ref),
        "dis_sha256": _SHA256.get(dis),
        "committed": size <= COMMIT_LIMIT_BYTES,
        "source": _source_name(f),
        "distortion": [[op, dict(p)] for op, p in f["ops"]] if not same else [],
    }


def _non_default(options: dict[str, str]) -> dict[str, str]:
    """Drop options at libvmaf's default: libvmaf leaves them out of its output names, and
    the oracle looks the outputs up by the names of the options it was given."""
    defaults = {"adm_ref_display_height": "1080", "adm_norm_view_dist": "3"}
    return {k: v for k, v in options.items() if defaults.get(k) != v}


_MID = "astronaut_160x90_420_8b_boxnoise"
PAIRS: list[dict[str, Any]] = [
    *(_case(stem, stem) for stem in _ORIGINAL_STEMS),
    _case("astronaut_160x90_420_8b_same", _MID, same=True),
    _case("astronaut_160x90_420_8b_csf1", _MID, {"adm_csf_mode": "1"}),
    _case(
        "astronaut_160x90_420_8b_csf1_scf",
        _MID,
        {"adm_csf_mode": "1", "adm_csf_scale": "1.5", "adm_csf_diag_scale": "0.8"},
    ),
    _case("astronaut_160x90_420_8b_csf2", _MID, {"adm_csf_mode": "2"}),
    _case("astronaut_160x90_420_8b_csf3", _MID, {"adm_csf_mode": "3"}),
    _case("astronaut_160x90_420_8b_nvd4_5", _MID, {"adm_norm_view_dist": "4.5"}),
    _case("astronaut_160x90_420_8b_rdh2160", _MID, {"adm_ref_display_height": "2160"}),
    _case("astronaut_160x90_420_8b_skip_scale0", _MID, {"adm_skip_scale0": "true"}),
    _case("astronaut_160x90_420_8b_skip_aim", _MID, {"adm_skip_aim": "true"}),
    _case("astronaut_160x90_420_8b_nw0_5", _MID, {"adm_noise_weight": "0.5"}),
    _case("astronaut_160x90_420_8b_dlm0_8", _MID, {"adm_dlm_weight": "0.8"}),
    _case("astronaut_160x90_420_8b_min0_95", _MID, {"adm_min_val": "0.95"}),
    # More digits than libvmaf keeps: its dictionary holds strtof(text) printed with %g, so
    # it computes with 4.12346, 1.23457 and 0.876543 (and names the outputs so).
    _case(
        "astronaut_160x90_420_8b_long_values",
        _MID,
        {
            "adm_norm_view_dist": "4.1234567",
            "adm_enhn_gain_limit": "1.23456789",
            "adm_dlm_weight": "0.87654321",
        },
    ),
    _case(
        "camera_20x64_420_8b_skip_scale0",
        "camera_20x64_420_8b_noise",
        {"adm_skip_scale0": "true", "adm_skip_aim": "true"},
    ),
    _case(
        "moon_200x120_400_16b_skip_scale0_nw0",
        "moon_200x120_400_16b_rescale",
        {"adm_skip_scale0": "true", "adm_noise_weight": "0"},
    ),
    _case(
        "chelsea_128x72_444_8b_sharpen_egl1_2",
        "chelsea_128x72_444_8b_sharpen",
        {"adm_enhn_gain_limit": "1.2"},
    ),
    # Modes 2 and 3 have tables only for some (rdh, nvd) pairs; libvmaf returns -EINVAL as the
    # CSF factor for the others, so only tabled pairs make meaningful goldens.
    _case(
        "immunohistochemistry_160x90_422_10b_csf3_rdh2160",
        "immunohistochemistry_160x90_422_10b_blockgauss",
        {"adm_csf_mode": "3", "adm_ref_display_height": "2160"},
    ),
    _case(
        "coffee_192x108_420_12b_csf2_nvd5",
        "coffee_192x108_420_12b_band",
        {"adm_csf_mode": "2", "adm_norm_view_dist": "5"},
    ),
    _case(
        "moon_200x120_400_16b_egl1_2_rdh2160",
        "moon_200x120_400_16b_rescale",
        {"adm_enhn_gain_limit": "1.2", "adm_ref_display_height": "2160"},
    ),
    # Every (rdh, nvd) that modes 2 and 3 tabulate and libvmaf accepts (nvd * rdh >= 3240)
    # that the cases above leave out, so each table entry a user can reach is pinned; and
    # one untabulated geometry per mode (libvmaf's -EINVAL as the factor).
    *(
        _case(
            f"{name}_csf{mode}_rdh{rdh}_nvd{nvd:g}".replace(".", "_"),
            stem,
            _non_default(
                {
                    "adm_csf_mode": str(mode),
                    "adm_ref_display_height": str(rdh),
                    "adm_norm_view_dist": f"{nvd:g}",
                }
            ),
        )
        for mode, name, stem in (
            (2, "astronaut_160x90_420_8b", _MID),
            (
                3,
                "immunohistochemistry_160x90_422_10b",
                "immunohistochemistry_160x90_422_10b_blockgauss",
            ),
        )  # fmt: skip
        for rdh, nvd in ((720, 5.0), (2160, 1.5), (2160, 3.0), (2160, 5.0), (1080, 5.0))
        if (mode, rdh, nvd) not in ((2, 1080, 5.0), (3, 2160, 3.0))
    ),
    _case(
        "astronaut_160x90_420_8b_csf2_rdh1440_untabulated",
        _MID,
        {"adm_csf_mode": "2", "adm_ref_display_height": "1440"},
    ),
    _case(
        "immunohistochemistry_160x90_422_10b_csf3_nvd4_untabulated",
        "immunohistochemistry_160x90_422_10b_blockgauss",
        {"adm_csf_mode": "3", "adm_norm_view_dist": "4"},
    ),
    *(_case(stem, stem) for stem in _FULL_SWING),
    # Mode 3 at 1080/3H has an even d factor (34368 = 537 << 6): its CSF rounding term
    # (65535, not 65536) then decides d samples of 1024 * odd, which full swing reaches.
    _case(
        "binnoise_128x96_400_16b_flip_csf3", "binnoise_128x96_400_16b_flip", {"adm_csf_mode": "3"}
    ),
    _case(
        "chelsea_128x72_444_8b_sharpen_csf3", "chelsea_128x72_444_8b_sharpen", {"adm_csf_mode": "3"}
    ),
    _case(
        "binnoise_128x96_400_16b_flip_egl1",
        "binnoise_128x96_400_16b_flip",
        {"adm_enhn_gain_limit": "1"},
    ),
    _case("flat_64x48_400_8b_nw0", "flat_64x48_400_8b_noise", {"adm_noise_weight": "0"}),
    _case("flat_64x48_400_10b_nw0", "flat_64x48_400_10b_noise", {"adm_noise_weight": "0"}),
    _case(
        "flat_64x48_400_10b_nw0_dlm0_8",
        "flat_64x48_400_10b_noise",
        {"adm_noise_weight": "0", "adm_dlm_weight": "0.8"},
    ),
    *(
        _case(stem, stem)
        for stem in (
            "camera_17x200_420_8b_noise",
            "chelsea_17x33_444_8b_band",
            "moon_33x260_400_16b_noise",
            "mosaic_1000x33_400_8b_block",
            "coffee_200x24_420_8b_gauss",
            "astronaut_640x20_420_8b_sharpen",
            "mosaic_1000x17_400_8b_noise",
            "mosaic_1920x32_400_8b_rescale",
        )
    ),
    _case(
        "coffee_200x24_420_8b_skip_scale0",
        "coffee_200x24_420_8b_gauss",
        {"adm_skip_scale0": "true"},
    ),
    _case(
        "mosaic_1000x17_400_8b_skip_aim", "mosaic_1000x17_400_8b_noise", {"adm_skip_aim": "true"}
    ),
]


def render_pair(stem: str) -> tuple[bytes, bytes]:
    """Bytes of the (ref, dis) files of one pair."""
    f = FILES[stem]
    ref, dis = [], []
    for i in range(f["frames"]):
        y = render_frame_luma(f, i, f["bitdepth"], f["w"], f["h"])
        d = distort(y, f["ops"], f["bitdepth"], f["seed"] * 1000 + i)
        ref.append(frame_bytes(y, f["fmt"], f["bitdepth"]))
        dis.append(frame_bytes(d, f["fmt"], f["bitdepth"]))
    return b"".join(ref), b"".join(dis)


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stems_for(names: Iterable[str] | None) -> list[str]:
    if names is None:
        return list(FILES)
    by_name = {c["name"]: c for c in PAIRS}
    stems: list[str] = []
    for n in names:
        if n in by_name:
            stem = by_name[n]["ref"][: -len("_ref.yuv")]
        elif n in FILES:
            stem = n
        else:
            raise KeyError(f"unknown case {n!r}")
        if stem not in stems:
            stems.append(stem)
    return stems


def generate(
    outdir: str, names: Iterable[str] | None = None, *, verify: bool = True
) -> dict[str, tuple[str, str]]:
    """Write the files of the selected cases (all when ``names`` is None) to ``outdir``.

    A name is a case of :data:`PAIRS` or a file stem of :data:`FILES` (the pairs in
    :data:`VMAF_STEMS` have no ADM case). Files already present with the recorded sha256
    are kept. With ``verify`` a file whose bytes differ from the recorded sha256 raises
    ``RuntimeError``. Returns ``{name: (ref_path, dis_path)}`` for the selected cases and
    the stems named.
    """
    names = None if names is None else list(names)
    os.makedirs(outdir, exist_ok=True)
    for stem in _stems_for(names):
        paths = [os.path.join(outdir, n) for n in _file_names(stem)]
        want = [_SHA256.get(os.path.basename(p)) for p in paths]
        if all(
            w and os.path.exists(p) and _sha256_file(p) == w
            for p, w in zip(paths, want, strict=True)
        ):
            continue
        for p, data, w in zip(paths, render_pair(stem), want, strict=True):
            got = hashlib.sha256(data).hexdigest()
            if verify and w is not None and got != w:
                raise RuntimeError(f"{os.path.basename(p)}: sha256 {got} != recorded {w}")
            tmp = f"{p}.{os.getpid()}.tmp"  # test workers may write the same case at once
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, p)
    sel = PAIRS if names is None else [c for c in PAIRS if c["name"] in set(names)]
    out = {c["name"]: (os.path.join(outdir, c["ref"]), os.path.join(outdir, c["dis"])) for c in sel}
    by_name = {c["name"] for c in PAIRS}
    for n in names or ():
        if n not in by_name:
            out[n] = tuple(os.path.join(outdir, f) for f in _file_names(n))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--outdir", default=PAIRS_DIR, help="where to write (default: testdata/pairs)")
    ap.add_argument("--all", action="store_true", help="also the large, uncommitted pairs")
    ap.add_argument("--print-sha", action="store_true", help="print sha256 of every written file")
    ap.add_argument("--no-verify", action="store_true", help="do not check recorded sha256")
    ap.add_argument(
        "names",
        nargs="*",
        help="case names or file stems (default: committed cases and VMAF_STEMS, "
        "or all with --all)",
    )
    a = ap.parse_args(argv)
    names = a.names or [c["name"] for c in PAIRS if a.all or c["committed"]] + list(VMAF_STEMS)
    out = generate(a.outdir, names, verify=not a.no_verify)
    if a.print_sha:
        seen = sorted({p for pair in out.values() for p in pair})
        for p in seen:
            print(f'    "{os.path.basename(p)}": "{_sha256_file(p)}",')
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""libvmaf's ``float_psnr`` extractor in a run: its (empty) options, its name and one
frame pair's value.

``--feature float_psnr`` writes each frame's ``float_psnr``: the PSNR of the luma planes
on the 8-bit scale, from float32 differences, capped at 60, 72, 84 or 108 dB at 8, 10, 12
and 16 bits. It reads the luma planes alone, so a run computes it on the host from the
planes it reads, whatever the backend and the input, with NumPy (no Numba needed).
:func:`admcuda.reference.float_psnr.compute_float_psnr` is the specification, a running
double sum of the squares sample after sample as libvmaf's loop takes it;
:func:`noise` gives the same double faster where the sum is exact whatever its order
(always below 16 bits; at 16 bits unless the squares add up past ``2**36``, over
``2**20`` samples of large differences), and takes the reference's running sum
elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import float_psnr as _psnr

__all__ = ["FLOAT_PSNR_KIND", "FloatPsnrOptions", "float_psnr_frame", "noise", "output_names"]

FLOAT_PSNR_KIND = "float_psnr"

# Where a sum of whole multiples of 1/unit stays below 2**53 / unit, every partial sum is
# such a multiple below 2**53 units: a double, exactly. Half that bound leaves room for the
# rounding of a sum computed in another order when the true sum is near it.
_EXACT_UNITS = float(2**52)
_BLOCK_SAMPLES = 1 << 16  # a block's float32 differences (256 KB) stay in cache


@dataclass(frozen=True)
class FloatPsnrOptions:
    """libvmaf's ``float_psnr`` options: it has none (``float_psnr.c`` declares no option
    table)."""


def output_names() -> tuple[str, ...]:
    """The name ``float_psnr`` writes per frame."""
    return _psnr.FLOAT_PSNR_NAMES


def noise(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> float:
    """The mean squared difference of two planes, the double of
    :func:`admcuda.reference.float_psnr.noise`.

    Samples divided by the scaler ``s`` (1, 4, 16 or 256) are whole multiples of ``1/s``,
    and so are their float32 differences (exact); the float32 squares are whole multiples
    of ``1/s**2``: exact below 16 bits, and at 16 bits a square of at least 256 rounds to
    a float32 whose last bit is worth at least ``2**-15``. While a sum of such multiples
    stays below ``2**53`` of them, every partial sum is a double exactly, so the C's
    running sum is the exact total, which a sum in any other order gives too. Rows are
    taken a block of :data:`_BLOCK_SAMPLES` at a time (float32 in a buffer that stays in
    cache, NumPy's pairwise sum of each block, the blocks' sums added), and a total at or
    past :data:`_EXACT_UNITS` multiples is taken again as the reference takes it, sample
    after sample: at 16 bits only, past ``2**20`` samples of differences near the peak.
    """
    for plane in (ref, dis):
        _psnr.check_plane(plane, bitdepth, FLOAT_PSNR_KIND)
    height, width = ref.shape
    scaler = _psnr.SCALERS[bitdepth]
    rows = max(1, min(height, _BLOCK_SAMPLES // width))
    buffer = np.empty((rows, width), np.float32)
    total = 0.0
    for top in range(0, height, rows):
        block = buffer[: min(rows, height - top)]
        bottom = top + len(block)
        np.subtract(ref[top:bottom], dis[top:bottom], out=block, dtype=np.float32)
        if bitdepth != 8:
            np.divide(block, np.float32(scaler), out=block)
        np.square(block, out=block)
        total += float(block.sum(dtype=np.float64))
    if total * scaler * scaler >= _EXACT_UNITS:
        return _psnr.noise(ref, dis, bitdepth)
    return total / ref.size


def float_psnr_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's ``float_psnr`` output (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor`, has no options), from the luma planes. NumPy
    releases the GIL for the sums, so frames score side by side on threads."""
    if ref.shape != dis.shape:
        raise AdmError(f"{FLOAT_PSNR_KIND}: planes of {ref.shape} and {dis.shape}")
    try:
        value = _psnr.psnr(noise(ref, dis, bitdepth), bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    return {FLOAT_PSNR_KIND: value}

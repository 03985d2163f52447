"""libvmaf's ``float_moment`` extractor in a run: its (empty) options, its names and one
frame pair's four values.

``--feature float_moment`` writes each frame's ``float_moment_ref1st``,
``float_moment_dis1st``, ``float_moment_ref2nd`` and ``float_moment_dis2nd``: the mean and
the mean square of the reference's and the distorted luma samples, on the 8-bit scale.
It reads the luma planes alone, so a run computes it on the host from the planes it reads,
whatever the backend and the input, with NumPy (no Numba needed).
:func:`admcuda.reference.moment.compute_moment` is the specification, a running double
sum sample after sample as libvmaf's loop takes it; :func:`plane_moments` gives the same
doubles faster where the sums are exact whatever their order (always below 16 bits; at
16 bits unless the squares add up past ``2**36``, over ``2**20`` samples near the peak),
and takes the reference's running sum elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import moment as _moment
from admcuda.reference.moment import check_plane, picture_float

__all__ = ["MOMENT_KIND", "MomentOptions", "moment_frame", "output_names", "plane_moments"]

MOMENT_KIND = "float_moment"

# Where a sum of whole multiples of 1/unit stays below 2**53 / unit, every partial sum is
# such a multiple below 2**53 units: a double, exactly. Half that bound leaves room for the
# rounding of a sum computed in another order when the true sum is near it.
_EXACT_UNITS = float(2**52)
_BLOCK_SAMPLES = 1 << 16  # a block's float32 samples (256 KB) stay in cache


@dataclass(frozen=True)
class MomentOptions:
    """libvmaf's ``float_moment`` options: it has none (``float_moment.c`` declares no
    option table)."""


def output_names() -> tuple[str, ...]:
    """The names ``float_moment`` writes per frame, in libvmaf's order."""
    return _moment.MOMENT_NAMES


def plane_moments(plane: np.ndarray, bitdepth: int) -> tuple[float, float]:
    """One plane's first and second moments, the doubles of
    :func:`admcuda.reference.moment.first_moment` and
    :func:`~admcuda.reference.moment.second_moment`.

    Samples divided by the scaler ``s`` (1, 4, 16 or 256) are whole multiples of ``1/s``;
    their float32 squares are whole multiples of ``1/s**2``: exact below 16 bits (a square
    of a sample below 4096 has at most 24 bits), and at 16 bits a square of at least
    256 rounds to a float32 whose last bit is worth at least ``2**-15``. While a sum of
    such multiples stays below ``2**53`` of them, every partial sum is a double exactly,
    so the C's running sum is the exact total, which a sum in any other order gives too.
    Rows are taken a block of :data:`_BLOCK_SAMPLES` at a time (float32 in a buffer that
    stays in cache, NumPy's pairwise sum of each block, the blocks' sums added), and a
    total at or past :data:`_EXACT_UNITS` multiples is taken again as the reference takes
    it, sample after sample: the first moment never gets there (``2**36`` samples), the
    second at 16 bits only, past ``2**20`` samples near the peak.
    """
    check_plane(plane, bitdepth)
    height, width = plane.shape
    scaler = _moment.SCALERS[bitdepth]
    rows = max(1, min(height, _BLOCK_SAMPLES // width))
    buffer = np.empty((rows, width), np.float32)
    first = second = 0.0
    for top in range(0, height, rows):
        block = buffer[: min(rows, height - top)]
        np.copyto(block, plane[top : top + len(block)])
        if bitdepth != 8:
            np.divide(block, np.float32(scaler), out=block)
        first += float(block.sum(dtype=np.float64))
        np.square(block, out=block)
        second += float(block.sum(dtype=np.float64))
    if first * scaler >= _EXACT_UNITS:
        first = _moment.sequential_sum(picture_float(plane, bitdepth))
    if second * scaler * scaler >= _EXACT_UNITS:
        second = _moment.sequential_sum(np.square(picture_float(plane, bitdepth)))
    n = plane.size
    return first / n, second / n


def moment_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's ``float_moment`` outputs (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor`, has no options), from the luma planes, in
    libvmaf's order. NumPy releases the GIL for the sums, so frames score side by side on
    threads."""
    if ref.shape != dis.shape:
        raise AdmError(f"{MOMENT_KIND}: planes of {ref.shape} and {dis.shape}")
    try:
        r1, r2 = plane_moments(ref, bitdepth)
        d1, d2 = plane_moments(dis, bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    return dict(zip(output_names(), (r1, d1, r2, d2), strict=True))

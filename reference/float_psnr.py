"""Bit-exact NumPy reference of libvmaf's ``float_psnr`` (``float_psnr.c`` over
``psnr.c``'s ``compute_psnr`` and ``picture_copy.c``'s conversion; scalar C, no SIMD path).

Per frame pair, from the luma planes alone, one double: ``float_psnr``. The extractor
has no options.

The steps, with their types:

- :func:`admcuda.reference.picture_copy.picture_copy`: every sample to float32 on the
  8-bit scale (divided by 1, 4, 16 or 256 at 8, 10, 12 and 16 bits).
- :func:`noise`: the reference's sample less the distorted one in float32 (exact), that
  difference squared in float32 (the C multiplies two floats: exact below 16 bits, rounded
  at 16 bits past a difference of 16), the squares summed in a float64 one after another,
  row by row (:func:`sequential_sum`: at 16 bits past ``2**37`` that sum rounds as it goes,
  so its order is the C's, never NumPy's pairwise ``sum``), then divided by the sample
  count (a double division).
- :func:`psnr`: ``10 * log10(peak * peak / max(noise, 1e-10))`` in double, capped at the
  bit depth's ``psnr_max`` (:data:`PEAKS`, :data:`PSNR_MAX`: ``init``'s constants, the
  peak on the 8-bit scale: 255, 255.75, 255.9375, 255.99609375; the caps 60, 72, 84,
  108). The logarithm is Python's ``math.log10``, the C library's ``log10``, never
  NumPy's vectorised one. The floor ``1e-10`` never decides: a noise below it would give
  more than every cap.
"""

from __future__ import annotations

import math

import numpy as np

from .picture_copy import SCALERS, check_plane, picture_copy

__all__ = [
    "EPS",
    "FLOAT_PSNR_NAMES",
    "PEAKS",
    "PSNR_MAX",
    "SCALERS",
    "check_plane",
    "compute_float_psnr",
    "noise",
    "psnr",
    "sequential_sum",
    "squared_differences",
]

FEATURE = "float_psnr"
FLOAT_PSNR_NAMES = (FEATURE,)

PEAKS: dict[int, float] = {8: 255.0, 10: 255.75, 12: 255.9375, 16: 255.99609375}
"""``init``'s peak per bit depth: the largest sample on the 8-bit scale."""

PSNR_MAX: dict[int, float] = {8: 60.0, 10: 72.0, 12: 84.0, 16: 108.0}
"""``init``'s cap per bit depth."""

EPS = 1e-10
"""``compute_psnr``'s floor under the mean squared difference."""


def sequential_sum(values: np.ndarray) -> float:
    """The float64 sum of ``values`` (float32, converted exactly) added one after another
    in C order, as a running ``double`` in a C loop adds them."""
    return float(np.add.accumulate(values.ravel(), dtype=np.float64)[-1])


def squared_differences(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> np.ndarray:
    """Each sample's float32 difference (reference less distorted, both through
    ``picture_copy``) squared in float32."""
    a = picture_copy(ref, bitdepth, feature=FEATURE)
    b = picture_copy(dis, bitdepth, feature=FEATURE)
    diff = a - b
    return diff * diff


def noise(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> float:
    """``compute_psnr``'s ``noise_``: the float32 squares' running double sum over the
    sample count."""
    return sequential_sum(squared_differences(ref, dis, bitdepth)) / ref.size


def psnr(mean_square: float, bitdepth: int) -> float:
    """``compute_psnr``'s score from the mean squared difference: double arithmetic and
    glibc's ``log10``, capped at :data:`PSNR_MAX`."""
    peak = PEAKS[bitdepth]
    floor = mean_square if mean_square > EPS else EPS
    value = 10 * math.log10(peak * peak / floor)
    cap = PSNR_MAX[bitdepth]
    return value if value < cap else cap


def compute_float_psnr(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's output, by :data:`FLOAT_PSNR_NAMES`.

    Parameters
    ----------
    ref, dis : ndarray
        Luma planes of one shape, uint8 at 8 bits and uint16 above.
    bitdepth : {8, 10, 12, 16}
    """
    if ref.shape != dis.shape:
        raise ValueError(f"{FEATURE}: planes of {ref.shape} and {dis.shape}")
    return {FEATURE: psnr(noise(ref, dis, bitdepth), bitdepth)}

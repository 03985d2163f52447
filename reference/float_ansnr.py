"""Bit-exact NumPy reference of libvmaf's ``float_ansnr`` (``float_ansnr.c`` over
``ansnr.c``'s ``compute_ansnr``, ``ansnr_tools.c``'s filters and sums and
``picture_copy.c``; scalar C, no SIMD path).

Per frame pair, from the luma planes alone, two doubles: ``float_ansnr`` and
``float_anpsnr``. The extractor has no options.

The steps, with their types:

- :func:`admcuda.reference.picture_copy.picture_copy` with offset -128: every sample to
  float32 on the 8-bit scale, less 128.
- :func:`filter2d` (``ansnr_filter2d_s``): the reference through the 3x3 kernel
  :data:`FILTER_REF`, the distorted frame through the 5x5 kernel :data:`FILTER_DIS` (float32
  taps, the C's double quotients rounded), each output a float32 sum of the kernel's rows
  in order, each row a float32 sum of its taps' float32 products in order. Outside the
  picture a row or column index ``i`` below 0 reads ``-i`` and one past the last reads
  ``2 * n - i - 1``: a mirror without the edge at the top and left, with it at the bottom
  and right. Sides under 3 samples would read outside the picture (refused).
- :func:`mse` (``ansnr_mse_s``): the filtered reference's float32 squares and the float32
  squares of the two filtered pictures' float32 differences, each summed in float32 along
  a row, one sample after another, and the rows' sums added in float32 in order.
- :func:`scores`: ``float_ansnr`` is ``10 * log10(signal / noise)`` with the quotient in
  float32 (both sums are float32), the bit depth's cap where the noise is 0, minus infinity
  where the signal is; ``float_anpsnr`` is ``10 * log10(peak * peak * w * h / max(noise,
  1e-10))`` in double, capped (:data:`PEAKS`, :data:`PSNR_MAX`: ``init``'s constants). The
  logarithm is Python's ``math.log10``, the C library's ``log10``.
"""

from __future__ import annotations

import math

import numpy as np

from .picture_copy import SCALERS, check_plane, picture_copy

__all__ = [
    "EPS",
    "FILTER_DIS",
    "FILTER_REF",
    "FLOAT_ANSNR_NAMES",
    "MIN_SIDE",
    "PEAKS",
    "PSNR_MAX",
    "SCALERS",
    "check_plane",
    "compute_float_ansnr",
    "filter2d",
    "mirrored_indices",
    "mse",
    "scores",
]

FEATURE = "float_ansnr"
FLOAT_ANSNR_NAMES = ("float_ansnr", "float_anpsnr")
"""The names ``extract`` writes, in its order (its provided features name the first
alone)."""

MIN_SIDE = 3
"""The least width and height the 5x5 kernel's mirror reads inside."""

# ansnr_tools.c's kernels: each tap the double quotient, stored as float
FILTER_REF = np.array(
    [[1.0 / 16.0, 2.0 / 16.0, 1.0 / 16.0],
     [2.0 / 16.0, 4.0 / 16.0, 2.0 / 16.0],
     [1.0 / 16.0, 2.0 / 16.0, 1.0 / 16.0]],
    dtype=np.float32,
)  # fmt: skip
FILTER_DIS = (
    np.array(
        [[2, 7, 12, 7, 2],
         [7, 31, 52, 31, 7],
         [12, 52, 127, 52, 12],
         [7, 31, 52, 31, 7],
         [2, 7, 12, 7, 2]],
        dtype=np.float64,
    )
    / 571.0
).astype(np.float32)  # fmt: skip

PEAKS: dict[int, float] = {8: 255.0, 10: 255.75, 12: 255.9375, 16: 255.99609375}
"""``init``'s peak per bit depth: the largest sample on the 8-bit scale."""

PSNR_MAX: dict[int, float] = {8: 60.0, 10: 72.0, 12: 84.0, 16: 108.0}
"""``init``'s cap per bit depth."""

EPS = 1e-10
"""``compute_ansnr``'s floor under the noise in ``float_anpsnr``."""


def mirrored_indices(n: int, radius: int) -> np.ndarray:
    """The sample each index ``-radius .. n + radius - 1`` reads: ``-i`` below 0,
    ``2 * n - i - 1`` past the end."""
    index = np.arange(-radius, n + radius)
    return np.where(index < 0, -index, np.where(index >= n, 2 * n - index - 1, index))


def filter2d(kernel: np.ndarray, picture: np.ndarray) -> np.ndarray:
    """``ansnr_filter2d_s``: every output a float32 sum over the kernel's rows of float32
    sums over its taps, in the C's order, with its mirrored edges."""
    h, w = picture.shape
    size = kernel.shape[0]
    radius = size // 2
    if min(h, w) < MIN_SIDE:
        raise ValueError(
            f"{FEATURE}: a {w}x{h} plane is under {MIN_SIDE} samples a side (libvmaf's "
            "5x5 filter reads outside it)"
        )
    padded = picture[np.ix_(mirrored_indices(h, radius), mirrored_indices(w, radius))]
    total = np.zeros((h, w), np.float32)
    for fi in range(size):
        row = np.zeros((h, w), np.float32)
        for fj in range(size):
            row += kernel[fi, fj] * padded[fi : fi + h, fj : fj + w]
        total += row
    return total


def mse(ref: np.ndarray, dis: np.ndarray) -> tuple[np.float32, np.float32]:
    """``ansnr_mse_s``: (signal, noise), float32 sums row by row of the filtered
    reference's squares and of the squared differences, each row's running sum added to a
    running total."""
    diff = ref - dis
    sums = []
    for squares in (ref * ref, diff * diff):
        rows = np.add.accumulate(squares, axis=1, dtype=np.float32)[:, -1]
        sums.append(np.add.accumulate(rows, dtype=np.float32)[-1])
    return np.float32(sums[0]), np.float32(sums[1])


def scores(signal: np.float32, noise: np.float32, w: int, h: int, bitdepth: int) -> dict:
    """``compute_ansnr``'s two outputs from the float32 sums: double arithmetic and glibc's
    ``log10``, by :data:`FLOAT_ANSNR_NAMES`."""
    cap = PSNR_MAX[bitdepth]
    if noise == 0:
        ansnr = cap
    else:
        quotient = float(np.float32(signal) / np.float32(noise))
        ansnr = 10.0 * math.log10(quotient) if quotient > 0 else -math.inf
    peak = PEAKS[bitdepth]
    floor = float(noise) if float(noise) > EPS else EPS
    anpsnr = 10 * math.log10(peak * peak * w * h / floor)
    return {"float_ansnr": ansnr, "float_anpsnr": anpsnr if anpsnr < cap else cap}


def compute_float_ansnr(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's outputs, by :data:`FLOAT_ANSNR_NAMES`.

    Parameters
    ----------
    ref, dis : ndarray
        Luma planes of one shape, at least 3x3, uint8 at 8 bits and uint16 above.
    bitdepth : {8, 10, 12, 16}
    """
    if ref.shape != dis.shape:
        raise ValueError(f"{FEATURE}: planes of {ref.shape} and {dis.shape}")
    a = filter2d(FILTER_REF, picture_copy(ref, bitdepth, -128, feature=FEATURE))
    b = filter2d(FILTER_DIS, picture_copy(dis, bitdepth, -128, feature=FEATURE))
    signal, noise = mse(a, b)
    h, w = ref.shape
    return scores(signal, noise, w, h, bitdepth)

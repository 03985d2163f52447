"""Bit-exact NumPy reference of libvmaf's ``float_moment`` (``float_moment.c`` over
``moment.c``'s two sums and ``picture_copy.c``'s conversion; scalar C, no SIMD path).

Per frame pair, from the luma planes alone, four doubles in the order libvmaf writes them:
the reference's and the distorted plane's first moment (the mean sample), then their
second moments (the mean squared sample), as ``float_moment_ref1st``,
``float_moment_dis1st``, ``float_moment_ref2nd``, ``float_moment_dis2nd``. The extractor
has no options.

The steps, with their types:

- :func:`picture_float`: every sample to float32, divided in float32 by the scaler of
  its bit depth (:data:`SCALERS`: 1 at 8 bits, 4, 16 and 256 at 10, 12 and 16), so that
  every depth reads on the 8-bit scale.
- :func:`first_moment`: the float32 samples summed in a float64 one after another, row
  by row, then divided by the sample count (a double division).
- :func:`second_moment`: the same, over each sample's square taken in float32 (the C
  multiplies two floats). At 16 bits that square rounds, and past ``2**37`` the double
  sum rounds as it goes, so the order of the additions is the C's: a running sum
  (:func:`sequential_sum`), never NumPy's pairwise ``sum``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "MOMENT_NAMES",
    "SCALERS",
    "check_plane",
    "compute_moment",
    "first_moment",
    "picture_float",
    "second_moment",
    "sequential_sum",
]

MOMENT_NAMES = (
    "float_moment_ref1st",
    "float_moment_dis1st",
    "float_moment_ref2nd",
    "float_moment_dis2nd",
)

SCALERS: dict[int, float] = {8: 1.0, 10: 4.0, 12: 16.0, 16: 256.0}
"""``picture_copy``'s divisor per bit depth (libvmaf takes the 8-bit path, no division,
at 8 bits)."""


def check_plane(plane: np.ndarray, bitdepth: int) -> None:
    """Refuse (ValueError) a bit depth ``picture_copy`` does not scale, or a plane that is
    not a non-empty 2-D array of uint8 at 8 bits, uint16 above."""
    if bitdepth not in SCALERS:
        raise ValueError(f"float_moment takes bit depths 8, 10, 12 and 16, not {bitdepth}")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if plane.ndim != 2 or plane.dtype != want or not plane.size:
        raise ValueError(
            f"float_moment reads a non-empty 2-D plane of {np.dtype(want)} at {bitdepth} "
            f"bits, not {plane.shape} {plane.dtype}"
        )


def picture_float(plane: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture_copy``: a plane's samples as float32, divided by :data:`SCALERS`'s value
    in float32 (exact: a power of two)."""
    check_plane(plane, bitdepth)
    out = plane.astype(np.float32)
    if bitdepth != 8:
        out /= np.float32(SCALERS[bitdepth])
    return out


def sequential_sum(values: np.ndarray) -> float:
    """The float64 sum of ``values`` (float32, converted exactly) added one after another
    in C order, as a running ``double`` in a C loop adds them."""
    return float(np.add.accumulate(values.ravel(), dtype=np.float64)[-1])


def first_moment(picture: np.ndarray) -> float:
    """``compute_1st_moment``: the float32 samples' running double sum over their count."""
    return sequential_sum(picture) / picture.size


def second_moment(picture: np.ndarray) -> float:
    """``compute_2nd_moment``: each float32 sample squared in float32, the squares' running
    double sum over their count."""
    return sequential_sum(np.square(picture)) / picture.size


def compute_moment(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's four outputs, by :data:`MOMENT_NAMES` in libvmaf's order.

    Parameters
    ----------
    ref, dis : ndarray
        Luma planes of one shape, uint8 at 8 bits and uint16 above.
    bitdepth : {8, 10, 12, 16}
    """
    if ref.shape != dis.shape:
        raise ValueError(f"float_moment: planes of {ref.shape} and {dis.shape}")
    a, b = picture_float(ref, bitdepth), picture_float(dis, bitdepth)
    values = (first_moment(a), first_moment(b), second_moment(a), second_moment(b))
    return dict(zip(MOMENT_NAMES, values, strict=True))

"""Bit-exact NumPy reference of libvmaf's ``picture_copy`` (``picture_copy.c``): a luma
plane as the float32 picture that libvmaf's float extractors read.

Each sample becomes a float32, is divided in float32 by the scaler of its bit depth
(:data:`SCALERS`: 1 at 8 bits, where libvmaf takes a path without the division, 4, 16
and 256 at 10, 12 and 16 bits; a power of two, so the division is exact) and then has an
integer offset added in float32 (0 for ``float_psnr``, -128 for ``float_motion``). Every
depth so reads on the 8-bit scale. Other bit depths have no scaler: libvmaf's float
extractors refuse them at ``init``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCALERS", "check_plane", "picture_copy"]

SCALERS: dict[int, float] = {8: 1.0, 10: 4.0, 12: 16.0, 16: 256.0}
"""``picture_copy``'s divisor per bit depth."""


def check_plane(plane: np.ndarray, bitdepth: int, feature: str) -> None:
    """Refuse (ValueError, naming ``feature``) a bit depth ``picture_copy`` does not scale,
    or a plane that is not a non-empty 2-D array of uint8 at 8 bits, uint16 above."""
    if bitdepth not in SCALERS:
        raise ValueError(f"{feature} takes bit depths 8, 10, 12 and 16, not {bitdepth}")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if plane.ndim != 2 or plane.dtype != want or not plane.size:
        raise ValueError(
            f"{feature} reads a non-empty 2-D plane of {np.dtype(want)} at {bitdepth} "
            f"bits, not {plane.shape} {plane.dtype}"
        )


def picture_copy(plane: np.ndarray, bitdepth: int, offset: int = 0, *,
                 feature: str = "picture_copy") -> np.ndarray:  # fmt: skip
    """A plane's samples as float32: divided by :data:`SCALERS`'s value, then ``offset``
    added, each step in float32 (``(float) sample / scaler + offset`` in the C).
    ``feature`` names the caller in the refusals of :func:`check_plane`."""
    check_plane(plane, bitdepth, feature)
    out = plane.astype(np.float32)
    if bitdepth != 8:
        out /= np.float32(SCALERS[bitdepth])
    if offset:
        out += np.float32(offset)
    return out

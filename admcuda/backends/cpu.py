"""CPU backend: the NumPy integer reference, one frame at a time."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = ["score_frames"]


def score_frames(
    ref_frames: Iterable[np.ndarray],
    dis_frames: Iterable[np.ndarray],
    width: int,
    height: int,
    bitdepth: int,
    opts: Any,
) -> list[dict[str, float]]:
    """Score frame pairs with :func:`admcuda.reference.compute_adm`.

    Parameters
    ----------
    ref_frames, dis_frames : iterable of numpy.ndarray
        Luma planes of shape ``(height, width)``, ``uint8`` for 8 bits and
        ``uint16`` otherwise; both streams must have the same length.
    width, height : int
        Expected plane size.
    bitdepth : int
        Bits per sample.
    opts : AdmOptions or any object with libvmaf-named option attributes

    Returns
    -------
    list of dict of str to float
        Per frame, the 18 outputs keyed by libvmaf base names.

    Raises
    ------
    AdmError
        If the reference cannot be imported, or a plane has the wrong shape or dtype.
    """
    try:
        from admcuda.reference import compute_adm
    except ImportError as exc:
        raise AdmError(f"the CPU reference is not available: {exc}") from None

    dtype = np.uint8 if bitdepth == 8 else np.uint16
    results: list[dict[str, float]] = []
    for index, (ref, dis) in enumerate(zip(ref_frames, dis_frames, strict=True)):
        for role, plane in (("reference", ref), ("distorted", dis)):
            if plane.shape != (height, width) or plane.dtype != dtype:
                raise AdmError(
                    f"{role} frame {index} is {plane.dtype}{list(plane.shape)}, "
                    f"expected {np.dtype(dtype)}[{height}, {width}]"
                )
        scores = compute_adm(ref, dis, bitdepth, opts)
        results.append({name: float(value) for name, value in scores.items()})
    return results

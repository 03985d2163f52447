"""libvmaf's ``psnr_hvs`` extractor in a run: its (empty) options, its names, what it
refuses and one frame pair's four values.

``--feature psnr_hvs`` writes each frame's ``psnr_hvs_y``, ``psnr_hvs_cb``,
``psnr_hvs_cr`` and ``psnr_hvs``: Xiph's PSNR-HVS-M of each plane (a DCT error weighted
by contrast sensitivity, less what each block's contrast masks) and of the three planes
weighted 0.8, 0.1, 0.1, in decibels. It reads the luma and both chroma planes, so a run
reads chroma for it and computes it on the host from the planes it reads, whatever the
backend and the input, with NumPy (no Numba needed): :mod:`admcuda.reference.psnr_hvs`,
whose float32 sums run over every block at once in the C's order. Refused in one line,
before any frame is read: 4:0:0 input and bit depths above 12 (as libvmaf refuses them).
Identical planes score infinity, planes under 8 samples a side NaN (``null`` in libvmaf's
JSON, both).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import psnr_hvs as _psnr_hvs
from admcuda.vmaf.ciede import layout_of

__all__ = ["PSNR_HVS_KIND", "PsnrHvsOptions", "check_size", "output_names", "psnr_hvs_frame"]

PSNR_HVS_KIND = "psnr_hvs"


@dataclass(frozen=True)
class PsnrHvsOptions:
    """libvmaf's ``psnr_hvs`` options: it has none (``psnr_hvs.c`` declares no option
    table)."""


def output_names() -> tuple[str, ...]:
    """The names ``psnr_hvs`` writes per frame, in libvmaf's order."""
    return _psnr_hvs.NAMES


def check_size(pixel_format: str, bitdepth: int) -> None:
    """Refuse, in one line, an input ``psnr_hvs`` does not score (4:0:0, more than 12
    bits)."""
    try:
        _psnr_hvs.check_layout(str(pixel_format), bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def psnr_hvs_frame(
    ex: Any, ref: Sequence[np.ndarray], dis: Sequence[np.ndarray], bitdepth: int
) -> dict[str, float]:
    """One frame pair's ``psnr_hvs`` outputs (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor`, has no options) from each frame's Y, Cb and Cr
    planes, the chroma as a file holds it (an odd halved side rounded up) or as libvmaf's
    picture does (rounded down); the layout is read from the planes' shapes. NumPy
    releases the GIL for its array work, so frames score side by side on threads."""
    if len(ref) < 3 or len(dis) < 3:
        raise AdmError("psnr_hvs reads chroma: give the Y, Cb and Cr planes of both frames")
    want = np.uint8 if bitdepth == 8 else np.uint16
    for r, d in zip(ref[:3], dis[:3], strict=True):
        if r.shape != d.shape or r.dtype != d.dtype:
            raise AdmError(f"psnr_hvs: planes of {r.shape} {r.dtype} and {d.shape} {d.dtype}")
        if r.ndim != 2 or r.dtype != want:
            raise AdmError(f"psnr_hvs reads 2-D planes of {np.dtype(want)} at {bitdepth} bits")
    fmt = layout_of(ref[0].shape, ref[1].shape)
    check_size(fmt, bitdepth)
    try:
        return _psnr_hvs.compute_psnr_hvs(ref[:3], dis[:3], bitdepth, fmt)
    except ValueError as exc:
        raise AdmError(str(exc)) from None

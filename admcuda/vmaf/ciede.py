"""libvmaf's ``ciede`` extractor in a run: its (empty) options, its name, what it refuses
and one frame pair's score.

``--feature ciede`` writes each frame's ``ciede2000``: ``45 - 20 log10`` of the mean
CIEDE2000 difference between the two frames' colours. It reads the luma and both chroma
planes, so a run reads chroma for it and computes it on the host from the planes it
reads, whatever the backend and the input, with the Numba kernel of
:mod:`admcuda.compiled.ciede` (``pip install 'admcuda[fast]'``);
:mod:`admcuda.reference.ciede` is the specification. Refused in one line, before any
frame is read: 4:0:0 input and bit depths other than 8, 10, 12 and 16 (as libvmaf
refuses them), and the inputs whose chroma libvmaf's ciede reads outside its pictures
(4:2:0 of odd width or height, 4:2:2 of odd width). Frames whose every pixel is the
same in both score infinity (``null`` in libvmaf's JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import ciede as _ciede

__all__ = [
    "CIEDE_KIND",
    "CiedeOptions",
    "check_size",
    "ciede_frame",
    "kernels",
    "layout_of",
    "output_names",
]

CIEDE_KIND = "ciede"


@dataclass(frozen=True)
class CiedeOptions:
    """libvmaf's ``ciede`` options: it has none (``ciede.c`` declares no option table)."""


def output_names() -> tuple[str, ...]:
    """The names ``ciede`` writes per frame."""
    return (_ciede.CIEDE_NAME,)


def kernels() -> ModuleType:
    """:mod:`admcuda.compiled.ciede`, or a one-line error where Numba is not installed."""
    from admcuda.compiled import kernels_for

    return kernels_for("ciede", "ciede needs")


def check_size(width: int, height: int, pixel_format: str, bitdepth: int) -> None:
    """Refuse, in one line, an input ``ciede`` does not score (see the module's notes)."""
    try:
        _ciede.check_layout(width, height, str(pixel_format), bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def layout_of(luma: tuple[int, ...], chroma: tuple[int, ...]) -> str:
    """The chroma layout of planes of these shapes, as a file or libvmaf's picture holds
    them (a halved side rounded up or down): ``"444"``, ``"422"`` or ``"420"``."""
    if tuple(chroma) == tuple(luma):
        return "444"
    return "422" if chroma[0] == luma[0] else "420"


def ciede_frame(
    ex: Any, ref: Sequence[np.ndarray], dis: Sequence[np.ndarray], bitdepth: int
) -> dict[str, float]:
    """One frame pair's ``ciede2000`` (``ex``, an :class:`admcuda.vmaf.plan.Extractor`,
    has no options) from each frame's Y, Cb and Cr planes, the chroma as a file holds it;
    the layout is read from the planes' shapes. Releases the GIL while it computes (the
    kernel is ``nogil``), so frames score side by side on threads."""
    if len(ref) < 3 or len(dis) < 3:
        raise AdmError("ciede reads chroma: give the Y, Cb and Cr planes of both frames")
    for r, d in zip(ref[:3], dis[:3], strict=True):
        if r.shape != d.shape or r.dtype != d.dtype:
            raise AdmError(f"ciede: planes of {r.shape} {r.dtype} and {d.shape} {d.dtype}")
    height, width = ref[0].shape
    want = np.uint8 if bitdepth == 8 else np.uint16
    if any(p.ndim != 2 or p.dtype != want for p in ref[:3]):
        raise AdmError(f"ciede reads 2-D planes of {np.dtype(want)} at {bitdepth} bits")
    fmt = layout_of(ref[0].shape, ref[1].shape)
    check_size(width, height, fmt, bitdepth)
    module = kernels()
    planes = []
    for frame in (ref, dis):
        try:
            chroma = [_ciede.upsample_chroma(c, width, height, fmt) for c in frame[1:3]]
        except ValueError as exc:
            raise AdmError(str(exc)) from None
        planes += [np.ascontiguousarray(p) for p in (frame[0], *chroma)]
    total = module.ciede_sum(*planes, bitdepth)
    return {_ciede.CIEDE_NAME: _ciede.frame_score(total, width, height)}

"""Bit-exact NumPy reference of libvmaf's integer PSNR (``integer_psnr.c``, scalar C path).

Chroma planes are scored at libvmaf's picture size (:func:`scored_shapes`): halved and
rounded down, so an odd side's last chroma row or column is left out. Each plane's sum
of squared errors is an exact integer (:func:`plane_sse`; at 8 bits
libvmaf sums a row in 32 bits before adding it to the 64-bit total, and that wrap is
kept). The doubles then follow libvmaf's order of operations: ``init``'s per-plane cap
(:func:`psnr_max`: ``6 * bpc + 12``, or with ``min_sse`` the ceiling of the PSNR of that
error spread over libvmaf's plane size), ``extract``'s per-frame MSE and PSNR
(:func:`frame_scores`) and ``flush``'s whole-clip PSNR from the summed errors
(:func:`apsnr`). Logarithms are Python's ``math.log10``, which is the C library's
``log10``, never NumPy's vectorised one.

Outputs, by libvmaf's collector names (printed as they are): ``psnr_y``, ``psnr_cb``,
``psnr_cr``; with ``enable_mse`` also ``mse_y``, ``mse_cb``, ``mse_cr``; with
``enable_apsnr`` the clip's ``apsnr_y``, ``apsnr_cb``, ``apsnr_cr`` (libvmaf's aggregate
metrics, all three even where chroma is off: those are -inf then). 4:0:0 input turns
chroma off.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "APSNR_NAMES",
    "MSE_NAMES",
    "PSNR_NAMES",
    "PsnrOptions",
    "apsnr",
    "frame_scores",
    "output_names",
    "peak",
    "plane_sse",
    "planes_used",
    "psnr_max",
    "scored_shapes",
]

PSNR_NAMES = ("psnr_y", "psnr_cb", "psnr_cr")
MSE_NAMES = ("mse_y", "mse_cb", "mse_cr")
APSNR_NAMES = ("apsnr_y", "apsnr_cb", "apsnr_cr")

MIN_MSE = 1e-16  # extract's floor under the MSE: identical planes reach the cap
MIN_SSE_MAX = sys.float_info.max  # min_sse's upper bound (DBL_MAX)
_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


@dataclass(frozen=True)
class PsnrOptions:
    """libvmaf's PSNR options (``integer_psnr.c``'s option table); none is a feature
    parameter, so output names never change.

    ``enable_chroma`` (default true) scores Cb and Cr too; ``enable_mse`` adds each
    plane's MSE; ``enable_apsnr`` adds the clip's PSNR from the errors summed over every
    frame read; ``reduced_hbd_peak`` takes ``255 << (bpc - 8)`` as the peak above 8 bits
    instead of ``2**bpc - 1``; ``min_sse`` (0 to DBL_MAX, 0 = off) caps each plane's PSNR at
    the ceiling of the PSNR of that squared error over the plane.
    """

    enable_chroma: bool = True
    enable_mse: bool = False
    enable_apsnr: bool = False
    reduced_hbd_peak: bool = False
    min_sse: float = 0.0

    def __post_init__(self) -> None:
        for name in ("enable_chroma", "enable_mse", "enable_apsnr", "reduced_hbd_peak"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        value = self.min_sse
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"min_sse must be a number, got {value!r}")
        if not (math.isfinite(value) and 0.0 <= value <= MIN_SSE_MAX):
            raise ValueError(f"min_sse {value!r} is out of range [0, {MIN_SSE_MAX:g}]")


def scored_shapes(width: int, height: int, pixel_format: str) -> tuple[tuple[int, int], ...]:
    """The ``(rows, columns)`` of each plane libvmaf's pictures hold (``vmaf_picture_alloc``):
    chroma halved *rounded down* where subsampled, so an odd side's last chroma row or
    column, which the file holds, is not scored (libvmaf's readers copy the picture's size
    out of the file's rounded-up planes). Y alone for 4:0:0."""
    if str(pixel_format) == "400":
        return ((height, width),)
    ss_hor = int(pixel_format != "444")
    ss_ver = int(pixel_format == "420")
    chroma = (height >> ss_ver, width >> ss_hor)
    return ((height, width), chroma, chroma)


def planes_used(options: PsnrOptions, pixel_format: str) -> int:
    """How many planes ``extract`` scores: 3, or 1 without chroma (4:0:0 turns it off)."""
    return 3 if options.enable_chroma and str(pixel_format) != "400" else 1


def output_names(options: PsnrOptions, pixel_format: str) -> tuple[str, ...]:
    """The per-frame outputs in libvmaf's order: each plane's PSNR, then its MSE."""
    names: list[str] = []
    for p in range(planes_used(options, pixel_format)):
        names.append(PSNR_NAMES[p])
        if options.enable_mse:
            names.append(MSE_NAMES[p])
    return tuple(names)


def peak(bitdepth: int, reduced_hbd_peak: bool = False) -> int:
    """``init``'s peak: ``2**bpc - 1``, or ``255 << (bpc - 8)`` with ``reduced_hbd_peak``
    (the same 255 at 8 bits, where ``extract`` always takes 255)."""
    return (255 << (bitdepth - 8)) if reduced_hbd_peak else (1 << bitdepth) - 1


def psnr_max(
    options: PsnrOptions, pixel_format: str, bitdepth: int, width: int, height: int
) -> tuple[float, float, float]:
    """``init``'s cap on each plane's PSNR, a double per plane.

    Without ``min_sse``: ``6 * bpc + 12``. With it: ``ceil(10 * log10(peak * peak /
    mse))`` where ``mse = min_sse / (w' * h')`` and ``w'``, ``h'`` are the luma size, halved
    (rounded down, unlike the chroma planes' size) for chroma along each subsampled
    direction: both for 4:2:0, width for 4:2:2 and 4:0:0. ``peak * peak`` and ``w' * h'``
    are unsigned 32-bit products.
    """
    top = peak(bitdepth, options.reduced_hbd_peak)
    caps = []
    for i in range(3):
        if options.min_sse != 0.0:
            ss_hor = pixel_format != "444"
            ss_ver = pixel_format == "420"
            w = width // 2 if i and ss_hor else width
            h = height // 2 if i and ss_ver else height
            mse = _divide(float(options.min_sse), float((w * h) & _U32))
            caps.append(_ceil(10.0 * _log10(_divide(float((top * top) & _U32), mse))))
        else:
            caps.append(float(6 * bitdepth + 12))
    return caps[0], caps[1], caps[2]


def plane_sse(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> int:
    """The sum of squared differences of one plane (or of the last two axes of a stack of
    planes, summed over all), as libvmaf's ``extract`` sums it.

    At 8 bits each row's sum is a ``uint32_t`` (wrapping past 2**32, which a row wider
    than 66,051 samples could) added to a ``uint64_t``; above, each square is a
    ``uint32_t`` (``abs(e) * abs(e)``, at most 65535**2) added to the ``uint64_t``. Integer
    sums are exact in any order. Returns a Python int (the ``uint64_t``).
    """
    if ref.shape != dis.shape or ref.ndim < 2:
        raise ValueError(f"planes of different shapes {ref.shape} and {dis.shape}")
    if bitdepth == 8:
        e = ref.astype(np.int32) - dis.astype(np.int32)
        e *= e
        # NumPy's uint32 accumulator wraps as C's does
        rows = e.sum(axis=-1, dtype=np.uint32)
        return int(rows.sum(dtype=np.uint64))
    e = ref.astype(np.int32) - dis.astype(np.int32)
    a = np.abs(e).astype(np.uint32)
    a *= a
    return int(a.sum(dtype=np.uint64))


def frame_scores(
    sse: int, n_pixels: int, bitdepth: int, top: int, cap: float
) -> tuple[float, float]:
    """One plane's ``(psnr, mse)`` of a frame: ``mse = (double)sse / (w * h)`` and
    ``psnr = MIN(10 * log10(peak * peak / MAX(mse, 1e-16)), cap)``. At 8 bits the peak is
    255 whatever ``top`` is, as libvmaf's 8-bit ``extract`` has it."""
    square = 255 * 255 if bitdepth == 8 else (top * top) & _U32
    mse = float(sse) / float(n_pixels & _U32)
    value = 10.0 * _log10(float(square) / (mse if mse > MIN_MSE else MIN_MSE))
    return (value if value < cap else cap), mse


def apsnr(sse_total: int, n_total: int, top: int) -> float:
    """``flush``'s PSNR of a plane over the clip, from its summed squared errors and
    pixel counts (``uint64_t`` each): ``10 * (log10(peak * peak) + log10(n) - log10(sse))``,
    capped at ``ceil(10 * log10(peak * peak * n * 2))`` with that product in ``uint64_t``.
    A plane never scored (n = sse = 0) gives -inf, as libvmaf's ``MIN(nan, -inf)``."""
    square = (top * top) & _U32
    n = n_total & _U64
    sse = sse_total & _U64
    value = 10.0 * (_log10(float(square)) + _log10(float(n)) - _log10(float(sse)))
    cap = _ceil(10.0 * _log10(float((square * n * 2) & _U64)))
    return value if value < cap else cap


def total_sse(values: Sequence[int]) -> int:
    """A ``uint64_t`` accumulator's sum of ``values``."""
    return sum(int(v) for v in values) & _U64


def _log10(x: float) -> float:
    """C's ``log10``: -inf at 0, nan below, inf at inf (Python's raises at 0 and below)."""
    if x > 0.0:
        return math.log10(x)
    if x == 0.0:
        return -math.inf
    return math.nan


def _ceil(x: float) -> float:
    """C's ``ceil`` on a double (infinities and nan kept)."""
    return float(math.ceil(x)) if math.isfinite(x) else x


def _divide(a: float, b: float) -> float:
    """IEEE division as C does it (x/0 is +-inf, 0/0 nan)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a)

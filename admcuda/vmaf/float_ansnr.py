"""libvmaf's ``float_ansnr`` extractor in a run: its (empty) options, its names and one
frame pair's values.

``--feature float_ansnr`` writes each frame's ``float_ansnr`` and ``float_anpsnr``: the
SNR of the reference filtered by a 3x3 kernel against the distorted frame filtered by a
5x5 one, and a PSNR of the same noise, on the 8-bit scale. It reads the luma planes
alone, so a run computes it on the host from the planes it reads, whatever the backend
and the input, with NumPy (no Numba needed).
:func:`admcuda.reference.float_ansnr.compute_float_ansnr` is the specification;
:func:`float_ansnr_frame` computes the same float32 steps a block of rows at a time
(buffers that stay in cache): each filtered sample's sums and each row's running sums
are the reference's, in its order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import float_ansnr as _ansnr
from admcuda.reference.picture_copy import picture_copy

__all__ = [
    "FLOAT_ANSNR_KIND",
    "FloatAnsnrOptions",
    "check_size",
    "float_ansnr_frame",
    "output_names",
    "sums",
]

FLOAT_ANSNR_KIND = "float_ansnr"
_BLOCK_SAMPLES = 1 << 16  # a block's float32 rows (256 KB a buffer) stay in cache


@dataclass(frozen=True)
class FloatAnsnrOptions:
    """libvmaf's ``float_ansnr`` options: it has none (``float_ansnr.c`` declares no option
    table)."""


def output_names() -> tuple[str, ...]:
    """The names ``float_ansnr`` writes per frame, in its order."""
    return _ansnr.FLOAT_ANSNR_NAMES


def check_size(width: int, height: int) -> None:
    """Refuse, in one line, a frame under 3 samples a side: libvmaf's 5x5 filter mirrors
    row and column -2 onto 2, outside such a frame."""
    if min(width, height) < _ansnr.MIN_SIDE:
        raise AdmError(
            f"{FLOAT_ANSNR_KIND}: a {width}x{height} frame is under {_ansnr.MIN_SIDE} samples "
            "a side (libvmaf's 5x5 filter reads outside it); not scored"
        )


def _padded(plane: np.ndarray, bitdepth: int, radius: int) -> np.ndarray:
    """``picture_copy`` less 128, with the filter's mirrored rows and columns around it."""
    picture = picture_copy(plane, bitdepth, -128, feature=FLOAT_ANSNR_KIND)
    h, w = picture.shape
    rows = _ansnr.mirrored_indices(h, radius)
    cols = _ansnr.mirrored_indices(w, radius)
    return picture[np.ix_(rows, cols)]


def _filter_rows(
    kernel: np.ndarray, padded: np.ndarray, top: int, out: np.ndarray, scratch: np.ndarray
) -> None:
    """``out`` (``n`` rows) = the filtered rows ``top .. top + n - 1``: per sample the
    float32 sum of the kernel's rows, each the float32 sum of its taps, in order."""
    n, w = out.shape
    size = kernel.shape[0]
    row, product = scratch[0, :n], scratch[1, :n]
    out.fill(0.0)
    for fi in range(size):
        row.fill(0.0)
        for fj in range(size):
            np.multiply(kernel[fi, fj], padded[top + fi : top + fi + n, fj : fj + w], out=product)
            row += product
        out += row


def sums(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> tuple[np.float32, np.float32]:
    """``ansnr_mse_s``'s (signal, noise) float32 sums of two luma planes, the doubles of
    :func:`admcuda.reference.float_ansnr.mse` over the filtered pictures."""
    h, w = ref.shape
    a = _padded(ref, bitdepth, 1)
    b = _padded(dis, bitdepth, 2)
    rows = max(1, min(h, _BLOCK_SAMPLES // w))
    scratch = np.empty((2, rows, w), np.float32)
    fa = np.empty((rows, w), np.float32)
    fb = np.empty((rows, w), np.float32)
    row_sums = np.empty((2, h), np.float32)
    for top in range(0, h, rows):
        n = min(rows, h - top)
        _filter_rows(_ansnr.FILTER_REF, a, top, fa[:n], scratch)
        _filter_rows(_ansnr.FILTER_DIS, b, top, fb[:n], scratch)
        np.subtract(fa[:n], fb[:n], out=fb[:n])
        for k, values in enumerate((fa[:n], fb[:n])):
            np.multiply(values, values, out=values)
            running = np.add.accumulate(values, axis=1, dtype=np.float32)
            row_sums[k, top : top + n] = running[:, -1]
    totals = np.add.accumulate(row_sums, axis=1, dtype=np.float32)[:, -1]
    return np.float32(totals[0]), np.float32(totals[1])


def float_ansnr_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's ``float_ansnr`` and ``float_anpsnr`` (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor`, has no options), from the luma planes. NumPy
    releases the GIL for the arithmetic, so frames score side by side on threads."""
    if ref.shape != dis.shape:
        raise AdmError(f"{FLOAT_ANSNR_KIND}: planes of {ref.shape} and {dis.shape}")
    h, w = ref.shape
    check_size(w, h)
    try:
        signal, noise = sums(ref, dis, bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    return _ansnr.scores(signal, noise, w, h, bitdepth)

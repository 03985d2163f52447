"""libvmaf's integer motion SAD as a Numba kernel (:func:`reference.motion.motion_score_pipeline`).

Per row: the vertical 5-tap pass of the difference ``prev - cur`` (rounded by 8 bits, or
by the bit depth above 8), then the horizontal pass (rounded by 16 bits), absolute
values summed into the row's uint32, which wraps as libvmaf's does; rows add up in
uint64. Integer arithmetic throughout, so threads over row blocks change nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from admcuda.reference import motion as _M

__all__ = ["motion_sad", "motion_sad_batch"]

_T0, _T1, _T2 = _M.FILTER[0], _M.FILTER[1], _M.FILTER[2]
if _M.FILTER != (_T0, _T1, _T2, _T1, _T0) or _M.X_CONV != (1 << 15, 16):
    raise RuntimeError("admcuda.compiled.motion spells out a symmetric 5-tap filter")
_ROWS_PER_BLOCK = 16


@njit(cache=True, nogil=True, error_model="numpy")
def _mirror(p, n):  # noqa: ANN001, ANN202 - jitted
    if p < 0:
        return -p
    if p >= n:
        return 2 * n - p - 2
    return p


@njit(cache=True, nogil=True, error_model="numpy")
def _rows_sad(prev, cur, i0, i1, rnd, shift, diff):  # noqa: ANN001, ANN202 - jitted
    """Rows ``i0 .. i1 - 1``'s SAD; ``diff`` (i1 - i0 + 4, w), int32 at 8 bits (no sum
    overflows it) and int64 above, holds the difference of the rows they read."""
    h, w = cur.shape
    for k in range(i1 - i0 + 4):
        r = _mirror(i0 - 2 + k, h)
        p, c, d = prev[r], cur[r], diff[k]
        for j in range(w):
            d[j] = p[j] - c[j]
    y = np.empty(w + 4, diff.dtype)
    total = 0
    for i in range(i0, i1):
        k = i - i0
        d0, d1, d2, d3, d4 = diff[k], diff[k + 1], diff[k + 2], diff[k + 3], diff[k + 4]
        for j in range(w):
            y[j + 2] = (_T0 * (d0[j] + d4[j]) + _T1 * (d1[j] + d3[j]) + _T2 * d2[j] + rnd) >> shift
        y[0], y[1] = y[4], y[3]  # columns -2, -1 mirror 2, 1
        y[w + 2], y[w + 3] = y[w], y[w - 1]  # columns w, w + 1 mirror w - 2, w - 3
        row = 0
        for j in range(w):
            acc = _T0 * (np.int64(y[j]) + y[j + 4]) + _T1 * (np.int64(y[j + 1]) + y[j + 3])
            v = (acc + _T2 * np.int64(y[j + 2]) + 32768) >> 16
            row += abs(v)
        total += row & 0xFFFFFFFF
    return total


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def _sad(prev, cur, rnd, shift, kind):  # noqa: ANN001, ANN202 - jitted
    h, w = cur.shape
    blocks = (h + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK
    parts = np.zeros(blocks, np.int64)
    for b in prange(blocks):
        i0 = b * _ROWS_PER_BLOCK
        i1 = min(i0 + _ROWS_PER_BLOCK, h)
        diff = np.empty((i1 - i0 + 4, w), kind.dtype)
        parts[b] = _rows_sad(prev, cur, i0, i1, rnd, shift, diff)
    return parts.sum()


_INT32 = np.zeros(0, np.int32)
_INT64 = np.zeros(0, np.int64)


def _kind(bitdepth: int) -> np.ndarray:
    """The type of the difference rows: int32 holds every 8-bit filter sum, int64 above."""
    return _INT32 if bitdepth == 8 else _INT64


def _rounding(bitdepth: int) -> tuple[int, int]:
    return _M.Y_CONV_8BIT if bitdepth == 8 else (1 << (bitdepth - 1), bitdepth)


def motion_sad(prev: np.ndarray, cur: np.ndarray, bitdepth: int) -> int:
    """:func:`reference.motion.motion_score_pipeline` of two reference planes (each side
    at least 3): the uint64 SAD of their filtered difference."""
    rnd, shift = _rounding(bitdepth)
    return int(_sad(prev, cur, rnd, shift, _kind(bitdepth)))


def motion_sad_batch(planes: np.ndarray, back: int, bitdepth: int) -> np.ndarray:
    """Each plane ``i >= back`` of ``planes`` (n, h, w) against plane ``i - back``:
    uint64 SADs, shape ``(n - back,)``."""
    rnd, shift = _rounding(bitdepth)
    n = planes.shape[0]
    return np.array(
        [_sad(planes[i - back], planes[i], rnd, shift, _kind(bitdepth)) for i in range(back, n)],
        dtype=np.uint64,
    )

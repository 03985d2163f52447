"""Stage 5: contrast masking (libvmaf ``adm_cm`` and ``i4_adm_cm``).

For each position of the crop, the masking threshold is the sum over the three
orientations of the 3x3 neighbourhood of ``|csf| / 30`` with the centre replaced by
``|csf| / 15``. The CSF-weighted test band, less the threshold and clipped at zero, is
cubed in fixed point and summed with per-row rounding shifts. The border taps reflect
at the top and left (``-1 -> 1``) and repeat the edge at the bottom and right
(``n -> n - 1``), as libvmaf's border macros do.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from . import constants as C
from .cnum import border, ceil_log2_u32, f32, pow2, powf, round_pow2_u32, sar, u32, u32_from_double
from .csf_den import noise_floor
from .dwt2 import Bands


def _taps(n: int, start: int, stop: int) -> np.ndarray:
    idx = np.arange(start - 1, stop + 1)
    idx = np.where(idx < 0, 1, idx)
    return np.where(idx >= n, n - 1, idx)


def threshold(weighted: Bands, flt: Bands, scale: int, crop: tuple[slice, slice]) -> np.ndarray:
    """The masking threshold over ``crop`` (int32 values, computed in int64)."""
    hh, ww = weighted.h.shape
    rows = _taps(hh, crop[0].start, crop[0].stop)
    cols = _taps(ww, crop[1].start, crop[1].stop)
    thr = None
    for wb, fb in zip((weighted.h, weighted.v, weighted.d), (flt.h, flt.v, flt.d), strict=False):
        p = fb[np.ix_(rows, cols)].astype(np.int64)
        box = p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:]
        box += p[1:-1, :-2] + p[1:-1, 2:]
        box += p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]
        centre = np.abs(wb[crop].astype(np.int64))
        if scale == 0:
            box += ((C.ONE_BY_15 * centre + C.FLT0_ROUND[0]) >> C.FLT0_ROUND[1]).astype(np.int16)
        else:
            # abs() of INT32_MIN stays negative in C.
            centre = np.where(centre > 2**31 - 1, -(2**31), centre)
            box += ((C.I4_ONE_BY_15 * centre + C.CSF_S123_FLT[0]) >> C.CSF_S123_FLT[1]).astype(
                np.int32
            )
        thr = box if thr is None else thr + box
    if scale != 0:
        thr = thr.astype(np.int32).astype(np.int64)
    return thr


def _visible(x: np.ndarray, thr: np.ndarray, o: int, scale: int, rfactor) -> tuple[np.ndarray, int]:
    """The CSF-weighted band above the masking threshold, ``max(|x| - thr, 0)`` in
    libvmaf's fixed point, with its squaring ``(round, shift)`` index."""
    if scale == 0:
        x = np.abs(x * rfactor[o]) - (thr << C.CM0_SUB_SHIFT[o])
    else:
        x = ((x * rfactor[o] + C.CSF_S123_DST[0]) >> C.CSF_S123_DST[1]).astype(np.int32)
        x = (np.abs(x.astype(np.int64)).astype(np.int32).astype(np.int64) - thr).astype(np.int32)
        x = x.astype(np.int64)
    return np.maximum(x, 0), o


def cm_map(
    src: Bands, weighted: Bands, flt: Bands, scale: int, rfactor: tuple[int, int, int]
) -> tuple[np.ndarray, tuple[slice, slice]]:
    """Per-position visible detail, ``sum_o max(|x_o| - thr, 0)**3 / 2**e_o`` as float64.

    The quantity the stage sums, before its fixed-point rounding, over the crop it
    scores; for pictures of where the loss is (not for scores). Returns the map and
    the crop within the band.
    """
    hh, ww = src.h.shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    crop = (slice(top, bottom), slice(left, right))
    thr = threshold(weighted, flt, scale, crop)
    out = np.zeros((bottom - top, right - left))
    for o, band in enumerate((src.h, src.v, src.d)):
        x, _ = _visible(band[crop].astype(np.int64), thr, o, scale, rfactor)
        # The exponent the stage's shifts add up to, so the map sums to its accumulator.
        if scale == 0:
            e = C.CM0_SQ[o][1] + C.CM0_FINAL_EXP[o]
        else:
            e = C.CM_S123_SQ[1] + C.CM_S123_FINAL_EXP[scale - 1]
        out += x.astype(np.float64) ** 3 / 2.0**e
    return out, crop


class CmShifts(NamedTuple):
    """The fixed-point shifts of the masking sums of one band shape.

    ``row`` is the per-row rounding ``(round, shift)``; ``sq`` the squaring
    ``(round, shift)`` and ``cub`` the cubing shift of each orientation (h, v, d);
    ``exps`` the exponents the float finish divides by. Shift counts are as libvmaf
    computes them (uint32); a shift applies them modulo 64, as x86 does.
    """

    row: tuple[int, int]
    sq: tuple[tuple[int, int], tuple[int, int], tuple[int, int]]
    cub: tuple[int, int, int]
    exps: tuple[int, int, int]


@functools.lru_cache(maxsize=64)
def cm_shifts(scale: int, shape: tuple[int, int]) -> CmShifts:
    """:class:`CmShifts` of scale ``scale`` for bands of ``shape`` (hh, ww)."""
    hh, ww = shape
    inner_shift = ceil_log2_u32(hh)
    if scale == 0:
        sq = tuple(C.CM0_SQ)
        cub = tuple(u32_from_double(math.ceil(math.log2(ww) - o)) for o in C.CM0_CUB_LOG2_OFFSET)
        exps = tuple(u32(e - c - inner_shift) for e, c in zip(C.CM0_FINAL_EXP, cub, strict=True))
    else:
        sq = (tuple(C.CM_S123_SQ),) * 3
        cub = (ceil_log2_u32(ww),) * 3
        exps = tuple(u32(C.CM_S123_FINAL_EXP[scale - 1] - c - inner_shift) for c in cub)
    return CmShifts((round_pow2_u32(inner_shift), inner_shift), sq, cub, exps)  # type: ignore[arg-type]


def cm_accumulators(
    src: Bands, weighted: Bands, flt: Bands, scale: int, rfactor: tuple[int, int, int]
) -> tuple[int, int, int, tuple[int, int, int]]:
    """Integer part of the stage: ``(accum_h, accum_v, accum_d, final_exponents)``.

    ``src`` is the band whose visible part is measured (restored for the detail loss,
    additive for AIM); ``weighted``/``flt`` are the CSF outputs of the masking band.
    """
    hh, ww = src.h.shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    crop = (slice(top, bottom), slice(left, right))
    thr = threshold(weighted, flt, scale, crop)
    shifts = cm_shifts(scale, (hh, ww))
    inner_rnd, inner_shift = shifts.row
    accs = []
    for o, band in enumerate((src.h, src.v, src.d)):
        x, _ = _visible(band[crop].astype(np.int64), thr, o, scale, rfactor)
        sq_rnd, sq_shift = shifts.sq[o]
        cub_shift = shifts.cub[o]
        x_sq = ((x * x + sq_rnd) >> sq_shift).astype(np.int32).astype(np.int64)
        val = sar(x_sq * x + round_pow2_u32(cub_shift), cub_shift)
        rows = val.sum(axis=1)
        accs.append(int(sar(rows + inner_rnd, inner_shift).sum()))
    return accs[0], accs[1], accs[2], shifts.exps


def cm_finish(accums, scale: int, shape: tuple[int, int], noise_weight: float) -> np.float32:
    """Float finish: ``sum_o (accum_o / 2**e_o)**(1/3) + noise``, in libvmaf's float steps."""
    hh, ww = shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    add = noise_floor((bottom - top) * (right - left), noise_weight)
    total = []
    for acc, e in zip(accums[:3], accums[3], strict=False):
        div = pow2(e) if scale == 0 else float(f32(pow2(e)))
        total.append(powf(f32(float(acc) / div), C.ONE_THIRD_F) + add)
    return (total[0] + total[1]) + total[2]


def cm(
    src: Bands,
    weighted: Bands,
    flt: Bands,
    scale: int,
    rfactor: tuple[int, int, int],
    noise_weight: float,
) -> np.float32:
    """One scale's numerator (or AIM numerator) from the decoupled and CSF bands."""
    acc = cm_accumulators(src, weighted, flt, scale, rfactor)
    return cm_finish(acc, scale, src.h.shape, noise_weight)

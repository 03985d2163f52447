"""Stage 4: the CSF-weighted reference energy, each scale's denominator
(libvmaf ``adm_csf_den_scale`` and ``adm_csf_den_s123``).

Sums ``|ref|**3`` over the cropped detail bands in fixed point with per-row rounding
shifts, then applies ``rfactor**3``, the cube root and the noise floor on the host in
float, as libvmaf does.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from . import constants as C
from .cnum import border, ceil_log2_u32, f32, pow2, powf, round_pow2_u32, u32
from .csf import csf_factors
from .dwt2 import Bands


class DenShifts(NamedTuple):
    """The fixed-point shifts of the denominator sums of one band shape.

    Each is a ``(round, shift)`` pair: ``sq`` and ``cub`` the squaring and cubing
    (scales 1-3 only; ``(0, 0)`` at scale 0, which cubes in full), ``row`` the per-row
    rounding. ``exp`` is the exponent the float finish divides by. Shift counts are as
    libvmaf computes them (uint32); a shift applies them modulo 64, as x86 does.
    """

    sq: tuple[int, int]
    cub: tuple[int, int]
    row: tuple[int, int]
    exp: int


@functools.lru_cache(maxsize=64)
def den_shifts(scale: int, shape: tuple[int, int]) -> DenShifts:
    """:class:`DenShifts` of scale ``scale`` for bands of ``shape`` (hh, ww)."""
    hh, ww = shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    if scale == 0:
        area = (bottom - top) * (right - left)
        shift = max(int(math.ceil(math.log2(area) - C.DEN0_LOG2_OFFSET)), 0)
        rnd = (1 << (shift - 1)) if shift > 0 else 0
        return DenShifts((0, 0), (0, 0), (rnd, shift), C.DEN0_FINAL_EXP - shift)
    sq_shift = C.DEN_S123_SQ_SHIFT[scale - 1]
    cub_shift = ceil_log2_u32(right - left)
    row_shift = ceil_log2_u32(bottom - top)
    return DenShifts(
        (1 << sq_shift, sq_shift),
        (round_pow2_u32(cub_shift), cub_shift),
        (round_pow2_u32(row_shift), row_shift),
        u32(C.DEN_S123_FINAL_EXP[scale - 1] - row_shift - cub_shift),
    )


def den_accumulators(ref: Bands, scale: int) -> tuple[int, int, int, int]:
    """Integer part of the stage: ``(accum_h, accum_v, accum_d, final_exponent)``.

    The float finish divides each accumulator by ``2**final_exponent``. Exposed so the
    GPU backend can return the same integers and share :func:`den_finish`.
    """
    hh, ww = ref.h.shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    crop = (slice(top, bottom), slice(left, right))
    shifts = den_shifts(scale, (hh, ww))
    row_rnd, row_shift = np.uint64(shifts.row[0]), np.uint64(shifts.row[1] & 63)
    out = []
    for band in (ref.h, ref.v, ref.d):
        x = np.abs(band[crop].astype(np.int64)).astype(np.uint64)
        if scale == 0:
            val = x * x * x
        else:
            (sq_rnd, sq_shift), (cub_rnd, cub_shift) = shifts.sq, shifts.cub
            val = ((x * x + np.uint64(sq_rnd)) >> np.uint64(sq_shift)) * x
            val = (val + np.uint64(cub_rnd)) >> np.uint64(cub_shift & 63)
        rows = val.sum(axis=1, dtype=np.uint64)
        out.append(int(((rows + row_rnd) >> row_shift).sum(dtype=np.uint64)))
    return (*out, shifts.exp)


@functools.lru_cache(maxsize=256)
def noise_floor(area: int, noise_weight: float) -> np.float32:
    """``powf(area * noise_weight, 1/3)``: the noise term added to each orientation."""
    return powf(f32(area * noise_weight), C.ONE_THIRD_F)


def den_finish(
    accums: tuple[int, int, int, int], scale: int, shape: tuple[int, int], opts
) -> np.float32:
    """Float finish of the denominator: ``sum_o (accum_o / 2**e * rf_o**3)**(1/3) + noise``."""
    f1, f2 = csf_factors(scale, opts)
    hh, ww = shape
    left, right = border(ww, tap=False)
    top, bottom = border(hh, tap=False)
    shift_csf = pow2(accums[3])
    add = noise_floor((bottom - top) * (right - left), opts.adm_noise_weight)
    total = []
    for acc, rf in zip(accums[:3], (f1, f1, f2), strict=False):
        val = (float(acc) / shift_csf) * math.pow(float(rf), 3)
        total.append(powf(f32(val), C.ONE_THIRD_F) + add)
    return (total[0] + total[1]) + total[2]


def csf_den(ref: Bands, scale: int, opts) -> np.float32:
    """The denominator of one scale from the reference's detail bands."""
    return den_finish(den_accumulators(ref, scale), scale, ref.h.shape, opts)

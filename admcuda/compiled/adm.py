"""libvmaf's integer ADM as Numba kernels: per frame and scale, the integer masking and
denominator sums of the reference's :func:`reference.cm.cm_accumulators` and
:func:`reference.csf_den.den_accumulators`, laid out as the CUDA engine returns them and
finished by the same :class:`admcuda.backends.cuda.finish.BatchFinish`.

Per scale: the DWT of reference and distorted (``reference.dwt2``) into whole bands;
then, row by row over the crop, the decouple (``reference.decouple``), the CSF
(``reference.csf``) of the additive part and, unless AIM is skipped, of the restored
part, kept for the three rows a 3x3 masking window needs, and the masking and
denominator sums of the row. Every per-row rounding shift of cm and csf_den applies to
one row's sum, and a row is summed by one thread, so splitting frames or row blocks
across threads changes no bit; the rows' shifted sums are int64 (uint64 bit patterns for
the denominator), whose sums do not depend on order.

Threads: a call runs a chunk of frames (one per thread) stage by stage, each stage's
(frame, row block) tasks across Numba's threads; a frame alone is cut into row blocks.
That is eight parallel regions a chunk: on cores shared with other busy processes,
OpenMP's spinning wait (Numba's ``omp`` layer) can stretch each to a scheduler time
slice; ``OMP_WAIT_POLICY=passive`` or the ``workqueue`` layer avoid that.

Frames 17..32 high read, in the reference's scale-3 DWT, one row of the scale-0 CSF
output (``reference.adm``): computed here for the columns it reads.
"""

from __future__ import annotations

import functools
import threading

import numpy as np
from numba import get_num_threads, njit, prange

from admcuda import kernel_loader as K
from admcuda.backends.cuda.finish import finish_batch
from admcuda.backends.cuda.geometry import scale_geometries
from admcuda.options import AdmOptions
from admcuda.reference import constants as C
from admcuda.reference.adm import check_frame
from admcuda.reference.decouple import COS_1DEG_SQ
from admcuda.reference.dwt2 import src_indices

__all__ = [
    "adm_accumulators",
    "adm_accumulators_batch",
    "adm_accumulators_ladder",
    "compute_adm",
    "compute_adm_batch",
]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

# --- compile-time constants (reference.constants) ----------------------------------------
_L0, _L1, _L2, _L3 = C.DWT_LO
_H0, _H1, _H2, _H3 = C.DWT_HI
_LO_SUM, _HI_SUM = C.DWT_LO_SUM, C.DWT_HI_SUM
_HP0_RND, _HP0_SH = C.DWT0_HP
_LUT = C.DIV_LOOKUP  # int32: half the cache footprint of int64
_LUT_MID = 32768
_K_ONE = C.K_ONE
_K_RND, _K_SH = C.K_ROUND
_ANGLE = C.ANGLE_SCALE
_COS2 = float(COS_1DEG_SQ)
_F30, (_F0_RND, _F0_SH) = C.FIX_ONE_BY_30, C.FLT0_ROUND
_F15 = C.ONE_BY_15
_I4_F30, (_I4_RND, _I4_SH) = C.I4_FIX_ONE_BY_30, C.CSF_S123_FLT
_I4_F15 = C.I4_ONE_BY_15
_DST_RND, _DST_SH = C.CSF_S123_DST
_CSF0 = C.CSF0_ROUND  # by theta: h/v rows 0/1, d row 2
_CSF0_HV_RND, _CSF0_HV_SH = _CSF0[0]
_CSF0_D_RND, _CSF0_D_SH = _CSF0[2]
if _CSF0[0] != _CSF0[1]:
    raise RuntimeError("admcuda.compiled.adm takes one CSF rounding for h and v at scale 0")
_INT32_MIN = -(1 << 31)

# Parameter block of one scale (admcuda.kernel_loader.PARAM_SLOTS), as the CUDA
# kernels read it; orientation slots are (h, v, d).
_P = K.PARAM_OFFSETS
_RF, _SUB, _SQR, _SQS, _CBR, _CBS = (
    _P[k] for k in ("RF", "CM_SUB_SHIFT", "CM_SQ_RND", "CM_SQ_SHIFT", "CM_CUB_RND", "CM_CUB_SHIFT")
)
_CM_ROW_RND, _CM_ROW_SH = _P["CM_ROW_RND"], _P["CM_ROW_SHIFT"]
_DSQR, _DSQS, _DCBR, _DCBS = (
    _P[k] for k in ("DEN_SQ_RND", "DEN_SQ_SHIFT", "DEN_CUB_RND", "DEN_CUB_SHIFT")
)
_DEN_ROW_RND, _DEN_ROW_SH = _P["DEN_ROW_RND"], _P["DEN_ROW_SHIFT"]
_NUM, _AIM, _DEN = (K.ACC_OFFSETS[k] for k in ("NUM", "AIM", "DEN"))
_ACC_COUNT = K.ACC_COUNT

# Per-scale geometry row: band shape, crop, the DWT input's shape, the CSF region.
_G_HH, _G_WW, _G_TOP, _G_BOT, _G_LEFT, _G_RIGHT, _G_SH, _G_SW = range(8)
_G_R0, _G_R1, _G_C0, _G_C1 = range(8, 12)
_G_COUNT = 12

# Rows of the crop per block when one frame is split across threads.
_MIN_BLOCK_ROWS = 8
# Bytes of band buffers a call holds at most (but always one frame's), per thread.
_CHUNK_BYTES = 256 << 20


# --- small helpers -----------------------------------------------------------------------


@njit(**_JIT)
def _lsr(x, s):  # noqa: ANN001, ANN202 - jitted
    """Logical right shift of an int64 holding a uint64 bit pattern."""
    return np.int64(np.uint64(x) >> np.uint64(s))


@njit(**_JIT)
def _tap(i, n):  # noqa: ANN001, ANN202 - jitted
    """The masking window's border taps: -1 reads 1, n reads n - 1."""
    if i < 0:
        return 1
    if i >= n:
        return n - 1
    return i


@njit(**_JIT)
def _abs32(y):  # noqa: ANN001, ANN202 - jitted
    """C's ``abs`` of an int32 as int64: INT32_MIN stays negative."""
    if y < 0:
        y = -y
    return np.int64(np.int32(y))


# --- stage 1: DWT ------------------------------------------------------------------------


@njit(**_JIT)
def _vert0(s0, s1, s2, s3, lo, hi, rnd, sh, lo_only):  # noqa: ANN001, ANN202 - jitted
    """Scale-0 vertical pass of one row (reference.dwt2.dwt2): int16 lo/hi rows."""
    bias = _LO_SUM * rnd - rnd
    for c in range(lo.shape[0]):
        a0, a1, a2, a3 = np.int64(s0[c]), np.int64(s1[c]), np.int64(s2[c]), np.int64(s3[c])
        lo[c] = np.int16((_L0 * a0 + _L1 * a1 + _L2 * a2 + _L3 * a3 - bias) >> sh)
    if not lo_only:
        bias = _HI_SUM * rnd - rnd
        for c in range(hi.shape[0]):
            a0, a1, a2, a3 = np.int64(s0[c]), np.int64(s1[c]), np.int64(s2[c]), np.int64(s3[c])
            hi[c] = np.int16((_H0 * a0 + _H1 * a1 + _H2 * a2 + _H3 * a3 - bias) >> sh)


@njit(**_JIT)
def _horiz0(tmp, out, ix, k0, k1, k2, k3):  # noqa: ANN001, ANN202 - jitted
    """Scale-0 horizontal pass of one row with taps (k0..k3): int16 values in ``out``."""
    n = out.shape[0]
    jhi = max(n - 2, 1)
    for j in range(1, jhi):
        c = 2 * j - 1
        acc = k0 * np.int64(tmp[c]) + k1 * np.int64(tmp[c + 1])
        acc += k2 * np.int64(tmp[c + 2]) + k3 * np.int64(tmp[c + 3])
        out[j] = np.int16((acc + _HP0_RND) >> _HP0_SH)
    _horiz0_at(tmp, out, ix, k0, k1, k2, k3, 0)
    for j in range(jhi, n):
        _horiz0_at(tmp, out, ix, k0, k1, k2, k3, j)


@njit(**_JIT)
def _horiz0_at(tmp, out, ix, k0, k1, k2, k3, j):  # noqa: ANN001, ANN202 - jitted
    """Output ``j`` of :func:`_horiz0` through the reference's tap table."""
    acc = k0 * np.int64(tmp[ix[0, j]]) + k1 * np.int64(tmp[ix[1, j]])
    acc += k2 * np.int64(tmp[ix[2, j]]) + k3 * np.int64(tmp[ix[3, j]])
    out[j] = np.int16((acc + _HP0_RND) >> _HP0_SH)


@njit(**_JIT)
def _dwt0_rows(src, det, a, iy, ix, rnd, sh, lo_only, i0, i1):  # noqa: ANN001, ANN202 - jitted
    """Output rows ``i0 .. i1 - 1`` of the scale-0 DWT: ``a`` (int32, for the next
    level) and, unless ``lo_only``, the int16 detail bands ``det`` = (h, v, d)."""
    w = src.shape[1]
    lo = np.empty(w, np.int16)
    hi = np.empty(w, np.int16)
    for i in range(i0, i1):
        _vert0(src[iy[0, i]], src[iy[1, i]], src[iy[2, i]], src[iy[3, i]], lo, hi, rnd, sh, lo_only)
        _horiz0(lo, a[i], ix, _L0, _L1, _L2, _L3)
        if not lo_only:
            _horiz0(hi, det[0, i], ix, _L0, _L1, _L2, _L3)
            _horiz0(lo, det[1, i], ix, _H0, _H1, _H2, _H3)
            _horiz0(hi, det[2, i], ix, _H0, _H1, _H2, _H3)


@njit(**_JIT)
def _vert123(s0, s1, s2, s3, lo, hi, rnd, sh):  # noqa: ANN001, ANN202 - jitted
    """Scale 1..3 vertical pass of one row (reference.dwt2.dwt2_s123_vertical)."""
    for c in range(lo.shape[0]):
        a0, a1, a2, a3 = np.int64(s0[c]), np.int64(s1[c]), np.int64(s2[c]), np.int64(s3[c])
        lo[c] = np.int32((_L0 * a0 + _L1 * a1 + _L2 * a2 + _L3 * a3 + rnd) >> sh)
        hi[c] = np.int32((_H0 * a0 + _H1 * a1 + _H2 * a2 + _H3 * a3 + rnd) >> sh)


@njit(**_JIT)
def _horiz123(tmp, m1, out, ix, k0, k1, k2, k3, rnd, sh):  # noqa: ANN001, ANN202 - jitted
    """Scale 1..3 horizontal pass of one row; column -1 reads ``m1``."""
    n = out.shape[0]
    jhi = max(n - 2, 1)
    for j in range(1, jhi):
        c = 2 * j - 1
        acc = k0 * np.int64(tmp[c]) + k1 * np.int64(tmp[c + 1])
        acc += k2 * np.int64(tmp[c + 2]) + k3 * np.int64(tmp[c + 3])
        out[j] = np.int32((acc + rnd) >> sh)
    _horiz123_at(tmp, m1, out, ix, k0, k1, k2, k3, rnd, sh, 0)
    for j in range(jhi, n):
        _horiz123_at(tmp, m1, out, ix, k0, k1, k2, k3, rnd, sh, j)


@njit(**_JIT)
def _tap123(tmp, m1, c):  # noqa: ANN001, ANN202 - jitted
    return np.int64(m1) if c < 0 else np.int64(tmp[c])


@njit(**_JIT)
def _horiz123_at(tmp, m1, out, ix, k0, k1, k2, k3, rnd, sh, j):  # noqa: ANN001, ANN202 - jitted
    """Output ``j`` of :func:`_horiz123` through the reference's tap table."""
    acc = k0 * _tap123(tmp, m1, ix[0, j]) + k1 * _tap123(tmp, m1, ix[1, j])
    acc += k2 * _tap123(tmp, m1, ix[2, j]) + k3 * _tap123(tmp, m1, ix[3, j])
    out[j] = np.int32((acc + rnd) >> sh)


@njit(**_JIT)
def _src_row(src, m1, r):  # noqa: ANN001, ANN202 - jitted
    return m1 if r < 0 else src[r]


@njit(**_JIT)
def _dwt123_rows(rs, ds, rdet, ddet, ra, da, iy, ix, vp, hp, rm1, need_a, i0, i1):  # noqa: ANN001, ANN202 - jitted
    """Output rows ``i0 .. i1 - 1`` of the scale 1..3 DWT of reference and distorted
    together (reference.dwt2.dwt2_s123_pair): source row -1 reads ``rm1`` for the
    reference and zeros for the distorted; column -1 reads the neighbouring row buffer's
    last element as libvmaf's layout has it (the distorted's, the reference's)."""
    last = np.empty(i1, np.int32)
    _dwt123_ref_rows(rs, rdet, ra, iy, ix, vp, hp, rm1, need_a, last, i0, i1)
    _dwt123_dis_rows(ds, ddet, da, iy, ix, vp, hp, need_a, last, i0, i1)


@njit(**_JIT)
def _dwt123_ref_rows(rs, rdet, ra, iy, ix, vp, hp, rm1, need_a, last, i0, i1):  # noqa: ANN001, ANN202 - jitted
    """The reference's half of :func:`_dwt123_rows`, keeping each output row's last
    vertical high-pass sample in ``last``: the distorted's column -1 reads it."""
    w = rs.shape[1]
    rlo, rhi = np.empty(w, np.int32), np.empty(w, np.int32)
    vr, vs = vp[0], vp[1]
    hr, hs = hp[0], hp[1]
    for i in range(i0, i1):
        r0, r1, r2, r3 = iy[0, i], iy[1, i], iy[2, i], iy[3, i]
        _vert123(
            _src_row(rs, rm1, r0), _src_row(rs, rm1, r1), _src_row(rs, rm1, r2),
            _src_row(rs, rm1, r3), rlo, rhi, vr, vs,
        )  # fmt: skip
        last[i] = rhi[w - 1]
        if need_a:
            _horiz123(rlo, 0, ra[i], ix, _L0, _L1, _L2, _L3, hr, hs)
        _horiz123(rhi, rlo[w - 1], rdet[0, i], ix, _L0, _L1, _L2, _L3, hr, hs)
        _horiz123(rlo, 0, rdet[1, i], ix, _H0, _H1, _H2, _H3, hr, hs)
        _horiz123(rhi, rlo[w - 1], rdet[2, i], ix, _H0, _H1, _H2, _H3, hr, hs)


@njit(**_JIT)
def _dwt123_dis_rows(ds, ddet, da, iy, ix, vp, hp, need_a, last, i0, i1):  # noqa: ANN001, ANN202 - jitted
    """The distorted's half of :func:`_dwt123_rows`, the reference's part of it
    (``last``) computed once for every distorted input."""
    w = ds.shape[1]
    dlo, dhi = np.empty(w, np.int32), np.empty(w, np.int32)
    zero = np.zeros(w, np.int32)
    vr, vs = vp[0], vp[1]
    hr, hs = hp[0], hp[1]
    for i in range(i0, i1):
        r0, r1, r2, r3 = iy[0, i], iy[1, i], iy[2, i], iy[3, i]
        _vert123(
            _src_row(ds, zero, r0), _src_row(ds, zero, r1), _src_row(ds, zero, r2),
            _src_row(ds, zero, r3), dlo, dhi, vr, vs,
        )  # fmt: skip
        if need_a:
            _horiz123(dlo, last[i], da[i], ix, _L0, _L1, _L2, _L3, hr, hs)
        _horiz123(dhi, dlo[w - 1], ddet[0, i], ix, _L0, _L1, _L2, _L3, hr, hs)
        _horiz123(dlo, last[i], ddet[1, i], ix, _H0, _H1, _H2, _H3, hr, hs)
        _horiz123(dhi, dlo[w - 1], ddet[2, i], ix, _H0, _H1, _H2, _H3, hr, hs)


# --- stage 2 and 3: decouple and CSF, one row --------------------------------------------


@njit(**_JIT)
def _angle(oh, ov, th, tv, flag):  # noqa: ANN001, ANN202 - jitted
    """reference.decouple.angle_flag of one row."""
    for q in range(flag.shape[0]):
        a, b = np.int64(oh[q]), np.int64(ov[q])
        x, y = np.int64(th[q]), np.int64(tv[q])
        dot = np.float64(np.float32(a * x + b * y)) / _ANGLE
        om = np.float64(np.float32(a * a + b * b)) / _ANGLE
        tm = np.float64(np.float32(x * x + y * y)) / _ANGLE
        flag[q] = dot >= 0.0 and dot * dot >= (_COS2 * om) * tm


@njit(**_JIT)
def _restore(rst, k, o, t, flag, egl):  # noqa: ANN001, ANN202 - jitted
    """reference.decouple._restore of one value, as a double to truncate."""
    if flag and k > 0:
        scaled = np.float64(rst) * egl
        tf = np.float64(t)
        if o > 0:
            return scaled if scaled < tf else tf
        if o < 0:
            return scaled if scaled > tf else tf
    return np.float64(rst)


@njit(**_JIT)
def _decouple0(o_row, t_row, flag, r_out, a_out, egl):  # noqa: ANN001, ANN202 - jitted
    """reference.decouple.decouple of one band row: restored and additive (int16 values)."""
    for q in range(flag.shape[0]):
        o, t = np.int64(o_row[q]), np.int64(t_row[q])
        k = _K_ONE if o == 0 else (np.int64(_LUT[o + _LUT_MID]) * t + _K_RND) >> _K_SH
        k = min(max(k, 0), _K_ONE)
        rst = np.int64(np.int16((k * o + _K_RND) >> _K_SH))
        rst = np.int64(np.int16(_restore(rst, k, o, t, flag[q], egl)))
        r_out[q] = rst
        a_out[q] = np.int16(t - rst)


@njit(**_JIT)
def _bit_length17(m):  # noqa: ANN001, ANN202 - jitted
    """``int.bit_length`` of ``0 <= m < 2**17`` without a loop (so the caller vectorises)."""
    b = np.int64(0)
    if m >= 65536:
        b += 16
        m >>= 16
    if m >= 256:
        b += 8
        m >>= 8
    if m >= 16:
        b += 4
        m >>= 4
    if m >= 4:
        b += 2
        m >>= 2
    if m >= 2:
        b += 1
        m >>= 1
    return b + m


@njit(**_JIT)
def _decouple123(o_row, t_row, flag, r_out, a_out, egl):  # noqa: ANN001, ANN202 - jitted
    """reference.decouple.decouple_s123 of one band row (int32 values)."""
    for q in range(flag.shape[0]):
        o, t = np.int64(o_row[q]), np.int64(t_row[q])
        mag = -o if o < 0 else o
        sh = _bit_length17(mag >> 15)
        msb = (mag + ((np.int64(1) << sh) >> 1)) >> sh
        rnd = _INT32_MIN if sh == 17 else np.int64(1) << (14 + sh)
        k = np.int64(_LUT[msb + _LUT_MID]) * t
        if o < 0:
            k = -k
        k = (k + rnd) >> (15 + sh)
        if o == 0:
            k = _K_ONE
        k = min(max(k, 0), _K_ONE)
        rst = np.int64(np.int32((k * o + _K_RND) >> _K_SH))
        rst = np.int64(np.int32(_restore(rst, k, o, t, flag[q], egl)))
        r_out[q] = rst
        a_out[q] = np.int32(t - rst)


@njit(**_JIT)
def _csf0(x_row, fs, cs, rf, rnd, sh, first):  # noqa: ANN001, ANN202 - jitted
    """reference.csf.csf at scale 0 of one row, folded into the masking inputs: ``fs``
    sums the three orientations' ``|w| / 30`` (int16 values), ``cs`` their threshold
    centre ``|w| / 15`` (int16 values)."""
    for q in range(fs.shape[0]):
        w = np.int16((rf * np.int64(x_row[q]) + rnd) >> sh)
        aw = abs(np.int64(w))
        f = np.int64(np.int16((_F30 * aw + _F0_RND) >> _F0_SH))
        c = np.int64(np.int16((_F15 * aw + _F0_RND) >> _F0_SH))
        if first:
            fs[q] = f
            cs[q] = c
        else:
            fs[q] += f
            cs[q] += c


@njit(**_JIT)
def _csf123(x_row, fs, cs, rf, first):  # noqa: ANN001, ANN202 - jitted
    """As :func:`_csf0` at scales 1..3 (int32 values, sums wrapping as int32 does)."""
    for q in range(fs.shape[0]):
        aw = _abs32(np.int32((rf * np.int64(x_row[q]) + _DST_RND) >> _DST_SH))
        f = np.int64(np.int32((_I4_F30 * aw + _I4_RND) >> _I4_SH))
        c = np.int64(np.int32((_I4_F15 * aw + _I4_RND) >> _I4_SH))
        if first:
            fs[q] = f
            cs[q] = c
        else:
            fs[q] = np.int32(fs[q] + f)
            cs[q] = np.int32(cs[q] + c)


# --- stage 4 and 5: masking and denominator sums of one row ------------------------------


@njit(**_JIT)
def _threshold(f0, f1, f2, cs, vs, thr, wrap32):  # noqa: ANN001, ANN202 - jitted
    """reference.cm.threshold of one crop row from the three rows of summed ``|w| / 30``
    around it (tap columns) and the summed centre terms: box of 8 plus centre."""
    for p in range(vs.shape[0]):
        vs[p] = np.int64(f0[p]) + f1[p] + f2[p]
    for q in range(thr.shape[0]):
        t = vs[q] + vs[q + 1] + vs[q + 2] - f1[q + 1] + cs[q + 1]
        thr[q] = np.int64(np.int32(t)) if wrap32 else t


@njit(**_JIT)
def _cm0_row(x_row, thr, rf, sub, sqr, sqs, cbr, cbs):  # noqa: ANN001, ANN202 - jitted
    """One crop row's masking sum at scale 0 (reference.cm.cm_accumulators, before the
    row's rounding shift)."""
    s = np.int64(0)
    for q in range(thr.shape[0]):
        v = abs(np.int64(x_row[q]) * rf) - (thr[q] << sub)
        v = max(v, 0)
        xs = np.int64(np.int32((v * v + sqr) >> sqs))
        s += (xs * v + cbr) >> cbs
    return s


@njit(**_JIT)
def _cm123_row(x_row, thr, rf, sqr, sqs, cbr, cbs):  # noqa: ANN001, ANN202 - jitted
    """As :func:`_cm0_row` at scales 1..3: the band is CSF-weighted first."""
    s = np.int64(0)
    for q in range(thr.shape[0]):
        y = _abs32(np.int32((np.int64(x_row[q]) * rf + _DST_RND) >> _DST_SH))
        v = np.int64(np.int32(y - thr[q]))
        v = max(v, 0)
        xs = np.int64(np.int32((v * v + sqr) >> sqs))
        s += (xs * v + cbr) >> cbs
    return s


@njit(**_JIT)
def _den0_row(b_row):  # noqa: ANN001, ANN202 - jitted
    """One crop row's denominator sum at scale 0: sum of ``|x|**3``."""
    s = np.int64(0)
    for q in range(b_row.shape[0]):
        x = abs(np.int64(b_row[q]))
        s += x * x * x
    return s


@njit(**_JIT)
def _den123_row(b_row, sqr, sqs, cbr, cbs):  # noqa: ANN001, ANN202 - jitted
    """One crop row's denominator sum at scales 1..3 (a uint64 bit pattern)."""
    s = np.int64(0)
    for q in range(b_row.shape[0]):
        x = abs(np.int64(b_row[q]))
        v = ((x * x + sqr) >> sqs) * x
        s += (v + cbr) >> cbs
    return s


@njit(**_JIT)
def _masking_rows(rb, db, prm, geo, egl, do_aim, i0, i1, acc):  # noqa: ANN001, ANN202 - jitted
    """Crop rows ``i0 .. i1 - 1`` of one scale: decouple, CSF, masking and denominator
    sums, added to ``acc`` (ACC_COUNT,). ``rb``, ``db``: (h, v, d) detail bands.

    Rows run through a ring of three: the row below is decoupled and weighted before
    the masking sums of the row it completes the window of.
    """
    scale0 = rb.itemsize == 2
    hh, ww = rb.shape[1], rb.shape[2]
    left, right = geo[_G_LEFT], geo[_G_RIGHT]
    ncol = right - left + 2  # tap columns left - 1 .. right
    rr = np.empty((3, 3, ncol), np.int32)  # ring slot, orientation, tap column
    aa = np.empty((3, 3, ncol), np.int32)
    fsa, csa = np.empty((3, ncol), np.int32), np.empty((3, ncol), np.int32)
    fsr, csr = np.empty((3, ncol), np.int32), np.empty((3, ncol), np.int32)
    flag = np.empty(ncol, np.bool_)
    vs = np.empty(ncol, np.int64)
    thr = np.empty(ncol - 2, np.int64)
    # Segments of tap columns: (first tap column, band column it reads, count).
    segs = np.empty((3, 3), np.int64)
    p0 = 1 if left == 0 else 0
    p1 = ncol - 1 if right >= ww else ncol
    segs[0, 0], segs[0, 1], segs[0, 2] = p0, left - 1 + p0, p1 - p0
    nseg = 1
    if p0 == 1:
        segs[nseg, 0], segs[nseg, 1], segs[nseg, 2] = 0, 1, 1
        nseg += 1
    if p1 == ncol - 1:
        segs[nseg, 0], segs[nseg, 1], segs[nseg, 2] = ncol - 1, ww - 1, 1
        nseg += 1
    rf = (prm[_RF], prm[_RF + 1], prm[_RF + 2])
    csf_rnd = (_CSF0_HV_RND, _CSF0_HV_RND, _CSF0_D_RND)
    csf_sh = (_CSF0_HV_SH, _CSF0_HV_SH, _CSF0_D_SH)
    for k in range(i1 - i0 + 2):
        t = k % 3
        m = _tap(i0 - 1 + k, hh)
        for g in range(nseg):
            p, c, n = segs[g, 0], segs[g, 1], segs[g, 2]
            fl = flag[p : p + n]
            _angle(rb[0, m, c : c + n], rb[1, m, c : c + n], db[0, m, c : c + n],
                   db[1, m, c : c + n], fl)  # fmt: skip
            for o in range(3):
                if scale0:
                    _decouple0(rb[o, m, c : c + n], db[o, m, c : c + n], fl,
                               rr[t, o, p : p + n], aa[t, o, p : p + n], egl)  # fmt: skip
                else:
                    _decouple123(rb[o, m, c : c + n], db[o, m, c : c + n], fl,
                                 rr[t, o, p : p + n], aa[t, o, p : p + n], egl)  # fmt: skip
        for o in range(3):
            if scale0:
                _csf0(aa[t, o], fsa[t], csa[t], rf[o], csf_rnd[o], csf_sh[o], o == 0)
                if do_aim:
                    _csf0(rr[t, o], fsr[t], csr[t], rf[o], csf_rnd[o], csf_sh[o], o == 0)
            else:
                _csf123(aa[t, o], fsa[t], csa[t], rf[o], o == 0)
                if do_aim:
                    _csf123(rr[t, o], fsr[t], csr[t], rf[o], o == 0)
        if k < 2:
            continue
        i = i0 + k - 2
        up, mid, dn = (k - 2) % 3, (k - 1) % 3, t
        for kind in range(2 if do_aim else 1):
            if kind == 0:
                fs, cs, src, base = fsa, csa, rr, _NUM
            else:
                fs, cs, src, base = fsr, csr, aa, _AIM
            _threshold(fs[up], fs[mid], fs[dn], cs[mid], vs, thr, not scale0)
            for o in range(3):
                x = src[mid, o, 1 : ncol - 1]
                if scale0:
                    row = _cm0_row(x, thr, rf[o], prm[_SUB + o], prm[_SQR + o], prm[_SQS + o],
                                   prm[_CBR + o], prm[_CBS + o])  # fmt: skip
                else:
                    row = _cm123_row(x, thr, rf[o], prm[_SQR + o], prm[_SQS + o],
                                     prm[_CBR + o], prm[_CBS + o])  # fmt: skip
                acc[base + o] += (row + prm[_CM_ROW_RND]) >> prm[_CM_ROW_SH]
        for o in range(3):
            b = rb[o, i, left:right]
            if scale0:
                row = _den0_row(b)
            else:
                row = _den123_row(b, prm[_DSQR], prm[_DSQS], prm[_DCBR], prm[_DCBS])
            acc[_DEN + o] += _lsr(row + prm[_DEN_ROW_RND], prm[_DEN_ROW_SH])


@njit(**_JIT)
def _scale3_row_m1(rb, db, prm, geo, egl, do_aim, width, out):  # noqa: ANN001, ANN202 - jitted
    """What the reference's scale-3 DWT reads as source row -1 when its input has 3 or 4
    rows (reference.adm._int16_rows_as_int32): row ``hh - 2`` of the scale-0 CSF output
    of the d band (restored and weighted, or with AIM skipped the additive one's
    ``|w| / 30``), zero outside the CSF region, its int16 pairs read as int32."""
    hh, ww = rb.shape[1], rb.shape[2]
    m = hh - 2
    pairs = np.zeros(2 * width, np.int64)
    if geo[_G_R0] <= m < geo[_G_R1]:
        c0 = max(geo[_G_C0], 0)
        c1 = min(geo[_G_C1], 2 * width, ww)
        if c1 > c0:
            n = c1 - c0
            fl = np.empty(n, np.bool_)
            r, a = np.empty(n, np.int32), np.empty(n, np.int32)
            _angle(rb[0, m, c0:c1], rb[1, m, c0:c1], db[0, m, c0:c1], db[1, m, c0:c1], fl)
            _decouple0(rb[2, m, c0:c1], db[2, m, c0:c1], fl, r, a, egl)
            rf = prm[_RF + 2]
            for q in range(n):
                src = a[q] if not do_aim else r[q]
                w = np.int64(np.int16((rf * np.int64(src) + _CSF0_D_RND) >> _CSF0_D_SH))
                if not do_aim:
                    w = np.int64(np.int16((_F30 * abs(w) + _F0_RND) >> _F0_SH))
                pairs[c0 + q] = w
    for k in range(width):
        out[k] = np.int32((pairs[2 * k] & 0xFFFF) | (pairs[2 * k + 1] << 16))


# --- stages over a chunk of frames, (frame, row block) tasks across threads -------------


@njit(parallel=True, **_JIT)
def _dwt0_stage(refs, diss, rd, dd, ra, da, iy, ix, rnd, sh, lo_only, nb):  # noqa: ANN001, ANN202 - jitted
    """Scale-0 DWT of every frame's reference and distorted, ``nb`` row blocks each."""
    n, hh = ra.shape[0], ra.shape[1]
    for task in prange(2 * n * nb):
        side, f, b = task // (n * nb), (task // nb) % n, task % nb
        i0, i1 = b * hh // nb, (b + 1) * hh // nb
        if side == 0:
            _dwt0_rows(refs[f], rd[f], ra[f], iy, ix, rnd, sh, lo_only, i0, i1)
        else:
            _dwt0_rows(diss[f], dd[f], da[f], iy, ix, rnd, sh, lo_only, i0, i1)


@njit(parallel=True, **_JIT)
def _dwt123_stage(ra, da, rd, dd, ran, dan, iy, ix, vp, hp, rm1, need_a, nb):  # noqa: ANN001, ANN202 - jitted
    """Scale 1..3 DWT of every frame's pair, ``nb`` row blocks each; ``rm1`` (n, w) is
    each frame's reference source row -1."""
    n, hh = rd.shape[0], rd.shape[2]
    for task in prange(n * nb):
        f, b = task // nb, task % nb
        i0, i1 = b * hh // nb, (b + 1) * hh // nb
        _dwt123_rows(ra[f], da[f], rd[f], dd[f], ran[f], dan[f], iy, ix, vp, hp, rm1[f], need_a,
                     i0, i1)  # fmt: skip


@njit(parallel=True, **_JIT)
def _dwt0_one(srcs, det, a, iy, ix, rnd, sh, lo_only, nb):  # noqa: ANN001, ANN202 - jitted
    """Scale-0 DWT of every frame of one input, ``nb`` row blocks each."""
    n, hh = a.shape[0], a.shape[1]
    for task in prange(n * nb):
        f, b = task // nb, task % nb
        i0, i1 = b * hh // nb, (b + 1) * hh // nb
        _dwt0_rows(srcs[f], det[f], a[f], iy, ix, rnd, sh, lo_only, i0, i1)


@njit(parallel=True, **_JIT)
def _dwt123_ref_stage(ra, rd, ran, iy, ix, vp, hp, rm1, need_a, last, nb):  # noqa: ANN001, ANN202 - jitted
    """:func:`_dwt123_ref_rows` of every frame, ``nb`` row blocks each."""
    n, hh = rd.shape[0], rd.shape[2]
    for task in prange(n * nb):
        f, b = task // nb, task % nb
        i0, i1 = b * hh // nb, (b + 1) * hh // nb
        _dwt123_ref_rows(ra[f], rd[f], ran[f], iy, ix, vp, hp, rm1[f], need_a, last[f], i0, i1)


@njit(parallel=True, **_JIT)
def _dwt123_dis_stage(da, dd, dan, iy, ix, vp, hp, need_a, last, nb):  # noqa: ANN001, ANN202 - jitted
    """:func:`_dwt123_dis_rows` of every frame, ``nb`` row blocks each."""
    n, hh = dd.shape[0], dd.shape[2]
    for task in prange(n * nb):
        f, b = task // nb, task % nb
        i0, i1 = b * hh // nb, (b + 1) * hh // nb
        _dwt123_dis_rows(da[f], dd[f], dan[f], iy, ix, vp, hp, need_a, last[f], i0, i1)


@njit(parallel=True, **_JIT)
def _masking_stage(rb, db, prm, geo, egl, do_aim, nb, acc, s, rm1):  # noqa: ANN001, ANN202 - jitted
    """:func:`_masking_rows` of scale ``s`` of every frame, its crop in ``nb`` row blocks,
    into ``acc[:, s]``; with ``rm1`` (n, w) not empty, also each frame's scale-3 source
    row -1 (:func:`_scale3_row_m1`, at scale 0)."""
    n = rb.shape[0]
    top, bot = geo[_G_TOP], geo[_G_BOT]
    part = np.zeros((n, nb, _ACC_COUNT), np.int64)
    for task in prange(n * nb):
        f, b = task // nb, task % nb
        if b == 0 and rm1.shape[1] > 0:
            _scale3_row_m1(rb[f], db[f], prm, geo, egl, do_aim, rm1.shape[1], rm1[f])
        i0 = top + b * (bot - top) // nb
        i1 = top + (b + 1) * (bot - top) // nb
        _masking_rows(rb[f], db[f], prm, geo, egl, do_aim, i0, i1, part[f, b])
    for f in range(n):
        for b in range(nb):
            for k in range(_ACC_COUNT):
                acc[f, s, k] += part[f, b, k]


# --- Python side -------------------------------------------------------------------------


class _Plan:
    """Everything the kernels read about one frame size, bit depth and option set."""

    def __init__(self, width: int, height: int, bitdepth: int, opts: AdmOptions) -> None:
        self.width, self.height = width, height
        self.geoms = scale_geometries(width, height, opts)
        vp0 = C.DWT0_VP_8BIT if bitdepth == 8 else (1 << (bitdepth - 1), bitdepth)
        self.vp = np.array(
            [*vp0, *(x for p in C.DWT_S123_VP for x in p), *(x for p in C.DWT_S123_HP for x in p)],
            dtype=np.int64,
        )
        self.geo = np.array(
            [(*g.shape, *g.crop, *g.src_shape, *g.region) for g in self.geoms], dtype=np.int64
        )
        if self.geo.shape != (4, _G_COUNT):
            raise RuntimeError("admcuda.compiled.adm: unexpected ScaleGeometry layout")
        self.prm = np.array([g.params for g in self.geoms], dtype=np.int64)
        self.iys = tuple(src_indices(g.src_shape[0]) for g in self.geoms)
        self.ixs = tuple(src_indices(g.src_shape[1]) for g in self.geoms)
        self.egl = float(opts.adm_enhn_gain_limit)
        self.skip0 = bool(opts.adm_skip_scale0)
        self.do_aim = not opts.adm_skip_aim
        # The scale-3 DWT's source row -1 is the scale-0 CSF row (reference.adm.stages).
        self.tiny = self.geoms[3].src_shape[0] <= 4 and not self.skip0
        # Band buffers of one frame (_workspace): int16 details at scale 0, int32 above,
        # and the int32 approximations.
        area = [int(hh) * int(ww) for hh, ww in self.geo[:, :2]]
        self.frame_bytes = 2 * (6 * area[0] + 4 * area[0] + sum(16 * a for a in area[1:]))


@functools.lru_cache(maxsize=32)
def _cached_plan(width: int, height: int, bitdepth: int, opts: AdmOptions) -> _Plan:
    return _Plan(width, height, bitdepth, opts)


def _plan(width: int, height: int, bitdepth: int, opts: AdmOptions) -> _Plan:
    try:
        return _cached_plan(width, height, bitdepth, opts)
    except TypeError:  # options that cannot be hashed
        return _Plan(width, height, bitdepth, opts)


def _check(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: AdmOptions | None):
    opts = AdmOptions() if opts is None else opts
    check_frame(ref, dis, bitdepth)
    geometry = opts.adm_norm_view_dist * opts.adm_ref_display_height
    if geometry < C.DEFAULT_NORM_VIEW_DIST * C.DEFAULT_REF_DISPLAY_HEIGHT:
        raise ValueError("adm_norm_view_dist * adm_ref_display_height must be at least 3.0 * 1080")
    return opts


def adm_accumulators(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: AdmOptions | None = None
) -> np.ndarray:
    """One frame pair's integer accumulators, as the CUDA engine's ``accumulators``.

    Parameters
    ----------
    ref, dis : numpy.ndarray
        2-D luma planes, uint8 at 8 bits and uint16 above.
    bitdepth : int
        8, 10, 12 or 16.
    opts : AdmOptions, optional
        libvmaf's ADM options (default ``AdmOptions()``).

    Returns
    -------
    numpy.ndarray
        (4, ACC_COUNT) int64: per scale the masking sums of the numerator and of AIM and
        the denominator sums (uint64 bit patterns), each (h, v, d) at
        ``admcuda.kernel_loader.ACC_OFFSETS``; zero where a scale or AIM is
        skipped. Computed on all of Numba's threads.
    """
    return adm_accumulators_batch(np.asarray(ref)[None], np.asarray(dis)[None], bitdepth, opts)[0]


def adm_accumulators_batch(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: AdmOptions | None = None
) -> np.ndarray:
    """:func:`adm_accumulators` of every frame of two (n, h, w) stacks: (n, 4,
    ACC_COUNT) int64. Frames run across Numba's threads, or, with fewer frames than
    threads, each frame's row blocks do."""
    ref, dis = np.asarray(ref), np.asarray(dis)
    if ref.ndim != 3 or ref.shape != dis.shape:
        raise ValueError(
            f"reference {ref.shape} and distorted {dis.shape} must be (n, h, w) stacks of one size"
        )
    n = ref.shape[0]
    if n:
        opts = _check(ref[0], dis[0], bitdepth, opts)
    else:
        opts = _check(np.empty(ref.shape[1:], ref.dtype), np.empty(dis.shape[1:], dis.dtype),
                      bitdepth, opts)  # fmt: skip
    plan = _plan(ref.shape[2], ref.shape[1], bitdepth, opts)
    ref, dis = np.ascontiguousarray(ref), np.ascontiguousarray(dis)
    acc = np.zeros((n, 4, _ACC_COUNT), dtype=np.int64)
    threads = get_num_threads()
    # A frame per thread at a time, as many as _CHUNK_BYTES of bands hold.
    chunk = max(min(threads, _CHUNK_BYTES // plan.frame_bytes), 1)
    for c0 in range(0, n, chunk):
        c1 = min(c0 + chunk, n)
        _chunk(ref[c0:c1], dis[c0:c1], plan, acc[c0:c1], threads)
    return acc


def adm_accumulators_ladder(
    ref: np.ndarray, dis: list[np.ndarray], bitdepth: int, opts: AdmOptions | None = None
) -> list[np.ndarray]:
    """:func:`adm_accumulators_batch` of ``ref`` against each of ``dis`` (a ladder's
    rungs, (n, h, w) stacks of one size), the reference's wavelet levels computed once
    for all of them: the same arrays, one per rung."""
    ref = np.asarray(ref)
    dis = [np.asarray(d) for d in dis]
    if len(dis) < 2 or ref.ndim != 3 or ref.shape[0] == 0:
        return [adm_accumulators_batch(ref, d, bitdepth, opts) for d in dis]
    for d in dis:
        if d.shape != ref.shape:
            raise ValueError(
                f"reference {ref.shape} and distorted {d.shape} must be (n, h, w) stacks of "
                "one size"
            )
        opts = _check(ref[0], d[0], bitdepth, opts)
    plan = _plan(ref.shape[2], ref.shape[1], bitdepth, opts)
    if plan.tiny:  # frames 17..32 high: the reference's scale 3 reads each pair's row -1
        return [adm_accumulators_batch(ref, d, bitdepth, opts) for d in dis]
    n = ref.shape[0]
    ref = np.ascontiguousarray(ref)
    dis = [np.ascontiguousarray(d) for d in dis]
    accs = [np.zeros((n, 4, _ACC_COUNT), dtype=np.int64) for _ in dis]
    threads = get_num_threads()
    chunk = max(min(threads, _CHUNK_BYTES // plan.frame_bytes), 1)
    for c0 in range(0, n, chunk):
        c1 = min(c0 + chunk, n)
        _chunk_ladder(ref[c0:c1], [d[c0:c1] for d in dis], plan, [a[c0:c1] for a in accs],
                      threads)  # fmt: skip
    return accs


def _chunk_ladder(
    ref: np.ndarray, dis: list[np.ndarray], plan: _Plan, accs: list[np.ndarray], threads: int
) -> None:
    """:func:`_chunk` for several distorted inputs: the reference's levels first, kept
    in the workspace, then each input's levels and masking passes."""
    n = ref.shape[0]
    nb = -(-2 * threads // n) if n < threads else 1
    g = plan.geo
    levels, m1, _ = _workspace(plan, n)
    last = [np.empty((n, g[s, _G_HH]), np.int32) for s in range(4)]
    rd, _, ra, _ = levels[0]
    _dwt0_one(ref, rd, ra, plan.iys[0], plan.ixs[0], plan.vp[0], plan.vp[1], plan.skip0,
              min(nb, g[0, _G_HH]))  # fmt: skip
    for s in range(1, 4):
        rd, _, ran, _ = levels[s]
        vv, hp = plan.vp[2 * s : 2 * s + 2], plan.vp[6 + 2 * s : 8 + 2 * s]
        _dwt123_ref_stage(ra, rd, ran, plan.iys[s], plan.ixs[s], vv, hp, m1[s], s < 3, last[s],
                          min(nb, g[s, _G_HH]))  # fmt: skip
        ra = ran
    for d, acc in zip(dis, accs, strict=True):
        rd, dd, _, da = levels[0]
        _dwt0_one(d, dd, da, plan.iys[0], plan.ixs[0], plan.vp[0], plan.vp[1], plan.skip0,
                  min(nb, g[0, _G_HH]))  # fmt: skip
        if not plan.skip0:
            _masking_stage(rd, dd, plan.prm[0], g[0], plan.egl, plan.do_aim,
                           _mask_blocks(g[0], nb), acc, 0, _NO_ROWS)  # fmt: skip
        for s in range(1, 4):
            rd, dd, _, dan = levels[s]
            vv, hp = plan.vp[2 * s : 2 * s + 2], plan.vp[6 + 2 * s : 8 + 2 * s]
            _dwt123_dis_stage(da, dd, dan, plan.iys[s], plan.ixs[s], vv, hp, s < 3, last[s],
                              min(nb, g[s, _G_HH]))  # fmt: skip
            _masking_stage(rd, dd, plan.prm[s], g[s], plan.egl, plan.do_aim,
                           _mask_blocks(g[s], nb), acc, s, _NO_ROWS)  # fmt: skip
            da = dan


def _workspace(plan: _Plan, n: int) -> tuple:
    """Band buffers of ``n`` frames, kept per thread for the next call of the same
    geometry: fresh pages each call cost the kernels about a tenth of their time."""
    key = (id(plan), n)
    held = getattr(_HELD, "work", None)
    if held is not None and held[0] == key:
        return held[1]
    g = plan.geo
    hh, ww = g[0, _G_HH], g[0, _G_WW]
    rd = np.empty((n, 3, 0 if plan.skip0 else hh, ww), np.int16)
    ra = np.empty((n, hh, ww), np.int32)
    levels = [(rd, np.empty_like(rd), ra, np.empty_like(ra))]
    for s in range(1, 4):
        hh, ww = g[s, _G_HH], g[s, _G_WW]
        rd = np.empty((n, 3, hh, ww), np.int32)
        ra = np.empty((n, hh if s < 3 else 0, ww), np.int32)
        levels.append((rd, np.empty_like(rd), ra, np.empty_like(ra)))
    # Source row -1 of each level's DWT: zero, but at scale 3 of frames 17..32 high.
    m1 = tuple(np.zeros((n, g[s, _G_SW]), np.int32) for s in range(4))
    work = (tuple(levels), m1, plan)  # the plan is held so that its id stays unique
    _HELD.work = (key, work)
    return work


def _chunk(ref: np.ndarray, dis: np.ndarray, plan: _Plan, acc: np.ndarray, threads: int) -> None:
    """Every stage of a few frames, each stage's (frame, row block) tasks across threads."""
    n = ref.shape[0]
    # Row blocks per frame: enough tasks for every thread; one block (no masking rows
    # decoupled twice at block edges) where frames alone are enough.
    nb = -(-2 * threads // n) if n < threads else 1
    g = plan.geo
    levels, m1, _ = _workspace(plan, n)
    rd, dd, ra, da = levels[0]
    _dwt0_stage(ref, dis, rd, dd, ra, da, plan.iys[0], plan.ixs[0], plan.vp[0], plan.vp[1],
                plan.skip0, min(nb, g[0, _G_HH]))  # fmt: skip
    if not plan.skip0:
        _masking_stage(rd, dd, plan.prm[0], g[0], plan.egl, plan.do_aim, _mask_blocks(g[0], nb),
                       acc, 0, m1[3] if plan.tiny else _NO_ROWS)  # fmt: skip
    for s in range(1, 4):
        rd, dd, ran, dan = levels[s]
        vv, hp = plan.vp[2 * s : 2 * s + 2], plan.vp[6 + 2 * s : 8 + 2 * s]
        _dwt123_stage(ra, da, rd, dd, ran, dan, plan.iys[s], plan.ixs[s], vv, hp, m1[s], s < 3,
                      min(nb, g[s, _G_HH]))  # fmt: skip
        _masking_stage(rd, dd, plan.prm[s], g[s], plan.egl, plan.do_aim, _mask_blocks(g[s], nb),
                       acc, s, _NO_ROWS)  # fmt: skip
        ra, da = ran, dan


_HELD = threading.local()
_NO_ROWS = np.zeros((0, 0), np.int32)


def _mask_blocks(geo: np.ndarray, nb: int) -> int:
    """Row blocks of a scale's crop: at most ``nb``, of at least _MIN_BLOCK_ROWS rows."""
    return max(min(nb, int(geo[_G_BOT] - geo[_G_TOP]) // _MIN_BLOCK_ROWS), 1)


def compute_adm_batch(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: AdmOptions | None = None
) -> dict[str, np.ndarray]:
    """The 18 outputs of every frame of two (n, h, w) stacks, keyed by libvmaf's base
    names (``reference.adm.ALL_FEATURES``), each a float64 array of length n."""
    opts = AdmOptions() if opts is None else opts
    acc = adm_accumulators_batch(ref, dis, bitdepth, opts)
    h, w = np.shape(ref)[1:]
    return finish_batch(acc, _plan(w, h, bitdepth, opts).geoms, opts, w, h)


def compute_adm(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: AdmOptions | None = None
) -> dict[str, float]:
    """All 18 integer ADM outputs for one luma pair, equal bit for bit to
    :func:`reference.adm.compute_adm` (NaN where it gives NaN)."""
    out = compute_adm_batch(np.asarray(ref)[None], np.asarray(dis)[None], bitdepth, opts)
    return {k: float(v[0]) for k, v in out.items()}

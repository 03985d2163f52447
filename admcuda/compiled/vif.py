"""libvmaf's integer VIF as Numba kernels (:mod:`reference.vif`, :mod:`reference.vif_filters`).

The integers of :func:`reference.vif.vif_residuals`, per frame and scale, restructured as
``kernels/vif.cu`` is: per row of a scale, the vertical pass (:func:`_vertical`, tap pairs
outer and columns inner) fills five uint32 row buffers (libvmaf's ``mu1, mu2, ref, dis,
ref_dis``), their columns are mirrored, the horizontal pass gives each pixel's
``sigma1_sq, sigma2_sq, sigma12`` (:func:`_horizontal_sigma`), and :func:`_residuals`
adds them to the four int64 accumulators. The decimation between scales
(``subsample_rd_8`` / ``subsample_rd_16``, :func:`_decimate_rows`) filters the even rows
and columns only, the ones it keeps.

Compilation. The helpers are inlined (``inline="always"``) into four cached entry points,
one per input type and stage (:func:`_statistic_8`, :func:`_statistic_16`,
:func:`_decimate_8`, :func:`_decimate_16`), each scale's taps a constant in them; Numba
re-optimises every compiled callee inside each caller, so a deeper tree of compiled
functions, or ``parallel=True`` drivers around them, multiplies the first compile.
Threads are Python threads over row blocks or whole frames (the kernels release the
GIL): no parallel compile, and safe to call from several threads at once.

Borders go through tables made by :func:`reference.vif_filters.mirror_indices` (the
in-place reflection libvmaf performs), so every side of 2 samples or more mirrors as
libvmaf's does: frames need 16x16 (:data:`VIF_MIN_SIDE`), scale 3 being a quarter of a
side, rounded down three times; the reference scores smaller ones.

Vectorising. Every per-column loop vectorises (AVX-512 where the CPU has it); what it
takes: few arrays a loop (8-bit scale 0's vertical pass takes two tap pairs a pass,
:func:`_v8_pair2`); taps that are constants, the vertical tap pairs spelled out one call
each (:func:`_vertical_8`, :func:`_decimate_rows`), so that sums that
fit in 32 bits are computed in 32-bit lanes, 16 a vector, their products cast back to
uint32 (Numba widens them to int64 otherwise, and so does LLVM with a tap read at run
time); the per-pixel statistic (:func:`_residuals`) branch free, both sides of
``sigma_nsq`` computed and selected, with the log table as int32 so that it is gathered;
no ``min``/``max`` builtins in inlined helpers (calls when the vectoriser runs).

Exactness. Sums that stay below 2**32 are computed in uint32: the means (``65535 *
65536``), the decimation's rounding included, and every sum of 8-bit scale 0's vertical
pass (``255**2 * 65536``). The second moments' other sums are int64 (below 2**49). Each
is stored to the reference's unsigned type, which wraps it as its C does (a stored
uint32 keeps the low 32 bits of its sum whatever order the taps came in). The double steps keep
the reference's order (``g = c / (a + eps)``, ``sv = b - g * c``, truncation, ``g =
min(g, egl)``, ``(g * g) * a`` truncated) and are compiled without fastmath, so nothing
is contracted into a fused multiply-add. The accumulators are int64 sums, so threads
over row blocks add them in any order exactly.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from admcuda.reference import vif_constants as V
from admcuda.reference.vif import log_generate
from admcuda.reference.vif_filters import mirror_indices

__all__ = ["VIF_MIN_SIDE", "vif_accumulators", "vif_accumulators_batch"]

VIF_MIN_SIDE = 16  # scale 3 at least 2 samples each way: every border is a plain mirror

# Each scale's taps, a compile-time constant where a kernel names it (the tap loops unroll).
_F0, _F1, _F2, _F3 = V.VIF_FILTERS
_HALF = tuple(n // 2 for n in V.VIF_FILTER_WIDTHS)
_NSQ = V.SIGMA_NSQ
_EPS = V.EPS
_DEN_OFFSET = V.DEN_LOG_OFFSET
_LOG2_ONE = V.LOG2_ONE
_TOP_SHIFT = 64 - V.LOG2_BITS  # log2_64 keeps the top LOG2_BITS bits: k = bits - 16
_HP_RND, _HP_SHIFT = V.HP
_VP8_RND, _VP8_SHIFT = V.VP_8BIT
_MU_RND, _MU_SHIFT = V.MU_PRODUCT
_U32 = 0xFFFFFFFF
_U16 = 0xFFFF
_I32_BIAS = 1 << 31
_ACC = 4  # num_log, den_log, num_non_log, den_non_log
_ROWS_PER_BLOCK = 32  # rows of a scale per work item when threads share a frame
if V.N_SCALES != 4 or _HALF != (8, 4, 2, 1) or V.PAD_ROWS != (8, 8, 4, 2):
    raise RuntimeError("admcuda.compiled.vif spells out libvmaf's four VIF scales")


@functools.cache
def _log2_table() -> np.ndarray:
    # int32, a writable copy: one array type for every kernel, compiled once, and entries
    # that AVX-512 gathers load (it has no 16-bit gather)
    return np.array(log_generate(), np.int32)


# --- one row of a scale -----------------------------------------------------------------------


# Each inner loop touches few arrays: with more, LLVM's vectoriser gives up on the runtime
# checks that they do not overlap, and the loop runs a sample at a time.


@njit(inline="always", nogil=True, error_model="numpy")
def _v_first(x, t, m, sq):
    """Centre tap of a plane's mean and square sums (``m``, ``sq``) over one row ``x``."""
    for j in range(x.shape[0]):
        a = np.int64(x[j])
        m[j] = t * a
        sq[j] = t * (a * a)


@njit(inline="always", nogil=True, error_model="numpy")
def _v_pair(xa, xb, t, m, sq):
    """A pair of mirrored taps ``t`` of a plane's mean and square sums."""
    for j in range(xa.shape[0]):
        a0 = np.int64(xa[j])
        a1 = np.int64(xb[j])
        m[j] += t * (a0 + a1)
        sq[j] += t * (a0 * a0 + a1 * a1)


@njit(inline="always", nogil=True, error_model="numpy")
def _v_cross_first(x, y, t, xy):
    for j in range(x.shape[0]):
        xy[j] = t * (np.int64(x[j]) * np.int64(y[j]))


@njit(inline="always", nogil=True, error_model="numpy")
def _v_cross_pair(xa, xb, ya, yb, t, xy):
    for j in range(xa.shape[0]):
        xy[j] += t * (np.int64(xa[j]) * np.int64(ya[j]) + np.int64(xb[j]) * np.int64(yb[j]))


@njit(inline="always", nogil=True, error_model="numpy")
def _vertical(ref, dis, taps, tab, ro, i, m1, m2, xx, yy, xy):
    """Row ``i`` of the vertical pass's sums, unrounded: means into uint32 ``m1``, ``m2``
    (no wrap: ``65535 * 65536 < 2**32``), second moments into ``xx``, ``yy``, ``xy``
    (uint32 at 8 bits, where ``255**2 * 65536 < 2**32``; int64 above, below 2**49)."""
    half = len(taps) // 2
    r = tab[ro + i]
    t = taps[half]
    _v_first(ref[r], t, m1, xx)
    _v_first(dis[r], t, m2, yy)
    _v_cross_first(ref[r], dis[r], t, xy)
    for k in range(half):
        t = taps[k]
        ra = tab[ro + i - half + k]
        rb = tab[ro + i + half - k]
        _v_pair(ref[ra], ref[rb], t, m1, xx)
        _v_pair(dis[ra], dis[rb], t, m2, yy)
        _v_cross_pair(ref[ra], ref[rb], dis[ra], dis[rb], t, xy)


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_first(x, t, m, sq):
    """:func:`_v_first` of uint8 samples in 32-bit lanes: every sum of 8-bit scale 0 stays
    below 2**32 (``255**2 * 65536``), so its products are cast back to uint32 (Numba
    would carry them in int64, half as many a vector)."""
    tt = np.uint32(t)
    for j in range(x.shape[0]):
        a = np.uint32(x[j])
        m[j] = np.uint32(tt * a)
        sq[j] = np.uint32(tt * np.uint32(a * a))


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_pair(xa, xb, t, m, sq):
    tt = np.uint32(t)
    for j in range(xa.shape[0]):
        a0 = np.uint32(xa[j])
        a1 = np.uint32(xb[j])
        m[j] = np.uint32(m[j] + np.uint32(tt * np.uint32(a0 + a1)))
        q = np.uint32(np.uint32(a0 * a0) + np.uint32(a1 * a1))
        sq[j] = np.uint32(sq[j] + np.uint32(tt * q))


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_cross_first(x, y, t, xy):
    tt = np.uint32(t)
    for j in range(x.shape[0]):
        xy[j] = np.uint32(tt * np.uint32(np.uint32(x[j]) * np.uint32(y[j])))


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_cross_pair(xa, xb, ya, yb, t, xy):
    tt = np.uint32(t)
    for j in range(xa.shape[0]):
        p0 = np.uint32(np.uint32(xa[j]) * np.uint32(ya[j]))
        p1 = np.uint32(np.uint32(xb[j]) * np.uint32(yb[j]))
        xy[j] = np.uint32(xy[j] + np.uint32(tt * np.uint32(p0 + p1)))


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_pair2(xa, xb, xc, xd, ta, tb, m, sq):
    """Two tap pairs of :func:`_v8_pair` in one pass (``xa, xb`` with tap ``ta``, ``xc,
    xd`` with ``tb``): half the loads and stores of the sums."""
    t0 = np.uint32(ta)
    t1 = np.uint32(tb)
    for j in range(xa.shape[0]):
        a0 = np.uint32(xa[j])
        a1 = np.uint32(xb[j])
        a2 = np.uint32(xc[j])
        a3 = np.uint32(xd[j])
        u = np.uint32(np.uint32(t0 * np.uint32(a0 + a1)) + np.uint32(t1 * np.uint32(a2 + a3)))
        m[j] = np.uint32(m[j] + u)
        q0 = np.uint32(np.uint32(a0 * a0) + np.uint32(a1 * a1))
        q1 = np.uint32(np.uint32(a2 * a2) + np.uint32(a3 * a3))
        sq[j] = np.uint32(sq[j] + np.uint32(np.uint32(t0 * q0) + np.uint32(t1 * q1)))


@njit(inline="always", nogil=True, error_model="numpy")
def _v8_taps(ref, dis, tab, ro, i, k, m1, m2, xx, yy, xy):
    """Tap pairs ``k`` and ``k + 1`` of :func:`_vertical_8`; ``k`` a literal at every
    call, so that the taps are constants and their products stay 32-bit (a tap read from
    a table at run time is an int64 for LLVM, and so is every product)."""
    half = len(_F0) // 2
    ra = tab[ro + i - half + k]
    rb = tab[ro + i + half - k]
    rc = tab[ro + i - half + k + 1]
    rd = tab[ro + i + half - k - 1]
    _v8_pair2(ref[ra], ref[rb], ref[rc], ref[rd], _F0[k], _F0[k + 1], m1, xx)
    _v8_pair2(dis[ra], dis[rb], dis[rc], dis[rd], _F0[k], _F0[k + 1], m2, yy)
    _v8_cross_pair(ref[ra], ref[rb], dis[ra], dis[rb], _F0[k], xy)
    _v8_cross_pair(ref[rc], ref[rd], dis[rc], dis[rd], _F0[k + 1], xy)


@njit(inline="always", nogil=True, error_model="numpy")
def _vertical_8(ref, dis, tab, ro, i, m1, m2, xx, yy, xy):
    """:func:`_vertical` of 8-bit scale 0 (taps ``_F0``), every sum in uint32."""
    r = tab[ro + i]
    t = _F0[8]
    _v8_first(ref[r], t, m1, xx)
    _v8_first(dis[r], t, m2, yy)
    _v8_cross_first(ref[r], dis[r], t, xy)
    _v8_taps(ref, dis, tab, ro, i, 0, m1, m2, xx, yy, xy)
    _v8_taps(ref, dis, tab, ro, i, 2, m1, m2, xx, yy, xy)
    _v8_taps(ref, dis, tab, ro, i, 4, m1, m2, xx, yy, xy)
    _v8_taps(ref, dis, tab, ro, i, 6, m1, m2, xx, yy, xy)


@njit(inline="always", nogil=True, error_model="numpy")
def _round_means(m, rnd, shift, mask):
    for j in range(m.shape[0]):
        m[j] = ((np.int64(m[j]) + rnd) >> shift) & mask


@njit(inline="always", nogil=True, error_model="numpy")
def _round_moment(q, rnd, shift, out):
    for j in range(q.shape[0]):
        out[j] = ((q[j] + rnd) >> shift) & _U32


@njit(inline="always", nogil=True, error_model="numpy")
def _mirror_row(buf, tab, co, w, half):
    """Fill the ``half`` slots each side of a padded row buffer (``buf[half + p]`` holds
    column ``p``) from the column table at ``tab[co + p]``."""
    for p in range(1, half + 1):
        buf[half - p] = buf[half + tab[co - p]]
        buf[half + w - 1 + p] = buf[half + tab[co + w - 1 + p]]


@njit(inline="always", nogil=True, error_model="numpy")
def _h_mean(taps, m, mu, w):
    """Horizontal pass of a mean: uint32 sums (no wrap: the vertical means are below
    2**16) of the padded row ``m``, in 32-bit lanes (the taps constants, the products
    cast back to uint32)."""
    half = len(taps) // 2
    two = 2 * half
    for j in range(w):
        u = np.uint32(np.uint32(taps[half]) * m[j + half])
        for k in range(half):
            p = np.uint32(m[j + k] + m[j + two - k])
            u = np.uint32(u + np.uint32(np.uint32(taps[k]) * p))
        mu[j] = u


@njit(inline="always", nogil=True, error_model="numpy")
def _h_sigma(taps, mom, mu_a, mu_b, w, sigma):
    """Horizontal pass of a second moment (uint64 sums rounded by ``HP`` to uint32), less
    its rounded product of means ``((uint64)mu_a * mu_b + 2**31) >> 32``, in uint32 read
    as int32 (:func:`reference.vif.vif_sigma`). Mirrored taps are added before their
    multiply (two uint32 fit in int64)."""
    half = len(taps) // 2
    two = 2 * half
    for j in range(w):
        u = taps[half] * np.int64(mom[j + half])
        for k in range(half):
            u += taps[k] * (np.int64(mom[j + k]) + np.int64(mom[j + two - k]))
        m = ((u + _HP_RND) >> _HP_SHIFT) & _U32
        p = (np.uint64(mu_a[j]) * np.uint64(mu_b[j]) + np.uint64(_MU_RND)) >> np.uint64(_MU_SHIFT)
        d = m - np.int64(p)
        sigma[j] = ((d + _I32_BIAS) & _U32) - _I32_BIAS


@njit(inline="always", nogil=True, error_model="numpy")
def _horizontal_sigma(taps, bufs, mu, s, w):
    """:func:`reference.vif.vif_horizontal` and :func:`reference.vif.vif_sigma` of one row
    of padded buffers ``bufs`` (mu1, mu2, ref, dis, ref_dis): ``s`` gets ``sigma1_sq``,
    ``sigma2_sq`` (not yet clamped) and ``sigma12``; ``mu`` holds the filtered means."""
    _h_mean(taps, bufs[0], mu[0], w)
    _h_mean(taps, bufs[1], mu[1], w)
    _h_sigma(taps, bufs[2], mu[0], mu[0], w, s[0])
    _h_sigma(taps, bufs[3], mu[1], mu[1], w, s[1])
    _h_sigma(taps, bufs[4], mu[0], mu[1], w, s[2])


@njit(inline="always", nogil=True, error_model="numpy")
def _log2(table, x):
    """libvmaf ``log2_32`` / ``log2_64`` of ``x >= 2**17``: the table entry of its top 16
    significant bits plus ``LOG2_ONE`` per bit dropped. The index is unsigned, so that
    Numba adds no negative-index wrap and the lookup vectorises as a gather."""
    k = _TOP_SHIFT - np.int64(leading_zeros(np.uint64(x)))
    return np.int64(table[np.uint64(x) >> np.uint64(k)]) + _LOG2_ONE * k


@njit(inline="always", nogil=True, error_model="numpy")
def _num_log(table, a, b, c, egl):
    """A pixel's numerator log term for gain limit ``egl``: ``log2(numer1_tmp) -
    log2(numer1)`` where ``a >= sigma_nsq``, ``b > 0`` and ``c > 0``, else 0. Branch
    free: elsewhere ``c`` and ``b`` are taken as 0 (and ``a`` as ``sigma_nsq``), which
    makes ``g = 0``, ``sv_sq = 0`` and both logs ``log2(sigma_nsq)``, the same 0."""
    ok = (a >= _NSQ) & (b > 0) & (c > 0)
    fa = np.float64(a if ok else _NSQ)
    fb = np.float64(b if ok else 0)
    fc = np.float64(c if ok else 0)
    g = fc / (fa + _EPS)
    sv = fb - g * fc
    numer1 = np.int64(sv if sv > 0.0 else 0.0) + _NSQ
    ge = g if g < egl else egl
    numer1_tmp = np.int64((ge * ge) * fa) + numer1
    return _log2(table, numer1_tmp) - _log2(table, numer1)


@njit(inline="always", nogil=True, error_model="numpy")
def _residuals(s, w, table, egls, acc):
    """:func:`reference.vif.vif_residuals` of one row (``s``: sigma1_sq, sigma2_sq before
    its clamp at 0, sigma12), added to ``acc`` (len(egls), 4): the numerator's log term
    once per gain limit, the rest alike in every row of ``acc``. Each pixel's terms are
    computed whichever side of ``sigma_nsq`` it falls and selected, so that the loops
    vectorise (divisions, conversions, ``lzcnt`` and table gathers, 8 pixels a vector).
    No ``min``/``max`` here: inlined, Numba's builtins are calls when LLVM's vectoriser
    runs, and it gives up on the loop."""
    ne = egls.shape[0]
    s1, s2, s12 = s[0], s[1], s[2]
    den_log = 0
    num_non_log = 0
    den_non_log = 0
    for j in range(w):
        a = s1[j]
        big = a >= _NSQ
        la = _log2(table, (a if big else _NSQ) + _NSQ) - _DEN_OFFSET
        den_log += la if big else 0
        num_non_log += 0 if big else (s2[j] if s2[j] > 0 else 0)
        den_non_log += 0 if big else 1
    for e in range(ne):
        egl = egls[e]
        num_log = 0
        for j in range(w):
            num_log += _num_log(table, s1[j], s2[j] if s2[j] > 0 else 0, s12[j], egl)
        acc[e, 0] += num_log
    for e in range(ne):
        acc[e, 1] += den_log
        acc[e, 2] += num_non_log
        acc[e, 3] += den_non_log


@njit(inline="always", nogil=True, error_model="numpy")
def _rows_8(ref, dis, tab, ro, co, table, egls, r0, r1, acc):
    """Rows ``r0 .. r1 - 1`` of ``vif_statistic_8`` (8-bit scale 0), added to ``acc``
    (len(egls), 4). The vertical pass's sums are the row buffers: only the means are
    rounded, by ``VP_8BIT``."""
    w = ref.shape[1]
    half = len(_F0) // 2
    end = half + w
    bufs = np.empty((5, w + 2 * half), np.uint32)
    mu = np.empty((2, w), np.uint32)
    s = np.empty((3, w), np.int64)
    for i in range(r0, r1):
        _vertical_8(ref, dis, tab, ro, i, bufs[0, half:end], bufs[1, half:end],
                    bufs[2, half:end], bufs[3, half:end], bufs[4, half:end])  # fmt: skip
        _round_means(bufs[0, half:end], _VP8_RND, _VP8_SHIFT, _U32)
        _round_means(bufs[1, half:end], _VP8_RND, _VP8_SHIFT, _U32)
        for b in range(5):
            _mirror_row(bufs[b], tab, co, w, half)
        _horizontal_sigma(_F0, bufs, mu, s, w)
        _residuals(s, w, table, egls, acc)


@njit(inline="always", nogil=True, error_model="numpy")
def _rows_16(ref, dis, taps, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc):
    """Rows ``r0 .. r1 - 1`` of ``vif_statistic_16`` with ``taps``, added to ``acc``: the
    means rounded by ``(mrnd, msh)`` and cast to uint16, the second moments summed in
    int64, rounded by ``(qrnd, qsh)`` and cast to uint32."""
    w = ref.shape[1]
    half = len(taps) // 2
    end = half + w
    bufs = np.empty((5, w + 2 * half), np.uint32)
    q = np.empty((3, w), np.int64)
    mu = np.empty((2, w), np.uint32)
    s = np.empty((3, w), np.int64)
    for i in range(r0, r1):
        _vertical(ref, dis, taps, tab, ro, i, bufs[0, half:end], bufs[1, half:end],
                  q[0], q[1], q[2])  # fmt: skip
        _round_means(bufs[0, half:end], mrnd, msh, _U16)
        _round_means(bufs[1, half:end], mrnd, msh, _U16)
        for b in range(3):
            _round_moment(q[b], qrnd, qsh, bufs[2 + b, half:end])
        for b in range(5):
            _mirror_row(bufs[b], tab, co, w, half)
        _horizontal_sigma(taps, bufs, mu, s, w)
        _residuals(s, w, table, egls, acc)


@njit(inline="always", nogil=True, error_model="numpy")
def _d_pair(src, taps, tab, ro, i, k, acc):
    """Tap pair ``k`` of :func:`_decimate_rows`'s vertical sums, in 32-bit lanes; ``k`` a
    literal below ``half`` at every call (the index is guarded so that Numba types it for
    every scale's taps; the guard folds away)."""
    half = len(taps) // 2
    t = np.uint32(taps[k if k < half else half])
    xa = src[tab[ro + i - half + k]]
    xb = src[tab[ro + i + half - k]]
    for j in range(acc.shape[0]):
        acc[j] = np.uint32(acc[j] + np.uint32(t * np.uint32(np.uint32(xa[j]) + np.uint32(xb[j]))))


@njit(inline="always", nogil=True, error_model="numpy")
def _decimate_rows(src, taps, mrnd, msh, mask, tab, ro, co, dst, o0, o1):
    """Rows ``o0 .. o1 - 1`` of a decimated plane ``dst`` (``subsample_rd_8`` /
    ``subsample_rd_16``): ``src`` filtered with the next scale's taps at its even rows
    (rounded by ``(mrnd, msh)``, masked by ``mask``: uint16 or uint32) and even columns
    (rounded by ``HP``). No sum wraps and none exceeds 32 bits, rounding included
    (``65535 * 65536 + 2**15 < 2**32``): the sums are uint32, the taps constants."""
    w = src.shape[1]
    ow = dst.shape[1]
    half = len(taps) // 2
    two = 2 * half
    acc = np.empty(w, np.uint32)
    v = np.empty(w + two, np.uint32)
    for oi in range(o0, o1):
        i = 2 * oi
        x = src[tab[ro + i]]
        t = np.uint32(taps[half])
        for j in range(w):
            acc[j] = np.uint32(t * np.uint32(x[j]))
        _d_pair(src, taps, tab, ro, i, 0, acc)
        if half > 1:
            _d_pair(src, taps, tab, ro, i, 1, acc)
        if half > 2:
            _d_pair(src, taps, tab, ro, i, 2, acc)
            _d_pair(src, taps, tab, ro, i, 3, acc)
        for j in range(w):
            v[half + j] = ((np.int64(acc[j]) + mrnd) >> msh) & mask
        _mirror_row(v, tab, co, w, half)
        out = dst[oi]
        for oj in range(ow):
            c = 2 * oj
            u = np.uint32(np.uint32(taps[half]) * v[c + half])
            for k in range(half):
                p = np.uint32(v[c + k] + v[c + two - k])
                u = np.uint32(u + np.uint32(np.uint32(taps[k]) * p))
            out[oj] = np.uint32(u + np.uint32(_HP_RND)) >> np.uint32(_HP_SHIFT)


# --- compiled entry points: one per input type, each scale's taps inlined as constants ---------


@njit(cache=True, nogil=True, error_model="numpy")
def _statistic_8(ref, dis, tab, ro, co, table, egls, r0, r1, acc):
    """Rows ``r0 .. r1 - 1`` of 8-bit scale 0's statistic."""
    _rows_8(ref, dis, tab, ro, co, table, egls, r0, r1, acc)


@njit(cache=True, nogil=True, error_model="numpy")
def _statistic_16(scale, ref, dis, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc):
    """Rows ``r0 .. r1 - 1`` of scale ``scale``'s statistic on uint16 planes."""
    if scale == 0:
        _rows_16(ref, dis, _F0, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc)
    elif scale == 1:
        _rows_16(ref, dis, _F1, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc)
    elif scale == 2:
        _rows_16(ref, dis, _F2, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc)
    else:
        _rows_16(ref, dis, _F3, mrnd, msh, qrnd, qsh, tab, ro, co, table, egls, r0, r1, acc)


@njit(cache=True, nogil=True, error_model="numpy")
def _decimate_8(src, tab, ro, co, dst, o0, o1):
    """Rows ``o0 .. o1 - 1`` of ``subsample_rd_8``'s output plane ``dst``."""
    _decimate_rows(src, _F1, _VP8_RND, _VP8_SHIFT, _U32, tab, ro, co, dst, o0, o1)


@njit(cache=True, nogil=True, error_model="numpy")
def _decimate_16(scale, src, mrnd, msh, tab, ro, co, dst, o0, o1):
    """Rows ``o0 .. o1 - 1`` of ``subsample_rd_16``'s output plane ``dst`` from scale
    ``scale``."""
    if scale == 0:
        _decimate_rows(src, _F1, mrnd, msh, _U16, tab, ro, co, dst, o0, o1)
    elif scale == 1:
        _decimate_rows(src, _F2, mrnd, msh, _U16, tab, ro, co, dst, o0, o1)
    else:
        _decimate_rows(src, _F3, mrnd, msh, _U16, tab, ro, co, dst, o0, o1)


# --- host side --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _tables(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Every mirror table of a frame size in one int64 array, and ``off`` (4, 3): per
    scale the index of padded position 0 of its rows (padded by ``PAD_ROWS``), of its
    columns for its own filter, and of its columns for the next scale's filter."""
    parts: list[np.ndarray] = []
    off = np.zeros((V.N_SCALES, 3), np.int64)
    at = 0
    for s in range(V.N_SCALES):
        n_rows, n_cols = h >> s, w >> s
        pads = (
            (n_rows, V.PAD_ROWS[s]),
            (n_cols, _HALF[s]),
            (n_cols, _HALF[min(s + 1, V.N_SCALES - 1)]),
        )
        for k, (n, pad) in enumerate(pads):
            table = mirror_indices(n, pad)
            off[s, k] = at + pad
            parts.append(table)
            at += table.size
    tab = np.concatenate(parts).astype(np.int64)
    tab.setflags(write=False)
    off.setflags(write=False)
    return tab, off


def _check(ref: np.ndarray, dis: np.ndarray, bitdepth: int, egls: np.ndarray) -> None:
    if isinstance(bitdepth, bool) or not 8 <= int(bitdepth) <= 16:
        raise ValueError(f"bit depth {bitdepth!r} is not supported (8 to 16)")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if ref.dtype != want or dis.dtype != want:
        raise ValueError(
            f"{bitdepth}-bit planes must be {np.dtype(want).name}, got {ref.dtype}/{dis.dtype}"
        )
    if ref.shape != dis.shape or ref.ndim != 3:
        raise ValueError(f"reference {ref.shape} and distorted {dis.shape} differ in shape")
    h, w = ref.shape[1:]
    if w < VIF_MIN_SIDE or h < VIF_MIN_SIDE:
        raise ValueError(
            f"frame {w}x{h} is too small for the compiled VIF ({VIF_MIN_SIDE}x{VIF_MIN_SIDE} "
            "or more); the reference scores it"
        )
    if egls.ndim != 1 or not np.all(
        (egls >= V.MIN_ENHN_GAIN_LIMIT) & (egls <= V.MAX_ENHN_GAIN_LIMIT)
    ):
        raise ValueError(f"gain limits must be a 1-D array in [1, 100], got {egls!r}")


def _rounding(scale: int, bitdepth: int) -> tuple[int, int, int, int]:
    """A scale's vertical rounding of the means and of the second moments (the means'
    is also the decimation's vertical rounding)."""
    if scale == 0 and bitdepth == 8:
        return (*V.VP_8BIT, 0, 0)
    if scale == 0:
        return (*V.vp_16(bitdepth), *V.vp_sq_16(bitdepth))
    return (*V.VP_S123, *V.VP_S123)


class _Frames:
    """The planes of one scale of ``n`` frames and the stages that read them, by rows."""

    def __init__(self, refs, diss, scale: int, bitdepth: int, egls, size) -> None:
        self.refs, self.diss, self.scale, self.egls = refs, diss, scale, egls
        self.eight = scale == 0 and bitdepth == 8
        self.rounding = _rounding(scale, bitdepth)
        tab, off = _tables(*size)  # the frame's (h, w): scale s is (h >> s, w >> s)
        self.tab, (self.ro, self.co, self.dco) = tab, (int(x) for x in off[scale])

    def statistic(self, f: int, r0: int, r1: int, acc: np.ndarray) -> None:
        """Rows ``r0 .. r1 - 1`` of frame ``f``'s statistic, added to ``acc``."""
        args = (self.tab, self.ro, self.co, _log2_table(), self.egls, r0, r1, acc)
        if self.eight:
            _statistic_8(self.refs[f], self.diss[f], *args)
        else:
            _statistic_16(self.scale, self.refs[f], self.diss[f], *self.rounding, *args)

    def decimate(self, f: int, plane: int, dst: np.ndarray, o0: int, o1: int) -> None:
        """Rows ``o0 .. o1 - 1`` of frame ``f``'s next-scale plane ``dst``, ``plane`` 0 the
        reference, 1 the distorted."""
        src = (self.refs, self.diss)[plane][f]
        if self.eight:
            _decimate_8(src, self.tab, self.ro, self.dco, dst, o0, o1)
        else:
            mrnd, msh = self.rounding[:2]
            _decimate_16(self.scale, src, mrnd, msh, self.tab, self.ro, self.dco, dst, o0, o1)


def _next_planes(refs) -> tuple[np.ndarray, np.ndarray]:
    n, h, w = refs.shape
    return np.empty((n, h // 2, w // 2), np.uint16), np.empty((n, h // 2, w // 2), np.uint16)


def _frames_serial(refs, diss, bitdepth: int, egls: np.ndarray, skip0: bool, out) -> None:
    """Every scale of every frame on this thread, into ``out`` (n, len(egls), 4, 4)."""
    for f in range(refs.shape[0]):
        planes = (refs[f : f + 1], diss[f : f + 1])
        for s in range(V.N_SCALES):
            scale = _Frames(*planes, s, bitdepth, egls, refs.shape[1:])
            if not (s == 0 and skip0):
                scale.statistic(0, 0, planes[0].shape[1], out[f, :, s])
            if s + 1 < V.N_SCALES:
                planes = _next_planes(planes[0])
                for p in (0, 1):
                    scale.decimate(0, p, planes[p][0], 0, planes[p].shape[1])


def _blocks(n: int, parts: int) -> list[tuple[int, int]]:
    parts = max(1, min(parts, n))
    return [(k * n // parts, (k + 1) * n // parts) for k in range(parts)]


def _frames_by_rows(refs, diss, bitdepth, egls, skip0, out, pool, threads: int) -> None:
    """Every frame, each scale's rows shared out among ``threads`` threads (a scale's
    statistic and its decimation together; the next scale waits for both)."""
    n = refs.shape[0]
    planes = (refs, diss)
    per = -(-2 * threads // n)  # row blocks a frame, two a thread or more
    for s in range(V.N_SCALES):
        scale = _Frames(*planes, s, bitdepth, egls, refs.shape[1:])
        h = planes[0].shape[1]
        jobs = []
        if not (s == 0 and skip0):
            parts = np.zeros((n, per, len(egls), _ACC), np.int64)
            for f in range(n):
                for k, (r0, r1) in enumerate(_blocks(h, per)):
                    jobs.append((scale.statistic, (f, r0, r1, parts[f, k])))
        if s + 1 < V.N_SCALES:
            planes = _next_planes(planes[0])
            for f in range(n):
                for p in (0, 1):
                    for o0, o1 in _blocks(planes[p].shape[1], -(-per // 2)):
                        jobs.append((scale.decimate, (f, p, planes[p][f], o0, o1)))
        for job in [pool.submit(fn, *args) for fn, args in jobs]:
            job.result()
        if not (s == 0 and skip0):
            out[:, :, s] = parts.sum(axis=1)


_POOL: list[ThreadPoolExecutor] = []


def _pool() -> ThreadPoolExecutor:
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(numba.config.NUMBA_NUM_THREADS, "admcuda-vif"))
    return _POOL[0]


def _run(refs, diss, bitdepth: int, egls: np.ndarray, skip0: bool, threads: int) -> np.ndarray:
    """Every frame's accumulators, (n, len(egls), 4, 4) int64: on this thread, or whole
    frames a thread and the frames left over by rows."""
    n = refs.shape[0]
    out = np.zeros((n, egls.shape[0], V.N_SCALES, _ACC), np.int64)
    if threads <= 1 or n == 0:
        _frames_serial(refs, diss, bitdepth, egls, skip0, out)
        return out
    pool = _pool()
    whole = n - n % threads
    if whole:
        jobs = [
            pool.submit(_frames_serial, refs[a:b], diss[a:b], bitdepth, egls, skip0, out[a:b])
            for a, b in _blocks(whole, threads)
        ]
        for job in jobs:
            job.result()
    if whole < n:
        _frames_by_rows(refs[whole:], diss[whole:], bitdepth, egls, skip0, out[whole:], pool,
                        threads)  # fmt: skip
    return out


def _egls(egls) -> np.ndarray:
    return np.ascontiguousarray(np.atleast_1d(np.asarray(egls, dtype=np.float64)))


def vif_accumulators(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, egls, skip_scale0: bool
) -> np.ndarray:
    """One frame's VIF accumulators, on this thread (the kernels release the GIL).

    Parameters
    ----------
    ref, dis : ndarray
        2-D luma planes, uint8 at 8 bits and uint16 above, at least 16x16.
    bitdepth : int
        8 to 16.
    egls : array_like of float64
        Gain limits (``vif_enhn_gain_limit``), one per VIF extractor sharing the filtering.
    skip_scale0 : bool
        Leave scale 0 out (its accumulators 0).

    Returns
    -------
    ndarray
        int64, shape ``(len(egls), 4, 4)``: per gain limit and scale ``[accum_num_log,
        accum_den_log, accum_num_non_log, accum_den_non_log]`` as
        :func:`reference.vif.vif_residuals` gives them; finish with
        :func:`admcuda.backends.host.finish_vif`.
    """
    ref, dis, g = np.asarray(ref), np.asarray(dis), _egls(egls)
    if ref.ndim != 2:
        raise ValueError(f"a plane must be 2-D, got shape {ref.shape}")
    refs, diss = np.ascontiguousarray(ref)[None], np.ascontiguousarray(dis)[None]
    _check(refs, diss, bitdepth, g)
    return _run(refs, diss, int(bitdepth), g, bool(skip_scale0), 1)[0]


def vif_accumulators_batch(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, egls, skip_scale0: bool
) -> np.ndarray:
    """:func:`vif_accumulators` of each frame of ``(n, h, w)`` stacks, over Numba's
    threads (row blocks of every frame, a scale at a time): shape
    ``(n, len(egls), 4, 4)``."""
    ref, dis, g = np.asarray(ref), np.asarray(dis), _egls(egls)
    _check(ref, dis, bitdepth, g)
    refs, diss = np.ascontiguousarray(ref), np.ascontiguousarray(dis)
    return _run(refs, diss, int(bitdepth), g, bool(skip_scale0), numba.get_num_threads())

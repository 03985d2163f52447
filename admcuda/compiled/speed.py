"""libvmaf's SpEED-QA (``speed_chroma`` on the chroma planes, ``speed_temporal`` on the
difference of consecutive luma frames) as Numba kernels.

Each output is the double libvmaf 3.2.0's scalar C writes (``src/feature/speed.c``, its
``speed_chroma`` and ``speed_temporal`` extractors, with ``vif_tools.c``'s filters and
scalers and ``picture_copy.c``): every operation in the C's precision and order. Per
picture (``speed_side``: a chroma plane's, or the float32 difference of two luma
pictures, the previous frame's less the current one's):

- samples become float32 less 128, divided by 4, 16 or 256 first at 10, 12 and 16 bits
  (``picture_copy`` with offset -128: :func:`picture`);
- an optional prescale (``speed_prescale`` away from 1 by 1e-3 or more) by nearest or
  bilinear sampling, in float32 with the C's float64 steps (``vif_scale_frame_*``);
- a separable Gaussian anti-alias filter (float32 taps, float32 sums, vertical pass then
  horizontal, mirrored edges), decimation by 16, a second Gaussian and the subtraction of
  that local mean (``filter_and_downscale``);
- on the 5x5 blocks of what is left: the 25x25 covariance matrix of the 25 shifted
  windows (float32 means, float64 sums of products, stored as float32), its eigenvalues
  by Householder tridiagonalisation and implicit QR steps in float32, the linear system
  solved by a Householder QR (float32 matrix products in i, k, j order) and back
  substitution, and each block's entropy summed in float32 over the eigenvalues from
  float64 ``log2`` terms (``est_params``);
- the score: the mean over blocks of ``|spatial_ref - spatial_dis|`` as the variance
  weighting mode says (``get_speed_score``).

Where a covariance matrix is singular (an eigenvalue below 1e-6 or a pivot below 1e-6 in
magnitude) the C's solution is zero and the plane reports an error; one error of ref and
dis gives a score of 0, and ``speed_chroma_uv`` then takes the other plane's score.

No operation is contracted: Numba without ``fastmath`` emits no FMA, and libvmaf's build
(gcc ``-O3 -std=c11``, baseline x86-64) does float arithmetic in SSE, not extended
precision. The C's ``1.0 / sqrt(...)`` and other float64 steps inside float32 code are
done in float64 and rounded as the C rounds them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "BLOCK",
    "NUM_SCALES",
    "VALID_KERNELSCALES",
    "filter_size",
    "gaussian_taps",
    "picture",
    "picture_difference",
    "speed_chroma_plane",
    "speed_score",
    "speed_side",
]

BLOCK = 5
NUM_SCALES = 4
EIGENVALUE_EPS = 1e-6
EIGENVALUE_MAX_ITERS = 500
# log2(2 * M_PI * M_E) as the C evaluates it: a float64 product, float64 log2
LOG2_2PIE = math.log2(2 * math.pi * math.e)

# vif_tools.h's kernel scales, float32 as the C's table holds them
VALID_KERNELSCALES = tuple(
    float(np.float32(v))
    for v in (
        1.0, np.float32(1.0) / np.float32(2.0), np.float32(3.0) / np.float32(2.0), 2.0,
        np.float32(2.0) / np.float32(3.0), np.float32(24.0) / np.float32(10.0),
        np.float32(360.0) / np.float32(97.0), np.float32(4.0) / np.float32(3.0),
        np.float32(3.5) / np.float32(3.0), np.float32(3.75) / np.float32(3.0),
        np.float32(4.25) / np.float32(3.0), np.float32(5.0) / np.float32(3.0), 3.0,
        np.float32(1.0) / np.float32(2.25), np.float32(1.4746), np.float32(1.54),
        np.float32(1.6), np.float32(1.06667), np.float32(0.711111), np.float32(0.740740),
        np.float32(1.111111),
    )
)  # fmt: skip

_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_F2 = np.float32(2.0)
_FM2 = np.float32(-2.0)


def filter_size(scale: int, kernelscale: float) -> int:
    """``vif_get_filter_size``: ``2^(4-scale) + 1`` taps times the kernel scale (a float32
    product), rounded up to odd, at least 3."""
    n = (1 << (4 - scale)) + 1
    ceiling = math.ceil(np.float32(n) * np.float32(kernelscale))
    size = ceiling + 1 if ceiling % 2 == 0 else ceiling
    return max(size, 3)


def gaussian_taps(size: int, stdev: float) -> np.ndarray:
    """``get_1d_gaussian_kernel``: float32 pdf values over ``-k..k`` (a float64 exponent
    and quotient, each rounded to float32), normalised by their float32 sum."""
    sd = np.float32(stdev)
    k = (size - 1) // 2
    out = np.empty(size, dtype=np.float32)
    total = np.float32(0.0)
    for i in range(size):
        x = np.float32(i - k)
        z = -0.5 * float(x) / float(sd) * float(x) / float(sd)
        num = np.float32(math.exp(z))
        den = np.float32(1.0 / (float(sd) * math.sqrt(2 * math.pi)))
        out[i] = np.float32(num / den)
        total = np.float32(total + out[i])
    return (out / total).astype(np.float32)


@njit(cache=True, nogil=True)
def _filter1d(f, src):  # pragma: no cover - compiled
    """``vif_filter1d_s``: vertical then horizontal pass, float32 sums, mirrored edges."""
    h, w = src.shape
    fw = f.shape[0]
    dst = np.empty((h, w), dtype=np.float32)
    tmp = np.empty(w, dtype=np.float32)
    for i in range(h):
        for j in range(w):
            acc = _F0
            for fi in range(fw):
                ii = i - fw // 2 + fi
                if ii < 0:
                    ii = -ii
                elif ii >= h:
                    ii = 2 * h - ii - 2
                acc = acc + f[fi] * src[ii, j]
            tmp[j] = acc
        for j in range(w):
            acc = _F0
            for fj in range(fw):
                jj = j - fw // 2 + fj
                if jj < 0:
                    jj = -jj
                elif jj >= w:
                    jj = 2 * w - jj - 2
                acc = acc + f[fj] * tmp[jj]
            dst[i, j] = acc
    return dst


@njit(cache=True, nogil=True)
def _mirror(i, left, right):  # pragma: no cover - compiled
    if i < left:
        return -i
    if i > right:
        return 2 * right - i
    return i


@njit(cache=True, nogil=True)
def _scale_bilinear(src, dw, dh):  # pragma: no cover - compiled
    """``vif_scale_frame_bilinear_*``: float64 positions rounded to float32, float32
    weights, the four products summed left to right."""
    sh, sw = src.shape
    dst = np.empty((dh, dw), dtype=np.float32)
    if sw == dw and sh == dh:
        dst[:, :] = src
        return dst
    ratio_x = np.float32(np.float32(sw) / np.float32(dw))
    ratio_y = np.float32(np.float32(sh) / np.float32(dh))
    x1a = np.empty(dw, dtype=np.int64)
    x2a = np.empty(dw, dtype=np.int64)
    dxa = np.empty(dw, dtype=np.float32)
    for x in range(dw):
        xx = np.float32((x + 0.5) * np.float64(ratio_x) - 0.5)
        lo = np.float32(math.floor(np.float64(xx)))
        hi = np.float32(math.ceil(np.float64(xx)))
        x1a[x] = int(_mirror(lo, _F0, np.float32(sw - 1)))
        x2a[x] = int(_mirror(hi, _F0, np.float32(sw - 1)))
        dxa[x] = xx - np.float32(x1a[x])
    for y in range(dh):
        yy = np.float32((y + 0.5) * np.float64(ratio_y) - 0.5)
        y1 = int(_mirror(np.float32(math.floor(np.float64(yy))), _F0, np.float32(sh - 1)))
        y2 = int(_mirror(np.float32(math.ceil(np.float64(yy))), _F0, np.float32(sh - 1)))
        dy = yy - np.float32(y1)
        for x in range(dw):
            x1 = x1a[x]
            x2 = x2a[x]
            dx = dxa[x]
            dst[y, x] = (
                (_F1 - dy) * (_F1 - dx) * src[y1, x1]
                + (_F1 - dy) * dx * src[y1, x2]
                + dy * (_F1 - dx) * src[y2, x1]
                + dy * dx * src[y2, x2]
            )
    return dst


@njit(cache=True, nogil=True)
def _scale_nearest(src, dw, dh):  # pragma: no cover - compiled
    """``vif_scale_frame_nearest_s``: float32 ratios, truncated positions."""
    sh, sw = src.shape
    dst = np.empty((dh, dw), dtype=np.float32)
    if sw == dw and sh == dh:
        dst[:, :] = src
        return dst
    ratio_x = np.float32(np.float32(sw) / np.float32(dw))
    ratio_y = np.float32(np.float32(sh) / np.float32(dh))
    for y in range(dh):
        ry = int(np.float32(y) * ratio_y)
        for x in range(dw):
            dst[y, x] = src[ry, int(np.float32(x) * ratio_x)]
    return dst


@njit(cache=True, nogil=True)
def _filter1d_every16(f, src):  # pragma: no cover - compiled
    """``vif_filter1d_s`` then ``vif_dec16_s``: the filtered samples at every 16th row and
    column alone, each the sum the whole filter gives it (the vertical pass on those rows,
    every column; the horizontal pass at those columns)."""
    h, w = src.shape
    fw = f.shape[0]
    dh = h >> NUM_SCALES
    dw = w >> NUM_SCALES
    dst = np.empty((dh, dw), dtype=np.float32)
    tmp = np.empty(w, dtype=np.float32)
    for di in range(dh):
        i = di << NUM_SCALES
        for j in range(w):
            acc = _F0
            for fi in range(fw):
                ii = i - fw // 2 + fi
                if ii < 0:
                    ii = -ii
                elif ii >= h:
                    ii = 2 * h - ii - 2
                acc = acc + f[fi] * src[ii, j]
            tmp[j] = acc
        for dj in range(dw):
            j = dj << NUM_SCALES
            acc = _F0
            for fj in range(fw):
                jj = j - fw // 2 + fj
                if jj < 0:
                    jj = -jj
                elif jj >= w:
                    jj = 2 * w - jj - 2
                acc = acc + f[fj] * tmp[jj]
            dst[di, dj] = acc
    return dst


@njit(cache=True, nogil=True)
def _downscale(frame, antialias, gauss):  # pragma: no cover - compiled
    """``filter_and_downscale`` after the prescale: anti-alias, every 16th sample, less
    its local Gaussian mean."""
    small = _filter1d_every16(antialias, frame)
    dh, dw = small.shape
    mean = _filter1d(gauss, small)
    for i in range(dh):
        for j in range(dw):
            small[i, j] = small[i, j] - mean[i, j]
    return small


# --- eigenvalues: Householder tridiagonalisation and implicit QR steps --------------------


@njit(cache=True, nogil=True)
def _pythagoras(x, y):  # pragma: no cover - compiled
    return np.float32(math.sqrt(x * x + y * y))


@njit(cache=True, nogil=True)
def _sign(x):  # pragma: no cover - compiled
    return np.float32(1.0) if x >= _F0 else np.float32(-1.0)


@njit(cache=True, nogil=True)
def _householder(a, col, start, n):  # pragma: no cover - compiled
    if n - start == 1:
        return _F0
    norm = _F0
    for i in range(start + 1, n):
        norm = norm + a[i * n + col] * a[i * n + col]
    xnorm = np.float32(math.sqrt(norm))
    if xnorm == _F0:
        return _F0
    alpha = a[start * n + col]
    beta = -_sign(alpha) * _pythagoras(alpha, xnorm)
    tau = (beta - alpha) / beta
    s = alpha - beta
    if s != _F0:
        for i in range(start, n):
            a[i * n + col] = a[i * n + col] / s
        a[start * n + col] = beta
    return tau


@njit(cache=True, nogil=True)
def _tridiagonal(a, n, d, sd):  # pragma: no cover - compiled
    v = np.zeros(n, dtype=np.float32)
    x = np.zeros(n, dtype=np.float32)
    for i in range(n - 2):
        tau = _householder(a, i, i + 1, n)
        for j in range(i + 1, n):
            v[j] = a[j * n + i]
        if tau != _F0:
            a[(i + 1) * n + i] = v[i + 1]
            v[i + 1] = _F1
            s = i + 1
            for r in range(s, n):
                x[r] = _F0
                for c in range(s, n):
                    x[r] = x[r] + tau * a[r * n + c] * v[c]
            xv = _F0
            for r in range(s, n):
                xv = xv + x[r] * v[r]
            alpha = np.float32(-0.5 * np.float64(tau) * np.float64(xv))
            for r in range(s, n):
                x[r] = x[r] + alpha * v[r]
            for r in range(s, n):
                for c in range(s, n):
                    a[r * n + c] = a[r * n + c] - (x[r] * v[c] + v[r] * x[c])
    for i in range(n):
        d[i] = a[i * n + i]
    for i in range(n - 1):
        sd[i] = a[(i + 1) * n + i]


@njit(cache=True, nogil=True)
def _chop(d, sd, off, n):  # pragma: no cover - compiled
    for i in range(n - 1):
        bound = EIGENVALUE_EPS * np.float64(abs(d[off + i]) + abs(d[off + i + 1]))
        if np.float64(abs(sd[off + i])) < bound:
            sd[off + i] = _F0


@njit(cache=True, nogil=True)
def _trailing(d, sd, off, n):  # pragma: no cover - compiled
    ta = d[off + n - 2]
    tb = d[off + n - 1]
    tab = sd[off + n - 2]
    dt = (ta - tb) / _F2
    if dt > _F0:
        return tb - tab * (tab / (dt + _pythagoras(dt, tab)))
    if dt == _F0:
        return tb - abs(tab)
    return tb + tab * (tab / (-dt + _pythagoras(dt, tab)))


@njit(cache=True, nogil=True)
def _givens(a, b):  # pragma: no cover - compiled
    if b == _F0:
        return _F1, _F0
    if abs(b) > abs(a):
        t = -a / b
        s1 = np.float32(1.0 / math.sqrt(np.float64(_F1 + t * t)))
        return s1 * t, s1
    t = -b / a
    c1 = np.float32(1.0 / math.sqrt(np.float64(_F1 + t * t)))
    return c1, c1 * t


@njit(cache=True, nogil=True)
def _qr_step(d, sd, off, n):  # pragma: no cover - compiled
    mu = _trailing(d, sd, off, n)
    if EIGENVALUE_EPS * np.float64(abs(mu)) > np.float64(abs(d[off]) + abs(sd[off])):
        mu = _F0
    x = d[off] - mu
    z = sd[off]
    ak = _F0
    bk = _F0
    zk = _F0
    ap = d[off]
    bp = sd[off]
    aq = d[off + 1]
    if n == 2:
        c, s = _givens(x, z)
        ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp)
        bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq)
        aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq)
        d[off] = ap1
        sd[off] = bp1
        d[off + 1] = aq1
        return
    bq = sd[off + 1]
    for k in range(n - 1):
        c, s = _givens(x, z)
        bk1 = c * bk - s * zk
        ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp)
        bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq)
        zp1 = -s * bq
        aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq)
        bq1 = c * bq
        ak = ap1
        bk = bp1
        zk = zp1
        ap = aq1
        bp = bq1
        if k < n - 2:
            aq = d[off + k + 2]
        if k < n - 3:
            bq = sd[off + k + 2]
        d[off + k] = ak
        if k > 0:
            sd[off + k - 1] = bk1
        if k < n - 2:
            sd[off + k + 1] = bp
        x = bk
        z = zk
    d[off + n - 1] = ap
    sd[off + n - 2] = bk


@njit(cache=True, nogil=True)
def _eigenvalues(cov, n):  # pragma: no cover - compiled
    a = cov.copy()
    if n == 1:
        return a[:1].copy()
    d = np.zeros(n, dtype=np.float32)
    sd = np.zeros(n, dtype=np.float32)
    _tridiagonal(a, n, d, sd)
    _chop(d, sd, 0, n)
    b = n - 1
    it = 0
    while b > 0 and it < EIGENVALUE_MAX_ITERS:
        if sd[b - 1] == _F0:
            b -= 1
            continue
        lo = b - 1
        while lo > 0:
            if sd[lo - 1] == _F0:
                break
            lo -= 1
        _qr_step(d, sd, lo, b - lo + 1)
        _chop(d, sd, lo, b - lo + 1)
        it += 1
    return d


# --- the linear system: Householder QR and back substitution ------------------------------


@njit(cache=True, nogil=True)
def _matmul(x, y, rows, inner, cols):  # pragma: no cover - compiled
    out = np.zeros(rows * cols, dtype=np.float32)
    for i in range(rows):
        for k in range(inner):
            for j in range(cols):
                out[i * cols + j] = out[i * cols + j] + x[i * inner + k] * y[k * cols + j]
    return out


@njit(cache=True, nogil=True)
def _transpose(m, n):  # pragma: no cover - compiled
    for i in range(n):
        for j in range(i):
            t = m[i * n + j]
            m[i * n + j] = m[j * n + i]
            m[j * n + i] = t


@njit(cache=True, nogil=True)
def _vector_norm(v, n):  # pragma: no cover - compiled
    total = _F0
    for i in range(n):
        total = total + v[i] * v[i]
    return np.float32(math.sqrt(total))


@njit(cache=True, nogil=True)
def _solve(cov, n, rhs, cols):  # pragma: no cover - compiled
    """``solve_linear_system``: ``(solution, ok)``."""
    a = cov.copy()
    z = a.copy()
    q = np.zeros(n * n, dtype=np.float32)
    for i in range(n):
        q[i * n + i] = _F1
    vec = np.zeros(n, dtype=np.float32)
    hq = np.zeros(n * n, dtype=np.float32)
    for k in range(n - 1):
        for i in range(n):
            for j in range(n):
                if i < k or j < k:
                    z[i * n + j] = _F1 if i == j else _F0
        for i in range(n):
            vec[i] = z[i * n + k]
        norm = _vector_norm(vec, n)
        vec[k] = vec[k] + _sign(a[k * n + k]) * norm
        div = _vector_norm(vec, n)
        for i in range(n):
            vec[i] = vec[i] / div
        for i in range(n):
            for j in range(n):
                hq[i * n + j] = _FM2 * vec[i] * vec[j]
        for i in range(n):
            hq[i * n + i] = hq[i * n + i] + _F1
        z = _matmul(hq, z, n, n, n)
        q = _matmul(hq, q, n, n, n)
    r = _matmul(q, a, n, n, n)
    # the C transposes Q twice before its product with the right-hand side
    qb = _matmul(q, rhs, n, n, cols)
    x = np.zeros(n * cols, dtype=np.float32)
    for i in range(n - 1, -1, -1):
        den = r[i * n + i]
        if np.float64(abs(den)) < EIGENVALUE_EPS:
            return x, False
        for j in range(cols):
            term = qb[i * cols + j]
            for k in range(i + 1, n):
                term = term - x[k * cols + j] * r[i * n + k]
            x[i * cols + j] = term / den
    return x, True


@njit(cache=True, nogil=True)
def _est_params(data, sigma_nn):  # pragma: no cover - compiled
    """``est_params`` on the downscaled plane: ``(entropies, variances, ok)``."""
    oh, ow = data.shape
    th = oh // BLOCK * BLOCK
    tw = ow // BLOCK * BLOCK
    nbh = tw // BLOCK
    nbv = th // BLOCK
    nb = nbh * nbv
    ne = BLOCK * BLOCK
    subw = tw - BLOCK + 1
    subh = th - BLOCK + 1
    count = subw * subh
    means = np.empty(ne, dtype=np.float32)
    for r in range(BLOCK):
        for c in range(BLOCK):
            acc = _F0
            for i in range(subh):
                for j in range(subw):
                    acc = acc + data[r + i, c + j]
            means[r * BLOCK + c] = acc / np.float32(count)
    cov = np.zeros(ne * ne, dtype=np.float32)
    for xi in range(ne):
        for yi in range(xi + 1):
            rx = xi // BLOCK
            cx = xi % BLOCK
            ry = yi // BLOCK
            cy = yi % BLOCK
            mx = np.float64(means[rx * BLOCK + cx])
            my = np.float64(means[ry * BLOCK + cy])
            acc = 0.0
            for i in range(subh):
                for j in range(subw):
                    acc += (np.float64(data[rx + i, cx + j]) - mx) * (
                        np.float64(data[ry + i, cy + j]) - my
                    )
            value = np.float32(acc / np.float64(count))
            cov[xi * ne + yi] = value
            cov[yi * ne + xi] = value
    eig = _eigenvalues(cov, ne)
    rhs = np.zeros(ne * nb, dtype=np.float32)
    for si in range(BLOCK):
        for sj in range(BLOCK):
            for i in range(si, th, BLOCK):
                for j in range(sj, tw, BLOCK):
                    row = si * BLOCK + sj
                    col = ((i - si) // BLOCK) * nbh + (j - sj) // BLOCK
                    rhs[row * nb + col] = data[i, j]
    regular = True
    for i in range(ne):
        if np.float64(eig[i]) < EIGENVALUE_EPS:
            regular = False
            break
    ok = False
    sol = np.zeros(ne * nb, dtype=np.float32)
    if regular:
        sol, ok = _solve(cov, ne, rhs, nb)
    if not ok:
        sol = np.zeros(ne * nb, dtype=np.float32)
    den = np.float32(ne)
    for i in range(ne):
        for j in range(nb):
            sol[i * nb + j] = (sol[i * nb + j] * rhs[i * nb + j]) / den
    for i in range(1, ne):
        for j in range(nb):
            sol[j] = sol[j] + sol[i * nb + j]
    entropies = np.zeros(nb, dtype=np.float32)
    for k in range(ne):
        lam = _F0 if eig[k] < _F0 else eig[k]
        for b in range(nb):
            term = math.log2(np.float64(lam * sol[b] + sigma_nn)) + LOG2_2PIE
            entropies[b] = np.float32(np.float64(entropies[b]) + term)
    return entropies, sol[:nb].copy(), ok


@njit(cache=True, nogil=True)
def _score(ref_e, ref_v, dis_e, dis_v, sigma_nn, nn_floor, mode):  # pragma: no cover
    """``get_speed_score``: float32 score, the mean over blocks."""
    nb = ref_e.shape[0]
    base = np.float32(
        np.float64(BLOCK * BLOCK) * (math.log2(np.float64((_F1 + nn_floor) * sigma_nn)) + LOG2_2PIE)
    )
    score = _F0
    for i in range(nb):
        if ref_e[i] < base and dis_e[i] < base:
            continue
        re = np.float64(ref_e[i])
        de = np.float64(dis_e[i])
        rv = ref_v[i]
        dv = dis_v[i]
        if mode == 0:
            sr = np.float32(re * math.log2(np.float64(_F1 + rv)))
            sdd = np.float32(de * math.log2(np.float64(_F1 + dv)))
        elif mode == 1:
            sr = np.float32(re * math.log2(np.float64(_F1 + rv)))
            sdd = np.float32(de * math.log2(np.float64(_F1 + rv)))
        elif mode == 2:
            sr = np.float32(re * math.log2(np.float64(_F1 + dv)))
            sdd = np.float32(de * math.log2(np.float64(_F1 + dv)))
        elif mode == 3:
            m = 1.0 + np.float64(rv + dv) / 2.0
            sr = np.float32(re * math.log2(m))
            sdd = np.float32(de * math.log2(m))
        elif mode == 4:
            sr = np.float32(re * math.log2(np.float64(_F1 + rv)))
            sdd = np.float32(de * math.log2(1.0 + np.float64(rv + dv) / 2.0))
        elif mode == 5:
            sr = np.float32(re * math.log2(np.float64(_F1 + rv)))
            w = 0.75 * np.float64(rv) + 0.25 * np.float64(dv)
            sdd = np.float32(de * math.log2(1.0 + w))
        else:
            sr = np.float32(re * math.log2(np.float64(_F1 + rv)))
            w = 0.25 * np.float64(rv) + 0.75 * np.float64(dv)
            sdd = np.float32(de * math.log2(1.0 + w))
        score = score + abs(sr - sdd)
    return score / np.float32(nb)


def speed_score(
    ref: tuple[np.ndarray, np.ndarray, bool],
    dis: tuple[np.ndarray, np.ndarray, bool],
    sigma_nn: np.float32,
    nn_floor: np.float32,
    mode: int,
) -> tuple[np.float32, bool]:
    """``speed_extract_score`` from both sides' ``(entropies, variances, ok)``: the
    float32 score and whether either side was singular."""
    if ref[2] != dis[2]:
        return np.float32(0.0), True
    score = _score(ref[0], ref[1], dis[0], dis[1], sigma_nn, nn_floor, mode)
    return np.float32(score), not (ref[2] and dis[2])


@njit(cache=True, nogil=True)
def _difference(before, after, scaler):  # pragma: no cover - compiled
    """``picture_copy`` of two planes (less 128; divided by ``scaler`` first unless it is
    0, the 8-bit path) and ``subtract_image``: float32 throughout."""
    h, w = before.shape
    out = np.empty((h, w), dtype=np.float32)
    offset = np.float32(128.0)
    for i in range(h):
        for j in range(w):
            if scaler == _F0:
                a = np.float32(before[i, j]) - offset
                b = np.float32(after[i, j]) - offset
            else:
                a = np.float32(before[i, j]) / scaler - offset
                b = np.float32(after[i, j]) / scaler - offset
            out[i, j] = a - b
    return out


def picture_difference(before: np.ndarray, after: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture(before, bitdepth) - picture(after, bitdepth)`` in one pass: what
    ``speed_temporal`` hands ``speed_side``."""
    scaler = np.float32({8: 0.0, 10: 4.0, 12: 16.0, 16: 256.0}[bitdepth])
    return _difference(np.ascontiguousarray(before), np.ascontiguousarray(after), scaler)


def picture(plane: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture_copy`` with offset -128: the plane's samples as float32, divided by 4, 16
    or 256 at 10, 12 and 16 bits, less 128, each step in float32."""
    if bitdepth == 8:
        return plane.astype(np.float32) - np.float32(128.0)
    scaler = np.float32({10: 4.0, 12: 16.0, 16: 256.0}[bitdepth])
    return plane.astype(np.float32) / scaler - np.float32(128.0)


def speed_side(
    frame: np.ndarray,
    *,
    prescale: float,
    method: str,
    antialias: np.ndarray,
    gauss: np.ndarray,
    sigma_nn: np.float32,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """One float32 picture through ``filter_and_downscale`` (the prescale where
    ``prescale`` is 1e-3 or more away from 1) and ``est_params``:
    ``(entropies, variances, ok)``."""
    h, w = frame.shape
    if not abs(prescale - 1.0) < 1.0e-3:
        sw = int(w * prescale + 0.5)
        sh = int(h * prescale + 0.5)
        if method == "bilinear":
            frame = _scale_bilinear(frame, sw, sh)
        else:
            frame = _scale_nearest(frame, sw, sh)
    small = _downscale(np.ascontiguousarray(frame), antialias, gauss)
    return _est_params(small, sigma_nn)


def speed_chroma_plane(
    plane: np.ndarray,
    *,
    bitdepth: int,
    prescale: float,
    method: str,
    antialias: np.ndarray,
    gauss: np.ndarray,
    sigma_nn: np.float32,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """One side of one chroma plane through ``picture_copy``, ``filter_and_downscale``
    and ``est_params``: ``(entropies, variances, ok)``."""
    return speed_side(picture(plane, bitdepth), prescale=prescale, method=method,
                      antialias=antialias, gauss=gauss, sigma_nn=sigma_nn)  # fmt: skip

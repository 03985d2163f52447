"""libvmaf's float SSIM and MS-SSIM (``float_ssim``, ``float_ms_ssim``) as Numba kernels.

Each output is the double libvmaf 3.2.0's scalar C writes (``src/feature/float_ssim.c``,
``float_ms_ssim.c``, ``ssim.c``, ``ms_ssim.c`` and Tom Distler's IQA code under
``src/feature/iqa/``): every operation is done in the C's precision and order. What that
takes, step by step:

- samples become float32, divided by 4, 16 or 256 at 10, 12 and 16 bits (float
  division), so every bit depth reads on 8 bits' scale (``picture_copy``);
- decimation (SSIM's box low-pass, MS-SSIM's 9x9 biorthogonal low-pass) is a 2-D
  filter evaluated at every ``factor``-th sample, mirrored at the edges: float32
  products summed in float64, row by row, then rounded to float32 (``_iqa_decimate``);
- the 11-tap Gaussian window is separable and applied where it fits inside the image:
  a horizontal pass then a vertical one, each float32 product summed in float64 and
  rounded to float32 (``_iqa_convolve`` with ``IQA_CONVOLVE_1D``);
- variances and covariance are float32 (``E[x^2] - mu^2``), variances clamped at 0;
  luminance and contrast terms are float64 quotients of a float64 numerator and a float32
  denominator, the structure term a float32 quotient; their means are float64 sums in
  row-major order, rounded to float32 (``_iqa_ssim``);
- MS-SSIM multiplies ``pow(l, alpha) * pow(c, beta) * pow(s, gamma)`` over five scales in
  float64, with libm's ``pow`` (which Numba's ``math.pow`` calls too).

No operation is contracted: Numba without ``fastmath`` emits no FMA, and libvmaf's build
(gcc ``-O3 -std=c11``, baseline x86-64) does float arithmetic in SSE float, not extended
precision. Loops over a row's outputs run side by side (vectorised), each output's sum
still in the C's tap order; the means' sums are sequential in row-major order, so a frame
runs on one thread.

``float_ssim`` decimates in place in the C; every sample it reads is read before an
output overwrites it (outputs land at ``y * w' + x``, far before the rows still to be
read), so decimating into a new array gives the same floats.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "FLOAT_SSIM_OPTIONS",
    "FLOAT_MS_SSIM_OPTIONS",
    "MS_SSIM_MIN_SIDE",
    "float_ms_ssim_frame",
    "float_ssim_frame",
    "float_ssim_names",
    "float_ms_ssim_names",
    "max_db",
    "ssim_scale",
]

# IQA's constants as the C spells them (float literals, so float32 here); tests check each
# is the float nearest its decimal.
GAUSSIAN_TAPS = np.array(
    [0.001028, 0.007599, 0.036001, 0.109361, 0.213006, 0.266012,
     0.213006, 0.109361, 0.036001, 0.007599, 0.001028],
    dtype=np.float32,
)  # fmt: skip
GAUSSIAN_LEN = 11
# The 9x9 biorthogonal 9/7 low-pass MS-SSIM decimates with (used as the 2-D table, not as
# the product of a 1-D filter: its entries are rounded to 6 decimals on their own).
_LPF_ROW = [
    [0.000714, -0.000450, -0.002090, 0.007132, 0.016114],
    [-0.000450, 0.000283, 0.001316, -0.004490, -0.010146],
    [-0.002090, 0.001316, 0.006115, -0.020867, -0.047149],
    [0.007132, -0.004490, -0.020867, 0.071207, 0.160885],
    [0.016114, -0.010146, -0.047149, 0.160885, 0.363505],
]
_LPF_HALF = [row + row[-2::-1] for row in _LPF_ROW]
LPF_9X9 = np.array(_LPF_HALF + _LPF_HALF[-2::-1], dtype=np.float32)
MS_SSIM_SCALES = 5
MS_SSIM_ALPHAS = np.array([0.0, 0.0, 0.0, 0.0, 0.1333], dtype=np.float32)
MS_SSIM_BETAS = np.array([0.0448, 0.2856, 0.3001, 0.2363, 0.1333], dtype=np.float32)
MS_SSIM_GAMMAS = MS_SSIM_BETAS
# K1 = 0.01f, K2 = 0.03f, L = 255: C1 = (K1*L)^2, C2 = (K2*L)^2, C3 = C2 / 2, all float32
_L = np.float32(255)
C1 = (np.float32(0.01) * _L) * (np.float32(0.01) * _L)
C2 = (np.float32(0.03) * _L) * (np.float32(0.03) * _L)
C3 = C2 / np.float32(2.0)
# float_ms_ssim refuses a frame where any of its five scales (each side halved, rounded
# down) is narrower than the window: each side needs 11 * 2**4 samples.
MS_SSIM_MIN_SIDE = GAUSSIAN_LEN << (MS_SSIM_SCALES - 1)
# picture_copy's divisors: samples of every depth on 8 bits' scale
_DIVISORS = {8: None, 10: np.float32(4.0), 12: np.float32(16.0), 16: np.float32(256.0)}

# libvmaf's option tables: name -> (default, min, max) (None: a bool)
FLOAT_SSIM_OPTIONS: dict[str, tuple[object, object, object]] = {
    "enable_lcs": (False, None, None),
    "enable_db": (False, None, None),
    "clip_db": (False, None, None),
    "scale": (0, 0, 10),
}
FLOAT_MS_SSIM_OPTIONS: dict[str, tuple[object, object, object]] = {
    "enable_lcs": (False, None, None),
    "enable_db": (False, None, None),
    "clip_db": (False, None, None),
}


# ---------------------------------------------------------------------------------------
# kernels


@njit(cache=True, nogil=True, error_model="numpy")
def _mirror(p, n):  # noqa: ANN001, ANN202 - jitted
    """KBND_SYMMETRIC: -1 -> 0, n -> n - 1 (the edge sample repeated)."""
    if p < 0:
        return -1 - p
    if p >= n:
        return 2 * n - p - 1
    return p


@njit(cache=True, nogil=True, error_model="numpy")
def _decimate(img, factor, kern):  # noqa: ANN001, ANN202 - jitted
    """``_iqa_decimate``: ``kern`` (float32, k x k) at every ``factor``-th sample of
    ``img`` (float32, h x w), mirrored at the edges; the output has ``w // factor + (w & 1)``
    columns and ``h // factor + (h & 1)`` rows (libvmaf's count, odd sides rounded up
    whatever the factor). Products are float32, each output's sum float64 over kernel
    rows then columns, the result float32. Outputs whose columns need no mirror are
    summed side by side (each in the C's order), the rest one by one."""
    h, w = img.shape
    k = kern.shape[0]
    c = k // 2
    hi = c - (1 - (k & 1))  # an even kernel reaches one sample less to the right
    sh = h // factor + (h & 1)
    sw = w // factor + (w & 1)
    x0 = min((c + factor - 1) // factor, sw)
    x1 = max(min((w - 1 - hi) // factor + 1, sw), x0)
    out = np.empty((sh, sw), np.float32)
    acc = np.empty(sw, np.float64)
    inner = acc[x0:x1]
    # columns split by phase (column j * factor + p at phases[p, :, j]) so that the
    # side-by-side sums read contiguous samples
    phases = np.zeros((factor, h, w // factor + 1), np.float32)
    for p in range(factor):
        n = (w - p + factor - 1) // factor
        phases[p, :, :n] = img[:, p::factor]
    for y in range(sh):
        cy = y * factor
        acc[:] = 0.0
        for v in range(-c, hi + 1):
            r = _mirror(cy + v, h)
            kr = kern[v + c]
            for u in range(-c, hi + 1):
                t = kr[u + c]
                p = u % factor
                seg = phases[p, r, x0 + (u - p) // factor : x1 + (u - p) // factor]
                for i in range(x1 - x0):
                    inner[i] += np.float32(seg[i] * t)
        for x in range(sw):
            if x0 <= x < x1:
                continue
            cx = x * factor
            for v in range(-c, hi + 1):
                row = img[_mirror(cy + v, h)]
                kr = kern[v + c]
                for u in range(-c, hi + 1):
                    acc[x] += np.float32(row[_mirror(cx + u, w)] * kr[u + c])
        for x in range(sw):
            out[y, x] = np.float32(acc[x])
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def _horizontal(r, d, taps, src, acc, dst):  # noqa: ANN001, ANN202 - jitted
    """One row of ``_iqa_convolve``'s horizontal pass over the five planes SSIM filters:
    ``r``, ``d``, ``r*r``, ``d*d``, ``r*d`` (float32 products) into ``dst`` (5, dw), each
    output the float64 sum of float32 products in tap order, rounded to float32. The
    row's outputs are summed side by side (``acc``), each in that order."""
    w = r.shape[0]
    k = taps.shape[0]
    dw = w - k + 1
    for x in range(w):
        p = r[x]
        q = d[x]
        src[0, x] = p
        src[1, x] = q
        src[2, x] = p * p
        src[3, x] = q * q
        src[4, x] = p * q
    for plane in range(5):
        line = src[plane]
        acc[:] = 0.0
        for u in range(k):
            t = taps[u]
            seg = line[u : u + dw]
            for x in range(dw):
                acc[x] += np.float32(seg[x] * t)
        out = dst[plane]
        for x in range(dw):
            out[x] = np.float32(acc[x])


@njit(cache=True, nogil=True, error_model="numpy")
def _ssim(ref, cmp, taps, c1, c2, c3):  # noqa: ANN001, ANN202 - jitted
    """``_iqa_ssim`` with its default arguments: the mean SSIM and the means of its
    luminance, contrast and structure terms, each rounded to float32.

    The Gaussian window's output rows come one at a time: a ring of the last ``k``
    horizontal rows feeds the vertical pass (float32 products summed in float64 in tap
    order, rounded to float32), then the row's statistics, whose float64 sums run
    sequentially in row-major order, as the C's do."""
    h, w = ref.shape
    k = taps.shape[0]
    dw = w - k + 1
    dh = h - k + 1
    ring = np.empty((k, 5, dw), np.float32)
    src = np.empty((5, w), np.float32)
    acc = np.empty(dw, np.float64)
    win = np.empty((5, dw), np.float32)
    lum = np.empty(dw, np.float64)
    con = np.empty(dw, np.float64)
    st = np.empty(dw, np.float64)
    c1d = np.float64(c1)
    c2d = np.float64(c2)
    zero = np.float32(0.0)
    ssim_sum = 0.0
    l_sum = 0.0
    c_sum = 0.0
    s_sum = 0.0
    for y in range(k - 1):
        _horizontal(ref[y], cmp[y], taps, src, acc, ring[y])
    for y in range(dh):
        _horizontal(ref[y + k - 1], cmp[y + k - 1], taps, src, acc, ring[(y + k - 1) % k])
        for plane in range(5):
            acc[:] = 0.0
            for v in range(k):
                t = taps[v]
                row = ring[(y + v) % k, plane]
                for x in range(dw):
                    acc[x] += np.float32(row[x] * t)
            out = win[plane]
            for x in range(dw):
                out[x] = np.float32(acc[x])
        mu1 = win[0]
        mu2 = win[1]
        s11 = win[2]
        s22 = win[3]
        s12 = win[4]
        for x in range(dw):
            m1 = mu1[x]
            m2 = mu2[x]
            v1 = s11[x] - np.float32(m1 * m1)
            v2 = s22[x] - np.float32(m2 * m2)
            v1 = zero if v1 < zero else v1
            v2 = zero if v2 < zero else v2
            cov = s12[x] - np.float32(m1 * m2)
            sd12 = np.float32(math.sqrt(np.float64(np.float32(v1 * v2))))
            lum_den = np.float32(np.float32(np.float32(m1 * m1) + np.float32(m2 * m2)) + c1)
            lum[x] = (2.0 * np.float64(m1) * np.float64(m2) + c1d) / np.float64(lum_den)
            con_den = np.float32(np.float32(v1 + v2) + c2)
            con[x] = (2.0 * np.float64(sd12) + c2d) / np.float64(con_den)
            cov = zero if (cov < zero and sd12 <= zero) else cov
            st[x] = np.float64(np.float32(np.float32(cov + c3) / np.float32(sd12 + c3)))
        for x in range(dw):
            ssim_sum += lum[x] * con[x] * st[x]
            l_sum += lum[x]
            c_sum += con[x]
            s_sum += st[x]
    n = np.float64(dw * dh)
    return (
        np.float32(ssim_sum / n),
        np.float32(l_sum / n),
        np.float32(c_sum / n),
        np.float32(s_sum / n),
    )


@njit(cache=True, nogil=True, error_model="numpy")
def _ms_ssim(ref, cmp, taps, lpf, alphas, betas, gammas, c1, c2, c3, out):  # noqa: ANN001, ANN202
    """``compute_ms_ssim``: scale 0 is the frame, each next scale the previous one
    decimated by 2 through ``lpf``. Fills ``out`` (3, scales) with each scale's float32
    l, c, s means (as float64) and returns the product over scales of
    ``pow(l, alpha) * pow(c, beta) * pow(s, gamma)`` in float64 (inf where it overflows,
    which libvmaf refuses)."""
    msssim = 1.0
    r = ref
    d = cmp
    for i in range(alphas.shape[0]):
        if i > 0:
            r = _decimate(r, 2, lpf)
            d = _decimate(d, 2, lpf)
        _, lum, con, st = _ssim(r, d, taps, c1, c2, c3)
        msssim *= (
            math.pow(np.float64(lum), np.float64(alphas[i]))
            * math.pow(np.float64(con), np.float64(betas[i]))
            * math.pow(np.float64(st), np.float64(gammas[i]))
        )
        out[0, i] = lum
        out[1, i] = con
        out[2, i] = st
        if msssim == np.inf:
            return msssim
    return msssim


@njit(cache=True, nogil=True, error_model="numpy")
def _to_db(score, limit):  # noqa: ANN001, ANN202 - jitted
    """``convert_to_db``: ``-10 log10(1 - score)``, the limit where that is not below it
    (NaN included, as the C's ``MIN`` macro gives)."""
    db = -10.0 * math.log10(1.0 - score)
    return db if db < limit else limit


# ---------------------------------------------------------------------------------------
# host side


def _as_float(plane: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture_copy``: float32 samples, divided by 4, 16 or 256 above 8 bits."""
    if bitdepth not in _DIVISORS:
        raise ValueError(f"float SSIM takes bit depths 8, 10, 12 and 16, not {bitdepth}")
    plane = np.asarray(plane)
    if plane.ndim != 2:
        raise ValueError(f"a luma plane is 2-D (height, width), not shape {plane.shape}")
    if plane.dtype.kind not in "ui":
        raise ValueError(f"{bitdepth}-bit samples are integers, not {plane.dtype}")
    top = plane.max(initial=0)
    if plane.size and (plane.min() < 0 or top >= 1 << bitdepth):
        raise ValueError(f"samples outside 0..{(1 << bitdepth) - 1} for {bitdepth} bits")
    out = plane.astype(np.float32)
    divisor = _DIVISORS[bitdepth]
    if divisor is not None:
        out /= divisor
    return np.ascontiguousarray(out)


def _pair(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> tuple[np.ndarray, np.ndarray]:
    r = _as_float(ref, bitdepth)
    d = _as_float(dis, bitdepth)
    if r.shape != d.shape:
        raise ValueError(f"reference {r.shape} and distorted {d.shape} planes differ in shape")
    return r, d


def max_db(width: int, height: int, bitdepth: int) -> float:
    """``clip_db``'s ceiling: ``ceil(10 log10(peak^2 / (0.5 / (w h))))``, peak
    ``2**bitdepth - 1``, as libvmaf's ``init`` computes it (``peak * peak`` in 32-bit
    unsigned arithmetic, which holds 16 bits' square)."""
    peak = (1 << bitdepth) - 1
    mse = 0.5 / ((width * height) & 0xFFFFFFFF)
    return float(math.ceil(10.0 * math.log10(float((peak * peak) & 0xFFFFFFFF) / mse)))


def ssim_scale(width: int, height: int, scale: int = 0) -> int:
    """``float_ssim``'s decimation factor: ``scale`` where given (1..10), else
    ``max(1, round(min(w, h) / 256))`` with IQA's rounding (halves away from zero),
    worked in float32 as the C does."""
    if scale > 0:
        return int(scale)
    a = np.float32(min(width, height)) / np.float32(256.0)
    t = int(a)
    rounded = t + 1 if np.float64(a - np.float32(t)) >= 0.5 else t
    return max(1, rounded)


def _check_reach(w: int, h: int, factor: int) -> None:
    """Refuse a decimation whose filter would reach past one mirror image of the frame
    (libvmaf reads outside its buffer there)."""
    c = factor // 2
    hi = c - (1 - (factor & 1))
    for side in (w, h):
        last = (side // factor + (side & 1) - 1) * factor + hi
        if c > side or last > 2 * side - 1:
            raise ValueError(f"a {w}x{h} frame is too small for float_ssim's scale {factor}")


def _empty_mean(dw: int, dh: int) -> np.float32:
    """What ``_iqa_ssim`` gives where the window does not fit (a side under 11): no term
    is summed, and 0.0 over the int ``dw * dh`` is NaN, 0.0 or -0.0."""
    n = dw * dh
    return np.float32(math.nan if n == 0 else math.copysign(0.0, n))


def _check_options(options: dict, table: dict, feature: str) -> dict:
    unknown = sorted(set(options) - set(table))
    if unknown:
        raise ValueError(f"{feature} has no option {', '.join(unknown)}; it has {list(table)}")
    values = {}
    for name, (default, lo, hi) in table.items():
        value = options.get(name, default)
        if lo is None:
            if not isinstance(value, bool | np.bool_):
                raise ValueError(f"{feature}'s {name} is true or false, not {value!r}")
            value = bool(value)
        else:
            if isinstance(value, bool) or int(value) != value or not lo <= value <= hi:
                raise ValueError(f"{feature}'s {name} is an integer {lo}..{hi}, not {value!r}")
            value = int(value)
        values[name] = value
    return values


def float_ssim_names(*, enable_lcs: bool = False) -> list[str]:
    """The outputs ``float_ssim`` writes, in its order (the collector's names, which its
    CLI's JSON, XML and CSV use too)."""
    return ["float_ssim"] + (["float_ssim_l", "float_ssim_c", "float_ssim_s"] if enable_lcs else [])


def float_ms_ssim_names(*, enable_lcs: bool = False) -> list[str]:
    """The outputs ``float_ms_ssim`` writes, in its order."""
    names = ["float_ms_ssim"]
    if enable_lcs:
        names += [f"float_ms_ssim_{t}_scale{i}" for t in "lcs" for i in range(MS_SSIM_SCALES)]
    return names


def float_ssim_frame(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, **options: object
) -> dict[str, float]:
    """libvmaf's ``float_ssim`` of one frame's luma planes (``(h, w)`` integers).

    Options (libvmaf's names): ``enable_lcs`` (also the mean luminance, contrast and
    structure terms), ``enable_db`` (``-10 log10(1 - ssim)``), ``clip_db`` (that capped at
    :func:`max_db`), ``scale`` (0: :func:`ssim_scale`'s automatic factor; 1: none; 2..10).
    Returns ``{name: value}`` in :func:`float_ssim_names`' order. Where the decimated
    frame is narrower or lower than the 11-sample window, libvmaf sums nothing and
    divides 0.0 by the (possibly negative) count of window positions: NaN, 0.0 or -0.0,
    given here as it gives them; a frame too small for the decimation's filter to stay
    within one mirror image (where libvmaf reads outside its buffer) is refused."""
    opts = _check_options(options, FLOAT_SSIM_OPTIONS, "float_ssim")
    r, d = _pair(ref, dis, bitdepth)
    h, w = r.shape
    factor = ssim_scale(w, h, opts["scale"])
    if factor > 1:
        _check_reach(w, h, factor)
        box = np.full((factor, factor), np.float32(1.0) / np.float32(factor * factor), np.float32)
        r = _decimate(r, factor, box)
        d = _decimate(d, factor, box)
    if min(r.shape) < GAUSSIAN_LEN:
        score = lum = con = st = _empty_mean(
            r.shape[1] - GAUSSIAN_LEN + 1, r.shape[0] - GAUSSIAN_LEN + 1
        )
    else:
        score, lum, con, st = _ssim(r, d, GAUSSIAN_TAPS, C1, C2, C3)
    value = float(score)
    if opts["enable_db"]:
        limit = max_db(w, h, bitdepth) if opts["clip_db"] else math.inf
        value = float(_to_db(value, limit))
    out = {"float_ssim": value}
    if opts["enable_lcs"]:
        out.update(float_ssim_l=float(lum), float_ssim_c=float(con), float_ssim_s=float(st))
    return out


def float_ms_ssim_frame(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, **options: object
) -> dict[str, float]:
    """libvmaf's ``float_ms_ssim`` of one frame's luma planes (``(h, w)`` integers).

    Options: ``enable_lcs`` (each scale's mean luminance, contrast and structure terms,
    ``float_ms_ssim_{l,c,s}_scale{0..4}``), ``enable_db``, ``clip_db`` (as
    :func:`float_ssim_frame`'s). Both sides must be at least :data:`MS_SSIM_MIN_SIDE`
    (176) samples, as libvmaf requires ("scale below 1x1")."""
    opts = _check_options(options, FLOAT_MS_SSIM_OPTIONS, "float_ms_ssim")
    r, d = _pair(ref, dis, bitdepth)
    h, w = r.shape
    if w < MS_SSIM_MIN_SIDE or h < MS_SSIM_MIN_SIDE:
        raise ValueError(
            f"float_ms_ssim needs a frame of at least {MS_SSIM_MIN_SIDE}x{MS_SSIM_MIN_SIDE} "
            f"samples (libvmaf: 'scale below 1x1'), not {w}x{h}"
        )
    lcs = np.empty((3, MS_SSIM_SCALES), np.float64)
    score = float(
        _ms_ssim(
            r, d, GAUSSIAN_TAPS, LPF_9X9, MS_SSIM_ALPHAS, MS_SSIM_BETAS, MS_SSIM_GAMMAS,
            C1, C2, C3, lcs,
        )
    )  # fmt: skip
    if score == math.inf:
        raise ValueError("float_ms_ssim overflowed to infinity (libvmaf refuses the frame)")
    if opts["enable_db"]:
        limit = max_db(w, h, bitdepth) if opts["clip_db"] else math.inf
        score = float(_to_db(score, limit))
    out = {"float_ms_ssim": score}
    if opts["enable_lcs"]:
        for t, kind in enumerate("lcs"):
            for i in range(MS_SSIM_SCALES):
                out[f"float_ms_ssim_{kind}_scale{i}"] = float(lcs[t, i])
    return out

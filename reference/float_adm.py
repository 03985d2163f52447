"""Bit-exact NumPy reference of libvmaf's ``float_adm`` (``float_adm.c`` over ``adm.c``'s
``compute_adm``, ``adm_tools.c``'s stages, ``adm_tools.h``'s ``dwt_quant_step`` and
``ADM_CM_THRESH_S_*``, ``barten_csf_tools.h`` and ``adm_csf_tools.h``, and
``picture_copy.c``; scalar C, its SSE reciprocal included).

Per frame pair, from the luma planes alone: ``adm2``, ``aim``, ``adm3`` and
``adm_scale0`` .. ``adm_scale3``, and with ``debug`` ``adm``, ``adm_num``, ``adm_den`` and
each scale's numerator and denominator (:data:`NAMES`, :data:`DEBUG_NAMES`).

The steps, with their types (float32 unless said otherwise):

- :func:`admcuda.reference.picture_copy.picture_copy` with offset -128.
- Four scales, each on the previous scale's approximation band:
  :func:`dwt2` (``adm_dwt2_s``; ``adm_dwt2_lo_s`` for a skipped scale 0): the
  Daubechies-2 filter down the rows then along them, each output a running float32 sum
  of four float32 products, with :func:`src_indices`' mirror (``dwt2_src_indices_filt_s``).
  :func:`decouple` (``adm_decouple_s``): each detail band's restored part, the gain
  ``k = clamp(dis * rcp_s(ref + 1e-30), 0, 1)`` (:mod:`admcuda.reference.rcpss`, the
  CPU's approximate reciprocal) times the reference, or, where the (h, v) angles differ
  under 1 degree, the gain limited in double by ``adm_enhn_gain_limit``; the additive
  part is the distorted band less it.
  :func:`csf_factors` (Watson's ``dwt_quant_step``, Barten's CSF or ADM's own, or an
  ``adm_f1sN``/``adm_f2sN`` override): one float32 factor for h and v, one for d.
  :func:`csf_den_scale` (``adm_csf_den_scale_s``): the p-norm of the reference's
  weighted bands inside the border, plus the noise floor.
  :func:`csf` (``adm_csf_s``) and :func:`cm` (``adm_cm_s``): the restored part masked
  by a 3x3 threshold of the additive part (``num``), then the additive part masked by
  the restored part's (``aim``, no noise floor).
- :func:`scores`: the doubles of ``compute_adm`` and ``float_adm.c``'s ``extract``.

Sums run in the C's order: along a row one sample after another, then the rows' sums one
after another, each in float32. Constants the C writes as double literals
(``FLOAT_ONE_BY_30``, ``FLOAT_ONE_BY_15``, ``adm_enhn_gain_limit``) make double products
rounded once to float32. ``powf`` is the C library's (ctypes) for single numbers; a
p-norm other than 3 raises every sample with NumPy's double ``power`` rounded to float32,
glibc's ``powf`` to the last bit but where a result lies within 2^-50 or so of a float32
midpoint.

Sizes: every scale's bands must be at least 2x2 (libvmaf's mirrors read row and column 1
of each), so width and height at least :data:`MIN_SIDE`; libvmaf reads outside smaller
bands.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from .picture_copy import check_plane, picture_copy
from .rcpss import divs

__all__ = [
    "BORDER_FACTOR",
    "DEBUG_NAMES",
    "MIN_SIDE",
    "NAMES",
    "Bands",
    "FloatAdmParams",
    "cm",
    "compute_float_adm",
    "csf",
    "csf_den_scale",
    "csf_factors",
    "decouple",
    "dwt2",
    "powf",
    "scores",
    "src_indices",
]

FEATURE = "float_adm"
NAMES = (
    "adm2",
    "aim",
    "adm3",
    "adm_scale0",
    "adm_scale1",
    "adm_scale2",
    "adm_scale3",
)
"""The names ``extract`` writes, in its order (the aliases of ``VMAF_feature_adm2_score``
and the others, as libvmaf's files print them)."""
DEBUG_NAMES = (
    "adm",
    "adm_num",
    "adm_den",
    "adm_num_scale0",
    "adm_den_scale0",
    "adm_num_scale1",
    "adm_den_scale1",
    "adm_num_scale2",
    "adm_den_scale2",
    "adm_num_scale3",
    "adm_den_scale3",
)
"""The names ``extract`` writes after :data:`NAMES` with ``debug``, in its order."""

MIN_SIDE = 17
"""The least width and height whose scale-3 bands are 2 samples a side."""

BORDER_FACTOR = 0.1
"""``ADM_BORDER_FACTOR``: the part of each side left out of the sums."""

DB2_LO = np.array([0.482962913144690, 0.836516303737469, 0.224143868041857,
                   -0.129409522550921], np.float32)  # fmt: skip
DB2_HI = np.array([-0.129409522550921, -0.224143868041857, 0.836516303737469,
                   -0.482962913144690], np.float32)  # fmt: skip
ONE_BY_30 = 0.0333333351
"""``FLOAT_ONE_BY_30``, a double literal."""
ONE_BY_15 = 0.0666666701
"""``FLOAT_ONE_BY_15``, a double literal."""
EPS = np.float32(1e-30)
COS_1DEG_SQ = np.float32(math.cos(1.0 * math.pi / 180.0) * math.cos(1.0 * math.pi / 180.0))
LUMINANCE_LEVEL = 100.0
"""``DEFAULT_ADM_CSF_LUMINANCE_LEVEL``: the Barten CSF's luminance (cd/m2)."""

# adm_tools.h: Watson et al.'s 7-9 wavelet noise model for Y, and the basis amplitudes
WATSON_A, WATSON_K, WATSON_F0 = np.float32(0.495), np.float32(0.466), np.float32(0.401)
WATSON_G = np.array([1.501, 1.0, 0.534, 1.0], np.float32)
BASIS_AMPLITUDES = np.array(
    [[0.62171, 0.67234, 0.72709, 0.67234],
     [0.34537, 0.41317, 0.49428, 0.41317],
     [0.18004, 0.22727, 0.28688, 0.22727],
     [0.091401, 0.11792, 0.15214, 0.11792],
     [0.045943, 0.059758, 0.077727, 0.059758],
     [0.023013, 0.030018, 0.039156, 0.030018]],
    np.float32,
)  # fmt: skip

# barten_csf_tools.h
BARTEN_ANCHORS = np.array([0.002, 0.02, 0.2, 2, 20, 150], np.float32)
BARTEN_PARAMS = np.array(
    [[0.0160737, 0.991265, 3.74038, 0.50722, 4.46044],
     [0.383873, 0.800889, 3.54104, 0.682505, 4.94958],
     [0.929301, 0.476505, 4.37453, 0.750315, 5.28678],
     [1.29776, 0.405782, 4.40602, 0.935314, 5.61425],
     [1.49222, 0.334278, 3.79542, 1.07327, 6.4635],
     [1.46213, 0.394533, 2.7755, 1.16577, 7.45665]],
    np.float32,
)  # fmt: skip
BARTEN_SA = np.array([30.162, 4.0627, 1.6596, 0.2712], np.float32)
BARTEN_MTF_A = np.array([0.424838596301290, 0.572435103936480, 0.000167576239164937,
                         0.00255872352306433], np.float32)  # fmt: skip
BARTEN_MTF_B = np.array([0.028, 0.37, 37, 360], np.float32)

CSF_BARTEN, CSF_ADM = 1, 2
"""``adm_csf_mode``'s Barten and ADM CSFs; every other mode (0, 3 .. 9) is Watson's."""

_F32 = np.float32
_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_libm.powf.restype = ctypes.c_float
_libm.powf.argtypes = [ctypes.c_float, ctypes.c_float]


def powf(x: float, y: float) -> np.float32:
    """The C library's ``powf`` (both arguments rounded to float32, as the C passes them)."""
    return _F32(_libm.powf(float(_F32(x)), float(_F32(y))))


@dataclass(frozen=True)
class FloatAdmParams:
    """``float_adm``'s options (``float_adm.c``'s table, defaults included); the luminance
    level is fixed at :data:`LUMINANCE_LEVEL`."""

    debug: bool = False
    adm_enhn_gain_limit: float = 100.0
    adm_norm_view_dist: float = 3.0
    adm_noise_weight: float = 0.03125
    adm_csf_scale: float = 1.0
    adm_csf_diag_scale: float = 1.0
    adm_ref_display_height: int = 1080
    adm_csf_mode: int = 0
    adm_bypass_cm: int = 0
    adm_adm3_apply_hm: bool = False
    adm_p_norm: float = 3.0
    adm_dlm_weight: float = 0.5
    adm_min_val: float = 0.0
    adm_f1s0: float = -1.0
    adm_f1s1: float = -1.0
    adm_f1s2: float = -1.0
    adm_f1s3: float = -1.0
    adm_f2s0: float = -1.0
    adm_f2s1: float = -1.0
    adm_f2s2: float = -1.0
    adm_f2s3: float = -1.0
    adm_skip_aim_scale: int = -1
    adm_skip_scale0: bool = False


class Bands(NamedTuple):
    """One DWT level, float32: approximation ``a`` and the details ``h`` (high-pass down
    the rows), ``v`` (high-pass along them) and ``d`` (both); details ``None`` for
    ``adm_dwt2_lo_s``."""

    a: np.ndarray
    h: np.ndarray | None
    v: np.ndarray | None
    d: np.ndarray | None


def src_indices(n: int) -> np.ndarray:
    """``dwt2_src_indices_filt_s``: the four rows (or columns) ``2i - 1 .. 2i + 2`` that
    output ``i`` reads, ``(4, ceil(n / 2))``; -1 reads 1 and ``n + k`` reads ``n - 1 - k``."""
    index = 2 * np.arange((n + 1) // 2)[None, :] + np.arange(-1, 3)[:, None]
    index = np.where(index < 0, -index, index)
    return np.where(index >= n, 2 * n - index - 1, index)


def _fir(taps: list[np.ndarray], coeffs: np.ndarray) -> np.ndarray:
    """A running float32 sum from 0 of four float32 products, in order."""
    acc = np.zeros(taps[0].shape, np.float32)
    for k in range(4):
        acc += coeffs[k] * taps[k]
    return acc


def dwt2(picture: np.ndarray, *, lo_only: bool = False) -> Bands:
    """``adm_dwt2_s`` (``adm_dwt2_lo_s`` with ``lo_only``) of a float32 picture."""
    h, w = picture.shape
    rows = [picture[r] for r in src_indices(h)]
    cols = src_indices(w)
    lo = _fir(rows, DB2_LO)
    a = _fir([lo[:, c] for c in cols], DB2_LO)
    if lo_only:
        return Bands(a, None, None, None)
    hi = _fir(rows, DB2_HI)
    v = _fir([lo[:, c] for c in cols], DB2_HI)
    hh = _fir([hi[:, c] for c in cols], DB2_LO)
    d = _fir([hi[:, c] for c in cols], DB2_HI)
    return Bands(a, hh, v, d)


def decouple(ref: Bands, dis: Bands, gain_limit: float) -> tuple[tuple, tuple]:
    """``adm_decouple_s``: the restored ``(h, v, d)`` and additive ``(h, v, d)`` bands.

    Computed over the whole band: libvmaf computes a border 1 sample inside the region
    the sums read and 2 past it, and reads nothing else."""
    oh, ov, od = ref.h, ref.v, ref.d
    th, tv, td = dis.h, dis.v, dis.d
    ot_dp = oh * th + ov * tv
    o_mag_sq = oh * oh + ov * ov
    t_mag_sq = th * th + tv * tv
    angle_flag = (ot_dp >= 0) & (ot_dp * ot_dp >= COS_1DEG_SQ * o_mag_sq * t_mag_sq)
    restored, additive = [], []
    for o, t in ((oh, th), (ov, tv), (od, td)):
        k = np.clip(divs(t, o + EPS), _F32(0), _F32(1))
        rst = k * o
        wide = rst.astype(np.float64) * gain_limit
        t64 = t.astype(np.float64)
        pos = angle_flag & (rst > 0)
        neg = angle_flag & (rst < 0)
        rst = np.where(pos, np.minimum(wide, t64).astype(np.float32), rst)
        rst = np.where(neg, np.maximum(wide, t64).astype(np.float32), rst)
        restored.append(rst)
        additive.append(t - rst)
    return tuple(restored), tuple(additive)


def _watson(scale: int, theta: int, params: FloatAdmParams) -> np.float32:
    """``dwt_quant_step``'s float32 quantisation step for ``scale`` and orientation."""
    r = float(_F32(params.adm_norm_view_dist * params.adm_ref_display_height * math.pi / 180.0))
    temp = _F32(math.log10(2.0 ** (scale + 1) * float(WATSON_F0) * float(WATSON_G[theta]) / r))
    exponent = float(WATSON_K * temp * temp)
    q = 2.0 * float(WATSON_A) * math.pow(10.0, exponent) / float(BASIS_AMPLITUDES[scale, theta])
    return _F32(q)


def _lerp(lp: np.float32, lv: np.float32, rp: np.float32, rv: np.float32,
          sp: np.float32) -> np.float32:  # fmt: skip
    return lv + ((rv - lv) / (rp - lp)) * (sp - lp)


def _barten(scale: int, params: FloatAdmParams, csf_scale: float) -> np.float32:
    """``barten_csf`` at :data:`LUMINANCE_LEVEL`."""
    r = _F32(params.adm_norm_view_dist * params.adm_ref_display_height * math.pi / 180.0)
    sf = _F32(float(r) / math.pow(2, scale + 1))
    lum = min(max(LUMINANCE_LEVEL, float(BARTEN_ANCHORS[0])), float(BARTEN_ANCHORS[5]))
    left = right = 0
    for i in range(5):
        if float(BARTEN_ANCHORS[i]) <= lum <= float(BARTEN_ANCHORS[i + 1]):
            left, right = i, i + 1
            break
    lp = _F32(math.log10(float(BARTEN_ANCHORS[left])))
    rp = _F32(math.log10(float(BARTEN_ANCHORS[right])))
    sp = _F32(math.log10(lum))
    p = [_lerp(lp, BARTEN_PARAMS[left, n], rp, BARTEN_PARAMS[right, n], sp) for n in (1, 2, 3, 4)]
    a = _F32(1.0 + math.pow(float(p[0] * sf), float(p[1])))
    b = _F32(1.0 / math.pow(1 - math.exp(-math.pow(float(sf / _F32(7)), 2)), float(p[2])))
    neural = _F32(float(p[3]) / math.pow(float(a * b), 0.5))
    mtf = _F32(0.0)
    for i in range(4):
        mtf = _F32(float(mtf) + float(BARTEN_MTF_A[i]) * math.exp(float(-BARTEN_MTF_B[i] * sf)))
    lum32 = _F32(LUMINANCE_LEVEL)
    inner = math.pow(float(BARTEN_SA[1] / lum32), float(BARTEN_SA[2])) + 1
    rod_cone = _F32(float(BARTEN_SA[0]) * math.pow(inner, -float(BARTEN_SA[3])))
    return _F32(float(neural * mtf * rod_cone) * csf_scale)


def _adm_native(scale: int, params: FloatAdmParams, theta: int) -> np.float32:
    """``adm_native_csf``: ADM's own CSF at ``theta`` 0 or 45 degrees."""
    r = _F32(params.adm_norm_view_dist * params.adm_ref_display_height * math.pi / 180.0)
    sf = _F32(float(r) / math.pow(2, scale + 1))
    if theta == 45:
        sf = _F32(float(sf) / 0.7)
    return _F32((0.31 + 0.69 * float(sf)) * math.exp(-0.29 * float(sf)))


def csf_factors(scale: int, params: FloatAdmParams) -> tuple[np.float32, np.float32]:
    """The float32 weights of the h and v bands and of the d band at ``scale`` (``rfactor``
    in ``adm_csf_s``, ``adm_csf_den_scale_s`` and ``adm_cm_s``)."""
    if params.adm_csf_mode == CSF_BARTEN:
        f1 = _barten(scale, params, params.adm_csf_scale)
        f2 = _barten(scale, params, params.adm_csf_diag_scale)
    elif params.adm_csf_mode == CSF_ADM:
        f1, f2 = _adm_native(scale, params, 0), _adm_native(scale, params, 45)
    else:
        f1 = _F32(1.0) / _watson(scale, 1, params)
        f2 = _F32(1.0) / _watson(scale, 2, params)
    o1 = getattr(params, f"adm_f1s{scale}")
    o2 = getattr(params, f"adm_f2s{scale}")
    return (_F32(o1) if o1 >= 0 else f1), (_F32(o2) if o2 >= 0 else f2)


def csf(bands: tuple, f1: np.float32, f2: np.float32) -> tuple[tuple, tuple]:
    """``adm_csf_s``: the weighted ``(h, v, d)`` and their float32 ``FLOAT_ONE_BY_30``
    multiples of the magnitudes (a double product rounded once)."""
    weighted = tuple(f * b for f, b in zip((f1, f1, f2), bands, strict=True))
    flt = tuple((ONE_BY_30 * np.abs(x).astype(np.float64)).astype(np.float32) for x in weighted)
    return weighted, flt


def _region(w: int, h: int) -> tuple[int, int, int, int]:
    """The sums' ``left, top, right, bottom`` (the C's double to int truncation)."""
    left = int(w * BORDER_FACTOR - 0.5)
    top = int(h * BORDER_FACTOR - 0.5)
    return left, top, w - left, h - top


def _power(x: np.ndarray, p_norm: float) -> np.ndarray:
    """``x * x * x`` for a p-norm of 3, otherwise ``powf(x, p_norm)`` per sample."""
    if p_norm == 3.0:
        return x * x * x
    return np.power(x.astype(np.float64), float(_F32(p_norm))).astype(np.float32)


def _row_major_sum(values: np.ndarray) -> np.float32:
    """Each row's float32 running sum, then the rows' sums added from 0 in order."""
    if not values.size:
        return _F32(0.0)
    rows = np.add.accumulate(values, axis=1, dtype=np.float32)[:, -1]
    return _F32(_F32(0.0) + np.add.accumulate(rows, dtype=np.float32)[-1])


def _noise_constant(w: int, h: int, weight: float, p_norm: float) -> np.float32:
    """``get_noise_constant``: ``powf(w * h * weight, 1 / p_norm)``."""
    return powf(w * h * weight, 1.0 / p_norm)


def csf_den_scale(ref: Bands, f1: np.float32, f2: np.float32, params: FloatAdmParams) -> np.float32:
    """``adm_csf_den_scale_s``: the sum over h, v and d of the p-norm of the reference's
    weighted band inside the border plus the noise floor."""
    h, w = ref.h.shape
    left, top, right, bottom = _region(w, h)
    total = None
    for f, band in zip((f1, f1, f2), (ref.h, ref.v, ref.d), strict=True):
        x = np.abs(f * band[top:bottom, left:right])
        accum = _row_major_sum(_power(x, params.adm_p_norm))
        part = powf(accum, 1.0 / params.adm_p_norm) + _noise_constant(
            right - left, bottom - top, params.adm_noise_weight, params.adm_p_norm
        )
        total = part if total is None else total + part
    return _F32(total)


def _neighbours(n: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices ``i - 1, i, i + 1`` for ``i`` in ``[lo, hi)``: -1 reads 1, ``n`` reads ``n - 1``."""
    i = np.arange(lo, hi)
    return np.where(i == 0, 1, i - 1), i, np.where(i == n - 1, n - 1, i + 1)


def threshold(angles: tuple, flt: tuple, region: tuple[int, int, int, int]) -> np.ndarray:
    """``ADM_CM_THRESH_S_*``: per sample of the region, the float32 sum over h, v and d of
    each band's 3x3 sum, row by row, of ``flt`` with the centre replaced by
    ``FLOAT_ONE_BY_15 * |angle|`` (added in double, rounded once)."""
    left, top, right, bottom = region
    h, w = angles[0].shape
    rows = _neighbours(h, top, bottom)
    cols = _neighbours(w, left, right)
    thr = np.zeros((bottom - top, right - left), np.float32)
    for angle, f in zip(angles, flt, strict=True):
        s = np.zeros_like(thr)
        for ri, r in enumerate(rows):
            for ci, c in enumerate(cols):
                if ri == 1 and ci == 1:
                    centre = ONE_BY_15 * np.abs(angle[np.ix_(r, c)]).astype(np.float64)
                    s = (s.astype(np.float64) + centre).astype(np.float32)
                else:
                    s += f[np.ix_(r, c)]
        thr += s
    return thr


def cm(src: tuple, angles: tuple, flt: tuple, f1: np.float32, f2: np.float32,
       params: FloatAdmParams, noise_weight: float) -> np.float32:  # fmt: skip
    """``adm_cm_s``: the sum over h, v and d of the p-norm inside the border of
    ``max(|f * src| - threshold, 0)`` (no threshold with ``adm_bypass_cm``), plus the
    noise floor of ``noise_weight``."""
    h, w = src[0].shape
    region = _region(w, h)
    left, top, right, bottom = region
    if params.adm_bypass_cm:
        thr = np.zeros((bottom - top, right - left), np.float32)
    else:
        thr = threshold(angles, flt, region)
    total = None
    for f, band in zip((f1, f1, f2), src, strict=True):
        x = np.abs(band[top:bottom, left:right] * f) - thr
        x = np.where(x < 0, _F32(0.0), x)
        accum = _row_major_sum(_power(x, params.adm_p_norm))
        part = powf(accum, 1.0 / params.adm_p_norm) + _noise_constant(
            right - left, bottom - top, noise_weight, params.adm_p_norm
        )
        total = part if total is None else total + part
    return _F32(total)


def scores(
    nums: list[np.float32],
    dens: list[np.float32],
    aims: list[np.float32],
    w: int,
    h: int,
    params: FloatAdmParams,
) -> dict[str, float]:
    """``compute_adm``'s double sums of the scales' float32 numerators and denominators
    and ``extract``'s outputs, by :data:`NAMES` (then :data:`DEBUG_NAMES` with ``debug``).

    Sums under ``1e-10 * w * h / (1920 * 1080)`` count as 0. A denominator of 0 (a
    reference without detail and no noise floor) makes ``adm2`` 1 and leaves libvmaf's
    ``aim`` unset (whatever its stack held): refused (ValueError)."""
    limit = 1e-10 * (w * h) / (1920.0 * 1080.0)
    num = den = aim_num = aim_den = 0.0
    for scale in range(4):
        num += float(nums[scale])
        den += float(dens[scale])
        if params.adm_skip_aim_scale != scale:
            aim_den += float(dens[scale])
            aim_num += float(aims[scale])
    num = 0.0 if num < limit else num
    den = 0.0 if den < limit else den
    if den == 0.0:
        raise ValueError(
            f"{FEATURE}: the denominator is 0 (a reference without detail and no noise "
            "floor), where libvmaf's aim score is left unset"
        )
    aim = min(aim_num / aim_den, 1.0)
    score = num / den
    if params.adm_adm3_apply_hm:
        adm3 = 2 * score * aim / (score + aim)
    else:
        adm3 = score * params.adm_dlm_weight + (1 - aim) * (1 - params.adm_dlm_weight)
    adm3 = adm3 if adm3 > params.adm_min_val else params.adm_min_val
    out = {"adm2": score, "aim": aim, "adm3": adm3}
    for scale in range(4):
        out[f"adm_scale{scale}"] = float(nums[scale]) / float(dens[scale])
    if params.debug:
        out.update(adm=score, adm_num=num, adm_den=den)
        for scale in range(4):
            out[f"adm_num_scale{scale}"] = float(nums[scale])
            out[f"adm_den_scale{scale}"] = float(dens[scale])
    return out


def check_size(w: int, h: int) -> None:
    """Refuse (ValueError) a frame under :data:`MIN_SIDE` samples a side."""
    if min(w, h) < MIN_SIDE:
        raise ValueError(
            f"{FEATURE}: a {w}x{h} plane is under {MIN_SIDE} samples a side (libvmaf's "
            "scale-3 bands would be under 2x2 and its mirrors read outside them)"
        )


def scale_sums(
    ref: Bands, dis: Bands, scale: int, params: FloatAdmParams
) -> tuple[np.float32, np.float32, np.float32]:
    """One scale's float32 (numerator, denominator, AIM numerator) from its DWT bands."""
    restored, additive = decouple(ref, dis, params.adm_enhn_gain_limit)
    f1, f2 = csf_factors(scale, params)
    den = csf_den_scale(ref, f1, f2, params)
    a_weighted, a_flt = csf(additive, f1, f2)
    num = cm(restored, a_weighted, a_flt, f1, f2, params, params.adm_noise_weight)
    r_weighted, r_flt = csf(restored, f1, f2)
    aim = cm(additive, r_weighted, r_flt, f1, f2, params, 0.0)
    return num, den, aim


def compute_float_adm(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, params: FloatAdmParams | None = None
) -> dict[str, float]:
    """One frame pair's outputs, by :data:`NAMES` (and :data:`DEBUG_NAMES`).

    Parameters
    ----------
    ref, dis : ndarray
        Luma planes of one shape, at least 17x17, uint8 at 8 bits and uint16 above.
    bitdepth : {8, 10, 12, 16}
    params : FloatAdmParams, optional
        libvmaf's options (its defaults when omitted).
    """
    params = params or FloatAdmParams()
    if ref.shape != dis.shape:
        raise ValueError(f"{FEATURE}: planes of {ref.shape} and {dis.shape}")
    check_plane(ref, bitdepth, FEATURE)
    h, w = ref.shape
    check_size(w, h)
    a = picture_copy(ref, bitdepth, -128, feature=FEATURE)
    b = picture_copy(dis, bitdepth, -128, feature=FEATURE)
    nums, dens, aims = [], [], []
    for scale in range(4):
        skip = scale == 0 and params.adm_skip_scale0
        ref_bands = dwt2(a, lo_only=skip)
        dis_bands = dwt2(b, lo_only=skip)
        if skip:
            num, den, aim = _F32(0.0), _F32(1e-10), _F32(0.0)
        else:
            num, den, aim = scale_sums(ref_bands, dis_bands, scale, params)
        nums.append(num)
        dens.append(den)
        aims.append(aim)
        a, b = ref_bands.a, dis_bands.a
    return scores(nums, dens, aims, w, h, params)


def option_fields() -> tuple[str, ...]:
    """The option names, in ``float_adm.c``'s table order."""
    return tuple(f.name for f in fields(FloatAdmParams))

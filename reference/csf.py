"""Stage 3: contrast sensitivity weighting (libvmaf ``adm_csf``, ``i4_adm_csf``) and the
per-scale CSF factors every later stage shares (``dwt_quant_step``, ``barten_csf``,
``barten_watson_blend_csf[_mae]``).

The factor functions reproduce libvmaf's float/double mix step by step: ``f32(...)``
marks each assignment to a C ``float``; everything else is double, as in C.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import constants as C
from .cnum import f32, pow2, u16_from_double, u32_from_double
from .dwt2 import Bands

f64 = float


def _pixels_per_degree(nvd: float, rdh: int) -> np.float32:
    return f32(nvd * rdh * math.pi / 180.0)


def watson_quant_step(scale: int, theta: int, nvd: float, rdh: int) -> np.float32:
    """libvmaf ``dwt_quant_step`` for luma: Watson et al. 1997, formulas (1) and (9)."""
    a, k, f0 = (f32(x) for x in C.WATSON_Y[:3])
    g = f32(C.WATSON_Y[3][theta])
    r = _pixels_per_degree(nvd, rdh)
    temp = f32(math.log10(pow2(scale + 1) * f64(f0) * f64(g) / f64(r)))
    amp = f32(C.WATSON_AMPLITUDES[scale][theta])
    return f32(2.0 * f64(a) * math.pow(10.0, f64(k * temp * temp)) / f64(amp))


def _lerp(lp: np.float32, lv: np.float32, rp: np.float32, rv: np.float32, sp: np.float32):
    return lv + ((rv - lv) / (rp - lp)) * (sp - lp)


def barten_csf(
    scale: int, nvd: float, rdh: int, csf_scale: float, lum: float = C.CSF_LUMINANCE
) -> np.float32:
    """libvmaf ``barten_csf``: HDR-VDP-2's simplified Barten CSF at one DWT level."""
    r = _pixels_per_degree(nvd, rdh)
    sf = f32(f64(r) / pow2(scale + 1))
    anchors = [f64(f32(x)) for x in C.BARTEN_ANCHORS]
    clamped = min(max(lum, anchors[0]), anchors[5])
    li = ri = 0
    for i in range(5):
        if anchors[i] <= clamped <= anchors[i + 1]:
            li, ri = i, i + 1
            break
    lp = f32(math.log10(anchors[li]))
    rp = f32(math.log10(anchors[ri]))
    sp = f32(math.log10(clamped))
    lo, hi = C.BARTEN_PARAMS[li], C.BARTEN_PARAMS[ri]
    p0, p1, p2, p3 = (_lerp(lp, f32(lo[n]), rp, f32(hi[n]), sp) for n in range(1, 5))
    a = f32(1.0 + math.pow(f64(p0 * sf), f64(p1)))
    b = f32(1.0 / math.pow(1 - math.exp(-math.pow(f64(sf / f32(7)), 2)), f64(p2)))
    csf = f32(f64(p3) / math.pow(f64(a * b), 0.5))

    mtf = f32(0.0)
    for ai, bi in zip(C.BARTEN_MTF_A, C.BARTEN_MTF_B, strict=False):
        mtf = f32(f64(mtf) + f64(f32(ai)) * math.exp(f64(-f32(bi) * sf)))

    lum_f = f32(lum)
    sa = [f32(x) for x in C.BARTEN_SA]
    rod = f32(f64(sa[0]) * math.pow(math.pow(f64(sa[1] / lum_f), f64(sa[2])) + 1, f64(-sa[3])))
    return f32(f64(csf * mtf * rod) * csf_scale)


def csf_factors(scale: int, opts) -> tuple[np.float32, np.float32]:
    """The (h/v, d) CSF factors for ``scale`` under the chosen ``adm_csf_mode``."""
    return _csf_factors(
        scale, opts.adm_csf_mode, opts.adm_norm_view_dist, opts.adm_ref_display_height,
        opts.adm_csf_scale, opts.adm_csf_diag_scale,
    )  # fmt: skip


@functools.lru_cache(maxsize=64)
def _csf_factors(
    scale: int, mode: int, nvd: float, rdh: int, csf_scale: float, csf_diag_scale: float
) -> tuple[np.float32, np.float32]:
    # Pure in its arguments; the float finish asks for it on every frame.
    if mode == C.CSF_MODE_BARTEN:
        return (
            barten_csf(scale, nvd, rdh, csf_scale),
            barten_csf(scale, nvd, rdh, csf_diag_scale),
        )
    if mode in (C.CSF_MODE_BLEND, C.CSF_MODE_BLEND_MAE):
        table = C.BLEND_CSF if mode == C.CSF_MODE_BLEND else C.BLEND_CSF_MAE
        row = table.get((rdh, nvd))
        if row is None:
            return f32(C.BLEND_MISSING), f32(C.BLEND_MISSING)
        return f32(row[0][scale]), f32(row[1][scale])
    one = f32(1.0)
    return (
        one / watson_quant_step(scale, 1, nvd, rdh),
        one / watson_quant_step(scale, 2, nvd, rdh),
    )


def rfactors(scale: int, opts) -> tuple[int, int, int]:
    """Fixed-point CSF factors for (h, v, d): Q21/Q21/Q23 uint16 at scale 0, Q32 uint32 above.

    The float-to-unsigned casts wrap the way GCC's do on x86-64; Barten factors, far
    larger than Watson's, overflow here in libvmaf, and so they do here.
    """
    f1, f2 = csf_factors(scale, opts)
    if scale == 0:
        geometry = opts.adm_norm_view_dist * opts.adm_ref_display_height
        default = C.DEFAULT_NORM_VIEW_DIST * C.DEFAULT_REF_DISPLAY_HEIGHT
        if abs(geometry - default) < 1.0e-8 and opts.adm_csf_mode == C.CSF_MODE_WATSON:
            return C.RFACTOR0_DEFAULT
        q = C.RFACTOR0_Q
        return tuple(
            u16_from_double(f64(f) * pow2(qq)) for f, qq in zip((f1, f1, f2), q, strict=False)
        )
    q32 = pow2(C.RFACTOR_S123_Q)
    return tuple(u32_from_double(f64(f) * q32) for f in (f1, f1, f2))


def csf(src: Bands, scale: int, rfactor: tuple[int, int, int]) -> tuple[Bands, Bands]:
    """Weight the decoupled bands by the CSF: returns ``(weighted, flt)``.

    ``flt`` is ``|weighted| / 30`` in fixed point, the masker's neighbourhood term.
    Scale 0: ``int16((rf * x + round) >> shift)``, ``int16((4369 * |y| + 2048) >> 12)``.
    Scales 1..3: ``int32((rf * x + 2**27) >> 28)``, ``int32((I4_ONE_BY_30 * |y| - 2**31) >> 32)``.
    """
    bands = (src.v, src.h, src.d)
    # rfactor is ordered (h, v, d) like libvmaf's angle arrays; bands here are (v, h, d).
    rf = (rfactor[1], rfactor[0], rfactor[2])
    theta = (1, 0, 2)
    dst, flt = [], []
    for x, r, t in zip(bands, rf, theta, strict=False):
        x64 = x.astype(np.int64)
        if scale == 0:
            rnd, sh = C.CSF0_ROUND[t]
            y = ((r * x64 + rnd) >> sh).astype(np.int16)
            frnd, fsh = C.FLT0_ROUND
            f = ((C.FIX_ONE_BY_30 * np.abs(y.astype(np.int64)) + frnd) >> fsh).astype(np.int16)
        else:
            rnd, sh = C.CSF_S123_DST
            y = ((r * x64 + rnd) >> sh).astype(np.int32)
            frnd, fsh = C.CSF_S123_FLT
            f = ((C.I4_FIX_ONE_BY_30 * np.abs(y).astype(np.int64) + frnd) >> fsh).astype(np.int32)
        dst.append(y)
        flt.append(f)
    return Bands(None, *dst), Bands(None, *flt)

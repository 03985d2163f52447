"""Stage 2: decouple the distorted detail into restored and additive parts
(libvmaf ``adm_decouple`` and ``adm_decouple_s123``).

For each detail band, ``k = clamp(dis / ref, 0, 1)`` in Q15 through the reciprocal
table, ``restored = k * ref``; where the (h, v) orientation of reference and distorted
agree within one degree the restored part takes the distorted value, up to the
enhancement gain limit. ``additive = dis - restored``.

The stage computes only the crop that later stages read (libvmaf leaves the rest of
its buffers stale); here whole arrays are computed and callers read the crop.
"""

from __future__ import annotations

import math

import numpy as np

from . import constants as C
from .dwt2 import Bands

f32, f64 = np.float32, np.float64

COS_1DEG_SQ = f32(math.cos(1.0 * math.pi / 180.0) * math.cos(1.0 * math.pi / 180.0))


def angle_flag(ref: Bands, dis: Bands) -> np.ndarray:
    """True where the (h, v) vectors of reference and distorted are within 1 degree.

    libvmaf tests ``dot >= 0 and dot**2 >= cos(1deg)**2 * |o|**2 * |t|**2`` after
    converting each int64 term to float and dividing by 4096 in double.
    """
    oh, ov = ref.h.astype(np.int64), ref.v.astype(np.int64)
    th, tv = dis.h.astype(np.int64), dis.v.astype(np.int64)
    dot = (oh * th + ov * tv).astype(f32).astype(f64) / C.ANGLE_SCALE
    o_mag = (oh * oh + ov * ov).astype(f32).astype(f64) / C.ANGLE_SCALE
    t_mag = (th * th + tv * tv).astype(f32).astype(f64) / C.ANGLE_SCALE
    return (dot >= 0.0) & (dot * dot >= (f64(COS_1DEG_SQ) * o_mag) * t_mag)


def _restore(
    rst: np.ndarray,
    k: np.ndarray,
    o: np.ndarray,
    t: np.ndarray,
    flag: np.ndarray,
    egl: float,
    dtype,
) -> np.ndarray:
    """Apply the enhancement gain limit where the angle test passed.

    libvmaf's sign test is on ``(float)k / 32768 * (float)o / 64``, which is positive
    exactly when ``k > 0`` and ``o > 0``. ``MIN``/``MAX`` mix double and int, and the
    double result is truncated back to the band's integer type.
    """
    scaled = rst.astype(f64) * egl
    pos = flag & (k > 0) & (o > 0)
    neg = flag & (k > 0) & (o < 0)
    lo = np.where(scaled < t, scaled, t)
    hi = np.where(scaled > t, scaled, t)
    out = np.where(pos, lo, np.where(neg, hi, rst))
    return out.astype(dtype)


def decouple(ref: Bands, dis: Bands, egl: float) -> tuple[Bands, Bands]:
    """Scale 0 (int16 bands): returns ``(restored, additive)`` with ``a`` unset.

    ``k = (lut[o + 32768] * t + 16384) >> 15`` with ``k = 32768`` where ``o == 0``,
    clamped to ``[0, 32768]``; ``restored = (k * o + 16384) >> 15`` as int16.
    """
    flag = angle_flag(ref, dis)
    lut = C.DIV_LOOKUP.astype(np.int64)
    rnd, sh = C.K_ROUND
    rs, ads = [], []
    for o16, t16 in ((ref.v, dis.v), (ref.h, dis.h), (ref.d, dis.d)):
        o, t = o16.astype(np.int64), t16.astype(np.int64)
        k = np.where(o == 0, C.K_ONE, (lut[o + 32768] * t + rnd) >> sh)
        k = np.clip(k, 0, C.K_ONE)
        rst = ((k * o + rnd) >> sh).astype(np.int16)
        rst = _restore(rst, k, o, t, flag, egl, np.int16)
        rs.append(rst)
        ads.append((t - rst).astype(np.int16))
    return Bands(None, *rs), Bands(None, *ads)


def best15(mag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """libvmaf's ``get_best15_from32``: round a magnitude >= 2**15 to 15 significant bits.

    Returns ``(mantissa, shift)``; magnitudes below 2**15 pass through with shift 0.
    """
    big = mag >= 32768
    bitlen = np.frexp(mag.astype(f64))[1].astype(np.int64)
    k = np.where(big, bitlen - 15, 0)
    rounded = (mag + np.where(big, np.left_shift(1, np.maximum(k - 1, 0)), 0)) >> k
    return np.where(big, rounded, mag), k


def decouple_s123(ref: Bands, dis: Bands, egl: float) -> tuple[Bands, Bands]:
    """Scales 1..3 (int32 bands): returns ``(restored, additive)`` with ``a`` unset.

    The reference magnitude is cut to 15 significant bits (``best15``) so the Q30
    reciprocal table still applies; ``k = (lut[m] * t * sign(o) + 2**(14 + s)) >> (15 + s)``.
    """
    flag = angle_flag(ref, dis)
    lut = C.DIV_LOOKUP.astype(np.int64)
    rnd, sh = C.K_ROUND
    rs, ads = [], []
    for o32, t32 in ((ref.v, dis.v), (ref.h, dis.h), (ref.d, dis.d)):
        o, t = o32.astype(np.int64), t32.astype(np.int64)
        mag = np.abs(o32).astype(np.uint32).astype(np.int64)
        msb, shift = best15(mag)
        sign = np.where(o < 0, -1, 1)
        # (1 << (14 + s)) is an int in C: at s == 17 (|o| == 2**31) it wraps to -2**31.
        rnd_s = np.where(shift == 17, -(1 << 31), np.left_shift(1, 14 + shift))
        k = ((lut[msb + 32768] * t) * sign + rnd_s) >> (15 + shift)
        k = np.clip(np.where(o == 0, C.K_ONE, k), 0, C.K_ONE)
        rst = ((k * o + rnd) >> sh).astype(np.int32)
        rst = _restore(rst, k, o, t, flag, egl, np.int32)
        rs.append(rst)
        ads.append((t - rst).astype(np.int32))
    return Bands(None, *rs), Bands(None, *ads)

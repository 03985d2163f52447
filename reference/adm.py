"""The whole integer ADM for one frame pair (libvmaf ``integer_compute_adm`` and the
score arithmetic of its ``extract``), built from the per-stage functions."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from . import constants as C
from .cm import cm
from .cnum import border
from .csf import csf, rfactors
from .csf_den import csf_den
from .decouple import decouple, decouple_s123
from .dwt2 import Bands, dwt2, dwt2_s123_pair

BASE_FEATURES = (
    "integer_adm2",
    "integer_aim",
    "integer_adm3",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
)
DEBUG_FEATURES = (
    "integer_adm",
    "integer_adm_num",
    "integer_adm_den",
    "integer_adm_num_scale0",
    "integer_adm_den_scale0",
    "integer_adm_num_scale1",
    "integer_adm_den_scale1",
    "integer_adm_num_scale2",
    "integer_adm_den_scale2",
    "integer_adm_num_scale3",
    "integer_adm_den_scale3",
)
ALL_FEATURES = BASE_FEATURES + DEBUG_FEATURES


class ScaleResult(NamedTuple):
    """One scale's float outputs, as libvmaf's ``float`` locals."""

    num: np.float32
    den: np.float32
    aim: np.float32


def cdiv(a: float, b: float) -> float:
    """IEEE double division (C semantics: x/0 is +-inf or NaN, never an exception)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def cmax(x: float, y: float) -> float:
    """libvmaf's ``MAX`` macro, ``x > y ? x : y`` (NaN in x yields y)."""
    return x if x > y else y


def _int16_rows_as_int32(band: np.ndarray | None, width: int) -> np.ndarray | None:
    """Source row -1 of libvmaf's scale-3 DWT: the int16 band stored just before the
    int32 one, its second-to-last row reinterpreted as little-endian int32 pairs."""
    if band is None:
        return None
    pairs = band[-2, : 2 * width].astype(np.int16)
    pairs = np.pad(pairs, (0, 2 * width - pairs.size))
    return pairs.astype("<i2").view("<i4")


def _csf_written(band: np.ndarray) -> np.ndarray:
    """The band as libvmaf's buffer holds it: the CSF writes only its cropped region,
    and the rest of a freshly allocated buffer stays zero."""
    hh, ww = band.shape
    top, bottom = border(hh, tap=True)
    left, right = border(ww, tap=True)
    out = np.zeros_like(band)
    out[top:bottom, left:right] = band[top:bottom, left:right]
    return out


class ScaleStages(NamedTuple):
    """Every stage output of one scale: DWT bands, decoupled bands, CSF factors and
    the CSF of the additive (``wa``, ``fa``) and restored (``wr``, ``fr``) parts.

    ``r``, ``a`` and the CSF outputs are None at a skipped scale 0; ``wr``/``fr`` are
    None with ``adm_skip_aim``.
    """

    scale: int
    ref: Bands
    dis: Bands
    r: Bands | None
    a: Bands | None
    rfactor: tuple[int, int, int] | None
    wa: Bands | None
    fa: Bands | None
    wr: Bands | None
    fr: Bands | None


def stages(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> Iterator[ScaleStages]:
    """Run libvmaf's stage chain scale by scale, yielding each scale's outputs."""
    skip0 = opts.adm_skip_scale0
    rb = dwt2(ref, bitdepth, lo_only=skip0)
    db = dwt2(dis, bitdepth, lo_only=skip0)
    last_csf_d = None  # libvmaf's scale-0 ``csf_f.band_d``, which a tiny scale 3 reads
    for scale in range(4):
        if scale > 0:
            row_m1 = _int16_rows_as_int32(last_csf_d, rb.a.shape[1]) if scale == 3 else None
            rb, db = dwt2_s123_pair(rb.a.astype(np.int32), db.a.astype(np.int32), scale, row_m1)
        elif skip0:
            yield ScaleStages(0, rb, db, None, None, None, None, None, None, None)
            continue
        r, a = (decouple if scale == 0 else decouple_s123)(rb, db, opts.adm_enhn_gain_limit)
        rf = rfactors(scale, opts)
        wa, fa = csf(a, scale, rf)
        wr = fr = None
        if not opts.adm_skip_aim:
            wr, fr = csf(r, scale, rf)
        if scale == 0:
            last_csf_d = _csf_written(fa.d if opts.adm_skip_aim else wr.d)
        yield ScaleStages(scale, rb, db, r, a, rf, wa, fa, wr, fr)


def scale_scores(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> list[ScaleResult]:
    """Per-scale (num, den, aim) for one frame pair."""
    out = []
    for st in stages(ref, dis, bitdepth, opts):
        if st.r is None:
            out.append(ScaleResult(np.float32(0.0), C.SKIP_SCALE0_DEN, np.float32(0.0)))
            continue
        den = csf_den(st.ref, st.scale, opts)
        num = cm(st.r, st.wa, st.fa, st.scale, st.rfactor, opts.adm_noise_weight)
        aim = np.float32(0.0)
        if st.wr is not None:
            aim = cm(st.a, st.wr, st.fr, st.scale, st.rfactor, 0.0)
        out.append(ScaleResult(num, den, aim))
    return out


def finish(scales: list[ScaleResult], width: int, height: int, opts) -> dict[str, float]:
    """libvmaf's double-precision finish: sums, the near-zero limit, ratios, adm3.

    Where the denominator is zero (a flat reference with ``adm_noise_weight=0``) libvmaf
    sets adm2 = 1 and never assigns AIM: it prints a leftover stack value (a denormal near
    7e-310 in every run measured, different from run to run). ``integer_aim`` is NaN here
    rather than that number; ``integer_adm3`` takes AIM as 0, which gives the value libvmaf
    prints (``1 - 7e-310`` is 1 in double): 1.0.
    """
    limit = C.NUMDEN_LIMIT * (width * height) / (1920.0 * 1080.0)
    num = den = aim_num = 0.0
    for s in scales:
        num += float(s.num)
        den += float(s.den)
        aim_num += float(s.aim)
    num = 0.0 if num < limit else num
    den = 0.0 if den < limit else den
    if den == 0.0:
        score, aim, aim_adm3 = 1.0, math.nan, 0.0
    else:
        score, aim = cdiv(num, den), cdiv(aim_num, den)
        aim_adm3 = aim
    dlm = opts.adm_dlm_weight
    res = {
        "integer_adm2": score,
        "integer_aim": aim,
        "integer_adm3": cmax(score * dlm + (1 - aim_adm3) * (1 - dlm), opts.adm_min_val),
    }
    for k, s in enumerate(scales):
        res[f"integer_adm_scale{k}"] = cdiv(float(s.num), float(s.den))
    res["integer_adm"] = score
    res["integer_adm_num"] = num
    res["integer_adm_den"] = den
    for k, s in enumerate(scales):
        res[f"integer_adm_num_scale{k}"] = float(s.num)
        res[f"integer_adm_den_scale{k}"] = float(s.den)
    return res


def check_frame(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> None:
    """Refuse inputs libvmaf cannot score (ValueError with a one-line message)."""
    # 10.0 == 10, but a float bit depth fails in the shifts
    if isinstance(bitdepth, bool) or not isinstance(bitdepth, numbers.Integral):
        raise ValueError(f"bit depth must be an integer, got {bitdepth!r}")
    if bitdepth not in (8, 10, 12, 16):
        raise ValueError(f"bit depth {bitdepth} is not supported (8, 10, 12 or 16)")
    if ref.ndim != 2 or ref.shape != dis.shape:
        raise ValueError(
            f"reference {ref.shape} and distorted {dis.shape} must be 2-D planes of one size"
        )
    h, w = ref.shape
    if w <= 16 or h <= 16:
        raise ValueError(
            f"frame {w}x{h} is too small: libvmaf's ADM needs width and height above 16"
        )
    want = np.uint8 if bitdepth == 8 else np.uint16
    if ref.dtype != want or dis.dtype != want:
        raise ValueError(
            f"{bitdepth}-bit planes must be {np.dtype(want).name}, got {ref.dtype}/{dis.dtype}"
        )


def compute_adm(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> dict[str, float]:
    """All 18 integer ADM outputs for one luma pair, keyed by libvmaf's base names.

    Parameters
    ----------
    ref, dis : ndarray
        2-D luma planes, uint8 for 8-bit and uint16 otherwise.
    bitdepth : int
        8, 10, 12 or 16.
    opts
        Any object with libvmaf's ADM option names as attributes (``AdmOptions``).
    """
    check_frame(ref, dis, bitdepth)
    geometry = opts.adm_norm_view_dist * opts.adm_ref_display_height
    if geometry < C.DEFAULT_NORM_VIEW_DIST * C.DEFAULT_REF_DISPLAY_HEIGHT:
        raise ValueError("adm_norm_view_dist * adm_ref_display_height must be at least 3.0 * 1080")
    h, w = ref.shape
    return finish(scale_scores(ref, dis, bitdepth, opts), w, h, opts)

"""libvmaf's ``float_adm`` extractor in a run: its options, its names and one frame
pair's values.

``--feature float_adm[=KEY=VALUE:...]`` writes each frame's ``adm2``, ``aim``, ``adm3``
and ``adm_scale0`` .. ``adm_scale3`` (and with ``debug=true`` ``adm``, ``adm_num``,
``adm_den`` and each scale's numerator and denominator), each renamed by the options off
their defaults as libvmaf names them: the float ADM of libvmaf's float models, on the
luma planes alone. A run computes it on the host from the planes it reads, whatever the
backend and the input, with NumPy (no Numba needed).
:func:`admcuda.reference.float_adm.compute_float_adm` is the specification;
:func:`float_adm_frame` computes the same float32 steps with the 3x3 masking threshold
read from mirrored copies of the bands by slices (the reference gathers each
neighbour by index), each sum in the reference's order.

libvmaf divides by the CPU's ``rcpss`` (:mod:`admcuda.reference.rcpss`): the goldens and
these values are those of the AMD EPYC CPU that made them.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import float_adm as _adm
from admcuda.reference.picture_copy import picture_copy
from admcuda.vmaf import speed as _speed

__all__ = [
    "FLOAT_ADM_KIND",
    "TABLE",
    "FloatAdmOptions",
    "check_size",
    "float_adm_frame",
    "output_names",
    "parse_options",
]

FLOAT_ADM_KIND = "float_adm"

# libvmaf 3.2.0's option table (float_adm.c): option -> (type, alias, min, max); debug
# renames nothing (no feature-parameter flag) and has no alias
TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    "debug": ("bool", None, None, None),
    "adm_enhn_gain_limit": ("double", "egl", 1.0, 100.0),
    "adm_norm_view_dist": ("double", "nvd", 0.75, 24.0),
    "adm_noise_weight": ("double", "nw", 0.0, 1500.0),
    "adm_csf_scale": ("double", "scf", 0.0, 50.0),
    "adm_csf_diag_scale": ("double", "scfd", 0.0, 50.0),
    "adm_ref_display_height": ("int", "rdf", 1, 4320),
    "adm_csf_mode": ("int", "csf", 0, 9),
    "adm_bypass_cm": ("int", "bcm", 0, 1),
    "adm_adm3_apply_hm": ("bool", "aah", None, None),
    "adm_p_norm": ("double", "apn", 1.0, 20.0),
    "adm_dlm_weight": ("double", "dlmw", 0.0, 1.0),
    "adm_min_val": ("double", "min", 0.0, 1.0),
    **{f"adm_f{a}s{s}": ("double", f"f{a}s{s}", -1.0, 10.0) for a in (1, 2) for s in range(4)},
    "adm_skip_aim_scale": ("int", "sasc", 0, 3),
    "adm_skip_scale0": ("bool", "ssz", None, None),
}


@dataclass(frozen=True)
class FloatAdmOptions(_adm.FloatAdmParams):
    """libvmaf's ``float_adm`` options (``float_adm.c``'s table, its defaults): every
    number in its range (``adm_skip_aim_scale`` -1, its default, skips no scale)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            typ, _, lo, hi = TABLE[f.name]
            value = getattr(self, f.name)
            if typ == "bool":
                if not isinstance(value, bool):
                    raise ValueError(f"{f.name} must be True or False, got {value!r}")
                continue
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if typ == "int":
                ok = ok and float(value).is_integer()
            if not ok or (value != f.default and not lo <= value <= hi):
                raise ValueError(
                    f"{f.name} must be {'an integer' if typ == 'int' else 'a number'} in "
                    f"[{lo:g}, {hi:g}], got {value!r}"
                )
            object.__setattr__(self, f.name, int(value) if typ == "int" else float(value))


def output_names(options: FloatAdmOptions) -> tuple[str, ...]:
    """The names ``float_adm`` writes per frame, in libvmaf's order: each with
    ``_ALIAS_VALUE`` (``_ALIAS`` for a bool) for each renaming option off its default,
    sorted by option name; with ``debug`` the debug names after them (``adm``, not one of
    its provided features, never renamed)."""
    suffix = ""
    for f in sorted(fields(options), key=lambda f: f.name.encode()):
        typ, alias, _, _ = TABLE[f.name]
        value = getattr(options, f.name)
        if alias is None or value == f.default:
            continue
        if typ == "bool":
            suffix += f"_{alias}"
        else:
            suffix += f"_{alias}_{value:d}" if typ == "int" else f"_{alias}_{value:g}"
    names = _adm.NAMES + (_adm.DEBUG_NAMES if options.debug else ())
    return tuple(n if n == "adm" else n + suffix for n in names)


def parse_options(
    where: str, given: Mapping[str, str], parse_value: Callable[..., Any]
) -> FloatAdmOptions:
    """:class:`FloatAdmOptions` from ``--feature float_adm=KEY=VALUE:...`` texts."""
    options: FloatAdmOptions = _speed.parse_with(FloatAdmOptions, TABLE, where, given, parse_value)
    return options


def check_size(width: int, height: int) -> None:
    """Refuse, in one line, a frame under 17 samples a side: libvmaf's scale-3 bands
    would be under 2x2, and its mirrors read outside them."""
    if min(width, height) < _adm.MIN_SIDE:
        raise AdmError(
            f"{FLOAT_ADM_KIND}: a {width}x{height} frame is under {_adm.MIN_SIDE} samples "
            "a side (libvmaf's scale-3 bands would be under 2x2 and its mirrors read "
            "outside them); not scored"
        )


def _mirrored(band: np.ndarray, region: tuple[int, int, int, int]) -> np.ndarray:
    """The band's rows ``top - 1 .. bottom`` and columns ``left - 1 .. right``, -1 read as
    1 and ``n`` as ``n - 1`` (``ADM_CM_THRESH_S_*``'s mirror)."""
    left, top, right, bottom = region
    h, w = band.shape
    rows = np.arange(top - 1, bottom + 1)
    cols = np.arange(left - 1, right + 1)
    rows = np.where(rows < 0, 1, np.where(rows >= h, h - 1, rows))
    cols = np.where(cols < 0, 1, np.where(cols >= w, w - 1, cols))
    return band[np.ix_(rows, cols)]


def _threshold(angles: tuple, flt: tuple, region: tuple[int, int, int, int]) -> np.ndarray:
    """:func:`admcuda.reference.float_adm.threshold` by slices of mirrored copies."""
    left, top, right, bottom = region
    n, m = bottom - top, right - left
    thr = np.zeros((n, m), np.float32)
    s = np.empty((n, m), np.float32)
    for angle, f in zip(angles, flt, strict=True):
        p = _mirrored(f, region)
        s.fill(0.0)
        for r in range(3):
            for c in range(3):
                if r == 1 and c == 1:
                    centre = np.abs(angle[top:bottom, left:right]).astype(np.float64)
                    centre *= _adm.ONE_BY_15
                    centre += s
                    s[...] = centre
                else:
                    s += p[r : r + n, c : c + m]
        thr += s
    return thr


def _cm(src: tuple, angles: tuple, flt: tuple, f1: np.float32, f2: np.float32,
        params: _adm.FloatAdmParams, noise_weight: float) -> np.float32:  # fmt: skip
    """:func:`admcuda.reference.float_adm.cm` over :func:`_threshold`."""
    h, w = src[0].shape
    region = _adm._region(w, h)
    left, top, right, bottom = region
    if params.adm_bypass_cm:
        thr = np.zeros((bottom - top, right - left), np.float32)
    else:
        thr = _threshold(angles, flt, region)
    total = None
    for f, band in zip((f1, f1, f2), src, strict=True):
        x = np.abs(band[top:bottom, left:right] * f)
        x -= thr
        np.maximum(x, np.float32(0.0), out=x)
        accum = _adm._row_major_sum(_adm._power(x, params.adm_p_norm))
        part = _adm.powf(accum, 1.0 / params.adm_p_norm) + _adm._noise_constant(
            right - left, bottom - top, noise_weight, params.adm_p_norm
        )
        total = part if total is None else total + part
    return np.float32(total)


def _scale_sums(ref: _adm.Bands, dis: _adm.Bands, scale: int, params: _adm.FloatAdmParams):
    restored, additive = _adm.decouple(ref, dis, params.adm_enhn_gain_limit)
    f1, f2 = _adm.csf_factors(scale, params)
    den = _adm.csf_den_scale(ref, f1, f2, params)
    a_weighted, a_flt = _adm.csf(additive, f1, f2)
    num = _cm(restored, a_weighted, a_flt, f1, f2, params, params.adm_noise_weight)
    r_weighted, r_flt = _adm.csf(restored, f1, f2)
    aim = _cm(additive, r_weighted, r_flt, f1, f2, params, 0.0)
    return num, den, aim


def float_adm_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's ``float_adm`` outputs (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor` with :class:`FloatAdmOptions`), from the luma
    planes, by :func:`output_names`. NumPy releases the GIL for the arithmetic, so frames
    score side by side on threads."""
    options: FloatAdmOptions = ex.options
    if ref.shape != dis.shape:
        raise AdmError(f"{FLOAT_ADM_KIND}: planes of {ref.shape} and {dis.shape}")
    h, w = ref.shape
    check_size(w, h)
    try:
        a = picture_copy(ref, bitdepth, -128, feature=FLOAT_ADM_KIND)
        b = picture_copy(dis, bitdepth, -128, feature=FLOAT_ADM_KIND)
        nums, dens, aims = [], [], []
        for scale in range(4):
            skip = scale == 0 and options.adm_skip_scale0
            ref_bands = _adm.dwt2(a, lo_only=skip)
            dis_bands = _adm.dwt2(b, lo_only=skip)
            if skip:
                sums = (np.float32(0.0), np.float32(1e-10), np.float32(0.0))
            else:
                sums = _scale_sums(ref_bands, dis_bands, scale, options)
            nums.append(sums[0])
            dens.append(sums[1])
            aims.append(sums[2])
            a, b = ref_bands.a, dis_bands.a
        values = _adm.scores(nums, dens, aims, w, h, options)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    return dict(zip(output_names(options), values.values(), strict=True))

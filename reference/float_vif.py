"""Bit-exact NumPy reference of libvmaf's ``float_vif`` (``float_vif.c`` over ``vif.c``'s
``compute_vif``, ``vif_tools.c``'s filters, decimation, statistic and frame scalers, and
``picture_copy.c``; scalar C).

Per frame pair, from the luma planes alone: ``VMAF_feature_vif_scale0_score`` ..
``VMAF_feature_vif_scale3_score`` and, with ``debug``, the score of all scales, its
numerator and denominator, and each scale's numerator and denominator.

libvmaf 3.2.0 builds ``vif_tools.c`` with ``VIF_OPT_HANDLE_BORDERS`` (every scale keeps
its whole picture) and ``VIF_OPT_FAST_LOG2`` (``log2f`` is a float32 polynomial). The
steps, with their types:

- :func:`picture`: ``picture_copy`` with offset -128: float32 on the 8-bit scale, less 128.
- :func:`scale_frame` (``vif_scale_frame_s``): the picture resized to ``init``'s
  ``(int)(side * vif_prescale + 0.5)`` by nearest, bilinear, bicubic or lanczos4
  sampling, float32 with the C's float64 positions; a copy where the size is unchanged.
- :func:`filter_taps` (``vif_get_filter``): per scale a float32 Gaussian of
  ``vif_get_filter_size`` taps (17, 9, 5, 3 at kernel scale 1), float64 ``exp`` terms
  rounded to float32 and divided by their float32 sum.
- :func:`filter1d` (``vif_filter1d_s``, ``_sq_s``, ``_xy_s``): a vertical pass then a
  horizontal one, each output a float32 sum of its taps' float32 products (the tap times
  the sample, its square, or the product of the two pictures' samples) in order; an index
  ``i`` below 0 reads ``-i`` and one past the end ``2 * n - i - 2`` (a mirror without the
  edge on both sides). A side of ``n`` needs ``n`` above the filter's radius.
- :func:`decimate` (``vif_dec2_s``): from scale 1 on, each picture filtered by the
  scale's taps and every second row and column kept from the first (sides halved, rounded
  down).
- :func:`statistic` (``vif_statistic_s``, libvmaf's ``matching_matlab`` mode): per sample
  the float32 variances and covariance, the gain and the noise variance clamped as the C
  clamps them, and ``log2f_approx`` (:func:`log2f_approx`) of ``1 + ...`` whose quotient is
  float64 (``vif_sigma_nsq`` is a double) rounded to float32; the numerator and denominator
  terms summed in float32 along a row, one sample after another, the rows' sums added in
  float32 in order.
- :func:`outputs`: each scale's numerator over its denominator in double (at least the
  scale's ``vif_scale{k}_min_val`` from scale 1 on; 0 for scale 0 with
  ``vif_skip_scale0``), and with ``debug`` the double sums over the scales computed.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from .picture_copy import check_plane, picture_copy

__all__ = [
    "BILINEAR_MAX_WIDTH",
    "DEBUG_FEATURES",
    "FEATURE",
    "LOG2_POLY",
    "METHODS",
    "OPTION_TABLE",
    "PROVIDED_FEATURES",
    "SCORE_FEATURES",
    "VALID_KERNELSCALES",
    "FloatVifOptions",
    "check_size",
    "collector_names",
    "compute_float_vif",
    "decimate",
    "filter1d",
    "filter_size",
    "filter_taps",
    "gaussian_taps",
    "log2f_approx",
    "mirrored_indices",
    "outputs",
    "output_names",
    "picture",
    "scale_frame",
    "scaled_size",
    "scale_sizes",
    "row_major_sum",
    "statistic",
    "statistic_terms",
    "vif_sums",
]

FEATURE = "float_vif"
OFFSET = -128
NUM_SCALES = 4
SCORE_FEATURES = tuple(f"VMAF_feature_vif_scale{s}_score" for s in range(NUM_SCALES))
DEBUG_FEATURES = ("vif", "vif_num", "vif_den") + tuple(
    f"vif_{k}_scale{s}" for s in range(NUM_SCALES) for k in ("num", "den")
)
PROVIDED_FEATURES = SCORE_FEATURES + DEBUG_FEATURES
"""``float_vif.c``'s provided features, in the order ``extract`` writes them."""
_ALIAS = {f: f"vif_scale{s}" for s, f in enumerate(SCORE_FEATURES)}

METHODS = ("nearest", "bilinear", "bicubic", "lanczos4")
BILINEAR_MAX_WIDTH = 7680
"""``VIF_BILINEAR_MAX_WIDTH``: ``init`` refuses a wider bilinear prescale."""

EPS = np.float32(1.0e-10)
# VIF_OPT_FAST_LOG2's polynomial, each coefficient a float32 of the C's double literal
LOG2_POLY = np.array(
    [-0.012671635276421, 0.064841182402670, -0.157048836463065, 0.257167726303123,
     -0.353800560300520, 0.480131410397451, -0.721314327952201, 1.442694803896991, 0.0],
    dtype=np.float32,
)  # fmt: skip

# vif_tools.h's kernel scales, float32 as its table holds them (quotients in float32)
_F = np.float32
VALID_KERNELSCALES = tuple(
    float(v)
    for v in (
        _F(1.0), _F(1.0) / _F(2.0), _F(3.0) / _F(2.0), _F(2.0), _F(2.0) / _F(3.0),
        _F(24.0) / _F(10.0), _F(360.0) / _F(97.0), _F(4.0) / _F(3.0), _F(3.5) / _F(3.0),
        _F(3.75) / _F(3.0), _F(4.25) / _F(3.0), _F(5.0) / _F(3.0), _F(3.0),
        _F(1.0) / _F(2.25), _F(1.4746), _F(1.54), _F(1.6), _F(1.06667), _F(0.711111),
        _F(0.740740), _F(1.111111),
    )
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _Opt:
    name: str
    alias: str | None
    kind: type
    default: float | bool | str
    lo: float = 0.0
    hi: float = 0.0
    feature_param: bool = True


# libvmaf's option table for "float_vif", in its order.
OPTION_TABLE = (
    _Opt("debug", None, bool, False, feature_param=False),
    _Opt("vif_enhn_gain_limit", "egl", float, 100.0, 1.0, 100.0),
    _Opt("vif_kernelscale", "ks", float, 1.0, 0.1, 4.0),
    _Opt("vif_prescale", "ps", float, 1.0, 0.1, 4.0),
    _Opt("vif_scale1_min_val", "s1miv", float, 0.0, 0.0, 1.0),
    _Opt("vif_scale2_min_val", "s2miv", float, 0.0, 0.0, 1.0),
    _Opt("vif_scale3_min_val", "s3miv", float, 0.0, 0.0, 1.0),
    _Opt("vif_prescale_method", "pm", str, "nearest"),
    _Opt("vif_sigma_nsq", "snsq", float, 2.0, 0.0, 5.0),
    _Opt("vif_skip_scale0", "ssclz", bool, False),
)


@dataclasses.dataclass(frozen=True)
class FloatVifOptions:
    """libvmaf's ``float_vif`` options, defaults and ranges from its option table.

    ``debug`` adds the debug outputs and, not being a feature parameter, never changes
    output names. ``vif_kernelscale`` must be one of ``vif_tools.h``'s kernel scales
    (libvmaf's ``compute_vif`` fails on any other).
    """

    debug: bool = False
    vif_enhn_gain_limit: float = 100.0
    vif_kernelscale: float = 1.0
    vif_prescale: float = 1.0
    vif_scale1_min_val: float = 0.0
    vif_scale2_min_val: float = 0.0
    vif_scale3_min_val: float = 0.0
    vif_prescale_method: str = "nearest"
    vif_sigma_nsq: float = 2.0
    vif_skip_scale0: bool = False

    def __post_init__(self) -> None:
        for opt in OPTION_TABLE:
            v = getattr(self, opt.name)
            if opt.kind is bool:
                if not isinstance(v, (bool, np.bool_)):
                    raise ValueError(
                        f"{FEATURE} option {opt.name} must be true or false, got {v!r}"
                    )
                object.__setattr__(self, opt.name, bool(v))
                continue
            if opt.kind is str:
                if v not in METHODS:
                    raise ValueError(
                        f"{FEATURE} option {opt.name} must be one of {', '.join(METHODS)}, "
                        f"got {v!r}"
                    )
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise ValueError(f"{FEATURE} option {opt.name} must be a number, got {v!r}")
            v = float(v)
            if not opt.lo <= v <= opt.hi:
                raise ValueError(
                    f"{FEATURE} option {opt.name}={v:g} is outside libvmaf's range "
                    f"[{opt.lo:g}, {opt.hi:g}]"
                )
            object.__setattr__(self, opt.name, v)
        scale = np.float32(self.vif_kernelscale)
        if not any(abs(np.float32(scale - np.float32(k))) < 1e-3 for k in VALID_KERNELSCALES):
            raise ValueError(
                f"{FEATURE} option vif_kernelscale={self.vif_kernelscale:g} is none of "
                "libvmaf's kernel scales (vif_tools.h), on which its compute_vif fails"
            )


def collector_names(opts: FloatVifOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's collector stores it under for ``opts``
    (``vmaf_feature_name_from_options``): the provided name where every feature parameter
    is at its default; otherwise its alias (``vif_scale0``; the debug names are their own)
    followed, for each parameter off its default in alphabetical order of option name, by
    ``_ALIAS`` for a bool, ``_ALIAS_VALUE`` otherwise (``%g`` for a double):
    ``vif_scale1_egl_1.5_ssclz``."""
    suffix = ""
    for opt in sorted(OPTION_TABLE, key=lambda o: o.name):
        v = getattr(opts, opt.name)
        if not opt.feature_param or v == opt.default:
            continue
        if opt.kind is bool:
            suffix += f"_{opt.alias}"
        elif opt.kind is str:
            suffix += f"_{opt.alias}_{v}"
        else:
            suffix += f"_{opt.alias}_{v:g}"
    if not suffix:
        return {f: f for f in PROVIDED_FEATURES}
    return {f: _ALIAS.get(f, f) + suffix for f in PROVIDED_FEATURES}


def output_names(opts: FloatVifOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's writers print (``vif_scale0`` by default; a
    suffixed name is its own alias)."""
    return {f: _ALIAS.get(c, c) for f, c in collector_names(opts).items()}


# --- sizes and filters -------------------------------------------------------------------------


def filter_size(scale: int, kernelscale: float) -> int:
    """``vif_get_filter_size``: ``2^(4-scale) + 1`` times the float32 kernel scale (a
    float32 product), rounded up to odd, at least 3."""
    n = (1 << (4 - scale)) + 1
    ceiling = math.ceil(np.float32(n) * np.float32(kernelscale))
    return max(ceiling + 1 if ceiling % 2 == 0 else ceiling, 3)


def gaussian_taps(size: int, stdev: np.float32) -> np.ndarray:
    """``get_1d_gaussian_kernel``: float32 pdf values over ``-k..k`` (a float64 exponent
    and quotient, each rounded to float32), divided by their float32 sum."""
    sd = float(np.float32(stdev))
    k = (size - 1) // 2
    out = np.empty(size, dtype=np.float32)
    total = np.float32(0.0)
    for i in range(size):
        x = float(np.float32(i - k))
        num = np.float32(math.exp(-0.5 * x / sd * x / sd))
        den = np.float32(1.0 / (sd * math.sqrt(2 * math.pi)))
        out[i] = num / den
        total = np.float32(total + out[i])
    return out / total


def filter_taps(scale: int, kernelscale: float) -> np.ndarray:
    """``vif_get_filter``: the scale's Gaussian, its deviation the float32 ``size / 5``."""
    size = filter_size(scale, kernelscale)
    return gaussian_taps(size, np.float32(size) / np.float32(5.0))


def scaled_size(width: int, height: int, prescale: float) -> tuple[int, int]:
    """``init``'s prescaled size: ``(int)(side * vif_prescale + 0.5)`` in double."""
    return int(width * prescale + 0.5), int(height * prescale + 0.5)


def scale_sizes(width: int, height: int, opts: FloatVifOptions) -> list[tuple[int, int, int]]:
    """``(width, height, radius)`` of each scale computed, from the prescaled size: the
    sides its statistic covers and its filter's radius."""
    ks = float(np.float32(opts.vif_kernelscale))
    w, h = scaled_size(width, height, opts.vif_prescale)
    sizes = []
    for scale in range(NUM_SCALES):
        if scale > 0:
            w, h = w // 2, h // 2
        if scale >= (1 if opts.vif_skip_scale0 else 0):
            sizes.append((w, h, filter_size(scale, ks) // 2))
    return sizes


def check_size(width: int, height: int, opts: FloatVifOptions) -> None:
    """Refuse (ValueError) what libvmaf's ``init`` refuses (a bilinear prescale wider than
    :data:`BILINEAR_MAX_WIDTH`) and sizes at which its mirrored taps read outside a
    picture: each scale's filter reads ``radius`` samples past an edge, so every side it
    filters (the scale's, and from scale 1 on the scale before it) must exceed the radius.
    """
    sw, sh = scaled_size(width, height, opts.vif_prescale)
    if opts.vif_prescale_method == "bilinear" and sw > BILINEAR_MAX_WIDTH:
        raise ValueError(
            f"{FEATURE}: a bilinear prescale to a width of {sw} is refused by libvmaf "
            f"(at most {BILINEAR_MAX_WIDTH})"
        )
    if min(sw, sh) < 1:
        raise ValueError(f"{FEATURE}: a {width}x{height} frame prescales to {sw}x{sh}")
    ks = float(np.float32(opts.vif_kernelscale))
    w, h = sw, sh
    start = 1 if opts.vif_skip_scale0 else 0
    for scale in range(start, NUM_SCALES):
        radius = filter_size(scale, ks) // 2
        sides = [(w, h)] if scale == 0 else [(w, h), (w // 2, h // 2)]
        if scale > 0:
            w, h = w // 2, h // 2
        small = [(a, b) for a, b in sides if min(a, b) <= radius]
        if small:
            raise ValueError(
                f"{FEATURE}: a {width}x{height} frame (prescaled to {sw}x{sh}) is too small: "
                f"scale {scale}'s {2 * radius + 1}-tap filter reads outside a picture of "
                f"{small[-1][0]}x{small[-1][1]} (libvmaf reads outside its buffers)"
            )


# --- per-picture stages ----------------------------------------------------------------------


def picture(plane: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture_copy(..., -128, ...)``: float32 samples on the 8-bit scale, less 128."""
    return picture_copy(plane, bitdepth, OFFSET, feature=FEATURE)


def _fmirror(i: np.ndarray, right: int) -> np.ndarray:
    """``vif_tools.c``'s float ``mirror(i, 0, right)``: ``-i`` below 0, ``2 * right - i``
    past ``right`` (float32 arithmetic on whole numbers, exact), as ints."""
    i = np.asarray(i, dtype=np.float64)
    return np.where(i < 0, -i, np.where(i > right, 2 * right - i, i)).astype(np.int64)


def _positions(src: int, dst: int) -> np.ndarray:
    """The float32 sample position of each output: ``(x + 0.5) * ratio - 0.5`` in double,
    the ratio the float32 ``src / dst``."""
    ratio = float(np.float32(src) / np.float32(dst))
    return ((np.arange(dst, dtype=np.float64) + 0.5) * ratio - 0.5).astype(np.float32)


def _nearest(src: np.ndarray, dw: int, dh: int) -> np.ndarray:
    sh, sw = src.shape
    ry = (np.arange(dh, dtype=np.float32) * (np.float32(sh) / np.float32(dh))).astype(np.int64)
    rx = (np.arange(dw, dtype=np.float32) * (np.float32(sw) / np.float32(dw))).astype(np.int64)
    return src[np.ix_(ry, rx)]


def _bilinear(src: np.ndarray, dw: int, dh: int) -> np.ndarray:
    sh, sw = src.shape
    one = np.float32(1.0)
    xx, yy = _positions(sw, dw), _positions(sh, dh)
    x1 = _fmirror(np.floor(xx), sw - 1)
    x2 = _fmirror(np.ceil(xx), sw - 1)
    dx = (xx - x1.astype(np.float32))[None, :]
    y1 = _fmirror(np.floor(yy), sh - 1)
    y2 = _fmirror(np.ceil(yy), sh - 1)
    dy = (yy - y1.astype(np.float32))[:, None]
    r1, r2 = src[y1], src[y2]
    # the four products summed left to right, each weight a float32 product first
    out = (one - dy) * (one - dx) * r1[:, x1]
    out = out + (one - dy) * dx * r1[:, x2]
    out = out + dy * (one - dx) * r2[:, x1]
    return out + dy * dx * r2[:, x2]


def _bicubic_kernel(t: np.ndarray) -> np.ndarray:
    a = np.float32(-0.75)
    t = np.abs(t)
    near = ((a + np.float32(2)) * t - (a + np.float32(3))) * t * t + np.float32(1)
    far = (((t - np.float32(5)) * t + np.float32(8)) * t - np.float32(4)) * a
    return np.where(t < 1, near, np.where(t < 2, far, np.float32(0))).astype(np.float32)


def _lanczos4_kernel(x: np.ndarray) -> np.ndarray:
    """``lanczos4_kernel(x, 4.0f)``: libm's ``sin`` (Python's ``math.sin``) of float64
    arguments, the quotient rounded to float32."""
    out = np.empty(x.shape, dtype=np.float32)
    for idx, v in np.ndenumerate(x):
        v = float(v)
        if v == 0.0:
            out[idx] = 1.0
        elif -4.0 < v < 4.0:
            out[idx] = (
                4.0
                * math.sin(math.pi * v)
                * math.sin(math.pi * v / 4.0)
                / (math.pi * math.pi * v * v)
            )
        else:
            out[idx] = 0.0
    return out


def _windowed(src: np.ndarray, dw: int, dh: int, reach: int, lanczos: bool) -> np.ndarray:
    """``bicubic_interpolation`` (taps ``-1..2``) or ``lanczos4_interpolation`` (``-4..4``,
    divided by the float32 sum of the weights): float32 weights ``wx * wy`` and a float32
    running sum over rows of taps, then columns."""
    sh, sw = src.shape
    lo = -1 if not lanczos else -reach
    offs = np.arange(lo, reach + 1)
    kernel = _lanczos4_kernel if lanczos else _bicubic_kernel
    xx, yy = _positions(sw, dw), _positions(sh, dh)
    x0, y0 = np.floor(xx).astype(np.int64), np.floor(yy).astype(np.int64)
    dx, dy = xx - x0.astype(np.float32), yy - y0.astype(np.float32)
    wx = kernel(offs[None, :].astype(np.float32) - dx[:, None])
    wy = kernel(offs[None, :].astype(np.float32) - dy[:, None])
    xi = _fmirror(x0[:, None] + offs[None, :], sw - 1)
    yi = _fmirror(y0[:, None] + offs[None, :], sh - 1)
    if xi.min() < 0 or xi.max() >= sw or yi.min() < 0 or yi.max() >= sh:
        raise ValueError(f"{FEATURE}: a {sw}x{sh} picture is too small for its prescale taps")
    value = np.zeros((dh, dw), np.float32)
    total = np.zeros((dh, dw), np.float32)
    for j in range(len(offs)):
        rows = src[yi[:, j]]
        for i in range(len(offs)):
            weight = wy[:, j][:, None] * wx[:, i][None, :]
            if lanczos:
                total += weight
            value += rows[:, xi[:, i]] * weight
    return value / total if lanczos else value


def scale_frame(pic: np.ndarray, width: int, height: int, method: str) -> np.ndarray:
    """``vif_scale_frame_s``: ``pic`` resized to ``width`` x ``height`` by ``method``; the
    picture itself where the size does not change (the C's ``memcpy``)."""
    sh, sw = pic.shape
    if (sw, sh) == (width, height):
        return pic
    if method == "nearest":
        return _nearest(pic, width, height)
    if method == "bilinear":
        return _bilinear(pic, width, height)
    return _windowed(pic, width, height, 4 if method == "lanczos4" else 2, method == "lanczos4")


def mirrored_indices(n: int, radius: int) -> np.ndarray:
    """The sample each index ``-radius .. n + radius - 1`` reads: ``-i`` below 0,
    ``2 * n - i - 2`` past the end."""
    if n <= radius:
        raise ValueError(f"{FEATURE}: a side of {n} is within a {2 * radius + 1}-tap filter")
    index = np.arange(-radius, n + radius)
    return np.where(index < 0, -index, np.where(index >= n, 2 * n - index - 2, index))


def filter1d(taps: np.ndarray, a: np.ndarray, b: np.ndarray | None = None, *,
             square: bool = False) -> np.ndarray:  # fmt: skip
    """``vif_filter1d_s`` (``a``), ``vif_filter1d_sq_s`` (``square``: ``a * a``) or
    ``vif_filter1d_xy_s`` (``a * b``): per row the vertical pass, each output a float32
    sum of ``tap * value`` in tap order, then the horizontal pass over that row alike."""
    h, w = a.shape
    r = len(taps) // 2
    rows = mirrored_indices(h, r)
    cols = mirrored_indices(w, r)
    if b is not None:
        src = a[rows] * b[rows]
    elif square:
        src = a[rows] * a[rows]
    else:
        src = a[rows]
    tmp = np.zeros((h, w), np.float32)
    for fi, tap in enumerate(taps):
        tmp += tap * src[fi : fi + h]
    padded = tmp[:, cols]
    out = np.zeros((h, w), np.float32)
    for fj, tap in enumerate(taps):
        out += tap * padded[:, fj : fj + w]
    return out


def decimate(pic: np.ndarray) -> np.ndarray:
    """``vif_dec2_s``: every second row and column from the first, sides halved (down)."""
    h, w = pic.shape
    return pic[0 : 2 * (h // 2) : 2, 0 : 2 * (w // 2) : 2]


def log2f_approx(x: np.ndarray) -> np.ndarray:
    """``VIF_OPT_FAST_LOG2``'s ``log2f``: the float32's exponent less 127 plus a float32
    Horner polynomial (:data:`LOG2_POLY`) of its mantissa in ``[1, 2)`` less 1; minus
    infinity at 0, NaN below."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    exponent = ((bits & np.uint32(0x7F800000)) >> np.uint32(23)).astype(np.int32)
    remain = ((bits & np.uint32(0x007FFFFF)) | np.uint32(0x3F800000)).view(np.float32)
    t = remain - np.float32(1.0)
    var = np.zeros(x.shape, np.float32)
    for c in LOG2_POLY:
        var = var * t + c
    out = (exponent - 127).astype(np.float32) + var
    out = np.where(x == 0, np.float32(-np.inf), out)
    return np.where(x < 0, np.float32(np.nan), out).astype(np.float32)


def row_major_sum(values: np.ndarray) -> np.float32:
    """``vif_statistic_s``'s sum: a float32 running sum along each row, the rows' sums
    added in a float32 running sum."""
    # each C sum starts from 0: adding 0 last gives its sign of a zero total
    f0 = np.float32(0.0)
    rows = np.add.accumulate(values, axis=1, dtype=np.float32)[:, -1] + f0
    return np.float32(np.add.accumulate(rows, dtype=np.float32)[-1] + f0)


def statistic_terms(
    mu1: np.ndarray, mu2: np.ndarray, xx: np.ndarray, yy: np.ndarray, xy: np.ndarray,
    enhn_gain_limit: float, sigma_nsq: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``vif_statistic_s``'s per-sample float32 numerator and denominator terms
    (``matching_matlab``), in the C's order of clamps."""
    f0, f1 = np.float32(0.0), np.float32(1.0)
    # powf(nsq, 2) is the float32 square; the quotient by 255 * 255 is double
    square = float(np.float32(sigma_nsq) * np.float32(sigma_nsq))
    sigma_max_inv = np.float32(square / (255.0 * 255.0))
    limit = np.float32(enhn_gain_limit)
    s1 = xx - mu1 * mu1
    s2 = yy - mu2 * mu2
    s12 = xy - mu1 * mu2
    s1 = np.where(s1 > f0, s1, f0)
    s2 = np.where(s2 > f0, s2, f0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = s12 / (s1 + EPS)
        sv = s2 - g * s12
        low1 = s1 < EPS
        g = np.where(low1, f0, g)
        sv = np.where(low1, s2, sv)
        s1 = np.where(low1, f0, s1)
        low2 = s2 < EPS
        g = np.where(low2, f0, g)
        sv = np.where(low2, f0, sv)
        neg = g < f0
        sv = np.where(neg, s2, sv)
        g = np.where(neg, f0, g)
        sv = np.where(sv > EPS, sv, EPS)
        g = np.where(g < limit, g, limit)
        # float32 products; the quotient and the 1 + ... in double (vif_sigma_nsq is one)
        gain = (g * g * s1).astype(np.float64)
        num = log2f_approx((1.0 + gain / (sv.astype(np.float64) + sigma_nsq)).astype(np.float32))
        den = log2f_approx((1.0 + s1.astype(np.float64) / sigma_nsq).astype(np.float32))
    num = np.where(s12 < f0, f0, num)
    flat = s1.astype(np.float64) < sigma_nsq
    num = np.where(flat, f1 - s2 * sigma_max_inv, num).astype(np.float32)
    den = np.where(flat, f1, den).astype(np.float32)
    return num, den


def statistic(
    mu1: np.ndarray, mu2: np.ndarray, xx: np.ndarray, yy: np.ndarray, xy: np.ndarray,
    enhn_gain_limit: float, sigma_nsq: float,
) -> tuple[np.float32, np.float32]:  # fmt: skip
    """``vif_statistic_s``: the scale's float32 numerator and denominator, each term of
    :func:`statistic_terms` summed along its row, the rows' sums added in order."""
    num, den = statistic_terms(mu1, mu2, xx, yy, xy, enhn_gain_limit, sigma_nsq)
    return row_major_sum(num), row_major_sum(den)


def vif_sums(ref: np.ndarray, dis: np.ndarray, opts: FloatVifOptions) -> list[tuple[float, float]]:
    """``compute_vif``'s per-scale (numerator, denominator), as doubles of the float32 sums,
    for the scales computed (from 1 with ``vif_skip_scale0``), from the prescaled pictures."""
    ks = float(np.float32(opts.vif_kernelscale))
    start = 1 if opts.vif_skip_scale0 else 0
    sums = []
    for scale in range(start, NUM_SCALES):
        taps = filter_taps(scale, ks)
        if scale > 0:
            ref = decimate(filter1d(taps, ref))
            dis = decimate(filter1d(taps, dis))
        mu1 = filter1d(taps, ref)
        mu2 = filter1d(taps, dis)
        xx = filter1d(taps, ref, square=True)
        yy = filter1d(taps, dis, square=True)
        xy = filter1d(taps, ref, dis)
        num, den = statistic(mu1, mu2, xx, yy, xy, opts.vif_enhn_gain_limit, opts.vif_sigma_nsq)
        sums.append((float(num), float(den)))
    return sums


def outputs(sums: list[tuple[float, float]], opts: FloatVifOptions) -> dict[str, float]:
    """``extract``'s values by provided feature (the debug ones with ``debug``), from
    :func:`vif_sums`."""
    skip = opts.vif_skip_scale0
    by_scale = dict(zip(range(1 if skip else 0, NUM_SCALES), sums, strict=True))
    mins = (None, opts.vif_scale1_min_val, opts.vif_scale2_min_val, opts.vif_scale3_min_val)
    out: dict[str, float] = {}
    for scale, name in enumerate(SCORE_FEATURES):
        if scale == 0 and skip:
            out[name] = 0.0
            continue
        num, den = by_scale[scale]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = float(np.float64(num) / np.float64(den))
        out[name] = q if scale == 0 or q > mins[scale] else mins[scale]
    if not opts.debug:
        return out
    total_num = total_den = 0.0
    for num, den in sums:
        total_num += num
        total_den += den
    with np.errstate(divide="ignore", invalid="ignore"):
        score = 1.0 if total_den == 0.0 else float(np.float64(total_num) / np.float64(total_den))
    out.update({"vif": score, "vif_num": total_num, "vif_den": total_den})
    for scale in range(NUM_SCALES):
        if scale == 0 and skip:
            num, den = 0.0, -1.0
        else:
            num, den = by_scale[scale]
        out[f"vif_num_scale{scale}"] = num
        out[f"vif_den_scale{scale}"] = den
    return out


def compute_float_vif(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts: FloatVifOptions | None = None
) -> dict[str, float]:
    """One frame pair's outputs by provided feature (``extract``'s order).

    Parameters
    ----------
    ref, dis : ndarray
        Luma planes of one shape, uint8 at 8 bits and uint16 above, large enough for
        every scale's filter (:func:`check_size`: 16x16 at the default kernel scale).
    bitdepth : {8, 10, 12, 16}
    opts : FloatVifOptions, optional
    """
    opts = opts or FloatVifOptions()
    if ref.shape != dis.shape:
        raise ValueError(f"{FEATURE}: planes of {ref.shape} and {dis.shape}")
    check_plane(ref, bitdepth, FEATURE)
    h, w = ref.shape
    check_size(w, h, opts)
    sw, sh = scaled_size(w, h, opts.vif_prescale)
    pics = [scale_frame(picture(p, bitdepth), sw, sh, opts.vif_prescale_method)
            for p in (ref, dis)]  # fmt: skip
    return outputs(vif_sums(pics[0], pics[1], opts), opts)

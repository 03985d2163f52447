"""Bit-exact NumPy reference of libvmaf's integer VIF (``integer_vif.c``, scalar C path).

One function per libvmaf stage: the log2 table (``log_generate``) and its lookups
(``log2_32``, ``log2_64``); the per-scale statistic (``vif_statistic_8`` at 8-bit scale 0,
``vif_statistic_16`` everywhere else), split into its vertical and horizontal filter
passes, the per-pixel variances and the log-domain accumulation; the decimation between
scales (:mod:`.vif_filters`); the double-precision finish (``write_scores``).

Sizes. libvmaf's VIF takes any frame, but a frame under 8 rows crashes it: scale 3 has no
rows, and padding a plane of none indexes its buffer with ``h - 1`` wrapped to 2**32 - 1.
A frame under 8 columns leaves scale 3 no columns (its score 0/0, NaN) and makes an
earlier scale one column wide. Where a scale is one row or column wide (frames 8..15 wide
or high, at scale 3), libvmaf's mirroring copies buffer slots before it writes them,
reading what the previous scale left there; the reference replays that (``stale``
arguments). :func:`compute_vif` takes frames from 8x8 up and refuses smaller ones.
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import threading
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import vif_constants as V
from .cnum import log2f_values
from .vif_filters import (
    filter_cols,
    filter_rows,
    pad_top_and_bottom,
    round_shift,
    subsample_rd_8,
    subsample_rd_16,
)

BASE_FEATURES = tuple(f"integer_vif_scale{k}" for k in range(V.N_SCALES))
DEBUG_FEATURES = ("integer_vif", "integer_vif_num", "integer_vif_den") + tuple(
    f"integer_vif_{part}_scale{k}" for k in range(V.N_SCALES) for part in ("num", "den")
)
ALL_FEATURES = BASE_FEATURES + DEBUG_FEATURES
MIN_SIDE = 8  # smallest width and height libvmaf scores from the frame alone (module docstring)


@dataclasses.dataclass(frozen=True)
class VifOptions:
    """libvmaf's VIF options (``integer_vif.c``'s option table).

    ``vif_enhn_gain_limit`` (alias ``egl``) caps the gain ``g`` in [1.0, 100.0];
    ``vif_skip_scale0`` (``ssclz``) skips scale 0's statistic; ``debug`` adds the 11
    debug outputs. The first two are feature parameters: non-default values rename the
    outputs (:func:`feature_names`).
    """

    vif_enhn_gain_limit: float = V.DEFAULT_ENHN_GAIN_LIMIT
    vif_skip_scale0: bool = False
    debug: bool = False

    def __post_init__(self) -> None:
        check_options(self)


def check_options(opts) -> None:
    """Refuse option values libvmaf refuses (ValueError with a one-line message)."""
    egl = opts.vif_enhn_gain_limit
    if isinstance(egl, bool) or not isinstance(egl, numbers.Real):
        raise ValueError(f"vif_enhn_gain_limit must be a number, got {egl!r}")
    if not V.MIN_ENHN_GAIN_LIMIT <= egl <= V.MAX_ENHN_GAIN_LIMIT:
        raise ValueError(
            f"vif_enhn_gain_limit {egl!r} is out of range "
            f"[{V.MIN_ENHN_GAIN_LIMIT}, {V.MAX_ENHN_GAIN_LIMIT}]"
        )
    for name in ("vif_skip_scale0", "debug"):
        if not isinstance(getattr(opts, name), (bool, np.bool_)):
            raise ValueError(f"{name} must be a bool, got {getattr(opts, name)!r}")


# --- log2 table -------------------------------------------------------------------------------


_LOG2_LOCK = threading.Lock()


def log_generate() -> np.ndarray:
    """libvmaf's ``log_generate``: ``table[i] = (uint16)round(log2f((float)i) * 2048)`` for
    ``i`` in 32767..65535, zero elsewhere; 65537 uint16 entries (read-only), made once per
    process, whatever threads ask for it first.

    ``log2f`` is libm's; the float product is exact (a power-of-two scale) and ``round``
    rounds half away from zero, which ``floor(x + 0.5)`` is for these positive values.
    """
    with _LOG2_LOCK:
        return _log_generate()


@functools.cache
def _log_generate() -> np.ndarray:
    table = np.zeros(V.LOG2_TABLE_SIZE, dtype=np.uint16)
    i = np.arange(V.LOG2_TABLE_FIRST, 65536)
    # log2f's float32 result (libm's error and its rounding to float32 included) is within
    # 2**-9 of a double log2 once scaled by 2**11, so the two round alike except near a
    # half: libm is asked there only, about one entry in eight. The float32 product by
    # 2**11 is exact, so it is the same in double.
    x = np.log2(i.astype(np.float64)) * float(V.LOG2_ONE)
    near = np.abs(x - np.floor(x) - 0.5) < 1 / 16
    x[near] = log2f_values(i[near]) * float(V.LOG2_ONE)
    table[V.LOG2_TABLE_FIRST : 65536] = np.floor(x + 0.5).astype(np.uint16)
    table.setflags(write=False)
    return table


def _bit_length(x: np.ndarray) -> np.ndarray:
    """Bits in each positive int64 (``64 - clzll``): the binary exponent of its double."""
    e = (x.astype(np.float64).view(np.int64) >> 52) - 1022
    if x.size and x.max() >= 1 << 53:
        # the conversion may have rounded up to the next power of two: step back there
        e -= (x < np.left_shift(np.int64(1), e - 1)).astype(np.int64)
    return e


def _log2_top16(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    k = _bit_length(x) - V.LOG2_BITS
    if (k < 0).any():
        raise ValueError("log2 lookup of a value below 2**15, which libvmaf never makes")
    return table[x >> k].astype(np.int64) + V.LOG2_ONE * k


def log2_32(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """libvmaf ``log2_32`` on uint32 values (int64 array): the table entry of the top 16
    significant bits plus 2048 per bit dropped, i.e. ``2048 * log2(x)``, rounded."""
    return _log2_top16(table, np.asarray(x, dtype=np.int64))


def log2_64(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """libvmaf ``log2_64`` on values of at least 2**17 (int64 array), as :func:`log2_32`."""
    return _log2_top16(table, np.asarray(x, dtype=np.int64))


# --- the statistic ----------------------------------------------------------------------------


class Moments(NamedTuple):
    """Filtered first and second moments, in libvmaf's names.

    After a vertical pass these are the row buffers ``tmp.mu1 .. tmp.ref_dis`` (uint32);
    after the horizontal pass ``mu1_val``, ``mu2_val`` and ``xx_filt_val``,
    ``yy_filt_val``, ``xy_filt_val`` (uint32). Each is ``h`` by ``w``.
    """

    mu1: np.ndarray
    mu2: np.ndarray
    ref: np.ndarray
    dis: np.ndarray
    ref_dis: np.ndarray


class VifResiduals(NamedTuple):
    """libvmaf's ``VifResiduals``: the four int64 accumulators of one scale."""

    accum_num_log: int
    accum_den_log: int
    accum_num_non_log: int
    accum_den_non_log: int


def vif_vertical_8(ref: np.ndarray, dis: np.ndarray) -> Moments:
    """Vertical pass of ``vif_statistic_8`` (8-bit scale 0).

    ``ref``, ``dis``: uint8 planes padded with ``PAD_ROWS[0]`` mirrored rows. uint32
    accumulators throughout: the means are rounded by ``(128, 8)``, the second moments
    (``ref*ref``, ``dis*dis``, ``ref*dis``) kept in full (they fit: the taps sum to 2**16).
    """
    pad = V.PAD_ROWS[0]
    x = ref.astype(np.uint32)
    y = dis.astype(np.uint32)
    mu1 = round_shift(filter_rows(x, pad, 0, dtype=np.uint32), V.VP_8BIT)
    mu2 = round_shift(filter_rows(y, pad, 0, dtype=np.uint32), V.VP_8BIT)
    xx = filter_rows(x * x, pad, 0, dtype=np.uint32)
    yy = filter_rows(y * y, pad, 0, dtype=np.uint32)
    xy = filter_rows(x * y, pad, 0, dtype=np.uint32)
    return Moments(mu1, mu2, xx, yy, xy)


def vif_vertical_16(ref: np.ndarray, dis: np.ndarray, bpc: int, scale: int) -> Moments:
    """Vertical pass of ``vif_statistic_16``.

    ``ref``, ``dis``: uint16 planes padded with ``PAD_ROWS[scale]`` rows. Means: uint32
    accumulators rounded by the bit depth at scale 0 and by ``(32768, 16)`` above, cast to
    uint16. Second moments: uint64 accumulators rounded by ``2 * (bpc - 8)`` bits at scale
    0 and by ``(32768, 16)`` above, cast to uint32.
    """
    pad = V.PAD_ROWS[scale]
    vp, vp_sq = (V.vp_16(bpc), V.vp_sq_16(bpc)) if scale == 0 else (V.VP_S123, V.VP_S123)
    x32 = ref.astype(np.uint32)
    y32 = dis.astype(np.uint32)
    x = ref.astype(np.uint64)
    y = dis.astype(np.uint64)

    def mean(p: np.ndarray) -> np.ndarray:
        acc = filter_rows(p, pad, scale, dtype=np.uint32)
        return round_shift(acc, vp).astype(np.uint16).astype(np.uint32)

    def moment(p: np.ndarray) -> np.ndarray:
        return round_shift(filter_rows(p, pad, scale, dtype=np.uint64), vp_sq).astype(np.uint32)

    return Moments(mean(x32), mean(y32), moment(x * x), moment(y * y), moment(x * y))


def vif_horizontal(tmp: Moments, scale: int, stale: Moments | None = None) -> Moments:
    """Horizontal pass shared by both statistics, columns mirrored per row.

    Means: uint32 accumulators, unshifted (Q16 of the rounded vertical means). Second
    moments: uint64 accumulators rounded by ``(32768, 16)`` and cast to uint32.

    ``stale``: the row buffers as the previous scale's last row left them (1-D, by
    column). A plane one column wide mirrors from them: libvmaf's padding copies the
    slot right of the plane before it writes it, for every row alike.
    """
    old = stale if stale is not None else Moments(None, None, None, None, None)
    mu1 = filter_cols(tmp.mu1, scale, old.mu1, dtype=np.uint32)
    mu2 = filter_cols(tmp.mu2, scale, old.mu2, dtype=np.uint32)

    def moment(p: np.ndarray, q: np.ndarray | None) -> np.ndarray:
        return round_shift(filter_cols(p, scale, q, dtype=np.uint64), V.HP).astype(np.uint32)

    return Moments(
        mu1,
        mu2,
        moment(tmp.ref, old.ref),
        moment(tmp.dis, old.dis),
        moment(tmp.ref_dis, old.ref_dis),
    )


def vif_sigma(filt: Moments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sigma1_sq, sigma2_sq, sigma12)`` as int32: each second moment minus its mean
    product (``(uint64)mu * mu`` rounded by ``(2**31, 32)``), subtracted in uint32 and
    read as int32; ``sigma2_sq`` is then clamped at 0, as libvmaf does before it tests
    ``sigma1_sq``."""

    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        prod = a.astype(np.uint64) * b.astype(np.uint64)
        return round_shift(prod, V.MU_PRODUCT).astype(np.uint32)

    def centred(m: np.ndarray, p: np.ndarray) -> np.ndarray:
        return (m - p).view(np.int32)

    sigma1_sq = centred(filt.ref, product(filt.mu1, filt.mu1))
    sigma2_sq = centred(filt.dis, product(filt.mu2, filt.mu2))
    sigma12 = centred(filt.ref_dis, product(filt.mu1, filt.mu2))
    return sigma1_sq, np.maximum(sigma2_sq, 0), sigma12


def vif_residuals(
    sigma1_sq: np.ndarray,
    sigma2_sq: np.ndarray,
    sigma12: np.ndarray,
    log2_table: np.ndarray,
    vif_enhn_gain_limit: float,
) -> VifResiduals:
    """The four int64 accumulators over a scale's pixels (libvmaf's per-pixel loop body,
    as ``vif_compute_line_residuals`` names it).

    Where ``sigma1_sq >= 2**17`` the denominator takes ``log2_32(2**17 + sigma1_sq) -
    17*2048``, and where also ``sigma12 > 0`` and ``sigma2_sq > 0`` the numerator takes
    ``log2_64(numer1 + (int64)(g*g*sigma1_sq)) - log2_64(numer1)``, with, in double,
    ``g = sigma12 / (sigma1_sq + 65536e-10)``, ``sv_sq = max((int32)(sigma2_sq -
    g*sigma12), 0)``, ``g = min(g, vif_enhn_gain_limit)`` and ``numer1 = sv_sq + 2**17``.
    Elsewhere ``sigma2_sq`` and a count go to the non-log accumulators.
    """
    s1 = sigma1_sq.astype(np.int64).ravel()
    s2 = sigma2_sq.astype(np.int64).ravel()
    s12 = sigma12.astype(np.int64).ravel()
    logged = s1 >= V.SIGMA_NSQ
    # int32 addition as the machine does it, then the uint32 log2_32 takes
    den_arg = (V.SIGMA_NSQ + s1[logged]) & 0xFFFFFFFF
    den_log = int((log2_32(log2_table, den_arg) - V.DEN_LOG_OFFSET).sum())

    both = logged & (s12 > 0) & (s2 > 0)
    a = s1[both].astype(np.float64)
    b = s2[both].astype(np.float64)
    c = s12[both].astype(np.float64)
    g = c / (a + V.EPS)
    sv = b - g * c
    # (int32_t) of a double truncates; below INT32_MIN the machine gives INT32_MIN, which
    # the clamp at 0 maps to 0 as it does every negative value; above INT32_MAX cannot occur
    sv_sq = np.where(sv > 0, np.trunc(sv), 0.0).astype(np.int64)
    g = np.where(g < vif_enhn_gain_limit, g, vif_enhn_gain_limit)
    numer1 = sv_sq + V.SIGMA_NSQ
    numer1_tmp = np.trunc(g * g * a).astype(np.int64) + numer1
    num_log = int((log2_64(log2_table, numer1_tmp) - log2_64(log2_table, numer1)).sum())

    rest = ~logged
    return VifResiduals(num_log, den_log, int(s2[rest].sum()), int(rest.sum()))


def vif_num_den(res: VifResiduals) -> tuple[np.float32, np.float32]:
    """A scale's float ``num`` and ``den`` from its accumulators, in double as C
    evaluates them, then rounded to float."""
    div_a, div_b = V.NON_LOG_NUM_DIV
    num = res.accum_num_log / float(V.LOG2_ONE) + (
        float(res.accum_den_non_log) - (float(res.accum_num_non_log) / div_a) / div_b
    )
    den = res.accum_den_log / float(V.LOG2_ONE) + float(res.accum_den_non_log)
    return np.float32(num), np.float32(den)


def _statistic(tmp: Moments, scale: int, log2_table: np.ndarray, egl: float, stale):
    sigmas = vif_sigma(vif_horizontal(tmp, scale, stale))
    return vif_num_den(vif_residuals(*sigmas, log2_table, egl))


def vif_statistic_8(
    ref: np.ndarray, dis: np.ndarray, log2_table: np.ndarray, vif_enhn_gain_limit: float
) -> tuple[np.float32, np.float32]:
    """Scale 0 of 8-bit input (libvmaf ``vif_statistic_8``): ``(num, den)`` as floats.

    ``ref``, ``dis``: uint8 planes padded with ``PAD_ROWS[0]`` mirrored rows.
    """
    return _statistic(vif_vertical_8(ref, dis), 0, log2_table, vif_enhn_gain_limit, None)


def vif_statistic_16(
    ref: np.ndarray,
    dis: np.ndarray,
    bpc: int,
    scale: int,
    log2_table: np.ndarray,
    vif_enhn_gain_limit: float,
    stale: Moments | None = None,
) -> tuple[np.float32, np.float32]:
    """Any scale of ``bpc``-bit input but 8-bit scale 0 (libvmaf ``vif_statistic_16``).

    ``ref``, ``dis``: uint16 planes padded with ``PAD_ROWS[scale]`` mirrored rows.
    ``stale``: as :func:`vif_horizontal` takes it, for a plane one column wide.
    """
    tmp = vif_vertical_16(ref, dis, bpc, scale)
    return _statistic(tmp, scale, log2_table, vif_enhn_gain_limit, stale)


# --- the frame --------------------------------------------------------------------------------


def check_frame(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> None:
    """Refuse inputs the reference cannot score exactly (ValueError, one line)."""
    if isinstance(bitdepth, bool) or not isinstance(bitdepth, numbers.Integral):
        raise ValueError(f"bit depth must be an integer, got {bitdepth!r}")
    if not 8 <= bitdepth <= 16:
        raise ValueError(f"bit depth {bitdepth} is not supported (8 to 16)")
    if ref.ndim != 2 or ref.shape != dis.shape:
        raise ValueError(
            f"reference {ref.shape} and distorted {dis.shape} must be 2-D planes of one size"
        )
    h, w = ref.shape
    if w < MIN_SIDE or h < MIN_SIDE:
        raise ValueError(
            f"frame {w}x{h} is too small: libvmaf's VIF needs {MIN_SIDE}x{MIN_SIDE} "
            "(below, it crashes or scores 0/0 at scale 3)"
        )
    want = np.uint8 if bitdepth == 8 else np.uint16
    if ref.dtype != want or dis.dtype != want:
        raise ValueError(
            f"{bitdepth}-bit planes must be {np.dtype(want).name}, got {ref.dtype}/{dis.dtype}"
        )


def vif_scales(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts
) -> list[tuple[np.float32, np.float32] | None]:
    """Each scale's float ``(num, den)`` (None for a skipped scale 0), as libvmaf's
    ``extract`` chains the statistics and decimations."""
    table = log_generate()
    egl = float(opts.vif_enhn_gain_limit)
    r = pad_top_and_bottom(ref, V.VIF_FILTER_WIDTHS[0])
    d = pad_top_and_bottom(dis, V.VIF_FILTER_WIDTHS[0])
    out: list[tuple[np.float32, np.float32] | None] = []
    last = None  # the row buffers after the previous statistic's last row
    for scale in range(V.N_SCALES):
        if scale == 1 and bitdepth == 8:
            r, d = subsample_rd_8(r, d)
        elif scale > 0:
            r, d = subsample_rd_16(r, d, scale - 1, bitdepth)
        if scale == 0 and opts.vif_skip_scale0:
            out.append(None)
            continue
        tmp = vif_vertical_8(r, d) if scale == 0 and bitdepth == 8 else None
        if tmp is None:
            tmp = vif_vertical_16(r, d, bitdepth, scale)
        out.append(_statistic(tmp, scale, table, egl, last))
        last = Moments(*(m[-1] for m in tmp))
    return out


def _fdiv(a: np.float32, b: np.float32) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float32(a) / np.float32(b))


def feature_suffix(opts) -> str:
    """The suffix libvmaf appends to every VIF output name for these options.

    Non-default feature parameters, by option name: ``vif_enhn_gain_limit`` adds
    ``_egl_<%g>``, ``vif_skip_scale0`` adds ``_ssclz``; ``debug`` adds nothing.
    """
    suffix = ""
    if float(opts.vif_enhn_gain_limit) != V.DEFAULT_ENHN_GAIN_LIMIT:
        suffix += f"_egl_{float(opts.vif_enhn_gain_limit):g}"
    if opts.vif_skip_scale0:
        suffix += "_ssclz"
    return suffix


def feature_names(opts) -> dict[str, str]:
    """Base name -> the name libvmaf writes, for all 15 outputs (``integer_vif_scale0``
    -> ``integer_vif_scale0_egl_1`` with ``vif_enhn_gain_limit=1``)."""
    suffix = feature_suffix(opts)
    return {base: base + suffix for base in ALL_FEATURES}


def write_scores(scales: Sequence[tuple[np.float32, np.float32] | None], opts) -> dict[str, float]:
    """libvmaf's ``write_scores``: the outputs it writes, in its order, under its names.

    Each scale's score is the float quotient ``num / den`` (NaN or inf where ``den`` is
    0, as C gives), 0 for a skipped scale 0. With ``debug``: the double sums of ``num``
    and ``den`` over the scales computed, their quotient (1.0 where the sum of ``den`` is
    0), and each scale's ``num`` and ``den`` (0 and -1 for a skipped scale 0).
    """
    names = feature_names(opts)
    res: dict[str, float] = {}
    for k, s in enumerate(scales):
        res[names[f"integer_vif_scale{k}"]] = 0.0 if s is None else _fdiv(*s)
    if not opts.debug:
        return res
    kept = [s for s in scales if s is not None]
    score_num = 0.0
    score_den = 0.0
    for num, den in kept:
        score_num += float(num)
        score_den += float(den)
    res[names["integer_vif"]] = 1.0 if score_den == 0.0 else score_num / score_den
    res[names["integer_vif_num"]] = score_num
    res[names["integer_vif_den"]] = score_den
    for k, s in enumerate(scales):
        if s is None:
            num, den = V.SKIP_SCALE0_NUM, V.SKIP_SCALE0_DEN
        else:
            num, den = float(s[0]), float(s[1])
        res[names[f"integer_vif_num_scale{k}"]] = num
        res[names[f"integer_vif_den_scale{k}"]] = den
    return res


def compute_vif(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> dict[str, float]:
    """libvmaf's integer VIF outputs for one luma pair, keyed by the names it writes.

    Parameters
    ----------
    ref, dis : ndarray
        2-D luma planes, uint8 for 8-bit and uint16 otherwise, at least 8x8.
    bitdepth : int
        8 to 16.
    opts
        Any object with attributes ``vif_enhn_gain_limit``, ``vif_skip_scale0`` and
        ``debug`` (:class:`VifOptions`).

    Returns
    -------
    dict of str to float
        The 4 scale scores, plus the 11 debug outputs with ``debug``, in libvmaf's order,
        named as :func:`feature_names` gives.
    """
    check_options(opts)
    check_frame(ref, dis, bitdepth)
    return write_scores(vif_scales(ref, dis, bitdepth, opts), opts)

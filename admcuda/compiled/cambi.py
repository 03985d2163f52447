"""libvmaf's ``cambi`` banding score of one luma plane, as Numba kernels.

Bit-identical to libvmaf 3.2.0's scalar C (``cambi.c``): the same integers at every stage
(10-bit conversion, anti-dithering, the 7x7 zero-derivative mask, the 3x3 mode filter,
the windowed per-value histograms), the contrast values in float32 with the C's
conversions, the top-k selection leaving the array in the C's order so that the double
sum adds the same floats in the same order, and the scales' weighting in double.

Stages, one kernel each (the name of the C function each mirrors in brackets):

- :func:`preprocess`: nearest-sample scaling to the encoding size and conversion to
  10 bits, then the anti-dithering 2x2 mean below 10 encoding bits
  (``cambi_preprocessing``);
- :func:`spatial_mask`: 1 where more than ``mask_index`` of the 7x7 neighbours equal
  their right and lower neighbours (``get_spatial_mask``);
- :func:`filter_mode`: the 3x3 separable mode filter (``filter_mode``);
- :func:`c_values`: each masked sample's contrast value from the window's histograms
  (``calculate_c_values``);
- :func:`spatial_pooling`: the mean of the top ``topk`` share (``spatial_pooling``);
- :func:`scale_c_values` and :func:`pool_scales`: the five scales' maps and their
  weighted pooling (``cambi_score``), which :func:`cambi_frame` chains.

:func:`cambi_maps` gives the maps of a plane for a banding picture (``admcuda map
--kind cambi``), and :func:`heatmap_16bit` one map as libvmaf's ``heatmaps_path`` files
hold it.

The per-run tables (the visibility thresholds of each contrast step, the window after
its adjustment to the frame size) are computed once in :func:`setup`, in double as the C
does at ``init``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numba import njit

__all__ = [
    "CambiSetup",
    "MIN_SIDE",
    "NUM_SCALES",
    "adjust_window",
    "c_values",
    "cambi_frame",
    "cambi_maps",
    "filter_mode",
    "heatmap_16bit",
    "mask_index",
    "pool_scales",
    "preprocess",
    "reciprocal_lut",
    "scale_c_values",
    "setup",
    "spatial_mask",
    "spatial_pooling",
]

NUM_SCALES = 5
SCALE_WEIGHTS = np.array([16, 8, 4, 2, 1], dtype=np.int64)
CONTRAST_WEIGHTS = np.array(
    [
        1,
        2,
        3,
        4,
        4,
        5,
        5,
        6,
        6,
        6,
        6,
        7,
        7,
        7,
        7,
        8,
        8,
        8,
        8,
        8,
        8,
        8,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
        9,
    ],
    dtype=np.int64,
)
MASK_FILTER_SIZE = 7
MIN_SIDE = 216
"""libvmaf refuses an encoding (or source) size whose width and height are both under it."""
RECIPROCAL_LUT_SIZE = 4226
"""libvmaf's table of 1/n (float32): the adjusted window's area must stay under it."""
WINDOW_DIVISOR = 375  # (3840 + 2160) / 16: the window scales with width + height
WINDOW_SHIFT = 4
LUMA_FOOT_10 = 64  # limited range at 10 bits: 16 << 2 .. 235 << 2
LUMA_HEAD_10 = 940
BT1886_GAMMA = 2.4
BT1886_LW = 300.0
BT1886_LB = 0.01


def _nearest_float32(text: str) -> np.float32:
    """The float32 nearest the decimal ``text``, ties to even, as a C compiler rounds a
    float literal (no rounding through a double first)."""
    exact = Fraction(text)
    guess = np.float32(float(text))
    candidates = (np.nextafter(guess, np.float32(-1)), guess, np.nextafter(guess, np.float32(2)))
    return min(
        candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.uint32)) & 1)
    )


def reciprocal_lut() -> np.ndarray:
    """cambi.h's table of reciprocals (float32): entry n is 1/n written with nine
    significant digits (``%.9g`` of the double) read as a float literal, 0 at n = 0. In
    42 entries that is one float32 step away from ``1.0f / n``."""
    out = np.zeros(RECIPROCAL_LUT_SIZE, dtype=np.float32)
    for n in range(1, RECIPROCAL_LUT_SIZE):
        out[n] = _nearest_float32(f"{1 / n:.9g}")
    return out


_LUT: list[np.ndarray] = []


def _lut() -> np.ndarray:
    if not _LUT:
        _LUT.append(reciprocal_lut())
    return _LUT[0]


# ---------------------------------------------------------------- per-run tables (init)


def _bt1886(v: float) -> float:
    g = 1.0 / BT1886_GAMMA
    a = math.pow(math.pow(BT1886_LW, g) - math.pow(BT1886_LB, g), BT1886_GAMMA)
    b = math.pow(BT1886_LB, g) / (math.pow(BT1886_LW, g) - math.pow(BT1886_LB, g))
    return a * math.pow(max(v + b, 0.0), BT1886_GAMMA)


def _pq(v: float) -> float:
    m_1, m_2 = 0.1593017578125, 78.84375
    c_1, c_2, c_3 = 0.8359375, 18.8515625, 18.6875
    num = math.pow(v, 1.0 / m_2) - c_1
    den = c_2 - c_3 * math.pow(v, 1.0 / m_2)
    return 10000 * math.pow(max(num, 0.0) / den, 1.0 / m_1)


EOTFS = {"bt1886": _bt1886, "pq": _pq}


def _luminance(sample: int, eotf: str) -> float:
    clipped = min(max(sample, LUMA_FOOT_10), LUMA_HEAD_10)
    return EOTFS[eotf]((clipped - LUMA_FOOT_10) / (LUMA_HEAD_10 - LUMA_FOOT_10))


def _tvi_condition(sample: int, diff: int, tvi: float, eotf: str) -> bool:
    mean = _luminance(sample, eotf)
    return _luminance(sample + diff, eotf) - mean > tvi * mean


def _bisect_flag(sample: int, diff: int, tvi: float, eotf: str) -> int:
    """-1: the sample is too small, 0: the last one that passes, 1: too big."""
    if not _tvi_condition(sample, diff, tvi, eotf):
        return 1
    if _tvi_condition(sample + 1, diff, tvi, eotf):
        return -1
    return 0


def _tvi_for_diff(diff: int, tvi: float, eotf: str) -> int:
    """The largest 10-bit sample at which a step of ``diff`` is still visible
    (``get_tvi_for_diff``: its bisection, its early returns)."""
    foot, head = LUMA_FOOT_10, LUMA_HEAD_10 - diff - 1
    flag = _bisect_flag(foot, diff, tvi, eotf)
    if flag == 1:
        return 0
    if flag == 0:
        return foot
    flag = _bisect_flag(head, diff, tvi, eotf)
    if flag == -1:
        return (1 << 10) - 1
    if flag == 0:
        return head
    while True:
        mid = foot + (head - foot) // 2
        flag = _bisect_flag(mid, diff, tvi, eotf)
        if flag == 1:
            head = mid
        elif flag == -1:
            foot = mid
        else:
            return mid


def _vlt_luma(threshold: float, eotf: str) -> int:
    sample = LUMA_FOOT_10
    while _luminance(sample, eotf) < threshold:
        sample += 1
    return 0 if sample == LUMA_FOOT_10 else sample


def adjust_window(window_size: int, width: int, height: int, speedup: bool = False) -> int:
    """The window for a ``width`` x ``height`` frame (``adjust_window_size``): scaled by
    (w + h) / (3840 + 2160), halved (rounded up) with the high-resolution speed-up, made
    odd; kept in 16 bits as the C keeps it."""
    window = (((window_size * (width + height)) // WINDOW_DIVISOR) >> WINDOW_SHIFT) & 0xFFFF
    if speedup:
        window = (window + 1) >> 1
    return window | 1


def mask_index(width: int, height: int) -> int:
    """The spatial mask's threshold for a frame size (``get_mask_index``)."""
    shifted = (width >> 6) * (height >> 6)
    ceil_log2 = 0 if shifted == 0 else (shifted - 1).bit_length()
    return (MASK_FILTER_SIZE * MASK_FILTER_SIZE + 3 * (ceil_log2 - 11) - 1) >> 1


@dataclass(frozen=True)
class CambiSetup:
    """What libvmaf's ``init`` computes once for a run: the contrast steps' weights and
    visibility thresholds (10-bit samples offset by ``num_diffs``), the visibility floor,
    the histograms' band of values and the adjusted window."""

    num_diffs: int
    diff_weights: np.ndarray
    tvi_for_diff: np.ndarray
    vlt_luma: int
    band_base: int
    band_size: int
    window: int
    speedup: bool


def setup(
    width: int,
    height: int,
    *,
    window_size: int = 65,
    tvi_threshold: float = 0.019,
    max_log_contrast: int = 2,
    vis_lum_threshold: float = 0.0,
    eotf: str = "bt1886",
    speedup: bool = False,
) -> CambiSetup:
    """The per-run tables for frames of ``width`` x ``height`` (the encoding size, or the
    source's for the reference of a full-reference run).

    Raises
    ------
    ValueError
        Where libvmaf would read outside its tables: a visibility threshold of a smaller
        step above that of the largest, or no 10-bit sample as bright as
        ``vis_lum_threshold`` (the C's search does not end).
    """
    if eotf not in EOTFS:
        raise ValueError(f"eotf must be one of {', '.join(EOTFS)}, got {eotf!r}")
    if _luminance(LUMA_HEAD_10, eotf) < vis_lum_threshold:
        raise ValueError(
            f"cambi_vis_lum_threshold {vis_lum_threshold:g} is above the brightest sample's "
            "luminance (libvmaf's search for it does not end)"
        )
    num_diffs = 1 << max_log_contrast
    tvi = np.array(
        [_tvi_for_diff(d + 1, tvi_threshold, eotf) + num_diffs for d in range(num_diffs)],
        dtype=np.int64,
    )
    # the C keeps these in uint16_t
    tvi &= 0xFFFF
    vlt = _vlt_luma(vis_lum_threshold, eotf) & 0xFFFF
    lo = vlt - 3 * num_diffs + 1
    base = lo if lo > 0 else 0
    size = int(tvi[num_diffs - 1]) + 1 - base
    if size < 0:
        # the C's uint16 band size wraps and libvmaf 3.2.0 crashes (SIGSEGV) on the frame
        raise ValueError(
            f"cambi_vis_lum_threshold {vis_lum_threshold:g} is above the visibility "
            "thresholds of every contrast step (libvmaf 3.2.0 crashes on it)"
        )
    if int(tvi.max()) != int(tvi[-1]):
        raise ValueError("a smaller contrast step's visibility threshold is above the largest's")
    window = adjust_window(window_size, width, height, speedup)
    return CambiSetup(
        num_diffs,
        CONTRAST_WEIGHTS[:num_diffs].copy(),
        tvi,
        vlt,
        base,
        size,
        window,
        speedup,
    )


# ---------------------------------------------------------------- frame kernels


@njit(cache=True, nogil=True, error_model="numpy")
def preprocess(plane, bpc, out_w, out_h, enc_bitdepth):  # type: ignore[no-untyped-def]
    """The plane at ``out_w`` x ``out_h`` in 10 bits (uint16; ``cambi_preprocessing``):
    nearest samples at float32 steps where the size differs, shifted up from 8 or 9 bits
    or rounded down from above 10, then the 2x2 mean where ``enc_bitdepth`` < 10."""
    in_h, in_w = plane.shape
    out = np.empty((out_h, out_w), dtype=np.uint16)
    if bpc >= 10:
        shift = bpc - 10
        offset = 0 if shift == 0 else 1 << (shift - 1)
    else:
        shift = 10 - bpc
        offset = 0
    if in_w == out_w and in_h == out_h:
        for i in range(out_h):
            for j in range(out_w):
                v = np.int64(plane[i, j])
                out[i, j] = (v + offset) >> shift if bpc >= 10 else v << shift
    else:
        ratio_x = np.float32(in_w) / np.float32(out_w)
        ratio_y = np.float32(in_h) / np.float32(out_h)
        start_x = np.float32(np.float64(ratio_x / np.float32(2)) - 0.5)
        start_y = np.float32(np.float64(ratio_y / np.float32(2)) - 0.5)
        y = start_y
        for i in range(out_h):
            oy = np.int64(np.float64(y) + 0.5)
            x = start_x
            for j in range(out_w):
                ox = np.int64(np.float64(x) + 0.5)
                v = np.int64(plane[oy, ox])
                out[i, j] = (v + offset) >> shift if bpc >= 10 else v << shift
                x = np.float32(x + ratio_x)
            y = np.float32(y + ratio_y)
    if enc_bitdepth < 10:
        # in place, reading only samples not yet written (right and below)
        for i in range(out_h - 1):
            for j in range(out_w - 1):
                s = (
                    np.int64(out[i, j])
                    + np.int64(out[i, j + 1])
                    + np.int64(out[i + 1, j])
                    + np.int64(out[i + 1, j + 1])
                )
                out[i, j] = s >> 2
            j = out_w - 1
            out[i, j] = (np.int64(out[i, j]) + np.int64(out[i + 1, j])) >> 1
        i = out_h - 1
        for j in range(out_w - 1):
            out[i, j] = (np.int64(out[i, j]) + np.int64(out[i, j + 1])) >> 1
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def spatial_mask(image, index):  # type: ignore[no-untyped-def]
    """1 (uint16) where the 7x7 box (zero outside the frame) holds more than ``index``
    samples equal to their right and lower neighbours (the last column and row count
    as equal); ``get_spatial_mask``'s sums, taken here as a summed-area table."""
    h, w = image.shape
    pad = MASK_FILTER_SIZE >> 1
    sat = np.zeros((h + 1, w + 1), dtype=np.int64)
    for i in range(h):
        run = np.int64(0)
        for j in range(w):
            v = image[i, j]
            flat = (j == w - 1 or v == image[i, j + 1]) and (i == h - 1 or v == image[i + 1, j])
            run += 1 if flat else 0
            sat[i + 1, j + 1] = sat[i, j + 1] + run
    mask = np.empty((h, w), dtype=np.uint16)
    for i in range(h):
        top = max(i - pad, 0)
        bottom = min(i + pad + 1, h)
        for j in range(w):
            left = max(j - pad, 0)
            right = min(j + pad + 1, w)
            total = sat[bottom, right] - sat[top, right] - sat[bottom, left] + sat[top, left]
            mask[i, j] = 1 if total > index else 0
    return mask


@njit(inline="always")
def _mode3(a, b, c):  # type: ignore[no-untyped-def]
    if a == b or a == c:
        return a
    if b == c:
        return b
    return min(a, min(b, c))


@njit(cache=True, nogil=True, error_model="numpy")
def filter_mode(image):  # type: ignore[no-untyped-def]
    """The 3x3 mode filter in place (``filter_mode``): the mode of three samples (the
    least where all differ) along each row, the first and last column kept, then down
    each column of those, the first and last row kept as they were."""
    h, w = image.shape
    rows = np.empty((3, w), dtype=np.uint16)
    for i in range(h):
        line = i % 3
        rows[line, 0] = image[i, 0]
        for j in range(1, w - 1):
            rows[line, j] = _mode3(image[i, j - 1], image[i, j], image[i, j + 1])
        rows[line, w - 1] = image[i, w - 1]
        if i > 1:
            for j in range(w):
                image[i - 1, j] = _mode3(rows[0, j], rows[1, j], rows[2, j])


@njit(inline="always")
def _add_row(hist, image, mask, r, width, pad, base, size, step):  # type: ignore[no-untyped-def]
    for j in range(width):
        if mask[r, j]:
            v = np.int64(image[r, j]) - base
            if 0 <= v < size:
                lo = max(j - pad, 0)
                hi = min(j + pad + 1, width)
                for c in range(lo, hi):
                    hist[v, c] += step


@njit(inline="always")
def _c_value(hist, value, col, num_diffs, tvi, vlt, weights, offset, size, lut):  # type: ignore[no-untyped-def]
    compact = value - offset
    if compact < 0 or compact >= size:
        return np.float32(0.0)
    p0 = np.int64(hist[compact, col])
    best = np.float32(0.0)
    for d in range(num_diffs):
        if value <= tvi[d] and value + d + 1 > vlt:
            p1 = np.int64(hist[compact + d + 1, col])
            i2 = compact - d - 1
            p2 = np.int64(hist[i2, col]) if i2 >= 0 else np.int64(0)
            if p1 > p2:
                val = np.float32(weights[d] * p0 * p1) * lut[p1 + p0]
            else:
                val = np.float32(weights[d] * p0 * p2) * lut[p2 + p0]
            if val > best:
                best = val
    return best


@njit(cache=True, nogil=True, error_model="numpy")
def c_values(image, mask, window, num_diffs, tvi, vlt, weights, base, size, lut):  # type: ignore[no-untyped-def]
    """Each masked sample's contrast value (float32; 0 elsewhere) from the histogram of
    the masked samples in its window (clipped to the frame) whose values lie in the
    band [``base``, ``base + size``) (``calculate_c_values``): the largest over the
    visible steps d of weight * p0 * p / (p0 + p), p0 the count of its own value and p
    the larger count of the values d + 1 above and below it."""
    h, w = image.shape
    pad = window >> 1
    hist = np.zeros((size, w), dtype=np.int64)
    out = np.zeros((h, w), dtype=np.float32)
    offset = base + num_diffs
    for r in range(min(pad, h)):
        _add_row(hist, image, mask, r, w, pad, base, size, 1)
    for i in range(h):
        if i + pad < h:
            _add_row(hist, image, mask, i + pad, w, pad, base, size, 1)
        if i - pad - 1 >= 0:
            _add_row(hist, image, mask, i - pad - 1, w, pad, base, size, -1)
        for j in range(w):
            if mask[i, j]:
                value = np.int64(image[i, j]) + num_diffs
                out[i, j] = _c_value(
                    hist, value, j, num_diffs, tvi, vlt, weights, offset, size, lut
                )
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def spatial_pooling(values, topk):  # type: ignore[no-untyped-def]
    """The mean (double) of the ``topk`` share of the largest values
    (``spatial_pooling``): the C's quickselect, whose swaps leave the array in the order
    its sum then reads; ``values`` is reordered."""
    arr = values.ravel()
    n = arr.size
    k = np.int64(topk * n)  # the C converts the double to int on the call
    k = 1 if k < 1 else (n if k > n else k)
    if n != k:
        left = 0
        right = n - 1
        while left < right:
            pivot = arr[k]
            i = left
            j = right
            while True:
                while arr[i] > pivot:
                    i += 1
                while arr[j] < pivot:
                    j -= 1
                if i <= j:
                    t = arr[i]
                    arr[i] = arr[j]
                    arr[j] = t
                    i += 1
                    j -= 1
                if not i <= j:
                    break
            if j < k:
                left = i
            if k < i:
                right = j
    total = 0.0
    for i in range(k):
        total += np.float64(arr[i])
    return total / k


@njit(cache=True, nogil=True, error_model="numpy")
def scale_c_values(image, index, window, speedup, num_diffs, tvi, vlt, weights, base, size, lut):  # type: ignore[no-untyped-def]
    """The five scales' contrast values (float32) of a preprocessed 10-bit plane, as
    ``cambi_score`` computes them before pooling: the mask once at full size, then per
    scale (each after the first decimated by 2, the mask with it) the mode filter and
    :func:`c_values`; ``image`` is overwritten. These are the maps libvmaf's
    ``heatmaps_path`` writes, before its 16-bit scaling."""
    mask = spatial_mask(image, index)
    img = image
    values = []
    for scale in range(NUM_SCALES):
        if scale > 0 or speedup:
            img = img[::2, ::2].copy()
            mask = mask[::2, ::2].copy()
        filter_mode(img)
        values.append(c_values(img, mask, window, num_diffs, tvi, vlt, weights, base, size, lut))
    return values


@njit(cache=True, nogil=True, error_model="numpy")
def pool_scales(values, window, topk):  # type: ignore[no-untyped-def]
    """The weighted score of the five scales' contrast values (``cambi_score``'s end):
    each scale's top-``topk`` mean (:func:`spatial_pooling`, which reorders the maps),
    weighted 16, 8, 4, 2, 1, over the window's area."""
    score = 0.0
    for scale in range(NUM_SCALES):
        score += spatial_pooling(values[scale], topk) * np.float64(SCALE_WEIGHTS[scale])
    side = 2 * (window >> 1) + 1
    return score / np.float64(side * side)


def smallest_scale(width: int, height: int) -> tuple[int, int]:
    """The fifth scale's size: each side halved four times, rounded up."""
    for _ in range(NUM_SCALES - 1):
        width, height = (width + 1) >> 1, (height + 1) >> 1
    return width, height


def cambi_frame(
    plane: np.ndarray,
    bitdepth: int,
    tables: CambiSetup,
    *,
    enc_width: int,
    enc_height: int,
    enc_bitdepth: int,
    topk: float,
) -> float:
    """One plane's cambi score before the ``cambi_max_val`` clip (libvmaf's
    ``preprocess_and_extract_cambi`` and ``cambi_score``), for ``tables`` from
    :func:`setup` at ``enc_width`` x ``enc_height``: :func:`cambi_maps` pooled."""
    maps = cambi_maps(
        plane, bitdepth, tables, enc_width=enc_width, enc_height=enc_height,
        enc_bitdepth=enc_bitdepth,
    )  # fmt: skip
    return float(pool_scales(tuple(maps), tables.window, float(topk)))


def cambi_maps(
    plane: np.ndarray,
    bitdepth: int,
    tables: CambiSetup,
    *,
    enc_width: int,
    enc_height: int,
    enc_bitdepth: int,
) -> list[np.ndarray]:
    """One plane's contrast values at each of the five scales (float32), the maps whose
    top-``topk`` means :func:`pool_scales` weights into the score; the first is at the
    encoding size (half of it with the high-resolution speed-up), each next one halved."""
    image = preprocess(plane, bitdepth, enc_width, enc_height, enc_bitdepth)
    return list(
        scale_c_values(
            image,
            mask_index(enc_width, enc_height),
            tables.window,
            tables.speedup,
            tables.num_diffs,
            tables.tvi_for_diff,
            tables.vlt_luma,
            tables.diff_weights,
            tables.band_base,
            tables.band_size,
            _lut(),
        )
    )


def heatmap_16bit(values: np.ndarray, tables: CambiSetup) -> np.ndarray:
    """A scale's contrast values as libvmaf's ``heatmaps_path`` writes them: uint16,
    65535 for the largest value a window allows (the largest step weight times a
    quarter of the window's area, in integers), truncated."""
    top = int(tables.diff_weights.max()) * tables.window * tables.window // 4
    return (np.float64(65535) / np.float64(top) * values.astype(np.float64)).astype(np.uint16)

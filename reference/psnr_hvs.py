"""Bit-exact NumPy reference of libvmaf's ``psnr_hvs`` extractor (Xiph's PSNR-HVS-M,
``third_party/xiph/psnr_hvs.c``; scalar C, no SIMD path).

Per frame pair, four doubles in the order libvmaf writes them: ``psnr_hvs_y``,
``psnr_hvs_cb``, ``psnr_hvs_cr`` (each plane's :func:`plane_score` in decibels) and
``psnr_hvs`` (the planes' scores weighted 0.8, 0.1, 0.1 in double, then in decibels).
Each plane is read at libvmaf's picture size (a halved side rounded down). The steps,
with their types:

- 8x8 blocks every 7 samples in both directions (``y < h - 7``, ``x < w - 7``), rows
  of blocks in order; a plane under 8 samples a side has none, and its score is 0 / 0:
  NaN;
- per block (:func:`plane_score`): the samples' mean and each 4x4 quarter's mean, float32
  sums in the C's order divided in float32; the block's and each quarter's variance,
  float32 sums of float32 squares in order, scaled by the float32 constants
  ``1 / 63.f * 64`` and ``1 / 15.f * 16``; where the block's variance is above 0 it
  becomes the quarters' summed variances over it (float32);
- Xiph's integer 8x8 DCT (:func:`fdct8x8`: ``od_bin_fdct8`` down the columns, then
  down the columns of the result, 32-bit integers with its unbiased shifts);
- the masks: each AC coefficient's square (a 32-bit integer) to float32 times the
  mask table (:func:`masks`: the CSF times 0.3885746225901003, squared in double, to
  float32), summed in float32; times the variance ratio, ``sqrt`` in double, over 32,
  rounded to float32; the larger of the reference's and the distorted block's;
- each coefficient's absolute difference (to float32) less the mask over its mask entry
  (the DC coefficient unmasked, a difference under the mask counting 0), times its CSF
  entry, squared: all float32, added to the plane's float32 sum one coefficient after
  another, block after block (:func:`error_sum`);
- the sum over the coefficient count (an int to float32), over ``(2**depth - 1) ** 2``
  (to float32), both float32 divisions; then ``10 * (-1 * log10(score))`` in double,
  with the C library's ``log10`` (infinite where the planes are equal).

The chroma planes take the tables named 4:2:0 whatever the layout (the C passes them for
planes 1 and 2). GCC builds libvmaf with ``-O3 -std=c11`` for baseline x86-64: SSE
arithmetic, no contraction into FMA, no reassociation of float sums. Bit depths up to 12
(``init`` refuses more), 4:0:0 refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "BLOCK_STEP",
    "CSF_CB",
    "CSF_CR",
    "CSF_Y",
    "MASK_SCALE",
    "NAMES",
    "check_layout",
    "compute_psnr_hvs",
    "error_sum",
    "fdct8",
    "fdct8x8",
    "masks",
    "plane_score",
    "scored_shapes",
    "to_db",
]

NAMES = ("psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs")
BLOCK_STEP = 7
MASK_SCALE = 0.3885746225901003

# The CSF tables as the C's float arrays hold them (double literals rounded to float32).
CSF_Y = np.array(
    [
        [1.6193873005, 2.2901594831, 2.08509755623, 1.48366094411,
         1.00227514334, 0.678296995242, 0.466224900598, 0.3265091542],
        [2.2901594831, 1.94321815382, 2.04793073064, 1.68731108984,
         1.2305666963, 0.868920337363, 0.61280991668, 0.436405793551],
        [2.08509755623, 2.04793073064, 1.34329019223, 1.09205635862,
         0.875748795257, 0.670882927016, 0.501731932449, 0.372504254596],
        [1.48366094411, 1.68731108984, 1.09205635862, 0.772819797575,
         0.605636379554, 0.48309405692, 0.380429446972, 0.295774038565],
        [1.00227514334, 1.2305666963, 0.875748795257, 0.605636379554,
         0.448996256676, 0.352889268808, 0.283006984131, 0.226951348204],
        [0.678296995242, 0.868920337363, 0.670882927016, 0.48309405692,
         0.352889268808, 0.27032073436, 0.215017739696, 0.17408067321],
        [0.466224900598, 0.61280991668, 0.501731932449, 0.380429446972,
         0.283006984131, 0.215017739696, 0.168869545842, 0.136153931001],
        [0.3265091542, 0.436405793551, 0.372504254596, 0.295774038565,
         0.226951348204, 0.17408067321, 0.136153931001, 0.109083846276],
    ],
    dtype=np.float32,
)  # fmt: skip
CSF_CB = np.array(
    [
        [1.91113096927, 2.46074210438, 1.18284184739, 1.14982565193,
         1.05017074788, 0.898018824055, 0.74725392039, 0.615105596242],
        [2.46074210438, 1.58529308355, 1.21363250036, 1.38190029285,
         1.33100189972, 1.17428548929, 0.996404342439, 0.830890433625],
        [1.18284184739, 1.21363250036, 0.978712413627, 1.02624506078,
         1.03145147362, 0.960060382087, 0.849823426169, 0.731221236837],
        [1.14982565193, 1.38190029285, 1.02624506078, 0.861317501629,
         0.801821139099, 0.751437590932, 0.685398513368, 0.608694761374],
        [1.05017074788, 1.33100189972, 1.03145147362, 0.801821139099,
         0.676555426187, 0.605503172737, 0.55002013668, 0.495804539034],
        [0.898018824055, 1.17428548929, 0.960060382087, 0.751437590932,
         0.605503172737, 0.514674450957, 0.454353482512, 0.407050308965],
        [0.74725392039, 0.996404342439, 0.849823426169, 0.685398513368,
         0.55002013668, 0.454353482512, 0.389234902883, 0.342353999733],
        [0.615105596242, 0.830890433625, 0.731221236837, 0.608694761374,
         0.495804539034, 0.407050308965, 0.342353999733, 0.295530605237],
    ],
    dtype=np.float32,
)  # fmt: skip
CSF_CR = np.array(
    [
        [2.03871978502, 2.62502345193, 1.26180942886, 1.11019789803,
         1.01397751469, 0.867069376285, 0.721500455585, 0.593906509971],
        [2.62502345193, 1.69112867013, 1.17180569821, 1.3342742857,
         1.28513006198, 1.13381474809, 0.962064122248, 0.802254508198],
        [1.26180942886, 1.17180569821, 0.944981930573, 0.990876405848,
         0.995903384143, 0.926972725286, 0.820534991409, 0.706020324706],
        [1.11019789803, 1.3342742857, 0.990876405848, 0.831632933426,
         0.77418706195, 0.725539939514, 0.661776842059, 0.587716619023],
        [1.01397751469, 1.28513006198, 0.995903384143, 0.77418706195,
         0.653238524286, 0.584635025748, 0.531064164893, 0.478717061273],
        [0.867069376285, 1.13381474809, 0.926972725286, 0.725539939514,
         0.584635025748, 0.496936637883, 0.438694579826, 0.393021669543],
        [0.721500455585, 0.962064122248, 0.820534991409, 0.661776842059,
         0.531064164893, 0.438694579826, 0.375820256136, 0.330555063063],
        [0.593906509971, 0.802254508198, 0.706020324706, 0.587716619023,
         0.478717061273, 0.393021669543, 0.330555063063, 0.285345396658],
    ],
    dtype=np.float32,
)  # fmt: skip

# ``1 / 63.f * 64`` and ``1 / 15.f * 16``: float32 constants, as GCC folds them
_GVAR_SCALE = np.float32(np.float32(1) / np.float32(63)) * np.float32(64)
_QVAR_SCALE = np.float32(np.float32(1) / np.float32(15)) * np.float32(16)

# each 4x4 quarter's coefficients in the C's order, by its index
# ``((i & 12) >> 2) + ((j & 12) >> 1)``
_QUARTERS = [
    [k for k in range(64) if ((k // 8 & 12) >> 2) + ((k % 8 & 12) >> 1) == q] for q in range(4)
]


def masks(csf: np.ndarray) -> np.ndarray:
    """``calc_psnrhvs``'s mask table: each CSF entry times :data:`MASK_SCALE`, squared,
    in double, stored as float32."""
    scaled = csf.astype(np.float64) * MASK_SCALE
    return (scaled * scaled).astype(np.float32)


def check_layout(pixel_format: str, bitdepth: int) -> None:
    """Refuse (ValueError) what libvmaf's ``psnr_hvs`` ``init`` refuses: bit depths above
    12 (and any libvmaf does not read) and 4:0:0."""
    if bitdepth not in (8, 10, 12):
        raise ValueError(
            f"psnr_hvs takes bit depths 8, 10 and 12, not {bitdepth} (libvmaf's psnr_hvs "
            "refuses more than 12)"
        )
    if pixel_format == "400":
        raise ValueError("psnr_hvs reads chroma: libvmaf's psnr_hvs refuses 4:0:0 input")
    if pixel_format not in ("420", "422", "444"):
        raise ValueError(f"psnr_hvs: no pixel format {pixel_format!r}")


def scored_shapes(width: int, height: int, pixel_format: str) -> list[tuple[int, int]]:
    """Each plane's (rows, columns) in libvmaf's picture: a halved side rounded down."""
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0)}[pixel_format]
    return [(height, width), (height >> sy, width >> sx), (height >> sy, width >> sx)]


def _rshift(a: np.ndarray, b: int) -> np.ndarray:
    """``OD_DCT_RSHIFT``: ``a >> b`` rounding toward zero, through uint32 as the C does."""
    u = a.astype(np.uint32)
    return ((u >> np.uint32(32 - b)) + u).astype(np.int32) >> np.int32(b)


def _mul(a: np.ndarray, c: int, bias: int, shift: int) -> np.ndarray:
    """``(a * c + bias) >> shift`` in 32-bit integers."""
    return (a * np.int32(c) + np.int32(bias)) >> np.int32(shift)


def fdct8(x: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``od_bin_fdct8``: Xiph's 8-point integer DCT of ``x[0]`` ... ``x[7]`` (int32 arrays
    of one shape, taken element-wise); its eight outputs, in order."""
    t0, t4, t2, t6, t7, t3, t5, t1 = (np.asarray(v, np.int32) for v in x)
    t1 = t0 - t1
    t1h = _rshift(t1, 1)
    t0 = t0 - t1h
    t4 = t4 + t5
    t4h = _rshift(t4, 1)
    t5 = t5 - t4h
    t3 = t2 - t3
    t2 = t2 - _rshift(t3, 1)
    t6 = t6 + t7
    t6h = _rshift(t6, 1)
    t7 = t6h - t7
    t0 = t0 + t6h
    t6 = t0 - t6
    t2 = t4h - t2
    t4 = t2 - t4
    t0 = t0 - _mul(t4, 13573, 16384, 15)
    t4 = t4 + _mul(t0, 11585, 8192, 14)
    t0 = t0 - _mul(t4, 13573, 16384, 15)
    t6 = t6 - _mul(t2, 21895, 16384, 15)
    t2 = t2 + _mul(t6, 15137, 8192, 14)
    t6 = t6 - _mul(t2, 21895, 16384, 15)
    t3 = t3 + _mul(t5, 19195, 16384, 15)
    t5 = t5 + _mul(t3, 11585, 8192, 14)
    t3 = t3 - _mul(t5, 7489, 4096, 13)
    t7 = _rshift(t5, 1) - t7
    t5 = t5 - t7
    t3 = t1h - t3
    t1 = t1 - t3
    t7 = t7 + _mul(t1, 3227, 16384, 15)
    t1 = t1 - _mul(t7, 6393, 16384, 15)
    t7 = t7 + _mul(t1, 3227, 16384, 15)
    t5 = t5 + _mul(t3, 2485, 4096, 13)
    t3 = t3 - _mul(t5, 18205, 16384, 15)
    t5 = t5 + _mul(t3, 2485, 4096, 13)
    return [t0, t1, t2, t3, t4, t5, t6, t7]


def fdct8x8(blocks: np.ndarray) -> np.ndarray:
    """``od_bin_fdct8x8`` of blocks laid out ``(8, 8, n)`` (int32, sample ``[i, j]`` of
    block ``b`` at ``[i, j, b]``): the 1-D DCT down each column, its outputs forming a
    row, then the same again."""
    z = np.stack(fdct8(list(blocks)), axis=1)
    return np.stack(fdct8(list(z)), axis=1)


def _blocks(plane: np.ndarray) -> np.ndarray:
    """The plane's 8x8 blocks every :data:`BLOCK_STEP` samples, ``(64, n)`` int32: row
    ``i * 8 + j`` holds sample ``[i, j]`` of every block, blocks in the C's order (rows
    of blocks)."""
    h, w = plane.shape
    if h < 8 or w < 8:
        return np.empty((64, 0), np.int32)
    windows = np.lib.stride_tricks.sliding_window_view(plane, (8, 8))
    picked = windows[::BLOCK_STEP, ::BLOCK_STEP]
    return np.ascontiguousarray(picked.reshape(-1, 64).T, dtype=np.int32)


def _running(values: np.ndarray) -> np.ndarray:
    """Each block's float32 sum of ``values`` (float32, ``(k, n)``), its ``k`` terms added
    one after another in row order."""
    total = values[0].copy()
    for row in values[1:]:
        total += row
    return total


def _variance_ratio(samples: np.ndarray) -> np.ndarray:
    """Each block's ``s_gvar`` as the masking reads it: the quarters' variances summed
    over the block's, where the block's is above 0 (float32)."""
    mean = _running(samples) / np.float32(64)
    diff = samples - mean
    gvar = _running(diff * diff) * _GVAR_SCALE
    qvar = []
    for quarter in _QUARTERS:
        part = samples[quarter]
        qmean = _running(part) / np.float32(16)
        d = part - qmean
        qvar.append(_running(d * d) * _QVAR_SCALE)
    total = qvar[0] + qvar[1] + qvar[2] + qvar[3]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gvar > 0, total / gvar, gvar)


def _mask(coeffs: np.ndarray, ratio: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each block's contrast mask: the AC coefficients' float32 squares weighted by
    ``mask``, summed in float32, times the variance ratio; ``sqrt`` in double over 32."""
    ac = coeffs[1:]
    squares = (ac * ac).astype(np.float32) * mask.reshape(64, 1)[1:]
    energy = _running(squares) * ratio
    return (np.sqrt(energy.astype(np.float64)) / 32.0).astype(np.float32)


def error_sum(terms: np.ndarray) -> np.float32:
    """``ret``: the float32 terms added to a float32 one after another (0 for none)."""
    if not terms.size:
        return np.float32(0)
    return np.add.accumulate(terms, dtype=np.float32)[-1]


def plane_score(src: np.ndarray, dst: np.ndarray, bitdepth: int, csf: np.ndarray) -> float:
    """``calc_psnrhvs``: one plane pair's masked, CSF-weighted DCT error (a float32 as a
    double); NaN for planes under 8 samples a side."""
    mask = masks(csf)
    a, b = _blocks(src), _blocks(dst)
    n = a.shape[1]
    ca = fdct8x8(a.reshape(8, 8, n)).reshape(64, n)
    cb = fdct8x8(b.reshape(8, 8, n)).reshape(64, n)
    s_mask = _mask(ca, _variance_ratio(a.astype(np.float32)), mask)
    d_mask = _mask(cb, _variance_ratio(b.astype(np.float32)), mask)
    level = np.where(d_mask > s_mask, d_mask, s_mask)
    err = np.abs(ca - cb).astype(np.float32)
    threshold = level / mask.reshape(64, 1)
    masked = np.where(err < threshold, np.float32(0), err - threshold)
    err[1:] = masked[1:]
    weighted = err * csf.reshape(64, 1)
    terms = np.ascontiguousarray((weighted * weighted).T).reshape(-1)  # block by block
    total = error_sum(terms)
    peak = (1 << bitdepth) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        score = total / np.float32(n * 64) / np.float32(peak * peak)
    return float(score)


def to_db(score: float) -> float:
    """``convert_score_db(score, 1.0)``: ``10 * (-1 * log10(1.0 * score))`` with the C
    library's ``log10`` (inf at 0, NaN for NaN)."""
    value = 1.0 * score
    if value == 0.0:
        return math.inf
    if math.isnan(value):
        return value
    return 10.0 * (-1.0 * math.log10(value))


def compute_psnr_hvs(
    ref: Sequence[np.ndarray], dis: Sequence[np.ndarray], bitdepth: int, pixel_format: str
) -> dict[str, float]:
    """One frame pair's four outputs, by :data:`NAMES` in libvmaf's order.

    Parameters
    ----------
    ref, dis : sequence of three ndarray
        The Y, Cb and Cr planes of each frame, as a file holds them (an odd halved side
        rounded up) or as libvmaf's picture does (rounded down); uint8 at 8 bits, uint16
        above.
    bitdepth : {8, 10, 12}
    pixel_format : {"420", "422", "444"}
    """
    check_layout(pixel_format, bitdepth)
    height, width = ref[0].shape
    shapes = scored_shapes(width, height, pixel_format)
    scores = []
    for p, (csf, (rows, cols)) in enumerate(zip((CSF_Y, CSF_CB, CSF_CR), shapes, strict=True)):
        r, d = ref[p], dis[p]
        if r.shape != d.shape or r.shape[0] < rows or r.shape[1] < cols:
            raise ValueError(
                f"psnr_hvs: plane {p} of {r.shape} and {d.shape}; a {pixel_format} frame of "
                f"{width}x{height} has {rows}x{cols} there"
            )
        scores.append(plane_score(r[:rows, :cols], d[:rows, :cols], bitdepth, csf))
    combined = scores[0] * 0.8 + 0.1 * (scores[1] + scores[2])
    values = [to_db(s) for s in scores] + [to_db(combined)]
    return dict(zip(NAMES, values, strict=True))

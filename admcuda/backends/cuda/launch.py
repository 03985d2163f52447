"""Stage launchers of the CUDA backend, one per reference stage (:func:`dwt2`,
:func:`dwt2_s123`, :func:`csf`, :func:`csf_den`, :func:`cm`): check shapes, dtypes and
layouts, cast every scalar, and launch the CuPy RawKernels of ``kernels/`` over a batch
of frames, one frame per ``grid.z`` slice."""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from admcuda import kernel_loader as K
from admcuda.reference import constants as C

from .geometry import ScaleGeometry, device_params

__all__ = [
    "CM_ROWS_PER_ITEM",
    "MAX_FRAMES_PER_LAUNCH",
    "cm",
    "cm_rows",
    "csf",
    "csf_den",
    "dwt2",
    "dwt2_s123",
    "recip_table",
]

_BLOCK = (32, 8, 1)  # elementwise kernels: one thread per band position
_DWT_BLOCK = (32, K.DWT_THREADS // 32, 1)  # the DWT: one thread per 2x2 output positions
_ROW_BLOCK = (32, K.ROW_WARPS, 1)  # row-reducing kernels: one warp per row
_ROWS_PER_BLOCK = 2 * K.ROW_WARPS
# The masking pass: rows per warp work item (each item decodes its two halo rows again).
CM_ROWS_PER_ITEM = 16
_CM_STEP = 30  # output columns per work item (adm_cm.cu's ADM_CM_STEP)
MAX_FRAMES_PER_LAUNCH = 65535  # grid.z limit

i32, i64, f64 = np.int32, np.int64, np.float64


def _cdiv(n: int, d: int) -> int:
    return max(-(-n // d), 1)


def _frame_stride(arr: Any, name: str) -> int:
    """Elements between frames of a (n, ...) array whose per-frame part is contiguous."""
    item = arr.dtype.itemsize
    inner = arr[0] if arr.shape[0] else arr
    if not inner.flags.c_contiguous:
        raise ValueError(f"{name}: each frame must be C-contiguous")
    if arr.strides[0] % item:
        raise ValueError(f"{name}: frame stride is not a whole number of elements")
    return arr.strides[0] // item


def _check_frames(n: int) -> None:
    if not 0 < n <= MAX_FRAMES_PER_LAUNCH:
        raise ValueError(f"a launch takes 1..{MAX_FRAMES_PER_LAUNCH} frames, got {n}")


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    import cupy as cp

    return cp.empty(shape, dtype=dtype)


def _zeros(shape: tuple[int, ...], dtype: Any) -> Any:
    import cupy as cp

    return cp.zeros(shape, dtype=dtype)


def dwt2(src: Any, bitdepth: int, *, lo_only: bool = False, out: Any = None) -> Any:
    """Scale-0 DWT of a batch of luma planes (reference.dwt2.dwt2).

    Parameters
    ----------
    src : cupy.ndarray
        (n, h, w) uint8 for 8-bit, uint16 otherwise; C-contiguous.
    bitdepth : int
        8, 10, 12 or 16.
    lo_only : bool
        Compute the approximation band only (``adm_skip_scale0``).
    out : cupy.ndarray, optional
        (n, 4, ceil(h/2), ceil(w/2)) int16, bands in (a, v, h, d) order.

    Returns
    -------
    cupy.ndarray
        ``out``; with ``lo_only`` only plane 0 is written.
    """
    want = np.uint8 if bitdepth == 8 else np.uint16
    K.check_array(src, want, "dwt2 src", ndim=3)
    n, h, w = src.shape
    _check_frames(n)
    hh, ww = (h + 1) // 2, (w + 1) // 2
    if out is None:
        out = _empty((n, 4, hh, ww), np.int16)
    K.check_array(out, np.int16, "dwt2 out", ndim=4)
    if out.shape != (n, 4, hh, ww):
        raise ValueError(f"dwt2 out must be {(n, 4, hh, ww)}, got {out.shape}")
    vp_rnd, vp_shift = C.DWT0_VP_8BIT if bitdepth == 8 else (1 << (bitdepth - 1), bitdepth)
    words = _dwt0_words(src, out)
    fn = K.function("adm_dwt2_s0", src.dtype)
    fn(
        (_cdiv(ww, 2 * _DWT_BLOCK[0]), _cdiv(hh, 2 * _DWT_BLOCK[1]), n),
        _DWT_BLOCK,
        (
            src,
            out,
            i32(h),
            i32(w),
            i32(hh),
            i32(ww),
            i32(vp_rnd),
            i32(vp_shift),
            i32(C.DWT_LO_SUM * vp_rnd),
            i32(C.DWT_HI_SUM * vp_rnd),
            i32(bool(lo_only)),
            i32(words),
        ),
    )
    return out


def _dwt0_words(src: Any, out: Any) -> bool:
    """Whether the scale-0 DWT may read its source rows in aligned words of four samples
    and store its bands in pairs (adm_dwt2.cu, dwt0_block_words): the width a multiple of
    4 and both arrays starting on such a word."""
    width = src.shape[2]
    return width % 4 == 0 and src.data.ptr % (4 * src.itemsize) == 0 and out.data.ptr % 4 == 0


_DWT_MODES = {"plain": 0, "ref": 1, "dis": 2}


def dwt2_s123(
    src: Any, scale: int, *, out: Any = None, role: str = "plain", m1: Any = None, other: Any = None
) -> Any:
    """DWT of the previous level's approximation band (reference.dwt2.dwt2_s123, or one
    half of reference.dwt2.dwt2_s123_pair).

    Parameters
    ----------
    src : cupy.ndarray
        (n, h, w) int16 (after scale 0) or int32; each frame C-contiguous (a view such as
        ``bands[:, 0]`` is fine).
    scale : int
        1, 2 or 3.
    out : cupy.ndarray, optional
        (n, 4, ceil(h/2), ceil(w/2)) int32.
    role : {"plain", "ref", "dis"}
        What out-of-range taps read (inputs of 3 or 4 samples only): zeros
        (``dwt2_s123``), or the reference / distorted half of ``dwt2_s123_pair``.
    m1 : cupy.ndarray, optional
        (n, L) int16: the row libvmaf reads, as int32 pairs, for the reference's source
        row -1 (``ref_row_m1`` of ``dwt2_s123_pair``); zeros if omitted.
    other : cupy.ndarray, optional
        For ``role="dis"``: the reference's source plane, (n, h, w) like ``src``.
    """
    if scale not in (1, 2, 3):
        raise ValueError(f"dwt2_s123 scale must be 1, 2 or 3, got {scale}")
    if role not in _DWT_MODES:
        raise ValueError(f"dwt2_s123 role must be one of {', '.join(_DWT_MODES)}, got {role!r}")
    if src.dtype not in (np.dtype(np.int16), np.dtype(np.int32)):
        raise TypeError(f"dwt2_s123 src must be int16 or int32, got {src.dtype.name}")
    K.check_array(src, src.dtype, "dwt2_s123 src", ndim=3, contiguous=False)
    n, h, w = src.shape
    _check_frames(n)
    fstride = _frame_stride(src, "dwt2_s123 src")
    hh, ww = (h + 1) // 2, (w + 1) // 2
    if out is None:
        out = _empty((n, 4, hh, ww), np.int32)
    K.check_array(out, np.int32, "dwt2_s123 out", ndim=4)
    if out.shape != (n, 4, hh, ww):
        raise ValueError(f"dwt2_s123 out must be {(n, 4, hh, ww)}, got {out.shape}")
    m1_ptr, m1_fs, m1_len = np.uint64(0), 0, 0
    if m1 is not None:
        K.check_array(m1, np.int16, "dwt2_s123 m1", ndim=2, contiguous=False)
        if m1.shape[0] != n:
            raise ValueError(f"dwt2_s123 m1 must have {n} rows, got {m1.shape}")
        m1_ptr, m1_fs, m1_len = m1, _frame_stride(m1, "dwt2_s123 m1"), m1.shape[1]
    other_ptr, other_fs = np.uint64(0), 0
    if role == "dis":
        if other is None:
            raise ValueError("dwt2_s123 role='dis' needs the reference's source plane (other)")
        K.check_array(other, src.dtype, "dwt2_s123 other", ndim=3, contiguous=False)
        if other.shape != src.shape:
            raise ValueError("dwt2_s123 other must have the shape of src")
        other_ptr, other_fs = other, _frame_stride(other, "dwt2_s123 other")
    vp_rnd, vp_shift = C.DWT_S123_VP[scale - 1]
    hp_rnd, hp_shift = C.DWT_S123_HP[scale - 1]
    fn = K.function("adm_dwt2_s123", src.dtype)
    fn(
        (_cdiv(ww, 2 * _DWT_BLOCK[0]), _cdiv(hh, 2 * _DWT_BLOCK[1]), n),
        _DWT_BLOCK,
        (
            src,
            i64(fstride),
            out,
            i32(h),
            i32(w),
            i32(hh),
            i32(ww),
            i64(vp_rnd),
            i32(vp_shift),
            i64(hp_rnd),
            i32(hp_shift),
            i32(_DWT_MODES[role]),
            m1_ptr,
            i64(m1_fs),
            i32(m1_len),
            other_ptr,
            i64(other_fs),
        ),
    )
    return out


def _check_bands(arr: Any, geom: ScaleGeometry, name: str) -> int:
    K.check_array(arr, geom.band_dtype, name, ndim=4, contiguous=False)
    if arr.shape[1:] != (4, *geom.shape):
        raise ValueError(
            f"{name} must be (n, 4, {geom.shape[0]}, {geom.shape[1]}), got {arr.shape}"
        )
    _check_frames(arr.shape[0])
    return _frame_stride(arr, name)


def _check_band_pair(ref: Any, dis: Any, geom: ScaleGeometry, stage: str) -> int:
    """The frame stride that reference and distorted bands of one level share."""
    fs = _check_bands(ref, geom, f"{stage} ref")
    if _check_bands(dis, geom, f"{stage} dis") != fs or dis.shape != ref.shape:
        raise ValueError(f"{stage} ref and dis must share shape and layout")
    return fs


def _check_acc(acc: Any, n: int, name: str) -> int:
    K.check_array(acc, np.int64, name, ndim=2, contiguous=False)
    if acc.shape != (n, K.ACC_COUNT) or acc.strides[1] != 8:
        raise ValueError(
            f"{name} must be ({n}, {K.ACC_COUNT}) with contiguous rows, got {acc.shape}"
        )
    return acc.strides[0] // 8


def csf(
    ref: Any,
    dis: Any,
    geom: ScaleGeometry,
    egl: float,
    *,
    flt: Any,
    weighted: Any = None,
    last_d: Any = None,
    do_aim: bool = True,
    region: tuple[int, int, int, int] | None = None,
) -> None:
    """Decouple and CSF-weight one level (reference.decouple + reference.csf.csf).

    Parameters
    ----------
    ref, dis : cupy.ndarray
        (n, 4, hh, ww) DWT bands of reference and distorted (int16 at scale 0, else int32).
    geom : ScaleGeometry
    egl : float
        ``adm_enhn_gain_limit``.
    flt : cupy.ndarray
        (n, 2, 3, hh, ww) output |weighted| / 30, set 0 from the additive part, set 1 from
        the restored part, orientations (h, v, d). With ``do_aim`` false set 1 is not
        written, and flt may be (n, 1, 3, hh, ww).
    weighted : cupy.ndarray, optional
        Same layout as ``flt``: the CSF-weighted bands themselves.
    last_d : cupy.ndarray, optional
        (n, ww) int16, scale 0 only: receives row hh - 2 of the d plane libvmaf's CSF
        buffer is left holding (weighted restored, or |weighted additive| / 30 without
        AIM) inside ``region``; the rest is left as it is (zero it first). A frame
        17..32 high reads it back at scale 3 (:func:`dwt2_s123` ``m1``).
    region : (row0, row1, col0, col1), optional
        Positions to compute; defaults to ``geom.region``.
    """
    fs = _check_band_pair(ref, dis, geom, "csf")
    n = ref.shape[0]
    sets = 2 if do_aim else 1
    K.check_array(flt, geom.band_dtype, "csf flt", ndim=5)
    if flt.shape[0] != n or flt.shape[1] < sets or flt.shape[2:] != (3, *geom.shape):
        raise ValueError(f"csf flt must be ({n}, {sets}, 3, {geom.shape[0]}, {geom.shape[1]})")
    if weighted is not None:
        K.check_array(weighted, geom.band_dtype, "csf weighted", ndim=5)
        if weighted.shape != flt.shape:
            raise ValueError("csf weighted must have the shape of flt")
    hh, ww = geom.shape
    if last_d is not None:
        K.check_array(last_d, np.int16, "csf last_d", ndim=2)
        if geom.scale != 0 or last_d.shape != (n, ww):
            raise ValueError(f"csf last_d must be ({n}, {ww}) int16 at scale 0")
    r0, r1, c0, c1 = region if region is not None else geom.region
    fn = K.function("adm_csf", geom.band_dtype)
    fn(
        (_cdiv(c1 - c0, _BLOCK[0]), _cdiv(r1 - r0, _BLOCK[1]), n),
        _BLOCK,
        (
            ref,
            dis,
            i64(fs),
            i32(ww),
            i64(hh * ww),
            K.div_lookup(),
            device_params(geom),
            flt,
            weighted if weighted is not None else np.uint64(0),
            i64(flt[0].size),
            last_d if last_d is not None else np.uint64(0),
            i32(hh),
            i32(r0),
            i32(r1),
            i32(c0),
            i32(c1),
            f64(egl),
            i32(bool(do_aim)),
        ),
    )


def csf_den(ref: Any, geom: ScaleGeometry, acc: Any) -> None:
    """Add the denominator's integer sums of one level to ``acc``
    (reference.csf_den.den_accumulators).

    Parameters
    ----------
    ref : cupy.ndarray
        (n, 4, hh, ww) reference DWT bands.
    acc : cupy.ndarray
        (n, ACC_COUNT) int64, rows contiguous; slots ``DEN + (h, v, d)`` are added to
        (zero them first).
    """
    fs = _check_bands(ref, geom, "csf_den ref")
    n = ref.shape[0]
    afs = _check_acc(acc, n, "csf_den acc")
    top, bottom, left, right = geom.crop
    hh, ww = geom.shape
    fn = K.function("adm_csf_den", geom.band_dtype)
    fn(
        (_cdiv(bottom - top, _ROWS_PER_BLOCK), 1, n),
        _ROW_BLOCK,
        (
            ref,
            i64(fs),
            i32(ww),
            i64(hh * ww),
            device_params(geom),
            acc,
            i64(afs),
            i32(top),
            i32(bottom),
            i32(left),
            i32(right),
            i32(_ROWS_PER_BLOCK),
        ),
    )


def cm(
    ref: Any,
    dis: Any,
    geom: ScaleGeometry,
    egl: float,
    acc: Any,
    *,
    do_aim: bool = True,
    do_den: bool = False,
    rows: Any = None,
) -> None:
    """Add the masking stage's integer sums of one level to ``acc``: decouple and the
    CSF weighting (reference.decouple, reference.csf.csf) feeding
    reference.cm.cm_accumulators for the numerator and for AIM, all in one pass; with
    ``do_den`` also reference.csf_den.den_accumulators, which reads the same
    reference samples.

    Parameters
    ----------
    ref, dis : cupy.ndarray
        (n, 4, hh, ww) DWT bands.
    acc : cupy.ndarray
        (n, ACC_COUNT) int64; slots ``NUM``, (with ``do_aim``) ``AIM`` and (with
        ``do_den``) ``DEN`` are added to.
    rows : cupy.ndarray, optional
        Scratch for the per-row totals, at least (n, cm_rows(geom), 9) uint64, C-contiguous;
        zeroed here on the current stream. Made for the launch if omitted. An engine
        passes its own, so that a batch's launches allocate nothing (a captured CUDA graph
        replays the same addresses).
    """
    fs = _check_band_pair(ref, dis, geom, "cm")
    n = ref.shape[0]
    afs = _check_acc(acc, n, "cm acc")
    top, bottom, left, right = geom.crop
    hh, ww = geom.shape
    if 4 * hh * ww >= 1 << 31:
        raise ValueError(f"cm: bands of {hh}x{ww} are too large for the masking kernel")
    per_item = CM_ROWS_PER_ITEM
    items = _cdiv(right - left, _CM_STEP) * _cdiv(bottom - top, per_item)
    if rows is None:
        rows = _zeros((n, bottom - top, 9), np.uint64)
    else:
        rows = _row_scratch(rows, n, bottom - top)
    args = _cm_args(geom)
    K.function("adm_cm", geom.band_dtype)(
        (_cdiv(items, K.ROW_WARPS), 1, n),
        _ROW_BLOCK,
        (
            ref,
            dis,
            i64(fs),
            i32(hh),
            i32(ww),
            i32(hh * ww),
            K.div_lookup(),
            rows,
            i32(top),
            i32(bottom),
            i32(left),
            i32(right),
            i32(per_item),
            f64(egl),
            i32(bool(do_aim)),
            i32(bool(do_den)),
            *args.cm,
        ),
    )
    K.function("adm_cm_rows", None)(
        (n,),
        (32, 9, 1),
        (rows, i32(bottom - top), acc, i64(afs), *args.rows, i32(bool(do_aim)), i32(bool(do_den))),
    )


def cm_rows(geom: ScaleGeometry) -> int:
    """Rows of per-row totals the masking pass of ``geom`` keeps for each frame."""
    top, bottom = geom.crop[:2]
    return bottom - top


def _row_scratch(rows: Any, n: int, nrows: int) -> Any:
    """The first ``n`` frames of a caller's row-total scratch, zeroed on the current stream."""
    import cupy as cp

    K.check_array(rows, np.uint64, "cm rows", ndim=3)
    if rows.shape[0] < n or rows.shape[1:] != (nrows, 9):
        raise ValueError(f"cm rows must be (>= {n}, {nrows}, 9), got {rows.shape}")
    view = rows[:n]
    stream = cp.cuda.get_current_stream()
    cp.cuda.runtime.memsetAsync(view.data.ptr, 0, view.nbytes, stream.ptr)
    return view


class _CmArgs(NamedTuple):
    cm: tuple[Any, ...]  # adm_cm's, in its argument order (CmArgs in adm_cm.cu)
    rows: tuple[Any, ...]  # the four row roundings adm_cm_rows takes


@functools.lru_cache(maxsize=64)
def _cm_args(geom: ScaleGeometry) -> _CmArgs:
    """The masking kernels' per-launch numbers from ``geom.params``, once per geometry.
    The squaring and threshold shifts adm_cm has compiled in are checked against the
    block."""
    p, at = geom.params, K.PARAM_OFFSETS

    def slot(name: str, k: int = 0) -> int:
        return p[at[name] + k]

    if geom.scale == 0:
        sq = C.CM0_SQ
        if tuple(slot("CM_SUB_SHIFT", q) for q in range(3)) != tuple(C.CM0_SUB_SHIFT):
            raise RuntimeError("cm: the threshold shifts differ from the kernel's")
    else:
        sq = (C.CM_S123_SQ,) * 3
    if tuple((slot("CM_SQ_RND", q), slot("CM_SQ_SHIFT", q)) for q in range(3)) != tuple(sq):
        raise RuntimeError("cm: the squaring shifts differ from the kernel's")
    u64 = np.uint64
    cm = (
        *(i64(slot("RF", q)) for q in range(3)),
        *(i64(slot("CM_CUB_RND", q)) for q in range(3)),
        *(i32(slot("CM_CUB_SHIFT", q)) for q in range(3)),
        u64(slot("DEN_SQ_RND") % (1 << 64)),
        i32(slot("DEN_SQ_SHIFT")),
        u64(slot("DEN_CUB_RND") % (1 << 64)),
        i32(slot("DEN_CUB_SHIFT")),
    )
    rows = (
        i64(slot("CM_ROW_RND")),
        i32(slot("CM_ROW_SHIFT")),
        u64(slot("DEN_ROW_RND") % (1 << 64)),
        i32(slot("DEN_ROW_SHIFT")),
    )
    return _CmArgs(cm, rows)


def recip_table() -> Any:
    """The Q30 reciprocal the kernels use for each index of libvmaf's table
    (``reference.constants.DIV_LOOKUP``), computed on the device: (65537,) int32."""
    size = K.div_lookup().shape[0]
    out = _empty((size,), np.int32)
    K.function("adm_recip_table", None)((_cdiv(size, 256),), (256,), (out, K.div_lookup()))
    return out

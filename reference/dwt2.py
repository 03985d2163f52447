"""Stage 1: the Daubechies-2 DWT (libvmaf ``adm_dwt2_8``, ``adm_dwt2_16``,
``adm_dwt2_8_lo``, ``adm_dwt2_16_lo`` and ``adm_dwt2_s123_combined``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import constants as C


class Bands(NamedTuple):
    """One DWT level: approximation ``a`` and the three detail bands.

    ``v`` is low-pass vertically and high-pass horizontally, ``h`` the reverse, ``d``
    high-pass both ways (libvmaf's naming). int16 at scale 0, int32 at scales 1..3.
    """

    a: np.ndarray
    v: np.ndarray | None
    h: np.ndarray | None
    d: np.ndarray | None


def src_indices(n: int) -> np.ndarray:
    """The four source rows (or columns) each output sample reads, shape ``(4, ceil(n/2))``.

    Mirrors libvmaf's ``dwt2_src_indices_filt``: output 0 reads ``1, 0, 1, 2``; the last
    two outputs reflect indices past the end as ``2n - i - 1``. When ``ceil(n/2) <= 2``
    libvmaf's tail loop also rewrites output 0, whose first tap becomes ``-1``; that
    index is kept so the caller can see it.
    """
    half = (n + 1) // 2
    out = np.empty((4, half), dtype=np.int64)
    i = np.arange(half)
    for k in range(4):
        out[k] = 2 * i + k - 1
    out[:, 0] = (1, 0, 1, 2)
    tail = np.arange(max(half - 2, 0), half) if half >= 2 else np.arange(0)
    for t in tail:
        col = 2 * t + np.arange(4) - 1
        col = np.where(col >= n, 2 * n - col - 1, col)
        out[:, t] = col
    return out


def _taps(x: np.ndarray, idx: np.ndarray, axis: int) -> list[np.ndarray]:
    return [np.take(x, idx[k], axis=axis) for k in range(4)]


def _fir(taps: list[np.ndarray], coeffs: tuple[int, ...], dtype) -> np.ndarray:
    acc = taps[0].astype(dtype) * coeffs[0]
    for k in range(1, 4):
        acc += taps[k].astype(dtype) * coeffs[k]
    return acc


def dwt2(src: np.ndarray, bitdepth: int, *, lo_only: bool = False) -> Bands:
    """Scale-0 DWT of a luma plane (uint8 or uint16), returning int16 bands.

    Vertical pass: int32 accumulation of unsigned samples minus ``DWT_LO_SUM *
    round`` (recentring), rounded by the bit depth into an int16 row buffer; GCC's
    int32 wrap-around at 16 bits cancels out, so int64 here is equivalent. Horizontal
    pass: int32 accumulation rounded by ``(32768, 16)`` into int16.
    """
    h, w = src.shape
    iy, ix = src_indices(h), src_indices(w)
    if bitdepth == 8:
        vp_round, vp_shift = C.DWT0_VP_8BIT
    else:
        vp_round, vp_shift = 1 << (bitdepth - 1), bitdepth
    hp_round, hp_shift = C.DWT0_HP

    rows = _taps(src, iy, 0)
    lo = _fir(rows, C.DWT_LO, np.int64) - C.DWT_LO_SUM * vp_round
    tmplo = ((lo + vp_round) >> vp_shift).astype(np.int16)

    def horiz(tmp: np.ndarray, coeffs: tuple[int, ...]) -> np.ndarray:
        acc = _fir(_taps(tmp, ix, 1), coeffs, np.int32)
        return ((acc + hp_round) >> hp_shift).astype(np.int16)

    a = horiz(tmplo, C.DWT_LO)
    if lo_only:
        return Bands(a, None, None, None)
    hi = _fir(rows, C.DWT_HI, np.int64) - C.DWT_HI_SUM * vp_round
    tmphi = ((hi + vp_round) >> vp_shift).astype(np.int16)
    return Bands(a, horiz(tmplo, C.DWT_HI), horiz(tmphi, C.DWT_LO), horiz(tmphi, C.DWT_HI))


def dwt2_s123_vertical(
    src: np.ndarray, scale: int, row_m1: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Vertical pass of the scale 1..3 DWT: int32 ``(tmplo, tmphi)``, ``ceil(h/2)`` rows.

    ``row_m1`` is what libvmaf reads for source row -1 (see :func:`src_indices`);
    zeros when not given.
    """
    h, w = src.shape
    iy = src_indices(h)
    if (iy < 0).any():
        edge = np.zeros((1, w), np.int32) if row_m1 is None else row_m1.reshape(1, w)
        src = np.concatenate([src, edge.astype(np.int32)])  # index -1 now reads ``edge``
    rnd, sh = C.DWT_S123_VP[scale - 1]
    rows = _taps(src, iy, 0)
    return tuple(
        ((_fir(rows, c, np.int64) + rnd) >> sh).astype(np.int32) for c in (C.DWT_LO, C.DWT_HI)
    )


def dwt2_s123_horizontal(
    tmplo: np.ndarray,
    tmphi: np.ndarray,
    scale: int,
    col_m1: tuple[np.ndarray, np.ndarray] | None = None,
) -> Bands:
    """Horizontal pass of the scale 1..3 DWT into the four int32 bands.

    ``col_m1`` holds, per row, what libvmaf reads for column -1 of ``tmplo`` and
    ``tmphi``; zeros when not given.
    """
    hh, w = tmplo.shape
    ix = src_indices(w)
    if (ix < 0).any():
        lo_m1, hi_m1 = (np.zeros(hh, np.int32),) * 2 if col_m1 is None else col_m1
        tmplo = np.concatenate([tmplo, lo_m1.reshape(hh, 1).astype(np.int32)], axis=1)
        tmphi = np.concatenate([tmphi, hi_m1.reshape(hh, 1).astype(np.int32)], axis=1)
    rnd, sh = C.DWT_S123_HP[scale - 1]

    def horiz(tmp: np.ndarray, coeffs: tuple[int, ...]) -> np.ndarray:
        acc = _fir(_taps(tmp, ix, 1), coeffs, np.int64)
        return ((acc + rnd) >> sh).astype(np.int32)

    return Bands(
        horiz(tmplo, C.DWT_LO),
        horiz(tmplo, C.DWT_HI),
        horiz(tmphi, C.DWT_LO),
        horiz(tmphi, C.DWT_HI),
    )


def dwt2_s123(src: np.ndarray, scale: int) -> Bands:
    """DWT of the previous level's int32 approximation band at ``scale`` 1..3.

    Both passes accumulate in int64 and round with the per-scale ``(round, shift)``
    pairs of ``DWT_S123_VP`` / ``DWT_S123_HP``, truncating to int32. Out-of-range taps
    (inputs of 3 or 4 samples) read zeros; :func:`dwt2_s123_pair` reproduces what
    libvmaf reads there instead.
    """
    return dwt2_s123_horizontal(*dwt2_s123_vertical(src, scale), scale)


def dwt2_s123_pair(
    ref: np.ndarray, dis: np.ndarray, scale: int, ref_row_m1: np.ndarray | None = None
) -> tuple[Bands, Bands]:
    """libvmaf's ``adm_dwt2_s123_combined``, out-of-range taps included.

    When an input side is 3 or 4 samples (frames 17..32 wide or high, at scale 3)
    libvmaf's index table sends output 0's first tap to -1 and it reads memory
    outside the band. Its layout makes that memory predictable:

    - source row -1 of the reference is the int16 scale-0 band stored just before
      it, read as int32 (``ref_row_m1``, built by the caller); of the distorted, the
      never-written last row of another band: zero;
    - column -1 of the four row buffers, laid out back to back, is the previous
      buffer's last element (``tmplo_ref[-1]`` is allocator metadata: zero).
    """
    rlo, rhi = dwt2_s123_vertical(ref, scale, ref_row_m1)
    dlo, dhi = dwt2_s123_vertical(dis, scale, None)
    zero = np.zeros(rlo.shape[0], np.int32)
    ref_b = dwt2_s123_horizontal(rlo, rhi, scale, (zero, rlo[:, -1]))
    dis_b = dwt2_s123_horizontal(dlo, dhi, scale, (rhi[:, -1], dlo[:, -1]))
    return ref_b, dis_b

"""VIF's separable filters, border mirroring and the decimation between scales
(libvmaf ``pad_top_and_bottom``, ``PADDING_SQ_DATA``, ``subsample_rd_8``,
``subsample_rd_16`` and ``decimate_and_pad``).

A plane at scale ``s`` travels as libvmaf's buffer holds it: the ``h`` rows of the plane
with ``PAD_ROWS[s]`` mirrored rows above and below. Columns are mirrored per row, just
before each horizontal pass, as libvmaf mirrors its row buffers.
"""

from __future__ import annotations

import functools

import numpy as np

from . import vif_constants as V


@functools.lru_cache(maxsize=256)
def _mirror_indices(n: int, half: int) -> np.ndarray:
    # each slot starts out holding its own position: a pad slot not yet written holds
    # whatever the buffer had there before
    slots = np.arange(-half, n + half, dtype=np.int64)
    for f in range(1, half + 1):
        # left slot -f takes slot f, then right slot n-1+f takes slot n-1-f, in this order
        slots[half - f] = slots[half + f]
        slots[half + n - 1 + f] = slots[half + n - 1 - f]
    slots.setflags(write=False)
    return slots


def mirror_indices(n: int, half: int) -> np.ndarray:
    """Source position of each padded position ``-half .. n-1+half`` of a side of ``n``.

    Replays libvmaf's in-place mirror (``pad_top_and_bottom`` for rows,
    ``PADDING_SQ_DATA`` for columns): for ``f = 1..half`` position ``-f`` copies position
    ``f``, then position ``n-1+f`` copies ``n-1-f``. For ``n > half`` this is a reflection
    without repeating the edge; shorter sides reflect again off the pad already written.

    For ``n >= 2`` every result lies in ``[0, n)``. For ``n == 1`` libvmaf copies position
    ``f`` before writing it, so slots ``-f`` and ``f`` both hold position ``f`` (>= n): what
    the buffer held there before this pass. ``n < 1``: ValueError (libvmaf indexes
    outside its buffers).
    """
    if n < 1:
        raise ValueError(f"a side of {n} cannot be mirrored: libvmaf reads outside the plane")
    return _mirror_indices(int(n), int(half))


def _mirror(x: np.ndarray, half: int, axis: int, stale: np.ndarray | None) -> np.ndarray:
    """``x`` mirrored by ``half`` along ``axis``; slots left unwritten (a side of 1) take
    ``stale[p]``, the buffer's earlier contents at position ``p`` (along ``axis``)."""
    n = x.shape[axis]
    idx = mirror_indices(n, half)
    if idx.max() < n:
        return np.take(x, idx, axis=axis)
    if stale is None:
        raise ValueError(
            f"a side of {n} mirrored by {half} reads what libvmaf's buffer held before"
        )
    core = np.minimum(idx, n - 1)
    out = np.take(x, core, axis=axis)
    old = idx >= n
    sel = [slice(None)] * x.ndim
    sel[axis] = old
    out[tuple(sel)] = np.take(stale, idx[old], axis=axis).astype(x.dtype)
    return out


def pad_top_and_bottom(
    plane: np.ndarray, fwidth: int, stale: np.ndarray | None = None
) -> np.ndarray:
    """The plane with ``fwidth // 2`` mirrored rows above and below (libvmaf
    ``pad_top_and_bottom``), as the buffer a vertical pass reads.

    ``stale``: the buffer's rows from row 0 down as the previous scale left them (its
    padded plane less the top padding); read only for a plane of one row.
    """
    return _mirror(plane, fwidth // 2, 0, stale)


def fir(
    x: np.ndarray,
    taps: tuple[int, ...],
    axis: int,
    n: int,
    start: int = 0,
    step: int = 1,
    dtype: type = np.uint64,
) -> np.ndarray:
    """``out[i] = sum_k taps[k] * x[start + step*i + k]`` along ``axis``, i < n.

    Accumulates in ``dtype`` with its wrap-around, as C's unsigned accumulators do; the
    taps are symmetric, so mirrored pairs are added before their one multiply (exact in
    modular arithmetic).
    """
    x = np.asarray(x, dtype=dtype)
    width = len(taps)
    half = width // 2

    def tap(k: int) -> np.ndarray:
        sl = [slice(None)] * x.ndim
        sl[axis] = slice(start + k, start + k + step * (n - 1) + 1, step)
        return x[tuple(sl)]

    acc = tap(half) * dtype(taps[half])
    for k in range(half):
        pair = tap(k) + tap(width - 1 - k)
        pair *= dtype(taps[k])
        acc += pair
    return acc


def filter_rows(padded: np.ndarray, pad: int, scale: int, **kw) -> np.ndarray:
    """Vertical pass of scale ``scale``'s filter over a plane stored with ``pad``
    mirrored rows above and below; ``step=2`` gives even output rows only."""
    h = padded.shape[0] - 2 * pad
    half = V.VIF_FILTER_WIDTHS[scale] // 2
    step = kw.pop("step", 1)
    n = (h + step - 1) // step
    return fir(padded, V.VIF_FILTERS[scale], 0, n, pad - half, step, **kw)


def filter_cols(rows: np.ndarray, scale: int, stale: np.ndarray | None = None, **kw) -> np.ndarray:
    """Horizontal pass of scale ``scale``'s filter over each row, columns mirrored as
    ``PADDING_SQ_DATA`` mirrors them; ``step=2`` gives even output columns only.

    ``stale``: the row buffer's contents by column as an earlier pass left them, read
    only for rows of one column.
    """
    w = rows.shape[1]
    half = V.VIF_FILTER_WIDTHS[scale] // 2
    step = kw.pop("step", 1)
    n = (w + step - 1) // step
    old = None if stale is None else np.asarray(stale).reshape(1, -1)
    return fir(_mirror(rows, half, 1, old), V.VIF_FILTERS[scale], 1, n, 0, step, **kw)


def round_shift(x: np.ndarray, rs: tuple[int, int]) -> np.ndarray:
    """``(x + round) >> shift`` in ``x``'s own unsigned type, wrapping as C does."""
    rnd, shift = rs
    return (x + x.dtype.type(rnd)) >> x.dtype.type(shift)


def _pad_decimated(
    even: np.ndarray, h: int, w: int, scale: int, prev: np.ndarray | None
) -> np.ndarray:
    # a one-row plane reads rows the previous scale left; at 8-bit scale 0 those are bytes
    # read as uint16, which only frames under 4 rows reach (they crash libvmaf first)
    stale = None
    if prev is not None and prev.dtype == np.uint16:
        stale = prev[V.PAD_ROWS[scale] :, : w // 2]
    return pad_top_and_bottom(even[: h // 2, : w // 2], V.VIF_FILTER_WIDTHS[scale], stale)


def decimate_and_pad(mu: np.ndarray, scale: int, prev: np.ndarray | None = None) -> np.ndarray:
    """Every other row and column of a filtered plane, ``h // 2`` by ``w // 2``, with
    ``fwidth[scale] // 2`` mirrored rows above and below (libvmaf ``decimate_and_pad``;
    ``scale`` is the scale the plane came from, whose filter width sets the padding).

    ``prev``: the buffer the decimated plane overwrites, scale ``scale``'s padded
    plane; a decimated plane of one row takes its padding from it, as libvmaf does.
    """
    h, w = mu.shape
    return _pad_decimated(mu[::2, ::2], h, w, scale, prev)


def _subsample(
    ref: np.ndarray,
    dis: np.ndarray,
    src_scale: int,
    vp: tuple[int, int],
    tmp_cast: type | None,
) -> tuple[np.ndarray, np.ndarray]:
    h = ref.shape[0] - 2 * V.PAD_ROWS[src_scale]
    w = ref.shape[1]
    filt = src_scale + 1
    out = []
    for plane in (ref, dis):
        # decimation keeps only even rows and columns: filter just those (each output
        # sample depends on its own taps alone, so this is what the full pass gives there)
        rows = filter_rows(plane, V.PAD_ROWS[src_scale], filt, step=2, dtype=np.uint32)
        rows = round_shift(rows, vp)
        if tmp_cast is not None:
            rows = rows.astype(tmp_cast).astype(np.uint32)
        mu = round_shift(filter_cols(rows, filt, step=2, dtype=np.uint32), V.HP)
        out.append(_pad_decimated(mu.astype(np.uint16), h, w, src_scale, plane))
    return out[0], out[1]


def subsample_rd_8(ref: np.ndarray, dis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale 0 -> 1 for 8-bit input (libvmaf ``subsample_rd_8``).

    ``ref``, ``dis``: uint8 planes padded with ``PAD_ROWS[0]`` rows.
    Filters with scale 1's taps (uint32 accumulators): vertically rounded by ``(128, 8)``
    into uint32, horizontally by ``(32768, 16)`` into uint16; keeps every other row and
    column and pads the result with ``PAD_ROWS[1]`` rows. Returns uint16 planes.
    """
    return _subsample(ref, dis, 0, V.VP_8BIT, None)


def subsample_rd_16(
    ref: np.ndarray, dis: np.ndarray, scale: int, bpc: int
) -> tuple[np.ndarray, np.ndarray]:
    """Scale ``scale`` -> ``scale + 1`` on uint16 planes (libvmaf ``subsample_rd_16``).

    ``ref``, ``dis``: planes padded with ``PAD_ROWS[scale]`` rows, the
    input samples at scale 0 (``bpc`` > 8) or the previous decimation's uint16 output.
    Filters with scale ``scale + 1``'s taps; the vertical pass rounds by the bit depth at
    scale 0 and by ``(32768, 16)`` above, into uint16, the horizontal by ``(32768, 16)``
    into uint16. Returns the decimated planes padded with ``PAD_ROWS[scale + 1]`` rows.
    """
    vp = V.vp_16(bpc) if scale == 0 else V.VP_S123
    return _subsample(ref, dis, scale, vp, np.uint16)

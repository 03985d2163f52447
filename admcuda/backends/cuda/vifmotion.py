"""VIF and motion on the GPU: launchers in the reference's stage names and the device
state they keep across batches.

- :class:`CudaVif`: libvmaf's integer VIF of a batch of frame pairs already on the device,
  one fused launch a scale (:func:`vif_scale`: the statistic of
  :mod:`reference.vif` and the decimation of :mod:`reference.vif_filters`); each frame's four
  int64 accumulators per scale come back to the host, where
  :func:`admcuda.backends.host.finish_vif` makes the outputs exactly as
  :func:`reference.vif.write_scores` does, vectorised over frames.
- :class:`CudaMotion`: libvmaf's integer motion SAD of each reference frame against the
  one (or, with the five-frame window, two) read before it
  (:func:`reference.motion.motion_score_pipeline`); the last two reference planes stay on
  the device from one batch to the next.

Borders are mirrored through tables made on the host by
:func:`reference.vif_filters.mirror_indices`, so every side of 2 samples or more
reflects as libvmaf's in-place padding does. VIF's scale 3 is then at least 2 wide:
frames need 16x16 (:data:`VIF_MIN_SIDE`); smaller ones stay on the CPU backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from admcuda import kernel_loader as K
from admcuda.reference import vif_constants as V
from admcuda.reference.vif import VifOptions
from admcuda.reference.vif_filters import mirror_indices

__all__ = [
    "VIF_MIN_SIDE",
    "CudaMotion",
    "CudaVif",
    "motion_score_pipeline",
    "vif_scale",
]

VIF_MIN_SIDE = 16  # scale 3 at least 2 samples each way: every border is a plain mirror
_ACC = 4  # num_log, den_log, num_non_log, den_non_log
_MAX_GRID_Z = 65535  # frames a launch, along grid.z

i32, i64, u32, u64, f64 = np.int32, np.int64, np.uint32, np.uint64, np.float64
_HALF = tuple(n // 2 for n in V.VIF_FILTER_WIDTHS)


def _cdiv(n: int, d: int) -> int:
    return max(-(-n // d), 1)


class _Tables:
    """The mirror tables of one frame size, in one device array: per scale its rows
    (padded by ``PAD_ROWS``), its columns for its own filter and for the next scale's."""

    def __init__(self, shapes: Sequence[tuple[int, int]]) -> None:
        import cupy as cp

        parts: list[np.ndarray] = []
        self._at: dict[tuple[str, int], int] = {}
        at = 0

        def add(key: tuple[str, int], n: int, pad: int) -> None:
            nonlocal at
            table = mirror_indices(n, pad).astype(np.int32)
            self._at[key] = at + pad
            parts.append(table)
            at += table.size

        for s, (h, w) in enumerate(shapes):
            add(("rows", s), h, V.PAD_ROWS[s])
            add(("cols", s), w, _HALF[s])
            if s + 1 < len(shapes):
                add(("next", s), w, _HALF[s + 1])
        self.array = cp.asarray(np.concatenate(parts))

    def __call__(self, kind: str, scale: int) -> Any:
        """Device pointer of entry 0 of a table (negative positions lie before it)."""
        return np.uint64(self.array.data.ptr + 4 * self._at[(kind, scale)])


def vif_scale(
    ref: Any,
    dis: Any,
    scale: int,
    bitdepth: int,
    tables: _Tables,
    stat: tuple[float, Any] | None,
    out: tuple[Any, Any] | None,
) -> None:
    """One scale of :func:`reference.vif.vif_scales` for ``ref``, ``dis`` (n, h, w) planes
    of the scale: with ``stat`` = (gain limit, accumulators (n, 4 scales, 4) int64), the
    statistic's sums (:func:`reference.vif.vif_vertical_8` or ``vif_vertical_16``,
    :func:`reference.vif.vif_horizontal`, :func:`reference.vif.vif_sigma`,
    :func:`reference.vif.vif_residuals`) added at ``scale``; with ``out`` = the next
    scale's (n, h // 2, w // 2) uint16 planes, the decimation
    (:func:`reference.vif_filters.subsample_rd_8` or ``subsample_rd_16``) written there."""
    n, h, w = ref.shape
    eight = scale == 0 and bitdepth == 8
    ctype = "unsigned char" if eight else "unsigned short"
    dec = out is not None
    fn = K.feature_function("vif", f"vif_scale<{ctype}, {scale}, {'true' if dec else 'false'}>")
    if eight:
        mean, sq = V.VP_8BIT, (0, 0)
    elif scale == 0:
        mean, sq = V.vp_16(bitdepth), V.vp_sq_16(bitdepth)
    else:
        mean = sq = V.VP_S123
    if scale == 0 and bitdepth == 8:
        dvp, cast = V.VP_8BIT, 0
    else:
        dvp, cast = (V.vp_16(bitdepth) if scale == 0 else V.VP_S123), 1
    egl, acc = stat if stat is not None else (100.0, None)
    acc_ptr = np.uint64(0 if acc is None else acc.data.ptr + 8 * _ACC * scale)
    stride = _ACC * V.N_SCALES
    out_ref, out_dis = out if dec else (np.uint64(0), np.uint64(0))
    tw, th = K.VIF_TILE
    grid = (_cdiv(w, tw), _cdiv(h, th), n)
    fn(grid, (tw * th // 4, 1, 1), (
        ref, dis, i32(h), i32(w), tables("rows", scale), tables("cols", scale), u32(mean[0]),
        i32(mean[1]), u32(sq[0]), i32(sq[1]), K.log2_table(), f64(egl), f64(V.EPS), acc_ptr,
        i32(stride), i32(stat is not None), u32(dvp[0]), i32(dvp[1]), i32(cast), out_ref,
        out_dis,
    ))  # fmt: skip


def motion_score_pipeline(cur: Any, keep: Any, back: int, bitdepth: int, sad: Any) -> None:
    """:func:`reference.motion.motion_score_pipeline` of each frame of ``cur`` (n, h, w)
    against the plane ``back`` frames before it (in ``cur``, or before the batch in
    ``keep``, (2, h, w): the one before last, the last), added to ``sad`` (n,) uint64."""
    n, h, w = cur.shape
    if bitdepth == 8:
        name, rnd, shift = "motion_sad<unsigned char, int>", 1 << 7, 8
    else:
        name, rnd, shift = "motion_sad<unsigned short, long long>", 1 << (bitdepth - 1), bitdepth
    fn = K.feature_function("motion", name)
    fn((_cdiv(h, K.MOTION_ROWS), n, 1), (K.MOTION_THREADS, 1, 1),
       (cur, keep, i32(back), i32(h), i32(w), i64(rnd), i32(shift), sad))  # fmt: skip


class CudaVif:
    """libvmaf's integer VIF on the device for one frame size and bit depth.

    :meth:`queue` adds a batch's accumulators to a device array on the current stream;
    :func:`admcuda.backends.host.finish_vif` turns them into outputs on the host. The
    decimated planes of scales 1 to 3 hold ``batch`` frames.
    """

    def __init__(self, width: int, height: int, bitdepth: int, batch: int) -> None:
        import cupy as cp

        if width < VIF_MIN_SIDE or height < VIF_MIN_SIDE:
            raise ValueError(
                f"frame {width}x{height} is too small for VIF on the GPU (16x16 or more)"
            )
        self.width, self.height, self.bitdepth = width, height, bitdepth
        self.shapes = [(height >> s, width >> s) for s in range(V.N_SCALES)]  # h // 2 a step
        self.tables = _Tables(self.shapes)
        self.chunk = max(1, min(batch, _MAX_GRID_Z))
        self._ref = [None] + [cp.empty((self.chunk, h, w), np.uint16) for h, w in self.shapes[1:]]
        self._dis = [None] + [cp.empty((self.chunk, h, w), np.uint16) for h, w in self.shapes[1:]]
        for name in K.feature_expressions("vif"):  # one module: compiled or loaded once
            K.feature_function("vif", name)
        K.log2_table()

    def queue(self, ref: Any, dis: Any, n: int, acc: Any, options: Sequence[VifOptions]) -> None:
        """Add frames ``0..n-1`` of ``ref`` and ``dis`` (device planes) to ``acc``
        ((len(options), n, 4, 4) int64, zeroed by the caller): one accumulator set per
        VIF extractor's options, sharing the filtering and the decimation."""
        for c0 in range(0, n, self.chunk):
            c1 = min(c0 + self.chunk, n)
            m = c1 - c0
            planes = (ref[c0:c1], dis[c0:c1])
            for s in range(V.N_SCALES):
                stats = [(float(o.vif_enhn_gain_limit), acc[k, c0:c1])
                         for k, o in enumerate(options)
                         if not (s == 0 and o.vif_skip_scale0)]  # fmt: skip
                nxt = (self._ref[s + 1][:m], self._dis[s + 1][:m]) if s + 1 < V.N_SCALES else None
                vif_scale(*planes, s, self.bitdepth, self.tables, stats[0] if stats else None, nxt)
                for stat in stats[1:]:
                    vif_scale(*planes, s, self.bitdepth, self.tables, stat, None)
                if nxt is not None:
                    planes = nxt


class CudaMotion:
    """libvmaf's integer motion SADs on the device: each reference frame against the one
    and the two read before it, as the plan's extractors need (``backs``)."""

    def __init__(self, width: int, height: int, bitdepth: int, backs: Sequence[int]) -> None:
        import cupy as cp

        if width < 3 or height < 3:
            raise ValueError(f"frame {width}x{height} is too small for motion (3x3 or more)")
        self.width, self.height, self.bitdepth = width, height, bitdepth
        self.backs = tuple(sorted(set(backs)))
        dtype = np.uint8 if bitdepth == 8 else np.uint16
        self._keep = cp.zeros((2, height, width), dtype=dtype)  # read (and ignored) before frame 2
        self.seen = 0  # reference frames queued so far
        name = "motion_sad<unsigned char, int>" if bitdepth == 8 else (
            "motion_sad<unsigned short, long long>")  # fmt: skip
        K.feature_function("motion", name)

    def queue(self, ref: Any, n: int, sad: Any) -> int:
        """Add each frame's SADs to ``sad`` ((len(backs), n) uint64, zeroed by the caller)
        on the current stream, then keep the batch's last two planes. Returns the index
        of the batch's first frame among all frames queued."""
        import cupy as cp

        first = self.seen
        for k, back in enumerate(self.backs):
            motion_score_pipeline(ref[:n], self._keep, back, self.bitdepth, sad[k])
        stream = cp.cuda.get_current_stream().ptr
        nbytes = self._keep[0].nbytes
        copy = cp.cuda.runtime.memcpyAsync
        d2d = cp.cuda.runtime.memcpyDeviceToDevice
        if n >= 2:
            copy(self._keep.data.ptr, ref[n - 2].data.ptr, 2 * nbytes, d2d, stream)
        else:
            copy(self._keep.data.ptr, self._keep[1].data.ptr, nbytes, d2d, stream)
            copy(self._keep[1].data.ptr, ref[0].data.ptr, nbytes, d2d, stream)
        self.seen += n
        return first

"""VIF and motion on the GPU: launchers in the reference's stage names and the device
state they keep across batches.

- :class:`CudaVif`: libvmaf's integer VIF of a batch of frame pairs already on the device,
  scale by scale (:func:`vif_vertical`, :func:`vif_statistic`, :func:`subsample_rd`, as
  :mod:`reference.vif` and :mod:`reference.vif_filters` name them); each frame's four
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

from admcuda.backends.cuda import kernels as K
from admcuda.reference import vif_constants as V
from admcuda.reference.vif import VifOptions
from admcuda.reference.vif_filters import mirror_indices

__all__ = [
    "VIF_MIN_SIDE",
    "CudaMotion",
    "CudaVif",
    "motion_score_pipeline",
    "subsample_rd",
    "vif_statistic",
    "vif_vertical",
]

VIF_MIN_SIDE = 16  # scale 3 at least 2 samples each way: every border is a plain mirror
_BLOCK = (32, 8, 1)
_TMP_BYTES = 512 << 20  # the vertical pass's row buffers: frames per chunk follow from this
_ACC = 4  # num_log, den_log, num_non_log, den_non_log
_MAX_GRID_Z = 65535  # the decimation launches two planes a frame along grid.z

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


def vif_vertical(ref: Any, dis: Any, scale: int, bitdepth: int, tables: _Tables, out: Any) -> None:
    """The vertical pass of :func:`reference.vif.vif_vertical_8` (8-bit scale 0) or
    :func:`reference.vif.vif_vertical_16`: ``ref``, ``dis`` (n, h, w) planes of the scale
    into ``out``'s (n, 5, h, w) uint32 row buffers."""
    n, h, w = ref.shape
    eight = scale == 0 and bitdepth == 8
    if eight:
        name = "vif_vertical<unsigned char, 0, true>"
        mean, sq = V.VP_8BIT, (0, 0)
    else:
        name = f"vif_vertical<unsigned short, {scale}, false>"
        mean, sq = (V.vp_16(bitdepth), V.vp_sq_16(bitdepth)) if scale == 0 else (V.VP_S123,) * 2
    fn = K.feature_function("vif", name)
    grid = (_cdiv(w, _BLOCK[0]), _cdiv(h, _BLOCK[1]), n)
    fn(grid, _BLOCK, (ref, dis, i32(h), i32(w), tables("rows", scale), u32(mean[0]),
                      i32(mean[1]), u64(sq[0]), i32(sq[1]), out))  # fmt: skip


def vif_statistic(
    tmp: Any, n: int, h: int, w: int, scale: int, tables: _Tables, egl: float, acc: Any
) -> None:
    """The horizontal pass, :func:`reference.vif.vif_sigma` and
    :func:`reference.vif.vif_residuals` of a scale: each frame's four accumulators added
    to ``acc`` (n, 4 scales, 4) int64 at ``scale``."""
    fn = K.feature_function("vif", f"vif_stat<{scale}>")
    tx, ty = K.VIF_THREADS
    grid = (_cdiv(w, tx), _cdiv(h, ty * K.VIF_STAT_ROWS), n)
    ptr = np.uint64(acc.data.ptr + 8 * _ACC * scale)
    fn(grid, (tx, ty, 1), (tmp, i32(h), i32(w), tables("cols", scale), K.log2_table(),
                           f64(egl), f64(V.EPS), ptr, i32(acc.shape[1] * _ACC)))  # fmt: skip


def subsample_rd(
    ref: Any, dis: Any, scale: int, bitdepth: int, tables: _Tables, out_ref: Any, out_dis: Any
) -> None:
    """:func:`reference.vif_filters.subsample_rd_8` / ``subsample_rd_16``: scale
    ``scale``'s planes to scale ``scale + 1``'s (uint16, half each way, rounded down)."""
    n, h, w = ref.shape
    oh, ow = out_ref.shape[1:]
    if scale == 0 and bitdepth == 8:
        name, vp, cast = "vif_decimate<unsigned char, 1>", V.VP_8BIT, 0
    else:
        name = f"vif_decimate<unsigned short, {scale + 1}>"
        vp, cast = (V.vp_16(bitdepth) if scale == 0 else V.VP_S123), 1
    fn = K.feature_function("vif", name)
    grid = (_cdiv(ow, _BLOCK[0]), _cdiv(oh, _BLOCK[1]), 2 * n)
    fn(grid, _BLOCK, (ref, dis, i32(h), i32(w), tables("rows", scale), tables("next", scale),
                      u32(vp[0]), i32(vp[1]), i32(cast), out_ref, out_dis, i32(oh),
                      i32(ow)))  # fmt: skip


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
    fn((h, n, 1), (K.MOTION_THREADS, 1, 1),
       (cur, keep, i32(back), i32(h), i32(w), i64(rnd), i32(shift), sad))  # fmt: skip


class CudaVif:
    """libvmaf's integer VIF on the device for one frame size and bit depth.

    :meth:`queue` adds a batch's accumulators to a device array on the current stream;
    :func:`admcuda.backends.host.finish_vif` turns them into outputs on the host. The row
    buffers hold ``chunk`` frames; longer batches run chunk by chunk.
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
        self.chunk = max(1, min(batch, _TMP_BYTES // (20 * width * height), _MAX_GRID_Z // 2))
        self._tmp = cp.empty((self.chunk, 5, height, width), dtype=np.uint32)
        self._ref = [None] + [cp.empty((self.chunk, h, w), np.uint16) for h, w in self.shapes[1:]]
        self._dis = [None] + [cp.empty((self.chunk, h, w), np.uint16) for h, w in self.shapes[1:]]
        for s in range(V.N_SCALES):
            if s == 0 and bitdepth == 8:
                K.feature_function("vif", "vif_vertical<unsigned char, 0, true>")
            K.feature_function("vif", f"vif_stat<{s}>")
        K.log2_table()

    def queue(self, ref: Any, dis: Any, n: int, acc: Any, options: Sequence[VifOptions]) -> None:
        """Add frames ``0..n-1`` of ``ref`` and ``dis`` (device planes) to ``acc``
        ((len(options), n, 4, 4) int64, zeroed by the caller): one accumulator set per
        VIF extractor's options, sharing the filtering."""
        for c0 in range(0, n, self.chunk):
            c1 = min(c0 + self.chunk, n)
            m = c1 - c0
            planes = (ref[c0:c1], dis[c0:c1])
            for s, (h, w) in enumerate(self.shapes):
                if s:
                    nr, nd = self._ref[s][:m], self._dis[s][:m]
                    subsample_rd(*planes, s - 1, self.bitdepth, self.tables, nr, nd)
                    planes = (nr, nd)
                wanted = [k for k, o in enumerate(options) if not (s == 0 and o.vif_skip_scale0)]
                if not wanted:
                    continue
                tmp = self._tmp.reshape(-1)[: m * 5 * h * w]
                vif_vertical(*planes, s, self.bitdepth, self.tables, tmp)
                for k in wanted:
                    egl = float(options[k].vif_enhn_gain_limit)
                    vif_statistic(tmp, m, h, w, s, self.tables, egl, acc[k, c0:c1])


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

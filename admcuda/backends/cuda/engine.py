"""The CUDA engine: device buffers, streams and the stage chain over batches of frames.

:class:`CudaAdm` holds everything that lives across batches for one frame size: the
band, CSF and row-total buffers of each scale, two device input buffers with the events
that say when each is free, one device accumulator buffer with a ring of page-locked
host copies, the captured graphs of the chain (:mod:`.graphs`), and the batched float
finish (:class:`admcuda.backends.cuda.finish.BatchFinish`).

Work enters through :meth:`CudaAdm.submit` (queue one batch: uploads on the copy
stream, kernels on the compute stream, the accumulators' download behind them; it
returns at once) and leaves through :meth:`CudaAdm.collect` (wait for that batch's
accumulators and finish them on the host). The streaming pipeline
(:mod:`admcuda.pipeline`) keeps one batch in flight while it finishes the one before
and its reader fills the next; :meth:`CudaAdm.scores` and friends do the same over
arrays already in memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda import kernel_loader as K
from admcuda.errors import AdmError
from admcuda.options import AdmOptions

from .geometry import device_params, scale_geometries
from .graphs import GraphCache
from .hostmem import HostBlock, pinned_array, registered
from .launch import MAX_FRAMES_PER_LAUNCH, cm, cm_rows, csf, dwt2, dwt2_s123

__all__ = ["CudaAdm", "CudaAdmError", "cuda_available"]

_COPY_THREADS = 8  # threads that fill the staging buffers from pageable NumPy input
_PARALLEL_COPY_BYTES = 8 << 20  # below this one thread copies
_ACC_RING = 3  # accumulator buffers: one being finished, one in flight, one spare


class CudaAdmError(AdmError, RuntimeError):
    """The GPU backend cannot run: no device, or not enough device memory."""


def cuda_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device; never raises."""
    try:
        import cupy as cp

        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - any failure means "no usable GPU"
        return False


def _is_cupy(x: Any) -> bool:
    return type(x).__module__.startswith("cupy")


@dataclass
class Ticket:
    """One submitted batch: its accumulator slot, frame count and number of inputs."""

    slot: int
    frames: int
    sets: int


class CudaAdm:
    """libvmaf's integer ADM for a fixed frame size on one GPU, a batch of frames at a time.

    Parameters
    ----------
    width, height : int
        Luma plane size; both above 16.
    bitdepth : int
        8, 10, 12 or 16; planes are uint8 for 8-bit, uint16 otherwise.
    opts : AdmOptions, optional
        ADM options (defaults if omitted).
    batch : int
        Frames per launch. If the buffers do not fit in device memory, the batch is
        halved until they do.
    device : int, optional
        CUDA device ordinal (the current device if omitted).
    graphs : bool
        Replay each distorted input's stages after its scale-0 DWT as a captured CUDA
        graph from the second batch of a size on (:mod:`.graphs`); False queues every
        batch launch by launch. The results are the same either way.

    Raises
    ------
    CudaAdmError
        No CUDA device, or not even one frame's buffers fit in device memory.
    ValueError
        Unsupported size or bit depth.
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int,
        opts: AdmOptions | None = None,
        *,
        batch: int = 64,
        device: int | None = None,
        graphs: bool = True,
    ) -> None:
        if bitdepth not in (8, 10, 12, 16):
            raise ValueError(f"bit depth {bitdepth} is not supported (8, 10, 12 or 16)")
        if width <= 16 or height <= 16:
            raise ValueError(
                f"frame {width}x{height} is too small: ADM needs width and height above 16"
            )
        if not 1 <= batch <= MAX_FRAMES_PER_LAUNCH:
            raise ValueError(f"batch must be in 1..{MAX_FRAMES_PER_LAUNCH}, got {batch}")
        if not cuda_available():
            raise CudaAdmError("no CUDA device is available (CuPy missing or no GPU visible)")
        import cupy as cp

        from admcuda.backends.cuda.finish import BatchFinish

        self._cp = cp
        self.width, self.height, self.bitdepth = width, height, bitdepth
        self.opts = opts if opts is not None else AdmOptions()
        self.dtype = np.dtype(np.uint8 if bitdepth == 8 else np.uint16)
        self.geoms = scale_geometries(width, height, self.opts)
        self.finish = BatchFinish(self.geoms, self.opts, width, height)
        self._device = cp.cuda.Device(device if device is not None else cp.cuda.Device().id)
        self._sets = 1 if self.opts.adm_skip_aim else 2
        self._scales = range(1, 4) if self.opts.adm_skip_scale0 else range(4)
        # Scale-3 input of 3 or 4 rows: its DWT row -1 depends on the distorted input.
        tiny = self.geoms[3].src_shape[0] <= 4 and not self.opts.adm_skip_scale0
        self._per_input_ref = (3,) if tiny else ()
        self._copy_pool: Any = None
        self._pinned_ranges: list[tuple[int, int]] = []
        self._host_blocks: list[Any] = []
        self.graphs = GraphCache() if graphs else None
        with self._device:
            self._compute = cp.cuda.Stream(non_blocking=True)
            self._copy = cp.cuda.Stream(non_blocking=True)
            self._masking = self._masking_streams()
            self.batch = self._allocate_halving(batch)
            # Held here: a captured graph keeps reading them where they are.
            self._tables = [device_params(g) for g in self.geoms] + [K.div_lookup()]
            # Compile (or load from CuPy's cache) every kernel now, so that a missing
            # NVRTC or a failed build shows here, where --backend auto can fall back.
            for name, dtypes in (
                ("adm_dwt2_s0", (self.dtype,)),
                ("adm_dwt2_s123", (np.int16, np.int32)),
                ("adm_csf", (np.int16, np.int32)),
                ("adm_cm", (np.int16, np.int32)),
            ):
                for dt in dtypes:
                    K.function(name, dt)
            # The zero fills and uploads above ran on the default stream, which our
            # non-blocking streams do not wait for.
            self._device.synchronize()

    # -- allocation

    def _masking_streams(self) -> list[tuple[Any, Any, Any]] | None:
        """Per scale, a stream for the masking pass with the events that fork it from the
        compute stream and join it back; None where every stage stays on the compute stream.

        A scale's masking pass needs only that scale's bands, so it runs beside the DWT of
        the levels below and beside the other scales' masking passes: the small scales'
        launches, too few warps to fill the GPU alone, fill the tails of the others.
        Frames 17..32 high keep one stream (their scale-0 CSF output feeds the scale-3 DWT).
        """
        if self._per_input_ref:
            return None
        cp = self._cp
        return [
            (
                cp.cuda.Stream(non_blocking=True),
                cp.cuda.Event(disable_timing=True),
                cp.cuda.Event(disable_timing=True),
            )
            for _ in range(4)
        ]

    def _allocate_halving(self, batch: int) -> int:
        cp = self._cp
        while True:
            try:
                self._allocate(batch)
                return batch
            except (MemoryError, cp.cuda.runtime.CUDARuntimeError) as exc:
                self._release()
                cp.get_default_memory_pool().free_all_blocks()
                if batch == 1:
                    raise CudaAdmError(
                        f"not enough GPU memory for ADM on one {self.width}x{self.height} frame "
                        f"pair: {exc}"
                    ) from exc
                batch //= 2

    def _allocate(self, batch: int) -> None:
        cp = self._cp
        self._ref_bands, self._dis_bands = [], []
        for g in self.geoms:
            hh, ww = g.shape
            self._ref_bands.append(cp.empty((batch, 4, hh, ww), dtype=g.band_dtype))
            self._dis_bands.append(cp.empty((batch, 4, hh, ww), dtype=g.band_dtype))
        # The masking pass's per-row totals, one scratch a scale (the scales' passes run
        # beside each other; the distorted inputs' passes of one scale follow each other
        # on its stream).
        self._cm_scratch = [cp.empty((batch, cm_rows(g), 9), dtype=np.uint64) for g in self.geoms]
        self._flt0 = self._last_d = None
        if self._per_input_ref:
            # Frames 17..32 high: the scale-0 CSF planes are written (only) for the row
            # of them the reference's scale-3 DWT reads. Zero once: the CSF writes the
            # same columns of last_d every time.
            hh, ww = self.geoms[0].shape
            self._flt0 = cp.empty((batch, self._sets, 3, hh, ww), dtype=np.int16)
            self._last_d = cp.zeros((batch, ww), dtype=np.int16)
        shape = (batch, self.height, self.width)
        self._d_in = [cp.empty(shape, dtype=self.dtype) for _ in range(2)]
        self._h_in: list[np.ndarray | None] = [None, None]  # staging, made on first need
        self._in_copied = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
        self._in_free = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
        for ev in self._in_copied + self._in_free:
            ev.record(self._compute)
        self._slot = 0
        # One device accumulator buffer serves every batch: each batch zeroes it, adds to
        # it and downloads it on the compute stream, in that order, into its ring slot's
        # page-locked buffer.
        self._acc_dev: Any = None
        self._acc_host: list[Any] = [None] * _ACC_RING
        self._acc_ready = [cp.cuda.Event(disable_timing=True) for _ in range(_ACC_RING)]
        self._acc_busy = [False] * _ACC_RING
        self._acc_next = 0

    def _release(self) -> None:
        if self.graphs is not None:
            self.graphs.clear()
        for name in (
            "_ref_bands",
            "_dis_bands",
            "_cm_scratch",
            "_flt0",
            "_last_d",
            "_d_in",
            "_h_in",
        ):
            if hasattr(self, name):
                delattr(self, name)
        for name in ("_acc_dev", "_acc_host"):
            if hasattr(self, name):
                delattr(self, name)

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A NumPy array in page-locked host memory that :meth:`submit` uploads without
        an intermediate copy. It lives as long as this engine."""
        arr, block = pinned_array(shape, dtype)
        self._host_blocks.append(block)
        base = arr.ctypes.data
        self._pinned_ranges.append((base, base + arr.nbytes))
        return arr

    host_empty = pinned_empty  # the pipeline's name for it

    def device_empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A CuPy array on this engine's GPU, for planes that are already there (NVDEC)."""
        with self._device:
            return self._cp.empty(shape, dtype=dtype)

    def _is_pinned(self, arr: np.ndarray) -> bool:
        """Whether ``arr`` is page-locked: in this engine's blocks or any registered one
        (a read-ahead's, :func:`~admcuda.backends.cuda.hostmem.early_block`)."""
        lo = arr.ctypes.data
        hi = lo + arr.nbytes
        return any(a <= lo and hi <= b for a, b in self._pinned_ranges) or registered(arr)

    def _acc_buffers(self, slot: int, sets: int) -> tuple[Any, np.ndarray]:
        """Device and pinned-host accumulators for ``sets`` distorted inputs (grown on demand)."""
        cp = self._cp
        shape = (sets, self.batch, 4, K.ACC_COUNT)
        if self._acc_dev is None or self._acc_dev.shape[0] < sets:
            if self._acc_dev is not None:
                self._compute.synchronize()  # no batch in flight still adds to the old one
            self._acc_dev = cp.empty(shape, dtype=np.int64)
        host = self._acc_host[slot]
        if host is None or host.shape[0] < sets:
            mem = cp.cuda.alloc_pinned_memory(int(np.prod(shape)) * 8)
            self._host_blocks.append(mem)
            size = int(np.prod(shape))
            self._acc_host[slot] = np.frombuffer(mem, dtype=np.int64, count=size).reshape(shape)
        return self._acc_dev, self._acc_host[slot]

    def reserve(self, sets: int) -> None:
        """Make every ring slot's accumulators for ``sets`` distorted inputs now. Made on
        first need instead, their page-locking waited for the pipeline's reader, which
        page-locks its slots at the same time (0.1 to 0.3 s for each of the first batches,
        traced on the H200)."""
        with self._device:
            for slot in range(_ACC_RING):
                self._acc_buffers(slot, sets)

    # -- inputs

    def _check_input(self, batch: Any, name: str) -> Any:
        return check_plane_batch(batch, name, self.width, self.height, self.dtype, self.bitdepth)

    def _stage(self, src: Any, n: int) -> tuple[Any, int | None]:
        """Device view of the first ``n`` frames of ``src``: CuPy input as is; page-locked
        input (:meth:`pinned_empty`) uploaded straight from where it is; other NumPy
        input copied into a staging buffer first. Uploads run on the copy stream. Returns
        the view and the device slot to release once the scale-0 DWT has read it."""
        cp = self._cp
        if _is_cupy(src):
            return cp.ascontiguousarray(src[:n]), None
        k = self._slot
        self._slot ^= 1
        src = np.ascontiguousarray(src[:n])
        if self._is_pinned(src):
            host = src
        else:
            self._in_copied[k].synchronize()  # the last upload from this staging buffer is done
            if self._h_in[k] is None:
                shape = (self.batch, self.height, self.width)
                self._h_in[k] = self.pinned_empty(shape, self.dtype)
            host = self._h_in[k][:n]
            self._host_copy(host, src)
        self._copy.wait_event(self._in_free[k])  # the kernels that read this device buffer are done
        cp.cuda.runtime.memcpyAsync(
            self._d_in[k].data.ptr,
            host.ctypes.data,
            host.nbytes,
            cp.cuda.runtime.memcpyHostToDevice,
            self._copy.ptr,
        )
        self._in_copied[k].record(self._copy)
        self._compute.wait_event(self._in_copied[k])
        return self._d_in[k][:n], k

    def _host_copy(self, dst: np.ndarray, src: np.ndarray) -> None:
        """Copy frames into pinned memory on several threads (NumPy releases the GIL)."""
        n = src.shape[0]
        if n < 2 or dst.nbytes < _PARALLEL_COPY_BYTES:
            np.copyto(dst, src)
            return
        if self._copy_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._copy_pool = ThreadPoolExecutor(_COPY_THREADS, thread_name_prefix="admcuda-copy")
        step = -(-n // _COPY_THREADS)
        jobs = [
            self._copy_pool.submit(np.copyto, dst[k : k + step], src[k : k + step])
            for k in range(0, n, step)
        ]
        for job in jobs:
            job.result()

    # -- kernels of one batch
    #
    # The reference's DWT and denominator run once per batch, level by level beside the
    # first distorted input's. One exception, for frames 17..32 high: the reference's
    # scale-3 DWT reads a row of the scale-0 CSF output of the pair (dwt2_s123 ``m1``), so
    # that level of the reference and its denominator are redone for each distorted input.

    def _ref_level(self, s: int, frames: Any, n: int, slot: int | None, m1: Any = None) -> None:
        bands = self._ref_bands
        if s == 0:
            dwt2(frames, self.bitdepth, lo_only=self.opts.adm_skip_scale0, out=bands[0][:n])
            if slot is not None:
                self._in_free[slot].record(self._compute)
        else:
            dwt2_s123(bands[s - 1][:n, 0], s, out=bands[s][:n], role="ref", m1=m1)

    def _distorted_stages(
        self, frames: Any, n: int, slot: int | None, acc: Any, ref: tuple[Any, int | None] | None
    ) -> None:
        """The distorted input's stages, with ``ref`` (its frames and slot) for the first
        distorted input of a batch: each level of the reference is computed just before the
        same level of that input, so that the scale's masking pass can start. The masking
        pass adds the reference's denominator too, for the first distorted input only (or
        for every input where the reference's level was redone for it).

        The scale-0 DWTs, the only stages that read the input planes, are launched here;
        the rest of the chain reads and writes only the engine's own buffers, so it is
        the same for every batch of ``n`` frames and is replayed as a captured graph
        (:class:`.graphs.GraphCache`) once it has been seen before."""
        if ref is not None:
            self._ref_level(0, ref[0], n, ref[1])
        dis0 = self._dis_bands[0][:n]
        dwt2(frames, self.bitdepth, lo_only=self.opts.adm_skip_scale0, out=dis0)
        if slot is not None:
            self._in_free[slot].record(self._compute)
        first = ref is not None

        def rest() -> None:
            self._levels(n, acc, first)

        if self.graphs is None:
            rest()
        else:
            self.graphs.run((n, acc.data.ptr, first), rest, lambda: self._capture(rest))

    def _levels(self, n: int, acc: Any, first: bool) -> None:
        """One distorted input's stages after its scale-0 DWT (and, with ``first``, the
        reference's after its own)."""
        egl = self.opts.adm_enhn_gain_limit
        do_aim = not self.opts.adm_skip_aim
        last_d = self._last_d[:n] if self._per_input_ref else None
        ref_b, dis_b = self._ref_bands, self._dis_bands
        for s in range(4):
            if s:
                if first and s not in self._per_input_ref:
                    self._ref_level(s, None, n, None)
                if s in self._per_input_ref:
                    self._ref_level(s, None, n, None, m1=last_d)
                dwt2_s123(
                    dis_b[s - 1][:n, 0],
                    s,
                    out=dis_b[s][:n],
                    role="dis",
                    m1=last_d,
                    other=ref_b[s - 1][:n, 0],
                )
            if s not in self._scales:
                continue
            g = self.geoms[s]
            rb, db = ref_b[s][:n], dis_b[s][:n]
            if s == 0 and last_d is not None:
                csf(rb, db, g, egl, flt=self._flt0[:n], do_aim=do_aim, last_d=last_d)
            do_den = first or s in self._per_input_ref
            rows = self._cm_scratch[s]
            if self._masking is None:
                cm(rb, db, g, egl, acc[:n, s], do_aim=do_aim, do_den=do_den, rows=rows)
                continue
            stream, fork, join = self._masking[s]
            fork.record(self._compute)
            stream.wait_event(fork)
            with stream:
                cm(rb, db, g, egl, acc[:n, s], do_aim=do_aim, do_den=do_den, rows=rows)
            join.record(stream)
        if self._masking is not None:
            # What comes next on the compute stream (the next input's DWT into the same
            # bands, the accumulators' download) waits for every masking pass.
            for s in self._scales:
                self._compute.wait_event(self._masking[s][2])

    def _capture(self, chain: Any) -> Any:
        """``chain`` captured on the compute stream as a graph, not run; where CUDA
        refuses the capture, ``chain`` run launch by launch and None returned."""
        stream = self._compute
        try:
            stream.begin_capture()
        except self._cp.cuda.runtime.CUDARuntimeError:
            chain()
            return None
        try:
            chain()
        except Exception:
            with contextlib.suppress(Exception):
                stream.end_capture()
            chain()  # raises again if the chain itself was at fault
            return None
        try:
            return stream.end_capture()
        except self._cp.cuda.runtime.CUDARuntimeError:
            chain()
            return None

    # -- one batch in, one batch out

    def submit(self, ref: Any, dis: Sequence[Any], frames: int | None = None) -> Ticket:
        """Queue one batch on the GPU and return at once.

        Parameters
        ----------
        ref : numpy.ndarray or cupy.ndarray
            (n, height, width) reference planes; ``n`` at most :attr:`batch`.
        dis : sequence of arrays
            One (n', height, width) batch per distorted input, ``n' >= frames``.
        frames : int, optional
            Frames to score (default ``n``); every input must hold at least that many.

        Returns
        -------
        Ticket
            For :meth:`collect`. At most two batches may be in flight (submitted and
            not collected) at a time.
        """
        cp = self._cp
        geometry = (self.width, self.height, self.dtype, self.bitdepth)
        ref, dis, n = check_submission(ref, dis, frames, self.batch, *geometry)
        slot = self._acc_next
        if self._acc_busy[slot]:
            raise RuntimeError("too many batches in flight: collect one first")
        self._acc_next = (slot + 1) % _ACC_RING
        sets = len(dis)
        with self._device:
            if any(_is_cupy(x) for x in (ref, *dis)):
                # Kernels on our streams must see whatever the caller queued to make CuPy input.
                ready = cp.cuda.Event(disable_timing=True)
                ready.record(cp.cuda.get_current_stream())
                self._compute.wait_event(ready)
            acc_dev, host = self._acc_buffers(slot, sets)
            acc_dev = acc_dev[:sets]
            with self._compute:
                cp.cuda.runtime.memsetAsync(acc_dev.data.ptr, 0, acc_dev.nbytes, self._compute.ptr)
                ref_in = self._stage(ref, n)
                for m, d in enumerate(dis):
                    frames_dev, k = self._stage(d, n)
                    self._distorted_stages(frames_dev, n, k, acc_dev[m], ref_in if m == 0 else None)
                cp.cuda.runtime.memcpyAsync(
                    host.ctypes.data,
                    acc_dev.data.ptr,
                    acc_dev.nbytes,
                    cp.cuda.runtime.memcpyDeviceToHost,
                    self._compute.ptr,
                )
                self._acc_ready[slot].record(self._compute)
        self._acc_busy[slot] = True
        return Ticket(slot, n, sets)

    def accumulators(self, ticket: Ticket) -> np.ndarray:
        """Wait for a submitted batch and return its integer accumulators, (sets, n, 4,
        ACC_COUNT) int64 (a copy): per distorted input, frame and scale, the numerator,
        AIM and denominator sums. The denominator slots hold uint64 bit patterns."""
        self._acc_ready[ticket.slot].synchronize()
        acc = self._acc_host[ticket.slot][: ticket.sets, : ticket.frames].copy()
        self._acc_busy[ticket.slot] = False
        den = slice(K.ACC_OFFSETS["DEN"], K.ACC_OFFSETS["DEN"] + 3)
        for s in self._scales:
            if s not in self._per_input_ref:
                acc[1:, :, s, den] = acc[0, :, s, den]  # the reference's denominator ran once
        return acc

    def collect(self, ticket: Ticket) -> list[dict[str, np.ndarray]]:
        """Wait for a submitted batch and finish it: per distorted input, the 18 outputs
        keyed by libvmaf's base names, each a float64 array over the batch's frames."""
        return [self.finish(a) for a in self.accumulators(ticket)]

    # -- whole arrays

    def _batches(self, ref_batch: Any, dis_batches: Sequence[Any]):
        """Submit ``ref_batch`` and ``dis_batches`` in chunks of :attr:`batch`, yielding
        each chunk's ticket once the next chunk is queued behind it."""
        if not dis_batches:
            raise ValueError("at least one distorted batch is needed")
        ref_batch = self._check_input(ref_batch, "reference batch")
        dis_batches = [
            self._check_input(d, f"distorted batch {m}") for m, d in enumerate(dis_batches)
        ]
        n = ref_batch.shape[0]
        for m, d in enumerate(dis_batches):
            if d.shape[0] != n:
                raise ValueError(f"distorted batch {m} has {d.shape[0]} frames, the reference {n}")
        pending = None
        for c0 in range(0, n, self.batch):
            c1 = min(c0 + self.batch, n)
            ticket = self.submit(ref_batch[c0:c1], [d[c0:c1] for d in dis_batches])
            if pending is not None:
                yield pending
            pending = ticket
        if pending is not None:
            yield pending

    def integer_accumulators(self, ref_batch: Any, dis_batches: Sequence[Any]) -> np.ndarray:
        """The GPU's integer accumulators, without the float finish: (len(dis_batches), n,
        4, ACC_COUNT) int64, as :meth:`accumulators` gives them batch by batch."""
        parts = [self.accumulators(t) for t in self._batches(ref_batch, dis_batches)]
        return np.concatenate(parts, axis=1)

    def score_arrays_multi(
        self, ref_batch: Any, dis_batches: Sequence[Any]
    ) -> list[dict[str, np.ndarray]]:
        """Score several distorted inputs against one reference; per input, the 18 outputs
        as float64 arrays over all frames."""
        parts = [self.collect(t) for t in self._batches(ref_batch, dis_batches)]
        return [
            {k: np.concatenate([p[m][k] for p in parts]) for k in parts[0][m]}
            for m in range(len(dis_batches))
        ]

    def scores_multi(
        self, ref_batch: Any, dis_batches: Sequence[Any]
    ) -> list[list[dict[str, float]]]:
        """As :meth:`score_arrays_multi`, as one list of per-frame dicts per input."""
        return [as_dicts(a) for a in self.score_arrays_multi(ref_batch, dis_batches)]

    def scores(self, ref_batch: Any, dis_batch: Any) -> list[dict[str, float]]:
        """All 18 ADM outputs per frame pair, keyed by libvmaf's base names.

        Parameters
        ----------
        ref_batch, dis_batch : numpy.ndarray or cupy.ndarray
            (n, height, width) luma planes (a single (height, width) plane is taken as
            n = 1), uint8 for 8-bit, uint16 otherwise.
        """
        return self.scores_multi(ref_batch, [dis_batch])[0]

    def close(self) -> None:
        """Release the device and host buffers; the object is unusable after."""
        if self._copy_pool is not None:
            self._copy_pool.shutdown()
            self._copy_pool = None
        self._release()
        with self._device, contextlib.suppress(Exception):
            self._device.synchronize()  # no upload still reads a slot unregistered below
        for block in self._host_blocks:
            if isinstance(block, HostBlock):
                block.release()
        self._host_blocks.clear()
        self._pinned_ranges.clear()

    def __enter__(self) -> CudaAdm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_plane_batch(
    batch: Any, name: str, width: int, height: int, dtype: np.dtype, bitdepth: int
) -> Any:
    """``batch`` as (n, height, width) planes of ``dtype`` (a single plane is n = 1), or
    ValueError naming ``name``."""
    if batch.ndim == 2:
        batch = batch[None]
    if batch.ndim != 3 or batch.shape[1:] != (height, width):
        raise ValueError(f"{name} must be (n, {height}, {width}), got {batch.shape}")
    if batch.dtype != dtype:
        raise ValueError(f"{bitdepth}-bit {name} must be {dtype.name}, got {batch.dtype}")
    return batch


def check_submission(
    ref: Any, dis: Sequence[Any], frames: int | None, batch: int, width: int, height: int,
    dtype: np.dtype, bitdepth: int,
) -> tuple[Any, list[Any], int]:  # fmt: skip
    """A batch a GPU engine's ``submit`` takes: the reference and distorted planes checked,
    and the frames to score (``frames``, or the reference's count), at most ``batch`` and
    held by every input."""
    if not dis:
        raise ValueError("at least one distorted batch is needed")
    geometry = (width, height, dtype, bitdepth)
    ref = check_plane_batch(ref, "reference batch", *geometry)
    dis = [check_plane_batch(d, f"distorted batch {m}", *geometry) for m, d in enumerate(dis)]
    n = ref.shape[0] if frames is None else frames
    if not 0 < n <= batch:
        raise ValueError(f"a batch holds 1..{batch} frames, got {n}")
    for m, d in enumerate((ref, *dis)):
        if d.shape[0] < n:
            raise ValueError(f"input {m} of the batch has {d.shape[0]} frames, fewer than {n}")
    return ref, dis, n


def as_dicts(arrays: dict[str, np.ndarray]) -> list[dict[str, float]]:
    """Per-frame dicts from a dict of equal-length arrays (one pass, at the end)."""
    keys = list(arrays)
    if not keys:
        return []
    rows = np.stack([arrays[k] for k in keys], axis=1).tolist()
    return [dict(zip(keys, row, strict=True)) for row in rows]

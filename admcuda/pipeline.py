"""The streaming pipeline every entry point scores through: readers -> batches ->
backend engine -> batched finish -> per-input result arrays, overlapped.

A reader thread fills a ring of host slots (page-locked for the GPU) with the next
batch of luma planes: raw YUV and Y4M frames straight from the file into the slot with
positioned reads on a thread pool, any other input (ffmpeg's pipe, a stream, an
iterator of planes) one frame at a time. Chroma is read only where a host feature
scores it (PSNR's), into a chroma buffer beside the slot: by position from raw YUV and
Y4M, from ffmpeg's pipe (then carrying whole planar frames) and from streams. The main
thread hands each filled slot to the engine (:meth:`submit`, which returns at once on
the GPU), then finishes the batch before it (:meth:`collect`) and gives that slot back
to the reader. So while
batch k computes, batch k-1 is finished and batch k+1 is read.

An engine has ``batch`` (frames per batch), ``host_empty(shape, dtype)``,
``submit(ref, dis, frames) -> ticket`` and ``collect(ticket) -> [dict of arrays per
distorted input]``; :class:`admcuda.backends.cuda.CudaAdm` and
:class:`admcuda.backends.cpu.CpuEngine` are the two.

Host features (``host``, :class:`admcuda.vmaf.host.HostFeatures`) are computed on the
main thread from each slot after it is submitted, while the engine works, and their
arrays join the engine's.

Memory is bounded by the ring: ``slots`` slots of ``(1 + inputs) * batch`` planes,
whatever the length of the video (:func:`plan_batch` sizes the batch to a byte budget,
:data:`DEFAULT_HOST_MEMORY` by default).
"""

from __future__ import annotations

import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import check_plane_range
from admcuda.io.streams import IterSource, PendingRead

__all__ = [
    "DEFAULT_HOST_MEMORY",
    "IterSource",
    "PlainStream",
    "CPU_HOST_MEMORY",
    "ReadAhead",
    "RunStats",
    "SeekableSource",
    "available_memory",
    "check_frame_memory",
    "plan_batch",
    "run",
]

DEFAULT_HOST_MEMORY = 1 << 29
"""Bytes of host frame buffers (page-locked with the GPU) a GPU run may hold: 512 MiB.
Twice that made 1080p and 2160p runs slower to their first batch and no faster after
(kernels/NOTES.md)."""

CPU_HOST_MEMORY = 1 << 30
"""Bytes of host frame buffers a CPU run may hold: 1 GiB."""

SLOTS = 3
"""Host slots in the ring: one being read, one in flight on the engine, one finishing."""

_CHUNK_BYTES = 4 << 20  # a read task's share of a batch, at least one frame


def read_threads() -> int:
    """Threads that read frames: the usable cores, at most 16."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16))


class Engine(Protocol):
    batch: int

    def host_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray: ...

    def submit(self, ref: np.ndarray, dis: Sequence[np.ndarray], frames: int) -> Any: ...

    def collect(self, ticket: Any) -> list[dict[str, np.ndarray]]: ...


# ---- sources ------------------------------------------------------------------------------


class SeekableSource:
    """The selected frames of a raw YUV or Y4M file, read by position.

    Frames ``skip, skip + subsample, ...`` up to ``limit`` frames after ``skip`` (libvmaf's
    frame controls) are read straight into the caller's buffer, each frame's luma plane
    with one ``os.preadv``; frames between them and chroma are never read.

    Attributes
    ----------
    reader
        A :class:`~admcuda.io.raw.YuvReader` or :class:`~admcuda.io.y4m.Y4mReader`.
    available : int
        Frames the selection holds (after the skip, up to the limit) — before
        subsampling, as libvmaf counts them in its messages.
    read : int
        Frames consumed so far, as :class:`~admcuda.io.inputs.FrameStream` counts them.
    """

    def __init__(
        self, reader: Any, *, skip: int = 0, limit: int | None = None, subsample: int = 1
    ) -> None:
        self.reader, self.skip, self.limit, self.subsample = reader, skip, limit, subsample
        total = max(reader.num_frames - skip, 0)
        self.available = total if limit is None else min(total, limit)
        self.scored = -(-self.available // subsample)
        self.read = 0
        self._next = 0  # scored frames delivered
        self._fd = reader.fileno()
        self._check = bool(getattr(reader, "check_range", False)) and reader.bitdepth in (10, 12)
        header = getattr(reader, "header", None)  # a Y4M file's: its C tag gave the bit depth
        self._colorspace = None if header is None else header.colorspace

    def start(
        self,
        out: np.ndarray,
        n: int,
        pool: ThreadPoolExecutor,
        chroma: np.ndarray | None = None,
    ) -> PendingRead:
        """Start reading the next ``min(n, remaining)`` frames into ``out[:count]``, and
        their chroma planes (Cb then Cr, flat) into ``chroma[:count]`` where given."""
        first = self._next
        count = max(min(n, self.scored - first), 0)
        self._next += count
        if count:
            self.read = min((first + count - 1) * self.subsample + 1, self.available)
        if self._next >= self.scored:
            self.read = self.available  # asking past the end reads to it, as a stream would
        frame_bytes = out[0].nbytes
        per_task = max(1, _CHUNK_BYTES // max(frame_bytes, 1))
        futures = [
            pool.submit(self._read_frames, out, first, k, min(k + per_task, count), chroma)
            for k in range(0, count, per_task)
        ]
        return PendingRead(count, futures)

    def _read_frames(
        self, out: np.ndarray, first: int, k0: int, k1: int, chroma: np.ndarray | None
    ) -> None:
        for k in range(k0, k1):
            index = self.skip + (first + k) * self.subsample
            # a frame's chroma follows its luma, in raw YUV and in Y4M alike
            views = [memoryview(out[k]).cast("B")]
            if chroma is not None:
                views.append(memoryview(chroma[k]).cast("B"))
            offset = self.reader.luma_offset(index)
            got = os.preadv(self._fd, views, offset)
            if got != sum(v.nbytes for v in views):
                raise AdmError(
                    f"{self.reader.where} ended inside frame {index} "
                    "(was it truncated while reading?)"
                )
            if self._check:
                for plane in (out[k],) if chroma is None else (out[k], chroma[k]):
                    check_plane_range(
                        plane, self.reader.bitdepth, where=self.reader.where, index=index,
                        pixel_format=self.reader.pixel_format, colorspace=self._colorspace,
                    )  # fmt: skip

    @property
    def exhausted(self) -> bool:
        """Whether every selected frame has been asked for."""
        return self._next >= self.scored

    def has_more(self) -> bool:
        """Consume one more frame, if the selection has one (for length checks)."""
        if self.read < self.available:
            self.read += 1
            return True
        return False

    def close(self) -> None:
        """Nothing to stop: the reader's file is closed by its owner."""


class PlainStream:
    """An iterator of planes with the surface :class:`IterSource` reads (no reader, length
    unknown), for the registry's iterable entry points."""

    reader = None
    available = None
    subsample = 1

    def __init__(self, frames: Iterable[np.ndarray]) -> None:
        self._it = iter(frames)
        self.read = 0

    def __iter__(self) -> Iterator[np.ndarray]:
        for frame in self._it:
            self.read += 1
            yield np.asarray(frame)

    def has_more(self) -> bool:
        if next(self._it, None) is None:
            return False
        self.read += 1
        return True

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


# ---- planning ------------------------------------------------------------------------------


def plan_batch(
    frame_bytes: int,
    inputs: int,
    *,
    preferred: int,
    frames: int | None = None,
    host_memory: int = DEFAULT_HOST_MEMORY,
    slots: int = SLOTS,
) -> int:
    """Frames per batch: ``preferred``, fewer where ``slots`` slots of ``inputs`` planes
    would pass ``host_memory`` bytes, and no more than ``frames`` when the length is known.
    At least 1."""
    fit = host_memory // max(slots * inputs * frame_bytes, 1)
    batch = min(preferred, max(fit, 1))
    if frames is not None:
        batch = min(batch, max(frames, 1))
    return max(batch, 1)


CPU_WORK_BYTES_PER_PIXEL = 28
"""Memory the CPU reference holds while it scores one frame pair, per pixel (its integer
wavelet bands and masks; measured at 1080p and 2160p): a worker process needs this much."""


def available_memory() -> int | None:
    """Bytes of memory the system can still give (Linux's ``MemAvailable``); None where
    it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _gib(nbytes: float) -> str:
    return f"{nbytes / (1 << 30):.1f} GiB"


def check_frame_memory(
    width: int,
    height: int,
    bitdepth: int,
    inputs: int,
    *,
    work: int = 0,
    available: int | None = None,
) -> None:
    """Refuse, in one line, a frame size whose smallest run does not fit in memory: the
    ring's two slots of one frame of each of ``inputs`` planes, and ``work`` bytes to
    score a frame (the CPU reference's). ``available`` defaults to
    :func:`available_memory`; where that is unknown nothing is checked.

    Raises
    ------
    AdmError
        Naming the frame size, what it needs and what there is.
    """
    available = available_memory() if available is None else available
    if available is None:
        return
    plane = width * height * (1 if bitdepth == 8 else 2)
    ring = 2 * inputs * plane
    if ring + work <= available:
        return
    scoring = f" and {_gib(work)} to score a frame on the CPU" if work else ""
    raise AdmError(
        f"a {width}x{height} {bitdepth}-bit frame's luma plane is {_gib(plane)}: reading "
        f"{inputs} inputs needs at least {_gib(ring)} (two frames of each in flight){scoring}, "
        f"more than the {_gib(available)} of memory available"
    )


def memory_error(width: int, height: int, dtype: Any, frames: int, inputs: int) -> AdmError:
    """The one-line error for a ring slot that could not be allocated."""
    plane = width * height * np.dtype(dtype).itemsize
    return AdmError(
        f"out of memory for the frame buffers: {frames} frame(s) of {inputs} inputs at "
        f"{width}x{height} take {_gib(frames * inputs * plane)} a slot ({_gib(plane)} a "
        "plane); give a smaller --batch or --host-memory, or free memory"
    )


@dataclass
class RunStats:
    """Timings of one run, on the wall clock (``time.time()``)."""

    frames: int = 0
    batches: int = 0
    first_batch_frames: int = 0
    first_done: float | None = None  # when the first batch's scores were ready
    end: float | None = None

    def steady_fps(self) -> float | None:
        """Frames per second after the first batch, or None with a single batch."""
        if self.first_done is None or self.end is None or self.batches < 2:
            return None
        span = self.end - self.first_done
        rest = self.frames - self.first_batch_frames
        return rest / span if span > 0 else math.inf


@dataclass
class _Slot:
    ref: np.ndarray
    dis: list[np.ndarray]
    ref_chroma: np.ndarray | None = None  # host features' chroma, (batch, samples)
    dis_chroma: list[np.ndarray | None] = field(default_factory=list)


@dataclass
class _Filled:
    slot: _Slot
    ref_count: int
    counts: dict[int, int]  # distorted input -> frames paired with the reference
    last: bool
    ended: list[int] = field(default_factory=list)


_END = object()
_REPLACE = object()  # in the free queue: make a slot in place of one not kept


def run(
    ref: SeekableSource | IterSource,
    dis: Sequence[SeekableSource | IterSource],
    engine: Engine,
    *,
    width: int,
    height: int,
    dtype: Any,
    slots: int = SLOTS,
    threads: int | None = None,
    on_frames: Callable[[int], None] | None = None,
    stats: RunStats | None = None,
    failures: dict[int, str] | None = None,
    host: Any = None,
    first: ReadAhead | None = None,
) -> list[dict[str, np.ndarray]]:
    """Score ``dis`` against ``ref`` through ``engine``, overlapping reading, computing and
    finishing.

    Frame ``i`` of the reference is paired with frame ``i`` of every distorted input that
    has one; an input that ends is dropped, and reading stops once every one has ended.

    Parameters
    ----------
    ref, dis : sources from :func:`admcuda.sources.make_source`
    engine : Engine
        Its ``batch`` is the batch size.
    width, height : int
    dtype : numpy dtype
        Of the planes (uint8 for 8-bit, else uint16).
    slots : int
        Host slots in the ring (at least 2).
    threads : int, optional
        Reading threads (default :func:`read_threads`).
    on_frames : callable, optional
        Called with the reference frames each finished batch scored, against the
        distorted input that scored most of them (progress).
    stats : RunStats, optional
        Filled with the run's timings.
    failures : dict, optional
        Where given, a distorted input whose reading fails (an AdmError) is dropped and its
        one-line error stored here under its index, and the others go on; its results
        are empty. Otherwise the error is raised.
    host : HostFeatures, optional
        Features computed on the host from each slot
        (:class:`admcuda.vmaf.host.HostFeatures`): its ``chroma_size`` chroma samples a
        frame are read beside the luma (raw YUV and Y4M sources, and streams opened for
        chroma: :func:`admcuda.sources.make_source`'s ``chroma``), and its ``compute``
        arrays join the engine's (given the slot's inputs and each distorted one's index,
        for the features that keep a frame from one slot to the next).
    first : ReadAhead, optional
        The first frames of ``ref`` and ``dis``, read while the engine started; reading
        goes on after them.

    Returns
    -------
    list of dict of str to numpy.ndarray
        Per distorted input, each output over its scored frames.
    """
    batch = engine.batch
    shape = (batch, height, width)
    chroma = int(getattr(host, "chroma_size", 0) or 0)
    if chroma:
        for source in (ref, *dis):
            reader = getattr(source, "reader", None)
            where = getattr(reader, "where", "an input")
            if not isinstance(source, SeekableSource) and not getattr(source, "chroma", False):
                raise AdmError(
                    f"psnr scores chroma, which admcuda reads from raw YUV, Y4M, encoded video "
                    f"(ffmpeg) and streams, and {where} is none of these: give "
                    "psnr=enable_chroma=false, or convert it (ffmpeg -i IN -f yuv4mpegpipe "
                    "OUT.y4m)"
                )
            layout = getattr(reader, "pixel_format", None)
            ref_layout = getattr(ref.reader, "pixel_format", None)
            if layout != ref_layout:
                # libvmaf refuses pictures of different layouts too
                raise AdmError(
                    f"psnr scores chroma, and {where} is {layout} where the reference is "
                    f"{ref_layout}: give inputs of one chroma layout, or psnr=enable_chroma=false"
                )
    free: queue.Queue[Any] = queue.Queue()
    filled: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()
    pool = ThreadPoolExecutor(threads or read_threads(), thread_name_prefix="admcuda-read")
    made = [0 if first is None else 1]  # a read-ahead's slot is the ring's first

    def buffer(source: Any) -> Any:
        # A source may make its own buffers (NVDEC in a child process: shareable ones);
        # sources whose planes are already on the GPU (NVDEC) fill device buffers.
        make = getattr(source, "device_buffer", None)
        if make is not None:
            return make(shape, dtype)
        on_gpu = getattr(getattr(source, "reader", None), "kind", None) == "nvdec"
        return (engine.device_empty if on_gpu else engine.host_empty)(shape, dtype)

    def make_slot() -> _Slot:
        try:
            if not chroma:
                return _Slot(buffer(ref), [buffer(d) for d in dis])
            planes = [np.empty((batch, chroma), dtype) for _ in range(1 + len(dis))]
            return _Slot(buffer(ref), [buffer(d) for d in dis], planes[0], planes[1:])
        except MemoryError:
            raise memory_error(width, height, dtype, batch, 1 + len(dis)) from None

    # Page-locking a slot (a GPU engine's host memory) takes about as long as reading it
    # from the page cache: where the reference's length shows that the run needs more
    # than one slot, a thread of its own page-locks the next ones while the reader fills
    # the first.
    ahead_count = _slots_ahead(engine, ref, dis, batch, max(slots, 2), first)
    ahead: queue.Queue[Any] = queue.Queue()

    def maker() -> None:
        for _ in range(ahead_count):
            if stop.is_set():
                ahead.put(None)  # the reader may be waiting for it
                break
            try:
                ahead.put(make_slot())
            except BaseException as exc:  # noqa: BLE001 - handed to the reader
                ahead.put(exc)
                break

    def next_slot() -> _Slot | None:
        """A free slot; the ring's slots are made on first need (the first by the reader,
        the next ones ahead by the maker thread where there is one), so that page-locking
        them overlaps reading and the first batches instead of delaying them."""
        if made[0] < max(slots, 2) and (free.empty() or made[0] <= ahead_count):
            made[0] += 1
            if 1 < made[0] <= ahead_count + 1:
                item = ahead.get()
                if isinstance(item, BaseException):
                    raise item
                return item  # None once the run stops
            return make_slot()
        item = free.get()
        return make_slot() if item is _REPLACE else item

    def reader() -> None:
        active = list(range(len(dis)))
        try:
            if first is not None:
                item = first.result()
                filled.put(item)
                active = [k for k in active if k not in item.ended]
            while active and not stop.is_set():
                slot = next_slot()
                if slot is None or stop.is_set():
                    break
                item = _read_slot(ref, dis, slot, batch, active, pool, failures)
                active = [k for k in active if k not in item.ended]
                filled.put(item)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            filled.put(exc)
        finally:
            filled.put(_END)

    thread = threading.Thread(target=reader, name="admcuda-reader", daemon=True)
    parts: list[list[dict[str, np.ndarray]]] = [[] for _ in dis]
    inflight: list[tuple[Any, _Filled, list[int], list[dict[str, np.ndarray]], Any]] = []
    pinned = getattr(engine, "pinned_empty", None) is not None

    def finish_oldest() -> None:
        ticket, item, order, extra, whole = inflight.pop(0)
        results = engine.collect(ticket)
        for j, (k, res) in enumerate(zip(order, results, strict=True)):
            c = item.counts[k]
            merged = {**res, **extra[j]} if extra else res
            parts[k].append({name: values[:c] for name, values in merged.items()})
        if stats is not None:
            stats.frames += max(item.counts.values(), default=0)
            stats.batches += 1
            if stats.first_done is None:
                stats.first_done = time.time()
                stats.first_batch_frames = stats.frames
        if on_frames is not None:
            # the frames scored (paired with a distorted input's), not those read: a
            # reference that runs on past its rungs is not counted past them
            on_frames(max(item.counts.values(), default=0))
        if whole is not None:  # the slot's last piece: the slot goes back to the reader
            # A read-ahead's plain memory is not kept where the engine's own is
            # page-locked, nor a read-ahead's slot that is not a batch: the reader
            # makes one of the engine's in its place.
            odd = first is not None and whole is first.slot
            odd = odd and (first.capacity != batch or (pinned and not first.pinned))
            free.put(_REPLACE if odd else whole)

    reserve = getattr(engine, "reserve", None)
    if reserve is not None:
        reserve(len(dis))  # before the reader starts page-locking its slots
    making = threading.Thread(target=maker, name="admcuda-slots", daemon=True)
    if ahead_count:
        making.start()
    thread.start()
    try:
        while True:
            item = filled.get()
            if item is _END:
                break
            if isinstance(item, BaseException):
                raise item
            n = max(item.counts.values(), default=0)
            if n == 0:
                free.put(item.slot)
                continue
            # A read-ahead's slot may hold more frames than the engine takes at once.
            for start in range(0, n, batch):
                piece = _piece(item, start, batch)
                order = [k for k, c in piece.counts.items() if c > 0]
                m = max(piece.counts[k] for k in order)
                slot = piece.slot
                ticket = engine.submit(slot.ref, [slot.dis[k] for k in order], m)
                extra = []
                if host is not None:
                    extra = host.compute(
                        slot.ref, slot.ref_chroma, [slot.dis[k] for k in order],
                        [slot.dis_chroma[k] if chroma else None for k in order], m, order,
                    )  # fmt: skip
                whole = item.slot if start + batch >= n else None
                inflight.append((ticket, piece, order, extra, whole))
                if len(inflight) > 1:
                    finish_oldest()
        while inflight:
            finish_oldest()
    except BaseException:
        # Ctrl-C or a failure: a read waiting on a pipe whose writer sends nothing would
        # hold the join below (and the exit) for as long as the writer waits.
        for source in (ref, *dis):
            interrupt = getattr(source, "interrupt", None)
            if interrupt is not None:
                interrupt()
        raise
    finally:
        stop.set()
        free.put(None)
        thread.join(timeout=60)
        if ahead_count:
            making.join(timeout=60)  # its slots are the engine's to release
        pool.shutdown(wait=True, cancel_futures=True)
    if stats is not None:
        stats.end = time.time()
    failed = failures or {}
    return [{} if k in failed else _concat(p) for k, p in enumerate(parts)]


def _slots_ahead(
    engine: Any, ref: Any, dis: Sequence[Any], batch: int, slots: int, first: Any = None
) -> int:
    """How many ring slots a thread makes ahead of the reader: for an engine whose host
    buffers are page-locked (a GPU engine's ``pinned_empty``) and a reference of known
    length read into host memory, the slots its batches will use after the first slot
    (the reader's, or a read-ahead's); otherwise none (made by the reader on first need)."""
    if getattr(engine, "pinned_empty", None) is None or not isinstance(ref, SeekableSource):
        return 0
    if any(getattr(s, "device_buffer", None) is not None for s in (ref, *dis)):
        return 0
    if first is not None:
        rest = max(ref.scored - first.capacity, 0)
        return min(slots - 1, -(-rest // max(batch, 1)))
    batches = -(-ref.scored // max(batch, 1))
    return max(min(slots, batches) - 1, 0)


def _read_slot(
    ref: Any,
    dis: Sequence[Any],
    slot: _Slot,
    capacity: int,
    active: list[int],
    pool: ThreadPoolExecutor,
    failures: dict[int, str] | None,
) -> _Filled:
    """Read the next ``capacity`` frames of ``ref`` and of the ``active`` distorted inputs
    into ``slot``; which inputs end with it."""
    if slot.ref_chroma is not None:
        pending_ref = ref.start(slot.ref, capacity, pool, slot.ref_chroma)
        pending = {k: dis[k].start(slot.dis[k], capacity, pool, slot.dis_chroma[k])
                   for k in active}  # fmt: skip
    else:
        pending_ref = ref.start(slot.ref, capacity, pool)
        pending = {k: dis[k].start(slot.dis[k], capacity, pool) for k in active}
    n_ref = pending_ref.wait()
    counts = {}
    for k, p in pending.items():
        try:
            counts[k] = min(n_ref, p.wait())
        except AdmError as exc:
            if failures is None:
                raise
            failures[k] = str(exc)
            counts[k] = 0
    ended = [k for k in active if counts[k] < capacity or n_ref < capacity]
    if isinstance(ref, SeekableSource) and ref.exhausted:
        ended = list(active)  # no slot for nothing after a whole last batch
    return _Filled(slot, n_ref, counts, len(ended) == len(active), ended)


def _piece(item: _Filled, start: int, size: int) -> _Filled:
    """Frames ``start`` to ``start + size`` of a filled slot, as a filled slot of views."""
    if start == 0 and len(item.slot.ref) <= size:
        return item
    cut = slice(start, start + size)
    slot = _Slot(
        item.slot.ref[cut],
        [d[cut] for d in item.slot.dis],
        None if item.slot.ref_chroma is None else item.slot.ref_chroma[cut],
        [None if c is None else c[cut] for c in item.slot.dis_chroma],
    )
    counts = {k: min(max(c - start, 0), size) for k, c in item.counts.items()}
    return _Filled(slot, min(max(item.ref_count - start, 0), size), counts, item.last,
                   item.ended)  # fmt: skip


class ReadAhead:
    """The first ``frames`` frames of a run's inputs, read into host memory on threads of
    their own from the moment it is made: while the engine starts (CuPy's import, the CUDA
    context and the kernels take a few hundred milliseconds), the first batch is read.
    :func:`run` takes it as its ``first`` and reads on after it.

    ``memory(nbytes)``, where given, makes the slot's memory on that thread: a flat uint8
    array and its owner (with ``release()``), or None for plain memory. The GPU's gives
    page-locked memory (:func:`admcuda.backends.cuda.hostmem.early_block`), which then
    serves the run's ring like the engine's own slots; plain memory is used once. Call
    :meth:`release` once the engine is done with it.

    Raw YUV and Y4M inputs only (:class:`SeekableSource`), luma only. A reading error is
    raised where :func:`run` meets the slot, as it would be there.
    """

    def __init__(
        self,
        ref: SeekableSource,
        dis: Sequence[SeekableSource],
        *,
        width: int,
        height: int,
        dtype: Any,
        frames: int,
        threads: int | None = None,
        failures: dict[int, str] | None = None,
        memory: Callable[[int], tuple[np.ndarray, Any] | None] | None = None,
    ) -> None:
        self.capacity = max(int(frames), 1)
        self.pinned = False
        self._owner: Any = None
        self._item: _Filled | None = None
        self._error: BaseException | None = None
        shape = (self.capacity, height, width)
        args = (ref, list(dis), shape, np.dtype(dtype), threads, failures, memory)
        self._thread = threading.Thread(
            target=self._read, args=args, name="admcuda-read-ahead", daemon=True
        )
        self._thread.start()

    def _read(
        self,
        ref: Any,
        dis: list[Any],
        shape: tuple[int, int, int],
        dtype: np.dtype,
        threads: int | None,
        failures: dict[int, str] | None,
        memory: Callable[[int], tuple[np.ndarray, Any] | None] | None,
    ) -> None:
        pool = ThreadPoolExecutor(threads or read_threads(), thread_name_prefix="admcuda-read")
        try:
            self.slot = self._slot(shape, dtype, 1 + len(dis), memory)
            active = list(range(len(dis)))
            self._item = _read_slot(ref, dis, self.slot, self.capacity, active, pool, failures)
        except MemoryError:
            self._error = memory_error(shape[2], shape[1], dtype, shape[0], 1 + len(dis))
        except BaseException as exc:  # noqa: BLE001 - raised by result()
            self._error = exc
        finally:
            pool.shutdown(wait=True)

    def _slot(
        self,
        shape: tuple[int, int, int],
        dtype: np.dtype,
        planes: int,
        memory: Callable[[int], tuple[np.ndarray, Any] | None] | None,
    ) -> _Slot:
        plane = int(np.prod(shape)) * dtype.itemsize
        made = None if memory is None else memory(planes * plane)
        if made is None:
            arrays = [np.empty(shape, dtype) for _ in range(planes)]
        else:
            flat, self._owner = made
            self.pinned = True
            arrays = [flat[k * plane : (k + 1) * plane].view(dtype).reshape(shape)
                      for k in range(planes)]  # fmt: skip
        return _Slot(arrays[0], arrays[1:])

    def join(self) -> None:
        """Wait until the frames are read (or their reading failed); its threads end."""
        self._thread.join()

    def result(self) -> _Filled:
        """The filled slot, once read; raises the reading's error."""
        self.join()
        if self._error is not None:
            raise self._error
        assert self._item is not None
        return self._item

    def release(self) -> None:
        """Give the memory back (page-locked memory unregistered): once the engine that
        read it is closed."""
        self.join()
        owner, self._owner = self._owner, None
        if owner is not None:
            owner.release()


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if not parts:
        return {}
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}

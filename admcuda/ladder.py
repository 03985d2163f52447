"""The ladder runner: open a reference and its distorted inputs, pick the engine, run
the pipeline, check lengths and name the outputs. The Python API, the command line and
batch all score through :func:`run_ladder`."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from admcuda import backends
from admcuda.errors import AdmError
from admcuda.numeric import counted
from admcuda.options import (
    NON_DEBUG_BASE_NAMES,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    ScoreDict,
    feature_names,
)
from admcuda.quirks import warn_small_height

if TYPE_CHECKING:
    from admcuda.pipeline import RunStats

__all__ = ["LadderRun", "run_ladder"]

_log = logging.getLogger("admcuda")

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class LadderRun:
    """Scores of a ladder run and what the CLI needs to report them."""

    frames: list[list[dict[str, float]]]
    frame_numbers: list[list[int]]
    width: int
    height: int
    pixel_format: str
    bitdepth: int
    ref: str
    dis: list[str]
    opts: AdmOptions
    errors: list[str | None] = field(default_factory=list)  # per distorted input
    backend: str = "cpu"  # the backend that scored
    decoded: dict[str, str] = field(default_factory=dict)  # video input -> nvdec/ffmpeg
    plan: Any = None  # the admcuda.vmaf FeaturePlan computed, if any (else ADM alone)
    # per distorted input, libvmaf's aggregate_metrics (PSNR's apsnr_*), name -> value
    aggregates: list[dict[str, float]] = field(default_factory=list)

    def raise_first_error(self) -> None:
        """Raise the first distorted input's error, if any (for the Python API)."""
        for error in self.errors:
            if error is not None:
                raise AdmError(error)


def run_ladder(
    ref_path: PathLike,
    dis_paths: Sequence[PathLike],
    *,
    width: int | None,
    height: int | None,
    pixel_format: str | None,
    bitdepth: int | None,
    opts: AdmOptions,
    backend: str,
    frame_cnt: int | None = None,
    frame_skip_ref: int = 0,
    frame_skip_dist: int = 0,
    subsample: int = 1,
    progress: bool | float | Callable[[int, int | None], object] = False,
    threads: int | None = None,
    host_memory: int | None = None,
    batch: int | None = None,
    device: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str = "auto",
    stats: RunStats | None = None,
    raw_flags: bool = False,
    plan: Any = None,
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
) -> LadderRun:
    """Open the inputs, score them through the streaming pipeline, check lengths, name
    outputs.

    With ``progress`` True, :class:`admcuda.progress.Progress` counts reference frames on
    stderr (a bar on a terminal, else a plain line every 30 s), of the total where the
    inputs' lengths are known or estimated (a video's duration times its rate, capped by
    ``frame_cnt``), and a ladder's line names its rungs; a number of seconds instead gives
    plain lines that often (``--progress``); a function is called with the frames done and
    that total (None where unknown) instead (:class:`admcuda.progress.ProgressCallback`).
    ``threads`` is the CPU backend's worker processes; ``host_memory`` the bytes of host
    frame buffers; ``batch`` the GPU's frames per batch; ``device`` the GPU; ``ignore_name``
    and ``scale`` go to :func:`admcuda.io.inputs.open_inputs`; ``decoder`` ("auto", "ffmpeg",
    "nvdec") decodes encoded video with ffmpeg or on the GPU's NVDEC ("auto": NVDEC where
    the CUDA backend runs, PyNvVideoCodec imports and the codec is supported); ``stats`` (a
    :class:`admcuda.pipeline.RunStats`) receives timings. ``backend="auto"`` takes the GPU
    and falls back to the CPU where the CUDA path cannot start (the reason lands in
    :data:`admcuda.backends.fallback_reason`). ``raw_flags``: the command line gave
    ``-w/-h/-p/-b``, with which libvmaf's tool reads every input as raw; a Y4M input then
    gets a warning. ``autorotate`` and ``allow_partial_frame`` go to
    :func:`admcuda.io.inputs.open_inputs`.

    With several distorted inputs (a ladder) a rung that cannot be opened or read does
    not stop the others: its error is in ``errors`` and its ``frames`` are empty. With one
    distorted input its error is raised.

    ``plan`` (an :class:`admcuda.vmaf.FeaturePlan`) computes VIF, motion and models beside
    or in place of ``opts``' ADM, on either backend: every frame is read once and the
    plan's features computed over it, the reference's motion once per reference frame for
    every rung. With motion, every frame
    is read and those ``subsample`` passes over feed motion only, as in libvmaf. Each
    rung's frames then hold the plan's outputs in libvmaf's order, model scores included.
    """
    from admcuda.io.inputs import FrameSelection

    selection = FrameSelection(
        frame_cnt=frame_cnt,
        frame_skip_ref=frame_skip_ref,
        frame_skip_dist=frame_skip_dist,
        subsample=subsample,
    )
    dis_paths = list(dis_paths)
    ladder = len(dis_paths) > 1
    errors: dict[int, str] = {}
    geometry = dict(width=width, height=height, pixel_format=pixel_format, bitdepth=bitdepth)
    extra: dict[str, Any] = {
        k: v
        for k, v in (
            ("ignore_name", ignore_name),
            ("scale", scale),
            ("allow_partial_frame", allow_partial_frame),
        )
        if v
    }
    if autorotate is not None:
        extra["autorotate"] = autorotate
    host = plan is not None and bool(plan.host_extractors)
    video_decoder = _video_decoder(decoder, backend, scale, host=host)
    if video_decoder != "ffmpeg":
        extra.update(decoder=video_decoder, gpu=device or 0)
    inputs, good = _open_rungs(ref_path, dis_paths, geometry, extra, errors, ladder)
    if raw_flags:
        _warn_y4m_read_as_y4m(inputs.readers)
    if plan is not None:
        plan = plan.for_pixel_format(inputs.pixel_format)
    with inputs:
        arrays, used = _score_inputs(
            inputs, selection, opts, backend, errors, good, ladder,
            progress=progress, threads=threads, host_memory=host_memory, batch=batch,
            device=device, stats=stats, plan=plan,
        )  # fmt: skip
        shape = (inputs.width, inputs.height, inputs.pixel_format, inputs.bitdepth)
        warn_small_height(inputs.width, inputs.height, opts)
        decoded = {
            os.fspath(r.path): ("nvdec" if r.kind == "nvdec" else "ffmpeg")
            for r in inputs.readers
            if r.kind in ("video", "nvdec", "scaled")
        }

    names = feature_names(opts)
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    keys = [names[base] for base in wanted]
    results: list[list[dict[str, float]]] = [[] for _ in dis_paths]
    aggregates: list[dict[str, float]] = [{} for _ in dis_paths]
    for k, per_input in zip(good, arrays, strict=True):
        if k in errors:
            continue
        if plan is not None:
            results[k], aggregates[k] = _finish_plan(plan, per_input, selection.subsample, shape)
            continue
        missing = [base for base in wanted if base not in per_input]
        if missing:
            raise AdmError(f"backend gave no {', '.join(missing)}")
        rows = np.stack([per_input[base] for base in wanted], axis=1).tolist()
        results[k] = [ScoreDict(zip(keys, row, strict=True), names) for row in rows]
    return LadderRun(
        frames=results,
        frame_numbers=[selection.frame_numbers(len(f)) for f in results],
        width=shape[0],
        height=shape[1],
        pixel_format=shape[2],
        bitdepth=shape[3],
        ref=os.fspath(ref_path),
        dis=[os.fspath(p) for p in dis_paths],
        opts=opts,
        errors=[errors.get(k) for k in range(len(dis_paths))],
        backend=used,
        decoded=decoded,
        plan=plan,
        aggregates=aggregates,
    )


def _finish_plan(
    plan: Any, arrays: dict[str, np.ndarray], subsample: int, shape: tuple[int, int, str, int]
) -> tuple[list[dict[str, float]], dict[str, float]]:
    """One rung's frames from the engine's arrays (every frame read, where the plan runs
    motion or PSNR's apsnr): :func:`admcuda.vmaf.finish_clip`'s frames, in libvmaf's
    order, and the clip's aggregate metrics (from PSNR's squared-error sums, integer
    arrays kept as Python ints)."""
    from admcuda.reference.psnr import scored_shapes
    from admcuda.vmaf import aggregate_metrics, finish_clip

    if not arrays:
        return [], {}
    names = [n for n, a in arrays.items() if a.dtype.kind == "f"]
    counts = {n: a.tolist() for n, a in arrays.items() if a.dtype.kind in "iu"}
    rows = np.stack([arrays[n] for n in names], axis=1).tolist()
    frames: list[dict[str, Any]] = [dict(zip(names, row, strict=True)) for row in rows]
    for n, values in counts.items():
        for frame, value in zip(frames, values, strict=True):
            frame[n] = value
    width, height, pixel_format, bitdepth = shape
    pixels = [r * c for r, c in scored_shapes(width, height, pixel_format)]
    aggregate = aggregate_metrics(plan, frames, bitdepth=bitdepth, plane_pixels=pixels)
    every = plan.needs_every_frame
    return finish_clip(plan, frames, subsample=subsample if every else 1), aggregate


def _warn_y4m_read_as_y4m(readers: Sequence[Any]) -> None:
    """One warning naming the Y4M inputs, where ``-w/-h/-p/-b`` were given: libvmaf's tool
    then opens every input with its raw reader (``cli_parse.c`` sets ``use_yuv``), so it
    reads a Y4M's header and FRAME markers as samples and scores other numbers."""
    named = []
    for reader in readers:
        source = getattr(reader, "source", reader)  # a scaled rung's own reader
        if source.kind == "y4m" or getattr(source, "stream_format", None) == "y4m":
            named.append(source.where)
    if named:
        _log.warning(
            "with -w/-h/-p/-b given libvmaf reads every input as raw YUV, a Y4M's header and "
            "FRAME markers as samples; admcuda reads the Y4M header of %s",
            " and ".join(named),
        )


def _video_decoder(
    decoder: str, backend: str, scale: str | None, *, host: bool = False
) -> str | Callable[[], str]:
    """The decoder for encoded video: "ffmpeg", "nvdec", or for "auto" a function that
    gives "auto" (NVDEC per file where it can) where the CUDA backend is the one that runs,
    else "ffmpeg". ``host``: the plan computes features on the host (PSNR), which read
    frames in host memory: ffmpeg."""
    if decoder not in ("auto", "ffmpeg", "nvdec"):
        raise AdmError(f"unknown decoder {decoder!r}; use auto, ffmpeg or nvdec")
    if decoder == "ffmpeg":
        return decoder
    if host:
        if decoder == "nvdec":
            raise AdmError(
                "psnr, float_ssim, float_ms_ssim, cambi, speed_chroma, float_moment, "
                "float_psnr, float_motion, ciede, psnr_hvs, speed_temporal, float_ansnr, "
                "float_vif and float_adm read frames in host memory: use --decoder ffmpeg or auto"
            )
        return "ffmpeg"
    if decoder == "nvdec":
        if backends.select_backend(backend)[0] != "cuda":
            raise AdmError("the NVDEC decoder needs the CUDA backend (--backend cuda)")
        if scale:
            raise AdmError("--scale runs through ffmpeg's scaler: use --decoder ffmpeg or auto")
        return decoder
    if scale or backend == "cpu":
        return "ffmpeg"

    # Whether the CUDA backend runs is asked (CuPy imported) only once an encoded input
    # is opened: raw and Y4M inputs open, and start reading, while CuPy imports.
    @functools.cache
    def auto() -> str:
        try:
            cuda = backends.select_backend(backend)[0] == "cuda"
        except AdmError:  # a named backend that cannot load: the engine's start says so
            return "ffmpeg"
        return "auto" if cuda else "ffmpeg"

    return auto  # type: ignore[return-value]


@contextlib.contextmanager
def _held_warnings(shown: set[str]) -> Iterator[list[logging.LogRecord]]:
    """Hold back what this thread logs to ``admcuda`` meanwhile (the records, which the
    caller may drop), then pass on each message not in ``shown`` and add it there: opening
    a ladder again rung by rung, then its good rungs together, logs each warning once, not
    once a pass."""
    held: list[logging.LogRecord] = []
    me = threading.get_ident()

    def hold(record: logging.LogRecord) -> bool:
        if record.thread != me:
            return True
        held.append(record)
        return False

    _log.addFilter(hold)
    try:
        yield held
    finally:
        _log.removeFilter(hold)
        for record in held:
            message = record.getMessage()
            if message not in shown:
                shown.add(message)
                _log.handle(record)


def _open_rungs(ref_path, dis_paths, geometry, extra, errors, ladder):  # type: ignore[no-untyped-def]
    """Open the reference and every distorted input; in a ladder, a rung that cannot be
    opened gets its error in ``errors`` and the rest are opened without it."""
    from admcuda.io.inputs import check_distinct_streams, open_inputs

    check_distinct_streams([ref_path, *dis_paths])  # for the whole ladder, not one rung
    shown: set[str] = set()
    with _held_warnings(shown) as held:
        try:
            inputs = open_inputs(ref_path, dis_paths, **geometry, **extra)
            return inputs, list(range(len(dis_paths)))
        except AdmError:
            if not ladder:
                raise
            held.clear()  # the rung-by-rung pass below logs again what concerns each rung
    good = []
    for k, path in enumerate(dis_paths):
        with _held_warnings(shown):
            try:
                open_inputs(ref_path, [path], **geometry, **extra).close()
                good.append(k)
            except AdmError as exc:
                errors[k] = str(exc)
    if not good:  # the reference itself, or every rung
        raise AdmError(errors[0])
    with _held_warnings(shown):
        return open_inputs(ref_path, [dis_paths[k] for k in good], **geometry, **extra), good


def _score_inputs(inputs, selection, opts, backend, errors, good, ladder, *, progress,
                  threads, host_memory, batch, device, stats, plan=None):  # type: ignore[no-untyped-def]  # fmt: skip
    """Run the opened inputs through the pipeline; returns (arrays per opened rung,
    backend used)."""
    from admcuda.pipeline import run
    from admcuda.progress import Progress, ProgressCallback
    from admcuda.sources import make_source

    sub = selection.subsample
    engine_extra: dict[str, Any] = {}
    host = None
    if plan is not None:
        # motion (and PSNR's apsnr) reads every frame; the engine scores frames 0, N, 2N,
        # ... of them; PSNR is computed on the host from the frames read
        every = plan.needs_every_frame
        from admcuda.vmaf import score_pair

        engine_extra = {"plan": plan.engine_plan(), "subsample": sub if every else 1,
                        "score_pair": score_pair}  # fmt: skip
        sub = 1 if every else sub
        if plan.host_extractors:
            from admcuda.vmaf.host import HostFeatures

            host = HostFeatures(
                plan, inputs.width, inputs.height, inputs.pixel_format, inputs.bitdepth,
                threads=threads, inputs=[os.fspath(r.path) for r in inputs.readers],
                distorted=len(inputs.dis), subsample=selection.subsample,
            )  # fmt: skip
    chroma = host is not None and host.chroma_size > 0
    first = None
    try:
        ref = make_source(inputs.ref, skip=selection.frame_skip_ref, limit=selection.frame_cnt,
                          subsample=sub, chroma=chroma)  # fmt: skip
        dis = [
            make_source(
                d,
                skip=selection.frame_skip_dist,
                limit=selection.frame_cnt,
                subsample=sub,
                chroma=chroma,
            )  # fmt: skip
            for d in inputs.dis
        ]
    except BaseException:
        if host is not None:
            host.close()
        raise
    try:
        if ref.available == 0:
            raise _nothing_left(ref)
        for k, stream in zip(good, dis, strict=True):
            if stream.available == 0:
                _rung_error(errors, k, _nothing_left(stream), ladder)
        active = [i for i, k in enumerate(good) if k not in errors]
        scored = [dis[i].scored for i in active] + [ref.scored]
        frames = None if None in scored else max(min(ref.scored, dis[i].scored) for i in active)
        w, h, bd = inputs.width, inputs.height, inputs.bitdepth
        on_gpu = [r.label + " file " + repr(os.fspath(r.path)) for r in inputs.readers
                  if r.kind == "nvdec"]  # fmt: skip
        failures: dict[int, str] = {}
        if engine_extra and not engine_extra["plan"].extractors:
            engine, used = _HostOnly(w, h, bd, 1 + len(active), batch, host_memory), "cpu"
        else:
            if not on_gpu and not chroma and backends.likely_cuda(backend):
                first = _read_ahead(
                    ref, [dis[i] for i in active], w, h, bd, frames, host_memory, batch,
                    threads, failures if ladder else None,
                )  # fmt: skip
            engine, used = backends.start_engine(
                backend, w, h, bd, opts, inputs=len(active), frames=frames, threads=threads,
                host_memory=host_memory, batch=batch, device=device,
                settle=None if first is None else first.join, **engine_extra,
            )  # fmt: skip
        if on_gpu and used != "cuda":
            engine.close()
            raise AdmError(
                f"{on_gpu[0]} is decoded on NVDEC but the CUDA backend cannot start "
                f"({_fallback_reason()}); use --decoder ffmpeg"
            )
        total, estimated = (
            _expected_total(ref, [dis[i] for i in active], selection, sub)
            if progress is not False
            else (None, False)  # a video's estimate may cost a probe: only where shown
        )
        names = [Path(os.fspath(inputs.dis[i].path)).name for i in active]
        try:  # a caller's function is called here, with 0 frames done: it may raise
            if callable(progress):
                bar: Any = ProgressCallback(progress, total)
            else:
                bar = Progress(
                    total, enabled=progress is not False, estimated=estimated,
                    every=None if isinstance(progress, bool) else float(progress),
                    note=f"{len(names)} rungs: {', '.join(names)}" if len(names) > 1 else "",
                )  # fmt: skip
        except BaseException:
            engine.close()
            raise
        with bar, engine:
            part = run(
                ref, [dis[i] for i in active], engine, width=w, height=h,
                dtype=np.uint8 if bd == 8 else np.uint16, on_frames=bar.update, stats=stats,
                failures=failures if ladder else None, host=host, first=first,
            )  # fmt: skip
        for j, message in failures.items():
            errors[good[active[j]]] = message
        arrays: list[dict[str, np.ndarray]] = [{} for _ in good]
        for j, i in enumerate(active):
            arrays[i] = part[j]
        for i in active:
            k = good[i]
            if k in errors:
                continue
            _warn_if_lengths_differ(ref, dis[i])
            if not arrays[i] or not len(next(iter(arrays[i].values()))):
                _rung_error(errors, k, _nothing_left(ref if ref.read == 0 else dis[i]), ladder)
    finally:
        if first is not None:
            first.release()  # the engine is closed; and before the sources close
        for stream in (ref, *dis):
            stream.close()
        if host is not None:
            host.close()
    return arrays, used


def _read_ahead(ref: Any, dis: list[Any], width: int, height: int, bitdepth: int,
                frames: int | None, host_memory: int | None, batch: int | None,
                threads: int | None, failures: dict[int, str] | None) -> Any:  # fmt: skip
    """The GPU's first batch of raw or Y4M inputs, read into page-locked memory while the
    engine starts (:class:`admcuda.pipeline.ReadAhead`); None for other inputs, and
    where the memory cannot be page-locked before CuPy is imported (a plain slot's upload
    would cost what reading ahead saves)."""
    from admcuda.backends.cuda import hostmem
    from admcuda.pipeline import ReadAhead, SeekableSource

    if not all(isinstance(s, SeekableSource) for s in (ref, *dis)):
        return None
    if not hostmem.can_page_lock_early():
        return None
    size = backends.cuda_batch(width, height, bitdepth, inputs=len(dis), frames=frames,
                               host_memory=host_memory, batch=batch)  # fmt: skip
    return ReadAhead(ref, dis, width=width, height=height, frames=size, threads=threads,
                     dtype=np.uint8 if bitdepth == 8 else np.uint16, failures=failures,
                     memory=hostmem.early_block)  # fmt: skip


class _HostOnly:
    """The engine of a plan whose features are all computed on the host (PSNR alone): it
    computes nothing, and the pipeline's host features give every output."""

    def __init__(self, width: int, height: int, bitdepth: int, planes: int,
                 batch: int | None, host_memory: int | None) -> None:  # fmt: skip
        from admcuda.pipeline import CPU_HOST_MEMORY, plan_batch

        itemsize = 1 if bitdepth == 8 else 2
        self.batch = plan_batch(
            width * height * itemsize, planes, preferred=batch or 16,
            host_memory=host_memory or CPU_HOST_MEMORY,
        )  # fmt: skip

    def host_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    def submit(self, ref: np.ndarray, dis: Sequence[np.ndarray], frames: int) -> int:
        return len(dis)

    def collect(self, ticket: int) -> list[dict[str, np.ndarray]]:
        return [{} for _ in range(ticket)]

    def close(self) -> None:
        """Nothing to release."""

    def __enter__(self) -> _HostOnly:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _expected(source: Any, skip: int, limit: int | None, subsample: int) -> tuple[int | None, bool]:
    """Frames ``source`` should give the engine, and whether that is an estimate: its count
    where its reader knows its length (raw, Y4M), else a video's duration times its rate
    (its reader's ``estimated_frames``: ffmpeg's and NVDEC's readers give the same), capped
    by ``--frame-cnt``; the cap alone where neither is known; None where nothing tells.
    ``skip``, ``limit`` and ``subsample`` are the source's selection, as it was made with
    them (taken from the run, not the source: NVDEC's sources in a process of their own
    do not keep them)."""
    if source.scored is not None:
        return source.scored, False
    guess = getattr(source.reader, "estimated_frames", None)
    if guess is None:
        return (None, False) if limit is None else (-(-limit // subsample), False)
    held = max(guess - skip, 0)
    if limit is not None and limit <= held:
        return -(-limit // subsample), False
    return -(-held // subsample), True


def _expected_total(
    ref: Any, rungs: Sequence[Any], selection: Any, subsample: int
) -> tuple[int | None, bool]:
    """The reference frames a run should score, as the pipeline runs (while the reference
    and a rung have frames), and whether that is an estimate; None if unknown.
    ``selection`` is the run's :class:`admcuda.io.inputs.FrameSelection`; ``subsample``
    the sources' own (1 where a plan reads every frame for motion)."""
    limit = selection.frame_cnt
    want, guessed = _expected(ref, selection.frame_skip_ref, limit, subsample)
    totals: list[int] = []
    estimated = False
    for rung in rungs:
        count, guess = _expected(rung, selection.frame_skip_dist, limit, subsample)
        known = [(c, g) for c, g in ((want, guessed), (count, guess)) if c is not None]
        if not known:
            return None, False
        shortest = min(known)
        totals.append(shortest[0])
        estimated |= shortest[1]
    if not totals:
        return want, guessed
    return max(totals), estimated


def _fallback_reason() -> str:
    return backends.fallback_reason or "no GPU"


def _rung_error(errors: dict[int, str], k: int, exc: AdmError, ladder: bool) -> None:
    if not ladder:
        raise exc
    errors[k] = str(exc)


def _stream_name(stream: Any) -> str:
    return f"{stream.reader.label} file {str(stream.reader.path)!r}"


def _nothing_left(stream: Any) -> AdmError:
    flag = "--frame-skip-ref" if stream.reader.label == "reference" else "--frame-skip-dist"
    total = stream.reader.num_frames
    if stream.skip:
        held = counted(total, "frame") if total is not None else "no more frames"
        return AdmError(
            f"nothing to score: {_stream_name(stream)} has {held}, and {flag} "
            f"{stream.skip} skips them all"
        )
    return AdmError(f"nothing to score: {_stream_name(stream)} gave no frames")


def _warn_if_lengths_differ(ref: Any, dis: Any) -> None:
    """Read just far enough to tell which stream is shorter; warn once if one is."""
    while ref.read != dis.read:
        shorter = ref if ref.read < dis.read else dis
        if not shorter.has_more():
            break
    if ref.read == dis.read:
        ref_more, dis_more = ref.has_more(), dis.has_more()
        if ref_more == dis_more:
            return
    shorter, longer = (ref, dis) if ref.read < dis.read else (dis, ref)
    available = longer.available
    longer_count = f"{available}" if available is not None else f"more than {shorter.read}"
    _log.warning(
        "%s ended before %s (%d vs %s frames); scoring the first %d",
        _stream_name(shorter), _stream_name(longer), shorter.read, longer_count, shorter.read,
    )  # fmt: skip

"""``admcuda batch``: many reference/distorted pairs from a manifest, scored on Dask.

Usage::

    admcuda batch jobs.csv -o results/                               # a local cluster
    admcuda batch jobs.csv -o results/ --scheduler tcp://head:8786   # an existing one

The manifest is CSV with a header row, or JSON Lines with the same keys (by the
suffix ``.jsonl``/``.ndjson``, or by content). ``ref`` and ``dis`` are required;
``name``, ``width``, ``height``, ``pixel_format``, ``bitdepth``, ``options``
(libvmaf's ``K=V:K=V``), ``model`` (``--model`` strings, several separated by ``;``:
VMAF, on the workers' backend), ``feature`` (libvmaf's ``--feature`` strings, several
separated by ``;``, as ``admcuda score --feature`` takes them) and the frames scored
(``frame_cnt``, ``frame_skip_ref``, ``frame_skip_dist``, ``subsample``, as ``admcuda
score`` takes them) are optional.
Relative paths resolve against the manifest's folder, and every worker must see the
inputs at those paths.

How the work is cut and who writes what:

- Rows that share a reference, geometry, options, models, features and frame choices form
  a ladder: one Dask task scores them with the reference read once
  (``admcuda.ladder.run_ladder``), and returns one record per pair, each with its own
  status. A rung that cannot be read fails alone; a ladder that fails as a whole is
  scored again rung by rung, so that each row gets its own error.
- The **client**, not the workers, writes ``<name>.json`` (with the writer that
  ``admcuda score --json -o`` uses) and ``summary.csv``, each through a temporary
  file renamed into place. A worker that dies mid-pair has written nothing: the
  scheduler reruns its task on another worker (at most
  ``distributed.scheduler.allowed-failures`` deaths, then the pairs fail with
  ``KilledWorker``), and a task that raises an unexpected exception is retried
  ``retries`` times. A result reaches the client once per task key, however often
  the task ran, so each file is written once and complete; outputs need not be on a
  filesystem that the workers share.
- A rerun skips pairs whose result file exists, parses and carries the output
  names of the row's options, unless ``force``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import numbers
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from admcuda.api import api_message
from admcuda.batch.cluster import (
    client_for,
    dashboard,
    require_distributed,
    single_cpu_worker,
    task_threads,
)
from admcuda.batch.manifest import Job, plain_name, read_jobs, replace_fields
from admcuda.batch.records import (
    RECORD_WARNINGS,
    SUMMARY_NAME,
    PairResult,
    TaskLog,
    job_path,
    job_record,
    load_done,
    summary_text,
)
from admcuda.cli.tool import PROG, FeatureRequest
from admcuda.errors import AdmError
from admcuda.numeric import check_integer, counted
from admcuda.options import (
    AdmOptions,
)
from admcuda.progress import Progress, format_duration
from admcuda.report.writers import write_output, write_protected, write_text, written_input

__all__ = ["DEFAULT_RETRIES", "score_many"]

_MAX_TIMEOUT_S = 1e9  # seconds: about 30 years, and a float every clock takes
DEFAULT_RETRIES = 2
_BAR_WIDTH = 16
_log = logging.getLogger("admcuda")


# -- tasks (these run on the workers)


@dataclass(frozen=True)
class _Task:
    """One ladder (or part of one): a reference, its rungs, and how to read them."""

    index: int
    ref: str
    rungs: tuple[tuple[str, str], ...]  # (name, dis)
    width: int | None
    height: int | None
    pixel_format: str | None
    bitdepth: int | None
    options: AdmOptions
    scale: str | None = None
    ignore_name: bool = False
    model: tuple[str, ...] = ()
    autorotate: bool | None = None
    allow_partial_frame: bool = False
    frame_cnt: int | None = None
    frame_skip_ref: int = 0
    frame_skip_dist: int = 0
    subsample: int = 1
    request: FeatureRequest | None = None  # the rows' features (Job.request)


@dataclass(frozen=True)
class _Scored:
    """One pair's outcome as a task returns it; the client writes the file."""

    name: str
    error: str | None
    frames: list[dict[str, float]]
    frame_numbers: list[int]
    width: int | None
    height: int | None
    pixel_format: str | None
    bitdepth: int | None
    backend: str | None
    fps: float
    warnings: tuple[str, ...]
    aggregate: dict[str, float] = field(default_factory=dict)  # libvmaf's aggregate_metrics


class _Capture(logging.Handler):
    """Collect this thread's ``admcuda`` warnings during a task."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.messages: list[str] = []

    def take(self) -> list[str]:
        """The messages so far, forgetting them."""
        taken, self.messages = self.messages, []
        return taken

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.messages.append(api_message(" ".join(record.getMessage().split())))


def _score_task(
    task: _Task, backend: str, threads: int | None = None
) -> tuple[list[_Scored], TaskLog]:
    """Score a ladder on this worker (on ``threads`` cores; default: what the worker's
    cluster gave it); returns one record per rung and the attempt's log.

    Errors the inputs cause (missing, unreadable, mismatched) become that rung's
    error; anything else raises, for Dask to retry.
    """
    threads = threads or task_threads()
    capture = _Capture()
    _log.addHandler(capture)
    start = time.perf_counter()
    passes = 0
    try:
        dis = [path for _, path in task.rungs]
        try:
            passes += 1
            scored = _with_warnings(_run_rungs(task, dis, backend, threads), task, capture.take())
        except (AdmError, OSError) as exc:
            if len(dis) == 1:
                scored = _with_warnings([_failed(task, 0, exc)], task, capture.take())
            else:
                capture.take()  # each rung's own pass below logs again what concerns it
                scored = []
                for k, path in enumerate(dis):
                    try:
                        passes += 1
                        part = _run_rungs(task, [path], backend, threads, first=k)
                    except (AdmError, OSError) as one:
                        part = [_failed(task, k, one)]
                    scored += _with_warnings(part, task, capture.take())
    finally:
        _log.removeHandler(capture)
    seconds = time.perf_counter() - start
    log = TaskLog(
        task=task.index, pid=os.getpid(), worker=_worker_address(), ref_passes=passes,
        pairs=len(scored), seconds=seconds,
    )  # fmt: skip
    return scored, log


def _run_rungs(
    task: _Task, dis: list[str], backend: str, threads: int, *, first: int = 0
) -> list[_Scored]:
    from admcuda.batch.manifest import model_plan
    from admcuda.ladder import run_ladder

    start = time.perf_counter()
    if task.request is not None:
        plan = task.request.plan()
    else:
        plan = model_plan(task.model, task.options) if task.model else None
    run = run_ladder(
        task.ref, dis, width=task.width, height=task.height, pixel_format=task.pixel_format,
        bitdepth=task.bitdepth, opts=task.options, backend=backend, threads=threads,
        scale=task.scale, ignore_name=task.ignore_name, plan=plan, autorotate=task.autorotate,
        allow_partial_frame=task.allow_partial_frame, frame_cnt=task.frame_cnt,
        frame_skip_ref=task.frame_skip_ref, frame_skip_dist=task.frame_skip_dist,
        subsample=task.subsample,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    errors = [
        None if error is None else api_message(error)
        for error in (getattr(run, "errors", None) or [None] * len(dis))
    ]
    used = getattr(run, "backend", backend)
    aggregates = list(getattr(run, "aggregates", None) or [{}] * len(dis))
    return [
        _Scored(
            name=task.rungs[first + k][0],
            error=error,
            frames=[dict(frame) for frame in frames] if error is None else [],
            frame_numbers=list(numbers) if error is None else [],
            width=run.width,
            height=run.height,
            pixel_format=run.pixel_format,
            bitdepth=run.bitdepth,
            backend=used,
            # As admcuda score: the frames of this input over the whole run's time.
            fps=len(frames) / elapsed if elapsed > 0 else math.inf,
            warnings=(),
            aggregate=dict(aggregate) if error is None else {},
        )
        for k, (frames, numbers, error, aggregate) in enumerate(
            zip(run.frames, run.frame_numbers, errors, aggregates, strict=True)
        )
    ]


def _failed(task: _Task, k: int, exc: BaseException) -> _Scored:
    text = api_message(str(exc)) if isinstance(exc, AdmError) else _os_error_text(exc)
    return _Scored(
        name=task.rungs[k][0], error=" ".join(text.split()), frames=[], frame_numbers=[],
        width=None, height=None, pixel_format=None, bitdepth=None, backend=None,
        fps=math.nan, warnings=(),
    )  # fmt: skip


def _with_warnings(scored: list[_Scored], task: _Task, messages: list[str]) -> list[_Scored]:
    """Give each pair of one pass the warnings that name it as the distorted file, or
    name none of the pass's distorted files (a reference's warning, a frame size's). A pass
    logs each warning once (admcuda.ladder._open_rungs holds back what a ladder's reopening would
    log again). A path alone is not enough: a rung's distorted file may be the reference."""
    paths = dict(task.rungs)

    def names(text: str, one: _Scored) -> bool:
        return f"distorted file {paths[one.name]!r}" in text

    out = []
    for one in scored:
        mine = [t for t in messages if names(t, one) or not any(names(t, o) for o in scored)]
        out.append(replace_fields(one, warnings=tuple(mine)) if mine else one)
    return out


def _os_error_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: '{exc.filename}'"
    return str(exc)


def _worker_address() -> str | None:
    """The Dask worker's address, None outside a worker (a batch scored in this process
    does not import Dask for it)."""
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


# -- planning and running (the client)


@dataclass
class _Plan:
    jobs: list[Job]
    decided: dict[str, PairResult]  # rows settled before any task: bad rows, kept files
    tasks: list[_Task]
    # by name, each row to score's record (job_record), taken before its task runs
    records: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def _plan(
    jobs: list[Job], output: Path | None, *, force: bool, rungs_per_task: int | None
) -> _Plan:
    decided: dict[str, PairResult] = {}
    records: dict[str, dict[str, Any] | None] = {}
    ladders: dict[tuple[Any, ...], list[Job]] = {}
    for job in jobs:
        result = None if output is None else output / f"{job.name}.json"
        if job.error is not None:
            decided[job.name] = _failed_result(job, job.error)
            if result is not None and plain_name(job.name) and not _is_an_input(result, job):
                _discard(result)  # an earlier run's, and no longer this row's result
            continue
        if result is not None:
            unusable = _unusable(result)
            if unusable is not None:
                decided[job.name] = _failed_result(job, unusable)
                continue
            if _is_an_input(result, job):
                decided[job.name] = _failed_result(
                    job, f"its result '{result}' would replace one of its inputs; name the "
                    "row or write the results elsewhere"
                )  # fmt: skip
                continue
            records[job.name] = job_record(job)
            kept = None if force else load_done(job, result, records[job.name])
            if kept is not None:
                decided[job.name] = kept
                continue
        ladders.setdefault(job.ladder_key, []).append(job)
    tasks: list[_Task] = []
    for group in ladders.values():
        size = rungs_per_task or len(group)
        for at in range(0, len(group), size):
            part = group[at : at + size]
            head = part[0]
            tasks.append(
                _Task(
                    index=len(tasks) + 1,
                    ref=head.ref,
                    rungs=tuple((j.name, j.dis) for j in part),
                    width=head.width,
                    height=head.height,
                    pixel_format=head.pixel_format,
                    bitdepth=head.bitdepth,
                    options=head.options,
                    scale=head.scale,
                    ignore_name=head.ignore_name,
                    model=head.model,
                    autorotate=head.autorotate,
                    allow_partial_frame=head.allow_partial_frame,
                    frame_cnt=head.frame_cnt,
                    frame_skip_ref=head.frame_skip_ref,
                    frame_skip_dist=head.frame_skip_dist,
                    subsample=head.subsample,
                    request=head.request,
                )
            )
    return _Plan(jobs=jobs, decided=decided, tasks=tasks, records=records)


def _unusable(result: Path) -> str | None:
    """Why ``result`` cannot be a file in the output folder (a name too long for it, say);
    None if it can."""
    try:
        os.lstat(result)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"its result file cannot be written: {_os_error_text(exc)}"
    return None


def _discard(result: Path) -> None:
    """Remove ``<name>.json`` and its record (best effort): an earlier run's, which the
    row's result no longer is."""
    for stale in (result, job_path(result)):
        with contextlib.suppress(OSError):
            stale.unlink()


def _is_an_input(result: Path, job: Job) -> bool:
    """Whether ``result`` is the row's reference or distorted file."""
    return written_input(result, (job.ref, job.dis)) is not None


def _check_manifest_kept(manifest: Any, jobs: list[Job], output: Path | None) -> None:
    """Refuse a run whose summary, a result or a record (or a failed row's stale result,
    which is removed) would be the manifest file itself."""
    if output is None or not isinstance(manifest, (str, os.PathLike)):
        return
    manifest = os.fspath(manifest)
    shown = "on standard input" if manifest == "-" else f"'{manifest}'"
    written = [output / SUMMARY_NAME]
    for job in jobs:
        result = output / f"{job.name}.json"
        written += [result, job_path(result)]
    for path in written:
        if written_input(path, [manifest]) is not None:
            raise AdmError(
                f"the manifest {shown} is the file the batch would write as '{path}'; "
                "move or rename it, or write the results elsewhere"
            )


def _failed_result(job: Job, error: str) -> PairResult:
    return PairResult(
        name=job.name, ref=job.ref, dis=job.dis, status="failed",
        error=" ".join(error.split()), options=job.options,
    )  # fmt: skip


class _BatchProgress(Progress):
    """Pairs done of the total, with the frames they held and frames per second."""

    frames = 0
    failed = 0

    def render(self, now: float | None = None) -> str:
        elapsed = (self._clock() if now is None else now) - self._start
        rate = self.frames / elapsed if elapsed > 0 else math.nan
        total = max(self.total or 0, 1)
        share = min(self.done / total, 1.0)
        filled = int(share * _BAR_WIDTH)
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        left = (total - self.done) * elapsed / self.done if self.done else math.nan
        done = self.done >= total
        eta = f"in {format_duration(elapsed)}" if done else f"ETA {format_duration(left)}"
        fps = f"{rate:.1f} fps" if math.isfinite(rate) else "-- fps"
        failed = f", {self.failed} failed" if self.failed else ""
        return (
            f"pairs {self.done}/{self.total}{failed} [{bar}] {share:4.0%}  "
            f"{counted(self.frames, 'frame')}  {fps}  {eta}"
        )


def _execute(
    client: Any,
    plan: _Plan,
    results: dict[str, PairResult],
    *,
    backend: str,
    output: Path | None,
    retries: int,
    timeout: float | None,
    progress: bool,
    report: bool,
    keep_frames: bool,
) -> None:
    """Submit one task per ladder, write each pair's JSON as its task's result arrives,
    and add each pair's result to ``results`` as it comes (so that those that came stay
    there if the run is interrupted, and the others are marked so)."""
    from distributed import as_completed

    run_id = uuid.uuid4().hex[:8]
    futures = {}
    for task in plan.tasks:
        key = f"admcuda-batch-{run_id}-{task.index}-{_slug(task.rungs[0][0])}"
        future = client.submit(_score_task, task, backend, key=key, pure=False, retries=retries)
        futures[future.key] = (future, task)
    bar, deliver = _delivery(plan, results, output, progress, report, keep_frames)
    try:
        with bar:
            completed = as_completed(
                [f for f, _ in futures.values()], with_results=True, raise_errors=False,
                timeout=timeout,
            )  # fmt: skip
            for future, value in completed:
                _, task = futures[future.key]  # still pending for _settle until collected
                if future.status == "error":
                    value = value[1]  # (type, exception, traceback)
                future.release()
                deliver(task, value)
                del futures[future.key]
    except TimeoutError:
        why = f"not scored within the timeout of {timeout:g} s"
        _settle([task for _, task in futures.values()], results, plan, why)
        client.cancel([f for f, _ in futures.values()])
    except BaseException:
        _settle([task for _, task in futures.values()], results, plan, "interrupted")
        with contextlib.suppress(Exception):
            client.cancel([f for f, _ in futures.values()])
        raise


def _delivery(
    plan: _Plan,
    results: dict[str, PairResult],
    output: Path | None,
    progress: bool,
    report: bool,
    keep_frames: bool,
) -> tuple[_BatchProgress, Callable[[_Task, Any], None]]:
    """The progress line and the function that takes one task's result (or exception):
    writes its pairs' files, adds them to ``results``, reports failures and warnings."""
    jobs = {job.name: job for job in plan.jobs}
    bar = _BatchProgress(sum(len(t.rungs) for t in plan.tasks), enabled=progress, label="pairs")

    def deliver(task: _Task, value: Any) -> None:
        for result in _collect(task, value, jobs, output, plan.records):
            if result.name in results:  # cannot happen: one key, one result
                continue
            if not keep_frames:
                result = replace_fields(result, frames=[], frame_numbers=[])
            results[result.name] = result
            bar.frames += result.frame_count
            bar.failed += not result.ok
            if report and (result.warnings or not result.ok):
                bar.clear()
                for text in result.warnings:
                    print(f"{PROG}: warning: {result.name}: {text}", file=sys.stderr)
                if not result.ok:
                    print(f"{PROG}: failed: {result.name}: {result.error}", file=sys.stderr)
            bar.update(1)

    return bar, deliver


def _execute_here(
    plan: _Plan,
    results: dict[str, PairResult],
    *,
    backend: str,
    threads: int,
    output: Path | None,
    retries: int,
    progress: bool,
    report: bool,
    keep_frames: bool,
) -> None:
    """:func:`_execute` without a cluster: each task in this process, one after another,
    on ``threads`` cores; an unexpected error is retried ``retries`` times, as Dask
    retries a task."""
    bar, deliver = _delivery(plan, results, output, progress, report, keep_frames)
    pending = list(plan.tasks)
    try:
        with bar:
            while pending:
                task = pending[0]
                for _ in range(retries + 1):
                    try:
                        value: Any = _score_task(task, backend, threads)
                        break
                    except Exception as exc:  # noqa: BLE001 - the pairs' error, as from Dask
                        value = exc
                deliver(task, value)
                pending.pop(0)
    except BaseException:
        _settle(pending, results, plan, "interrupted")
        raise


def _settle(tasks: list[_Task], results: dict[str, PairResult], plan: _Plan, why: str) -> None:
    jobs = {job.name: job for job in plan.jobs}
    for task in tasks:
        for name, _dis in task.rungs:
            results.setdefault(name, _failed_result(jobs[name], why))


def _slug(name: str) -> str:
    text = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return text[:40] or "pair"


def _collect(
    task: _Task,
    value: Any,
    jobs: dict[str, Job],
    output: Path | None,
    records: Mapping[str, dict[str, Any] | None],
) -> list[PairResult]:
    """One task's result (or exception) as per-pair results, each JSON written here."""
    if isinstance(value, BaseException):
        why = _task_error_text(value)
        return [_failed_result(jobs[name], why) for name, _ in task.rungs]
    scored, log = value
    results = []
    for one in scored:
        job = jobs[one.name]
        if one.error is not None:
            results.append(_failed_result(job, one.error))
            if output is not None:
                _discard(output / f"{job.name}.json")
            continue
        path = None
        if output is not None:
            path = output / f"{job.name}.json"
            try:
                _write_pair(one, path, records.get(job.name))
            except (AdmError, OSError) as exc:
                text = str(exc) if isinstance(exc, AdmError) else _os_error_text(exc)
                results.append(_failed_result(job, f"cannot write '{path}': {text}"))
                continue
        results.append(
            PairResult(
                name=job.name,
                ref=job.ref,
                dis=job.dis,
                status="done",
                frames=one.frames,
                frame_numbers=one.frame_numbers,
                width=one.width,
                height=one.height,
                pixel_format=one.pixel_format,
                bitdepth=one.bitdepth,
                options=job.options,
                backend=one.backend,
                fps=one.fps,
                path=path,
                task=log,
                warnings=one.warnings,
                model_outputs=() if job.plan is None else job.plan.model_outputs,
            )
        )
    return results


def _write_pair(one: _Scored, path: Path, record: dict[str, Any] | None) -> None:
    """The pair's JSON, through the call ``admcuda score --json -o`` makes, then beside it
    ``record`` (:func:`job_record`; taken before scoring, so that an input changed during
    the run is scored again next time) with the pair's warnings, for the summary of a
    rerun that keeps it. The old record goes first: a run stopped between the two writes
    leaves a result without a record, which a rerun scores again."""
    job = job_path(path)
    with contextlib.suppress(FileNotFoundError):
        job.unlink()
    write_output(
        "json",
        one.frames,
        path,
        width=one.width or 0,
        height=one.height or 0,
        fps=one.fps,
        frame_numbers=one.frame_numbers,
        aggregate=one.aggregate or None,
    )
    if record is not None:
        record = {**record, RECORD_WARNINGS: list(one.warnings)}
        write_text(job, json.dumps(record, indent=1) + "\n")


def _task_error_text(exc: BaseException) -> str:
    try:
        from distributed import KilledWorker
    except ImportError:  # pragma: no cover - distributed is there when tasks ran
        KilledWorker = ()  # type: ignore[assignment,misc]  # noqa: N806
    if isinstance(exc, KilledWorker):
        return (
            "the workers that ran this pair died each time (KilledWorker); the pair may need "
            "more memory than a worker has"
        )
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


# -- public entry points


def score_many(
    jobs: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    client: Any = None,
    *,
    output: str | os.PathLike[str] | None = None,
    backend: str = "auto",
    force: bool = False,
    retries: int = DEFAULT_RETRIES,
    rungs_per_task: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    progress: bool = False,
    report: bool = False,
    keep_frames: bool = True,
) -> list[PairResult]:
    """Score many pairs on a Dask cluster, ladders sharing their reference pass.

    Parameters
    ----------
    jobs : path or iterable of mapping
        A manifest (CSV or JSON Lines) or mappings with its keys; see :func:`read_jobs`.
    client : distributed.Client, optional
        The cluster to use. Without it (and without ``scheduler``) a local cluster is
        started for the call: ``LocalCUDACluster`` where dask-cuda and GPUs are there,
        else ``LocalCluster`` of ``workers`` CPU processes; where that would be one CPU
        worker (one task, or ``workers=1``) and no ``timeout`` is given, the tasks run in
        this process instead, on every core, with no cluster (nor Dask) needed.
    output : path, optional
        Folder for ``<name>.json`` (as ``admcuda score --json -o`` writes it) and
        ``summary.csv``; created if missing. Without it nothing is written.
    backend : {"auto", "cpu", "cuda"}, optional
        For the tasks. With a local cluster made here, ``auto`` means ``cuda`` on a
        ``LocalCUDACluster`` and ``cpu`` otherwise; on a given client or scheduler each
        worker resolves ``auto`` itself.
    force : bool, optional
        Score pairs whose result file is already in ``output``; kept otherwise.
    retries : int, optional
        Dask retries of a task that raised an unexpected error (input errors are not
        retried: they fail their row).
    rungs_per_task : int, optional
        Split ladders into tasks of at most this many rungs (more parallelism, more
        reference passes); whole ladders by default.
    workers : int, optional
        Workers of the local cluster (default: CPU cores, at most one a task, each task
        on the cores over the workers; or GPUs).
    scheduler : str, optional
        Address (``tcp://head:8786``) or scheduler file (``*.json``) of a running cluster.
    base_dir : path, optional
        Where relative paths point (default: the manifest's folder, or the current one).
    timeout : float, optional
        Seconds to wait for all results; pairs still pending then fail.
    progress : bool, optional
        On stderr: what runs where, the dashboard's address, and a progress line (drawn
        only on a terminal).
    report : bool, optional
        Print each failed pair as one line on stderr.
    keep_frames : bool, optional
        Keep every pair's per-frame scores in the results (default). ``False`` keeps
        only ``frame_count`` and ``adm2`` (the files hold the rest), so that thousands
        of long pairs do not pile up in the client's memory.

    Returns
    -------
    list of PairResult
        One per manifest row, in manifest order: ``status`` (``done``, ``skipped``,
        ``failed``), ``error``, per-frame ``frames``, ``adm2`` pooled,
        ``to_result()`` for an :class:`admcuda.AdmResult`, ``summary()`` for a table row.

    Raises
    ------
    AdmError
        If ``distributed`` is missing, the manifest cannot be read, or the scheduler
        cannot be reached. Failures of single pairs do not raise.
    """
    from admcuda.backends import check_backend

    retries = check_integer("retries", retries, 0)
    if rungs_per_task is not None:
        rungs_per_task = check_integer("rungs_per_task", rungs_per_task, 1)
    if workers is not None:
        workers = check_integer("workers", workers, 1)
    check_backend(backend)
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, numbers.Real)
        or not 0 < timeout < _MAX_TIMEOUT_S
    ):
        raise AdmError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    parsed = read_jobs(jobs, base_dir=base_dir)
    if output is not None:
        _check_manifest_kept(jobs, parsed, Path(os.fspath(output)).expanduser())
    out = _output_folder(output)
    plan = _plan(parsed, out, force=force, rungs_per_task=rungs_per_task)
    results = dict(plan.decided)
    if not keep_frames:
        results = {k: replace_fields(r, frames=[], frame_numbers=[]) for k, r in results.items()}
    if report:
        for result in results.values():
            if not result.ok:
                print(f"{PROG}: failed: {result.name}: {result.error}", file=sys.stderr)
    unscored = "not run"
    try:
        here = None
        if plan.tasks and client is None and scheduler is None and timeout is None:
            here = single_cpu_worker(backend, workers, len(plan.tasks))
        if here is not None:
            if progress:
                _announce_here(plan, here)
            _execute_here(
                plan, results, backend="cpu", threads=here, output=out, retries=retries,
                progress=progress, report=report, keep_frames=keep_frames,
            )  # fmt: skip
        elif plan.tasks:
            require_distributed()
            tasks = len(plan.tasks)
            with client_for(client, scheduler, backend, workers, tasks) as (cl, task_backend, text):
                if progress:
                    _announce(plan, cl, text, task_backend)
                _execute(
                    cl,
                    plan,
                    results,
                    backend=task_backend,
                    output=out,
                    retries=retries,
                    timeout=timeout,
                    progress=progress,
                    report=report,
                    keep_frames=keep_frames,
                )
    except KeyboardInterrupt:  # also before the tasks were submitted
        unscored = "interrupted"
        raise
    finally:
        ordered = [results.get(job.name) or _failed_result(job, unscored) for job in parsed]
        if out is not None:
            write_text(out / SUMMARY_NAME, summary_text(ordered))
    return ordered


def _output_folder(output: str | os.PathLike[str] | None) -> Path | None:
    if output is None:
        return None
    out = Path(os.fspath(output)).expanduser()
    if out.exists() and not out.is_dir():
        raise AdmError(f"output '{out}' is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    if not os.access(out, os.W_OK):
        raise AdmError(f"output folder '{out}' is not writable")
    if (out / SUMMARY_NAME).is_dir():  # found before the pairs are scored, not after
        raise AdmError(f"'{out / SUMMARY_NAME}' is a folder; the summary cannot be written")
    if write_protected(out / SUMMARY_NAME):
        raise AdmError(f"'{out / SUMMARY_NAME}' is a read-only file; the summary cannot be written")
    return out


def _announce_here(plan: _Plan, threads: int) -> None:
    pairs = sum(len(t.rungs) for t in plan.tasks)
    print(
        f"{PROG}: batch: {pairs} pair(s) in {len(plan.tasks)} task(s) in this process "
        f"(one worker's work: no cluster started), {threads} thread(s), backend cpu",
        file=sys.stderr,
    )


def _announce(plan: _Plan, client: Any, where: str, backend: str) -> None:
    pairs = sum(len(t.rungs) for t in plan.tasks)
    kept = sum(r.status == "skipped" for r in plan.decided.values())
    try:
        workers = len(client.scheduler_info(n_workers=-1)["workers"])
    except Exception:  # noqa: BLE001 - older schedulers: no count
        workers = None
    count = f", {workers} worker(s) now" if workers is not None else ""
    extra = f"; {kept} kept from an earlier run" if kept else ""
    print(
        f"{PROG}: batch: {pairs} pair(s) in {len(plan.tasks)} task(s) on {where}{count}, "
        f"backend {backend}{extra}",
        file=sys.stderr,
    )
    link = dashboard(client)
    if link:
        print(f"{PROG}: dashboard: {link}", file=sys.stderr)
    if workers == 0:
        print(
            f"{PROG}: notice: no workers yet; tasks wait for `dask worker` (or `dask cuda "
            "worker`) processes with admcuda installed",
            file=sys.stderr,
        )

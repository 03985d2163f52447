"""What a batch keeps of each pair: :class:`PairResult` (its status, scores and warnings),
:class:`TaskLog` (how its task ran), the ``<name>.job`` record beside each result that
a rerun reads to skip a pair already done, and the summary table."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from admcuda.batch.manifest import Job
from admcuda.errors import AdmError
from admcuda.options import (
    NON_DEBUG_BASE_NAMES,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    feature_names,
)
from admcuda.report.writers import pool

__all__ = [
    "RECORD_WARNINGS",
    "SUMMARY_COLUMNS",
    "SUMMARY_NAME",
    "WARNINGS_SEPARATOR",
    "PairResult",
    "TaskLog",
    "job_path",
    "job_record",
    "load_done",
    "summary_text",
]

SPREAD = ("p5", "median", "p95", "max", "stdev")
"""What the summary gives of adm2 and the model's score beside libvmaf's mean, harmonic
mean and min (:func:`admcuda.report.stats.frame_stats`)."""

SUMMARY_COLUMNS: tuple[str, ...] = (
    "name", "ref", "dis", "frames", "adm2_mean", "adm2_harmonic_mean", "adm2_min",
    "model", "model_mean", "model_harmonic_mean", "model_min", "status", "error", "warnings",
    *(f"adm2_{k}" for k in SPREAD), *(f"model_{k}" for k in SPREAD),
)  # fmt: skip
WARNINGS_SEPARATOR = " | "  # between a pair's warnings in its summary row
SUMMARY_NAME = "summary.csv"


# -- results


@dataclass(frozen=True)
class TaskLog:
    """What one task attempt did, as it reported it (the attempt whose result arrived).

    Attributes
    ----------
    task : int
        The task's number in this run.
    pid : int
        Worker process.
    worker : str or None
        The worker's address.
    ref_passes : int
        How many times the task ran the reference through the pipeline: 1 for a
        ladder, more where a failed ladder was scored again rung by rung.
    pairs : int
    seconds : float
        Wall time of the scoring.
    """

    task: int
    pid: int
    worker: str | None
    ref_passes: int
    pairs: int
    seconds: float


@dataclass(frozen=True)
class PairResult:
    """The outcome of one manifest row, as :func:`score_many` returns it.

    Attributes
    ----------
    name, ref, dis : str
        As in the manifest (paths absolute).
    status : {"done", "skipped", "failed"}
        ``skipped``: a result file from an earlier run was kept (and read back).
    error : str or None
        One line, for a failed row.
    frames : list of dict of str to float
        Per-frame scores keyed by libvmaf's output names; empty when failed.
    frame_numbers : list of int
    width, height, pixel_format, bitdepth
        Geometry of the run (None for skipped or failed rows).
    options : AdmOptions or None
    backend : str or None
        The backend that scored the pair.
    fps : float
        Frames per second of the task's run (NaN when unknown).
    path : pathlib.Path or None
        The JSON result file, when an output folder was given and the row did not fail.
    task : TaskLog or None
        The task attempt that delivered the scores.
    warnings : tuple of str
        Warnings the run logged (inputs of different lengths...); for a skipped row, those
        its earlier run recorded (none from a record older than that).
    frame_count : int
        Frames scored (kept when ``frames`` are not, see ``keep_frames``).
    adm2 : dict of str to float or None
        ``integer_adm2`` (whatever its option suffix) pooled as libvmaf pools it:
        ``{"min", "max", "mean", "harmonic_mean"}``; None for a failed row.
    model_outputs : tuple of str
        The names of the row's model scores (``vmaf``, or each model's ``name=``).
    model : dict of str to float or None
        The first model's score pooled as ``adm2`` is; None without a model.
    adm2_stats, model_stats : dict of str to float or None
        The same scores' :func:`admcuda.report.stats.frame_stats`: libvmaf's four and the
        median, standard deviation, 5th and 95th percentiles over the frames.
    """

    name: str
    ref: str
    dis: str
    status: str
    error: str | None = None
    frames: list[dict[str, float]] = field(default_factory=list)
    frame_numbers: list[int] = field(default_factory=list)
    width: int | None = None
    height: int | None = None
    pixel_format: str | None = None
    bitdepth: int | None = None
    options: AdmOptions | None = None
    backend: str | None = None
    fps: float = math.nan
    path: Path | None = None
    task: TaskLog | None = None
    warnings: tuple[str, ...] = ()
    frame_count: int = 0
    adm2: dict[str, float] | None = None
    model_outputs: tuple[str, ...] = ()
    model: dict[str, float] | None = None
    adm2_stats: dict[str, float] | None = None
    model_stats: dict[str, float] | None = None

    def __post_init__(self) -> None:
        from admcuda.report.stats import frame_stats

        if not self.frames:
            return
        object.__setattr__(self, "frame_count", len(self.frames))
        name = _adm2_name(self.frames)
        if name is not None:
            scores = [frame[name] for frame in self.frames]
            object.__setattr__(self, "adm2", pool(scores))
            object.__setattr__(self, "adm2_stats", frame_stats(scores))
        if self.model_outputs and self.model_outputs[0] in self.frames[0]:
            scores = [frame[self.model_outputs[0]] for frame in self.frames]
            object.__setattr__(self, "model", pool(scores))
            object.__setattr__(self, "model_stats", frame_stats(scores))

    @property
    def ok(self) -> bool:
        """True unless the row failed."""
        return self.status != "failed"

    def to_result(self) -> Any:
        """The scores as an :class:`admcuda.AdmResult` (pooling, ``to_dataframe``,
        writers).

        Raises
        ------
        AdmError
            For a failed row.
        """
        from admcuda.report.result import AdmResult

        if not self.ok:
            raise AdmError(f"{self.name}: {self.error}")
        if self.frame_count and not self.frames:
            raise AdmError(f"{self.name}: the frames were not kept (keep_frames=False)")
        metadata = {
            "width": self.width, "height": self.height, "bitdepth": self.bitdepth,
            "pixel_format": self.pixel_format, "options": self.options,
            "backend": self.backend, "ref_path": self.ref, "dis_path": self.dis,
            "fps": self.fps, "source": self.path,
        }  # fmt: skip
        return AdmResult(self.frames, metadata, frame_numbers=self.frame_numbers)

    def summary(self) -> dict[str, Any]:
        """The row of ``summary.csv`` as a dict (keys :data:`SUMMARY_COLUMNS`), e.g.
        for ``pandas.DataFrame([r.summary() for r in results])``."""
        pooled = self.adm2 or {}
        model = self.model or {}
        spread = {f"adm2_{k}": (self.adm2_stats or {}).get(k) for k in SPREAD}
        spread.update({f"model_{k}": (self.model_stats or {}).get(k) for k in SPREAD})
        return {
            "name": self.name,
            "ref": self.ref,
            "dis": self.dis,
            "frames": self.frame_count if self.ok else None,
            "adm2_mean": pooled.get("mean"),
            "adm2_harmonic_mean": pooled.get("harmonic_mean"),
            "adm2_min": pooled.get("min"),
            "model": self.model_outputs[0] if self.model_outputs else None,
            "model_mean": model.get("mean"),
            "model_harmonic_mean": model.get("harmonic_mean"),
            "model_min": model.get("min"),
            "status": self.status,
            "error": self.error,
            "warnings": WARNINGS_SEPARATOR.join(self.warnings) or None,
            **spread,
        }


def _adm2_name(frames: Sequence[Mapping[str, float]]) -> str | None:
    if not frames:
        return None
    for name in frames[0]:
        if name == "integer_adm2" or name.startswith("integer_adm2_"):
            return name
    return None


def _expected_names(opts: AdmOptions) -> list[str]:
    names = feature_names(opts)
    return [names[base] for base in (OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES)]


def job_path(result: Path) -> Path:
    """Where the record of what ``result`` (``<name>.json``) scored is kept: ``<name>.job``."""
    return result.with_suffix(".job")


# The key of a record's warnings: what the pair gave when it was scored, written with
# the result and left out when a record is matched against a row.
RECORD_WARNINGS = "warnings"


def job_record(job: Job) -> dict[str, Any] | None:
    """What a result of ``job`` is the score of: both paths, the row's geometry and every
    option, and each input's size and modification time (None where one cannot be read:
    the pair is then scored again)."""
    import dataclasses

    inputs = {}
    for key in ("ref", "dis"):
        try:
            st = os.stat(getattr(job, key))
        except OSError:
            return None
        inputs[key] = [st.st_size, st.st_mtime_ns]
    record = {
        "ref": job.ref, "dis": job.dis, "width": job.width, "height": job.height,
        "pixel_format": job.pixel_format, "bitdepth": job.bitdepth,
        "options": dataclasses.asdict(job.options), "scale": job.scale,
        "ignore_name": job.ignore_name, "inputs": inputs,
    }  # fmt: skip
    if job.model:
        record["model"] = list(job.model)
    if job.feature:
        record["feature"] = list(job.feature)
    # only where the row gives them, so that a rerun keeps results scored before the
    # columns existed
    if job.autorotate is not None:
        record["autorotate"] = job.autorotate
    if job.allow_partial_frame:
        record["allow_partial_frame"] = True
    for key, default in (
        ("frame_cnt", None), ("frame_skip_ref", 0), ("frame_skip_dist", 0), ("subsample", 1),
    ):  # fmt: skip
        if getattr(job, key) != default:
            record[key] = getattr(job, key)
    return json.loads(json.dumps(record))  # as it reads back


def load_done(job: Job, path: Path, want: dict[str, Any] | None) -> PairResult | None:
    """The earlier run's result for ``job``, if its file parses, has the output names the
    row's options give and its record (``<name>.job``) says it scored this row's inputs,
    as they are now, with this row's geometry and options; None otherwise (the pair is
    scored again)."""
    from admcuda.report.result import AdmResult

    if not path.is_file() or want is None:
        return None
    try:
        record = json.loads(job_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    # what the pair gave when it ran; a record from before they were kept has none
    warnings = record.pop(RECORD_WARNINGS, [])
    if record != want or not (
        isinstance(warnings, list) and all(isinstance(text, str) for text in warnings)
    ):
        return None
    plan = job.plan
    try:
        result = AdmResult.from_json(path, adm_only=plan is None)
    except (AdmError, OSError, ValueError):
        return None
    expected = _expected_names(job.options) if plan is None else plan.output_order()
    if not len(result) or list(result.frames[0]) != expected:
        return None
    return PairResult(
        name=job.name, ref=job.ref, dis=job.dis, status="skipped",
        frames=[dict(f) for f in result.frames], frame_numbers=list(result.frame_numbers),
        options=job.options, fps=result.fps, path=path, warnings=tuple(warnings),
        model_outputs=() if plan is None else plan.model_outputs,
    )  # fmt: skip


def summary_text(results: Sequence[PairResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SUMMARY_COLUMNS)
    for result in results:
        row = result.summary()
        writer.writerow(
            ""
            if row[c] is None
            else repr(float(row[c]))
            if isinstance(row[c], float)
            else " ".join(str(row[c]).split())
            for c in SUMMARY_COLUMNS
        )
    return out.getvalue()

"""``admcuda batch``: many reference/distorted pairs from a manifest, scored on Dask.

Usage::

    admcuda batch jobs.csv -o results/                               # a local cluster
    admcuda batch jobs.csv -o results/ --scheduler tcp://head:8786   # an existing one

The manifest is CSV with a header row, or JSON Lines with the same keys (by the
suffix ``.jsonl``/``.ndjson``, or by content). ``ref`` and ``dis`` are required;
``name``, ``width``, ``height``, ``pixel_format``, ``bitdepth`` and ``options``
(libvmaf's ``K=V:K=V``) are optional. Relative paths resolve against the manifest's
folder, and every worker must see the inputs at those paths.

How the work is cut and who writes what:

- Rows that share a reference, geometry and options form a ladder: one Dask task
  scores them with the reference read once (``admcuda.ladder.run_ladder``), and returns
  one record per pair, each with its own status. A rung that cannot be read fails
  alone; a ladder that fails as a whole is scored again rung by rung, so that each
  row gets its own error.
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
import csv
import io
import json
import logging
import math
import numbers
import os
import re
import stat
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from admcuda.api import api_message
from admcuda.cli.tool import PROG
from admcuda.errors import AdmError
from admcuda.io.ffmpeg import check_scaler
from admcuda.io.raw import BITDEPTHS, PIXEL_FORMATS
from admcuda.numeric import check_integer, decimal_integer, is_integer
from admcuda.options import (
    NON_DEBUG_BASE_NAMES,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    feature_names,
    resolve_options,
)
from admcuda.progress import Progress, format_duration
from admcuda.report.writers import is_same_file, pool, write_output, write_text

__all__ = [
    "SUMMARY_COLUMNS",
    "Job",
    "PairResult",
    "TaskLog",
    "require_distributed",
    "read_jobs",
    "score_many",
]

INSTALL_HINT = 'admcuda batch needs Dask: pip install "admcuda[dask]"'
REQUIRED_COLUMNS: tuple[str, ...] = ("ref", "dis")
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "name", "width", "height", "pixel_format", "bitdepth", "options", "scale", "ignore_name",
)  # fmt: skip
SUMMARY_COLUMNS: tuple[str, ...] = (
    "name", "ref", "dis", "frames", "adm2_mean", "adm2_harmonic_mean", "adm2_min",
    "status", "error", "warnings",
)  # fmt: skip
WARNINGS_SEPARATOR = " | "  # between a pair's warnings in its summary row
SUMMARY_NAME = "summary.csv"
STDIN_MANIFEST = "-"  # the manifest read from standard input
_MAX_TIMEOUT_S = 1e9  # seconds: about 30 years, and a float every clock takes
DEFAULT_RETRIES = 2

_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_BAR_WIDTH = 16
_log = logging.getLogger("admcuda")


# -- manifest


@dataclass(frozen=True)
class Job:
    """One manifest row: a pair to score, or the reason it cannot be.

    Attributes
    ----------
    row : int
        Line of the row in the manifest (1 is a CSV's header), or 1-based position
        in a list of jobs.
    name : str
        Unique among the jobs; the result file is ``<name>.json``.
    named : bool
        Whether the manifest gave the name (else it is derived from ``dis``).
    ref, dis : str
        Absolute paths.
    width, height, pixel_format, bitdepth
        Raw YUV geometry, None where the row leaves it to the inputs.
    options : AdmOptions
    error : str or None
        Why the row cannot be scored (a bad value or option); None if it can.
    scale : str or None
        The ffmpeg scaler that brings a distorted input of another size to the
        reference's (``admcuda score --scale``); None: sizes must match.
    ignore_name : bool
        Do not check a raw file's name against the geometry (``--ignore-name``).
    """

    row: int
    name: str
    ref: str
    dis: str
    width: int | None = None
    height: int | None = None
    pixel_format: str | None = None
    bitdepth: int | None = None
    options: AdmOptions = field(default_factory=AdmOptions)
    error: str | None = None
    named: bool = False
    scale: str | None = None
    ignore_name: bool = False

    @property
    def ladder_key(self) -> tuple[Any, ...]:
        """Rows with equal keys share a reference pass."""
        return (
            self.ref, self.width, self.height, self.pixel_format, self.bitdepth, self.options,
            self.scale, self.ignore_name,
        )  # fmt: skip


def read_jobs(
    jobs: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> list[Job]:
    """Read a manifest (CSV or JSON Lines) or a list of dicts into :class:`Job` rows.

    Parameters
    ----------
    jobs : path or iterable of mapping
        A manifest file, or mappings with the manifest's keys (``ref``, ``dis``,
        optional ``name``, ``width``, ``height``, ``pixel_format``, ``bitdepth``,
        ``options`` as ``"K=V:K=V"`` or a mapping, ``scale`` an ffmpeg scaler,
        ``ignore_name`` true or false).
    base_dir : path, optional
        Where relative paths point: the manifest's folder by default, the current
        folder for mappings.

    Returns
    -------
    list of Job
        In manifest order. Names derived from ``dis`` are made unique (``a``, ``a_2``,
        ``a_3``...), never taking a name the manifest gives; a given name that an
        earlier row gave too fails its row. A row with a bad value carries its
        ``error`` instead of failing the whole list.

    Raises
    ------
    AdmError
        If the manifest cannot be read, has no rows, lacks ``ref``/``dis``, has an
        unknown column, or a JSON line that is not an object.
    """
    if isinstance(jobs, (str, os.PathLike)):
        path = Path(os.fspath(jobs)).expanduser()
        records = _read_manifest(path)
        base = Path(base_dir) if base_dir is not None else _manifest_folder(path)
        where = f"manifest '{path}'"
    else:
        if isinstance(jobs, Mapping) or not isinstance(jobs, Iterable):
            raise AdmError(
                f"jobs must be a manifest path or a list of mappings, got {type(jobs).__name__}"
            )
        records = []
        for row, record in enumerate(jobs, start=1):
            if not isinstance(record, Mapping):
                raise AdmError(f"job {row} is a {type(record).__name__}, not a mapping")
            records.append((row, dict(record)))
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        where = "jobs"
    if not records:
        raise AdmError(f"{where} has no rows")
    _check_columns({key for _, record in records for key in record}, where)
    parsed = [_job(row, record, base.absolute()) for row, record in records]
    return _unique_names(parsed)


def _manifest_folder(path: Path) -> Path:
    """Where a manifest's relative paths point: the folder of a manifest file; the current
    folder for standard input (``-``), a pipe, or a file read through /dev or /proc."""
    if str(path) == STDIN_MANIFEST:
        return Path.cwd()
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = False
    parent = path.absolute().parent
    if not regular or parent.parts[:2] in (("/", "dev"), ("/", "proc")):
        return Path.cwd()
    return parent


def _read_manifest(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        if str(path) == STDIN_MANIFEST:
            text = sys.stdin.buffer.read().decode("utf-8-sig")
        else:
            text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise AdmError(f"manifest '{path}' not found") from None
    except IsADirectoryError:
        raise AdmError(f"manifest '{path}' is a directory") from None
    except UnicodeDecodeError as exc:
        raise AdmError(f"manifest '{path}' is not UTF-8 text: {exc.reason}") from None
    if not text.strip():
        raise AdmError(f"manifest '{path}' is empty")
    suffix = path.suffix.lower()
    jsonl = suffix in _JSONL_SUFFIXES or (suffix != ".csv" and text.lstrip().startswith("{"))
    return _read_jsonl(text, path) if jsonl else _read_csv(text, path)


def _read_csv(text: str, path: Path) -> list[tuple[int, dict[str, Any]]]:
    # The header is the first line that is not blank (csv would take a blank one as an
    # empty header); line numbers stay the file's.
    lines = text.splitlines(keepends=True)
    skipped = next((k for k, line in enumerate(lines) if line.strip()), len(lines))
    # strict: a quote left open runs to the end of the file, which Python's csv otherwise
    # takes as one field holding every later row
    reader = csv.DictReader(io.StringIO("".join(lines[skipped:])), restkey="\0extra", strict=True)
    if reader.fieldnames is None:
        raise AdmError(f"manifest '{path}' is empty")
    reader.fieldnames = [name.strip() for name in reader.fieldnames]
    _check_columns(set(reader.fieldnames), f"manifest '{path}'")
    twice = sorted({name for name in reader.fieldnames if reader.fieldnames.count(name) > 1})
    if twice:  # DictReader would keep the last one's cells
        raise AdmError(f"manifest '{path}' has column {', '.join(map(repr, twice))} twice")
    records = []
    read = skipped + reader.line_num  # the lines read so far
    try:
        for record in reader:
            read = skipped + reader.line_num
            if not any((v or "").strip() for k, v in record.items() if k != "\0extra"):
                continue  # a blank line
            records.append((read, record))
    except csv.Error as exc:
        raise AdmError(
            f"manifest '{path}' line {read + 1}: {exc} (a quote left open?)"
            if "end of data" in str(exc)
            else f"manifest '{path}' line {skipped + reader.line_num}: {exc}"
        ) from None
    return records


def _read_jsonl(text: str, path: Path) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, object_pairs_hook=_KeyedTwice.build)
        except json.JSONDecodeError as exc:
            raise AdmError(f"manifest '{path}' line {number}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise AdmError(f"manifest '{path}' line {number}: nested too deeply") from None
        if not isinstance(record, dict):
            raise AdmError(f"manifest '{path}' line {number}: not a JSON object")
        twice = _key_given_twice(record)
        if twice is not None:
            key, where = twice
            inside = f" in {where}" if where else ""
            raise AdmError(f"manifest '{path}' line {number}: key {key!r} given twice{inside}")
        records.append((number, record))
    return records


class _KeyedTwice(dict):  # type: ignore[type-arg]
    """A JSON object that gave ``key`` twice (``json`` would keep the last value). The
    hook builds objects inside out, so it cannot know where one sits; the line is walked
    afterwards (:func:`_key_given_twice`) to say where."""

    key: str

    @staticmethod
    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        twice = next((key for k, key in enumerate(keys) if key in keys[:k]), None)
        if twice is None:
            return dict(pairs)
        record = _KeyedTwice(pairs)
        record.key = twice
        return record


_JQ_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _key_given_twice(value: Any) -> tuple[str, str] | None:
    """The first key given twice in a parsed JSON value, outermost first, and where that
    object is, as a jq path (``.options.nvd``, ``.a[2]``; "" for the value itself).
    A loop, not recursion: json nests as deep as the recursion limit allows."""
    todo = [("", value)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, _KeyedTwice):
            return value.key, where
        if isinstance(value, dict):
            items = [
                (where + (f".{key}" if _JQ_NAME.fullmatch(key) else f"[{json.dumps(key)}]"), v)
                for key, v in value.items()
            ]
        elif isinstance(value, list):
            items = [(f"{where}[{k}]", v) for k, v in enumerate(value)]
        else:
            continue
        todo.extend(reversed(items))  # popped in document order
    return None


def _check_columns(columns: set[str], where: str) -> None:
    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS) | {"\0extra"}
    unknown = sorted(columns - known)
    if unknown:
        raise AdmError(
            f"{where} has unknown column {', '.join(repr(c) for c in unknown)}; "
            f"columns are {', '.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}"
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise AdmError(f"{where} has no {' or '.join(missing)} column")


def _text(value: Any) -> str | None:
    """A cell as stripped text; None for empty or missing."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _job(row: int, record: Mapping[str, Any], base: Path) -> Job:
    ref, dis = _text(record.get("ref")), _text(record.get("dis"))
    name = _text(record.get("name"))
    paths = {
        key: os.path.normpath(base / Path(value).expanduser()) if value else ""
        for key, value in (("ref", ref), ("dis", dis))
    }
    fallback = name or (Path(dis).stem if dis else f"row{row}")
    fields: dict[str, Any] = {}
    try:
        if record.get("\0extra"):
            raise AdmError("more fields than the header has columns")
        for key in ("ref", "dis", "name", "scale"):  # JSON: not a list, an object, true...
            value = record.get(key)
            number = key == "name" and is_integer(value)  # a JSON "name": 1 is the name "1"
            path = key in ("ref", "dis") and isinstance(value, os.PathLike)
            if not (value is None or isinstance(value, str) or path or number):
                raise AdmError(f"{key} must be a string, got {type(value).__name__} {value!r}")
        for key in REQUIRED_COLUMNS:
            if not paths[key]:
                raise AdmError(f"no {key}")
        for key, value in (("name", name), ("ref", ref), ("dis", dis)):
            if value is not None and any(ord(c) < 32 or ord(c) == 127 for c in value):
                raise AdmError(f"{key} {value!r} holds a control character (a quote left open?)")
        if name is not None and not _plain_name(name):
            raise AdmError(f"name {name!r} is not a plain file name")
        for key in ("width", "height", "bitdepth"):
            fields[key] = _integer(record.get(key), key)
        fmt = _text(record.get("pixel_format"))
        if fmt is not None and fmt not in PIXEL_FORMATS:
            raise AdmError(f"pixel_format {fmt!r} is not one of {', '.join(PIXEL_FORMATS)}")
        if fields["bitdepth"] is not None and fields["bitdepth"] not in BITDEPTHS:
            raise AdmError(f"bitdepth {fields['bitdepth']} is not one of {BITDEPTHS}")
        fields["pixel_format"] = fmt
        fields["options"] = _options(record.get("options"))
        scale = _text(record.get("scale"))
        fields["scale"] = None if scale is None else check_scaler(scale)
        fields["ignore_name"] = _true_false(record.get("ignore_name"), "ignore_name")
    except AdmError as exc:
        fields = {"error": str(exc)}
    return Job(
        row=row, name=fallback, ref=paths["ref"], dis=paths["dis"], named=name is not None,
        **fields,
    )  # fmt: skip


def _true_false(value: Any, key: str) -> bool:
    """A cell as True or False: a JSON bool, or ``true``/``false`` as libvmaf's bool options
    are written; empty or missing is False."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip() in ("", "true", "false"):
        return value.strip() == "true"
    raise AdmError(f"{key} must be true or false, got {value!r}")


def _plain_name(name: str) -> bool:
    """Whether ``<name>.json`` names a file in the output folder itself."""
    return (
        name not in (".", "..") and not any(c in name for c in "/\\\0") and name == Path(name).name
    )


def _integer(value: Any, key: str) -> int | None:
    """A cell as an integer: decimal digits, as option values are read (Python's int()
    would also take '5_76' and non-ASCII digits)."""
    if is_integer(value):
        return int(value)
    text = _text(value)
    if text is None:
        return None
    value = decimal_integer(text)
    if value is None:
        raise AdmError(f"{key} {text!r} is not an integer")
    return value


def _options(value: Any) -> AdmOptions:
    """libvmaf's ``K=V:K=V`` (or, in JSON, an object) as options, as ``--option`` reads it."""
    if not (value is None or isinstance(value, (str, Mapping, AdmOptions))):
        raise AdmError(
            f"options must be a string or an object, got {type(value).__name__} {value!r}"
        )
    try:
        return resolve_options(value)
    except AdmError as exc:
        raise AdmError(f"options {str(value)!r}: {exc}") from None


def _unique_names(jobs: list[Job]) -> list[Job]:
    """Names in manifest order. A name the manifest gives belongs to its first row; a
    later row giving it fails (under a name of its own). Derived names that repeat are
    renamed ``name_2``, ``name_3``..., passing over every given name. The same manifest
    always gives the same names, so a rerun finds its files."""
    given = {job.name for job in jobs if job.named}
    taken: set[str] = set()
    unique = []
    for job in jobs:
        if job.named and job.name not in taken:
            taken.add(job.name)
            unique.append(job)
            continue
        name, k = job.name, 1
        while name in taken or name in given:
            k += 1
            name = f"{job.name}_{k}"
        taken.add(name)
        if job.named:
            job = _replace(job, error=f"name {job.name!r} given twice")
        unique.append(job if name == job.name else _replace(job, name=name))
    return unique


def _replace(item: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(item, **changes)


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

    def __post_init__(self) -> None:
        if not self.frames:
            return
        object.__setattr__(self, "frame_count", len(self.frames))
        name = _adm2_name(self.frames)
        if name is not None:
            object.__setattr__(self, "adm2", pool([frame[name] for frame in self.frames]))

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
        return {
            "name": self.name,
            "ref": self.ref,
            "dis": self.dis,
            "frames": self.frame_count if self.ok else None,
            "adm2_mean": pooled.get("mean"),
            "adm2_harmonic_mean": pooled.get("harmonic_mean"),
            "adm2_min": pooled.get("min"),
            "status": self.status,
            "error": self.error,
            "warnings": WARNINGS_SEPARATOR.join(self.warnings) or None,
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


def _job_path(result: Path) -> Path:
    """Where the record of what ``result`` (``<name>.json``) scored is kept: ``<name>.job``."""
    return result.with_suffix(".job")


# The key of a record's warnings: what the pair gave when it was scored, written with
# the result and left out when a record is matched against a row.
_RECORD_WARNINGS = "warnings"


def _job_record(job: Job) -> dict[str, Any] | None:
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
    return json.loads(json.dumps(record))  # as it reads back


def _load_done(job: Job, path: Path, want: dict[str, Any] | None) -> PairResult | None:
    """The earlier run's result for ``job``, if its file parses, has the output names the
    row's options give and its record (``<name>.job``) says it scored this row's inputs,
    as they are now, with this row's geometry and options; None otherwise (the pair is
    scored again)."""
    from admcuda.report.result import AdmResult

    if not path.is_file() or want is None:
        return None
    try:
        record = json.loads(_job_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    # what the pair gave when it ran; a record from before they were kept has none
    warnings = record.pop(_RECORD_WARNINGS, [])
    if record != want or not (
        isinstance(warnings, list) and all(isinstance(text, str) for text in warnings)
    ):
        return None
    try:
        result = AdmResult.from_json(path)
    except (AdmError, OSError, ValueError):
        return None
    if not len(result) or list(result.frames[0]) != _expected_names(job.options):
        return None
    return PairResult(
        name=job.name, ref=job.ref, dis=job.dis, status="skipped",
        frames=[dict(f) for f in result.frames], frame_numbers=list(result.frame_numbers),
        options=job.options, fps=result.fps, path=path, warnings=tuple(warnings),
    )  # fmt: skip


def _summary_text(results: Sequence[PairResult]) -> str:
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


def _score_task(task: _Task, backend: str) -> tuple[list[_Scored], TaskLog]:
    """Score a ladder on this worker; returns one record per rung and the attempt's log.

    Errors the inputs cause (missing, unreadable, mismatched) become that rung's
    error; anything else raises, for Dask to retry.
    """
    capture = _Capture()
    _log.addHandler(capture)
    start = time.perf_counter()
    passes = 0
    try:
        dis = [path for _, path in task.rungs]
        try:
            passes += 1
            scored = _with_warnings(_run_rungs(task, dis, backend), task, capture.take())
        except (AdmError, OSError) as exc:
            if len(dis) == 1:
                scored = _with_warnings([_failed(task, 0, exc)], task, capture.take())
            else:
                capture.take()  # each rung's own pass below logs again what concerns it
                scored = []
                for k, path in enumerate(dis):
                    try:
                        passes += 1
                        part = _run_rungs(task, [path], backend, first=k)
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


def _run_rungs(task: _Task, dis: list[str], backend: str, *, first: int = 0) -> list[_Scored]:
    from admcuda.ladder import run_ladder

    start = time.perf_counter()
    run = run_ladder(
        task.ref, dis, width=task.width, height=task.height, pixel_format=task.pixel_format,
        bitdepth=task.bitdepth, opts=task.options, backend=backend, threads=1,
        scale=task.scale, ignore_name=task.ignore_name,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    errors = [
        None if error is None else api_message(error)
        for error in (getattr(run, "errors", None) or [None] * len(dis))
    ]
    used = getattr(run, "backend", backend)
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
        )
        for k, (frames, numbers, error) in enumerate(
            zip(run.frames, run.frame_numbers, errors, strict=True)
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
    logs each warning once (admcuda._open_rungs holds back what a ladder's reopening would
    log again). A path alone is not enough: a rung's distorted file may be the reference."""
    paths = dict(task.rungs)

    def names(text: str, one: _Scored) -> bool:
        return f"distorted file {paths[one.name]!r}" in text

    out = []
    for one in scored:
        mine = [t for t in messages if names(t, one) or not any(names(t, o) for o in scored)]
        out.append(_replace(one, warnings=tuple(mine)) if mine else one)
    return out


def _os_error_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: '{exc.filename}'"
    return str(exc)


def _worker_address() -> str | None:
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
    # by name, each row to score's record (_job_record), taken before its task runs
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
            if result is not None and _plain_name(job.name) and not _is_an_input(result, job):
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
            records[job.name] = _job_record(job)
            kept = None if force else _load_done(job, result, records[job.name])
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
    for stale in (result, _job_path(result)):
        with contextlib.suppress(OSError):
            stale.unlink()


def _is_an_input(result: Path, job: Job) -> bool:
    """Whether ``result`` is the row's reference or distorted file."""
    return any(is_same_file(result, path) for path in (job.ref, job.dis))


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
            f"{self.frames} frames  {fps}  {eta}"
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

    jobs = {job.name: job for job in plan.jobs}
    run_id = uuid.uuid4().hex[:8]
    futures = {}
    for task in plan.tasks:
        key = f"admcuda-batch-{run_id}-{task.index}-{_slug(task.rungs[0][0])}"
        future = client.submit(_score_task, task, backend, key=key, pure=False, retries=retries)
        futures[future.key] = (future, task)
    pairs = sum(len(task.rungs) for task in plan.tasks)
    bar = _BatchProgress(pairs, enabled=progress, label="pairs")
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
                for result in _collect(task, value, jobs, output, plan.records):
                    if result.name in results:  # cannot happen: one key, one result
                        continue
                    if not keep_frames:
                        result = _replace(result, frames=[], frame_numbers=[])
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
                del futures[future.key]
    except TimeoutError:
        _settle(futures, results, jobs, f"not scored within the timeout of {timeout:g} s")
        client.cancel([f for f, _ in futures.values()])
    except BaseException:
        _settle(futures, results, jobs, "interrupted")
        with contextlib.suppress(Exception):
            client.cancel([f for f, _ in futures.values()])
        raise


def _settle(
    futures: dict[Any, tuple[Any, _Task]],
    results: dict[str, PairResult],
    jobs: dict[str, Job],
    why: str,
) -> None:
    for _, task in futures.values():
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
            )
        )
    return results


def _write_pair(one: _Scored, path: Path, record: dict[str, Any] | None) -> None:
    """The pair's JSON, through the call ``admcuda score --json -o`` makes, then beside it
    ``record`` (:func:`_job_record`; taken before scoring, so that an input changed during
    the run is scored again next time) with the pair's warnings, for the summary of a
    rerun that keeps it. The old record goes first: a run stopped between the two writes
    leaves a result without a record, which a rerun scores again."""
    from admcuda.version import __version__

    job = _job_path(path)
    with contextlib.suppress(FileNotFoundError):
        job.unlink()
    write_output(
        "json",
        one.frames,
        path,
        version=__version__,
        width=one.width or 0,
        height=one.height or 0,
        fps=one.fps,
        frame_numbers=one.frame_numbers,
    )
    if record is not None:
        record = {**record, _RECORD_WARNINGS: list(one.warnings)}
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


# -- clusters


def require_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise AdmError(INSTALL_HINT) from None


def _gpu_count() -> int:
    """GPUs that dask-cuda would use (0 without dask-cuda or a driver)."""
    try:
        from dask_cuda.utils import get_n_gpus
    except ImportError:
        return 0
    try:
        return int(get_n_gpus())
    except Exception:  # noqa: BLE001 - no driver, no NVML: no GPUs
        return 0


@contextlib.contextmanager
def _local_cluster(backend: str, workers: int | None) -> Iterator[tuple[Any, str, str]]:
    """(cluster, task backend, description): ``LocalCUDACluster`` where GPUs and dask-cuda
    are there (and the backend allows), else a ``LocalCluster`` of CPU processes."""
    from distributed import LocalCluster

    quiet = {"silence_logs": logging.ERROR}
    if backend in ("auto", "cuda"):
        gpus = _gpu_count()
        if gpus:
            from dask_cuda import LocalCUDACluster

            n = min(workers, gpus) if workers else gpus
            with LocalCUDACluster(n_workers=n, threads_per_worker=1, **quiet) as cluster:
                yield cluster, "cuda", f"LocalCUDACluster, {n} GPU worker(s)"
            return
        if backend == "cuda":
            n = workers or 1
            with LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, **quiet
            ) as cluster:
                yield cluster, "cuda", f"LocalCluster, {n} worker(s) on the current GPU"
            return
    from admcuda.backends.cpu import default_threads

    n = workers or default_threads()
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, **quiet) as cluster:
        yield cluster, "cpu", f"LocalCluster, {n} CPU worker process(es)"


@contextlib.contextmanager
def _client_for(
    client: Any, scheduler: str | None, backend: str, workers: int | None
) -> Iterator[tuple[Any, str, str]]:
    """(client, task backend, description) for a given client, a scheduler address or
    scheduler file, or a local cluster made here (closed on exit)."""
    if client is not None:
        yield client, backend, "the given client"
        return
    from distributed import Client

    if scheduler is not None:
        key = "scheduler_file" if scheduler.endswith(".json") else "address"
        if key == "scheduler_file":
            _check_scheduler_file(scheduler)
        try:
            remote = Client(**{key: scheduler}, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise AdmError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
        with remote:
            yield remote, backend, f"scheduler {scheduler}"
        return
    with _local_cluster(backend, workers) as (cluster, task_backend, text):
        with Client(cluster) as local:
            yield local, task_backend, text


def _check_scheduler_file(path: str) -> None:
    """Refuse a scheduler file that is missing (Dask would wait for it to appear, with no
    end) or holds no scheduler address."""
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdmError(f"scheduler file '{path}' not found") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AdmError(f"scheduler file '{path}' cannot be read: {exc}") from None
    if not isinstance(info, dict) or not isinstance(info.get("address"), str):
        raise AdmError(f"scheduler file '{path}' holds no scheduler address")


def _dashboard(client: Any) -> str | None:
    try:
        link = client.dashboard_link
    except Exception:  # noqa: BLE001 - a scheduler without the HTTP service
        return None
    import importlib.util

    if importlib.util.find_spec("bokeh") is None:
        link += " (pip install bokeh to view it)"
    return link


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
        else ``LocalCluster`` of ``workers`` CPU processes.
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
        Workers of the local cluster (default: CPU cores, or GPUs).
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
    out = _output_folder(output)
    plan = _plan(parsed, out, force=force, rungs_per_task=rungs_per_task)
    results = dict(plan.decided)
    if not keep_frames:
        results = {k: _replace(r, frames=[], frame_numbers=[]) for k, r in results.items()}
    if report:
        for result in results.values():
            if not result.ok:
                print(f"{PROG}: failed: {result.name}: {result.error}", file=sys.stderr)
    try:
        if plan.tasks:
            require_distributed()
            with _client_for(client, scheduler, backend, workers) as (cl, task_backend, text):
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
    finally:
        ordered = [results.get(job.name) or _failed_result(job, "not run") for job in parsed]
        if out is not None:
            write_text(out / SUMMARY_NAME, _summary_text(ordered))
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
    return out


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
    link = _dashboard(client)
    if link:
        print(f"{PROG}: dashboard: {link}", file=sys.stderr)
    if workers == 0:
        print(
            f"{PROG}: notice: no workers yet; tasks wait for `dask worker` (or `dask cuda "
            "worker`) processes with admcuda installed",
            file=sys.stderr,
        )

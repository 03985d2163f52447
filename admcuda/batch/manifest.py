"""The batch manifest: CSV or JSON Lines rows (``ref``, ``dis`` and optional geometry and
options), read into :class:`Job` records, each a pair to score or the reason it cannot be."""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from admcuda.cli.tool import FeatureRequest, feature_request
from admcuda.errors import AdmError, UsageError
from admcuda.io.ffmpeg import check_scaler
from admcuda.io.formats import BITDEPTHS, PIXEL_FORMATS
from admcuda.numeric import LONGEST, NumberTooLong, decimal_integer, is_integer, shown
from admcuda.options import (
    AdmOptions,
    resolve_options,
)
from admcuda.textfiles import MIB, read_text

__all__ = [
    "FRAME_COLUMNS",
    "JSONL_SUFFIXES",
    "MANIFEST_LIMIT",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "STDIN_MANIFEST",
    "Job",
    "model_plan",
    "plain_name",
    "read_jobs",
    "replace_fields",
    "row_request",
]

REQUIRED_COLUMNS: tuple[str, ...] = ("ref", "dis")
# Which frames are scored, as admcuda score's --frame-cnt, --frame-skip-ref,
# --frame-skip-dist and --subsample (libvmaf's --frame_cnt ...) choose them.
FRAME_COLUMNS: tuple[str, ...] = ("frame_cnt", "frame_skip_ref", "frame_skip_dist", "subsample")
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "name", "width", "height", "pixel_format", "bitdepth", "options", "scale", "ignore_name",
    "model", "feature", "autorotate", "allow_partial_frame", *FRAME_COLUMNS,
)  # fmt: skip
MODEL_SEPARATOR = ";"  # between the models of one row's model cell, or its features
STDIN_MANIFEST = "-"  # the manifest read from standard input
JSONL_SUFFIXES = (".jsonl", ".ndjson")
MANIFEST_LIMIT = 64 * MIB  # bytes: some 300,000 rows of long paths
_QUOTED = 80  # characters of a cell quoted in a row's error, at most
_C_INT_MAX = (1 << 31) - 1  # the largest frame count or step, a C int's, as libvmaf reads it


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
        The ADM options of the run: the ``options`` cell, with a feature cell's
        ``adm=K=V:...`` where ``admcuda score`` would take it as ADM's options.
    error : str or None
        Why the row cannot be scored (a bad value or option); None if it can.
    scale : str or None
        The ffmpeg scaler that brings a distorted input of another size to the
        reference's (``admcuda score --scale``); None: sizes must match.
    ignore_name : bool
        Do not check a raw file's name against the geometry (``--ignore-name``).
    model : tuple of str
        VMAF models, as ``admcuda score --model`` takes them (``version=vmaf_v0.6.1``...):
        the pair is scored with them on the CPU backend (:func:`model_plan`); none for
        ADM alone.
    feature : tuple of str
        libvmaf's ``--feature NAME=K=V:...`` strings (``psnr=enable_apsnr=true``,
        ``float_ssim``, ``vif=vif_enhn_gain_limit=1.0``...), as ``admcuda score --feature``
        takes them.
    request : FeatureRequest or None
        What the row computes, read from ``model``, ``feature`` and ``options`` as
        ``admcuda score`` reads ``--model``, ``--feature`` and ``--option``
        (:func:`admcuda.cli.tool.feature_request`); None: ADM alone with ``options``.
    autorotate : bool or None
        A video with a display matrix scored turned as ffmpeg turns it (True,
        ``--autorotate``) or as stored (False, ``--noautorotate``); None refuses one.
    allow_partial_frame : bool
        Read a raw file that ends in a partial frame (``--allow-partial-frame``).
    frame_cnt : int or None
        Read at most this many frames of each input, after the skipped ones
        (``--frame-cnt``); None (a cell of 0, libvmaf's "all", or empty) reads all.
    frame_skip_ref, frame_skip_dist : int
        Frames dropped from the start of the reference / the distorted input
        (``--frame-skip-ref``, ``--frame-skip-dist``).
    subsample : int
        Score frames ``0, N, 2N, ...`` (``--subsample``; a cell of 0 is 1, every frame).
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
    model: tuple[str, ...] = ()
    autorotate: bool | None = None
    allow_partial_frame: bool = False
    frame_cnt: int | None = None
    frame_skip_ref: int = 0
    frame_skip_dist: int = 0
    subsample: int = 1
    feature: tuple[str, ...] = ()
    request: FeatureRequest | None = None

    @property
    def ladder_key(self) -> tuple[Any, ...]:
        """Rows with equal keys share a reference pass."""
        return (
            self.ref, self.width, self.height, self.pixel_format, self.bitdepth, self.options,
            self.scale, self.ignore_name, self.model, self.autorotate, self.allow_partial_frame,
            self.frame_cnt, self.frame_skip_ref, self.frame_skip_dist, self.subsample,
            self.feature, self.request,
        )  # fmt: skip

    @property
    def plan(self) -> Any:
        """The row's :class:`admcuda.vmaf.FeaturePlan`, None for ADM alone."""
        if self.request is not None:
            return self.request.plan()
        return model_plan(self.model, self.options) if self.model else None


@functools.lru_cache(maxsize=64)
def model_plan(models: tuple[str, ...], options: AdmOptions) -> Any:
    """What a row with ``models`` computes: the models' features and scores, and the row's
    ADM beside them where its ``options`` are not the defaults (``admcuda score --model
    ... --option ...``).

    Raises
    ------
    AdmError
        One line: a model that cannot be loaded or computed.
    """
    return row_request(models, (), options).plan()


def row_request(
    models: tuple[str, ...], features: tuple[str, ...], options: AdmOptions
) -> FeatureRequest:
    """A row's models, features and ``options`` cell read as ``admcuda score --model ...
    --feature ... --option ...`` reads them (:func:`admcuda.cli.tool.feature_request`);
    options at their defaults are no ``--option``.

    Raises
    ------
    AdmError
        One line: a feature that does not parse, an option given twice.
    """
    try:
        return feature_request(models, features, options=options.non_default())
    except UsageError as exc:
        raise AdmError(str(exc)) from None


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
        ``ignore_name`` true or false, ``model`` one ``--model`` string or several
        separated by ``;``, or in JSON a list of them, ``feature`` libvmaf's ``--feature``
        strings as ``model`` gives models, ``autorotate`` true (``score
        --autorotate``), false (``--noautorotate``) or empty, ``allow_partial_frame`` true
        or false, and the frames scored as ``admcuda score`` chooses them: ``frame_cnt``
        (0 or empty: all), ``frame_skip_ref``, ``frame_skip_dist`` and ``subsample`` (0 or
        empty: every frame), each a count >= 0).
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
    source = sys.stdin.buffer if str(path) == STDIN_MANIFEST else path
    try:
        text = read_text(
            source, limit=MANIFEST_LIMIT, what=f"manifest '{path}'", encoding="utf-8-sig"
        )
    except FileNotFoundError:
        raise AdmError(f"manifest '{path}' not found") from None
    except IsADirectoryError:
        raise AdmError(f"manifest '{path}' is a directory") from None
    if not text.strip():
        raise AdmError(f"manifest '{path}' is empty")
    suffix = path.suffix.lower()
    jsonl = suffix in JSONL_SUFFIXES or (suffix != ".csv" and text.lstrip().startswith("{"))
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
            record = json.loads(line, object_pairs_hook=_KeyedTwice.build, parse_int=_json_int)
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


def _json_int(text: str) -> int | str:
    """A JSON integer; one too long for ``int()`` stays text, so that its cell, not the
    whole manifest, fails (json.loads would raise ValueError past 4,300 digits)."""
    return int(text) if len(text) <= LONGEST + 1 else text


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
        if name is not None and not plain_name(name):
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
        for key in ("ignore_name", "allow_partial_frame"):
            fields[key] = _true_false(record.get(key), key)
        autorotate = record.get("autorotate")
        if _text(autorotate) is not None:  # empty: neither --autorotate nor --noautorotate
            fields["autorotate"] = _true_false(autorotate, "autorotate")
        fields["model"] = _models(record.get("model"), fields["options"], base)
        fields["feature"] = _features(record.get("feature"))
        if fields["feature"]:
            fields["request"] = _feature_request(
                fields["model"], fields["feature"], fields["options"]
            )
            fields["options"] = fields["request"].options
        fields.update(_frame_selection(record))
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


def plain_name(name: str) -> bool:
    """Whether ``<name>.json`` names a file in the output folder itself."""
    return (
        name not in (".", "..") and not any(c in name for c in "/\\\0") and name == Path(name).name
    )


def _integer(value: Any, key: str) -> int | None:
    """A cell as an integer: decimal digits, as option values are read (Python's int()
    would also take '5_76' and non-ASCII digits)."""
    if is_integer(value):
        if abs(value) >= 10**LONGEST:
            raise AdmError(f"{key}: {shown(value)} is out of range")
        return int(value)
    text = _text(value)
    if text is None:
        return None
    try:
        value = decimal_integer(text)
    except NumberTooLong as exc:
        raise AdmError(f"{key}: {exc}") from None
    if value is None:
        raise AdmError(f"{key} {text!r} is not an integer")
    return value


def _frame_selection(record: Mapping[str, Any]) -> dict[str, Any]:
    """The frame columns that a row gives, as ``admcuda score`` reads its frame options:
    counts from 0 to a C int's largest; ``frame_cnt`` 0 reads every frame (None) and
    ``subsample`` 0 scores every frame (1), libvmaf's meaning of 0 for them."""
    fields: dict[str, Any] = {}
    for key in FRAME_COLUMNS:
        value = _integer(record.get(key), key)
        if value is None:
            continue
        if value < 0:
            raise AdmError(f"{key} {value} is out of range (must be >= 0)")
        if value > _C_INT_MAX:
            raise AdmError(f"{key} {shown(value)} is out of range (must be at most {_C_INT_MAX})")
        if value == 0 and key in ("frame_cnt", "subsample"):
            continue  # the default: all frames, every frame
        fields[key] = value
    return fields


def _options(value: Any) -> AdmOptions:
    """libvmaf's ``K=V:K=V`` (or, in JSON, an object) as options, as ``--option`` reads it."""
    if not (value is None or isinstance(value, (str, Mapping, AdmOptions))):
        raise AdmError(
            f"options must be a string or an object, got {type(value).__name__} {value!r}"
        )
    try:
        return resolve_options(value)
    except AdmError as exc:
        if not isinstance(value, str):  # the error names the option and its value
            raise AdmError(f"options: {exc}") from None
        given = value if len(value) <= _QUOTED else value[: _QUOTED - 3] + "..."
        raise AdmError(f"options {given!r}: {exc}") from None


def _models(value: Any, options: AdmOptions, base: Path) -> tuple[str, ...]:
    """A model cell: ``--model`` strings separated by ``;`` (in JSON, also a list of
    them; a bare shipped name is a ``version=``, as on the command line), each checked by
    loading it; a relative ``path=`` points into ``base``, the manifest's folder, as ``ref``
    and ``dis`` do."""
    from admcuda.model import model_arg

    models = tuple(_model_in(model_arg(item), base) for item in _cell_items(value, "model"))
    if models:
        try:
            model_plan(models, options)
        except AdmError as exc:
            raise AdmError(f"model {MODEL_SEPARATOR.join(models)!r}: {exc}") from None
    return models


def _features(value: Any) -> tuple[str, ...]:
    """A feature cell: libvmaf's ``--feature`` strings separated by ``;`` (in JSON, also a
    list of them)."""
    return _cell_items(value, "feature")


def _cell_items(value: Any, column: str) -> tuple[str, ...]:
    """The non-empty items of a cell of ``;``-separated strings (in JSON, also a list of
    strings), stripped."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split(MODEL_SEPARATOR)
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = value
    else:
        raise AdmError(
            f"{column} must be a string (several separated by '{MODEL_SEPARATOR}') or a list "
            f"of strings, got {type(value).__name__} {value!r}"
        )
    return tuple(item.strip() for item in items if item.strip())


def _feature_request(
    models: tuple[str, ...], features: tuple[str, ...], options: AdmOptions
) -> FeatureRequest:
    """The row's request, checked as ``admcuda score`` checks it before reading frames:
    its features parsed and its plan built (the models' own errors were told first)."""
    cell = MODEL_SEPARATOR.join(features)
    shown = cell if len(cell) <= _QUOTED else cell[: _QUOTED - 3] + "..."
    try:
        request = row_request(models, features, options)
        if not request.planned and any(f.partition("=")[0] == "adm_cuda" for f in features):
            # score writes adm_cuda's subset under its names; a batch writes ADM's
            raise AdmError("adm_cuda alone is not computed by a batch; give adm")
        plan = request.plan()
        extractors = plan.extractors if plan is not None else ()
        if any(getattr(ex.options, "heatmaps_path", None) for ex in extractors):
            raise AdmError("cambi's heatmaps_path writes one pair's files; use admcuda score")
    except AdmError as exc:
        raise AdmError(f"feature {shown!r}: {exc}") from None
    return request


def _model_in(model: str, base: Path) -> str:
    """``model`` with its ``path=`` value resolved against ``base`` (libvmaf splits a model
    string at every ``:``, so no path holds one)."""
    fields = model.split(":")
    for k, part in enumerate(fields):
        if part.startswith("path=") and part != "path=":
            fields[k] = "path=" + os.path.normpath(base / Path(part[5:]).expanduser())
    return ":".join(fields)


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
            job = replace_fields(job, error=f"name {job.name!r} given twice")
        unique.append(job if name == job.name else replace_fields(job, name=name))
    return unique


def replace_fields(item: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(item, **changes)

"""Per-frame scores (ADM, VIF, motion, models) with their metadata, pooling, and
libvmaf-layout files.

:class:`AdmResult` holds what a run produced: one dict of scores per frame, keyed by
the names libvmaf writes, and the run's metadata (geometry, options, backend, input
paths). Pooling and the JSON, XML and CSV layouts come from :mod:`admcuda.report.writers`;
:meth:`AdmResult.from_json`, :meth:`AdmResult.from_xml` and :meth:`AdmResult.from_csv`
(:meth:`AdmResult.read`: any of them) read back files written by admcuda or by libvmaf.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.numeric import decimal_integer, shown
from admcuda.options import (
    OUTPUT_BASE_NAMES,
    AdmOptions,
    ScoreDict,
    feature_suffix,
    lookup_option,
)
from admcuda.report.writers import POOL_METHODS, pooled_metrics, write_output, written_input
from admcuda.textfiles import MIB, read_text

__all__ = [
    "METADATA_KEYS", "RESULT_LIMIT", "AdmResult", "options_from_suffix", "split_feature_name",
]  # fmt: skip

_NOT_SCORE_FILE = "a score file (libvmaf's JSON, XML or CSV, as admcuda score writes)"
_CSV_HEAD = "Frame,"  # how libvmaf's CSV layout begins
RESULT_LIMIT = 256 * MIB  # bytes of a score file: JSON of some 250,000 frames of debug outputs

# Metadata every result carries; a missing key reads as None (fps as NaN).
METADATA_KEYS: tuple[str, ...] = (
    "width",
    "height",
    "bitdepth",
    "pixel_format",
    "options",
    "backend",
    "ref_path",
    "dis_path",
    "fps",
    "version",
    "source",
)

# Longest first, so that ``integer_adm_num_scale0`` is not read as ``integer_adm_num``
# plus a suffix. Option suffixes are ``_<alias>...``, and no alias starts like the
# tail of a longer base name (``num``, ``den``, ``scale``), so the longest base that
# prefixes a name is its base.
_BASES_LONGEST_FIRST = sorted(OUTPUT_BASE_NAMES, key=len, reverse=True)
_ADM_PREFIXES = ("integer_adm", "integer_aim")


def split_feature_name(name: str) -> tuple[str, str] | None:
    """Split an ADM output name into libvmaf base name and option suffix.

    Parameters
    ----------
    name : str
        e.g. ``"integer_adm_scale0_egl_1.2"``.

    Returns
    -------
    (str, str) or None
        ``("integer_adm_scale0", "_egl_1.2")``; ``None`` if ``name`` is not an
        integer ADM output.

    Examples
    --------
    >>> split_feature_name("integer_adm2")
    ('integer_adm2', '')
    >>> split_feature_name("integer_adm_num_scale3_nvd_4")
    ('integer_adm_num_scale3', '_nvd_4')
    """
    for base in _BASES_LONGEST_FIRST:
        if name == base:
            return base, ""
        if name.startswith(base + "_"):
            return base, name[len(base) :]
    return None


def options_from_suffix(suffix: str, *, debug: bool = False) -> AdmOptions | None:
    """Recover the options that give libvmaf's output-name ``suffix``.

    Only options that rename outputs can be recovered; ``adm_skip_aim`` is taken as
    its default. Returns ``None`` where the suffix cannot be parsed, or does not
    come back the same from :func:`admcuda.options.feature_suffix` (for instance a
    name that libvmaf truncated).

    Examples
    --------
    >>> options_from_suffix("_egl_1.2").adm_enhn_gain_limit
    1.2
    """
    if suffix and not suffix.startswith("_"):
        return None
    tokens = suffix.split("_")[1:]
    settings: dict[str, str | bool] = {}
    k = 0
    try:
        while k < len(tokens):
            spec = lookup_option(tokens[k])
            if not spec.feature_param:
                return None
            if spec.type == "bool":
                settings[tokens[k]] = True
                k += 1
            elif k + 1 < len(tokens):
                settings[tokens[k]] = tokens[k + 1]
                k += 2
            else:
                return None
        opts = AdmOptions.from_mapping(settings)
    except AdmError:
        return None
    if feature_suffix(opts) != suffix:
        return None
    return opts.replace(debug=True) if debug else opts


def _metadata_options(value: Any) -> AdmOptions | None:
    if value is None or isinstance(value, AdmOptions):
        return value
    if isinstance(value, Mapping):
        return AdmOptions.from_mapping(value)
    raise AdmError(
        f"metadata 'options' must be AdmOptions or a mapping, got {type(value).__name__}"
    )


def _kept_pooled(
    pooled: Mapping[str, Mapping[str, float]], names: Sequence[str]
) -> dict[str, dict[str, float]]:
    """``pooled`` checked against the frames' ``names`` and :data:`POOL_METHODS`, as floats."""
    if not isinstance(pooled, Mapping):
        raise AdmError(f"pooled must be a mapping, got {type(pooled).__name__}")
    kept: dict[str, dict[str, float]] = {}
    for name, methods in pooled.items():
        if name not in names:
            raise AdmError(f"pooled values for {name!r}, which the frames do not have")
        if not isinstance(methods, Mapping):
            raise AdmError(f"pooled {name!r} must be a mapping, got {type(methods).__name__}")
        for method, value in methods.items():
            if method not in POOL_METHODS:
                raise AdmError(
                    f"pooled {name!r}: unknown method {method!r}; use {', '.join(POOL_METHODS)}"
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise AdmError(f"pooled {name!r} {method} must be a number, got {value!r}")
        kept[str(name)] = {method: float(value) for method, value in methods.items()}
    return kept


def _same_pool(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Equal pooled values (:func:`pool`'s), NaN equal to NaN."""
    return all(a[m] == b[m] or (math.isnan(a[m]) and math.isnan(b[m])) for m in POOL_METHODS)


def _base_aliases(names: Sequence[str]) -> dict[str, str]:
    """Base name -> stored name, where exactly one stored name has that base."""
    seen: dict[str, list[str]] = {}
    for n in names:
        base = (split_feature_name(n) or (n, ""))[0]
        seen.setdefault(base, []).append(n)
    return {base: found[0] for base, found in seen.items() if len(found) == 1}


class AdmResult:
    """Per-frame scores of one reference/distorted pair, and how they were made.

    Parameters
    ----------
    frames : sequence of mapping of str to float
        One mapping per frame, in frame order, all with the same names in the same
        order (libvmaf's output names, e.g. ``integer_adm2_egl_1.2``).
    metadata : mapping, optional
        Any of :data:`METADATA_KEYS` (``width``, ``height``, ``bitdepth``,
        ``pixel_format``, ``options`` (AdmOptions or mapping), ``backend``,
        ``ref_path``, ``dis_path``, ``fps``, ``version``, ``source``), plus any other
        keys the caller wants to keep.
    frame_numbers : sequence of int, optional
        Frame number of each entry (libvmaf's ``frameNum``), ``0, 1, 2, ...`` by
        default; ``0, N, 2N, ...`` for a run that scored every N-th frame.
    pooled : mapping, optional
        Pooled values to keep, feature name -> ``{method: value}`` with methods of
        ``min``, ``max``, ``mean``, ``harmonic_mean``: a file's ``pooled_metrics``
        (:meth:`from_json` passes them), where pooling the frames again would differ,
        the frames holding rounded values. :attr:`pooled` gives them, and
        :meth:`to_json`/:meth:`to_xml` write them, in place of the frames' pooling,
        for as long as that feature's frame values pool as they did here; features
        and methods not given are pooled from the frames.
    aggregate : mapping of str to float, optional
        libvmaf's ``aggregate_metrics``: the clip's single values (PSNR's ``apsnr_y``,
        ``apsnr_cb``, ``apsnr_cr``), kept in :attr:`aggregate` and written by
        :meth:`to_json` and :meth:`to_xml`.

    Raises
    ------
    AdmError
        If the frames do not all carry the same names in the same order, or
        ``pooled`` names a feature they lack, an unknown method or a non-number.

    Examples
    --------
    >>> r = AdmResult([{"integer_adm2": 0.9}, {"integer_adm2": 0.8}], {"width": 64})
    >>> len(r), r.pooled["integer_adm2"]["min"], r["integer_adm2"]
    (2, 0.8, [0.9, 0.8])
    """

    def __init__(
        self,
        frames: Sequence[Mapping[str, float]],
        metadata: Mapping[str, Any] | None = None,
        *,
        frame_numbers: Sequence[int] | None = None,
        pooled: Mapping[str, Mapping[str, float]] | None = None,
        aggregate: Mapping[str, float] | None = None,
    ) -> None:
        self.aggregate: dict[str, float] = {str(k): float(v) for k, v in (aggregate or {}).items()}
        names = [str(n) for n in frames[0]] if frames else []
        self._aliases = _base_aliases(names)
        self.frames: list[dict[str, float]] = [
            ScoreDict(((str(name), float(value)) for name, value in frame.items()), self._aliases)
            for frame in frames
        ]
        meta: dict[str, Any] = {key: None for key in METADATA_KEYS}
        meta["fps"] = math.nan
        meta.update(metadata or {})
        meta["options"] = _metadata_options(meta["options"])
        for key in ("ref_path", "dis_path", "source"):
            if meta[key] is not None:
                meta[key] = os.fspath(meta[key])
        meta["fps"] = math.nan if meta["fps"] is None else float(meta["fps"])
        self.metadata = meta
        if frame_numbers is None:
            self.frame_numbers = list(range(len(self.frames)))
        else:
            self.frame_numbers = [int(n) for n in frame_numbers]
            if len(self.frame_numbers) != len(self.frames):
                raise AdmError(
                    f"{len(self.frame_numbers)} frame numbers for {len(self.frames)} frames"
                )
        computed = pooled_metrics(self.frames)  # refuses frames whose names differ
        self._kept = {} if pooled is None else _kept_pooled(pooled, names)
        # What the frames pooled to when the kept values were given: while they still
        # do (frames are a public list), the kept values stand for them.
        self._kept_basis = {name: computed[name] for name in self._kept}

    # -- metadata shortcuts

    @property
    def width(self) -> int | None:
        return self.metadata["width"]

    @property
    def height(self) -> int | None:
        return self.metadata["height"]

    @property
    def bitdepth(self) -> int | None:
        return self.metadata["bitdepth"]

    @property
    def options(self) -> AdmOptions | None:
        return self.metadata["options"]

    @property
    def backend(self) -> str | None:
        return self.metadata["backend"]

    @property
    def fps(self) -> float:
        return self.metadata["fps"]

    # -- scores

    @property
    def names(self) -> list[str]:
        """Feature names, in the order of the first frame."""
        return list(self.frames[0]) if self.frames else []

    @property
    def pooled(self) -> dict[str, dict[str, float]]:
        """Per feature, ``{"min", "max", "mean", "harmonic_mean"}`` as libvmaf pools them;
        keyed by the stored names, base names (``integer_adm2``) work too.

        Values given as ``pooled`` (a file's own, from :meth:`from_json`) are kept while
        that feature's frames are unchanged; the rest are pooled from the frames."""
        out = pooled_metrics(self.frames)
        for name, methods in self._kept.items():
            if _same_pool(out[name], self._kept_basis[name]):
                out[name].update(methods)
        return ScoreDict(out, self._aliases)

    def stats(
        self, name: str | None = None, *, percentiles: Sequence[float] = (5, 95)
    ) -> dict[str, Any]:
        """libvmaf's pooled values and, beside them, the median, the standard deviation
        and percentiles of each feature over the frames (these are not written into
        libvmaf's layouts, whose ``pooled_metrics`` keep libvmaf's four).

        Parameters
        ----------
        name : str, optional
            One feature (exact or base name): its dict alone. Default: every feature's.
        percentiles : sequence of float
            Percentiles from 0 to 100, keyed ``p5``, ``p95`` (default 5 and 95).

        Returns
        -------
        dict
            ``{"min", "max", "mean", "harmonic_mean", "median", "stdev", "p5", "p95"}``
            (:func:`admcuda.report.stats.frame_stats`; ``stdev`` is the population
            standard deviation), or a dict of them by feature name.

        Examples
        --------
        >>> result.stats("vmaf")["p5"]  # doctest: +SKIP
        >>> result.stats(percentiles=(1, 50, 99))["integer_adm2"]["p1"]  # doctest: +SKIP
        """
        from admcuda.report.stats import frame_stats

        if not self.frames:
            raise AdmError("no frames: nothing to pool")
        pooled = self.pooled

        def one(key: str) -> dict[str, float]:
            out = frame_stats(self.values(key), percentiles)
            out.update(pooled[key])  # a file's own pooled values, where they were kept
            return out

        try:
            if name is not None:
                return one(self.feature_name(name))
            return ScoreDict({n: one(n) for n in self.names}, self._aliases)
        except ValueError as exc:
            raise AdmError(str(exc)) from None

    def feature_name(self, name: str) -> str:
        """The stored name for ``name``, given exactly or as a libvmaf base name.

        ``result.feature_name("integer_adm2")`` gives ``"integer_adm2_egl_1.2"``
        when the run used ``egl=1.2``.

        Raises
        ------
        KeyError
            If no stored name matches, or several do (several option sets).
        """
        names = self.names
        if name in names:
            return name
        matches = [n for n in names if (split_feature_name(n) or ("", ""))[0] == name]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise KeyError(f"{name!r} is ambiguous here: {', '.join(matches)}")
        raise KeyError(f"no feature {name!r}; this result has {', '.join(names) or 'none'}")

    def values(self, name: str) -> list[float]:
        """Per-frame values of one feature (exact or base name, see :meth:`feature_name`)."""
        key = self.feature_name(name)
        return [frame[key] for frame in self.frames]

    def array(self, name: str) -> np.ndarray:
        """Per-frame values of one feature as a float64 NumPy array (exact or base name);
        frame ``k``'s number is ``frame_numbers[k]``."""
        return np.array(self.values(name), dtype=np.float64)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every feature's per-frame values as float64 NumPy arrays, by stored name."""
        return {name: self.array(name) for name in self.names}

    @property
    def error(self) -> str | None:
        """Why this distorted input could not be scored (a rung of a ladder scored by
        :func:`admcuda.score`, whose other rungs were); None when it was."""
        return self.metadata.get("error")

    @property
    def ok(self) -> bool:
        """Whether this input was scored (:attr:`error` is None)."""
        return self.error is None

    def __len__(self) -> int:
        return len(self.frames)

    def __iter__(self) -> Iterator[dict[str, float]]:
        return iter(self.frames)

    def __getitem__(self, key: int | slice | str) -> Any:
        """``result[i]``: frame ``i``'s dict; ``result[a:b]``: a list of them;
        ``result["integer_adm2"]``: that feature over all frames."""
        if isinstance(key, str):
            return self.values(key)
        return self.frames[key]

    def __repr__(self) -> str:
        geometry = ""
        if self.width is not None and self.height is not None:
            geometry = f", {self.width}x{self.height}"
        mean = ""
        models = self.metadata.get("models") or []
        if models and models[0] in self.names:
            name = models[0]
        else:  # read back from a file: libvmaf's default model name where it is there
            name = "vmaf" if "vmaf" in self.names else "integer_adm2"
        try:
            values = self.values(name)
            mean = f", mean {name} {math.fsum(values) / len(values):.6f}" if values else ""
        except KeyError:
            pass
        from admcuda.numeric import counted

        return f"<AdmResult {counted(len(self), 'frame')}{geometry}{mean}>"

    # -- files

    def _version(self) -> str:
        """The file's ``"version"`` where this result was read from one, else the libvmaf
        version whose numbers admcuda reproduces (admcuda's own is written beside it)."""
        if self.metadata["version"] is not None:
            return str(self.metadata["version"])
        from admcuda.report.writers import LIBVMAF_VERSION

        return LIBVMAF_VERSION

    def _check_not_input(self, dest: str | os.PathLike[str] | None) -> None:
        """Refuse to write a file this result was scored from (``ref_path``,
        ``dis_path``), as ``admcuda score`` refuses; None is standard output."""
        inputs = [self.metadata[k] for k in ("ref_path", "dis_path") if self.metadata[k]]
        name = written_input(dest, inputs)
        if name is not None:
            shown = "standard output" if dest is None else f"'{os.fspath(dest)}'"
            raise AdmError(f"{shown} is the input '{name}' this result was scored from")

    def _write(self, fmt: str, dest: str | os.PathLike[str] | IO[str]) -> None:
        if self.error is not None:  # an empty file would pass for a clip with no frames
            raise AdmError(f"nothing to write: this input was not scored ({self.error})")
        if not hasattr(dest, "write"):
            self._check_not_input(dest)  # type: ignore[arg-type]
        numbered: dict[str, Any] = {}
        if self.frame_numbers != list(range(len(self.frames))):
            numbered["frame_numbers"] = self.frame_numbers
        if fmt in ("json", "xml"):
            numbered["pooled"] = dict(self.pooled)
            if self.aggregate:
                numbered["aggregate"] = dict(self.aggregate)
        write_output(
            fmt,  # type: ignore[arg-type]
            self.frames,
            dest,
            version=self._version(),
            width=self.width if self.width is not None else 0,
            height=self.height if self.height is not None else 0,
            fps=self.fps,
            **numbered,
        )

    def to_json(self, dest: str | os.PathLike[str] | IO[str]) -> None:
        """Write libvmaf's JSON layout (see :func:`admcuda.report.writers.render_json`), with
        :attr:`pooled` as its ``pooled_metrics``."""
        self._write("json", dest)

    def to_xml(self, dest: str | os.PathLike[str] | IO[str]) -> None:
        """Write libvmaf's XML layout; needs ``width`` and ``height`` in the metadata."""
        if self.width is None or self.height is None:
            raise AdmError("writing XML needs the frame width and height in the result's metadata")
        self._write("xml", dest)

    def to_csv(self, dest: str | os.PathLike[str] | IO[str]) -> None:
        """Write libvmaf's CSV layout."""
        self._write("csv", dest)

    @classmethod
    def from_json(
        cls, source: str | os.PathLike[str] | IO[str], *, adm_only: bool = False
    ) -> AdmResult:
        """Read a JSON file in libvmaf's layout, written by admcuda or by libvmaf.

        Parameters
        ----------
        source : path or text file object
        adm_only : bool, optional
            Keep only the integer ADM outputs, dropping the other features and model
            scores a libvmaf run may have written (VIF, motion, ``vmaf``...); by default
            every output is kept.

        Returns
        -------
        AdmResult
            Frames in file order with their ``frameNum``; ``null`` scores become
            NaN. :attr:`~AdmResult.pooled` keeps the file's ``pooled_metrics`` for its
            features (pooled from the frames where the file has none). Metadata: ``fps`` and
            ``version`` from the file, ``source`` the path, and ``options`` recovered
            from the output-name suffix where it is unambiguous (``adm_skip_aim`` is
            not in the names and reads as false). Geometry is not in libvmaf's JSON
            and stays None.

        Raises
        ------
        AdmError
            If the file is not JSON in that layout, or its frames disagree on names.
        OSError
            If the file cannot be read.
        """
        return cls._from_json_text(*_read_source(source), adm_only)

    @classmethod
    def _from_json_text(cls, text: str, label: str, path: Path | None, adm_only: bool) -> AdmResult:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AdmError(f"'{label}' is not valid JSON: {exc}") from None
        except (ValueError, RecursionError) as exc:  # a number past int()'s limit, deep nesting
            raise AdmError(f"'{label}' is not a libvmaf JSON result: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("frames"), list):
            raise AdmError(f"'{label}' is not a libvmaf JSON result (no \"frames\" list)")
        entries = []
        for position, entry in enumerate(doc["frames"]):
            metrics = entry.get("metrics") if isinstance(entry, dict) else None
            if not isinstance(metrics, dict):
                raise AdmError(f"'{label}': frame entry {position} has no \"metrics\" object")
            entries.append((entry.get("frameNum", position), metrics))
        given = doc.get("pooled_metrics", {})
        if not isinstance(given, dict):
            raise AdmError(f"'{label}': \"pooled_metrics\" is not an object")
        fps = doc.get("fps")
        metadata = {"fps": math.nan if fps is None else _number(fps, "fps", label)}
        metadata["version"] = doc.get("version")
        result = cls._from_entries(entries, given, metadata, label, path, adm_only)
        aggregate = doc.get("aggregate_metrics", {})
        if isinstance(aggregate, dict) and not adm_only:
            # libvmaf writes a value that is not finite as null
            result.aggregate = {
                str(k): math.nan if v is None else _number(v, f"aggregate_metrics: {k}", label)
                for k, v in aggregate.items()
            }
        return result

    @classmethod
    def from_xml(
        cls, source: str | os.PathLike[str] | IO[str], *, adm_only: bool = False
    ) -> AdmResult:
        """Read an XML file in libvmaf's layout (``--xml``), written by admcuda or by
        libvmaf: as :meth:`from_json`, with the ``width`` and ``height`` of its
        ``<params>`` in the metadata.

        Raises
        ------
        AdmError
            If the file is not XML in that layout, or its frames disagree on names.
        OSError
            If the file cannot be read.
        """
        return cls._from_xml_text(*_read_source(source), adm_only)

    @classmethod
    def _from_xml_text(cls, text: str, label: str, path: Path | None, adm_only: bool) -> AdmResult:
        import xml.etree.ElementTree as ET

        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            raise AdmError(f"'{label}' is not valid XML: {exc}") from None
        frames = root.find("frames")
        if root.tag != "VMAF" or frames is None:
            raise AdmError(f"'{label}' is not a libvmaf XML result (no <VMAF> with <frames>)")
        entries = []
        for position, element in enumerate(frames.iter("frame")):
            metrics = dict(element.attrib)
            number = metrics.pop("frameNum", None)
            entries.append((position if number is None else _whole(number), metrics))
        given: dict[str, Any] = {}
        for element in root.iterfind("pooled_metrics/metric"):
            methods = dict(element.attrib)
            name = methods.pop("name", "")
            given[name] = {
                method: _number(value, f"pooled_metrics {name!r} {method}", label)
                for method, value in methods.items()
                if method in POOL_METHODS
            }
        metadata: dict[str, Any] = {"version": root.get("version")}
        fyi, params = root.find("fyi"), root.find("params")
        if fyi is not None and fyi.get("fps") is not None:
            metadata["fps"] = _number(fyi.get("fps"), "fps", label)
        if params is not None:
            for key, attr in (("width", "qualityWidth"), ("height", "qualityHeight")):
                value = _whole(params.get(attr))
                metadata[key] = value if isinstance(value, int) and value > 0 else None
        return cls._from_entries(entries, given, metadata, label, path, adm_only)

    @classmethod
    def from_csv(
        cls, source: str | os.PathLike[str] | IO[str], *, adm_only: bool = False
    ) -> AdmResult:
        """Read a CSV file in libvmaf's layout (``--csv``), written by admcuda or by
        libvmaf: a ``Frame,<name>,...`` header and a ``<frameNum>,<value>,...`` row per
        frame, each line ending in a comma (``nan`` and ``inf`` read as such).

        The layout holds no pooled values, geometry, fps or version: :attr:`pooled` pools
        the frames with libvmaf's pooling. admcuda writes every value exactly (a double's
        shortest repr), so a CSV of ``admcuda score --csv`` pools to the very numbers its
        JSON holds; libvmaf's own CSV rounds values to 6 decimals, and so do their pools.
        ``options`` are recovered from the output names, as :meth:`from_json` does.

        Raises
        ------
        AdmError
            If the file is not CSV in that layout, or a cell is not a number.
        OSError
            If the file cannot be read.
        """
        return cls._from_csv_text(*_read_source(source), adm_only)

    @classmethod
    def _from_csv_text(cls, text: str, label: str, path: Path | None, adm_only: bool) -> AdmResult:
        text = text.lstrip("\ufeff")
        if not text.startswith(_CSV_HEAD):
            raise AdmError(f"'{label}' is not a libvmaf CSV result (no {_CSV_HEAD!r} header)")

        def cells(row: list[str]) -> list[str]:
            return row[:-1] if row and row[-1] == "" else row  # the comma ending each line

        try:
            lines = list(csv.reader(io.StringIO(text), strict=True))
        except csv.Error as exc:
            raise AdmError(f"'{label}' is not a libvmaf CSV result: {exc}") from None
        names = cells(lines[0])[1:]
        if not names or "" in names or len(set(names)) != len(names):
            raise AdmError(f"'{label}': the CSV header does not name each score once")
        entries = []
        for line_number, row in enumerate(lines[1:], start=2):
            row = cells(row)
            if not row:
                continue  # a blank line
            if len(row) != len(names) + 1:
                raise AdmError(
                    f"'{label}': line {line_number} has {len(row) - 1} values for "
                    f"{len(names)} names"
                )
            number = _whole(row[0].strip())
            if not isinstance(number, int) or number < 0:
                raise AdmError(f"'{label}': line {line_number} has frame number {row[0]!r}")
            values = {}
            for name, cell in zip(names, row[1:], strict=True):
                try:
                    if "_" in cell:  # float() would read 1_0 as 10
                        raise ValueError(cell)
                    values[name] = float(cell)
                except ValueError:
                    raise AdmError(
                        f"'{label}': line {line_number} holds a value that is no number "
                        f"({name} {shown(cell)})"
                    ) from None
            entries.append((number, values))
        return cls._from_entries(entries, {}, {}, label, path, adm_only)

    @classmethod
    def read(cls, source: str | os.PathLike[str], *, adm_only: bool = False) -> AdmResult:
        """Read a score file in libvmaf's JSON, XML or CSV layout, told apart by how it
        begins (``{``, ``<`` or CSV's ``Frame,`` header), as :meth:`from_json`,
        :meth:`from_xml` and :meth:`from_csv` read them.

        Raises
        ------
        AdmError
            If the file is none of these, or is not in that layout.
        OSError
            If the file cannot be read.
        """
        text, label, path = _read_source(source)
        if text.lstrip("\ufeff").startswith(_CSV_HEAD):
            return cls._from_csv_text(text, label, path, adm_only)
        head = text.lstrip()[:1]
        if head not in ("{", "<"):
            raise AdmError(f"'{label}' is not {_NOT_SCORE_FILE}")
        reader = cls._from_json_text if head == "{" else cls._from_xml_text
        return reader(text, label, path, adm_only)

    @classmethod
    def _from_entries(
        cls,
        entries: Sequence[tuple[Any, Mapping[str, Any]]],
        given: Mapping[str, Any],
        metadata: dict[str, Any],
        label: str,
        path: Path | None,
        adm_only: bool,
    ) -> AdmResult:
        """A result from a file's ``(frameNum, metrics)`` per frame and its pooled metrics."""
        frames = []
        numbers = []
        for position, (number, metrics) in enumerate(entries):
            if isinstance(number, bool) or not isinstance(number, int):
                raise AdmError(f"'{label}': frame entry {position} has frameNum {number!r}")
            numbers.append(number)
            frame = {}
            for name, value in metrics.items():
                if adm_only and not name.startswith(_ADM_PREFIXES):
                    continue
                frame[name] = _number(value, f"frame entry {position}: {name}", label)
            frames.append(frame)
        if adm_only and frames and not frames[0]:
            raise AdmError(f"'{label}' holds no integer ADM scores")
        pooled = _file_pooled(given, frames[0] if frames else {}, label)
        metadata["source"] = str(path) if path is not None else None
        metadata["options"] = _options_from_names(frames[0]) if frames else None
        try:
            return cls(frames, metadata, frame_numbers=numbers, pooled=pooled)
        except AdmError as exc:
            raise AdmError(f"'{label}': {exc}") from None

    def to_dataframe(self) -> Any:
        """The frames as a pandas DataFrame, one row per frame, indexed by frame number.

        Raises
        ------
        AdmError
            If pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError:
            raise AdmError("to_dataframe needs pandas: pip install pandas") from None
        frame = pd.DataFrame(self.frames, columns=self.names, index=self.frame_numbers)
        frame.index.name = "frame"
        return frame


def _read_source(source: str | os.PathLike[str] | IO[str]) -> tuple[str, str, Path | None]:
    """A score file's text (read with a bound: :data:`RESULT_LIMIT`), its name for
    messages, and its path (None for a file object)."""
    if hasattr(source, "read"):
        label, path = getattr(source, "name", "<stream>"), None
    else:
        path = Path(os.fspath(source))  # type: ignore[arg-type]
        label = str(path)
    text = read_text(source, limit=RESULT_LIMIT, what=f"'{label}'", kind=_NOT_SCORE_FILE)
    return text, label, path


def _number(value: Any, where: str, label: str) -> float:
    """A score as a float: a JSON number or null (NaN), or an XML attribute's text."""
    if value is None:
        return math.nan
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            return float(value)
        except (ValueError, OverflowError):
            pass
    raise AdmError(f"'{label}': {where} is {shown(value)}, not a number")


def _whole(text: str | None) -> int | str | None:
    """An XML attribute as an int where it is decimal digits; else as it is."""
    try:
        number = None if text is None else decimal_integer(text)
    except AdmError:
        number = None
    return text if number is None else number


def _file_pooled(
    given: Mapping[str, Any], frame: Mapping[str, float], label: str
) -> dict[str, dict[str, Any]]:
    """A file's pooled metrics for the features in ``frame`` (other features and
    methods left out; ``null`` read as NaN)."""
    pooled: dict[str, dict[str, Any]] = {}
    for name, methods in given.items():
        if name not in frame:
            continue
        if not isinstance(methods, dict):
            raise AdmError(f"'{label}': pooled_metrics {name!r} is not an object")
        pooled[name] = {
            method: math.nan if value is None else value
            for method, value in methods.items()
            if method in POOL_METHODS
        }
    return pooled


def _options_from_names(frame: Mapping[str, float]) -> AdmOptions | None:
    """Options from the suffix of the one ``integer_adm2`` name, if there is exactly one."""
    suffixes = {
        parts[1]
        for parts in map(split_feature_name, frame)
        if parts is not None and parts[0] == "integer_adm2"
    }
    if len(suffixes) != 1:
        return None
    suffix = suffixes.pop()
    return options_from_suffix(suffix, debug="integer_adm_num" + suffix in frame)

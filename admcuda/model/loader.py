"""VMAF models in libvmaf's JSON format: loading, the ``--model`` argument, and prediction.

Reading follows libvmaf 3.2.0's ``read_json_model.c`` (numbers as C's ``strtod`` reads them,
the same keys, the same flags) and refuses what admcuda cannot evaluate exactly: a feature
no extractor in ``extractors`` provides (float_ssim, psnr, ...), an option that
extractor does not have, a chroma correction libvmaf could not apply, a non-RBF or
non-regression SVM. A bootstrap
model collection (``vmaf_b_v0.6.3``: models under the keys ``0``, ``1``, ...) loads as its
model ``0`` with the others as :attr:`Model.bootstrap` (:mod:`admcuda.model.bootstrap`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.model import predict as _steps
from admcuda.model.bootstrap import SUFFIXES, bootstrap_scores, member_name
from admcuda.model.features import (
    COMPUTED_EXTRACTORS,
    Extractor,
    ModelError,
    OptionValue,
    collector_name,
    is_numeric,
    normalized_text,
    output_name,
    parse_option,
)
from admcuda.model.predict import ChromaCorrection, ScoreTransform
from admcuda.model.svm import SvmModel, parse_libsvm
from admcuda.textfiles import MIB, read_text

__all__ = [
    "BUILTIN_VERSIONS",
    "FLOAT_VERSIONS",
    "V1016_VERSIONS",
    "Bootstrap",
    "Model",
    "ModelFeature",
    "ModelSpec",
    "load_model",
    "parse_model_arg",
]

# The models shipped in admcuda/model/data, as libvmaf 3.2.0 builds them in (those of its
# integer features), with the vmaf_v1.0.16 ones beside them in V1016_VERSIONS and the
# vmaf_float_* ones in FLOAT_VERSIONS.
BUILTIN_VERSIONS = (
    "vmaf_v0.6.1",
    "vmaf_v0.6.1neg",
    "vmaf_4k_v0.6.1",
    "vmaf_4k_v0.6.1neg",
    "vmaf_b_v0.6.3",
)

# libvmaf 3.2.0's vmaf_v1.0.16 models (cambi, speed_chroma, adm3, motion3 and a chroma
# correction), shipped in admcuda/model/data too and loaded by version as libvmaf builds
# them in.
V1016_VERSIONS = (
    "vmaf_v1.0.16_3d0h",
    "vmaf_v1.0.16_5d0h",
    "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h_2160",
    "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_5d0h",
    "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h_2160",
)

# libvmaf 3.2.0's float models (float_adm, float_vif and float_motion), shipped in
# admcuda/model/data too and loaded by version as libvmaf builds them in where its float
# features are built (model.c), in its order.
FLOAT_VERSIONS = (
    "vmaf_float_v0.6.1",
    "vmaf_float_b_v0.6.3",
    "vmaf_float_v0.6.1neg",
    "vmaf_float_4k_v0.6.1",
)

# The most bytes a model file may have: libvmaf's are tens of kB, its largest a few MB.
MODEL_LIMIT = 64 * MIB

# read_json_model.c's limits.
_MAX_FEATURES = 64
_MAX_KNOTS = 10

# libvmaf predicts every type alike; a collection's members must be of one bootstrap type.
_MODEL_TYPES = ("LIBSVMNUSVR", "BOOTSTRAP_LIBSVMNUSVR", "RESIDUEBOOTSTRAP_LIBSVMNUSVR")
_BOOTSTRAP_TYPES = _MODEL_TYPES[1:]


@dataclass(frozen=True)
class ModelFeature:
    """One input of a model and where it comes from.

    Attributes
    ----------
    extractor : str
        libvmaf's extractor name that computes it (``adm``, ``vif``, ``motion``).
    options : dict
        The extractor options the model sets for it (libvmaf option name -> the value
        libvmaf computes with); the extractor must run with exactly these.
    collector_name : str
        The name libvmaf files the feature under, and under which :meth:`Model.predict`
        looks it up (``integer_adm2_egl_1``, ``VMAF_integer_feature_motion2_score``).
    output_name : str
        The name libvmaf's output files print for it (``integer_adm2_egl_1``,
        ``integer_motion2``).
    name : str
        The model's own name for it (``VMAF_integer_feature_adm2_score``).
    slope, intercept : float
        Its linear rescale.
    """

    extractor: str
    options: Mapping[str, OptionValue]
    collector_name: str
    output_name: str
    name: str
    slope: float
    intercept: float


@dataclass(frozen=True)
class Model:
    """A loaded VMAF model.

    Attributes
    ----------
    label : str
        The version or path it was loaded from, for messages.
    name : str
        The name its score is filed under (libvmaf's ``name=``, default ``vmaf``).
    features : tuple of ModelFeature
        Its inputs, in the model's order.
    norm_type : str
        ``linear_rescale`` or ``none``.
    slope, intercept : float
        The rescale of the SVM's output.
    score_transform : ScoreTransform or None
        Applied to each score when enabled (by the model or ``enable_transform``).
    score_clip : (float, float) or None
        Clip range, unless absent or disabled.
    svm : SvmModel
    model_type : str
        The file's ``model_type``: ``LIBSVMNUSVR``, or one of the bootstrap types, which
        a model outside a collection predicts alike.
    bootstrap : Bootstrap or None
        For a model collection: its members (this model is its model ``0``).
    chroma_correction : ChromaCorrection or None
        The model's ``chroma_correction_parameter`` and the inputs it ties, if it has one.
    """

    label: str
    name: str
    features: tuple[ModelFeature, ...]
    norm_type: str
    slope: float
    intercept: float
    score_transform: ScoreTransform | None
    score_clip: tuple[float, float] | None
    svm: SvmModel
    model_type: str = "LIBSVMNUSVR"
    bootstrap: Bootstrap | None = None
    chroma_correction: ChromaCorrection | None = None

    def extractors(self) -> list[tuple[str, dict[str, OptionValue]]]:
        """Each distinct (extractor, options) run the model needs, in first-use order
        (for a collection, its members', as libvmaf registers them)."""
        runs: list[tuple[str, dict[str, OptionValue]]] = []
        sources = self.bootstrap.members if self.bootstrap is not None else (self,)
        for f in (f for m in sources for f in m.features):
            run = (f.extractor, dict(f.options))
            if run not in runs:
                runs.append(run)
        return runs

    def output_names(self) -> dict[str, str]:
        """Collector name -> output name, for each input, the score itself and, for a
        collection, its other scores."""
        names = {f.collector_name: f.output_name for f in self.features}
        names[self.name] = output_name(self.name)
        for name in self.collection_outputs():
            names[name] = output_name(name)
        return names

    def collection_outputs(self) -> tuple[str, ...]:
        """For a model collection, the names of the scores libvmaf files beside the model's
        own, in its order: each member's (``vmaf_0001``, ...), then ``vmaf_bagging``,
        ``vmaf_stddev``, ``vmaf_ci_p95_lo`` and ``vmaf_ci_p95_hi``; none for a model."""
        if self.bootstrap is None:
            return ()
        members = tuple(m.name for m in self.bootstrap.members)
        return members + tuple(self.name + suffix for suffix in SUFFIXES)

    def _column(self, features: Mapping[str, Any], f: ModelFeature, many: bool = False) -> Any:
        for key in (f.collector_name, f.output_name):
            if key in features:
                try:
                    if many:
                        return np.asarray(features[key], dtype=np.float64)
                    return float(features[key])
                except (TypeError, ValueError):
                    raise ModelError(
                        f"model {self.label}: feature {key} is not a number: {features[key]!r}"
                    ) from None
        raise ModelError(
            f"model {self.label}: no value for feature {f.collector_name} (needed: "
            f"{', '.join(g.collector_name for g in self.features)})"
        )

    def _finish(self, y: float) -> float:
        return self._map(_steps.denormalize(self.norm_type, self.slope, self.intercept, y))

    def _map(self, y: float) -> float:
        """The transform, where enabled, then the clip, where enabled."""
        if self.score_transform is not None:
            y = _steps.transform(self.score_transform, y)
        if self.score_clip is not None:
            y = _steps.clip(self.score_clip, y)
        return y

    def predict(self, features: Mapping[str, float]) -> float:
        """One frame's score, as libvmaf's ``vmaf_predict_score_at_index`` computes it.

        Parameters
        ----------
        features : mapping of str to float
            The frame's features by collector name (:attr:`ModelFeature.collector_name`)
            or output name; other keys are ignored.

        Raises
        ------
        ModelError
            If a feature the model needs is missing.
        """
        x = [
            _steps.normalize(self.norm_type, f.slope, f.intercept, self._column(features, f))
            for f in self.features
        ]
        if self.chroma_correction is not None:
            corrected = self._correct([np.array([v], dtype=np.float64) for v in x])
            x = [float(c[0]) for c in corrected]
        return self._finish(self.svm.predict(x))

    def _correct(self, columns: list[np.ndarray]) -> list[np.ndarray]:
        assert self.chroma_correction is not None
        return _steps.correct_chroma(
            self.norm_type,
            self.chroma_correction,
            [f.slope for f in self.features],
            [f.intercept for f in self.features],
            columns,
        )

    def predict_many(self, features: Mapping[str, Sequence[float] | np.ndarray]) -> np.ndarray:
        """Every frame's score at once; each equals :meth:`predict` of that frame bit for bit.

        Parameters
        ----------
        features : mapping of str to 1-D array
            Per-frame values by collector name or output name, all of one length.
        """
        return np.array([self._map(y) for y in self._raw_many(features)], dtype=np.float64)

    def _raw_many(self, features: Mapping[str, Sequence[float] | np.ndarray]) -> list[float]:
        """Every frame's score before the transform and the clip."""
        columns = [self._column(features, f, many=True) for f in self.features]
        lengths = {c.shape for c in columns}
        if len(lengths) != 1 or len(next(iter(lengths))) != 1:
            raise ModelError(f"model {self.label}: features must be 1-D arrays of one length")
        if self.norm_type == "linear_rescale":
            columns = [
                f.slope * c + f.intercept for f, c in zip(self.features, columns, strict=True)
            ]
        if self.chroma_correction is not None:
            columns = self._correct(columns)
        raw = self.svm.predict_many(np.stack(columns, axis=1))
        return [
            _steps.denormalize(self.norm_type, self.slope, self.intercept, y) for y in raw.tolist()
        ]

    def predict_collection_many(
        self, features: Mapping[str, Sequence[float] | np.ndarray]
    ) -> dict[str, np.ndarray]:
        """A model collection's other scores for every frame, as libvmaf's
        ``vmaf_score_at_index_model_collection`` files them: name -> per-frame scores, in
        :meth:`collection_outputs` order. Empty for a model that is no collection.

        Parameters
        ----------
        features : mapping of str to 1-D array
            Per-frame values by collector name or output name, all of one length.
        """
        if self.bootstrap is None:
            return {}
        members = self.bootstrap.members
        raw = [m._raw_many(features) for m in members]
        out = {
            m.name: np.array([m._map(y) for y in r], dtype=np.float64)
            for m, r in zip(members, raw, strict=True)
        }
        table = np.array(raw, dtype=np.float64).T.reshape(-1, len(members))
        scores = bootstrap_scores(table, members[0]._map)
        out.update({self.name + suffix: s for suffix, s in zip(SUFFIXES, scores, strict=True)})
        return out

    def predict_collection(self, features: Mapping[str, float]) -> dict[str, float]:
        """One frame's :meth:`predict_collection_many`."""
        many = {key: [value] for key, value in features.items()}
        return {k: float(v[0]) for k, v in self.predict_collection_many(many).items()}


@dataclass(frozen=True)
class Bootstrap:
    """The members of a bootstrap model collection (its keys ``1``, ``2``, ...).

    Attributes
    ----------
    members : tuple of Model
        In key order, each named ``<name>_0001``, ``<name>_0002``, ...
    model_type : str
        Theirs: ``BOOTSTRAP_LIBSVMNUSVR`` or ``RESIDUEBOOTSTRAP_LIBSVMNUSVR`` (libvmaf
        scores both alike).
    """

    members: tuple[Model, ...]
    model_type: str


@dataclass(frozen=True)
class ModelSpec:
    """What a libvmaf ``--model`` argument asks for; :meth:`load` loads it."""

    version: str | None = None
    path: str | None = None
    name: str = "vmaf"
    enable_transform: bool = False
    disable_clip: bool = False
    overrides: tuple[tuple[str, str, str], ...] = ()

    def load(self, *, extractors: Sequence[Extractor] = COMPUTED_EXTRACTORS) -> Model:
        """Load the model (the overrides in their order: a later one wins)."""
        overrides: dict[str, dict[str, OptionValue]] = {}
        for feature, option, value in self.overrides:
            overrides.setdefault(feature, {})[option] = value
        return load_model(
            self.version,
            self.path,
            name=self.name,
            enable_transform=self.enable_transform,
            disable_clip=self.disable_clip,
            overrides=overrides,
            extractors=extractors,
        )


def model_arg(text: str) -> str:
    """``text`` as libvmaf's ``--model`` argument, where it starts with a bare name: a
    shipped model's name (``vmaf_v0.6.1``, ``vmaf_v0.6.1:name=x``) is a ``version=``, a
    ``.json`` file a ``path=``, as :func:`admcuda.score` takes a model. Any other text is
    returned as it is, for :func:`parse_model_arg` to read or refuse as libvmaf would.
    """
    head = text.split(":", 1)[0]
    if not head or "=" in head or head in ("enable_transform", "disable_clip"):
        return text
    return f"{'path' if head.lower().endswith('.json') else 'version'}={text}"


def parse_model_arg(text: str) -> ModelSpec:
    """Parse libvmaf's ``--model`` argument.

    ``version=NAME|path=FILE[:name=LABEL][:enable_transform][:disable_clip]
    [:FEATURE.OPTION=VALUE]...``, colon-separated as libvmaf's ``parse_model_config``
    reads it; ``enable_transform`` and ``disable_clip`` also take ``=true`` or ``=false``.
    Stricter than libvmaf where it would go on silently: exactly one of version and path,
    no key twice, no empty item, no second ``=``, booleans only ``true`` or ``false``.

    Raises
    ------
    ModelError
        One line naming the argument and what is wrong.
    """
    where = f"model argument '{text}'"
    fields: dict[str, str] = {}
    flags = {"enable_transform": False, "disable_clip": False}
    overrides: list[tuple[str, str, str]] = []
    for item in text.split(":"):
        key, sep, val = item.partition("=")
        if "=" in val:
            raise ModelError(f"{where}: more than one '=' in '{item}'")
        if key in flags:
            if sep and val not in ("true", "false"):
                raise ModelError(f"{where}: {key} takes true or false, got '{val}'")
            flags[key] = not sep or val == "true"
            continue
        if not sep:
            raise ModelError(f"{where}: bad option string '{item}' (expected KEY=VALUE)")
        if key in ("version", "path", "name"):
            if key in fields:
                raise ModelError(f"{where}: {key} given twice")
            if not val:
                raise ModelError(f"{where}: empty {key}")
            fields[key] = val
            continue
        feature, dot, option = key.partition(".")
        if not dot or not feature or not option or "." in option:
            raise ModelError(
                f"{where}: unknown key '{key}' (expected version, path, name, "
                "enable_transform, disable_clip or FEATURE.OPTION)"
            )
        if not val:
            raise ModelError(f"{where}: empty value for {key}")
        overrides.append((feature, option, val))
    if ("version" in fields) == ("path" in fields):
        raise ModelError(f"{where}: give exactly one of version= and path=")
    return ModelSpec(
        version=fields.get("version"),
        path=fields.get("path"),
        name=fields.get("name", "vmaf"),
        enable_transform=flags["enable_transform"],
        disable_clip=flags["disable_clip"],
        overrides=tuple(overrides),
    )


def load_model(
    version: str | None = None,
    path: str | Path | None = None,
    *,
    name: str | None = None,
    enable_transform: bool = False,
    disable_clip: bool = False,
    overrides: Mapping[str, Mapping[str, OptionValue]] | None = None,
    extractors: Sequence[Extractor] = COMPUTED_EXTRACTORS,
) -> Model:
    """Load a shipped model by version or a libvmaf JSON model file by path.

    Parameters
    ----------
    version : str, optional
        One of :data:`BUILTIN_VERSIONS`, :data:`V1016_VERSIONS` or :data:`FLOAT_VERSIONS`.
    path : str or Path, optional
        A libvmaf JSON model file. Give exactly one of version and path.
    name : str, optional
        The name the score is filed under; default ``vmaf``.
    enable_transform : bool
        Apply the model's score transform even where the model leaves it disabled
        (libvmaf's ``VMAF_MODEL_FLAG_ENABLE_TRANSFORM``; the phone model for vmaf_v0.6.1).
    disable_clip : bool
        Do not clip the score (``VMAF_MODEL_FLAG_DISABLE_CLIP``).
    overrides : mapping, optional
        Extractor name -> {option: value}, set on every model feature from that extractor,
        as ``--model ...:adm.adm_enhn_gain_limit=1.2`` does.
    extractors : sequence of Extractor
        The extractors whose features may be used; default :data:`COMPUTED_EXTRACTORS`.

    Raises
    ------
    ModelError
        One line naming the model and what is wrong or unsupported.
    """
    if (version is None) == (path is None):
        raise ModelError("give exactly one of a model version and a model path")
    if version is not None:
        shipped = BUILTIN_VERSIONS + V1016_VERSIONS + FLOAT_VERSIONS
        if version not in shipped:
            raise ModelError(
                f"unknown model version '{version}' (admcuda ships {', '.join(shipped)}; "
                "give others by path)"
            )
        label = version
        text = (resources.files("admcuda.model.data") / f"{version}.json").read_text("utf-8")
    else:
        label = str(path)
        try:
            # bounded: a device that never ends (/dev/zero) fails in one line, not in memory
            what = f"model {label}"
            text = read_text(path, limit=MODEL_LIMIT, what=what, kind="a model file")
        except FileNotFoundError:
            raise ModelError(f"cannot read model {label}: model file {label!r} not found") from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ModelError(f"cannot read model {label}: {reason}") from None
        except AdmError as exc:
            raise ModelError(str(exc)) from None
    return _parse_model(
        text,
        label,
        name=name or "vmaf",
        enable_transform=enable_transform,
        disable_clip=disable_clip,
        overrides=overrides or {},
        extractors=tuple(extractors),
    )


class _Number(float):
    """A JSON number keeping its text, which libvmaf re-reads for feature options."""

    text: str

    def __new__(cls, text: str) -> _Number:
        self = super().__new__(cls, float(text))
        self.text = text
        return self


class _Object(dict):
    """A JSON object keeping its pairs in order, duplicates included."""

    pairs: list[tuple[str, Any]]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    obj.pairs = pairs
    return obj


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _read_json(text: str, label: str) -> Any:
    try:
        return json.loads(
            text,
            parse_float=_Number,
            parse_int=_Number,
            parse_constant=_refuse_constant,
            object_pairs_hook=_object,
        )
    except ValueError as exc:
        raise ModelError(f"model {label}: not valid JSON: {exc}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, _Number)


def _numbers(value: Any, what: str, where: str) -> list[float]:
    if not isinstance(value, list) or not all(_is_number(v) for v in value):
        raise ModelError(f"{where}: {what} must be a list of numbers")
    return [float(v) for v in value]


def _option_text(value: Any, key: str, where: str) -> str:
    """The text libvmaf's dictionary holds for one option value of a model file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_number(value):
        return normalized_text(value.text)
    if isinstance(value, str):
        return value
    raise ModelError(f"{where}: option {key} must be a number, true, false or a string")


def _override_text(value: OptionValue, key: str, where: str) -> str:
    """The text libvmaf's dictionary holds for an overriding option value."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        if not math.isfinite(value):
            raise ModelError(f"{where}: option {key} must be finite, got {value!r}")
        text = repr(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ModelError(f"{where}: option {key} must be a bool, number or string")
    return normalized_text(text) if is_numeric(text) else text


def _parse_transform(obj: Any, where: str) -> tuple[bool, ScoreTransform]:
    if not isinstance(obj, dict):
        raise ModelError(f"{where}: score_transform must be an object")
    enabled = False
    terms: dict[str, float | None] = {"p0": None, "p1": None, "p2": None}
    knots: tuple[tuple[float, float], ...] | None = None
    rectify = {"out_lte_in": False, "out_gte_in": False}
    for key, value in obj.items():
        if key == "enabled":
            if not isinstance(value, bool):
                raise ModelError(f"{where}: score_transform.enabled must be true or false")
            enabled = value
        elif key in terms:
            if value is not None and not _is_number(value):
                raise ModelError(f"{where}: score_transform.{key} must be a number or null")
            terms[key] = None if value is None else float(value)
        elif key == "knots":
            knots = None if value is None else _parse_knots(value, where)
        elif key in rectify:
            if not isinstance(value, str):
                raise ModelError(f"{where}: score_transform.{key} must be a string")
            rectify[key] = value == "true"
    return enabled, ScoreTransform(knots=knots, **terms, **rectify)


def _parse_knots(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, list) or not all(
        isinstance(k, list) and len(k) == 2 and all(_is_number(v) for v in k) for k in value
    ):
        raise ModelError(f"{where}: score_transform.knots must be a list of [x, y] numbers")
    if len(value) > _MAX_KNOTS:
        raise ModelError(f"{where}: more than {_MAX_KNOTS} score_transform knots")
    knots = tuple((float(x), float(y)) for x, y in value)
    # libvmaf maps nothing (or leaves garbage) with fewer than two knots or a knot list
    # that does not ascend in x and y.
    if len(knots) < 2 or any(
        not (a[0] < b[0] and a[1] <= b[1]) for a, b in zip(knots[:-1], knots[1:], strict=True)
    ):
        raise ModelError(
            f"{where}: score_transform.knots need two or more points, x ascending strictly "
            "and y not descending"
        )
    return knots


def _find_extractor(name: str, extractors: Iterable[Extractor]) -> Extractor | None:
    for extractor in extractors:
        if name in extractor.provided_features:
            return extractor
    return None


# libvmaf 3.2.0's extractors of the model features admcuda does not compute, by the
# prefix of the feature name a model lists (src/feature/*.c, their provided_features).
_OTHER_EXTRACTORS: tuple[tuple[str, str], ...] = (
    ("Cambi_feature_", "cambi"),
    ("Speed_chroma_feature_", "speed_chroma"),
    ("Speed_temporal_feature_", "speed_temporal"),
    ("float_ssim", "float_ssim"),
    ("float_ms_ssim", "float_ms_ssim"),
    ("psnr", "psnr"),
    ("ciede", "ciede"),
)


def _libvmaf_extractor(feature: str) -> str:
    """The libvmaf extractor that computes ``feature`` (a name a model lists), for
    messages: ``"cambi"`` for ``Cambi_feature_cambi_score``; the name itself if unknown."""
    for prefix, extractor in _OTHER_EXTRACTORS:
        if feature.startswith(prefix):
            return extractor
    return feature


def _check_computable(md: Mapping[str, Any], where: str, extractors: Sequence[Extractor]) -> None:
    """Refuse, in one message, everything a model needs that admcuda does not compute:
    features of other extractors (by the extractor's libvmaf name, then the features)."""
    names = md.get("feature_names")
    missing: dict[str, list[str]] = {}
    if isinstance(names, list):
        for feature in names:
            if isinstance(feature, str) and _find_extractor(feature, extractors) is None:
                missing.setdefault(_libvmaf_extractor(feature), []).append(feature)
    needs = [
        f"{extractor} ({', '.join(repr(f) for f in features)})"
        for extractor, features in missing.items()
    ]
    if needs:
        computed = ", ".join(e.name for e in extractors)
        raise ModelError(
            f"{where} needs what admcuda does not compute: {'; '.join(needs)} (admcuda's "
            f"extractors: {computed})"
        )


# The substrings by which libvmaf's chroma correction finds its two inputs among a
# model's feature names (predict.c).
_GUIDING_SUBSTRING = "adm3"
_GUIDED_SUBSTRING = "speed_chroma"


def _chroma_correction(
    md: Mapping[str, Any], names: list[str], where: str
) -> ChromaCorrection | None:
    """The model's chroma correction, refusing one libvmaf would not apply as written: a
    parameter of 0 (libvmaf then writes no score) and feature names that do not hold
    each substring exactly once (an error, or values libvmaf never set)."""
    if "chroma_correction_parameter" not in md:
        return None
    value = md["chroma_correction_parameter"]
    if not _is_number(value):
        raise ModelError(f"{where}: chroma_correction_parameter must be a number")
    parameter = float(value)
    if parameter == 0:
        raise ModelError(
            f"{where}: chroma_correction_parameter 0 (libvmaf then writes no score for a frame)"
        )
    found = []
    for substring in (_GUIDING_SUBSTRING, _GUIDED_SUBSTRING):
        hits = [i for i, n in enumerate(names) if substring in n]
        if len(hits) != 1:
            raise ModelError(
                f"{where}: chroma_correction_parameter needs exactly one feature whose name "
                f"holds '{substring}', got {len(hits)}"
            )
        found.append(hits[0])
    return ChromaCorrection(parameter, guiding=found[0], guided=found[1])


def _parse_model(
    text: str,
    label: str,
    *,
    name: str,
    enable_transform: bool,
    disable_clip: bool,
    overrides: Mapping[str, Mapping[str, OptionValue]],
    extractors: tuple[Extractor, ...],
) -> Model:
    where = f"model {label}"
    root = _read_json(text, label)
    settings = {
        "enable_transform": enable_transform,
        "disable_clip": disable_clip,
        "overrides": overrides,
        "extractors": extractors,
    }
    if isinstance(root, dict) and "model_dict" in root:
        # libvmaf reads a file with model_dict as one model, whatever else it holds
        return _parse_model_dict(root["model_dict"], label, where, name=name, **settings)
    if isinstance(root, dict) and "0" in root:
        return _parse_collection(root, label, where, name=name, **settings)
    raise ModelError(
        f"{where}: not a VMAF model (no model_dict object) nor a model collection (models "
        "under the keys 0, 1, ...)"
    )


def _parse_collection(
    root: _Object, label: str, where: str, *, name: str, **settings: Any
) -> Model:
    """A model collection as libvmaf's ``model_collection_parse`` reads it: the keys
    ``0``, ``1``, ... in that order (others skipped); ``0`` is the model named ``name``,
    the others its members, named ``<name>_0001``, ..."""
    models: list[Model] = []
    for key, value in root.pairs:
        if key != str(len(models)):
            if key.isascii() and key.isdigit():
                raise ModelError(
                    f"{where}: model collection key '{key}' where libvmaf reads "
                    f"'{len(models)}' (it takes the keys 0, 1, 2, ... in order and skips the "
                    "rest)"
                )
            continue
        member = f"{where}, model {key}"
        if not isinstance(value, dict) or "model_dict" not in value:
            raise ModelError(f"{member}: no model_dict object")
        models.append(
            _parse_model_dict(
                value["model_dict"],
                label,
                where if key == "0" else member,
                name=name if key == "0" else member_name(name, len(models)),
                **settings,
            )
        )
    if len(models) < 2:
        raise ModelError(
            f"{where}: a model collection needs the models 0 and 1 at least (libvmaf refuses "
            "one without members)"
        )
    first, members = models[0], tuple(models[1:])
    types = sorted({m.model_type for m in members})
    if len(types) > 1 or types[0] not in _BOOTSTRAP_TYPES:
        raise ModelError(
            f"{where}: the models 1 and on of a model collection must all be "
            f"{' or '.join(_BOOTSTRAP_TYPES)} (libvmaf scores no other collection), got "
            f"{', '.join(types)}"
        )
    read = {f.collector_name for m in members for f in m.features}
    unread = [f.collector_name for f in first.features if f.collector_name not in read]
    if unread:
        raise ModelError(
            f"{where}: its model 0 reads {', '.join(unread)}, which none of its other models "
            "reads (libvmaf computes the features of those alone)"
        )
    return dataclasses.replace(first, bootstrap=Bootstrap(members, types[0]))


def _parse_model_dict(
    md: Any,
    label: str,
    where: str,
    *,
    name: str,
    enable_transform: bool,
    disable_clip: bool,
    overrides: Mapping[str, Mapping[str, OptionValue]],
    extractors: tuple[Extractor, ...],
) -> Model:
    if not isinstance(md, dict):
        raise ModelError(f"{where}: model_dict must be an object")
    _check_computable(md, where, extractors)

    model_type = md.get("model_type")
    if model_type not in _MODEL_TYPES:
        raise ModelError(
            f"{where}: model_type must be {', '.join(_MODEL_TYPES)}, got {model_type!r}"
        )
    norm_type = md.get("norm_type")
    if norm_type not in ("linear_rescale", "none"):
        raise ModelError(f"{where}: norm_type must be linear_rescale or none, got {norm_type!r}")

    names = md.get("feature_names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise ModelError(f"{where}: feature_names must be a non-empty list of strings")
    if len(names) > _MAX_FEATURES:
        raise ModelError(f"{where}: more than {_MAX_FEATURES} features")
    slopes = _numbers(md.get("slopes"), "slopes", where)
    intercepts = _numbers(md.get("intercepts"), "intercepts", where)
    for what, values in (("slopes", slopes), ("intercepts", intercepts)):
        if len(values) != len(names) + 1:
            raise ModelError(
                f"{where}: {what} has {len(values)} numbers; {len(names)} features need "
                f"{len(names) + 1} (the score's, then each feature's)"
            )
    opts_dicts = md.get("feature_opts_dicts", [])
    if not isinstance(opts_dicts, list) or not all(isinstance(d, dict) for d in opts_dicts):
        raise ModelError(f"{where}: feature_opts_dicts must be a list of objects")
    if len(opts_dicts) > len(names):
        raise ModelError(f"{where}: more feature_opts_dicts than feature_names")

    score_clip: tuple[float, float] | None = None
    if "score_clip" in md:
        bounds = _numbers(md["score_clip"], "score_clip", where)
        if len(bounds) != 2:
            raise ModelError(f"{where}: score_clip must be [min, max]")
        if not disable_clip:
            score_clip = (bounds[0], bounds[1])
    score_transform: ScoreTransform | None = None
    if "score_transform" in md:
        enabled, parsed = _parse_transform(md["score_transform"], where)
        if enabled or enable_transform:
            score_transform = parsed

    if not isinstance(md.get("model"), str):
        raise ModelError(f"{where}: no libsvm model text")
    try:
        svm = parse_libsvm(md["model"])
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None

    resolved: list[tuple[str, Extractor, dict[str, str]]] = []
    for i, feature in enumerate(names):
        extractor = _find_extractor(feature, extractors)
        assert extractor is not None  # _check_computable found every one
        texts: dict[str, str] = {}
        for key, value in opts_dicts[i].pairs if i < len(opts_dicts) else ():
            text_value = _option_text(value, key, f"{where}, feature {feature}")
            if key in texts and texts[key] != text_value:
                raise ModelError(f"{where}: feature {feature} sets option {key} twice")
            texts[key] = text_value
        resolved.append((feature, extractor, texts))

    used = {extractor.name for _, extractor, _ in resolved}
    for extractor_name, options in overrides.items():
        if extractor_name not in used:
            raise ModelError(
                f"{where}: override for '{extractor_name}', which none of its features "
                f"comes from (they come from {', '.join(sorted(used))})"
            )
        for _, extractor, texts in resolved:
            if extractor.name == extractor_name:
                for key, value in options.items():
                    texts[key] = _override_text(value, key, f"{where}, override")

    features = []
    for i, (feature, extractor, texts) in enumerate(resolved):
        context = f"{where}, feature {feature}"
        values = {key: parse_option(extractor, key, t, context) for key, t in texts.items()}
        collector = collector_name(feature, extractor, values)
        features.append(
            ModelFeature(
                extractor=extractor.name,
                options=values,
                collector_name=collector,
                output_name=output_name(collector),
                name=feature,
                slope=slopes[i + 1],
                intercept=intercepts[i + 1],
            )
        )
    return Model(
        label=label,
        name=name,
        chroma_correction=_chroma_correction(md, names, where),
        features=tuple(features),
        norm_type=norm_type,
        slope=slopes[0],
        intercept=intercepts[0],
        score_transform=score_transform,
        score_clip=score_clip,
        svm=svm,
        model_type=model_type,
    )

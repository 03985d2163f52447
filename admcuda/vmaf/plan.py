"""What one VMAF run computes: its feature extractors, their options and output names, its models.

A :class:`FeaturePlan` is built from libvmaf's command line as its ``vmaf`` tool reads it:
``--model`` arguments (each loaded by :mod:`admcuda.model`), ``--feature`` arguments among
``adm``, ``vif`` and ``motion`` (``adm_cuda``, ``vif_cuda`` and ``motion_cuda`` too), and the
ADM that admcuda's own options ask for; ``--feature psnr`` too (libvmaf's integer PSNR,
computed on the host from the planes read, luma and chroma, whatever the backend), and
``--feature float_ssim``, ``float_ms_ssim`` and ``cambi`` (on the host from the luma
planes read, with the compiled kernels of :mod:`admcuda.compiled.ssim` and
:mod:`admcuda.compiled.cambi`), and ``--feature speed_chroma`` (on the host from the
chroma planes read, with :mod:`admcuda.compiled.speed`), and ``--feature float_moment``
and ``float_psnr`` (on the host from the luma planes read, with NumPy:
:mod:`admcuda.vmaf.moment`, :mod:`admcuda.vmaf.float_psnr`), and ``--feature
float_motion`` (on the host from the reference planes read, luma and with its
``motion_add_uv`` chroma, with NumPy: :mod:`admcuda.vmaf.float_motion`), and ``--feature
ciede`` (on the host from the luma and chroma planes read, with
:mod:`admcuda.compiled.ciede`), and ``--feature psnr_hvs`` (on the host from the luma and
chroma planes read, with NumPy: :mod:`admcuda.vmaf.psnr_hvs`), and ``--feature
speed_temporal`` (on the host from the luma planes read, each frame against the one read
before, with :mod:`admcuda.compiled.speed`: :mod:`admcuda.vmaf.speed_temporal`), and
``--feature float_ansnr``, ``float_vif`` and ``float_adm`` (on the host from the luma
planes read, with NumPy: :mod:`admcuda.vmaf.float_ansnr`, :mod:`admcuda.vmaf.float_vif`,
:mod:`admcuda.vmaf.float_adm`). It registers
extractors as libvmaf does (``vmaf_use_features_from_model`` for each model in order, then
``vmaf_use_feature`` for each feature; ``feature_extractor_vector_append`` keeps the first
of two extractors with the same name and feature parameters, so ``vmaf_v0.6.1`` and
``vmaf_4k_v0.6.1`` share theirs while ``vmaf_v0.6.1neg``'s ``adm_enhn_gain_limit=1`` ADM is
another, and ``--feature adm=debug=true`` beside ``vmaf_v0.6.1`` adds nothing, ``debug``
being no feature parameter). :meth:`FeaturePlan.output_order` gives the keys libvmaf's
output files print per frame and in ``pooled_metrics``, in their order.

The ``*_cuda`` names compute the same numbers as the CPU extractors (libvmaf's CPU scalar
path: admcuda's numbers do not depend on the device) and print what libvmaf's CUDA
extractor prints: ``adm_cuda`` no ``integer_aim``/``integer_adm3`` and names by
``adm_enhn_gain_limit`` alone; ``motion_cuda`` ``integer_motion2`` and (its ``debug``
defaults to true) ``integer_motion``, no ``motion3``; each takes only the options its CUDA
extractor has.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from admcuda.errors import AdmError
from admcuda.model import (
    MOTION,
    VIF,
    Model,
    ModelError,
    ModelSpec,
    output_name,
    parse_model_arg,
)
from admcuda.model import Extractor as _Table
from admcuda.options import (
    ADM_CUDA_BASE_NAMES,
    NON_DEBUG_BASE_NAMES,
    OPTIONS,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    adm_cuda_feature_names,
    feature_names,
    libvmaf_number,
)
from admcuda.reference import motion as _motion
from admcuda.reference import psnr as _psnr
from admcuda.reference import vif as _vif
from admcuda.reference.motion import MotionOptions
from admcuda.reference.psnr import PsnrOptions
from admcuda.reference.vif import VifOptions
from admcuda.vmaf import cambi as _cambi
from admcuda.vmaf import ciede as _ciede
from admcuda.vmaf import float_adm as _float_adm
from admcuda.vmaf import float_ansnr as _float_ansnr
from admcuda.vmaf import float_motion as _float_motion
from admcuda.vmaf import float_psnr as _float_psnr
from admcuda.vmaf import float_vif as _float_vif
from admcuda.vmaf import moment as _moment
from admcuda.vmaf import psnr_hvs as _psnr_hvs
from admcuda.vmaf import speed as _speed
from admcuda.vmaf import speed_temporal as _speed_temporal
from admcuda.vmaf import ssim as _ssim
from admcuda.vmaf.cambi import CambiOptions
from admcuda.vmaf.ciede import CiedeOptions
from admcuda.vmaf.float_adm import FloatAdmOptions
from admcuda.vmaf.float_ansnr import FloatAnsnrOptions
from admcuda.vmaf.float_motion import FloatMotionOptions
from admcuda.vmaf.float_psnr import FloatPsnrOptions
from admcuda.vmaf.float_vif import FloatVifOptions
from admcuda.vmaf.moment import MomentOptions
from admcuda.vmaf.psnr_hvs import PsnrHvsOptions
from admcuda.vmaf.speed import SpeedChromaOptions
from admcuda.vmaf.speed_temporal import SpeedTemporalOptions
from admcuda.vmaf.ssim import MsSsimOptions, SsimOptions

__all__ = [
    "FEATURE_NAMES",
    "HOST_KINDS",
    "Extractor",
    "FeaturePlan",
    "build_plan",
    "parse_feature_arg",
]

ExtractorOptions: TypeAlias = (
    AdmOptions
    | VifOptions
    | MotionOptions
    | PsnrOptions
    | SsimOptions
    | MsSsimOptions
    | CambiOptions
    | SpeedChromaOptions
    | MomentOptions
    | FloatPsnrOptions
    | FloatMotionOptions
    | CiedeOptions
    | PsnrHvsOptions
    | SpeedTemporalOptions
    | FloatAnsnrOptions
    | FloatVifOptions
    | FloatAdmOptions
)

# libvmaf's extractor name -> the feature admcuda computes for it.
FEATURE_NAMES: Mapping[str, str] = {
    "adm": "adm",
    "vif": "vif",
    "motion": "motion",
    "adm_cuda": "adm",
    "vif_cuda": "vif",
    "motion_cuda": "motion",
    "psnr": "psnr",
    "float_ssim": "float_ssim",
    "float_ms_ssim": "float_ms_ssim",
    "cambi": "cambi",
    "speed_chroma": "speed_chroma",
    "float_moment": "float_moment",
    "float_psnr": "float_psnr",
    "float_motion": "float_motion",
    "ciede": "ciede",
    "psnr_hvs": "psnr_hvs",
    "speed_temporal": "speed_temporal",
    "float_ansnr": "float_ansnr",
    "float_vif": "float_vif",
    "float_adm": "float_adm",
}

# Features computed on the host from the frames read (every backend): PSNR reads chroma,
# SSIM and MS-SSIM run as compiled kernels on the luma planes, float_moment, float_psnr
# and float_motion in NumPy, ciede as a compiled kernel on the luma and chroma planes,
# psnr_hvs in NumPy on them, speed_temporal as compiled kernels on the luma planes,
# float_ansnr, float_vif and float_adm in NumPy.
HOST_KINDS = frozenset(
    {
        "psnr",
        *_ssim.SSIM_KINDS,
        _cambi.CAMBI_KIND,
        _speed.SPEED_KIND,
        _moment.MOMENT_KIND,
        _float_psnr.FLOAT_PSNR_KIND,
        _float_motion.FLOAT_MOTION_KIND,
        _ciede.CIEDE_KIND,
        _psnr_hvs.PSNR_HVS_KIND,
        _speed_temporal.SPEED_TEMPORAL_KIND,
        _float_ansnr.FLOAT_ANSNR_KIND,
        _float_vif.FLOAT_VIF_KIND,
        _float_adm.FLOAT_ADM_KIND,
    }
)

# libvmaf 3.2.0's psnr option table (integer_psnr.c): option -> (type, alias, min, max).
_PSNR_TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    "enable_chroma": ("bool", None, None, None),
    "enable_mse": ("bool", None, None, None),
    "enable_apsnr": ("bool", None, None, None),
    "reduced_hbd_peak": ("bool", None, None, None),
    "min_sse": ("double", None, 0.0, _psnr.MIN_SSE_MAX),
}

# The options libvmaf 3.2.0's CUDA extractors have (src/feature/cuda/integer_*_cuda.c); a
# CPU option they lack would be ignored there, and computed here.
_CUDA_OPTIONS: Mapping[str, frozenset[str]] = {
    "adm_cuda": frozenset(
        {"debug", "adm_enhn_gain_limit", "adm_norm_view_dist", "adm_ref_display_height"}
    ),
    "vif_cuda": frozenset({"debug", "vif_enhn_gain_limit"}),
    "motion_cuda": frozenset({"debug", "motion_force_zero"}),
}

# A model's name is written bare into XML attribute names, the CSV header and the SUB
# lines: these characters, and the names the layouts print themselves, would corrupt them.
_NAME_BREAKS = re.compile(r"[\s\x00-\x1f\x7f\"'<>&,|=]")
_LAYOUT_NAMES = ("frameNum", "Frame", "frame")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Extractor:
    """One feature extractor a run registers.

    Attributes
    ----------
    kind : str
        The feature computed: ``adm``, ``vif``, ``motion``, ``psnr``, ``float_ssim`` or
        ``float_ms_ssim``, ``cambi``, ``speed_chroma``, ``float_moment``, ``float_psnr``,
        ``float_motion``, ``ciede``, ``psnr_hvs``, ``speed_temporal``, ``float_ansnr``,
        ``float_vif`` or ``float_adm``.
    name : str
        libvmaf's extractor name (``adm``, ``vif_cuda``, ...).
    options : AdmOptions, VifOptions, MotionOptions, PsnrOptions, SsimOptions, MsSsimOptions,
        CambiOptions, SpeedChromaOptions, MomentOptions, FloatPsnrOptions,
        FloatMotionOptions, CiedeOptions, PsnrHvsOptions, SpeedTemporalOptions,
        FloatAnsnrOptions, FloatVifOptions or FloatAdmOptions
        Every option, resolved.
    names : mapping of str to str
        Each output's base name (ADM's and VIF's ``integer_*`` names, motion's provided
        feature names) -> the name libvmaf prints for it with these options.
    extract_outputs : tuple of str
        The printed names written frame by frame, in libvmaf's order (as frame 0 is
        extracted).
    flush_outputs : tuple of str
        The printed names written when the clip ends (motion's ``integer_motion2`` and
        ``integer_motion3``).
    aggregate_outputs : tuple of str
        The clip's single values libvmaf writes under ``aggregate_metrics`` (PSNR's
        ``apsnr_y``, ``apsnr_cb``, ``apsnr_cr`` with ``enable_apsnr``).
    later_outputs : tuple of str
        The printed names first written as frame 1 is extracted, after every extractor's
        frame 0 and before any flush (``float_motion``'s ``motion3``, which it writes for
        frame 0 then; in a clip of one frame it is written at flush instead).
    """

    kind: str
    name: str
    options: ExtractorOptions
    names: Mapping[str, str] = field(repr=False)
    extract_outputs: tuple[str, ...]
    flush_outputs: tuple[str, ...]
    aggregate_outputs: tuple[str, ...] = ()
    later_outputs: tuple[str, ...] = ()

    @property
    def outputs(self) -> tuple[str, ...]:
        """Every name it prints, in libvmaf's order for this extractor alone."""
        return self.extract_outputs + self.later_outputs + self.flush_outputs

    @property
    def identity(self) -> tuple[str, str]:
        """What libvmaf compares to keep one of two extractors: the name and the feature
        parameters (``vmaf_feature_name_from_options``), here through an output's name;
        PSNR, SSIM and MS-SSIM, whose options rename nothing, by all their options (two
        of them with other options print one name twice: refused, where libvmaf would
        keep the first and drop the second's options unsaid); float_adm, float_vif and
        float_motion, whose ``debug`` renames nothing, by a name as the integer ones."""
        if self.kind == _float_motion.FLOAT_MOTION_KIND:
            return self.name, self.names[_float_motion.MOTION2]
        if self.kind in (_float_adm.FLOAT_ADM_KIND, _float_vif.FLOAT_VIF_KIND):
            return self.name, self.extract_outputs[0]  # adm2, vif_scale0 and their suffixes
        if self.kind in HOST_KINDS:
            return self.name, repr(self.options)
        first = {"adm": "integer_adm2", "vif": "integer_vif_scale0", "motion": _motion.MOTION2}
        return self.name, self.names[first[self.kind]]

    @property
    def score_key(self) -> str:
        """For motion: the key under which :func:`admcuda.vmaf.compute.score_pair` gives
        each frame's score, which motion2 and motion3 are made from (the SAD score's
        printed name; ``integer_motion``'s for ``motion_cuda``, which may not print it)."""
        if self.kind != "motion":
            raise AttributeError("score_key is motion's")
        return self.names[_motion.MOTION if self.name == "motion_cuda" else _motion.SAD]

    @property
    def history(self) -> int:
        """How many previous reference planes a frame's score reads: 0, 1 or (motion's
        five-frame window) 2."""
        if self.kind == _speed_temporal.SPEED_TEMPORAL_KIND:
            return 1
        if self.kind == _float_motion.FLOAT_MOTION_KIND:
            return 0 if self.options.motion_force_zero else 1  # type: ignore[union-attr]
        if self.kind != "motion" or self.options.motion_force_zero:  # type: ignore[union-attr]
            return 0
        return 2 if self.options.motion_five_frame_window else 1  # type: ignore[union-attr]


@dataclass(frozen=True)
class FeaturePlan:
    """The extractors and models of one run, in libvmaf's registration order.

    Attributes
    ----------
    extractors : tuple of Extractor
        Distinct extractors; the first registered of equal ones.
    models : tuple of Model
        The models, in command-line order.
    predict : bool
        False with libvmaf's ``-n``/``--no_prediction``: the models' features are computed
        and printed, their scores are not.
    """

    extractors: tuple[Extractor, ...]
    models: tuple[Model, ...] = ()
    predict: bool = True

    @property
    def model_outputs(self) -> tuple[str, ...]:
        """The printed name of each model's score (``vmaf``, or its ``name=``), or none
        without prediction."""
        if not self.predict:
            return ()
        return tuple(output_name(m.name) for m in self.models)

    @property
    def collection_outputs(self) -> tuple[str, ...]:
        """The printed names of the model collections' other scores (``vmaf_0001``, ...,
        ``vmaf_bagging``, ``vmaf_stddev``, ``vmaf_ci_p95_lo``, ``vmaf_ci_p95_hi``), in
        ``--model`` order, or none without prediction."""
        if not self.predict:
            return ()
        return tuple(output_name(n) for m in self.models for n in m.collection_outputs())

    def output_order(self) -> list[str]:
        """Every key libvmaf prints per frame and in ``pooled_metrics``, in its order.

        libvmaf's collector keeps names in the order they are first written: frame 0's
        outputs, extractor by extractor in registration order; then, at the clip's end,
        motion's ``integer_motion2`` and ``integer_motion3``; then each model's score, in
        ``--model`` order, when the tool pools it; then the model collections' other
        scores (:attr:`collection_outputs`), which the tool pools after every model.
        (libvmaf's ``--threads`` runs frame 0's extractors concurrently and may print them
        in another order; this is its order without threads.)
        """
        order = [n for ex in self.extractors for n in ex.extract_outputs]
        order += [n for ex in self.extractors for n in ex.later_outputs]
        order += [n for ex in self.extractors for n in ex.flush_outputs]
        return order + list(self.model_outputs) + list(self.collection_outputs)

    @property
    def needs_every_frame(self) -> bool:
        """True when motion runs (or float_motion or speed_temporal, libvmaf's other
        temporal extractors): libvmaf runs it on every frame read, those ``--subsample``
        passes over included (a scored frame's motion compares it with the frame read just
        before, and its motion2 reads the next frame read). Feed those frames to
        :func:`admcuda.vmaf.compute.score_pair` with ``scored=False``. PSNR's
        ``enable_apsnr`` too: its clip value sums every frame read."""
        temporal = ("motion", _float_motion.FLOAT_MOTION_KIND, _speed_temporal.SPEED_TEMPORAL_KIND)
        return any(
            ex.kind in temporal or (ex.kind == "psnr" and ex.options.enable_apsnr)  # type: ignore[union-attr]
            for ex in self.extractors
        )

    @property
    def aggregate_outputs(self) -> tuple[str, ...]:
        """The names libvmaf writes under ``aggregate_metrics``, in its order."""
        return tuple(n for ex in self.extractors for n in ex.aggregate_outputs)

    @property
    def host_extractors(self) -> tuple[Extractor, ...]:
        """The extractors computed on the host from the frames read, whatever the backend
        (:data:`HOST_KINDS`: PSNR, SSIM, MS-SSIM, CAMBI, speed_chroma, float_moment,
        float_psnr, float_motion, ciede, psnr_hvs, speed_temporal, float_ansnr,
        float_vif, float_adm)."""
        return tuple(ex for ex in self.extractors if ex.kind in HOST_KINDS)

    def engine_plan(self) -> FeaturePlan:
        """This plan without its host extractors: what a backend's engine computes."""
        kept = tuple(ex for ex in self.extractors if ex.kind not in HOST_KINDS)
        return dataclasses.replace(self, extractors=kept)

    def for_pixel_format(self, pixel_format: str) -> FeaturePlan:
        """This plan for inputs of ``pixel_format``: PSNR on 4:0:0 scores luma alone and
        prints ``psnr_y`` (and ``mse_y``) only, as libvmaf's ``init`` turns chroma off."""
        if str(pixel_format) != "400" or not self.host_extractors:
            return self
        extractors = tuple(
            make_extractor(ex.name, dataclasses.replace(ex.options, enable_chroma=False))  # type: ignore[type-var]
            if ex.kind == "psnr"
            else ex
            for ex in self.extractors
        )
        return dataclasses.replace(self, extractors=extractors)

    def chroma_wanted(self, pixel_format: str) -> bool:
        """Whether a run over ``pixel_format`` inputs reads chroma planes (PSNR's,
        speed_chroma's, float_motion's with ``motion_add_uv``, ciede's, psnr_hvs')."""
        return str(pixel_format) != "400" and any(
            ex.kind in (_speed.SPEED_KIND, _ciede.CIEDE_KIND, _psnr_hvs.PSNR_HVS_KIND)
            or (ex.kind == "psnr" and ex.options.enable_chroma)  # type: ignore[union-attr]
            or (ex.kind == _float_motion.FLOAT_MOTION_KIND and ex.options.motion_add_uv)  # type: ignore[union-attr]
            for ex in self.host_extractors
        )

    @property
    def history(self) -> int:
        """How many previous reference planes :func:`admcuda.vmaf.compute.score_pair`
        needs: 0, 1 (``prev_ref``) or 2 (also ``prev_prev_ref``)."""
        return max((ex.history for ex in self.extractors), default=0)

    def pair_keys(self) -> list[str]:
        """The keys :func:`admcuda.vmaf.compute.score_pair` gives a scored frame: every
        extractor's per-frame outputs, motion's by :attr:`Extractor.score_key` (and
        ``integer_motion`` under ``debug``), in registration order."""
        keys: list[str] = []
        for ex in self.extractors:
            if ex.kind == "psnr":
                keys += ex.extract_outputs
                keys += psnr_sse_keys(ex)
                continue
            if ex.kind == _float_motion.FLOAT_MOTION_KIND:
                keys.append(_float_motion.score_key(ex))
                if ex.options.debug:  # type: ignore[union-attr]
                    keys.append(ex.names[_float_motion.MOTION])
                continue
            if ex.kind != "motion":
                keys += ex.extract_outputs
                continue
            keys.append(ex.score_key)
            if ex.options.debug:  # type: ignore[union-attr]
                keys.append(ex.names[_motion.MOTION])
        return list(dict.fromkeys(keys))

    def extractor_for(self, kind: str, options: ExtractorOptions) -> Extractor:
        """The plan's extractor that computes ``kind`` with ``options`` (as libvmaf would
        find it: same name and feature parameters)."""
        probe = make_extractor(kind, options)
        for ex in self.extractors:
            if ex.identity == probe.identity:
                return ex
        raise AdmError(f"the plan runs no {kind} extractor with options {options}")


def _check_collection_names(models: list[Model], printed: Mapping[str, str]) -> None:
    """Refuse a model collection's score name that another output of the run prints too
    (a model named ``vmaf_bagging`` beside the collection ``vmaf``): libvmaf would file
    both under one name and fail."""
    taken = {output_name(m.name): f"model {m.label}" for m in models}
    taken.update(printed)
    for model in models:
        for name in model.collection_outputs():
            out = output_name(name)
            if out in taken:
                raise AdmError(
                    f"model collection {model.label} files its score {out}, which "
                    f"{taken[out]} prints too: give one of them another name= "
                    "(--model ...:name=LABEL)"
                )
            taken[out] = f"model collection {model.label}"


# --- extractors ---------------------------------------------------------------------------


def psnr_sse_keys(ex: Extractor) -> tuple[str, ...]:
    """The keys under which :func:`admcuda.vmaf.compute.score_pair` gives a PSNR
    extractor's per-plane squared-error sums (Python ints), which ``enable_apsnr``'s clip
    values add up: none without it. A space keeps them apart from any printed name."""
    if ex.kind != "psnr" or not ex.options.enable_apsnr:  # type: ignore[union-attr]
        return ()
    planes = 3 if ex.options.enable_chroma else 1  # type: ignore[union-attr]
    return tuple(f"{ex.name} sse {plane}" for plane in ("y", "cb", "cr")[:planes])


def make_extractor(name: str, options: ExtractorOptions) -> Extractor:
    """The extractor libvmaf registers as ``name`` with ``options``: its printed names and
    which of them it writes, in its order."""
    kind = FEATURE_NAMES[name]
    if kind == _moment.MOMENT_KIND:
        assert isinstance(options, MomentOptions)
        outputs = _moment.output_names()
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _float_psnr.FLOAT_PSNR_KIND:
        assert isinstance(options, FloatPsnrOptions)
        outputs = _float_psnr.output_names()
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _float_motion.FLOAT_MOTION_KIND:
        assert isinstance(options, FloatMotionOptions)
        first, later = _float_motion.first_names(options), _float_motion.later_names(options)
        names = _float_motion.names(options)
        return Extractor(kind, name, options, names, first, (), later_outputs=later)
    if kind == _ciede.CIEDE_KIND:
        assert isinstance(options, CiedeOptions)
        outputs = _ciede.output_names()
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _psnr_hvs.PSNR_HVS_KIND:
        assert isinstance(options, PsnrHvsOptions)
        outputs = _psnr_hvs.output_names()
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _speed.SPEED_KIND:
        assert isinstance(options, SpeedChromaOptions)
        outputs = _speed.output_names(options)
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _speed_temporal.SPEED_TEMPORAL_KIND:
        assert isinstance(options, SpeedTemporalOptions)
        outputs = _speed_temporal.output_names(options)
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _float_ansnr.FLOAT_ANSNR_KIND:
        assert isinstance(options, FloatAnsnrOptions)
        outputs = _float_ansnr.output_names()
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _float_vif.FLOAT_VIF_KIND:
        assert isinstance(options, FloatVifOptions)
        names = _float_vif.names(options)
        return Extractor(kind, name, options, names, _float_vif.output_names(options), ())
    if kind == _float_adm.FLOAT_ADM_KIND:
        assert isinstance(options, FloatAdmOptions)
        outputs = _float_adm.output_names(options)
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == _cambi.CAMBI_KIND:
        assert isinstance(options, CambiOptions)
        outputs = _cambi.output_names(options)
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind in _ssim.SSIM_KINDS:
        assert isinstance(options, _ssim.OPTIONS_TYPES[kind])
        outputs = _ssim.output_names(kind, options)  # type: ignore[arg-type]
        return Extractor(kind, name, options, {n: n for n in outputs}, outputs, ())
    if kind == "psnr":
        assert isinstance(options, PsnrOptions)
        # the plan is built before the inputs are opened: 4:0:0 is applied by
        # FeaturePlan.for_pixel_format
        outputs = _psnr.output_names(options, "420")
        names = {n: n for n in outputs}
        aggregate = _psnr.APSNR_NAMES if options.enable_apsnr else ()
        return Extractor(kind, name, options, names, outputs, (), aggregate)
    if kind == "adm":
        assert isinstance(options, AdmOptions)
        if name == "adm_cuda":
            names = adm_cuda_feature_names(options)
            bases = [b for b in ADM_CUDA_BASE_NAMES if options.debug or b in NON_DEBUG_BASE_NAMES]
        else:
            names = feature_names(options)
            bases = [b for b in OUTPUT_BASE_NAMES if options.debug or b in NON_DEBUG_BASE_NAMES]
        return Extractor(kind, name, options, names, tuple(names[b] for b in bases), ())
    if kind == "vif":
        assert isinstance(options, VifOptions)
        names = _vif.feature_names(options)
        bases = _vif.ALL_FEATURES if options.debug else _vif.BASE_FEATURES
        return Extractor(kind, name, options, names, tuple(names[b] for b in bases), ())
    assert isinstance(options, MotionOptions)
    names = _motion.output_names(options)
    debug = (names[_motion.MOTION],) if options.debug else ()
    if name == "motion_cuda":
        # motion_cuda writes frame 0's motion2 (and, with debug, its score) as it extracts
        return Extractor(kind, name, options, names, (names[_motion.MOTION2],) + debug, ())
    flush = (names[_motion.MOTION2], names[_motion.MOTION3])
    return Extractor(kind, name, options, names, (names[_motion.SAD],) + debug, flush)


def _options_from_model(kind: str, values: Mapping[str, Any], where: str) -> ExtractorOptions:
    try:
        if kind == "adm":
            return AdmOptions(**values)
        if kind == "vif":
            return VifOptions(**values)
        if kind == _cambi.CAMBI_KIND:
            return CambiOptions(**values)
        if kind == _speed.SPEED_KIND:
            return SpeedChromaOptions(**values)
        if kind == _float_adm.FLOAT_ADM_KIND:
            return FloatAdmOptions(**values)
        if kind == _float_vif.FLOAT_VIF_KIND:
            return FloatVifOptions(**values)
        if kind == _float_motion.FLOAT_MOTION_KIND:
            return FloatMotionOptions(**values)
        return MotionOptions(**values)
    except (TypeError, ValueError) as exc:
        raise AdmError(f"{where}: {kind} options {dict(values)} are refused: {exc}") from None


# --- --feature ------------------------------------------------------------------------------


def _table(kind: str) -> dict[str, tuple[str, str | None, Any, Any]]:
    """Option name -> (type, alias, min, max) of libvmaf's extractor for ``kind``."""
    if kind == "psnr":
        return dict(_PSNR_TABLE)
    if kind in _ssim.TABLES:
        return dict(_ssim.TABLES[kind])
    if kind == _cambi.CAMBI_KIND:
        return {k: v[:4] for k, v in _cambi.TABLE.items()}
    if kind == _speed.SPEED_KIND:
        return dict(_speed.TABLE)
    if kind in (
        _moment.MOMENT_KIND,
        _float_psnr.FLOAT_PSNR_KIND,
        _ciede.CIEDE_KIND,
        _psnr_hvs.PSNR_HVS_KIND,
    ):
        return {}
    if kind == _float_motion.FLOAT_MOTION_KIND:
        return dict(_float_motion.TABLE)
    if kind == _speed_temporal.SPEED_TEMPORAL_KIND:
        return dict(_speed_temporal.TABLE)
    if kind == _float_ansnr.FLOAT_ANSNR_KIND:
        return {}
    if kind == _float_vif.FLOAT_VIF_KIND:
        return dict(_float_vif.TABLE)
    if kind == _float_adm.FLOAT_ADM_KIND:
        return dict(_float_adm.TABLE)
    if kind == "adm":
        return {s.name: (s.type, s.alias, s.min, s.max) for s in OPTIONS}
    table: _Table = VIF if kind == "vif" else MOTION
    return {o.name: (o.type, o.alias, o.min, o.max) for o in table.options}


def _parse_value(where: str, key: str, spec: tuple[str, str | None, Any, Any], text: str) -> Any:
    """A VIF, motion, PSNR, SSIM or MS-SSIM option's value as libvmaf computes with it,
    refusing what libvmaf would take for another value or ignore (trailing text, -0, a
    value out of range, an integer option's fraction, which libvmaf's ``atoi`` drops)."""
    typ, _, lo, hi = spec
    if typ == "bool":
        if text not in ("true", "false"):
            raise AdmError(f"{where}: option {key} expects true or false, got '{text}'")
        return text == "true"
    if not _NUMBER.fullmatch(text):
        raise AdmError(f"{where}: option {key} expects a number in [{lo:g}, {hi:g}], got '{text}'")
    # libvmaf's dictionary keeps a number as strtof's value printed by %g (dict.c)
    value = libvmaf_number(text)
    if value == 0 and math.copysign(1.0, value) < 0:
        raise AdmError(
            f"{where}: libvmaf refuses '{text}' for {key}, which it reads as -0 (its option "
            "parser takes a zero not written 0 for a failed parse); write 0"
        )
    if not (math.isfinite(value) and lo <= value <= hi):
        raise AdmError(f"{where}: option {key} must be in [{lo:g}, {hi:g}], got '{text}'")
    if typ == "int":
        if not value.is_integer():
            raise AdmError(
                f"{where}: option {key} expects an integer in [{lo:g}, {hi:g}], got '{text}'"
            )
        return int(value)
    return value


def parse_feature_arg(text: str) -> tuple[str, ExtractorOptions]:
    """Parse one ``--feature`` argument: ``NAME`` or ``NAME=KEY=VALUE:KEY=VALUE...``.

    ``NAME`` is one of :data:`FEATURE_NAMES`. As libvmaf's ``parse_feature_config`` reads
    it, the name ends at the first ``=`` and ``:`` separates the options, which take
    libvmaf's full option names. Stricter than libvmaf where it would go on silently: an
    alias (``egl``), an unknown option or one the ``*_cuda`` extractor lacks (libvmaf
    ignores them), an option given twice, a second ``=``, trailing text after a number.

    Returns
    -------
    (str, options)
        libvmaf's extractor name and its resolved options (:class:`AdmOptions`,
        :class:`VifOptions` or :class:`MotionOptions`).

    Raises
    ------
    AdmError
        One line naming the argument and what is wrong.
    """
    name, sep, rest = text.partition("=")
    where = f"--feature {name or text}"
    if name not in FEATURE_NAMES:
        import difflib  # only for a name that is not a feature

        close = difflib.get_close_matches(name, list(FEATURE_NAMES), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise AdmError(
            f"{where}: admcuda computes the features adm, vif and motion (also named "
            "adm_cuda, vif_cuda, motion_cuda), psnr, float_ssim, float_ms_ssim, cambi, "
            "speed_chroma, float_moment, float_psnr, float_motion, ciede, psnr_hvs, "
            "speed_temporal, float_ansnr, float_vif and float_adm, with options as "
            f"NAME=KEY=VALUE:KEY=VALUE{hint}"
        )
    kind = FEATURE_NAMES[name]
    given: dict[str, str] = {}
    if sep:
        for item in rest.split(":"):
            key, eq, value = item.partition("=")
            if not eq or not key or not value or "=" in value:
                raise AdmError(f"{where}: bad option string '{item}' (expected KEY=VALUE)")
            if key in given:
                raise AdmError(f"{where}: option {key} given twice")
            given[key] = value
    table = _table(kind)
    if given and not table:
        keys = ", ".join(f"'{key}'" for key in given)
        raise AdmError(
            f"{where}: libvmaf's {name} has no options and would ignore {keys}; "
            f"write --feature {name}"
        )
    aliases = {spec[1]: opt for opt, spec in table.items() if spec[1]}
    allowed = _CUDA_OPTIONS.get(name)
    for key, value in given.items():
        if key in aliases:
            raise AdmError(
                f"{where}: libvmaf reads options by their full names and would ignore "
                f"'{key}'; write {aliases[key]}={value}"
            )
        if key not in table:
            known = ", ".join(sorted(allowed or table))
            raise AdmError(f"{where}: libvmaf's {name} has no option '{key}' (it has {known})")
        if allowed is not None and key not in allowed:
            raise AdmError(
                f"{where}: libvmaf's {name} has no option {key} and would ignore it "
                f"(it has {', '.join(sorted(allowed))}); use --feature {kind}={key}={value}"
            )
    if kind == "adm":
        try:
            return name, AdmOptions.from_mapping(given)
        except AdmError as exc:
            raise AdmError(f"{where}: {exc}") from None
    if kind == _cambi.CAMBI_KIND:
        return name, _cambi.parse_options(where, given, _parse_value)
    if kind == _speed.SPEED_KIND:
        return name, _speed.parse_options(where, given, _parse_value)
    if kind == _moment.MOMENT_KIND:
        return name, MomentOptions()
    if kind == _float_psnr.FLOAT_PSNR_KIND:
        return name, FloatPsnrOptions()
    if kind == _float_motion.FLOAT_MOTION_KIND:
        return name, _float_motion.parse_options(where, given, _parse_value)
    if kind == _ciede.CIEDE_KIND:
        return name, CiedeOptions()
    if kind == _psnr_hvs.PSNR_HVS_KIND:
        return name, PsnrHvsOptions()
    if kind == _speed_temporal.SPEED_TEMPORAL_KIND:
        return name, _speed_temporal.parse_options(where, given, _parse_value)
    if kind == _float_ansnr.FLOAT_ANSNR_KIND:
        return name, FloatAnsnrOptions()
    if kind == _float_vif.FLOAT_VIF_KIND:
        return name, _float_vif.parse_options(where, given, _parse_value)
    if kind == _float_adm.FLOAT_ADM_KIND:
        return name, _float_adm.parse_options(where, given, _parse_value)
    values = {key: _parse_value(where, key, table[key], value) for key, value in given.items()}
    if kind == "psnr" or kind in _ssim.OPTIONS_TYPES:
        make = PsnrOptions if kind == "psnr" else _ssim.OPTIONS_TYPES[kind]
        try:
            return name, make(**values)
        except ValueError as exc:
            raise AdmError(f"{where}: {exc}") from None
    if name == "motion_cuda":
        values.setdefault("debug", True)  # motion_cuda's debug defaults to true
    try:
        return name, (VifOptions(**values) if kind == "vif" else MotionOptions(**values))
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


# --- the plan ---------------------------------------------------------------------------------


def _load(model: str | ModelSpec | Model) -> Model:
    if isinstance(model, Model):
        return model
    try:
        spec = parse_model_arg(model) if isinstance(model, str) else model
        if not isinstance(spec, ModelSpec):
            raise AdmError(
                f"a model must be a --model string, ModelSpec or Model, got {type(model).__name__}"
            )
        return spec.load()
    except ModelError as exc:
        raise AdmError(str(exc)) from None


def build_plan(
    models: Iterable[str | ModelSpec | Model] = (),
    features: Iterable[str | tuple[str, ExtractorOptions]] = (),
    *,
    adm: AdmOptions | None = None,
    predict: bool = True,
) -> FeaturePlan:
    """The plan of a run, registered as libvmaf's ``vmaf`` tool registers it.

    Parameters
    ----------
    models : iterable
        ``--model`` arguments (``version=vmaf_v0.6.1:name=foo``), :class:`ModelSpec` or
        loaded :class:`Model` objects, in command-line order. None gives no model (admcuda's
        default; libvmaf's tool adds ``vmaf_v0.6.1`` when given neither a model nor ``-n``).
    features : iterable
        ``--feature`` arguments (``vif``, ``motion=motion_force_zero=true``) or
        ``(libvmaf name, options)`` pairs as :func:`parse_feature_arg` returns them.
    adm : AdmOptions, optional
        admcuda's own ADM (``score``'s options), registered after the models and before
        ``features`` as ``--feature adm`` would be. Leave it None where the run asks for
        no ADM beyond the models'.
    predict : bool
        False for libvmaf's ``-n``: the models' features without their scores.

    Raises
    ------
    AdmError
        One line: a model or feature that cannot be computed or parsed, two models under one
        name, two extractors printing one name, nothing to compute.
    """
    loaded = [_load(m) for m in models]
    requests: list[tuple[str, ExtractorOptions, str]] = []
    for model in loaded:
        for kind, values in model.extractors():
            options = _options_from_model(kind, values, f"model {model.label}")
            requests.append((kind, options, f"model {model.label}"))
    if adm is not None:
        if not isinstance(adm, AdmOptions):
            raise AdmError(f"adm must be AdmOptions, got {type(adm).__name__}")
        requests.append(("adm", adm, "admcuda's ADM"))
    for item in features:
        name, options = parse_feature_arg(item) if isinstance(item, str) else item
        want = {
            "adm": AdmOptions, "vif": VifOptions, "motion": MotionOptions, "psnr": PsnrOptions,
            **_ssim.OPTIONS_TYPES, "cambi": CambiOptions, "speed_chroma": SpeedChromaOptions,
            "float_moment": MomentOptions, "float_psnr": FloatPsnrOptions,
            "float_motion": FloatMotionOptions, "ciede": CiedeOptions,
            "psnr_hvs": PsnrHvsOptions, "speed_temporal": SpeedTemporalOptions,
            "float_ansnr": FloatAnsnrOptions, "float_vif": FloatVifOptions,
            "float_adm": FloatAdmOptions,
        }  # fmt: skip
        if name not in FEATURE_NAMES or not isinstance(options, want[FEATURE_NAMES[name]]):
            raise AdmError(
                f"feature {name!r}: give adm, vif or motion (or *_cuda), psnr, float_ssim, "
                "float_ms_ssim, cambi, speed_chroma, float_moment, float_psnr, float_motion, "
                "ciede, psnr_hvs, speed_temporal, float_ansnr, float_vif or float_adm, with "
                "AdmOptions, VifOptions, MotionOptions, PsnrOptions, SsimOptions, MsSsimOptions, "
                "CambiOptions, SpeedChromaOptions, MomentOptions, FloatPsnrOptions, "
                "FloatMotionOptions, CiedeOptions, PsnrHvsOptions, SpeedTemporalOptions, "
                "FloatAnsnrOptions, FloatVifOptions or FloatAdmOptions"
            )
        requests.append((name, options, f"--feature {name}"))
    if not requests:
        raise AdmError(
            "nothing to compute: give a model or a feature (adm, vif, motion, psnr, "
            "float_ssim, float_ms_ssim, cambi, speed_chroma, float_moment, float_psnr, "
            "float_motion, ciede, psnr_hvs, speed_temporal, float_ansnr, float_vif or float_adm)"
        )

    extractors: list[Extractor] = []
    printed: dict[str, str] = {}
    for name, options, origin in requests:
        ex = make_extractor(name, options)
        if any(ex.identity == kept.identity for kept in extractors):
            continue  # libvmaf keeps the first one registered
        for out in ex.outputs:
            if out in printed:
                raise AdmError(
                    f"{origin}: its {name} would print {out}, which {printed[out]} prints too "
                    "(libvmaf cannot write one name twice)"
                )
            printed[out] = f"{origin} ({name})"
        extractors.append(ex)

    plan = FeaturePlan(tuple(extractors), tuple(loaded), bool(predict))
    seen: set[str] = set()
    for model in loaded:
        out = output_name(model.name)
        if model.name in seen:
            raise AdmError(
                f"two models are named '{model.name}': give each its own with name= "
                "(--model version=...:name=LABEL)"
            )
        seen.add(model.name)
        if predict and out in printed:
            raise AdmError(f"model {model.label}: its name '{out}' is a feature's output name")
        if predict and (_NAME_BREAKS.search(out) or out in _LAYOUT_NAMES):
            raise AdmError(
                f"model {model.label}: its name {out!r} cannot be written into libvmaf's XML, "
                "CSV and SUB outputs (no spaces, quotes, <, >, &, commas, | or =, and not "
                f"{', '.join(_LAYOUT_NAMES)})"
            )
    if predict:
        _check_collection_names(loaded, printed)
    for model in loaded:
        sources = (model, *model.bootstrap.members) if model.bootstrap else (model,)
        for f in (f for m in sources for f in m.features):
            options = _options_from_model(f.extractor, f.options, f"model {model.label}")
            ex = plan.extractor_for(f.extractor, options)
            if f.output_name not in ex.outputs:
                raise AdmError(
                    f"model {model.label} reads {f.output_name}, which its {ex.name} "
                    f"extractor does not print ({', '.join(ex.outputs)})"
                )
    return plan

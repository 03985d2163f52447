"""The features a VMAF model reads: libvmaf's extractor tables, option parsing and names.

A model names each input by one of the features an extractor provides
(``VMAF_integer_feature_adm2_score``) and may give that extractor options
(``adm_enhn_gain_limit: 1.0``). libvmaf then reads the feature from its collector under a
name built from the options (``vmaf_feature_name_from_options``, feature_name.c), and its
output files print that name through an alias table (alias.c). This module holds the
tables of libvmaf 3.2.0's integer adm, vif and motion extractors, its cambi and its
speed_chroma, and of its float_adm, float_vif and float_motion (those of its float models),
and reproduces both names.
The adm rows are :data:`admcuda.options.OPTIONS`'s; the vif and motion rows are written
here, as importing their reference modules would load VIF and motion code into an ADM run
(tests check they agree with those modules); so are cambi's (:mod:`admcuda.vmaf.cambi`)
and the float extractors' (:mod:`admcuda.vmaf.float_adm`, :mod:`admcuda.vmaf.float_vif`,
:mod:`admcuda.vmaf.float_motion`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from admcuda import options as _adm_options

__all__ = [
    "ADM",
    "CAMBI",
    "COMPUTED_EXTRACTORS",
    "FLOAT_ADM",
    "FLOAT_MOTION",
    "FLOAT_VIF",
    "MOTION",
    "OUTPUT_ALIASES",
    "SPEED_CHROMA",
    "VIF",
    "Extractor",
    "ModelError",
    "Option",
    "OptionValue",
    "collector_name",
    "output_name",
]

OptionValue = bool | int | float | str


class ModelError(ValueError):
    """A model, model argument or model input that admcuda refuses; the message is one line."""


@dataclass(frozen=True)
class Option:
    """One row of an extractor's option table (libvmaf's ``VmafOption``).

    ``feature_param`` is libvmaf's ``VMAF_OPT_FLAG_FEATURE_PARAM``: a non-default value
    renames the extractor's outputs by ``_<alias or name>[_<value>]``.
    """

    name: str
    alias: str | None
    type: Literal["bool", "int", "double", "string"]
    default: bool | int | float | str
    min: float | None = None
    max: float | None = None
    feature_param: bool = True


@dataclass(frozen=True)
class Extractor:
    """A feature extractor: its libvmaf name, the features it provides and its options."""

    name: str
    provided_features: tuple[str, ...]
    options: tuple[Option, ...]

    def option(self, key: str) -> Option | None:
        """The option named ``key`` (full name, as libvmaf's dictionaries key them)."""
        for opt in self.options:
            if opt.name == key:
                return opt
        return None


def _rows(specs: tuple[_adm_options.OptionSpec, ...]) -> tuple[Option, ...]:
    """Extractor rows from :data:`admcuda.options.OPTIONS`-style specs."""
    return tuple(
        Option(s.name, s.alias, s.type, s.default, s.min, s.max, s.feature_param) for s in specs
    )


# libvmaf 3.2.0 src/feature/integer_adm.c; the option rows are admcuda.options's table.
ADM = Extractor(
    "adm",
    (
        "VMAF_integer_feature_adm2_score", "VMAF_integer_feature_aim_score",
        "VMAF_integer_feature_adm3_score",
        "integer_adm_scale0", "integer_adm_scale1", "integer_adm_scale2", "integer_adm_scale3",
        "integer_adm", "integer_adm_num", "integer_adm_den",
        "integer_adm_num_scale0", "integer_adm_den_scale0", "integer_adm_num_scale1",
        "integer_adm_den_scale1", "integer_adm_num_scale2", "integer_adm_den_scale2",
        "integer_adm_num_scale3", "integer_adm_den_scale3",
    ),
    _rows(_adm_options.OPTIONS),
)  # fmt: skip

# libvmaf 3.2.0 src/feature/integer_vif.c, integer_vif.h.
VIF = Extractor(
    "vif",
    (
        "VMAF_integer_feature_vif_scale0_score", "VMAF_integer_feature_vif_scale1_score",
        "VMAF_integer_feature_vif_scale2_score", "VMAF_integer_feature_vif_scale3_score",
        "integer_vif", "integer_vif_num", "integer_vif_den", "integer_vif_num_scale0",
        "integer_vif_den_scale0", "integer_vif_num_scale1", "integer_vif_den_scale1",
        "integer_vif_num_scale2", "integer_vif_den_scale2", "integer_vif_num_scale3",
        "integer_vif_den_scale3",
    ),
    (
        Option("debug", None, "bool", False, feature_param=False),
        Option("vif_enhn_gain_limit", "egl", "double", 100.0, 1.0, 100.0),
        Option("vif_skip_scale0", "ssclz", "bool", False),
    ),
)  # fmt: skip

# libvmaf 3.2.0 src/feature/integer_motion.c.
MOTION = Extractor(
    "motion",
    (
        "VMAF_integer_feature_motion_sad_score",
        "VMAF_integer_feature_motion_score",
        "VMAF_integer_feature_motion2_score",
        "VMAF_integer_feature_motion3_score",
    ),
    (
        Option("motion_force_zero", "force_0", "bool", False),
        Option("motion_blend_factor", "mbf", "double", 1.0, 0.0, 1.0),
        Option("motion_blend_offset", "mbo", "double", 40.0, 0.0, 1000.0),
        Option("motion_fps_weight", "mfw", "double", 1.0, 0.0, 5.0),
        Option("motion_max_val", "mmxv", "double", 10000.0, 0.0, 10000.0),
        Option("motion_five_frame_window", "mffw", "bool", False),
        Option("motion_moving_average", "mma", "bool", False),
        Option("debug", None, "bool", False, feature_param=False),
    ),
)

# libvmaf 3.2.0 src/feature/cambi.c; admcuda.vmaf.cambi.TABLE holds the same rows (a test
# checks they agree).
CAMBI = Extractor(
    "cambi",
    ("Cambi_feature_cambi_score",),
    (
        Option("cambi_max_val", "cmxv", "double", 1000.0, 0.0, 1000.0),
        Option("enc_width", "encw", "int", 0, 180, 7680),
        Option("enc_height", "ench", "int", 0, 150, 7680),
        Option("enc_bitdepth", "encbd", "int", 0, 6, 16),
        Option("src_width", "srcw", "int", 0, 320, 7680),
        Option("src_height", "srch", "int", 0, 200, 4320),
        Option("window_size", "ws", "int", 65, 15, 127),
        Option("topk", None, "double", 0.6, 0.0001, 1.0),
        Option("cambi_topk", "ctpk", "double", 0.6, 0.0001, 1.0),
        Option("tvi_threshold", "tvit", "double", 0.019, 0.0001, 1.0),
        Option("cambi_vis_lum_threshold", "vlt", "double", 0.0, 0.0, 300.0),
        Option("max_log_contrast", "mlc", "int", 2, 0, 5),
        Option("heatmaps_path", None, "string", "", feature_param=False),
        Option("full_ref", None, "bool", False, feature_param=False),
        Option("eotf", None, "string", "bt1886"),
        Option("cambi_eotf", "ceot", "string", "bt1886"),
        Option("cambi_high_res_speedup", "hrs", "int", 0, 0, 2160),
    ),
)

# libvmaf 3.2.0 src/feature/speed.c, its speed_chroma extractor.
SPEED_CHROMA = Extractor(
    "speed_chroma",
    (
        "Speed_chroma_feature_speed_chroma_u_score",
        "Speed_chroma_feature_speed_chroma_v_score",
        "Speed_chroma_feature_speed_chroma_uv_score",
    ),
    (
        Option("speed_kernelscale", "ks", "double", 1.0, 0.1, 4.0),
        Option("speed_prescale", "ps", "double", 1.0, 0.1, 4.0),
        Option("speed_prescale_method", "psm", "string", "nearest"),
        Option("speed_sigma_nn", "snn", "double", 0.29, 0.1, 2.0),
        Option("speed_nn_floor", "nnf", "double", 0.0, 0.0, 1.0),
        Option("speed_max_val", "mxv", "double", 1000.0, 0.0, 1000.0),
        Option("speed_weight_var_mode", "wvm", "int", 0, 0, 6),
    ),
)

# libvmaf 3.2.0 src/feature/float_adm.c, built with its float features;
# admcuda.vmaf.float_adm.TABLE and FloatAdmOptions hold the same rows (a test checks they
# agree).
FLOAT_ADM = Extractor(
    "float_adm",
    (
        "VMAF_feature_adm2_score", "VMAF_feature_aim_score", "VMAF_feature_adm3_score",
        "VMAF_feature_adm_scale0_score", "VMAF_feature_adm_scale1_score",
        "VMAF_feature_adm_scale2_score", "VMAF_feature_adm_scale3_score",
        "adm_num", "adm_den", "adm_scale0",
        "adm_num_scale0", "adm_den_scale0", "adm_num_scale1", "adm_den_scale1",
        "adm_num_scale2", "adm_den_scale2", "adm_num_scale3", "adm_den_scale3",
    ),
    (
        Option("debug", None, "bool", False, feature_param=False),
        Option("adm_enhn_gain_limit", "egl", "double", 100.0, 1.0, 100.0),
        Option("adm_norm_view_dist", "nvd", "double", 3.0, 0.75, 24.0),
        Option("adm_noise_weight", "nw", "double", 0.03125, 0.0, 1500.0),
        Option("adm_csf_scale", "scf", "double", 1.0, 0.0, 50.0),
        Option("adm_csf_diag_scale", "scfd", "double", 1.0, 0.0, 50.0),
        Option("adm_ref_display_height", "rdf", "int", 1080, 1, 4320),
        Option("adm_csf_mode", "csf", "int", 0, 0, 9),
        Option("adm_bypass_cm", "bcm", "int", 0, 0, 1),
        Option("adm_adm3_apply_hm", "aah", "bool", False),
        Option("adm_p_norm", "apn", "double", 3.0, 1.0, 20.0),
        Option("adm_dlm_weight", "dlmw", "double", 0.5, 0.0, 1.0),
        Option("adm_min_val", "min", "double", 0.0, 0.0, 1.0),
        *(
            Option(f"adm_f{a}s{s}", f"f{a}s{s}", "double", -1.0, -1.0, 10.0)
            for a in (1, 2)
            for s in range(4)
        ),
        Option("adm_skip_aim_scale", "sasc", "int", -1, 0, 3),
        Option("adm_skip_scale0", "ssz", "bool", False),
    ),
)  # fmt: skip

# libvmaf 3.2.0 src/feature/float_vif.c; admcuda.vmaf.float_vif.TABLE and FloatVifOptions
# hold the same rows.
FLOAT_VIF = Extractor(
    "float_vif",
    (
        "VMAF_feature_vif_scale0_score", "VMAF_feature_vif_scale1_score",
        "VMAF_feature_vif_scale2_score", "VMAF_feature_vif_scale3_score",
        "vif", "vif_num", "vif_den", "vif_num_scale0", "vif_den_scale0",
        "vif_num_scale1", "vif_den_scale1", "vif_num_scale2", "vif_den_scale2",
        "vif_num_scale3", "vif_den_scale3",
    ),
    (
        Option("debug", None, "bool", False, feature_param=False),
        Option("vif_enhn_gain_limit", "egl", "double", 100.0, 1.0, 100.0),
        Option("vif_kernelscale", "ks", "double", 1.0, 0.1, 4.0),
        Option("vif_prescale", "ps", "double", 1.0, 0.1, 4.0),
        Option("vif_scale1_min_val", "s1miv", "double", 0.0, 0.0, 1.0),
        Option("vif_scale2_min_val", "s2miv", "double", 0.0, 0.0, 1.0),
        Option("vif_scale3_min_val", "s3miv", "double", 0.0, 0.0, 1.0),
        Option("vif_prescale_method", "pm", "string", "nearest"),
        Option("vif_sigma_nsq", "snsq", "double", 2.0, 0.0, 5.0),
        Option("vif_skip_scale0", "ssclz", "bool", False),
    ),
)  # fmt: skip

# libvmaf 3.2.0 src/feature/float_motion.c (its debug defaults to true);
# admcuda.vmaf.float_motion.TABLE and FloatMotionOptions hold the same rows.
FLOAT_MOTION = Extractor(
    "float_motion",
    (
        "VMAF_feature_motion_score",
        "VMAF_feature_motion2_score",
        "VMAF_feature_motion3_score",
    ),
    (
        Option("debug", None, "bool", True, feature_param=False),
        Option("motion_force_zero", "force_0", "bool", False),
        Option("motion_fps_weight", "mfw", "double", 1.0, 0.0, 5.0),
        Option("motion_blend_factor", "mbf", "double", 1.0, 0.0, 1.0),
        Option("motion_blend_offset", "mbo", "double", 40.0, 0.0, 1000.0),
        Option("motion_add_scale1", "mdc", "bool", False),
        Option("motion_filter_size", "mfs", "int", 5, 0, 9),
        Option("motion_add_uv", "mau", "bool", False),
        Option("motion_max_val", "mmxv", "double", 10000.0, 0.0, 10000.0),
    ),
)

# The extractors whose features admcuda computes, in libvmaf's registry order
# (feature_extractor.c: its float extractors first; the first extractor providing a
# feature name is the one libvmaf uses). A caller that computes more passes an extended
# tuple to load_model.
COMPUTED_EXTRACTORS: tuple[Extractor, ...] = (
    FLOAT_ADM,
    FLOAT_VIF,
    FLOAT_MOTION,
    SPEED_CHROMA,
    ADM,
    MOTION,
    VIF,
    CAMBI,
)

# libvmaf 3.2.0 src/feature/alias.c: the names its output files print for collector names.
OUTPUT_ALIASES: Mapping[str, str] = {
    "VMAF_feature_adm2_score": "adm2",
    "VMAF_feature_aim_score": "aim",
    "VMAF_feature_adm3_score": "adm3",
    "VMAF_feature_adm_scale0_score": "adm_scale0",
    "VMAF_feature_adm_scale1_score": "adm_scale1",
    "VMAF_feature_adm_scale2_score": "adm_scale2",
    "VMAF_feature_adm_scale3_score": "adm_scale3",
    "VMAF_feature_motion_score": "motion",
    "VMAF_feature_motion2_score": "motion2",
    "VMAF_feature_motion3_score": "motion3",
    "VMAF_feature_vif_scale0_score": "vif_scale0",
    "VMAF_feature_vif_scale1_score": "vif_scale1",
    "VMAF_feature_vif_scale2_score": "vif_scale2",
    "VMAF_feature_vif_scale3_score": "vif_scale3",
    "VMAF_integer_feature_adm2_score": "integer_adm2",
    "VMAF_integer_feature_aim_score": "integer_aim",
    "VMAF_integer_feature_adm3_score": "integer_adm3",
    "VMAF_integer_feature_motion_score": "integer_motion",
    "VMAF_integer_feature_motion2_score": "integer_motion2",
    "VMAF_integer_feature_motion3_score": "integer_motion3",
    "VMAF_integer_feature_vif_scale0_score": "integer_vif_scale0",
    "VMAF_integer_feature_vif_scale1_score": "integer_vif_scale1",
    "VMAF_integer_feature_vif_scale2_score": "integer_vif_scale2",
    "VMAF_integer_feature_vif_scale3_score": "integer_vif_scale3",
    "Cambi_feature_cambi_score": "cambi",
    "Speed_chroma_feature_speed_chroma_u_score": "speed_chroma_u",
    "Speed_chroma_feature_speed_chroma_v_score": "speed_chroma_v",
    "Speed_chroma_feature_speed_chroma_uv_score": "speed_chroma_uv",
    "Speed_temporal_feature_speed_temporal_score": "speed_temporal",
}

# libvmaf builds feature names in a 256-byte buffer.
_MAX_NAME_LEN = 255


def output_name(collector: str) -> str:
    """The name libvmaf's XML/JSON/CSV output prints for a collector name.

    >>> output_name("VMAF_integer_feature_adm2_score"), output_name("integer_adm2_egl_1")
    ('integer_adm2', 'integer_adm2_egl_1')
    """
    return OUTPUT_ALIASES.get(collector, collector)


def collector_name(feature: str, extractor: Extractor, values: Mapping[str, Any]) -> str:
    """The collector name libvmaf files ``feature`` under, for the extractor's option values.

    ``values`` holds the parsed value of every option given (others are at their default).
    Mirrors ``vmaf_feature_name_from_options``: with no feature parameter away from its
    default the name is the feature's own; otherwise its alias, then for each such option in
    byte order of its name ``_<alias or name>`` (booleans) or ``_<alias or name>_<value>``
    with the value printed by ``%d`` or ``%g``.
    """
    parts = []
    for opt in sorted(extractor.options, key=lambda o: o.name.encode()):
        if not opt.feature_param or opt.name not in values:
            continue
        value = values[opt.name]
        if value == opt.default:
            continue
        key = opt.alias or opt.name
        if opt.type == "bool":
            parts.append(f"_{key}")
        elif opt.type == "string":
            parts.append(f"_{key}_{value}")
        elif opt.type == "int":
            parts.append(f"_{key}_{value:d}")
        else:
            parts.append(f"_{key}_{value:g}")
    if not parts:
        return feature
    return (output_name(feature) + "".join(parts))[:_MAX_NAME_LEN]


@functools.lru_cache(maxsize=1)
def _libc_strtof() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        fn = libc.strtof
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    return fn


def _strtof_prefix(text: str) -> tuple[float, str]:
    """C's ``strtof``: the float32 value of the longest numeric prefix, and the rest."""
    raw = text.encode("utf-8", "surrogateescape")
    fn = _libc_strtof()
    if fn is not None:
        buf = ctypes.create_string_buffer(raw)
        end = ctypes.c_char_p()
        value = float(fn(buf, ctypes.byref(end)))
        used = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)
        return value, raw[used:].decode("utf-8", "surrogateescape")
    match = _C_FLOAT_PREFIX.match(text)
    if not match:
        return 0.0, text
    number = float(match.group(0))
    try:  # a double rounded to float32: differs from strtof only at a float32 tie
        return struct.unpack("f", struct.pack("f", number))[0], text[match.end() :]
    except OverflowError:
        return math.copysign(math.inf, number), text[match.end() :]


_C_FLOAT_PREFIX = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_ATOI_PREFIX = re.compile(r"\s*[+-]?\d+")


def normalized_text(text: str) -> str:
    """The text libvmaf's dictionary keeps for a numeric value: ``%g`` of its ``strtof``.

    libvmaf stores every number of a model's ``feature_opts_dicts`` and of a
    ``--model ...:FEATURE.OPTION=VALUE`` this way (``VMAF_DICT_NORMALIZE_NUMERICAL_VALUES``,
    dict.c), so ``1.0`` is kept as ``1`` and ``4.1234567`` as ``4.12346``.
    """
    value, rest = _strtof_prefix(text)
    if value == 0 and rest == text:
        return text
    return f"{value:g}"


def is_numeric(text: str) -> bool:
    """libvmaf's test for a numeric option text: a float and nothing but spaces after it."""
    _, rest = _strtof_prefix(text)
    return rest != text and not rest.strip()


def parse_option(extractor: Extractor, key: str, text: str, where: str) -> OptionValue:
    """The value libvmaf's option parser (opt.c) sets for ``key`` from the dictionary ``text``.

    Raises :class:`ModelError` where libvmaf's extractor would refuse the options (a bad
    boolean, a zero it takes for a failed parse, a value out of range), and for a key the
    extractor does not have (which libvmaf ignores without a word).
    """
    opt = extractor.option(key)
    if opt is None:
        known = ", ".join(o.name for o in extractor.options)
        raise ModelError(
            f"{where}: libvmaf's {extractor.name} extractor has no option '{key}' (it has {known})"
        )
    if opt.type == "bool":
        if text == "true":
            return True
        if text == "false":
            return False
        raise ModelError(f"{where}: option {key} expects true or false, got '{text}'")
    if opt.type == "string":
        return text
    if opt.type == "int":
        match = _ATOI_PREFIX.match(text)
        value: float = int(match.group(0)) if match else 0
    else:
        match = _C_FLOAT_PREFIX.match(text)
        value = float(match.group(0)) if match else 0.0
    # libvmaf's atoi/atof give no error: it takes a zero whose text does not start with '0'
    # for a failed parse.
    if value == 0 and not text.startswith("0"):
        raise ModelError(f"{where}: option {key} expects a number, got '{text}'")
    assert opt.min is not None and opt.max is not None
    if not opt.min <= value <= opt.max:
        raise ModelError(
            f"{where}: option {key} must be in [{opt.min:g}, {opt.max:g}], got '{text}'"
        )
    return value

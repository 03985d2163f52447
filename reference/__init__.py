"""Bit-exact NumPy reference of libvmaf's integer ADM (``integer_adm.c``, scalar C path).

One module per libvmaf stage: :mod:`dwt2`, :mod:`decouple`, :mod:`csf`, :mod:`csf_den`,
:mod:`cm`; :mod:`adm` chains them and holds the double-precision finish.

Integer VIF (``integer_vif.c``): :mod:`vif` (statistics, log2 table, finish,
:func:`compute_vif`) and :mod:`vif_filters` (filters, mirroring, decimation).
"""

import importlib

from .adm import (
    ALL_FEATURES,
    BASE_FEATURES,
    DEBUG_FEATURES,
    ScaleStages,
    compute_adm,
    finish,
    scale_scores,
    stages,
)
from .cm import cm
from .csf import csf, csf_factors, rfactors
from .csf_den import csf_den
from .decouple import decouple, decouple_s123
from .dwt2 import Bands, dwt2, dwt2_s123

# VIF and motion load on first use: an ADM run (and ``import admcuda.reference.adm``,
# which runs this file) need not build their tables.
_LAZY = {
    **dict.fromkeys(
        (
            "MotionOptions",
            "MotionState",
            "compute_motion",
            "motion_score_pipeline",
            "x_conv_row_sad",
            "y_conv_diff",
        ),
        "motion",
    ),
    **dict.fromkeys(
        (
            "Moments",
            "VifOptions",
            "VifResiduals",
            "compute_vif",
            "log2_32",
            "log2_64",
            "log_generate",
            "vif_horizontal",
            "vif_num_den",
            "vif_residuals",
            "vif_scales",
            "vif_sigma",
            "vif_statistic_8",
            "vif_statistic_16",
            "vif_vertical_8",
            "vif_vertical_16",
        ),
        "vif",
    ),
    **dict.fromkeys(
        ("decimate_and_pad", "pad_top_and_bottom", "subsample_rd_8", "subsample_rd_16"),
        "vif_filters",
    ),
}
# Names this package gives a VIF name under another name.
_RENAMED = {
    "VIF_ALL_FEATURES": ("vif", "ALL_FEATURES"),
    "VIF_BASE_FEATURES": ("vif", "BASE_FEATURES"),
    "VIF_DEBUG_FEATURES": ("vif", "DEBUG_FEATURES"),
    "vif_feature_names": ("vif", "feature_names"),
    "vif_write_scores": ("vif", "write_scores"),
}

__all__ = [
    "ALL_FEATURES",
    "BASE_FEATURES",
    "DEBUG_FEATURES",
    "Bands",
    "cm",
    "compute_adm",
    "csf",
    "csf_den",
    "csf_factors",
    "decouple",
    "decouple_s123",
    "dwt2",
    "dwt2_s123",
    "MotionOptions",
    "MotionState",
    "compute_motion",
    "motion_score_pipeline",
    "x_conv_row_sad",
    "y_conv_diff",
    "finish",
    "rfactors",
    "scale_scores",
    "ScaleStages",
    "stages",
    "VIF_ALL_FEATURES",
    "VIF_BASE_FEATURES",
    "VIF_DEBUG_FEATURES",
    "Moments",
    "VifOptions",
    "VifResiduals",
    "compute_vif",
    "decimate_and_pad",
    "log2_32",
    "log2_64",
    "log_generate",
    "pad_top_and_bottom",
    "subsample_rd_8",
    "subsample_rd_16",
    "vif_feature_names",
    "vif_horizontal",
    "vif_num_den",
    "vif_residuals",
    "vif_scales",
    "vif_sigma",
    "vif_statistic_8",
    "vif_statistic_16",
    "vif_vertical_8",
    "vif_vertical_16",
    "vif_write_scores",
]


def __getattr__(name: str) -> object:
    home, attr = _RENAMED.get(name, (_LAZY.get(name), name))
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

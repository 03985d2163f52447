"""Bit-exact NumPy reference of libvmaf's integer ADM (``integer_adm.c``, scalar C path).

One module per libvmaf stage: :mod:`dwt2`, :mod:`decouple`, :mod:`csf`, :mod:`csf_den`,
:mod:`cm`; :mod:`adm` chains them and holds the double-precision finish.

Integer VIF (``integer_vif.c``): :mod:`vif` (statistics, log2 table, finish,
:func:`compute_vif`) and :mod:`vif_filters` (filters, mirroring, decimation).
"""

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
from .motion import (
    MotionOptions,
    MotionState,
    compute_motion,
    motion_score_pipeline,
    x_conv_row_sad,
    y_conv_diff,
)
from .vif import ALL_FEATURES as VIF_ALL_FEATURES
from .vif import BASE_FEATURES as VIF_BASE_FEATURES
from .vif import DEBUG_FEATURES as VIF_DEBUG_FEATURES
from .vif import (
    Moments,
    VifOptions,
    VifResiduals,
    compute_vif,
    log2_32,
    log2_64,
    log_generate,
    vif_horizontal,
    vif_num_den,
    vif_residuals,
    vif_scales,
    vif_sigma,
    vif_statistic_8,
    vif_statistic_16,
    vif_vertical_8,
    vif_vertical_16,
)
from .vif import feature_names as vif_feature_names
from .vif import write_scores as vif_write_scores
from .vif_filters import decimate_and_pad, pad_top_and_bottom, subsample_rd_8, subsample_rd_16

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

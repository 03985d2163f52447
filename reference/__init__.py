"""Bit-exact NumPy reference of libvmaf's integer ADM (``integer_adm.c``, scalar C path).

One module per libvmaf stage: :mod:`dwt2`, :mod:`decouple`, :mod:`csf`, :mod:`csf_den`,
:mod:`cm`; :mod:`adm` chains them and holds the double-precision finish.
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
]

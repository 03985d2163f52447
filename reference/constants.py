"""Fixed-point constants of libvmaf's integer ADM, in one place.

Every number here mirrors one in ``libvmaf/src/feature/integer_adm.c``,
``integer_adm.h`` or ``barten_csf_tools.h`` (Netflix/vmaf f85a8536). Each rounding
shift is a ``(round, shift)`` pair: the value added before an arithmetic right shift,
then the shift. The CUDA kernels are instantiated from the same module, so the two
backends cannot drift apart.
"""

from __future__ import annotations

import numpy as np

# --- Daubechies-2 analysis filters (Q15) -----------------------------------------------
DWT_LO = (15826, 27411, 7345, -4240)
DWT_HI = (-4240, -7345, 27411, -15826)
DWT_LO_SUM = 46342  # sum of DWT_LO; recentres unsigned pixels around zero
DWT_HI_SUM = 0

# scale-0 DWT: vertical pass rounds by the input bit depth, horizontal by 16.
DWT0_VP_8BIT = (128, 8)
DWT0_HP = (32768, 16)

# scale 1..3 DWT on int32 bands; index = scale - 1.
DWT_S123_VP = ((0, 0), (32768, 16), (32768, 16))
DWT_S123_HP = ((16384, 15), (32768, 16), (16384, 15))

# --- decouple ---------------------------------------------------------------------------
DIV_Q_FACTOR = 1 << 30  # reciprocal table is Q30
K_ONE = 32768  # Q15 one: gain k is clamped to [0, K_ONE]
K_ROUND = (16384, 15)
ANGLE_SCALE = 4096.0  # dot products are divided by this before the angle test


def div_lookup() -> np.ndarray:
    """Reciprocal table: ``lut[32768 + i] = 2**30 // i``, ``lut[32768 - i] = -lut[32768 + i]``.

    Mirrors libvmaf's ``div_lookup_generator``; entry 32768 (division by zero) is 0.
    """
    i = np.arange(1, 32769, dtype=np.int64)
    recip = (DIV_Q_FACTOR // i).astype(np.int32)
    lut = np.zeros(65537, dtype=np.int32)
    lut[32768 + i] = recip
    lut[32768 - i] = -recip
    return lut


DIV_LOOKUP = div_lookup()

# --- CSF ----------------------------------------------------------------------------------
# scale 0: i_rfactor is Q21 for h/v and Q23 for d; these are libvmaf's hard-wired values
# for the default 3H / 1080-line geometry with the Watson CSF.
RFACTOR0_DEFAULT = (36453, 36453, 49417)
RFACTOR0_Q = (21, 21, 23)
CSF0_ROUND = ((16384, 15), (16384, 15), (65535, 17))  # note: 65535, not 65536, for d
FIX_ONE_BY_30 = 4369  # (1/30) * 2**17
FLT0_ROUND = (2048, 12)

# scale 1..3: i_rfactor is Q32.
RFACTOR_S123_Q = 32
CSF_S123_DST = (1 << 27, 28)
I4_FIX_ONE_BY_30 = 143165577
# libvmaf stores (1u << 31) into an int32_t: the "rounding" term is -2**31.
CSF_S123_FLT = (-(1 << 31), 32)

# --- contrast masking -------------------------------------------------------------------
ONE_BY_15 = 8738
I4_ONE_BY_15 = 286331153
CM0_SQ = ((268435456, 29), (268435456, 29), (536870912, 30))  # h, v, d
CM0_SUB_SHIFT = (10, 10, 12)  # thr is shifted up by this before the subtraction
CM0_CUB_LOG2_OFFSET = (4, 4, 3)  # shift_cub = ceil(log2(w) - offset)
CM0_FINAL_EXP = (52, 52, 57)
CM_S123_SQ = (536870912, 30)
CM_S123_FINAL_EXP = (45, 39, 36)

# --- CSF denominator --------------------------------------------------------------------
DEN0_LOG2_OFFSET = 20
DEN0_FINAL_EXP = 18
# libvmaf adds 1 << shift (not half of it) before the squaring shift.
DEN_S123_SQ_SHIFT = (31, 30, 31)
DEN_S123_FINAL_EXP = (32, 27, 23)

# --- geometry and float finish ----------------------------------------------------------
BORDER_FACTOR = 0.1
DEFAULT_NORM_VIEW_DIST = 3.0
DEFAULT_REF_DISPLAY_HEIGHT = 1080
CSF_LUMINANCE = 100.0
SKIP_SCALE0_DEN = np.float32(1e-10)
NUMDEN_LIMIT = 1e-10  # scaled by w*h / 1920*1080
ONE_THIRD_F = np.float32(1.0) / np.float32(3.0)

# Watson 97 noise-floor model for luma (a, k, f0, g[theta]) and basis amplitudes.
WATSON_Y = (0.495, 0.466, 0.401, (1.501, 1.0, 0.534, 1.0))
WATSON_AMPLITUDES = (
    (0.62171, 0.67234, 0.72709, 0.67234),
    (0.34537, 0.41317, 0.49428, 0.41317),
    (0.18004, 0.22727, 0.28688, 0.22727),
    (0.091401, 0.11792, 0.15214, 0.11792),
    (0.045943, 0.059758, 0.077727, 0.059758),
    (0.023013, 0.030018, 0.039156, 0.030018),
)

# Barten CSF (HDR-VDP-2 fit): luminance anchors, per-anchor (p0..p4), rod/cone and MTF.
BARTEN_ANCHORS = (0.002, 0.02, 0.2, 2.0, 20.0, 150.0)
BARTEN_PARAMS = (
    (0.0160737, 0.991265, 3.74038, 0.50722, 4.46044),
    (0.383873, 0.800889, 3.54104, 0.682505, 4.94958),
    (0.929301, 0.476505, 4.37453, 0.750315, 5.28678),
    (1.29776, 0.405782, 4.40602, 0.935314, 5.61425),
    (1.49222, 0.334278, 3.79542, 1.07327, 6.4635),
    (1.46213, 0.394533, 2.7755, 1.16577, 7.45665),
)
BARTEN_SA = (30.162, 4.0627, 1.6596, 0.2712)
BARTEN_MTF_A = (0.424838596301290, 0.572435103936480, 0.000167576239164937, 0.00255872352306433)
BARTEN_MTF_B = (0.028, 0.37, 37.0, 360.0)

# Blended Barten/Watson CSF tables: (display height, view distance) -> [theta][scale],
# theta 0 = h/v, 1 = d. 2160 lines at 1.5H reuse the 1080 at 3H row (same pixels/degree).
BLEND_CSF = {
    (1080, 3.0): ((0.01183, 0.025026, 0.04295, 0.058621), (0.004302, 0.011778, 0.023918, 0.035901)),
    (1080, 5.0): ((0.004212, 0.014809, 0.029642, 0.047464), (0.000984, 0.005852, 0.0146, 0.027574)),
    (2160, 1.5): ((0.01183, 0.025026, 0.04295, 0.058621), (0.004302, 0.011778, 0.023918, 0.035901)),
    (2160, 3.0): ((0.00226, 0.01183, 0.025026, 0.04295), (0.000479, 0.004302, 0.011778, 0.023918)),
    (2160, 5.0): ((0.000092, 0.004212, 0.014809, 0.029642), (0.000050, 0.000984, 0.005852, 0.0146)),
    (720, 3.0): (
        (0.018715, 0.035637, 0.052798, 0.061509),
        (0.007999, 0.018396, 0.031851, 0.037718),
    ),
    (720, 5.0): ((0.010144, 0.022561, 0.040309, 0.05672), (0.003463, 0.010282, 0.021839, 0.034641)),
    (480, 3.0): (
        (0.027961, 0.045875, 0.060275, 0.056234),
        (0.013572, 0.026277, 0.036959, 0.034511),
    ),
    (480, 5.0): ((0.016781, 0.032822, 0.05032, 0.061594), (0.00691, 0.016545, 0.029917, 0.037777)),
}
BLEND_CSF_MAE = {
    (1080, 3.0): (
        (0.011249, 0.022606, 0.035930, 0.045673),
        (0.004097, 0.010921, 0.021430, 0.031313),
    ),
    (1080, 5.0): (
        (0.004052, 0.013939, 0.026298, 0.038833),
        (0.000927, 0.005544, 0.013415, 0.024515),
    ),
    (2160, 1.5): (
        (0.011249, 0.022606, 0.035930, 0.045673),
        (0.004097, 0.010921, 0.021430, 0.031313),
    ),
    (2160, 3.0): (
        (0.002166, 0.011249, 0.022606, 0.035930),
        (0.000447, 0.004097, 0.010921, 0.021430),
    ),
    (2160, 5.0): (
        (0.000077, 0.004052, 0.013939, 0.026298),
        (0.000045, 0.000927, 0.005544, 0.013415),
    ),
    (720, 3.0): (
        (0.017329, 0.030870, 0.042134, 0.047410),
        (0.007509, 0.016707, 0.028072, 0.032722),
    ),
    (720, 5.0): (
        (0.009689, 0.020577, 0.034162, 0.044523),
        (0.003302, 0.009579, 0.019661, 0.030318),
    ),
    (480, 3.0): (
        (0.024969, 0.037825, 0.046676, 0.043974),
        (0.012511, 0.023424, 0.032139, 0.030166),
    ),
    (480, 5.0): (
        (0.015665, 0.028766, 0.040612, 0.047483),
        (0.006514, 0.015107, 0.026476, 0.032776),
    ),
}
BLEND_MISSING = -22.0  # libvmaf returns -EINVAL, as a float, for geometries not tabulated

CSF_MODE_WATSON = 0
CSF_MODE_BARTEN = 1
CSF_MODE_BLEND = 2
CSF_MODE_BLEND_MAE = 3

"""Fixed-point constants of libvmaf's integer VIF, in one place.

Every number here mirrors one in ``libvmaf/src/feature/integer_vif.c`` or
``integer_vif.h`` (Netflix/vmaf f85a8536). Each rounding shift is a ``(round, shift)``
pair: the value added before the right shift, then the shift.
"""

from __future__ import annotations

# --- filters ------------------------------------------------------------------------------
# One symmetric 1-D Gaussian per scale, Q16 (each sums to 65536); the same taps run down
# the columns, then along the rows.
# fmt: off
VIF_FILTERS: tuple[tuple[int, ...], ...] = (
    (489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784,
     7455, 6547, 5274, 3896, 2640, 1640, 935, 489),
    (1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244),
    (3571, 16004, 26386, 16004, 3571),
    (10904, 43728, 10904),
)
# fmt: on
VIF_FILTER_WIDTHS = tuple(len(f) for f in VIF_FILTERS)  # 17, 9, 5, 3
N_SCALES = 4

# Rows mirrored above and below the plane each scale reads: scale 0's own filter reach,
# and for scale s >= 1 the reach of the filter that produced it (scale s - 1's, as
# libvmaf's decimation pads by the width of the scale it came from).
PAD_ROWS = tuple(VIF_FILTER_WIDTHS[max(s - 1, 0)] // 2 for s in range(N_SCALES))  # 8, 8, 4, 2

# --- filter rounding --------------------------------------------------------------------------
# 8-bit scale 0 (vif_statistic_8 and subsample_rd_8): the vertical pass rounds the means
# by 8 bits and keeps the second moments unshifted.
VP_8BIT = (128, 8)
# Every horizontal pass, and every vertical pass above scale 0 (16-bit path).
HP = (32768, 16)
VP_S123 = (32768, 16)


def vp_16(bpc: int) -> tuple[int, int]:
    """Vertical rounding of the means at scale 0 for ``bpc`` > 8: by the bit depth."""
    return 1 << (bpc - 1), bpc


def vp_sq_16(bpc: int) -> tuple[int, int]:
    """Vertical rounding of the second moments at scale 0 for ``bpc`` > 8."""
    shift = (bpc - 8) * 2
    return 1 << (shift - 1), shift


# (uint64)mu * mu is rounded back to the Q16 of the second moments.
MU_PRODUCT = (1 << 31, 32)

# --- statistics -------------------------------------------------------------------------------
SIGMA_NSQ = 65536 << 1  # the noise variance, 2.0 in Q16
EPS = 65536 * 1.0e-10  # added to sigma1_sq in the double division for g (C's constant)
LOG2_ONE = 2048  # the log2 table holds round(log2(i) * 2048)
LOG2_TABLE_FIRST = 32767  # libvmaf fills entries 32767..65535; the rest stay zero
LOG2_TABLE_SIZE = 65537
LOG2_BITS = 16  # log2_32 / log2_64 keep the top 16 significant bits
DEN_LOG_OFFSET = 17 * LOG2_ONE  # log2(SIGMA_NSQ) = 17, taken off each denominator term
NON_LOG_NUM_DIV = (16384.0, 65025.0)  # the low-variance numerator term's two divisors

# --- options ----------------------------------------------------------------------------------
DEFAULT_ENHN_GAIN_LIMIT = 100.0
MIN_ENHN_GAIN_LIMIT = 1.0
MAX_ENHN_GAIN_LIMIT = 100.0
# With vif_skip_scale0, libvmaf writes these for scale 0's debug numerator/denominator.
SKIP_SCALE0_NUM = 0.0
SKIP_SCALE0_DEN = -1.0

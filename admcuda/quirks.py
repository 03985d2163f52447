"""Where libvmaf's own output is undefined, and which outputs that touches.

libvmaf's integer ADM reads memory it never initialised for frames 17 to 32 pixels high:
at DWT scale 3 the input is 3 or 4 rows, ``dwt2_src_indices_filt`` sends output row 0's
first tap to row -1, and row -1 of the distorted band is a row of another buffer that
nothing writes. The scale-3 numerator, and every output built from it, then changes from
one libvmaf run to the next. Row -1 of the reference band is a row of the scale-0 CSF
buffer: the CSF writes only its cropped region, so when that region starts past column 0
(frames 49 pixels wide or more) or scale 0 is skipped, part of what libvmaf reads there
is never written either, and the scale-3 denominator varies as well. admcuda models the
unwritten memory as zeros (what libvmaf reads on a fresh heap) and stays exact for every
other output. Measured with libvmaf 3.2.0 (Netflix/vmaf f85a8536, scalar C) through
``../shared/tools/libvmaf_oracle.py``, plain and under ``MALLOC_PERTURB_``: see
``testdata/README.md``.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from admcuda.options import AdmOptions

__all__ = ["small_height_outputs", "small_height_warning", "warn_small_height"]

_log = logging.getLogger("admcuda")

# Outputs built from the scale-3 numerator (AIM too: its numerator reads the same band).
_NUM3 = (
    "integer_adm2",
    "integer_adm3",
    "integer_aim",
    "integer_adm_scale3",
    "integer_adm",
    "integer_adm_num",
    "integer_adm_num_scale3",
)
# ... and, where the reference side reads unwritten memory too, from its denominator.
_DEN3 = ("integer_adm_den", "integer_adm_den_scale3")
# The scale-0 CSF region (libvmaf's border with the 3x3 tap reach) starts at column
# int(ww * 0.1 - 1.5) of the ceil(width / 2) wide band: past column 0 from ww = 25 on.
_CSF_REGION_PAST_COLUMN0 = 25


def _scale3_input_rows(height: int) -> int:
    h = height
    for _ in range(3):
        h = (h + 1) // 2
    return h


def small_height_outputs(width: int, height: int, opts=None) -> tuple[str, ...]:
    """The outputs (libvmaf base names) that libvmaf computes from uninitialised memory.

    Parameters
    ----------
    width, height : int
        Frame size in luma samples.
    opts : AdmOptions, optional
        Only ``adm_skip_aim`` and ``adm_skip_scale0`` are read; defaults when None.

    Returns
    -------
    tuple of str
        Empty unless the height is 17..32 (scale-3 input of 3 or 4 rows). Then the
        scale-3 numerator and what is built from it (``integer_aim`` only when AIM is
        measured), and the scale-3 and total denominators too when the width is 49 or
        more or ``adm_skip_scale0`` is set.
    """
    if _scale3_input_rows(int(height)) not in (3, 4):
        return ()
    skip_aim = bool(getattr(opts, "adm_skip_aim", False))
    skip0 = bool(getattr(opts, "adm_skip_scale0", False))
    out = [k for k in _NUM3 if not (skip_aim and k == "integer_aim")]
    if skip0 or (int(width) + 1) // 2 >= _CSF_REGION_PAST_COLUMN0:
        out += _DEN3
    return tuple(out)


def small_height_warning(width: int, height: int, opts) -> str | None:
    """One-line warning for frames whose libvmaf scores depend on uninitialised memory.

    Parameters
    ----------
    width, height : int
        Frame size in luma samples.
    opts : AdmOptions or None
        The run's options (``adm_skip_aim`` and ``adm_skip_scale0`` change the list).

    Returns
    -------
    str or None
        None for heights outside 17..32; otherwise a single line naming the affected
        outputs by their base names (an option suffix such as ``_egl_1.2`` applies too).
    """
    names = small_height_outputs(width, height, opts)
    if not names:
        return None
    return (
        f"frame height {height} (17..32): libvmaf reads uninitialised memory at DWT scale 3, "
        f"so its {', '.join(names)} change from run to run; admcuda gives the values for "
        "zeroed memory and is exact for the other outputs"
    )


def warn_small_height(width: int, height: int, opts: AdmOptions) -> None:
    """Warn where libvmaf's own outputs for this height are undefined; the environment
    variable ``ADMCUDA_SMALL_HEIGHT_WARNING=0`` silences it."""
    if os.environ.get("ADMCUDA_SMALL_HEIGHT_WARNING", "1") == "0":
        return
    message = small_height_warning(width, height, opts)
    if message:
        _log.warning("%s", message)

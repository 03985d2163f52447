"""libvmaf's ``float_ssim`` and ``float_ms_ssim`` extractors in a run: options, output
names and one frame's scores.

Both read the luma planes alone, so a run computes them on the host from the planes it
reads, whatever the backend and whatever the input (encoded video too), with the Numba
kernels of :mod:`admcuda.compiled.ssim` (bit-identical to libvmaf's scalar C); they need
Numba (``pip install 'admcuda[fast]'``). :class:`SsimOptions` and :class:`MsSsimOptions`
hold the options as libvmaf's ``float_ssim.c`` and ``float_ms_ssim.c`` declare them;
none is a feature parameter, so output names never change with them.
:func:`ssim_frame` scores one frame pair for :func:`admcuda.vmaf.compute.score_pair` and
:class:`admcuda.vmaf.host.HostFeatures`.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = [
    "MS_SSIM_MIN_SIDE",
    "SSIM_KINDS",
    "MsSsimOptions",
    "SsimOptions",
    "check_size",
    "kernels",
    "output_names",
    "ssim_frame",
]

SSIM_KINDS = ("float_ssim", "float_ms_ssim")

MS_SSIM_MIN_SIDE = 176
"""float_ms_ssim's least width and height: its fifth scale (each side halved four times,
rounded down) must hold the 11-sample window, 11 * 2**4 (libvmaf: 'scale below 1x1').
Equal to :data:`admcuda.compiled.ssim.MS_SSIM_MIN_SIDE`, here without importing Numba."""

SCALE_MAX = 10


def _check_bools(options: object, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(options, name)
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be a bool, got {value!r}")
        object.__setattr__(options, name, bool(value))


@dataclass(frozen=True)
class SsimOptions:
    """libvmaf's ``float_ssim`` options (``float_ssim.c``'s table).

    ``enable_lcs`` adds the mean luminance, contrast and structure terms
    (``float_ssim_l``, ``float_ssim_c``, ``float_ssim_s``); ``enable_db`` writes
    ``-10 log10(1 - ssim)``; ``clip_db`` caps that at the ceiling of the PSNR of half a
    sample's squared error over the frame; ``scale`` is the decimation factor (0: from
    the frame's shorter side, ``round(min(w, h) / 256)``; 1: none; 2 to 10).
    """

    enable_lcs: bool = False
    enable_db: bool = False
    clip_db: bool = False
    scale: int = 0

    def __post_init__(self) -> None:
        _check_bools(self, ("enable_lcs", "enable_db", "clip_db"))
        value = self.scale
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"scale must be an integer in [0, {SCALE_MAX}], got {value!r}")
        if not 0 <= value <= SCALE_MAX:
            raise ValueError(f"scale {value!r} is out of range [0, {SCALE_MAX}]")
        object.__setattr__(self, "scale", int(value))


@dataclass(frozen=True)
class MsSsimOptions:
    """libvmaf's ``float_ms_ssim`` options (``float_ms_ssim.c``'s table): ``enable_lcs``
    (each of the five scales' mean luminance, contrast and structure terms,
    ``float_ms_ssim_{l,c,s}_scale{0..4}``), ``enable_db`` and ``clip_db`` as
    :class:`SsimOptions`' have them."""

    enable_lcs: bool = False
    enable_db: bool = False
    clip_db: bool = False

    def __post_init__(self) -> None:
        _check_bools(self, ("enable_lcs", "enable_db", "clip_db"))


# libvmaf 3.2.0's option tables: option -> (type, alias, min, max)
TABLES: dict[str, dict[str, tuple[str, str | None, Any, Any]]] = {
    "float_ssim": {
        "enable_lcs": ("bool", None, None, None),
        "enable_db": ("bool", None, None, None),
        "clip_db": ("bool", None, None, None),
        "scale": ("int", None, 0, SCALE_MAX),
    },
    "float_ms_ssim": {
        "enable_lcs": ("bool", None, None, None),
        "enable_db": ("bool", None, None, None),
        "clip_db": ("bool", None, None, None),
    },
}
OPTIONS_TYPES = {"float_ssim": SsimOptions, "float_ms_ssim": MsSsimOptions}


def output_names(kind: str, options: SsimOptions | MsSsimOptions) -> tuple[str, ...]:
    """The names ``kind`` writes per frame with ``options``, in libvmaf's order."""
    if kind == "float_ssim":
        lcs = ("float_ssim_l", "float_ssim_c", "float_ssim_s") if options.enable_lcs else ()
        return ("float_ssim", *lcs)
    names = ["float_ms_ssim"]
    if options.enable_lcs:
        names += [f"float_ms_ssim_{t}_scale{i}" for t in "lcs" for i in range(5)]
    return tuple(names)


def kernels() -> ModuleType:
    """:mod:`admcuda.compiled.ssim`, or a one-line error where Numba is not installed."""
    from admcuda.compiled import kernels_for

    return kernels_for("ssim", "float_ssim and float_ms_ssim need")


def check_size(extractors: tuple[Any, ...], width: int, height: int) -> None:
    """Refuse, before any frame is read, a frame size that ``float_ms_ssim`` cannot score
    (``extractors``: the plan's :class:`admcuda.vmaf.plan.Extractor` objects)."""
    if any(ex.kind == "float_ms_ssim" for ex in extractors) and min(width, height) < (
        MS_SSIM_MIN_SIDE
    ):
        raise AdmError(
            f"float_ms_ssim needs frames of at least {MS_SSIM_MIN_SIDE}x{MS_SSIM_MIN_SIDE} "
            f"(its fifth scale must hold the 11-sample window; libvmaf: 'scale below 1x1'), "
            f"not {width}x{height}"
        )


def ssim_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's outputs of a ``float_ssim`` or ``float_ms_ssim`` extractor (an
    :class:`admcuda.vmaf.plan.Extractor`, which imports this module), from
    the luma planes, in libvmaf's order. Releases the GIL while it computes (the kernels
    are ``nogil``), so frames score side by side on threads."""
    module = kernels()
    check_size((ex,), ref.shape[1], ref.shape[0])
    frame = module.float_ssim_frame if ex.kind == "float_ssim" else module.float_ms_ssim_frame
    try:
        return frame(ref, dis, bitdepth, **asdict(ex.options))  # type: ignore[call-overload]
    except ValueError as exc:
        raise AdmError(f"{ex.kind}: {exc}") from None

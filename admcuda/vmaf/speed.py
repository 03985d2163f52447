"""libvmaf's ``speed_chroma`` feature: its options, names and what ``init`` refuses, over
the compiled kernels of :mod:`admcuda.compiled.speed`.

``--feature speed_chroma[=KEY=VALUE:...]`` takes every option of libvmaf 3.2.0's table
(``speed.c``'s ``options_chroma``); ``speed_prescale_method`` nearest and bilinear (its
bicubic and lanczos4 are refused). The extractor reads both chroma planes of both frames
and writes ``speed_chroma_u``, ``speed_chroma_v`` and ``speed_chroma_uv`` (each renamed by
the options off their defaults, as libvmaf names them), each at most ``speed_max_val``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = [
    "SPEED_KIND",
    "TABLE",
    "SpeedChromaOptions",
    "check_size",
    "output_names",
    "parse_options",
    "speed_chroma_frame",
]

SPEED_KIND = "speed_chroma"
METHODS = ("nearest", "bilinear")
# the collector's names for the three outputs, and the aliases libvmaf's files print
FEATURES = (
    "Speed_chroma_feature_speed_chroma_u_score",
    "Speed_chroma_feature_speed_chroma_v_score",
    "Speed_chroma_feature_speed_chroma_uv_score",
)
ALIASES = ("speed_chroma_u", "speed_chroma_v", "speed_chroma_uv")

# libvmaf 3.2.0's option table (speed.c, options_chroma): option -> (type, alias, min, max)
TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    "speed_kernelscale": ("double", "ks", 0.1, 4.0),
    "speed_prescale": ("double", "ps", 0.1, 4.0),
    "speed_prescale_method": ("string", "psm", None, None),
    "speed_sigma_nn": ("double", "snn", 0.1, 2.0),
    "speed_nn_floor": ("double", "nnf", 0.0, 1.0),
    "speed_max_val": ("double", "mxv", 0.0, 1000.0),
    "speed_weight_var_mode": ("int", "wvm", 0, 6),
}


@dataclass(frozen=True)
class SpeedChromaOptions:
    """libvmaf's ``speed_chroma`` options (``speed.c``'s table)."""

    speed_kernelscale: float = 1.0
    speed_prescale: float = 1.0
    speed_prescale_method: str = "nearest"
    speed_sigma_nn: float = 0.29
    speed_nn_floor: float = 0.0
    speed_max_val: float = 1000.0
    speed_weight_var_mode: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            typ, _, lo, hi = TABLE[f.name]
            value = getattr(self, f.name)
            if typ == "string":
                if value not in METHODS:
                    raise ValueError(
                        f"{f.name} must be one of {', '.join(METHODS)} (admcuda does not "
                        f"compute libvmaf's bicubic and lanczos4), got {value!r}"
                    )
                continue
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
            if typ == "int":
                ok = ok and float(value).is_integer()
            if not ok or not lo <= value <= hi:
                raise ValueError(
                    f"{f.name} must be {'an integer' if typ == 'int' else 'a number'} in "
                    f"[{lo:g}, {hi:g}], got {value!r}"
                )
            object.__setattr__(self, f.name, int(value) if typ == "int" else float(value))
        from admcuda.compiled.speed import VALID_KERNELSCALES

        scale = float(np.float32(self.speed_kernelscale))
        if not any(abs(np.float32(scale - k)) < 1e-3 for k in VALID_KERNELSCALES):
            raise ValueError(
                f"speed_kernelscale {self.speed_kernelscale:g} is none of libvmaf's kernel "
                "scales (vif_tools.h)"
            )


def output_names(options: SpeedChromaOptions) -> tuple[str, ...]:
    """The names ``speed_chroma`` writes per frame, in libvmaf's order: each alias with
    ``_KEY_VALUE`` for each option off its default, sorted by option name."""
    suffix = ""
    for name in sorted(TABLE, key=str.encode):
        typ, alias, _, _ = TABLE[name]
        value = getattr(options, name)
        if value == getattr(SpeedChromaOptions, name):
            continue
        text = f"{value:d}" if typ == "int" else (f"{value:g}" if typ == "double" else value)
        suffix += f"_{alias or name}_{text}"
    return tuple(a + suffix for a in ALIASES)


def parse_options(
    where: str, given: Mapping[str, str], parse_number: Callable[..., Any]
) -> SpeedChromaOptions:
    """:class:`SpeedChromaOptions` from ``--feature speed_chroma=KEY=VALUE:...`` texts."""
    values: dict[str, Any] = {}
    for key, text in given.items():
        typ, alias, lo, hi = TABLE[key]
        values[key] = text if typ == "string" else parse_number(where, key, TABLE[key], text)
    try:
        return SpeedChromaOptions(**values)
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


def kernels() -> ModuleType:
    """:mod:`admcuda.compiled.speed`, or a one-line error where Numba is not installed."""
    from admcuda.compiled import kernels_for

    return kernels_for("speed", "speed_chroma needs")


def _chroma_size(width: int, height: int, pixel_format: str) -> tuple[int, int]:
    """The chroma plane size libvmaf's ``init_chroma`` takes (halved sides rounded down)."""
    if pixel_format == "420":
        return width // 2, height // 2
    if pixel_format == "422":
        return width // 2, height
    return width, height


def _scaled(side: int, prescale: float) -> int:
    return int(side * prescale + 0.5)


def check_size(options: SpeedChromaOptions, width: int, height: int, pixel_format: str) -> None:
    """Refuse, in one line, what libvmaf's ``speed_chroma`` refuses or does not compute
    soundly: 4:0:0 input, an odd side halved by the chroma layout (libvmaf copies the
    rounded-up plane into a buffer of the rounded-down size), and a chroma plane whose
    prescaled size leaves no 5x5 block after decimation by 16 (libvmaf goes on
    regardless and reads outside its buffers)."""
    fmt = str(pixel_format)
    if fmt == "400":
        raise AdmError("speed_chroma reads chroma: libvmaf refuses 4:0:0 input")
    odd = [n for n, v, fmts in (("width", width, "420 422"), ("height", height, "420"))
           if fmt in fmts.split() and v % 2]  # fmt: skip
    if odd:
        raise AdmError(
            f"speed_chroma: an odd {odd[0]} is not scored at {fmt} (libvmaf copies the "
            "rounded-up chroma plane into a buffer of the rounded-down size)"
        )
    cw, ch = _chroma_size(width, height, fmt)
    sw, sh = _scaled(cw, options.speed_prescale), _scaled(ch, options.speed_prescale)
    if abs(options.speed_prescale - 1.0) < 1e-3 and (sw, sh) != (cw, ch):
        raise AdmError(
            f"speed_chroma: speed_prescale {options.speed_prescale:g} is taken for 1 (no "
            f"scaling) but sizes the {cw}x{ch} plane {sw}x{sh} (libvmaf reads unset samples)"
        )
    if (sw >> 4) < 5 or (sh >> 4) < 5:
        raise AdmError(
            f"speed_chroma: a {cw}x{ch} chroma plane, prescaled to {sw}x{sh}, leaves no 5x5 "
            "block after decimation by 16 (libvmaf reads outside its buffers); not scored"
        )


@dataclass(frozen=True)
class _Filters:
    antialias: np.ndarray
    gauss: np.ndarray


_FILTERS: dict[float, _Filters] = {}


def _filters(kernelscale: float) -> _Filters:
    got = _FILTERS.get(kernelscale)
    if got is None:
        speed = kernels()
        aw = speed.filter_size(1, kernelscale)
        gw = speed.filter_size(speed.NUM_SCALES, kernelscale)
        # the anti-alias sigma: a float64 sqrt(scales) * width / 5, passed as float32;
        # the Gaussian's: a float32 width / 5
        anti = speed.gaussian_taps(aw, float(np.float32(math.sqrt(speed.NUM_SCALES) * aw / 5.0)))
        gauss = speed.gaussian_taps(gw, float(np.float32(gw) / np.float32(5.0)))
        got = _FILTERS[kernelscale] = _Filters(anti, gauss)
    return got


def _clip(value: float, top: float) -> float:
    # the C's MIN(x, y) of a float score and a double: x where x < y, else y
    return value if value < top else top


def speed_chroma_frame(
    ex: Any,
    ref_chroma: tuple[np.ndarray, np.ndarray],
    dis_chroma: tuple[np.ndarray, np.ndarray],
    bitdepth: int,
) -> dict[str, float]:
    """One frame pair's outputs of a ``speed_chroma`` extractor (an
    :class:`admcuda.vmaf.plan.Extractor`) from the Cb and Cr planes: u, v and uv, where
    one plane's covariance is singular and the other's is not, uv takes the other's."""
    options: SpeedChromaOptions = ex.options
    speed = kernels()
    filters = _filters(float(np.float32(options.speed_kernelscale)))
    sigma_nn = np.float32(options.speed_sigma_nn)
    nn_floor = np.float32(options.speed_nn_floor)
    scores = []
    for ref, dis in zip(ref_chroma, dis_chroma, strict=True):
        sides = []
        for plane in (ref, dis):
            sides.append(
                speed.speed_chroma_plane(
                    np.ascontiguousarray(plane),
                    bitdepth=bitdepth,
                    prescale=options.speed_prescale,
                    method=options.speed_prescale_method,
                    antialias=filters.antialias,
                    gauss=filters.gauss,
                    sigma_nn=sigma_nn,
                )
            )
        scores.append(
            speed.speed_score(sides[0], sides[1], sigma_nn, nn_floor, options.speed_weight_var_mode)
        )
    (su, eu), (sv, ev) = scores
    if eu and not ev:
        suv = sv
    elif ev and not eu:
        suv = su
    else:
        suv = np.float32((float(su) + float(sv)) / 2.0)
    top = options.speed_max_val
    names = ex.outputs
    return {n: _clip(float(s), top) for n, s in zip(names, (su, sv, suv), strict=True)}

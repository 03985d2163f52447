"""libvmaf's ``speed_chroma`` feature: its options, names and what ``init`` refuses, over
the compiled kernels of :mod:`admcuda.compiled.speed`; and what the two SpEED extractors
of ``speed.c`` share (:func:`check_options`, :func:`name_suffix`, :func:`parse_with`,
:func:`check_prescale`, :func:`filters`), which :mod:`admcuda.vmaf.speed_temporal` takes
too.

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
    "check_options",
    "check_prescale",
    "check_size",
    "filters",
    "name_suffix",
    "output_names",
    "parse_options",
    "parse_with",
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
        check_options(self, TABLE)


def check_options(options: Any, table: Mapping[str, tuple[str, str | None, Any, Any]]) -> None:
    """Check a frozen options dataclass of a SpEED extractor against libvmaf's option
    ``table`` and store each number as the type the C keeps (ValueError otherwise): a
    prescale method admcuda computes (nearest, bilinear), each number in its range, an
    integer option whole, a bool a bool, and a kernel scale among ``vif_tools.h``'s."""
    for f in fields(options):
        typ, _, lo, hi = table[f.name]
        value = getattr(options, f.name)
        if typ == "string":
            if value not in METHODS:
                raise ValueError(
                    f"{f.name} must be one of {', '.join(METHODS)} (admcuda does not "
                    f"compute libvmaf's bicubic and lanczos4), got {value!r}"
                )
            continue
        if typ == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{f.name} must be True or False, got {value!r}")
            continue
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if typ == "int":
            ok = ok and float(value).is_integer()
        if not ok or not lo <= value <= hi:
            raise ValueError(
                f"{f.name} must be {'an integer' if typ == 'int' else 'a number'} in "
                f"[{lo:g}, {hi:g}], got {value!r}"
            )
        object.__setattr__(options, f.name, int(value) if typ == "int" else float(value))
    from admcuda.compiled.speed import VALID_KERNELSCALES

    scale = float(np.float32(options.speed_kernelscale))
    if not any(abs(np.float32(scale - k)) < 1e-3 for k in VALID_KERNELSCALES):
        raise ValueError(
            f"speed_kernelscale {options.speed_kernelscale:g} is none of libvmaf's kernel "
            "scales (vif_tools.h)"
        )


def name_suffix(options: Any, table: Mapping[str, tuple[str, str | None, Any, Any]]) -> str:
    """What libvmaf appends to a SpEED extractor's names for its options off their
    defaults, sorted by option name: ``_ALIAS_VALUE`` each (``_ALIAS`` for a bool)."""
    defaults = {f.name: f.default for f in fields(options)}
    suffix = ""
    for name in sorted(table, key=str.encode):
        typ, alias, _, _ = table[name]
        value = getattr(options, name)
        if value == defaults[name]:
            continue
        if typ == "bool":
            suffix += f"_{alias or name}"
            continue
        text = f"{value:d}" if typ == "int" else (f"{value:g}" if typ == "double" else value)
        suffix += f"_{alias or name}_{text}"
    return suffix


def output_names(options: SpeedChromaOptions) -> tuple[str, ...]:
    """The names ``speed_chroma`` writes per frame, in libvmaf's order: each alias with
    ``_KEY_VALUE`` for each option off its default, sorted by option name."""
    suffix = name_suffix(options, TABLE)
    return tuple(a + suffix for a in ALIASES)


def parse_with(
    make: Callable[..., Any],
    table: Mapping[str, tuple[str, str | None, Any, Any]],
    where: str,
    given: Mapping[str, str],
    parse_number: Callable[..., Any],
) -> Any:
    """``make`` (an options dataclass) from ``--feature NAME=KEY=VALUE:...`` texts read
    by ``table``; a refused value is one line naming ``where``."""
    values: dict[str, Any] = {}
    for key, text in given.items():
        typ = table[key][0]
        values[key] = text if typ == "string" else parse_number(where, key, table[key], text)
    try:
        return make(**values)
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


def parse_options(
    where: str, given: Mapping[str, str], parse_number: Callable[..., Any]
) -> SpeedChromaOptions:
    """:class:`SpeedChromaOptions` from ``--feature speed_chroma=KEY=VALUE:...`` texts."""
    options: SpeedChromaOptions = parse_with(SpeedChromaOptions, TABLE, where, given, parse_number)
    return options


def kernels(feature: str = SPEED_KIND) -> ModuleType:
    """:mod:`admcuda.compiled.speed`, or a one-line error naming ``feature`` where Numba is
    not installed."""
    from admcuda.compiled import kernels_for

    return kernels_for("speed", f"{feature} needs")


def _chroma_size(width: int, height: int, pixel_format: str) -> tuple[int, int]:
    """The chroma plane size libvmaf's ``init_chroma`` takes (halved sides rounded down)."""
    if pixel_format == "420":
        return width // 2, height // 2
    if pixel_format == "422":
        return width // 2, height
    return width, height


def _scaled(side: int, prescale: float) -> int:
    return int(side * prescale + 0.5)


def check_prescale(
    feature: str, what: str, width: int, height: int, prescale: float
) -> tuple[int, int]:
    """The size ``speed_init`` gives a ``width`` x ``height`` plane prescaled by
    ``prescale``, refusing in one line a prescale taken for 1 (no scaling) that sizes it
    otherwise (libvmaf then reads samples never written) and a size that leaves no 5x5
    block after decimation by 16 (libvmaf goes on regardless and reads outside its
    buffers). ``what`` names the plane in the messages."""
    sw, sh = _scaled(width, prescale), _scaled(height, prescale)
    if abs(prescale - 1.0) < 1e-3 and (sw, sh) != (width, height):
        raise AdmError(
            f"{feature}: speed_prescale {prescale:g} is taken for 1 (no scaling) but sizes "
            f"the {width}x{height} plane {sw}x{sh} (libvmaf reads unset samples)"
        )
    if (sw >> 4) < 5 or (sh >> 4) < 5:
        raise AdmError(
            f"{feature}: a {width}x{height} {what}, prescaled to {sw}x{sh}, leaves no 5x5 "
            "block after decimation by 16 (libvmaf reads outside its buffers); not scored"
        )
    return sw, sh


def check_size(options: SpeedChromaOptions, width: int, height: int, pixel_format: str) -> None:
    """Refuse, in one line, what libvmaf's ``speed_chroma`` refuses or does not compute
    soundly: 4:0:0 input, an odd side halved by the chroma layout (libvmaf copies the
    rounded-up plane into a buffer of the rounded-down size), and a chroma plane whose
    prescaled size leaves no 5x5 block after decimation by 16 (:func:`check_prescale`)."""
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
    check_prescale(SPEED_KIND, "chroma plane", cw, ch, options.speed_prescale)


@dataclass(frozen=True)
class _Filters:
    antialias: np.ndarray
    gauss: np.ndarray


_FILTERS: dict[float, _Filters] = {}


def filters(kernelscale: float) -> _Filters:
    """The anti-alias and Gaussian taps of a (float32) kernel scale, made once."""
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
    taps = filters(float(np.float32(options.speed_kernelscale)))
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
                    antialias=taps.antialias,
                    gauss=taps.gauss,
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

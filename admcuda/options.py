"""ADM options: libvmaf's option table, parsing, validation and output naming.

The table mirrors the ``options[]`` array of libvmaf's integer ADM extractor
(``src/feature/integer_adm.c``): same names, aliases, types, defaults, ranges and
the same ``FEATURE_PARAM`` flag, which decides whether a non-default value renames
the outputs (``integer_adm2`` -> ``integer_adm2_egl_1.2``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import math
import numbers
import operator
import re
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from admcuda.errors import AdmError, UsageError
from admcuda.numeric import DECIMAL, NumberTooLong, decimal_integer, shown
from admcuda.reference.adm import ALL_FEATURES, BASE_FEATURES

__all__ = [
    "ADM_CUDA_BASE_NAMES",
    "OPTIONS",
    "OUTPUT_BASE_NAMES",
    "NON_DEBUG_BASE_NAMES",
    "AdmOptions",
    "OptionSpec",
    "ScoreDict",
    "adm_cuda_feature_names",
    "feature_names",
    "feature_suffix",
    "lookup_option",
    "parse_option_args",
    "resolve_options",
]

OptionType: TypeAlias = Literal["bool", "int", "double"]
OptionValue: TypeAlias = bool | int | float


@dataclass(frozen=True)
class OptionSpec:
    """One row of the ADM option table.

    Attributes
    ----------
    name : str
        libvmaf's option name, also the :class:`AdmOptions` field name.
    alias : str or None
        libvmaf's short alias; it is the key used in renamed outputs.
    type : {"bool", "int", "double"}
        libvmaf's ``VMAF_OPT_TYPE_*``.
    default : bool, int or float
        Default value.
    min, max : float or None
        Inclusive range; ``None`` for booleans.
    help : str
        One-line description.
    feature_param : bool
        Whether a non-default value appends ``_<alias>[_<value>]`` to every
        output name (libvmaf's ``VMAF_OPT_FLAG_FEATURE_PARAM``).
    """

    name: str
    alias: str | None
    type: OptionType
    default: OptionValue
    min: float | None
    max: float | None
    help: str
    feature_param: bool

    @property
    def label(self) -> str:
        """Name with alias, as used in error messages: ``adm_csf_mode (alias csf)``."""
        return f"{self.name} (alias {self.alias})" if self.alias else self.name

    @property
    def range_text(self) -> str:
        """Accepted values in words: ``[1, 100]`` or ``true or false``."""
        if self.type == "bool":
            return "true or false"
        return f"[{self.min:g}, {self.max:g}]"


# Ranges and defaults as in libvmaf 3.2.0, src/feature/integer_adm.c and adm_options.h.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "debug", None, "bool", False, None, None,
        "debug mode: also output integer_adm, the numerators and the denominators",
        False,
    ),
    OptionSpec(
        "adm_csf_scale", "scf", "double", 1.0, 0.0, 50.0,
        "scale coefficient for the horizontal and vertical terms of the CSF",
        True,
    ),
    OptionSpec(
        "adm_csf_diag_scale", "scfd", "double", 1.0, 0.0, 50.0,
        "scale coefficient for the diagonal term of the CSF",
        True,
    ),
    OptionSpec(
        "adm_dlm_weight", "dlmw", "double", 0.5, 0.0, 1.0,
        "linear weight between DLM and AIM in adm3; 1 means DLM only",
        True,
    ),
    OptionSpec(
        "adm_enhn_gain_limit", "egl", "double", 100.0, 1.0, 100.0,
        "enhancement gain limit; 1.0 disables the gain completely",
        True,
    ),
    OptionSpec(
        "adm_norm_view_dist", "nvd", "double", 3.0, 0.75, 24.0,
        "normalized viewing distance: viewing distance / display height",
        True,
    ),
    OptionSpec(
        "adm_ref_display_height", "rdh", "int", 1080, 1, 4320,
        "reference display height in pixels",
        True,
    ),
    OptionSpec(
        "adm_csf_mode", "csf", "int", 0, 0, 3,
        "contrast sensitivity function (0 = Watson97)",
        True,
    ),
    OptionSpec(
        "adm_noise_weight", "nw", "double", 0.03125, 0.0, 1500.0,
        "noise weight",
        True,
    ),
    OptionSpec(
        "adm_skip_aim", None, "bool", False, None, None,
        "skip the AIM computation (integer_aim becomes 0)",
        False,
    ),
    OptionSpec(
        "adm_skip_scale0", "ssz", "bool", False, None, None,
        "skip scale 0",
        True,
    ),
    OptionSpec(
        "adm_min_val", "min", "double", 0.0, 0.0, 1.0,
        "lower clip for adm3",
        True,
    ),
)  # fmt: skip

_BY_KEY: dict[str, OptionSpec] = {}
for _spec in OPTIONS:
    _BY_KEY[_spec.name] = _spec
    if _spec.alias:
        _BY_KEY[_spec.alias] = _spec
del _spec

# The 18 outputs in libvmaf's emission order; the first seven are always written,
# the rest only in debug mode.
OUTPUT_BASE_NAMES: tuple[str, ...] = ALL_FEATURES
NON_DEBUG_BASE_NAMES: tuple[str, ...] = BASE_FEATURES

# libvmaf's feature-name buffer holds 256 bytes including the terminator.
_MAX_FEATURE_NAME_LEN = 255

# libvmaf refuses to extract below this angular frequency (1080 lines seen at 3H):
# its 16-bit pipeline cannot represent the coarser CSF steps.
_MIN_VIEW_PRODUCT = 3.0 * 1080

_DOUBLE_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def lookup_option(key: str) -> OptionSpec:
    """Find an option by libvmaf name or alias.

    Parameters
    ----------
    key : str
        Name (``adm_enhn_gain_limit``) or alias (``egl``); case-sensitive, as in libvmaf.

    Returns
    -------
    OptionSpec

    Raises
    ------
    AdmError
        If no option has that name or alias.
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        pass
    import difflib  # only for a name that is not an option

    close = difflib.get_close_matches(key, list(_BY_KEY), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    known = ", ".join(spec.label for spec in OPTIONS)
    raise AdmError(f"unknown ADM option '{key}'; {hint}known options: {known}") from None


@functools.lru_cache(maxsize=1)
def _c_strtof() -> Any:
    """The C library's ``strtof``, or None where ctypes cannot find it."""
    try:
        libc = ctypes.cdll.msvcrt if sys.platform == "win32" else ctypes.CDLL(None)
        fn = libc.strtof
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    return fn


def _strtof(text: str) -> float:
    """C's ``strtof(text)``: the decimal text rounded once, to the nearest float32."""
    fn = _c_strtof()
    if fn is not None:
        return float(fn(text.encode("ascii"), None))
    try:  # through a double: rounds twice, which can differ at a float32 tie
        return float(struct.unpack("f", struct.pack("f", float(text)))[0])
    except OverflowError:
        return math.copysign(math.inf, float(text))


def libvmaf_number(text: str) -> float:
    """The value libvmaf computes with for a numeric option given as ``text``.

    libvmaf keeps every feature option in a dictionary that normalises numbers on the way
    in (``vmaf_feature_dictionary_set``, libvmaf/src/dict.c): the text is read with C's
    ``strtof`` and written back with ``"%g"``, six significant digits, and the option
    parser reads that. So ``adm_norm_view_dist=4.1234567`` computes with 4.12346 (the
    number its output names print), and ``3.0000001`` is the default, 3.

    Examples
    --------
    >>> libvmaf_number("4.1234567"), libvmaf_number("2.9999999"), libvmaf_number("0.1")
    (4.12346, 3.0, 0.1)
    """
    return float(_libvmaf_text(text))


def _libvmaf_text(text: str) -> str:
    """The text libvmaf's dictionary keeps for a numeric ``text``: strtof's, with %g."""
    return f"{_strtof(text):g}"


def _parse_text(spec: OptionSpec, text: str) -> OptionValue:
    """Parse a command-line string the way libvmaf's opt.c reads it, but strictly.

    libvmaf uses ``atoi``/``atof`` and so accepts trailing junk (``1.2x``) and
    truncates ``2000.7`` to 2000 for integers; both are refused here.
    """
    if spec.type == "bool":
        if text == "true":
            return True
        if text == "false":
            return False
        raise AdmError(f"option {spec.label} expects true or false, got '{text}'")
    if spec.type == "int":
        whole = text
        if not DECIMAL.fullmatch(text) and _DOUBLE_RE.fullmatch(text):
            whole = _libvmaf_text(text)  # libvmaf keeps 1080.0 or 1.08e3 as "1080"
        try:
            value = decimal_integer(whole)
        except NumberTooLong as exc:
            raise AdmError(
                f"option {spec.label} must be in {spec.range_text}, got a {exc.digits}-digit number"
            ) from None
        if value is None:
            raise AdmError(
                f"option {spec.label} expects an integer in {spec.range_text}, got '{text}'"
            )
        if value == 0 and text.startswith("-"):
            raise _negative_zero(spec, text)
        return value
    if not _DOUBLE_RE.fullmatch(text):
        raise AdmError(f"option {spec.label} expects a number in {spec.range_text}, got '{text}'")
    value = libvmaf_number(text)
    if value == 0 and math.copysign(1.0, value) < 0:
        raise _negative_zero(spec, text)
    return value


def _negative_zero(spec: OptionSpec, text: str) -> AdmError:
    # libvmaf's dictionary keeps it as "-0", and its option parser (opt.c) refuses a zero
    # whose text does not begin with '0', taking it for a failed parse.
    return AdmError(
        f"option {spec.label}: libvmaf refuses '{text}', which it reads as -0 (its option "
        "parser takes a zero not written 0 for a failed parse); write 0"
    )


def _coerce(spec: OptionSpec, value: object) -> OptionValue:
    """Check the Python type of a value for ``spec`` and return it normalized."""
    if isinstance(value, str):
        value = _parse_text(spec, value)
    if spec.type == "bool":
        if isinstance(value, bool):
            return value
        raise AdmError(f"option {spec.label} expects true or false, got {value!r}")
    if isinstance(value, bool):
        raise AdmError(f"option {spec.label} expects a number in {spec.range_text}, got {value!r}")
    if spec.type == "int":
        if isinstance(value, numbers.Integral):
            return operator.index(value)
        raise AdmError(
            f"option {spec.label} expects an integer in {spec.range_text}, got {value!r}"
        )
    if isinstance(value, numbers.Real):
        # As the shortest text that gives this double, read as libvmaf reads it.
        try:
            number = float(value)
        except OverflowError:  # an integer beyond every double
            raise AdmError(
                f"option {spec.label} must be in {spec.range_text}, got {shown(value)}"
            ) from None
        return _parse_text(spec, repr(number)) if math.isfinite(number) else number
    raise AdmError(f"option {spec.label} expects a number in {spec.range_text}, got {value!r}")


def _check_range(spec: OptionSpec, value: OptionValue) -> None:
    if spec.type == "bool":
        return
    assert spec.min is not None and spec.max is not None
    if isinstance(value, int):  # exact: math.isfinite() overflows on a long integer
        if not spec.min <= value <= spec.max:
            got = shown(value) if abs(value) > 2**53 else f"{value:g}"
            raise AdmError(f"option {spec.label} must be in {spec.range_text}, got {got}")
    elif not (math.isfinite(value) and spec.min <= value <= spec.max):
        raise AdmError(f"option {spec.label} must be in {spec.range_text}, got {value:g}")


@dataclass(frozen=True, kw_only=True)
class AdmOptions:
    """Settings of libvmaf's integer ADM extractor.

    Field names are libvmaf's option names, so an instance can be handed to any
    code that reads libvmaf-named attributes. Every field is validated on
    construction against :data:`OPTIONS`.

    Parameters
    ----------
    debug : bool
        Also produce ``integer_adm`` and the per-scale numerators and denominators.
    adm_csf_scale, adm_csf_diag_scale : float
        CSF scale coefficients, in [0, 50].
    adm_dlm_weight : float
        Weight of DLM against AIM in ``integer_adm3``, in [0, 1].
    adm_enhn_gain_limit : float
        Enhancement gain limit, in [1, 100].
    adm_norm_view_dist : float
        Normalized viewing distance, in [0.75, 24].
    adm_ref_display_height : int
        Reference display height in pixels, in [1, 4320].
    adm_csf_mode : int
        Contrast sensitivity function, in [0, 3].
    adm_noise_weight : float
        Noise weight, in [0, 1500].
    adm_skip_aim : bool
        Skip AIM.
    adm_skip_scale0 : bool
        Skip scale 0.
    adm_min_val : float
        Lower clip for ``integer_adm3``, in [0, 1].

    Raises
    ------
    AdmError
        If a value has the wrong type or is out of range, or if
        ``adm_norm_view_dist * adm_ref_display_height < 3240``, which libvmaf refuses.
    """

    debug: bool = False
    adm_csf_scale: float = 1.0
    adm_csf_diag_scale: float = 1.0
    adm_dlm_weight: float = 0.5
    adm_enhn_gain_limit: float = 100.0
    adm_norm_view_dist: float = 3.0
    adm_ref_display_height: int = 1080
    adm_csf_mode: int = 0
    adm_noise_weight: float = 0.03125
    adm_skip_aim: bool = False
    adm_skip_scale0: bool = False
    adm_min_val: float = 0.0

    def __post_init__(self) -> None:
        for spec in OPTIONS:
            value = _coerce(spec, getattr(self, spec.name))
            _check_range(spec, value)
            object.__setattr__(self, spec.name, value)
        product = self.adm_norm_view_dist * self.adm_ref_display_height
        if product < _MIN_VIEW_PRODUCT:
            raise AdmError(
                "libvmaf refuses adm_norm_view_dist (nvd) * adm_ref_display_height (rdh) "
                f"below 3.0 * 1080 = {_MIN_VIEW_PRODUCT:g}: got {self.adm_norm_view_dist:g}"
                f" * {self.adm_ref_display_height} = {product:g} (its integer pipeline "
                "cannot handle that low an angular frequency; extract returns -EINVAL)"
            )

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str | bool | int | float] | None) -> AdmOptions:
        """Build options from names or aliases mapped to strings or values.

        Strings are parsed as libvmaf parses ``--feature adm=key=value``: booleans
        are exactly ``true`` or ``false``, integers and doubles are decimal
        literals. Unlike libvmaf, aliases are accepted as keys (libvmaf only
        reads full names there and silently ignores anything else), and unknown
        keys, trailing junk and fractional integers are refused.

        Parameters
        ----------
        mapping : mapping of str to str, bool, int or float, or None
            Option settings; ``None`` or empty gives the defaults.

        Returns
        -------
        AdmOptions

        Raises
        ------
        AdmError
            On an unknown key, one option given twice (name and alias), a value
            that does not parse, is out of range, or the libvmaf refusal rule.
        """
        values: dict[str, Any] = {}
        given_as: dict[str, str] = {}
        for key, raw in (mapping or {}).items():
            spec = lookup_option(key)
            if spec.name in given_as:
                raise AdmError(
                    f"option {spec.label} given twice (as '{given_as[spec.name]}' and '{key}')"
                )
            given_as[spec.name] = key
            value = _coerce(spec, raw)
            _check_range(spec, value)
            values[spec.name] = value
        return cls(**values)

    def non_default(self) -> dict[str, OptionValue]:
        """Options whose value differs from the default, by libvmaf name."""
        return {
            spec.name: getattr(self, spec.name)
            for spec in OPTIONS
            if getattr(self, spec.name) != spec.default
        }

    def replace(self, **changes: Any) -> AdmOptions:
        """Return a copy with some fields changed (validated like the constructor)."""
        return dataclasses.replace(self, **changes)


def resolve_options(
    options: AdmOptions | Mapping[str, str | bool | int | float] | str | None,
) -> AdmOptions:
    """Turn ``None``, an :class:`AdmOptions`, a name/alias mapping or libvmaf's option
    string (``"egl=1.2:nvd=4"``, as ``--option`` takes it) into options.

    Raises
    ------
    AdmError
        On an unknown option, a bad value, or another type.
    """
    if options is None:
        return AdmOptions()
    if isinstance(options, AdmOptions):
        return options
    if isinstance(options, Mapping):
        for key in options:
            if not isinstance(key, str):
                raise AdmError(f"option names must be strings, got {type(key).__name__} {key!r}")
        return AdmOptions.from_mapping(options)
    if isinstance(options, str):
        if not options.strip():
            return AdmOptions()
        try:
            return AdmOptions.from_mapping(parse_option_args([options.strip()], flag="options"))
        except UsageError as exc:
            raise AdmError(str(exc)) from None
    raise AdmError(
        "options must be AdmOptions, a mapping of option names or a 'NAME=VALUE:...' "
        f"string, got {type(options).__name__}"
    )


def parse_option_args(
    items: Sequence[str], *, flag: str = "--option", settings: dict[str, str] | None = None
) -> dict[str, str]:
    """``--option`` values (``NAME=VALUE``, or libvmaf's ``A=1:B=2``) as a mapping.

    ``flag`` names the option in messages; ``settings``, where given, is extended in
    place, so that a name already there counts as given twice.
    """
    settings = {} if settings is None else settings
    for item in items:
        for part in item.split(":"):
            name, sep, value = part.partition("=")
            if not sep or not name:
                raise UsageError(f"{flag} expects NAME=VALUE, got '{part}'")
            if name in settings:
                raise UsageError(f"option '{name}' given twice")
            settings[name] = value
    return settings


def _format_value(spec: OptionSpec, value: OptionValue) -> str:
    # libvmaf prints the stored value with "%d" or "%g", not the text the user typed.
    if spec.type == "int":
        return f"{value:d}"
    return f"{value:g}"


def feature_suffix(opts: AdmOptions) -> str:
    """The suffix libvmaf appends to every ADM output name for these options.

    Non-default options flagged ``FEATURE_PARAM`` are sorted by full option name
    (byte order); each adds ``_<alias>`` for a boolean or ``_<alias>_<value>``
    otherwise, with the value printed by ``%d`` or ``%g``.

    Parameters
    ----------
    opts : AdmOptions

    Returns
    -------
    str
        ``""`` for defaults, e.g. ``"_egl_1.5_nvd_4_ssz"`` otherwise.
    """
    parts = []
    for spec in sorted(OPTIONS, key=lambda s: s.name.encode()):
        if not spec.feature_param:
            continue
        value = getattr(opts, spec.name)
        if value == spec.default:
            continue
        key = spec.alias or spec.name
        parts.append(f"_{key}" if spec.type == "bool" else f"_{key}_{_format_value(spec, value)}")
    return "".join(parts)


def feature_names(opts: AdmOptions) -> dict[str, str]:
    """Map each of the 18 base output names to the name libvmaf writes.

    Mirrors libvmaf's ``vmaf_feature_name_from_options`` followed by the alias
    table: ``VMAF_integer_feature_adm2_score`` is written as ``integer_adm2``, and
    non-default feature parameters append :func:`feature_suffix`.

    Parameters
    ----------
    opts : AdmOptions

    Returns
    -------
    dict of str to str
        Base name -> output name, in libvmaf's emission order.

    Examples
    --------
    >>> feature_names(AdmOptions(adm_enhn_gain_limit=1.2))["integer_adm2"]
    'integer_adm2_egl_1.2'
    """
    suffix = feature_suffix(opts)
    return {base: (base + suffix)[:_MAX_FEATURE_NAME_LEN] for base in OUTPUT_BASE_NAMES}


# libvmaf 3.2.0's adm_cuda (libvmaf/src/feature/cuda/integer_adm_cuda.c) writes these of
# the outputs (no AIM, no ADM3; the debug ones with debug), in this order, and names them
# by adm_enhn_gain_limit alone, its only feature parameter.
ADM_CUDA_BASE_NAMES: tuple[str, ...] = tuple(
    base for base in OUTPUT_BASE_NAMES if base not in ("integer_aim", "integer_adm3")
)


def adm_cuda_feature_names(opts: AdmOptions) -> dict[str, str]:
    """Map the base names of the outputs libvmaf's ``adm_cuda`` writes (all of
    :data:`ADM_CUDA_BASE_NAMES`, debug ones included) to the names it writes them under.

    Examples
    --------
    >>> adm_cuda_feature_names(AdmOptions(adm_norm_view_dist=4))["integer_adm2"]
    'integer_adm2'
    >>> adm_cuda_feature_names(AdmOptions(adm_enhn_gain_limit=1.2))["integer_adm_scale0"]
    'integer_adm_scale0_egl_1.2'
    """
    # The names the adm feature gives with that one option, which adm_cuda's are.
    names = feature_names(AdmOptions(adm_enhn_gain_limit=opts.adm_enhn_gain_limit))
    return {base: names[base] for base in ADM_CUDA_BASE_NAMES}


class ScoreDict(dict):
    """Scores keyed by the names libvmaf writes (``integer_adm2_egl_1.2``) that also
    answer to the base names (``integer_adm2``), whatever the options.

    Iteration, ``len``, equality and serialisation see the written names only; lookups
    (``d[name]``, ``d.get(name)``, ``name in d``) accept either.

    Parameters
    ----------
    data : mapping or iterable of pairs
        Written name -> value.
    names : mapping of str to str
        Base name -> written name, as :func:`feature_names` gives it.
    """

    __slots__ = ("_names",)

    def __init__(self, data: Any = (), names: Mapping[str, str] | None = None) -> None:
        super().__init__(data)
        self._names = dict(names or {})

    def _written(self, key: object) -> object:
        return self._names.get(key, key) if isinstance(key, str) else key

    def __missing__(self, key: object) -> Any:
        written = self._written(key)
        if written != key and dict.__contains__(self, written):
            return dict.__getitem__(self, written)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or dict.__contains__(self, self._written(key))

    def get(self, key: object, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self), self._names))

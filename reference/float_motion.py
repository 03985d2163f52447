"""Bit-exact NumPy reference of libvmaf's ``float_motion`` (``float_motion.c`` over
``motion.c``'s ``compute_motion``, ``common/convolution.c``'s scalar convolution,
``vif_tools.c``'s bilinear scaler and ``picture_copy.c``; scalar C).

Unlike the integer ``motion``, ``float_motion`` blurs each reference picture and then
compares the blurred pictures. It reads the reference alone (the distorted pictures never).

The steps per frame, with their types:

- :func:`picture`: the luma plane (and with ``motion_add_uv`` the chroma planes) to
  float32 on the 8-bit scale, less 128 (``picture_copy`` with offset -128).
- :func:`blur`: ``convolution_f32_c_s``: a vertical pass then a horizontal pass of the
  float32 filter (:func:`motion_filter`: 5 taps by default, 3 with
  ``motion_filter_size=3``, a 5-tap identity with ``motion_filter_size=1``); each output
  sums its taps' float32 products in float32, tap after tap; taps past an edge are
  mirrored about the edge sample (``-i``, ``2n - i - 2``).
- :func:`image_sad`: ``vmaf_image_sad_c``: per row a float32 running sum of
  ``|a - b|``, the rows' sums added in a float32 running sum, divided in float32 by the
  sample count (as a float32); with ``motion_add_scale1`` the same over both pictures
  halved by the bilinear scaler (:func:`scale_half`), the two float32 scores added.
- :func:`frame_score`: the luma's score as a double, plus the Cb's and the Cr's with
  ``motion_add_uv`` (double additions).

Every frame's outputs come from those scores (:func:`frame_outputs`), with libvmaf's
``extract``/``flush`` bookkeeping: frame 0 has ``motion2`` 0; frame ``i`` from 1 to
``n - 2`` the smaller of its score and the next frame's; the last frame its own; each
times ``motion_fps_weight`` and capped at ``motion_max_val``. ``motion3`` is
``motion_blend`` of the same (capped), except at frame 0, which takes frame 1's
(``motion2`` stays 0 there), and 0 for a clip of one frame. ``debug`` (on by default)
adds ``motion``: each frame's own score, weighted and capped. ``motion_force_zero``
writes 0 for all three, every frame.

Output names are the ones libvmaf's writers print: ``motion2``, ``motion``, ``motion3``
(``vmaf_feature_name_alias`` of ``VMAF_feature_motion2_score`` ...), and with any feature
parameter off its default the alias followed by each such parameter's alias (and
value), in alphabetical order of the option names (:func:`output_names`).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence

import numpy as np

from .motion import motion_blend
from .picture_copy import check_plane, picture_copy

__all__ = [
    "BILINEAR_MAX_WIDTH",
    "FILTER_3",
    "FILTER_5",
    "FILTER_5_NO_OP",
    "MIN_SIZE",
    "MOTION",
    "MOTION2",
    "MOTION3",
    "OPTION_TABLE",
    "FloatMotionOptions",
    "blur",
    "check_size",
    "compute_float_motion",
    "frame_outputs",
    "frame_score",
    "image_sad",
    "motion_filter",
    "output_names",
    "picture",
    "scale_half",
]

FEATURE = "float_motion"
OFFSET = -128  # picture_copy's offset for float_motion
MIN_SIZE = 3  # the 5-tap filter's one-step mirror stays inside a side of at least 3 samples
BILINEAR_MAX_WIDTH = 7680  # vif_tools.h: init refuses a wider half-size picture

# motion_tools.h's filters: double literals rounded to float32, as the C's float arrays
FILTER_5 = np.array([0.054488685, 0.244201342, 0.402619947, 0.244201342, 0.054488685], np.float32)
FILTER_3 = np.array([0.166378498, 0.667243004, 0.166378498], np.float32)
FILTER_5_NO_OP = np.array([0.0, 0.0, 1.0, 0.0, 0.0], np.float32)

# --- collector names (provided_features) and their printed aliases -------------------------
MOTION = "VMAF_feature_motion_score"
MOTION2 = "VMAF_feature_motion2_score"
MOTION3 = "VMAF_feature_motion3_score"
PROVIDED_FEATURES = (MOTION, MOTION2, MOTION3)
_ALIAS = {MOTION: "motion", MOTION2: "motion2", MOTION3: "motion3"}


@dataclasses.dataclass(frozen=True)
class _Opt:
    name: str
    alias: str | None
    kind: type
    default: float | int | bool
    lo: float = 0.0
    hi: float = 0.0
    feature_param: bool = True


# libvmaf's option table for "float_motion", in its order.
OPTION_TABLE = (
    _Opt("debug", None, bool, True, feature_param=False),
    _Opt("motion_force_zero", "force_0", bool, False),
    _Opt("motion_fps_weight", "mfw", float, 1.0, 0.0, 5.0),
    _Opt("motion_blend_factor", "mbf", float, 1.0, 0.0, 1.0),
    _Opt("motion_blend_offset", "mbo", float, 40.0, 0.0, 1000.0),
    _Opt("motion_add_scale1", "mdc", bool, False),
    _Opt("motion_filter_size", "mfs", int, 5, 0, 9),
    _Opt("motion_add_uv", "mau", bool, False),
    _Opt("motion_max_val", "mmxv", float, 10000.0, 0.0, 10000.0),
)


@dataclasses.dataclass(frozen=True)
class FloatMotionOptions:
    """libvmaf's ``float_motion`` options, defaults and ranges from its option table.

    ``debug`` (on by default) adds the ``motion`` output and, not being a feature
    parameter, never changes output names. ``motion_filter_size`` 3 takes the 3-tap
    filter, 1 the identity, any other value in ``[0, 9]`` the 5-tap filter.
    """

    debug: bool = True
    motion_force_zero: bool = False
    motion_fps_weight: float = 1.0
    motion_blend_factor: float = 1.0
    motion_blend_offset: float = 40.0
    motion_add_scale1: bool = False
    motion_filter_size: int = 5
    motion_add_uv: bool = False
    motion_max_val: float = 10000.0

    def __post_init__(self) -> None:
        for opt in OPTION_TABLE:
            v = getattr(self, opt.name)
            if opt.kind is bool:
                if not isinstance(v, (bool, np.bool_)):
                    raise ValueError(
                        f"{FEATURE} option {opt.name} must be true or false, got {v!r}"
                    )
                object.__setattr__(self, opt.name, bool(v))
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise ValueError(f"{FEATURE} option {opt.name} must be a number, got {v!r}")
            if opt.kind is int:
                if not float(v).is_integer():
                    raise ValueError(f"{FEATURE} option {opt.name} must be an integer, got {v!r}")
                v = int(v)
            else:
                v = float(v)
            if not opt.lo <= v <= opt.hi:
                raise ValueError(
                    f"{FEATURE} option {opt.name}={v:g} is outside libvmaf's range "
                    f"[{opt.lo:g}, {opt.hi:g}]"
                )
            object.__setattr__(self, opt.name, v)


def collector_names(opts: FloatMotionOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's collector stores it under for ``opts``
    (``vmaf_feature_name_from_options``): the provided name where every feature parameter
    is at its default; otherwise its alias followed, for each parameter off its default
    in alphabetical order of option name, by ``_ALIAS`` for a bool, ``_ALIAS_VALUE`` for
    a number (``%d`` for the int, ``%g`` for a double): ``motion2_force_0``,
    ``motion3_mau_mfs_3_mfw_2.5``."""
    suffix = ""
    for opt in sorted(OPTION_TABLE, key=lambda o: o.name):
        v = getattr(opts, opt.name)
        if not opt.feature_param or v == opt.default:
            continue
        if opt.kind is bool:
            suffix += f"_{opt.alias}"
        elif opt.kind is int:
            suffix += f"_{opt.alias}_{v:d}"
        else:
            suffix += f"_{opt.alias}_{v:g}"
    if not suffix:
        return {f: f for f in PROVIDED_FEATURES}
    return {f: _ALIAS[f] + suffix for f in PROVIDED_FEATURES}


def output_names(opts: FloatMotionOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's writers print (``motion2`` by default; a
    suffixed name is its own alias)."""
    return {f: _ALIAS.get(c, c) for f, c in collector_names(opts).items()}


def extract_order(opts: FloatMotionOptions) -> tuple[str, ...]:
    """The provided features in the order libvmaf first writes them: ``motion2`` and
    (``debug``) ``motion`` at frame 0, then ``motion3`` (frame 0's, written when frame 1
    is extracted, or at flush); with ``motion_force_zero`` all three at frame 0, ``motion``
    last."""
    debug = (MOTION,) if opts.debug else ()
    if opts.motion_force_zero:
        return (MOTION2, MOTION3, *debug)
    return (MOTION2, *debug, MOTION3)


# --- per-picture stages ----------------------------------------------------------------------


def check_size(width: int, height: int, opts: FloatMotionOptions, pixel_format: str) -> None:
    """Refuse (ValueError) what libvmaf's ``init`` refuses (chroma on 4:0:0, a half-size
    picture wider than :data:`BILINEAR_MAX_WIDTH`), planes under :data:`MIN_SIZE` a side,
    outside which libvmaf's mirrored taps read, and ``motion_add_uv`` with
    ``motion_add_scale1`` on 4:2:0 and 4:2:2 input: there ``vmaf_image_sad_c`` hands the
    bilinear scaler the row stride of the chroma width while the blurred chroma is stored
    at the luma's, so half the rows it reads are memory the blur never wrote (zero in a
    fresh allocation, anything in a reused one)."""
    if opts.motion_add_uv and str(pixel_format) == "400":
        raise ValueError(f"{FEATURE}: motion_add_uv reads chroma, which 4:0:0 input has none of")
    if opts.motion_add_uv and opts.motion_add_scale1 and str(pixel_format) in ("420", "422"):
        raise ValueError(
            f"{FEATURE}: with motion_add_uv and motion_add_scale1 on {pixel_format} input "
            "libvmaf halves the chroma pictures reading them at the wrong row stride, partly "
            "from memory it never wrote: its scores there cannot be reproduced (give 4:4:4 "
            "input, or one of the two options)"
        )
    if opts.motion_add_scale1 and int(width * 0.5 + 0.5) > BILINEAR_MAX_WIDTH:
        raise ValueError(
            f"{FEATURE}: motion_add_scale1 takes frames up to {2 * BILINEAR_MAX_WIDTH} wide, "
            f"not {width}"
        )
    if width < MIN_SIZE or height < MIN_SIZE:
        raise ValueError(
            f"{FEATURE}: a plane of {width}x{height} is too small: libvmaf's float_motion "
            f"reads outside planes under {MIN_SIZE}x{MIN_SIZE}"
        )


def picture(plane: np.ndarray, bitdepth: int) -> np.ndarray:
    """``picture_copy(..., -128, ...)``: float32 samples on the 8-bit scale, less 128."""
    return picture_copy(plane, bitdepth, OFFSET, feature=FEATURE)


def motion_filter(opts: FloatMotionOptions) -> np.ndarray:
    """The float32 taps ``extract`` blurs with for ``motion_filter_size``."""
    if opts.motion_filter_size == 1:
        return FILTER_5_NO_OP
    if opts.motion_filter_size == 3:
        return FILTER_3
    return FILTER_5


def _convolve(src: np.ndarray, taps: np.ndarray, axis: int) -> np.ndarray:
    """One pass of ``convolution_{y,x}_c_s`` along ``axis`` (0: columns, 1: rows):
    ``accum += filter[k] * src[mirrored tap]`` in float32, taps in order.

    Every output, inside or at an edge, takes its taps in the same order, so the picture
    is padded with its mirrored samples and each tap is one slice. The C starts each sum
    at 0, which turns a first product of -0.0 into +0.0; starting from the first product
    differs only in that zero's sign, which no later step can see (the scores are sums of
    absolute differences)."""
    radius = len(taps) // 2
    n = src.shape[axis]
    padded = np.pad(src, [(radius, radius) if a == axis else (0, 0) for a in range(2)], "reflect")
    acc = np.empty(src.shape, np.float32)
    product = np.empty(src.shape, np.float32)
    for k, tap in enumerate(taps):
        part = padded[k : k + n] if axis == 0 else padded[:, k : k + n]
        if k == 0:
            np.multiply(tap, part, out=acc)
        else:
            np.multiply(tap, part, out=product)
            np.add(acc, product, out=acc)
    return acc


def blur(pic: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """``convolution_f32_c_s``: the vertical pass, then the horizontal pass of its
    result, float32 throughout."""
    return _convolve(_convolve(pic, taps, 0), taps, 1)


def _scale_positions(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``vif_scale_frame_bilinear``'s positions along one side: the float32 ratio, each
    position ``(i + 0.5) * ratio - 0.5`` in double rounded to float32, its floor and
    ceiling mirrored into ``[0, src - 1]`` and truncated to int, and the float32 weight
    ``position - first``."""
    ratio = np.float32(src) / np.float32(dst)
    pos = ((np.arange(dst, dtype=np.float64) + 0.5) * np.float64(ratio) - 0.5).astype(np.float32)
    right = np.float32(src - 1)

    def mirrored(v: np.ndarray) -> np.ndarray:
        v = v.astype(np.float32)
        out = np.where(v < 0, -v, np.where(v > right, np.float32(2) * right - v, v))
        return out.astype(np.int64)

    first = mirrored(np.floor(pos.astype(np.float64)))
    second = mirrored(np.ceil(pos.astype(np.float64)))
    weight = pos - first.astype(np.float32)
    return first, second, weight


def scale_half(pic: np.ndarray) -> np.ndarray:
    """``vif_scale_frame_s(vif_scale_bilinear, ...)`` to ``(int)(w * 0.5 + 0.5)`` by
    ``(int)(h * 0.5 + 0.5)``: each output ``(1 - dy) * (1 - dx) * a + (1 - dy) * dx * b +
    dy * (1 - dx) * c + dy * dx * d`` in float32, left to right."""
    h, w = pic.shape
    dw, dh = int(w * 0.5 + 0.5), int(h * 0.5 + 0.5)
    if (dw, dh) == (w, h):
        return pic.copy()
    x1, x2, dx = _scale_positions(w, dw)
    y1, y2, dy = _scale_positions(h, dh)
    one = np.float32(1)
    dx, dy = dx[None, :], dy[:, None]
    r1, r2 = pic[y1], pic[y2]
    return (
        (one - dy) * (one - dx) * r1[:, x1]
        + (one - dy) * dx * r1[:, x2]
        + dy * (one - dx) * r2[:, x1]
        + dy * dx * r2[:, x2]
    )


def _sad(a: np.ndarray, b: np.ndarray) -> np.float32:
    """The float32 mean absolute difference of two pictures, summed as the C sums it: a
    running float32 sum along each row, the rows' sums in a running float32 sum, then
    divided by the sample count converted to float32."""
    diff = np.abs(a - b)
    rows = np.add.accumulate(diff, axis=1, dtype=np.float32)[:, -1]
    total = np.add.accumulate(rows, dtype=np.float32)[-1]
    return np.float32(total / np.float32(a.size))


def image_sad(a: np.ndarray, b: np.ndarray, add_scale1: bool) -> float:
    """``vmaf_image_sad_c``: the blurred pictures' float32 mean absolute difference, plus
    (``motion_add_scale1``) that of their halves in a float32 addition; as a double."""
    score = _sad(a, b)
    if add_scale1:
        score = np.float32(score + _sad(scale_half(a), scale_half(b)))
    return float(score)


def frame_score(
    prev: Sequence[np.ndarray], cur: Sequence[np.ndarray], opts: FloatMotionOptions
) -> float:
    """``extract``'s score of a frame: the luma's :func:`image_sad` of the previous
    frame's and this frame's blurred pictures, plus the Cb's, then the Cr's, in double,
    where ``prev`` and ``cur`` hold chroma (``motion_add_uv``)."""
    score = image_sad(prev[0], cur[0], opts.motion_add_scale1)
    for a, b in zip(prev[1:], cur[1:], strict=True):
        score += image_sad(a, b, opts.motion_add_scale1)
    return score


def _capped(value: float, opts: FloatMotionOptions) -> float:
    return value if value < opts.motion_max_val else opts.motion_max_val


def _blended(score: float, opts: FloatMotionOptions) -> float:
    weighted = score * opts.motion_fps_weight
    return _capped(motion_blend(weighted, opts.motion_blend_factor, opts.motion_blend_offset), opts)


def frame_outputs(scores: Sequence[float], opts: FloatMotionOptions) -> list[dict[str, float]]:
    """Every frame's outputs from every frame's :func:`frame_score` (frame 0's is not
    read), by provided feature name in :func:`extract_order`.

    ``extract`` and ``flush`` in one: ``motion2`` of frame ``i`` (from 1) is written
    when frame ``i + 1`` is extracted, from the smaller of the two frames' scores (the
    C scores frame ``i`` again: the same double), the last frame's at flush from its
    own; ``motion3`` of frame 0 when frame 1 is extracted, from frame 1's score.
    """
    n = len(scores)
    if opts.motion_force_zero:
        zero = {MOTION2: 0.0, MOTION3: 0.0, MOTION: 0.0}
        return [{f: zero[f] for f in extract_order(opts)} for _ in range(n)]
    weight = opts.motion_fps_weight
    frames = []
    for i in range(n):
        if i == 0:
            motion = motion2 = 0.0
            motion3 = _blended(scores[1], opts) if n > 1 else 0.0
        else:
            motion = _capped(scores[i] * weight, opts)
            low = scores[i]
            if i + 1 < n and not scores[i] < scores[i + 1]:
                low = scores[i + 1]
            motion2 = _capped(low * weight, opts)
            motion3 = _blended(low, opts)
        values = {MOTION2: motion2, MOTION: motion, MOTION3: motion3}
        frames.append({f: values[f] for f in extract_order(opts)})
    return frames


def compute_float_motion(
    frames: Sequence[np.ndarray | Sequence[np.ndarray]],
    bitdepth: int,
    opts: FloatMotionOptions | None = None,
    pixel_format: str = "420",
) -> list[dict[str, float]]:
    """Every output of every frame of a clip, by printed name in libvmaf's order.

    Parameters
    ----------
    frames : sequence
        Every reference frame read, in order: its luma plane, or (with
        ``motion_add_uv``) its Y, Cb and Cr planes, uint8 at 8 bits and uint16 above.
    bitdepth : {8, 10, 12, 16}
    opts : FloatMotionOptions, optional
    pixel_format : str
        The input's layout: 4:0:0 refuses ``motion_add_uv``.
    """
    opts = FloatMotionOptions() if opts is None else opts
    names = output_names(opts)
    taps = motion_filter(opts)
    scores: list[float] = []
    prev: list[np.ndarray] | None = None
    for frame in frames:
        planes = [frame] if isinstance(frame, np.ndarray) else list(frame)
        planes = planes if opts.motion_add_uv else planes[:1]
        if opts.motion_add_uv and len(planes) != 3:
            raise ValueError(f"{FEATURE}: motion_add_uv reads the Y, Cb and Cr planes")
        for plane in planes:
            check_plane(plane, bitdepth, FEATURE)
            check_size(plane.shape[1], plane.shape[0], opts, pixel_format)
        if opts.motion_force_zero:
            scores.append(0.0)
            continue
        cur = [blur(picture(p, bitdepth), taps) for p in planes]
        scores.append(0.0 if prev is None else frame_score(prev, cur, opts))
        prev = cur
    return [{names[f]: v for f, v in out.items()} for out in frame_outputs(scores, opts)]

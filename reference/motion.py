"""Bit-exact NumPy reference of libvmaf's integer motion (``integer_motion.c``, scalar C path).

libvmaf 3.2.0 does not blur each frame: its ``motion_score_pipeline_8`` /
``motion_score_pipeline_16`` filter the *difference* of the previous and the current
reference luma, vertically (:func:`y_conv_diff`, rounded by the bit depth) then
horizontally (:func:`x_conv_row_sad`, rounded by 16, absolute values summed per row),
so the rounding differs from blurring each frame and subtracting. The sum of absolute
differences becomes a float score in ``extract`` (:func:`motion_score`); ``motion2`` and
``motion3`` are made from every frame's score at ``flush`` (:func:`flush_scores`).

Output names are the ones libvmaf's writers print (``vmaf_feature_name_alias`` of the
collector name); non-default feature options append their alias, as
``vmaf_feature_name_from_options`` does (:func:`output_names`).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

# --- fixed-point constants (integer_motion.h, integer_motion.c) -------------------------
FILTER = (3571, 16004, 26386, 16004, 3571)  # Q16, sums to 65536
FILTER_RADIUS = len(FILTER) // 2
Y_CONV_8BIT = (1 << 7, 8)  # (round, shift) of the vertical pass at 8 bits
X_CONV = (1 << 15, 16)  # (round, shift) of the horizontal pass
SAD_SCALE = 256.0  # the score divides the SAD by this, then by the pixel count
MIN_SIZE = 3  # libvmaf's one-step mirror stays inside a side of at least 3 samples

# --- collector names (provided_features) and their printed aliases ----------------------
SAD = "VMAF_integer_feature_motion_sad_score"
MOTION = "VMAF_integer_feature_motion_score"
MOTION2 = "VMAF_integer_feature_motion2_score"
MOTION3 = "VMAF_integer_feature_motion3_score"
PROVIDED_FEATURES = (SAD, MOTION, MOTION2, MOTION3)
_ALIAS = {MOTION: "integer_motion", MOTION2: "integer_motion2", MOTION3: "integer_motion3"}


@dataclasses.dataclass(frozen=True)
class _Opt:
    name: str
    alias: str | None
    kind: type
    default: float | bool
    lo: float = 0.0
    hi: float = 0.0
    feature_param: bool = True


# libvmaf's option table for "motion", in its order.
OPTION_TABLE = (
    _Opt("motion_force_zero", "force_0", bool, False),
    _Opt("motion_blend_factor", "mbf", float, 1.0, 0.0, 1.0),
    _Opt("motion_blend_offset", "mbo", float, 40.0, 0.0, 1000.0),
    _Opt("motion_fps_weight", "mfw", float, 1.0, 0.0, 5.0),
    _Opt("motion_max_val", "mmxv", float, 10000.0, 0.0, 10000.0),
    _Opt("motion_five_frame_window", "mffw", bool, False),
    _Opt("motion_moving_average", "mma", bool, False),
    _Opt("debug", None, bool, False, feature_param=False),
)


@dataclasses.dataclass(frozen=True)
class MotionOptions:
    """libvmaf's ``motion`` options, defaults and ranges from its option table.

    Doubles must lie in ``[min, max]`` of the table (libvmaf refuses others); ``debug``
    adds the ``integer_motion`` output and, not being a feature parameter, never
    changes output names.
    """

    motion_force_zero: bool = False
    motion_blend_factor: float = 1.0
    motion_blend_offset: float = 40.0
    motion_fps_weight: float = 1.0
    motion_max_val: float = 10000.0
    motion_five_frame_window: bool = False
    motion_moving_average: bool = False
    debug: bool = False

    def __post_init__(self) -> None:
        for opt in OPTION_TABLE:
            v = getattr(self, opt.name)
            if opt.kind is bool:
                if not isinstance(v, (bool, np.bool_)):
                    raise ValueError(f"motion option {opt.name} must be true or false, got {v!r}")
                object.__setattr__(self, opt.name, bool(v))
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise ValueError(f"motion option {opt.name} must be a number, got {v!r}")
            v = float(v)
            if not opt.lo <= v <= opt.hi:
                raise ValueError(
                    f"motion option {opt.name}={v:g} is outside libvmaf's range "
                    f"[{opt.lo:g}, {opt.hi:g}]"
                )
            object.__setattr__(self, opt.name, v)

    @classmethod
    def from_mapping(cls, options: Mapping[str, str]) -> MotionOptions:
        """Options given as libvmaf's strings (``"true"``/``"false"``, numbers)."""
        table = {o.name: o for o in OPTION_TABLE}
        kw: dict[str, float | bool] = {}
        for key, val in options.items():
            opt = table.get(key)
            if opt is None:
                raise ValueError(f"unknown motion option {key!r}")
            if opt.kind is bool:
                if val not in ("true", "false"):
                    raise ValueError(f"motion option {key} must be true or false, got {val!r}")
                kw[key] = val == "true"
            else:
                try:
                    kw[key] = float(val)
                except ValueError:
                    raise ValueError(f"motion option {key} must be a number, got {val!r}") from None
        return cls(**kw)


def collector_names(opts: MotionOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's collector stores it under for ``opts``.

    libvmaf's ``init`` names each output with ``vmaf_feature_name_from_options``: with
    every feature parameter at its default the provided name stays as it is; otherwise
    it becomes its alias (``vmaf_feature_name_alias``) followed, for each non-default
    parameter in alphabetical order of option name, by ``_ALIAS`` for a bool and
    ``_ALIAS_VALUE`` (value as ``%g``) for a double: ``integer_motion2_mffw``,
    ``integer_motion3_mbf_0.5_mma``. ``debug`` is no feature parameter and never counts.
    """
    suffix = ""
    for opt in sorted(OPTION_TABLE, key=lambda o: o.name):
        v = getattr(opts, opt.name)
        if not opt.feature_param or v == opt.default:
            continue
        suffix += f"_{opt.alias}" if opt.kind is bool else f"_{opt.alias}_{v:g}"
    if not suffix:
        return {f: f for f in PROVIDED_FEATURES}
    return {f: _ALIAS.get(f, f) + suffix for f in PROVIDED_FEATURES}


def output_names(opts: MotionOptions) -> dict[str, str]:
    """Provided feature -> the name libvmaf's writers print: the collector name's alias
    (``integer_motion2`` by default; a suffixed name is its own alias). The SAD score has
    no alias: ``VMAF_integer_feature_motion_sad_score``, suffixed like the others."""
    return {f: _ALIAS.get(c, c) for f, c in collector_names(opts).items()}


# --- per-frame stages -------------------------------------------------------------------


def mirror_indices(n: int) -> np.ndarray:
    """Source index of each filter tap, shape ``(5, n)`` (libvmaf's ``mirror``).

    One reflection about the edge sample: ``-i`` below 0, ``2n - i - 2`` past the end.
    """
    i = np.arange(n)[None, :] + np.arange(-FILTER_RADIUS, FILTER_RADIUS + 1)[:, None]
    return np.where(i < 0, -i, np.where(i >= n, 2 * n - i - 2, i))


def _fir(x: np.ndarray, axis: int, dtype) -> np.ndarray:
    """The symmetric 5-tap filter along ``axis`` with libvmaf's mirror, accumulated in
    ``dtype``; pairing the equal taps is exact as no partial sum overflows."""
    n = x.shape[axis]
    pad = [(0, 0)] * x.ndim
    pad[axis] = (FILTER_RADIUS, FILTER_RADIUS)
    xp = np.pad(x.astype(dtype, copy=False), pad, mode="reflect")  # == mirror_indices for n >= 3

    def tap(k: int) -> np.ndarray:
        return xp[k : k + n] if axis == 0 else xp[:, k : k + n]

    acc = (tap(0) + tap(4)) * dtype(FILTER[0])
    acc += (tap(1) + tap(3)) * dtype(FILTER[1])
    acc += tap(2) * dtype(FILTER[2])
    return acc


def y_conv_diff(prev: np.ndarray, cur: np.ndarray, bitdepth: int) -> np.ndarray:
    """The fused difference and vertical pass of ``motion_score_pipeline_8``/``_16``.

    ``prev - cur`` in int (C's promotion of the unsigned samples), filtered down each
    column with row mirroring, accumulated in int32 at 8 bits and int64 above, rounded
    by ``(128, 8)`` at 8 bits and ``(2**(bitdepth-1), bitdepth)`` above, then int32:
    libvmaf's ``y_row`` for every row, shape ``(h, w)``.
    """
    diff = prev.astype(np.int32) - cur.astype(np.int32)
    if bitdepth == 8:
        rnd, shift = Y_CONV_8BIT
        acc = _fir(diff, 0, np.int32)
    else:
        rnd, shift = 1 << (bitdepth - 1), bitdepth
        acc = _fir(diff, 0, np.int64)
    return ((acc + rnd) >> shift).astype(np.int32)


def x_conv_row_sad(y_row: np.ndarray) -> np.ndarray:
    """The horizontal pass, absolute value and per-row sum of the pipeline.

    Each int32 row is filtered with column mirroring in int64, rounded by
    ``(32768, 16)`` to int32, and its absolute values summed into libvmaf's uint32
    ``row_sad`` (which wraps). Returns the ``(h,)`` uint32 row sums.
    """
    rnd, shift = X_CONV
    val = ((_fir(y_row, 1, np.int64) + rnd) >> shift).astype(np.int32)
    total = np.abs(val).astype(np.uint32).sum(axis=1, dtype=np.uint64)
    return (total & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def motion_score_pipeline(prev: np.ndarray, cur: np.ndarray, bitdepth: int) -> int:
    """libvmaf's ``motion_score_pipeline_8``/``_16``: the uint64 SAD of the filtered
    difference of two reference luma planes. (libvmaf skips rows whose ``y_row`` is all
    zero; their row sum is zero, so summing them changes nothing.)"""
    return int(x_conv_row_sad(y_conv_diff(prev, cur, bitdepth)).sum(dtype=np.uint64))


def motion_score(sad: int, width: int, height: int, opts: MotionOptions) -> float:
    """``extract``'s float score: ``MIN(sad / 256. / (w * h) * fps_weight, max_val)``,
    in double, with ``w * h`` an unsigned int product."""
    score = float(sad) / SAD_SCALE / float((width * height) & 0xFFFFFFFF) * opts.motion_fps_weight
    return score if score < opts.motion_max_val else opts.motion_max_val


def motion_blend(score: float, factor: float, offset: float) -> float:
    """``motion_blend_tools.h``: ``score * factor + (1 - factor) * MIN(offset, score)``."""
    return score * factor + (1 - factor) * (offset if offset < score else score)


def _capped_blend(score: float, opts: MotionOptions) -> float:
    b = motion_blend(score, opts.motion_blend_factor, opts.motion_blend_offset)
    return b if b < opts.motion_max_val else opts.motion_max_val


def flush_scores(scores: list[float], opts: MotionOptions) -> tuple[list[float], list[float]]:
    """``flush``'s arithmetic: ``(motion2, motion3)`` for frames ``0 .. len(scores)-1``
    from every frame's ``extract`` score.

    motion2 is 0 below the first scored index (1, or 2 with the five-frame window); the
    last frame's own score; otherwise ``min(score[i], score[i+1])``, or with the
    five-frame window ``min(score[i-1], score[i+1])`` (only ``score[3]`` at frame 2).
    motion3 is ``min(blend(motion2), max_val)``, averaged with the previous frame's under
    ``motion_moving_average``; the frames below the first scored index take the blend of
    that index's *score* (0 for a clip no longer than that index), which also seeds the
    moving average.
    """
    n = len(scores)
    five = opts.motion_five_frame_window
    stride = min_idx = 2 if five else 1
    stamp = _capped_blend(scores[min_idx], opts) if n > min_idx else 0.0
    m2: list[float] = []
    m3: list[float] = []
    average = opts.motion_moving_average
    prev_processed = 0.0
    for i in range(n):
        if i < min_idx:
            motion2 = 0.0
        elif i + 1 >= n:
            motion2 = scores[i]
        elif i - (stride - 1) >= min_idx:
            lo, hi = scores[i - (stride - 1)], scores[i + 1]
            motion2 = lo if lo < hi else hi
        else:
            motion2 = scores[i + 1]
        if i < min_idx:
            motion3 = prev_processed = stamp
        else:
            processed = _capped_blend(motion2, opts)
            motion3 = (processed + prev_processed) / 2.0 if average else processed
            prev_processed = processed
        m2.append(motion2)
        m3.append(motion3)
    return m2, m3


# --- the extractor ----------------------------------------------------------------------


def check_plane(plane: np.ndarray, bitdepth: int) -> None:
    """Refuse a plane libvmaf's motion cannot score (ValueError, one line)."""
    if isinstance(bitdepth, bool) or not isinstance(bitdepth, numbers.Integral):
        raise ValueError(f"bit depth must be an integer, got {bitdepth!r}")
    if not 8 <= bitdepth <= 16:
        raise ValueError(f"bit depth {bitdepth} is not supported (8 to 16)")
    if not isinstance(plane, np.ndarray) or plane.ndim != 2:
        raise ValueError("the reference luma must be a 2-D array")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if plane.dtype != want:
        raise ValueError(f"{bitdepth}-bit planes must be {np.dtype(want).name}, got {plane.dtype}")
    h, w = plane.shape
    if w < MIN_SIZE or h < MIN_SIZE:
        raise ValueError(
            f"frame {w}x{h} is too small: libvmaf's motion reads outside planes under 3x3"
        )


Outputs = dict[int, dict[str, float]]


class MotionState:
    """libvmaf's integer ``motion`` extractor over one clip: ``extract`` per frame, then
    ``flush`` once.

    Each call returns the outputs that libvmaf writes at that moment, keyed by frame
    index: ``extract(i, plane)`` the SAD score of frame ``i`` (and ``integer_motion``
    under ``debug``); ``flush()`` ``integer_motion2`` and ``integer_motion3`` of every
    frame ``0 .. n-1``, ``n`` being the number of consecutive indices from 0 extracted
    (libvmaf 3.2.0 computes both from the collected scores at flush, nothing earlier).

    Feed the **reference** luma only (libvmaf's motion never reads the distorted one),
    **every frame read**, in order, with libvmaf's picture index. The score of frame
    ``i`` compares it with the plane passed in the previous call (the one before that
    with ``motion_five_frame_window``), as libvmaf's ``prev_ref``/``prev_prev_ref`` are
    the pictures of the previous ``vmaf_read_pictures`` calls. What that means for the
    ``vmaf`` tool (``libvmaf/tools/vmaf.c`` ``main``, ``libvmaf/src/libvmaf.c``):

    - ``--frame_skip_ref K``: the tool reads and drops K reference frames before its
      loop, so index 0 is reference frame K and has no previous picture (score 0).
      Feed reference frames ``K, K+1, ...`` as indices ``0, 1, ...``.
    - ``--subsample N``: ``vmaf_read_pictures`` skips extractors on indices not a
      multiple of N *except* those flagged ``VMAF_FEATURE_EXTRACTOR_TEMPORAL`` or
      ``_PREV_REF``; motion is ``_PREV_REF``, so it sees every frame. Feed every frame
      and keep indices ``0, N, 2N, ...`` of the result, as libvmaf's writers do; a
      scored frame's motion2 uses the next frame read, not the next one scored.
    - ``--frame_cnt M``: only M frames are fed; the last one's motion2 is its own score.
    - ``--threads``: each worker has its own extractor but gets the same previous
      pictures from the framework, and flush reads the shared collector: same numbers.

    Errors as libvmaf's: an index already written, a scored index (1 and up, 2 and up
    with the five-frame window) with no previous picture, a size change, a call after
    flush.
    """

    def __init__(self, bitdepth: int, opts: MotionOptions | None = None) -> None:
        self.bitdepth = bitdepth
        self.opts = MotionOptions() if opts is None else opts
        self.names = output_names(self.opts)
        self._prev: np.ndarray | None = None
        self._prev_prev: np.ndarray | None = None
        self._scores: dict[int, float] = {}
        self._shape: tuple[int, int] | None = None
        self._flushed = False

    def extract(self, index: int, ref_plane: np.ndarray) -> Outputs:
        """Score reference frame ``index``; returns ``{index: {name: value}}``."""
        if self._flushed:
            raise ValueError("motion: extract after flush")
        check_plane(ref_plane, self.bitdepth)
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or index < 0:
            raise ValueError(f"frame index must be a non-negative integer, got {index!r}")
        index = int(index)
        if self._shape is not None and ref_plane.shape != self._shape:
            raise ValueError(
                f"frame {index} is {ref_plane.shape[1]}x{ref_plane.shape[0]}, "
                f"the clip {self._shape[1]}x{self._shape[0]}"
            )
        if index in self._scores:
            raise ValueError(f"motion: frame {index} was already extracted")
        o = self.opts
        score = 0.0
        if not o.motion_force_zero and index >= (2 if o.motion_five_frame_window else 1):
            prev = self._prev_prev if o.motion_five_frame_window else self._prev
            if prev is None:
                raise ValueError(f"motion: frame {index} has no previous reference picture")
            h, w = ref_plane.shape
            score = motion_score(motion_score_pipeline(prev, ref_plane, self.bitdepth), w, h, o)
        self._shape = ref_plane.shape
        self._scores[index] = score
        self._prev_prev, self._prev = self._prev, np.array(ref_plane, copy=True)
        out = {self.names[SAD]: score}
        if o.debug:
            out[self.names[MOTION]] = score
        return {index: out}

    def flush(self) -> Outputs:
        """Write motion2 and motion3 of frames ``0 .. n-1``; the state is then closed."""
        if self._flushed:
            raise ValueError("motion: flushed twice")
        self._flushed = True
        self._prev = self._prev_prev = None
        n = 0
        while n in self._scores:
            n += 1
        m2, m3 = flush_scores([self._scores[i] for i in range(n)], self.opts)
        return {i: {self.names[MOTION2]: m2[i], self.names[MOTION3]: m3[i]} for i in range(n)}


def compute_motion(
    ref_planes: Iterable[np.ndarray], bitdepth: int, opts: MotionOptions | None = None
) -> list[dict[str, float]]:
    """Every motion output of every frame of a clip, as libvmaf writes them.

    ``ref_planes`` are the reference luma planes of every frame read, in order (see
    :class:`MotionState` for ``--frame_skip_ref`` and ``--subsample``).
    """
    state = MotionState(bitdepth, opts)
    frames: list[dict[str, float]] = []
    for i, plane in enumerate(ref_planes):
        frames.append(state.extract(i, plane)[i])
    for i, out in state.flush().items():
        frames[i].update(out)
    return frames

"""libvmaf's ``speed_temporal`` extractor in a run: its options, its name, each frame's
score and a clip read in batches.

``--feature speed_temporal[=KEY=VALUE:...]`` writes each frame's ``speed_temporal``
(renamed by the options off their defaults, as libvmaf names it): SpEED-QA of the
difference of consecutive luma frames. Each side's luma becomes libvmaf's float32
picture (``picture_copy`` less 128); the previous frame's picture less the current one's
(in float32, as ``subtract_image`` takes them) goes through the same prescale,
anti-alias filter, decimation by 16, local-mean removal, covariance, eigenvalues and
linear system as ``speed_chroma`` (:mod:`admcuda.compiled.speed`), on the reference's
difference and on the distorted one's (with ``speed_use_ref_diff``, the previous
distorted picture less the current *reference* one), and the float32 score of the two
is written as a double. Frame 0 scores 0. Where one side's covariance is singular and
the other's is not, the score is 0. ``speed_max_val`` renames the score and caps
nothing (libvmaf's ``extract`` never reads it), and the extractor has no
``speed_weight_var_mode`` (the score weighs each side by its own variance).

It is one of libvmaf's temporal extractors: libvmaf runs it on every frame read, those
``--subsample`` passes over included, so a scored frame's score is its difference from
the frame read just before. :class:`TemporalRun` keeps each side's last frame from one
batch to the next; :func:`speed_temporal_frame` scores one frame from the planes before
it. The reference's side is computed once per frame, whatever the number of distorted
inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference.picture_copy import check_plane
from admcuda.vmaf import speed as _speed

__all__ = [
    "SPEED_TEMPORAL_KIND",
    "TABLE",
    "SpeedTemporalOptions",
    "TemporalRun",
    "check_size",
    "frame_scores",
    "output_names",
    "parse_options",
    "speed_temporal_frame",
]

SPEED_TEMPORAL_KIND = "speed_temporal"
FEATURE = "Speed_temporal_feature_speed_temporal_score"
"""The collector's name of the score, which libvmaf's files print as :data:`ALIAS`."""
ALIAS = "speed_temporal"

# libvmaf 3.2.0's option table (speed.c, options): option -> (type, alias, min, max)
TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    "speed_kernelscale": ("double", "ks", 0.1, 4.0),
    "speed_prescale": ("double", "ps", 0.1, 4.0),
    "speed_prescale_method": ("string", "psm", None, None),
    "speed_sigma_nn": ("double", "snn", 0.1, 2.0),
    "speed_nn_floor": ("double", "nnf", 0.0, 1.0),
    "speed_max_val": ("double", "mxv", 0.0, 1000.0),
    "speed_use_ref_diff": ("bool", "urd", None, None),
}


@dataclass(frozen=True)
class SpeedTemporalOptions:
    """libvmaf's ``speed_temporal`` options (``speed.c``'s table)."""

    speed_kernelscale: float = 1.0
    speed_prescale: float = 1.0
    speed_prescale_method: str = "nearest"
    speed_sigma_nn: float = 0.29
    speed_nn_floor: float = 0.0
    speed_max_val: float = 1000.0
    speed_use_ref_diff: bool = False

    def __post_init__(self) -> None:
        _speed.check_options(self, TABLE)


def output_names(options: SpeedTemporalOptions) -> tuple[str, ...]:
    """The name ``speed_temporal`` writes per frame: ``speed_temporal``, with
    ``_KEY_VALUE`` (``_urd`` for ``speed_use_ref_diff``) for each option off its default,
    sorted by option name."""
    return (ALIAS + _speed.name_suffix(options, TABLE),)


def parse_options(
    where: str, given: Mapping[str, str], parse_value: Callable[..., Any]
) -> SpeedTemporalOptions:
    """:class:`SpeedTemporalOptions` from ``--feature speed_temporal=KEY=VALUE:...`` texts."""
    options: SpeedTemporalOptions = _speed.parse_with(
        SpeedTemporalOptions, TABLE, where, given, parse_value
    )
    return options


def check_size(options: SpeedTemporalOptions, width: int, height: int) -> None:
    """Refuse, in one line, a frame size libvmaf's ``speed_temporal`` does not score
    soundly (any pixel format: it reads the luma alone): one whose prescaled size leaves
    no 5x5 block after decimation by 16, a prescale taken for 1 that sizes it otherwise
    (:func:`admcuda.vmaf.speed.check_prescale`), and a prescale that makes it taller
    (libvmaf keeps each frame in a buffer of the luma's height and scales it into that
    buffer, past its end)."""
    sw, sh = _speed.check_prescale(
        SPEED_TEMPORAL_KIND, "frame", width, height, options.speed_prescale
    )
    if sh > height:
        raise AdmError(
            f"{SPEED_TEMPORAL_KIND}: speed_prescale {options.speed_prescale:g} makes the "
            f"{width}x{height} frame {sw}x{sh}, taller than the buffer libvmaf scales it "
            "into (it writes past its end and crashes); not scored"
        )


def kernels() -> Any:
    """:mod:`admcuda.compiled.speed`, or a one-line error where Numba is not installed."""
    return _speed.kernels(SPEED_TEMPORAL_KIND)


def _difference(before: np.ndarray, after: np.ndarray, bitdepth: int) -> np.ndarray:
    """The float32 picture of ``before`` less that of ``after`` (``picture_copy``, then
    ``subtract_image``)."""
    try:
        for plane in (before, after):
            check_plane(plane, bitdepth, SPEED_TEMPORAL_KIND)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    return kernels().picture_difference(before, after, bitdepth)  # type: ignore[no-any-return]


def frame_scores(
    options: SpeedTemporalOptions,
    prev_ref: np.ndarray,
    ref: np.ndarray,
    prev_dis: Sequence[np.ndarray],
    dis: Sequence[np.ndarray],
    bitdepth: int,
) -> list[float]:
    """One frame's score against each distorted input, from the luma planes of this
    frame and the one read before it; the reference's side once for them all."""
    speed = kernels()
    taps = _speed.filters(float(np.float32(options.speed_kernelscale)))
    sigma_nn = np.float32(options.speed_sigma_nn)
    nn_floor = np.float32(options.speed_nn_floor)

    def side(picture: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        return speed.speed_side(  # type: ignore[no-any-return]
            picture, prescale=options.speed_prescale, method=options.speed_prescale_method,
            antialias=taps.antialias, gauss=taps.gauss, sigma_nn=sigma_nn,
        )  # fmt: skip

    ref_side = side(_difference(prev_ref, ref, bitdepth))
    scores = []
    for before, plane in zip(prev_dis, dis, strict=True):
        now = ref if options.speed_use_ref_diff else plane
        dis_side = side(_difference(before, now, bitdepth))
        score, _ = speed.speed_score(ref_side, dis_side, sigma_nn, nn_floor, 0)
        scores.append(float(score))
    return scores


def speed_temporal_frame(
    ex: Any,
    ref: np.ndarray,
    dis: np.ndarray,
    prev_ref: np.ndarray | None,
    prev_dis: np.ndarray | None,
    bitdepth: int,
) -> dict[str, float]:
    """One frame's output (``ex``: an :class:`admcuda.vmaf.plan.Extractor`) from its luma
    planes and those of the frame read before it (None for the first frame read, which
    scores 0)."""
    name = ex.outputs[0]
    if prev_ref is None:
        return {name: 0.0}
    if prev_dis is None:
        raise AdmError(
            "speed_temporal reads the frame before: give prev_dis beside prev_ref (the "
            "distorted plane read before dis)"
        )
    shapes = {p.shape for p in (prev_ref, ref, prev_dis, dis)}
    if len(shapes) != 1:
        raise AdmError(f"{SPEED_TEMPORAL_KIND}: planes of {', '.join(map(str, sorted(shapes)))}")
    return {name: frame_scores(ex.options, prev_ref, ref, [prev_dis], [dis], bitdepth)[0]}


class TemporalRun:
    """One ``speed_temporal`` extractor over a clip read in batches, against one or more
    distorted inputs: each frame scored against the frame before, the last frame of each
    side kept for the next batch. Frames that ``subsample`` passes over (the index's
    remainder) are not computed: NaN stands in for their scores, which no output prints.
    ``mapper`` (a thread pool's ``map``) may score the frames of a call side by side: the
    kernels release the GIL, and each frame's numbers are computed in the same order
    whatever thread runs them."""

    def __init__(self, ex: Any, bitdepth: int, subsample: int = 1) -> None:
        self.ex = ex
        self.bitdepth = bitdepth
        self.subsample = subsample
        self._index = 0  # the index of the next frame read
        self._prev_ref: np.ndarray | None = None
        self._prev_dis: dict[int, np.ndarray] = {}

    def scores(
        self,
        ref: np.ndarray,
        dis: Sequence[np.ndarray],
        frames: int,
        order: Sequence[int],
        mapper: Callable[..., Any] = map,
    ) -> list[np.ndarray]:
        """Per distorted input, the scores of the first ``frames`` frames of a batch
        (``ref`` and each of ``dis``: ``(n, height, width)`` luma planes); ``order`` names
        each distorted input, so that it is given its own previous frame from one batch
        to the next whatever inputs come and go."""
        first = self._index
        n = len(dis)

        def one(k: int) -> list[float]:
            index = first + k
            if index == 0:
                return [0.0] * n
            if index % self.subsample:
                return [math.nan] * n
            prev_ref = ref[k - 1] if k else self._prev_ref
            try:
                prev_dis = [
                    d[k - 1] if k else self._prev_dis[o] for d, o in zip(dis, order, strict=True)
                ]
            except KeyError:
                raise AdmError(
                    f"{SPEED_TEMPORAL_KIND}: a distorted input joined the clip at frame "
                    f"{index}, with no frame before it"
                ) from None
            assert prev_ref is not None
            cur = [d[k] for d in dis]
            return frame_scores(self.ex.options, prev_ref, ref[k], prev_dis, cur, self.bitdepth)

        if frames <= 0:
            return [np.empty(0, np.float64) for _ in dis]
        rows = list(mapper(one, range(frames)))
        self._index += frames
        self._prev_ref = np.array(ref[frames - 1], copy=True)  # the slot is reused
        for d, o in zip(dis, order, strict=True):
            self._prev_dis[o] = np.array(d[frames - 1], copy=True)
        return [np.array([row[j] for row in rows], np.float64) for j in range(n)]

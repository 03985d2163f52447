"""libvmaf's ``float_motion`` extractor in a run: its options, its names, each frame's
score and the clip's outputs.

``--feature float_motion`` writes each frame's ``motion2``, ``motion`` (its ``debug``, on
by default) and ``motion3``: the mean absolute difference of each reference frame's
blurred luma (and with ``motion_add_uv`` chroma) and the previous one's, on the 8-bit
scale. It reads the reference alone, so a run computes it on the host from the planes it
reads, whatever the backend and the input, with NumPy (no Numba needed):
:mod:`admcuda.reference.float_motion` holds the stages. A frame's score needs the
previous frame's blurred pictures (:class:`MotionRun` keeps them from one batch to the
next), and its ``motion2`` and ``motion3`` the next frame's score, so those two are made
once the clip is read (:func:`finish`), as integer motion's are; the score travels
between the two under :func:`score_key`, a name no output prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import float_motion as _fm
from admcuda.reference.float_motion import MOTION, MOTION2, MOTION3, FloatMotionOptions

__all__ = [
    "FLOAT_MOTION_KIND",
    "MOTION",
    "MOTION2",
    "MOTION3",
    "TABLE",
    "FloatMotionOptions",
    "MotionRun",
    "check_size",
    "finish",
    "first_names",
    "float_motion_frame",
    "later_names",
    "names",
    "parse_options",
    "score_key",
]

FLOAT_MOTION_KIND = "float_motion"

_TYPES = {bool: "bool", float: "double", int: "int"}

TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    o.name: (_TYPES[o.kind], o.alias, None if o.kind is bool else o.lo,
             None if o.kind is bool else o.hi)
    for o in _fm.OPTION_TABLE
}  # fmt: skip
"""libvmaf 3.2.0's ``float_motion`` option table: option -> (type, alias, min, max)."""


def parse_options(
    where: str, given: Mapping[str, str], parse_value: Callable[..., Any]
) -> FloatMotionOptions:
    """:class:`FloatMotionOptions` from ``--feature float_motion=KEY=VALUE:...`` texts."""
    values = {key: parse_value(where, key, TABLE[key], text) for key, text in given.items()}
    try:
        return FloatMotionOptions(**values)
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


def names(options: FloatMotionOptions) -> dict[str, str]:
    """Provided feature -> printed name (:func:`admcuda.reference.float_motion.output_names`)."""
    return _fm.output_names(options)


def first_names(options: FloatMotionOptions) -> tuple[str, ...]:
    """The printed names libvmaf first writes at frame 0, in its order."""
    printed = names(options)
    order = _fm.extract_order(options)
    if not options.motion_force_zero:
        order = order[:-1]
    return tuple(printed[f] for f in order)


def later_names(options: FloatMotionOptions) -> tuple[str, ...]:
    """The printed names libvmaf first writes when frame 1 is extracted (frame 0's
    ``motion3``); none with ``motion_force_zero``, which writes all at frame 0."""
    return () if options.motion_force_zero else (names(options)[_fm.MOTION3],)


def score_key(ex: Any) -> str:
    """The key under which a frame's score travels to :func:`finish` (a space keeps it
    apart from every printed name; the ``motion2`` name tells extractors apart)."""
    return f"{ex.name} score {ex.names[_fm.MOTION2]}"


def check_size(options: FloatMotionOptions, width: int, height: int, pixel_format: str) -> None:
    """Refuse, in one line, a size or layout libvmaf's ``float_motion`` refuses or does not
    score soundly (:func:`admcuda.reference.float_motion.check_size`, and with
    ``motion_add_uv`` a 4:2:0 plane of an odd height: libvmaf keeps its rounded-up chroma
    plane in buffers of the rounded-down height)."""
    fmt = str(pixel_format)
    if options.motion_add_uv and fmt == "420" and height % 2:
        raise AdmError(
            f"{FLOAT_MOTION_KIND}: motion_add_uv on 4:2:0 input of an odd height ({height}) "
            "is not scored (libvmaf keeps the rounded-up chroma plane in buffers of the "
            "rounded-down height)"
        )
    try:
        _fm.check_size(width, height, options, fmt)
        if options.motion_add_uv:
            sx, sy = {"420": (1, 1), "422": (1, 0)}.get(fmt, (0, 0))
            _fm.check_size(-(-width >> sx), -(-height >> sy), options, fmt)
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def _capped(ex: Any, score: float) -> float:
    """``debug``'s ``motion``: the score times ``motion_fps_weight``, capped."""
    value = score * ex.options.motion_fps_weight
    cap = ex.options.motion_max_val
    return value if value < cap else cap


def _pictures(ex: Any, planes: Sequence[np.ndarray], bitdepth: int) -> list[np.ndarray]:
    """A frame's blurred pictures: the luma's, and the Cb's and Cr's with ``motion_add_uv``."""
    taps = _fm.motion_filter(ex.options)
    used = planes if ex.options.motion_add_uv else planes[:1]
    out = []
    for plane in used:
        _fm.check_plane(plane, bitdepth, FLOAT_MOTION_KIND)
        out.append(_fm.blur(_fm.picture(plane, bitdepth), taps))
    return out


class MotionRun:
    """One ``float_motion`` extractor over a clip read in batches: each frame's blurred
    pictures, then each frame's score against the frame before, keeping the last frame's
    pictures for the next batch. ``mapper`` (a thread pool's ``map``) may run the frames
    of a call side by side: NumPy releases the GIL, and each frame's numbers are computed
    in the same order whatever thread runs them."""

    def __init__(self, ex: Any, bitdepth: int) -> None:
        self.ex = ex
        self.bitdepth = bitdepth
        self._prev: list[np.ndarray] | None = None

    def _pictures(self, planes: Sequence[np.ndarray]) -> list[np.ndarray]:
        try:
            return _pictures(self.ex, planes, self.bitdepth)
        except ValueError as exc:
            raise AdmError(str(exc)) from None

    def _score(self, pair: tuple[list[np.ndarray] | None, list[np.ndarray]]) -> float:
        prev, cur = pair
        return 0.0 if prev is None else _fm.frame_score(prev, cur, self.ex.options)

    def scores(
        self, frames: Sequence[Sequence[np.ndarray]], mapper: Callable[..., Any] = map
    ) -> dict[str, np.ndarray]:
        """The outputs known as the next frames read are extracted, in order: the score
        (:func:`score_key`) and, with ``debug``, ``motion``. Each frame is its Y plane, or
        its Y, Cb and Cr planes (``motion_add_uv``); ``motion_force_zero`` reads none."""
        if self.ex.options.motion_force_zero or not frames:
            return _extracted(self.ex, [0.0] * len(frames))
        pictures = list(mapper(self._pictures, frames))
        pairs = list(zip([self._prev, *pictures[:-1]], pictures, strict=True))
        values = list(mapper(self._score, pairs))
        self._prev = pictures[-1]
        return _extracted(self.ex, values)


def _extracted(ex: Any, values: Sequence[float]) -> dict[str, np.ndarray]:
    out = {score_key(ex): np.array(values, np.float64)}
    if ex.options.debug:
        out[ex.names[_fm.MOTION]] = np.array([_capped(ex, v) for v in values], np.float64)
    return out


def float_motion_frame(
    ex: Any,
    ref: Sequence[np.ndarray],
    prev_ref: Sequence[np.ndarray] | None,
    bitdepth: int,
) -> dict[str, float]:
    """One frame's outputs known when it is extracted (:meth:`MotionRun.scores`), from
    its reference planes and the previous frame's (None for the first frame read): the
    Y plane, or Y, Cb and Cr with ``motion_add_uv``."""
    score = 0.0
    if not ex.options.motion_force_zero and prev_ref is not None:
        try:
            score = _fm.frame_score(
                _pictures(ex, prev_ref, bitdepth), _pictures(ex, ref, bitdepth), ex.options
            )
        except ValueError as exc:
            raise AdmError(str(exc)) from None
    return {k: float(v[0]) for k, v in _extracted(ex, [score]).items()}


def finish(ex: Any, rows: Sequence[dict[str, Any]]) -> None:
    """Add ``motion2``, ``motion`` and ``motion3`` to every frame's row from their scores
    (libvmaf's ``extract`` and ``flush`` bookkeeping:
    :func:`admcuda.reference.float_motion.frame_outputs`)."""
    key = score_key(ex)
    try:
        scores = [row[key] for row in rows]
    except KeyError:
        raise AdmError(
            f"{ex.name}: a frame has no float_motion score; give finish_clip score_pair's "
            "result for every frame read"
        ) from None
    for row, out in zip(rows, _fm.frame_outputs(scores, ex.options), strict=True):
        for feature, value in out.items():
            row[ex.names[feature]] = value

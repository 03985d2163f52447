"""The steps around the SVM in libvmaf's prediction (src/predict.c), in double, in its order.

``vmaf_predict_score_at_index`` rescales each feature (``slope * x + intercept``), applies
a model's chroma correction (:class:`ChromaCorrection`), runs libsvm, undoes the model's
rescale (``(y - intercept) / slope``), applies the optional score transform (polynomial,
then piecewise-linear knots, then rectification) and clips.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ChromaCorrection",
    "ScoreTransform",
    "clip",
    "correct_chroma",
    "denormalize",
    "normalize",
    "transform",
]


def normalize(norm_type: str, slope: float, intercept: float, x: float) -> float:
    """One feature's input to the SVM: ``slope * x + intercept`` for linear_rescale."""
    if norm_type == "none":
        return x
    return slope * x + intercept


def denormalize(norm_type: str, slope: float, intercept: float, y: float) -> float:
    """The SVM output back on the score scale: ``(y - intercept) / slope``."""
    if norm_type == "none":
        return y
    return (y - intercept) / slope


@dataclass(frozen=True)
class ScoreTransform:
    """A model's ``score_transform``: what libvmaf applies when the transform is enabled.

    Attributes
    ----------
    p0, p1, p2 : float or None
        Polynomial ``p0 + p1*y + p2*y*y``; a term that is None is left out, and with all
        three None the polynomial step passes ``y`` through.
    knots : tuple of (x, y) or None
        Piecewise-linear map; None skips the step.
    out_lte_in, out_gte_in : bool
        Keep the output at most / at least the transform's input.
    """

    p0: float | None = None
    p1: float | None = None
    p2: float | None = None
    knots: tuple[tuple[float, float], ...] | None = None
    out_lte_in: bool = False
    out_gte_in: bool = False


def _line(p1: tuple[float, float], p2: tuple[float, float]) -> tuple[float, float]:
    """Slope and offset of the line through two knots (y differs, x ascends)."""
    if p1[0] == 0:
        beta = p1[1]
        alpha = (p2[1] - beta) / p2[0]
    else:
        alpha = (p2[1] - p1[1]) / (p2[0] - p1[0])
        beta = p1[1] - p1[0] * alpha
    return alpha, beta


def _piecewise_linear(x: float, knots: tuple[tuple[float, float], ...]) -> float:
    """libvmaf's ``piecewise_linear_mapping``: every segment is visited and a later one that
    also covers ``x`` (a shared knot) overrides an earlier one; the end segments extend."""
    y = 0.0
    last = len(knots) - 2
    for idx in range(last + 1):
        (x0, y0), (x1, y1) = knots[idx], knots[idx + 1]
        inside = x0 <= x and x <= x1
        if y0 == y1:
            if inside:
                y = y0
            if idx == 0 and x < x0:
                y = y0
            if idx == last and x > x1:
                y = y0
        else:
            alpha, beta = _line(knots[idx], knots[idx + 1])
            if inside:
                y = alpha * x + beta
            if idx == 0 and x < x0:
                y = alpha * x + beta
            if idx == last and x > x1:
                y = alpha * x + beta
    return y


def transform(t: ScoreTransform, y_in: float) -> float:
    """libvmaf's ``transform``: polynomial, piecewise-linear map, then rectification."""
    if t.p0 is None and t.p1 is None and t.p2 is None:
        y_out = y_in
    else:
        y_out = 0.0
        if t.p0 is not None:
            y_out += t.p0
        if t.p1 is not None:
            y_out += t.p1 * y_in
        if t.p2 is not None:
            y_out += t.p2 * y_in * y_in
    if t.knots is not None:
        y_out = _piecewise_linear(y_out, t.knots)
    if t.out_lte_in and y_out > y_in:
        y_out = y_in
    if t.out_gte_in and y_out < y_in:
        y_out = y_in
    return y_out


def clip(bounds: tuple[float, float], y: float) -> float:
    """libvmaf's ``clip``: raise to the minimum, then lower to the maximum (NaN stays)."""
    lo, hi = bounds
    y = lo if y < lo else y
    return hi if y > hi else y


@dataclass(frozen=True)
class ChromaCorrection:
    """A model's ``chroma_correction_parameter`` and the inputs it ties together.

    Where the guided input (the one feature whose model name contains ``speed_chroma``),
    rescaled and then taken back to its own scale, is exactly 0, libvmaf replaces it by
    ``-parameter * guiding + parameter``, rescaled, where ``guiding`` is the input whose
    name contains ``adm3`` taken back the same way (``post_process_feature_from_another``).

    Attributes
    ----------
    parameter : float
        The model's ``chroma_correction_parameter`` (never 0: libvmaf writes no score then).
    guiding, guided : int
        Indexes of the ``adm3`` and the ``speed_chroma`` input in the model's features.
    """

    parameter: float
    guiding: int
    guided: int


def correct_chroma(
    norm_type: str,
    correction: ChromaCorrection,
    slopes: list[float],
    intercepts: list[float],
    columns: list[np.ndarray],
) -> list[np.ndarray]:
    """The rescaled inputs after the chroma correction, each frame as libvmaf corrects it:
    ``columns`` holds each feature's rescaled values (float64, one per frame), in the
    model's order; the guided column is replaced where its round trip is 0."""
    g, a = correction.guided, correction.guiding
    guided = np.asarray(columns[g], dtype=np.float64)
    guiding = np.asarray(columns[a], dtype=np.float64)
    if norm_type == "linear_rescale":
        back = (guided - intercepts[g]) / slopes[g]
        guiding = (guiding - intercepts[a]) / slopes[a]
    else:
        back = guided
    corrected = (-correction.parameter * guiding) + correction.parameter
    if norm_type == "linear_rescale":
        corrected = slopes[g] * corrected + intercepts[g]
    out = list(columns)
    out[g] = np.where(back == 0.0, corrected, guided)
    return out

"""Pooling of per-frame scores as libvmaf's ``vmaf_feature_score_pooled`` does it (libvmaf.c).

One pass in frame order keeps a double running sum, a running sum of ``1 / (s + 1)``, and
the minimum and maximum (the first frame's score starts both; a later one replaces them
only if strictly smaller or larger, so a NaN is kept only when it comes first). Then
``mean = sum / n`` and ``harmonic_mean = n / i_sum - 1``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from admcuda.model.features import ModelError

__all__ = ["POOL_METHODS", "pool"]

POOL_METHODS = ("min", "max", "mean", "harmonic_mean")


def pool(scores: Iterable[float], method: str) -> float:
    """Pool per-frame scores by ``method`` (min, max, mean or harmonic_mean) as libvmaf does.

    Parameters
    ----------
    scores : iterable of float
        The frames' scores in frame order (those a subsampled run scored, only).
    method : str
        One of :data:`POOL_METHODS`.

    Raises
    ------
    ModelError
        For an unknown method or no scores.
    """
    if method not in POOL_METHODS:
        raise ModelError(f"unknown pooling method '{method}' (one of {', '.join(POOL_METHODS)})")
    count = 0
    total = i_total = lo = hi = 0.0
    # IEEE division, as in C: a score of -1 gives an infinite term, not an exception.
    with np.errstate(divide="ignore", invalid="ignore"):
        for value in scores:
            s = float(value)
            total += s
            i_total += float(np.divide(1.0, s + 1.0))
            if count == 0 or s < lo:
                lo = s
            if count == 0 or s > hi:
                hi = s
            count += 1
        harmonic = float(np.divide(float(count), i_total)) - 1.0
    if count == 0:
        raise ModelError("cannot pool an empty list of scores")
    if method == "min":
        return lo
    if method == "max":
        return hi
    if method == "mean":
        return total / count
    return harmonic

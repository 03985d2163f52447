"""Bootstrap model collections: libvmaf's bagging score, standard deviation and 95% interval.

A collection file (``vmaf_b_v0.6.3.json``) holds models under the keys ``0``, ``1``, ...:
``0`` scores the clip as a plain model does, under the collection's name (``vmaf``); the
others are its members, each trained on a bootstrap resample. For every frame libvmaf's
``vmaf_bootstrap_predict_score_at_index`` (predict.c) then:

- files each member's score, transformed and clipped as that member is, as
  ``<name>_0001``, ``<name>_0002``, ...;
- takes the members' scores before any transform or clip, in member order: their mean
  (a running double sum divided by the count), their standard deviation (the square root
  of the summed squared deviations over the count, not the count less one), and, sorted
  ascending, the 2.5th and 97.5th percentiles (linear between the two nearest ranks at
  ``perc * (n - 1) / 100``);
- transforms and clips the mean and both percentiles as the first member does, and scales
  the deviation by that map's slope at the mean (its values at ``mean +- 0.01`` over
  ``0.02``), so the deviation is on the transformed scale;
- files them as ``<name>_bagging``, ``<name>_stddev``, ``<name>_ci_p95_lo`` and
  ``<name>_ci_p95_hi``.

The squared deviation is ``d * d``: libvmaf writes ``pow(d, 2)``, which its compilers turn
into that product. A member's score that is NaN sorts last here; libvmaf's ``qsort`` leaves
NaN wherever its comparisons put it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["SUFFIXES", "bootstrap_scores", "member_name", "percentile"]

# The names libvmaf files a collection's scores under: <name><suffix>, in this order.
SUFFIXES = ("_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi")

# libvmaf's step either side of the mean for the transform's slope.
_DELTA = 0.01


def member_name(name: str, index: int) -> str:
    """The name member ``index`` (1, 2, ...) files its score under: ``vmaf_0001``."""
    return f"{name}_{index:04d}"


def percentile(ranked: np.ndarray, perc: float) -> np.ndarray:
    """libvmaf's ``percentile`` of each row of ``ranked`` (sorted ascending, one row a
    frame): the value at rank ``perc * (n - 1) / 100``, linear between its neighbours."""
    n = ranked.shape[1]
    p = perc * (n - 1) / 100.0
    lo, hi = math.floor(p), math.ceil(p)
    if lo == hi:
        return ranked[:, lo].copy()
    return ranked[:, lo] * (hi - p) + ranked[:, hi] * (p - lo)


def bootstrap_scores(
    raw: np.ndarray, finish: Callable[[float], float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each frame's bagging score, standard deviation and 95% interval, as libvmaf files
    them.

    Parameters
    ----------
    raw : 2-D array of float64
        One row per frame, one column per member in member order: the member's score
        before its transform and clip.
    finish : callable
        The first member's transform then clip, on one double.

    Returns
    -------
    bagging, stddev, ci_p95_lo, ci_p95_hi : 1-D arrays of float64
    """
    raw = np.asarray(raw, dtype=np.float64)
    frames, n = raw.shape
    total = np.zeros(frames)
    for i in range(n):  # member order, as libvmaf sums
        total = total + raw[:, i]
    mean = total / n
    squares = np.zeros(frames)
    for i in range(n):
        d = raw[:, i] - mean
        squares = squares + d * d
    stddev = np.sqrt(squares / n)
    ranked = np.sort(raw, axis=1)
    lo = percentile(ranked, 2.5)
    hi = percentile(ranked, 97.5)

    def mapped(values: np.ndarray) -> np.ndarray:
        return np.array([finish(v) for v in values.tolist()], dtype=np.float64)

    plus = mapped(mean + _DELTA)
    minus = mapped(mean - _DELTA)
    slope = (plus - minus) / (2.0 * _DELTA)
    return mapped(mean), stddev * slope, mapped(lo), mapped(hi)

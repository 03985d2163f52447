"""Statistics of a feature over frames beyond libvmaf's pooling: median, standard
deviation and percentiles, as ffmpeg-quality-metrics reports them beside the mean.

libvmaf's ``pooled_metrics`` (min, max, mean, harmonic mean) stay as libvmaf pools them
(:func:`admcuda.report.writers.pool`) and are the only ones written into its JSON, XML and
CSV layouts; these are for the printed summary, :meth:`admcuda.AdmResult.stats` and the
batch summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from admcuda.report.writers import pool

__all__ = ["DEFAULT_PERCENTILES", "frame_stats", "percentile_key"]

DEFAULT_PERCENTILES: tuple[float, ...] = (5.0, 95.0)


def percentile_key(q: float) -> str:
    """The key of percentile ``q``: ``p5``, ``p95``, ``p99.9``."""
    return f"p{q:g}"


def frame_stats(
    values: Sequence[float], percentiles: Sequence[float] = DEFAULT_PERCENTILES
) -> dict[str, float]:
    """libvmaf's four pooled values of ``values`` and, beside them, the median, the
    standard deviation and each of ``percentiles``.

    Parameters
    ----------
    values : sequence of float
        Per-frame scores, at least one.
    percentiles : sequence of float
        Percentiles from 0 to 100 (default 5 and 95), keyed ``p5``, ``p95``.

    Returns
    -------
    dict
        ``min``, ``max``, ``mean``, ``harmonic_mean`` (libvmaf's pooling, exactly),
        ``median``, ``stdev`` (the population standard deviation, NumPy's ``std``) and
        ``p<q>`` for each percentile (NumPy's linear interpolation between the two
        nearest frames). A NaN frame makes the median, deviation and percentiles NaN.

    Raises
    ------
    ValueError
        For no values, or a percentile outside 0 to 100.
    """
    out = pool(values)
    qs = [float(q) for q in percentiles]
    if any(not 0.0 <= q <= 100.0 for q in qs):
        raise ValueError(f"percentiles must be from 0 to 100, got {list(percentiles)}")
    a = np.asarray(values, dtype=np.float64)
    nan = bool(np.isnan(a).any())
    out["median"] = float("nan") if nan else float(np.median(a))
    out["stdev"] = float("nan") if nan else float(np.std(a))
    for q in qs:
        out[percentile_key(q)] = float("nan") if nan else float(np.percentile(a, q))
    return out

"""Per-frame plots of a VMAF model's score, ``integer_adm2`` and its four scales, for one
or more results.

Each input is a JSON or XML result in libvmaf's layout, written by admcuda or by libvmaf
itself (:meth:`AdmResult.read`); names may carry libvmaf's option suffix
(``integer_adm2_egl_1.2``), so features are matched by base name. Where a result holds
model scores (``vmaf``, or a model's ``name=``: any output that is no feature), the top
panel plots them, above ``integer_adm2`` and its scales; ``metric`` picks another output
for it. Several inputs (for instance the rungs of a bitrate ladder, each scored against
the same reference) are overlaid, one colour each; a file that holds several ADM option
sets gives one line per set. The legends give each line's pooled mean as admcuda's
writers pool it: ``null`` where a frame is null, as libvmaf's ``pooled_metrics`` has it
then.

matplotlib is optional: ``pip install ".[plot]"``. It is imported on first use,
with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from admcuda.errors import AdmError
from admcuda.numeric import counted
from admcuda.report.result import AdmResult, split_feature_name
from admcuda.report.writers import pool, written_input

__all__ = ["PLOTTED_FEATURES", "Series", "load_pyplot", "plot_result", "result_series"]

PLOTTED_FEATURES: tuple[str, ...] = (
    "integer_adm2",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
)


_MARKERS_UP_TO = 60  # frames; more than that and markers only clutter

# The beginnings of the names libvmaf gives its features' outputs: any other output in a
# result is a model's score.
_FEATURE_PREFIXES = (
    "integer_", "VMAF_", "float_", "psnr", "ssim", "ms_ssim", "ciede", "cambi", "Cambi",
    "speed_", "motion", "adm", "vif", "aim",
)  # fmt: skip


def model_scores(names: Sequence[str]) -> list[str]:
    """The outputs among ``names`` that are models' scores (``vmaf``, ``vmaf_neg`` ...)."""
    return [n for n in names if not n.startswith(_FEATURE_PREFIXES)]


@dataclass(frozen=True)
class Series:
    """One input's lines: a label, per-frame values by base name, and frame numbers."""

    label: str
    values: dict[str, list[float]]
    frames: list[int]
    top: dict[str, list[float]] = field(default_factory=dict)  # the top panel's, by name

    def top_legend(self, name: str) -> str:
        """The label (and ``name`` where the series has several) with its pooled mean."""
        values = self.top[name]
        mean = pool(values)["mean"] if values else math.nan
        text = self.label if len(self.top) == 1 else f"{self.label}: {name}"
        return f"{text} (mean {mean:.4f})" if math.isfinite(mean) else f"{text} (mean null)"

    def mean(self, base: str = "integer_adm2") -> float:
        """The pooled mean, as admcuda's writers (and libvmaf) pool the frames
        (:func:`admcuda.report.writers.pool`): NaN, written ``null``, where a frame is null
        (NaN); NaN where there are no values."""
        values = self.values.get(base, [])
        return pool(values)["mean"] if values else math.nan

    def legend(self) -> str:
        """The label with the pooled ``integer_adm2`` mean; ``null`` (as the JSON
        ``pooled_metrics`` has it) with the count of null frames, where there are some."""
        mean = self.mean()
        if math.isfinite(mean):
            return f"{self.label} (mean {mean:.4f})"
        values = self.values.get("integer_adm2", [])
        nulls = sum(not math.isfinite(v) for v in values)
        why = f": {nulls} of {counted(len(values), 'frame')} null" if nulls else ""
        return f"{self.label} (mean null{why})"


def _load(source: AdmResult | str | os.PathLike[str]) -> tuple[AdmResult, str]:
    if isinstance(source, AdmResult):
        where = source.metadata.get("source") or source.metadata.get("dis_path")
        return source, Path(where).stem if where else "result"
    return AdmResult.read(source, adm_only=False), Path(os.fspath(source)).stem


def result_series(result: AdmResult, label: str, metric: str | None = None) -> list[Series]:
    """Split a result into one :class:`Series` per ADM option suffix found in it; the
    first also carries the top panel's values: ``metric`` (an output's name), by default
    the result's model scores (:func:`model_scores`), if any.

    Raises
    ------
    AdmError
        If the result has neither ``integer_adm2`` nor model scores, or no ``metric``.
    """
    if metric is not None:
        try:
            top = {metric: result.values(metric)}
        except KeyError as exc:
            raise AdmError(f"{label}: {exc.args[0]}") from None
    else:
        top = {name: result.values(name) for name in model_scores(result.names)}
    by_suffix: dict[str, dict[str, str]] = {}
    for name in result.names:
        parts = split_feature_name(name)
        if parts is not None and parts[0] in PLOTTED_FEATURES:
            by_suffix.setdefault(parts[1], {})[parts[0]] = name
    series = []
    for suffix, names in by_suffix.items():
        if "integer_adm2" not in names:
            continue
        text = label if len(by_suffix) == 1 or not suffix else f"{label} ({suffix.lstrip('_')})"
        values = {base: result.values(name) for base, name in names.items()}
        series.append(Series(text, values, list(result.frame_numbers)))
    if top:
        if series:
            series[0] = replace(series[0], top=top)
        else:
            series.append(Series(label, {}, list(result.frame_numbers), top))
    if not series:
        raise AdmError(f"{label}: no integer_adm2 or VMAF model scores to plot")
    return series


def load_pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise AdmError('plotting needs matplotlib: pip install ".[plot]"') from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_result(
    results: AdmResult | str | os.PathLike[str] | Sequence[AdmResult | str | os.PathLike[str]],
    path: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    metric: str | None = None,
) -> None:
    """Plot per-frame model scores, ``integer_adm2`` and the four scales of one or more
    results.

    Parameters
    ----------
    results : AdmResult, path, or a sequence of them
        Results, or JSON files in libvmaf's layout (admcuda's or libvmaf's).
    path : str or os.PathLike
        Image to write; the suffix picks the format (``.png``, ``.svg``, ``.pdf``...).
    labels : sequence of str, optional
        Legend text per result; default the file name without suffix.
    title : str, optional
        Figure title.
    metric : str, optional
        An output to plot in the top panel (by its name in the results, or its base
        name); by default the results' model scores, where they hold some (else the top
        panel is ``integer_adm2``'s).

    Raises
    ------
    AdmError
        Unreadable or score-less results, a label count that does not match, or
        matplotlib missing.
    OSError
        If a file cannot be read or the image cannot be written.
    """
    if isinstance(results, (AdmResult, str, os.PathLike)):
        results = [results]
    if not results:
        raise AdmError("nothing to plot: give at least one result")
    if labels is not None and len(labels) != len(results):
        raise AdmError(f"{len(labels)} labels for {len(results)} results")
    read = [r for r in results if isinstance(r, (str, os.PathLike))]
    name = written_input(path, read)
    if name is not None:
        raise AdmError(f"'{os.fspath(path)}' is the input '{name}'; write elsewhere")
    series: list[Series] = []
    for k, source in enumerate(results):
        result, default_label = _load(source)
        label = labels[k] if labels is not None else default_label
        series += result_series(result, label, None if metric == "integer_adm2" else metric)
    plt = load_pyplot()

    tops = list(dict.fromkeys(name for item in series for name in item.top))
    rows = 3 if not tops else 4
    fig = plt.figure(figsize=(11, 8.5 if rows == 3 else 10.5), dpi=100, layout="constrained")
    grid = fig.add_gridspec(rows, 2, height_ratios=(1.4, 1, 1) if rows == 3 else (1.4, 1, 1, 1))
    top = fig.add_subplot(grid[0, :])
    adm_row = rows - 3
    axes = {"integer_adm2": top if not tops else fig.add_subplot(grid[1, :], sharex=top)}
    for s in range(4):
        axes[f"integer_adm_scale{s}"] = fig.add_subplot(
            grid[1 + adm_row + s // 2, s % 2], sharex=top
        )
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ("-", "--", ":", "-.")
    try:
        for k, item in enumerate(series):
            color = colors[k % len(colors)]
            for name, values in item.top.items():
                top.plot(
                    item.frames, values, color=color, linewidth=1.3,
                    linestyle=styles[tops.index(name) % len(styles)],
                    marker="o" if len(values) <= _MARKERS_UP_TO else None, markersize=3,
                    label=item.top_legend(name),
                )  # fmt: skip
            for base, ax in axes.items():
                values = item.values.get(base)
                if values is None:
                    continue
                few = len(values) <= _MARKERS_UP_TO
                label = item.legend() if base == "integer_adm2" else None
                ax.plot(
                    item.frames,
                    values,
                    color=color,
                    linewidth=1.3,
                    marker="o" if few else None,
                    markersize=3,
                    label=label,
                )
        for base, ax in axes.items():
            ax.set_title(base, fontsize=10)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize=8)
            ax.xaxis.get_major_locator().set_params(integer=True)
        for s in (2, 3):
            axes[f"integer_adm_scale{s}"].set_xlabel("frame", fontsize=9)
        if tops:
            axes["integer_adm2"].legend(fontsize=8, loc="best")
            top.set_title(" / ".join(tops), fontsize=10)
            top.grid(True, alpha=0.3)
            top.tick_params(labelsize=8)
        top.set_ylabel("score", fontsize=9)
        top.legend(fontsize=8, loc="best")
        if title:
            fig.suptitle(title, fontsize=11)
        fig.savefig(os.fspath(path))
    finally:
        plt.close(fig)

"""Per-frame plots of a VMAF model's score, PSNR, SSIM, CAMBI, SpEED, ``integer_adm2`` and
its four scales, for one or more results.

Each input is a JSON, XML or CSV result in libvmaf's layout, written by admcuda or by
libvmaf itself (:func:`read_scores`); names may carry libvmaf's option suffix
(``integer_adm2_egl_1.2``), so features are matched by base name. Where a result holds
model scores (``vmaf``, or a model's ``name=``: any output that is no feature), the top
panel plots them, above ``integer_adm2`` and its scales; ``metric`` picks another output
for it. Between it and ADM's panels, one panel each for the outputs of libvmaf's other
features that a result holds (:data:`PANELS`): ``psnr_y``/``psnr_cb``/``psnr_cr`` in dB,
``float_ssim`` and ``float_ms_ssim``, ``cambi``, and SpEED's
``speed_chroma_u``/``_v``/``_uv``, each with its option suffix where it has one; a panel
no input has is not drawn. A non-finite value (JSON ``null``, or an infinite PSNR)
leaves a gap in its line. Several inputs (for instance the rungs of a bitrate ladder,
each scored against the same reference) are overlaid, one colour each; a file that holds
several ADM option sets gives one line per set. Each legend entry names the input (the
distorted file a result was scored from where it holds that, else the score file's name
with its suffix, so that ``vmaf.json`` does not read as the metric ``vmaf``) and the
metric, with the line's pooled mean as admcuda's writers pool it: ``null`` where a frame
is null, as libvmaf's ``pooled_metrics`` has it then. The legends stand outside the
axes, right of the panels they belong to, so that no line is hidden; the figure's title
names the inputs (and their reference where the results hold it) unless one is given.

matplotlib is optional: ``pip install ".[plot]"``. It is imported on first use,
with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from admcuda.errors import AdmError
from admcuda.numeric import counted
from admcuda.report.result import AdmResult, split_feature_name
from admcuda.report.writers import pool, written_input

__all__ = [
    "PANELS",
    "PLOTTED_FEATURES",
    "Series",
    "load_pyplot",
    "metric_legend",
    "panel_outputs",
    "plot_figure",
    "plot_result",
    "default_title",
    "read_scores",
    "result_series",
]

PLOTTED_FEATURES: tuple[str, ...] = (
    "integer_adm2",
    "integer_adm_scale0",
    "integer_adm_scale1",
    "integer_adm_scale2",
    "integer_adm_scale3",
)

# The panels drawn below the model scores for libvmaf's other features, by title, with the
# output names each takes: libvmaf's names, with an option suffix where options give one
# (``cambi_topk_0.5``, ``speed_chroma_u_ks_2``). Not plotted: the SSIM components that
# ``enable_lcs`` adds (``float_ssim_l``, ``float_ms_ssim_c_scale2``), full_ref CAMBI's
# ``cambi_source`` and ``cambi_full_reference``, ``enable_mse``'s ``mse_*``.
PANELS: tuple[tuple[str, str], ...] = (
    ("PSNR (dB)", r"psnr_(?:y|cb|cr)(?:_.+)?"),
    ("SSIM / MS-SSIM", r"float_(?:ms_)?ssim(?!_[lcs](?:_|$))(?:_.+)?"),
    ("CAMBI", r"cambi(?!_source|_full_reference)(?:_.+)?"),
    ("SpEED chroma", r"speed_chroma_(?:u|v|uv)(?:_.+)?"),
)
_PANEL_PATTERNS = tuple((title, re.compile(pattern)) for title, pattern in PANELS)

_MARKERS_UP_TO = 60  # frames; more than that and markers only clutter
_TITLE_INPUTS = 4  # inputs named in a title; more are counted

# The beginnings of the names libvmaf gives its features' outputs: any other output in a
# result is a model's score.
_FEATURE_PREFIXES = (
    "integer_", "VMAF_", "float_", "psnr", "apsnr", "mse_", "ssim", "ms_ssim", "ciede",
    "cambi", "Cambi", "speed_", "Speed_", "motion", "adm", "vif", "aim",
)  # fmt: skip


def model_scores(names: Sequence[str]) -> list[str]:
    """The outputs among ``names`` that are models' scores (``vmaf``, ``vmaf_neg`` ...)."""
    return [n for n in names if not n.startswith(_FEATURE_PREFIXES)]


def panel_outputs(names: Sequence[str]) -> dict[str, list[str]]:
    """The outputs among ``names`` that each of :data:`PANELS` plots, by panel title, in
    the order of ``names``; panels with none left out."""
    found: dict[str, list[str]] = {}
    for title, pattern in _PANEL_PATTERNS:
        hits = [n for n in names if pattern.fullmatch(n)]
        if hits:
            found[title] = hits
    return found


def metric_legend(label: str, name: str, values: Sequence[float]) -> str:
    """``label: name`` with the pooled mean of ``values`` (admcuda's writers' and
    libvmaf's pooling): ``null`` with the count of null frames where some frame is null
    (NaN), ``inf`` where the mean is infinite (an uncapped PSNR of identical frames)."""
    text = f"{label}: {name}"
    mean = pool(values)["mean"] if values else math.nan
    if math.isfinite(mean):
        return f"{text} (mean {mean:.4f})"
    if math.isinf(mean):
        return f"{text} (mean {mean})"
    nulls = sum(math.isnan(v) for v in values)
    why = f": {nulls} of {counted(len(values), 'frame')} null" if nulls else ""
    return f"{text} (mean null{why})"


@dataclass(frozen=True)
class Series:
    """One input's lines: the input's label, per-frame values by base name, frame numbers,
    and the ADM option suffix of the names the values were read under (``_egl_1.2``)."""

    label: str
    values: dict[str, list[float]]
    frames: list[int]
    top: dict[str, list[float]] = field(default_factory=dict)  # the top panel's, by name
    suffix: str = ""
    # PANELS' outputs: panel title -> output name -> per-frame values
    panels: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def top_legend(self, name: str) -> str:
        """``label: name`` with its pooled mean."""
        values = self.top[name]
        mean = pool(values)["mean"] if values else math.nan
        text = f"{self.label}: {name}"
        return f"{text} (mean {mean:.4f})" if math.isfinite(mean) else f"{text} (mean null)"

    def panel_legend(self, title: str, name: str) -> str:
        """``label: name`` with its pooled mean (:func:`metric_legend`)."""
        return metric_legend(self.label, name, self.panels[title][name])

    def mean(self, base: str = "integer_adm2") -> float:
        """The pooled mean, as admcuda's writers (and libvmaf) pool the frames
        (:func:`admcuda.report.writers.pool`): NaN, written ``null``, where a frame is null
        (NaN); NaN where there are no values."""
        values = self.values.get(base, [])
        return pool(values)["mean"] if values else math.nan

    def legend(self) -> str:
        """``label: integer_adm2`` (with the option suffix) and the pooled mean; ``null``
        (as the JSON ``pooled_metrics`` has it) with the count of null frames, where there
        are some."""
        text = f"{self.label}: integer_adm2{self.suffix}"
        mean = self.mean()
        if math.isfinite(mean):
            return f"{text} (mean {mean:.4f})"
        values = self.values.get("integer_adm2", [])
        nulls = sum(not math.isfinite(v) for v in values)
        why = f": {nulls} of {counted(len(values), 'frame')} null" if nulls else ""
        return f"{text} (mean null{why})"


def read_scores(source: str | os.PathLike[str]) -> AdmResult:
    """Read a score file in libvmaf's JSON, XML or CSV layout (every output kept), as
    :meth:`AdmResult.read` reads it, told apart by how it begins: ``{``, ``<`` or CSV's
    ``Frame,`` header. CSV holds no pooled values: they are pooled from the frames.

    Raises
    ------
    AdmError
        If the file is none of these, or not in its layout.
    OSError
        If the file cannot be read.
    """
    result = AdmResult.read(source)
    result.metadata["source"] = os.fspath(source)  # as the command line named it
    return result


def _input_name(source: AdmResult | str | os.PathLike[str], k: int) -> str:
    """An input's name for legends and titles: the distorted file a result was scored
    from, else the file it was read from (with its suffix, which a metric name never
    has), else its place among the inputs."""
    if isinstance(source, AdmResult):
        where = source.metadata.get("dis_path") or source.metadata.get("source")
        return Path(where).name if where else f"result {k + 1}"
    return Path(os.fspath(source)).name


def _reference_name(source: AdmResult | str | os.PathLike[str]) -> str | None:
    if isinstance(source, AdmResult) and source.metadata.get("ref_path"):
        return Path(source.metadata["ref_path"]).name
    return None


def default_title(names: Sequence[str], references: Sequence[str | None]) -> str:
    """The figure's title: the inputs (the first few, and how many more), with their
    reference where every input names the same one."""
    shown = ", ".join(names[:_TITLE_INPUTS])
    if len(names) > _TITLE_INPUTS:
        shown += f" and {len(names) - _TITLE_INPUTS} more"
    refs = set(references)
    if len(refs) == 1 and None not in refs:
        shown += f" vs {references[0]}"
    return f"Per-frame scores: {shown}"


def result_series(result: AdmResult, label: str, metric: str | None = None) -> list[Series]:
    """Split a result into one :class:`Series` per ADM option suffix found in it; the
    first also carries the top panel's values: ``metric`` (an output's name), by default
    the result's model scores (:func:`model_scores`), if any, and the outputs each of
    :data:`PANELS` plots.

    Raises
    ------
    AdmError
        If the result has no ``integer_adm2``, model scores or output of :data:`PANELS`,
        or no ``metric``.
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
        values = {base: result.values(name) for base, name in names.items()}
        series.append(Series(label, values, list(result.frame_numbers), suffix=suffix))
    panels = {
        title: {name: result.values(name) for name in names}
        for title, names in panel_outputs(result.names).items()
    }
    if top or panels:
        if series:
            series[0] = replace(series[0], top=top, panels=panels)
        else:
            series.append(Series(label, {}, list(result.frame_numbers), top, panels=panels))
    if not series:
        raise AdmError(
            f"{label}: no integer_adm2, VMAF model, PSNR, SSIM, CAMBI or SpEED scores to plot"
        )
    return series


def load_pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise AdmError('plotting needs matplotlib: pip install ".[plot]"') from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_figure(
    results: AdmResult | str | os.PathLike[str] | Sequence[AdmResult | str | os.PathLike[str]],
    *,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    metric: str | None = None,
) -> Any:
    """The figure :func:`plot_result` saves, as a matplotlib ``Figure``; the caller
    closes it (``matplotlib.pyplot.close(fig)``).

    Parameters and errors as for :func:`plot_result`.
    """
    if isinstance(results, (AdmResult, str, os.PathLike)):
        results = [results]
    if not results:
        raise AdmError("nothing to plot: give at least one result")
    if labels is not None and len(labels) != len(results):
        raise AdmError(f"{len(labels)} labels for {len(results)} results")
    series: list[Series] = []
    names = [_input_name(source, k) for k, source in enumerate(results)]
    for k, source in enumerate(results):
        result = source if isinstance(source, AdmResult) else read_scores(source)
        label = labels[k] if labels is not None else names[k]
        series += result_series(result, label, None if metric == "integer_adm2" else metric)
    if title is None:
        title = default_title(names, [_reference_name(source) for source in results])
    plt = load_pyplot()
    fig = plt.figure(figsize=(13, 8.5), dpi=100, layout="constrained")
    try:
        _draw(fig, plt, series, title)
    except BaseException:
        plt.close(fig)
        raise
    return fig


def _panel_names(series: Sequence[Series]) -> dict[str, list[str]]:
    """Each drawn panel's output names over all inputs, in order of first appearance: the
    model scores' (under ``""``), then :data:`PANELS`' in their order."""
    names: dict[str, list[str]] = {}
    tops = list(dict.fromkeys(name for item in series for name in item.top))
    if tops:
        names[""] = tops
    for title, _ in PANELS:
        found = list(dict.fromkeys(name for item in series for name in item.panels.get(title, {})))
        if found:
            names[title] = found
    return names


def _draw(fig: Any, plt: Any, series: Sequence[Series], title: str) -> None:
    """One full-width row per panel of :func:`_panel_names`, then (where an input has
    ``integer_adm2``) adm2's row and its four scales, two to a row."""
    panels = _panel_names(series)
    adm = any("integer_adm2" in item.values for item in series)
    ratios = [1.0] * (len(panels) + 3 * adm)
    ratios[0] = 1.4  # the first panel: the model scores where there are some
    # 8.5 inches for the three rows adm2 alone draws, 2 more for each further row
    fig.set_figheight(1.7 + 2.0 * sum(ratios))
    grid = fig.add_gridspec(len(ratios), 2, height_ratios=ratios)
    first: Any = None
    panel_axes: dict[str, Any] = {}
    for row, name in enumerate(panels):
        panel_axes[name] = fig.add_subplot(grid[row, :], sharex=first)
        first = first if first is not None else panel_axes[name]
    axes: dict[str, Any] = {}
    if adm:
        row = len(panels)
        axes["integer_adm2"] = fig.add_subplot(grid[row, :], sharex=first)
        first = first if first is not None else axes["integer_adm2"]
        for s in range(4):
            axes[f"integer_adm_scale{s}"] = fig.add_subplot(
                grid[row + 1 + s // 2, s % 2], sharex=first
            )
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ("-", "--", ":", "-.")
    for k, item in enumerate(series):
        color = colors[k % len(colors)]
        for panel, ax in panel_axes.items():
            lines = item.top if panel == "" else item.panels.get(panel, {})
            for name, values in lines.items():
                label = item.top_legend(name) if panel == "" else item.panel_legend(panel, name)
                ax.plot(
                    item.frames, values, color=color, linewidth=1.3,
                    linestyle=styles[panels[panel].index(name) % len(styles)],
                    marker="o" if len(values) <= _MARKERS_UP_TO else None, markersize=3,
                    label=label,
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
    # Outside the axes, right of them: a legend inside would hide a line wherever it
    # stood (four rungs fill a panel); constrained layout makes room for it.
    outside = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0}
    for panel, ax in panel_axes.items():
        ax.set_title(" / ".join(panels[panel]) if panel == "" else panel, fontsize=10)
        ax.legend(fontsize=8, **outside)
    for base, ax in axes.items():
        ax.set_title(base, fontsize=10)
    if adm:
        axes["integer_adm2"].legend(fontsize=8, **outside)
        for s in (2, 3):
            axes[f"integer_adm_scale{s}"].set_xlabel("frame", fontsize=9)
    else:
        fig.axes[-1].set_xlabel("frame", fontsize=9)
    for ax in fig.axes:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
    first.set_ylabel("score", fontsize=9)
    if "PSNR (dB)" in panel_axes:
        panel_axes["PSNR (dB)"].set_ylabel("dB", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=11)


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
        Results, or score files in libvmaf's JSON, XML or CSV layout (admcuda's or
        libvmaf's: :func:`read_scores`).
    path : str or os.PathLike
        Image to write; the suffix picks the format (``.png``, ``.svg``, ``.pdf``...).
    labels : sequence of str, optional
        The input's name in the legend, per result; by default the distorted file a
        result was scored from, else the score file's name (``vmaf.json``). Each entry
        adds the metric: ``vmaf.json: integer_adm2 (mean 0.9367)``.
    title : str, optional
        Figure title; by default the inputs' names (:func:`default_title`), "" for none.
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
    read = [r for r in results if isinstance(r, (str, os.PathLike))]
    name = written_input(path, read)
    if name is not None:
        raise AdmError(f"'{os.fspath(path)}' is the input '{name}'; write elsewhere")
    fig = plot_figure(results, labels=labels, title=title, metric=metric)
    try:
        fig.savefig(os.fspath(path))
    finally:
        load_pyplot().close(fig)

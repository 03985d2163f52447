"""Where CAMBI sees banding: one frame's contrast maps, as libvmaf's ``cambi`` computes
them, and a picture of them.

CAMBI scores a plane from a contrast value per sample at five scales (the encoding size,
then halved four times): where a sample lies in a flat region (the zero-derivative mask),
the largest of ``weight * p0 * p / (p0 + p)`` over the visible contrast steps of its
window's histogram. The score is the mean of each scale's top ``topk`` share of values,
weighted 16, 8, 4, 2, 1, over the window's area. The maps here are those values, from the
same kernels as the score (:mod:`admcuda.compiled.cambi`), so pooling them gives the
score ``admcuda score --feature cambi`` reports for the frame, bit for bit.

The frame-size map :attr:`BandingMaps.heat` draws every scale at once: each scale's
values, weighted as the score weights them, placed at the frame's samples by nearest
sample and added up. It shows where the banding is; its mean is not the score (the score
pools each scale's largest values only).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = ["BandingMaps", "banding_maps", "save_banding_png"]

SCALE_WEIGHTS = (16, 8, 4, 2, 1)


@dataclass(frozen=True)
class BandingMaps:
    """One plane's CAMBI contrast maps.

    Attributes
    ----------
    scales : tuple of numpy.ndarray
        Five float32 maps of contrast values: the first at the encoding size (half of it
        with ``cambi_high_res_speedup``), each next one halved (rounded up).
    score : float
        The plane's ``cambi`` score, clipped to ``cambi_max_val``, as ``admcuda score``
        reports it for the frame.
    name : str
        The score's output name (``cambi``, or ``cambi_ws_33`` and the like for options).
    window : int
        The window's side after libvmaf's adjustment to the encoding size.
    heat : numpy.ndarray
        ``(height, width)`` float64 at the plane's size: each scale's values times its
        weight over the window's area, by nearest sample, added up.
    """

    scales: tuple[np.ndarray, ...]
    score: float
    name: str
    window: int
    heat: np.ndarray


def _options(options: Any) -> Any:
    from admcuda.vmaf.cambi import CambiOptions

    if options is None:
        return CambiOptions()
    if isinstance(options, CambiOptions):
        return options
    if not isinstance(options, Mapping):
        raise AdmError(f"options must be CambiOptions or a mapping, got {type(options).__name__}")
    try:
        return CambiOptions(**dict(options))
    except (TypeError, ValueError) as exc:
        raise AdmError(f"cambi: {exc}") from None


def banding_maps(plane: np.ndarray, bitdepth: int = 8, options: Any = None) -> BandingMaps:
    """CAMBI's contrast maps of one luma plane (see the module text).

    Parameters
    ----------
    plane : numpy.ndarray
        2-D luma plane, ``uint8`` for 8 bits and ``uint16`` otherwise, at least 216
        samples on one side.
    bitdepth : {8, 10, 12, 16}, optional
    options : CambiOptions or mapping, optional
        libvmaf's ``cambi`` options (``window_size``, ``enc_width``, ``topk``, ...);
        ``full_ref`` and the source sizes have no bearing on one plane's maps.

    Raises
    ------
    AdmError
        Bad planes or options, what libvmaf refuses at that size, Numba missing.
    """
    from admcuda.extractor import check_plain_array, check_sample_range
    from admcuda.vmaf.cambi import output_names, run_for

    opts = _options(options)
    if opts.heatmaps_path is not None:
        raise AdmError("cambi: heatmaps_path is written by admcuda score; these maps are returned")
    check_plain_array(plane, "frame")
    plane = np.asarray(plane)
    if plane.ndim != 2:
        raise AdmError(f"frame must be a 2-D luma plane, got shape {plane.shape}")
    if bitdepth not in (8, 10, 12, 16):
        raise AdmError(f"bitdepth must be 8, 10, 12 or 16, got {bitdepth!r}")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if plane.dtype != want:
        raise AdmError(f"a {bitdepth}-bit frame must be {np.dtype(want).name}, got {plane.dtype}")
    check_sample_range(plane, bitdepth, "frame")
    if opts.full_ref:
        from dataclasses import replace

        opts = replace(opts, full_ref=False)
    run = run_for(opts, plane.shape[1], plane.shape[0], bitdepth)
    scales = tuple(run.maps(plane))
    window = int(run.tables.window)  # type: ignore[attr-defined]
    raw = run.pool([s.copy() for s in scales])  # pooling reorders what it pools
    score = raw if raw < opts.cambi_max_val else opts.cambi_max_val  # the C's MIN
    area = float((2 * (window >> 1) + 1) ** 2)
    height, width = plane.shape
    heat = np.zeros((height, width))
    for weight, values in zip(SCALE_WEIGHTS, scales, strict=True):
        rows = np.arange(height) * values.shape[0] // height
        cols = np.arange(width) * values.shape[1] // width
        heat += values.astype(np.float64)[np.ix_(rows, cols)] * (weight / area)
    return BandingMaps(scales, score, output_names(opts)[0], window, heat)


def save_banding_png(
    plane: np.ndarray,
    bitdepth: int,
    path: str | os.PathLike[str],
    options: Any = None,
    frame_label: str | None = None,
    *,
    background: np.ndarray | None = None,
) -> BandingMaps:
    """Compute one plane's banding maps and save :attr:`BandingMaps.heat` over the luma.

    Parameters
    ----------
    plane : numpy.ndarray
        The luma plane scored (the distorted frame, as ``cambi`` scores it).
    bitdepth : {8, 10, 12, 16}
    path : str or os.PathLike
        Image to write (its suffix gives the format).
    options : CambiOptions or mapping, optional
    frame_label : str, optional
        First title line.
    background : numpy.ndarray, optional
        Luma drawn underneath (default ``plane``).
    """
    from admcuda.report.distmap import render_distortion_png

    maps = banding_maps(plane, bitdepth, options)
    what = f"banding (CAMBI): {maps.name} {maps.score:.4f}, window {maps.window}"
    title = f"{frame_label}\n{what}" if frame_label else what
    render_distortion_png(
        plane if background is None else background, maps.heat, bitdepth, path,
        title=title, colorbar_label="contrast value, weighted by scale, per pixel",
    )  # fmt: skip
    return maps

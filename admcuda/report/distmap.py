"""Where in the picture ADM finds the detail loss: a per-pixel map for one frame pair.

ADM scores a frame as ``adm2 = NUM / DEN`` with, per scale ``s`` and orientation
``o`` (h, v, d),

- ``DEN = sum_so (D_so**(1/3) + noise)``, ``D_so = sum_p d_p``, ``d_p`` the cubed
  CSF-weighted reference detail at band position ``p`` (:mod:`reference.csf_den`);
- ``NUM = sum_so (N_so**(1/3) + noise)``, ``N_so = sum_p n_p``, ``n_p`` the cubed
  restored detail left visible above the contrast-masking threshold
  (:func:`reference.cm.cm_map` of the restored band).

The noise terms are the same in both, so ``DEN - NUM = sum_so (D**(1/3) - N**(1/3))``
and, since ``D**(1/3) - N**(1/3) = (D - N) / (D**(2/3) + (D N)**(1/3) + N**(2/3))``,

    loss_p = (d_p - n_p) / (D**(2/3) + (D N)**(1/3) + N**(2/3)) / DEN

splits ``1 - adm2`` exactly over band positions (up to libvmaf's fixed-point
rounding). That is the detail-loss map (``kind="dlm"``). A map of ``n_p`` alone would
show where visible detail *survives*, which is every textured region, distorted or
not; the difference ``d_p - n_p`` is what the distortion took away. Negative values
mark detail the distorted frame enhanced.

Likewise ``aim_p = a_p / A**(2/3) / DEN``, with ``a_p`` the cm_map of the additive
band masked by the restored one, splits ``integer_aim`` (``kind="aim"``): artefacts
the distortion added (blocking edges, ringing, noise).

A band position at scale ``s`` stands for a ``2**(s+1)`` square of frame pixels; its
value is spread evenly over them, so the frame map is a density that still sums to
``1 - adm2`` (or to ``integer_aim``), and the four scales are added up. The border
crop that libvmaf scores (about 10 % of each side, per scale) is placed at its
frame position; the rest of the frame is zero.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.extractor import check_plain_array, check_sample_range, resolve_options
from admcuda.options import AdmOptions

__all__ = [
    "KINDS",
    "DistortionMaps",
    "distortion_figure",
    "distortion_map",
    "distortion_maps",
    "load_pyplot",
    "render_distortion_png",
    "save_distortion_png",
]

KINDS: tuple[str, ...] = ("dlm", "aim")


@dataclass(frozen=True)
class DistortionMaps:
    """Per-pixel splits of ``1 - adm2`` and of ``integer_aim`` for one frame pair.

    Attributes
    ----------
    dlm : numpy.ndarray
        ``(height, width)`` float64 detail-loss density; sums to about ``1 - adm2``.
    aim : numpy.ndarray
        ``(height, width)`` float64 additive-impairment density; sums to about ``aim``.
    dlm_scales, aim_scales : tuple of numpy.ndarray
        The same per scale 0..3, each ``(height, width)``; they add up to ``dlm``/``aim``.
    adm2, aim_score : float
        ``integer_adm2`` and ``integer_aim`` of the pair, computed with the maps.

    Where ADM's denominator is zero (a reference without detail, with
    ``adm_noise_weight=0``) libvmaf scores adm2 = 1 and leaves AIM unset, which admcuda
    reports as null: ``adm2`` is then 1, ``dlm`` and ``dlm_scales`` are zero, and ``aim``,
    ``aim_scales`` and ``aim_score`` are NaN.
    """

    dlm: np.ndarray
    aim: np.ndarray
    dlm_scales: tuple[np.ndarray, ...]
    aim_scales: tuple[np.ndarray, ...]
    adm2: float
    aim_score: float

    def get(self, kind: str) -> np.ndarray:
        """``dlm`` or ``aim`` by name."""
        if kind not in KINDS:
            raise AdmError(f"unknown map kind {kind!r}; use one of {', '.join(KINDS)}")
        return self.dlm if kind == "dlm" else self.aim


def _one_orientation(bands: Any, keep: str) -> Any:
    """``bands`` with every detail band but ``keep`` zeroed.

    :func:`reference.cm.cm_map` sums the three orientations, but the cube root that
    follows is per orientation. A zero band contributes nothing there (its visible
    part ``max(0 - thr, 0)`` is 0 at every scale), so one orientation's map is the
    cm_map of the bands with the other two zeroed.
    """
    from admcuda.reference import Bands

    parts = {name: getattr(bands, name) for name in ("h", "v", "d")}
    return Bands(
        None, *(parts[n] if n == keep else np.zeros_like(parts[n]) for n in ("v", "h", "d"))
    )


def _den_map(
    ref_band: np.ndarray, crop: tuple[slice, slice], scale: int, factor: float
) -> np.ndarray:
    """``d_p``: the cubed CSF-weighted reference detail, scaled as :mod:`csf_den` sums it."""
    from admcuda.reference import constants as C

    if scale == 0:
        exponent = C.DEN0_FINAL_EXP
    else:
        exponent = C.DEN_S123_SQ_SHIFT[scale - 1] + C.DEN_S123_FINAL_EXP[scale - 1]
    x = np.abs(ref_band[crop].astype(np.float64))
    return x**3 / 2.0**exponent * float(factor) ** 3


def _split(parts: Sequence[np.ndarray], total_minus: Sequence[np.ndarray] | None) -> np.ndarray:
    """Per-position share of ``sum_o (T_o**(1/3) - M_o**(1/3))`` for positive maps.

    ``parts`` are the ``T`` maps, ``total_minus`` the ``M`` maps (None: M = 0).
    """
    out = np.zeros_like(parts[0])
    for o, t_map in enumerate(parts):
        m_map = np.zeros_like(t_map) if total_minus is None else total_minus[o]
        t, m = float(t_map.sum()), float(m_map.sum())
        weight = t ** (2 / 3) + (t * m) ** (1 / 3) + m ** (2 / 3)
        if weight > 0:
            out += (t_map - m_map) / weight
    return out


def _upsample(
    band_map: np.ndarray, crop: tuple[slice, slice], scale: int, shape: tuple[int, int]
) -> np.ndarray:
    """Spread a band-crop map over the frame: each position fills a ``2**(s+1)`` square,
    its value divided by the square's area so that sums are kept.

    Bands are ``ceil(n / 2**(s+1))`` long, so the last square of a row or column may
    hang over the frame's edge; its value goes to the part inside (every square
    starts inside the frame).
    """
    f = 1 << (scale + 1)
    height, width = shape
    rows_in = np.clip(height - np.arange(crop[0].start, crop[0].stop) * f, 0, f)
    cols_in = np.clip(width - np.arange(crop[1].start, crop[1].stop) * f, 0, f)
    area = np.outer(rows_in, cols_in).astype(np.float64)
    density = np.divide(band_map, area, out=np.zeros_like(band_map), where=area > 0)
    big = np.repeat(np.repeat(density, f, axis=0), f, axis=1)
    top, left = crop[0].start * f, crop[1].start * f
    rows = max(min(big.shape[0], height - top), 0)
    cols = max(min(big.shape[1], width - left), 0)
    out = np.zeros(shape)
    out[top : top + rows, left : left + cols] = big[:rows, :cols]
    return out


def distortion_maps(
    ref: np.ndarray,
    dis: np.ndarray,
    bitdepth: int = 8,
    options: AdmOptions | Mapping[str, Any] | None = None,
) -> DistortionMaps:
    """Detail-loss and additive-impairment maps of one frame pair (see the module text).

    Parameters
    ----------
    ref, dis : numpy.ndarray
        2-D luma planes of one shape, ``uint8`` for 8 bits and ``uint16`` otherwise.
    bitdepth : {8, 10, 12, 16}, optional
    options : AdmOptions or mapping, optional
        ADM options, as for scoring.

    Returns
    -------
    DistortionMaps
        Zero ``dlm`` and NaN ``aim`` where ADM's denominator is zero (see
        :class:`DistortionMaps`).

    Raises
    ------
    AdmError
        On bad options or planes.
    """
    from admcuda.reference import constants as C
    from admcuda.reference.adm import check_frame, stages
    from admcuda.reference.cm import cm_map
    from admcuda.reference.csf import csf_factors
    from admcuda.reference.csf_den import csf_den

    opts = resolve_options(options)
    check_plain_array(ref, "reference frame")
    check_plain_array(dis, "distorted frame")
    ref, dis = np.asarray(ref), np.asarray(dis)
    try:
        check_frame(ref, dis, bitdepth)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    check_sample_range(ref, bitdepth, "reference frame")
    check_sample_range(dis, bitdepth, "distorted frame")
    shape = ref.shape

    # reference.adm's stage chain, keeping per-position maps.
    dlm_bands: list[tuple[np.ndarray, tuple[slice, slice]] | None] = []
    aim_bands: list[tuple[np.ndarray, tuple[slice, slice]] | None] = []
    num_total = den_total = aim_total = 0.0
    for st in stages(ref, dis, bitdepth, opts):
        scale, rf = st.scale, st.rfactor
        if st.r is None:
            den_total += float(C.SKIP_SCALE0_DEN)
            dlm_bands.append(None)
            aim_bands.append(None)
            continue
        f1, f2 = csf_factors(scale, opts)
        num_maps, aim_maps, den_maps = [], [], []
        crop: tuple[slice, slice] = (slice(0, 0), slice(0, 0))
        for orient, factor in zip(("h", "v", "d"), (f1, f1, f2), strict=True):
            n_map, crop = cm_map(_one_orientation(st.r, orient), st.wa, st.fa, scale, rf)
            num_maps.append(n_map)
            if st.wr is not None:
                aim_maps.append(cm_map(_one_orientation(st.a, orient), st.wr, st.fr, scale, rf)[0])
            den_maps.append(_den_map(getattr(st.ref, orient), crop, scale, factor))
        den_total += float(csf_den(st.ref, scale, opts))
        dlm_bands.append((_split(den_maps, num_maps), crop))
        aim_bands.append((_split(aim_maps, None), crop) if aim_maps else None)
        num_total += sum(float(m.sum()) ** (1 / 3) for m in num_maps)
        aim_total += sum(float(m.sum()) ** (1 / 3) for m in aim_maps)

    if den_total < C.NUMDEN_LIMIT * (shape[0] * shape[1]) / (1920.0 * 1080.0):
        # A denominator libvmaf takes as zero (a reference without detail and
        # adm_noise_weight=0): it scores adm2 = 1 and leaves AIM unset, which admcuda
        # score reports as null (reference.adm.finish). 1 - adm2 = 0 is spread over no
        # pixel, and there is no integer_aim to split.
        zero = tuple(np.zeros(shape) for _ in dlm_bands)
        unset = tuple(np.full(shape, np.nan) for _ in aim_bands)
        return DistortionMaps(
            dlm=np.zeros(shape), aim=np.full(shape, np.nan), dlm_scales=zero,
            aim_scales=unset, adm2=1.0, aim_score=math.nan,
        )  # fmt: skip

    def frame_maps(bands: list[Any]) -> tuple[np.ndarray, ...]:
        return tuple(
            np.zeros(shape) if item is None else _upsample(item[0] / den_total, item[1], s, shape)
            for s, item in enumerate(bands)
        )

    dlm_scales = frame_maps(dlm_bands)
    aim_scales = frame_maps(aim_bands)
    loss = sum(float(m.sum()) for m in dlm_scales)
    return DistortionMaps(
        dlm=np.sum(dlm_scales, axis=0),
        aim=np.sum(aim_scales, axis=0),
        dlm_scales=dlm_scales,
        aim_scales=aim_scales,
        adm2=1.0 - loss,
        aim_score=aim_total / den_total,
    )


def distortion_map(
    ref: np.ndarray,
    dis: np.ndarray,
    bitdepth: int = 8,
    options: AdmOptions | Mapping[str, Any] | None = None,
    *,
    kind: str = "dlm",
) -> np.ndarray:
    """Per-pixel share of ``1 - adm2`` (``kind="dlm"``) or of ``integer_aim`` (``"aim"``).

    Parameters
    ----------
    ref, dis : numpy.ndarray
        2-D luma planes, ``uint8`` for 8 bits and ``uint16`` otherwise.
    bitdepth : {8, 10, 12, 16}, optional
    options : AdmOptions or mapping, optional
    kind : {"dlm", "aim"}, optional

    Returns
    -------
    numpy.ndarray
        ``(height, width)`` float64; the sum over the frame approximates ``1 - adm2``
        (or ``integer_aim``); zero outside libvmaf's scored crop. All NaN for ``"aim"``
        where ADM's denominator is zero, as ``integer_aim`` is (see :class:`DistortionMaps`).
    """
    if kind not in KINDS:
        raise AdmError(f"unknown map kind {kind!r}; use one of {', '.join(KINDS)}")
    return distortion_maps(ref, dis, bitdepth, options).get(kind)


# ---- rendering ------------------------------------------------------------------------


def load_pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise AdmError('drawing PNGs needs matplotlib: pip install ".[plot]"') from None
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def _power_of_ten(vmax: float) -> int:
    """The exponent the colour bar's numbers are given in (``x10^e``): that of ``vmax``,
    so the top tick reads between 1 and 10; 0 where plain numbers read well."""
    if not 0.01 <= vmax < 1000:
        return math.floor(math.log10(vmax))
    return 0


def distortion_figure(
    background: np.ndarray,
    heat: np.ndarray,
    bitdepth: int,
    *,
    title: str = "",
    colorbar_label: str = "",
) -> Any:
    """The figure :func:`render_distortion_png` saves, as a matplotlib ``Figure``; the
    caller closes it.

    The colour bar's numbers are in units of ``10**e`` (``colorbar_label`` is followed by
    ``(×10⁻⁶)``, say). Where values lie above the bar's top (the 99.5th percentile of the
    positive values, so that a few hot pixels do not wash out the rest), the bar ends in
    an arrow and a note under the picture gives their share of the frame's pixels and
    the largest value.
    """
    plt = load_pyplot()
    from matplotlib import colors, ticker

    height, width = heat.shape
    positive = heat[heat > 0]
    vmax = float(np.percentile(positive, 99.5)) if positive.size else 1.0
    vmax = vmax if vmax > 0 else 1.0
    norm = colors.Normalize(vmin=0.0, vmax=vmax, clip=True)
    cmap = plt.get_cmap("inferno")
    level = norm(np.clip(heat, 0.0, None))
    rgba = cmap(level)
    rgba[..., 3] = 0.85 * np.sqrt(np.asarray(level))
    exponent = _power_of_ten(vmax)
    unit = 10.0**exponent
    above = int(np.count_nonzero(heat > vmax))

    # About 900 px wide for small frames, 1:1 for large ones.
    scale = max(1.0, 900.0 / width)
    dpi = 100
    fig_w = width * scale / dpi + 1.6
    fig_h = height * scale / dpi + 0.9
    fig, ax = plt.subplots(figsize=(fig_w, fig_h), dpi=dpi)
    try:
        ax.imshow(
            background, cmap="gray", vmin=0, vmax=(1 << bitdepth) - 1, interpolation="nearest"
        )
        ax.imshow(rgba, interpolation="nearest")
        ax.set_axis_off()
        if title:
            ax.set_title(title, fontsize=10)
        mappable = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
        bar = fig.colorbar(
            mappable, ax=ax, fraction=0.046, pad=0.02, extend="max" if above else "neither"
        )
        bar.ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v / unit:g}"))
        power = f"\u00d710{str(exponent).translate(_SUPERSCRIPT)}" if exponent else ""
        if exponent:
            colorbar_label = f"{colorbar_label} ({power})" if colorbar_label else f"({power})"
        if colorbar_label:
            bar.set_label(colorbar_label, fontsize=9)
        bar.ax.tick_params(labelsize=8)
        if above:
            share = 100.0 * above / heat.size
            top, largest = f"{vmax / unit:.3g}{power}", f"{float(heat.max()) / unit:.3g}{power}"
            ax.text(
                0.5, -0.01,
                f"colours saturate: {share:.2g} % of pixels lie above the scale's top "
                f"({top}; the largest is {largest})",
                transform=ax.transAxes, ha="center", va="top", fontsize=8,
            )  # fmt: skip
    except BaseException:
        plt.close(fig)
        raise
    return fig


def render_distortion_png(
    background: np.ndarray,
    heat: np.ndarray,
    bitdepth: int,
    path: str | os.PathLike[str],
    *,
    title: str = "",
    colorbar_label: str = "",
) -> None:
    """Draw ``heat`` over a grey ``background`` luma and save a PNG.

    Values at or below zero are fully transparent; opacity and colour grow with the
    value up to the 99.5th percentile of the positive values, where the colour scale
    saturates (the figure says how many pixels do: :func:`distortion_figure`).
    """
    fig = distortion_figure(background, heat, bitdepth, title=title, colorbar_label=colorbar_label)
    try:
        fig.savefig(os.fspath(path), dpi=fig.dpi, bbox_inches="tight")
    finally:
        load_pyplot().close(fig)


def save_distortion_png(
    ref: np.ndarray,
    dis: np.ndarray,
    bitdepth: int,
    path: str | os.PathLike[str],
    options: AdmOptions | Mapping[str, Any] | None = None,
    frame_label: str | None = None,
    *,
    kind: str = "dlm",
    background: str = "dis",
) -> DistortionMaps:
    """Compute the maps of one frame pair and save one as a heat map over the luma.

    Parameters
    ----------
    ref, dis : numpy.ndarray
        2-D luma planes.
    bitdepth : {8, 10, 12, 16}
    path : str or os.PathLike
        PNG to write.
    options : AdmOptions or mapping, optional
    frame_label : str, optional
        First title line, e.g. ``"dis.yuv frame 3"``.
    kind : {"dlm", "aim"}, optional
        Detail loss (default) or additive impairment.
    background : {"dis", "ref"}, optional
        Which luma to draw underneath (default the distorted one).

    Returns
    -------
    DistortionMaps
        The maps drawn from.

    Raises
    ------
    AdmError
        Bad input or options, matplotlib missing, or ``kind="aim"`` where
        ``integer_aim`` is null (ADM's denominator is zero: see :class:`DistortionMaps`).
    """
    if background not in ("dis", "ref"):
        raise AdmError(f"background must be 'dis' or 'ref', got {background!r}")
    maps = distortion_maps(ref, dis, bitdepth, options)
    if kind == "aim" and math.isnan(maps.aim_score):
        raise AdmError(
            "no aim map for this frame pair: ADM's denominator is 0 (a reference without "
            "detail, with adm_noise_weight=0), so integer_aim is null, as admcuda score "
            "reports it; its dlm map is zero (adm2 = 1)"
        )
    heat = maps.get(kind)
    total = float(heat.sum())
    if kind == "dlm":
        what = f"detail loss: adm2 {maps.adm2:.4f}, map sums to 1 - adm2 = {total:.4f}"
        label = "share of the frame's 1 \u2212 adm2, per pixel"
    else:
        what = f"additive impairment: aim {maps.aim_score:.4f}, map sums to {total:.4f}"
        label = "share of the frame's integer_aim, per pixel"
    title = f"{frame_label}\n{what}" if frame_label else what
    render_distortion_png(
        dis if background == "dis" else ref, heat, bitdepth, path,
        title=title, colorbar_label=label,
    )  # fmt: skip
    return maps

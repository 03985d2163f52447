"""libvmaf's ``float_vif`` extractor in a run: its options, its names and one frame pair's
values.

``--feature float_vif`` writes each frame's ``vif_scale0`` .. ``vif_scale3`` (with
``debug`` also ``vif``, ``vif_num``, ``vif_den`` and each scale's numerator and
denominator): the visual information fidelity of the distorted luma against the
reference's at four scales, in float32. It reads the luma planes alone, so a run computes
it on the host from the planes it reads, whatever the backend and the input, with NumPy
(no Numba needed). :func:`admcuda.reference.float_vif.compute_float_vif` is the
specification; :func:`float_vif_frame` computes the same float32 steps a block of rows at
a time (buffers that stay in cache), and from scale 1 on filters only the rows and columns
that the decimation keeps: each sample's sums and each row's running sums are the
reference's, in its order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.reference import float_vif as _fv
from admcuda.reference.float_vif import FloatVifOptions

__all__ = [
    "FLOAT_VIF_KIND",
    "TABLE",
    "FloatVifOptions",
    "check_size",
    "float_vif_frame",
    "names",
    "output_names",
    "parse_options",
    "vif_sums",
]

FLOAT_VIF_KIND = "float_vif"
_BLOCK_SAMPLES = 1 << 15  # a block's float32 rows (128 KB a buffer) stay in cache

_TYPES = {bool: "bool", float: "double", str: "string"}

TABLE: Mapping[str, tuple[str, str | None, Any, Any]] = {
    o.name: (_TYPES[o.kind], o.alias, None if o.kind is not float else o.lo,
             None if o.kind is not float else o.hi)
    for o in _fv.OPTION_TABLE
}  # fmt: skip
"""libvmaf 3.2.0's ``float_vif`` option table: option -> (type, alias, min, max)."""


def parse_options(
    where: str, given: Mapping[str, str], parse_value: Callable[..., Any]
) -> FloatVifOptions:
    """:class:`FloatVifOptions` from ``--feature float_vif=KEY=VALUE:...`` texts (a
    refused value is one line naming ``where``)."""
    values = {
        key: text if TABLE[key][0] == "string" else parse_value(where, key, TABLE[key], text)
        for key, text in given.items()
    }
    try:
        return FloatVifOptions(**values)
    except ValueError as exc:
        raise AdmError(f"{where}: {exc}") from None


def names(options: FloatVifOptions) -> dict[str, str]:
    """Provided feature -> printed name (:func:`admcuda.reference.float_vif.output_names`)."""
    return _fv.output_names(options)


def output_names(options: FloatVifOptions) -> tuple[str, ...]:
    """The printed names ``float_vif`` writes per frame, in its order: the four scale
    scores, then with ``debug`` its debug outputs."""
    printed = names(options)
    provided = _fv.PROVIDED_FEATURES if options.debug else _fv.SCORE_FEATURES
    return tuple(printed[f] for f in provided)


def check_size(options: FloatVifOptions, width: int, height: int) -> None:
    """Refuse, in one line, a size libvmaf's ``float_vif`` refuses or reads outside its
    pictures at (:func:`admcuda.reference.float_vif.check_size`: under 16 samples a side
    at the default kernel scale)."""
    try:
        _fv.check_size(width, height, options)
    except ValueError as exc:
        raise AdmError(f"{exc}; not scored") from None


def _block_rows(width: int, height: int) -> int:
    return max(1, min(height, _BLOCK_SAMPLES // max(width, 1)))


def _vertical(taps: np.ndarray, src: np.ndarray, first: int, n: int, step: int,
              out: np.ndarray, product: np.ndarray) -> None:  # fmt: skip
    """``out[:, r:r+w]`` = the vertical pass at output rows ``first, first + step, ...``
    (``n`` of them) over ``src``, whose row ``i + r`` is the picture's mirrored row ``i``;
    then the row's mirrored columns around it."""
    r = len(taps) // 2
    w = src.shape[1]
    body = out[:, r : r + w]
    body.fill(0.0)
    for fi, tap in enumerate(taps):
        start = first + fi
        np.multiply(tap, src[start : start + step * (n - 1) + 1 : step], out=product)
        body += product
    # the horizontal pass's mirror: column -c reads c, column w - 1 + c reads w - 1 - c
    out[:, :r] = out[:, 2 * r : r : -1]
    out[:, r + w :] = out[:, w - 2 + r : w - 2 : -1]


def _horizontal(taps: np.ndarray, tmp: np.ndarray, w: int, step: int,
                out: np.ndarray, product: np.ndarray) -> None:  # fmt: skip
    """``out`` = the horizontal pass over ``tmp`` (its columns mirrored by
    :func:`_vertical`) at columns ``0, step, ...``."""
    n = out.shape[1]
    out.fill(0.0)
    for fj, tap in enumerate(taps):
        np.multiply(tap, tmp[:, fj : fj + step * (n - 1) + 1 : step], out=product)
        out += product


def _padded_rows(pic: np.ndarray, r: int) -> np.ndarray:
    return pic[_fv.mirrored_indices(pic.shape[0], r)]


def _check_side(n: int, r: int) -> None:
    _fv.mirrored_indices(n, r)


def _decimated(taps: np.ndarray, pic: np.ndarray) -> np.ndarray:
    """``vif_filter1d_s`` then ``vif_dec2_s``: the filtered picture at its even rows and
    columns alone, each sample the sum the whole filter gives it."""
    h, w = pic.shape
    r = len(taps) // 2
    _check_side(w, r)
    src = _padded_rows(pic, r)
    oh, ow = h // 2, w // 2
    out = np.empty((oh, ow), np.float32)
    rows = _block_rows(w, oh)
    tmp = np.empty((rows, w + 2 * r), np.float32)
    vprod = np.empty((rows, w), np.float32)
    hprod = np.empty((rows, ow), np.float32)
    for top in range(0, oh, rows):
        n = min(rows, oh - top)
        _vertical(taps, src, 2 * top, n, 2, tmp[:n], vprod[:n])
        _horizontal(taps, tmp[:n], w, 2, out[top : top + n], hprod[:n])
    return out


def _scale_sums(
    taps: np.ndarray, ref: np.ndarray, dis: np.ndarray, options: FloatVifOptions
) -> tuple[np.float32, np.float32]:
    """One scale's ``vif_statistic_s`` sums: the five filtered pictures and their terms a
    block of rows at a time, each row's float32 running sums kept, the rows' added last."""
    h, w = ref.shape
    r = len(taps) // 2
    _check_side(w, r)
    a, b = _padded_rows(ref, r), _padded_rows(dis, r)
    sources = (a, b, a * a, b * b, a * b)
    rows = _block_rows(w, h)
    tmp = np.empty((rows, w + 2 * r), np.float32)
    vprod = np.empty((rows, w), np.float32)
    hprod = np.empty((rows, w), np.float32)
    filtered = np.empty((5, rows, w), np.float32)
    row_sums = np.empty((2, h), np.float32)
    f0 = np.float32(0.0)
    for top in range(0, h, rows):
        n = min(rows, h - top)
        for k, src in enumerate(sources):
            _vertical(taps, src, top, n, 1, tmp[:n], vprod[:n])
            _horizontal(taps, tmp[:n], w, 1, filtered[k, :n], hprod[:n])
        mu1, mu2, xx, yy, xy = filtered[:, :n]
        terms = _fv.statistic_terms(
            mu1, mu2, xx, yy, xy, options.vif_enhn_gain_limit, options.vif_sigma_nsq
        )
        for k, values in enumerate(terms):
            running = np.add.accumulate(values, axis=1, dtype=np.float32)
            row_sums[k, top : top + n] = running[:, -1] + f0
    totals = np.add.accumulate(row_sums, axis=1, dtype=np.float32)[:, -1] + f0
    return np.float32(totals[0]), np.float32(totals[1])


def vif_sums(
    ref: np.ndarray, dis: np.ndarray, bitdepth: int, options: FloatVifOptions
) -> list[tuple[float, float]]:
    """``compute_vif``'s per-scale (numerator, denominator) of two luma planes, the doubles
    of :func:`admcuda.reference.float_vif.vif_sums` over the prescaled pictures."""
    h, w = ref.shape
    sw, sh = _fv.scaled_size(w, h, options.vif_prescale)
    method = options.vif_prescale_method
    pics = [_fv.scale_frame(_fv.picture(p, bitdepth), sw, sh, method) for p in (ref, dis)]
    a, b = pics
    ks = float(np.float32(options.vif_kernelscale))
    sums = []
    for scale in range(1 if options.vif_skip_scale0 else 0, _fv.NUM_SCALES):
        taps = _fv.filter_taps(scale, ks)
        if scale > 0:
            a, b = _decimated(taps, a), _decimated(taps, b)
        num, den = _scale_sums(taps, a, b, options)
        sums.append((float(num), float(den)))
    return sums


def float_vif_frame(ex: Any, ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> dict[str, float]:
    """One frame pair's outputs of a ``float_vif`` extractor (``ex``, an
    :class:`admcuda.vmaf.plan.Extractor`) by printed name, from the luma planes. NumPy
    releases the GIL for the arithmetic, so frames score side by side on threads."""
    if ref.shape != dis.shape:
        raise AdmError(f"{FLOAT_VIF_KIND}: planes of {ref.shape} and {dis.shape}")
    options: FloatVifOptions = ex.options
    h, w = ref.shape
    check_size(options, w, h)
    try:
        values = _fv.outputs(vif_sums(ref, dis, bitdepth, options), options)
    except ValueError as exc:
        raise AdmError(str(exc)) from None
    printed = ex.names
    return {printed[f]: v for f, v in values.items()}

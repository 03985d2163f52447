"""libvmaf's ``psnr`` extractor in a run: per frame from the planes read, and at the clip's
end (``enable_apsnr``'s aggregate metrics).

PSNR is computed on the host from the planes the run reads, whatever the backend: its
sums are cheap beside ADM and VIF, and so every backend gives the same doubles.
:func:`psnr_frame` scores one frame pair (for :func:`admcuda.vmaf.compute.score_pair`);
:class:`HostPsnr` scores a batch of the pipeline's slots, luma and, where the plan wants
them, chroma; :func:`aggregate_metrics` gives the clip's values from the per-frame squared
error sums.

The squared-error sums are the host's cost (7 to 10 ms a 1080p 8-bit 4:2:0 frame on
one thread in the reference's NumPy, 4 to 5 ms at 10 bits): :func:`plane_sse` takes the
same integers in 1.8 to 2.4 ms (2 ms at 10 bits), a block of rows at a time through
small buffers that stay in cache.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import plane_shapes
from admcuda.reference import psnr as _psnr
from admcuda.vmaf.plan import Extractor, FeaturePlan, psnr_sse_keys

__all__ = ["HostPsnr", "aggregate_metrics", "plane_sse", "psnr_frame"]

ROW_WRAP_WIDTH = 66051
"""The widest 8-bit row whose ``uint32_t`` sum of squares cannot wrap
(``66051 * 255**2 < 2**32 <= 66052 * 255**2``): wider rows take the reference's path."""

_BLOCK_SAMPLES = 1 << 17  # a block's squares sum below 2**49: exact in a double
_U64 = (1 << 64) - 1
_buffers = threading.local()


def _scratch(rows: int, cols: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """This thread's block buffers: two of ``dtype`` and one of float64, ``(rows, cols)``."""
    key = (rows, cols, dtype.str)
    cache: dict[Any, Any] = getattr(_buffers, "cache", None) or {}
    _buffers.cache = cache
    if key not in cache:
        if len(cache) > 16:
            cache.clear()
        cache[key] = (np.empty((rows, cols), dtype), np.empty((rows, cols), dtype),
                      np.empty((rows, cols), np.float64))  # fmt: skip
    return cache[key]  # type: ignore[no-any-return]


def plane_sse(ref: np.ndarray, dis: np.ndarray, bitdepth: int) -> int:
    """:func:`admcuda.reference.psnr.plane_sse`, the same integer, fast.

    Rows are taken a block at a time: ``|ref - dis|`` in the samples' own type (the larger
    minus the smaller, exact), then as float64 the block's dot product with itself. Each
    square is an integer below ``2**32`` and a block holds at most ``2**17`` samples, so
    every partial sum, in whatever order BLAS adds, is an integer below ``2**49``: exact
    in a double. The blocks' sums are added as Python ints, wrapped as libvmaf's
    ``uint64_t``. An 8-bit row wider than :data:`ROW_WRAP_WIDTH`, whose ``uint32_t`` sum
    libvmaf lets wrap, a row wider than a block, and planes of other dtypes or shapes take
    the reference's path.
    """
    dtype = ref.dtype
    if (
        ref.shape != dis.shape
        or ref.ndim != 2
        or dtype != dis.dtype
        or dtype not in (np.uint8, np.uint16)
        or ref.shape[1] > _BLOCK_SAMPLES
        or (bitdepth == 8 and (dtype != np.uint8 or ref.shape[1] > ROW_WRAP_WIDTH))
        or not ref.size
    ):
        return _psnr.plane_sse(ref, dis, bitdepth)
    height, width = ref.shape
    rows = max(1, min(height, _BLOCK_SAMPLES // width))
    high, low, wide = _scratch(rows, width, dtype)
    total = 0
    for top in range(0, height, rows):
        n = min(rows, height - top)
        a, b = ref[top : top + n], dis[top : top + n]
        hi, lo, f = high[:n], low[:n], wide[:n]
        np.maximum(a, b, out=hi)
        np.minimum(a, b, out=lo)
        np.subtract(hi, lo, out=hi)
        np.copyto(f, hi)
        flat = f.reshape(-1)
        total += int(np.dot(flat, flat))
    return total & _U64


def _format_of(luma: tuple[int, ...], chroma: tuple[int, ...] | None) -> str:
    """The chroma layout of planes of these shapes (what ``min_sse``'s cap depends on)."""
    if chroma is None:
        return "400"
    if chroma[1] == luma[1]:
        return "444"
    return "422" if chroma[0] == luma[0] else "420"


def psnr_frame(
    ex: Extractor,
    ref: Sequence[np.ndarray],
    dis: Sequence[np.ndarray],
    bitdepth: int,
) -> dict[str, Any]:
    """One frame pair's PSNR outputs (floats) and, with ``enable_apsnr``, its per-plane
    squared-error sums (ints, under :func:`admcuda.vmaf.plan.psnr_sse_keys`).

    ``ref`` and ``dis`` are the planes: Y alone, or Y, Cb and Cr as a file holds them
    (an odd side's chroma rounded up) or as libvmaf's pictures do (rounded down); either
    way the rounded-down part is scored. Chroma is needed where the extractor scores it
    (its ``enable_chroma``; 4:0:0 plans have it off)."""
    options: _psnr.PsnrOptions = ex.options  # type: ignore[assignment]
    planes = 3 if options.enable_chroma else 1
    if len(ref) < planes or len(dis) < planes:
        raise AdmError(
            "psnr scores chroma: give the Y, Cb and Cr planes of both frames (or "
            "psnr=enable_chroma=false)"
        )
    for r, d in zip(ref[:planes], dis[:planes], strict=True):
        if r.shape != d.shape or r.dtype != d.dtype:
            raise AdmError(f"psnr: planes of {r.shape} {r.dtype} and {d.shape} {d.dtype}")
    luma = ref[0].shape
    layout = _format_of(luma, ref[1].shape if len(ref) > 1 else None)
    shapes = _psnr.scored_shapes(luma[1], luma[0], layout)
    top = _psnr.peak(bitdepth, options.reduced_hbd_peak)
    caps = _psnr.psnr_max(options, layout, bitdepth, luma[1], luma[0])
    sse = [
        plane_sse(ref[p][: shapes[p][0], : shapes[p][1]],
                  dis[p][: shapes[p][0], : shapes[p][1]], bitdepth)
        for p in range(planes)
    ]  # fmt: skip
    out: dict[str, Any] = {}
    for p in range(planes):
        n = shapes[p][0] * shapes[p][1]
        value, mse = _psnr.frame_scores(sse[p], n, bitdepth, top, caps[p])
        out[_psnr.PSNR_NAMES[p]] = value
        if options.enable_mse:
            out[_psnr.MSE_NAMES[p]] = mse
    keys = psnr_sse_keys(ex)
    if keys:
        out.update(zip(keys, sse, strict=True))
    return out


def aggregate_metrics(
    plan: FeaturePlan,
    frames: Sequence[Mapping[str, Any]],
    *,
    bitdepth: int,
    plane_pixels: Sequence[int],
) -> dict[str, float]:
    """libvmaf's ``aggregate_metrics`` of a clip: each PSNR extractor's ``apsnr_y``,
    ``apsnr_cb``, ``apsnr_cr`` with ``enable_apsnr`` (none without).

    Parameters
    ----------
    plan : FeaturePlan
        The run's plan (for 4:0:0 inputs, its :meth:`FeaturePlan.for_pixel_format`).
    frames : sequence of mapping
        :func:`admcuda.vmaf.compute.score_pair`'s result for every frame read (those
        ``--subsample`` passes over too): their squared-error sums.
    bitdepth : int
    plane_pixels : sequence of int
        Each plane's sample count (Y, and Cb and Cr where scored).

    Returns
    -------
    dict of str to float
        Name -> value; -inf for a plane not scored, as libvmaf computes it.
    """
    out: dict[str, float] = {}
    for ex in plan.host_extractors:
        if not ex.aggregate_outputs:
            continue
        options: _psnr.PsnrOptions = ex.options  # type: ignore[assignment]
        keys = psnr_sse_keys(ex)
        top = _psnr.peak(bitdepth, options.reduced_hbd_peak)
        for p, name in enumerate(ex.aggregate_outputs):
            if p < len(keys):
                try:
                    total = _psnr.total_sse([f[keys[p]] for f in frames])
                except KeyError:
                    raise AdmError(
                        f"psnr: a frame has no {keys[p]}; give aggregate_metrics score_pair's "
                        "result for every frame read"
                    ) from None
                count = len(frames) * plane_pixels[p]
            else:
                total = count = 0
            out[name] = _psnr.apsnr(total, count, top)
    return out


class HostPsnr:
    """The plan's PSNR over the pipeline's batches, on the host.

    Parameters
    ----------
    plan : FeaturePlan
        The run's plan, for its inputs' layout (:meth:`FeaturePlan.for_pixel_format`).
    width, height : int
    pixel_format : {"420", "422", "444", "400"}
    bitdepth : int

    Attributes
    ----------
    chroma_size : int
        Samples of both chroma planes of a frame the pipeline reads beside the luma plane;
        0 where no extractor scores chroma.
    """

    def __init__(
        self, plan: FeaturePlan, width: int, height: int, pixel_format: str, bitdepth: int
    ) -> None:
        self.extractors = plan.host_extractors
        self.bitdepth = bitdepth
        self.shapes = plane_shapes(width, height, pixel_format)
        wants = plan.chroma_wanted(pixel_format) and len(self.shapes) == 3
        self.chroma_size = 2 * self.shapes[1][0] * self.shapes[1][1] if wants else 0

    def planes(self, luma: np.ndarray, chroma: np.ndarray | None, k: int) -> list[np.ndarray]:
        """Frame ``k``'s planes from a slot's luma ``(frames, h, w)`` and flat chroma
        ``(frames, chroma_size)``."""
        if chroma is None or not self.chroma_size:
            return [luma[k]]
        ch, cw = self.shapes[1]
        cb = chroma[k, : ch * cw].reshape(ch, cw)
        cr = chroma[k, ch * cw :].reshape(ch, cw)
        return [luma[k], cb, cr]

    def compute(
        self,
        ref: np.ndarray,
        ref_chroma: np.ndarray | None,
        dis: Sequence[np.ndarray],
        dis_chroma: Sequence[np.ndarray | None],
        frames: int,
    ) -> list[dict[str, np.ndarray]]:
        """Per distorted input, each PSNR output over the first ``frames`` frames (float64)
        and the squared-error sums (uint64)."""
        if not isinstance(ref, np.ndarray):
            raise AdmError("psnr reads frames on the host; decode with ffmpeg (--decoder ffmpeg)")
        results = []
        for d, dc in zip(dis, dis_chroma, strict=True):
            rows = []
            for k in range(frames):
                a, b = self.planes(ref, ref_chroma, k), self.planes(d, dc, k)
                row: dict[str, Any] = {}
                for ex in self.extractors:
                    row.update(psnr_frame(ex, a, b, self.bitdepth))
                rows.append(row)
            names = list(rows[0]) if rows else []
            results.append(
                {
                    n: np.array(
                        [r[n] for r in rows],
                        dtype=np.uint64 if isinstance(rows[0][n], int) else np.float64,
                    )
                    for n in names
                }
            )
        return results

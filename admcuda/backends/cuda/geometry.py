"""Per-scale geometry of the CUDA backend: band shapes, crops, the fixed-point
parameter block the kernels read, and :func:`finish_frame`, the reference's own float
finish of one frame's integer accumulators."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from admcuda import kernel_loader as K
from admcuda.options import AdmOptions
from admcuda.reference import constants as C
from admcuda.reference.adm import ScaleResult
from admcuda.reference.adm import finish as adm_finish
from admcuda.reference.cm import cm_finish, cm_shifts
from admcuda.reference.cnum import border, round_pow2_u32
from admcuda.reference.csf import rfactors
from admcuda.reference.csf_den import den_finish, den_shifts

__all__ = ["ScaleGeometry", "device_params", "finish_frame", "scale_geometries", "scale_geometry"]


@dataclass(frozen=True)
class ScaleGeometry:
    """Shapes, crops and fixed-point constants of one DWT level.

    Attributes
    ----------
    scale : int
        0..3.
    src_shape : (int, int)
        (h, w) of this level's DWT input (the frame at scale 0).
    shape : (int, int)
        (hh, ww) of each band.
    crop : (int, int, int, int)
        (top, bottom, left, right) scored by the denominator and masking stages.
    region : (int, int, int, int)
        (row0, row1, col0, col1) where the CSF stage runs: libvmaf's decouple/CSF
        region (``border(n, tap=True)``), which holds every 3x3 masking tap of the crop.
    rfactor : (int, int, int)
        Fixed-point CSF factors (h, v, d), from :func:`reference.csf.rfactors`.
    params : tuple of int
        The int64 parameter block of the kernels, laid out by ``_kernels.PARAM_SLOTS``.
    den_exp : int
        Final exponent of the denominator accumulators.
    cm_exps : (int, int, int)
        Final exponents of the masking accumulators (h, v, d).
    """

    scale: int
    src_shape: tuple[int, int]
    shape: tuple[int, int]
    crop: tuple[int, int, int, int]
    region: tuple[int, int, int, int]
    rfactor: tuple[int, int, int]
    params: tuple[int, ...]
    den_exp: int
    cm_exps: tuple[int, int, int]

    @property
    def band_dtype(self) -> np.dtype:
        return np.dtype(np.int16 if self.scale == 0 else np.int32)


def _params(scale: int, shape: tuple[int, int], rf: tuple[int, int, int]) -> tuple[int, ...]:
    """The kernels' parameter block: the reference's own shift tables
    (reference.cm.cm_shifts, reference.csf_den.den_shifts) laid out by
    ``_kernels.PARAM_SLOTS``, shift counts masked to 6 bits as x86 masks C's 64-bit
    shifts (reference.cnum.sar)."""
    p = np.zeros(K.PARAM_COUNT, dtype=np.int64)

    def put(name: str, values: Sequence[int]) -> None:
        at = K.PARAM_OFFSETS[name]
        p[at : at + len(values)] = values

    cms, dens = cm_shifts(scale, shape), den_shifts(scale, shape)
    put("RF", rf)
    put("CM_ROW_RND", [cms.row[0]])
    put("CM_ROW_SHIFT", [cms.row[1] & 63])
    put("CM_SQ_RND", [r for r, _ in cms.sq])
    put("CM_SQ_SHIFT", [s for _, s in cms.sq])
    put("CM_CUB_RND", [round_pow2_u32(c) for c in cms.cub])
    put("CM_CUB_SHIFT", [c & 63 for c in cms.cub])
    if scale == 0:
        put("CM_SUB_SHIFT", C.CM0_SUB_SHIFT)
    else:
        put("DEN_SQ_RND", [dens.sq[0]])
        put("DEN_SQ_SHIFT", [dens.sq[1]])
        put("DEN_CUB_RND", [dens.cub[0]])
        put("DEN_CUB_SHIFT", [dens.cub[1] & 63])
    put("DEN_ROW_RND", [dens.row[0]])
    put("DEN_ROW_SHIFT", [dens.row[1] & 63])
    return tuple(int(x) for x in p)


def scale_geometry(scale: int, src_shape: tuple[int, int], opts: AdmOptions) -> ScaleGeometry:
    """Geometry and constants of DWT level ``scale`` whose input is ``src_shape``."""
    h, w = src_shape
    hh, ww = (h + 1) // 2, (w + 1) // 2
    top, bottom = border(hh, tap=False)
    left, right = border(ww, tap=False)
    crop = (top, bottom, left, right)
    region = (*border(hh, tap=True), *border(ww, tap=True))
    rf = tuple(int(x) for x in rfactors(scale, opts))
    return ScaleGeometry(
        scale,
        (h, w),
        (hh, ww),
        crop,
        region,
        rf,  # type: ignore[arg-type]
        _params(scale, (hh, ww), rf),  # type: ignore[arg-type]
        den_shifts(scale, (hh, ww)).exp,
        cm_shifts(scale, (hh, ww)).exps,
    )


def scale_geometries(width: int, height: int, opts: AdmOptions) -> tuple[ScaleGeometry, ...]:
    """The four levels of a ``width`` x ``height`` frame."""
    out, shape = [], (height, width)
    for s in range(4):
        g = scale_geometry(s, shape, opts)
        out.append(g)
        shape = g.shape
    return tuple(out)


@functools.cache
def _device_params(params: tuple[int, ...], device_id: int) -> Any:
    import cupy as cp

    with cp.cuda.Device(device_id):
        return cp.asarray(np.array(params, dtype=np.int64))


def device_params(geom: ScaleGeometry) -> Any:
    """The parameter block of ``geom`` on the current device (uploaded once)."""
    import cupy as cp

    return _device_params(geom.params, cp.cuda.Device().id)


def finish_frame(
    acc: np.ndarray, geoms: Sequence[ScaleGeometry], opts: AdmOptions, width: int, height: int
) -> dict[str, float]:
    """All 18 outputs of one frame from its (4, ACC_COUNT) integer accumulators, through
    the reference's own float finish (den_finish, cm_finish, adm.finish)."""
    num0, aim0, den0 = (K.ACC_OFFSETS[k] for k in ("NUM", "AIM", "DEN"))
    scales = []
    for s, g in enumerate(geoms):
        if s == 0 and opts.adm_skip_scale0:
            scales.append(ScaleResult(np.float32(0.0), C.SKIP_SCALE0_DEN, np.float32(0.0)))
            continue
        a = acc[s]
        dn = [int(x) for x in a[den0 : den0 + 3].view(np.uint64)]
        den = den_finish((*dn, g.den_exp), s, g.shape, opts)
        nm = [int(x) for x in a[num0 : num0 + 3]]
        num = cm_finish((*nm, g.cm_exps), s, g.shape, opts.adm_noise_weight)
        aim = np.float32(0.0)
        if not opts.adm_skip_aim:
            am = [int(x) for x in a[aim0 : aim0 + 3]]
            aim = cm_finish((*am, g.cm_exps), s, g.shape, 0.0)
        scales.append(ScaleResult(num, den, aim))
    return adm_finish(scales, width, height, opts)

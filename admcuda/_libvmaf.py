"""Time libvmaf's own ``adm`` feature through its public C API, for side-by-side benchmarks.

Nothing here builds or ships libvmaf: the caller points at a ``libvmaf.so`` they built
(``--libvmaf PATH`` or ``ADMCUDA_LIBVMAF``). Only public API calls are used
(``vmaf_init``, ``vmaf_use_feature``, ``vmaf_picture_alloc``, ``vmaf_read_pictures``).
"""

from __future__ import annotations

import ctypes as C
import os
import time

import numpy as np

from admcuda.errors import AdmError

_PIX_FMT_420 = 1


class _Config(C.Structure):
    _fields_ = [
        ("log_level", C.c_int),
        ("n_threads", C.c_uint),
        ("n_subsample", C.c_uint),
        ("cpumask", C.c_uint64),
        ("gpumask", C.c_uint64),
    ]


class _Picture(C.Structure):
    _fields_ = [
        ("pix_fmt", C.c_int),
        ("bpc", C.c_uint),
        ("w", C.c_uint * 3),
        ("h", C.c_uint * 3),
        ("stride", C.c_ssize_t * 3),
        ("data", C.c_void_p * 3),
        ("ref", C.c_void_p),
        ("priv", C.c_void_p),
    ]


def find_libvmaf(path: str | None = None) -> str | None:
    """The libvmaf shared library to compare against: ``path``, else ``$ADMCUDA_LIBVMAF``."""
    path = path or os.environ.get("ADMCUDA_LIBVMAF")
    return path if path and os.path.isfile(path) else None


def time_libvmaf_adm(
    so_path: str,
    ref: np.ndarray,
    dis: np.ndarray,
    bitdepth: int,
    frames: int,
    *,
    threads: int = 1,
    scalar: bool = True,
) -> float:
    """Seconds per frame for libvmaf's ``adm`` on ``frames`` copies of one luma pair.

    ``scalar`` masks libvmaf's SIMD (its reference path); ``threads`` is libvmaf's
    ``n_threads``. Picture upload (a memcpy per plane row) is included, as in its CLI.
    """
    try:
        lib = C.CDLL(so_path)
    except OSError as exc:
        raise AdmError(f"cannot load libvmaf from {so_path}: {exc}") from None
    ctx = C.c_void_p()
    cpumask = 0xFFFFFFFF if scalar else 0
    if lib.vmaf_init(C.byref(ctx), _Config(0, threads, 0, cpumask, 0)) != 0:
        raise AdmError("vmaf_init failed")
    if lib.vmaf_use_feature(ctx, b"adm", None) != 0:
        raise AdmError("libvmaf has no 'adm' feature")
    h, w = ref.shape
    bps = 1 if bitdepth == 8 else 2
    lib.vmaf_picture_alloc.argtypes = (C.POINTER(_Picture), C.c_int, C.c_uint, C.c_uint, C.c_uint)

    def picture(y: np.ndarray) -> _Picture:
        p = _Picture()
        if lib.vmaf_picture_alloc(C.byref(p), _PIX_FMT_420, bitdepth, w, h) != 0:
            raise AdmError("vmaf_picture_alloc failed")
        for row in range(h):
            C.memmove(p.data[0] + row * p.stride[0], y[row].ctypes.data, w * bps)
        return p

    start = time.perf_counter()
    for n in range(frames):
        pr, pd = picture(ref), picture(dis)
        if lib.vmaf_read_pictures(ctx, C.byref(pr), C.byref(pd), n) != 0:
            raise AdmError("vmaf_read_pictures failed")
    lib.vmaf_read_pictures(ctx, None, None, 0)
    elapsed = time.perf_counter() - start
    lib.vmaf_close(ctx)
    return elapsed / frames

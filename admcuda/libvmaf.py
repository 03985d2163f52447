"""Time libvmaf's own integer ADM through its public C API, for side-by-side benchmarks.

Nothing here builds or ships libvmaf: the caller points at a ``libvmaf.so`` they built
(``--libvmaf PATH`` or ``ADMCUDA_LIBVMAF``). Only functions declared in libvmaf's public
headers (``libvmaf.h``, ``picture.h``, ``libvmaf_cuda.h``) are called, and nothing is
loaded until a function here is called, so the module imports without libvmaf.

:func:`time_libvmaf` feeds libvmaf the same ``(n, h, w)`` luma sequences that admcuda's
benchmark scores, frame by frame from host memory (or, with ``device_resident``, from
frames already on the GPU), and reports wall time and one score as proof of work.
"""

from __future__ import annotations

import ctypes as C
import errno
import functools
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from admcuda.errors import AdmError

__all__ = ["find_libvmaf", "libvmaf_has_cuda", "time_libvmaf"]

# The layouts below follow the public headers of Netflix/vmaf commit
# f85a853692a8c730d0270cd733c8bb30b5b93b7c (libvmaf 3.2.0). C enums are int-sized.

# libvmaf/include/libvmaf/picture.h: enum VmafPixelFormat
_PIX_FMT = {420: 1, 422: 2, 444: 3, 400: 4}

# libvmaf/include/libvmaf/libvmaf.h: enum VmafLogLevel (1 = errors only)
_LOG_LEVEL_ERROR = 1

# libvmaf/include/libvmaf/libvmaf_cuda.h: enum VmafCudaPicturePreallocationMethod
_PREALLOC_DEVICE = 1
_PREALLOC_HOST = 2
_PREALLOC_HOST_PINNED = 3

# libvmaf.h documents cpumask bits 1..32 (SSE2 .. AVX512ICL); setting every bit leaves
# libvmaf's scalar C path, the one admcuda's reference mirrors.
_CPUMASK_SCALAR = 0xFFFFFFFF

# Names under which the ``adm``/``adm_cuda`` extractors file the adm2 score
# (the collector's name first, then libvmaf's alias for it).
_ADM2_NAMES = (b"VMAF_integer_feature_adm2_score", b"integer_adm2")

_HOST_PICTURES = ("pool", "pageable", "pinned")

# At f85a853, vmaf_cuda_picture_alloc_pinned never sets the picture's priv->cuda.state,
# which its release callback dereferences: the first pinned picture libvmaf lets go of
# crashes the process (seen on an H200; fix proposed in Netflix/vmaf PR #1572). Drop
# this refusal for a libvmaf that carries the fix.
_PINNED_REFUSED = (
    "host_pictures='pinned' is refused: libvmaf's HOST_PINNED pictures crash when released "
    "(vmaf_cuda_picture_alloc_pinned leaves priv->cuda.state unset; Netflix/vmaf PR #1572)"
)


class _VmafConfiguration(C.Structure):
    """``VmafConfiguration`` from ``libvmaf/libvmaf.h``."""

    _fields_ = [
        ("log_level", C.c_int),  # enum VmafLogLevel
        ("n_threads", C.c_uint),
        ("n_subsample", C.c_uint),
        ("cpumask", C.c_uint64),
        ("gpumask", C.c_uint64),
    ]


class _VmafPicture(C.Structure):
    """``VmafPicture`` from ``libvmaf/picture.h``."""

    _fields_ = [
        ("pix_fmt", C.c_int),  # enum VmafPixelFormat
        ("bpc", C.c_uint),
        ("w", C.c_uint * 3),
        ("h", C.c_uint * 3),
        ("stride", C.c_ssize_t * 3),  # ptrdiff_t
        ("data", C.c_void_p * 3),
        ("ref", C.c_void_p),  # VmafRef *
        ("priv", C.c_void_p),
    ]


class _PicParams(C.Structure):
    """The anonymous ``pic_params`` struct shared by the two picture configurations."""

    _fields_ = [
        ("w", C.c_uint),
        ("h", C.c_uint),
        ("bpc", C.c_uint),
        ("pix_fmt", C.c_int),  # enum VmafPixelFormat
    ]


class _VmafPictureConfiguration(C.Structure):
    """``VmafPictureConfiguration`` from ``libvmaf/libvmaf.h`` (the CPU picture pool)."""

    _fields_ = [("pic_params", _PicParams), ("pic_cnt", C.c_uint)]


class _VmafCudaConfiguration(C.Structure):
    """``VmafCudaConfiguration`` from ``libvmaf/libvmaf_cuda.h``."""

    _fields_ = [("cu_ctx", C.c_void_p)]  # CUcontext; NULL: the device's primary context


class _VmafCudaPictureConfiguration(C.Structure):
    """``VmafCudaPictureConfiguration`` from ``libvmaf/libvmaf_cuda.h``."""

    _fields_ = [
        ("pic_params", _PicParams),
        ("pic_prealloc_method", C.c_int),  # enum VmafCudaPicturePreallocationMethod
    ]


_PIC = C.POINTER(_VmafPicture)
_CTX = C.c_void_p  # VmafContext *
_SIGNATURES: dict[str, tuple[Any, tuple]] = {
    "vmaf_version": (C.c_char_p, ()),
    "vmaf_init": (C.c_int, (C.POINTER(_CTX), _VmafConfiguration)),
    "vmaf_use_feature": (C.c_int, (_CTX, C.c_char_p, C.c_void_p)),
    "vmaf_preallocate_pictures": (C.c_int, (_CTX, _VmafPictureConfiguration)),
    "vmaf_fetch_preallocated_picture": (C.c_int, (_CTX, _PIC)),
    "vmaf_picture_alloc": (C.c_int, (_PIC, C.c_int, C.c_uint, C.c_uint, C.c_uint)),
    "vmaf_picture_unref": (C.c_int, (_PIC,)),
    "vmaf_read_pictures": (C.c_int, (_CTX, _PIC, _PIC, C.c_uint)),
    "vmaf_feature_score_at_index": (
        C.c_int,
        (_CTX, C.c_char_p, C.POINTER(C.c_double), C.c_uint),
    ),
    "vmaf_close": (C.c_int, (_CTX,)),
    # libvmaf_cuda.h; present only in a build configured with -Denable_cuda=true
    "vmaf_cuda_state_init": (C.c_int, (C.POINTER(C.c_void_p), _VmafCudaConfiguration)),
    "vmaf_cuda_import_state": (C.c_int, (_CTX, C.c_void_p)),
    "vmaf_cuda_preallocate_pictures": (C.c_int, (_CTX, _VmafCudaPictureConfiguration)),
    "vmaf_cuda_fetch_preallocated_picture": (C.c_int, (_CTX, _PIC)),
}
_CUDA_FUNCTIONS = (
    "vmaf_cuda_state_init",
    "vmaf_cuda_import_state",
    "vmaf_cuda_preallocate_pictures",
    "vmaf_cuda_fetch_preallocated_picture",
)


def find_libvmaf(path: str | None = None) -> str | None:
    """The libvmaf shared library to compare against: ``path``, else ``$ADMCUDA_LIBVMAF``."""
    path = path or os.environ.get("ADMCUDA_LIBVMAF")
    return path if path and os.path.isfile(path) else None


@functools.cache
def _load_resolved(path: str) -> C.CDLL:
    try:
        lib = C.CDLL(path)
    except OSError as exc:
        raise AdmError(f"cannot load libvmaf from {path}: {exc}") from None
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name, None)
        if fn is None:
            if name in _CUDA_FUNCTIONS:
                continue
            raise AdmError(f"{path} does not export {name}; is it libvmaf 3.x?")
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _load(so_path: str) -> C.CDLL:
    if not so_path or not os.path.isfile(so_path):
        raise AdmError(f"cannot load libvmaf from {so_path!r}: no such file")
    return _load_resolved(os.path.realpath(so_path))


def libvmaf_has_cuda(so_path: str) -> bool:
    """Whether the libvmaf at ``so_path`` was built with CUDA (exports ``vmaf_cuda_state_init``)."""
    return hasattr(_load(so_path), "vmaf_cuda_state_init")


def _check(rc: int, call: str, where: str = "") -> None:
    if rc != 0:
        name = errno.errorcode.get(-rc, "")
        detail = f" ({name})" if name else ""
        raise AdmError(f"libvmaf {call} returned {rc}{detail}{where}")


def _frames(a: Any, bitdepth: int, name: str, device_ok: bool) -> Any:
    """``a`` as an (n, h, w) array of the dtype libvmaf expects for ``bitdepth``."""
    on_device = hasattr(a, "__cuda_array_interface__")
    if on_device and not device_ok:
        raise AdmError(f"{name} is a GPU array; pass a host array or device_resident=True")
    if not on_device:
        a = np.asanyarray(a)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3 or 0 in a.shape:
        raise AdmError(f"{name} must be (frames, height, width) luma, got shape {a.shape}")
    want = np.uint8 if bitdepth == 8 else np.uint16
    if a.dtype != want:
        raise AdmError(f"{name} is {a.dtype}; {bitdepth}-bit luma must be {np.dtype(want)}")
    return a


def _is_reader(a: Any) -> bool:
    return hasattr(a, "width") and hasattr(a, "height") and not hasattr(a, "shape")


class _ReaderFrames:
    """A reader's ``(h, w)`` planes, each checked for the dtype of ``bitdepth``."""

    def __init__(self, reader: Any, bitdepth: int, name: str) -> None:
        self._reader, self._name = reader, name
        self.shape = (int(reader.height), int(reader.width))
        self._want = np.dtype(np.uint8 if bitdepth == 8 else np.uint16)
        have = getattr(reader, "bitdepth", bitdepth)
        if have != bitdepth:
            raise AdmError(f"{name} is {have}-bit, not {bitdepth}-bit")

    def __iter__(self) -> Iterator[np.ndarray]:
        for frame in self._reader:
            a = np.asarray(frame)
            if a.dtype != self._want:
                raise AdmError(f"{self._name} frame is {a.dtype}, not {self._want}")
            yield a


def _reader(a: Any, bitdepth: int, name: str) -> _ReaderFrames:
    if not _is_reader(a):
        raise AdmError(f"{name} must be a frame reader like the other input, or both arrays")
    return _ReaderFrames(a, bitdepth, name)


def _luma(pic: _VmafPicture, h: int, w: int, dtype: np.dtype) -> np.ndarray:
    """A NumPy view of a host picture's luma plane, rows ``stride[0]`` bytes apart."""
    stride = pic.stride[0]
    buf = (C.c_ubyte * (stride * (h - 1) + w * dtype.itemsize)).from_address(pic.data[0])
    return np.ndarray((h, w), dtype, buffer=buf, strides=(stride, dtype.itemsize))


def time_libvmaf(
    so_path: str,
    ref: Any,
    dis: Any,
    bitdepth: int,
    *,
    cuda: bool = False,
    threads: int = 0,
    scalar: bool = False,
    pix_fmt: int = 420,
    device_resident: bool = False,
    host_pictures: str = "pool",
) -> dict[str, float]:
    """Time libvmaf's integer ADM on the frame pairs ``ref[i]``, ``dis[i]``, in order.

    Parameters
    ----------
    so_path : str
        A ``libvmaf.so`` (3.x); ``cuda`` needs one built with ``-Denable_cuda=true``.
    ref, dis : ndarray or frame reader
        ``(n, h, w)`` luma, uint8 for 8-bit and uint16 otherwise; ``np.memmap`` views of
        raw files work (a frame is read when it is copied into libvmaf's picture). With
        ``device_resident`` they may also be CuPy arrays. Or, on the host, two readers
        with ``width`` and ``height`` that iterate over ``(h, w)`` luma planes (such as
        :class:`admcuda.io.ffmpeg.VideoReader`): frames are then decoded as libvmaf goes, and
        ``seconds`` includes the decoding; both must yield the same number of frames.
        Chroma planes are left as libvmaf allocated them: ADM reads luma only.
    bitdepth : int
        8, 10, 12 or 16.
    cuda : bool
        Run the ``adm_cuda`` extractor (CUDA device 0) instead of the CPU ``adm``.
    threads : int
        libvmaf's ``n_threads``. On the CPU, 0 means ``os.cpu_count()``. With ``cuda`` it
        is passed as given (0: no thread pool, as the ``vmaf`` tool's default); libvmaf
        runs CUDA extractors on the calling thread either way.
    scalar : bool
        CPU only: mask every SIMD path (``cpumask``), leaving libvmaf's scalar C.
    pix_fmt : int
        420, 422, 444 or 400: the pictures' layout (only luma is filled).
    device_resident : bool
        With ``cuda``: copy all frames to the GPU first (CuPy; timed apart as
        ``upload_seconds``), then per frame copy device-to-device into pictures from
        ``vmaf_cuda_preallocate_pictures``'s DEVICE method. Times libvmaf with the
        frames already on the GPU.
    host_pictures : str
        With ``cuda`` and not ``device_resident``, where the host pictures come from:
        ``"pool"`` (``vmaf_preallocate_pictures``'s reused pool of pageable pictures, what
        the ``vmaf`` tool does with a CUDA state) or ``"pageable"``
        (``vmaf_cuda_preallocate_pictures``'s HOST method: ``vmaf_picture_alloc`` per
        picture). libvmaf uploads the luma plane itself. ``"pinned"`` (the HOST_PINNED
        method, page-locked pictures) is refused: see ``_PINNED_REFUSED``.

    Returns
    -------
    dict
        ``frames``; ``seconds`` (wall time from the first picture fill to the end of the
        flush ``vmaf_read_pictures(ctx, NULL, NULL, 0)``); ``fps``; ``adm2_first``
        (libvmaf's adm2 of frame 0); ``setup_seconds`` (context, CUDA state, extractor
        registration and picture preallocation, untimed above); ``first_frame_seconds``
        (start to the return of frame 0's ``vmaf_read_pictures``, inside ``seconds``:
        libvmaf initializes an extractor, CUDA buffers and modules included, on its
        first frame); with ``device_resident`` also ``upload_seconds`` (host to GPU,
        untimed above).

    Raises
    ------
    AdmError
        The library cannot be loaded or lacks a call, the frames are malformed, or a
        libvmaf call fails (the message names the call and its return code).
    """
    if bitdepth not in (8, 10, 12, 16):
        raise AdmError(f"bitdepth must be 8, 10, 12 or 16, got {bitdepth}")
    if pix_fmt not in _PIX_FMT:
        raise AdmError(f"pix_fmt must be one of 420, 422, 444, 400, got {pix_fmt}")
    if host_pictures not in _HOST_PICTURES:
        raise AdmError(f"host_pictures must be one of {', '.join(_HOST_PICTURES)}")
    if cuda and not device_resident and host_pictures == "pinned":
        raise AdmError(_PINNED_REFUSED)
    if device_resident and not cuda:
        raise AdmError("device_resident needs cuda=True")
    if device_resident and threads:
        # libvmaf's thread-pool dispatch hands on the host copy of each picture, and a
        # device picture has none.
        raise AdmError("device_resident needs threads=0")
    lib = _load(so_path)
    if cuda and not hasattr(lib, "vmaf_cuda_state_init"):
        raise AdmError(f"{so_path} was built without CUDA (no vmaf_cuda_state_init)")
    streams = _is_reader(ref) or _is_reader(dis)
    if streams:
        if device_resident:
            raise AdmError("device_resident needs arrays, not frame readers")
        ref, dis = _reader(ref, bitdepth, "ref"), _reader(dis, bitdepth, "dis")
        n, (h, w) = 0, ref.shape
        if dis.shape != (h, w):
            raise AdmError(f"ref frames {ref.shape} and dis frames {dis.shape} differ in shape")
    else:
        ref = _frames(ref, bitdepth, "ref", device_resident)
        dis = _frames(dis, bitdepth, "dis", device_resident)
        if ref.shape != dis.shape:
            raise AdmError(f"ref {ref.shape} and dis {dis.shape} differ in shape")
        n, h, w = ref.shape
    if w <= 16 or h <= 16:
        # libvmaf's ADM does not refuse these: it crashes.
        raise AdmError(f"frame {w}x{h} is too small: libvmaf's ADM needs width and height above 16")

    if cuda:
        n_threads = threads
    else:
        n_threads = threads or os.cpu_count() or 1
    cfg = _VmafConfiguration(
        log_level=_LOG_LEVEL_ERROR,
        n_threads=n_threads,
        n_subsample=1,
        cpumask=_CPUMASK_SCALAR if scalar and not cuda else 0,
        gpumask=0,
    )
    params = _PicParams(w=w, h=h, bpc=bitdepth, pix_fmt=_PIX_FMT[pix_fmt])

    t0 = time.perf_counter()
    ctx = _CTX()
    _check(lib.vmaf_init(C.byref(ctx), cfg), "vmaf_init")
    result: dict[str, float] = {}
    try:
        if cuda:
            state = C.c_void_p()
            _check(
                lib.vmaf_cuda_state_init(C.byref(state), _VmafCudaConfiguration(None)),
                "vmaf_cuda_state_init",
            )
            # From here vmaf_close releases the state's stream and context reference;
            # libvmaf_cuda.h declares no call that frees the small state struct itself.
            _check(lib.vmaf_cuda_import_state(ctx, state), "vmaf_cuda_import_state")
        _check(lib.vmaf_use_feature(ctx, b"adm_cuda" if cuda else b"adm", None), "vmaf_use_feature")
        fetch = _prepare_pictures(lib, ctx, params, cuda, device_resident, host_pictures, n_threads)
        result["setup_seconds"] = time.perf_counter() - t0

        if device_resident:
            seconds, first, upload = _run_device(lib, ctx, ref, dis)
            result["upload_seconds"] = upload
        else:
            seconds, first, n = _run_host(lib, ctx, fetch, ref, dis, (h, w))
        result["first_frame_seconds"] = first
        score = C.c_double()
        for name in _ADM2_NAMES:
            if lib.vmaf_feature_score_at_index(ctx, name, C.byref(score), 0) == 0:
                break
        else:
            raise AdmError("libvmaf vmaf_feature_score_at_index found no adm2 score for frame 0")
    finally:
        rc = lib.vmaf_close(ctx)
    _check(rc, "vmaf_close")
    return {
        "frames": n,
        "seconds": seconds,
        "fps": n / seconds,
        "adm2_first": score.value,
        **result,
    }


def _prepare_pictures(
    lib: C.CDLL,
    ctx: _CTX,
    params: _PicParams,
    cuda: bool,
    device_resident: bool,
    host_pictures: str,
    n_threads: int,
):
    """Set up libvmaf's picture source; returns the call that fetches one picture."""
    if cuda and (device_resident or host_pictures != "pool"):
        if device_resident:
            method = _PREALLOC_DEVICE
        elif host_pictures == "pinned":
            method = _PREALLOC_HOST_PINNED
        else:
            method = _PREALLOC_HOST
        cfg = _VmafCudaPictureConfiguration(pic_params=params, pic_prealloc_method=method)
        _check(lib.vmaf_cuda_preallocate_pictures(ctx, cfg), "vmaf_cuda_preallocate_pictures")
        return lib.vmaf_cuda_fetch_preallocated_picture, "vmaf_cuda_fetch_preallocated_picture"
    # The vmaf tool's pool size: enough pictures for every worker's pair plus the
    # previous references libvmaf keeps, so a fetch waits only for a busy worker.
    count = (n_threads + 1) * 2 + 1 if n_threads > 0 else 4
    cfg = _VmafPictureConfiguration(pic_params=params, pic_cnt=count)
    _check(lib.vmaf_preallocate_pictures(ctx, cfg), "vmaf_preallocate_pictures")
    return lib.vmaf_fetch_preallocated_picture, "vmaf_fetch_preallocated_picture"


def _run_host(
    lib: C.CDLL, ctx: _CTX, fetch, ref: Any, dis: Any, size: tuple[int, int]
) -> tuple[float, float, int]:
    """Fill host pictures frame by frame from the frames ``ref`` and ``dis`` iterate over
    and hand them to libvmaf; (seconds, first frame, frames)."""
    fetch_fn, fetch_name = fetch
    h, w = size
    pr, pd = _VmafPicture(), _VmafPicture()
    start = time.perf_counter()
    ref_it, dis_it = iter(ref), iter(dis)
    i = 0
    first = 0.0
    while True:
        at = f" at frame {i}"
        r, d = next(ref_it, None), next(dis_it, None)
        if r is None or d is None:
            if r is not d:
                short = "ref" if r is None else "dis"
                raise AdmError(f"{short} ended at frame {i}, before the other input")
            break
        if r.shape != (h, w) or d.shape != (h, w):
            raise AdmError(f"frame {i} is {r.shape} / {d.shape}, not {(h, w)}")
        _check(fetch_fn(ctx, C.byref(pr)), fetch_name, at)
        rc = fetch_fn(ctx, C.byref(pd))
        if rc:
            lib.vmaf_picture_unref(C.byref(pr))
            _check(rc, fetch_name, at)
        _luma(pr, h, w, r.dtype)[...] = r
        _luma(pd, h, w, d.dtype)[...] = d
        _check(lib.vmaf_read_pictures(ctx, C.byref(pr), C.byref(pd), i), "vmaf_read_pictures", at)
        if i == 0:
            first = time.perf_counter() - start
        i += 1
    if i == 0:
        raise AdmError("the inputs hold no frames")
    _check(lib.vmaf_read_pictures(ctx, None, None, 0), "vmaf_read_pictures", " (flush)")
    return time.perf_counter() - start, first, i


def _run_device(lib: C.CDLL, ctx: _CTX, ref: Any, dis: Any) -> tuple[float, float, float]:
    """Frames on the GPU -> DEVICE-method pictures, device to device; (seconds, first, upload)."""
    try:
        import cupy as cp
    except ImportError:
        raise AdmError("device_resident needs CuPy") from None
    fetch = lib.vmaf_cuda_fetch_preallocated_picture
    # libvmaf's CUDA state uses device 0's primary context, the one CuPy's runtime uses.
    with cp.cuda.Device(0):
        t0 = time.perf_counter()
        d_ref = cp.ascontiguousarray(cp.asarray(ref))
        d_dis = cp.ascontiguousarray(cp.asarray(dis))
        cp.cuda.Device(0).synchronize()
        upload = time.perf_counter() - t0
        n, h, w = d_ref.shape
        row = w * d_ref.dtype.itemsize
        # A stream of our own that does not wait on libvmaf's: each fetch has already
        # waited for libvmaf's last use of the picture, and synchronizing this stream
        # before vmaf_read_pictures orders the copy before libvmaf's first kernel.
        stream = cp.cuda.Stream(non_blocking=True)
        d2d = cp.cuda.runtime.memcpyDeviceToDevice
        copy = cp.cuda.runtime.memcpy2DAsync
        pr, pd = _VmafPicture(), _VmafPicture()
        start = time.perf_counter()
        for i in range(n):
            at = f" at frame {i}"
            _check(fetch(ctx, C.byref(pr)), "vmaf_cuda_fetch_preallocated_picture", at)
            rc = fetch(ctx, C.byref(pd))
            if rc:
                lib.vmaf_picture_unref(C.byref(pr))
                _check(rc, "vmaf_cuda_fetch_preallocated_picture", at)
            for pic, src in ((pr, d_ref[i]), (pd, d_dis[i])):
                copy(pic.data[0], pic.stride[0], src.data.ptr, row, row, h, d2d, stream.ptr)
            stream.synchronize()
            _check(
                lib.vmaf_read_pictures(ctx, C.byref(pr), C.byref(pd), i), "vmaf_read_pictures", at
            )
            if i == 0:
                first = time.perf_counter() - start
        _check(lib.vmaf_read_pictures(ctx, None, None, 0), "vmaf_read_pictures", " (flush)")
        return time.perf_counter() - start, first, upload

"""Start the CUDA driver and the GPU's primary context early, in a thread of their own.

The command line spends its first few hundred milliseconds importing NumPy and CuPy, which
hold the interpreter lock; the driver's start (``cuInit``) and the making of the device's
primary context, which the CUDA runtime (and so CuPy and NVDEC) then takes as its own, do
not need it. Started at once from :func:`start`, the two run while the imports do.

Only ``admcuda score`` calls :func:`start`: an import of the library starts nothing (a
program that forks after importing admcuda must be free to). Whatever fails here (no
driver, no such device) is left for the backend's own start to report. :func:`wait` joins
the thread. :func:`admcuda.backends.engine_for` calls it before it makes an engine (the
CPU backend forks its workers, which must not happen while another thread is inside the
driver), and it runs at exit, so that the process never ends while the driver starts.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import sys
import threading

__all__ = ["start", "wait"]

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _init(ordinal: int) -> None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        if lib.cuInit(0) != 0:
            return
        dev = ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
            return
        ctx = ctypes.c_void_p()
        # Retained for the process's life: the runtime's own retain finds it made.
        lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    except (OSError, AttributeError):  # no driver library, or not this one
        return


def start(device: int | None = None) -> None:
    """Begin starting CUDA on ``device`` (default 0) in a daemon thread; once a process,
    on Linux where CuPy is installed (elsewhere, and where the driver is missing, nothing
    happens: without CuPy the CPU backend runs, and a context would only hold GPU memory)."""
    global _thread
    if not sys.platform.startswith("linux") or importlib.util.find_spec("cupy") is None:
        return
    with _lock:
        if _thread is not None:
            return
        _thread = threading.Thread(
            target=_init, args=(device or 0,), name="admcuda-cuda-start", daemon=True
        )
        _thread.start()
    atexit.register(wait)


def wait() -> None:
    """Return once the start begun by :func:`start` (if any) is over."""
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()

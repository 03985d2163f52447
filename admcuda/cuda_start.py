"""Start the CUDA driver and the GPU's primary context early, in a thread of their own.

The command line spends its first few hundred milliseconds importing NumPy and CuPy, which
hold the interpreter lock; the driver's start (``cuInit``) and the making of the device's
primary context, which the CUDA runtime (and so CuPy and NVDEC) then takes as its own, do
not need it. Started at once from :func:`start`, the two run while the imports do.

Only ``admcuda score`` calls :func:`start`: first :func:`start_for_arguments`, from the
program's raw arguments before NumPy is imported, where they plainly ask for the GPU;
then :func:`admcuda.cli.score.run` once they are parsed. An import of the library starts
nothing (a program that forks after importing admcuda must be free to). This module
imports nothing but the standard library. Whatever fails here (no driver, no such device)
is left for the backend's own start to report. :func:`wait` joins the thread.
:func:`admcuda.backends.engine_for` calls it before it makes an engine (the CPU backend
forks its workers, which must not happen while another thread is inside the driver), and
it runs at exit, so that the process never ends while the driver starts.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import sys
import threading
from collections.abc import Sequence

__all__ = [
    "register_host",
    "start",
    "start_for_arguments",
    "started",
    "unregister_host",
    "wait",
]

# libvmaf's names of the features the GPU computes (admcuda.vmaf.plan has the truth).
_GPU = frozenset({"adm", "vif", "motion", "adm_cuda", "vif_cuda", "motion_cuda"})

_thread: threading.Thread | None = None
_lock = threading.Lock()


# The driver library and the primary context the start made, where it made one.
_made: tuple[ctypes.CDLL, ctypes.c_void_p] | None = None

_PORTABLE = 0x01  # CU_MEMHOSTREGISTER_PORTABLE: page-locked for every context


def _init(ordinal: int) -> None:
    global _made
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        if lib.cuInit(0) != 0:
            return
        dev = ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(dev), ordinal) != 0:
            return
        ctx = ctypes.c_void_p()
        # Retained for the process's life: the runtime's own retain finds it made.
        if lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0:
            _made = (lib, ctx)
    except (OSError, AttributeError):  # no driver library, or not this one
        return


def register_host(address: int, nbytes: int) -> bool:
    """Page-lock ``nbytes`` of host memory at ``address`` for the GPU through the driver,
    without CuPy: once the start has made the context (this waits for it), on the calling
    thread. False where the start made none or the driver refuses. Undo it with
    :func:`unregister_host`."""
    wait()
    if _made is None:
        return False
    lib, ctx = _made
    try:
        if lib.cuCtxSetCurrent(ctx) != 0:
            return False
        register = lib.cuMemHostRegister_v2
        register.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
        return bool(register(address, nbytes, _PORTABLE) == 0)
    except AttributeError:  # a driver without these entry points
        return False


def unregister_host(address: int) -> None:
    """Undo :func:`register_host` (on any thread)."""
    if _made is None:
        return
    lib, ctx = _made
    lib.cuCtxSetCurrent(ctx)
    unregister = lib.cuMemHostUnregister
    unregister.argtypes = [ctypes.c_void_p]
    unregister(address)


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


def started() -> bool:
    """Whether :func:`start` began a start in this process."""
    return _thread is not None


def start_for_arguments(argv: Sequence[str]) -> None:
    """:func:`start` for ``admcuda score``'s raw arguments where they plainly score on the
    GPU: not ``--backend cpu``, no ``--help``, no float model (scored on the host), and
    where features are named without a model, one of them ADM, VIF or motion; on
    ``--gpu N``'s device. Anything else waits for the parsed arguments."""
    args = list(argv)
    if args[:1] != ["score"] or "--help" in args:
        return
    values: dict[str, list[str]] = {}
    for k, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in ("--backend", "--gpu", "--model", "--feature"):
            if not eq:
                value = args[k + 1] if k + 1 < len(args) else ""
            values.setdefault(name, []).append(value)
    if "cpu" in values.get("--backend", []) or len(values.get("--backend", [])) > 1:
        return
    models, features = values.get("--model", []), values.get("--feature", [])
    if any("float" in m for m in models):
        return
    if features and not models and not any(f.partition("=")[0] in _GPU for f in features):
        return
    gpus = values.get("--gpu", [])
    if len(gpus) > 1 or (gpus and not gpus[0].isdigit()):
        return  # left for the parser to judge
    start(int(gpus[0]) if gpus else None)

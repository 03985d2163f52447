"""The one place that decides CPU or CUDA.

:func:`select_backend` resolves a name (``auto`` takes the first of :data:`BACKENDS`
that loads); :func:`start_engine` makes the pipeline engine, where ``auto`` falls back to
the CPU when the CUDA engine cannot start (the reason in :data:`fallback_reason`);
:func:`engine_for` makes one backend's engine. The extractor (:class:`AdmExtractor`)
checks names with :func:`check_backend` and falls back the same way.

- :mod:`admcuda.backends.cpu`: the integer reference over a process pool.
- :mod:`admcuda.backends.cuda`: the GPU engine (geometry, launchers, graphs, host memory,
  the batched finish, the kernel loader).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from admcuda.errors import AdmError

__all__ = [
    "BACKENDS",
    "BACKEND_NAMES",
    "check_backend",
    "cuda_batch",
    "engine_for",
    "likely_cuda",
    "one_line",
    "open_cuda_adm",
    "select_backend",
    "start_engine",
]

# Why the last "auto" selection passed over a preferred backend (None if it did not).
fallback_reason: str | None = None

# Preference order for "auto": the first that loads wins.
BACKENDS: tuple[str, ...] = ("cuda", "cpu")
# The names a caller may give.
BACKEND_NAMES: tuple[str, ...] = ("auto", "cpu", "cuda")


def check_backend(backend: object) -> None:
    """Refuse a backend name not in :data:`BACKEND_NAMES`."""
    if backend not in BACKEND_NAMES:
        raise AdmError(f"unknown backend {backend!r}; use one of {', '.join(BACKEND_NAMES)}")


def _load(name: str) -> ModuleType:
    module_name = f"{__name__}.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise AdmError(f"backend '{name}' is not available yet; use --backend cpu") from None
        raise AdmError(f"backend '{name}' is not available: {exc}") from None
    except ImportError as exc:
        raise AdmError(f"backend '{name}' is not available: {exc}") from None
    available = getattr(module, "cuda_available", None)
    if available is not None and not available():
        raise AdmError(
            f"backend '{name}' is not available: no usable GPU (CuPy missing or no device)"
        )
    return module


def select_backend(name: str) -> tuple[str, ModuleType]:
    """Resolve a backend name to the name actually used and its module.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}
        ``"auto"`` takes the first of :data:`BACKENDS` that loads, so it falls
        back to the CPU quietly when CUDA is unavailable.

    Returns
    -------
    (str, module)

    Raises
    ------
    AdmError
        For an unknown name, or a named backend that cannot be loaded.
    """
    global fallback_reason
    if name == "auto":
        fallback_reason = None
        for candidate in BACKENDS:
            try:
                return candidate, _load(candidate)
            except AdmError as exc:
                fallback_reason = fallback_reason or str(exc)
                continue
        raise AdmError("no backend could be loaded")
    if name not in BACKENDS:
        raise AdmError(f"unknown backend '{name}'; use auto, {', '.join(BACKENDS)}")
    return name, _load(name)


def engine_for(
    name: str,
    width: int,
    height: int,
    bitdepth: int,
    opts: Any,
    *,
    inputs: int = 1,
    frames: int | None = None,
    threads: int | None = None,
    host_memory: int | None = None,
    batch: int | None = None,
    device: int | None = None,
    plan: Any = None,
    subsample: int = 1,
    score_pair: Any = None,
    settle: Callable[[], None] | None = None,
) -> Any:
    """The pipeline engine of backend ``name`` ("cpu" or "cuda") for one run.

    Parameters
    ----------
    inputs : int
        Distorted inputs scored against the reference.
    frames : int, optional
        Frames to score, where known: no batch is larger, and the CPU backend keeps
        small runs in this process.
    threads : int, optional
        CPU worker processes (default: the usable cores).
    host_memory : int, optional
        Bytes of host frame buffers (page-locked on the GPU); default
        :data:`admcuda.pipeline.DEFAULT_HOST_MEMORY` on the GPU,
        :data:`admcuda.pipeline.CPU_HOST_MEMORY` on the CPU.
    batch : int, optional
        Frames per batch (default: by frame size, within ``host_memory``).
    device : int, optional
        CUDA device ordinal.
    plan : FeaturePlan, optional
        Compute this :mod:`admcuda.vmaf` plan in place of ADM alone
        (:class:`admcuda.backends.cuda.vmaf.CudaVmaf` on the GPU); ``subsample`` as
        :class:`admcuda.backends.cpu.CpuEngine` takes it.
    score_pair : callable, optional
        With ``plan``, what scores one frame pair on the reference CPU engine
        (:func:`admcuda.vmaf.score_pair`), handed down as data: no engine imports the
        feature plan's package.
    settle : callable, optional
        Called before a CPU engine is made: the caller's threads that must not run while
        its workers fork (a read-ahead's) end in it.
    """
    from admcuda.pipeline import (
        CPU_HOST_MEMORY,
        CPU_WORK_BYTES_PER_PIXEL,
        DEFAULT_HOST_MEMORY,
        available_memory,
        check_frame_memory,
        plan_batch,
    )

    # The CPU engine forks: not while a thread is inside the driver. Looked up, not
    # imported: only a run that began the start has it, and a CPU run loads no CUDA code.
    cuda_start = sys.modules.get("admcuda.cuda_start")
    if cuda_start is not None:
        cuda_start.wait()
    itemsize = 1 if bitdepth == 8 else 2
    if host_memory is not None:
        budget = host_memory
    else:
        budget = CPU_HOST_MEMORY if name == "cpu" else DEFAULT_HOST_MEMORY
    if name == "cpu":
        from admcuda.backends.compiled import usable

        if settle is not None:
            settle()  # the CPU engines may fork their workers
        from admcuda.backends.cpu import CpuEngine, default_threads

        if usable(width, height, plan, frames):
            return _compiled_engine(
                width, height, bitdepth, opts, inputs=inputs, frames=frames, threads=threads,
                budget=budget, batch=batch, plan=plan, subsample=subsample,
            )  # fmt: skip

        work = CPU_WORK_BYTES_PER_PIXEL * width * height
        free = available_memory()
        check_frame_memory(width, height, bitdepth, 1 + inputs, work=work, available=free)
        workers = max(1, threads if threads is not None else default_threads())
        if free is not None:  # no more workers than there is memory to score with
            ring = 2 * (1 + inputs) * width * height * itemsize
            workers = max(1, min(workers, (free - ring) // work))
        if plan is not None:
            engine = CpuEngine(
                width, height, bitdepth, opts, threads=workers, frames=frames, plan=plan,
                subsample=subsample, batch=batch, score_pair=score_pair,
            )  # fmt: skip
        else:
            engine = CpuEngine(width, height, bitdepth, opts, threads=workers, frames=frames)
        # no more frames a batch than the run scores, nor than the host budget holds
        engine.batch = plan_batch(
            width * height * itemsize, 1 + inputs, preferred=engine.batch, frames=frames,
            host_memory=budget,
        )  # fmt: skip
        return engine
    if name != "cuda":
        raise AdmError(f"unknown backend '{name}'; use {', '.join(BACKENDS)}")
    check_frame_memory(width, height, bitdepth, 1 + inputs)
    cuda = _load("cuda")
    planned = cuda_batch(
        width, height, bitdepth, inputs=inputs, frames=frames, host_memory=budget, batch=batch
    )
    try:
        if plan is not None:
            from admcuda.backends.cuda.vmaf import CudaVmaf

            return CudaVmaf(width, height, bitdepth, plan, batch=planned, device=device,
                            subsample=subsample)  # fmt: skip
        return cuda.CudaAdm(width, height, bitdepth, opts, batch=planned, device=device)
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def cuda_batch(
    width: int,
    height: int,
    bitdepth: int,
    *,
    inputs: int = 1,
    frames: int | None = None,
    host_memory: int | None = None,
    batch: int | None = None,
) -> int:
    """Frames a batch of the CUDA engine :func:`engine_for` makes for these arguments
    (before any halving for the GPU's memory); imports neither CuPy nor the engine."""
    from admcuda.pipeline import DEFAULT_HOST_MEMORY, plan_batch

    from .cuda import auto_batch

    return plan_batch(
        width * height * (1 if bitdepth == 8 else 2),
        1 + inputs,
        preferred=batch or auto_batch(width, height),
        frames=frames,
        host_memory=DEFAULT_HOST_MEMORY if host_memory is None else host_memory,
    )


def likely_cuda(backend: str) -> bool:
    """Whether ``backend`` will most likely score on the GPU, judged without importing
    CuPy: named, or ``auto`` where this process has begun to start CUDA
    (:mod:`admcuda.cuda_start`) or has CuPy loaded already."""
    if backend == "cuda":
        return True
    if backend != "auto":
        return False
    started = sys.modules.get("admcuda.cuda_start")
    return "cupy" in sys.modules or (started is not None and started.started())


def _compiled_engine(width: int, height: int, bitdepth: int, opts: Any, *, inputs: int,
                     frames: int | None, threads: int | None, budget: int, batch: int | None,
                     plan: Any, subsample: int) -> Any:  # fmt: skip
    """The compiled CPU engine (:mod:`admcuda.backends.compiled`), with a one-line notice
    on a terminal while its kernels compile for the first time on this machine."""
    import logging

    from admcuda.backends.compiled import CompiledEngine
    from admcuda.compiled import cached
    from admcuda.pipeline import (
        CPU_WORK_BYTES_PER_PIXEL,
        available_memory,
        check_frame_memory,
        plan_batch,
    )

    # the reference's working memory a frame bounds the kernels' from above
    work = CPU_WORK_BYTES_PER_PIXEL * width * height
    check_frame_memory(width, height, bitdepth, 1 + inputs, work=work, available=available_memory())
    if sys.stderr.isatty() and cached() is False:  # cached() imports Numba
        logging.getLogger("admcuda").warning(
            "compiling the CPU engine's kernels, once for this machine (a minute or two; "
            "'admcuda warmup' does it ahead)"
        )
    engine = CompiledEngine(width, height, bitdepth, opts, threads=threads, plan=plan,
                            subsample=subsample, batch=batch)  # fmt: skip
    itemsize = 1 if bitdepth == 8 else 2
    engine.batch = plan_batch(width * height * itemsize, 1 + inputs, preferred=engine.batch,
                              frames=frames, host_memory=budget)  # fmt: skip
    return engine


def start_engine(backend: str, *args: Any, **kwargs: Any) -> tuple[Any, str]:
    """The pipeline engine for ``backend`` and the backend's name; ``auto`` takes CUDA
    where it starts (kernels compiled, buffers allocated) and otherwise the CPU, keeping
    the reason in :data:`fallback_reason`. Arguments as :func:`engine_for`'s."""
    global fallback_reason
    name, _ = select_backend(backend)
    if backend != "auto" or name == "cpu":
        try:
            return engine_for(name, *args, **kwargs), name
        except AdmError:
            raise
        except Exception as exc:  # noqa: BLE001 - CuPy/NVRTC failures, one line
            raise AdmError(f"the {name} backend cannot start: {one_line(exc)}") from None
    try:
        return engine_for(name, *args, **kwargs), name
    except Exception as exc:  # noqa: BLE001 - any failure to start the GPU path falls back
        fallback_reason = f"the CUDA backend cannot start ({one_line(exc)})"
        kwargs.pop("device", None)
        return engine_for("cpu", *args, **kwargs), "cpu"


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message``."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def open_cuda_adm(
    width: int,
    height: int,
    bitdepth: int,
    opts: Any,
    *,
    batch: int | None = None,
    device: int | None = None,
) -> Any:
    """The CUDA engine for frames already in memory (:class:`AdmExtractor`'s), or
    ``AdmError("CUDA backend unavailable: ...")`` where it cannot start. ``batch`` and
    ``device`` default to the engine's own."""
    try:
        cuda = importlib.import_module("admcuda.backends.cuda")
    except ImportError as exc:
        raise AdmError(f"CUDA backend unavailable: {exc}") from None
    if not cuda.cuda_available():
        raise AdmError("CUDA backend unavailable: CuPy is missing or sees no CUDA device")
    kwargs: dict[str, Any] = {} if batch is None else {"batch": batch}
    if device is not None:
        kwargs["device"] = device
    try:
        return cuda.CudaAdm(width, height, bitdepth, opts, **kwargs)
    except AdmError as exc:
        raise AdmError(f"CUDA backend unavailable: {exc}") from None
    except (ImportError, ValueError, RuntimeError) as exc:
        raise AdmError(f"CUDA backend unavailable: {type(exc).__name__}: {exc}") from None

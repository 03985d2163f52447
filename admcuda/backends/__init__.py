"""Backend registry: each backend turns luma-frame streams into ADM scores.

A backend is a module ``admcuda.backends.<name>`` exposing ``score_frames`` with
the :data:`Backend` signature. It returns, per frame, all 18 outputs keyed by
libvmaf's base names (``integer_adm2`` ... ``integer_adm_den_scale3``).

A backend may also expose ``score_frames_multi`` (:data:`MultiBackend`): one
reference stream scored against several distorted streams, each reference frame
decoded once and paired with frame ``i`` of every distorted stream that still
has one. :func:`interleave` builds one from a ``score_frames``.

Files are scored through :func:`engine_for` and :mod:`admcuda.pipeline`, which all
entry points share; the iterable functions above are for callers that already hold
planes.
"""

from __future__ import annotations

import collections
import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

from admcuda.errors import AdmError

__all__ = [
    "BACKENDS",
    "engine_for",
    "score_iterables",
    "Backend",
    "MultiBackend",
    "get_backend",
    "interleave",
    "select_backend",
]

Backend: TypeAlias = Callable[
    [Iterable[np.ndarray], Iterable[np.ndarray], int, int, int, Any],
    list[dict[str, float]],
]
"""``fn(ref_frames, dis_frames, width, height, bitdepth, opts) -> [scores per frame]``."""

MultiBackend: TypeAlias = Callable[
    [Iterable[np.ndarray], Sequence[Iterable[np.ndarray]], int, int, int, Any],
    list[list[dict[str, float]]],
]
"""``fn(ref_frames, [dis_frames, ...], width, height, bitdepth, opts) -> [[scores]]``.

Contract: for each reference frame ``i``, in order, take frame ``i`` of every
distorted stream that has not ended and score the pair; a distorted stream that
ends is dropped; stop taking reference frames once every distorted stream has
ended. Result ``k`` holds ``min(len(ref), len(dis_k))`` dicts, in frame order.
"""

# Why the last "auto" selection passed over a preferred backend (None if it did not).
fallback_reason: str | None = None

# Preference order for "auto": the first that loads wins.
BACKENDS: tuple[str, ...] = ("cuda", "cpu")


def _load_module(name: str) -> ModuleType:
    module_name = f"{__name__}.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise AdmError(f"backend '{name}' is not available yet; use --backend cpu") from None
        raise AdmError(f"backend '{name}' is not available: {exc}") from None
    except ImportError as exc:
        raise AdmError(f"backend '{name}' is not available: {exc}") from None


def _load(name: str) -> Backend:
    module = _load_module(name)
    available = getattr(module, "available", None)
    if available is not None and not available():
        raise AdmError(
            f"backend '{name}' is not available: no usable GPU (CuPy missing or no device)"
        )
    score_frames = getattr(module, "score_frames", None)
    if score_frames is None:
        raise AdmError(f"backend '{name}' is not available yet (it has no score_frames)")
    return score_frames


def select_backend(name: str) -> tuple[str, Backend]:
    """Resolve a backend name to the name actually used and its function.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}
        ``"auto"`` takes the first of :data:`BACKENDS` that loads, so it falls
        back to the CPU quietly when CUDA is unavailable.

    Returns
    -------
    (str, Backend)

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


def get_backend(name: str) -> Backend:
    """Return the ``score_frames`` function of backend ``name``.

    Parameters
    ----------
    name : {"auto", "cpu", "cuda"}

    Returns
    -------
    Backend
        ``fn(ref_frames, dis_frames, width, height, bitdepth, opts) -> list[dict]``.

    Raises
    ------
    AdmError
        See :func:`select_backend`.
    """
    return select_backend(name)[1]


def interleave(score_frames: Backend) -> MultiBackend:
    """Make a :data:`MultiBackend` out of a single-pair :data:`Backend`.

    The returned function calls ``score_frames`` once, on two lazily built
    streams: each reference frame repeated once per distorted stream that has
    a frame at that index, beside those distorted frames. Frames are pulled
    only as the backend asks for them (a backend may read either stream ahead
    of the other), so memory stays bounded, and the scores are dealt back to
    their distorted streams afterwards.

    Parameters
    ----------
    score_frames : Backend

    Returns
    -------
    MultiBackend
    """

    def score_frames_multi(
        ref_frames: Iterable[np.ndarray],
        dis_streams: Sequence[Iterable[np.ndarray]],
        width: int,
        height: int,
        bitdepth: int,
        opts: Any,
    ) -> list[list[dict[str, float]]]:
        owners: list[int] = []
        ref_queue: collections.deque[np.ndarray] = collections.deque()
        dis_queue: collections.deque[np.ndarray] = collections.deque()
        source = _pairs(iter(ref_frames), [iter(s) for s in dis_streams])

        def pull() -> bool:
            try:
                k, ref, dis = next(source)
            except StopIteration:
                return False
            owners.append(k)
            ref_queue.append(ref)
            dis_queue.append(dis)
            return True

        def view(queue: collections.deque[np.ndarray]) -> Iterator[np.ndarray]:
            while queue or pull():
                yield queue.popleft()

        flat = score_frames(view(ref_queue), view(dis_queue), width, height, bitdepth, opts)
        if len(flat) != len(owners):
            raise AdmError(f"backend returned {len(flat)} frames of scores for {len(owners)} pairs")
        results: list[list[dict[str, float]]] = [[] for _ in dis_streams]
        for k, scores in zip(owners, flat, strict=True):
            results[k].append(scores)
        return results

    return score_frames_multi


def _pairs(
    ref: Iterator[np.ndarray], dis: list[Iterator[np.ndarray]]
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(k, ref_i, dis_k_i)`` in frame order, following the MultiBackend contract."""
    active = list(range(len(dis)))
    while active:
        frame = next(ref, None)
        if frame is None:
            return
        still = []
        for k in active:
            other = next(dis[k], None)
            if other is not None:
                still.append(k)
                yield k, frame, other
        active = still


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
        :data:`admcuda.pipeline.DEFAULT_HOST_MEMORY`.
    batch : int, optional
        Frames per batch (default: by frame size, within ``host_memory``).
    device : int, optional
        CUDA device ordinal.
    """
    from admcuda.backends.cuda import start as _cuda_start
    from admcuda.pipeline import DEFAULT_HOST_MEMORY, plan_batch

    _cuda_start.wait()  # the CPU engine forks: not while a thread is inside the driver
    if name == "cpu":
        from admcuda.backends.cpu import CpuEngine

        return CpuEngine(width, height, bitdepth, opts, threads=threads, frames=frames)
    if name != "cuda":
        raise AdmError(f"unknown backend '{name}'; use {', '.join(BACKENDS)}")
    cuda = _load_module("cuda")
    itemsize = 1 if bitdepth == 8 else 2
    planned = plan_batch(
        width * height * itemsize,
        1 + inputs,
        preferred=batch or cuda.auto_batch(width, height),
        frames=frames,
        host_memory=host_memory if host_memory is not None else DEFAULT_HOST_MEMORY,
    )
    try:
        return cuda.CudaAdm(width, height, bitdepth, opts, batch=planned, device=device)
    except ValueError as exc:
        raise AdmError(str(exc)) from None


def score_iterables(
    engine: Any,
    ref_frames: Iterable[np.ndarray],
    dis_streams: Sequence[Iterable[np.ndarray]],
    width: int,
    height: int,
    bitdepth: int,
) -> list[dict[str, np.ndarray]]:
    """Run iterables of planes through the pipeline on ``engine`` (the
    :data:`MultiBackend` contract); per distorted stream, a dict of output arrays."""
    from admcuda.pipeline import IterSource, PlainStream, run

    ref = IterSource(PlainStream(ref_frames))
    dis = [IterSource(PlainStream(d)) for d in dis_streams]
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    return run(ref, dis, engine, width=width, height=height, dtype=dtype, threads=2)

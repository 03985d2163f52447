"""Where a batch runs: a given Dask client, a scheduler (address or file), or a local
cluster made for the run (``LocalCUDACluster`` where GPUs and dask-cuda are there).

A local CPU cluster has no more workers than the batch has tasks, and gives each task
the cores the workers leave (:data:`TASK_THREADS_ENV`, which a worker of any cluster may
set; 1 by default), so that a batch of one pair scores on every core as ``admcuda score``
does; its workers keep glibc's own trimming of freed memory (Dask's
``MALLOC_TRIM_THRESHOLD_`` made every large NumPy buffer fresh pages: five times the
page faults, about a tenth of a pair's time). Where that cluster would be a single CPU
worker (one task, or ``workers=1``), the batch runs its tasks in its own process instead
(:func:`single_cpu_worker`): no cluster is started."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from admcuda.errors import AdmError

__all__ = [
    "INSTALL_HINT",
    "TASK_THREADS_ENV",
    "WORKER_PRELOAD",
    "client_for",
    "dashboard",
    "gpu_count",
    "local_cluster",
    "require_distributed",
    "single_cpu_worker",
]

INSTALL_HINT = 'admcuda batch needs Dask: pip install ".[dask]"'
# Run in each local worker process as it starts: it leaves Ctrl-C to the batch's process.
WORKER_PRELOAD = "admcuda.batch.worker_sigint"
# A worker's environment: the threads each of its tasks scores with (default 1).
TASK_THREADS_ENV = "ADMCUDA_BATCH_THREADS"


# -- clusters


def require_distributed() -> None:
    """A one-line error where Dask's ``distributed`` is not installed (found, not
    imported: a batch scored in this process never imports it)."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise AdmError(INSTALL_HINT)


def gpu_count() -> int:
    """GPUs that dask-cuda would use (0 without dask-cuda or a driver)."""
    try:
        from dask_cuda.utils import get_n_gpus
    except ImportError:
        return 0
    try:
        return int(get_n_gpus())
    except Exception:  # noqa: BLE001 - no driver, no NVML: no GPUs
        return 0


def task_threads() -> int:
    """The threads a task scores with on this worker (:data:`TASK_THREADS_ENV`, else 1)."""
    try:
        return max(1, int(os.environ.get(TASK_THREADS_ENV, "1")))
    except ValueError:
        return 1


@contextlib.contextmanager
def local_cluster(
    backend: str, workers: int | None, tasks: int | None = None
) -> Iterator[tuple[Any, str, str]]:
    """(cluster, task backend, description): ``LocalCUDACluster`` where GPUs and dask-cuda
    are there (and the backend allows), else a ``LocalCluster`` of CPU processes: one a
    core, at most one a task (``tasks``), each task on the cores over the workers."""
    import dask
    from distributed import LocalCluster

    preload = [*dask.config.get("distributed.worker.preload", []), WORKER_PRELOAD]
    quiet = {"silence_logs": logging.ERROR, "preload": preload}
    if backend in ("auto", "cuda"):
        gpus = gpu_count()
        if gpus:
            from dask_cuda import LocalCUDACluster

            n = min(workers, gpus) if workers else gpus
            with _started(LocalCUDACluster, n_workers=n, threads_per_worker=1, **quiet) as cluster:
                yield cluster, "cuda", f"LocalCUDACluster, {n} GPU worker(s)"
            return
        if backend == "cuda":
            n = workers or 1
            with _started(
                LocalCluster, n_workers=n, threads_per_worker=1, processes=True, **quiet
            ) as cluster:
                yield cluster, "cuda", f"LocalCluster, {n} worker(s) on the current GPU"
            return
    from admcuda.backends.cpu import default_threads

    cores = default_threads()
    n = workers or max(1, min(cores, tasks or cores))
    env = {TASK_THREADS_ENV: str(max(1, cores // n))}
    # None unsets a variable of Dask's pre-spawn environment
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = _started(
            LocalCluster, n_workers=n, threads_per_worker=1, processes=True, env=env, **quiet
        )  # fmt: skip
    with cluster:
        yield cluster, "cpu", f"LocalCluster, {n} CPU worker process(es)"


def single_cpu_worker(backend: str, workers: int | None, tasks: int) -> int | None:
    """The cores for running the tasks in this process, where the local cluster that
    :func:`local_cluster` would make is one CPU worker (one task, or ``workers=1``, on
    the CPU backend or without a GPU); None where it would be more, or on a GPU.

    A cluster of one worker runs its tasks one after another as this process would, and
    its start (a scheduler, a worker process, their imports) is about a second and a half
    of a single pair's run."""
    from admcuda.backends.cpu import default_threads

    if backend == "cuda" or (backend == "auto" and gpu_count()):
        return None
    cores = default_threads()
    n = workers or max(1, min(cores, tasks))
    return cores if n == 1 else None


def _started(cluster_class: Any, **kwargs: Any) -> Any:
    """A local cluster, started without distributed's warning that the dashboard's port
    (8787) is taken, by another cluster: it takes another port, which the notice line
    gives."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Port .* is already in use", UserWarning)
        return cluster_class(**kwargs)


@contextlib.contextmanager
def client_for(
    client: Any, scheduler: str | None, backend: str, workers: int | None,
    tasks: int | None = None,
) -> Iterator[tuple[Any, str, str]]:  # fmt: skip
    """(client, task backend, description) for a given client, a scheduler address or
    scheduler file, or a local cluster made here for ``tasks`` tasks (closed on exit)."""
    if client is not None:
        yield client, backend, "the given client"
        return
    from distributed import Client

    if scheduler is not None:
        key = "scheduler_file" if scheduler.endswith(".json") else "address"
        if key == "scheduler_file":
            _check_scheduler_file(scheduler)
        try:
            remote = Client(**{key: scheduler}, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise AdmError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
        with remote:
            yield remote, backend, f"scheduler {scheduler}"
        return
    with local_cluster(backend, workers, tasks) as (cluster, task_backend, text):
        with Client(cluster) as local:
            yield local, task_backend, text


def _check_scheduler_file(path: str) -> None:
    """Refuse a scheduler file that is missing (Dask would wait for it to appear, with no
    end) or holds no scheduler address."""
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdmError(f"scheduler file '{path}' not found") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise AdmError(f"scheduler file '{path}' cannot be read: {exc}") from None
    if not isinstance(info, dict) or not isinstance(info.get("address"), str):
        raise AdmError(f"scheduler file '{path}' holds no scheduler address")


def dashboard(client: Any) -> str | None:
    try:
        link = client.dashboard_link
    except Exception:  # noqa: BLE001 - a scheduler without the HTTP service
        return None
    import importlib.util

    if importlib.util.find_spec("bokeh") is None:
        link += " (pip install bokeh to view it)"
    return link

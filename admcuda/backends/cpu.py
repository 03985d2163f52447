"""CPU backend: the NumPy integer reference, frame by frame, on several processes.

:class:`CpuEngine` is the pipeline's engine (:mod:`admcuda.pipeline`): a batch's frames
are scored by :func:`admcuda.reference.compute_adm`, in this process for small work and
otherwise on a pool of worker processes (``threads``, libvmaf's ``--threads``), one task
per frame pair, while the pipeline reads the next batch. With a feature plan
(:mod:`admcuda.vmaf`: VIF, motion and the models' features) each pair goes through
:func:`admcuda.vmaf.score_pair` instead, every feature over the same frames.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from admcuda.errors import AdmError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["CpuEngine", "default_threads"]

POOL_MIN_PIXELS = 1 << 23
"""A run of fewer pixel pairs than this (about four 1080p frames) is scored in this
process: starting worker processes would cost more than they save."""


def default_threads() -> int:
    """The usable cores of this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent(parent: int) -> None:
    """Have Linux kill this worker when its parent dies, however it dies
    (``PR_SET_PDEATHSIG``): a parent ended by SIGTERM, SIGHUP or SIGKILL runs no cleanup,
    and its workers, waiting for tasks that never come, stayed behind. A worker holds
    nothing that needs tidying, so the signal is SIGKILL. The parent may have died
    before the request took hold: then ``getppid()`` is no longer ``parent`` and the
    worker leaves at once.

    Linux sends the signal when the *thread* that forked the worker ends: the pool is
    forked by the thread that makes the :class:`CpuEngine` (or submits to it after a
    close), which in every admcuda entry point is the thread that runs and closes it."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None).prctl
        prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
        prctl.restype = ctypes.c_int
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the workers outlive a killed parent
        return
    if os.getppid() != parent:
        os._exit(0)


# a worker's (plan, plan without motion, score_pair), sent once when the pool starts
_PLAN: Any = None


def _worker_init(parent: int | None = None, plan: Any = None) -> None:
    """Die with the parent (``parent``: its pid, :func:`_die_with_parent`); leave Ctrl-C
    to the parent, which stops the pool and prints one line (a worker's
    KeyboardInterrupt printed its traceback); and keep freed frame-sized buffers in the
    worker's heap (glibc): the reference allocates many of them per frame, and handing
    each back to the kernel costs page faults and page zeroing that many processes then
    contend for."""
    global _PLAN
    _PLAN = plan
    if parent is not None and sys.platform.startswith("linux"):
        _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, (1 << 31) - 1)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc: keep the allocator's defaults
        pass


def _compute_adm():  # type: ignore[no-untyped-def]
    try:
        from admcuda.reference import compute_adm
    except ImportError as exc:
        raise AdmError(f"the CPU reference is not available: {exc}") from None
    return compute_adm


def _score_pairs(
    ref: np.ndarray, dis: Sequence[np.ndarray], bitdepth: int, opts: Any
) -> list[dict[str, float]]:
    """Frame ``ref`` against each of ``dis``: one dict of outputs per distorted plane."""
    compute_adm = _compute_adm()
    return [
        {name: float(v) for name, v in compute_adm(ref, d, bitdepth, opts).items()} for d in dis
    ]


def _rest_plan(plan: Any) -> Any:
    """``plan`` without its motion extractors, models or prediction: what every rung after
    the first computes (the reference's motion is the same for every rung, computed once
    per frame). The plan is data here: a dataclass with those three fields."""
    import dataclasses

    kept = tuple(ex for ex in plan.extractors if ex.kind != "motion")
    return dataclasses.replace(plan, extractors=kept, models=(), predict=False)


def _score_vmaf(
    plans: Any,
    ref: np.ndarray,
    dis: Sequence[np.ndarray],
    prev: np.ndarray | None,
    prev_prev: np.ndarray | None,
    bitdepth: int,
    scored: bool,
) -> list[dict[str, float]]:
    """One reference frame against each of ``dis`` with a feature plan, through the
    ``score_pair`` the plans came with (:func:`admcuda.vmaf.score_pair`): the first rung
    computes motion with the whole plan, the others the plan without motion, taking the
    first rung's motion outputs."""
    plan, rest, score_pair = plans if plans is not None else _PLAN
    rows: list[dict[str, float]] = []
    for k, d in enumerate(dis):
        if k == 0:
            rows.append(
                score_pair(plan, ref, d, prev, bitdepth, prev_prev_ref=prev_prev, scored=scored)
            )
            continue
        row = score_pair(rest, ref, d, None, bitdepth, scored=scored)
        for name, value in rows[0].items():
            row.setdefault(name, value)
        rows.append(row)
    return rows


class CpuEngine:
    """The reference as a pipeline engine.

    Parameters
    ----------
    width, height, bitdepth : int
    opts : AdmOptions
    threads : int, optional
        Worker processes (default: the usable cores). With 1, or for a run known to be
        smaller than :data:`POOL_MIN_PIXELS`, frames are scored in this process.
    frames : int, optional
        The run's length where known (decides whether a pool pays).
    plan : FeaturePlan, optional
        Compute this plan (:mod:`admcuda.vmaf`: VIF, motion, models' features) in place
        of ``opts``' ADM: each frame pair through ``score_pair``, the previous reference
        planes kept across batches for motion. :meth:`collect` then
        gives every output :func:`admcuda.vmaf.finish_clip` reads, NaN where a frame
        that ``subsample`` passes over has none.
    subsample : int
        With a plan that runs motion, every frame read is given and frames
        ``0, N, 2N, ...`` of the run are scored; the others get motion only.
    batch : int, optional
        Frames per batch with a plan (default as without).
    score_pair : callable, optional
        What scores one frame pair with a plan: :func:`admcuda.vmaf.score_pair` (or a
        function with its signature that worker processes can unpickle), given by the
        caller so that the engine imports nothing above it; required with ``plan``.
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int,
        opts: Any,
        *,
        threads: int | None = None,
        frames: int | None = None,
        plan: Any = None,
        subsample: int = 1,
        batch: int | None = None,
        score_pair: Any = None,
    ) -> None:
        if plan is not None and score_pair is None:
            raise AdmError("a CpuEngine with a plan needs score_pair (admcuda.vmaf.score_pair)")
        self.width, self.height, self.bitdepth, self.opts = width, height, bitdepth, opts
        self.threads = max(1, threads if threads is not None else default_threads())
        small = frames is not None and frames * width * height < POOL_MIN_PIXELS
        self._use_pool = self.threads > 1 and not small
        self.batch = 4 * self.threads if self._use_pool else 8
        self.plan = plan
        self._plans = None if plan is None else (plan, _rest_plan(plan), score_pair)
        self._keys = [] if plan is None else plan.pair_keys()
        self.subsample = subsample
        self._index = 0  # frames submitted so far (with a plan)
        self._prevs: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
        if plan is not None and batch is not None:
            self.batch = batch
        self._pool: ProcessPoolExecutor | None = None
        if self._use_pool:
            self._start_pool()

    def host_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def _start_pool(self) -> None:
        """Fork the workers now, before the pipeline starts its threads. Fork, not spawn:
        spawn re-imports the caller's main module, which breaks a plain script without a
        ``__main__`` guard; the workers run NumPy only, never CUDA, so a parent that
        initialised CUDA is no obstacle."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self._pool = ProcessPoolExecutor(
            self.threads,
            mp_context=multiprocessing.get_context(method),
            initializer=_worker_init,
            initargs=(os.getpid(), self._plans),
        )
        self._pool.submit(int).result()  # with fork, every worker starts at the first task

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._start_pool()
        assert self._pool is not None
        return self._pool

    def submit(self, ref: np.ndarray, dis: Sequence[np.ndarray], frames: int) -> Any:
        """Score ``frames`` pairs per distorted input; on the pool, asynchronously."""
        if self.plan is not None:
            return self._submit_plan(ref, dis, frames)
        if not self._use_pool:
            return (ref, dis, frames)  # scored in collect, so reading overlaps scoring
        pool = self._executor()
        return [
            pool.submit(_score_pairs, ref[i].copy(), [d[i].copy() for d in dis], self.bitdepth,
                        self.opts)
            for i in range(frames)
        ]  # fmt: skip

    def _submit_plan(self, ref: np.ndarray, dis: Sequence[np.ndarray], frames: int) -> Any:
        """Each frame with the reference planes read before it: the batch's own, and the
        last two of the batches before (kept as copies: the slot is reused)."""
        history = self.plan.history
        planes: list[np.ndarray | None] = [*self._prevs, *(ref[i] for i in range(frames))]
        first = self._index
        self._index += frames
        if history:
            self._prevs = tuple(  # type: ignore[assignment]
                None if p is None else np.array(p, copy=True) for p in planes[-2:]
            )
        scored = [(first + i) % self.subsample == 0 for i in range(frames)]

        def prevs(i: int) -> tuple[np.ndarray | None, np.ndarray | None]:
            if not history:
                return None, None
            return planes[i + 1], (planes[i] if history > 1 else None)

        if not self._use_pool:
            # scored in collect (reading overlaps scoring); the slot is held until then
            prior = [prevs(i) for i in range(frames)]
            return ("plan", ref, dis, frames, prior, scored)
        pool = self._executor()
        tasks = []
        for i in range(frames):
            prev, prev_prev = (None if p is None else p.copy() for p in prevs(i))
            tasks.append(pool.submit(
                _score_vmaf, None, ref[i].copy(), [d[i].copy() for d in dis], prev, prev_prev,
                self.bitdepth, scored[i],
            ))  # fmt: skip
        return tasks

    def collect(self, ticket: Any) -> list[dict[str, np.ndarray]]:
        if self.plan is not None:
            if isinstance(ticket, list):
                return _plan_arrays([t.result() for t in ticket], self._keys)
            _, ref, dis, frames, prior, scored = ticket
            rows = [
                _score_vmaf(self._plans, ref[i], [d[i] for d in dis], *prior[i], self.bitdepth,
                            scored[i])
                for i in range(frames)
            ]  # fmt: skip
            return _plan_arrays(rows, self._keys)
        if isinstance(ticket, tuple):
            ref, dis, frames = ticket
            rows = [_score_pairs(ref[i], [d[i] for d in dis], self.bitdepth, self.opts)
                    for i in range(frames)]  # fmt: skip
        else:
            rows = [t.result() for t in ticket]
        sets = len(rows[0]) if rows else 0
        out = []
        for m in range(sets):
            keys = list(rows[0][m])
            values = np.array([[r[m][k] for k in keys] for r in rows], dtype=np.float64)
            out.append({k: values[:, j] for j, k in enumerate(keys)})
        return out

    def close(self) -> None:
        self._prevs = (None, None)
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self) -> CpuEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plan_arrays(
    rows: list[list[dict[str, float]]], names: Sequence[str]
) -> list[dict[str, np.ndarray]]:
    """Per distorted input, each output over the batch's frames, ``names`` first (every
    batch gives the same outputs); NaN where a frame has no such output (one that
    ``--subsample`` passes over: motion only)."""
    sets = len(rows[0]) if rows else 0
    out = []
    for m in range(sets):
        keys = list(dict.fromkeys([*names, *(k for r in rows for k in r[m])]))
        values = np.array([[r[m].get(k, np.nan) for k in keys] for r in rows], dtype=np.float64)
        out.append({k: values[:, j] for j, k in enumerate(keys)})
    return out

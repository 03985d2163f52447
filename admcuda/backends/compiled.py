"""CPU backend, compiled: the Numba kernels of :mod:`admcuda.compiled` in this process.

:class:`CompiledEngine` is a pipeline engine (:mod:`admcuda.pipeline`) like
:class:`admcuda.backends.cpu.CpuEngine`, with the same doubles: each batch's integer
accumulators come from the compiled ADM, VIF and motion kernels, spread over Numba's
threads (``--threads``: cores, as in libvmaf), and the float finish is the host finish the
CUDA engine uses (:class:`admcuda.backends.cuda.finish.BatchFinish`,
:mod:`admcuda.backends.host`). A batch is computed on a thread of its own while the
pipeline reads the next one (the kernels release the GIL); no frame is copied to another
process.

:func:`usable` says where it runs: Numba installed, ``ADMCUDA_CPU_ENGINE`` not
``numpy``, and frames the kernels take (ADM above 32 rows and columns, VIF 16 and up);
elsewhere, for runs too short to repay the kernels' loading, and for streams of unknown
length while the kernels are not yet compiled on this machine, the CPU backend keeps the
NumPy reference.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CompiledEngine", "usable"]

ENV = "ADMCUDA_CPU_ENGINE"
"""``numpy`` keeps the CPU backend on the NumPy reference; ``compiled`` asks for the
compiled engine wherever it can run, short runs included; unset: compiled for runs of at
least :data:`MIN_PIXELS` pixel pairs."""

MIN_PIXELS = 1 << 22
"""A run of fewer pixel pairs (two 1080p frames) stays on the NumPy reference, which
starts faster than the compiled kernels load."""


def usable(width: int, height: int, plan: Any, frames: int | None) -> bool:
    """Whether the CPU backend should run :class:`CompiledEngine` for this run."""
    from admcuda.compiled import available

    choice = os.environ.get(ENV, "").strip().lower()
    if choice == "numpy" or not available():
        return False
    kinds = {"adm"} if plan is None else {ex.kind for ex in plan.extractors}
    if "adm" in kinds and (width <= 32 or height <= 32):
        return False  # frames 17..32 high: scale 3 reads a row the reference models
    if "vif" in kinds and (width < 16 or height < 16):
        return False
    if choice == "compiled":
        return True
    if frames is None:  # a stream of unknown length: compiled if nothing is to compile
        from admcuda.compiled import cached

        return cached() is True
    return frames * width * height >= MIN_PIXELS


def _set_threads(threads: int) -> None:
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def _load_kernels(bitdepth: int, kinds: tuple[str, ...]) -> None:
    """Load (or compile) the kernels of ``kinds`` of features for ``bitdepth``."""
    from admcuda.compiled import warm_up

    warm_up((bitdepth,), tuple(k for k in kinds if k in ("adm", "vif", "motion")))


@dataclass
class _Ticket:
    future: Future
    frames: int


class CompiledEngine:
    """ADM alone (``plan`` None: per input the 18 outputs by base name, as
    :class:`admcuda.backends.cuda.CudaAdm` gives them) or a feature plan (the outputs
    :func:`admcuda.vmaf.score_pair` gives), computed by the compiled kernels.

    Parameters
    ----------
    width, height, bitdepth : int
    opts : AdmOptions
        ADM's options when there is no plan.
    threads : int
        Numba threads (default: the usable cores).
    plan : FeaturePlan, optional
    subsample : int
        With motion in the plan, every frame read is given and frames ``0, N, 2N, ...``
        are scored; the others get motion's outputs only.
    batch : int, optional
        Frames per batch (default: 2 per thread, at least 8).
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int,
        opts: Any,
        *,
        threads: int | None = None,
        plan: Any = None,
        subsample: int = 1,
        batch: int | None = None,
    ) -> None:
        from admcuda.backends.cpu import default_threads
        from admcuda.backends.cuda.finish import BatchFinish
        from admcuda.backends.cuda.geometry import scale_geometries
        from admcuda.backends.host import plan_vif_options

        self.width, self.height, self.bitdepth, self.opts = width, height, bitdepth, opts
        self.threads = max(1, threads if threads is not None else default_threads())
        self.batch = batch if batch is not None else max(8, 2 * self.threads)
        self.plan = plan
        self.subsample = subsample if plan is not None and plan.needs_every_frame else 1
        adm_opts = [opts] if plan is None else [ex.options for ex in plan.extractors
                                                  if ex.kind == "adm"]  # fmt: skip
        self._adm = [(o, BatchFinish(scale_geometries(width, height, o), o, width, height))
                     for o in adm_opts]  # fmt: skip
        self._vif = [] if plan is None else plan_vif_options(plan.extractors)
        motion = [] if plan is None else [ex for ex in plan.extractors if ex.kind == "motion"]
        self._motion_ex = motion
        self._backs = sorted({ex.history for ex in motion if ex.history})
        self._prevs: list[np.ndarray] = []  # the last two reference planes read
        self._index = 0
        # Numba's thread count is the calling thread's own: set it on the worker that runs
        # the kernels, not here. The worker imports Numba and loads this run's kernels
        # first (from the disk cache: about half a second, most of the start-up), while
        # the pipeline opens the inputs and reads the first frames.
        self._worker = ThreadPoolExecutor(
            1, thread_name_prefix="admcuda-compiled", initializer=_set_threads,
            initargs=(self.threads,),
        )  # fmt: skip
        kinds = ("adm",) if plan is None else tuple(sorted({ex.kind for ex in plan.extractors}))
        self._loading: Future | None = self._worker.submit(_load_kernels, bitdepth, kinds)

    def host_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype=dtype)

    def submit(self, ref: np.ndarray, dis: Sequence[np.ndarray], frames: int) -> _Ticket:
        """Start a batch on the engine's thread; the planes must stay as they are until
        :meth:`collect` (the pipeline's slots do)."""
        n = frames
        first = self._index
        self._index += n
        prevs = list(self._prevs)
        if self._backs:
            keep = [*prevs, *(ref[i] for i in range(max(0, n - 2), n))][-2:]
            self._prevs = [np.array(p, copy=True) for p in keep]
        future = self._worker.submit(self._compute, ref, list(dis), n, first, prevs)
        return _Ticket(future, n)

    def collect(self, ticket: _Ticket) -> list[dict[str, np.ndarray]]:
        if self._loading is not None:  # a failure to load raises here, not only later
            loading, self._loading = self._loading, None
            loading.result()
        return ticket.future.result()

    # -- the batch

    def _adm_outputs(
        self, ref: np.ndarray, dis: list[np.ndarray], k: int
    ) -> list[dict[str, np.ndarray]]:
        """ADM extractor ``k``'s outputs for each of ``dis``, the reference's wavelet levels
        computed once for all of them."""
        from admcuda.compiled.adm import adm_accumulators_ladder

        opts, finish = self._adm[k]
        return [finish(acc) for acc in adm_accumulators_ladder(ref, dis, self.bitdepth, opts)]

    def _compute(
        self, ref: np.ndarray, dis: list[np.ndarray], n: int, first: int, prevs: list[np.ndarray]
    ) -> list[dict[str, np.ndarray]]:
        ref = ref[:n]
        dis = [d[:n] for d in dis]
        if self.plan is None:
            return self._adm_outputs(ref, dis, 0)
        from admcuda.backends.host import motion_scores, plan_rows

        scored = np.array([i for i in range(n) if (first + i) % self.subsample == 0], np.int64)
        ns = len(scored)
        ref_s = ref if ns == n else ref[scored]
        dis_s = dis if ns == n else [d[scored] for d in dis]
        adm = [self._adm_outputs(ref_s, dis_s, k) for k in range(len(self._adm))]
        vif = None
        if self._vif and ns:
            from admcuda.compiled.vif import vif_accumulators_batch

            # Every VIF extractor from one filtering (a model and its NEG twin differ in
            # the gain limit only); scale 0 is left out only where all of them skip it,
            # and zeroed afterwards for those that do.
            egls = np.array([o.vif_enhn_gain_limit for o in self._vif], np.float64)
            skips = np.array([bool(o.vif_skip_scale0) for o in self._vif])
            parts = []
            for d in dis_s:
                acc = vif_accumulators_batch(ref_s, d, self.bitdepth, egls, bool(skips.all()))
                acc[:, skips, 0] = 0
                parts.append(acc.transpose(1, 0, 2, 3))  # (extractors, ns, 4, 4)
            vif = np.stack(parts)
        sad = self._sads(ref, n, first, prevs)
        motion = motion_scores(sad, self._backs, first, self._motion_ex, self.width, self.height)
        return plan_rows(self.plan, n, scored, len(dis), adm, vif, motion)

    def _sads(self, ref: np.ndarray, n: int, first: int, prevs: list[np.ndarray]) -> np.ndarray:
        """Each frame's motion SAD against the plane ``back`` frames before it, per back
        in :attr:`_backs` (0 where there is none)."""
        sad = np.zeros((max(len(self._backs), 1), n), np.uint64)
        if not self._backs:
            return sad
        from admcuda.compiled.motion import motion_sad

        planes = [*prevs, *(ref[i] for i in range(n))]
        off = len(prevs)
        for k, back in enumerate(self._backs):
            for i in range(n):
                if first + i >= back and off + i - back >= 0:
                    sad[k, i] = motion_sad(planes[off + i - back], ref[i], self.bitdepth)
        return sad

    def close(self) -> None:
        self._worker.shutdown(wait=True, cancel_futures=True)
        self._prevs = []

    def __enter__(self) -> CompiledEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

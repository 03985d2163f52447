"""The CUDA engine of a feature plan (:mod:`admcuda.vmaf`): ADM, VIF and motion of every
frame on the GPU, the float finish and the models on the host.

:class:`CudaVmaf` is a pipeline engine (:mod:`admcuda.pipeline`), as
:class:`admcuda.backends.cpu.CpuEngine` is with a plan, and gives the same doubles. Per
batch each input crosses to the device once, on a copy stream; then, on the compute
stream, motion's SADs of the reference (:class:`.vifmotion.CudaMotion`, which keeps the
last two reference planes on the device across batches), each ADM extractor's chain
(:class:`.engine.CudaAdm`, fed the device planes) and each distorted input's VIF
(:class:`.vifmotion.CudaVif`); the integer accumulators come back to page-locked host
buffers, and :meth:`CudaVmaf.collect` finishes them into the outputs that
:func:`admcuda.vmaf.score_pair` gives. With ``--subsample N`` and motion, every frame's
motion is computed and the frames ``0, N, 2N, ...`` of the run alone are gathered for ADM
and VIF; the others get NaN there, as on the CPU backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from admcuda.backends.host import motion_scores, plan_rows, plan_vif_options

from .engine import CudaAdm, CudaAdmError, check_submission, cuda_available
from .hostmem import HostBlock, pinned_array, registered
from .vifmotion import CudaMotion, CudaVif

__all__ = ["CudaVmaf", "check_plan_size"]

_RING = 3  # host result buffers: one being finished, one in flight, one spare


def _is_cupy(x: Any) -> bool:
    return type(x).__module__.startswith("cupy")


@dataclass
class _Ticket:
    ring: int
    frames: int
    sets: int
    first: int
    scored: np.ndarray  # indices of the batch's frames that ADM and VIF scored
    adm: list[Any] = field(default_factory=list)


class CudaVmaf:
    """A :class:`admcuda.vmaf.FeaturePlan` for one frame size on one GPU, a batch at a time.

    Parameters
    ----------
    width, height, bitdepth : int
    plan : FeaturePlan
    batch : int
        Frames per batch; lowered where the ADM buffers do not fit in device memory.
    device : int, optional
        CUDA device ordinal.
    subsample : int
        With motion in the plan, every frame read is given and frames ``0, N, 2N, ...``
        of the run are scored; the others get motion's outputs only.

    Raises
    ------
    CudaAdmError
        No usable GPU, or too little device memory.
    ValueError
        A frame size or bit depth the GPU path does not take (ADM needs both sides above
        16, VIF 16 or more).
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int,
        plan: Any,
        *,
        batch: int = 64,
        device: int | None = None,
        subsample: int = 1,
    ) -> None:
        check_plan_size(width, height, plan)
        if not cuda_available():
            raise CudaAdmError("no CUDA device is available (CuPy missing or no GPU visible)")
        import cupy as cp

        self._cp = cp
        self.width, self.height, self.bitdepth = width, height, bitdepth
        self.dtype = np.dtype(np.uint8 if bitdepth == 8 else np.uint16)
        self.plan = plan
        self.subsample = subsample if plan.needs_every_frame else 1
        exs = plan.extractors
        self._adm_ex = [ex for ex in exs if ex.kind == "adm"]
        self._motion_ex = [ex for ex in exs if ex.kind == "motion"]
        self._vif_opts = plan_vif_options(exs)
        self._backs = sorted({ex.history for ex in self._motion_ex if ex.history})
        self._device = cp.cuda.Device(device if device is not None else cp.cuda.Device().id)
        self._host_blocks: list[Any] = []
        self._pinned: list[tuple[int, int]] = []
        self._index = 0
        self._adms: list[CudaAdm] = []
        try:
            with self._device:
                self._compute = cp.cuda.Stream(non_blocking=True)
                self._copy = cp.cuda.Stream(non_blocking=True)
                for ex in self._adm_ex:
                    adm = CudaAdm(width, height, bitdepth, ex.options, batch=batch, device=device)
                    self._adms.append(adm)
                    batch = min(batch, adm.batch)
                self.batch = batch
                self._vif = CudaVif(width, height, bitdepth, batch) if self._vif_opts else None
                self._motion = (
                    CudaMotion(width, height, bitdepth, self._backs) if self._backs else None
                )
                self._d_ref = [cp.empty((batch, height, width), self.dtype) for _ in range(2)]
                self._d_dis: list[list[Any]] = [[], []]
                self._copied = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
                self._free = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
                for ev in self._copied + self._free:
                    ev.record(self._compute)
                self._slot = 0
                self._sets = 0
                self._ring_next = 0
                self._ring_busy = [False] * _RING
                self._ready = [cp.cuda.Event(disable_timing=True) for _ in range(_RING)]
                self._host_vif: list[Any] = [None] * _RING
                self._host_sad: list[Any] = [None] * _RING
                self._dev_vif: Any = None
                self._dev_sad = cp.zeros((max(len(self._backs), 1), batch), np.uint64)
                self._device.synchronize()
        except cp.cuda.memory.OutOfMemoryError as exc:
            self.close()
            raise CudaAdmError(
                f"not enough GPU memory for VMAF at {width}x{height}: {exc}"
            ) from None
        except BaseException:
            self.close()
            raise

    # -- memory

    def pinned_empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A page-locked NumPy array that :meth:`submit` uploads without a copy."""
        arr, block = pinned_array(shape, dtype)
        self._host_blocks.append(block)
        self._pinned.append((arr.ctypes.data, arr.ctypes.data + arr.nbytes))
        return arr

    host_empty = pinned_empty

    def device_empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A CuPy array on this engine's GPU, for planes that are already there (NVDEC)."""
        with self._device:
            return self._cp.empty(shape, dtype=dtype)

    def reserve(self, sets: int) -> None:
        """Make the device inputs and host result buffers for ``sets`` distorted inputs."""
        with self._device:
            self._grow(sets)
            for adm in self._adms:
                adm.reserve(sets)

    def _grow(self, sets: int) -> None:
        cp = self._cp
        if sets <= self._sets:
            return
        self._compute.synchronize()
        shape = (self.batch, self.height, self.width)
        for slot in range(2):
            while len(self._d_dis[slot]) < sets:
                self._d_dis[slot].append(cp.empty(shape, self.dtype))
        k = max(len(self._vif_opts), 1)
        self._dev_vif = cp.zeros((sets, k, self.batch, 4, 4), np.int64)
        for r in range(_RING):
            arr, block = pinned_array(self._dev_vif.shape, np.int64)
            self._host_blocks.append(block)
            self._host_vif[r] = arr
            arr, block = pinned_array(self._dev_sad.shape, np.uint64)
            self._host_blocks.append(block)
            self._host_sad[r] = arr
        self._sets = sets

    def _is_pinned(self, arr: np.ndarray) -> bool:
        """Whether ``arr`` is page-locked: in this engine's blocks or any registered one
        (a read-ahead's, :func:`~admcuda.backends.cuda.hostmem.early_block`)."""
        lo = arr.ctypes.data
        hi = lo + arr.nbytes
        return any(a <= lo and hi <= b for a, b in self._pinned) or registered(arr)

    def _upload(self, src: Any, n: int, dst: Any) -> Any:
        """``src``'s first ``n`` frames on the device: CuPy input as it is, host input
        copied into ``dst`` on the copy stream."""
        cp = self._cp
        if _is_cupy(src):
            return cp.ascontiguousarray(src[:n])
        src = np.ascontiguousarray(src[:n])
        view = dst[:n]
        if self._is_pinned(src):
            h2d = cp.cuda.runtime.memcpyHostToDevice
            cp.cuda.runtime.memcpyAsync(
                view.data.ptr, src.ctypes.data, src.nbytes, h2d, self._copy.ptr
            )
        else:
            view.set(src, stream=self._copy)
        return view

    # -- one batch in, one batch out

    def submit(self, ref: Any, dis: Sequence[Any], frames: int | None = None) -> _Ticket:
        """Queue one batch (``frames`` of ``ref`` and of each of ``dis``) and return at once."""
        cp = self._cp
        geometry = (self.width, self.height, self.dtype, self.bitdepth)
        ref, dis, n = check_submission(ref, dis, frames, self.batch, *geometry)
        ring = self._ring_next
        if self._ring_busy[ring]:
            raise RuntimeError("too many batches in flight: collect one first")
        self._ring_next = (ring + 1) % _RING
        sets = len(dis)
        first = self._index
        self._index += n
        scored = np.array(
            [i for i in range(n) if (first + i) % self.subsample == 0], dtype=np.int64
        )
        ticket = _Ticket(ring, n, sets, first, scored)
        with self._device:
            self._grow(sets)
            if any(_is_cupy(x) for x in (ref, *dis)):
                ready = cp.cuda.Event(disable_timing=True)
                ready.record(cp.cuda.get_current_stream())
                self._compute.wait_event(ready)
                self._copy.wait_event(ready)
            slot = self._slot
            self._slot ^= 1
            self._copy.wait_event(self._free[slot])  # the batch before last is done with it
            ref_d = self._upload(ref, n, self._d_ref[slot])
            dis_d = [self._upload(d, n, self._d_dis[slot][m]) for m, d in enumerate(dis)]
            self._copied[slot].record(self._copy)
            self._compute.wait_event(self._copied[slot])
            with self._compute:
                # zeroed by memsets: a slice's fill() would load one of CuPy's own kernels
                memset = cp.cuda.runtime.memsetAsync
                stream = self._compute.ptr
                sad = self._dev_sad[:, :n]
                if self._motion is not None:
                    memset(self._dev_sad.data.ptr, 0, self._dev_sad.nbytes, stream)
                    self._motion.queue(ref_d, n, sad)
                ns = len(scored)
                if ns:
                    if ns < n:
                        idx = cp.asarray(scored)
                        ref_s, dis_s = ref_d[idx], [d[idx] for d in dis_d]
                    else:
                        ref_s, dis_s = ref_d, dis_d
                    for adm in self._adms:
                        ticket.adm.append(adm.submit(ref_s, dis_s, ns))
                    if self._vif is not None:
                        acc = self._dev_vif[:sets, :, :ns]
                        memset(self._dev_vif.data.ptr, 0, self._dev_vif.nbytes, stream)
                        for m, d in enumerate(dis_s):
                            self._vif.queue(ref_s, d, ns, acc[m], self._vif_opts)
                for adm, t in zip(self._adms, ticket.adm, strict=False):
                    # ADM runs on streams of its own: our inputs are free once it is done
                    self._compute.wait_event(adm._acc_ready[t.slot])
                self._free[slot].record(self._compute)
                copy = cp.cuda.runtime.memcpyAsync
                d2h = cp.cuda.runtime.memcpyDeviceToHost
                if self._vif is not None and ns:
                    copy(self._host_vif[ring].ctypes.data, self._dev_vif.data.ptr,
                         self._dev_vif.nbytes, d2h, stream)  # fmt: skip
                copy(self._host_sad[ring].ctypes.data, self._dev_sad.data.ptr,
                     self._dev_sad.nbytes, d2h, stream)  # fmt: skip
                self._ready[ring].record(self._compute)
        self._ring_busy[ring] = True
        return ticket

    def collect(self, ticket: _Ticket) -> list[dict[str, np.ndarray]]:
        """Wait for a submitted batch; per distorted input, every output
        :func:`admcuda.vmaf.score_pair` gives, as float64 arrays over the batch's frames
        (NaN for ADM and VIF on frames that ``subsample`` passes over)."""
        self._ready[ticket.ring].synchronize()
        n, ns, sets = ticket.frames, len(ticket.scored), ticket.sets
        vif = self._host_vif[ticket.ring][:sets, :, :ns].copy() if self._vif and ns else None
        sad = self._host_sad[ticket.ring][:, :n].copy()
        self._ring_busy[ticket.ring] = False
        # no ADM ticket where --subsample scored none of the batch's frames
        adm = [a.collect(t) for a, t in zip(self._adms, ticket.adm, strict=False)]
        motion = motion_scores(sad, self._backs, ticket.first, self._motion_ex, self.width,
                               self.height)  # fmt: skip
        return plan_rows(self.plan, n, ticket.scored, sets, adm, vif, motion)

    def close(self) -> None:
        """Release the device and host buffers; the engine is unusable after."""
        for adm in getattr(self, "_adms", []):
            adm.close()
        self._adms = []
        with contextlib.suppress(Exception), self._device:
            self._device.synchronize()
        for block in self._host_blocks:
            if isinstance(block, HostBlock):
                block.release()
        self._host_blocks.clear()
        self._pinned.clear()
        for name in ("_d_ref", "_d_dis", "_dev_vif", "_dev_sad", "_vif", "_motion"):
            if hasattr(self, name):
                setattr(self, name, None)

    def __enter__(self) -> CudaVmaf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_plan_size(width: int, height: int, plan: Any) -> None:
    """Refuse, as ValueError, a frame size the GPU path does not take for ``plan``."""
    kinds = {ex.kind for ex in plan.extractors}
    if "adm" in kinds and (width <= 16 or height <= 16):
        raise ValueError(
            f"frame {width}x{height} is too small: ADM needs width and height above 16"
        )
    if "vif" in kinds and (width < 16 or height < 16):
        raise ValueError(f"frame {width}x{height} is too small for VIF on the GPU (16x16 or more)")
    if width < 3 or height < 3:
        raise ValueError(f"frame {width}x{height} is too small for motion (3x3 or more)")

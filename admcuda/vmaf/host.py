"""Every host feature of a plan over the pipeline's batches: PSNR, SSIM, MS-SSIM, CAMBI,
speed_chroma, float_moment, float_psnr, float_motion, ciede, psnr_hvs, speed_temporal,
float_ansnr, float_vif, float_adm.

:class:`HostFeatures` is the pipeline's ``host`` (:func:`admcuda.pipeline.run`): built
once the inputs are open, before any frame is read, and called with each slot after it
is handed to the engine. PSNR is computed by :class:`admcuda.vmaf.psnr.HostPsnr` (luma
and, where it scores them, chroma); ``float_ssim``, ``float_ms_ssim`` and ``cambi`` by the
compiled kernels of :mod:`admcuda.compiled.ssim` and :mod:`admcuda.compiled.cambi`, on the
luma planes, ``speed_chroma`` by :mod:`admcuda.compiled.speed` on the chroma planes, and
``float_moment``, ``float_psnr``, ``float_ansnr``, ``float_vif`` and ``float_adm`` by
:mod:`admcuda.vmaf.moment`, :mod:`admcuda.vmaf.float_psnr`, :mod:`admcuda.vmaf.float_ansnr`
and :mod:`admcuda.vmaf.float_vif` (NumPy, no Numba) on the luma planes, ``ciede`` by
:mod:`admcuda.compiled.ciede` and ``psnr_hvs`` by :mod:`admcuda.vmaf.psnr_hvs` (NumPy) on
the luma and chroma planes, one frame a task on a thread pool: the kernels and NumPy's
array work release the GIL and each frame's numbers are computed in the same order
whatever thread runs it, so they are the same doubles as one frame after another.
``float_motion`` (:class:`admcuda.vmaf.float_motion.MotionRun`) reads the reference
alone, frame after frame: the frames of a batch are blurred side by side, a few at a time,
and each frame's score takes the previous frame's blurred pictures, kept from one batch to
the next. ``speed_temporal``
(:class:`admcuda.vmaf.speed_temporal.TemporalRun`, the kernels of
:mod:`admcuda.compiled.speed`) scores each frame of a batch against the frame before, on
the threads side by side, keeping the last reference and distorted frames for the next
batch; the frames ``subsample`` passes over are not computed.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import plane_shapes
from admcuda.vmaf import cambi as _cambi
from admcuda.vmaf import ciede as _ciede
from admcuda.vmaf import float_adm as _float_adm
from admcuda.vmaf import float_ansnr as _float_ansnr
from admcuda.vmaf import float_motion as _float_motion
from admcuda.vmaf import float_vif as _float_vif
from admcuda.vmaf import psnr_hvs as _psnr_hvs
from admcuda.vmaf import speed as _speed
from admcuda.vmaf import speed_temporal as _speed_temporal
from admcuda.vmaf.float_psnr import FLOAT_PSNR_KIND, float_psnr_frame
from admcuda.vmaf.moment import MOMENT_KIND, moment_frame
from admcuda.vmaf.plan import FeaturePlan
from admcuda.vmaf.psnr import HostPsnr
from admcuda.vmaf.ssim import SSIM_KINDS, check_size, kernels, ssim_frame

__all__ = ["HostFeatures"]

_log = logging.getLogger("admcuda")

# The per-frame host features computed with NumPy alone (no Numba kernels to load).
_NUMPY_KINDS = frozenset(
    {
        MOMENT_KIND,
        FLOAT_PSNR_KIND,
        _psnr_hvs.PSNR_HVS_KIND,
        _float_ansnr.FLOAT_ANSNR_KIND,
        _float_vif.FLOAT_VIF_KIND,
        _float_adm.FLOAT_ADM_KIND,
    }
)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class HostFeatures:
    """The plan's host features over the pipeline's batches.

    Parameters
    ----------
    plan : FeaturePlan
        The run's plan (for 4:0:0 inputs, its :meth:`FeaturePlan.for_pixel_format`).
    width, height : int
    pixel_format : {"420", "422", "444", "400"}
    bitdepth : int
    threads : int, optional
        Threads scoring the frames of SSIM, MS-SSIM, CAMBI, speed_chroma, float_moment,
        float_psnr, ciede, psnr_hvs, speed_temporal, float_ansnr, float_vif and float_adm
        side by side (default: the usable cores).
    inputs : sequence of str, optional
        The run's input files, given where it may write CAMBI's ``heatmaps_path`` files
        (:class:`admcuda.vmaf.cambi.Heatmaps`, which are never one of them): a run of one
        distorted input (``distorted``) scoring every frame (``subsample`` 1). Call
        :meth:`close` when the run ends.
    distorted, subsample : int, optional
        ``subsample``: libvmaf's ``--subsample``, the frames handed to :meth:`compute` being
        every frame read where a temporal feature runs; speed_temporal leaves the others
        out (NaN).

    Attributes
    ----------
    chroma_size : int
        Samples of both chroma planes of a frame the pipeline reads beside the luma plane
        (PSNR's, speed_chroma's, float_motion's with ``motion_add_uv``, ciede's,
        psnr_hvs'); 0 where no extractor reads chroma.

    Raises
    ------
    AdmError
        Before any frame is read: SSIM or MS-SSIM without Numba, MS-SSIM on frames under
        176 samples a side, ``heatmaps_path`` where it cannot be written, an input
        float_motion, ciede, psnr_hvs, speed_temporal, float_ansnr, float_vif or float_adm
        does not score
        (:func:`admcuda.vmaf.float_motion.check_size`, :func:`admcuda.vmaf.ciede.check_size`,
        :func:`admcuda.vmaf.psnr_hvs.check_size`,
        :func:`admcuda.vmaf.speed_temporal.check_size`,
        :func:`admcuda.vmaf.float_ansnr.check_size`,
        :func:`admcuda.vmaf.float_vif.check_size`,
        :func:`admcuda.vmaf.float_adm.check_size`).
    """

    def __init__(
        self,
        plan: FeaturePlan,
        width: int,
        height: int,
        pixel_format: str,
        bitdepth: int,
        *,
        threads: int | None = None,
        inputs: Sequence[str | os.PathLike[str]] | None = None,
        distorted: int = 1,
        subsample: int = 1,
    ) -> None:
        hosted = plan.host_extractors
        psnr = tuple(ex for ex in hosted if ex.kind == "psnr")
        per_frame = (
            *SSIM_KINDS, _cambi.CAMBI_KIND, _speed.SPEED_KIND, _ciede.CIEDE_KIND, *_NUMPY_KINDS
        )  # fmt: skip
        self.ssim = tuple(ex for ex in hosted if ex.kind in per_frame)
        # the extractors run by Numba kernels, speed_temporal's too (float_moment's,
        # float_psnr's, psnr_hvs', float_ansnr's, float_vif's and float_adm's are NumPy's)
        temporal = [ex for ex in hosted if ex.kind == _speed_temporal.SPEED_TEMPORAL_KIND]
        self.compiled = tuple(ex for ex in self.ssim if ex.kind not in _NUMPY_KINDS)
        self.compiled += tuple(temporal)
        for ex in self.ssim:
            if ex.kind == _psnr_hvs.PSNR_HVS_KIND:
                _psnr_hvs.check_size(pixel_format, bitdepth)
        if any(ex.kind == _float_ansnr.FLOAT_ANSNR_KIND for ex in hosted):
            _float_ansnr.check_size(width, height)
        for ex in hosted:
            if ex.kind == _float_vif.FLOAT_VIF_KIND:
                _float_vif.check_size(ex.options, width, height)  # type: ignore[arg-type]
        if any(ex.kind == _float_adm.FLOAT_ADM_KIND for ex in hosted):
            _float_adm.check_size(width, height)
        motion = [ex for ex in hosted if ex.kind == _float_motion.FLOAT_MOTION_KIND]
        for ex in motion:
            _float_motion.check_size(ex.options, width, height, pixel_format)  # type: ignore[arg-type]
        self.motion = tuple(_float_motion.MotionRun(ex, bitdepth) for ex in motion)
        for ex in temporal:
            _speed_temporal.check_size(ex.options, width, height)  # type: ignore[arg-type]
        self.temporal = tuple(
            _speed_temporal.TemporalRun(ex, bitdepth, subsample) for ex in temporal
        )
        self.bitdepth = bitdepth
        self.psnr = (
            HostPsnr(
                dataclasses.replace(plan, extractors=psnr), width, height, pixel_format, bitdepth
            )  # fmt: skip
            if psnr
            else None
        )
        self.shapes = plane_shapes(width, height, pixel_format)
        wants = plan.chroma_wanted(pixel_format) and len(self.shapes) == 3
        self.chroma_size = 2 * self.shapes[1][0] * self.shapes[1][1] if wants else 0
        self.threads = max(1, threads if threads is not None else _cores())
        self._loading: threading.Thread | None = None
        self._failed: list[BaseException] = []
        self._heatmaps: dict[int, _cambi.Heatmaps] = {}
        self._next = 0  # the index of the next frame computed
        if self.compiled:
            for ex in self.compiled:
                if ex.kind == _speed.SPEED_KIND:
                    _speed.check_size(ex.options, width, height, pixel_format)
                if ex.kind == _ciede.CIEDE_KIND:
                    _ciede.check_size(width, height, pixel_format, bitdepth)
            check_size(self.compiled, width, height)
            from admcuda.compiled import available

            if not available():
                loaders = {
                    _cambi.CAMBI_KIND: _cambi.kernels,
                    _speed.SPEED_KIND: _speed.kernels,
                    _ciede.CIEDE_KIND: _ciede.kernels,
                    _speed_temporal.SPEED_TEMPORAL_KIND: _speed_temporal.kernels,
                }
                for ex in self.compiled:
                    loaders.get(ex.kind, kernels)()  # one line
            try:
                for i, ex in enumerate(self.ssim):
                    if ex.kind == _cambi.CAMBI_KIND:
                        run = _cambi.run_for(ex.options, width, height, bitdepth)  # refusals
                        if ex.options.heatmaps_path is not None:
                            self._check_heatmaps(inputs, distorted, subsample)
                            self._heatmaps[i] = _cambi.Heatmaps(run, inputs or ())
            except BaseException:
                self.close()
                raise
            self._notice()
            # Numba's import and the kernels' cache load overlap the first batches' reading
            self._loading = threading.Thread(
                target=self._load, name="admcuda-ssim-load", daemon=True
            )
            self._loading.start()

    @staticmethod
    def _check_heatmaps(
        inputs: Sequence[str | os.PathLike[str]] | None, distorted: int, subsample: int
    ) -> None:
        if inputs is None:
            raise AdmError(_cambi.ONE_RUN_ONLY)
        if distorted != 1:
            raise AdmError(
                f"cambi: heatmaps_path holds one distorted input's maps, and {distorted} are "
                "scored; score them one at a time"
            )
        if subsample != 1:
            raise AdmError("cambi: heatmaps_path is written for every frame; drop --subsample")

    def close(self) -> None:
        """Close CAMBI's ``heatmaps_path`` files, if any."""
        for heatmaps in self._heatmaps.values():
            heatmaps.close()

    def _notice(self) -> None:
        """One line on a terminal while SSIM's kernels compile for the first time here."""
        if not sys.stderr.isatty():
            return
        from admcuda.compiled import cached

        module = {_cambi.CAMBI_KIND: "cambi", _speed.SPEED_KIND: "speed",
                  _ciede.CIEDE_KIND: "ciede",
                  _speed_temporal.SPEED_TEMPORAL_KIND: "speed"}  # fmt: skip
        modules = tuple({module.get(ex.kind, "ssim"): 0 for ex in self.compiled})
        if cached(modules) is False:
            _log.warning(
                "compiling the kernels of %s, once for this machine "
                "(about 10 s; 'admcuda warmup' does it ahead)",
                " and ".join(sorted({ex.kind for ex in self.compiled})),
            )

    def _load(self) -> None:
        try:
            from admcuda.compiled import warm_up

            warm_up((8,), tuple({ex.kind for ex in self.compiled}))
        except BaseException as exc:  # noqa: BLE001 - raised on the main thread
            self._failed.append(exc)

    def _ready(self) -> None:
        if self._loading is not None:
            self._loading.join()
            self._loading = None
            if self._failed:
                raise self._failed[0]

    def compute(
        self,
        ref: np.ndarray,
        ref_chroma: np.ndarray | None,
        dis: Sequence[np.ndarray],
        dis_chroma: Sequence[np.ndarray | None],
        frames: int,
        order: Sequence[int] | None = None,
    ) -> list[dict[str, np.ndarray]]:
        """Per distorted input, each host output over the first ``frames`` frames of the
        slot (float64; PSNR's squared-error sums uint64). ``order``: each distorted
        input's index among the run's (default 0, 1, ...), by which speed_temporal keeps
        each input's last frame while inputs that end drop out of later batches."""
        if not isinstance(ref, np.ndarray):
            raise AdmError(
                "psnr, float_ssim, float_ms_ssim, cambi, speed_chroma, float_moment, "
                "float_psnr, float_motion, ciede, psnr_hvs, speed_temporal, float_ansnr, "
                "float_vif and float_adm read frames on the host; decode with ffmpeg "
                "(--decoder ffmpeg)"
            )
        results: list[dict[str, np.ndarray]] = [{} for _ in dis]
        if self.psnr is not None:
            results = self.psnr.compute(ref, ref_chroma, dis, dis_chroma, frames)
        if not self.ssim or frames <= 0:
            return self._temporal(results, ref, ref_chroma, dis, frames, order)
        self._ready()
        tasks = [(j, k) for j in range(len(dis)) for k in range(frames)]

        first = self._next
        self._next += frames

        def one(task: tuple[int, int]) -> dict[str, float]:
            j, k = task
            row: dict[str, float] = {}
            for i, ex in enumerate(self.ssim):
                if ex.kind == _speed.SPEED_KIND:
                    a = self._chroma(ref_chroma, k)
                    b = self._chroma(dis_chroma[j], k)
                    row.update(_speed.speed_chroma_frame(ex, a, b, self.bitdepth))
                elif ex.kind == _cambi.CAMBI_KIND:
                    row.update(_cambi.cambi_frame(ex, ref[k], dis[j][k], self.bitdepth,
                                                  heatmaps=self._heatmaps.get(i),
                                                  index=first + k))  # fmt: skip
                elif ex.kind == MOMENT_KIND:
                    row.update(moment_frame(ex, ref[k], dis[j][k], self.bitdepth))
                elif ex.kind == FLOAT_PSNR_KIND:
                    row.update(float_psnr_frame(ex, ref[k], dis[j][k], self.bitdepth))
                elif ex.kind == _ciede.CIEDE_KIND:
                    a = (ref[k], *self._chroma(ref_chroma, k, ex.kind))
                    b = (dis[j][k], *self._chroma(dis_chroma[j], k, ex.kind))
                    row.update(_ciede.ciede_frame(ex, a, b, self.bitdepth))
                elif ex.kind == _psnr_hvs.PSNR_HVS_KIND:
                    a = (ref[k], *self._chroma(ref_chroma, k, ex.kind))
                    b = (dis[j][k], *self._chroma(dis_chroma[j], k, ex.kind))
                    row.update(_psnr_hvs.psnr_hvs_frame(ex, a, b, self.bitdepth))
                elif ex.kind == _float_ansnr.FLOAT_ANSNR_KIND:
                    row.update(_float_ansnr.float_ansnr_frame(ex, ref[k], dis[j][k],
                                                              self.bitdepth))  # fmt: skip
                elif ex.kind == _float_vif.FLOAT_VIF_KIND:
                    row.update(_float_vif.float_vif_frame(ex, ref[k], dis[j][k], self.bitdepth))
                elif ex.kind == _float_adm.FLOAT_ADM_KIND:
                    row.update(_float_adm.float_adm_frame(ex, ref[k], dis[j][k], self.bitdepth))
                else:
                    row.update(ssim_frame(ex, ref[k], dis[j][k], self.bitdepth))
            return row

        workers = min(self.threads, len(tasks))
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="admcuda-ssim") as pool:
                rows = list(pool.map(one, tasks))
        else:
            rows = [one(t) for t in tasks]
        names = list(rows[0])
        for j, out in enumerate(results):
            mine = rows[j * frames : (j + 1) * frames]
            for n in names:
                out[n] = np.array([r[n] for r in mine], dtype=np.float64)
        return self._temporal(results, ref, ref_chroma, dis, frames, order)

    def _temporal(
        self,
        results: list[dict[str, np.ndarray]],
        ref: np.ndarray,
        ref_chroma: np.ndarray | None,
        dis: Sequence[np.ndarray],
        frames: int,
        order: Sequence[int] | None,
    ) -> list[dict[str, np.ndarray]]:
        """The temporal features' outputs: float_motion's, then speed_temporal's."""
        results = self._add_motion(results, ref, ref_chroma, frames)
        return self._add_speed_temporal(results, ref, dis, frames, order)

    def _add_motion(
        self,
        results: list[dict[str, np.ndarray]],
        ref: np.ndarray,
        ref_chroma: np.ndarray | None,
        frames: int,
    ) -> list[dict[str, np.ndarray]]:
        """float_motion's outputs of the first ``frames`` reference frames of the slot,
        the same for every distorted input; ``threads`` frames at a time, so that only
        their blurred pictures are held."""
        if not self.motion or frames <= 0:
            return results
        step = min(self.threads, frames)
        outputs: dict[str, list[np.ndarray]] = {}
        with ThreadPoolExecutor(step, thread_name_prefix="admcuda-motion") as pool:
            mapper = pool.map if step > 1 else map
            for run in self.motion:
                uv = run.ex.options.motion_add_uv
                what = "float_motion's motion_add_uv"
                for k0 in range(0, frames, step):
                    planes = [
                        [ref[k], *self._chroma(ref_chroma, k, what)] if uv else [ref[k]]
                        for k in range(k0, min(k0 + step, frames))
                    ]
                    for name, values in run.scores(planes, mapper).items():
                        outputs.setdefault(name, []).append(values)
        for name, parts in outputs.items():
            values = np.concatenate(parts)
            for out in results:
                out[name] = values.copy()
        return results

    def _add_speed_temporal(
        self,
        results: list[dict[str, np.ndarray]],
        ref: np.ndarray,
        dis: Sequence[np.ndarray],
        frames: int,
        order: Sequence[int] | None,
    ) -> list[dict[str, np.ndarray]]:
        """speed_temporal's score of the first ``frames`` frames of the slot per distorted
        input, the frames side by side on the threads."""
        if not self.temporal or frames <= 0:
            return results
        self._ready()
        inputs = list(range(len(dis))) if order is None else list(order)
        step = min(self.threads, frames)
        pool = ThreadPoolExecutor(step, thread_name_prefix="admcuda-speed") if step > 1 else None
        try:
            mapper = pool.map if pool is not None else map
            for run in self.temporal:
                scores = run.scores(ref, dis, frames, inputs, mapper)
                for out, values in zip(results, scores, strict=True):
                    out[run.ex.outputs[0]] = values
        finally:
            if pool is not None:
                pool.shutdown()
        return results

    def _chroma(
        self, chroma: np.ndarray | None, k: int, kind: str = _speed.SPEED_KIND
    ) -> tuple[np.ndarray, np.ndarray]:
        """Frame ``k``'s Cb and Cr planes from a slot's flat chroma."""
        if chroma is None or not self.chroma_size:
            raise AdmError(f"{kind} reads the chroma planes, which this input does not give")
        ch, cw = self.shapes[1]
        return chroma[k, : ch * cw].reshape(ch, cw), chroma[k, ch * cw :].reshape(ch, cw)

    def __repr__(self) -> str:
        kinds = [ex.name for ex in self.ssim] + (["psnr"] if self.psnr is not None else [])
        kinds += [run.ex.name for run in self.motion]
        kinds += [run.ex.name for run in self.temporal]
        return f"HostFeatures({', '.join(kinds)}, threads={self.threads})"

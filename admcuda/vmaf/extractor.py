"""VMAF frame by frame, for frames in memory: libvmaf's init, read pictures, flush, close.

libvmaf's library scores a clip through one context: ``vmaf_read_pictures`` hands it
each frame pair in order (every extractor's ``extract``), ``vmaf_read_pictures(NULL,
NULL)`` flushes it once the clip has ended (motion's ``flush`` writes ``integer_motion2``
and ``integer_motion3`` for every frame), ``vmaf_score_at_index`` predicts a model's
score for one frame and ``vmaf_score_pooled`` pools a clip. :class:`VmafExtractor` keeps
that lifecycle with the bit-exact NumPy reference (:func:`admcuda.vmaf.score_pair` and
:func:`admcuda.vmaf.finish_clip`), the compiled CPU engine
(:class:`admcuda.backends.compiled.CompiledEngine`) or, on a GPU, the CUDA engine
(:class:`admcuda.backends.cuda.vmaf.CudaVmaf`), which give the same doubles:

- :meth:`VmafExtractor.extract` scores one frame pair and returns what libvmaf's
  extractors write for it there and then: ADM's and VIF's outputs and motion's per-frame
  score.
- A frame's motion2 compares its motion score with the next frame's, so its motion2,
  motion3 and model scores are final once the next frame has been extracted (the frame
  after that too, for frames 0 and 1 under ``motion_five_frame_window``), or once
  :meth:`VmafExtractor.flush` has ended the clip. :meth:`VmafExtractor.score_at` and
  :meth:`VmafExtractor.frame_at` give them from then on, the numbers :meth:`flush` gives.
  (libvmaf 3.2.0 writes motion2 in ``flush`` only, so its ``vmaf_score_at_index`` fails
  for any frame until the clip has ended; the numbers are the same.)
- :meth:`VmafExtractor.flush` ends the clip and returns every frame's outputs, keys in
  libvmaf's order; :meth:`VmafExtractor.pooled` gives its ``pooled_metrics``.

Frames are numbered in the order they are given, from 0; the extractor keeps the
previous reference planes motion reads (copies, so a caller may reuse its buffers).
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from admcuda.backends import check_backend
from admcuda.closing import Closing
from admcuda.errors import AdmError
from admcuda.extractor import as_array, check_plane
from admcuda.io.formats import BITDEPTHS, check_geometry
from admcuda.model import Model, ModelSpec, output_name
from admcuda.numeric import is_integer
from admcuda.quirks import warn_small_height
from admcuda.reference.motion import MIN_SIZE as _MOTION_MIN_SIDE
from admcuda.reference.vif import MIN_SIDE as _VIF_MIN_SIDE
from admcuda.vmaf.compute import finish_clip, pooled, score_pair
from admcuda.vmaf.plan import ExtractorOptions, FeaturePlan, build_plan

__all__ = ["VmafExtractor"]

ModelArg = str | os.PathLike | ModelSpec | Model


def _model_request(model: ModelArg) -> str | ModelSpec | Model:
    """A ``model`` argument as :func:`build_plan` takes it: a bare name is a built-in
    version, a path-like a model file, a string with ``=`` a ``--model`` argument."""
    if isinstance(model, (ModelSpec, Model)):
        return model
    if isinstance(model, os.PathLike):
        return ModelSpec(path=os.fspath(model))
    if isinstance(model, str):
        return model if "=" in model else ModelSpec(version=model)
    raise AdmError(
        "model must be a version name, a --model string, a path, a ModelSpec or a Model, "
        f"got {type(model).__name__}"
    )


def _model_requests(model: ModelArg | Iterable[ModelArg] | None) -> list[str | ModelSpec | Model]:
    if model is None:
        return []
    if isinstance(model, (str, os.PathLike, ModelSpec, Model)):
        return [_model_request(model)]
    if not isinstance(model, Iterable):
        return [_model_request(model)]  # raises, naming the type
    return [_model_request(m) for m in model]


class VmafExtractor(Closing):
    """libvmaf's VMAF (its models over ADM, VIF and motion) for one frame size and bit depth.

    Parameters
    ----------
    width, height : int
        Luma size in pixels.
    bitdepth : {8, 10, 12, 16}, optional
        Bits per sample. Planes are ``uint8`` for 8 bits and ``uint16`` otherwise.
    model : str, path, ModelSpec, Model, a sequence of them, or None, optional
        The models whose scores to predict, in ``--model`` order: a built-in version
        (``"vmaf_v0.6.1"``, the default; ``"vmaf_v0.6.1neg"``, ``"vmaf_4k_v0.6.1"``,
        ``"vmaf_4k_v0.6.1neg"``, the bootstrap collection ``"vmaf_b_v0.6.3"``), a
        ``--model`` argument (``"version=vmaf_v0.6.1:name=phone:enable_transform"``), a
        model file's path, a :class:`~admcuda.model.ModelSpec` or a loaded
        :class:`~admcuda.model.Model`. None or an empty sequence: no model, ``features``
        alone.
    features : iterable, optional
        ``--feature`` arguments (``"vif=debug=true"``, ``"motion"``) or ``(name, options)``
        pairs as :func:`admcuda.vmaf.parse_feature_arg` returns them, registered after the
        models' extractors as libvmaf's tool registers them.
    no_prediction : bool, optional
        libvmaf's ``-n``: the models' features without their scores.
    backend : {"auto", "cpu", "cuda"}, optional
        ``"auto"`` scores on the GPU where CuPy sees one and the frame size suits it
        (16x16 and up with VIF, above 16x16 with ADM), else on the CPU; ``"cuda"`` where
        the GPU cannot be used is an error. Both give the same doubles. On the GPU, CuPy
        and DLPack device arrays are scored where they are, without a copy to the host.
        On the CPU the compiled engine runs where Numba is installed, the frame size
        suits its kernels and they are already compiled on this machine
        (``admcuda warmup``), unless ``ADMCUDA_CPU_ENGINE=numpy``;
        ``ADMCUDA_CPU_ENGINE=compiled`` takes it even if it must compile first. Elsewhere
        the NumPy reference runs: the same doubles.
    device : int, optional
        CUDA device ordinal.
    batch : int, optional
        Frames per GPU batch for :meth:`extract_batch` (default 32).
    threads : int, optional
        Threads of the compiled CPU engine (default: the usable cores).

    Attributes
    ----------
    width, height, bitdepth : int
    plan : FeaturePlan
        The extractors and models, as :func:`admcuda.vmaf.build_plan` registers them.
    output_names : tuple of str
        The keys of every frame :meth:`flush` returns, in libvmaf's order.
    extract_names : tuple of str
        The keys :meth:`extract` returns, in libvmaf's order.
    model_names : tuple of str
        Each model's score's name (``vmaf``, or its ``name=``); empty with
        ``no_prediction``.
    frames_extracted : int
        Frame pairs extracted so far; the next frame's index.
    backend : {"cpu", "cuda"}
        The backend in use.
    engine : {"compiled", "numpy", "cuda"}
        The engine that scores: on the CPU the compiled kernels or the NumPy reference.

    Raises
    ------
    AdmError
        Bad geometry or bit depth; a model or feature that cannot be loaded or computed.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> ref = rng.integers(0, 256, (3, 36, 64), dtype=np.uint8)
    >>> with VmafExtractor(64, 36) as vmaf:
    ...     first = vmaf.extract(ref[0], ref[0])
    ...     rest = vmaf.extract_batch(ref[1:], ref[1:])
    ...     frame0 = vmaf.score_at(0)  # final: frame 1 has been extracted
    ...     frames = vmaf.flush()
    ...     stats = vmaf.pooled()
    >>> first["integer_vif_scale0"], frames[0]["vmaf"] == frame0
    (1.0, True)
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int = 8,
        *,
        model: ModelArg | Iterable[ModelArg] | None = "vmaf_v0.6.1",
        features: Iterable[str | tuple[str, ExtractorOptions]] = (),
        no_prediction: bool = False,
        backend: str = "auto",
        device: int | None = None,
        batch: int | None = None,
        threads: int | None = None,
    ) -> None:
        check_backend(backend)
        if not is_integer(bitdepth) or bitdepth not in BITDEPTHS:
            raise AdmError(
                f"unsupported bit depth {bitdepth!r}; use one of {', '.join(map(str, BITDEPTHS))}"
            )
        if isinstance(features, str):
            features = [features]
        self.plan: FeaturePlan = build_plan(
            _model_requests(model), features, predict=not no_prediction
        )
        kinds = {ex.kind for ex in self.plan.extractors}
        if "psnr" in kinds:
            raise AdmError(
                "psnr reads chroma planes, which VmafExtractor is not given: score files "
                "with admcuda.score(..., features=['psnr'])"
            )
        hosted = sorted(kinds & {"float_ssim", "float_ms_ssim", "cambi"})
        if hosted:
            raise AdmError(
                f"{' and '.join(hosted)} run on the host beside the engines, not in "
                f"VmafExtractor: score files with admcuda.score(..., features={hosted})"
            )
        if "adm" in kinds:
            check_geometry(width, height, "400", bitdepth)
        # VIF's least side, or motion's where it runs alone (ADM's is checked above)
        least, what = (_VIF_MIN_SIDE, "VIF") if "vif" in kinds else (_MOTION_MIN_SIDE, "motion")
        for side, value in (("width", width), ("height", height)):
            if not is_integer(value):
                raise AdmError(f"{side} must be an integer, got {value!r}")
            if value < least:
                raise AdmError(
                    f"{side} {value} is too small: libvmaf's {what} needs width and height "
                    f"of at least {least}"
                )
        self.width = operator.index(width)
        self.height = operator.index(height)
        self.bitdepth = operator.index(bitdepth)
        self.dtype = np.dtype(np.uint8 if self.bitdepth == 8 else np.uint16)
        self.output_names = tuple(self.plan.output_order())
        self.extract_names = tuple(n for ex in self.plan.extractors for n in ex.extract_outputs)
        self.model_names = self.plan.model_outputs
        for ex in self.plan.extractors:
            if ex.kind == "adm":
                warn_small_height(self.width, self.height, ex.options)  # type: ignore[arg-type]
        motion = [ex for ex in self.plan.extractors if ex.kind == "motion"]
        five = any(ex.options.motion_five_frame_window for ex in motion)  # type: ignore[union-attr]
        # A frame is final once frame max(i + 1, first) has been read, where ``first`` is
        # motion's first scored index; finishing a window of ``_lead`` frames before the
        # first frame to finish gives flush's numbers (its motion2 reads one frame back
        # under the five-frame window, its moving average the frame before).
        self._first = (2 if five else 1) if motion else 0
        self._lead = 4 if five else 2
        self._rows: list[dict[str, float]] = []  # score_pair's result per frame
        self._final: list[dict[str, float]] = []  # complete outputs of the leading frames
        self._prev: np.ndarray | None = None
        self._prev_prev: np.ndarray | None = None
        self._flushed = False
        self._closed = False
        self._engine: Any = None
        self._compiled: Any = None  # the compiled CPU engine, where it runs
        self.backend = "cpu"
        if backend != "cpu":
            try:
                self._engine = _open_cuda_vmaf(self, batch, device)
                self.backend = "cuda"
            except AdmError:
                if backend == "cuda":
                    raise
        if self._engine is None:
            self._compiled = _open_compiled(self, threads)
        self.engine = (
            "cuda" if self._engine is not None else "compiled" if self._compiled else "numpy"
        )

    # -- lifecycle

    def close(self) -> None:
        """Release every plane and score kept. Further calls raise; closing again is a
        no-op."""
        self._rows, self._final = [], []
        self._prev = self._prev_prev = None
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._compiled is not None:
            self._compiled.close()
            self._compiled = None
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    @property
    def flushed(self) -> bool:
        """Whether :meth:`flush` has ended the clip."""
        return self._flushed

    @property
    def frames_extracted(self) -> int:
        """Frame pairs extracted so far; the next frame's index."""
        return len(self._rows)

    @property
    def frames_final(self) -> int:
        """How many leading frames have final outputs: :meth:`score_at` and
        :meth:`frame_at` answer for indices below it."""
        k = len(self._rows)
        if self._flushed or not self._first:
            return k
        return k - 1 if k > self._first else 0

    def __repr__(self) -> str:
        if self._closed:
            state = "closed"
        else:
            state = f"frames_extracted={self.frames_extracted}"
            state += ", flushed" if self._flushed else ""
        models = ", ".join(m.label for m in self.plan.models) or "none"
        return (
            f"VmafExtractor({self.width}x{self.height}, {self.bitdepth}-bit, "
            f"models: {models}, {state})"
        )

    # -- extraction

    def extract(self, ref: Any, dis: Any) -> dict[str, float]:
        """Score the next frame pair (libvmaf's ``vmaf_read_pictures``).

        Parameters
        ----------
        ref, dis : array
            2-D luma planes of shape ``(height, width)``: NumPy, or any array
            :class:`admcuda.AdmExtractor` takes (CuPy and DLPack device arrays stay on
            the GPU with the CUDA backend, and are copied to the host with the CPU's);
            ``uint8`` for 8 bits, ``uint16`` otherwise.

        Returns
        -------
        dict of str to float
            What libvmaf's extractors write for this frame as they read it, keys in
            :attr:`extract_names` order: ADM's and VIF's outputs and motion's per-frame
            score (``VMAF_integer_feature_motion_sad_score``). motion2, motion3 and the
            model scores come from :meth:`score_at`, :meth:`frame_at` and :meth:`flush`.

        Raises
        ------
        AdmError
            Closed or flushed extractor; wrong type, shape or dtype; a sample too large
            for the bit depth.
        """
        self._check_open()
        ref_plane = self._plane(ref, "reference frame")
        dis_plane = self._plane(dis, "distorted frame")
        return self._score([ref_plane], [dis_plane])[0]

    def extract_batch(self, refs: Any, dis: Any) -> list[dict[str, float]]:
        """Score the next frame pairs, in order.

        Parameters
        ----------
        refs, dis : array or sequence of arrays
            Either a 3-D ``(n, height, width)`` array or a sequence of 2-D planes; both
            sides must hold the same number of frames.

        Returns
        -------
        list of dict of str to float
            One dict per frame pair, as :meth:`extract` returns.

        Raises
        ------
        AdmError
            As :meth:`extract`, or when the two sides differ in length. Every plane is
            checked before any frame is scored.
        """
        self._check_open()
        ref_planes = self._planes(refs, "reference frames")
        dis_planes = self._planes(dis, "distorted frames")
        if len(ref_planes) != len(dis_planes):
            raise AdmError(
                f"{len(ref_planes)} reference frames but {len(dis_planes)} distorted frames"
            )
        return self._score(ref_planes, dis_planes)

    def flush(self) -> list[dict[str, float]]:
        """End the clip (libvmaf's ``vmaf_read_pictures(NULL, NULL)``) and return every
        frame's outputs.

        Returns
        -------
        list of dict of str to float
            One per frame extracted, keys in :attr:`output_names` order: every feature
            (motion2 and motion3 included) and each model's score. Calling it again
            returns the same frames.

        Raises
        ------
        AdmError
            Closed extractor, or no frame extracted.
        """
        self._check_open(flushing=True)
        if not self._rows:
            raise AdmError("no frames to flush: extract at least one frame pair first")
        self._flushed = True
        self._prev = self._prev_prev = None
        self._finish()
        return [dict(f) for f in self._final]

    def pooled(self) -> dict[str, dict[str, float]]:
        """libvmaf's ``pooled_metrics`` over every frame: min, max, mean and harmonic mean
        of each output, names in :attr:`output_names` order. Ends the clip as
        :meth:`flush` does (pooling needs the last frame's motion2)."""
        return pooled(self.plan, self.flush())

    def score_at(self, index: int, model: str | None = None) -> float:
        """One model's score for frame ``index`` (libvmaf's ``vmaf_score_at_index``).

        Parameters
        ----------
        index : int
            A frame below :attr:`frames_final`: extracted, with the frame after it
            extracted too (or the clip flushed).
        model : str, optional
            The model's score name (:attr:`model_names`); the first model's by default.
            A model collection's other scores are named too (``vmaf_bagging``,
            ``vmaf_ci_p95_lo``, ``vmaf_0001``, ...).

        Raises
        ------
        AdmError
            No prediction; an unknown model; a frame not extracted or not final yet.
        """
        if not self.model_names:
            raise AdmError(
                "no model scores: this extractor has no model"
                if self.plan.predict
                else "no model scores: this extractor was made with no_prediction=True"
            )
        name = self.model_names[0] if model is None else output_name(str(model))
        if name not in self.model_names and name not in self.plan.collection_outputs:
            raise AdmError(
                f"no model named {model!r}; the models are {', '.join(self.model_names)}"
            )
        return self.frame_at(index)[name]

    def frame_at(self, index: int) -> dict[str, float]:
        """Frame ``index``'s outputs as :meth:`flush` gives them (every feature, each
        model's score), once final: see :meth:`score_at`."""
        self._check_open(flushing=True)
        if isinstance(index, bool) or not is_integer(index) or index < 0:
            raise AdmError(f"frame index must be a non-negative integer, got {index!r}")
        index = int(index)
        if index >= len(self._rows):
            raise AdmError(f"frame {index} has not been extracted ({len(self._rows)} so far)")
        if index >= self.frames_final:
            need = max(index + 1, self._first)
            raise AdmError(
                f"frame {index} is final once frame {need} is extracted (its motion2 and "
                "motion3 read it): extract it, or flush() to end the clip"
            )
        self._finish()
        return dict(self._final[index])

    # -- helpers

    def _check_open(self, *, flushing: bool = False) -> None:
        if self._closed:
            raise AdmError("this VmafExtractor is closed")
        if self._flushed and not flushing:
            raise AdmError("this VmafExtractor's clip has ended (flushed): open a new one")

    def _score(
        self, refs: Sequence[np.ndarray], dis: Sequence[np.ndarray]
    ) -> list[dict[str, float]]:
        """score_pair over the frames in order; the state changes only once all are
        scored."""
        if self._engine is not None:
            return self._score_on(self._engine, refs, dis)
        if self._compiled is not None:
            return self._score_on(self._compiled, refs, dis)
        keep = self.plan.history > 0
        prev, prev_prev = self._prev, self._prev_prev
        rows: list[dict[str, float]] = []
        for ref, d in zip(refs, dis, strict=True):
            rows.append(score_pair(self.plan, ref, d, prev, self.bitdepth, prev_prev_ref=prev_prev))
            if keep:
                prev_prev, prev = prev, np.array(ref, copy=True)  # the caller may reuse ref
        self._rows.extend(rows)
        self._prev, self._prev_prev = prev, prev_prev
        return [{n: row[n] for n in self.extract_names if n in row} for row in rows]

    def _score_on(
        self, engine: Any, refs: Sequence[Any], dis: Sequence[Any]
    ) -> list[dict[str, float]]:
        """The frames through a pipeline engine (CUDA or compiled), a batch at a time; on
        the GPU device planes stay on the device (stacked there), host planes are uploaded.
        The engine keeps motion's previous reference planes itself."""
        rows: list[dict[str, float]] = []
        for c0 in range(0, len(refs), engine.batch):
            ref = _stack(refs[c0 : c0 + engine.batch])
            d = _stack(dis[c0 : c0 + engine.batch])
            arrays = engine.collect(engine.submit(ref, [d], len(ref)))[0]
            names = list(arrays)
            table = np.stack([arrays[n] for n in names], axis=1).tolist()
            rows += [dict(zip(names, r, strict=True)) for r in table]
        self._rows.extend(rows)
        return [{n: row[n] for n in self.extract_names if n in row} for row in rows]

    def _finish(self) -> None:
        """Complete the frames that have become final since the last call."""
        start, stop = len(self._final), self.frames_final
        if start >= stop:
            return
        # earlier frames are finished again as the window's start, then dropped
        begin = max(0, start - self._lead)
        end = len(self._rows) if self._flushed else stop + 1
        done = finish_clip(self.plan, self._rows[begin:end])
        self._final.extend(done[start - begin : stop - begin])

    def _plane(self, x: Any, what: str) -> np.ndarray:
        arr = as_array(x, on_gpu=self._engine is not None, what=what)
        if arr.ndim != 2:
            raise AdmError(f"{what} must be a 2-D luma plane, got {arr.ndim} dimensions")
        self._check(arr, what, arr.shape)
        return arr

    def _planes(self, frames: Any, what: str) -> list[np.ndarray]:
        if isinstance(frames, np.ndarray) or hasattr(frames, "__dlpack__"):
            arr = as_array(frames, on_gpu=self._engine is not None, what=what)
            if arr.ndim != 3:
                raise AdmError(
                    f"{what} must be a 3-D (n, height, width) array or a sequence of 2-D "
                    f"planes, got {arr.ndim} dimensions"
                )
            self._check(arr, what, arr.shape[1:])
            return list(arr)
        if not isinstance(frames, Sequence) or isinstance(frames, (str, bytes)):
            raise AdmError(
                f"{what} must be a 3-D array or a sequence of 2-D planes, "
                f"got {type(frames).__name__}"
            )
        return [self._plane(p, f"{what}[{k}]") for k, p in enumerate(frames)]

    def _check(self, arr: np.ndarray, what: str, frame_shape: tuple[int, ...]) -> None:
        check_plane(arr, what, frame_shape, self.width, self.height, self.dtype, self.bitdepth)


def _stack(planes: Sequence[Any]) -> Any:
    """Planes as one (n, height, width) array, on the device where they are CuPy arrays."""
    if any(type(p).__module__.startswith("cupy") for p in planes):
        import cupy as cp

        return cp.stack([cp.asarray(p) for p in planes])
    return np.stack(planes)


def _open_compiled(ext: VmafExtractor, threads: int | None) -> Any:
    """The compiled CPU engine of ``ext``'s plan, or None where the NumPy reference runs:
    no Numba, ``ADMCUDA_CPU_ENGINE=numpy``, a frame size its kernels do not take, or
    kernels not compiled on this machine yet (a first compile takes a minute; frames come
    one by one, so no run is known to be long enough to repay it) unless
    ``ADMCUDA_CPU_ENGINE=compiled``."""
    from admcuda.backends.compiled import usable

    if not usable(ext.width, ext.height, ext.plan, None):
        return None
    from admcuda.backends.compiled import CompiledEngine

    return CompiledEngine(ext.width, ext.height, ext.bitdepth, None, plan=ext.plan,
                          threads=threads)  # fmt: skip


def _open_cuda_vmaf(ext: VmafExtractor, batch: int | None, device: int | None) -> Any:
    """The CUDA engine of ``ext``'s plan, or AdmError naming why it cannot start."""
    try:
        from admcuda.backends.cuda import cuda_available
        from admcuda.backends.cuda.vmaf import CudaVmaf
    except ImportError as exc:
        raise AdmError(f"CUDA backend unavailable: {exc}") from None
    if not cuda_available():
        raise AdmError("CUDA backend unavailable: CuPy is missing or sees no CUDA device")
    try:
        return CudaVmaf(ext.width, ext.height, ext.bitdepth, ext.plan, batch=batch or 32,
                        device=device)  # fmt: skip
    except AdmError as exc:
        raise AdmError(f"CUDA backend unavailable: {exc}") from None
    except (ImportError, ValueError, RuntimeError) as exc:
        raise AdmError(f"CUDA backend unavailable: {type(exc).__name__}: {exc}") from None

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
  libvmaf's order; :meth:`VmafExtractor.pooled` gives its ``pooled_metrics`` and
  :meth:`VmafExtractor.aggregate` its ``aggregate_metrics`` (PSNR's ``apsnr_*``).

Frames are numbered in the order they are given, from 0; the extractor keeps the
previous reference planes motion reads, and speed_temporal the previous distorted ones
too (copies, so a caller may reuse its buffers).
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
from admcuda.io.formats import BITDEPTHS, check_geometry, normalize_format, plane_shapes
from admcuda.model import Model, ModelSpec, output_name
from admcuda.numeric import is_integer
from admcuda.quirks import warn_small_height
from admcuda.reference.motion import MIN_SIZE as _MOTION_MIN_SIDE
from admcuda.reference.vif import MIN_SIDE as _VIF_MIN_SIDE
from admcuda.vmaf.compute import finish_clip, pooled, score_pair
from admcuda.vmaf.plan import ExtractorOptions, FeaturePlan, build_plan
from admcuda.vmaf.psnr import aggregate_metrics

__all__ = ["VmafExtractor"]

# reading chroma (float_motion with its motion_add_uv)
_CHROMA_KINDS = frozenset({"psnr", "speed_chroma", "float_motion", "ciede", "psnr_hvs"})

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
        ``"vmaf_4k_v0.6.1neg"``, the bootstrap collection ``"vmaf_b_v0.6.3"``, the float
        models ``"vmaf_float_v0.6.1"``, ...), a
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
        Threads of the compiled CPU engine and of the host features (default: the usable
        cores).
    pixel_format : {"420", "422", "444", "400"}, optional
        The frames' chroma layout, needed where a feature reads chroma (``psnr`` with its
        ``enable_chroma``, ``speed_chroma``, so the ``vmaf_v1.0.16`` models, ``ciede``
        and ``psnr_hvs``), whose planes :meth:`extract` then takes as ``ref_chroma`` and
        ``dis_chroma``. ``"400"`` scores PSNR on luma alone, as libvmaf does. None (the
        default): luma planes only. The host features (``psnr``, ``float_ssim``,
        ``float_ms_ssim``, ``cambi``, ``speed_chroma``, ``float_moment``, ``float_psnr``,
        ``float_motion``, ``ciede``, ``psnr_hvs``, ``speed_temporal``, ``float_ansnr``,
        ``float_vif``, ``float_adm``) are computed on the host beside the engine, as
        :func:`admcuda.score` computes them, with either backend.

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
    pixel_format : str or None
    backend : {"cpu", "cuda"}
        The backend in use (``"cpu"`` where every feature runs on the host).
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
        pixel_format: str | None = None,
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
        if pixel_format is not None:
            pixel_format = normalize_format(pixel_format)
            self.plan = self.plan.for_pixel_format(pixel_format)
        kinds = {ex.kind for ex in self.plan.extractors}
        chroma = _chroma_readers(self.plan)
        if pixel_format is None and self.plan.chroma_wanted("420"):
            raise AdmError(
                f"{' and '.join(chroma)} read the chroma planes: give pixel_format ('420', "
                "'422' or '444') and each frame's ref_chroma=(cb, cr), dis_chroma=(cb, cr)"
                + (" (or psnr=enable_chroma=false)" if chroma == ["psnr"] else "")
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
        # float_motion's motion2 and motion3 read the next frame's score, as motion's do
        motion += [ex for ex in self.plan.extractors if ex.kind == "float_motion"]
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
        self.pixel_format = pixel_format
        # the engines compute ADM, VIF and motion; the host features run beside them, on
        # the host, as admcuda.score runs them (admcuda.vmaf.host.HostFeatures)
        self._engine_plan = self.plan.engine_plan()
        self._host: Any = None
        fmt = pixel_format or "400"
        if self.plan.host_extractors:
            from admcuda.vmaf.host import HostFeatures

            self._host = HostFeatures(self.plan, self.width, self.height, fmt, self.bitdepth,
                                      threads=threads)  # fmt: skip
        self._chroma_shape: tuple[int, int] | None = (
            plane_shapes(self.width, self.height, fmt)[1]
            if self._host is not None and self._host.chroma_size
            else None
        )
        # the host features' luma planes: all but speed_chroma read them
        self._host_luma = any(ex.kind != "speed_chroma" for ex in self.plan.host_extractors)
        self._engine: Any = None
        self._compiled: Any = None  # the compiled CPU engine, where it runs
        self.backend = "cpu"
        if backend != "cpu" and self._engine_plan.extractors:
            try:
                self._engine = _open_cuda_vmaf(self, batch, device)
                self.backend = "cuda"
            except AdmError:
                if backend == "cuda":
                    raise
        if self._engine is None and self._engine_plan.extractors:
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
        self._host = None
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

    def extract(
        self, ref: Any, dis: Any, *, ref_chroma: Any = None, dis_chroma: Any = None
    ) -> dict[str, float]:
        """Score the next frame pair (libvmaf's ``vmaf_read_pictures``).

        Parameters
        ----------
        ref, dis : array
            2-D luma planes of shape ``(height, width)``: NumPy, or any array
            :class:`admcuda.AdmExtractor` takes (CuPy and DLPack device arrays stay on
            the GPU with the CUDA backend, and are copied to the host with the CPU's);
            ``uint8`` for 8 bits, ``uint16`` otherwise. The host features (``psnr``,
            ``float_ssim``, ``float_ms_ssim``, ``cambi``, ``float_moment``, ``float_psnr``,
            ``float_motion``, ``ciede``, ``psnr_hvs``, ``speed_temporal``, ``float_ansnr``,
            ``float_vif``, ``float_adm``) read the luma on the host: with the CUDA backend,
            device planes are copied to the host for them, and only where one of them runs.
        ref_chroma, dis_chroma : pair of arrays, optional
            Each frame's Cb and Cr planes, ``(cb, cr)`` (or one ``(2, rows, columns)``
            array), of the ``pixel_format``'s chroma size as a file holds it (an odd side
            rounded up) and the luma's dtype. Needed where a feature reads chroma
            (``psnr`` with its ``enable_chroma``, ``speed_chroma``, so the
            ``vmaf_v1.0.16`` models, ``ciede`` and ``psnr_hvs``) and unread elsewhere;
            always read on the host (device arrays are copied there).

        Returns
        -------
        dict of str to float
            What libvmaf's extractors write for this frame as they read it, keys in
            :attr:`extract_names` order: ADM's, VIF's and the host features' outputs and
            motion's per-frame score (``VMAF_integer_feature_motion_sad_score``). motion2,
            motion3 and the model scores come from :meth:`score_at`, :meth:`frame_at` and
            :meth:`flush`.

        Raises
        ------
        AdmError
            Closed or flushed extractor; wrong type, shape or dtype; a sample too large
            for the bit depth; chroma missing where a feature reads it.
        """
        self._check_open()
        ref_plane = self._plane(ref, "reference frame")
        dis_plane = self._plane(dis, "distorted frame")
        chroma = self._chroma_pairs(
            [ref_chroma], [dis_chroma], ("reference chroma", "distorted chroma")
        )
        return self._score([ref_plane], [dis_plane], *chroma)[0]

    def extract_batch(
        self, refs: Any, dis: Any, *, ref_chroma: Any = None, dis_chroma: Any = None
    ) -> list[dict[str, float]]:
        """Score the next frame pairs, in order.

        Parameters
        ----------
        refs, dis : array or sequence of arrays
            Either a 3-D ``(n, height, width)`` array or a sequence of 2-D planes; both
            sides must hold the same number of frames.
        ref_chroma, dis_chroma : array or sequence, optional
            Each frame's ``(cb, cr)``, as :meth:`extract` takes them: a sequence of ``n``
            pairs, or one ``(n, 2, rows, columns)`` array.

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
        n = len(ref_planes)
        chroma = self._chroma_pairs(
            _frames_of(ref_chroma, n, "ref_chroma"),
            _frames_of(dis_chroma, n, "dis_chroma"),
            ("reference chroma", "distorted chroma"),
        )
        return self._score(ref_planes, dis_planes, *chroma)

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

    def aggregate(self) -> dict[str, float]:
        """libvmaf's ``aggregate_metrics`` of the frames extracted so far (the clip's once
        flushed): PSNR's ``apsnr_y``, ``apsnr_cb``, ``apsnr_cr`` with its
        ``enable_apsnr``, as :attr:`admcuda.AdmResult.aggregate` gives them; empty
        without."""
        self._check_open(flushing=True)
        from admcuda.reference.psnr import scored_shapes

        fmt = self.pixel_format or "400"
        pixels = [r * c for r, c in scored_shapes(self.width, self.height, fmt)]
        return aggregate_metrics(self.plan, self._rows, bitdepth=self.bitdepth,
                                 plane_pixels=pixels)  # fmt: skip

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

    # -- internals

    def _check_open(self, *, flushing: bool = False) -> None:
        if self._closed:
            raise AdmError("this VmafExtractor is closed")
        if self._flushed and not flushing:
            raise AdmError("this VmafExtractor's clip has ended (flushed): open a new one")

    def _score(
        self,
        refs: Sequence[Any],
        dis: Sequence[Any],
        ref_chroma: list[np.ndarray] | None = None,
        dis_chroma: list[np.ndarray] | None = None,
    ) -> list[dict[str, float]]:
        """The engine's and the host features' outputs of the frames, in order (the host
        features first, so that a plane they refuse leaves the engine's state as it was)."""
        hosted = self._score_host(refs, dis, ref_chroma, dis_chroma)
        if not self._engine_plan.extractors:
            rows: list[dict[str, Any]] = [{} for _ in refs]
        elif self._engine is not None:
            rows = self._score_on(self._engine, refs, dis)
        elif self._compiled is not None:
            rows = self._score_on(self._compiled, refs, dis)
        else:
            rows = self._score_numpy(refs, dis)
        for row, more in zip(rows, hosted, strict=True):
            row.update(more)
        self._rows.extend(rows)
        return [{n: row[n] for n in self.extract_names if n in row} for row in rows]

    def _score_numpy(self, refs: Sequence[np.ndarray], dis: Sequence[np.ndarray]) -> list[dict]:
        """score_pair over the frames in order, keeping motion's previous planes."""
        keep = self._engine_plan.history > 0
        prev, prev_prev = self._prev, self._prev_prev
        rows: list[dict[str, Any]] = []
        for ref, d in zip(refs, dis, strict=True):
            rows.append(
                score_pair(self._engine_plan, ref, d, prev, self.bitdepth, prev_prev_ref=prev_prev)
            )
            if keep:
                prev_prev, prev = prev, np.array(ref, copy=True)  # the caller may reuse ref
        self._prev, self._prev_prev = prev, prev_prev
        return rows

    def _score_on(self, engine: Any, refs: Sequence[Any], dis: Sequence[Any]) -> list[dict]:
        """The frames through a pipeline engine (CUDA or compiled), a batch at a time; on
        the GPU device planes stay on the device (stacked there), host planes are uploaded.
        The engine keeps motion's previous reference planes itself."""
        rows: list[dict[str, Any]] = []
        for c0 in range(0, len(refs), engine.batch):
            ref = _stack(refs[c0 : c0 + engine.batch])
            d = _stack(dis[c0 : c0 + engine.batch])
            arrays = engine.collect(engine.submit(ref, [d], len(ref)))[0]
            names = list(arrays)
            table = np.stack([arrays[n] for n in names], axis=1).tolist()
            rows += [dict(zip(names, r, strict=True)) for r in table]
        return rows

    def _score_host(
        self,
        refs: Sequence[Any],
        dis: Sequence[Any],
        ref_chroma: list[np.ndarray] | None,
        dis_chroma: list[np.ndarray] | None,
    ) -> list[dict[str, Any]]:
        """The host features of the frames (:meth:`HostFeatures.compute`, as admcuda.score
        runs it on each batch): floats, and PSNR's squared-error sums as Python ints."""
        n = len(refs)
        if self._host is None:
            return [{} for _ in range(n)]
        if self._host_luma:
            ref = np.stack([_on_host(p) for p in refs])
            d = np.stack([_on_host(p) for p in dis])
        else:  # speed_chroma alone reads no luma
            ref = d = np.empty((n, 0, 0), self.dtype)
        rc = np.stack(ref_chroma) if ref_chroma is not None else None
        dc = np.stack(dis_chroma) if dis_chroma is not None else None
        arrays = self._host.compute(ref, rc, [d], [dc], n)[0]
        columns = {name: a.tolist() for name, a in arrays.items()}
        return [{name: values[k] for name, values in columns.items()} for k in range(n)]

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

    def _chroma_pairs(
        self, refs: Sequence[Any], dis: Sequence[Any], whats: tuple[str, str]
    ) -> tuple[list[np.ndarray] | None, list[np.ndarray] | None]:
        """Each frame's Cb and Cr planes on the host, flat (Cb then Cr, as the pipeline
        reads them), where a feature reads chroma; None elsewhere (unread)."""
        if self._chroma_shape is None:
            return None, None
        out: list[list[np.ndarray]] = []
        for frames, what in zip((refs, dis), whats, strict=True):
            flat = []
            for k, pair in enumerate(frames):
                where = what if len(frames) == 1 else f"{what}[{k}]"
                flat.append(self._chroma_pair(pair, where))
            out.append(flat)
        return out[0], out[1]

    def _chroma_pair(self, pair: Any, what: str) -> np.ndarray:
        ch, cw = self._chroma_shape  # type: ignore[misc]
        kinds = " and ".join(_chroma_readers(self.plan))
        if pair is None:
            raise AdmError(
                f"{kinds} read{'s' if ' and ' not in kinds else ''} the chroma planes: give "
                f"ref_chroma=(cb, cr) and dis_chroma=(cb, cr), planes of shape ({ch}, {cw}) "
                f"for {self.pixel_format}"
            )
        if isinstance(pair, np.ndarray) or hasattr(pair, "__dlpack__"):
            planes = as_array(pair, on_gpu=False, what=what)
            if planes.ndim != 3 or len(planes) != 2:
                raise AdmError(
                    f"{what} must be (cb, cr) or a (2, {ch}, {cw}) array, got shape "
                    f"{tuple(planes.shape)}"
                )
        elif isinstance(pair, Sequence) and not isinstance(pair, (str, bytes)) and len(pair) == 2:
            planes = [as_array(p, on_gpu=False, what=what) for p in pair]
        else:
            raise AdmError(f"{what} must be a (cb, cr) pair of 2-D planes")
        flat = []
        for plane, name in zip(planes, ("Cb", "Cr"), strict=True):
            label = f"{what} {name} plane ({self.pixel_format})"
            if plane.ndim != 2:
                raise AdmError(f"{label} must be 2-D, got {plane.ndim} dimensions")
            check_plane(plane, label, plane.shape, cw, ch, self.dtype, self.bitdepth)
            flat.append(plane.reshape(-1))
        return np.concatenate(flat)

    def _check(self, arr: np.ndarray, what: str, frame_shape: tuple[int, ...]) -> None:
        check_plane(arr, what, frame_shape, self.width, self.height, self.dtype, self.bitdepth)


def _frames_of(chroma: Any, n: int, what: str) -> Sequence[Any]:
    """A batch's chroma argument as ``n`` per-frame pairs (None: ``n`` Nones)."""
    if chroma is None:
        return [None] * n
    if isinstance(chroma, (str, bytes)) or not (
        isinstance(chroma, Sequence) or hasattr(chroma, "__len__")
    ):
        raise AdmError(f"{what} must be a sequence of (cb, cr) pairs or an (n, 2, h, w) array")
    if len(chroma) != n:
        raise AdmError(f"{what} holds {len(chroma)} frames, the luma {n}")
    return chroma  # type: ignore[no-any-return]


def _chroma_readers(plan: FeaturePlan) -> list[str]:
    """The host features that read chroma planes: psnr, speed_chroma, float_motion with
    its ``motion_add_uv``, ciede, psnr_hvs."""
    kinds = {
        ex.kind
        for ex in plan.host_extractors
        if ex.kind != "float_motion" or ex.options.motion_add_uv  # type: ignore[union-attr]
    }
    return sorted(kinds & _CHROMA_KINDS)


def _on_host(plane: Any) -> np.ndarray:
    """A luma plane as a NumPy array: CuPy ones (the CUDA backend's) copied to the host."""
    if isinstance(plane, np.ndarray):
        return plane
    return as_array(plane, on_gpu=False, what="frame")  # type: ignore[no-any-return]


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

    if not usable(ext.width, ext.height, ext._engine_plan, None):
        return None
    from admcuda.backends.compiled import CompiledEngine

    return CompiledEngine(ext.width, ext.height, ext.bitdepth, None, plan=ext._engine_plan,
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
        return CudaVmaf(ext.width, ext.height, ext.bitdepth, ext._engine_plan, batch=batch or 32,
                        device=device)  # fmt: skip
    except AdmError as exc:
        raise AdmError(f"CUDA backend unavailable: {exc}") from None
    except (ImportError, ValueError, RuntimeError) as exc:
        raise AdmError(f"CUDA backend unavailable: {type(exc).__name__}: {exc}") from None

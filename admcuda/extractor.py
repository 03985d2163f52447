"""A stateful ADM extractor with libvmaf's lifecycle: init once, extract per frame, close.

libvmaf's feature extractors (``feature_extractor.h``) are created for one frame size
and bit depth, allocate their buffers in ``init``, score one frame pair per
``extract(ref, dis, index)`` call and free everything in ``close``.
:class:`AdmExtractor` does the same on top of either backend:

- ``"cpu"``: :func:`admcuda.reference.compute_adm`, frame by frame;
- ``"cuda"``: :class:`admcuda.backends.cuda.CudaAdm`, whose device buffers are
  allocated (and kernels compiled) once, in the constructor.

Frames may be NumPy arrays, CuPy arrays or any array that speaks DLPack (a PyTorch
tensor, a JAX array...). For the CUDA backend, GPU arrays stay on the GPU and NumPy
arrays are uploaded; for the CPU backend, GPU arrays are copied to the host.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from admcuda import backends
from admcuda.backends import check_backend
from admcuda.closing import Closing
from admcuda.errors import AdmError
from admcuda.io.formats import check_geometry
from admcuda.numeric import check_integer
from admcuda.options import (
    NON_DEBUG_BASE_NAMES,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    ScoreDict,
    feature_names,
    resolve_options,
)

__all__ = [
    "AdmExtractor",
    "as_array",
    "check_plain_array",
    "check_plane",
    "check_sample_range",
    "resolve_options",
]


# DLPack device types (dlpack.h, DLDeviceType): host memory, and the CUDA kinds that
# CuPy can import (device, pinned host, managed).
_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_HOST = 3
_DL_CUDA_MANAGED = 13
_DL_GPU_TYPES = frozenset({_DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED})


def _is_cupy(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "cupy"


def _import_cupy(why: str) -> Any:
    try:
        import cupy
    except ImportError:
        raise AdmError(f"{why} needs CuPy, which is not installed") from None
    return cupy


def _dlpack_device_type(x: Any) -> int:
    try:
        return int(x.__dlpack_device__()[0])
    except Exception as exc:  # noqa: BLE001 - any failure: not a usable DLPack array
        raise AdmError(f"cannot read the DLPack device of {type(x).__name__}: {exc}") from None


def check_plain_array(x: Any, what: str) -> None:
    """Refuse the NumPy array kinds whose samples do not mean what they hold: a masked
    array (its masked samples would be scored as whatever lies under the mask) and
    ``np.matrix`` (whose products and indexing are not an array's)."""
    if isinstance(x, (np.ma.MaskedArray, np.matrix)):
        raise AdmError(
            f"{what} is a {type(x).__name__}; pass a plain array (np.asarray, with any "
            "masked samples filled)"
        )


def check_plane(
    arr: Any,
    what: str,
    frame_shape: tuple[int, ...],
    width: int,
    height: int,
    dtype: Any,
    bitdepth: int,
) -> None:
    """An extractor's input plane (or stack, whose planes are ``frame_shape``): its shape,
    dtype and value range, each refused in one line; ``arr`` is NumPy or CuPy."""
    want = (height, width)
    if tuple(frame_shape) != want:
        raise AdmError(f"{what} has shape {tuple(arr.shape)}, expected (height, width) = {want}")
    if arr.dtype != dtype:
        raise AdmError(f"{what} is {arr.dtype}, expected {dtype} for {bitdepth}-bit input")
    check_sample_range(arr, bitdepth, what)


def check_sample_range(arr: Any, bitdepth: int, what: str) -> None:
    """Refuse a 10- or 12-bit plane (NumPy or CuPy) with a sample above the bit depth's
    largest; 8 and 16 bits fill their dtype."""
    if bitdepth in (10, 12) and arr.size:
        peak = int(arr.max())
        if peak >> bitdepth:
            raise AdmError(f"{what} has sample value {peak}, too large for {bitdepth} bits")


def _free_device_pool() -> None:
    """Return CuPy's cached device blocks to the driver (after an allocation failed)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()


def as_array(x: Any, *, on_gpu: bool, what: str) -> Any:
    """``x`` as a NumPy array (``on_gpu`` False) or as a NumPy or CuPy array (True).

    With ``on_gpu`` True, device arrays become CuPy arrays without a copy and host
    arrays stay NumPy (the CUDA backend uploads them). With ``on_gpu`` False, device
    arrays are copied to the host.
    """
    if isinstance(x, np.ndarray):
        check_plain_array(x, what)
        return x
    if _is_cupy(x):
        return x if on_gpu else x.get()
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device = _dlpack_device_type(x)
        if device == _DL_CPU:
            try:
                return np.from_dlpack(x)
            except Exception as exc:  # noqa: BLE001 - e.g. an unsupported dtype
                raise AdmError(f"cannot import {what} through DLPack: {exc}") from None
        if device in _DL_GPU_TYPES:
            cupy = _import_cupy(f"{what} on a GPU")
            try:
                arr = cupy.from_dlpack(x)
            except Exception as exc:  # noqa: BLE001
                raise AdmError(f"cannot import {what} through DLPack: {exc}") from None
            return arr if on_gpu else arr.get()
        raise AdmError(
            f"{what} lives on DLPack device type {device}; only CPU and CUDA memory are supported"
        )
    raise AdmError(f"{what} must be a NumPy, CuPy or DLPack-capable array, got {type(x).__name__}")


class AdmExtractor(Closing):
    """libvmaf's integer ADM for one frame size and bit depth.

    Parameters
    ----------
    width, height : int
        Luma size in pixels; both must exceed 16.
    bitdepth : {8, 10, 12, 16}, optional
        Bits per sample. Planes are ``uint8`` for 8 bits and ``uint16`` otherwise.
    options : AdmOptions, mapping or str, optional
        ADM options; a mapping of names or aliases is parsed by
        :meth:`AdmOptions.from_mapping`, a string as ``--option`` reads it
        (``"egl=1.2:nvd=4"``). ``debug=True`` adds the 11 debug outputs.
    backend : {"auto", "cpu", "cuda"}, optional
        ``"auto"`` (default) takes CUDA when its module loads and a GPU is visible,
        and the CPU otherwise.
    batch : int, optional
        Frames per GPU launch for :meth:`extract_batch` on the CUDA backend (the
        backend's default if omitted); ignored on the CPU.
    device : int, optional
        The GPU's CUDA ordinal (default: the current device); ignored on the CPU.

    Attributes
    ----------
    width, height, bitdepth : int
    options : AdmOptions
    backend : {"cpu", "cuda"}
        The backend actually in use.
    names : dict of str to str
        libvmaf base name -> output name (with the option suffix).
    output_names : tuple of str
        The names each result dict carries, in libvmaf's order: 7, or 18 in debug mode.
    frames_extracted : int
        Frame pairs scored so far; the next default ``index``.

    Raises
    ------
    AdmError
        Bad geometry, options or batch; an unknown backend; ``"cuda"`` when the CUDA
        backend cannot run.

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.full((36, 64), 128, np.uint8)
    >>> with AdmExtractor(64, 36, backend="cpu") as adm:
    ...     scores = adm.extract(ref, ref)
    >>> scores["integer_adm2"]
    1.0
    """

    def __init__(
        self,
        width: int,
        height: int,
        bitdepth: int = 8,
        *,
        options: AdmOptions | Mapping[str, str | bool | int | float] | str | None = None,
        backend: str = "auto",
        batch: int | None = None,
        device: int | None = None,
    ) -> None:
        check_geometry(width, height, "400", bitdepth)
        if batch is not None:
            batch = check_integer("batch", batch, 1)
        check_backend(backend)
        self.width = operator.index(width)  # NumPy integers become ints
        self.height = operator.index(height)
        self.bitdepth = operator.index(bitdepth)
        self.options = resolve_options(options)
        self.dtype = np.dtype(np.uint8 if bitdepth == 8 else np.uint16)
        self.names = feature_names(self.options)
        self._bases = OUTPUT_BASE_NAMES if self.options.debug else NON_DEBUG_BASE_NAMES
        self.output_names = tuple(self.names[base] for base in self._bases)
        self.frames_extracted = 0
        self._cuda: Any = None
        self._closed = False
        self.device = None if device is None else check_integer("device", device, 0)
        from admcuda.quirks import warn_small_height

        warn_small_height(width, height, self.options)
        if backend == "cpu":
            self.backend = "cpu"
            return
        try:
            self._cuda = self._open_cuda(batch)
            self.backend = "cuda"
        except AdmError:
            if backend == "cuda":
                raise
            self.backend = "cpu"

    def _open_cuda(self, batch: int | None) -> Any:
        return backends.open_cuda_adm(
            self.width, self.height, self.bitdepth, self.options, batch=batch, device=self.device
        )

    # -- lifecycle

    def close(self) -> None:
        """Release the backend's buffers (the GPU engine's device and page-locked memory).
        Further extraction raises; closing again is a no-op."""
        engine, self._cuda = self._cuda, None
        close = getattr(engine, "close", None)
        if close is not None:
            close()
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"frames_extracted={self.frames_extracted}"
        changed = self.options.non_default()
        opts = f", options={changed}" if changed else ""
        return (
            f"AdmExtractor({self.width}x{self.height}, {self.bitdepth}-bit, "
            f"backend={self.backend!r}{opts}, {state})"
        )

    # -- extraction

    def extract(self, ref: Any, dis: Any, index: int | None = None) -> dict[str, float]:
        """Score one frame pair.

        Parameters
        ----------
        ref, dis : array
            2-D luma planes of shape ``(height, width)``: NumPy, CuPy, or any
            DLPack-capable array; ``uint8`` for 8 bits, ``uint16`` otherwise.
        index : int, optional
            Frame index, as libvmaf's ``extract`` takes it; by default the number of
            frames scored so far. Only the counter depends on it: the scores of a
            frame pair do not (ADM has no temporal state).

        Returns
        -------
        dict of str to float
            The 7 outputs (18 with ``debug``) under libvmaf's names, in its order.

        Raises
        ------
        AdmError
            Closed extractor; wrong type, shape or dtype; a sample too large for the
            bit depth.
        """
        self._check_open()
        if index is not None:
            self._check_index(index)
        on_gpu = self._cuda is not None
        ref = self._plane(ref, "reference frame", on_gpu)
        dis = self._plane(dis, "distorted frame", on_gpu)
        if on_gpu:
            raw = self._gpu_scores(ref[None], dis[None])
        else:
            raw = [self._cpu_scores(ref, dis)]
        self._advance(index, 1)
        return self._name(raw[0])

    def extract_batch(
        self, refs: Any, dis: Any, start_index: int | None = None
    ) -> list[dict[str, float]]:
        """Score several frame pairs at once.

        On the CUDA backend the frames run through the GPU a batch at a time; on the
        CPU, one after another.

        Parameters
        ----------
        refs, dis : array or sequence of arrays
            Either a 3-D ``(n, height, width)`` array (NumPy, CuPy or DLPack) or a
            sequence of 2-D planes; both sides must hold the same number of frames.
        start_index : int, optional
            Index of the first pair; by default the number of frames scored so far.

        Returns
        -------
        list of dict of str to float
            One dict per frame pair, as :meth:`extract` returns.

        Raises
        ------
        AdmError
            As :meth:`extract`, or when the two sides differ in length.
        """
        self._check_open()
        if start_index is not None:
            self._check_index(start_index)
        on_gpu = self._cuda is not None
        ref_stack = self._stack(refs, "reference frames", on_gpu)
        dis_stack = self._stack(dis, "distorted frames", on_gpu)
        if ref_stack.shape[0] != dis_stack.shape[0]:
            raise AdmError(
                f"{ref_stack.shape[0]} reference frames but {dis_stack.shape[0]} distorted frames"
            )
        n = ref_stack.shape[0]
        if n == 0:
            return []
        if on_gpu:
            raw = self._gpu_scores(ref_stack, dis_stack)
        else:
            raw = [self._cpu_scores(r, d) for r, d in zip(ref_stack, dis_stack, strict=True)]
        if len(raw) != n:
            raise AdmError(f"backend returned {len(raw)} frames of scores for {n} frame pairs")
        self._advance(start_index, n)
        return [self._name(scores) for scores in raw]

    # -- helpers

    def _check_open(self) -> None:
        if self._closed:
            raise AdmError("this AdmExtractor is closed")

    @staticmethod
    def _check_index(index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise AdmError(f"frame index must be a non-negative integer, got {index!r}")

    def _advance(self, start: int | None, n: int) -> None:
        first = self.frames_extracted if start is None else int(start)
        self.frames_extracted = first + n

    def _gpu_scores(self, ref: Any, dis: Any) -> list[Mapping[str, float]]:
        """The engine's scores of a stack of pairs; where the GPU runs out of memory
        (another process may hold most of it), of each half in turn. ADM keeps no state
        from one frame to the next, so the halves give the same numbers."""
        try:
            return self._cuda.scores(ref, dis)
        except MemoryError as exc:  # CuPy's OutOfMemoryError is one
            _free_device_pool()
            n = ref.shape[0]
            if n == 1:
                raise AdmError(
                    f"not enough GPU memory to score one {self.width}x{self.height} frame "
                    f"pair: {exc}"
                ) from None
        half = n // 2
        return self._gpu_scores(ref[:half], dis[:half]) + self._gpu_scores(ref[half:], dis[half:])

    def _cpu_scores(self, ref: np.ndarray, dis: np.ndarray) -> dict[str, float]:
        from admcuda.reference import compute_adm

        try:
            return compute_adm(ref, dis, self.bitdepth, self.options)
        except ValueError as exc:
            raise AdmError(str(exc)) from None

    def _name(self, scores: Mapping[str, float]) -> dict[str, float]:
        missing = [base for base in self._bases if base not in scores]
        if missing:
            raise AdmError(f"backend gave no {', '.join(missing)}")
        return ScoreDict(((self.names[b], float(scores[b])) for b in self._bases), self.names)

    def _check(self, arr: Any, what: str, frame_shape: tuple[int, ...]) -> None:
        check_plane(arr, what, frame_shape, self.width, self.height, self.dtype, self.bitdepth)

    def _plane(self, x: Any, what: str, on_gpu: bool) -> Any:
        arr = as_array(x, on_gpu=on_gpu, what=what)
        if arr.ndim != 2:
            raise AdmError(f"{what} must be a 2-D luma plane, got {arr.ndim} dimensions")
        self._check(arr, what, arr.shape)
        return arr

    def _stack(self, frames: Any, what: str, on_gpu: bool) -> Any:
        """A ``(n, height, width)`` NumPy or CuPy array from a 3-D array or a sequence."""
        if isinstance(frames, np.ndarray) or _is_cupy(frames) or hasattr(frames, "__dlpack__"):
            arr = as_array(frames, on_gpu=on_gpu, what=what)
            if arr.ndim != 3:
                raise AdmError(
                    f"{what} must be a 3-D (n, height, width) array or a sequence of 2-D "
                    f"planes, got {arr.ndim} dimensions"
                )
            self._check(arr, what, arr.shape[1:])
            return arr
        if not isinstance(frames, Sequence):
            raise AdmError(
                f"{what} must be a 3-D array or a sequence of 2-D planes, "
                f"got {type(frames).__name__}"
            )
        planes = [self._plane(p, f"{what}[{k}]", on_gpu) for k, p in enumerate(frames)]
        if not planes:
            return np.empty((0, self.height, self.width), self.dtype)
        if any(_is_cupy(p) for p in planes):
            cupy = _import_cupy(what)
            return cupy.stack([cupy.asarray(p) for p in planes])
        return np.stack(planes)

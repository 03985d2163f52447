"""admcuda: libvmaf's integer ADM feature, on the CPU and with CUDA.

Public API: :class:`AdmOptions`, :class:`AdmError`, :func:`score_files` (one
distorted input) and :func:`score_ladder` (several distorted inputs against one
reference, read once). Inputs may be raw YUV, Y4M or any video ffmpeg decodes
(:func:`admcuda.inputs.open_input`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# In a source checkout the reference and the kernels live beside this package
# (<root>/reference, <root>/kernels) and are installed into it by pyproject's
# package-dir mapping. Without an install, let the package path reach the root
# so that ``admcuda.reference`` and ``admcuda.kernels`` resolve the same way.
_root = Path(__file__).resolve().parent.parent
if (
    not (Path(__file__).resolve().parent / "reference").is_dir()
    and (_root / "pyproject.toml").is_file()
    and str(_root) not in __path__
):
    __path__.append(str(_root))
del _root

import numpy as np  # noqa: E402 - after the path set-up above

from admcuda.errors import AdmError  # noqa: E402
from admcuda.options import (  # noqa: E402
    NON_DEBUG_BASE_NAMES,
    OUTPUT_BASE_NAMES,
    AdmOptions,
    feature_names,
)

if TYPE_CHECKING:
    from admcuda.pipeline import RunStats
    from admcuda.result import AdmResult

__all__ = [
    "AdmError",
    "AdmExtractor",
    "AdmOptions",
    "AdmResult",
    "__version__",
    "score",
    "score_files",
    "score_ladder",
]

__version__ = "0.1.0"


_log = logging.getLogger("admcuda")

PathLike = str | os.PathLike[str]
OptionsArg = AdmOptions | Mapping[str, str | bool | int | float] | None


@dataclass(frozen=True)
class _LadderRun:
    """Scores of a ladder run and what the CLI needs to report them."""

    frames: list[list[dict[str, float]]]
    frame_numbers: list[list[int]]
    width: int
    height: int
    pixel_format: str
    bitdepth: int
    ref: str
    dis: list[str]
    opts: AdmOptions


def _resolve_options(options: OptionsArg, debug: bool) -> AdmOptions:
    if options is None:
        opts = AdmOptions()
    elif isinstance(options, AdmOptions):
        opts = options
    else:
        opts = AdmOptions.from_mapping(options)
    if debug and not opts.debug:
        opts = opts.replace(debug=True)
    return opts


def score_files(
    ref_path: PathLike,
    dis_path: PathLike,
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    options: OptionsArg = None,
    backend: str = "auto",
    debug: bool = False,
    frame_cnt: int | None = None,
    frame_skip_ref: int = 0,
    frame_skip_dist: int = 0,
    subsample: int = 1,
    threads: int | None = None,
) -> list[dict[str, float]]:
    """Score a reference and a distorted input, frame by frame.

    Parameters
    ----------
    ref_path, dis_path : str or os.PathLike
        Raw YUV (``.yuv``/``.raw``), Y4M, or any video ffmpeg decodes; see
        :func:`admcuda.inputs.open_input`.
    width, height : int, optional
        Luma size in pixels, both > 16. Needed for raw YUV unless the other
        input is Y4M or video; checked against Y4M and video otherwise.
    pixel_format : {"420", "422", "444", "400"}, optional
        Raw YUV chroma layout; default that of a Y4M/video partner, else 420.
    bitdepth : {8, 10, 12, 16}, optional
        Raw YUV bit depth; default that of a Y4M/video partner, else 8.
    options : AdmOptions or mapping, optional
        ADM options; a mapping is parsed by :meth:`AdmOptions.from_mapping`.
    backend : {"auto", "cpu", "cuda"}, optional
    debug : bool, optional
        Also return the debug outputs (``integer_adm``, numerators,
        denominators); the same as the ``debug`` option.
    frame_cnt : int, optional
        Read at most this many frames (after skipping).
    frame_skip_ref, frame_skip_dist : int, optional
        Drop this many frames from the start of the reference / distorted input.
    subsample : int, optional
        Score frames ``0, N, 2N, ...`` only, as libvmaf's ``--subsample N``;
        scored frame ``j`` is frame number ``j * N``.
    threads : int, optional
        CPU backend: worker processes (default: the usable cores), as libvmaf's
        ``--threads``.

    Returns
    -------
    list of dict of str to float
        One dict per scored frame, keyed by the names libvmaf writes (with the
        option suffix, e.g. ``integer_adm2_egl_1.2``), in libvmaf's order: 7
        outputs, or 18 in debug mode. If the inputs hold different numbers of
        frames, the common ones are scored and a warning is logged, as libvmaf
        does.

    Raises
    ------
    AdmError
        On bad options or geometry, unreadable or mismatched inputs, or an
        unavailable backend.
    """
    return score_ladder(
        ref_path,
        [dis_path],
        width=width,
        height=height,
        pixel_format=pixel_format,
        bitdepth=bitdepth,
        options=options,
        backend=backend,
        debug=debug,
        frame_cnt=frame_cnt,
        frame_skip_ref=frame_skip_ref,
        frame_skip_dist=frame_skip_dist,
        subsample=subsample,
        threads=threads,
    )[0]


def score_ladder(
    ref_path: PathLike,
    dis_paths: Sequence[PathLike],
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    options: OptionsArg = None,
    backend: str = "auto",
    debug: bool = False,
    frame_cnt: int | None = None,
    frame_skip_ref: int = 0,
    frame_skip_dist: int = 0,
    subsample: int = 1,
    threads: int | None = None,
) -> list[list[dict[str, float]]]:
    """Score one reference against several distorted inputs (an encoding ladder).

    The reference is read and decoded once: each of its frames is scored
    against the frame of the same number in every distorted input. All inputs
    must have the same size and bit depth.

    Parameters
    ----------
    ref_path : str or os.PathLike
    dis_paths : sequence of str or os.PathLike
        At least one distorted input.
    width, height, pixel_format, bitdepth, options, backend, debug, frame_cnt, \
frame_skip_ref, frame_skip_dist, subsample, threads
        As for :func:`score_files`; ``frame_skip_dist`` applies to every
        distorted input.

    Returns
    -------
    list of list of dict of str to float
        One list per distorted input, in the order given, each as
        :func:`score_files` returns it. Distorted inputs of different lengths
        each get the frames they share with the reference.

    Raises
    ------
    AdmError
        As :func:`score_files`.
    """
    return _run_ladder(
        ref_path,
        dis_paths,
        width=width,
        height=height,
        pixel_format=pixel_format,
        bitdepth=bitdepth,
        opts=_resolve_options(options, debug),
        backend=backend,
        frame_cnt=frame_cnt,
        frame_skip_ref=frame_skip_ref,
        frame_skip_dist=frame_skip_dist,
        subsample=subsample,
        threads=threads,
    ).frames


def score(
    ref_path: PathLike,
    dis: PathLike | Sequence[PathLike],
    *,
    backend: str = "auto",
    options: OptionsArg = None,
    debug: bool = False,
    **kwargs: int | str | None,
) -> AdmResult | list[AdmResult]:
    """Score a reference against one distorted input, or several, into result objects.

    Parameters
    ----------
    ref_path : str or os.PathLike
        Raw YUV, Y4M or an encoded video.
    dis : str, os.PathLike, or a sequence of them
        One distorted input (returns one :class:`AdmResult`) or several (a list).
    backend, options, debug
        As for :func:`score_files`.
    **kwargs
        ``width``, ``height``, ``pixel_format``, ``bitdepth`` (raw YUV), ``frame_cnt``,
        ``frame_skip_ref``, ``frame_skip_dist``, ``subsample``, ``threads`` (CPU worker
        processes), ``host_memory`` (bytes of host frame buffers).

    Returns
    -------
    AdmResult or list of AdmResult
        Per-frame dicts keyed by libvmaf's names, pooled statistics and writers
        (``to_json``, ``to_xml``, ``to_csv``).

    Examples
    --------
    >>> result = admcuda.score("ref.y4m", "dis.mp4")  # doctest: +SKIP
    >>> result.pooled["integer_adm2"]["mean"]  # doctest: +SKIP
    """
    import time

    from admcuda.backends import select_backend
    from admcuda.result import AdmResult

    many = not isinstance(dis, (str, os.PathLike))
    dis_paths = list(dis) if many else [dis]
    opts = _resolve_options(options, debug)
    resolved, _ = select_backend(backend)
    start = time.perf_counter()
    run = _run_ladder(
        ref_path,
        dis_paths,
        opts=opts,
        backend=resolved,
        width=kwargs.pop("width", None),
        height=kwargs.pop("height", None),
        pixel_format=kwargs.pop("pixel_format", None),
        bitdepth=kwargs.pop("bitdepth", None),
        **kwargs,
    )  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    results = [
        AdmResult(
            frames,
            {
                "width": run.width,
                "height": run.height,
                "bitdepth": run.bitdepth,
                "pixel_format": run.pixel_format,
                "options": opts,
                "backend": resolved,
                "ref_path": run.ref,
                "dis_path": path,
                "fps": len(frames) / elapsed if elapsed > 0 else math.inf,
            },
            frame_numbers=numbers,
        )
        for frames, numbers, path in zip(run.frames, run.frame_numbers, run.dis, strict=True)
    ]
    return results if many else results[0]


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    # The extractor and the result pull in more modules; load them on first use.
    if name == "AdmExtractor":
        from admcuda.extractor import AdmExtractor

        return AdmExtractor
    if name == "AdmResult":
        from admcuda.result import AdmResult

        return AdmResult
    if name == "score_many":
        from admcuda.batch import score_many

        return score_many
    raise AttributeError(f"module 'admcuda' has no attribute {name!r}")


def _run_ladder(
    ref_path: PathLike,
    dis_paths: Sequence[PathLike],
    *,
    width: int | None,
    height: int | None,
    pixel_format: str | None,
    bitdepth: int | None,
    opts: AdmOptions,
    backend: str,
    frame_cnt: int | None = None,
    frame_skip_ref: int = 0,
    frame_skip_dist: int = 0,
    subsample: int = 1,
    progress: bool = False,
    threads: int | None = None,
    host_memory: int | None = None,
    batch: int | None = None,
    stats: RunStats | None = None,
) -> _LadderRun:
    """Open the inputs, score them through the streaming pipeline, check lengths, name
    outputs.

    With ``progress`` a bar on stderr (when it is a terminal) counts reference frames.
    ``threads`` is the CPU backend's worker processes; ``host_memory`` the bytes of host
    frame buffers; ``batch`` the GPU's frames per batch; ``stats`` (a
    :class:`admcuda.pipeline.RunStats`) receives timings.
    """
    from admcuda.backends import engine_for, select_backend
    from admcuda.inputs import FrameSelection, open_inputs
    from admcuda.pipeline import make_source, run
    from admcuda.progress import Progress

    selection = FrameSelection(
        frame_cnt=frame_cnt,
        frame_skip_ref=frame_skip_ref,
        frame_skip_dist=frame_skip_dist,
        subsample=subsample,
    )
    backend, _ = select_backend(backend)
    with open_inputs(
        ref_path, list(dis_paths), width=width, height=height,
        pixel_format=pixel_format, bitdepth=bitdepth,
    ) as inputs:  # fmt: skip
        ref = make_source(
            inputs.ref, skip=selection.frame_skip_ref, limit=frame_cnt, subsample=subsample
        )
        dis = [
            make_source(d, skip=selection.frame_skip_dist, limit=frame_cnt, subsample=subsample)
            for d in inputs.dis
        ]
        try:
            for stream in (ref, *dis):
                if stream.available == 0:
                    raise _nothing_left(stream)
            scored = [d.scored for d in dis] + [ref.scored]
            frames = None if None in scored else max(min(ref.scored, d.scored) for d in dis)
            total = ref.scored
            w, h, bd = inputs.width, inputs.height, inputs.bitdepth
            with Progress(total, enabled=progress) as bar, engine_for(
                backend, w, h, bd, opts, inputs=len(dis), frames=frames, threads=threads,
                host_memory=host_memory, batch=batch,
            ) as engine:  # fmt: skip
                arrays = run(
                    ref, dis, engine, width=w, height=h,
                    dtype=np.uint8 if bd == 8 else np.uint16,
                    on_frames=bar.update, stats=stats,
                )  # fmt: skip
            for stream in dis:
                _warn_if_lengths_differ(ref, stream)
            for stream, per_stream in zip(dis, arrays, strict=True):
                if not per_stream:
                    raise _nothing_left(ref if ref.read == 0 else stream)
        finally:
            for stream in (ref, *dis):
                stream.close()
        geometry = (inputs.width, inputs.height, inputs.pixel_format, inputs.bitdepth)

    names = feature_names(opts)
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    results: list[list[dict[str, float]]] = []
    for per_input in arrays:
        missing = [base for base in wanted if base not in per_input]
        if missing:
            raise AdmError(f"backend gave no {', '.join(missing)}")
        keys = [names[base] for base in wanted]
        rows = np.stack([per_input[base] for base in wanted], axis=1).tolist()
        results.append([dict(zip(keys, row, strict=True)) for row in rows])
    return _LadderRun(
        frames=results,
        frame_numbers=[selection.frame_numbers(len(f)) for f in results],
        width=geometry[0],
        height=geometry[1],
        pixel_format=geometry[2],
        bitdepth=geometry[3],
        ref=os.fspath(ref_path),
        dis=[os.fspath(p) for p in dis_paths],
        opts=opts,
    )


def _stream_name(stream: Any) -> str:
    return f"{stream.reader.label} file {str(stream.reader.path)!r}"


def _nothing_left(stream: Any) -> AdmError:
    flag = "--frame-skip-ref" if stream.reader.label == "reference" else "--frame-skip-dist"
    total = stream.reader.num_frames
    if stream.skip:
        held = f"{total} frames" if total is not None else "no more frames"
        return AdmError(
            f"nothing to score: {_stream_name(stream)} has {held}, and {flag} "
            f"{stream.skip} skips them all"
        )
    return AdmError(f"nothing to score: {_stream_name(stream)} gave no frames")


def _warn_if_lengths_differ(ref: Any, dis: Any) -> None:
    """Read just far enough to tell which stream is shorter; warn once if one is."""
    while ref.read != dis.read:
        shorter = ref if ref.read < dis.read else dis
        if not shorter.has_more():
            break
    if ref.read == dis.read:
        ref_more, dis_more = ref.has_more(), dis.has_more()
        if ref_more == dis_more:
            return
    shorter, longer = (ref, dis) if ref.read < dis.read else (dis, ref)
    available = longer.available
    longer_count = f"{available}" if available is not None else f"more than {shorter.read}"
    _log.warning(
        "%s ended before %s (%d vs %s frames); scoring the first %d",
        _stream_name(shorter), _stream_name(longer), shorter.read, longer_count, shorter.read,
    )  # fmt: skip

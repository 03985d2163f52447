"""admcuda: libvmaf's integer ADM feature, on the CPU and with CUDA.

Public API: :class:`AdmOptions`, :class:`AdmError`, :func:`score_files` (one
distorted input) and :func:`score_ladder` (several distorted inputs against one
reference, read once). Inputs may be raw YUV, Y4M or any video ffmpeg decodes
(:func:`admcuda.inputs.open_input`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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
    ScoreDict,
    feature_names,
    resolve_options,
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
OptionsArg = AdmOptions | Mapping[str, str | bool | int | float] | str | None


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
    errors: list[str | None] = field(default_factory=list)  # per distorted input
    backend: str = "cpu"  # the backend that scored
    decoded: dict[str, str] = field(default_factory=dict)  # video input -> nvdec/ffmpeg

    def raise_first_error(self) -> None:
        """Raise the first distorted input's error, if any (for the Python API)."""
        for error in self.errors:
            if error is not None:
                raise AdmError(error)


# Command-line spellings in the input layer's messages, and the API arguments they stand
# for: the Python functions speak of arguments, not flags.
_FLAG_VALUES = (
    (r"-w (\d+) -h (\d+)", r"width=\1, height=\2"),
    (r"-b (\d+)", r"bitdepth=\1"),
    (r"-p (\w+)", r"pixel_format='\1'"),
    (r"--(scale|decoder|backend) ([a-z][\w+]*)", r"\1='\2'"),
    (
        r"--(frame-skip-ref|frame-skip-dist|frame-cnt|subsample|threads) (\d+)",
        lambda m: f"{m.group(1).replace('-', '_')}={m.group(2)}",
    ),
    (r"--ignore-name", "ignore_name=True"),
    (r"-w/-h/-p/-b", "width/height/pixel_format/bitdepth"),
    (r"--width/--height", "width/height"),
    (r"-w and -h|-w/-h|--width and --height", "width and height"),
    (r"--(width|height|bitdepth|scale|decoder|backend|threads|subsample)\b", r"\1"),
    (
        r"--(pixel|frame)-(format|skip-ref|skip-dist|cnt)",
        lambda m: m.group(0)[2:].replace("-", "_"),
    ),
    (r"--gpu\b", "device"),
)


def _api_message(text: str) -> str:
    """An input-layer message with its command-line flags turned into argument names;
    what the message quotes ('a path', "a value") is left as it is."""
    import re

    parts = re.split(r"""('[^']*'|"[^"]*")""", text)
    for k in range(0, len(parts), 2):  # the parts outside quotes
        for pattern, repl in _FLAG_VALUES:
            parts[k] = re.sub(pattern, repl, parts[k])
    return "".join(parts)


class _ApiErrors:
    """Re-raise AdmError with argument names in place of command-line flags."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        if isinstance(exc, AdmError):
            raise AdmError(_api_message(str(exc))) from None
        return False


def _flag(name: str, value: object) -> bool:
    """A True/False argument: a bool or NumPy bool, or None for False; a string or a
    number is refused (``"no"`` would read as True)."""
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise AdmError(f"{name} must be True or False, got {value!r}")


def _resolve_options(options: OptionsArg, debug: bool) -> AdmOptions:
    debug = _flag("debug", debug)
    opts = resolve_options(options)
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
    device: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str = "auto",
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
    options : AdmOptions, mapping or str, optional
        ADM options; a mapping is parsed by :meth:`AdmOptions.from_mapping`, a string
        as ``--option`` reads it (``"egl=1.2:nvd=4"``).
    backend : {"auto", "cpu", "cuda"}, optional
    debug : bool, optional
        Also return the debug outputs (``integer_adm``, numerators,
        denominators); the same as the ``debug`` option.
    frame_cnt : int, optional
        Read at most this many frames (after skipping); 0 or None reads all, as
        libvmaf's ``--frame_cnt 0``.
    frame_skip_ref, frame_skip_dist : int, optional
        Drop this many frames from the start of the reference / distorted input.
    subsample : int, optional
        Score frames ``0, N, 2N, ...`` only, as libvmaf's ``--subsample N``;
        scored frame ``j`` is frame number ``j * N``.
    threads : int, optional
        CPU backend: worker processes (default: the usable cores), as libvmaf's
        ``--threads``.
    device : int, optional
        CUDA backend: the GPU's ordinal (default: the current device).
    ignore_name : bool, optional
        Do not check a raw file's name (a size, bit depth or layout in it) against the
        geometry given.
    scale : str, optional
        An ffmpeg scaler name (``"bicubic"`` ...): distorted inputs of another size are
        scaled to the reference's, as VMAF practice does for ladder rungs.
    decoder : {"auto", "ffmpeg", "nvdec"}, optional
        Who decodes encoded video: NVDEC on the GPU (with ``pip install
        "admcuda[nvdec]"``), ffmpeg, or ``"auto"``: NVDEC where the CUDA backend runs and
        PyNvVideoCodec decodes the codec, else ffmpeg.

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
        device=device,
        ignore_name=ignore_name,
        scale=scale,
        decoder=decoder,
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
    device: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str = "auto",
) -> list[list[dict[str, float]]]:
    """Score one reference against several distorted inputs (an encoding ladder).

    The reference is read and decoded once: each of its frames is scored
    against the frame of the same number in every distorted input. All inputs
    must have the same size and bit depth.

    Parameters
    ----------
    ref_path : str or os.PathLike
    dis_paths : sequence of str or os.PathLike
        At least one distorted input. One path (a str or os.PathLike) is refused, not
        taken as a sequence of characters: use :func:`score_files` for one input.
    width, height, pixel_format, bitdepth, options, backend, debug, frame_cnt, \
frame_skip_ref, frame_skip_dist, subsample, threads, device, ignore_name, scale, decoder
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
    with _ApiErrors():
        run = _run_ladder_api(
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
            device=device,
            ignore_name=ignore_name,
            scale=scale,
            decoder=decoder,
        )
    return run.frames


def score(
    ref_path: PathLike,
    dis: PathLike | Sequence[PathLike],
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    backend: str = "auto",
    options: OptionsArg = None,
    debug: bool = False,
    frame_cnt: int | None = None,
    frame_skip_ref: int = 0,
    frame_skip_dist: int = 0,
    subsample: int = 1,
    threads: int | None = None,
    device: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str = "auto",
    host_memory: int | None = None,
    batch: int | None = None,
) -> AdmResult | list[AdmResult]:
    """Score a reference against one distorted input, or several, into result objects.

    Parameters
    ----------
    ref_path : str or os.PathLike
        Raw YUV, Y4M or an encoded video.
    dis : str, os.PathLike, or a sequence of them
        One distorted input (returns one :class:`AdmResult`) or several (a list).
    width, height, pixel_format, bitdepth, backend, options, debug, frame_cnt, \
frame_skip_ref, frame_skip_dist, subsample, threads, device, ignore_name, scale, decoder
        As for :func:`score_files` (the names of the command line's long options).
    host_memory : int, optional
        Bytes of host frame buffers (page-locked on the GPU); default 1 GiB.
    batch : int, optional
        Frames per GPU batch; default by frame size.

    Returns
    -------
    AdmResult or list of AdmResult
        Per-frame dicts keyed by libvmaf's names (base names such as ``integer_adm2``
        work too), pooled statistics and writers (``to_json``, ``to_xml``, ``to_csv``).

    Examples
    --------
    >>> result = admcuda.score("ref.y4m", "dis.mp4")  # doctest: +SKIP
    >>> result.pooled["integer_adm2"]["mean"]  # doctest: +SKIP
    """
    import time

    from admcuda.result import AdmResult

    many = not isinstance(dis, (str, os.PathLike))
    dis_paths = list(dis) if many else [dis]
    opts = _resolve_options(options, debug)
    start = time.perf_counter()
    with _ApiErrors():
        run = _run_ladder_api(
            ref_path,
            dis_paths,
            opts=opts,
            backend=backend,
            width=width,
            height=height,
            pixel_format=pixel_format,
            bitdepth=bitdepth,
            frame_cnt=frame_cnt,
            frame_skip_ref=frame_skip_ref,
            frame_skip_dist=frame_skip_dist,
            subsample=subsample,
            threads=threads,
            device=device,
            ignore_name=ignore_name,
            scale=scale,
            decoder=decoder,
            host_memory=host_memory,
            batch=batch,
        )
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
                "backend": run.backend,
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


def _run_ladder_api(ref_path: PathLike, dis_paths: Sequence[PathLike], **kwargs: Any) -> _LadderRun:
    """:func:`_run_ladder` for the Python API: the arguments the command line's parser
    would check are checked here (NumPy integers taken as ints), and a rung's error is
    raised, in argument names."""
    from admcuda.yuv import check_integer, is_integer

    if isinstance(dis_paths, (str, bytes, os.PathLike)):
        raise AdmError("dis_paths must be a list of paths, not one path (score_files takes one)")
    dis_paths = list(dis_paths)
    for what, path in [("ref_path", ref_path)] + [("dis_path", p) for p in dis_paths]:
        if not isinstance(path, (str, os.PathLike)):
            raise AdmError(f"{what} must be a path (str or os.PathLike), got {type(path).__name__}")
    for key in ("width", "height", "bitdepth"):  # their range: check_geometry's messages
        if is_integer(kwargs.get(key)):
            kwargs[key] = int(kwargs[key])
    for key, low in (("threads", 1), ("host_memory", 1), ("batch", 1), ("device", 0)):
        if kwargs.get(key) is not None:
            kwargs[key] = check_integer(key, kwargs[key], low)
    kwargs["ignore_name"] = _flag("ignore_name", kwargs.get("ignore_name"))
    run = _run_ladder(ref_path, dis_paths, **kwargs)
    run.raise_first_error()
    return run


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
    device: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str = "auto",
    stats: RunStats | None = None,
    raw_flags: bool = False,
) -> _LadderRun:
    """Open the inputs, score them through the streaming pipeline, check lengths, name
    outputs.

    With ``progress`` a bar on stderr (when it is a terminal) counts reference frames.
    ``threads`` is the CPU backend's worker processes; ``host_memory`` the bytes of host
    frame buffers; ``batch`` the GPU's frames per batch; ``device`` the GPU; ``ignore_name``
    and ``scale`` go to :func:`admcuda.inputs.open_inputs`; ``decoder`` ("auto", "ffmpeg",
    "nvdec") decodes encoded video with ffmpeg or on the GPU's NVDEC ("auto": NVDEC where
    the CUDA backend runs, PyNvVideoCodec imports and the codec is supported); ``stats`` (a
    :class:`admcuda.pipeline.RunStats`) receives timings. ``backend="auto"`` takes the GPU
    and falls back to the CPU where the CUDA path cannot start (the reason lands in
    :data:`admcuda.backends.fallback_reason`). ``raw_flags``: the command line gave
    ``-w/-h/-p/-b``, with which libvmaf's tool reads every input as raw; a Y4M input then
    gets a warning.

    With several distorted inputs (a ladder) a rung that cannot be opened or read does
    not stop the others: its error is in ``errors`` and its ``frames`` are empty. With one
    distorted input its error is raised.
    """
    from admcuda.inputs import FrameSelection

    selection = FrameSelection(
        frame_cnt=frame_cnt,
        frame_skip_ref=frame_skip_ref,
        frame_skip_dist=frame_skip_dist,
        subsample=subsample,
    )
    dis_paths = list(dis_paths)
    ladder = len(dis_paths) > 1
    errors: dict[int, str] = {}
    geometry = dict(width=width, height=height, pixel_format=pixel_format, bitdepth=bitdepth)
    extra: dict[str, Any] = {k: v for k, v in (("ignore_name", ignore_name), ("scale", scale)) if v}
    video_decoder = _video_decoder(decoder, backend, scale)
    if video_decoder != "ffmpeg":
        extra.update(decoder=video_decoder, gpu=device or 0)
    inputs, good = _open_rungs(ref_path, dis_paths, geometry, extra, errors, ladder)
    if raw_flags:
        _warn_y4m_read_as_y4m(inputs.readers)
    with inputs:
        arrays, used = _score_inputs(
            inputs, selection, opts, backend, errors, good, ladder,
            progress=progress, threads=threads, host_memory=host_memory, batch=batch,
            device=device, stats=stats,
        )  # fmt: skip
        shape = (inputs.width, inputs.height, inputs.pixel_format, inputs.bitdepth)
        _warn_small_height(inputs.width, inputs.height, opts)
        decoded = {
            os.fspath(r.path): ("nvdec" if r.kind == "nvdec" else "ffmpeg")
            for r in inputs.readers
            if r.kind in ("video", "nvdec", "scaled")
        }

    names = feature_names(opts)
    wanted = OUTPUT_BASE_NAMES if opts.debug else NON_DEBUG_BASE_NAMES
    keys = [names[base] for base in wanted]
    results: list[list[dict[str, float]]] = [[] for _ in dis_paths]
    for k, per_input in zip(good, arrays, strict=True):
        if k in errors:
            continue
        missing = [base for base in wanted if base not in per_input]
        if missing:
            raise AdmError(f"backend gave no {', '.join(missing)}")
        rows = np.stack([per_input[base] for base in wanted], axis=1).tolist()
        results[k] = [ScoreDict(zip(keys, row, strict=True), names) for row in rows]
    return _LadderRun(
        frames=results,
        frame_numbers=[selection.frame_numbers(len(f)) for f in results],
        width=shape[0],
        height=shape[1],
        pixel_format=shape[2],
        bitdepth=shape[3],
        ref=os.fspath(ref_path),
        dis=[os.fspath(p) for p in dis_paths],
        opts=opts,
        errors=[errors.get(k) for k in range(len(dis_paths))],
        backend=used,
        decoded=decoded,
    )


def _warn_y4m_read_as_y4m(readers: Sequence[Any]) -> None:
    """One warning naming the Y4M inputs, where ``-w/-h/-p/-b`` were given: libvmaf's tool
    then opens every input with its raw reader (``cli_parse.c`` sets ``use_yuv``), so it
    reads a Y4M's header and FRAME markers as samples and scores other numbers."""
    named = []
    for reader in readers:
        source = getattr(reader, "source", reader)  # a scaled rung's own reader
        if source.kind == "y4m" or getattr(source, "stream_format", None) == "y4m":
            named.append(source.where)
    if named:
        _log.warning(
            "with -w/-h/-p/-b given libvmaf reads every input as raw YUV, a Y4M's header and "
            "FRAME markers as samples; admcuda reads the Y4M header of %s",
            " and ".join(named),
        )


def _warn_small_height(width: int, height: int, opts: AdmOptions) -> None:
    """Warn where libvmaf's own outputs for this height are undefined; the environment
    variable ``ADMCUDA_SMALL_HEIGHT_WARNING=0`` silences it."""
    from admcuda.quirks import small_height_warning

    if os.environ.get("ADMCUDA_SMALL_HEIGHT_WARNING", "1") == "0":
        return
    message = small_height_warning(width, height, opts)
    if message:
        _log.warning("%s", message)


def _video_decoder(decoder: str, backend: str, scale: str | None) -> str:
    """The decoder for encoded video: "ffmpeg", "nvdec" or "auto" (NVDEC per file where it
    can, the CUDA backend being the one that runs)."""
    from admcuda.backends import select_backend

    if decoder not in ("auto", "ffmpeg", "nvdec"):
        raise AdmError(f"unknown decoder {decoder!r}; use auto, ffmpeg or nvdec")
    if decoder == "ffmpeg":
        return decoder
    cuda = select_backend(backend)[0] == "cuda"
    if decoder == "nvdec":
        if not cuda:
            raise AdmError("the NVDEC decoder needs the CUDA backend (--backend cuda)")
        if scale:
            raise AdmError("--scale runs through ffmpeg's scaler: use --decoder ffmpeg or auto")
        return decoder
    return "auto" if cuda and not scale else "ffmpeg"


@contextlib.contextmanager
def _held_warnings(shown: set[str]) -> Iterator[list[logging.LogRecord]]:
    """Hold back what this thread logs to ``admcuda`` meanwhile (the records, which the
    caller may drop), then pass on each message not in ``shown`` and add it there: opening
    a ladder again rung by rung, then its good rungs together, logs each warning once, not
    once a pass."""
    held: list[logging.LogRecord] = []
    me = threading.get_ident()

    def hold(record: logging.LogRecord) -> bool:
        if record.thread != me:
            return True
        held.append(record)
        return False

    _log.addFilter(hold)
    try:
        yield held
    finally:
        _log.removeFilter(hold)
        for record in held:
            message = record.getMessage()
            if message not in shown:
                shown.add(message)
                _log.handle(record)


def _open_rungs(ref_path, dis_paths, geometry, extra, errors, ladder):  # type: ignore[no-untyped-def]
    """Open the reference and every distorted input; in a ladder, a rung that cannot be
    opened gets its error in ``errors`` and the rest are opened without it."""
    from admcuda.inputs import open_inputs

    shown: set[str] = set()
    with _held_warnings(shown) as held:
        try:
            inputs = open_inputs(ref_path, dis_paths, **geometry, **extra)
            return inputs, list(range(len(dis_paths)))
        except AdmError:
            if not ladder:
                raise
            held.clear()  # the rung-by-rung pass below logs again what concerns each rung
    good = []
    for k, path in enumerate(dis_paths):
        with _held_warnings(shown):
            try:
                open_inputs(ref_path, [path], **geometry, **extra).close()
                good.append(k)
            except AdmError as exc:
                errors[k] = str(exc)
    if not good:  # the reference itself, or every rung
        raise AdmError(errors[0])
    with _held_warnings(shown):
        return open_inputs(ref_path, [dis_paths[k] for k in good], **geometry, **extra), good


def _score_inputs(inputs, selection, opts, backend, errors, good, ladder, *, progress,
                  threads, host_memory, batch, device, stats):  # type: ignore[no-untyped-def]  # fmt: skip
    """Run the opened inputs through the pipeline; returns (arrays per opened rung,
    backend used)."""
    from admcuda.pipeline import make_source, run
    from admcuda.progress import Progress

    sub = selection.subsample
    ref = make_source(inputs.ref, skip=selection.frame_skip_ref, limit=selection.frame_cnt,
                      subsample=sub)  # fmt: skip
    dis = [
        make_source(d, skip=selection.frame_skip_dist, limit=selection.frame_cnt, subsample=sub)
        for d in inputs.dis
    ]
    try:
        if ref.available == 0:
            raise _nothing_left(ref)
        for k, stream in zip(good, dis, strict=True):
            if stream.available == 0:
                _rung_error(errors, k, _nothing_left(stream), ladder)
        active = [i for i, k in enumerate(good) if k not in errors]
        scored = [dis[i].scored for i in active] + [ref.scored]
        frames = None if None in scored else max(min(ref.scored, dis[i].scored) for i in active)
        w, h, bd = inputs.width, inputs.height, inputs.bitdepth
        on_gpu = [r.label + " file " + repr(os.fspath(r.path)) for r in inputs.readers
                  if r.kind == "nvdec"]  # fmt: skip
        engine, used = _engine(backend, w, h, bd, opts, inputs=len(active), frames=frames,
                               threads=threads, host_memory=host_memory, batch=batch,
                               device=device)  # fmt: skip
        if on_gpu and used != "cuda":
            engine.close()
            raise AdmError(
                f"{on_gpu[0]} is decoded on NVDEC but the CUDA backend cannot start "
                f"({_fallback_reason()}); use --decoder ffmpeg"
            )
        failures: dict[int, str] = {}
        with Progress(ref.scored, enabled=progress) as bar, engine:
            part = run(
                ref, [dis[i] for i in active], engine, width=w, height=h,
                dtype=np.uint8 if bd == 8 else np.uint16, on_frames=bar.update, stats=stats,
                failures=failures if ladder else None,
            )  # fmt: skip
        for j, message in failures.items():
            errors[good[active[j]]] = message
        arrays: list[dict[str, np.ndarray]] = [{} for _ in good]
        for j, i in enumerate(active):
            arrays[i] = part[j]
        for i in active:
            k = good[i]
            if k in errors:
                continue
            _warn_if_lengths_differ(ref, dis[i])
            if not arrays[i] or not len(next(iter(arrays[i].values()))):
                _rung_error(errors, k, _nothing_left(ref if ref.read == 0 else dis[i]), ladder)
    finally:
        for stream in (ref, *dis):
            stream.close()
    return arrays, used


def _fallback_reason() -> str:
    from admcuda import backends

    return backends.fallback_reason or "no GPU"


def _rung_error(errors: dict[int, str], k: int, exc: AdmError, ladder: bool) -> None:
    if not ladder:
        raise exc
    errors[k] = str(exc)


def _engine(backend: str, *args: Any, **kwargs: Any) -> tuple[Any, str]:
    """The pipeline engine for ``backend``; ``auto`` takes CUDA where it starts (kernels
    compiled, buffers allocated) and otherwise the CPU, keeping the reason."""
    from admcuda import backends

    name, _ = backends.select_backend(backend)
    if backend != "auto" or name == "cpu":
        try:
            return backends.engine_for(name, *args, **kwargs), name
        except AdmError:
            raise
        except Exception as exc:  # noqa: BLE001 - CuPy/NVRTC failures, one line
            raise AdmError(f"the {name} backend cannot start: {_one_line(exc)}") from None
    try:
        return backends.engine_for(name, *args, **kwargs), name
    except Exception as exc:  # noqa: BLE001 - any failure to start the GPU path falls back
        backends.fallback_reason = f"the CUDA backend cannot start ({_one_line(exc)})"
        kwargs.pop("device", None)
        return backends.engine_for("cpu", *args, **kwargs), "cpu"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


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

"""The Python API: :func:`score` (result objects), :func:`score_files` (one distorted
input) and :func:`score_ladder` (several, the reference read once). Arguments are checked
here, and errors speak of argument names, not command-line flags."""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.ladder import LadderRun, run_ladder
from admcuda.numeric import check_integer, is_integer, shown
from admcuda.options import AdmOptions, resolve_options

if TYPE_CHECKING:
    from admcuda.report.result import AdmResult

__all__ = ["api_message", "score", "score_files", "score_ladder"]

PathLike = str | os.PathLike[str]
_C_INT_MAX = (1 << 31) - 1
OptionsArg = AdmOptions | Mapping[str, str | bool | int | float] | str | None
ModelArg = Any  # a model name or --model string, a ModelSpec or Model, or a sequence of them
FeaturesArg = Sequence[Any] | None  # --feature strings or (name, options) pairs
# True, False, seconds between plain lines, or a function of (frames done, total or None)
ProgressArg = bool | float | Callable[[int, int | None], object] | None


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
    (r"--autorotate", "autorotate=True"),
    (r"--noautorotate", "autorotate=False"),
    (r"--allow-partial-frame", "allow_partial_frame=True"),
    (r"-w/-h/-p/-b", "width/height/pixel_format/bitdepth"),
    (r"--width/--height", "width/height"),
    (r"-w and -h|-w/-h|--width and --height", "width and height"),
    (r"--(width|height|bitdepth|scale|decoder|backend|threads|subsample)\b", r"\1"),
    (
        r"--(pixel|frame)-(format|skip-ref|skip-dist|cnt)",
        lambda m: m.group(0)[2:].replace("-", "_"),
    ),
    (r"--gpu\b", "device"),
    (r"-n/--no_prediction\b", "no_prediction=True"),
    (r"--feature (\w+)", r"features item '\1'"),
    (r"-m/--model|--model\b", "model"),
)


def api_message(text: str) -> str:
    """An input-layer message with its command-line flags turned into argument names;
    what the message quotes ('a path', "a value") is left as it is."""

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
            raise AdmError(api_message(str(exc))) from None
        return False


def _paths_list(value: object) -> bool:
    """Whether ``value`` can be a list of paths: an iterable that is not a mapping or bytes
    (a path in it that is not one is named later)."""
    return isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping))


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


_ADM_NAMES = ("adm", "adm_cuda")


def _model_list(model: ModelArg) -> list[Any]:
    """``model`` as a list of ``--model`` strings, ModelSpec or Model objects: a bare name
    (``"vmaf_v0.6.1"``, ``"vmaf_v0.6.1:name=x"``) is a version, a ``.json`` file or an
    os.PathLike a path."""
    from admcuda.model import Model, ModelSpec, model_arg

    if model is None:
        return []
    single = isinstance(model, (str, os.PathLike, ModelSpec, Model))
    items = [model] if single else model
    if not isinstance(items, Sequence) or isinstance(items, bytes):
        raise AdmError(
            "model must be a model name or --model string, a ModelSpec or Model, or a list "
            f"of them; got {type(model).__name__}"
        )
    out: list[Any] = []
    for item in items:
        if isinstance(item, os.PathLike):
            item = f"path={os.fspath(item)}"
        elif isinstance(item, str):
            item = model_arg(item)
        elif not isinstance(item, (ModelSpec, Model)):
            raise AdmError(
                f"model entries must be strings, ModelSpec or Model, got {type(item).__name__}"
            )
        out.append(item)
    return out


def _plan_and_options(
    model: ModelArg, features: FeaturesArg, no_prediction: bool, options: OptionsArg, debug: bool
) -> tuple[Any, AdmOptions]:
    """The run's :class:`admcuda.vmaf.FeaturePlan` (None for ADM alone) and its ADM options.

    A plan when a model or a feature other than ADM is asked for: the models, then
    ``options``/``debug``'s ADM where given, then ``features``, as the command line
    registers them. ``features`` of ADM alone (one ``"adm=..."``) are ADM options."""
    from admcuda.model import Model, ModelError

    no_prediction = _flag("no_prediction", no_prediction)
    models = _model_list(model)
    if features is None:
        features = []
    if isinstance(features, (str, bytes)) or not isinstance(features, Sequence):
        raise AdmError(
            f"features must be a list of feature strings (['vif', 'motion']), got {features!r}"
        )
    names = [f.partition("=")[0] if isinstance(f, str) else f[0] for f in features]
    opts = _resolve_options(options, debug)
    if not models and all(n in _ADM_NAMES for n in names):
        if len(features) > 1:
            raise AdmError("features: give one ADM configuration (or options=...)")
        if features:
            from admcuda.vmaf import parse_feature_arg

            given = features[0]
            _, adm = parse_feature_arg(given) if isinstance(given, str) else given
            if options is not None:
                raise AdmError("give the ADM options in options= or in features, not both")
            opts = adm.replace(debug=True) if _flag("debug", debug) else adm
        return None, opts  # no_prediction: as -n without a model, nothing to leave out
    from admcuda.vmaf import build_plan  # VIF and motion load only for a plan

    own = options is not None or _flag("debug", debug)
    loaded = []
    for item in models:
        try:
            loaded.append(item if isinstance(item, Model) else _spec(item).load())
        except ModelError as exc:
            raise AdmError(f"model: {exc}") from None
    try:
        plan = build_plan(loaded, features, adm=opts if own else None, predict=not no_prediction)
    except AdmError as exc:
        message = str(exc)
        if message.startswith(("model", "two models")):
            raise
        raise AdmError(f"features: {message}") from None
    return plan, opts


def _spec(item: Any) -> Any:
    from admcuda.model import ModelSpec, parse_model_arg

    return item if isinstance(item, ModelSpec) else parse_model_arg(item)


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
    model: ModelArg = None,
    features: FeaturesArg = None,
    no_prediction: bool = False,
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
    progress: ProgressArg = False,
) -> list[dict[str, float]]:
    """Score a reference and a distorted input, frame by frame.

    Parameters
    ----------
    ref_path, dis_path : str or os.PathLike
        Raw YUV (``.yuv``/``.raw``), Y4M, or any video ffmpeg decodes; see
        :func:`admcuda.io.inputs.open_input`.
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
        ".[nvdec]"``), ffmpeg, or ``"auto"``: NVDEC where the CUDA backend runs and
        PyNvVideoCodec decodes the codec, else ffmpeg.
    model : str, ModelSpec, Model or a list of them, optional
        VMAF models, as libvmaf's ``--model`` takes them (``"version=vmaf_v0.6.1"``,
        ``"path=model.json:name=mine"``; a bare ``"vmaf_v0.6.1"`` is a version): each
        frame gets every feature the models read and each model's score under its name
        (``vmaf`` by default), on either backend.
    features : list of str, optional
        libvmaf's ``--feature`` strings: ``"vif"``, ``"motion=motion_force_zero=true"``,
        ``"adm=adm_enhn_gain_limit=1.0"`` (``*_cuda`` names too), ``"psnr"`` (its
        ``apsnr_*`` in the result's :attr:`~AdmResult.aggregate`), ``"float_ssim"``,
        ``"float_ms_ssim=enable_lcs=true"`` (with Numba), ``"float_moment"``,
        ``"float_psnr"``, ``"float_motion=motion_filter_size=3"``, ``"ciede"`` (with Numba),
        ``"psnr_hvs"``, ``"speed_temporal=speed_use_ref_diff=true"`` (with Numba),
        ``"float_ansnr"``, ``"float_vif=vif_kernelscale=2"``,
        ``"float_adm=adm_enhn_gain_limit=1.0"``, after the models'.
    no_prediction : bool, optional
        With ``model``: its features without its score (libvmaf's ``-n``).
    autorotate : bool, optional
        For encoded video with a display matrix (a rotation or flip that players apply):
        True scores it turned as ffmpeg turns it by default (ffmpeg decoder only), False
        its stored pixels; None (the default) refuses such a video, naming the rotation.
    allow_partial_frame : bool, optional
        Read a raw file whose size is not a whole number of frames (its whole frames,
        with a warning) instead of refusing it: for a file that really ends in a partial
        frame.
    progress : bool, float or callable, optional
        Progress on stderr, as ``admcuda score`` shows it: frames done of the total where
        it is known (a raw or Y4M input's length; a video's duration times its frame rate,
        shown ``~N``; ``frame_cnt``), frames per second and the ETA. True draws the bar on a
        terminal, and elsewhere (a notebook, a log) writes a plain line every 10 s and one
        at the end, as ``--progress``; a number of seconds writes plain lines that often,
        terminal or not; False (the default) writes nothing. A function is called instead,
        in the calling thread, with ``(frames_done, total)``: once with 0 before the first
        frame, then after each batch of frames; ``total`` is None where unknown, and for a
        video (without ``frame_cnt``) an estimate that ``frames_done`` may pass. What it
        raises ends the run.

    Returns
    -------
    list of dict of str to float
        One dict per scored frame, keyed by the names libvmaf writes (with the
        option suffix, e.g. ``integer_adm2_egl_1.2``), in libvmaf's order: 7
        outputs, or 18 in debug mode; with a model or features, what libvmaf writes
        for them. If the inputs hold different numbers of
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
        model=model,
        features=features,
        no_prediction=no_prediction,
        autorotate=autorotate,
        allow_partial_frame=allow_partial_frame,
        progress=progress,
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
    model: ModelArg = None,
    features: FeaturesArg = None,
    no_prediction: bool = False,
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
    progress: ProgressArg = False,
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
frame_skip_ref, frame_skip_dist, subsample, threads, device, ignore_name, scale, decoder, \
model, features, no_prediction, autorotate, allow_partial_frame, progress
        As for :func:`score_files`; ``frame_skip_dist`` applies to every
        distorted input. The reference's motion is computed once per frame for every
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
        plan, opts = _plan_and_options(model, features, no_prediction, options, debug)
        run = _run_ladder_api(
            ref_path,
            dis_paths,
            width=width,
            height=height,
            pixel_format=pixel_format,
            bitdepth=bitdepth,
            opts=opts,
            plan=plan,
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
            autorotate=autorotate,
            allow_partial_frame=allow_partial_frame,
            progress=progress,
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
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
    host_memory: int | None = None,
    batch: int | None = None,
    model: ModelArg = None,
    features: FeaturesArg = None,
    no_prediction: bool = False,
    progress: ProgressArg = False,
) -> AdmResult | list[AdmResult]:
    """Score a reference against one distorted input, or several, into result objects.

    Parameters
    ----------
    ref_path : str or os.PathLike
        Raw YUV, Y4M or an encoded video.
    dis : str, os.PathLike, or a sequence of them
        One distorted input (returns one :class:`AdmResult`) or several (a list).
    width, height, pixel_format, bitdepth, backend, options, debug, frame_cnt, \
frame_skip_ref, frame_skip_dist, subsample, threads, device, ignore_name, scale, decoder, \
model, features, no_prediction, autorotate, allow_partial_frame, progress
        As for :func:`score_files` (the names of the command line's long options).
    host_memory : int, optional
        MiB of host frame buffers (page-locked on the GPU), as ``--host-memory``;
        default 512 on the GPU, 1024 on the CPU. A value of 1 TiB (1,048,576 MiB) or
        more is refused: a count of bytes, as this keyword took up to admcuda 0.3.0.
    batch : int, optional
        Frames per GPU batch; default by frame size. With ``model`` or ``features``:
        frames per CPU batch.

    Returns
    -------
    AdmResult or list of AdmResult
        Per-frame dicts keyed by libvmaf's names (base names such as ``integer_adm2``
        work too), NumPy arrays of them (:meth:`AdmResult.array`), pooled statistics and
        writers (``to_json``, ``to_xml``, ``to_csv``). With several distorted inputs, one
        that cannot be opened or read does not stop the others, as on the command line:
        its result has no frames and says why in :attr:`AdmResult.error` (``ok`` is
        False). With one, its error is raised.

    Examples
    --------
    >>> result = admcuda.score("ref.y4m", "dis.mp4")  # doctest: +SKIP
    >>> result.pooled["integer_adm2"]["mean"]  # doctest: +SKIP
    >>> result.array("integer_adm2")  # doctest: +SKIP
    >>> vmaf = admcuda.score("ref.yuv", "dis.yuv", width=1920, height=1080, model="vmaf_v0.6.1")
    ... # doctest: +SKIP
    >>> vmaf.pooled["vmaf"]["mean"], vmaf.array("vmaf")  # doctest: +SKIP
    """
    import time

    from admcuda.report.result import AdmResult

    many = not isinstance(dis, (str, os.PathLike))
    if many and not _paths_list(dis):
        raise AdmError(
            "dis must be a path or a sequence of paths (str or os.PathLike), "
            f"got {type(dis).__name__}"
        )
    dis_paths = list(dis) if many else [dis]
    with _ApiErrors():
        plan, opts = _plan_and_options(model, features, no_prediction, options, debug)
        host_bytes = None if host_memory is None else _host_memory_bytes(host_memory)
    start = time.perf_counter()
    with _ApiErrors():
        run = _run_ladder_api(
            ref_path,
            dis_paths,
            raise_errors=not many,
            opts=opts,
            plan=plan,
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
            autorotate=autorotate,
            allow_partial_frame=allow_partial_frame,
            host_memory=host_bytes,
            batch=batch,
            progress=progress,
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
                **({} if plan is None else {"models": list(plan.model_outputs)}),
                **({} if error is None else {"error": api_message(error)}),
            },
            frame_numbers=numbers,
            aggregate=aggregate,
        )
        for frames, numbers, path, error, aggregate in zip(
            run.frames,
            run.frame_numbers,
            run.dis,
            run.errors,
            run.aggregates or [{}] * len(run.dis),
            strict=True,
        )
    ]
    return results if many else results[0]


_HOST_MEMORY_MAX_MIB = 1 << 20


def _host_memory_bytes(mib: Any) -> int:
    """``host_memory=`` (MiB, as ``--host-memory``) in bytes; a value of 1 TiB or more
    is refused in one line, as it is a count of bytes rather than MiB."""
    mib = check_integer("host_memory", mib, 1)
    if mib >= _HOST_MEMORY_MAX_MIB:
        raise AdmError(
            f"host_memory is in MiB, as --host-memory; {mib} MiB is 1 TiB or more "
            f"(for 1 GiB give host_memory=1024)"
        )
    return mib << 20


def _progress(value: object) -> bool | float | Callable[[int, int | None], object]:
    """``progress=`` as :func:`admcuda.ladder.run_ladder` takes it: True on a terminal (the
    bar), elsewhere plain lines every 10 s (as ``--progress``, since it was asked for);
    seconds as a float; a function as it is."""
    from admcuda.progress import PROGRESS_EVERY_S

    if value is None or isinstance(value, (bool, np.bool_)):
        if not value:
            return False
        try:
            terminal = sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, ValueError, OSError):  # closed, or no file behind it
            terminal = False
        return True if terminal else PROGRESS_EVERY_S
    if isinstance(value, numbers.Real):
        try:
            seconds = float(value)
        except OverflowError:  # an integer past any double
            seconds = math.inf
        if not 0 < seconds < math.inf:
            raise AdmError(f"progress must be a number of seconds > 0, got {shown(value)}")
        return seconds
    if callable(value):
        return value
    raise AdmError(
        "progress must be True, False, a number of seconds or a function of (frames_done, "
        f"total), got {type(value).__name__} {value!r}"
    )


def _run_ladder_api(
    ref_path: PathLike, dis_paths: Sequence[PathLike], *, raise_errors: bool = True, **kwargs: Any
) -> LadderRun:
    """:func:`admcuda.ladder.run_ladder` for the Python API: the arguments the command
    line's parser would check are checked here (NumPy integers taken as ints), and a
    rung's error is raised (with ``raise_errors``), in argument names."""
    if isinstance(dis_paths, (str, bytes, os.PathLike)):
        raise AdmError("dis_paths must be a list of paths, not one path (score_files takes one)")
    if not _paths_list(dis_paths):
        raise AdmError(f"dis_paths must be a list of paths, got {type(dis_paths).__name__}")
    dis_paths = list(dis_paths)
    for what, path in [("ref_path", ref_path)] + [("dis_path", p) for p in dis_paths]:
        if not isinstance(path, (str, os.PathLike)):
            raise AdmError(f"{what} must be a path (str or os.PathLike), got {type(path).__name__}")
    for key in ("width", "height", "bitdepth"):  # their range: check_geometry's messages
        if is_integer(kwargs.get(key)):
            kwargs[key] = int(kwargs[key])
            if abs(kwargs[key]) > _C_INT_MAX:  # one no message could quote in full
                raise AdmError(f"{key} must be at most {_C_INT_MAX}, got {shown(kwargs[key])}")
    for key, low in (("threads", 1), ("host_memory", 1), ("batch", 1), ("device", 0)):
        if kwargs.get(key) is not None:
            kwargs[key] = check_integer(key, kwargs[key], low)
    kwargs["ignore_name"] = _flag("ignore_name", kwargs.get("ignore_name"))
    kwargs["allow_partial_frame"] = _flag("allow_partial_frame", kwargs.get("allow_partial_frame"))
    if kwargs.get("autorotate") is not None:
        kwargs["autorotate"] = _flag("autorotate", kwargs["autorotate"])
    kwargs["progress"] = _progress(kwargs.get("progress"))
    run = run_ladder(ref_path, dis_paths, **kwargs)
    if raise_errors:
        run.raise_first_error()
    return run

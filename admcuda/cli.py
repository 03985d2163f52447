"""Command line: ``admcuda score REF DIS [DIS ...] [-w W -h H -p FMT -b BITS] ...``.

Inputs are raw YUV (``.yuv``/``.raw``, size from ``-w``/``-h``), Y4M, or any
video ffmpeg decodes; with several distorted inputs the reference is read once
and each distorted input gets its own scores (an encoding ladder). The short
flags are libvmaf's (``-w -h -p -b -o``), so ``-h`` is the height and help is
``--help`` only; libvmaf's long spellings (``--frame_cnt``, ``--pixel_format``
...) are accepted too. Every failure ends in one ``admcuda: error: ...`` line on
stderr and exit status 2 for a problem with the command line itself, or 1 for
one found while reading the inputs or scoring (a missing file, raw YUV without a
size, inputs that disagree), and leaves no output file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from admcuda import __version__, _LadderRun, _run_ladder
from admcuda._tool import Parser as _Parser
from admcuda._tool import UsageError as _UsageError
from admcuda._tool import parse_option_args
from admcuda.backends import BACKENDS, select_backend
from admcuda.errors import AdmError
from admcuda.options import NON_DEBUG_BASE_NAMES, OPTIONS, AdmOptions, feature_names
from admcuda.pipeline import DEFAULT_HOST_MEMORY, RunStats
from admcuda.writers import FORMATS, pool, write_output
from admcuda.yuv import BITDEPTHS, PIXEL_FORMATS

__all__ = ["build_parser", "main"]

PROG = "admcuda"
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_SUFFIX_FORMATS = {".json": "json", ".xml": "xml", ".csv": "csv"}
_PLACEHOLDERS = ("{name}", "{index}")
_MIN_SIDE_EXCLUSIVE = 16
_LOADED = time.time()


class _LogFormatter(logging.Formatter):
    """``admcuda: warning: message``, one line per record."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{PROG}: {record.levelname.lower()}: {' '.join(record.getMessage().split())}"


def _options_epilog() -> str:
    lines = [
        "Inputs: raw planar YUV (.yuv/.raw; give -w/-h, and -p/-b unless 420 8-bit),",
        "Y4M (size, layout and bit depth from its header), or any video ffmpeg decodes",
        "(luma taken as decoded, at its own bit depth; needs imageio-ffmpeg). A raw input",
        "beside a Y4M or video input takes its geometry from it.",
        "",
        "With several DIS inputs, --output must contain {name} (the input's file name",
        "without suffix) or {index} (1 for the first DIS), or be a folder, which gets",
        "one NAME.json/.xml/.csv per input.",
        "",
        "ADM options for --option NAME=VALUE (name or alias; libvmaf's table):",
    ]
    for spec in OPTIONS:
        kind = "true|false" if spec.type == "bool" else f"{spec.type} in {spec.range_text}"
        default = str(spec.default).lower() if spec.type == "bool" else f"{spec.default:g}"
        lines.append(f"  {spec.label:38} {kind}, default {default}")
        lines.append(f"  {'':38} {spec.help}")
    lines += [
        "",
        "adm_norm_view_dist * adm_ref_display_height must be >= 3240 (libvmaf refuses less).",
        "Non-default options rename the outputs as libvmaf does, e.g. egl=1.2 turns",
        "integer_adm2 into integer_adm2_egl_1.2.",
    ]
    return "\n".join(lines)


def _counter(low: int):  # type: ignore[no-untyped-def]
    """argparse type: a decimal integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: '{text}'") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is out of range (must be >= {low})")
        return value

    parse.__name__ = "integer"
    return parse


def build_parser() -> argparse.ArgumentParser:
    """Build the ``admcuda`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
        Its ``error`` raises instead of exiting; :func:`main` reports it.
    """
    parser = _Parser(
        prog=PROG,
        add_help=False,
        allow_abbrev=False,
        description="libvmaf's integer ADM feature, on the CPU or with CUDA.",
    )
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    score = commands.add_parser(
        "score",
        add_help=False,
        allow_abbrev=False,
        help="score distorted videos against a reference (raw YUV, Y4M or encoded)",
        description="Score one or more distorted inputs against a reference with ADM.",
        epilog=_options_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--help", action="help", help="show this help and exit")
    score.add_argument("ref", nargs="?", metavar="REF", help="reference: .yuv, .y4m or video")
    score.add_argument(
        "dis", nargs="*", metavar="DIS", help="distorted input(s), scored against REF"
    )
    score.add_argument(
        "--example",
        action="store_true",
        help="score the small example pair shipped with admcuda (176x144 420 8-bit)",
    )
    score.add_argument("-w", "--width", type=int, metavar="W", help="frame width in pixels")
    score.add_argument("-h", "--height", type=int, metavar="H", help="frame height in pixels")
    score.add_argument(
        "-p",
        "--pixel-format",
        "--pixel_format",
        dest="pixel_format",
        choices=PIXEL_FORMATS,
        help="raw YUV chroma layout (default 420, or that of a Y4M/video input)",
    )
    score.add_argument(
        "-b",
        "--bitdepth",
        type=int,
        choices=BITDEPTHS,
        help="raw YUV bits per sample (default 8, or that of a Y4M/video input); "
        "above 8, samples are 16-bit little-endian",
    )
    frames = score.add_argument_group("frames (as libvmaf's command line)")
    frames.add_argument(
        "--frame-cnt", "--frame_cnt", dest="frame_cnt", type=_counter(1), metavar="N",
        help="read at most N frames (after skipping)",
    )  # fmt: skip
    frames.add_argument(
        "--frame-skip-ref", "--frame_skip_ref", dest="frame_skip_ref", type=_counter(0),
        default=0, metavar="N", help="skip the first N frames of the reference",
    )  # fmt: skip
    frames.add_argument(
        "--frame-skip-dist", "--frame_skip_dist", dest="frame_skip_dist", type=_counter(0),
        default=0, metavar="N", help="skip the first N frames of each distorted input",
    )  # fmt: skip
    frames.add_argument(
        "--subsample", type=_counter(1), default=1, metavar="N",
        help="score every Nth frame (frames 0, N, 2N, ...; frameNum keeps the number)",
    )  # fmt: skip
    score.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where to compute (default auto: CUDA if available, else CPU)",
    )
    perf = score.add_argument_group("resources")
    perf.add_argument(
        "--threads", type=_counter(1), metavar="N",
        help="CPU backend: worker processes (default: all usable cores; runs under about "
        "four 1080p frames stay in one process)",
    )  # fmt: skip
    perf.add_argument(
        "--host-memory", dest="host_memory", type=_counter(1), metavar="MIB",
        default=DEFAULT_HOST_MEMORY >> 20,
        help="MiB of host frame buffers, page-locked with CUDA (default %(default)s); "
        "the GPU also holds about two batches of bands",
    )  # fmt: skip
    perf.add_argument(
        "--batch", type=_counter(1), metavar="N",
        help="frames per GPU batch (default: by frame size, 64-512, fewer where "
        "--host-memory is small); the GPU's buffers grow with it",
    )  # fmt: skip
    perf.add_argument(
        "--stats", action="store_true",
        help="print timings to stderr: start-up (process start to the first scored batch) "
        "and steady frames/s",
    )  # fmt: skip
    score.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="ADM option, repeatable; NAME=VALUE:NAME=VALUE also works (see below)",
    )
    score.add_argument(
        "--debug",
        action="store_true",
        help="also output integer_adm and the numerators and denominators",
    )
    fmt = score.add_mutually_exclusive_group()
    for name in FORMATS:
        fmt.add_argument(
            f"--{name}",
            dest="format",
            action="store_const",
            const=name,
            help=f"write {name.upper()} (to --output, or to stdout without it)",
        )
    score.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="output file ('-' for stdout); its format comes from --json/--xml/--csv, "
        "else from the suffix, else XML as in libvmaf. With several DIS: a path "
        "with {name} or {index}, or a folder",
    )
    score.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    for name, (_, text) in _TOOLS.items():
        tool = commands.add_parser(name, add_help=False, help=text, prefix_chars="\0")
        tool.add_argument("args", nargs=argparse.REMAINDER)
    return parser


# Subcommands that parse their own arguments: name -> (module, help).
_TOOLS = {
    "plot": ("admcuda.plot", "plot per-frame adm2 and scales from result JSON files"),
    "map": ("admcuda.distmap", "write one frame's distortion heat map as a PNG"),
    "bench": ("admcuda.bench", "frames/s of the backends, beside libvmaf's when given"),
    "batch": ("admcuda.batch", "score many pairs from a manifest (CSV or JSON Lines) on Dask"),
}


def _output_format(args: argparse.Namespace) -> str | None:
    if args.format:
        return args.format
    if args.output is None:
        return None
    if Path(args.output).is_dir():
        return "xml"
    return _SUFFIX_FORMATS.get(Path(args.output).suffix.lower(), "xml")


def _check_output_path(output: Path) -> None:
    if output.is_dir():
        raise AdmError(f"output path '{output}' is a directory")
    parent = output.parent
    if not parent.is_dir():
        raise AdmError(f"output folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK):
        raise AdmError(f"output folder '{parent}' is not writable")


def _output_paths(output: str | None, dis: Sequence[str], fmt: str | None) -> list[Path | None]:
    """Where each distorted input's scores go; None for stdout (or the summary)."""
    if output is None or output == "-":
        if len(dis) > 1 and fmt is not None:
            raise _UsageError(
                "several DIS inputs: give --output a path with {name} or {index}, or a folder"
            )
        return [None] * len(dis)
    if Path(output).is_dir():
        paths = [Path(output) / f"{Path(d).stem}.{fmt or 'xml'}" for d in dis]
    elif any(mark in output for mark in _PLACEHOLDERS):
        paths = [
            Path(output.replace("{name}", Path(d).stem).replace("{index}", str(i)))
            for i, d in enumerate(dis, start=1)
        ]
    elif len(dis) > 1:
        raise _UsageError(
            f"several DIS inputs but one --output '{output}': put {{name}} or {{index}} "
            "in it, or give a folder"
        )
    else:
        paths = [Path(output)]
    seen: dict[Path, str] = {}
    for path, source in zip(paths, dis, strict=True):
        key = path.resolve()
        if key in seen:
            raise _UsageError(
                f"DIS inputs '{seen[key]}' and '{source}' would both write '{path}'; "
                "use {index} in --output"
            )
        seen[key] = source
        _check_output_path(path)
    return list(paths)


@contextlib.contextmanager
def _inputs(args: argparse.Namespace) -> Iterator[tuple[str, list[str]]]:
    if not args.example:
        yield args.ref, list(args.dis)
        return
    from admcuda.data import example_paths

    with example_paths() as (ref, dis):
        yield str(ref), [str(dis)]


def _check_arguments(args: argparse.Namespace) -> None:
    """Command-line checks that need no file: presence, ranges, the example's rules."""
    if args.example:
        from admcuda.data import EXAMPLE

        given = [flag for flag, value in (
            ("REF", args.ref), ("DIS", args.dis or None), ("--width", args.width),
            ("--height", args.height), ("--pixel-format", args.pixel_format),
            ("--bitdepth", args.bitdepth),
        ) if value is not None]  # fmt: skip
        if given:
            raise _UsageError(f"--example brings its own input; drop {', '.join(given)}")
        args.width, args.height = EXAMPLE.width, EXAMPLE.height
        args.pixel_format, args.bitdepth = EXAMPLE.pixel_format, EXAMPLE.bitdepth
        return
    missing = [name for name, value in (("REF", args.ref), ("DIS", args.dis)) if not value]
    if missing:
        raise _UsageError(f"missing {', '.join(missing)} (or use --example)")
    for flag, value in (("--width", args.width), ("--height", args.height)):
        if value is not None and value <= _MIN_SIDE_EXCLUSIVE:
            raise _UsageError(
                f"{flag} {value} is too small: libvmaf's ADM needs width and height "
                f"> {_MIN_SIDE_EXCLUSIVE}"
            )


def _pooled_lines(frames: list[dict[str, float]], opts: AdmOptions) -> list[str]:
    names = feature_names(opts)
    width = max(len(names[base]) for base in NON_DEBUG_BASE_NAMES)
    lines = []
    for base in NON_DEBUG_BASE_NAMES:
        name = names[base]
        mean = pool([frame[name] for frame in frames])["mean"]
        lines.append(f"  {name:{width}}  {mean:.6f}")
    return lines


def _summary(run: _LadderRun, backend: str, subsample: int) -> str:
    changed = " ".join(f"{k}={v}" for k, v in run.opts.non_default().items() if k != "debug")
    geometry = f"{run.width}x{run.height} {run.pixel_format} {run.bitdepth}-bit"
    extras = (f", subsample {subsample}" if subsample > 1 else "") + (
        f", options {changed}" if changed else ""
    )
    head = f"{PROG} {__version__}, backend {backend}: "
    if len(run.dis) == 1:
        lines = [head + f"{len(run.frames[0])} frames, {geometry}{extras}", "pooled mean:"]
        return "\n".join(lines + _pooled_lines(run.frames[0], run.opts))
    lines = [head + f"{geometry}{extras}", f"reference {run.ref}"]
    for index, (path, frames) in enumerate(zip(run.dis, run.frames, strict=True), start=1):
        lines.append(f"distorted {index}: {path}, {len(frames)} frames, pooled mean:")
        lines += _pooled_lines(frames, run.opts)
    return "\n".join(lines)


def _write_all(fmt: str, run: _LadderRun, outputs: list[Path | None], fps: list[float]) -> None:
    """Write one document per distorted input; on failure remove those just written."""
    written: list[Path] = []
    try:
        for frames, numbers, dest, rate in zip(
            run.frames, run.frame_numbers, outputs, fps, strict=True
        ):
            write_output(
                fmt,  # type: ignore[arg-type]
                frames,
                sys.stdout if dest is None else dest,
                version=__version__,
                width=run.width,
                height=run.height,
                fps=rate,
                frame_numbers=numbers,
            )
            if dest is not None:
                written.append(dest)
    except BaseException:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        raise


def _score(args: argparse.Namespace) -> int:
    _check_arguments(args)
    try:
        opts = AdmOptions.from_mapping(parse_option_args(args.option))
    except AdmError as exc:
        raise _UsageError(str(exc)) from None
    if args.debug:
        opts = opts.replace(debug=True)
    out_format = _output_format(args)
    dis_names = ["example"] if args.example else list(args.dis)
    outputs = _output_paths(args.output, dis_names, out_format)
    backend, _ = select_backend(args.backend)
    notice = None
    if args.backend == "auto" and backend != BACKENDS[0]:
        from admcuda import backends

        # Said to a terminal once the run has worked, so an error stays the only line.
        notice = f"{backends.fallback_reason or 'CUDA is unavailable'}; scored on the CPU"

    stats = RunStats()
    process_start = _process_start_time()
    start = time.perf_counter()
    with _inputs(args) as (ref, dis):
        run = _run_ladder(
            ref,
            dis,
            width=args.width,
            height=args.height,
            pixel_format=args.pixel_format,
            bitdepth=args.bitdepth,
            opts=opts,
            backend=backend,
            frame_cnt=args.frame_cnt,
            frame_skip_ref=args.frame_skip_ref,
            frame_skip_dist=args.frame_skip_dist,
            subsample=args.subsample,
            progress=not args.quiet,
            threads=args.threads,
            host_memory=args.host_memory << 20,
            batch=args.batch,
            stats=stats,
        )
    elapsed = time.perf_counter() - start
    if args.stats:
        print(_stats_line(stats, process_start), file=sys.stderr)
    fps = [len(frames) / elapsed if elapsed > 0 else math.inf for frames in run.frames]
    if notice and sys.stderr.isatty():
        print(f"{PROG}: notice: {notice}", file=sys.stderr)

    if out_format is None:
        print(_summary(run, backend, args.subsample))
        return 0
    _write_all(out_format, run, outputs, fps)
    return 0


def _process_start_time() -> float:
    """This process's start on the wall clock (Linux: from /proc, 10 ms resolution);
    elsewhere the time this module was loaded."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return _LOADED


def _stats_line(stats: RunStats, process_start: float) -> str:
    """One line of timings, ``key=value`` pairs that scripts can parse."""
    steady = stats.steady_fps()
    parts = [
        f"frames={stats.frames}",
        f"batches={stats.batches}",
        f"startup_s={stats.first_done - process_start:.3f}" if stats.first_done else "",
        f"steady_fps={steady:.1f}" if steady is not None else "",
        f"scored_s={stats.end - process_start:.3f}" if stats.end else "",
        f"first_done={stats.first_done:.6f}" if stats.first_done else "",
        f"end={stats.end:.6f}" if stats.end else "",
        f"first_batch_frames={stats.first_batch_frames}",
    ]
    return f"{PROG}: stats: " + " ".join(p for p in parts if p)


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        raise _UsageError(f"missing command; try '{PROG} --help'")
    if args.command == "score":
        return _score(args)
    if args.command in _TOOLS:
        import importlib

        return int(importlib.import_module(_TOOLS[args.command][0]).main(args.args))
    raise _UsageError(f"unknown command '{args.command}'")  # pragma: no cover


def _fail(message: str) -> None:
    one_line = " ".join(str(message).split())
    print(f"{PROG}: error: {one_line}", file=sys.stderr)


def _os_error_text(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: '{exc.filename}'"
    return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``admcuda`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 1 on a runtime failure, 2 on a usage error, 130 on Ctrl-C.
        Set ``ADMCUDA_TRACEBACK=1`` to get a traceback for unexpected errors.
    """
    logger = logging.getLogger("admcuda")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LogFormatter())
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        return _run(argv)
    except _UsageError as exc:
        _fail(str(exc))
        return EXIT_USAGE
    except AdmError as exc:
        _fail(str(exc))
        return EXIT_RUNTIME
    except BrokenPipeError:
        # The reader went away (`admcuda ... | head`): stop quietly, and point stdout
        # at devnull so the interpreter's final flush does not complain either.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RUNTIME
    except OSError as exc:
        _fail(_os_error_text(exc))
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        _fail("interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if os.environ.get("ADMCUDA_TRACEBACK"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set ADMCUDA_TRACEBACK=1 for details)")
        return EXIT_RUNTIME
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate

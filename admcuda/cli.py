"""Command line: ``admcuda score REF DIS -w W -h H [-p FMT] [-b BITS] ...``.

The short flags are libvmaf's (``-w -h -p -b -o``), so ``-h`` is the height and
help is ``--help`` only. Every failure ends in one ``admcuda: error: ...`` line on
stderr and exit status 2 for a usage problem or 1 for a failure while running.
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
from typing import NoReturn

from admcuda import __version__, score_files
from admcuda.backends import select_backend
from admcuda.errors import AdmError
from admcuda.options import NON_DEBUG_BASE_NAMES, OPTIONS, AdmOptions, feature_names
from admcuda.writers import FORMATS, pool, write_output
from admcuda.yuv import BITDEPTHS, PIXEL_FORMATS, check_geometry

__all__ = ["build_parser", "main"]

PROG = "admcuda"
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

_SUFFIX_FORMATS = {".json": "json", ".xml": "xml", ".csv": "csv"}


class _UsageError(Exception):
    """Bad command line; reported with exit status 2."""


class _LogFormatter(logging.Formatter):
    """``admcuda: warning: message``, one line per record."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{PROG}: {record.levelname.lower()}: {record.getMessage()}"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _options_epilog() -> str:
    lines = ["ADM options for --option NAME=VALUE (name or alias; libvmaf's table):"]
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
        help="score a reference and a distorted raw YUV file",
        description="Score a reference and a distorted raw planar YUV file with ADM.",
        epilog=_options_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--help", action="help", help="show this help and exit")
    score.add_argument("ref", nargs="?", metavar="REF", help="reference .yuv file")
    score.add_argument("dis", nargs="?", metavar="DIS", help="distorted .yuv file")
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
        help="chroma layout (default 420)",
    )
    score.add_argument(
        "-b",
        "--bitdepth",
        type=int,
        choices=BITDEPTHS,
        help="bits per sample (default 8); above 8, samples are 16-bit little-endian",
    )
    score.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where to compute (default auto: CUDA if available, else CPU)",
    )
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
        "else from the suffix, else XML as in libvmaf",
    )
    return parser


def _parse_option_args(items: Sequence[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        for part in item.split(":"):
            name, sep, value = part.partition("=")
            if not sep or not name:
                raise _UsageError(f"--option expects NAME=VALUE, got '{part}'")
            if name in settings:
                raise _UsageError(f"option '{name}' given twice")
            settings[name] = value
    return settings


def _output_format(args: argparse.Namespace) -> str | None:
    if args.format:
        return args.format
    if args.output is None:
        return None
    return _SUFFIX_FORMATS.get(Path(args.output).suffix.lower(), "xml")


def _check_output_path(output: str) -> None:
    path = Path(output)
    if path.is_dir():
        raise AdmError(f"output path '{output}' is a directory")
    parent = path.parent
    if not parent.is_dir():
        raise AdmError(f"output folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK):
        raise AdmError(f"output folder '{parent}' is not writable")


@contextlib.contextmanager
def _inputs(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    if not args.example:
        yield args.ref, args.dis
        return
    from admcuda.data import example_paths

    with example_paths() as (ref, dis):
        yield str(ref), str(dis)


def _resolve_geometry(args: argparse.Namespace) -> None:
    """Fill in geometry defaults, or the example's, and validate it."""
    if args.example:
        from admcuda.data import EXAMPLE

        given = [flag for flag, value in (
            ("REF", args.ref), ("DIS", args.dis), ("--width", args.width),
            ("--height", args.height), ("--pixel-format", args.pixel_format),
            ("--bitdepth", args.bitdepth),
        ) if value is not None]  # fmt: skip
        if given:
            raise _UsageError(f"--example brings its own input; drop {', '.join(given)}")
        args.width, args.height = EXAMPLE.width, EXAMPLE.height
        args.pixel_format, args.bitdepth = EXAMPLE.pixel_format, EXAMPLE.bitdepth
        return
    missing = [name for name, value in (
        ("REF", args.ref), ("DIS", args.dis),
        ("--width/-w", args.width), ("--height/-h", args.height),
    ) if value is None]  # fmt: skip
    if missing:
        raise _UsageError(f"missing {', '.join(missing)} (or use --example)")
    args.pixel_format = args.pixel_format or "420"
    args.bitdepth = args.bitdepth or 8
    try:
        check_geometry(args.width, args.height, args.pixel_format, args.bitdepth)
    except AdmError as exc:
        raise _UsageError(str(exc)) from None


def _summary(
    frames: list[dict[str, float]], opts: AdmOptions, args: argparse.Namespace, backend: str
) -> str:
    names = feature_names(opts)
    changed = " ".join(f"{k}={v}" for k, v in opts.non_default().items() if k != "debug")
    head = (
        f"{PROG} {__version__}, backend {backend}: {len(frames)} frames, "
        f"{args.width}x{args.height} {args.pixel_format} {args.bitdepth}-bit"
    )
    lines = [head + (f", options {changed}" if changed else ""), "pooled mean:"]
    width = max(len(names[base]) for base in NON_DEBUG_BASE_NAMES)
    for base in NON_DEBUG_BASE_NAMES:
        name = names[base]
        mean = pool([frame[name] for frame in frames])["mean"]
        lines.append(f"  {name:{width}}  {mean:.6f}")
    return "\n".join(lines)


def _score(args: argparse.Namespace) -> int:
    _resolve_geometry(args)
    try:
        opts = AdmOptions.from_mapping(_parse_option_args(args.option))
    except AdmError as exc:
        raise _UsageError(str(exc)) from None
    if args.debug:
        opts = opts.replace(debug=True)
    out_format = _output_format(args)
    to_stdout = args.output in (None, "-")
    if not to_stdout:
        _check_output_path(args.output)
    backend, _ = select_backend(args.backend)

    start = time.perf_counter()
    with _inputs(args) as (ref, dis):
        frames = score_files(
            ref,
            dis,
            width=args.width,
            height=args.height,
            pixel_format=args.pixel_format,
            bitdepth=args.bitdepth,
            options=opts,
            backend=backend,
        )
    elapsed = time.perf_counter() - start
    fps = len(frames) / elapsed if elapsed > 0 else math.inf

    if out_format is None:
        print(_summary(frames, opts, args, backend))
        return 0
    write_output(
        out_format,  # type: ignore[arg-type]
        frames,
        sys.stdout if to_stdout else args.output,
        version=__version__,
        width=args.width,
        height=args.height,
        fps=fps,
    )
    return 0


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        raise _UsageError(f"missing command; try '{PROG} --help'")
    if args.command == "score":
        return _score(args)
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

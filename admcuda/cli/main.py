"""The ``admcuda`` command line's one dispatcher: ``admcuda COMMAND ...``.

``score`` parses here (it takes libvmaf's own command line, see :mod:`admcuda.cli.score`);
the other subcommands parse their own arguments. Every subcommand reports through
:func:`admcuda.cli.tool.run_tool`: one ``admcuda: error: ...`` line on stderr and exit
status 2 for a problem with the command line itself, 1 for one found while reading the
inputs or scoring, 130 on Ctrl-C (SIGINT), even while waiting for a pipe's writer.
SIGTERM and SIGHUP keep their default action, as in libvmaf's ``vmaf``: the process ends
by the signal (a shell reports 143 for SIGTERM), and its CPU worker processes die with it.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import logging
import sys
from collections.abc import Sequence

from admcuda.cli import score
from admcuda.cli.tool import PROG, LogFormatter, Parser, run_tool
from admcuda.errors import UsageError
from admcuda.version import __version__

__all__ = ["TOOLS", "build_parser", "main"]

# Subcommands that parse their own arguments: name -> (module with main(argv), help).
TOOLS = {
    "plot": ("admcuda.cli.plot", "plot per-frame VMAF, adm2 and its scales from result files"),
    "map": ("admcuda.cli.map", "write one frame's ADM distortion map as a PNG (or .npy)"),
    "bench": ("admcuda.cli.bench", "ADM's frames/s on the backends, beside libvmaf's when given"),
    "batch": ("admcuda.cli.batch", "score many pairs from a manifest (CSV or JSON Lines) on Dask"),
    "warmup": ("admcuda.cli.warmup", "compile the CPU engine's and the GPU's kernels ahead"),
    "serve": ("admcuda.serve", "keep a scoring process running that later score runs hand over to"),
}


def build_parser() -> argparse.ArgumentParser:
    """Build the ``admcuda`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
        Its ``error`` raises instead of exiting; :func:`main` reports it.
    """
    parser = Parser(
        prog=PROG,
        add_help=False,
        allow_abbrev=False,
        description="libvmaf's VMAF, bit for bit: ADM, VIF, motion and its models, on the CPU "
        "and with CUDA.",
    )
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument("-v", "--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    score.add_parser(commands)
    for name, (_, text) in TOOLS.items():
        tool = commands.add_parser(name, add_help=False, help=text, prefix_chars="\0")
        tool.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _dispatch(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        raise UsageError(f"missing command; try '{PROG} --help'")
    if args.command == "score":
        return score.run(args)
    if args.command in TOOLS:
        return int(importlib.import_module(TOOLS[args.command][0]).main(args.args))
    raise UsageError(f"unknown command '{args.command}'")  # pragma: no cover


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``admcuda`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 1 on a runtime failure, 2 on a usage error, 130 on Ctrl-C
        (SIGTERM is not caught: the process ends by it). Set ``ADMCUDA_TRACEBACK=1`` to
        get a traceback for unexpected errors.
    """
    from admcuda.compiled import skip_blas_probe

    skip_blas_probe()  # the command line runs no Numba code but the CPU engine's
    # At exit the objects are left to the system: the interpreter's last collections
    # over them (Numba's, where the CPU engine ran) took 0.2 to 0.35 s of a run.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    logger = logging.getLogger("admcuda")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter())
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False
    try:
        return run_tool(_dispatch, argv)
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate

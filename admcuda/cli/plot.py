"""``admcuda plot RESULT.json [RESULT2.json ...] -o adm.png``: per-frame VMAF model scores,
adm2 and its scales from JSON, XML or CSV results (:mod:`admcuda.report.plot`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from admcuda.cli.tool import PROG as ADMCUDA
from admcuda.cli.tool import Parser, UsageError, check_image_suffix, run_tool
from admcuda.errors import AdmError
from admcuda.report.plot import load_pyplot, plot_result
from admcuda.report.writers import write_protected, written_input

__all__ = ["build_parser", "main"]

PROG = f"{ADMCUDA} plot"


def build_parser() -> argparse.ArgumentParser:
    """The ``admcuda plot`` argument parser (its ``error`` raises instead of exiting)."""
    parser = Parser(
        prog=PROG,
        add_help=False,
        allow_abbrev=False,
        description="Plot per-frame integer_adm2 and its four scales from JSON, XML or CSV "
        "results (admcuda's or libvmaf's), below the VMAF model scores where the results "
        "hold some; several files are overlaid.",
    )
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument(
        "results", nargs="+", metavar="RESULT.json", help="JSON, XML or CSV result files"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="IMAGE",
        help="image to write (.png, .svg, .pdf...)",
    )
    parser.add_argument(
        "--label",
        action="append",
        metavar="TEXT",
        help="the input's name in the legend, once per result in order; the metric is "
        "added (default: the file names, vmaf.json: integer_adm2)",
    )
    parser.add_argument(
        "--title", metavar="TEXT", help="figure title (default: the input files' names)"
    )
    parser.add_argument(
        "--metric",
        metavar="NAME",
        help="the output plotted on top, by its name in the results (default: the model "
        "scores, vmaf or a model's name=, where the results hold some, else integer_adm2)",
    )
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.label is not None and len(args.label) != len(args.results):
        raise UsageError(f"{len(args.label)} --label for {len(args.results)} results")
    load_pyplot()  # fail before reading anything if matplotlib is missing, as map does
    check_image_suffix(args.output)
    parent = Path(args.output).parent
    if not parent.is_dir():
        raise AdmError(f"output folder '{parent}' does not exist")
    name = written_input(args.output, args.results)
    if name is not None:
        raise UsageError(f"--output '{args.output}' is the input '{name}'; write elsewhere")
    if write_protected(args.output):
        raise AdmError(f"--output '{args.output}' is a read-only file: Permission denied")
    plot_result(args.results, args.output, labels=args.label, title=args.title, metric=args.metric)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda plot RESULT.json [RESULT2.json ...] -o adm.png``.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``plot``; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 1 on a runtime failure, 2 on a usage error; failures print one
        ``admcuda: error: ...`` line on stderr.
    """
    return run_tool(_run, argv)

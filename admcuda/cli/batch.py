"""``admcuda batch MANIFEST -o DIR [--scheduler ADDRESS] ...``: many pairs scored on
Dask (:func:`admcuda.batch.run.score_many`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from admcuda.batch.cluster import require_distributed
from admcuda.batch.records import SUMMARY_NAME
from admcuda.batch.run import DEFAULT_RETRIES, score_many
from admcuda.cli.tool import EXIT_RUNTIME, PROG, Parser, UsageError, counter, run_tool
from admcuda.progress import format_duration

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``admcuda batch`` argument parser (its ``error`` raises UsageError)."""
    parser = Parser(
        prog=f"{PROG} batch",
        add_help=False,
        allow_abbrev=False,
        description="Score many reference/distorted pairs from a manifest on Dask: a "
        "local cluster (one worker per GPU with dask-cuda, else CPU processes) or a "
        "running one (--scheduler). Where the local CPU cluster would be one worker (one "
        "task, or --workers 1), the pairs are scored in this process, no cluster started.",
        epilog="Manifest: CSV with a header (or JSON Lines with the same keys): ref, dis, "
        "and optionally name, width, height, pixel_format, bitdepth, options (ADM's, K=V:K=V), "
        "scale (a rung's ffmpeg scaler, as score's --scale), ignore_name (true/false), "
        "model (score's --model strings, several separated by ';': VMAF on the CPU "
        "backend; the summary then gives the first model's pooled score beside adm2's), "
        "feature (score's --feature strings, libvmaf's NAME=K=V:K=V, several separated by "
        "';': psnr, vif, motion, float_ssim, float_ms_ssim, adm), "
        "autorotate (true: score's --autorotate, false: --noautorotate) and "
        "allow_partial_frame (true/false, score's --allow-partial-frame), and the frames "
        "scored as score's --frame-cnt, --frame-skip-ref, --frame-skip-dist and --subsample "
        "take them: frame_cnt (0: all), frame_skip_ref, frame_skip_dist, subsample (0: every "
        "frame). "
        "Relative paths are taken from the manifest's folder. Rows sharing a reference, "
        "geometry, options, models, features and frame choices are scored as a ladder, the "
        "reference read once. "
        "Writes "
        "OUTPUT/<name>.json (as 'admcuda score --json -o') and OUTPUT/summary.csv; a "
        "rerun keeps the pairs already done. Exit status 1 when any pair failed.",
    )
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument(
        "manifest", metavar="MANIFEST", help="jobs: .csv or .jsonl; - for standard input"
    )
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="results folder")
    parser.add_argument(
        "--scheduler", metavar="ADDRESS",
        help="a running cluster: tcp://host:8786, or a scheduler file (*.json)",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=counter(1), metavar="N",
        help="local cluster: worker processes (default: CPU cores, at most one a task; GPUs "
        "with dask-cuda); on the CPU, 1 scores in this process",
    )  # fmt: skip
    parser.add_argument(
        "--backend", choices=("auto", "cpu", "cuda"), default="auto",
        help="for the tasks (default auto: cuda on a LocalCUDACluster, cpu on a local "
        "CPU cluster, each worker's own choice on --scheduler)",
    )  # fmt: skip
    parser.add_argument("--force", action="store_true", help="score pairs already done, too")
    parser.add_argument(
        "--retries", type=counter(0), default=DEFAULT_RETRIES, metavar="N",
        help="Dask retries of a task that failed unexpectedly (default %(default)s); a "
        "worker that dies is covered by the scheduler's allowed-failures",
    )  # fmt: skip
    parser.add_argument(
        "--rungs-per-task", dest="rungs_per_task", type=counter(1), metavar="N",
        help="split ladders into tasks of at most N rungs (default: whole ladders)",
    )  # fmt: skip
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress line or notices on stderr"
    )
    return parser


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers is for the local cluster; drop it with --scheduler")
    require_distributed()
    start = time.monotonic()
    results = score_many(
        args.manifest, output=args.output, backend=args.backend, force=args.force,
        retries=args.retries, rungs_per_task=args.rungs_per_task, workers=args.workers,
        scheduler=args.scheduler, progress=not args.quiet, report=True,
        keep_frames=False,
    )  # fmt: skip
    failed = sum(not r.ok for r in results)
    if not args.quiet:
        done = sum(r.status == "done" for r in results)
        kept = sum(r.status == "skipped" for r in results)
        kept_text = f", {kept} kept from an earlier run" if kept else ""
        print(
            f"{PROG}: {done} done{kept_text}, {failed} failed in "
            f"{format_duration(time.monotonic() - start)}; summary "
            f"{Path(args.output) / SUMMARY_NAME}",
            file=sys.stderr,
        )
    return EXIT_RUNTIME if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda batch MANIFEST -o DIR [--scheduler ADDRESS] ...``.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``batch``; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 when every pair is done, 1 when any failed (or on a runtime error), 2 on a
        usage error, 130 on Ctrl-C; failures print one line each on stderr.
    """
    return run_tool(_run, argv)

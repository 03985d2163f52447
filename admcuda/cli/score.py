"""Command line: ``admcuda score REF DIS [DIS ...] [-w W -h H -p FMT -b BITS] ...``.

Inputs are raw YUV (``.yuv``/``.raw``, size from ``-w``/``-h``), Y4M, or any
video ffmpeg decodes; with several distorted inputs the reference is read once
and each distorted input gets its own scores (an encoding ladder).

``score`` also takes libvmaf's own command line, so that a ``vmaf`` run that
extracts ADM works with only the program name changed::

    vmaf          -r ref.yuv -d dis.yuv -w 1920 -h 1080 -p 420 -b 10 \\
                  --feature adm=adm_enhn_gain_limit=1.0 -n --threads 8 --json -o out.json
    admcuda score -r ref.yuv -d dis.yuv -w 1920 -h 1080 -p 420 -b 10 \\
                  --feature adm=adm_enhn_gain_limit=1.0 -n --threads 8 --json -o out.json

and a ``vmaf`` run with a model too; written with ``-r``/``-d``, a command line without
``--model`` or ``-n`` scores ``vmaf_v0.6.1``, as ``vmaf`` does (``admcuda score REF DIS``
without ``--model`` computes ADM alone)::

    vmaf          -r ref.yuv -d dis.yuv -w 1920 -h 1080 -p 420 -b 8 \\
                  --model version=vmaf_v0.6.1 --threads 8 --json -o out.json
    admcuda score -r ref.yuv -d dis.yuv -w 1920 -h 1080 -p 420 -b 8 \\
                  --model version=vmaf_v0.6.1 --threads 8 --json -o out.json

The short flags are libvmaf's (``-r -d -w -h -p -b -o -n -q -v``, and ``-c N``, ignored as
there), so ``-h`` is the height and help is ``--help`` only; libvmaf's long spellings
(``--frame_cnt``, ``--pixel_format`` ...) are accepted too, with libvmaf's meaning of 0 for
``--frame_cnt`` (all frames), ``--subsample`` (every frame) and ``--threads`` (no
worker threads).

Every failure ends in one ``admcuda: error: ...`` line on stderr and exit status 2
for a problem with the command line itself, or 1 for one found while reading the
inputs or scoring (a missing file, raw YUV without a size, inputs that disagree),
and leaves no output file behind. In a ladder, a distorted input that fails does
not stop the others: their outputs are written, each failed input gets its error
line, and the exit status is 1.

Ctrl-C (SIGINT) ends a run at once, even one waiting for a pipe's writer, with the one
line ``admcuda: error: interrupted`` and exit status 130. SIGTERM and SIGHUP keep their
default action, as in libvmaf's ``vmaf``: the process ends by the signal (a shell reports
143 for SIGTERM), and its CPU worker processes die with it.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from admcuda.backends import select_backend
from admcuda.cli.tool import (
    EXIT_RUNTIME,
    PROG,
    FeatureRequest,
    feature_request,
)
from admcuda.cli.tool import counter as _counter
from admcuda.cli.tool import fail as _fail
from admcuda.errors import AdmError, UsageError
from admcuda.io.formats import BITDEPTHS, MIN_SIDE_EXCLUSIVE, PIXEL_FORMATS
from admcuda.io.streams import STDIN
from admcuda.ladder import LadderRun, run_ladder
from admcuda.numeric import counted
from admcuda.options import (
    ADM_CUDA_BASE_NAMES,
    NON_DEBUG_BASE_NAMES,
    OPTIONS,
    AdmOptions,
    adm_cuda_feature_names,
    feature_names,
)
from admcuda.pipeline import CPU_HOST_MEMORY, DEFAULT_HOST_MEMORY, RunStats
from admcuda.progress import PROGRESS_EVERY_S  # --progress: a plain line this often
from admcuda.report.writers import (
    FORMATS,
    StagedOutput,
    commit_all,
    output_target,
    pool,
    render,
    write_protected,
    write_text,
    written_input,
)
from admcuda.version import __version__

__all__ = ["add_parser", "run"]

_SUFFIX_FORMATS = {".json": "json", ".xml": "xml", ".csv": "csv", ".sub": "sub"}
_FORMAT_NAMES = {"json": "JSON", "xml": "XML", "csv": "CSV", "sub": "MicroDVD subtitles"}
_PLACEHOLDERS = ("{name}", "{index}")
_LOADED = time.time()
LIBVMAF_DEFAULT_MODEL = "version=vmaf_v0.6.1"
PROCESS_START: float | None = None
"""Where set (``admcuda serve``: its client's start), what ``--stats`` counts from."""


def _options_epilog() -> str:
    lines = [
        "Inputs: raw planar YUV (.yuv/.raw; give -w/-h, and -p/-b unless 420 8-bit),",
        "Y4M (size, layout and bit depth from its header), or any video ffmpeg decodes",
        "(luma taken as decoded, at its own bit depth; needs imageio-ffmpeg). A raw input",
        "beside a Y4M or video input takes its size and bit depth from it, never its",
        "chroma layout: -p (default 420) describes the raw inputs.",
        "",
        "With several DIS inputs, --output must contain {name} (the input's file name",
        "without suffix) or {index} (1 for the first DIS), or be a folder, which gets",
        "one NAME.json/.xml/.csv per input. A DIS input that cannot be opened or read",
        "does not stop the others: they are written, it gets an error line, and the",
        "exit status is 1. '-' reads one input from standard input.",
        "",
        "ADM options for --option NAME=VALUE (name or alias), or libvmaf's --feature",
        "adm=NAME=VALUE:... (full names, as libvmaf reads them; libvmaf's table):",
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


def _scaler(text: str) -> str:
    """argparse type: an ffmpeg scaler, as the input layer takes it (``bicubic``,
    ``lanczos+accurate_rnd``)."""
    from admcuda.io.ffmpeg import check_scaler

    try:
        return check_scaler(text)
    except AdmError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``score`` subcommand to ``commands`` (the top-level parser's subparsers)
    and return its parser."""
    score = commands.add_parser(
        "score",
        add_help=False,
        allow_abbrev=False,
        help="score distorted videos against a reference (raw YUV, Y4M or encoded)",
        description="Score one or more distorted inputs against a reference with ADM, or with "
        "VMAF models and VIF/motion features (--model, --feature; on the CPU).",
        epilog=_options_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("--help", action="help", help="show this help and exit")
    score.add_argument(
        "-v", "--version", action="version", version=f"{PROG} {__version__}",
        help="print the version and exit",
    )  # fmt: skip
    score.add_argument(
        "ref", nargs="?", metavar="REF", help="reference: .yuv, .y4m or video ('-': stdin)"
    )
    score.add_argument(
        "dis", nargs="*", metavar="DIS", help="distorted input(s), scored against REF"
    )
    score.add_argument(
        "-r", "--reference", metavar="PATH",
        help="reference, as libvmaf takes it (instead of REF)",
    )  # fmt: skip
    score.add_argument(
        "-d", "--distorted", action="append", metavar="PATH",
        help="distorted input, as libvmaf takes it (instead of DIS); repeat for a ladder",
    )  # fmt: skip
    score.add_argument(
        "--example",
        action="store_true",
        help="score the small example pair shipped with admcuda (176x144 420 8-bit)",
    )
    score.add_argument(
        "-w", "--width", type=_counter(1), metavar="W", help="frame width in pixels"
    )  # fmt: skip
    score.add_argument(
        "-h", "--height", type=_counter(1), metavar="H", help="frame height in pixels"
    )  # fmt: skip
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
        type=_counter(1),
        choices=BITDEPTHS,
        help="raw YUV bits per sample (default 8, or that of a Y4M/video input); "
        "above 8, samples are 16-bit little-endian",
    )
    score.add_argument(
        "--ignore-name", "--ignore_name", dest="ignore_name", action="store_true",
        help="do not check raw inputs against the size, bit depth or layout their file "
        "names state (e.g. clip_1280x720_10bit.yuv)",
    )  # fmt: skip
    add_input_checks(score)
    score.add_argument(
        "--scale", type=_scaler, metavar="SCALER",
        help="scale distorted inputs of another size to the reference's with this ffmpeg "
        "scaler (bicubic, bilinear, lanczos, neighbor, spline, ...); without it a size "
        "mismatch is an error",
    )  # fmt: skip
    frames = score.add_argument_group("frames (as libvmaf's command line)")
    frames.add_argument(
        "--frame-cnt", "--frame_cnt", dest="frame_cnt", type=_counter(1, zero=0), metavar="N",
        help="read at most N frames (after skipping); 0, as in libvmaf, reads all",
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
        "--subsample", type=_counter(1, zero=1), default=1, metavar="N",
        help="score every Nth frame (frames 0, N, 2N, ...; frameNum keeps the number); "
        "0, as in libvmaf, scores every frame",
    )  # fmt: skip
    score.add_argument(
        "--backend",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where to compute (default auto: CUDA if available, else CPU)",
    )
    perf = score.add_argument_group("resources")
    perf.add_argument(
        "--threads", type=_counter(1, zero=1), metavar="N",
        help="CPU backend: worker processes (default: all usable cores; runs under about "
        "four 1080p frames stay in one process); 0, as libvmaf's no worker threads, is one",
    )  # fmt: skip
    perf.add_argument(
        "--decoder", choices=("auto", "ffmpeg", "nvdec"), default="auto",
        help="who decodes encoded video: NVDEC on the GPU (pip install \".[nvdec]\"), "
        "ffmpeg on the CPU, or auto (default): NVDEC when the CUDA backend runs and "
        "PyNvVideoCodec decodes the codec, else ffmpeg",
    )  # fmt: skip
    perf.add_argument(
        "--gpu", type=_counter(0), metavar="N",
        help="CUDA backend: the GPU to use, by CUDA device number (default 0)",
    )  # fmt: skip
    perf.add_argument(
        "--host-memory", dest="host_memory", type=_counter(1), metavar="MIB",
        help=f"MiB of host frame buffers, page-locked with CUDA (default "
        f"{DEFAULT_HOST_MEMORY >> 20}; {CPU_HOST_MEMORY >> 20} on the CPU); the GPU also "
        "holds about two batches of bands",
    )  # fmt: skip
    perf.add_argument(
        "--batch", type=_counter(1), metavar="N",
        help="frames per GPU batch (default: by frame size, up to 512, fewer where "
        "--host-memory is small); the GPU's buffers grow with it. With --model or "
        "--feature vif/motion: frames per CPU batch",
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
        "--feature",
        action="append",
        default=[],
        metavar="NAME[=KEY=VALUE:...]",
        help="libvmaf's spelling of a feature and its options: adm, vif, motion (or "
        "adm_cuda, vif_cuda, motion_cuda), psnr, float_ssim, float_ms_ssim, cambi, "
        "speed_chroma, float_moment, float_psnr, float_motion, ciede, psnr_hvs, "
        "speed_temporal, float_ansnr, float_vif or float_adm, optionally =KEY=VALUE:KEY=VALUE; "
        "repeatable",
    )
    score.add_argument(
        "-m", "--model", action="append", default=[], metavar="version=NAME|path=FILE[:...]",
        help="a VMAF model, as libvmaf takes it: version=vmaf_v0.6.1 (also vmaf_v0.6.1neg, "
        "vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, the bootstrap collection vmaf_b_v0.6.3, the "
        "vmaf_v1.0.16_* models, the float models vmaf_float_v0.6.1, vmaf_float_v0.6.1neg, "
        "vmaf_float_4k_v0.6.1 and vmaf_float_b_v0.6.3; the bare name works too) or "
        "path=model.json, then optionally :name=LABEL, :enable_transform, :disable_clip, "
        ":FEATURE.OPTION=VALUE; repeatable. Its score is written under its name (vmaf by "
        "default) beside every feature it reads; a collection's also NAME_0001..., "
        "NAME_bagging, NAME_stddev, NAME_ci_p95_lo and NAME_ci_p95_hi. Without --model (and "
        "without -n), inputs given as -r/-d are scored with vmaf_v0.6.1 as libvmaf's vmaf "
        "does, and inputs given as REF DIS get ADM alone",
    )  # fmt: skip
    score.add_argument(
        "-n", "--no_prediction", "--no-prediction", dest="no_prediction", action="store_true",
        help="with --model: compute and write the model's features, not its score",
    )  # fmt: skip
    for mask, what in (("cpumask", "CPU instruction sets"), ("gpumask", "GPU operations")):
        score.add_argument(
            f"--{mask}", type=_counter(0), metavar="BITMASK",
            help=f"accepted for libvmaf's command line (where it restricts the {what} "
            "libvmaf may use); no effect here",
        )  # fmt: skip
    score.add_argument(
        "-c", dest="c_ignored", type=_counter(0), metavar="N",
        help="accepted for libvmaf's command line (in its short options, but no option "
        "reads it: ignored there too); no effect here",
    )  # fmt: skip
    # libvmaf options that add other features: refused in _check_arguments, one line each
    for flags, dest in _REFUSED_FLAGS:
        score.add_argument(*flags, dest=dest, action="append", help=argparse.SUPPRESS)
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
            help=f"write {_FORMAT_NAMES[name]} (to --output, or to stdout without it)",
        )
    score.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="output file ('-' for stdout); its format comes from --json/--xml/--csv/--sub, "
        "else from the suffix (.json .xml .csv .sub), else XML as in libvmaf. With several "
        "DIS: a path with {name} or {index}, or a folder",
    )
    score.add_argument(
        "-q", "--quiet", action="store_true",
        help="no progress bar on stderr, and no pooled score lines beside an output file",
    )  # fmt: skip
    score.add_argument(
        "--progress", action="store_true",
        help=f"a plain progress line on stderr every {PROGRESS_EVERY_S:g} s and at the end, "
        "terminal or not, for logs (off a terminal admcuda writes one every 30 s by itself)",
    )  # fmt: skip
    return score


# libvmaf's options that score features admcuda lacks: (flags, dest), and why refused.
_REFUSED_FLAGS = (
    (("--aom_ctc",), "aom_ctc"),
    (("--nflx_ctc",), "nflx_ctc"),
)
_REFUSED_WHY = {
    "aom_ctc": "admcuda computes ADM, VIF, motion and VMAF models, and libvmaf's AOM CTC "
    "preset adds other features (PSNR, SSIM, CIEDE, ...); drop it",
    "nflx_ctc": "admcuda computes ADM, VIF, motion and VMAF models, and libvmaf's Netflix "
    "CTC preset adds other features (PSNR, SSIM, CAMBI); drop it",
}


def _check_refused(args: argparse.Namespace) -> None:
    """Refuse libvmaf's --aom_ctc and --nflx_ctc by name, saying why."""
    for flags, dest in _REFUSED_FLAGS:
        values = getattr(args, dest)
        if values:
            raise UsageError(f"{'/'.join(flags)} {values[0]}: {_REFUSED_WHY[dest]}")


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
    try:
        target = output_target(output)
    except OSError as exc:
        raise AdmError(f"output path '{output}': {exc.strerror}") from None
    if target.kind != "file":
        return  # a descriptor (/dev/stdout), a device or a FIFO: written into as it is
    parent = target.path.parent  # through links, the folder of the file they name
    if not parent.is_dir():
        if target.path != Path(os.path.abspath(output)):
            raise AdmError(
                f"output path '{output}' leads to folder '{parent}', which does not exist"
            )
        raise AdmError(f"output folder '{parent}' does not exist")
    if not os.access(parent, os.W_OK):
        raise AdmError(f"output folder '{parent}' is not writable")
    if write_protected(target.path):
        raise AdmError(f"output path '{output}' is a read-only file: Permission denied")


def _output_paths(output: str | None, dis: Sequence[str], fmt: str | None) -> list[Path | None]:
    """Where each distorted input's scores go; None for stdout (or the summary)."""
    if output == "":
        raise UsageError("--output is empty: give a path, or - for standard output")
    if output is not None and output.endswith(("/", os.sep)) and not Path(output).is_dir():
        raise AdmError(f"output folder '{output}' does not exist")
    if output is None or output == "-":
        if len(dis) > 1 and fmt is not None:
            raise UsageError(
                "several DIS inputs: give --output a path with {name} or {index}, or a folder"
            )
        return [None] * len(dis)
    if Path(output).is_dir():
        paths = [Path(output) / f"{_stem(d)}.{fmt or 'xml'}" for d in dis]
    elif any(mark in output for mark in _PLACEHOLDERS):
        paths = [
            Path(output.replace("{name}", _stem(d)).replace("{index}", str(i)))
            for i, d in enumerate(dis, start=1)
        ]
    elif len(dis) > 1:
        raise UsageError(
            f"several DIS inputs but one --output '{output}': put {{name}} or {{index}} "
            "in it, or give a folder"
        )
    else:
        paths = [Path(output)]
    seen: dict[Path, str] = {}
    for path, source in zip(paths, dis, strict=True):
        try:
            key = path.resolve()
        except (OSError, RuntimeError) as exc:  # a loop of links
            raise AdmError(f"output path '{path}' cannot be resolved: {exc}") from None
        if key in seen:
            raise UsageError(
                f"DIS inputs '{seen[key]}' and '{source}' would both write '{path}'; "
                "use {index} in --output"
            )
        seen[key] = source
    return list(paths)


def _check_outputs_are_not_inputs(outputs: Sequence[Path | None], inputs: Sequence[str]) -> None:
    """Refuse an output that is one of the input files (:func:`written_input`; None is
    standard output, which a shell's ``>>`` or ``1<>`` may have opened on an input):
    writing it would replace the input or add to it."""
    for out in outputs:
        name = written_input(out, inputs)
        if name is None:
            continue
        shown = "standard input" if name == STDIN else f"the input '{name}'"
        if out is None:
            raise UsageError(f"standard output is {shown}; redirect it elsewhere")
        raise UsageError(f"--output '{out}' is {shown}; write elsewhere")


def _stem(path: str) -> str:
    """The ``{name}`` of an input: its file name without suffix; ``stdin`` for ``-``."""
    return "stdin" if path == STDIN else Path(path).stem


@contextlib.contextmanager
def _inputs(args: argparse.Namespace) -> Iterator[tuple[str, list[str]]]:
    if not args.example:
        yield args.ref, list(args.dis)
        return
    from admcuda.data import example_paths

    with example_paths() as (ref, dis):
        yield str(ref), [str(dis)]


def _merge_input_forms(args: argparse.Namespace) -> str:
    """Fold libvmaf's ``-r``/``-d`` into ``ref``/``dis``; returns how DIS is spelled."""
    flagged = args.reference is not None or args.distorted
    args.libvmaf_form = bool(flagged)
    if not flagged:
        return "DIS"
    if args.ref is not None or args.dis:
        raise UsageError(
            "give the inputs either as REF DIS [DIS ...] or with -r/--reference and "
            "-d/--distorted, not both"
        )
    args.ref, args.dis = args.reference, list(args.distorted or [])
    return "-d/--distorted"


def _check_arguments(args: argparse.Namespace) -> None:
    """Command-line checks that need no file: presence, ranges, the example's rules."""
    _check_refused(args)
    if args.quiet and args.progress:
        raise UsageError("-q silences the progress that --progress asks for; give one of them")
    dis_name = _merge_input_forms(args)
    ref_name = "REF" if dis_name == "DIS" else "-r/--reference"
    if args.gpu is not None and args.backend == "cpu":
        raise UsageError(f"--gpu {args.gpu} picks a CUDA device; drop it or --backend cpu")
    if args.example:
        from admcuda.data import EXAMPLE

        given = [flag for flag, value in (
            (ref_name, args.ref), (dis_name, args.dis or None), ("--width", args.width),
            ("--height", args.height), ("--pixel-format", args.pixel_format),
            ("--bitdepth", args.bitdepth),
        ) if value is not None]  # fmt: skip
        if given:
            raise UsageError(f"--example brings its own input; drop {', '.join(given)}")
        args.width, args.height = EXAMPLE.width, EXAMPLE.height
        args.pixel_format, args.bitdepth = EXAMPLE.pixel_format, EXAMPLE.bitdepth
        return
    missing = [name for name, value in ((ref_name, args.ref), (dis_name, args.dis)) if not value]
    if missing:
        raise UsageError(f"missing {', '.join(missing)} (or use --example)")
    if [args.ref, *args.dis].count(STDIN) > 1:
        raise UsageError("standard input ('-') can feed one input only")
    for flag, value in (("--width", args.width), ("--height", args.height)):
        if value is not None and value <= MIN_SIDE_EXCLUSIVE:
            raise UsageError(
                f"{flag} {value} is too small: libvmaf's ADM needs width and height "
                f"> {MIN_SIDE_EXCLUSIVE}"
            )


def _request(args: argparse.Namespace) -> FeatureRequest:
    """``--model``, ``--feature``, ``--option`` and ``--debug`` as one request
    (:func:`admcuda.cli.tool.feature_request`, which ``admcuda batch`` reads its rows
    through too)."""
    from admcuda.model import model_arg

    try:
        models = args.model
        if not models and not args.no_prediction and getattr(args, "libvmaf_form", False):
            models = [LIBVMAF_DEFAULT_MODEL]  # libvmaf's vmaf scores this one unless told -n
        return feature_request(
            [model_arg(m) for m in models], args.feature, args.option, debug=args.debug,
            predict=not args.no_prediction,
        )  # fmt: skip
    except AdmError as exc:
        raise UsageError(str(exc)) from None


def _plan(request: FeatureRequest) -> Any:
    """The :class:`admcuda.vmaf.FeaturePlan` of ``--model`` and ``--feature`` as libvmaf
    registers them; admcuda's own ``--option``/``--debug`` add an ADM after the models."""
    try:
        return request.plan()
    except AdmError as exc:
        raise UsageError(str(exc)) from None


def _pooled_lines(frames: list[dict[str, float]], opts: AdmOptions) -> list[str]:
    names = feature_names(opts)
    width = max(len(names[base]) for base in NON_DEBUG_BASE_NAMES)
    lines = []
    for base in NON_DEBUG_BASE_NAMES:
        name = names[base]
        mean = pool([frame[name] for frame in frames])["mean"]
        lines.append(f"  {name:{width}}  {mean:.6f}")
    return lines


def _rung_line(
    path: str, frames: list[dict[str, float]], opts: AdmOptions, width: int, name: str = ""
) -> str:
    """One rung of a ladder: its frames and adm2, or ``name``, over them (libvmaf's mean,
    harmonic mean and min, then the 5th percentile, median, 95th percentile, max and
    standard deviation)."""
    from admcuda.report.stats import frame_stats

    name = name or feature_names(opts)["integer_adm2"]
    s = frame_stats([frame[name] for frame in frames])
    rest = " ".join(f"{k} {s[k]:.6f}" for k in _SPREAD)
    return (
        f"{path:{width}}  {counted(len(frames), 'frame')}  {name} mean {s['mean']:.6f} "
        f"harmonic_mean {s['harmonic_mean']:.6f} min {s['min']:.6f} {rest}"
    )


_SPREAD = ("p5", "median", "p95", "max", "stdev")
"""What the summary prints of a score beside libvmaf's pooled values."""


def _spread_lines(frames: list[dict[str, float]], names: list[str]) -> list[str]:
    """The summary's lines on how ``names`` (the model's scores, or adm2) spread over the
    frames: min, percentiles, median, max, standard deviation."""
    from admcuda.report.stats import frame_stats

    width = max(len(n) for n in names)
    lines = ["over frames:"]
    for n in names:
        s = frame_stats([f[n] for f in frames])
        cells = "  ".join(f"{k} {s[k]:.6f}" for k in ("min", *_SPREAD))
        lines.append(f"  {n:{width}}  {cells}")
    return lines


def _summary(run: LadderRun, backend: str, subsample: int, scored: list[int]) -> str:
    """The report without ``--output``: a pooled block for one DIS, else a line per rung
    that scored (``scored`` are their indices)."""
    changed = " ".join(f"{k}={v}" for k, v in run.opts.non_default().items() if k != "debug")
    geometry = f"{run.width}x{run.height} {run.pixel_format} {run.bitdepth}-bit"
    extras = (f", subsample {subsample}" if subsample > 1 else "") + (
        f", options {changed}" if changed else ""
    )
    head = f"{PROG} {__version__}, backend {backend}: "
    plan = getattr(run, "plan", None)
    if plan is not None:
        extras = f", subsample {subsample}" if subsample > 1 else ""
    if len(run.dis) == 1:
        frames = run.frames[0]
        lines = [head + f"{counted(len(frames), 'frame')}, {geometry}{extras}", "pooled mean:"]
        if plan is not None:
            order = plan.output_order()
            first = [n for n in order if n in plan.model_outputs]
            names = first + [n for n in order if n not in first]
            lines += _plan_pooled_lines(frames, names)
            return "\n".join(lines + _spread_lines(frames, first or [_headline(plan)]))
        lines += _pooled_lines(frames, run.opts)
        return "\n".join(lines + _spread_lines(frames, [feature_names(run.opts)["integer_adm2"]]))
    lines = [head + f"{geometry}{extras}, reference {run.ref}"]
    width = max((len(run.dis[k]) for k in scored), default=0)
    if plan is not None:
        name = _headline(plan)
        lines += [_rung_line(run.dis[k], run.frames[k], run.opts, width, name) for k in scored]
        return "\n".join(lines)
    lines += [_rung_line(run.dis[k], run.frames[k], run.opts, width) for k in scored]
    return "\n".join(lines)


def _headline(plan: Any) -> str:
    """The output a ladder's summary reports per rung: the first model's score, else the
    first output (an ADM's adm2 where the plan computes ADM)."""
    if plan.model_outputs:
        return str(plan.model_outputs[0])
    order = plan.output_order()
    adm2 = [n for n in order if n.startswith("integer_adm2")]
    return adm2[0] if adm2 else order[0]


def _score_lines(run: LadderRun, scored: list[int]) -> list[str]:
    """What libvmaf's ``vmaf`` prints once it has scored: each model's pooled mean under
    the version or path it was loaded from (``vmaf_v0.6.1: 81.555395``; its ``name=``
    beside that where one is given), or, without a model's score, adm2's mean (the
    first output where there is no ADM); then, for each model collection, its pooled
    bagging score, 95% interval and standard deviation
    (``vmaf_b_v0.6.3: 80.790020, ci.p95: [78.341050, 83.653128], stddev: 1.622961``). A
    ladder's lines start with the rung's file."""
    plan = getattr(run, "plan", None)
    collections: list[tuple[str, list[str]]] = []
    if plan is not None and plan.model_outputs:
        named = [
            (out, m.label if out == "vmaf" else f"{m.label} ({out})")
            for m, out in zip(plan.models, plan.model_outputs, strict=True)
        ]
        collections = [
            (
                label,
                [out + suffix for suffix in ("_bagging", "_ci_p95_lo", "_ci_p95_hi", "_stddev")],
            )
            for m, (out, label) in zip(plan.models, named, strict=True)
            if m.bootstrap is not None
        ]
    elif plan is not None:
        named = [(_headline(plan),) * 2]
    else:  # ADM's frames answer to the base name whatever the options
        named = [("integer_adm2", feature_names(run.opts)["integer_adm2"])]
    width = max((len(run.dis[k]) for k in scored), default=0)
    lines = []
    for k in scored:
        rung = f"{run.dis[k]:{width}}  " if len(run.dis) > 1 else ""

        def mean(out: str, frames: list[dict[str, float]] = run.frames[k]) -> float:
            return pool([frame[out] for frame in frames])["mean"]

        for out, label in named:
            lines.append(f"{rung}{label}: {mean(out):.6f}")
        for label, (bagging, lo, hi, stddev) in collections:
            lines.append(
                f"{rung}{label}: {mean(bagging):.6f}, ci.p95: [{mean(lo):.6f}, "
                f"{mean(hi):.6f}], stddev: {mean(stddev):.6f}"
            )
    return lines


def _is_standard_output(dest: Path | None) -> bool:
    """Whether an output written to ``dest`` lands on standard output (``-o -``,
    ``/dev/stdout``, a descriptor or file that standard output is open on)."""
    if dest is None:
        return True
    try:
        out = os.fstat(sys.stdout.fileno())
        target = output_target(dest)
        there = os.fstat(target.fd) if target.kind == "fd" else os.stat(target.path)
    except (AttributeError, OSError, ValueError):  # stdout closed or not a file; no file
        return False
    return (out.st_dev, out.st_ino) == (there.st_dev, there.st_ino)


def _print_scores(run: LadderRun, outputs: list[Path | None], scored: list[int]) -> None:
    """The pooled score lines (:func:`_score_lines`) once the outputs are written: on
    standard output, as the summary is, or on stderr where standard output is an output
    (or closed)."""
    text = "\n".join(_score_lines(run, scored)) + "\n"
    if sys.stdout is None or any(_is_standard_output(outputs[k]) for k in scored):
        sys.stderr.write(text)
    else:
        write_text(None, text)


def _plan_pooled_lines(frames: list[dict[str, float]], names: list[str]) -> list[str]:
    width = max(len(n) for n in names)
    return [f"  {n:{width}}  {pool([f[n] for f in frames])['mean']:.6f}" for n in names]


def _stdout() -> Any:
    """Standard output, or an error where it is closed (``>&-``)."""
    if sys.stdout is None:
        raise AdmError("standard output is closed; give --output PATH")
    return sys.stdout


def _as_adm_cuda(frames: list[dict[str, float]], opts: AdmOptions) -> list[dict[str, float]]:
    """The frames' outputs as libvmaf's ``adm_cuda`` writes them: its subset, under its
    names (:func:`admcuda.options.adm_cuda_feature_names`)."""
    names = adm_cuda_feature_names(opts)
    bases = [b for b in ADM_CUDA_BASE_NAMES if opts.debug or b in NON_DEBUG_BASE_NAMES]
    return [{names[b]: frame[b] for b in bases} for frame in frames]


def _write_all(
    fmt: str,
    run: LadderRun,
    outputs: list[Path | None],
    fps: list[float],
    scored: list[int],
    *,
    adm_cuda: bool = False,
) -> None:
    """Write one document per distorted input that scored, together (:func:`commit_all`:
    standard output first, then the paths), so that a failing one leaves every existing
    file as it was. With ``adm_cuda``, the outputs are named and chosen as libvmaf's
    adm_cuda writes them."""
    staged = []
    for k in scored:
        text = render(
            fmt,  # type: ignore[arg-type]
            _as_adm_cuda(run.frames[k], run.opts) if adm_cuda else run.frames[k],
            width=run.width,
            height=run.height,
            fps=fps[k],
            frame_numbers=run.frame_numbers[k],
            aggregate=run.aggregates[k] if getattr(run, "aggregates", None) else None,
        )
        dest = outputs[k]
        if dest is None:
            _stdout()
        staged.append(StagedOutput(dest, text))
    commit_all(staged)


def _rung_errors(run: LadderRun) -> list[str | None]:
    """Each distorted input's one-line error, None where it scored."""
    errors = list(getattr(run, "errors", None) or [])
    return errors + [None] * (len(run.dis) - len(errors))


def add_input_checks(parser: argparse.ArgumentParser) -> None:
    """The options that let through an input the input layer refuses by default: a video
    with a display matrix (--autorotate / --noautorotate), a raw file that is not whole
    frames (--allow-partial-frame)."""
    turn = parser.add_mutually_exclusive_group()
    turn.add_argument(
        "--autorotate", dest="autorotate", action="store_true", default=None,
        help="score a video with a display rotation (or flip) turned as ffmpeg turns it by "
        "default (ffmpeg decoder only); without this or --noautorotate such a video is "
        "refused",
    )  # fmt: skip
    turn.add_argument(
        "--noautorotate", dest="autorotate", action="store_false",
        help="score a video with a display rotation (or flip) as its pixels are stored",
    )  # fmt: skip
    parser.add_argument(
        "--allow-partial-frame", "--allow_partial_frame", dest="allow_partial_frame",
        action="store_true",
        help="read a raw file whose size is not a whole number of frames (its whole frames, "
        "with a warning); without it such a file is refused, as flags that do not fit it",
    )  # fmt: skip


def input_check_options(args: argparse.Namespace) -> dict[str, object]:
    """The keyword arguments of :func:`add_input_checks`' options, where given."""
    extra: dict[str, object] = {}
    if getattr(args, "autorotate", None) is not None:
        extra["autorotate"] = args.autorotate
    if getattr(args, "allow_partial_frame", False):
        extra["allow_partial_frame"] = True
    return extra


def _ladder_options(args: argparse.Namespace) -> dict[str, object]:
    """Keyword arguments for the input layer and the GPU, passed only when set."""
    extra: dict[str, object] = input_check_options(args)
    if args.ignore_name:
        extra["ignore_name"] = True
    if args.scale is not None:
        extra["scale"] = args.scale
    if args.gpu is not None:
        extra["device"] = args.gpu
    if args.decoder != "auto":
        extra["decoder"] = args.decoder
    given = (args.width, args.height, args.pixel_format, args.bitdepth)
    if not args.example and any(value is not None for value in given):
        extra["raw_flags"] = True
    return extra


def run(args: argparse.Namespace) -> int:
    """``admcuda score`` with its parsed arguments; returns the exit status."""
    _check_arguments(args)
    request = _request(args)
    opts = request.options
    plan = _plan(request)
    if args.backend != "cpu" and (plan is None or plan.engine_plan().extractors):
        from admcuda import cuda_start

        cuda_start.start(args.gpu)  # beside the imports and the opening of the inputs
    out_format = _output_format(args)
    dis_names = ["example"] if args.example else list(args.dis)
    outputs = _output_paths(args.output, dis_names, out_format)
    if not args.example:
        # before the folder and mode checks: an input that is read-only (as source clips
        # often are) is named as the input, not as a file that cannot be written
        _check_outputs_are_not_inputs(outputs, [args.ref, *args.dis])
    for path in outputs:
        if path is not None:
            _check_output_path(path)
    # Resolved here so that a named backend that cannot load fails before any reading;
    # "auto" itself goes on to the run, which may still fall back if CUDA cannot start.
    resolved = "cpu" if plan is not None else select_backend(args.backend)[0]

    stats = RunStats()
    process_start = _process_start_time()
    start = time.perf_counter()
    with _inputs(args) as (ref, dis):
        run = run_ladder(
            ref,
            dis,
            width=args.width,
            height=args.height,
            pixel_format=args.pixel_format,
            bitdepth=args.bitdepth,
            opts=opts,
            backend=args.backend,
            frame_cnt=args.frame_cnt,
            frame_skip_ref=args.frame_skip_ref,
            frame_skip_dist=args.frame_skip_dist,
            subsample=args.subsample,
            progress=PROGRESS_EVERY_S if args.progress else not args.quiet,
            threads=args.threads,
            host_memory=None if args.host_memory is None else args.host_memory << 20,
            batch=args.batch,
            stats=stats,
            plan=plan,
            **_ladder_options(args),  # type: ignore[arg-type]
        )
    elapsed = time.perf_counter() - start
    backend = getattr(run, "backend", resolved)
    if args.stats:
        print(_stats_line(stats, process_start), file=sys.stderr)
    fps = [len(frames) / elapsed if elapsed > 0 else math.inf for frames in run.frames]
    if not args.quiet:
        # Said once the run has worked, so that an error stays the only line.
        for note in _notices(args, backend, getattr(run, "decoded", {})):
            print(f"{PROG}: notice: {note}", file=sys.stderr)

    errors = _rung_errors(run)
    scored = [k for k, error in enumerate(errors) if error is None]
    if scored:
        if out_format is None:
            _stdout()
            write_text(None, _summary(run, backend, args.subsample, scored) + "\n")
        else:
            adm_cuda = plan is None and any(
                item.partition("=")[0] == "adm_cuda" for item in args.feature
            )
            _write_all(out_format, run, outputs, fps, scored, adm_cuda=adm_cuda)
            if not args.quiet:
                _print_scores(run, outputs, scored)
    for path, error in zip(run.dis, errors, strict=True):
        if error is not None:
            _fail(error if path in error else f"{path}: {error}")
    return EXIT_RUNTIME if len(scored) < len(errors) else 0


def _notices(args: argparse.Namespace, backend: str, decoded: dict[str, str]) -> list[str]:
    """What the run did otherwise than the command line asked explicitly: the GPU asked
    for (``--backend cuda``, ``--gpu N``) but another backend scored, or encoded video
    decoded by another decoder than ``--decoder`` named. What ``auto`` picks is no news
    (the summary names the backend), so it is not said."""
    notes = []
    asked = "--backend cuda" if args.backend == "cuda" else None
    if asked is None and args.gpu is not None:
        asked = f"--gpu {args.gpu}"
    if asked is not None and backend != "cuda":
        from admcuda import backends

        reason = backends.fallback_reason or "CUDA is unavailable"
        notes.append(f"{asked} was given, but {reason}; scored on the {backend.upper()}")
    other = {p: d for p, d in decoded.items() if args.decoder != "auto" and d != args.decoder}
    if other:
        by = ", ".join(f"{Path(p).name} by {d}" for p, d in other.items())
        notes.append(f"--decoder {args.decoder} was given, but video decoded: {by}")
    return notes


def _process_start_time() -> float:
    """This process's start on the wall clock (Linux: from /proc, 10 ms resolution);
    elsewhere the time this module was loaded; :data:`PROCESS_START` where set."""
    if PROCESS_START is not None:
        return PROCESS_START
    from admcuda.clock import process_start

    started = process_start()
    return _LOADED if started is None else started


def _stats_line(stats: RunStats, process_start: float) -> str:
    """One line of timings, ``key=value`` pairs that scripts can parse: counts, and
    durations in seconds from the process's start (``startup_s`` to the first batch's
    scores, ``scored_s`` to the last), never clock readings."""
    steady = stats.steady_fps()
    parts = [
        f"frames={stats.frames}",
        f"batches={stats.batches}",
        f"startup_s={stats.first_done - process_start:.3f}" if stats.first_done else "",
        f"steady_fps={steady:.1f}" if steady is not None else "",
        f"scored_s={stats.end - process_start:.3f}" if stats.end else "",
        f"first_batch_frames={stats.first_batch_frames}",
    ]
    return f"{PROG}: stats: " + " ".join(p for p in parts if p)

"""``admcuda map REF DIS [-w W -h H -p FMT -b BITS] [--scale NAME] [--frame N] -o map.png``:
one frame's distortion map (:mod:`admcuda.report.distmap`), or with ``--kind cambi`` the
distorted frame's banding map (:mod:`admcuda.report.banding`), as a PNG or ``.npy``."""

from __future__ import annotations

import argparse
import io
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.cli.tool import PROG as ADMCUDA
from admcuda.cli.tool import (
    Parser,
    UsageError,
    c_integer,
    check_image_suffix,
    counter,
    parse_option_args,
    run_tool,
)
from admcuda.errors import AdmError
from admcuda.numeric import NumberTooLong
from admcuda.options import AdmOptions
from admcuda.report.distmap import KINDS, load_pyplot, save_distortion_png
from admcuda.report.writers import (
    StagedOutput,
    copy_mode,
    drop_stdout,
    output_target,
    write_protected,
    written_input,
)

__all__ = ["build_parser", "main"]

PROG = f"{ADMCUDA} map"
STDOUT = "-"  # --npy - : the map's .npy bytes on standard output
CAMBI = "cambi"


def _frame_number(text: str) -> int:
    """argparse type: ``--frame`` in libvmaf's integer syntax (:func:`c_integer`, as -w/-h
    and libvmaf's own frame options --frame_skip_ref/--frame_cnt take, so ``010`` is 8);
    a negative one is left for the range check to name."""
    try:
        return c_integer(text)
    except NumberTooLong as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: '{text}'") from None


def _scaler(text: str) -> str:
    """argparse type: an ffmpeg scaler, as ``admcuda score --scale`` takes it."""
    from admcuda.io.ffmpeg import check_scaler

    try:
        return check_scaler(text)
    except AdmError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The ``admcuda map`` argument parser (its ``error`` raises instead of exiting)."""
    from admcuda.io.formats import BITDEPTHS, PIXEL_FORMATS

    parser = Parser(
        prog=PROG,
        add_help=False,
        allow_abbrev=False,
        description="Draw where ADM finds the detail loss (or the additive impairment) "
        "of one frame pair, or where CAMBI finds banding in the distorted frame, as a heat "
        "map over the luma. Inputs are read as by "
        "'admcuda score': raw YUV, Y4M, or any video ffmpeg decodes.",
    )
    parser.add_argument("--help", action="help", help="show this help and exit")
    parser.add_argument("ref", metavar="REF", help="reference: .yuv, .y4m or video ('-': stdin)")
    parser.add_argument("dis", metavar="DIS", help="distorted: .yuv, .y4m or video")
    parser.add_argument(
        "-w", "--width", type=counter(1), metavar="W",
        help="frame width (raw YUV; checked against Y4M and video)",
    )  # fmt: skip
    parser.add_argument(
        "-h", "--height", type=counter(1), metavar="H",
        help="frame height (raw YUV; checked against Y4M and video)",
    )  # fmt: skip
    parser.add_argument(
        "-p",
        "--pixel-format",
        "--pixel_format",
        dest="pixel_format",
        choices=PIXEL_FORMATS,
        help="raw YUV chroma layout (default 420, or that of a Y4M/video input)",
    )
    parser.add_argument(
        "-b",
        "--bitdepth",
        type=counter(1),
        choices=BITDEPTHS,
        help="raw YUV bits per sample (default 8, or that of a Y4M/video input)",
    )
    parser.add_argument(
        "--ignore-name", "--ignore_name", dest="ignore_name", action="store_true",
        help="do not check raw inputs against the size or bit depth their names state",
    )  # fmt: skip
    parser.add_argument(
        "--scale", type=_scaler, metavar="SCALER",
        help="scale a distorted input of another size to the reference's with this ffmpeg "
        "scaler (bicubic, lanczos, ...), as 'admcuda score --scale' does; without it a size "
        "mismatch is an error",
    )  # fmt: skip
    from admcuda.cli.score import add_input_checks

    add_input_checks(parser)
    parser.add_argument(
        "--frame",
        type=_frame_number,
        default=0,
        metavar="N",
        help="frame number, from 0 (default 0)",
    )
    parser.add_argument(
        "--kind",
        choices=(*KINDS, CAMBI),
        default="dlm",
        help="dlm: ADM's detail loss, 1 - adm2 (default); aim: ADM's additive impairment; "
        "cambi: CAMBI's banding in DIS (options as --feature cambi=NAME=VALUE:...)",
    )
    parser.add_argument(
        "--background",
        choices=("dis", "ref"),
        default="dis",
        help="luma drawn underneath (default dis)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="ADM option, repeatable; NAME=VALUE:NAME=VALUE also works",
    )
    parser.add_argument(
        "--feature",
        action="append",
        default=[],
        metavar="adm[=NAME=VALUE:...]",
        help="the options in libvmaf's spelling, as for 'admcuda score' (cambi=... with "
        "--kind cambi)",
    )
    parser.add_argument(
        "--npy", metavar="PATH", help="also save the map as a .npy array ('-': stdout)"
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="IMAGE",
        help="image to write; its suffix gives the format (.png, .pdf, .svg, ...)",
    )  # fmt: skip
    return parser


def _read_pair(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, int]:
    """Frame ``args.frame`` of both inputs, opened as ``admcuda score`` opens them, and
    their bit depth."""
    from admcuda.cli.score import input_check_options
    from admcuda.io.inputs import open_inputs

    extra: dict[str, object] = {"ignore_name": True} if args.ignore_name else {}
    if args.scale is not None:
        extra["scale"] = args.scale
    extra.update(input_check_options(args))
    with open_inputs(
        args.ref, [args.dis], width=args.width, height=args.height,
        pixel_format=args.pixel_format, bitdepth=args.bitdepth, **extra,
    ) as inputs:  # fmt: skip
        planes = []
        for reader in inputs.readers:
            frames = reader.iter_luma(args.frame, 1)
            try:
                plane = next(iter(frames), None)
            finally:
                close = getattr(frames, "close", None)
                if close is not None:
                    close()
            if plane is None:
                raise AdmError(_out_of_range(args.frame, inputs.readers, reader))
            planes.append(plane)
        return planes[0], planes[1], inputs.bitdepth


def _cambi_options(args: argparse.Namespace) -> Any:
    """``--kind cambi``'s options: ``--feature cambi[=NAME=VALUE:...]`` given once at
    most, read as ``admcuda score`` reads it; ADM's ``--option`` has no place here."""
    from admcuda.vmaf.plan import parse_feature_arg

    if args.option:
        raise AdmError(
            "--option sets ADM options; with --kind cambi use --feature cambi=NAME=VALUE"
        )
    if len(args.feature) > 1:
        raise AdmError(f"--feature given {len(args.feature)} times; give one --feature cambi=...")
    if not args.feature:
        return None
    name, options = parse_feature_arg(args.feature[0])
    if name != CAMBI:
        raise AdmError(f"--feature {name}: --kind cambi draws CAMBI; give --feature cambi=...")
    if options.heatmaps_path is not None:
        raise AdmError("--feature cambi: heatmaps_path files are written by 'admcuda score'")
    if options.full_ref:
        raise AdmError("--feature cambi: full_ref scores the pair; the map shows DIS's banding")
    return options


def _out_of_range(frame: int, readers: Sequence[Any], short: Any) -> str:
    counts = [reader.num_frames for reader in readers]
    if None not in counts:
        return f"frame {frame} is out of range: the files have {min(counts)} frames in common"
    held = f"has {short.num_frames} frames" if short.num_frames is not None else "ends before it"
    return f"frame {frame} is out of range: {short.label} file {str(short.path)!r} {held}"


def _run(argv: Sequence[str] | None) -> int:
    from admcuda.cli.tool import parse_feature_args
    from admcuda.io.formats import check_geometry
    from admcuda.quirks import warn_small_height

    args = build_parser().parse_args(argv)
    opts: Any = None
    try:
        if args.width is not None or args.height is not None:
            check_geometry(
                args.width or 17, args.height or 17, args.pixel_format or "420", args.bitdepth or 8
            )
        if args.kind == CAMBI:
            opts = _cambi_options(args)
        else:
            settings: dict[str, str] = {}
            parse_feature_args(args.feature, settings)
            opts = AdmOptions.from_mapping(parse_option_args(args.option, settings=settings))
    except AdmError as exc:
        raise UsageError(str(exc)) from None
    if args.frame < 0:
        raise UsageError(f"--frame must be >= 0, got {args.frame}")
    npy_stdout = args.npy == STDOUT
    if npy_stdout and sys.stdout is None:
        raise AdmError("--npy -: standard output is closed; name a file")
    if npy_stdout and sys.stdout.isatty():
        raise UsageError("--npy -: standard output is a terminal; redirect it or name a file")
    if npy_stdout and getattr(sys.stdout, "buffer", None) is None:
        raise AdmError("--npy -: standard output takes no bytes here; name a file")
    if npy_stdout:
        name = written_input(None, (args.ref, args.dis))
        if name is not None:
            raise UsageError(f"--npy -: standard output is the input '{name}'; redirect it")
    for flag, path in (("--output", args.output), ("--npy", args.npy)):
        if not path or (flag == "--npy" and npy_stdout):
            continue
        # -o is written to a temporary sibling renamed over it, as --npy is where it names
        # a regular file: a folder cannot be replaced, and a device or FIFO would be (not
        # written into). One of this process's descriptors (--npy /dev/stdout) is written
        # through, as score writes -o there.
        if os.path.isdir(path):
            raise UsageError(f"{flag} '{path}' is a folder; name a file")
        fd = _own_descriptor(path) if flag == "--npy" else None
        if fd is not None and os.isatty(fd):
            raise UsageError(f"--npy '{path}' is a terminal; redirect it or name a file")
        if fd is None and os.path.exists(path) and not os.path.isfile(path):
            raise UsageError(f"{flag} '{path}' is not a regular file; name a file")
        parent = Path(path).parent
        if not parent.is_dir():
            raise AdmError(f"output folder '{parent}' does not exist")
        name = written_input(path, (args.ref, args.dis))
        if name is not None:
            raise UsageError(f"{flag} '{path}' is the input '{name}'; write elsewhere")
        if write_protected(path):
            raise AdmError(f"{flag} '{path}' is a read-only file: Permission denied")
    if args.npy and not npy_stdout and os.path.abspath(args.npy) == os.path.abspath(args.output):
        raise UsageError(f"--npy '{args.npy}' is the --output file; write elsewhere")
    load_pyplot()  # fail before the work if matplotlib is missing
    check_image_suffix(args.output)

    ref, dis, bitdepth = _read_pair(args)
    if args.kind != CAMBI:
        # The map's scale 3 is computed as score computes it, with libvmaf's unwritten
        # memory taken as zeros: the same warning for frames 17..32 pixels high.
        warn_small_height(ref.shape[1], ref.shape[0], opts)
    scaled = f" ({args.scale}-scaled)" if args.scale is not None else ""
    label = f"{Path(args.dis).name}{scaled} vs {Path(args.ref).name}, frame {args.frame}"
    # The PNG goes to a temporary sibling (its name keeps the suffix, from which
    # matplotlib takes the image format) and the array is staged as score stages its
    # outputs (writers.StagedOutput); standard output and descriptors are written first,
    # then the files are renamed, so a failure leaves no file replaced and none behind.
    target = Path(args.output)
    temp = target.with_name(f".{secrets.token_hex(4)}.{target.name}")
    npy: StagedOutput | None = None
    try:
        if args.kind == CAMBI:
            from admcuda.report.banding import save_banding_png

            heat = save_banding_png(
                dis, bitdepth, temp, opts, label,
                background=ref if args.background == "ref" else None,
            ).heat  # fmt: skip
        else:
            heat = save_distortion_png(
                ref, dis, bitdepth, temp, opts, label,
                kind=args.kind, background=args.background,
            ).get(args.kind)  # fmt: skip
        if args.npy:
            buffer = io.BytesIO()
            np.save(buffer, heat)
            npy = StagedOutput(None if npy_stdout else args.npy, buffer.getvalue())
            npy.stage()
            if npy.direct:
                _write_direct(npy, "-" if npy_stdout else f"'{args.npy}'")
        copy_mode(target, temp)  # an existing image keeps its mode
        os.replace(temp, target)
        if npy is not None and not npy.direct:
            npy.commit()
    finally:
        temp.unlink(missing_ok=True)
        if npy is not None:
            npy.discard()
    return 0


def _own_descriptor(path: str) -> int | None:
    """The descriptor of this process that ``path`` names (/dev/stdout, /dev/fd/N), if any."""
    try:
        target = output_target(path)
    except OSError:
        return None  # refused as a folder, or failing when written, naming the path
    return target.fd if target.kind == "fd" else None


def _write_direct(npy: StagedOutput, shown: str) -> None:
    """Write the array to standard output or a descriptor; a reader gone is one line."""
    try:
        npy.commit()
    except BrokenPipeError:
        drop_stdout()  # what is left in the buffer would fail again at exit
        raise AdmError(
            f"--npy {shown}: standard output was closed before the map was written"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """``admcuda map REF DIS [-w W -h H -p FMT -b BITS] [--frame N] -o map.png``.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``map``; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 1 on a runtime failure, 2 on a usage error; failures print one
        ``admcuda: error: ...`` line on stderr.
    """
    return run_tool(_run, argv)

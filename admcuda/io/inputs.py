"""Open any input (raw YUV, Y4M, encoded video, a stream) and pick its frames.

:func:`open_input` decides what an input is:

* ``-`` (standard input), a named pipe, a character device or a ``/dev/fd/N``
  pipe is a stream (:mod:`admcuda.io.streams`): Y4M if its first bytes are
  ``YUV4MPEG2``, else raw frames of the size given;
* a file starting with ``YUV4MPEG2`` (or named ``.y4m``) is Y4M;
* a file whose first bytes are a container's or bitstream's signature (MP4/MOV,
  Matroska/WebM, AVI, MPEG-TS, IVF, FLV, Ogg, H.264/HEVC Annex B, ...), or one
  with a video file's extension, goes to ffmpeg — unless it is named ``.yuv`` or
  ``.raw``, which is an error, as raw YUV is never a container;
* ``.yuv`` and ``.raw`` files are raw planar YUV, and so is any other file once a
  width and height are given; without them ffmpeg is asked, and the message for
  a file it cannot read says to give them.

Every reader has the same surface: ``width``, ``height``, ``bitdepth``,
``pixel_format``, ``num_frames`` (None while unknown: video, streams),
``iter_luma(start, count)``, iteration, ``close()`` and the context-manager
protocol. Y4M and raw file readers also support ``len()``.

A raw file's name is checked against the geometry it is read with: a ``WxH``, a
bit depth (``10bit``, ``10le``, ``yuv420p10le``, ``p010``) or a layout
(``yuv422p``, ``gray``, ``_444_``) that the name states and the flags (or their
defaults, 4:2:0 8-bit) contradict is an error, unless ``ignore_name`` is set.

:func:`open_inputs` opens a reference and one or more distorted inputs
together. The inputs that describe themselves (Y4M, video) are opened first; a
raw input then takes its size, layout and bit depth from the command line or,
where the command line is silent, from them. Sizes and bit depths must match,
and a flag must agree with the headers it applies to; with ``scale`` a distorted
input of another size is scaled by ffmpeg to the reference's size instead
(:class:`~admcuda.io.ffmpeg.ScaledReader`). Chroma layouts may differ between
inputs, as ADM reads luma only (libvmaf would refuse a mix).

:class:`FrameStream` applies libvmaf's frame controls to one input: skip the
first frames, stop after a number of frames, keep every Nth frame.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.ffmpeg import (
    SNIFF_BYTES,
    ScaledReader,
    VideoReader,
    check_rotation,
    check_scaler,
    container_of,
    probe,
    rotation_text,
)
from admcuda.io.formats import check_geometry, frame_bytes, frame_mismatch
from admcuda.io.names import NameHints, name_hints, size_from_name
from admcuda.io.raw import YuvReader, check_input_file
from admcuda.io.streams import STDIN, Stream, StreamReader, is_stream, open_stream
from admcuda.io.y4m import MAGIC, Y4mReader
from admcuda.numeric import check_integer, is_integer

__all__ = [
    "RAW_SUFFIXES",
    "VIDEO_SUFFIXES",
    "FrameReader",
    "FrameSelection",
    "FrameStream",
    "InputSet",
    "check_distinct_streams",
    "input_kind",
    "name_hints",
    "open_input",
    "open_inputs",
    "size_from_name",
]

RAW_SUFFIXES: tuple[str, ...] = (".yuv", ".raw")
VIDEO_SUFFIXES: tuple[str, ...] = (
    ".mp4", ".m4v", ".mov", ".qt", ".3gp", ".3g2", ".mkv", ".webm", ".avi", ".ts", ".m2ts",
    ".mts", ".m2t", ".flv", ".f4v", ".ogv", ".ogg", ".ivf", ".h264", ".264", ".avc", ".h265",
    ".265", ".hevc", ".h266", ".266", ".vvc", ".mpg", ".mpeg", ".m1v", ".m2v", ".mpv", ".vob",
    ".wmv", ".asf", ".mxf", ".nut", ".obu", ".av1", ".dv", ".rm", ".rmvb", ".mjpeg", ".mjpg",
    ".gif", ".png", ".apng", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".dpx", ".exr", ".j2k",
    ".jp2",
)  # fmt: skip
"""Names that say "encoded video": ffmpeg reads them even with -w/-h given."""

_EXTENSION = {"MP4/MOV": ".mp4", "Matroska/WebM": ".mkv", "AVI": ".avi", "MPEG-TS": ".ts",
              "IVF": ".ivf", "FLV": ".flv", "Ogg": ".ogv", "H.264": ".h264", "HEVC": ".hevc",
              "MPEG program stream": ".mpg", "MPEG-1/2 video": ".m2v"}  # fmt: skip

_log = logging.getLogger("admcuda")


class FrameReader(Protocol):
    """What every reader returned by :func:`open_input` offers."""

    @property
    def kind(self) -> str: ...  # "yuv", "y4m", "video", "stream" or "scaled"

    @property
    def path(self) -> Path: ...

    @property
    def label(self) -> str: ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    @property
    def bitdepth(self) -> int: ...

    @property
    def pixel_format(self) -> str: ...

    @property
    def num_frames(self) -> int | None: ...  # None while unknown (video, streams)

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]: ...

    def __iter__(self) -> Iterator[np.ndarray]: ...

    def close(self) -> None: ...


def _where(path: str | os.PathLike[str], label: str) -> str:
    return f"{label} file {os.fspath(path)!r}"


def _classify(path: str | os.PathLike[str], label: str, sized: bool) -> tuple[str, str]:
    """``(kind, why)``: kind as :func:`input_kind`; why is ``"content"``, ``"name"`` or
    ``"guess"`` (no signature, no telling name, no size given: ffmpeg is tried)."""
    if is_stream(path):
        return "stream", "name"
    path = Path(path)
    where = _where(path, label)
    check_input_file(path, where, "video file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
    suffix = path.suffix.lower()
    if head[: len(MAGIC)] == MAGIC:
        return "y4m", "content"
    if suffix == ".y4m":
        return "y4m", "name"
    container = container_of(head)
    if suffix in RAW_SUFFIXES:
        if container is not None:
            rename = _EXTENSION.get(container, "its container's extension")
            raise AdmError(
                f"{where} is named as raw YUV ({suffix}) but holds {container} data; "
                f"rename it ({rename}) to have ffmpeg decode it"
            )
        return "yuv", "name"
    if container is not None:
        return "video", "content"
    if suffix in VIDEO_SUFFIXES:
        return "video", "name"
    if sized:
        return "yuv", "content"
    return "video", "guess"


def input_kind(path: str | os.PathLike[str], *, label: str = "input", sized: bool = False) -> str:
    """What :func:`open_input` would open: ``"y4m"``, ``"yuv"``, ``"video"`` or ``"stream"``.

    Parameters
    ----------
    path : str or os.PathLike
    label : str, optional
        How messages name the file.
    sized : bool, optional
        A width and height are given: a file that is neither Y4M nor recognisably
        video (by content or extension) is raw YUV.

    Raises
    ------
    AdmError
        If the file is missing, a directory, unreadable or empty, or named ``.yuv``
        or ``.raw`` but holding a container.
    """
    return _classify(path, label, sized)[0]


# the end of VideoReader's message for a file ffmpeg cannot read
_GIVE_SIZE = "for raw YUV give -w and -h"


def _damaged_video(path: str | os.PathLike[str], message: str) -> str:
    """The message for a file that opens as a container (:func:`container_of`) that ffmpeg
    cannot read: damaged or cut short, not raw YUV; ``message`` ends in ``"; "``."""
    try:
        with open(path, "rb") as handle:
            container = container_of(handle.read(SNIFF_BYTES)) or "video"
    except OSError:
        container = "video"
    if "(moov atom not found)" in message:
        return (
            f"{message}the file is {container} without its index (the moov atom), as a "
            "recording or encode cut short leaves it"
        )
    return f"{message}the file is {container} data ffmpeg cannot read: truncated or damaged?"


def _raw_size_error(path: str | os.PathLike[str], where: str) -> AdmError:
    guess = size_from_name(path)
    hint = f" (the name suggests {guess[0]}x{guess[1]})" if guess else ""
    return AdmError(f"{where} is raw YUV: give --width and --height{hint}")


@dataclass(frozen=True)
class _Geometry:
    """How a raw input is to be read, and where each setting came from: ``"flag"``,
    ``"default"``, ``"name"`` or a partner input's description."""

    width: int
    height: int
    pixel_format: str
    bitdepth: int
    size_from: str = "flag"
    format_from: str = "flag"
    bits_from: str = "flag"


def _raw_geometry(
    width: int | None,
    height: int | None,
    pixel_format: str | None,
    bitdepth: int | None,
    partner: FrameReader | None,
    path: str | os.PathLike[str],
    where: str,
    named_layout: str | None = None,
) -> _Geometry:
    def pick(value, attr, fallback):  # type: ignore[no-untyped-def]
        if value is not None:
            return value, "flag"
        if partner is not None:
            return getattr(partner, attr), _where(partner.path, partner.label)
        return fallback, "default"

    if (width is None or height is None) and partner is None:
        raise _raw_size_error(path, where)
    w, size_from = pick(width, "width", None)
    h, _ = pick(height, "height", None)
    # A chroma layout is not taken from another input alone: inputs may differ in it (ADM
    # reads luma), and a raw file read with another's would be misread without a sign.
    # Where that input is not 4:2:0, the raw file's name (``named_layout``) must agree.
    fmt, format_from = (pixel_format, "flag") if pixel_format is not None else ("420", "default")
    if pixel_format is None and partner is not None and partner.pixel_format != "420":
        if named_layout != partner.pixel_format:
            said = "states no chroma layout" if named_layout is None else (
                f"has no --pixel-format (its name says {named_layout})")  # fmt: skip
            raise AdmError(
                f"{where} is raw YUV and {said}, and "
                f"{_where(partner.path, partner.label)} is {partner.pixel_format}: give the "
                "raw file's layout with --pixel-format (420, 422, 444 or 400)"
            )
        fmt, format_from = named_layout, "name"
    bits, bits_from = pick(bitdepth, "bitdepth", 8)
    return _Geometry(w, h, str(fmt), int(bits), size_from, format_from, bits_from)


def _name_conflicts(
    hints: NameHints, geo: _Geometry, where: str, *, distorted: bool
) -> AdmError | None:
    """The error for a raw file whose name contradicts how it is to be read, if any."""
    if hints.packed:
        return AdmError(
            f"{where}: its name says {hints.packed}, a packed layout whose luma is not a "
            f"plane; convert it to planar YUV (ffmpeg ... -pix_fmt {hints.packed_planar} "
            "out.yuv), or give --ignore-name if the name is wrong"
        )
    if hints.unsupported:  # RGB, alpha, 4:1:1, 14-bit ...
        return AdmError(
            f"{where}: its name says {hints.unsupported}, {hints.unsupported_why}: convert it "
            f"(ffmpeg ... -pix_fmt {hints.unsupported_planar} out.yuv), or give --ignore-name "
            "if the name is wrong"
        )
    if hints.msb_aligned:  # before big-endian: p010be's conversion is the same
        return AdmError(
            f"{where}: its name says {hints.msb_aligned}, MSB-aligned samples (in the high "
            "bits of 16); raw files are read with samples in the low bits: convert it "
            f"(ffmpeg ... -pix_fmt {hints.msb_planar} out.yuv), or give --ignore-name if the "
            "name is wrong"
        )
    if hints.big_endian:
        return AdmError(
            f"{where}: its name says {hints.big_endian}, big-endian samples; raw files are "
            f"read little-endian: convert it (ffmpeg ... -pix_fmt {hints.big_endian_planar} "
            "out.yuv), or give --ignore-name if the name is wrong"
        )
    clauses: list[str] = []
    fixes: list[str] = []

    def setting(flag: str, value: object, origin: str, unit: str = "") -> str:
        if origin == "flag":
            return f"{flag} is {value}{unit}"
        if origin == "default":
            return f"{flag} is {value}{unit} (default)"
        return f"{origin} is {value}{unit}"

    if hints.size is not None and hints.size != (geo.width, geo.height):
        nw, nh = hints.size
        if geo.size_from == "flag":
            clauses.append(f"{nw}x{nh} but --width/--height are {geo.width}x{geo.height}")
        else:
            clauses.append(f"{nw}x{nh} but {geo.size_from} is {geo.width}x{geo.height}")
        if distorted:
            fixes.append(f"--scale bicubic to read it at {nw}x{nh} and scale it")
        elif geo.size_from == "flag":
            fixes.append(f"-w {nw} -h {nh}")
    if hints.pixel_format is not None and hints.pixel_format != geo.pixel_format:
        shown = setting("--pixel-format", geo.pixel_format, geo.format_from)
        clauses.append(f"{hints.pixel_format} but {shown}")
        if geo.format_from in ("flag", "default"):
            fixes.append(f"-p {hints.pixel_format}")
    if hints.bitdepth is not None and hints.bitdepth != geo.bitdepth:
        shown = setting("--bitdepth", geo.bitdepth, geo.bits_from, "" if geo.bits_from in (
            "flag", "default") else "-bit")  # fmt: skip
        clauses.append(f"{hints.bitdepth}-bit but {shown}")
        if geo.bits_from in ("flag", "default"):
            fixes.append(f"-b {hints.bitdepth}")
    if not clauses:
        return None
    said = ", and ".join(clauses)
    fix = f"give {' '.join(fixes)}, or --ignore-name" if fixes else "give --ignore-name"
    return AdmError(f"{where}: its name says {said}; {fix} if the name is wrong")


def _open_raw_file(
    path: Path,
    geo: _Geometry,
    label: str,
    *,
    ignore_name: bool,
    distorted: bool = False,
    scale: bool = False,
    allow_partial_frame: bool = False,
) -> YuvReader:
    """A :class:`YuvReader` for ``path``, once its name agrees with ``geo``.

    With ``scale`` (a distorted input that will be scaled), a size in the name is the
    size the file is read at.
    """
    where = _where(path, label)
    if not ignore_name:
        hints = name_hints(path)
        if scale and hints.size is not None and hints.size != (geo.width, geo.height):
            geo = replace(geo, width=hints.size[0], height=hints.size[1], size_from="name")
        size = check_input_file(path, where, "raw YUV file")
        one = frame_bytes(geo.width, geo.height, geo.pixel_format, geo.bitdepth)
        if scale and hints.size is None and size % one:
            raise AdmError(
                f"{where}: with --scale a raw distorted file is read at the size its name "
                f"states, and its name states none; at {geo.width}x{geo.height} its "
                f"{size} bytes are not whole frames: name its size (e.g. rung_640x360.yuv)"
            )
        # A file smaller than one frame gets YuvReader's message, which quotes the name.
        if size >= one:
            problem = _name_conflicts(hints, geo, where, distorted=distorted)
            if problem is not None:
                raise problem
    return YuvReader(
        path,
        width=geo.width,
        height=geo.height,
        pixel_format=geo.pixel_format,
        bitdepth=geo.bitdepth,
        label=label,
        allow_partial_frame=allow_partial_frame,
        bitdepth_stated=geo.bits_from != "default",
    )


def _open_raw_stream(stream: Stream, geo: _Geometry) -> StreamReader:
    return StreamReader(
        stream,
        width=geo.width,
        height=geo.height,
        pixel_format=geo.pixel_format,
        bitdepth=geo.bitdepth,
        bitdepth_stated=geo.bits_from != "default",
    )


def _open_described(
    path: str | os.PathLike[str],
    kind: str,
    why: str,
    *,
    label: str,
    width: int | None,
    height: int | None,
    pixel_format: str | None,
    bitdepth: int | None,
    decoder: str | Callable[[], str] = "ffmpeg",
    gpu: int = 0,
    autorotate: bool | None = None,
) -> Y4mReader | VideoReader:
    """A Y4M or video reader, checked against the flags. Video is decoded by ffmpeg, or
    with ``decoder`` "nvdec" on the GPU (an error where it cannot), or with "auto" on the
    GPU where NVDEC runs and decodes the codec, else by ffmpeg. A video with a display
    matrix needs ``autorotate`` (:class:`~admcuda.io.ffmpeg.VideoReader`); NVDEC reads
    stored pixels only, so with ``autorotate`` True such a video is ffmpeg's."""
    reader: Any
    if callable(decoder):  # decided on the first video, where it matters
        decoder = decoder() if kind == "video" else "ffmpeg"
    if kind == "video" and decoder != "ffmpeg":
        decoder = _decoder_for_rotation(path, label, decoder, autorotate)
    nvdec_reader = _nvdec_reader(path, label, decoder, gpu) if kind == "video" else None
    if kind == "y4m":
        reader = Y4mReader(path, label=label)
    elif nvdec_reader is not None:
        reader = nvdec_reader
    else:
        try:
            reader = VideoReader(path, label=label, autorotate=autorotate)
        except AdmError as exc:
            if why != "guess" or "-w and -h" in str(exc):
                raise
            raise AdmError(f"{exc}; if it is raw YUV, give -w and -h") from None
    try:
        _check_against(
            reader,
            width=width,
            height=height,
            bitdepth=bitdepth,
            pixel_format=pixel_format if kind == "y4m" else None,
        )
    except BaseException:
        reader.close()
        raise
    return reader


def _decoder_for_rotation(path: Any, label: str, decoder: str, autorotate: bool | None) -> str:
    """The decoder for a video to be read by NVDEC ("nvdec" or "auto"), once its display
    matrix, if any, allows it: ffmpeg's probe finds one (where ffmpeg is there); without a
    choice (``autorotate`` None) that is an error, as for ffmpeg; with ``autorotate`` True
    "auto" becomes "ffmpeg" and "nvdec" is an error."""
    try:
        rotation = probe(Path(path), _where(path, label)).rotation
    except AdmError:  # no ffmpeg, or a file it cannot read: NVDEC's own checks decide
        return decoder
    where = _where(path, label)
    check_rotation(where, rotation, autorotate)
    if rotation is None or not autorotate:
        return decoder
    if decoder == "nvdec":
        raise AdmError(
            f"{where} carries {rotation_text(rotation)}: --autorotate turns it as ffmpeg "
            "does, which NVDEC does not; use --decoder ffmpeg, or --noautorotate to score "
            "the stored pixels"
        )
    return "ffmpeg"


def _nvdec_reader(path: Any, label: str, decoder: str, gpu: int) -> Any:
    """An NVDEC reader for ``decoder`` "nvdec" (or an error), "auto" (or None where NVDEC
    cannot decode this file), None for "ffmpeg"."""
    if decoder == "ffmpeg":
        return None
    if decoder not in ("auto", "nvdec"):
        raise AdmError(f"unknown decoder {decoder!r}; use auto, ffmpeg or nvdec")
    from admcuda.io.nvdec import reader as nvdec

    if decoder == "auto":
        if not nvdec.nvdec_available():
            return None
        # Opened once: a reader that opens has passed every check nvdec_supports makes.
        try:
            return nvdec.open_nvdec(path, label, gpu)
        except AdmError:
            return None
    return nvdec.open_nvdec(path, label, gpu)


def _open_stream_input(
    path: str | os.PathLike[str],
    *,
    label: str,
    width: int | None,
    height: int | None,
    pixel_format: str | None,
    bitdepth: int | None,
) -> StreamReader:
    stream = open_stream(path, label=label)
    try:
        if stream.format == "y4m":
            reader = StreamReader(stream)
            _check_against(
                reader, width=width, height=height, bitdepth=bitdepth, pixel_format=pixel_format
            )
            return reader
        if width is None or height is None:
            raise AdmError(f"{stream.where} is not Y4M: for raw YUV frames give -w and -h")
        geo = _raw_geometry(width, height, pixel_format, bitdepth, None, path, stream.where)
        return _open_raw_stream(stream, geo)
    except BaseException:
        stream.close()
        raise


def open_input(
    path: str | os.PathLike[str],
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    label: str = "input",
    ignore_name: bool = False,
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
) -> FrameReader:
    """Open a raw YUV, Y4M or encoded video file, or a stream, for its luma frames.

    Parameters
    ----------
    path : str or os.PathLike
        A file, or ``-`` for standard input, a named pipe, ``/dev/fd/N``.
    width, height : int, optional
        Required for raw YUV (and make any file without a Y4M or video signature
        raw); for the other kinds, checked against the input.
    pixel_format : {"420", "422", "444", "400"}, optional
        Raw YUV layout (default ``"420"``); checked against a Y4M header.
    bitdepth : {8, 10, 12, 16}, optional
        Raw YUV bit depth (default 8); checked against Y4M and video.
    label : str, optional
        How messages name the file, e.g. ``"reference"``.
    ignore_name : bool, optional
        Do not check a raw file's size, layout and bit depth against its name.
    autorotate, allow_partial_frame : optional
        As for :func:`open_inputs`.

    Returns
    -------
    FrameReader
        :class:`~admcuda.io.raw.YuvReader`, :class:`~admcuda.io.y4m.Y4mReader`,
        :class:`~admcuda.io.ffmpeg.VideoReader` or :class:`~admcuda.io.streams.StreamReader`.

    Raises
    ------
    AdmError
        If the input cannot be read as video, raw YUV lacks a size, its name
        contradicts the settings, or a given setting contradicts the input.
    """
    flags = {"width": width, "height": height, "pixel_format": pixel_format,
             "bitdepth": bitdepth}  # fmt: skip
    sized = width is not None and height is not None
    kind, why = _classify(path, label, sized)
    if kind == "stream":
        return _open_stream_input(path, label=label, **flags)
    if kind == "yuv":
        where = _where(path, label)
        if not sized:
            raise _raw_size_error(path, where)
        geo = _raw_geometry(width, height, pixel_format, bitdepth, None, path, where)
        return _open_raw_file(
            Path(path), geo, label, ignore_name=ignore_name,
            allow_partial_frame=allow_partial_frame,
        )  # fmt: skip
    return _open_described(path, kind, why, label=label, autorotate=autorotate, **flags)


_FLAGS = {"width": "--width", "height": "--height", "bitdepth": "--bitdepth",
          "pixel_format": "--pixel-format"}  # fmt: skip


def _check_against(reader: FrameReader, **given: int | str | None) -> None:
    for name, value in given.items():
        if value is None:
            continue
        actual = getattr(reader, name)
        if str(value) != str(actual):
            raise AdmError(
                f"{_FLAGS[name]} {value} contradicts {reader.label} file "
                f"{str(reader.path)!r}, which is {_describe(reader)}"
            )


def _describe(reader: FrameReader) -> str:
    return f"{reader.width}x{reader.height} {reader.pixel_format} {reader.bitdepth}-bit"


@dataclass
class InputSet:
    """A reference reader and its distorted readers, all of one size and bit depth.

    Attributes
    ----------
    ref : FrameReader
    dis : list of FrameReader
    width, height, bitdepth : int
        Shared by every input.
    pixel_format : str
        The reference's chroma layout.
    """

    ref: FrameReader
    dis: list[FrameReader]
    width: int
    height: int
    bitdepth: int
    pixel_format: str

    @property
    def readers(self) -> list[FrameReader]:
        """The reference first, then the distorted readers."""
        return [self.ref, *self.dis]

    def close(self) -> None:
        """Close every reader."""
        for reader in self.readers:
            reader.close()

    def __enter__(self) -> InputSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_inputs(
    ref: str | os.PathLike[str],
    dis: Sequence[str | os.PathLike[str]],
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    ignore_name: bool = False,
    scale: str | None = None,
    decoder: str | Callable[[], str] = "ffmpeg",
    gpu: int = 0,
    autorotate: bool | None = None,
    allow_partial_frame: bool = False,
) -> InputSet:
    """Open a reference and its distorted inputs, agreeing on one geometry.

    Self-describing inputs (Y4M files and streams, video) are opened first. Raw
    inputs then take the size and bit depth given here, or else those of the first
    self-describing input (the reference if it is one), or else 8-bit; a raw input
    with no size from anywhere is an error that quotes any ``WxH`` in its name. A raw
    input's chroma layout is ``pixel_format``, or else 4:2:0, never another input's:
    where the first self-describing input is not 4:2:0 it must be given. With raw
    inputs, ``pixel_format`` describes them alone (inputs may differ in layout); with
    none, it is checked against the Y4M inputs' headers. Streams are opened in order,
    each waiting for its writer's first bytes. Raw files whose sizes give frame counts more than one
    apart are warned about (only the frames both have are scored).

    Parameters
    ----------
    ref : path
    dis : sequence of path
        At least one. Any input may be ``-`` (standard input, once), a named pipe
        or ``/dev/fd/N``.
    width, height, pixel_format, bitdepth : optional
        As for :func:`open_input`; they apply to every input.
    ignore_name : bool, optional
        Do not check raw files' names against the geometry they are read with.
    scale : str, optional
        An ffmpeg scaler (``bicubic``, ``bilinear``, ``lanczos``, ``neighbor``,
        ``spline``, ...; see :data:`~admcuda.io.ffmpeg.SCALERS`): a distorted input
        whose size differs from the reference's is scaled to it by ffmpeg
        (``-vf scale=W:H:flags=NAME``). A raw distorted file is then read at the
        size its name states. Without it, sizes must match.
    decoder : {"ffmpeg", "nvdec", "auto"} or callable, optional
        Who decodes encoded video: ffmpeg on the CPU (default), NVDEC on GPU ``gpu``
        through PyNvVideoCodec (planes stay on the GPU; an error where it cannot run), or
        NVDEC where it runs and decodes the codec, else ffmpeg. A callable gives one of
        these names when the first encoded input is opened (raw YUV and Y4M need none).
    gpu : int, optional
        The GPU of the NVDEC decoder.
    autorotate : bool, optional
        For encoded video with a display matrix (a rotation or flip that players apply):
        True scores it turned as ffmpeg turns it by default (ffmpeg decoder only), False
        its stored pixels; None, the default, refuses such a video.
    allow_partial_frame : bool, optional
        A raw file whose size is not a whole number of frames is read (its whole frames,
        with a warning) instead of refused: for a file that really ends in a partial frame.

    Returns
    -------
    InputSet
        Close it (or use it as a context manager) when done.

    Raises
    ------
    AdmError
        On any unreadable input, inputs that disagree in size (without
        ``scale``) or bit depth, a raw name that contradicts its geometry, or an
        unknown scaler.
    """
    if not dis:
        raise AdmError("no distorted input given")
    scaler = None if scale is None else check_scaler(scale)
    if width is not None or height is not None:
        check_geometry(width or 17, height or 17, pixel_format or "420", bitdepth or 8)
    paths = [ref, *dis]
    if sum(os.fspath(p) == STDIN for p in paths) > 1:
        raise AdmError("standard input ('-') can be only one of the inputs")
    labels = ["reference"] + ["distorted"] * len(dis)
    check_distinct_streams(paths, labels)
    sized = width is not None and height is not None
    # Every file is looked at before any is opened (or any pipe waited for).
    kinds = [_classify(p, label, sized) for p, label in zip(paths, labels, strict=True)]
    readers: list[FrameReader | None] = [None] * len(paths)
    raws: dict[int, Path | Stream] = {}
    headed: list[FrameReader] = []  # the Y4M inputs, whose headers state a chroma layout
    try:
        for i, (path, (kind, why)) in enumerate(zip(paths, kinds, strict=True)):
            # -w/-h describe the reference; a distorted input of another size is told
            # apart below, where the message can offer --scale.
            w, h = (width, height) if i == 0 else (None, None)
            if kind == "stream":
                stream = open_stream(path, label=labels[i])
                if stream.format == "raw":
                    raws[i] = stream
                    continue
                try:
                    readers[i] = described = StreamReader(stream)
                except BaseException:
                    stream.close()
                    raise
                _check_against(described, width=w, height=h, bitdepth=bitdepth)
                headed.append(described)
            elif kind == "yuv":
                raws[i] = Path(path)
            else:
                try:
                    readers[i] = _open_described(
                        path, kind, why, label=labels[i], width=w, height=h,
                        pixel_format=None, bitdepth=bitdepth, decoder=decoder, gpu=gpu,
                        autorotate=autorotate,
                    )  # fmt: skip
                except AdmError as exc:
                    text = str(exc)
                    if why == "content" and text.endswith(_GIVE_SIZE):
                        raise AdmError(_damaged_video(path, text[: -len(_GIVE_SIZE)])) from None
                    if not (why == "name" and text.endswith(_GIVE_SIZE)):
                        raise
                    suffix = Path(path).suffix
                    sizes = "" if sized else " and -w/-h"
                    raise AdmError(
                        f"{text[: -len(_GIVE_SIZE)]}named as video ({suffix}), it is read as "
                        f"video; if it is raw YUV, give it a .yuv name{sizes}"
                    ) from None
                if kind == "y4m":
                    headed.append(readers[i])
        if not raws:  # -p describes the raw inputs where there are any, else the Y4M ones
            for described in headed:
                _check_against(described, pixel_format=pixel_format)
        known = [r for r in readers if r is not None]
        for other in known[1:]:
            _check_same(known[0], other, sizes=scaler is None)
        first = known[0] if known else None
        unsized_rungs = []  # raw rungs under --scale read at the reference's size
        for i, raw in list(raws.items()):
            if isinstance(raw, Stream):
                if first is None and not sized:
                    raise AdmError(f"{raw.where} is not Y4M: for raw YUV frames give -w and -h")
                geo = _raw_geometry(width, height, pixel_format, bitdepth, first, raw.path,
                                    raw.where)  # fmt: skip
                readers[i] = _open_raw_stream(raw, geo)
                if scaler is not None and i > 0:
                    unsized_rungs.append(i)
            else:
                where = _where(raw, labels[i])
                hints = None if ignore_name else name_hints(raw)
                named = None if hints is None else hints.pixel_format
                geo = _raw_geometry(width, height, pixel_format, bitdepth, first, raw, where,
                                    named)  # fmt: skip
                readers[i] = _open_raw_file(
                    raw, geo, labels[i], ignore_name=ignore_name, distorted=i > 0,
                    scale=scaler is not None and i > 0, allow_partial_frame=allow_partial_frame,
                )  # fmt: skip
                if scaler is not None and i > 0 and (hints is None or hints.size is None):
                    unsized_rungs.append(i)
            del raws[i]
        opened: list[FrameReader] = readers  # type: ignore[assignment]
        for i in unsized_rungs:
            _check_unsized_rung(opened[0], opened[i], ignore_name=ignore_name)
        _warn_frame_counts(opened)
        head = opened[0]
        for i in range(1, len(opened)):
            other = opened[i]
            if other.bitdepth != head.bitdepth:
                _check_same(head, other)
            if (other.width, other.height) == (head.width, head.height):
                continue
            if scaler is None:
                _check_same(head, other)
            readers[i] = ScaledReader(other, width=head.width, height=head.height,
                                      scaler=scaler)  # type: ignore[arg-type]  # fmt: skip
        _plan_nvdec_sessions(readers)
    except BaseException:
        for reader in readers:
            if reader is not None:
                reader.close()
        for raw in raws.values():
            if isinstance(raw, Stream):
                raw.close()
        raise
    opened = readers  # type: ignore[assignment]
    head = opened[0]
    return InputSet(
        ref=head,
        dis=opened[1:],
        width=head.width,
        height=head.height,
        bitdepth=head.bitdepth,
        pixel_format=head.pixel_format,
    )


def _stream_identity(path: str | os.PathLike[str]) -> tuple[int, int, str] | None:
    """``(st_dev, st_ino, what)`` of an input that is not a regular file (a pipe, a FIFO, a
    device, a socket), whatever name reaches it (``-``, ``/dev/stdin``, ``/proc/self/fd/0``);
    None for a regular file, which is read by position, or a name that cannot be looked at."""
    try:
        info = os.fstat(0) if os.fspath(path) == STDIN else os.stat(path)
    except (OSError, ValueError):
        return None
    mode = info.st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a pipe" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or
            stat.S_ISBLK(mode) else "a socket")  # fmt: skip
    return info.st_dev, info.st_ino, what


def check_distinct_streams(
    paths: Sequence[str | os.PathLike[str]], labels: Sequence[str] | None = None
) -> None:
    """Refuse two inputs that are the same pipe, FIFO, device or socket under any names
    (``-`` and ``/dev/stdin``, one FIFO named twice): read by both, each frame would go to
    one input only, and the pair would be scored as two different videos. A regular file
    named twice is fine: each input reads it by position, on its own.

    Raises
    ------
    AdmError
        Naming both inputs.
    """
    if labels is None:
        labels = ["reference"] + ["distorted"] * (len(paths) - 1)
    seen: dict[tuple[int, int], int] = {}
    for i, path in enumerate(paths):
        found = _stream_identity(path)
        if found is None:
            continue
        dev, ino, what = found
        first = seen.setdefault((dev, ino), i)
        if first == i:
            continue

        def shown(k: int) -> str:
            name = os.fspath(paths[k])
            extra = " (standard input)" if name == STDIN else ""
            return f"{labels[k]} input {name!r}{extra}"

        raise AdmError(
            f"{shown(first)} and {shown(i)} are the same stream ({what}): read by both, each "
            "frame would go to one of them only; give each input its own file or pipe"
        )


def _plan_nvdec_sessions(readers: Sequence[Any]) -> None:
    """Give each NVDEC reader its sessions per stream for ``ADMCUDA_NVDEC_SEGMENTS=auto``,
    now that the number of NVDEC streams read together is known."""
    streams = [r for r in readers if getattr(r, "kind", None) == "nvdec"]
    if not streams:
        return
    from admcuda.io.nvdec.planner import auto_sessions, segment_sessions

    segment_sessions()  # a bad ADMCUDA_NVDEC_SEGMENTS is an error before any frame is read

    for reader in streams:
        reader.auto_sessions = auto_sessions(reader.codec, reader.width, reader.height,
                                             len(streams))  # fmt: skip


def _reader_where(reader: FrameReader) -> str:
    return getattr(reader, "where", None) or _where(reader.path, reader.label)


def _check_same(first: FrameReader, other: FrameReader, *, sizes: bool = True) -> None:
    if sizes and (other.width, other.height) != (first.width, first.height):
        raise AdmError(
            f"{_reader_where(other)} is {other.width}x{other.height} but "
            f"{_reader_where(first)} is {first.width}x{first.height}; "
            "give --scale bicubic (or another ffmpeg scaler) to scale distorted inputs to the "
            "reference's size"
        )
    if other.bitdepth != first.bitdepth:
        raise AdmError(
            f"{_reader_where(other)} is {other.bitdepth}-bit but {_reader_where(first)} "
            f"is {first.bitdepth}-bit"
        )


def _check_unsized_rung(ref: FrameReader, rung: FrameReader, *, ignore_name: bool) -> None:
    """Refuse a raw rung that ``--scale`` reads at the reference's size for want of a size
    of its own (none in its name, names ignored, or a stream), unless it holds there as
    many frames as the reference, give or take one. Otherwise it is most likely of another
    size whose bytes happen to be whole frames (a 960x540 frame is a quarter of a 1920x1080
    one), and would be scored as tiles; where either length is unknown (a stream, encoded
    video) that cannot be ruled out."""
    where, size = _reader_where(rung), f"{rung.width}x{rung.height}"
    if rung.num_frames is None:
        raise AdmError(
            f"{where}: with --scale a raw distorted stream is read at the reference's size "
            f"({size}) and nothing states its own: pipe it as Y4M (ffmpeg ... -f "
            "yuv4mpegpipe -), which carries its size"
        )
    fix = (
        "give it as Y4M, or drop --ignore-name and name its size (e.g. rung_640x360.yuv)"
        if ignore_name
        else "name its size (e.g. rung_640x360.yuv)"
    )
    why = "names are ignored (--ignore-name)" if ignore_name else "its name states none"
    head = f"{where}: with --scale a raw distorted file is read at the size its name states"
    if ref.num_frames is None:
        raise AdmError(
            f"{head}, and {why}; read at the reference's size ({size}), its length cannot be "
            f"checked against the reference's, not known before it is read: {fix}"
        )
    counts = (ref.num_frames, rung.num_frames)
    if abs(counts[0] - counts[1]) <= 1:
        return
    raise AdmError(
        f"{head}, and {why}; at {size} it holds {counts[1]} frames against the reference's "
        f"{counts[0]}, so it is likely of another size: {fix}"
    )


def _warn_frame_counts(readers: list[FrameReader]) -> None:
    """Warn where a raw file and its partner hold frame counts more than one apart:
    often a sign of a wrong size or bit depth that happens to divide the file."""
    ref = readers[0]
    for other in readers[1:]:
        counts = (ref.num_frames, other.num_frames)
        if None in counts or "yuv" not in (ref.kind, other.kind):
            continue
        if abs(counts[0] - counts[1]) > 1:  # type: ignore[operator]
            _log.warning(
                "%s holds %d frames but %s holds %d (at %s); only the frames both have are "
                "scored, so check -w/-h/-p/-b if they should be the same length",
                _reader_where(ref), counts[0], _reader_where(other), counts[1],
                _describe(other if other.kind == "yuv" else ref),
            )  # fmt: skip


@dataclass(frozen=True)
class FrameSelection:
    """Which frames to score, as libvmaf's command line chooses them.

    Frames are numbered from 0 after the skipped ones. Reading stops after
    ``frame_cnt`` frames (of each input) or at the end of the shorter input;
    of those, frames whose number is a multiple of ``subsample`` are scored and
    keep their number (``frameNum``) in the output.

    Attributes
    ----------
    frame_cnt : int or None
        At most this many frames; None (or 0, libvmaf's spelling) for all.
    frame_skip_ref, frame_skip_dist : int
        Frames dropped from the start of the reference / each distorted input.
    subsample : int
        Score every Nth frame; 1 scores all.
    """

    frame_cnt: int | None = None
    frame_skip_ref: int = 0
    frame_skip_dist: int = 0
    subsample: int = 1

    def __post_init__(self) -> None:
        checks = (
            ("frame_cnt", self.frame_cnt, 1),
            ("frame_skip_ref", self.frame_skip_ref, 0),
            ("frame_skip_dist", self.frame_skip_dist, 0),
            ("subsample", self.subsample, 1),
        )
        for name, value, low in checks:
            if name == "frame_cnt" and (value is None or (is_integer(value) and value == 0)):
                object.__setattr__(self, name, None)  # 0: libvmaf's "all frames", as the CLI
                continue
            object.__setattr__(self, name, check_integer(name, value, low))

    def frame_numbers(self, scored: int) -> list[int]:
        """``frameNum`` of each of ``scored`` scored frames."""
        return [k * self.subsample for k in range(scored)]


class FrameStream:
    """The frames of one input that take part, counting what was read.

    Iterating yields the luma planes of frames ``0, N, 2N, ...`` (N =
    ``subsample``) after ``skip`` frames, reading every frame in between, and
    stops after ``limit`` frames or at the end of the input.

    Parameters
    ----------
    reader : FrameReader
    skip : int
    limit : int or None
    subsample : int
    chroma : bool
        Read each frame's chroma too, for :meth:`read_into`'s ``chroma`` (encoded video
        through ffmpeg, and streams); an input that cannot give it is refused.

    Attributes
    ----------
    read : int
        Frames read so far, after the skipped ones.
    ended : bool
        The input ran out (as opposed to reaching ``limit``).
    chroma_samples : int
        Cb and Cr samples of a frame together (0 without ``chroma``).
    """

    def __init__(
        self,
        reader: FrameReader,
        *,
        skip: int = 0,
        limit: int | None = None,
        subsample: int = 1,
        chroma: bool = False,
    ) -> None:
        self.reader = reader
        self.skip = skip
        self.limit = limit
        self.subsample = subsample
        self.chroma = chroma
        self.read = 0
        self.ended = False
        # A reader that can decode straight into the caller's arrays (ffmpeg's pipe) is
        # read that way; others through their iterator.
        self._open_pipe = getattr(reader, "open_pipe", None)
        self._pipe: Any = None
        self.chroma_samples = 0
        if chroma:
            samples = getattr(reader, "chroma_samples", None)
            planes = getattr(reader, "iter_planes", None)
            if samples is None or (self._open_pipe is None and planes is None):
                raise AdmError(
                    f"{getattr(reader, 'where', 'an input')} gives no chroma planes "
                    "(raw YUV, Y4M, encoded video and streams do)"
                )
            self.chroma_samples = int(samples())
            self._frames = None if self._open_pipe else planes(skip, limit)  # type: ignore[misc]
        else:
            self._frames = None if self._open_pipe else reader.iter_luma(skip, limit)

    @property
    def available(self) -> int | None:
        """Frames after the skipped ones, if the reader knows its length."""
        total = self.reader.num_frames
        if total is None:
            return None
        available = max(total - self.skip, 0)
        return available if self.limit is None else min(available, self.limit)

    def _next(self) -> np.ndarray | None:
        if self._open_pipe is not None:
            plane = np.empty((self.reader.height, self.reader.width), self.reader.dtype)
            return plane if self._next_into(plane) else None
        if self.ended or (self.limit is not None and self.read >= self.limit):
            return None
        frame = next(self._frames, None)
        if frame is None:
            self.ended = True
            return None
        self.read += 1
        return frame

    def _next_into(self, dst: np.ndarray, chroma: np.ndarray | None = None) -> bool:
        """Read the next frame into ``dst`` (and its chroma into ``chroma``, where given);
        False at the end or the limit."""
        if self._open_pipe is None:
            frame = self._next()
            if frame is None:
                return False
            if self.chroma:
                frame, samples = frame
                if chroma is not None:
                    np.copyto(chroma, samples)
            if frame.shape != dst.shape or frame.dtype != dst.dtype:
                raise AdmError(frame_mismatch(frame.dtype, frame.shape, dst))
            np.copyto(dst, frame)
            return True
        if self.ended or (self.limit is not None and self.read >= self.limit):
            return False
        if self._pipe is None:
            extra = {"chroma": True} if self.chroma else {}
            self._pipe = self._open_pipe(self.skip, self.limit, subsample=self.subsample, **extra)
        if not (self._pipe.readinto(dst, chroma) if self.chroma else self._pipe.readinto(dst)):
            self.ended = True
            return False
        self.read += 1
        return True

    def read_into(self, out: np.ndarray, n: int, chroma: np.ndarray | None = None) -> int:
        """Read the next ``n`` frames that take part straight into ``out[:n]`` (frames
        the subsampling passes over are read into a scratch plane), and with ``chroma``
        (a stream opened with it) their Cb and Cr samples into ``chroma[:n]`` (flat,
        ``chroma_samples`` each); how many came."""
        shape = (self.reader.height, self.reader.width)
        if self._open_pipe is not None and (
            out.shape[1:] != shape or out.dtype != self.reader.dtype
        ):
            raise AdmError(frame_mismatch(self.reader.dtype, shape, out[0]))
        if chroma is not None and (not self.chroma or chroma.shape[1:] != (self.chroma_samples,)):
            raise AdmError(
                f"chroma of {self.chroma_samples} samples a frame, read into {chroma.shape[1:]}"
                if self.chroma
                else "this stream was opened without chroma"
            )
        scratch = None
        k = 0
        while k < n:
            kept = self.read % self.subsample == 0
            if not kept and scratch is None:
                scratch = np.empty_like(out[0])
            target = None if chroma is None or not kept else chroma[k]
            if not self._next_into(out[k] if kept else scratch, target):
                break
            k += kept
        return k

    def __iter__(self) -> Iterator[np.ndarray]:
        while True:
            number = self.read
            frame = self._next()
            if frame is None:
                return
            if number % self.subsample == 0:
                yield frame[0] if self.chroma and self._open_pipe is None else frame

    def has_more(self) -> bool:
        """Read one more frame, if the limit allows, and say whether there was one."""
        return self._next() is not None

    def interrupt(self) -> None:
        """End a read under way in another thread, where the reader can (a stream's)."""
        interrupt = getattr(self.reader, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def close(self) -> None:
        """Stop reading (ends an ffmpeg process early)."""
        if self._pipe is not None:
            self._pipe.close()
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()

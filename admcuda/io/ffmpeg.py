"""Encoded video (mp4, mkv, mov, webm, avi, ...) decoded by ffmpeg: luma, and chroma
for the features that score it.

ffmpeg is imageio-ffmpeg's bundled binary (``pip install imageio-ffmpeg``), or
else an ``ffmpeg`` on ``PATH``. A file is probed once with ``ffmpeg -i`` (size,
pixel format, bit depth of its first video stream), then each pass over its
frames runs one ffmpeg process that writes raw luma to a pipe::

    ffmpeg -hide_banner -nostdin -v error -noautorotate -i FILE -map 0:N
           -vf extractplanes=y -pix_fmt grayB -fps_mode passthrough
           [-frames:v K] -f rawvideo pipe:1

``extractplanes=y`` hands over the decoded Y plane as it is. Asking for a gray
pixel format alone (``-pix_fmt gray``) is not the same: ffmpeg then converts
limited-range ("tv") luma to full range, changing every sample (by up to 20
levels at 8 bits). ``grayB`` is ``gray``, ``gray10le``, ``gray12le`` or
``gray16le`` after the source's bit depth, so samples keep their values and
width. Where a feature scores chroma (PSNR), the pipe carries whole planar frames
instead, Y then Cb then Cr, in the source's own layout and depth
(:func:`planar_pixel_format`: the planar format itself, or the planar equivalent of a
semi-planar or packed one, a lossless repacking)::

    ffmpeg ... -i FILE -map 0:N -vf CROP -pix_fmt yuv420p10le ... -f rawvideo pipe:1

(``crop``'s ``exact=1`` keeps an odd width or height whole), and a run without such a
feature keeps the luma-only command above. ``-noautorotate`` keeps the stored
orientation, and passthrough frame timing keeps ffmpeg from duplicating or dropping
frames to fit a frame rate.

Exactly one frame is read from the pipe at a time (memory stays bounded)
while a thread drains ffmpeg's stderr, so neither pipe can fill up and stall
the other. Stopping early (a frame limit, an error, Ctrl-C) kills the process;
the pipes are closed and the process reaped in every case.

Only YUV and gray sources are read: RGB and palette sources would need a colour
conversion, which changes the numbers, and are refused.

:class:`ScaledReader` reads any input (raw, Y4M, video, a stream) through ffmpeg's
``scale`` filter, for ``--scale``: the luma of ``ffmpeg -i IN -vf
scale=W:H:flags=NAME OUT``. :func:`container_of` tells encoded video from raw YUV
by a file's first bytes.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import BITDEPTHS, check_geometry, plane_shapes, size_change
from admcuda.io.raw import ClosingReader, check_input_file

__all__ = [
    "SCALERS",
    "SNIFF_BYTES",
    "ScaledReader",
    "VideoInfo",
    "VideoReader",
    "check_scaler",
    "container_of",
    "ffmpeg_exe",
    "ffmpeg_pixel_format",
    "luma_pixel_format",
    "planar_pixel_format",
    "probe",
    "source_layout",
]

_log = logging.getLogger("admcuda")

_GRAY_FORMATS = {8: "gray", 10: "gray10le", 12: "gray12le", 16: "gray16le"}
# How much of ffmpeg's stderr to keep for messages (lines).
_STDERR_LINES = 50
_PROBE_TIMEOUT_S = 60

# Semi-planar and packed YUV formats: name -> (layout, bit depth).
_OTHER_YUV = {
    "nv12": ("420", 8), "nv21": ("420", 8), "nv16": ("422", 8), "nv61": ("422", 8),
    "nv24": ("444", 8), "nv42": ("444", 8), "nv20le": ("422", 10), "nv20be": ("422", 10),
    "p010le": ("420", 10), "p010be": ("420", 10), "p012le": ("420", 12),
    "p012be": ("420", 12), "p016le": ("420", 16), "p016be": ("420", 16),
    "p210le": ("422", 10), "p210be": ("422", 10), "p212le": ("422", 12),
    "p212be": ("422", 12), "p216le": ("422", 16), "p216be": ("422", 16),
    "p410le": ("444", 10), "p410be": ("444", 10), "p412le": ("444", 12),
    "p412be": ("444", 12), "p416le": ("444", 16), "p416be": ("444", 16),
    "yuyv422": ("422", 8), "yvyu422": ("422", 8), "uyvy422": ("422", 8),
    "y210le": ("422", 10), "y210be": ("422", 10), "y212le": ("422", 12),
    "y212be": ("422", 12), "ayuv64le": ("444", 16), "ayuv": ("444", 8),
    "vuya": ("444", 8), "vuyx": ("444", 8), "uyva": ("444", 8),
    "xv30le": ("444", 10), "xv36le": ("444", 12), "v30xle": ("444", 10),
}  # fmt: skip
_PLANAR_YUV = re.compile(r"yuv[aj]?(4[0-4][0-4])p(?:([0-9]+)(?:le|be))?")
_GRAY = re.compile(r"(?:gray|ya)([0-9]+)?(?:le|be)?")


# Bytes :func:`container_of` looks at: enough for four MPEG-TS packets.
SNIFF_BYTES = 1024

# Magic numbers of containers and elementary streams: (offset, bytes, name).
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (4, b"ftyp", "MP4/MOV"),
    (0, b"\x1a\x45\xdf\xa3", "Matroska/WebM"),
    (0, b"DKIF", "IVF"),
    (0, b"FLV\x01", "FLV"),
    (0, b"OggS", "Ogg"),
    (0, b"\x30\x26\xb2\x75\x8e\x66\xcf\x11", "ASF/WMV"),
    (0, b".RMF", "RealMedia"),
    (0, b"nut/multimedia container", "NUT"),
    (0, b"\x06\x0e\x2b\x34\x02\x05\x01\x01", "MXF"),
    (0, b"\x00\x00\x01\xba", "MPEG program stream"),
    (0, b"\x00\x00\x01\xb3", "MPEG-1/2 video"),
    (0, b"\x00\x00\x01\xb0", "MPEG-4 video"),
    (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"GIF87a", "GIF image"),
    (0, b"GIF89a", "GIF image"),
    (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000 image"),
    (0, b"II*\x00", "TIFF image"),
    (0, b"MM\x00*", "TIFF image"),
    (0, b"SDPX", "DPX image"),
    (0, b"XPDS", "DPX image"),
)
# QuickTime files older than the ftyp box open with another top-level atom.
_QT_ATOMS = (b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot")
# First NAL unit headers of Annex-B streams, after a 00 00 01 start code. H.264: SEI,
# SPS, PPS or access unit delimiter (any nal_ref_idc); HEVC: VPS, SPS, PPS, AUD or
# prefix SEI, layer 0, temporal id 1; VVC: VPS, SPS or AUD, layer 0.
_H264_NAL = {(ref << 5) | t for ref in range(4) for t in (6, 7, 8, 9)}
_HEVC_NAL = {bytes([t << 1, 1]) for t in (32, 33, 34, 35, 39)}
_VVC_NAL = {bytes([0, (t << 3) | 1]) for t in (14, 15, 20)}


def container_of(head: bytes) -> str | None:
    """Name the video container or bitstream that ``head`` (a file's first bytes) opens.

    Looks at :data:`SNIFF_BYTES` bytes at most. Only unmistakable signatures count:
    ``ftyp`` (MP4/MOV), EBML (Matroska/WebM), ``RIFF....AVI``, MPEG-TS sync bytes every
    188 (or 192) bytes, IVF, FLV, Ogg, ASF, MXF, MPEG start codes, H.264/HEVC/VVC
    Annex-B start codes followed by a parameter set or delimiter, and still images.

    Returns
    -------
    str or None
        E.g. ``"Matroska/WebM"``; None for anything else (raw YUV, text, ...).

    Examples
    --------
    >>> container_of(b"\x00\x00\x00\x20ftypisom")
    'MP4/MOV'
    >>> container_of(bytes(range(64))) is None
    True
    """
    head = bytes(head[:SNIFF_BYTES])
    for offset, magic, name in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return name
    if head[:4] == b"RIFF" and head[8:11] == b"AVI":
        return "AVI"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP image"
    if len(head) >= 8 and head[4:8] in _QT_ATOMS and int.from_bytes(head[:4], "big") >= 8:
        return "MP4/MOV"
    for packet, first in ((188, 0), (192, 4)):
        syncs = [k for k in range(first, len(head) - 3, packet)]
        # Every packet: the sync byte, no transport error flag, and a payload or an
        # adaptation field (a flat picture of value 0x47 fails the last two).
        if len(syncs) >= 3 and all(
            head[k] == 0x47 and not head[k + 1] & 0x80 and head[k + 3] & 0x30 for k in syncs
        ):
            return "MPEG-TS"
    for code in (b"\x00\x00\x00\x01", b"\x00\x00\x01"):
        if head.startswith(code):
            nal = head[len(code) : len(code) + 2]
            if nal[:1] and nal[0] in _H264_NAL:
                return "H.264"
            if nal in _HEVC_NAL:
                return "HEVC"
            if nal in _VVC_NAL:
                return "VVC"
    return None


def ffmpeg_exe() -> str:
    """Path of the ffmpeg binary: imageio-ffmpeg's, else ``ffmpeg`` on ``PATH``.

    Raises
    ------
    AdmError
        If neither is there.
    """
    try:
        import imageio_ffmpeg
    except ImportError:
        imageio_ffmpeg = None
    if imageio_ffmpeg is not None:
        try:
            return imageio_ffmpeg.get_ffmpeg_exe()
        except RuntimeError:
            pass
    found = shutil.which("ffmpeg")
    if found:
        return found
    raise AdmError(
        "reading encoded video needs ffmpeg: pip install imageio-ffmpeg (or put ffmpeg on PATH)"
    )


def source_layout(pix_fmt: str) -> tuple[str, int]:
    """Chroma layout and bit depth of an ffmpeg pixel format.

    Parameters
    ----------
    pix_fmt : str
        As ffmpeg names it, e.g. ``"yuv420p10le"``, ``"nv12"``, ``"gray"``.

    Returns
    -------
    (str, int)
        ``("420", 10)``; the layout is one of ``"420"``, ``"422"``, ``"444"``,
        ``"400"``, or ffmpeg's own digits for rarer ones (``"440"``, ``"411"``).

    Raises
    ------
    AdmError
        For RGB, palette, Bayer and other non-YUV formats.

    Examples
    --------
    >>> source_layout("yuvj420p")
    ('420', 8)
    >>> source_layout("p010le")
    ('420', 10)
    """
    if pix_fmt in _OTHER_YUV:
        return _OTHER_YUV[pix_fmt]
    match = _PLANAR_YUV.fullmatch(pix_fmt)
    if match:
        return match.group(1), int(match.group(2) or 8)
    match = _GRAY.fullmatch(pix_fmt)
    if match:
        return "400", int(match.group(1) or 8)
    raise AdmError(
        f"pixel format {pix_fmt} is not YUV or gray; converting it to luma would change "
        "the numbers, so convert the video to YUV yourself"
    )


def luma_pixel_format(bitdepth: int) -> str:
    """The ffmpeg gray format that carries luma of ``bitdepth`` bits unchanged."""
    try:
        return _GRAY_FORMATS[bitdepth]
    except KeyError:
        raise AdmError(
            f"unsupported bit depth {bitdepth}; use one of {', '.join(map(str, BITDEPTHS))}"
        ) from None


def planar_pixel_format(pix_fmt: str) -> str:
    """The planar ffmpeg format that holds the samples of ``pix_fmt`` unchanged: ``pix_fmt``
    itself where it is planar YUV (big-endian as little-endian, alpha left out; ``yuvj``
    kept, as converting it to ``yuv`` would rescale full-range samples), else the planar
    format of its layout and bit depth (``nv12`` -> ``yuv420p``, ``p010le`` ->
    ``yuv420p10le``: the same samples repacked).

    Examples
    --------
    >>> planar_pixel_format("p210le")
    'yuv422p10le'
    >>> planar_pixel_format("yuvj420p")
    'yuvj420p'
    """
    layout, bitdepth = source_layout(pix_fmt)
    if layout == "400":
        return luma_pixel_format(bitdepth)
    if _PLANAR_YUV.fullmatch(pix_fmt) and pix_fmt.startswith("yuvj"):
        return pix_fmt
    return ffmpeg_pixel_format(layout, bitdepth)


@dataclass(frozen=True)
class VideoInfo:
    """The first video stream of a file, as ffmpeg reports it.

    Attributes
    ----------
    stream : int
        Index of the stream in the file (``-map 0:stream``).
    codec : str
        Codec name, e.g. ``"h264"``.
    pix_fmt : str
        ffmpeg's pixel format, e.g. ``"yuv420p10le"``.
    width, height : int
    container : str
        ffmpeg's demuxer names, e.g. ``"matroska,webm"``.
    video_streams : int
        How many video streams the file has (this one among them; cover art and streams
        without a size not counted).
    rotation : float or None
        Where the stream carries a display matrix (side data that tells a player to turn
        or flip the picture), its rotation as ffmpeg reports it, in degrees
        counter-clockwise (``av_display_rotation_get``; a flip alone reads as 180 or 0);
        None without one.
    duration : float or None
        The file's duration in seconds (``Duration:``), None where ffmpeg gives none.
    frame_rate : float or None
        The stream's frame rate (its ``fps``, else its ``tbr``), None where ffmpeg gives
        none.
    """

    stream: int
    codec: str
    pix_fmt: str
    width: int
    height: int
    container: str
    video_streams: int = 1
    rotation: float | None = None
    duration: float | None = None
    frame_rate: float | None = None

    @property
    def estimated_frames(self) -> int | None:
        """Frames the stream should hold, the duration times the frame rate (exact for a
        constant rate, an estimate otherwise); None where either is unknown."""
        if not self.duration or not self.frame_rate:
            return None
        return max(round(self.duration * self.frame_rate), 0)


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses or brackets."""
    fields, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            fields.append(text[start:i].strip())
            start = i + 1
    fields.append(text[start:].strip())
    return fields


_STREAM = re.compile(r"^\s*Stream #0:([0-9]+)[^:]*: Video: (.*)$")
_ANY_STREAM = re.compile(r"^\s*Stream #")
_DISPLAY_MATRIX = re.compile(r"^\s*Display Matrix: rotation of (-?[0-9.]+) degrees")
_SIZE = re.compile(r"([0-9]+)x([0-9]+)(?:\s|$)")
_DURATION = re.compile(r"^\s*Duration: ([0-9]+):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)")
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(k?) (fps|tbr)$")


def _frame_rate(fields: list[str]) -> float | None:
    """A stream line's frame rate: its ``fps`` field, else its ``tbr`` (``25 fps``,
    ``29.97 fps``, ``1k tbr``)."""
    rates = {}
    for field in fields:
        found = _RATE.match(field.strip())
        if found:
            rates[found.group(3)] = float(found.group(1)) * (1000 if found.group(2) else 1)
    rate = rates.get("fps") or rates.get("tbr")
    return rate if rate and math.isfinite(rate) else None


def parse_probe(text: str) -> VideoInfo | None:
    """Read the first real video stream out of ``ffmpeg -i`` output, and count them.

    Cover art (``(attached pic)``) and streams without a size are skipped.

    Parameters
    ----------
    text : str
        ffmpeg's stderr.

    Returns
    -------
    VideoInfo or None
        None if the text names no video stream.
    """
    container = ""
    duration: float | None = None
    streams: list[VideoInfo] = []
    current: int | None = None  # the video stream whose side data the lines below list
    for line in text.splitlines():
        head = re.match(r"^Input #0, (.*), from ", line)
        if head:
            container = head.group(1)
            continue
        length = _DURATION.match(line)
        if length and duration is None:
            hours, minutes, seconds = length.groups()
            duration = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
            continue
        turned = _DISPLAY_MATRIX.match(line)
        if turned and current is not None and streams[current].rotation is None:
            streams[current] = replace(streams[current], rotation=float(turned.group(1)))
            continue
        if _ANY_STREAM.match(line):
            current = None
        match = _STREAM.match(line)
        if match is None or "(attached pic)" in line:
            continue
        fields = _split_top_level(match.group(2))
        codec = fields[0].split(" ")[0]
        size = None
        pix_fmt = "none"
        for position, field in enumerate(fields[1:], start=1):
            found = _SIZE.match(field + " ")
            if found:
                size = int(found.group(1)), int(found.group(2))
                if position == 2:
                    pix_fmt = fields[1].split("(")[0].strip()
                break
        if size is None or any(s.stream == int(match.group(1)) for s in streams):
            continue  # no size, or listed again (a stream in two MPEG-TS programs)
        streams.append(
            VideoInfo(
                stream=int(match.group(1)),
                codec=codec,
                pix_fmt=pix_fmt,
                width=size[0],
                height=size[1],
                container=container,
                frame_rate=_frame_rate(fields),
            )
        )
        current = len(streams) - 1
    if not streams:
        return None
    return replace(streams[0], video_streams=len(streams), duration=duration)


# What ffmpeg says before its generic "Invalid data found" where an MP4/MOV file lacks its
# index (the moov atom written last, missing from a file whose writing was cut short).
_MOOV_MISSING = "moov atom not found"


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if any(line.endswith(_MOOV_MISSING) for line in lines):
        return _MOOV_MISSING
    for line in reversed(lines):
        if "Error opening input" in line and ":" in line:
            return line.rsplit(":", 1)[1].strip()
    return lines[-1] if lines else "no message"


def probe(path: Path, where: str) -> VideoInfo:
    """Ask ffmpeg what the video stream of ``path`` is.

    Parameters
    ----------
    path : pathlib.Path
    where : str
        How messages name the file.

    Returns
    -------
    VideoInfo

    Raises
    ------
    AdmError
        If ffmpeg is missing, cannot read the file, finds no video stream, or
        reads it as text (ffmpeg's ``tty`` demuxer).
    """
    exe = ffmpeg_exe()
    try:
        proc = subprocess.run(
            [exe, "-hide_banner", "-nostdin", "-i", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AdmError(f"{where}: ffmpeg took over {_PROBE_TIMEOUT_S} s to open it") from None
    except OSError as exc:
        raise AdmError(f"cannot run ffmpeg ({exe}): {exc.strerror or exc}") from None
    text = proc.stderr.decode("utf-8", "replace")
    info = parse_probe(text)
    if info is None:
        if "Input #0" in text:
            raise AdmError(f"{where} has no video stream")
        raise AdmError(
            f"{where} is not a video ffmpeg can read ({_last_error(text)}); "
            "for raw YUV give -w and -h"
        )
    if info.container == "tty" or info.codec in ("ansi", "bintext", "xbin", "idf"):
        raise AdmError(f"{where} is not a video (ffmpeg reads it as text)")
    return info


def same_size_filter(width: int, height: int, *, exact: bool = False) -> str:
    """An ffmpeg filter that passes frames of ``width`` x ``height`` untouched and stops
    ffmpeg at any other size. ``exact`` for frames with subsampled chroma: without it
    ``crop`` rounds an odd width or height down to the chroma's grid.

    By default ffmpeg scales every frame of a stream that changes resolution to the first
    frame's size. This crop to the frame's own size becomes a crop to a negative size
    for a frame of another size, which ffmpeg refuses ("non positive size for width '-W'
    or height '-H'"), naming that size; :class:`LumaPipe` turns it into a message with
    the frame number.
    """
    same = f"eq(iw,{int(width)})*eq(ih,{int(height)})"
    crop = f"crop=w='if({same},iw,-iw)':h='if({same},ih,-ih)':x=0:y=0"
    return f"{crop}:exact=1" if exact else crop


_SIZE_CHANGE = re.compile(r"non positive size for width '-([0-9]+)' or height '-([0-9]+)'")


def rotation_text(rotation: float) -> str:
    """A display matrix's rotation (ffmpeg's counter-clockwise degrees) for messages:
    ``"a 180° display rotation"``, ``"a 90° counter-clockwise display rotation"``."""
    angle = round(rotation % 360, 2) % 360
    if angle == 0:
        return "a display matrix (a flip, no rotation)"
    if angle == 180:
        return "a 180° display rotation"
    return f"a {angle:g}° counter-clockwise display rotation"


def check_rotation(where: str, rotation: float | None, autorotate: bool | None) -> None:
    """Refuse an input with a display matrix unless the caller chose what to score: the
    picture turned as ffmpeg turns it by default (``autorotate`` True) or the stored pixels
    (False). Scored against an upright reference, stored pixels that a player would turn
    give a low score with no sign of why; ffmpeg's own libvmaf filter turns them."""
    if rotation is None or autorotate is not None:
        return
    raise AdmError(
        f"{where} carries {rotation_text(rotation)}, which players and ffmpeg apply; "
        "admcuda reads stored pixels: give --autorotate to score it turned as ffmpeg turns "
        "it (ffmpeg decoder only), or --noautorotate to score the stored pixels"
    )


def turned_size(width: int, height: int, rotation: float | None) -> tuple[int, int]:
    """The size of frames after ffmpeg's autorotation: sides swapped for a quarter turn
    (ffmpeg transposes within a degree of 90 or 270), else as stored (a half turn and
    flips keep it; another angle is rotated within the same size)."""
    if rotation is not None and abs(rotation % 180 - 90) < 1:
        return height, width
    return width, height


class VideoReader(ClosingReader):
    """Luma frames of an encoded video, decoded by ffmpeg through a pipe.

    Parameters
    ----------
    path : str or os.PathLike
        Any file ffmpeg can decode.
    label : str, optional
        How messages name the file, e.g. ``"distorted"``.
    autorotate : bool, optional
        For a video with a display matrix (:attr:`VideoInfo.rotation`): True scores its
        frames turned as ffmpeg turns them by default (a quarter turn swaps width and
        height), False its stored pixels; None (the default) refuses such a video.

    Attributes
    ----------
    info : VideoInfo
        What the probe found.
    width, height : int
        Of the frames read (after autorotation).
    bitdepth : {8, 10, 12, 16}
    pixel_format : str
        Chroma layout of the source (``"420"`` ...), for messages.
    num_frames : None
        Not known before decoding; ``len()`` is not available.

    Raises
    ------
    AdmError
        If the file is missing, a directory, empty, not a video, not YUV, of an
        unsupported bit depth, or 16 pixels or less wide or high.
    """

    kind = "video"
    num_frames: int | None = None

    def __init__(
        self, path: str | os.PathLike[str], *, label: str = "input", autorotate: bool | None = None
    ) -> None:
        self.path = Path(path)
        self.label = label
        self.where = f"{label} file {str(self.path)!r}"
        check_input_file(self.path, self.where, "video file")
        self.info = probe(self.path, self.where)
        check_rotation(self.where, self.info.rotation, autorotate)
        #: ffmpeg turns the frames (a display matrix, with autorotate)
        self.rotated = bool(autorotate) and self.info.rotation is not None
        try:
            layout, bitdepth = source_layout(self.info.pix_fmt)
            if bitdepth not in BITDEPTHS:
                raise AdmError(
                    f"unsupported bit depth {bitdepth} ({self.info.pix_fmt}); "
                    f"use one of {', '.join(map(str, BITDEPTHS))}"
                )
            check_geometry(self.info.width, self.info.height, "400", bitdepth)
        except AdmError as exc:
            raise AdmError(f"{self.where}: {exc}") from None
        if self.info.video_streams > 1:
            info = self.info
            _log.warning(
                "%s has %d video streams; scoring the first, stream %d (%s, %dx%d); to score "
                "another, copy it to a file of its own (ffmpeg -i IN -map 0:N -c copy OUT)",
                self.where, info.video_streams, info.stream, info.codec, info.width, info.height,
            )  # fmt: skip
        self.width, self.height = self.info.width, self.info.height
        if self.rotated:
            self.width, self.height = turned_size(self.width, self.height, self.info.rotation)
        self.bitdepth = bitdepth
        self.pixel_format = layout
        self._procs: set[subprocess.Popen[bytes]] = set()

    @property
    def estimated_frames(self) -> int | None:
        """Frames the video should hold, from its duration and frame rate (for progress:
        ``num_frames`` stays None, as only decoding counts them); None if unknown."""
        return self.info.estimated_frames

    def _rotate_args(self) -> list[str]:
        """ffmpeg turns frames by a display matrix unless told not to."""
        return [] if self.rotated else ["-noautorotate"]

    def command(self, count: int | None = None, *, chroma: bool = False) -> list[str]:
        """The ffmpeg command line that writes the luma planes to stdout, or with ``chroma``
        whole frames in the source's planar layout (:func:`planar_pixel_format`)."""
        if chroma:
            chain = same_size_filter(self.width, self.height, exact=True)
            pix_fmt = planar_pixel_format(self.info.pix_fmt)
        else:
            chain = f"extractplanes=y,{same_size_filter(self.width, self.height)}"
            pix_fmt = luma_pixel_format(self.bitdepth)
        cmd = [
            ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", *self._rotate_args(),
            "-i", str(self.path), "-map", f"0:{self.info.stream}",
            "-vf", chain, "-pix_fmt", pix_fmt, "-fps_mode", "passthrough",
        ]  # fmt: skip
        if count is not None:
            cmd += ["-frames:v", str(count)]
        return [*cmd, "-f", "rawvideo", "pipe:1"]

    def close(self) -> None:
        """Stop any ffmpeg process still running for this reader."""
        for proc in list(self._procs):
            _stop(proc)
        self._procs.clear()

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the Y plane of every frame, in order."""
        return self.iter_luma()

    @property
    def dtype(self) -> np.dtype:
        """Of the planes: uint8 for 8 bits, else uint16."""
        return np.dtype(np.uint8 if self.bitdepth == 8 else np.uint16)

    def open_pipe(
        self,
        start: int = 0,
        count: int | None = None,
        *,
        subsample: int = 1,
        chroma: bool = False,
    ) -> LumaPipe:
        """Start ffmpeg on frames ``start``, ``start + 1``, ...: a :class:`LumaPipe` that
        reads each plane straight into an array the caller gives (no copy between), and
        with ``chroma`` each frame's Cb and Cr planes too (:meth:`chroma_samples` of them).

        Frames before ``start`` are decoded and dropped (seeking in compressed video is
        not frame exact). ``count`` caps the frames after them. ``subsample`` is the
        caller's (it scores frames ``start``, ``start + subsample``, ...); every frame is
        still decoded and read, but a source fed by admcuda (:class:`ScaledReader`) checks
        only the frames scored.
        """
        return LumaPipe(self, max(int(start), 0), count, max(int(subsample), 1), chroma=chroma)

    def chroma_samples(self) -> int:
        """Samples of a frame's Cb and Cr planes together, as a raw planar frame holds them
        (an odd side's chroma rounded up).

        Raises
        ------
        AdmError
            For a 4:0:0 source, or a layout other than 4:2:0, 4:2:2 and 4:4:4.
        """
        if self.pixel_format not in ("420", "422", "444"):
            raise AdmError(
                f"{self.where} is {_layout_text(self.pixel_format)}: admcuda reads the chroma "
                "of 4:2:0, 4:2:2 and 4:4:4 video only"
            )
        shapes = plane_shapes(self.width, self.height, self.pixel_format)
        return sum(rows * cols for rows, cols in shapes[1:])

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]:
        """Decode and yield Y planes from frame ``start`` on.

        Each call runs its own ffmpeg process. Frames before ``start`` are
        decoded and dropped (seeking in compressed video is not frame exact).

        Parameters
        ----------
        start : int, optional
            Frames to skip.
        count : int, optional
            At most this many frames after the skipped ones.

        Yields
        ------
        numpy.ndarray
            Shape ``(height, width)``, ``uint8`` for 8 bits, else ``uint16``.

        Raises
        ------
        AdmError
            If ffmpeg fails; a partial frame at the end is dropped with a warning.
        """
        pipe = self.open_pipe(start, count)
        try:
            while True:
                plane = np.empty((self.height, self.width), self.dtype)
                if not pipe.readinto(plane):
                    return
                yield plane
        finally:
            pipe.close()

    def _stdin_feed(
        self, start: int, total: int | None, subsample: int = 1
    ) -> Iterator[bytes | memoryview] | None:
        """What to write to ffmpeg's standard input, if it reads its input from there, for
        a pass whose output is frames ``start`` to ``total`` (all frames for None), of
        which ``start``, ``start + subsample``, ... are scored."""
        return None

    def __repr__(self) -> str:
        return (
            f"VideoReader({str(self.path)!r}, {self.info.codec} {self.info.pix_fmt}, "
            f"width={self.width}, height={self.height}, bitdepth={self.bitdepth})"
        )


SCALERS: tuple[str, ...] = (
    "fast_bilinear", "bilinear", "bicubic", "experimental", "neighbor", "area",
    "bicublin", "gauss", "sinc", "lanczos", "spline",
)  # fmt: skip
"""ffmpeg's scaling algorithms (``-vf scale=W:H:flags=NAME``), as :func:`check_scaler` takes
them."""
_SCALER_MODIFIERS = ("accurate_rnd", "full_chroma_int", "full_chroma_inp", "bitexact")


def check_scaler(name: str) -> str:
    """Validate an ffmpeg scaler for ``--scale``: one of :data:`SCALERS`, optionally with
    ``+accurate_rnd``, ``+full_chroma_int``, ``+full_chroma_inp`` or ``+bitexact``.

    Returns
    -------
    str
        The flags as ffmpeg takes them, e.g. ``"bicubic"`` or ``"lanczos+accurate_rnd"``.

    Raises
    ------
    AdmError
        For any other name.
    """
    parts = str(name).strip().lower().split("+")
    if parts[0] not in SCALERS or any(p not in _SCALER_MODIFIERS for p in parts[1:]):
        raise AdmError(
            f"unknown scaler {name!r} for --scale; use one of {', '.join(SCALERS)} "
            f"(optionally +{', +'.join(_SCALER_MODIFIERS)})"
        )
    return "+".join(parts)


def ffmpeg_pixel_format(pixel_format: str, bitdepth: int) -> str:
    """ffmpeg's name of a planar layout and bit depth, e.g. ``("420", 10)`` ->
    ``"yuv420p10le"``, ``("400", 8)`` -> ``"gray"``."""
    if pixel_format == "400":
        return luma_pixel_format(bitdepth)
    return f"yuv{pixel_format}p" + ("" if bitdepth == 8 else f"{bitdepth}le")


class LumaPipe:
    """One ffmpeg process writing a video's luma planes (or, with ``chroma``, whole planar
    frames) to a pipe, read plane by plane into arrays the caller owns
    (:meth:`VideoReader.open_pipe`).

    :meth:`readinto` fills the next luma plane and, where given, the frame's chroma; at
    the end of the video it checks how ffmpeg ended (an error is an :class:`AdmError`
    naming the input, a partial last frame is dropped with a warning). :meth:`close`
    stops ffmpeg early.
    """

    def __init__(
        self,
        reader: VideoReader,
        start: int,
        count: int | None,
        subsample: int = 1,
        *,
        chroma: bool = False,
    ) -> None:
        self.reader = reader
        self.chroma = chroma
        self._start = start
        self._total = None if count is None else start + max(int(count), 0)
        self._index = 0
        self._done = False
        #: chroma samples of a frame (Cb then Cr), 0 without chroma
        self.chroma_size = reader.chroma_samples() if chroma else 0
        self._scratch: np.ndarray | None = None
        self._chroma_scratch: np.ndarray | None = None
        feed = reader._stdin_feed(start, self._total, subsample)  # noqa: SLF001 - its own hook
        self._feed_errors: list[AdmError] = []
        command = (
            reader.command(self._total, chroma=True) if chroma else reader.command(self._total)
        )
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL if feed is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise AdmError(f"cannot run ffmpeg: {exc.strerror or exc}") from None
        reader._procs.add(self._proc)  # noqa: SLF001 - closed with the reader
        self._tail: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._counted = [0]
        self._drain = threading.Thread(
            target=_drain, args=(self._proc, self._tail, self._counted), daemon=True
        )
        self._drain.start()
        if feed is not None:
            threading.Thread(
                target=_feed, args=(self._proc, feed, self._feed_errors), daemon=True
            ).start()

    def _read_plane(self, dst: np.ndarray) -> int:
        """Bytes of the next plane read into ``dst`` (fewer only at the end)."""
        assert self._proc.stdout is not None
        view = memoryview(dst).cast("B")
        got = 0
        while got < view.nbytes:
            n = self._proc.stdout.readinto(view[got:])
            if not n:
                break
            got += n
        return got

    def readinto(self, dst: np.ndarray, chroma: np.ndarray | None = None) -> bool:
        """Decode the next frame into ``dst`` ((height, width), C-contiguous, the reader's
        dtype) and, for a pipe opened with chroma, its Cb and Cr planes into ``chroma``
        (``chroma_size`` samples, flat; dropped where None); False at the end, when the
        arrays are left as they were or partly written."""
        r = self.reader
        if dst.shape != (r.height, r.width) or dst.dtype != r.dtype or not dst.flags.c_contiguous:
            raise ValueError(f"LumaPipe reads into C-contiguous {r.dtype}[{r.height}, {r.width}]")
        if chroma is not None and (
            not self.chroma
            or chroma.shape != (self.chroma_size,)
            or chroma.dtype != r.dtype
            or not chroma.flags.c_contiguous
        ):
            raise ValueError(
                f"LumaPipe reads chroma into C-contiguous {r.dtype}[{self.chroma_size}]"
                + ("" if self.chroma else " of a pipe opened with chroma")
            )
        while not self._done:
            if self._total is not None and self._index >= self._total:
                self._done = True
                break
            keep = self._index >= self._start
            if not keep and self._scratch is None:
                self._scratch = np.empty_like(dst)
            targets = [dst if keep else self._scratch]
            if self.chroma:
                if (chroma is None or not keep) and self._chroma_scratch is None:
                    self._chroma_scratch = np.empty(self.chroma_size, r.dtype)
                targets.append(chroma if keep and chroma is not None else self._chroma_scratch)
            got = want = 0
            for target in targets:
                want += target.nbytes
                got += self._read_plane(target)
                if got < want:
                    break
            if got < want:
                self._done = True
                if got:
                    _log.warning(
                        "%s: ffmpeg's output ended inside frame %d (%d of %d bytes); "
                        "scoring the whole frames before it",
                        r.where, self._index, got, want,
                    )  # fmt: skip
                self._finish()
                break
            if sys.byteorder == "big" and r.dtype.itemsize > 1:
                for target in targets:  # ffmpeg writes little-endian samples
                    target.byteswap(inplace=True)
            self._index += 1
            if keep:
                return True
        return False

    def _finish(self) -> None:
        """At the end of ffmpeg's output: its exit status and what it reported."""
        returncode = self._proc.wait()
        self._drain.join()
        if self._feed_errors:  # the source refused a frame: ffmpeg's input ended before it
            raise self._feed_errors[0]
        if returncode != 0:
            changed = next((m for m in map(_SIZE_CHANGE.search, self._tail) if m), None)
            if changed is not None:
                r = self.reader
                size = f"{changed.group(1)}x{changed.group(2)}"
                raise size_change(r.where, self._index, r.width, r.height, size)
            message = _last_error("\n".join(self._tail))
            raise AdmError(
                f"ffmpeg failed decoding {self.reader.where} after {self._index} frames "
                f"(exit status {returncode}): {message}"
            )
        if self._counted[0]:
            _log.warning(
                "%s: ffmpeg reported %d problem(s) while decoding; the last: %s",
                self.reader.where, self._counted[0], self._tail[-1],
            )  # fmt: skip

    def close(self) -> None:
        """Stop ffmpeg if it still runs and release the pipe."""
        self._done = True
        proc = self._proc
        _stop(proc)
        self._drain.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()
        self.reader._procs.discard(proc)  # noqa: SLF001


class ScaledReader(VideoReader):
    """Luma frames of another reader's input, scaled by ffmpeg to another size.

    ffmpeg reads a video itself; a raw or Y4M file's frames, or a stream's, come from the
    source's own reader, as raw frames on ffmpeg's standard input (``-f rawvideo -pix_fmt
    P -s WxH``; a Y4M source's markers and header left out), so ffmpeg scales exactly the
    frames admcuda would score without scaling: the same markers, truncation and sample
    range are checked, with the same warnings and errors.
    It scales them with ``-vf scale=W:H:flags=NAME``, in the source's own pixel format,
    before the luma plane is taken: the planes are those that ``ffmpeg -i IN -vf
    scale=W:H:flags=NAME OUT.y4m`` writes. Bit depth and layout stay the source's.

    Parameters
    ----------
    source : YuvReader, Y4mReader, VideoReader or StreamReader
        Opened, so its geometry is known; closed with this reader.
    width, height : int
        The size to scale to.
    scaler : str
        As :func:`check_scaler` accepts.

    Attributes
    ----------
    source_width, source_height : int
    num_frames : int or None
        The source's, where it knows it (raw and Y4M files).
    """

    kind = "scaled"

    def __init__(self, source: object, *, width: int, height: int, scaler: str) -> None:
        self.source = source
        self.scaler = check_scaler(scaler)
        src = source
        self.path: Path = src.path  # type: ignore[attr-defined]
        self.label: str = src.label  # type: ignore[attr-defined]
        self.where: str = src.where  # type: ignore[attr-defined]
        self.source_width: int = src.width  # type: ignore[attr-defined]
        self.source_height: int = src.height  # type: ignore[attr-defined]
        self.pixel_format: str = src.pixel_format  # type: ignore[attr-defined]
        self.bitdepth: int = src.bitdepth  # type: ignore[attr-defined]
        self.source_kind: str = src.kind  # type: ignore[attr-defined]
        check_geometry(width, height, "400", self.bitdepth)
        self.width, self.height = width, height
        known = self.source_kind in ("yuv", "y4m")
        self.num_frames = src.num_frames if known else None  # type: ignore[attr-defined]
        self._procs = set()

    @property
    def estimated_frames(self) -> int | None:
        """The source's frames where known, else its estimate (a video's)."""
        if self.num_frames is not None:
            return self.num_frames
        return getattr(self.source, "estimated_frames", None)

    def _input_args(self) -> list[str]:
        src: object = self.source
        if self.source_kind == "video":
            turn = src._rotate_args()  # type: ignore[attr-defined]  # noqa: SLF001
            return [*turn, "-i", str(self.path), "-map", f"0:{src.info.stream}"]  # type: ignore[attr-defined]
        size = f"{self.source_width}x{self.source_height}"
        demuxer = ["-f", "rawvideo", "-pix_fmt", self._source_pix_fmt(), "-s", size]
        return [*demuxer, "-i", "pipe:0", "-map", "0:v:0"]

    def _source_pix_fmt(self) -> str:
        if self.source_kind == "video":
            return str(self.source.info.pix_fmt)  # type: ignore[attr-defined]
        return ffmpeg_pixel_format(self.pixel_format, self.bitdepth)

    def command(self, count: int | None = None, *, chroma: bool = False) -> list[str]:
        """The ffmpeg command line that writes the scaled luma planes to stdout, or with
        ``chroma`` whole scaled frames in the source's planar layout."""
        # ffmpeg cannot pick a format between scale and extractplanes by itself; the
        # source's own format keeps the planes those of a plain scale to a file.
        scale = f"scale={self.width}:{self.height}:flags={self.scaler}"
        if chroma:
            # Scaled straight into the planar format, as ffmpeg scales for its libvmaf filter
            # and for a Y4M file. A semi-planar or packed source (nv12, p010) scaled in its
            # own format first gives other samples, luma too, by up to a few levels.
            pix_fmt = planar_pixel_format(self._source_pix_fmt())
            chain = f"{scale},format={pix_fmt}"
        else:
            chain = f"{scale},format={self._source_pix_fmt()},extractplanes=y"
            pix_fmt = luma_pixel_format(self.bitdepth)
        cmd = [
            ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", *self._input_args(),
            "-vf", chain, "-pix_fmt", pix_fmt, "-fps_mode", "passthrough",
        ]  # fmt: skip
        if count is not None:
            cmd += ["-frames:v", str(count)]
        return [*cmd, "-f", "rawvideo", "pipe:1"]

    def _stdin_feed(
        self, start: int, total: int | None, subsample: int = 1
    ) -> Iterator[bytes | memoryview] | None:
        """A raw or Y4M file's frames, or a stream's, as its reader reads them (markers,
        truncation and sample range checked as without ``--scale``), up to ``total``, as raw
        frames (a Y4M source's markers left out). A raw file's whole frames only: a
        partial last one is already warned about, and kept from the decoder.

        The sample range is checked on the frames read without ``--scale``: a file's are
        read by position, the scored ones alone (``start``, ``start + subsample``, ...),
        a stream's one after another, all from ``start`` on. Every frame from the first is
        fed all the same, ffmpeg's output numbering frames as the source does.
        """
        if self.source_kind == "video":
            return None
        every = {} if self.source_kind == "stream" else {"check_every": subsample}
        return self.source.iter_frame_bytes(total, check_from=start, **every)  # type: ignore[attr-defined,no-any-return]

    def interrupt(self) -> None:
        """End a read of a stream source under way (the feed to ffmpeg's standard input,
        which then ends ffmpeg's output too)."""
        interrupt = getattr(self.source, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def close(self) -> None:
        """Stop ffmpeg and close the source."""
        super().close()
        self.source.close()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return (
            f"ScaledReader({str(self.path)!r}, {self.source_width}x{self.source_height} -> "
            f"{self.width}x{self.height}, flags={self.scaler}, bitdepth={self.bitdepth})"
        )


def _layout_text(layout: str) -> str:
    """``"420"`` -> ``"4:2:0"``, ``"400"`` -> ``"4:0:0 (gray)"``."""
    text = ":".join(layout) if len(layout) == 3 and layout.isdigit() else layout
    return f"{text} (gray)" if layout == "400" else text


def _drain(proc: subprocess.Popen[bytes], tail: collections.deque[str], counted: list[int]) -> None:
    """Read ffmpeg's stderr to the end, keeping the last lines and counting them."""
    assert proc.stderr is not None
    try:
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            if line:
                tail.append(line)
                counted[0] += 1
    except (OSError, ValueError):
        pass


def _feed(
    proc: subprocess.Popen[bytes],
    chunks: Iterator[bytes | memoryview],
    errors: list[AdmError],
) -> None:
    """Write ``chunks`` to ffmpeg's standard input, then close it; stop when ffmpeg does.
    An :class:`AdmError` from ``chunks`` (a frame the source refused) goes to ``errors``
    before ffmpeg's input is closed, so the reader of its output finds it at the end."""
    assert proc.stdin is not None
    try:
        for chunk in chunks:
            proc.stdin.write(chunk)
    except AdmError as exc:
        errors.append(exc)
    except (OSError, ValueError):  # ffmpeg has stopped reading (a frame limit, or killed)
        pass
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` if it still runs, close its pipes and reap it."""
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
    if proc.stdout is not None:
        proc.stdout.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - a killed process exits
        pass

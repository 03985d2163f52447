"""YUV4MPEG2 (``.y4m``) files: stream header, frame markers and a luma-plane reader.

A Y4M file is one ASCII header line, ``YUV4MPEG2`` followed by space-separated
tags, then frames, each a ``FRAME`` marker line (optionally carrying its own
tags) and the planes laid out as in a raw YUV file (:mod:`admcuda.io.raw`): Y, then
U and V with chroma sizes rounded up; two little-endian bytes per sample above 8
bits. The header tags read here:

- ``W`` and ``H``: picture size, required;
- ``C``: colour space, default ``420`` as in libvmaf. ``420``, ``420jpeg``,
  ``420mpeg2``, ``420paldv``, ``422``, ``444`` are 8-bit; ``420p10``, ``422p12``,
  ``444p16`` ... give the bit depth; ``mono``, ``mono10``, ``mono12``, ``mono16``
  are luma only. Chroma siting does not matter to ADM, which reads luma only;
  ``411``, ``410``, ``440`` and ``444alpha`` are refused, as are bit depths other
  than 8, 10, 12 and 16;
- ``F`` (frame rate), ``A`` (pixel aspect), ``I`` (interlacing) are checked for
  form and reported; interlaced material is scored frame by frame, as a
  progressive picture, with a warning (libvmaf refuses it);
- ``X`` (extensions) and unknown tags are ignored, as libvmaf does.

A carriage return before the header's newline is read as libvmaf reads it: ignored
after a last tag ``W``, ``H``, ``F``, ``A`` or ``I``, part of the value of a last ``C``
tag (so an unknown colour space).

Frame markers are checked when the file is opened. A marker is a line that begins
with ``FRAME``: whatever follows up to its newline is skipped, as libvmaf's reader
skips it (``FRAME Ip``, ``FRAME\r``, ``FRAMEX``). A line that does not begin so, or a
truncated frame, ends the clip there with a one-line warning, and the whole frames
before it are scored; the other input's frames beyond them are not. Fewer than 6
bytes after the last whole frame are the end of the file, with no warning, as
libvmaf's reader takes them (``y4m_input.c`` reads 6 bytes for the next marker and
stops quietly short of them). A file with no whole frame at all is an error.

libvmaf's ``vmaf`` tool (libvmaf 3.2.0, Netflix/vmaf f85a8536)
scores a truncated or badly framed file only where the other input ends at the same
frame:

- the distorted input ends early in a partial frame or bytes that are no marker,
  the reference goes on: "problem reading pictures", exit status 234, no output file;
- the reference ends early in a partial frame, the distorted input goes on: it
  crashes (SIGSEGV: the picture it failed to read is handed on, zeroed);
- both end at the same whole frame, one with a partial frame after it: those frames
  are scored, exit status 0.

admcuda scores the frames both inputs hold in every case (with the warning).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import BITDEPTHS, check_geometry, decode_plane, decode_planes, frame_bytes
from admcuda.io.raw import ClosingReader, PositionedFrames, check_input_file

__all__ = [
    "MAGIC",
    "MARKER_PROBE",
    "MAX_FRAME_MARKER",
    "MAX_HEADER",
    "Y4mHeader",
    "Y4mReader",
    "frame_marker_problem",
    "parse_colorspace",
    "parse_header",
    "warn_if_interlaced",
]

MAGIC = b"YUV4MPEG2"
# The header is one line; real ones are well under 200 bytes, ffmpeg's with its
# extension tags included. A longer first line is not a Y4M header.
MAX_HEADER = 1024
# "FRAME" plus its optional tags and the newline; libvmaf allows 85 bytes in all.
MAX_FRAME_MARKER = 256
_FRAME = b"FRAME"
# libvmaf reads this many bytes for a frame marker and takes fewer as the end of the file.
MARKER_PROBE = 6

# Tags libvmaf reads with sscanf("%d") or by their first letter, which leave a carriage
# return after them unread: a CRLF header line that ends in one of them is read (one that
# ends in a C tag is refused there too, as an unknown colour space).
_CR_TOLERANT = (b"W", b"H", b"F", b"A", b"I")
_SITED_420 = ("420jpeg", "420mpeg2", "420paldv")
_REFUSED = ("411", "410", "440", "444alpha")
_DIGITS = re.compile(r"[0-9]+")
_RATIO = re.compile(r"([0-9]+):([0-9]+)")
_INTERLACE = {
    "p": "progressive",
    "t": "top field first",
    "b": "bottom field first",
    "m": "mixed",
    "?": "unknown",
}
_INTERLACED = ("t", "b", "m")  # the tags that warn: fields, scored as whole pictures  # fmt: skip

_log = logging.getLogger("admcuda")


@dataclass(frozen=True)
class Y4mHeader:
    """What a Y4M stream header says.

    Attributes
    ----------
    width, height : int
        Picture size in pixels.
    pixel_format : {"420", "422", "444", "400"}
        Chroma layout, as :mod:`admcuda.io.raw` names it (``mono`` is ``"400"``).
    bitdepth : {8, 10, 12, 16}
    colorspace : str
        The ``C`` tag as written (``"420"`` when absent).
    interlace : str or None
        The ``I`` tag's letter (``p``, ``t``, ``b``, ``m``, ``?``), None if absent.
    frame_rate, aspect : (int, int) or None
        The ``F`` and ``A`` tags as ``(numerator, denominator)``, None if absent.
    size : int
        Bytes of the header line, newline included: where the first frame starts.
    """

    width: int
    height: int
    pixel_format: str
    bitdepth: int
    colorspace: str
    interlace: str | None
    frame_rate: tuple[int, int] | None
    aspect: tuple[int, int] | None
    size: int


def parse_colorspace(tag: str) -> tuple[str, int]:
    """Chroma layout and bit depth of a Y4M ``C`` tag (without the ``C``).

    Parameters
    ----------
    tag : str
        E.g. ``"420jpeg"``, ``"422p10"``, ``"mono12"``.

    Returns
    -------
    (str, int)
        ``(pixel_format, bitdepth)``, e.g. ``("422", 10)``.

    Raises
    ------
    AdmError
        For a layout admcuda does not read or a bit depth outside 8, 10, 12, 16.

    Examples
    --------
    >>> parse_colorspace("420p10")
    ('420', 10)
    >>> parse_colorspace("mono")
    ('400', 8)
    """
    if tag in _SITED_420:
        return "420", 8
    match = re.fullmatch(r"(420|422|444)(?:p([0-9]{1,3}))?", tag) or re.fullmatch(
        r"(mono)([0-9]{1,3})?", tag
    )
    if match is None:
        if tag in _REFUSED or tag.startswith(_REFUSED):
            raise AdmError(
                f"unsupported Y4M colour space C{tag}; admcuda reads 420, 422, 444 and mono"
            )
        raise AdmError(f"unknown Y4M colour space C{tag!r}")
    layout = "400" if match.group(1) == "mono" else match.group(1)
    bitdepth = int(match.group(2) or 8)
    if bitdepth not in BITDEPTHS:
        raise AdmError(
            f"unsupported bit depth {bitdepth} (Y4M colour space C{tag}); "
            f"use one of {', '.join(map(str, BITDEPTHS))}"
        )
    return layout, bitdepth


def _ratio(letter: str, value: str) -> tuple[int, int]:
    match = _RATIO.fullmatch(value)
    if match is None:
        raise AdmError(f"Y4M tag {letter}{value!r} is not of the form {letter}N:D")
    return int(match.group(1)), int(match.group(2))


def _dimension(letter: str, value: str) -> int:
    if not _DIGITS.fullmatch(value) or len(value) > 9:
        raise AdmError(f"Y4M tag {letter}{value!r} is not a size in pixels")
    return int(value)


def parse_header(data: bytes) -> Y4mHeader:
    """Parse the stream header at the start of a Y4M file.

    Parameters
    ----------
    data : bytes
        The first bytes of the file: at least the whole header line, or the
        first :data:`MAX_HEADER` bytes.

    Returns
    -------
    Y4mHeader

    Raises
    ------
    AdmError
        If the magic is missing, there is no newline within :data:`MAX_HEADER`
        bytes, the line is not ASCII, ``W`` or ``H`` is missing or malformed, a
        tag is malformed, or the geometry is not supported (see
        :func:`admcuda.io.formats.check_geometry`).

    Examples
    --------
    >>> h = parse_header(b"YUV4MPEG2 W176 H144 F25:1 Ip C420jpeg\\nFRAME\\n")
    >>> (h.width, h.height, h.pixel_format, h.bitdepth, h.size)
    (176, 144, '420', 8, 38)
    """
    if not data.startswith(MAGIC):
        raise AdmError("not a Y4M file: it does not start with YUV4MPEG2")
    end = data.find(b"\n", 0, MAX_HEADER)
    if end < 0 and len(data) < MAX_HEADER:  # fewer bytes than asked for: the input ended
        raise AdmError(f"it ends inside the Y4M header ({len(data)} bytes, no end of line)")
    if end < 0:
        raise AdmError(f"Y4M header has no end of line in its first {MAX_HEADER} bytes")
    line = data[:end]
    if line.endswith(b"\r") and line.rsplit(b" ", 1)[-1][:1] in _CR_TOLERANT:
        line = line[:-1]  # a CRLF header line, as libvmaf reads it
    if len(line) > len(MAGIC) and line[len(MAGIC)] != ord(" "):
        raise AdmError("not a Y4M file: YUV4MPEG2 is not followed by a space")
    try:
        text = line[len(MAGIC) :].decode("ascii")
    except UnicodeDecodeError:
        raise AdmError("Y4M header is not ASCII text") from None

    tags: dict[str, str] = {}
    for token in text.split(" "):
        if token:
            tags[token[0]] = token[1:]
    if "W" not in tags or "H" not in tags:
        missing = " and ".join(t for t in "WH" if t not in tags)
        raise AdmError(f"Y4M header has no {missing} tag (picture size)")
    width = _dimension("W", tags["W"])
    height = _dimension("H", tags["H"])
    colorspace = tags.get("C", "420")
    pixel_format, bitdepth = parse_colorspace(colorspace)
    interlace = tags.get("I")
    if interlace is not None and interlace not in _INTERLACE:
        raise AdmError(f"Y4M tag I{interlace!r} is not one of Ip, It, Ib, Im, I?")
    frame_rate = _ratio("F", tags["F"]) if "F" in tags else None
    aspect = _ratio("A", tags["A"]) if "A" in tags else None
    check_geometry(width, height, pixel_format, bitdepth)
    return Y4mHeader(
        width=width,
        height=height,
        pixel_format=pixel_format,
        bitdepth=bitdepth,
        colorspace=colorspace,
        interlace=interlace,
        frame_rate=frame_rate,
        aspect=aspect,
        size=end + 1,
    )


def warn_if_interlaced(where: str, header: Y4mHeader) -> None:
    """One warning where the header says the frames are interlaced (``It``, ``Ib``,
    ``Im``): each frame is scored as one progressive picture, as libvmaf does."""
    if header.interlace in _INTERLACED:
        _log.warning(
            "%s is interlaced (I%s, %s); scoring each frame as one progressive picture",
            where, header.interlace, _INTERLACE[header.interlace],
        )  # fmt: skip


def frame_marker_problem(line: bytes, *, ended: bool, at: str, before: str) -> str | None:
    """What is wrong with a frame's marker, or None: ``line`` holds the bytes from where
    the marker should start, up to its newline or :data:`MAX_FRAME_MARKER` bytes; ``ended``
    says the input ended within them. As libvmaf reads it, a marker is ``FRAME`` and then
    anything up to the newline. ``at`` and ``before`` place the marker in the messages
    (``"at byte 120"``, ``"of frame 3"`` / ``"before frame 3"``)."""
    if not line.startswith(_FRAME):
        return f"no FRAME marker {before} (found {line[:8]!r})"
    if b"\n" not in line:
        if ended:
            return f"it ends inside the FRAME marker {at}"
        return f"the FRAME marker {at} has no end of line within {MAX_FRAME_MARKER} bytes"
    return None


class Y4mReader(PositionedFrames, ClosingReader):
    """Read luma planes from a YUV4MPEG2 file.

    The header is parsed and every frame marker checked on opening, so the
    number of frames is known and frames can be read in any order; chroma is
    skipped by seeking. Use as a context manager, or call :meth:`close`.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    label : str, optional
        How messages name the file, e.g. ``"reference"``.
    check_range : bool, optional
        For 10 and 12 bits, refuse samples that do not fit the bit depth.

    Attributes
    ----------
    header : Y4mHeader
    width, height, pixel_format, bitdepth
        From the header.
    num_frames : int
        Whole frames up to the first bad marker or truncation.

    Raises
    ------
    AdmError
        If the file is missing, a directory, empty, not Y4M, has a bad or
        unsupported header, or holds no whole frame.
    """

    kind = "y4m"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        label: str = "input",
        check_range: bool = True,
    ) -> None:
        self.path = Path(path)
        self.label = label
        self.check_range = check_range
        self.where = f"{label} file {str(self.path)!r}"
        size = check_input_file(self.path, self.where, "Y4M file")
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise AdmError(f"{self.where} cannot be read: {exc.strerror or exc}") from None
        try:
            try:
                self.header = parse_header(self._file.read(MAX_HEADER))
            except AdmError as exc:
                raise AdmError(f"{self.where}: {exc}") from None
            self.width = self.header.width
            self.height = self.header.height
            self.pixel_format = self.header.pixel_format
            self.bitdepth = self.header.bitdepth
            self.frame_size = frame_bytes(self.width, self.height, self.pixel_format, self.bitdepth)
            self.luma_size = self.width * self.height * (1 if self.bitdepth == 8 else 2)
            self._offsets = self._scan(size)
        except BaseException:
            self._file.close()
            raise
        self.num_frames = len(self._offsets)
        warn_if_interlaced(self.where, self.header)

    def _scan(self, size: int) -> list[int]:
        """Offsets of the frame data of every whole frame, checking each marker."""
        geometry = f"{self.width}x{self.height} C{self.header.colorspace}"
        offsets: list[int] = []
        pos = self.header.size
        while size - pos >= MARKER_PROBE:
            self._file.seek(pos)
            head = self._file.read(MAX_FRAME_MARKER)
            end = head.find(b"\n")
            problem = frame_marker_problem(
                head, ended=pos + len(head) >= size, at=f"at byte {pos}", before=f"at byte {pos}"
            )
            if problem is None and pos + end + 1 + self.frame_size > size:
                problem = (
                    f"it ends inside frame {len(offsets)} ({size - pos - end - 1} of "
                    f"{self.frame_size} bytes of a {geometry} frame)"
                )
            if problem is not None:
                if not offsets:
                    raise AdmError(f"{self.where} holds no whole frame: {problem}")
                _log.warning(
                    "%s: %s; scoring the %d whole frames before it",
                    self.where, problem, len(offsets),
                )  # fmt: skip
                break
            offsets.append(pos + end + 1)
            pos += end + 1 + self.frame_size
        if not offsets:
            raise AdmError(f"{self.where} has a header but no frames")
        return offsets

    def __len__(self) -> int:
        return self.num_frames

    def close(self) -> None:
        """Close the file; further reads raise ``ValueError``."""
        self._file.close()

    def _read(self, index: int, nbytes: int) -> bytearray:
        index = int(index)
        if not 0 <= index < self.num_frames:
            raise IndexError(f"frame {index} out of range for {self.num_frames} frames")
        buf = bytearray(nbytes)
        self._file.seek(self._offsets[index])
        if self._file.readinto(buf) != nbytes:
            raise AdmError(
                f"{self.where} ended inside frame {index} (was it truncated while reading?)"
            )
        return buf

    def _plane(self, buf: bytearray | memoryview, shape: tuple[int, int], index: int) -> np.ndarray:
        return decode_plane(
            buf, shape, self.bitdepth, check_range=self.check_range, where=self.where,
            index=index, pixel_format=self.pixel_format, colorspace=self.header.colorspace,
        )  # fmt: skip

    def fileno(self) -> int:
        """The open file's descriptor, for positioned reads (``os.preadv``)."""
        return self._file.fileno()

    def luma_offset(self, index: int) -> int:
        """Byte offset of frame ``index``'s Y plane (just after its FRAME marker)."""
        index = int(index)
        if not 0 <= index < self.num_frames:
            raise IndexError(f"frame {index} out of range for {self.num_frames} frames")
        return self._offsets[index]

    def read_luma(self, index: int) -> np.ndarray:
        """Return the Y plane of frame ``index``.

        Parameters
        ----------
        index : int
            Frame number, from 0.

        Returns
        -------
        numpy.ndarray
            C-contiguous, shape ``(height, width)``, ``uint8`` for 8 bits and
            ``uint16`` otherwise.
        """
        buf = self._read(index, self.luma_size)
        return self._plane(buf, (self.height, self.width), index)

    def read_planes(self, index: int) -> tuple[np.ndarray, ...]:
        """Return all planes of frame ``index`` (Y, U, V; Y only for mono)."""
        buf = memoryview(self._read(index, self.frame_size))
        return decode_planes(
            buf, self.width, self.height, self.pixel_format, self.bitdepth,
            check_range=self.check_range, where=self.where, index=index,
            colorspace=self.header.colorspace,
        )  # fmt: skip

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the Y plane of every whole frame, in order."""
        return self.iter_luma()

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]:
        """Yield the Y planes of frames ``start``, ``start + 1``, ... in order.

        Parameters
        ----------
        start : int, optional
            First frame; earlier frames are not read.
        count : int, optional
            At most this many frames; all the rest by default.
        """
        stop = self.num_frames if count is None else min(self.num_frames, start + count)
        for index in range(max(start, 0), stop):
            yield self.read_luma(index)

    def __repr__(self) -> str:
        return (
            f"Y4mReader({str(self.path)!r}, width={self.width}, height={self.height}, "
            f"C{self.header.colorspace}, bitdepth={self.bitdepth}, frames={self.num_frames})"
        )

"""The raw YUV file reader (:class:`YuvReader`), and what every file reader shares: the
input file's checks, the ``close()`` surface, and frames read by position."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.closing import Closing
from admcuda.errors import AdmError
from admcuda.io.formats import (
    LINE_UP_ROWS,
    check_geometry,
    check_rows_line_up,
    decode_plane,
    decode_planes,
    frame_bytes,
    normalize_format,
    warn_if_narrower,
    warn_if_wider,
)
from admcuda.io.names import size_from_name

__all__ = ["ClosingReader", "PositionedFrames", "YuvReader", "check_input_file"]

_log = logging.getLogger("admcuda")

# Luma bytes of a frame looked at on opening for a sign of a wrong bit depth (an even
# number: the samples' byte positions stay in step).
_LOOK_BYTES = 1 << 22


def check_input_file(path: Path, where: str, kind: str) -> int:
    """Refuse a missing, directory, unreadable or empty input; return its size.

    Parameters
    ----------
    path : pathlib.Path
    where : str
        How messages name the file, e.g. ``"reference file '/clips/a.yuv'"``.
    kind : str
        What the file should be, for the directory message (``"raw YUV file"``).

    Returns
    -------
    int
        Size in bytes, at least 1.

    Raises
    ------
    AdmError
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        raise AdmError(f"{where} not found") from None
    except OSError as exc:
        raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if path.is_dir():
        raise AdmError(f"{where} is a directory, not a {kind}")
    if not os.access(path, os.R_OK):
        raise AdmError(f"{where} cannot be read: permission denied")
    if info.st_size == 0:
        raise AdmError(f"{where} is empty")
    return info.st_size


class ClosingReader(Closing):
    """The context-manager surface every frame reader shares: ``with reader:`` closes it
    (its ``close()``) on the way out."""


class PositionedFrames:
    """``iter_frame_bytes`` for a file reader that reads frames by position (raw and Y4M
    files): it needs ``num_frames``, ``frame_size``, ``luma_size``, ``width``,
    ``height``, ``where``, ``fileno()``, ``luma_offset()`` and ``_plane()``."""

    def iter_frame_bytes(
        self, stop: int | None = None, *, check_from: int = 0, check_every: int = 1
    ) -> Iterator[memoryview]:
        """Yield the bytes of whole frames ``0, 1, ...`` before ``stop``: each frame's
        planes as one view (a partial last frame is left out, as ``num_frames``; a Y4M
        FRAME marker too).

        The view is reused for the next frame: consume it first. Frames
        ``check_from``, ``check_from + check_every``, ... have their luma checked as
        ``read_luma`` checks it (the frames a selection reads by position). Reads by
        position, one frame at a time, so a thread may run it while another reads
        frames.
        """
        r: Any = self
        stop = r.num_frames if stop is None else min(r.num_frames, stop)
        frame = memoryview(bytearray(r.frame_size))
        fd = r.fileno()
        for index in range(stop):
            if os.preadv(fd, [frame], r.luma_offset(index)) != r.frame_size:
                raise AdmError(
                    f"{r.where} ended inside frame {index} (was it truncated while reading?)"
                )
            if index >= check_from and not (index - check_from) % check_every:
                r._plane(frame[: r.luma_size], (r.height, r.width), index)  # noqa: SLF001
            yield frame


class YuvReader(PositionedFrames, ClosingReader):
    """Read luma planes from a raw planar YUV file.

    Chroma is skipped by seeking, so only the luma bytes of each frame are read.
    Use as a context manager, or call :meth:`close`.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    width, height : int
        Luma size in pixels, both > 16.
    pixel_format : {"420", "422", "444", "400"}, optional
        Chroma layout, default ``"420"``.
    bitdepth : {8, 10, 12, 16}, optional
        Bits per sample, default 8.
    label : str, optional
        How messages name the file, e.g. ``"reference"``.
    check_range : bool, optional
        For 10 and 12 bits, refuse samples that do not fit the bit depth (a sign
        of a wrong ``bitdepth``). Default True.
    allow_partial_frame : bool, optional
        Read a file whose size is not a whole number of frames (its whole frames, with a
        warning on the ``admcuda`` logger). By default that is an error: the size, layout
        or bit depth given most likely does not fit the file.
    bitdepth_stated : bool, optional
        ``bitdepth`` was given (default), rather than assumed: an 8-bit file whose first
        frame looks like 10- or 12-bit samples then gets a warning; otherwise an error
        (:func:`~admcuda.io.formats.warn_if_wider`).

    Attributes
    ----------
    num_frames : int
        Number of whole frames in the file.

    Raises
    ------
    AdmError
        If the geometry is not supported, or the file is missing, a directory,
        empty, smaller than one frame, or (without ``allow_partial_frame``) not a whole
        number of frames.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        width: int,
        height: int,
        pixel_format: str | int = "420",
        bitdepth: int = 8,
        label: str = "input",
        check_range: bool = True,
        allow_partial_frame: bool = False,
        bitdepth_stated: bool = True,
    ) -> None:
        check_geometry(width, height, pixel_format, bitdepth)
        self.path = Path(path)
        self.width = width
        self.height = height
        self.pixel_format = normalize_format(pixel_format)
        self.bitdepth = bitdepth
        self.label = label
        self.check_range = check_range
        self.dtype = np.dtype(np.uint8) if bitdepth == 8 else np.dtype("<u2")
        self.frame_size = frame_bytes(width, height, self.pixel_format, bitdepth)
        self.luma_size = width * height * self.dtype.itemsize

        where = f"{label} file {str(self.path)!r}"
        self.where = where
        size = check_input_file(self.path, where, "raw YUV file")
        geometry = f"{width}x{height} {self.pixel_format} {bitdepth}-bit"
        if size < self.frame_size:
            guess = size_from_name(self.path)
            hint = ""
            if guess and guess != (width, height):
                scale = "; --scale NAME reads it so and scales it" if label == "distorted" else ""
                hint = f" (the name suggests {guess[0]}x{guess[1]}{scale})"
            raise AdmError(
                f"{where} has {size} bytes, less than one {geometry} frame "
                f"({self.frame_size} bytes); check --width/--height/--pixel-format/--bitdepth"
                f"{hint}"
            )
        self.num_frames = size // self.frame_size
        trailing = size % self.frame_size
        if trailing and not allow_partial_frame:
            guess = size_from_name(self.path)
            hint = ""
            if guess and guess != (width, height):
                hint = f" (the name suggests {guess[0]}x{guess[1]})"
            whole = f"{self.num_frames} whole frame{'' if self.num_frames == 1 else 's'}"
            raise AdmError(
                f"{where} has {size} bytes, not a whole number of {geometry} frames of "
                f"{self.frame_size} bytes: {whole} and {trailing} bytes over; check "
                f"--width/--height/--pixel-format/--bitdepth{hint}, or give "
                "--allow-partial-frame if the file really ends in a partial frame"
            )
        if trailing:
            _log.warning(
                "%s: size %d is not a multiple of the %s frame size %d; "
                "scoring its %d whole frames and ignoring the last %d bytes",
                where, size, geometry, self.frame_size, self.num_frames, trailing,
            )  # fmt: skip
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
        try:
            if bitdepth == 8:
                self._warn_if_wider(geometry, bitdepth_stated)
            else:
                self._warn_if_narrower(geometry)
            self._check_rows_line_up(geometry)
        except BaseException:
            self._file.close()
            raise

    kind = "yuv"

    def _warn_if_wider(self, geometry: str, stated: bool) -> None:
        """:func:`warn_if_wider` on the first luma plane."""
        if self.width % 2:
            return  # odd rows would mix the byte positions
        try:  # the first rows tell: a huge frame is not read whole to open the file
            plane = self._read(0, min(self.luma_size, _LOOK_BYTES), 0)
        except AdmError:
            return
        warn_if_wider(plane, self.width, self.where, geometry, stated=stated)

    def _check_rows_line_up(self, geometry: str) -> None:
        """:func:`check_rows_line_up` on rows from the middle of the first frame, and of
        the middle frame where the first is flat (a fade from black)."""
        if self.width == self.height:
            return
        count = LINE_UP_ROWS * max(self.width, self.height) + 2 * min(self.width, self.height)
        count = min(count, self.width * self.height)
        start = (self.width * self.height - count) // 2
        size = self.dtype.itemsize
        for index in sorted({0, self.num_frames // 2}):
            try:
                buf = self._read(index * self.frame_size + start * size, count * size, index)
            except AdmError:
                return
            window = np.frombuffer(buf, self.dtype)
            if int(window.max()) != int(window.min()):
                check_rows_line_up(window, self.width, self.height, self.where, geometry)
                return

    def _warn_if_narrower(self, geometry: str) -> None:
        """:func:`warn_if_narrower` on the luma of the first, middle and last frames (a
        dark first frame alone would fit in fewer bits)."""
        if self.bitdepth not in (12, 16):
            return
        peak = 0
        for index in sorted({0, self.num_frames // 2, self.num_frames - 1}):
            try:
                size = min(self.luma_size, _LOOK_BYTES)
                buf = self._read(index * self.frame_size, size, index)
            except AdmError:
                return
            peak = max(peak, int(np.frombuffer(buf, "<u2").max()))
        warn_if_narrower(peak, self.bitdepth, self.where, geometry)

    def __len__(self) -> int:
        return self.num_frames

    def close(self) -> None:
        """Close the file; further reads raise ``ValueError``."""
        self._file.close()

    def _read(self, offset: int, nbytes: int, index: int) -> bytearray:
        buf = bytearray(nbytes)
        self._file.seek(offset)
        got = self._file.readinto(buf)
        if got != nbytes:
            raise AdmError(
                f"{self.label} file {str(self.path)!r} ended inside frame {index} "
                "(was it truncated while reading?)"
            )
        return buf

    def _plane(self, buf: bytearray, shape: tuple[int, int], index: int) -> np.ndarray:
        return decode_plane(
            buf, shape, self.bitdepth, check_range=self.check_range, where=self.where,
            index=index, pixel_format=self.pixel_format,
        )  # fmt: skip

    def _check_index(self, index: int) -> int:
        index = int(index)
        if not 0 <= index < self.num_frames:
            raise IndexError(f"frame {index} out of range for {self.num_frames} frames")
        return index

    def fileno(self) -> int:
        """The open file's descriptor, for positioned reads (``os.preadv``)."""
        return self._file.fileno()

    def luma_offset(self, index: int) -> int:
        """Byte offset of frame ``index``'s Y plane in the file."""
        return self._check_index(index) * self.frame_size

    def read_luma(self, index: int) -> np.ndarray:
        """Return the Y plane of frame ``index``.

        Parameters
        ----------
        index : int
            Frame number, from 0.

        Returns
        -------
        numpy.ndarray
            C-contiguous, writable, shape ``(height, width)``, dtype ``uint8`` for
            8 bits and ``uint16`` otherwise.
        """
        index = self._check_index(index)
        buf = self._read(index * self.frame_size, self.luma_size, index)
        return self._plane(buf, (self.height, self.width), index)

    def read_planes(self, index: int) -> tuple[np.ndarray, ...]:
        """Return all planes of frame ``index`` (Y, U, V; Y only for 4:0:0).

        Parameters
        ----------
        index : int
            Frame number, from 0.

        Returns
        -------
        tuple of numpy.ndarray
            Same dtype and layout rules as :meth:`read_luma`.
        """
        index = self._check_index(index)
        buf = self._read(index * self.frame_size, self.frame_size, index)
        return decode_planes(
            buf, self.width, self.height, self.pixel_format, self.bitdepth,
            check_range=self.check_range, where=self.where, index=index,
        )  # fmt: skip

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the Y plane of every whole frame, in order."""
        return self.iter_luma()

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]:
        """Yield the Y planes of frames ``start``, ``start + 1``, ... in order.

        Parameters
        ----------
        start : int, optional
            First frame; frames before it are skipped without being read.
        count : int, optional
            At most this many frames; all the rest by default.

        Yields
        ------
        numpy.ndarray
            As :meth:`read_luma`.
        """
        stop = self.num_frames if count is None else min(self.num_frames, start + count)
        for index in range(max(start, 0), stop):
            yield self.read_luma(index)

    def __repr__(self) -> str:
        return (
            f"YuvReader({str(self.path)!r}, width={self.width}, height={self.height}, "
            f"pixel_format={self.pixel_format!r}, bitdepth={self.bitdepth}, "
            f"frames={self.num_frames})"
        )

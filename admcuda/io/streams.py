"""Inputs that can be read only once, in order: standard input, pipes, devices.

``-`` is standard input; a named pipe (``mkfifo``), a character device and a
``/dev/fd/N`` that is not a regular file (bash's process substitution,
``<(ffmpeg ...)``) are streams too. A stream cannot seek, so it is read front to
back exactly once, one frame at a time (memory stays bounded, nothing goes to a
temporary file)::

    ffmpeg -i dis.mp4 -f yuv4mpegpipe - | admcuda score ref.y4m -
    admcuda score <(ffmpeg -i ref.mkv -f yuv4mpegpipe -) <(ffmpeg -i dis.mkv -f yuv4mpegpipe -)

:func:`open_stream` opens one and reads its first bytes to tell what it holds: a
Y4M stream starts with ``YUV4MPEG2`` (its header line is parsed then); anything
else is raw planar YUV, whose geometry must come from ``-w``/``-h``. An encoded
video (MP4, Matroska, MPEG-TS, ...) on a stream is refused with a hint, because
ffmpeg would need to seek in most of them. The bytes read to decide are kept
and handed out first, so no frame data is lost.

:class:`StreamReader` reads the frames: whole frames in order, luma kept and
chroma dropped, the frames before ``start`` read and dropped. Each input is read
by its own thread in the pipeline, so two streams fed by two writers (two
ffmpeg processes) cannot block each other.

A thread blocked in ``read(2)`` on a pipe whose writer has gone quiet cannot be woken,
so a stream is read only once ``poll(2)`` says it has bytes (or has ended), and
:meth:`Stream.interrupt` wakes such a wait from another thread: on Ctrl-C the
pipeline ends its readers at once instead of waiting for the writer's next bytes.
"""

from __future__ import annotations

import io
import logging
import os
import select
import stat
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.ffmpeg import SNIFF_BYTES, container_of
from admcuda.io.formats import (
    check_geometry,
    decode_plane,
    frame_bytes,
    frame_mismatch,
    warn_if_narrower,
    warn_if_wider,
)
from admcuda.io.raw import ClosingReader
from admcuda.io.y4m import (
    MAGIC,
    MARKER_PROBE,
    MAX_FRAME_MARKER,
    MAX_HEADER,
    Y4mHeader,
    frame_marker_problem,
    parse_header,
    warn_if_interlaced,
)

__all__ = [
    "STDIN",
    "IterSource",
    "PendingRead",
    "Stream",
    "StreamReader",
    "is_stream",
    "open_stream",
]

STDIN = "-"
"""The name that stands for standard input."""

_BUFFER = 1 << 16

_log = logging.getLogger("admcuda")

# Streams closed before any frame byte was read, by (device, inode): opening the same
# stream again in this process takes it back, first bytes and all, instead of opening a
# stream that has lost them (a caller may open its inputs twice, e.g. to retry).
_PARKED: dict[tuple[int, int], Stream] = {}
_PARKED_LOCK = threading.Lock()


class _Interrupted(Exception):
    """Raised inside a read of a stream that :meth:`Stream.interrupt` ended."""


class _WakeableFile(io.RawIOBase):
    """A stream's descriptor read only when ``poll(2)`` says it is readable, so that
    :meth:`interrupt`, from any thread, ends a read waiting on an idle writer.

    The wake-up is a pipe of its own: once written to, every poll returns at once, so a
    read under way and every later one raise :class:`_Interrupted`. Not
    :class:`InterruptedError`: the buffered layer retries a read that fails with EINTR.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._wake_read, self._wake_write = os.pipe()
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._poll.register(self._wake_read, select.POLLIN)
        self._lock = threading.Lock()  # interrupt() never writes to a closed pipe

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        events = self._poll.poll()
        if any(fd == self._wake_read for fd, _ in events):
            raise _Interrupted
        return os.readv(self._fd, [buffer])

    def interrupt(self) -> None:
        with self._lock:
            if not self.closed:
                os.write(self._wake_write, b"x")

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                for fd in (self._fd, self._wake_read, self._wake_write):
                    os.close(fd)
            super().close()


def _open_file(fd: int) -> io.BufferedReader:
    """``fd`` buffered; wakeable where ``poll(2)`` is there (not on Windows)."""
    if not hasattr(select, "poll"):  # pragma: no cover - not POSIX
        return open(fd, "rb", buffering=_BUFFER)  # noqa: SIM115 - Stream.close
    try:
        raw = _WakeableFile(fd)
    except OSError:  # no descriptors left for the wake-up pipe: read as before
        return open(fd, "rb", buffering=_BUFFER)  # noqa: SIM115 - Stream.close
    return io.BufferedReader(raw, _BUFFER)


def _identity(name: str) -> tuple[int, int] | None:
    try:
        info = os.fstat(0) if name == STDIN else os.stat(name)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def is_stream(path: str | os.PathLike[str]) -> bool:
    """True for ``-``, named pipes, sockets, character devices and ``/dev/fd/N``
    that are not regular files: inputs that can be read only once, in order."""
    if os.fspath(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _where(path: str, label: str) -> str:
    if path == STDIN:
        return f"{label} file '-' (standard input)"
    return f"{label} file {path!r}"


class Stream:
    """An opened stream and what its first bytes say it holds.

    Made by :func:`open_stream`. The bytes read to tell the kind are kept and
    come first from :meth:`readinto` and :meth:`readline`.

    Attributes
    ----------
    path : pathlib.Path
    label, where : str
        How messages name it.
    format : {"y4m", "raw"}
    header : Y4mHeader or None
        The parsed Y4M header (already read off the stream).
    header_bytes : bytes
        The header line as read, newline included (empty for raw).
    """

    def __init__(self, path: str, label: str, file: io.BufferedReader) -> None:
        self.path = Path(path)
        self.label = label
        self.where = _where(path, label)
        self._file = file
        self._identity = _identity(path)
        self._sniffed = self._touched = self._interrupted = False
        self._prefix = bytearray()
        self.format = "raw"
        self.header: Y4mHeader | None = None
        self.header_bytes = b""

    def _read_upto(self, n: int) -> bytes:
        """Up to ``n`` bytes, fewer only at the end of the stream."""
        parts, got = [], 0
        while got < n:
            data = self._call(self._file.read, n - got)
            if not data:
                break
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    def _call(self, method, *args):  # type: ignore[no-untyped-def]
        try:
            return method(*args)
        except OSError as exc:
            raise AdmError(f"{self.where} cannot be read: {exc.strerror or exc}") from None
        except ValueError:  # closed while a read was under way
            raise AdmError(f"{self.where} was closed while reading") from None
        except _Interrupted:
            raise AdmError(f"{self.where}: reading was interrupted") from None

    def _sniff(self) -> None:
        head = self._read_upto(len(MAGIC))
        if not head:
            raise AdmError(f"{self.where} is empty: nothing was written to it")
        if head == MAGIC:
            line = head + self._call(self._file.readline, MAX_HEADER - len(head))
            try:
                self.header = parse_header(line)
            except AdmError as exc:
                raise AdmError(f"{self.where}: {exc}") from None
            self.header_bytes = line[: self.header.size]
            self.format = "y4m"
            return
        head += self._read_upto(SNIFF_BYTES - len(head))
        container = container_of(head)
        if container is not None:
            raise AdmError(
                f"{self.where} holds {container} data, which cannot be decoded from a "
                "stream; pipe Y4M instead (ffmpeg -i IN -f yuv4mpegpipe -), or raw frames "
                "with -w and -h"
            )
        self._prefix += head

    def _relabel(self, path: str, label: str) -> None:
        self.path, self.label, self.where = Path(path), label, _where(path, label)

    def readinto(self, view: memoryview) -> int:
        """Fill ``view``; fewer bytes only at the end of the stream."""
        self._touched = True
        got = 0
        if self._prefix:
            got = min(len(self._prefix), len(view))
            view[:got] = self._prefix[:got]
            del self._prefix[:got]
        while got < len(view):
            n = self._call(self._file.readinto, view[got:])
            if not n:
                break
            got += n
        return got

    def readline(self, limit: int) -> bytes:
        """Bytes up to and including a newline, at most ``limit`` of them."""
        self._touched = True
        if self._prefix:
            end = self._prefix.find(b"\n", 0, limit)
            take = end + 1 if end >= 0 else min(limit, len(self._prefix))
            line = bytes(self._prefix[:take])
            del self._prefix[:take]
            if end >= 0 or len(line) == limit or self._prefix:
                return line
            return line + self._call(self._file.readline, limit - len(line))
        return self._call(self._file.readline, limit)

    def interrupt(self) -> None:
        """End a read of this stream under way in another thread, now, and every later
        one: they raise :class:`AdmError`. For stopping early (Ctrl-C): a read waiting on
        a writer that sends nothing would otherwise wait for as long as the writer does."""
        self._interrupted = True
        raw = getattr(self._file, "raw", None)
        wake = getattr(raw, "interrupt", None)
        if wake is not None:
            wake()

    def close(self) -> None:
        """Close the stream's descriptor (standard input itself stays open).

        A stream of which no frame byte was read is kept open instead, for
        :func:`open_stream` to hand back if the same stream is opened again. A read
        under way in another thread is interrupted first: closing would wait for it.
        """
        if (
            self._sniffed
            and not self._touched
            and not self._interrupted
            and self._identity is not None
        ):
            with _PARKED_LOCK:
                if self._identity not in _PARKED:
                    _PARKED[self._identity] = self
                    return
        self.interrupt()
        self._file.close()


def open_stream(path: str | os.PathLike[str], *, label: str = "input") -> Stream:
    """Open a stream input and read its first bytes to tell Y4M from raw.

    Opening a named pipe waits for its writer, and telling the kind waits for the
    first :data:`~admcuda.io.ffmpeg.SNIFF_BYTES` bytes (or the end of the stream).

    Parameters
    ----------
    path : str or os.PathLike
        ``-`` for standard input, a named pipe, a character device or ``/dev/fd/N``.
    label : str, optional
        How messages name it, e.g. ``"reference"``.

    Returns
    -------
    Stream

    Raises
    ------
    AdmError
        If it cannot be opened, standard input is a terminal, the stream is empty,
        its Y4M header is bad, or it holds encoded video.
    """
    name = os.fspath(path)
    where = _where(name, label)
    identity = _identity(name)
    with _PARKED_LOCK:
        parked = _PARKED.pop(identity, None) if identity is not None else None
    if parked is not None:
        parked._relabel(name, label)
        return parked
    try:
        if name == STDIN:
            if os.isatty(0):
                raise AdmError(
                    f"{where} is a terminal: pipe Y4M or raw frames into it "
                    "(ffmpeg -i IN -f yuv4mpegpipe - | ...)"
                )
            fd = os.dup(0)
        else:
            fd = os.open(name, os.O_RDONLY)
    except FileNotFoundError:
        raise AdmError(f"{where} not found") from None
    except OSError as exc:
        raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
    stream = Stream(name, label, _open_file(fd))
    try:
        stream._sniff()
    except BaseException:
        stream.close()
        raise
    stream._sniffed = True
    return stream


class StreamReader(ClosingReader):
    """Luma frames of a stream (:func:`open_stream`), read once, in order.

    Parameters
    ----------
    stream : Stream
    width, height : int, optional
        Required for a raw stream; a Y4M stream takes them from its header, and
        values given must agree with it.
    pixel_format : {"420", "422", "444", "400"}, optional
        Raw layout, default ``"420"``.
    bitdepth : {8, 10, 12, 16}, optional
        Raw bit depth, default 8.
    check_range : bool, optional
        For 10 and 12 bits, refuse samples that do not fit the bit depth.

    Attributes
    ----------
    kind : "stream"
    stream_format : {"y4m", "raw"}
    num_frames : None
        Not known until the stream ends; ``len()`` is not available.

    Raises
    ------
    AdmError
        If a raw stream has no size, or a given setting contradicts a Y4M header.
    """

    kind = "stream"
    num_frames: int | None = None

    def __init__(
        self,
        stream: Stream,
        *,
        width: int | None = None,
        height: int | None = None,
        pixel_format: str | None = None,
        bitdepth: int | None = None,
        check_range: bool = True,
        bitdepth_stated: bool | None = None,
    ) -> None:
        self.stream = stream
        self.path, self.label, self.where = stream.path, stream.label, stream.where
        self.stream_format = stream.format
        self.check_range = check_range
        # a raw 8-bit stream whose first frame looks 10- or 12-bit: a warning where the 8
        # bits were stated, an error where they are the default
        self.bitdepth_stated = bitdepth is not None if bitdepth_stated is None else bitdepth_stated
        if stream.header is not None:
            header = stream.header
            geometry = (header.width, header.height, header.pixel_format, header.bitdepth)
            given = (width, height, pixel_format, bitdepth)
            for name, value, actual in zip(("width", "height", "pixel format", "bit depth"),
                                           given, geometry, strict=True):  # fmt: skip
                if value is not None and str(value) != str(actual):
                    raise AdmError(f"{self.where} is a Y4M stream of {name} {actual}, not {value}")
            warn_if_interlaced(self.where, header)
        else:
            if width is None or height is None:
                raise AdmError(f"{self.where} is not Y4M: for raw YUV frames give -w and -h")
            geometry = (width, height, pixel_format or "420", bitdepth or 8)
        check_geometry(*geometry)
        self.width, self.height, self.pixel_format, self.bitdepth = geometry
        self.frame_size = frame_bytes(*geometry)
        self.luma_size = self.width * self.height * (1 if self.bitdepth == 8 else 2)
        self._chroma = bytearray(self.frame_size - self.luma_size)
        self._skip: bytearray | None = None
        self._used = False
        self._colorspace = None if stream.header is None else stream.header.colorspace

    def claim(self) -> None:
        """Take the stream's one pass; a second call raises :class:`AdmError`."""
        if self._used:
            raise AdmError(f"{self.where} is a stream and can be read only once")
        self._used = True

    def interrupt(self) -> None:
        """End a read under way in another thread (:meth:`Stream.interrupt`)."""
        self.stream.interrupt()

    def close(self) -> None:
        """Close the stream."""
        self.stream.close()

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the Y plane of every frame, in order (the one pass)."""
        return self.iter_luma()

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]:
        """Yield the Y planes of frames ``start``, ``start + 1``, ... (the one pass).

        Frames before ``start`` are read and dropped.

        Parameters
        ----------
        start : int, optional
        count : int, optional
            At most this many frames after ``start``; all the rest by default.

        Raises
        ------
        AdmError
            At once when called a second time; while reading, for a stream with
            no whole frame or a sample too large for the bit depth. A partial or
            badly framed frame ends the stream with a warning.
        """
        self.claim()
        return self._frames(max(int(start), 0), count)

    def iter_planes(
        self, start: int = 0, count: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """As :meth:`iter_luma` (the one pass), each frame's luma plane with its chroma:
        the Cb and Cr samples as the frame holds them, flat (:meth:`chroma_samples`,
        none for 4:0:0), checked as the luma is."""
        self.claim()
        return self._frames(max(int(start), 0), count, chroma=True)

    def chroma_samples(self) -> int:
        """Samples of a frame's Cb and Cr planes together."""
        return len(self._chroma) // (1 if self.bitdepth == 8 else 2)

    def _frames(self, start: int, count: int | None, *, chroma: bool = False) -> Iterator[Any]:
        index = delivered = 0
        while count is None or delivered < count:
            keep = index >= start
            plane = self._next_frame(index, keep)
            if plane is None:
                return
            if keep:
                delivered += 1
                if chroma:
                    samples = (1, self.chroma_samples())
                    yield plane, self._decode(self._chroma, index, samples).reshape(-1).copy()
                else:
                    yield plane
            index += 1

    def _end(self, index: int, problem: str) -> None:
        if index == 0:
            raise AdmError(f"{self.where} holds no whole frame: {problem}")
        _log.warning(
            "%s: %s; scoring the %d whole frames before it", self.where, problem, index
        )  # fmt: skip

    def _marker(self, index: int) -> bool:
        marker = self.stream.readline(MAX_FRAME_MARKER)
        if len(marker) < MARKER_PROBE:  # a short line, or the end of the stream
            more = bytearray(MARKER_PROBE - len(marker))
            got = self.stream.readinto(memoryview(more))
            if len(marker) + got < MARKER_PROBE:  # libvmaf's end of file: no warning
                if index == 0:
                    raise AdmError(f"{self.where} has a Y4M header but no frames")
                return False
            marker += bytes(more)
        problem = frame_marker_problem(
            marker,
            ended=len(marker) < MAX_FRAME_MARKER,  # fewer bytes than asked for: it ended
            at=f"of frame {index}",
            before=f"before frame {index}",
        )
        if problem is not None:
            self._end(index, problem)
            return False
        return True

    def _read_frame(self, index: int, luma: memoryview, chroma: memoryview) -> bool:
        """Check frame ``index``'s marker and read its planes into ``luma`` and ``chroma``;
        False at the end of the stream (with a warning where it ends inside a frame)."""
        if self.stream_format == "y4m" and not self._marker(index):
            return False
        got = self.stream.readinto(luma)
        if got == self.luma_size:
            got += self.stream.readinto(chroma)
        if got < self.frame_size:
            if got == 0 and self.stream_format == "raw" and index > 0:
                return False
            geometry = f"{self.width}x{self.height} {self.pixel_format} {self.bitdepth}-bit"
            hint = "; check -w/-h/-p/-b" if self.stream_format == "raw" and index == 0 else ""
            self._end(
                index, f"it ends inside frame {index} ({got} of {self.frame_size} bytes "
                f"of a {geometry} frame{hint})",
            )  # fmt: skip
            return False
        if index == 0 and self.stream_format == "raw":
            geometry = f"{self.width}x{self.height} {self.pixel_format} {self.bitdepth}-bit"
            if self.bitdepth == 8:
                warn_if_wider(luma, self.width, self.where, geometry, stated=self.bitdepth_stated)
            else:
                peak = int(np.frombuffer(luma, "<u2").max())
                warn_if_narrower(peak, self.bitdepth, self.where, geometry)
        return True

    def _decode(
        self, luma: bytearray | memoryview, index: int, shape: tuple[int, int] | None = None
    ) -> np.ndarray:
        return decode_plane(
            luma,
            (self.height, self.width) if shape is None else shape,
            self.bitdepth,
            check_range=self.check_range,
            where=self.where,
            index=index,
            pixel_format=self.pixel_format,
            colorspace=self._colorspace,
        )

    def _next_frame(self, index: int, keep: bool) -> np.ndarray | None:
        """Read frame ``index``; its luma plane (``keep``), an empty array (not kept),
        or None at the end of the stream."""
        luma = bytearray(self.luma_size) if keep or self._skip is None else self._skip
        if not keep:
            self._skip = luma
        if not self._read_frame(index, memoryview(luma), memoryview(self._chroma)):
            return None
        if not keep:
            return np.empty(0, np.uint8)
        return self._decode(luma, index)

    def iter_frame_bytes(
        self, stop: int | None = None, *, check_from: int = 0
    ) -> Iterator[memoryview]:
        """Yield the bytes of frames ``0, 1, ...`` before ``stop`` (the one pass): each
        whole frame's planes as one view, its FRAME marker checked and left out.

        The view is reused for the next frame: consume it first. Frames from
        ``check_from`` on have their luma checked as :meth:`iter_luma` checks it.

        Raises
        ------
        AdmError
            As :meth:`iter_luma`.
        """
        self.claim()
        return self._frame_bytes(stop, max(int(check_from), 0))

    def _frame_bytes(self, stop: int | None, check_from: int) -> Iterator[memoryview]:
        frame = memoryview(bytearray(self.frame_size))
        luma, chroma = frame[: self.luma_size], frame[self.luma_size :]
        index = 0
        while stop is None or index < stop:
            if not self._read_frame(index, luma, chroma):
                return
            if index >= check_from:
                self._decode(luma, index)
            yield frame
            index += 1

    def __repr__(self) -> str:
        return (
            f"StreamReader({str(self.path)!r}, {self.stream_format}, width={self.width}, "
            f"height={self.height}, pixel_format={self.pixel_format!r}, "
            f"bitdepth={self.bitdepth})"
        )


# -- frames from any stream into a pipeline's slots


class PendingRead:
    """Frames being read into a slot: ``wait()`` gives how many arrived (``count``, or the
    sum of what the reads return where it is None)."""

    def __init__(self, count: int | None, futures: Sequence[Future[Any]]) -> None:
        self._count, self._futures = count, futures

    def wait(self) -> int:
        results = [f.result() for f in self._futures]
        return self._count if self._count is not None else int(sum(results))


class IterSource:
    """Frames from a :class:`~admcuda.io.inputs.FrameStream` (encoded video through ffmpeg,
    or any reader), copied one by one into the caller's buffer: a pipeline source
    (:mod:`admcuda.pipeline` hands it on under its own name)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.reader = stream.reader
        self._frames: Iterator[np.ndarray] = iter(stream)
        available = stream.available
        self.available = available
        self.scored = None if available is None else -(-available // stream.subsample)

    @property
    def read(self) -> int:
        return self.stream.read

    @property
    def skip(self) -> int:
        return getattr(self.stream, "skip", 0)

    @property
    def chroma(self) -> bool:
        """The stream reads chroma planes (it was opened for them)."""
        return bool(getattr(self.stream, "chroma", False))

    def start(
        self,
        out: np.ndarray,
        n: int,
        pool: ThreadPoolExecutor,
        chroma: np.ndarray | None = None,
    ) -> PendingRead:
        """Start reading the next ``n`` frames into ``out[:n]``, and their chroma planes
        (Cb then Cr, flat) into ``chroma[:n]`` where given (a stream opened for them)."""
        return PendingRead(None, [pool.submit(self.fill, out, n, chroma)])

    def fill(self, out: Any, n: int, chroma: np.ndarray | None = None) -> int:
        """Copy up to ``n`` frames into ``out[:n]`` (NumPy or CuPy), their chroma into
        ``chroma[:n]`` where given; how many there were. GPU copies are complete when it
        returns."""
        on_gpu = not isinstance(out, np.ndarray)
        read_into = getattr(self.stream, "read_into", None)
        if chroma is not None:
            if on_gpu or read_into is None or not self.chroma:
                raise AdmError("chroma is read into host buffers, from a stream opened for it")
            return read_into(out, n, chroma)
        if not on_gpu and read_into is not None:
            return read_into(out, n)  # decoded straight into the slot where it can be
        count = n
        # GPU frames are kept until their copies are done: a CuPy array dropped earlier could
        # have its memory reused, on the stream it was made on, while the copy still reads it.
        copied = []
        for k in range(n):
            frame = next(self._frames, None)
            if frame is None:
                count = k
                break
            if frame.shape != out.shape[1:] or frame.dtype != out.dtype:
                raise AdmError(frame_mismatch(frame.dtype, frame.shape, out[0]))
            if on_gpu:
                _copy_to_device(out, k, frame)
                copied.append(frame)
            else:
                np.copyto(out[k], frame)
        if on_gpu:
            import cupy as cp

            cp.cuda.get_current_stream().synchronize()  # complete before the engine reads it
        return count

    def has_more(self) -> bool:
        return self.stream.has_more()

    def interrupt(self) -> None:
        """End a read waiting for input (a pipe's idle writer), now: it raises AdmError."""
        self.stream.interrupt()

    def close(self) -> None:
        self.stream.close()


def _copy_to_device(out: Any, k: int, frame: Any) -> None:
    """``out[k] = frame`` on this thread's stream: one copy call for a contiguous CuPy plane
    on ``out``'s device (NVDEC's), CuPy's assignment for anything else."""
    import cupy as cp

    if (
        isinstance(frame, cp.ndarray)
        and frame.flags.c_contiguous
        and out.flags.c_contiguous
        and frame.device.id == out.device.id
    ):
        nbytes = frame.nbytes
        rt = cp.cuda.runtime
        dst = out.data.ptr + k * nbytes
        stream = cp.cuda.get_current_stream().ptr
        rt.memcpyAsync(dst, frame.data.ptr, nbytes, rt.memcpyDeviceToDevice, stream)
    else:
        out[k] = frame

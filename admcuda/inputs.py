"""Open any input (raw YUV, Y4M, encoded video) and pick its frames.

:func:`open_input` decides what a file is by its content first (a Y4M file
starts with ``YUV4MPEG2``), then by its name (``.yuv`` and ``.raw`` are raw
planar YUV; anything else goes to ffmpeg), and returns a reader with the same
surface for all three kinds: ``width``, ``height``, ``bitdepth``,
``pixel_format``, ``num_frames`` (None while unknown, for encoded video),
``iter_luma(start, count)``, iteration, ``close()`` and the context-manager
protocol. Y4M and raw readers also support ``len()``.

:func:`open_inputs` opens a reference and one or more distorted inputs
together. The inputs that describe themselves (Y4M, video) are opened first; a
raw YUV input then takes its size, layout and bit depth from the command line or,
where the command line is silent, from them. Any disagreement is an error: sizes
and bit depths must match, and a flag must agree with the headers it applies to.
Chroma layouts may differ between inputs, as ADM reads luma only (libvmaf would
refuse a mix).

:class:`FrameStream` applies libvmaf's frame controls to one input: skip the
first frames, stop after a number of frames, keep every Nth frame.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from admcuda.errors import AdmError
from admcuda.video import VideoReader
from admcuda.y4m import MAGIC, Y4mReader
from admcuda.yuv import YuvReader, check_geometry, check_input_file, size_from_name

__all__ = [
    "RAW_SUFFIXES",
    "FrameReader",
    "FrameSelection",
    "FrameStream",
    "InputSet",
    "input_kind",
    "open_input",
    "open_inputs",
    "size_from_name",
]

RAW_SUFFIXES: tuple[str, ...] = (".yuv", ".raw")


class FrameReader(Protocol):
    """What every reader returned by :func:`open_input` offers."""

    @property
    def kind(self) -> str: ...  # "yuv", "y4m" or "video"

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
    def num_frames(self) -> int | None: ...  # None while unknown (encoded video)

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]: ...

    def __iter__(self) -> Iterator[np.ndarray]: ...

    def close(self) -> None: ...


def input_kind(path: str | os.PathLike[str], *, label: str = "input") -> str:
    """``"y4m"``, ``"yuv"`` or ``"video"``: what :func:`open_input` would open.

    Raises
    ------
    AdmError
        If the file is missing, a directory, unreadable or empty.
    """
    path = Path(path)
    where = f"{label} file {str(path)!r}"
    check_input_file(path, where, "video file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(MAGIC))
    except OSError as exc:
        raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if head == MAGIC or path.suffix.lower() == ".y4m":
        return "y4m"
    if path.suffix.lower() in RAW_SUFFIXES:
        return "yuv"
    return "video"


def _raw_size_error(path: Path, where: str) -> AdmError:
    guess = size_from_name(path)
    hint = f" (the name suggests {guess[0]}x{guess[1]})" if guess else ""
    return AdmError(f"{where} is raw YUV: give --width and --height{hint}")


def open_input(
    path: str | os.PathLike[str],
    *,
    width: int | None = None,
    height: int | None = None,
    pixel_format: str | None = None,
    bitdepth: int | None = None,
    label: str = "input",
) -> FrameReader:
    """Open a raw YUV, Y4M or encoded video file for its luma frames.

    Parameters
    ----------
    path : str or os.PathLike
    width, height : int, optional
        Required for raw YUV; for the other kinds, checked against the file.
    pixel_format : {"420", "422", "444", "400"}, optional
        Raw YUV layout (default ``"420"``); checked against a Y4M header.
    bitdepth : {8, 10, 12, 16}, optional
        Raw YUV bit depth (default 8); checked against Y4M and video.
    label : str, optional
        How messages name the file, e.g. ``"reference"``.

    Returns
    -------
    FrameReader
        :class:`~admcuda.yuv.YuvReader`, :class:`~admcuda.y4m.Y4mReader` or
        :class:`~admcuda.video.VideoReader`.

    Raises
    ------
    AdmError
        If the file cannot be read as video, raw YUV lacks a size, or a given
        setting contradicts the file.
    """
    path = Path(path)
    where = f"{label} file {str(path)!r}"
    kind = input_kind(path, label=label)
    if kind == "yuv":
        if width is None or height is None:
            raise _raw_size_error(path, where)
        return YuvReader(
            path,
            width=width,
            height=height,
            pixel_format=pixel_format or "420",
            bitdepth=bitdepth or 8,
            label=label,
        )
    reader: Y4mReader | VideoReader = (
        Y4mReader(path, label=label) if kind == "y4m" else VideoReader(path, label=label)
    )
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
) -> InputSet:
    """Open a reference and its distorted inputs, agreeing on one geometry.

    Self-describing inputs (Y4M, video) are opened first. Raw YUV inputs then
    take the size, layout and bit depth given here, or else those of the first
    self-describing input (the reference if it is one), or else 4:2:0 8-bit;
    a raw input with no size from anywhere is an error that quotes any ``WxH``
    in its name.

    Parameters
    ----------
    ref : path
    dis : sequence of path
        At least one.
    width, height, pixel_format, bitdepth : optional
        As for :func:`open_input`; they apply to every input.

    Returns
    -------
    InputSet
        Close it (or use it as a context manager) when done.

    Raises
    ------
    AdmError
        On any unreadable input, or inputs that disagree in size or bit depth.
    """
    if not dis:
        raise AdmError("no distorted input given")
    if width is not None or height is not None:
        check_geometry(width or 17, height or 17, pixel_format or "420", bitdepth or 8)
    paths = [Path(ref), *map(Path, dis)]
    labels = ["reference"] + ["distorted"] * len(dis)
    kinds = [input_kind(p, label=lab) for p, lab in zip(paths, labels, strict=True)]
    readers: list[FrameReader | YuvReader | None] = [None] * len(paths)
    try:
        for i, kind in enumerate(kinds):
            if kind != "yuv":
                readers[i] = open_input(
                    paths[i],
                    width=width,
                    height=height,
                    pixel_format=pixel_format,
                    bitdepth=bitdepth,
                    label=labels[i],
                )
        known = [r for r in readers if r is not None]
        for other in known[1:]:
            _check_same(known[0], other)
        first = known[0] if known else None
        for i, kind in enumerate(kinds):
            if kind != "yuv":
                continue
            if first is None:
                if width is None or height is None:
                    raise _raw_size_error(paths[i], f"{labels[i]} file {str(paths[i])!r}")
                geometry = (width, height, pixel_format or "420", bitdepth or 8)
            else:
                geometry = (
                    width or first.width,
                    height or first.height,
                    pixel_format or first.pixel_format,
                    bitdepth or first.bitdepth,
                )
            readers[i] = YuvReader(
                paths[i],
                width=geometry[0],
                height=geometry[1],
                pixel_format=geometry[2],
                bitdepth=geometry[3],
                label=labels[i],
            )
    except BaseException:
        for reader in readers:
            if reader is not None:
                reader.close()
        raise
    opened: list[FrameReader] = readers  # type: ignore[assignment]
    head = opened[0]
    return InputSet(
        ref=head,
        dis=opened[1:],
        width=head.width,
        height=head.height,
        bitdepth=head.bitdepth,
        pixel_format=head.pixel_format,
    )


def _where(reader: FrameReader) -> str:
    return f"{reader.label} file {str(reader.path)!r}"


def _check_same(first: FrameReader, other: FrameReader) -> None:
    if (other.width, other.height) != (first.width, first.height):
        raise AdmError(
            f"{_where(other)} is {other.width}x{other.height} but "
            f"{_where(first)} is {first.width}x{first.height}"
        )
    if other.bitdepth != first.bitdepth:
        raise AdmError(
            f"{_where(other)} is {other.bitdepth}-bit but {_where(first)} is {first.bitdepth}-bit"
        )


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
        At most this many frames; None for all.
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
            if value is None and name == "frame_cnt":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise AdmError(f"{name} must be an integer >= {low}, got {value!r}")

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

    Attributes
    ----------
    read : int
        Frames read so far, after the skipped ones.
    ended : bool
        The input ran out (as opposed to reaching ``limit``).
    """

    def __init__(
        self, reader: FrameReader, *, skip: int = 0, limit: int | None = None, subsample: int = 1
    ) -> None:
        self.reader = reader
        self.skip = skip
        self.limit = limit
        self.subsample = subsample
        self.read = 0
        self.ended = False
        self._frames = reader.iter_luma(skip, limit)

    @property
    def available(self) -> int | None:
        """Frames after the skipped ones, if the reader knows its length."""
        total = self.reader.num_frames
        if total is None:
            return None
        available = max(total - self.skip, 0)
        return available if self.limit is None else min(available, self.limit)

    def _next(self) -> np.ndarray | None:
        if self.ended or (self.limit is not None and self.read >= self.limit):
            return None
        frame = next(self._frames, None)
        if frame is None:
            self.ended = True
            return None
        self.read += 1
        return frame

    def __iter__(self) -> Iterator[np.ndarray]:
        while True:
            number = self.read
            frame = self._next()
            if frame is None:
                return
            if number % self.subsample == 0:
                yield frame

    def has_more(self) -> bool:
        """Read one more frame, if the limit allows, and say whether there was one."""
        return self._next() is not None

    def close(self) -> None:
        """Stop reading (ends an ffmpeg process early)."""
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()

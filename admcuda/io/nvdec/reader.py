"""Luma planes of encoded video decoded on the GPU by NVDEC, through NVIDIA's PyNvVideoCodec.

:class:`NvdecReader` has the reader surface of :class:`admcuda.io.ffmpeg.VideoReader` (``kind``,
``path``, ``label``, ``where``, ``width``, ``height``, ``bitdepth``, ``pixel_format``,
``num_frames = None``, ``iter_luma(start, count)``, ``close()``), but yields CuPy arrays that
never leave the device: ``(height, width)`` uint8 for 8-bit streams, uint16 holding the 10-bit
value for 10-bit streams. :func:`open_nvdec` opens one, :func:`nvdec_available` says whether
NVDEC can run at all and :func:`nvdec_supports` whether it decodes a given file.

Exactness. H.264, HEVC, AV1 and VP9 decoding is bit-exact by specification, so NVDEC's luma
equals ffmpeg's software decode sample for sample; other codecs NVDEC knows (MPEG-2, MPEG-4,
VC-1, ...) leave the inverse transform's rounding to the decoder and are refused. Only 4:2:0
streams of 8 or 10 bits are read, the layouts tested against ffmpeg. Interlaced H.264 (field or
MBAFF coding, found in the stream's SPS) is refused too: NVDEC deinterlaces it, while ffmpeg
outputs the frames as coded; and H.264 is read as 8-bit 4:2:0 only.

How the binding is used (PyNvVideoCodec 2.2.4's pybind11 docstrings; the behaviour below from
the sources of an earlier 2.x release, and the demuxer's checked on the 2.2.4 wheel):

- ``CreateDemuxer(filename=...)`` opens the container with the libavformat bundled in the
  wheel; H.264/HEVC packets come out in Annex B. Iterating it yields every video packet in
  decode order and then one empty packet (``bsl == 0``); decoding that empty packet sends
  ``CUVID_PKT_ENDOFSTREAM``, which flushes the frames the decoder still holds.
- ``GetDecoderCaps(gpuid=, codec=, chromaformat=, bitdepth=)`` tells whether the GPU's NVDEC
  has the codec and the frame sizes it accepts, checked before a decoder starts.
- ``CreateDecoder(gpuid=, codec=, cudacontext=, cudastream=, usedevicememory=True,
  latency=NATIVE)``: the cuvid parser
  calls back in display order (``ZERO`` latency would give decode order), so ``Decode(packet)``
  returns the frames that became displayable, in display order, as ffmpeg's
  ``-fps_mode passthrough`` does. The decoder crops each surface to the stream's display area
  (a 1920x1088 coded H.264 frame comes out 1920x1080) and copies it into one of its own
  buffers, which the next ``Decode`` call reuses. Given ``cudastream``, ``Decode`` queues that
  copy on it and returns without waiting (checked on the 2.2.4 wheel on an H200: with a
  kernel still running on the stream, the returned frame's buffer was filled only after it;
  without ``cudastream``, ``Decode`` waited for its own copy).
- Each decoded frame exports its whole surface through DLPack: NV12 ``(h * 3 // 2, w)`` uint8,
  or P016 uint16 with the sample in the high bits (``value << 6`` for 10-bit). The luma plane
  is the first ``h`` rows.

So each yielded plane is a fresh CuPy array, copied (8-bit) or shifted down (10-bit) by a
kernel on the stream the session's decoder copies its frames on: the decoder cannot reuse a
buffer before the kernel has read it, and the kernels of a group of frames are waited for
once (:class:`_Finisher`). A plane is complete when it is yielded, so the consumer may read it
on any stream. No frame is copied to the host.

A CUDA driver error inside the binding's decoder set-up ends the process (it logs FATAL and
exits), which is why :func:`nvdec_available` asks CuPy for a device and GPU ordinals are
checked before a decoder is made.

The bit depth is not taken from the container: the bundled libavformat has no decoders, so it
reports 8 bits for 10-bit streams. Opening a reader decodes up to its first frame instead: NV12
surfaces mean 8 bits, P016 surfaces 10 bits once their low 6 bits are found zero (a 12-bit
stream is refused, there and on any later frame).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import logging
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.io.formats import check_geometry, size_change
from admcuda.io.nvdec import hevc
from admcuda.io.nvdec.h264 import (
    SPS_NAL_TYPE,
    SPS_SEARCH_PACKETS,
    annexb_nals,
    sps_layout,
    sps_size,
)
from admcuda.io.nvdec.planner import (
    AUTO_SEGMENT_SESSIONS,
    IDR_NAL_TYPES,
    MIN_SEGMENT_FRAMES,
    SEGMENT_BUFFER_BYTES,
    SEGMENT_BUFFER_SHARE,
    Segment,
    is_idr,
    plan_segments,
    segment_sessions,
)
from admcuda.io.raw import ClosingReader, check_input_file

__all__ = [
    "CODECS",
    "NvdecReader",
    "nvdec_available",
    "nvdec_supports",
    "open_nvdec",
]

#: Codecs read on NVDEC, by PyNvVideoCodec's ``cudaVideoCodec`` name, with their usual names.
CODECS: dict[str, str] = {"H264": "H.264", "HEVC": "HEVC", "AV1": "AV1", "VP9": "VP9"}

# Decoded surface format (PyNvVideoCodec's Pixel_Format name) of the 4:2:0 streams read here,
# and the bit depth it carries.
_SURFACE_BITDEPTH: dict[str, int] = {"NV12": 8, "P016": 10}
# P016 keeps a 10-bit sample in the high bits of 16: value << 6, the low 6 bits zero.
P016_SHIFT = 6
_P016_LOW_BITS = (1 << P016_SHIFT) - 1
# By codec: (shift, mask) of the type in a NAL unit's first byte, the SPS type, and what
# reads an SPS's frame size.
_SPS: dict[str, tuple[int, int, int, Any]] = {
    "H264": (0, 0x1F, SPS_NAL_TYPE, sps_size),
    "HEVC": (1, 0x3F, hevc.SPS_NAL_TYPE, hevc.sps_size),
}
_NVCUVID = "libnvcuvid.so.1"
_BINDING = "PyNvVideoCodec"
_MESSAGE_LIMIT = 300


def _one_line(exc: BaseException) -> str:
    """A binding's multi-line exception text as one line, without source locations."""
    parts = []
    for line in str(exc).splitlines():
        line = " ".join(line.split()).rstrip(" :")
        if line and not line.startswith("at /"):
            parts.append(line)
    text = "; ".join(parts) or type(exc).__name__
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


class _Mute(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


@functools.lru_cache(maxsize=1)
def _load_binding() -> tuple[Any, str]:
    """``(module, "")`` when PyNvVideoCodec imports, else ``(None, reason)``; never raises."""
    # The binding's native logger writes warnings (e.g. on every Matroska file) to stdout,
    # where admcuda may be writing results; LOGGER_LEVEL is read when the library loads.
    os.environ.setdefault("LOGGER_LEVEL", "ERROR")
    log = logging.getLogger(_BINDING)
    mute = _Mute()
    # A failed import logs several lines of troubleshooting; the reason below says it once.
    log.addFilter(mute)
    try:
        import PyNvVideoCodec as nvc
    except ModuleNotFoundError as exc:
        if exc.name == _BINDING:
            return None, 'PyNvVideoCodec is not installed (pip install ".[nvdec]")'
        return None, f"PyNvVideoCodec does not import ({_one_line(exc)})"
    except Exception as exc:  # noqa: BLE001 - a broken driver raises anything
        return None, f"PyNvVideoCodec does not import ({_one_line(exc)})"
    finally:
        log.removeFilter(mute)
    return nvc, ""


def _cuda_reason() -> str:
    """Why CuPy cannot hold NVDEC's frames here, or ``""``."""
    try:
        import cupy as cp
    except Exception as exc:  # noqa: BLE001
        return f"CuPy does not import ({_one_line(exc)}); NVDEC frames are CuPy arrays"
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001
        return f"no CUDA device is visible ({_one_line(exc)})"
    return "" if count > 0 else "no CUDA device is visible"


def _nvcuvid_reason() -> str:
    """Why the driver's NVDEC library cannot load, or ``""`` (the binding dlopens it too)."""
    try:
        ctypes.CDLL(_NVCUVID)
    except OSError:
        return (
            f"the NVIDIA driver's {_NVCUVID} is not found (in a container, "
            "NVIDIA_DRIVER_CAPABILITIES must include 'video')"
        )
    return ""


@functools.lru_cache(maxsize=1)
def _unavailable_reason() -> str:
    """Why NVDEC decoding cannot run in this process, or ``""`` when it can."""
    return _load_binding()[1] or _cuda_reason() or _nvcuvid_reason()


def nvdec_available() -> bool:
    """Whether PyNvVideoCodec imports, CuPy sees a CUDA device and the driver has NVDEC.

    Never raises; the answer is computed once per process. It says nothing about a particular
    file: see :func:`nvdec_supports`.
    """
    return not _unavailable_reason()


def nvdec_supports(path: str | os.PathLike[str], *, gpu: int = 0) -> tuple[bool, str]:
    """Whether NVDEC on GPU ``gpu`` decodes ``path`` exactly, and why not.

    The file is opened as :class:`NvdecReader` opens it: demuxed, its codec checked, and decoded
    up to its first frame, so a codec, profile or size the GPU's NVDEC refuses is found here.

    Returns
    -------
    (bool, str)
        ``(True, description)``, e.g. ``"HEVC 1920x1080 10-bit"``, or ``(False, reason)`` with
        a one-line reason.
    """
    try:
        reader = NvdecReader(path, gpu=gpu)
    except AdmError as exc:
        return False, str(exc)
    reader.close()
    return True, reader.description


def open_nvdec(path: str | os.PathLike[str], label: str = "input", gpu: int = 0) -> NvdecReader:
    """Open ``path`` for decoding on NVDEC; :class:`admcuda.errors.AdmError` if it cannot."""
    return NvdecReader(path, label=label, gpu=gpu)


class _Session:
    """One demuxer and one NVDEC decoder reading a file from its first packet, the decoder
    copying its frames on ``stream`` (of ``context``), where :attr:`finisher` works too."""

    def __init__(
        self,
        nvc: Any,
        path: Path,
        gpu: int,
        codec: Any,
        context: int,
        stream: Any,
        watch: Any = None,
    ) -> None:
        self.stream = stream
        self.watch = watch  # called with (packet index, packet) before each decoded packet
        self.finisher: _Finisher | None = None
        self.nvc = nvc
        self.demuxer = nvc.CreateDemuxer(filename=str(path))
        self.decoder = nvc.CreateDecoder(
            gpuid=gpu,
            codec=codec,
            cudacontext=context,
            cudastream=stream.ptr,
            usedevicememory=True,
            latency=nvc.DisplayDecodeLatencyType.NATIVE,
        )

    @property
    def closed(self) -> bool:
        return self.decoder is None

    def frames(self, first_packet: int = 0) -> Iterator[Any]:
        """Decoded frames in display order, the decoder flushed by the demuxer's final empty
        packet. Stops as soon as the session is released: the frames of a released decoder
        point into freed buffers.

        With ``first_packet`` > 0 the packets before it are demuxed but not decoded, except
        the first, which carries the stream's parameter sets (its frame comes out too).
        """
        for n, packet in enumerate(self.demuxer):
            if self.closed:
                return
            if 0 < n < first_packet:
                continue
            if self.watch is not None:
                try:
                    self.watch(n, packet)
                except AdmError:
                    # the frames before packet n, still inside the decoder, come out first
                    yield from self._flushed()
                    raise
            decoded = self.decoder.Decode(packet)
            for frame in decoded:
                if self.closed:
                    return
                yield frame

    def _flushed(self) -> Iterator[Any]:
        """The decoder's frames still held back for display order, drained by an empty
        packet as the demuxer's last one drains them; none where the binding fails."""
        try:
            end = self.nvc.PacketData()
            end.bsl = 0
            frames = list(self.decoder.Decode(end))
        except Exception:  # noqa: BLE001 - the caller's error is the one to report
            return
        for frame in frames:
            if self.closed:
                return
            yield frame

    def release(self) -> None:
        """Drop the decoder, then the demuxer (the binding's samples free them in that order),
        once the kernels still reading the decoder's buffers are done."""
        if self.decoder is not None:
            self.stream.synchronize()
        self.decoder = None
        self.demuxer = None


# (binding, gpu, codec, chroma) -> (binding, capabilities or None). Asking NVDEC for them
# took about 0.2 s each time on an H200; they do not change within a process. The binding
# is kept in the value so that its id cannot be reused.
_CAPS: dict[tuple[int, int, str, str], tuple[Any, dict[str, Any] | None]] = {}


def _decoder_caps(nvc: Any, gpu: int, codec: Any, chroma_format: Any) -> dict[str, Any] | None:
    """NVDEC's capabilities for 8-bit ``codec`` in ``chroma_format`` on ``gpu`` (None if
    the binding cannot tell), asked once per process."""
    key = (id(nvc), gpu, codec.name, chroma_format.name)
    hit = _CAPS.get(key)
    if hit is not None and hit[0] is nvc:
        return hit[1]
    try:
        caps = dict(
            nvc.GetDecoderCaps(gpuid=gpu, codec=codec, chromaformat=chroma_format, bitdepth=8)
        )
    except Exception:  # noqa: BLE001 - the binding raises its own types
        caps = None
    _CAPS[key] = (nvc, caps)
    return caps


# -- one stream on several NVDEC sessions at once

_LUMA_BLOCK = 256


@functools.lru_cache(maxsize=1)
def _luma_kernels() -> tuple[Any, Any]:
    """A decoded surface's luma rows to a new contiguous plane (``kernels/nvdec_luma.cu``),
    compiled by the one kernel loader."""
    from admcuda import kernel_loader as kernels

    defines = (("P016_SHIFT", P016_SHIFT), ("P016_LOW", _P016_LOW_BITS))
    return (
        kernels.plain_function("nvdec_luma", "admcuda_luma_nv12", defines),
        kernels.plain_function("nvdec_luma", "admcuda_luma_p016", defines),
    )


class _Finisher:
    """Makes decoded luma views into new contiguous planes of their values on one session's
    stream, a group of frames at a time, so that decoding waits once a group, not once a frame.

    :meth:`add` launches the frame's kernel and returns; the decoder, which copies frames on
    the same stream, cannot overwrite its buffer before the kernel has read it. :meth:`drain`
    waits for the group, checks that no P016 frame of it had samples finer than 10 bits
    (``low_bits_error(index)`` is raised for the first that had), and returns its planes,
    complete, for any stream to read.
    """

    GROUP = 8

    def __init__(self, stream: Any, low_bits_error: Any) -> None:
        import cupy as cp

        self._cp, self._stream, self._error = cp, stream, low_bits_error
        with stream:
            self._flags = cp.zeros(self.GROUP, np.int32)
        self._pinned = cp.cuda.alloc_pinned_memory(4 * self.GROUP)
        self._seen = np.frombuffer(self._pinned, np.int32, self.GROUP)
        self._pending: list[tuple[int, Any]] = []

    @property
    def full(self) -> bool:
        return len(self._pending) >= self.GROUP

    def add(self, view: Any, fmt: str, index: int) -> None:
        """Queue frame ``index``: ``view`` its luma rows (unit column stride), ``fmt`` its
        surface format. Call with the plane's device current, and no more than
        :attr:`GROUP` times between drains."""
        cp = self._cp
        h, w = view.shape
        nv12, p016 = _luma_kernels()
        pitch = np.int64(view.strides[0] // view.itemsize)
        grid = (-(-w // _LUMA_BLOCK), h)
        with self._stream:
            out = cp.empty((h, w), view.dtype)
            if fmt == "NV12":
                nv12(grid, (_LUMA_BLOCK,), (view, pitch, out, np.int32(w)))
            else:
                slot = np.int32(len(self._pending))
                p016(grid, (_LUMA_BLOCK,), (view, pitch, out, np.int32(w), self._flags, slot))
        self._pending.append((index, out))

    def drain(self) -> list[Any]:
        """The queued frames' planes, complete, in the order they were added."""
        pending, self._pending = self._pending, []
        if not pending:
            return []
        n, ptr = 4 * len(pending), self._stream.ptr
        rt = self._cp.cuda.runtime
        rt.memcpyAsync(self._seen.ctypes.data, self._flags.data.ptr, n, rt.memcpyDeviceToHost, ptr)
        rt.memsetAsync(self._flags.data.ptr, 0, n, ptr)
        self._stream.synchronize()
        for slot, (index, _) in enumerate(pending):
            if self._seen[slot]:
                raise self._error(index)
        return [plane for _, plane in pending]


def _frame_pts(frame: Any) -> int | None:
    """A decoded frame's presentation time, as the binding gives it (None if it does not)."""
    get = getattr(frame, "getPTS", None)
    if callable(get):
        return int(get())
    value = getattr(frame, "timestamp", None)
    return None if value is None else int(value)


_END, _CLOSED = object(), object()


def _next_item(q: queue.Queue, worker: threading.Thread, stop: threading.Event) -> Any:
    """The next item a segment's worker put in ``q``; ``_CLOSED`` once ``stop`` is set (the
    worker may then end without a word)."""
    while True:
        try:
            return q.get(timeout=0.05)
        except queue.Empty:
            if stop.is_set():
                return _CLOSED
            if not worker.is_alive() and q.empty():
                raise AdmError(f"{worker.name} ended without its frames") from None


class NvdecReader(ClosingReader):
    """Luma frames of an encoded video, decoded by NVDEC into CuPy arrays.

    Parameters
    ----------
    path : str or os.PathLike
        An H.264, HEVC, AV1 or VP9 stream, 4:2:0, 8 or 10 bits, in a container the bundled
        libavformat reads (MP4 and Matroska/WebM are tested).
    label : str, optional
        How messages name the file, e.g. ``"distorted"``.
    gpu : int, optional
        CUDA device ordinal of the NVDEC engine and of the yielded arrays.

    Attributes
    ----------
    kind : str
        ``"nvdec"``.
    codec : str
        ``"H264"``, ``"HEVC"``, ``"AV1"`` or ``"VP9"``.
    width, height : int
        Display size (the coded size cropped).
    bitdepth : {8, 10}
        Found on the first decoded frame.
    pixel_format : str
        ``"420"``.
    num_frames : None
        Not known before decoding; ``len()`` is not available.
    estimated_frames : int or None
        The container's duration times its frame rate, as ffmpeg reads them (progress).
    nvdec_engines : int or None
        NVDEC engines on the GPU, as its decoder capabilities report them (None if unknown).
    auto_sessions : int
        Sessions per stream where ``ADMCUDA_NVDEC_SEGMENTS`` is unset or ``auto``: 1, or what
        :func:`auto_sessions` gives once :func:`admcuda.io.inputs.open_inputs` knows how many
        NVDEC streams are read together.

    Raises
    ------
    AdmError
        If the file is missing or empty, NVDEC cannot run here, the container cannot be read,
        the codec or layout is not one read here, or NVDEC refuses the stream.
    """

    kind = "nvdec"
    pixel_format = "420"
    num_frames: int | None = None

    def __init__(self, path: str | os.PathLike[str], *, label: str = "input", gpu: int = 0) -> None:
        self.path = Path(path)
        self.label = label
        self.gpu = int(gpu)
        self.where = f"{label} file {str(self.path)!r}"
        self._sessions: set[_Session] = set()
        self._sessions_lock = threading.Lock()
        self._stops: set[threading.Event] = set()  # of the segmented iterations running
        # each packet's presentation time and IDR flag, from one demuxer pass (None: not read)
        self._packets: tuple[list[int | None], list[bool]] | None = None
        # the session that found the bit depth, paused on frame 0, for the first iteration
        self._probe: tuple[_Session, Any, Any, Iterator[Any]] | None = None
        #: sessions per stream where ADMCUDA_NVDEC_SEGMENTS is auto (set by open_inputs)
        self.auto_sessions = 1
        check_input_file(self.path, self.where, "video file")
        reason = _unavailable_reason()
        if reason:
            raise AdmError(f"{self.where}: NVDEC decoding is not available: {reason}")
        self._nvc = _load_binding()[0]
        self._sps_size: tuple[int, int] | None = None  # the stream's first SPS's
        self._check_gpu()
        self._codec, self.codec, self.width, self.height = self._inspect()
        try:
            self.bitdepth = self._first_frame_bitdepth()
        except AdmError as failed:
            try:
                self._check_caps()  # the reason NVDEC's capabilities give, where they give one
            except AdmError as refused:
                raise refused from None
            raise failed

    @functools.cached_property
    def estimated_frames(self) -> int | None:
        """Frames the video should hold, for progress: its duration times its frame rate as
        ffmpeg reads the container, the estimate the ffmpeg decoder's reader gives
        (:attr:`admcuda.io.ffmpeg.VideoReader.estimated_frames`); ``num_frames`` stays None.
        None where ffmpeg is missing, cannot read the file or tells neither. Asked once, on
        first use."""
        from admcuda.io.ffmpeg import probe

        try:
            return probe(self.path, self.where).estimated_frames
        except AdmError:
            return None

    @property
    def description(self) -> str:
        """E.g. ``"HEVC 1920x1080 10-bit"``."""
        return f"{CODECS[self.codec]} {self.width}x{self.height} {self.bitdepth}-bit"

    def _check_gpu(self) -> None:
        import cupy as cp

        count = cp.cuda.runtime.getDeviceCount()
        if not 0 <= self.gpu < count:
            raise AdmError(
                f"{self.where}: GPU {self.gpu} does not exist ({count} CUDA device(s) visible)"
            )

    @property
    def nvdec_engines(self) -> int | None:
        """NVDEC engines on the GPU, as its decoder capabilities report them (None if the
        binding cannot tell)."""
        caps = self._caps()
        return (int(caps.get("num_decoder_engines", 0)) or None) if caps else None

    def _caps(self) -> dict[str, Any] | None:
        return _decoder_caps(self._nvc, self.gpu, self._codec, self._chroma_format)

    def _inspect(self) -> tuple[Any, str, int, int]:
        """The container's codec (binding enum and name) and display size, checked."""
        try:
            demuxer = self._nvc.CreateDemuxer(filename=str(self.path))
            codec = demuxer.GetNvCodecId()
            chroma_format = demuxer.ChromaFormat()
            chroma = chroma_format.name
            width, height = int(demuxer.Width()), int(demuxer.Height())
        except Exception as exc:  # noqa: BLE001 - the binding raises its own types
            raise AdmError(
                f"{self.where} cannot be read by PyNvVideoCodec's demuxer: {_one_line(exc)}"
            ) from None
        name = codec.name
        if name not in CODECS:
            shown = name if name.isidentifier() else "a codec NVDEC does not decode"
            raise AdmError(
                f"{self.where} is {shown}: NVDEC is used for {', '.join(CODECS.values())} only "
                "(decoded bit-exactly by specification); use the ffmpeg decoder"
            )
        if chroma != "420":
            raise AdmError(
                f"{self.where} is {CODECS[name]} {chroma}: NVDEC is used for 4:2:0 streams "
                "only; use the ffmpeg decoder"
            )
        try:
            check_geometry(width, height, "420", 8)
        except AdmError as exc:
            raise AdmError(f"{self.where}: {exc}") from None
        self._chroma_format = chroma_format
        if name == "H264":
            self._check_h264(demuxer)
        return codec, name, width, height

    def _check_h264(self, demuxer: Any) -> None:
        """Refuse interlaced H.264 (NVDEC deinterlaces it; ffmpeg outputs the coded frames)
        and layouts other than 8-bit 4:2:0, from the stream's first SPS."""
        layout = None
        try:
            for n, packet in enumerate(demuxer):
                if packet.bsl == 0 or n >= SPS_SEARCH_PACKETS:
                    break
                data = ctypes.string_at(packet.bsl_data, packet.bsl)
                sps = [nal for nal in annexb_nals(data) if nal[0] & 0x1F == SPS_NAL_TYPE]
                if sps:
                    layout = sps_layout(sps[0])
                    break
        except Exception as exc:  # noqa: BLE001 - the demuxer's errors and a malformed SPS
            raise AdmError(
                f"{self.where}: its H.264 sequence parameter set cannot be read: {_one_line(exc)}"
            ) from None
        if layout is None:
            raise AdmError(
                f"{self.where}: no H.264 sequence parameter set in its first "
                f"{SPS_SEARCH_PACKETS} packets; use the ffmpeg decoder"
            )
        chroma, depth, frames_only = layout
        if not frames_only:
            raise AdmError(
                f"{self.where} is interlaced H.264 (field or MBAFF coding): NVDEC would "
                "deinterlace it, ffmpeg does not; use the ffmpeg decoder"
            )
        if (chroma, depth) != (1, 8):
            shown = {0: "4:0:0", 1: "4:2:0", 2: "4:2:2", 3: "4:4:4"}.get(chroma, "?")
            raise AdmError(
                f"{self.where} is H.264 {shown} {depth}-bit: NVDEC is used for 8-bit 4:2:0 "
                "H.264 only; use the ffmpeg decoder"
            )

    def _check_caps(self) -> None:
        """Refuse, with the reason, a stream that NVDEC's capabilities rule out: a codec this
        GPU lacks, a size out of its range.

        Asked only once the decoder has failed on the stream: the query takes about 0.2 s
        and holds the interpreter lock (H200, PyNvVideoCodec 2.2.4), and the decoder refuses
        such streams itself when it meets their first sequence header (checked there for
        AV1, which that NVDEC lacks, and for HEVC and H.264 below its minimum sizes: each
        raised from the binding's sequence callback). The capabilities are for 8 bits (the
        container cannot tell 10).
        """
        caps = self._caps()
        if caps is None:  # the decoder's own error stands
            return
        what = f"{CODECS[self.codec]} 4:2:0"
        if caps.get("supported", 1) == 0:
            raise AdmError(
                f"{self.where}: NVDEC on GPU {self.gpu} does not decode {what}; "
                "use the ffmpeg decoder"
            )
        width, height = self.width, self.height
        low = (int(caps.get("width_min", 0)), int(caps.get("height_min", 0)))
        high = (int(caps.get("width_max", 0)), int(caps.get("height_max", 0)))
        if (
            width < low[0]
            or height < low[1]
            or (all(high) and (width > high[0] or height > high[1]))
        ):
            raise AdmError(
                f"{self.where}: {width}x{height} is outside what NVDEC on GPU {self.gpu} "
                f"decodes for {what} ({low[0]}x{low[1]} to {high[0]}x{high[1]}); "
                "use the ffmpeg decoder"
            )

    def _open_session(self) -> _Session:
        import cupy as cp

        with self._device():
            # Non-blocking: the session's copies wait for nobody's work but its decoder's.
            stream = cp.cuda.Stream(non_blocking=True)
            context = cp.cuda.driver.ctxGetCurrent()
        try:
            watch = self._watch_sps if self.codec in _SPS else None
            session = _Session(self._nvc, self.path, self.gpu, self._codec, context, stream, watch)
        except Exception as exc:  # noqa: BLE001
            raise AdmError(
                f"{self.where}: NVDEC cannot open a {CODECS[self.codec]} decoder on GPU "
                f"{self.gpu}: {_one_line(exc)}"
            ) from None
        with self._device():
            session.finisher = _Finisher(stream, self._low_bits_error)
        with self._sessions_lock:
            self._sessions.add(session)
        return session

    def _watch_sps(self, n: int, packet: Any) -> None:
        """Stop at packet ``n`` where it carries an H.264 or HEVC SPS of another frame size
        than the stream's first. NVDEC's decoder stops a few frames before a larger size,
        and a smaller one did not show in its surfaces (H100, PyNvVideoCodec 2.2.4: an
        H.264 stream of 352x288 frames, then 320x180, read to its end). A new size starts
        at an IDR (HEVC: IRAP) picture, shown after every packet before it: ``n`` is its
        frame number."""
        if packet.bsl == 0 or not getattr(packet, "key", True):
            return
        shift, mask, kind, parse = _SPS[self.codec]
        data = ctypes.string_at(packet.bsl_data, packet.bsl)
        for nal in annexb_nals(data):
            if (nal[0] >> shift) & mask == kind:
                try:
                    size = parse(nal)
                except (ValueError, IndexError):
                    continue  # the decoder's to refuse
                first = self._sps_size = self._sps_size or size
                if size != first:
                    new = f"{size[0]}x{size[1]}"
                    raise size_change(self.where, n, self.width, self.height, new)

    def _close_session(self, session: _Session) -> None:
        session.release()
        with self._sessions_lock:
            self._sessions.discard(session)

    def _decode_error(self, exc: BaseException, index: int) -> AdmError:
        text = _one_line(exc)
        if "Reconfigure Not supported" in text:
            # a later sequence larger than the first stops the decoder, a few frames after
            # the last one it showed (H.264 stops at the new size's first frame before)
            w, h = self.width, self.height
            return AdmError(
                f"{self.where} changes frame size, to a larger one than {w}x{h}, after about "
                f"{index} frames (NVDEC: {text}); admcuda scores frames of one size: cut it "
                f"where the size changes, or scale it to one size (ffmpeg -i IN -vf "
                f"scale={w}:{h} OUT)"
            )
        return AdmError(
            f"NVDEC failed decoding {self.where} after {index} frames "
            f"({CODECS[self.codec]} on GPU {self.gpu}): {text}"
        )

    def _frames(self, session: _Session, first_packet: int = 0) -> Iterator[Any]:
        """The session's frames, with the binding's errors turned into :class:`AdmError`."""
        frames = session.frames(first_packet)
        index = 0
        while True:
            try:
                frame = next(frames)
            except StopIteration:
                return
            except AdmError:  # found in the stream itself (a frame-size change)
                raise
            except Exception as exc:  # noqa: BLE001
                raise self._decode_error(exc, index) from None
            yield frame
            index += 1

    def _first_frame_bitdepth(self) -> int:
        """Decode up to the first frame: its surface format gives the bit depth.

        The frame's luma is taken (and a 10-bit one checked) at once. The session is kept,
        paused after that frame, and the first iteration of one session goes on from there:
        a decoder start, the first frame's decode and a decoder release fewer per input.
        """
        session = self._open_session()
        frames = self._frames(session)
        try:
            for frame in frames:
                fmt = self._add(session, frame, 0)
                (first,) = session.finisher.drain()
                self._probe = (session, frame, first, frames)
                return _SURFACE_BITDEPTH[fmt]
        except BaseException:
            self._close_session(session)
            raise
        self._close_session(session)
        raise AdmError(f"{self.where}: NVDEC decoded no frames")

    def _take_probe(self) -> tuple[_Session, Any, Any, Iterator[Any]] | None:
        """The paused first session, once (None if taken, closed or never made)."""
        with self._sessions_lock:
            probe, self._probe = self._probe, None
        if probe is not None and probe[0].closed:
            return None
        return probe

    def _device(self) -> Any:
        import cupy as cp

        return cp.cuda.Device(self.gpu)

    def _luma_view(self, frame: Any, index: int) -> tuple[Any, str]:
        """The luma rows of a decoded surface as a CuPy view (no copy), and its format.

        Call with this reader's device and the session's stream current: importing through
        DLPack makes that stream wait for the decoder's copy of the frame.
        """
        import cupy as cp

        fmt = frame.format.name
        if fmt not in _SURFACE_BITDEPTH:
            raise AdmError(
                f"{self.where}: NVDEC gave {fmt} surfaces at frame {index}; only 4:2:0 "
                "NV12 and P016 surfaces are read; use the ffmpeg decoder"
            )
        surface = cp.from_dlpack(frame)
        w, h = self.width, self.height
        expected = np.uint8 if fmt == "NV12" else np.uint16
        rows = surface.shape[0] if surface.ndim == 2 else -1
        if (
            index > 0
            and surface.dtype == expected
            and surface.ndim == 2
            and (surface.shape[1] != w or rows not in (h + h // 2, h + (h + 1) // 2))
        ):  # a 4:2:0 surface of another size: a later sequence of the stream changed size
            raise size_change(self.where, index, w, h, f"{surface.shape[1]}x{(2 * rows + 1) // 3}")
        if (
            surface.dtype != expected
            or surface.ndim != 2
            or surface.shape[1] != w
            or rows not in (h + h // 2, h + (h + 1) // 2)
        ):
            raise AdmError(
                f"{self.where}: NVDEC's frame {index} is a {surface.dtype} {fmt} surface of "
                f"shape {tuple(surface.shape)}, not the {w}x{h} stream's 4:2:0 layout"
            )
        item = surface.itemsize
        if surface.strides[1] == item and surface.strides[0] >= w * item:
            return surface[:h], fmt
        # An earlier PyNvVideoCodec 2.x declared P016's column stride as 2 elements; the
        # decoder writes every plane as packed rows of `width` samples from the surface's start.
        return cp.lib.stride_tricks.as_strided(surface, shape=(h, w), strides=(w * item, item)), fmt

    def _low_bits_error(self, index: int) -> AdmError:
        return AdmError(
            f"{self.where}: NVDEC's frame {index} has samples finer than 10 bits (a 12-bit "
            "stream?); NVDEC is used for 8- and 10-bit streams only; use the ffmpeg decoder"
        )

    def _add(self, session: _Session, frame: Any, index: int) -> str:
        """Queue frame ``index``'s luma on the session's finisher; its surface format."""
        with self._device(), session.stream:
            view, fmt = self._luma_view(frame, index)
            began = getattr(self, "bitdepth", None)  # unset while the opening frame is read
            if began is not None and _SURFACE_BITDEPTH[fmt] != began:
                raise AdmError(
                    f"{self.where}: NVDEC's frame {index} is a {fmt} surface, but the stream "
                    f"began {began}-bit; a bit-depth change is not supported"
                )
            session.finisher.add(view, fmt, index)
        return fmt

    def _finished(self, session: _Session, numbered: Iterator[tuple[int, Any]]) -> Iterator[Any]:
        """The luma planes of ``numbered`` ((index, decoded frame) pairs of ``session``),
        each a new contiguous CuPy array, complete when yielded; one wait a group of frames."""
        finisher = session.finisher
        for index, frame in numbered:
            self._add(session, frame, index)
            if finisher.full:
                yield from finisher.drain()
        yield from finisher.drain()

    def close(self) -> None:
        """Release every NVDEC session still open; an iteration in progress then ends."""
        with self._sessions_lock:
            sessions = list(self._sessions)
            self._probe = None
            for stop in self._stops:
                stop.set()
        for session in sessions:
            self._close_session(session)

    def __iter__(self) -> Iterator[Any]:
        """Yield the Y plane of every frame, in display order."""
        return self.iter_luma()

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[Any]:
        """Decode and yield Y planes from frame ``start`` on.

        Each call decodes from the first packet, the first call in the session that opened the
        reader, later ones in a session of their own; frames before ``start`` are decoded and
        dropped, as :class:`admcuda.io.ffmpeg.VideoReader` does. Where the stream is cut into
        segments (``ADMCUDA_NVDEC_SEGMENTS``, or :attr:`auto_sessions` when that is unset or
        ``auto``), each segment is decoded by a session of its own, several at once.

        Parameters
        ----------
        start : int, optional
            Frames to skip.
        count : int, optional
            At most this many frames after the skipped ones.

        Yields
        ------
        cupy.ndarray
            Shape ``(height, width)``, C-contiguous, on GPU ``gpu``: uint8 for 8 bits, else
            uint16 holding the 10-bit value.

        Raises
        ------
        AdmError
            If NVDEC fails, or a frame's surface does not match the stream's layout.
        """
        start = max(int(start), 0)
        total = None if count is None else start + max(int(count), 0)
        if total is not None and total <= start:
            return
        sessions = segment_sessions() or self.auto_sessions
        plan = self.segments(sessions) if sessions > 1 else None
        probe = self._take_probe()
        if plan:
            yield from self._iter_segments(plan, sessions, start, total, probe)
            return
        if probe is None:
            session = self._open_session()
            frames, first = self._frames(session), 0
        else:
            session, _, plane, frames = probe
            first = 1
        try:
            if probe is not None:
                if start == 0:
                    yield plane
                del plane
                if total is not None and total <= 1:
                    return
            numbered = enumerate(frames, start=first)
            skip = max(start - first, 0)
            wanted = itertools.islice(numbered, skip, None if total is None else total - first)
            yield from self._finished(session, wanted)
        finally:
            self._close_session(session)

    def _segment_depth(self, sessions: int) -> int:
        """Frames each of ``sessions`` segments decoding at once may hold ahead."""
        frame_bytes = self.width * self.height * (1 if self.bitdepth == 8 else 2)
        return max(self._segment_buffer_bytes() // (sessions * frame_bytes), 2)

    def _segment_buffer_bytes(self) -> int:
        """:data:`SEGMENT_BUFFER_BYTES`, or a :data:`SEGMENT_BUFFER_SHARE` th of the GPU's
        memory where that is less (the figure alone if CuPy cannot say)."""
        try:
            with self._device() as device:
                total = int(device.mem_info[1])
        except Exception:  # noqa: BLE001 - no answer: the fixed budget
            return SEGMENT_BUFFER_BYTES
        return min(SEGMENT_BUFFER_BYTES, max(total // SEGMENT_BUFFER_SHARE, 1))

    def segments(self, sessions: int = AUTO_SEGMENT_SESSIONS) -> list[Segment] | None:
        """How the stream is cut for ``sessions`` sessions at once (:func:`plan_segments`),
        from one pass of the demuxer over its packets; None where it cannot be cut.

        Segments are as long as an even share of the stream, but no longer than the frames a
        segment may hold decoded ahead: each segment costs a decoder start and release, and
        a longer one would wait for the reader instead of decoding ahead.
        """
        if self.codec not in IDR_NAL_TYPES:
            return None
        if self._packets is None:
            try:
                self._packets = self._read_packets()
            except Exception as exc:  # noqa: BLE001 - the demuxer's own errors
                raise AdmError(
                    f"{self.where}: PyNvVideoCodec's demuxer failed: {_one_line(exc)}"
                ) from None
        pts, idr = self._packets
        share = -(-len(pts) // max(sessions, 1))
        length = min(share, self._segment_depth(sessions))
        return plan_segments(pts, idr, length=max(length, MIN_SEGMENT_FRAMES))

    def _read_packets(self) -> tuple[list[int | None], list[bool]]:
        demuxer = self._nvc.CreateDemuxer(filename=str(self.path))
        pts: list[int | None] = []
        idr: list[bool] = []
        for packet in demuxer:
            if packet.bsl == 0:
                break
            value = getattr(packet, "pts", None)
            pts.append(None if value is None or value < -(1 << 62) else int(value))
            key = bool(getattr(packet, "key", True))
            idr.append(key and is_idr(self.codec, ctypes.string_at(packet.bsl_data, packet.bsl)))
        return pts, idr

    def _iter_segments(
        self, plan: list[Segment], sessions: int, start: int, total: int | None, probe: Any
    ) -> Iterator[Any]:
        """Frames ``start`` to ``total`` (or the end), each segment of ``plan`` decoded by its
        own session in a thread, up to ``sessions`` at once, and yielded in display order;
        the first segment by ``probe`` (the opening session, paused on frame 0) where given."""
        stop = threading.Event()
        with self._sessions_lock:
            self._stops.add(stop)
        depth = self._segment_depth(sessions)
        running: dict[int, tuple[threading.Thread, queue.Queue]] = {}

        def launch(k: int, probe: Any = None) -> None:
            q: queue.Queue = queue.Queue(maxsize=depth)
            t = threading.Thread(
                target=self._decode_segment, args=(plan[k], q, stop, probe), daemon=True,
                name=f"admcuda-nvdec-segment-{k}",
            )  # fmt: skip
            running[k] = (t, q)
            t.start()

        todo = [k for k, seg in enumerate(plan) if seg.start + len(seg.pts) > start]
        if total is not None:
            todo = [k for k in todo if plan[k].start < total]
        if probe is not None and (not todo or todo[0] != 0):
            self._close_session(probe[0])
            probe = None
        try:
            for n, k in enumerate(todo[:sessions]):
                launch(k, probe if n == 0 else None)
            for n, k in enumerate(todo):
                t, q = running[k]
                index = plan[k].start
                while True:
                    item = _next_item(q, t, stop)
                    if item is _END:
                        break
                    if item is _CLOSED or stop.is_set():
                        return
                    if isinstance(item, BaseException):
                        raise item
                    if index >= start:
                        yield item
                    index += 1
                    if total is not None and index >= total:
                        return
                running.pop(k)[0].join()
                if n + sessions < len(todo):
                    launch(todo[n + sessions])
        finally:
            stop.set()
            with self._sessions_lock:
                self._stops.discard(stop)
            for t, q in running.values():
                while t.is_alive():
                    with contextlib.suppress(queue.Empty):
                        q.get(timeout=0.05)
                t.join()

    def _decode_segment(
        self, seg: Segment, q: queue.Queue, stop: threading.Event, probe: Any = None
    ) -> None:
        """Decode one segment in a session of its own into ``q``: its frames, then ``_END``,
        or the error that stopped it. Each frame's presentation time is checked against the
        segment's, in order; the frame decoded from the priming first packet is dropped.
        The first segment may go on in ``probe``, the opening session paused on frame 0."""

        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def timestamp(frame: Any) -> int:
            pts = _frame_pts(frame)
            if pts is None:
                raise AdmError(
                    f"{self.where}: this PyNvVideoCodec gives no frame timestamps, so "
                    "segments cannot be checked; set ADMCUDA_NVDEC_SEGMENTS=1"
                )
            return pts

        def out_of_order(pts: int, pos: int) -> AdmError:
            return AdmError(
                f"{self.where}: NVDEC's segment from frame {seg.start} gave the frame "
                f"shown at {pts} where {want[pos]} was due; set ADMCUDA_NVDEC_SEGMENTS=1"
            )

        want, wanted = seg.pts, set(seg.pts)
        done = 0  # the segment's frames handed on or queued so far
        session = None
        try:
            if probe is None:
                session = self._open_session()
                frames = self._frames(session, seg.packet)
            else:
                session, first, plane, frames = probe
                del probe
                pts = timestamp(first)
                if pts != want[0]:
                    raise out_of_order(pts, 0)
                del first
                if not put(plane):
                    return
                del plane
                done = 1

            def numbered() -> Iterator[tuple[int, Any]]:
                nonlocal done
                for frame in frames:
                    if stop.is_set() or done == len(want):
                        return
                    pts = timestamp(frame)
                    if done == 0 and pts not in wanted:
                        continue  # the first packet's frame, decoded for its parameter sets
                    if pts != want[done]:
                        raise out_of_order(pts, done)
                    yield seg.start + done, frame
                    done += 1

            for plane in self._finished(session, numbered()):
                if not put(plane):
                    return
            if stop.is_set():
                return
            if session.closed:  # the reader was closed: the iteration ends
                put(_CLOSED)
                return
            if done < len(want):
                raise AdmError(
                    f"{self.where}: NVDEC's segment from frame {seg.start} ended after {done} "
                    f"of its {len(want)} frames; set ADMCUDA_NVDEC_SEGMENTS=1"
                )
            put(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            put(exc)
        finally:
            if session is not None:
                self._close_session(session)

    def __repr__(self) -> str:
        return (
            f"NvdecReader({str(self.path)!r}, {self.codec}, width={self.width}, "
            f"height={self.height}, bitdepth={self.bitdepth}, gpu={self.gpu})"
        )

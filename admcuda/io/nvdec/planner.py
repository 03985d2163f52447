"""How many NVDEC sessions decode a stream, and where it is cut between them: each segment
starts at an IDR picture that a fresh decoder can start from."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from admcuda.errors import AdmError
from admcuda.io.nvdec.h264 import annexb_nals

__all__ = [
    "AUTO_HEVC_PAIR_SESSIONS",
    "AUTO_LADDER_SESSIONS",
    "AUTO_LADDER_STREAMS",
    "AUTO_SEGMENT_SESSIONS",
    "IDR_NAL_TYPES",
    "MIN_SEGMENT_FRAMES",
    "SEGMENT_BUFFER_BYTES",
    "SEGMENT_BUFFER_SHARE",
    "Segment",
    "auto_sessions",
    "is_idr",
    "plan_segments",
    "segment_sessions",
]


# NAL unit types after which a fresh decoder gives exactly the frames that follow: H.264's IDR
# picture (ITU-T H.264 7.4.1.2), HEVC's IDR_W_RADL and IDR_N_LP (ITU-T H.265 7.4.2.2). HEVC's
# CRA (open GOP) is no cut: its RASL pictures need the frames before it.
# By codec: (shift, mask) of the type in a NAL unit's first byte, and the IDR types.
IDR_NAL_TYPES: dict[str, tuple[int, int, frozenset[int]]] = {
    "H264": (0, 0x1F, frozenset({5})),
    "HEVC": (1, 0x3F, frozenset({19, 20})),
}
# no segment shorter than this many frames (each costs a session start and one more frame)
MIN_SEGMENT_FRAMES = 48
# frames a stream's segments may hold decoded ahead of the reader, in all (divided by the
# segments decoding at once): 4 GiB, and no more than a sixteenth of the GPU's memory
SEGMENT_BUFFER_BYTES = 4 << 30
SEGMENT_BUFFER_SHARE = 16


def segment_sessions() -> int | None:
    """NVDEC sessions that may decode one stream at once, as ``ADMCUDA_NVDEC_SEGMENTS`` sets
    them (1: a stream decoded by one session from its first packet); None where it is unset
    or ``auto`` (the reader's :attr:`NvdecReader.auto_sessions` then)."""
    text = os.environ.get("ADMCUDA_NVDEC_SEGMENTS", "auto").strip() or "auto"
    if text.lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 32:
        raise AdmError(
            f"ADMCUDA_NVDEC_SEGMENTS must be auto or a whole number 1 to 32, got {text!r}"
        )
    return value


#: Sessions per stream that ``auto`` gives an H.264 pair where segments paid (see
#: :func:`auto_sessions`) ...
AUTO_SEGMENT_SESSIONS = 4
#: ... and an HEVC pair ...
AUTO_HEVC_PAIR_SESSIONS = 2
#: ... and an H.264 ladder of up to :data:`AUTO_LADDER_STREAMS` streams.
AUTO_LADDER_SESSIONS = 2
AUTO_LADDER_STREAMS = 5


def auto_sessions(codec: str, width: int, height: int, streams: int) -> int:
    """Sessions per stream for ``ADMCUDA_NVDEC_SEGMENTS=auto``, for one of ``streams`` NVDEC
    streams read together.

    - H.264 of 1920x1080 or more pixels: :data:`AUTO_SEGMENT_SESSIONS` in a pair (two
      streams at most), :data:`AUTO_LADDER_SESSIONS` in a ladder of up to
      :data:`AUTO_LADDER_STREAMS` streams;
    - HEVC of 1920x1080 or more pixels: :data:`AUTO_HEVC_PAIR_SESSIONS` in a pair;
    - else 1.

    The rule is what was measured (``admcuda score``, H200, 2-second closed GOPs, 1 to 4
    sessions a stream): segments were faster there, where one session decodes a stream
    more slowly than the engines allow together. For HEVC 10-bit pairs at 1080p (600 and
    1,800 frames) and 2160p (240), two sessions a stream gave the shortest whole process
    and a higher steady rate than one; four were slower than one at 1080p (each segment's
    session start and the ordered hand-on cost more than the engines gave). HEVC ladders
    keep one session: at 1080p two a stream were faster in steady state but slower in all
    on a 600-frame ladder, and at 2160p only one session was measured. Other sizes and
    layouts were not measured and keep one session too.
    """
    pixels = width * height
    if codec not in IDR_NAL_TYPES or pixels < 1920 * 1080:
        return 1
    if codec == "HEVC":
        return AUTO_HEVC_PAIR_SESSIONS if streams <= 2 else 1
    if streams <= 2:
        return AUTO_SEGMENT_SESSIONS
    if streams <= AUTO_LADDER_STREAMS:
        return AUTO_LADDER_SESSIONS
    return 1


def is_idr(codec: str, data: bytes) -> bool:
    """Whether an Annex B packet of ``codec`` holds an IDR picture's NAL unit."""
    shift, mask, types = IDR_NAL_TYPES[codec]
    return any((nal[0] >> shift) & mask in types for nal in annexb_nals(data))


@dataclass(frozen=True)
class Segment:
    """Frames ``start`` to ``start + len(pts) - 1`` in display order: the packets from
    ``packet`` to the next segment's, whose presentation times in display order are ``pts``."""

    packet: int
    start: int
    pts: tuple[int, ...]


def plan_segments(
    pts: Sequence[int | None],
    idr: Sequence[bool],
    min_frames: int = MIN_SEGMENT_FRAMES,
    length: int | None = None,
) -> list[Segment] | None:
    """Cut a stream, given each packet's presentation time and IDR flag in decode order, into
    segments that fresh decoders can decode apart; None where there is no cut.

    A cut goes before an IDR packet that every earlier packet is shown before (so the frames
    decoded from there on are exactly the frames shown from there on), at least
    ``min_frames`` packets after the last cut and before the end. Without ``length`` every
    such packet is a cut; with it, the stream is cut into ``ceil(n / length)`` segments as
    even as those packets allow (each cut the one nearest its even share). Timestamps must be
    known and distinct: the decoded frames are checked against them.
    """
    n = len(pts)
    if n < 2 * min_frames or any(t is None for t in pts) or len(set(pts)) != n:
        return None
    suffix_min = [0] * (n + 1)
    low = None
    for j in range(n - 1, -1, -1):
        low = pts[j] if low is None else min(low, pts[j])
        suffix_min[j] = low
    valid, high = [], pts[0]
    for j in range(1, n):
        if idr[j] and high < suffix_min[j] and min_frames <= j <= n - min_frames:
            valid.append(j)
        high = max(high, pts[j])
    cuts = [0]
    if length is None:
        for j in valid:
            if j - cuts[-1] >= min_frames:
                cuts.append(j)
    else:
        parts = -(-n // max(int(length), 1))
        for k in range(1, parts):
            ideal = k * n / parts
            near = [j for j in valid if j - cuts[-1] >= min_frames]
            if near:
                best = min(near, key=lambda j: abs(j - ideal))
                if abs(best - ideal) < n / parts:  # else no cut is near this share
                    cuts.append(best)
    if len(cuts) == 1:
        return None
    bounds = [*cuts, n]
    return [
        Segment(packet=a, start=a, pts=tuple(sorted(pts[a:b])))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]

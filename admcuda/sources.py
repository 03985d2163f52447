"""How an opened reader feeds the pipeline's ring: :func:`make_source` picks the fastest
source for it (by position, NVDEC in a process of its own, or frame by frame)."""

from __future__ import annotations

import os
from typing import Any

from admcuda.io.inputs import FrameStream
from admcuda.pipeline import IterSource, SeekableSource

__all__ = ["make_source"]


def make_source(
    reader: Any,
    *,
    skip: int = 0,
    limit: int | None = None,
    subsample: int = 1,
    chroma: bool = False,
) -> Any:
    """The fastest source for ``reader``: by position where it can; NVDEC in a process of
    its own with ``ADMCUDA_NVDEC_PROCESSES=1`` (:mod:`admcuda.io.nvdec.worker`); else as a
    stream. ``chroma``: the run reads chroma planes too (a file read by position reads
    them when the pipeline asks; a stream, ffmpeg's among them, is opened for them)."""
    if hasattr(reader, "luma_offset") and hasattr(reader, "fileno") and hasattr(os, "preadv"):
        return SeekableSource(reader, skip=skip, limit=limit, subsample=subsample)
    if chroma:
        stream = FrameStream(reader, skip=skip, limit=limit, subsample=subsample, chroma=True)
        return IterSource(stream)
    if getattr(reader, "kind", None) == "nvdec":
        from admcuda.io.nvdec.worker import NvdecProcessSource, use_processes

        if use_processes():
            return NvdecProcessSource(reader, skip=skip, limit=limit, subsample=subsample)
    return IterSource(FrameStream(reader, skip=skip, limit=limit, subsample=subsample))

"""NVDEC decode alone, N sessions at once, each decoding a whole stream: aggregate frames/s.

Run on a GPU machine with PyNvVideoCodec (``pip install ".[nvdec]"``) and ffmpeg (imageio-ffmpeg's,
or ``IMAGEIO_FFMPEG_EXE``). It makes ``admcuda bench --make-encoded``'s 1080p H.264 and HEVC
10-bit pairs in ``--folder`` (600 frames), then decodes them (the reference and the
distorted file in turn) on 1 to 12 sessions at once, in three ways:

- ``threads raw``: one thread a session, frames decoded and dropped (no luma taken);
- ``threads luma``: one thread a reader, each through :meth:`NvdecReader.iter_luma` on one
  session (``ADMCUDA_NVDEC_SEGMENTS=1``): the luma planes the pipeline would take;
- ``processes raw``: as ``threads raw``, one process a session.

Frames/s are all sessions' frames over the span from the first start to the last end.
This is decode alone through the binding and the reader, not ``admcuda score``; it shows
what the engines give and what the reader's per-frame work costs beside them.

    python testdata/nvdec_scaling.py --folder /dev/shm/nvscale
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ["ADMCUDA_NVDEC_SEGMENTS"] = "1"

THREADS = (1, 2, 3, 4, 6, 7, 8, 12)
LUMA = (2, 4, 8)
PROCESSES = (2, 7, 8)


def _decoder(path: str, luma: bool) -> tuple[object, Callable[[], tuple[int, float, float]]]:
    """An opened reader and a function that decodes its stream: (frames, start, end)."""
    from admcuda.io.nvdec.reader import open_nvdec

    reader = open_nvdec(path, "input")
    if luma:

        def go() -> tuple[int, float, float]:
            t0 = time.perf_counter()
            n = sum(1 for _ in reader.iter_luma())
            return n, t0, time.perf_counter()

        return reader, go
    reader.close()  # the opening session: a fresh one decodes from the first packet
    session = reader._open_session()

    def go() -> tuple[int, float, float]:
        t0 = time.perf_counter()
        n = sum(1 for _ in session.frames())
        session.stream.synchronize()
        return n, t0, time.perf_counter()

    return reader, go


def _aggregate(results: list[tuple[int, float, float]]) -> float:
    frames = sum(r[0] for r in results)
    return frames / (max(r[2] for r in results) - min(r[1] for r in results))


def in_threads(paths: list[str], luma: bool) -> float:
    decoders = [_decoder(p, luma) for p in paths]
    results: list = [None] * len(decoders)
    barrier = threading.Barrier(len(decoders))

    def work(k: int) -> None:
        barrier.wait()
        results[k] = decoders[k][1]()

    workers = [threading.Thread(target=work, args=(k,)) for k in range(len(decoders))]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    for reader, _ in decoders:
        reader.close()
    return _aggregate(results)


def _child(path: str, barrier: object, q: object) -> None:
    _, go = _decoder(path, False)
    barrier.wait()
    q.put(go())


def in_processes(paths: list[str]) -> float:
    ctx = mp.get_context("spawn")
    barrier, q = ctx.Barrier(len(paths)), ctx.Queue()
    children = [ctx.Process(target=_child, args=(p, barrier, q)) for p in paths]
    for c in children:
        c.start()
    results = [q.get() for _ in children]
    for c in children:
        c.join()
    return _aggregate(results)  # perf_counter is CLOCK_MONOTONIC: one clock for all


def main() -> None:
    from admcuda.cli.bench import make_encodes

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folder", type=Path, required=True)
    folder = p.parse_args().folder
    folder.mkdir(parents=True, exist_ok=True)
    pairs = make_encodes(folder, 1920, 1080, 600, ["hevc10", "h264"])
    rows = []
    for codec, pair in zip(("hevc10", "h264"), pairs, strict=True):

        def streams(n: int, pair: tuple[Path, Path] = pair) -> list[str]:
            return [str(pair[k % 2]) for k in range(n)]

        rows += [(codec, "threads raw", n, in_threads(streams(n), False)) for n in THREADS]
        rows += [(codec, "threads luma", n, in_threads(streams(n), True)) for n in LUMA]
        rows += [(codec, "processes raw", n, in_processes(streams(n))) for n in PROCESSES]
    print("| stream | how | sessions | frames/s, all sessions |")
    print("| --- | --- | --- | --- |")
    for codec, how, n, fps in rows:
        print(f"| {codec} 1080p | {how} | {n} | {fps:,.0f} |")


if __name__ == "__main__":
    main()

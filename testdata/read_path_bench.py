"""The pipeline's reading path for encoded video alone: an ffmpeg-decoded file read into
host slots of 32 frames, as ``admcuda score`` reads it, nothing scored. Prints the median
frames/s and the reading process's CPU time per frame (ffmpeg's own time excluded) over
5 runs.

Run from the repository root: ``python3 testdata/read_path_bench.py VIDEO``; to compare
two commits, run it with ``PYTHONPATH`` pointing at a worktree of each.
"""

import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from admcuda.io.ffmpeg import VideoReader
from admcuda.sources import make_source

BATCH = 32


def main(path: str) -> None:
    pool = ThreadPoolExecutor(2)
    rates, cpu = [], []
    for _ in range(5):
        reader = VideoReader(path)
        source = make_source(reader)
        dtype = np.uint8 if reader.bitdepth == 8 else np.uint16
        slot = np.empty((BATCH, reader.height, reader.width), dtype)
        t0, c0, n = time.perf_counter(), time.process_time(), 0
        while True:
            k = source.start(slot, BATCH, pool).wait()
            n += k
            if k < BATCH:
                break
        rates.append(n / (time.perf_counter() - t0))
        cpu.append((time.process_time() - c0) / n * 1e3)
        source.close()
    print(
        f"{n} frames: median {statistics.median(rates):,.0f} fps "
        f"({', '.join(f'{x:.0f}' for x in rates)}); reading process CPU per frame: median "
        f"{statistics.median(cpu):.3f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1])

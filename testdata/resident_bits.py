"""Resident GPU stages by bit depth: ``admcuda.cli.bench.resident_fps`` (the GPU's integer
accumulators of frames already on the device) at 8, 10, 12 and 16 bits, three sizes.

Run from the repository root on a GPU machine: ``python3 testdata/resident_bits.py``.
"""

import os
import sys

sys.path.insert(0, os.getcwd())

from admcuda.cli import bench  # noqa: E402

for w, h in [(576, 324), (1920, 1080), (3840, 2160)]:
    r = {bd: bench.resident_fps(w, h, bd, 3)["gpu_fps"] for bd in (8, 10, 12, 16)}
    rates = ", ".join(f"{bd}-bit {v:,.0f} ({v / r[8]:.0%})" for bd, v in r.items())
    print(f"{w}x{h} resident GPU fps: {rates}", flush=True)

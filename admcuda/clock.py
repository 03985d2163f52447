"""When this process started, on the wall clock: what ``admcuda score --stats`` counts
from. Imports nothing of admcuda's, so that ``admcuda serve``'s client can read it."""

from __future__ import annotations

import os
import time

__all__ = ["process_start"]


def process_start() -> float | None:
    """This process's start on the wall clock (Linux: from /proc, 10 ms resolution); None
    where it cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None

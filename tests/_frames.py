"""Tiny raw-YUV luma reader for tests that must not depend on the package's reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CHROMA = {
    "420": lambda w, h: 2 * ((w + 1) // 2) * ((h + 1) // 2),
    "422": lambda w, h: 2 * ((w + 1) // 2) * h,
    "444": lambda w, h: 2 * w * h,
    "400": lambda w, h: 0,
}


def luma_frames(path: Path, w: int, h: int, fmt: str, bitdepth: int) -> list[np.ndarray]:
    bps = 1 if bitdepth == 8 else 2
    frame = (w * h + CHROMA[fmt](w, h)) * bps
    data = Path(path).read_bytes()
    dt = np.uint8 if bps == 1 else np.dtype("<u2")
    out = []
    for k in range(len(data) // frame):
        y = np.frombuffer(data, dt, count=w * h, offset=k * frame).reshape(h, w)
        out.append(y.astype(np.uint8 if bps == 1 else np.uint16))
    return out


def same(a: float | None, b: float) -> bool:
    """Bit-identical doubles; NaN equals NaN (JSON null stands for NaN in goldens)."""
    if a is None:
        return b != b
    return a == b or (a != a and b != b)

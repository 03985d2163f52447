"""Regenerate the example pair in this folder: ``python -m admcuda.data.make_example``.

Content: scikit-image's ``camera`` picture (512x512, grey), box-downscaled by 2
and cropped to 176x144 with a slow pan (2 px right, 1 px down per frame).
Distortion: a 3x3 binomial blur, then an 8x8 block artifact that pulls each
pixel 40% of the way to its block mean, rounded and clipped to 8 bits. Chroma
is flat 128 in both files. No randomness is involved; the sha256 of the
committed files is pinned in ``tests/test_cli_score.py``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from admcuda.data import EXAMPLE

WIDTH = EXAMPLE.width
HEIGHT = EXAMPLE.height
FRAMES = EXAMPLE.frames
BLOCK = 8
BLOCK_PULL = 0.4


def _source() -> np.ndarray:
    from skimage import data

    camera = data.camera().astype(np.float64)
    return camera.reshape(256, 2, 256, 2).mean(axis=(1, 3))


def _reference_frames(source: np.ndarray) -> list[np.ndarray]:
    frames = []
    for k in range(FRAMES):
        top, left = 40 + k, 30 + 2 * k
        crop = source[top : top + HEIGHT, left : left + WIDTH]
        frames.append(np.clip(np.rint(crop), 0, 255).astype(np.uint8))
    return frames


def _distort(frame: np.ndarray) -> np.ndarray:
    padded = np.pad(frame.astype(np.float64), 1, mode="edge")
    kernel = np.array([1.0, 2.0, 1.0]) / 4.0
    rows = sum(kernel[i] * padded[i : i + HEIGHT, :] for i in range(3))
    blurred = sum(kernel[j] * rows[:, j : j + WIDTH] for j in range(3))
    blocks = blurred.reshape(HEIGHT // BLOCK, BLOCK, WIDTH // BLOCK, BLOCK)
    means = blocks.mean(axis=(1, 3), keepdims=True)
    blocky = (blocks + BLOCK_PULL * (means - blocks)).reshape(HEIGHT, WIDTH)
    return np.clip(np.rint(blocky), 0, 255).astype(np.uint8)


def _yuv420(lumas: list[np.ndarray]) -> bytes:
    chroma = np.full(((HEIGHT + 1) // 2, (WIDTH + 1) // 2), 128, dtype=np.uint8)
    return b"".join(y.tobytes() + chroma.tobytes() * 2 for y in lumas)


def main() -> None:
    """Write both files next to this script and print their sha256."""
    here = Path(__file__).resolve().parent
    ref = _reference_frames(_source())
    dis = [_distort(frame) for frame in ref]
    for name, frames in ((EXAMPLE.ref, ref), (EXAMPLE.dis, dis)):
        blob = _yuv420(frames)
        (here / name).write_bytes(blob)
        print(name, len(blob), hashlib.sha256(blob).hexdigest())


if __name__ == "__main__":
    main()

"""What the GPU engines' ``submit`` refuses, checked without a GPU
(:func:`admcuda.backends.cuda.engine.check_submission`, shared by CudaAdm and CudaVmaf)."""

from __future__ import annotations

import numpy as np
import pytest

from admcuda.backends.cuda.engine import check_submission

U8 = np.dtype(np.uint8)


def _planes(n, h=36, w=64, dtype=np.uint8):
    return np.zeros((n, h, w), dtype)


def test_a_good_batch_and_a_single_plane():
    ref, dis, n = check_submission(_planes(3), [_planes(3), _planes(4)], None, 8, 64, 36, U8, 8)
    assert n == 3 and len(dis) == 2
    ref, dis, n = check_submission(_planes(1)[0], [_planes(1)[0]], None, 8, 64, 36, U8, 8)
    assert ref.shape == (1, 36, 64) and n == 1


@pytest.mark.parametrize(
    ("ref", "dis", "frames", "message"),
    [
        (_planes(2), [], None, "at least one distorted batch"),
        (_planes(2, 36, 63), [_planes(2)], None, "reference batch must be (n, 36, 64)"),
        (_planes(2), [_planes(2, dtype=np.uint16)], None, "distorted batch 0 must be uint8"),
        (_planes(9), [_planes(9)], None, "a batch holds 1..8 frames, got 9"),
        (_planes(3), [_planes(3)], 0, "a batch holds 1..8 frames, got 0"),
        (_planes(4), [_planes(2)], 3, "input 1 of the batch has 2 frames, fewer than 3"),
    ],
)
def test_refusals(ref, dis, frames, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_submission(ref, dis, frames, 8, 64, 36, U8, 8)

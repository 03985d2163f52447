"""The compiled motion SAD (admcuda.compiled.motion) against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from admcuda.reference.motion import motion_score_pipeline  # noqa: E402

from admcuda.compiled.motion import motion_sad, motion_sad_batch  # noqa: E402

SIZES = [(3, 3), (4, 5), (7, 3), (255, 7), (257, 9), (176, 144), (33, 300)]


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
@pytest.mark.parametrize(("w", "h"), SIZES)
def test_sad_equals_the_reference(w, h, bitdepth):
    rng = np.random.default_rng(w * h + bitdepth)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    a = rng.integers(0, top + 1, (h, w)).astype(dtype)
    near = np.clip(a.astype(np.int64) + rng.integers(-40, 41, (h, w)), 0, top).astype(dtype)
    far = (top - a).astype(dtype)  # the largest differences, both signs
    for b in (near, far, a):
        assert motion_sad(a, b, bitdepth) == motion_score_pipeline(a, b, bitdepth)
        assert motion_sad(b, a, bitdepth) == motion_score_pipeline(b, a, bitdepth)


def test_a_row_sum_wraps_as_libvmafs():
    # 16-bit rows this wide sum past 2**32 in their uint32: the wrap must be kept per row
    w = 70001
    a = np.zeros((3, w), np.uint16)
    b = np.full((3, w), 65535, np.uint16)
    want = motion_score_pipeline(a, b, 16)
    assert motion_sad(a, b, 16) == want
    assert want < 3 * 65535 * w  # the wrap happened


def test_batch_compares_each_plane_with_the_one_back():
    rng = np.random.default_rng(3)
    planes = rng.integers(0, 256, (5, 40, 50)).astype(np.uint8)
    for back in (1, 2):
        got = motion_sad_batch(planes, back, 8)
        want = [motion_score_pipeline(planes[i - back], planes[i], 8) for i in range(back, 5)]
        assert got.tolist() == want

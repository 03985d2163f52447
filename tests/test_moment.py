"""libvmaf's ``float_moment``: the reference (``admcuda.reference.moment``) and the host
feature's sums (``admcuda.vmaf.moment``) against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/moment_goldens.json`` (``testdata/make_moment_goldens.py``, libvmaf
3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every frame's four
values at full precision from libvmaf's C API, on synthetic pairs made again here from the
script (checked by sha256) at 8, 10, 12 and 16 bits, odd sizes down to 1x1, 0 against the
peak, and a 2048x1536 16-bit pair whose squares' double sum rounds as it goes; cases on
``../shared/netflix``'s pairs skip where that folder is missing. Every value is compared
with ``==``.
"""

from __future__ import annotations

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import moment as R

from admcuda.errors import AdmError
from admcuda.vmaf import moment as V

GOLD = FeatureGoldens("moment", feature="float_moment", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
LONG = "long16_400"  # the pair whose running sum rounds


planes = GOLD.luma


def _frames(key: str, compute) -> list[dict[str, float]]:
    bd = GOLD.geometry(CASES[key])[3]
    ref, dis = planes(key)
    return [compute(r, d, bd) for r, d in zip(ref, dis, strict=True)]


def _fast(ref: np.ndarray, dis: np.ndarray, bd: int) -> dict[str, float]:
    return V.moment_frame(None, ref, dis, bd)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    frames = _frames(key, R.compute_moment)
    assert frames == CASES[key]["frames"]
    assert all(list(f) == list(R.MOMENT_NAMES) for f in frames)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_host_sums_equal_libvmaf(key):
    frames = _frames(key, _fast)
    assert frames == CASES[key]["frames"]
    assert all(list(f) == list(R.MOMENT_NAMES) for f in frames)


def test_the_long_pair_takes_the_running_sum(monkeypatch):
    """Past 2**52 units the host's sums fall back to the sample-after-sample sum, for the
    second moments only; below, they never do."""
    calls = []
    real = R.sequential_sum

    def counted(values):
        calls.append(values.size)
        return real(values)

    monkeypatch.setattr(R, "sequential_sum", counted)
    assert _frames(LONG, _fast) == CASES[LONG]["frames"]
    assert calls == [2048 * 1536] * 2
    calls.clear()
    assert _frames("n16_420", _fast) == CASES["n16_420"]["frames"]
    assert calls == []


def test_the_peaks_square_rounds_in_float32():
    """At 16 bits the peak reads 65535/256 and its square, in float32, is 65534.0 (the
    exact square is 65534 + 2**-16)."""
    (frame,) = CASES["swing16_400"]["frames"]
    assert frame["float_moment_dis1st"] == 65535 / 256
    assert frame["float_moment_dis2nd"] == 65534.0 != (65535 / 256) ** 2


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _bitdepth(key: str) -> int:
    return GOLD.geometry(CASES[key])[3]


def _misses(mistake) -> set[str]:
    """The synthetic cases whose goldens ``mistake`` (a compute_moment stand-in) misses."""
    return {k for k in SYNTHETIC if _frames(k, mistake) != CASES[k]["frames"]}


def _second_moments(ref, dis, bd, square) -> dict[str, float]:
    """compute_moment with the second moments' squares taken by ``square``."""
    out = R.compute_moment(ref, dis, bd)
    for side, plane in (("ref", ref), ("dis", dis)):
        x = R.picture_float(plane, bd)
        out[f"float_moment_{side}2nd"] = R.sequential_sum(square(x)) / x.size
    return out


def test_a_pairwise_sum_misses_the_long_pair(monkeypatch):
    """NumPy's pairwise sum, in the reference or as the host's only sum."""
    monkeypatch.setattr(R, "sequential_sum", lambda v: float(v.sum(dtype=np.float64)))
    assert _frames(LONG, R.compute_moment) != CASES[LONG]["frames"]
    assert _frames(LONG, _fast) != CASES[LONG]["frames"]


def test_squares_in_float64_miss_the_16_bit_pairs():
    """Below 16 bits every square is exact in float32; at 16 bits the goldens hold the
    float32 rounding."""
    missed = _misses(
        lambda r, d, bd: _second_moments(r, d, bd, lambda x: np.square(x, dtype=np.float64))
    )
    assert missed == {k for k in SYNTHETIC if _bitdepth(k) == 16}
    assert _misses(lambda r, d, bd: _second_moments(r, d, bd, np.square)) == set()


@pytest.mark.parametrize(
    "scalers",
    [
        {8: 1.0, 10: 1.0, 12: 1.0, 16: 1.0},  # the samples undivided
        {8: 1.0, 10: 1023 / 255, 12: 4095 / 255, 16: 65535 / 255},  # peak onto 255
        {8: 1.0, 10: 4.0, 12: 16.0, 16: 16.0},  # 16 bits as 12
    ],
)
def test_another_scaler_misses_its_pairs(scalers, monkeypatch):
    changed = {k for k in SYNTHETIC if scalers[_bitdepth(k)] != R.SCALERS[_bitdepth(k)]}
    monkeypatch.setattr(R, "SCALERS", scalers)
    assert changed and _misses(R.compute_moment) == changed


def test_float32_sums_miss():
    """A float32 running sum rounds once it passes 2**24 (the squares' sums of every pair
    of more than a handful of samples)."""

    def narrow(ref, dis, bd):
        out = {}
        for k, square in enumerate((False, True)):
            for side, plane in (("ref", ref), ("dis", dis)):
                x = R.picture_float(plane, bd)
                x = np.square(x) if square else x
                name = f"float_moment_{side}{('1st', '2nd')[k]}"
                out[name] = float(np.add.accumulate(x.ravel())[-1]) / x.size
        return out

    assert _misses(narrow) >= {"n8_420", "n10_422", "n12_444_odd", "n16_420", LONG}


# --- what the planes may be --------------------------------------------------------------------


@pytest.mark.parametrize(
    "plane,bd,needle",
    [
        (np.zeros((4, 4), np.uint8), 10, "uint16 at 10 bits"),
        (np.zeros((4, 4), np.uint16), 8, "uint8 at 8 bits"),
        (np.zeros((0, 4), np.uint8), 8, "non-empty 2-D plane"),
        (np.zeros(4, np.uint8), 8, "non-empty 2-D plane"),
        (np.zeros((4, 4), np.uint16), 9, "bit depths 8, 10, 12 and 16, not 9"),
    ],
)
def test_planes_it_cannot_read_are_one_line(plane, bd, needle):
    with pytest.raises(AdmError, match=needle):
        V.moment_frame(None, plane, plane, bd)


def test_planes_of_two_shapes_are_refused():
    with pytest.raises(AdmError, match="planes of"):
        V.moment_frame(None, np.zeros((4, 4), np.uint8), np.zeros((4, 5), np.uint8), 8)


def test_a_strided_view_reads_as_its_samples():
    ref, dis = planes("n10_400_odd")
    wide = np.zeros((ref.shape[1], ref.shape[2] * 2), np.uint16)
    wide[:, ::2] = ref[0]
    got = V.moment_frame(None, wide[:, ::2], dis[0], 10)
    assert got == CASES["n10_400_odd"]["frames"][0]

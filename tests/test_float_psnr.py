"""libvmaf's ``float_psnr``: the reference (``admcuda.reference.float_psnr``) and the host
feature's sum (``admcuda.vmaf.float_psnr``) against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/float_psnr_goldens.json`` (``testdata/make_float_psnr_goldens.py``,
libvmaf 3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every
frame's value at full precision from libvmaf's C API, on synthetic pairs made again here
from the script (checked by sha256) at 8, 10, 12 and 16 bits, odd sizes down to 1x1,
identical frames, 0 against the peak, one-step errors around each cap, and a 2048x1536
16-bit pair whose squares' double sum rounds as it goes; cases on ``../shared/netflix``'s
pairs skip where that folder is missing. Every value is compared with ``==``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import float_psnr as R
from admcuda.reference import picture_copy as P

from admcuda.errors import AdmError
from admcuda.vmaf import float_psnr as V

GOLD = FeatureGoldens("float_psnr", feature="float_psnr", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
LONG = "long16_400"  # the pair whose running sum rounds


planes = GOLD.luma


def _bitdepth(key: str) -> int:
    return GOLD.geometry(CASES[key])[3]


def _frames(key: str, compute) -> list[dict[str, float]]:
    ref, dis = planes(key)
    return [compute(r, d, _bitdepth(key)) for r, d in zip(ref, dis, strict=True)]


def _fast(ref: np.ndarray, dis: np.ndarray, bd: int) -> dict[str, float]:
    return V.float_psnr_frame(None, ref, dis, bd)


def test_the_goldens_were_made_by_the_script():
    prov = GOLDENS["_provenance"]
    assert prov["script_sha256"] == GOLD.script_sha256()
    assert prov["libvmaf_version"] == "3.2.0" and prov["names"] == "float_psnr"


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    assert _frames(key, R.compute_float_psnr) == CASES[key]["frames"]


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_host_sum_equals_libvmaf(key):
    assert _frames(key, _fast) == CASES[key]["frames"]


def test_the_long_pair_takes_the_running_sum(monkeypatch):
    """Past 2**52 units the host's sum falls back to the sample-after-sample sum; below,
    it never does."""
    calls = []
    real = R.sequential_sum

    def counted(values):
        calls.append(values.size)
        return real(values)

    monkeypatch.setattr(R, "sequential_sum", counted)
    assert _frames(LONG, _fast) == CASES[LONG]["frames"]
    assert calls == [2048 * 1536]
    calls.clear()
    assert _frames("n16_420", _fast) == CASES["n16_420"]["frames"]
    assert calls == []


def test_the_caps_and_the_16_bit_swing():
    """Identical frames give each bit depth's cap; 0 against the peak gives 0 dB, but at
    16 bits the peak's float32 square (65534.0) is below the double square of libvmaf's
    peak, 255.99609375: a PSNR just above 0."""
    for key, cap in (("same8_420", 60.0), ("same10_444", 72.0), ("same12_400", 84.0),
                     ("same16_420", 108.0)):  # fmt: skip
        assert CASES[key]["frames"] == [{"float_psnr": cap}]
    assert CASES["swing8_444"]["frames"] == CASES["swing10_400"]["frames"] == [{"float_psnr": 0.0}]
    (frame,) = CASES["swing16_400"]["frames"]
    assert frame["float_psnr"] == 10 * math.log10(255.99609375**2 / 65534.0) > 0


@pytest.mark.parametrize("key", ["steps8_444", "steps10_420", "steps12_400", "steps16_444"])
def test_one_step_errors_around_the_cap(key):
    """No error, one, and k errors give the cap; k + 1 just under it; every sample off
    by one step, ``10 * log10(peak**2 * scaler**2)``."""
    bd = _bitdepth(key)
    values = [f["float_psnr"] for f in CASES[key]["frames"]]
    cap = R.PSNR_MAX[bd]
    assert values[:3] == [cap] * 3
    assert cap - 0.2 < values[3] < cap
    assert values[4] == pytest.approx(20 * math.log10(R.PEAKS[bd] * R.SCALERS[bd]))


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(mistake) -> set[str]:
    """The synthetic cases whose goldens ``mistake`` (a compute_float_psnr stand-in) misses."""
    return {k for k in SYNTHETIC if _frames(k, mistake) != CASES[k]["frames"]}


def _with_noise(noise):
    """compute_float_psnr with the mean squared difference taken by ``noise``."""
    return lambda r, d, bd: {"float_psnr": R.psnr(noise(r, d, bd), bd)}


def _with_score(score):
    """compute_float_psnr with the score taken by ``score(peak, noise, cap)``."""

    def compute(r, d, bd):
        mse = max(R.noise(r, d, bd), R.EPS)
        return {"float_psnr": score(R.PEAKS[bd], mse, R.PSNR_MAX[bd])}

    return compute


def test_a_pairwise_sum_misses_the_long_pair(monkeypatch):
    """NumPy's pairwise sum, in the reference or as the host's only sum."""
    monkeypatch.setattr(R, "sequential_sum", lambda v: float(v.sum(dtype=np.float64)))
    assert _misses(R.compute_float_psnr) == {LONG}
    assert _frames(LONG, _fast) != CASES[LONG]["frames"]


def test_squares_in_float64_miss_the_16_bit_pairs():
    """Below 16 bits every square is exact in float32; at 16 bits the goldens hold the
    float32 rounding (of differences past 16: the swing and the long pair)."""

    def squares(dtype):
        def noise(r, d, bd):
            diff = P.picture_copy(r, bd).astype(dtype) - P.picture_copy(d, bd)
            return R.sequential_sum(diff * diff) / r.size

        return _with_noise(noise)

    assert _misses(squares(np.float64)) == {"swing16_400", LONG}
    assert _misses(squares(np.float32)) == set()


def test_a_float32_sum_misses():
    """A float32 running sum rounds once it passes 2**24 units."""

    def narrow(r, d, bd):
        squares = R.squared_differences(r, d, bd).ravel()
        return float(np.add.accumulate(squares)[-1]) / r.size

    assert _misses(_with_noise(narrow)) >= {"n16_400_odd", "n16_420", "swing8_444", LONG}


def test_integer_psnrs_formula_misses_the_16_bit_pairs():
    """integer_psnr's way (the squared differences of the integer samples, exact, and the
    peak 2**bd - 1) gives the same doubles below 16 bits, not at 16 bits."""

    def integer(r, d, bd):
        sse = float(np.square(r.astype(np.int64) - d).sum())
        top = float((1 << bd) - 1)
        value = 10 * math.log10(top * top / max(sse / r.size, 1e-16))
        return {"float_psnr": min(value, R.PSNR_MAX[bd])}

    assert _misses(integer) == {"swing16_400", LONG}


@pytest.mark.parametrize(
    "score,missed",
    [
        # the natural logarithm over ln(10)
        (lambda p, n, c: min(10 * math.log(p * p / n) / math.log(10), c), "n8_420"),
        # log10f: the logarithm in float32
        (lambda p, n, c: min(10 * float(np.log10(np.float32(p * p / n))), c), "n8_420"),
        # the peak's and the noise's logarithms apart
        (lambda p, n, c: min(20 * math.log10(p) - 10 * math.log10(n), c), "n8_420"),
        # no cap
        (lambda p, n, c: 10 * math.log10(p * p / n), "same8_420"),
        # 255 at every bit depth
        (lambda p, n, c: min(10 * math.log10(255.0**2 / n), c), "n10_422"),
    ],
)
def test_another_score_misses(score, missed):
    assert missed in _misses(_with_score(score))


@pytest.mark.parametrize(
    "scalers",
    [
        {8: 1.0, 10: 1.0, 12: 1.0, 16: 1.0},  # the samples undivided
        {8: 1.0, 10: 1023 / 255, 12: 4095 / 255, 16: 65535 / 255},  # peak onto 255
        {8: 1.0, 10: 4.0, 12: 16.0, 16: 16.0},  # 16 bits as 12
    ],
)
def test_another_scaler_misses_its_pairs(scalers, monkeypatch):
    """Every pair of a changed bit depth that is not capped whatever the scale."""
    changed = {k for k in SYNTHETIC if scalers[_bitdepth(k)] != P.SCALERS[_bitdepth(k)]}
    monkeypatch.setattr(P, "SCALERS", scalers)
    capped = {k for k in changed if k.startswith("same")}
    assert changed and _misses(R.compute_float_psnr) == changed - capped


# --- what the planes may be --------------------------------------------------------------------


@pytest.mark.parametrize(
    "plane,bd,needle",
    [
        (np.zeros((4, 4), np.uint8), 10, "float_psnr reads a non-empty 2-D plane of uint16"),
        (np.zeros((4, 4), np.uint16), 8, "uint8 at 8 bits"),
        (np.zeros((0, 4), np.uint8), 8, "non-empty 2-D plane"),
        (np.zeros(4, np.uint8), 8, "non-empty 2-D plane"),
        (np.zeros((4, 4), np.uint16), 9, "float_psnr takes bit depths 8, 10, 12 and 16, not 9"),
    ],
)
def test_planes_it_cannot_read_are_one_line(plane, bd, needle):
    with pytest.raises(AdmError, match=needle):
        V.float_psnr_frame(None, plane, plane, bd)


def test_planes_of_two_shapes_are_refused():
    with pytest.raises(AdmError, match="planes of"):
        V.float_psnr_frame(None, np.zeros((4, 4), np.uint8), np.zeros((4, 5), np.uint8), 8)


def test_a_strided_view_reads_as_its_samples():
    ref, dis = planes("n10_400_odd")
    wide = np.zeros((ref.shape[1], ref.shape[2] * 2), np.uint16)
    wide[:, ::2] = ref[0]
    got = V.float_psnr_frame(None, wide[:, ::2], dis[0], 10)
    assert got == CASES["n10_400_odd"]["frames"][0]

"""libvmaf's ``float_ansnr``: the reference (``admcuda.reference.float_ansnr``) and the
host feature's blocks of rows (``admcuda.vmaf.float_ansnr``) against libvmaf 3.2.0's
scalar C.

Goldens: ``testdata/float_ansnr_goldens.json`` (``testdata/make_float_ansnr_goldens.py``,
libvmaf 3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every
frame's ``float_ansnr`` and ``float_anpsnr`` at full precision from libvmaf's C API, on
synthetic pairs made again here from the script (checked by sha256) at 8, 10, 12 and 16
bits, 3x3 to 1920x1080, frames at the caps and past them, a reference without signal
(minus infinity) and 0 against the peak; cases on ``../shared/netflix``'s pairs skip
where that folder is missing. Every value is compared with ``==``, names and their order
too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import float_ansnr as R
from admcuda.reference import picture_copy as P

from admcuda.errors import AdmError
from admcuda.vmaf import float_ansnr as V

GOLD = FeatureGoldens("float_ansnr", feature="float_ansnr", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
BIG = {"big8_420", "big16_400"}
SMALL = [k for k in SYNTHETIC if k not in BIG]  # the mistakes' tests read these


planes = GOLD.luma


def _frames(key: str, compute) -> list[dict[str, float]]:
    ref, dis = planes(key)
    bd = GOLD.geometry(CASES[key])[3]
    return [compute(r, d, bd) for r, d in zip(ref, dis, strict=True)]


def _fast(ref: np.ndarray, dis: np.ndarray, bd: int) -> dict[str, float]:
    return V.float_ansnr_frame(None, ref, dis, bd)


def _check(frames: list[dict[str, float]], key: str) -> None:
    want = CASES[key]["frames"]
    assert frames == want
    assert [list(f) for f in frames] == [list(f) for f in want]


def test_the_goldens_were_made_by_the_script():
    prov = GOLDENS["_provenance"]
    assert prov["script_sha256"] == GOLD.script_sha256()
    assert prov["libvmaf_version"] == "3.2.0"


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    _check(_frames(key, R.compute_float_ansnr), key)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_the_blocks_of_rows_equal_libvmaf(key):
    _check(_frames(key, _fast), key)


@pytest.mark.parametrize("samples", [1, 64, 1000])
def test_blocks_of_any_size_give_the_same_doubles(monkeypatch, samples):
    """Blocks of one row up to a few: the rows' running sums are the same."""
    monkeypatch.setattr(V, "_BLOCK_SAMPLES", samples)
    for key in ("n8_400_odd", "tall10_400", "blur12_444", "min8_400"):
        _check(_frames(key, _fast), key)


def test_the_goldens_reach_the_edges():
    """Both caps where there is no noise; float_ansnr past its cap where the noise is near
    0 and minus infinity where the reference has no signal; float_anpsnr 0 at 0 against
    the peak."""
    first = {k: CASES[k]["frames"][0] for k in SYNTHETIC}
    assert first["grey8_444"] == {"float_ansnr": 60.0, "float_anpsnr": 60.0}
    assert first["grey12_400"] == {"float_ansnr": 84.0, "float_anpsnr": 84.0}
    assert first["const16_420"]["float_ansnr"] > 108.0 == first["const16_420"]["float_anpsnr"]
    assert first["flat8_420"]["float_ansnr"] == -math.inf
    assert first["swing8_444"]["float_anpsnr"] == 0.0


def test_the_kernels_are_the_cs_float32():
    assert R.FILTER_REF.dtype == R.FILTER_DIS.dtype == np.float32
    assert R.FILTER_REF.tolist() == [[0.0625, 0.125, 0.0625], [0.125, 0.25, 0.125],
                                     [0.0625, 0.125, 0.0625]]  # fmt: skip
    assert R.FILTER_DIS[2, 2] == np.float32(127.0 / 571.0)
    assert R.FILTER_DIS[0, 1] == np.float32(7.0 / 571.0)


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(monkeypatch, name: str, stand_in) -> set[str]:
    """The small synthetic cases whose goldens the reference misses with ``name``
    replaced."""
    monkeypatch.setattr(R, name, stand_in)
    return {k for k in SMALL if _frames(k, R.compute_float_ansnr) != CASES[k]["frames"]}


# noisy pairs every mistake below misses
NOISE = {"n8_400_odd", "n10_400_odd", "n10_422", "n12_444_odd", "n16_420", "same10_444",
         "tall10_400"}  # fmt: skip


def _mirror(top: int, bottom: int):
    """A mirror reading ``-i + top`` below 0 and ``2 * n - i + bottom`` past the end."""

    def indices(n, radius):
        index = np.arange(-radius, n + radius)
        return np.where(index < 0, top - index, np.where(index >= n, 2 * n - index + bottom, index))

    return indices


@pytest.mark.parametrize(
    "mirror",
    [_mirror(-1, -1), _mirror(0, -2)],
    ids=["with the edge everywhere", "without the edge everywhere"],
)
def test_other_mirrors_miss(monkeypatch, mirror):
    """``np.pad``'s symmetric mirror at the top and left too, or its reflect mirror (the
    VIF filters') at the bottom and right too."""
    missed = _misses(monkeypatch, "mirrored_indices", mirror)
    assert missed >= NOISE | {"min8_400", "wide8_400", "flat8_420", "blur8_420"}


def test_a_float64_filter_misses(monkeypatch):
    real = R.filter2d

    def wide(kernel, picture):
        return real(kernel.astype(np.float64), picture.astype(np.float64)).astype(np.float32)

    assert _misses(monkeypatch, "filter2d", wide) >= NOISE | {"min8_400", "min16_444"}


def test_a_filter_summed_tap_after_tap_misses(monkeypatch):
    """One float32 running sum over all 25 taps, not a sum of the kernel rows' sums."""

    def flat(kernel, picture):
        h, w = picture.shape
        size = kernel.shape[0]
        radius = size // 2
        padded = picture[np.ix_(R.mirrored_indices(h, radius), R.mirrored_indices(w, radius))]
        total = np.zeros((h, w), np.float32)
        for fi in range(size):
            for fj in range(size):
                total += kernel[fi, fj] * padded[fi : fi + h, fj : fj + w]
        return total

    missed = _misses(monkeypatch, "filter2d", flat)
    assert missed >= NOISE | {"blur8_420", "blur12_444", "min8_400"}


def test_the_kernels_swapped_miss(monkeypatch):
    monkeypatch.setattr(R, "FILTER_REF", R.FILTER_DIS)
    monkeypatch.setattr(R, "FILTER_DIS", R.FILTER_REF)
    missed = {k for k in SMALL if _frames(k, R.compute_float_ansnr) != CASES[k]["frames"]}
    assert missed >= NOISE | {"blur8_420", "const16_420"}


@pytest.mark.parametrize(
    "summed",
    [
        lambda x: np.float32(x.sum(dtype=np.float32)),  # NumPy's pairwise sum
        lambda x: np.float32(x.sum(dtype=np.float64)),  # one double sum
        lambda x: np.float32(np.add.accumulate(x.ravel(), dtype=np.float32)[-1]),  # one run
    ],
    ids=["pairwise", "double", "one running sum"],
)
def test_other_sums_miss(monkeypatch, summed):
    def mse(ref, dis):
        diff = ref - dis
        return summed(ref * ref), summed(diff * diff)

    missed = _misses(monkeypatch, "mse", mse)
    assert missed >= NOISE | {"blur8_420", "wide8_400", "const16_420", "flat10_400"}


def test_a_double_quotient_misses(monkeypatch):
    """libvmaf divides the two float32 sums in float32 before its double log10."""
    real = R.scores

    def double(signal, noise, w, h, bitdepth):
        out = real(signal, noise, w, h, bitdepth)
        if noise and signal:
            out["float_ansnr"] = 10.0 * math.log10(float(signal) / float(noise))
        return out

    missed = _misses(monkeypatch, "scores", double)
    assert missed >= NOISE | {"swing8_444", "const16_420"}


def test_a_capped_float_ansnr_misses(monkeypatch):
    real = R.scores

    def capped(signal, noise, w, h, bitdepth):
        out = real(signal, noise, w, h, bitdepth)
        out["float_ansnr"] = min(out["float_ansnr"], R.PSNR_MAX[bitdepth])
        return out

    assert _misses(monkeypatch, "scores", capped) == {"const16_420"}


def test_no_offset_misses(monkeypatch):
    """Without picture_copy's -128 the signal is another."""
    real = P.picture_copy
    monkeypatch.setattr(R, "picture_copy", lambda plane, bd, offset, feature: real(plane, bd))
    missed = {k for k in SMALL if _frames(k, R.compute_float_ansnr) != CASES[k]["frames"]}
    assert missed >= NOISE | {"flat8_420", "const10_400", "swing8_444"}


# --- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(2, 3), (3, 2), (1, 1)])
def test_frames_under_3_samples_a_side_are_refused(size):
    w, h = size
    plane = np.zeros((h, w), np.uint8)
    with pytest.raises(AdmError, match=f"a {w}x{h} frame is under 3 samples a side"):
        V.float_ansnr_frame(None, plane, plane, 8)
    with pytest.raises(ValueError, match="reads outside it"):
        R.compute_float_ansnr(plane, plane, 8)


def test_planes_it_cannot_read_are_one_line():
    plane = np.zeros((4, 4), np.uint8)
    with pytest.raises(AdmError, match="planes of"):
        V.float_ansnr_frame(None, plane, plane[:3], 8)
    with pytest.raises(AdmError, match="uint16 at 10 bits"):
        V.float_ansnr_frame(None, plane, plane, 10)
    with pytest.raises(AdmError, match="takes bit depths 8, 10, 12 and 16, not 9"):
        V.float_ansnr_frame(None, plane.astype(np.uint16), plane.astype(np.uint16), 9)

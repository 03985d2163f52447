"""libvmaf's ``float_vif``: the reference (``admcuda.reference.float_vif``) and the host
feature's blocks of rows (``admcuda.vmaf.float_vif``) against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/float_vif_goldens.json`` (``testdata/make_float_vif_goldens.py``,
libvmaf 3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every
frame's four scale scores and ``debug`` outputs at full precision from libvmaf's C API,
on synthetic pairs made again here from the script (checked by sha256) at 8, 10, 12 and
16 bits, 16x16 (the least every scale's filter reads inside) to 1920x1080, frames
without variance, 0 against the peak, and every option (the four prescale methods,
kernel scales, ``vif_skip_scale0``, ``vif_enhn_gain_limit``, ``vif_sigma_nsq`` 0 too, the
minimum values); cases on ``../shared/netflix``'s pairs skip where that folder is
missing. Every value is compared with ``==``, names and their order too; a mismatch
reports the largest absolute difference.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import float_vif as R
from admcuda.reference import picture_copy as P

from admcuda.errors import AdmError
from admcuda.vmaf import float_vif as V
from admcuda.vmaf.plan import _parse_value

GOLD = FeatureGoldens("float_vif", feature="float_vif", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
BIG = {"big8_420", "big16_400"}
SMALL = [k for k in SYNTHETIC if k not in BIG]  # the mistakes' tests read these


def options(key: str) -> R.FloatVifOptions:
    """A case's options (``debug`` on, as the goldens were made), parsed as ``--feature``
    parses them."""
    text = CASES[key]["options"]
    given = dict(item.split("=", 1) for item in text.split(":")) if text else {}
    parsed = V.parse_options("--feature float_vif", given, _parse_value)
    return R.FloatVifOptions(**{**parsed.__dict__, "debug": True})


planes = GOLD.luma


def _reference(ref: np.ndarray, dis: np.ndarray, bd: int, opts) -> dict[str, float]:
    names = R.collector_names(opts)
    return {names[f]: v for f, v in R.compute_float_vif(ref, dis, bd, opts).items()}


def _fast(ref: np.ndarray, dis: np.ndarray, bd: int, opts) -> dict[str, float]:
    ex = SimpleNamespace(options=opts, names=R.collector_names(opts))
    return V.float_vif_frame(ex, ref, dis, bd)


def _frames(key: str, compute) -> list[dict[str, float]]:
    ref, dis = planes(key)
    bd = GOLD.geometry(CASES[key])[3]
    opts = options(key)
    return [compute(r, d, bd, opts) for r, d in zip(ref, dis, strict=True)]


def _same(a: float, b: float) -> bool:
    """``==``, and NaN where libvmaf gives NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))


def _check(frames: list[dict[str, float]], key: str) -> None:
    want = CASES[key]["frames"]
    assert [list(f) for f in frames] == [list(f) for f in want]
    diffs = [abs(g[n] - w[n]) for g, w in zip(frames, want, strict=True) for n in w
             if not _same(g[n], w[n])]  # fmt: skip
    assert not diffs, f"{len(diffs)} values differ, by at most {max(diffs)!r}"


def _equal(frames: list[dict[str, float]], key: str) -> bool:
    want = CASES[key]["frames"]
    return all(_same(g[n], w[n]) for g, w in zip(frames, want, strict=True) for n in w)


def test_the_goldens_were_made_by_the_script():
    prov = GOLDENS["_provenance"]
    assert prov["script_sha256"] == GOLD.script_sha256()
    assert prov["libvmaf_version"] == "3.2.0"
    assert "f85a8536" in prov["libvmaf_commit"] and prov["date"] == "2026-12-07"


def test_the_case_names_are_the_scripts():
    """The collector names this module computes are those the script asked the oracle
    for, options' suffixes included."""
    for key in CASES:
        names = R.collector_names(options(key))
        assert list(CASES[key]["frames"][0]) == [names[f] for f in R.PROVIDED_FEATURES]
        assert MAKER.collector_names(CASES[key]["options"]) == names


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    _check(_frames(key, _reference), key)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_the_blocks_of_rows_equal_libvmaf(key):
    _check(_frames(key, _fast), key)


@pytest.mark.parametrize("samples", [1, 64, 1000])
def test_blocks_of_any_size_give_the_same_doubles(monkeypatch, samples):
    """Blocks of one row up to a few: each row's running sums are the same."""
    monkeypatch.setattr(V, "_BLOCK_SAMPLES", samples)
    for key in ("n8_400_odd", "tall10_400", "blur12_444", "min8_400", "n8_420__ssclz"):
        _check(_frames(key, _fast), key)


def test_the_goldens_reach_the_edges():
    """Frames without variance score 1 (every term 1 - 0); a distorted frame without
    variance against a noisy reference far less; ``vif_sigma_nsq`` 0 makes libvmaf's
    fast log2 of NaN (0/0) a finite denominator; ``vif_skip_scale0`` writes 0 and -1 for
    scale 0; the minimum values hold scale 1 and 3 up."""
    first = {k: CASES[k]["frames"][0] for k in CASES}
    grey = first["grey8_444"]
    assert [grey[f] for f in R.SCORE_FEATURES] == [1.0] * 4
    flat = first["flat10_400"]["VMAF_feature_vif_scale0_score"]
    assert 0.99 < flat < 1.0  # a reference without variance: 1 less the distorted variance
    nan_den = first["grey8_444__snsq0"]
    assert nan_den["vif_snsq_0"] == 0.0 and 128 * 342 < nan_den["vif_den_scale0_snsq_0"] < 129 * 342
    skipped = first["n8_420__ssclz"]
    assert skipped["vif_scale0_ssclz"] == 0.0 and skipped["vif_den_scale0_ssclz"] == -1.0
    held = [
        f["vif_scale3_s1miv_0.9_s2miv_0.95_s3miv_1"] for f in CASES["n8_400_odd__miv"]["frames"]
    ]
    assert held == [1.0, 1.0, 1.0]


def test_the_taps_are_libvmafs():
    """17, 9, 5 and 3 float32 taps at kernel scale 1, each set summing to about 1; kernel
    scale 2 doubles them and rounds up to odd."""
    sizes = [len(R.filter_taps(s, 1.0)) for s in range(4)]
    assert sizes == [17, 9, 5, 3]
    assert [len(R.filter_taps(s, 2.0)) for s in range(4)] == [35, 19, 11, 7]
    for s in range(4):
        taps = R.filter_taps(s, 1.0)
        assert taps.dtype == np.float32 and abs(float(taps.sum()) - 1.0) < 1e-6
        assert taps.tolist() == taps[::-1].tolist()


def test_the_fast_log2_is_libvmafs_polynomial():
    x = np.array([1.0, 2.0, 3.0, 0.5, 1e-30, 7e30], np.float32)
    got = R.log2f_approx(x)
    assert got.dtype == np.float32
    assert got[0] == 0.0 and got[1] == 1.0 and got[3] == -1.0
    assert np.all(np.abs(got - np.log2(x)) < 1e-4) and got[2] != np.float32(np.log2(3.0))
    assert R.log2f_approx(np.float32(0.0)) == -np.inf
    assert np.isnan(R.log2f_approx(np.float32(-1.0)))


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(monkeypatch, name: str, stand_in) -> set[str]:
    """The small synthetic cases whose goldens the reference misses with ``name``
    replaced."""
    monkeypatch.setattr(R, name, stand_in)
    return {k for k in SMALL if not _equal(_frames(k, _reference), k)}


# noisy pairs every mistake below misses
NOISE = {"n8_400_odd", "n10_400_odd", "n10_422", "n12_444_odd", "n16_420", "n16_400_odd",
         "tall10_400", "blur8_420"}  # fmt: skip


def _mirror(top: int, bottom: int):
    """A mirror reading ``-i + top`` below 0 and ``2 * n - i + bottom`` past the end."""

    def indices(n, radius):
        index = np.arange(-radius, n + radius)
        return np.where(index < 0, top - index, np.where(index >= n, 2 * n - index + bottom, index))

    return indices


@pytest.mark.parametrize(
    "mirror",
    [_mirror(-1, -1), _mirror(0, -1)],
    ids=["with the edge everywhere", "with the edge at the bottom and right"],
)
def test_other_mirrors_miss(monkeypatch, mirror):
    """``np.pad``'s symmetric mirror, or float_ansnr's (with the edge past the end)."""
    missed = _misses(monkeypatch, "mirrored_indices", mirror)
    assert missed >= NOISE | {"min8_400", "min16_444", "wide8_400", "flat8_420"}


def test_a_float64_filter_misses(monkeypatch):
    real = R.filter1d

    def wide(taps, a, b=None, *, square=False):
        a = a.astype(np.float64)
        b = None if b is None else b.astype(np.float64)
        return real(taps.astype(np.float64), a, b, square=square).astype(np.float32)

    assert _misses(monkeypatch, "filter1d", wide) >= NOISE | {"min8_400", "min16_444"}


def test_the_horizontal_pass_first_misses(monkeypatch):
    real = R.filter1d

    def transposed(taps, a, b=None, *, square=False):
        b = None if b is None else b.T
        return real(taps, a.T, b, square=square).T

    assert _misses(monkeypatch, "filter1d", transposed) >= NOISE | {"min8_400"}


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
    missed = _misses(monkeypatch, "row_major_sum", summed)
    assert missed >= NOISE | {"wide8_400", "n16_420__egl1.5"}


def test_libms_log2_misses(monkeypatch):
    """libvmaf's build takes VIF_OPT_FAST_LOG2's polynomial, not libm's log2f."""

    def exact(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log2(np.asarray(x, dtype=np.float32))

    missed = _misses(monkeypatch, "log2f_approx", exact)
    assert missed >= NOISE - {"n8_400_odd"} | {"min8_400", "grey8_444__snsq0"}


def test_a_float32_sigma_nsq_misses(monkeypatch):
    """The quotients under the logarithms are double: vif_sigma_nsq is one. Here the
    numerator's ``1 + g * g * sigma1 / (sv + nsq)`` is float32 throughout."""
    real = R.statistic_terms
    f0, f1 = np.float32(0.0), np.float32(1.0)

    def narrow(mu1, mu2, xx, yy, xy, gain_limit, sigma_nsq):
        num, den = real(mu1, mu2, xx, yy, xy, gain_limit, sigma_nsq)
        nsq = np.float32(sigma_nsq)
        s1 = np.where(xx - mu1 * mu1 > f0, xx - mu1 * mu1, f0)
        s2 = np.where(yy - mu2 * mu2 > f0, yy - mu2 * mu2, f0)
        s12 = xy - mu1 * mu2
        with np.errstate(divide="ignore", invalid="ignore"):
            g = s12 / (s1 + R.EPS)
            sv = s2 - g * s12
        usual = (s1 >= R.EPS) & (s2 >= R.EPS) & (g >= f0) & (s12 >= f0)
        g = np.minimum(g, np.float32(gain_limit))
        sv = np.where(sv > R.EPS, sv, R.EPS)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            num32 = R.log2f_approx(f1 + g * g * s1 / (sv + nsq))
        usual &= s1.astype(np.float64) >= sigma_nsq
        return np.where(usual, num32, num).astype(np.float32), den

    missed = _misses(monkeypatch, "statistic_terms", narrow)
    assert missed >= {"n8_400_odd", "n10_400_odd", "n12_444_odd", "n16_400_odd", "min16_444",
                      "blur8_420__ks2", "n10_422__ps0.8_bilinear"}  # fmt: skip


def test_the_previous_scales_taps_before_decimation_miss(monkeypatch):
    """From scale 1 on, libvmaf filters the scale before with the new scale's taps."""
    real = R.filter_taps
    calls: list[int] = []

    def previous(scale, kernelscale):
        calls.append(scale)
        # the first call of a scale above 0 makes the decimation's taps
        if scale > 0 and calls.count(scale) % 2 == 1:
            return real(scale - 1, kernelscale)
        return real(scale, kernelscale)

    monkeypatch.setattr(R, "vif_sums", _vif_sums_with_two_tap_lookups)
    assert _misses(monkeypatch, "filter_taps", previous) >= NOISE | {"min8_400"}


def _vif_sums_with_two_tap_lookups(ref, dis, opts):
    """:func:`admcuda.reference.float_vif.vif_sums` asking for the taps once for the
    decimation and once for the statistic."""
    ks = float(np.float32(opts.vif_kernelscale))
    sums = []
    for scale in range(1 if opts.vif_skip_scale0 else 0, R.NUM_SCALES):
        if scale > 0:
            taps = R.filter_taps(scale, ks)
            ref = R.decimate(R.filter1d(taps, ref))
            dis = R.decimate(R.filter1d(taps, dis))
        taps = R.filter_taps(scale, ks)
        mu1, mu2 = R.filter1d(taps, ref), R.filter1d(taps, dis)
        xx, yy = R.filter1d(taps, ref, square=True), R.filter1d(taps, dis, square=True)
        xy = R.filter1d(taps, ref, dis)
        num, den = R.statistic(mu1, mu2, xx, yy, xy, opts.vif_enhn_gain_limit, opts.vif_sigma_nsq)
        sums.append((float(num), float(den)))
    return sums


def test_the_two_tap_lookups_alone_change_nothing(monkeypatch):
    monkeypatch.setattr(R, "vif_sums", _vif_sums_with_two_tap_lookups)
    for key in ("n8_400_odd", "n16_420__ks1.5", "n8_420__ssclz"):
        _check(_frames(key, _reference), key)


def test_no_offset_misses(monkeypatch):
    """Without picture_copy's -128 the means, and so the statistic, are others."""
    real = P.picture_copy
    monkeypatch.setattr(R, "picture_copy", lambda plane, bd, offset, feature: real(plane, bd))
    missed = {k for k in SMALL if not _equal(_frames(k, _reference), k)}
    assert missed >= NOISE | {"flat8_420", "swing8_444"}


# --- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(15, 16), (16, 15), (8, 8), (1, 1)])
def test_frames_under_16_samples_a_side_are_refused(size):
    w, h = size
    plane = np.zeros((h, w), np.uint8)
    ex = SimpleNamespace(options=R.FloatVifOptions(), names={})
    with pytest.raises(AdmError, match=f"a {w}x{h} frame .* is too small") as info:
        V.float_vif_frame(ex, plane, plane, 8)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="reads outside"):
        R.compute_float_vif(plane, plane, 8)


def test_the_least_size_follows_the_options():
    """Kernel scale 2's filters (35, 19, 11, 7 taps) need 32 samples a side; a prescale
    of 2 lets 8 do; vif_skip_scale0 and kernel scale 0.5 still need 16 (scale 3 keeps a
    3-tap filter)."""
    for opts, least in [
        (R.FloatVifOptions(vif_kernelscale=2.0), 32),
        (R.FloatVifOptions(vif_prescale=2.0), 8),
        (R.FloatVifOptions(vif_skip_scale0=True), 16),
        (R.FloatVifOptions(vif_kernelscale=0.5), 16),
    ]:
        R.check_size(least, least, opts)
        with pytest.raises(ValueError, match="too small"):
            R.check_size(least - 1, least, opts)


def test_a_wide_bilinear_prescale_is_refused():
    opts = R.FloatVifOptions(vif_prescale=2.0, vif_prescale_method="bilinear")
    with pytest.raises(ValueError, match="bilinear prescale to a width of 7682"):
        R.check_size(3841, 100, opts)
    R.check_size(3840, 100, opts)


@pytest.mark.parametrize(
    "given, message",
    [
        ({"vif_kernelscale": "0.3"}, "none of libvmaf's kernel scales"),
        ({"vif_enhn_gain_limit": "0.5"}, "must be in [1, 100]"),
        ({"vif_prescale": "5"}, "must be in [0.1, 4]"),
        ({"vif_prescale_method": "cubic"}, "must be one of nearest, bilinear, bicubic"),
        ({"vif_sigma_nsq": "-1"}, "must be in [0, 5]"),
        ({"vif_skip_scale0": "1"}, "expects true or false"),
        ({"vif_scale1_min_val": "x"}, "expects a number"),
    ],
)
def test_bad_options_are_one_line(given, message):
    with pytest.raises(AdmError) as info:
        V.parse_options("--feature float_vif", given, _parse_value)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("--feature float_vif: ")


def test_planes_it_cannot_read_are_one_line():
    plane = np.zeros((16, 16), np.uint8)
    ex = SimpleNamespace(options=R.FloatVifOptions(), names={})
    with pytest.raises(AdmError, match="planes of"):
        V.float_vif_frame(ex, plane, plane[:15], 8)
    with pytest.raises(AdmError, match="uint16 at 10 bits"):
        V.float_vif_frame(ex, plane, plane, 10)
    with pytest.raises(AdmError, match="takes bit depths 8, 10, 12 and 16, not 9"):
        V.float_vif_frame(ex, plane.astype(np.uint16), plane.astype(np.uint16), 9)

"""libvmaf's ``float_adm``: the reference (``admcuda.reference.float_adm``) and the host
feature (``admcuda.vmaf.float_adm``) against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/float_adm_goldens.json`` (``testdata/make_float_adm_goldens.py``,
libvmaf 3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every
frame's outputs, debug ones included, at full precision from libvmaf's C API, on
synthetic pairs made again here from the script (checked by sha256) at 8, 10, 12 and 16
bits, 17x17 (the least size) to 1920x1080, odd sides, flat and constant frames, 0
against the peak, each option of libvmaf's table; cases on ``../shared/netflix``'s pairs
skip where that folder is missing. Every value is compared with ``==``, names and their
order too; a mismatch reports the largest absolute difference.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _golden_cases import FeatureGoldens, max_abs_diff
from admcuda.reference import float_adm as R
from admcuda.reference import rcpss as RC
from conftest import TESTDATA

from admcuda.errors import AdmError
from admcuda.vmaf import float_adm as V
from admcuda.vmaf.plan import parse_feature_arg

GOLD = FeatureGoldens("float_adm", feature="float_adm", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
BIG = {"big8_420", "big16_400"}
SMALL = [k for k in SYNTHETIC if k not in BIG and not CASES[k]["options"]]


planes = GOLD.luma


def options_of(key: str) -> V.FloatAdmOptions:
    """A case's options, with ``debug`` (the goldens hold the debug outputs)."""
    text = "float_adm=debug=true" + (":" + CASES[key]["options"] if CASES[key]["options"] else "")
    options = parse_feature_arg(text)[1]
    assert isinstance(options, V.FloatAdmOptions)
    return options


class _Ex:
    def __init__(self, options: V.FloatAdmOptions) -> None:
        self.options = options


def _reference(key: str):
    options = options_of(key)
    names = V.output_names(options)

    def compute(ref, dis, bd):
        return dict(zip(names, R.compute_float_adm(ref, dis, bd, options).values(), strict=True))

    return compute


def _fast(key: str):
    ex = _Ex(options_of(key))
    return lambda ref, dis, bd: V.float_adm_frame(ex, ref, dis, bd)


def _frames(key: str, compute) -> list[dict[str, float]]:
    ref, dis = planes(key)
    bd = GOLD.geometry(CASES[key])[3]
    return [compute(r, d, bd) for r, d in zip(ref, dis, strict=True)]


def _check(frames: list[dict[str, float]], key: str) -> None:
    want = CASES[key]["frames"]
    assert [list(f) for f in frames] == [list(f) for f in want]
    assert frames == want, f"max abs diff {max_abs_diff(frames, want):.3g}"


def test_the_goldens_were_made_by_the_script():
    prov = GOLDENS["_provenance"]
    assert prov["script_sha256"] == GOLD.script_sha256()
    assert prov["libvmaf_version"] == "3.2.0"


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    _check(_frames(key, _reference(key)), key)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_the_host_feature_equals_libvmaf(key):
    _check(_frames(key, _fast(key)), key)


def test_the_goldens_reach_the_edges():
    """No detail: adm2 1 from the noise floors alone; the least size; an AIM of 0 where
    its only scale is skipped; every option in some case (4 of the 8 factor overrides)."""
    first = {k: CASES[k]["frames"][0] for k in CASES}
    for key in ("grey8_444", "grey12_400", "const10_400", "same8_420"):
        assert first[key]["adm2"] == 1.0
    assert GOLD.geometry(CASES["min8_444"])[:2] == (17, 17)
    given = {kv.split("=")[0] for c in CASES.values() for kv in c["options"].split(":") if kv}
    overrides = {f"adm_f{a}s{s}" for a in (1, 2) for s in range(4)}
    assert given - overrides == set(V.TABLE) - {"debug"} - overrides
    assert len(given & overrides) == 4


# --- the CPU's reciprocal ---------------------------------------------------------------------


def test_rcpss_table_is_this_cpus():
    """The table against this CPU's ``rcpss`` (Numba): where they differ, libvmaf's own
    ``float_adm`` differs from the goldens on this CPU too."""
    pytest.importorskip("numba")
    spec = importlib.util.spec_from_file_location("rcpss_maker", TESTDATA / "make_rcpss_table.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x, np.float32([0.0, -0.0, np.inf, -np.inf, 1e-40, 2.0**126, 3e-30])])
    x = x[~np.isnan(x)]
    want = maker.hardware_rcpss(x).view(np.uint32)
    if not np.array_equal(RC.rcpss(x).view(np.uint32), want):
        pytest.skip("this CPU's rcpss is not the goldens' (libvmaf's float_adm differs here)")


def test_rcp_s_is_not_division():
    """One Newton step leaves ``rcp_s`` short of float32 division in places."""
    x = np.linspace(1, 2, 4097, dtype=np.float32)
    assert np.any(RC.rcp_s(x) != np.float32(1) / x)


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(monkeypatch, name: str, stand_in, module=R) -> set[str]:
    """The small synthetic cases without options whose goldens the reference misses with
    ``name`` replaced."""
    monkeypatch.setattr(module, name, stand_in)
    return {k for k in SMALL if _frames(k, _reference(k)) != CASES[k]["frames"]}


NOISE = {"n8_420", "n8_400_odd", "n10_400_odd", "n10_422", "n12_444_odd", "n16_420",
         "min8_444", "blur8_420"}  # fmt: skip


def test_a_float64_dwt_misses(monkeypatch):
    real = R._fir

    def wide(taps, coeffs):
        acc = np.zeros(taps[0].shape, np.float64)
        for k in range(4):
            acc += coeffs[k].astype(np.float64) * taps[k]
        return acc.astype(np.float32)

    assert real is not wide
    assert _misses(monkeypatch, "_fir", wide) >= NOISE


def test_a_mirror_with_the_edge_at_the_top_misses(monkeypatch):
    """``dwt2_src_indices_filt_s`` reads row 1 for row -1; ``np.pad``'s symmetric mirror
    reads row 0."""

    def symmetric(n):
        index = 2 * np.arange((n + 1) // 2)[None, :] + np.arange(-1, 3)[:, None]
        index = np.where(index < 0, -index - 1, index)
        return np.where(index >= n, 2 * n - index - 1, index)

    assert _misses(monkeypatch, "src_indices", symmetric) >= NOISE


def test_a_threshold_mirror_without_the_edge_at_the_bottom_misses(monkeypatch):
    """The threshold reads row ``n - 1`` for row ``n``; a reflect mirror reads ``n - 2``."""

    def reflect(n, lo, hi):
        i = np.arange(lo, hi)
        return np.where(i == 0, 1, i - 1), i, np.where(i == n - 1, n - 2, i + 1)

    assert _misses(monkeypatch, "_neighbours", reflect) >= NOISE - {"min8_444"}


@pytest.mark.parametrize(
    "summed",
    [
        lambda x: np.float32(x.sum(dtype=np.float32)),  # NumPy's pairwise sum
        lambda x: np.float32(np.add.accumulate(x.ravel(), dtype=np.float32)[-1]),  # one run
    ],
    ids=["pairwise", "one running sum"],
)
def test_other_sums_miss(monkeypatch, summed):
    assert _misses(monkeypatch, "_row_major_sum", summed) >= NOISE


def test_true_division_misses(monkeypatch):
    """Dividing by float32 division, not ``rcpss`` refined once."""
    assert len(_misses(monkeypatch, "divs", lambda n, d: np.float32(n) / d) & NOISE) >= 5


# --- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(16, 17), (17, 16), (3, 3)])
def test_frames_under_17_samples_a_side_are_refused(size):
    w, h = size
    plane = np.zeros((h, w), np.uint8)
    ex = _Ex(V.FloatAdmOptions())
    with pytest.raises(AdmError, match=f"a {w}x{h} frame is under 17 samples a side"):
        V.float_adm_frame(ex, plane, plane, 8)
    with pytest.raises(ValueError, match="under 2x2"):
        R.compute_float_adm(plane, plane, 8)


def test_planes_it_cannot_read_are_one_line():
    plane = np.zeros((20, 20), np.uint8)
    ex = _Ex(V.FloatAdmOptions())
    with pytest.raises(AdmError, match="planes of"):
        V.float_adm_frame(ex, plane, plane[:18], 8)
    with pytest.raises(AdmError, match="uint16 at 10 bits"):
        V.float_adm_frame(ex, plane, plane, 10)
    with pytest.raises(AdmError, match="takes bit depths 8, 10, 12 and 16, not 9"):
        V.float_adm_frame(ex, plane.astype(np.uint16), plane.astype(np.uint16), 9)


def test_a_zero_denominator_is_refused():
    """No detail and no noise floor: libvmaf leaves its aim unset (stack garbage)."""
    plane = np.full((20, 20), 128, np.uint8)
    ex = _Ex(V.FloatAdmOptions(adm_noise_weight=0.0))
    with pytest.raises(AdmError, match="denominator is 0"):
        V.float_adm_frame(ex, plane, plane, 8)


@pytest.mark.parametrize(
    "text, match",
    [
        (
            "float_adm=adm_enhn_gain_limit=0.5",
            r"adm_enhn_gain_limit must be in \[1, 100\]",
        ),
        ("float_adm=adm_csf_mode=10", r"adm_csf_mode must be in \[0, 9\]"),
        ("float_adm=adm_skip_aim_scale=4", r"adm_skip_aim_scale must be in \[0, 3\]"),
        ("float_adm=nope=1", "nope"),
    ],
)
def test_bad_options_are_one_line(text, match):
    with pytest.raises(AdmError, match=match) as info:
        parse_feature_arg(text)
    assert "\n" not in str(info.value)


def test_names_carry_libvmafs_suffixes():
    options = V.FloatAdmOptions(adm_csf_scale=1.5, adm_csf_mode=1, adm_csf_diag_scale=0.7)
    assert V.output_names(options)[0] == "adm2_scfd_0.7_csf_1_scf_1.5"
    assert V.output_names(V.FloatAdmOptions(adm_skip_scale0=True))[3] == "adm_scale0_ssz"
    debug = V.output_names(V.FloatAdmOptions(debug=True, adm_enhn_gain_limit=1.0))
    assert debug[7:9] == ("adm", "adm_num_egl_1")

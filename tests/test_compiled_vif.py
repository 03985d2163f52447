"""The compiled VIF (admcuda.compiled.vif) against the NumPy reference and libvmaf.

Truth: :mod:`reference.vif`'s per-scale accumulators (``vif_residuals``), ``==`` on
integers, and ``testdata/vmaf_goldens.json`` (libvmaf 3.2.0's scalar C path, provenance
in the file) through :func:`admcuda.backends.host.finish_vif`, ``==`` on
doubles.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _frames import luma_frames, same
from conftest import TESTDATA

pytest.importorskip("numba")

from admcuda.reference import vif as R  # noqa: E402
from admcuda.reference import vif_constants as V  # noqa: E402
from admcuda.reference.vif_filters import (  # noqa: E402
    pad_top_and_bottom,
    subsample_rd_8,
    subsample_rd_16,
)

from admcuda.backends.host import finish_vif  # noqa: E402
from admcuda.compiled.vif import vif_accumulators, vif_accumulators_batch  # noqa: E402
from admcuda.model import output_name  # noqa: E402

EGLS = (100.0, 2.5, 1.0)
# tiny, odd, short sides (scale 3 two to five samples: the mirror tables' cases), wide
SIZES = [(16, 16), (17, 19), (33, 37), (23, 40), (97, 55), (576, 324)]


def reference_accumulators(ref, dis, bitdepth, egls, skip_scale0):
    """(len(egls), 4, 4) int64 as :func:`reference.vif.vif_scales` chains the stages."""
    table = R.log_generate()
    r = pad_top_and_bottom(ref, V.VIF_FILTER_WIDTHS[0])
    d = pad_top_and_bottom(dis, V.VIF_FILTER_WIDTHS[0])
    out = np.zeros((len(egls), V.N_SCALES, 4), np.int64)
    for s in range(V.N_SCALES):
        if s == 1 and bitdepth == 8:
            r, d = subsample_rd_8(r, d)
        elif s > 0:
            r, d = subsample_rd_16(r, d, s - 1, bitdepth)
        if s == 0 and skip_scale0:
            continue
        if s == 0 and bitdepth == 8:
            tmp = R.vif_vertical_8(r, d)
        else:
            tmp = R.vif_vertical_16(r, d, bitdepth, s)
        sigmas = R.vif_sigma(R.vif_horizontal(tmp, s))
        for e, egl in enumerate(egls):
            out[e, s] = R.vif_residuals(*sigmas, table, egl)
    return out


def structured_pair(w, h, bitdepth, seed):
    """Gradients, edges and texture, and a distorted copy: blurred, noisy and sharpened
    by region, so that every branch of the statistic is taken (flat areas under the noise
    floor, gains above each limit, negative covariances)."""
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = 0.5 + 0.3 * np.sin(x / 3.1 + y / 7.3) * np.cos(y / 2.3)
    base += 0.2 * ((x // 5 + y // 4) % 2) * (x > w / 3)
    ref = np.clip(base + rng.normal(0, 0.04, (h, w)), 0, 1)
    ref = np.where(y > 0.7 * h, 0.5, ref)  # a flat band: variances under the noise floor
    blur = (ref + np.roll(ref, 1, 1) + np.roll(ref, 1, 0) + np.roll(ref, -1, 1)) / 4
    sharp = np.clip(0.5 + 3.0 * (ref - 0.5) + 1.5 * (ref - blur), 0, 1)  # gains near 3
    dis = np.where(x < w / 3, blur, np.where(x < 2 * w / 3, sharp, 1 - ref))
    dis = np.clip(dis + rng.normal(0, 0.02, (h, w)), 0, 1)
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    return (ref * top).round().astype(dtype), (dis * top).round().astype(dtype)


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
@pytest.mark.parametrize(("w", "h"), SIZES)
def test_accumulators_equal_the_reference(w, h, bitdepth):
    ref, dis = structured_pair(w, h, bitdepth, seed=w * h + bitdepth)
    want = reference_accumulators(ref, dis, bitdepth, EGLS, False)
    got = vif_accumulators(ref, dis, bitdepth, np.array(EGLS), False)
    assert got.dtype == np.int64 and got.shape == (len(EGLS), 4, 4)
    np.testing.assert_array_equal(got, want)
    assert (want[:, :, 0] != want[0, :, 0]).any()  # the limits bind somewhere
    assert (want[0, :, 1] > 0).all()
    if h > 32:  # a band under the noise floor wider than scale 0's filter
        assert (want[0, :, 3] > 0).any()


@pytest.mark.parametrize("bitdepth", [8, 9, 11, 13, 14, 15])
def test_every_bit_depth_and_extreme_values(bitdepth):
    # full-range noise against its inverse: the largest moments and most negative sigmas
    rng = np.random.default_rng(bitdepth)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    ref = rng.choice([0, top], (41, 38)).astype(dtype)
    for dis in (ref, (top - ref).astype(dtype), rng.integers(0, top + 1, ref.shape).astype(dtype)):
        want = reference_accumulators(ref, dis, bitdepth, (1.0, 100.0), False)
        np.testing.assert_array_equal(
            vif_accumulators(ref, dis, bitdepth, [1.0, 100.0], False), want
        )


@pytest.mark.parametrize("bitdepth", [8, 16])
def test_sums_at_their_32_bit_bounds(bitdepth):
    """Flat full-scale areas beside full-range noise: the means, the decimation (its
    rounding included) and 8-bit scale 0's second moments reach the largest sums that
    the kernels keep in 32-bit lanes (``65535 * 65536 + 2**15``, ``255**2 * 65536``),
    and the statistic takes both sides of ``sigma_nsq`` in one row."""
    rng = np.random.default_rng(bitdepth + 100)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    ref = np.full((72, 80), top, dtype)
    ref[:, 40:] = rng.choice([0, top], (72, 40))
    for dis in (ref, np.full_like(ref, top), (top - ref).astype(dtype)):
        want = reference_accumulators(ref, dis, bitdepth, (1.0, 100.0), False)
        got = vif_accumulators(ref, dis, bitdepth, [1.0, 100.0], False)
        np.testing.assert_array_equal(got, want)
        assert (want[0, :, 3] > 0).all() and (want[0, :, 1] > 0).all()


def test_skip_scale0_and_the_batch_over_threads():
    frames = [structured_pair(61, 45, 10, seed) for seed in range(5)]
    refs = np.stack([f[0] for f in frames])
    diss = np.stack([f[1] for f in frames])
    got = vif_accumulators_batch(refs, diss, 10, np.array([2.5, 1.0]), True)
    assert got.shape == (5, 2, 4, 4)
    for k, (ref, dis) in enumerate(frames):
        want = reference_accumulators(ref, dis, 10, (2.5, 1.0), True)
        np.testing.assert_array_equal(got[k], want)
        assert not got[k, :, 0].any()
    one = vif_accumulators_batch(refs[:1], diss[:1], 10, [2.5, 1.0], True)  # rows shared out
    np.testing.assert_array_equal(one, got[:1])


def test_too_small_or_mistyped_input_is_refused():
    a = np.zeros((15, 40), np.uint8)
    with pytest.raises(ValueError, match="too small"):
        vif_accumulators(a, a, 8, [100.0], False)
    b = np.zeros((40, 40), np.uint16)
    with pytest.raises(ValueError, match="uint8"):
        vif_accumulators(b, b, 8, [100.0], False)
    with pytest.raises(ValueError, match="gain limits"):
        vif_accumulators(b, b, 10, [0.5], False)


# --- libvmaf's goldens -----------------------------------------------------------------------


def _golden_entries():
    path = TESTDATA / "vmaf_goldens.json"
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [(k, v) for k, v in data.items() if not k.startswith("_")]


GOLDENS = _golden_entries()


def _options(entry) -> R.VifOptions:
    """The VIF extractor's options of a golden run: its ``vif:`` arguments, or a NEG
    model's gain limit of 1."""
    kw: dict = {"debug": True}
    if entry["mode"] == "model":
        if "neg" in entry["args"][0]:
            kw["vif_enhn_gain_limit"] = 1.0
        return R.VifOptions(**kw)
    for arg in entry["args"]:
        feature, kv = arg.split(":", 1)
        if feature == "vif":
            name, value = kv.split("=")
            kw[name] = value == "true" if name == "vif_skip_scale0" else float(value)
    return R.VifOptions(**kw)


def _scores(entry, opts: R.VifOptions) -> dict[str, np.ndarray]:
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    refs = np.stack(luma_frames(TESTDATA / case["ref"], *args))
    diss = np.stack(luma_frames(TESTDATA / case["dis"], *args))
    egls = np.array([opts.vif_enhn_gain_limit])
    acc = vif_accumulators_batch(refs, diss, case["bitdepth"], egls, opts.vif_skip_scale0)
    return finish_vif(acc[:, 0], opts)


def _check(entry, scores: dict[str, np.ndarray]) -> int:
    skip = set(entry.get("unstable_fields", ())) | set(entry.get("heap_fields", ()))
    checked = 0
    for i, frame in enumerate(entry["frames"]):
        for name, value in frame.items():
            key = output_name(name)
            if key in scores and name not in skip:
                assert same(value, float(scores[key][i])), (i, name)
                checked += 1
    return checked


@pytest.mark.skipif(not GOLDENS, reason="testdata VMAF goldens missing")
@pytest.mark.parametrize(("key", "entry"), GOLDENS, ids=[k for k, _ in GOLDENS])
def test_goldens(key, entry):
    checked = _check(entry, _scores(entry, _options(entry)))
    assert checked >= 4 * len(entry["frames"])  # every frame's four scales at least


@pytest.mark.skipif(not GOLDENS, reason="testdata VMAF goldens missing")
def test_a_golden_fails_for_a_wrong_gain_limit():
    """The check finds a gain limit off by a half (egl 1.5 scored where libvmaf ran 1)."""
    key, entry = next((k, e) for k, e in GOLDENS if "vif:vif_enhn_gain_limit=1.0" in e["args"])
    opts = _options(entry)
    wrong = R.VifOptions(vif_enhn_gain_limit=1.5, debug=True)
    scores = _scores(entry, wrong)
    renamed = {k.replace("_egl_1.5", "_egl_1"): v for k, v in scores.items()}
    with pytest.raises(AssertionError):
        _check(entry, renamed)
    assert _check(entry, _scores(entry, opts)) > 0

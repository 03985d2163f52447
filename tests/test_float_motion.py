"""libvmaf's ``float_motion``: the reference (``admcuda.reference.float_motion``) and the
host feature's run over batches (``admcuda.vmaf.float_motion.MotionRun``) against libvmaf
3.2.0's scalar C.

Goldens: ``testdata/float_motion_goldens.json`` (``testdata/make_float_motion_goldens.py``,
libvmaf 3.2.0 f85a8536 built with its float features, scalar path, 2026-12-07): every
frame's ``motion2``, ``motion`` and ``motion3`` at full precision from libvmaf's C API,
with and without each option, on synthetic clips made again here from the script
(checked by sha256) at 8, 10, 12 and 16 bits, 3x3 to 1999x9, one to five frames, still
and swinging content; cases on ``../shared/netflix``'s pairs skip where that folder is
missing. Every value is compared with ``==``, names and their order too.
"""

from __future__ import annotations

import hashlib
import re
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import float_motion as R
from admcuda.reference import picture_copy as P

from admcuda.errors import AdmError
from admcuda.vmaf import float_motion as V

GOLD = FeatureGoldens("float_motion", feature="float_motion", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)


def _options(key: str) -> R.FloatMotionOptions:
    """A case's options, from the text libvmaf's tool was given."""
    values: dict[str, object] = {}
    for item in filter(None, CASES[key]["options"].split(":")):
        name, text = item.split("=")
        kind = next(o.kind for o in R.OPTION_TABLE if o.name == name)
        values[name] = text == "true" if kind is bool else kind(float(text))
    return R.FloatMotionOptions(**values)


def _netflix(key: str) -> list[list[np.ndarray]]:
    """Every frame's Y, Cb and Cr planes of a Netflix pair's reference."""
    w, h, fmt, bd = GOLD.geometry(CASES[key])
    ref, _ = GOLD.paths(CASES[key], {})
    cw, ch = (w + 1) // 2, (h + 1) // 2
    dtype = np.uint8 if bd == 8 else np.uint16
    raw = np.fromfile(ref, np.uint8 if bd == 8 else np.dtype("<u2"))
    frames = raw.reshape(-1, w * h + 2 * cw * ch).astype(dtype)
    return [[f[: w * h].reshape(h, w), f[w * h : w * h + cw * ch].reshape(ch, cw),
             f[w * h + cw * ch :].reshape(ch, cw)] for f in frames]  # fmt: skip


_clips: dict[str, list[list[np.ndarray]]] = {}


def clip(key: str) -> list[list[np.ndarray]]:
    """A case's reference frames (each its planes); a synthetic pair's file bytes checked
    against the sha256 the goldens recorded."""
    pair = CASES[key]["pair"]
    if pair not in _clips:
        if pair in MAKER.PAIRS:
            for data, side in zip(MAKER.pair_bytes(pair), ("ref", "dis"), strict=True):
                digest = hashlib.sha256(data).hexdigest()
                assert digest == GOLDENS["pairs"][pair][f"{side}_sha256"]
            _clips[pair] = MAKER.pair_planes(pair)[0]
        else:
            _clips[pair] = _netflix(key)
    return _clips[pair]


def _reference(key: str) -> list[dict[str, float]]:
    _, _, fmt, bd = GOLD.geometry(CASES[key])
    return R.compute_float_motion(clip(key), bd, _options(key), fmt)


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
    _check(_reference(key), key)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_the_run_over_batches_equals_libvmaf(key):
    """MotionRun over batches of 1, 2 and 3 frames, two threads, then finish: the same
    doubles as the reference's clip at once."""
    opts = _options(key)
    ex = SimpleNamespace(name="float_motion", options=opts, names=R.output_names(opts))
    bd = GOLD.geometry(CASES[key])[3]
    frames = clip(key)
    for size in (1, 2, 3):
        run = V.MotionRun(ex, bd)
        parts: dict[str, list] = {}
        with ThreadPoolExecutor(2) as pool:
            for k0 in range(0, len(frames), size):
                for name, values in run.scores(frames[k0 : k0 + size], pool.map).items():
                    parts.setdefault(name, []).extend(values.tolist())
        rows = [{n: v[k] for n, v in parts.items()} for k in range(len(frames))]
        V.finish(ex, rows)
        _check([{n: row[n] for n in CASES[key]["frames"][0]} for row in rows], key)


def test_names_follow_the_options():
    """The names libvmaf prints: suffixed by each feature parameter off its default, in
    option-name order; debug changes none."""
    names = R.output_names(R.FloatMotionOptions(motion_filter_size=0, motion_add_uv=True))
    assert names[R.MOTION2] == "motion2_mau_mfs_0"
    assert R.output_names(R.FloatMotionOptions(debug=False))[R.MOTION3] == "motion3"
    opts = R.FloatMotionOptions(motion_max_val=250.5, motion_blend_offset=100.0)
    assert R.output_names(opts)[R.MOTION] == "motion_mbo_100_mmxv_250.5"


def test_the_5_tap_filter_is_the_cs_float32():
    assert R.FILTER_5.dtype == np.float32
    assert R.FILTER_5.tolist() == [np.float32(v) for v in
                                   (0.054488685, 0.244201342, 0.402619947, 0.244201342,
                                    0.054488685)]  # fmt: skip


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(monkeypatch, name: str, stand_in) -> set[str]:
    """The synthetic cases whose goldens the reference misses with ``name`` replaced."""
    monkeypatch.setattr(R, name, stand_in)
    return {k for k in SYNTHETIC if _reference(k) != CASES[k]["frames"]}


MOVING = {k for k in SYNTHETIC if any(f != CASES[k]["frames"][0] for f in CASES[k]["frames"])}


def _wide_convolve(src, taps, axis):
    """A pass summed in float64, rounded to float32 once at the end."""
    radius = len(taps) // 2
    n = src.shape[axis]
    pad = [(radius, radius) if a == axis else (0, 0) for a in range(2)]
    padded = np.pad(src.astype(np.float64), pad, "reflect")
    acc = np.zeros(src.shape, np.float64)
    for k, tap in enumerate(taps.astype(np.float64)):
        acc += tap * (padded[k : k + n] if axis == 0 else padded[:, k : k + n])
    return acc.astype(np.float32)


def test_a_float64_blur_misses(monkeypatch):
    """Blurred samples a float32 ulp off often average out in the float32 mean; these
    clips catch them (the identity filter never rounds)."""
    missed = _misses(monkeypatch, "_convolve", _wide_convolve)
    assert missed >= {"n8_400_odd", "n8_420_uv", "min8_400_mfs3", "swing16_400_blend"}
    assert not any("mfs1" in k for k in missed)


def test_the_passes_the_other_way_round_miss(monkeypatch):
    """The horizontal pass first, then the vertical."""
    real = R._convolve
    missed = _misses(monkeypatch, "blur", lambda pic, taps: real(real(pic, taps, 1), taps, 0))
    assert missed >= {"n8_420", "n16_400_odd", "wide8_400"}


@pytest.mark.parametrize("mode", ["edge", "symmetric", "wrap"])
def test_other_edges_miss(monkeypatch, mode):
    real_pad = np.pad

    def padded(array, width, how):
        return real_pad(array, width, mode)

    monkeypatch.setattr(R.np, "pad", padded)
    missed = {k for k in SYNTHETIC if _reference(k) != CASES[k]["frames"]}
    monkeypatch.setattr(R.np, "pad", real_pad)
    assert {"n8_400_odd", "min8_400", "n16_400_odd"} <= missed


@pytest.mark.parametrize(
    "summed",
    [
        lambda d: np.float32(d.sum(dtype=np.float64)),  # one double sum
        lambda d: np.float32(d.sum(dtype=np.float32)),  # NumPy's pairwise float32 sum
        lambda d: np.float32(d.sum(axis=1, dtype=np.float64).sum()),  # rows in double
    ],
)
def test_other_sums_of_the_differences_miss(monkeypatch, summed):
    def sad(a, b):
        return np.float32(summed(np.abs(a - b)) / np.float32(a.size))

    assert _misses(monkeypatch, "_sad", sad) >= {"n8_420", "n16_400_odd", "wide8_400"}


def test_the_offset_matters(monkeypatch):
    """Without picture_copy's -128 the blurred samples round otherwise."""
    missed = _misses(
        monkeypatch, "picture", lambda plane, bd: P.picture_copy(plane, bd, feature="float_motion")
    )
    assert missed >= {"n8_420", "n10_400_odd", "wide8_400"}


def test_another_scaler_misses_the_16_bit_clips(monkeypatch):
    monkeypatch.setattr(P, "SCALERS", {**P.SCALERS, 16: 257.0})
    missed = {k for k in SYNTHETIC if _reference(k) != CASES[k]["frames"]}
    sixteen = {k for k in SYNTHETIC if GOLD.geometry(CASES[k])[3] == 16}
    assert missed == sixteen


def test_nearest_halves_miss_scale1(monkeypatch):
    def nearest(pic):
        return pic[::2, ::2].copy()

    assert _misses(monkeypatch, "scale_half", nearest) == {
        k for k in SYNTHETIC if "scale1" in k and k in MOVING
    }


def test_frame_0s_motion3_is_frame_1s(monkeypatch):
    """libvmaf writes frame 0's motion3 from frame 1's score, not from its own motion2
    (0): blending frame 0's motion2 misses every clip that moves."""
    real = R.frame_outputs

    def from_motion2(scores, opts):
        frames = real(scores, opts)
        if frames and not opts.motion_force_zero:
            frames[0][R.MOTION3] = 0.0
        return frames

    missed = _misses(monkeypatch, "frame_outputs", from_motion2)
    assert missed == {k for k in MOVING if len(CASES[k]["frames"]) > 1}


# --- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "opts,size,fmt,needle",
    [
        (R.FloatMotionOptions(motion_add_uv=True), (16, 16), "400", "4:0:0 input has none"),
        (R.FloatMotionOptions(motion_add_uv=True, motion_add_scale1=True), (16, 16), "420",
         "wrong row stride"),
        (R.FloatMotionOptions(motion_add_uv=True, motion_add_scale1=True), (16, 16), "422",
         "wrong row stride"),
        (R.FloatMotionOptions(motion_add_uv=True), (16, 15), "420", "odd height (15)"),
        (R.FloatMotionOptions(motion_add_scale1=True), (15362, 16), "400", "up to 15360 wide"),
        (R.FloatMotionOptions(), (2, 16), "400", "too small"),
        (R.FloatMotionOptions(motion_add_uv=True), (16, 4), "420", "8x2 is too small"),
    ],
)  # fmt: skip
def test_sizes_and_layouts_it_refuses_are_one_line(opts, size, fmt, needle):
    with pytest.raises(AdmError, match=re.escape(needle)):
        V.check_size(opts, *size, fmt)


def test_uv_and_scale1_on_444_are_scored():
    V.check_size(R.FloatMotionOptions(motion_add_uv=True, motion_add_scale1=True), 16, 16, "444")


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"motion_filter_size": 10}, "outside libvmaf's range"),
        ({"motion_filter_size": 2.5}, "must be an integer"),
        ({"motion_fps_weight": 5.5}, "outside libvmaf's range"),
        ({"debug": 1}, "must be true or false"),
    ],
)
def test_options_out_of_libvmafs_table_are_refused(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        R.FloatMotionOptions(**kwargs)

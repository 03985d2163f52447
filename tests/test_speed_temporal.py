"""libvmaf's ``speed_temporal``: one frame's score (``admcuda.vmaf.speed_temporal``, over
the kernels of ``admcuda.compiled.speed``) and the run over batches (``TemporalRun``)
against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/speed_temporal_goldens.json``
(``testdata/make_speed_temporal_goldens.py``, libvmaf 3.2.0 f85a8536, scalar path,
2026-12-07): every frame's score at full precision from libvmaf's C API, with and
without each option, on synthetic clips made again here from the script (checked by
sha256) at 8, 10, 12 and 16 bits, 80x80 to 1999x81, one to nine frames, moving, still and
half-still content; cases on ``../shared/netflix``'s pairs skip where that folder is
missing. Every value is compared with ``==``, names too.
"""

from __future__ import annotations

import hashlib
import math
import re
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
from _golden_cases import FeatureGoldens

pytest.importorskip("numba")

from admcuda.compiled import speed as K  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.vmaf import speed_temporal as T  # noqa: E402
from admcuda.vmaf.speed import filters  # noqa: E402

GOLD = FeatureGoldens("speed_temporal", feature="speed_temporal", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
NONZERO = {k for k in SYNTHETIC if any(next(iter(f.values())) for f in CASES[k]["frames"])}
REF_DIFF = {k for k in SYNTHETIC if "speed_use_ref_diff=true" in CASES[k]["options"]}


def _options(key: str) -> T.SpeedTemporalOptions:
    """A case's options, from the text libvmaf's tool was given."""
    values: dict[str, object] = {}
    for item in filter(None, CASES[key]["options"].split(":")):
        name, text = item.split("=")
        typ = T.TABLE[name][0]
        values[name] = text == "true" if typ == "bool" else text if typ == "string" else float(text)
    return T.SpeedTemporalOptions(**values)  # type: ignore[arg-type]


def _netflix(key: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every frame's luma plane of a Netflix pair's reference and distorted files."""
    w, h, _, bd = GOLD.geometry(CASES[key])
    paths = GOLD.paths(CASES[key], {})
    cw, ch = (w + 1) // 2, (h + 1) // 2
    dtype = np.uint8 if bd == 8 else np.uint16
    clips = []
    for path in paths:
        raw = np.fromfile(path, np.uint8 if bd == 8 else np.dtype("<u2"))
        frames = raw.reshape(-1, w * h + 2 * cw * ch)[:, : w * h].astype(dtype)
        clips.append([f.reshape(h, w) for f in frames])
    return clips[0], clips[1]


_clips: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}


def clip(key: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A case's reference and distorted luma planes, frame by frame; a synthetic pair's
    file bytes checked against the sha256 the goldens recorded."""
    pair = CASES[key]["pair"]
    if pair not in _clips:
        if pair in MAKER.PAIRS:
            for data, side in zip(MAKER.pair_bytes(pair), ("ref", "dis"), strict=True):
                digest = hashlib.sha256(data).hexdigest()
                assert digest == GOLDENS["pairs"][pair][f"{side}_sha256"]
            refs, diss = MAKER.pair_planes(pair)
            _clips[pair] = ([f[0] for f in refs], [f[0] for f in diss])
        else:
            _clips[pair] = _netflix(key)
    return _clips[pair]


def _want(key: str) -> list[float]:
    return [next(iter(f.values())) for f in CASES[key]["frames"]]


def _scores(key: str, score=None) -> list[float]:
    """Every frame's score of a case: frame 0's 0, then ``score`` (one distorted input's
    :func:`admcuda.vmaf.speed_temporal.frame_scores` by default) of each frame against the
    frame before."""
    refs, diss = clip(key)
    bd = GOLD.geometry(CASES[key])[3]
    opts = _options(key)
    out = [0.0]
    for k in range(1, len(refs)):
        if score is None:
            out.append(T.frame_scores(opts, refs[k - 1], refs[k], [diss[k - 1]], [diss[k]], bd)[0])
        else:
            out.append(score(opts, refs[k - 1], refs[k], diss[k - 1], diss[k], bd))
    return out


def test_the_goldens_were_made_by_the_script():
    prov = GOLDENS["_provenance"]
    assert prov["script_sha256"] == GOLD.script_sha256()
    assert prov["libvmaf_version"] == "3.2.0"
    assert "scalar C" in prov["code_path"]


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_each_frame_equals_libvmaf(key):
    assert _scores(key) == _want(key)


def test_the_goldens_measure_something():
    """Most clips score above 0 from frame 1 on; the still and half-still ones, 80x80
    (one block) and the 160x90 Netflix pair (too few blocks for a regular covariance)
    score 0 throughout."""
    zero = set(SYNTHETIC) - NONZERO
    assert zero == {"min8_400", "one8_420", "still8_420", "still8_420_floor", "refstill8_444",
                    "refstill8_444_ref_diff", "disstill10_420"}  # fmt: skip
    assert len(NONZERO) >= 25


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_names_are_libvmafs(key):
    """The printed name: the collector's alias, or its suffixed name where an option is
    off its default (``speed_max_val`` and ``speed_use_ref_diff`` among them)."""
    case = CASES[key]
    name = MAKER.printed(MAKER.collector_name(case["options"]))
    assert list(case["frames"][0]) == [name]
    assert T.output_names(_options(key)) == (name,)


def test_the_option_table_is_libvmafs():
    assert dict(T.TABLE) == {
        "speed_kernelscale": ("double", "ks", 0.1, 4.0),
        "speed_prescale": ("double", "ps", 0.1, 4.0),
        "speed_prescale_method": ("string", "psm", None, None),
        "speed_sigma_nn": ("double", "snn", 0.1, 2.0),
        "speed_nn_floor": ("double", "nnf", 0.0, 1.0),
        "speed_max_val": ("double", "mxv", 0.0, 1000.0),
        "speed_use_ref_diff": ("bool", "urd", None, None),
    }
    assert T.output_names(T.SpeedTemporalOptions()) == ("speed_temporal",)


# --- a clip in batches --------------------------------------------------------------------


def _run(key: str, size: int, *, subsample: int = 1, threads: int = 2) -> list[np.ndarray]:
    """TemporalRun over batches of ``size`` frames against two distorted inputs: the
    case's, then its reference again."""
    refs, diss = clip(key)
    ex = SimpleNamespace(options=_options(key), outputs=T.output_names(_options(key)))
    run = T.TemporalRun(ex, GOLD.geometry(CASES[key])[3], subsample)
    parts: list[list[np.ndarray]] = [[], []]
    with ThreadPoolExecutor(threads) as pool:
        for k0 in range(0, len(refs), size):
            ref = np.stack(refs[k0 : k0 + size])
            dis = [np.stack(diss[k0 : k0 + size]), ref.copy()]
            for part, values in zip(parts, run.scores(ref, dis, len(ref), [0, 1], pool.map),
                                    strict=True):  # fmt: skip
                part.append(values)
    return [np.concatenate(p) for p in parts]


@pytest.mark.parametrize("key", ["t8_420", "long8_420_ref_diff_ks", "t16_400_odd"])
@pytest.mark.parametrize("size", [1, 2, 4])
def test_the_run_over_batches_equals_libvmaf(key, size):
    """Each batch's first frame takes the last batch's frames; the reference against
    itself scores 0."""
    ours, itself = _run(key, size)
    assert ours.tolist() == _want(key)
    assert itself.tolist() == [0.0] * len(ours)


@pytest.mark.parametrize("subsample", [2, 3])
def test_the_frames_subsample_passes_over_are_not_computed(subsample):
    key = "long8_420"
    ours, _ = _run(key, 2, subsample=subsample)
    want = _want(key)
    for i, value in enumerate(ours.tolist()):
        assert value == want[i] if i % subsample == 0 else math.isnan(value), i


def test_an_input_that_ends_leaves_the_others_their_frames():
    """The pipeline drops a distorted input that has ended from later batches: each
    input keeps its own previous frame by its index."""
    key = "t8_420"
    refs, diss = clip(key)
    ex = SimpleNamespace(options=_options(key), outputs=("speed_temporal",))
    run = T.TemporalRun(ex, 8)
    first = run.scores(np.stack(refs[:2]), [np.stack(refs[:2]), np.stack(diss[:2])], 2, [0, 1])
    rest = run.scores(np.stack(refs[2:]), [np.stack(diss[2:])], 2, [1])
    assert first[1].tolist() + rest[0].tolist() == _want(key)
    with pytest.raises(AdmError, match="joined the clip at frame 4"):
        run.scores(np.stack(refs[2:]), [np.stack(diss[2:])], 2, [7])


def test_a_frame_without_the_frame_before_is_refused():
    """A run asked for frame 1 of an input it has not seen frame 0 of."""
    refs, diss = clip("t8_420")
    ex = SimpleNamespace(options=T.SpeedTemporalOptions(), outputs=("speed_temporal",))
    run = T.TemporalRun(ex, 8)
    run.scores(refs[0][None], [diss[0][None]], 1, [0])
    with pytest.raises(AdmError, match="joined the clip at frame 1, with no frame before"):
        run.scores(refs[1][None], [diss[1][None]], 1, [3])


# --- plausible mistakes the goldens catch ---------------------------------------------------


def _misses(score) -> set[str]:
    return {k for k in SYNTHETIC if _scores(k, score) != _want(k)}


def _sides(opts, before, after, *, sigma_nn=None):
    taps = filters(float(np.float32(opts.speed_kernelscale)))
    return K.speed_side(
        before - after, prescale=opts.speed_prescale, method=opts.speed_prescale_method,
        antialias=taps.antialias, gauss=taps.gauss,
        sigma_nn=np.float32(opts.speed_sigma_nn if sigma_nn is None else sigma_nn),
    )  # fmt: skip


def _score(opts, ref_side, dis_side, mode=0):
    score, _ = K.speed_score(ref_side, dis_side, np.float32(opts.speed_sigma_nn),
                             np.float32(opts.speed_nn_floor), mode)  # fmt: skip
    return float(score)


def test_the_reference_difference_the_other_way_misses():
    """``speed_use_ref_diff`` takes the current reference from the previous distorted
    frame; the previous reference less the current distorted frame misses."""

    def crossed(opts, pr, r, pd, d, bd):
        ref = _sides(opts, K.picture(pr, bd), K.picture(r, bd))
        other = K.picture(pr if opts.speed_use_ref_diff else pd, bd)
        now = K.picture(d, bd)
        return _score(opts, ref, _sides(opts, other, now))

    assert _misses(crossed) == REF_DIFF & NONZERO


def test_differences_of_the_filtered_frames_miss():
    """Each frame filtered and decimated first, then the small pictures subtracted."""

    def filtered_first(opts, pr, r, pd, d, bd):
        taps = filters(float(np.float32(opts.speed_kernelscale)))
        sigma = np.float32(opts.speed_sigma_nn)

        def small(plane):
            return K._downscale(K.picture(plane, bd), taps.antialias, taps.gauss)

        now = r if opts.speed_use_ref_diff else d
        ref = K._est_params(small(pr) - small(r), sigma)
        return _score(opts, ref, K._est_params(small(pd) - small(now), sigma))

    missed = _misses(filtered_first)
    assert missed >= NONZERO


def test_the_score_is_even_in_the_difference():
    """The current frame less the previous one gives the same doubles: the score reads
    the difference through its covariance and the products of the solution with it."""

    def reversed_(opts, pr, r, pd, d, bd):
        now = r if opts.speed_use_ref_diff else d
        ref = _sides(opts, K.picture(r, bd), K.picture(pr, bd))
        return _score(opts, ref, _sides(opts, K.picture(now, bd), K.picture(pd, bd)))

    assert _misses(reversed_) == set()


def test_each_frame_prescaled_before_the_difference_misses_bilinear_alone():
    """libvmaf scales the difference: scaling each frame first is the same by nearest
    sampling (it picks samples) and misses clips scaled by bilinear interpolation."""

    def scaled_first(opts, pr, r, pd, d, bd):
        def scaled(plane):
            pic = K.picture(plane, bd)
            if abs(opts.speed_prescale - 1.0) < 1e-3:
                return pic
            h, w = pic.shape
            sw, sh = int(w * opts.speed_prescale + 0.5), int(h * opts.speed_prescale + 0.5)
            scale = K._scale_bilinear if opts.speed_prescale_method == "bilinear" else (
                K._scale_nearest)  # fmt: skip
            return scale(pic, sw, sh)

        plain = T.SpeedTemporalOptions(**{**vars(opts), "speed_prescale": 1.0})
        now = r if opts.speed_use_ref_diff else d
        ref = _sides(plain, scaled(pr), scaled(r))
        return _score(opts, ref, _sides(plain, scaled(pd), scaled(now)))

    missed = _misses(scaled_first)
    bilinear = {k for k in SYNTHETIC if "bilinear" in CASES[k]["options"]}
    assert {"big8_420_bilinear_0.75", "big8_420_bilinear_0.6", "wide8_400_bilinear_1.004"} <= (
        missed
    )
    assert missed <= bilinear


def test_a_score_capped_at_speed_max_val_misses():
    def capped(opts, pr, r, pd, d, bd):
        value = T.frame_scores(opts, pr, r, [pd], [d], bd)[0]
        return min(value, opts.speed_max_val)

    assert _misses(capped) == {"t8_420_max_val"}


def test_scoring_a_side_whose_covariance_is_singular_misses():
    """Where one side's covariance is singular and the other's is not, libvmaf scores 0;
    get_speed_score on both sides as they are misses the half-still clips."""

    def unguarded(opts, pr, r, pd, d, bd):
        now = r if opts.speed_use_ref_diff else d
        ref = _sides(opts, K.picture(pr, bd), K.picture(r, bd))
        dis = _sides(opts, K.picture(pd, bd), K.picture(now, bd))
        return float(K._score(*ref[:2], *dis[:2], np.float32(opts.speed_sigma_nn),
                              np.float32(opts.speed_nn_floor), 0))  # fmt: skip

    assert _misses(unguarded) == {"refstill8_444", "refstill8_444_ref_diff", "disstill10_420"}


@pytest.mark.parametrize("mode", [1, 3, 6])
def test_speed_chromas_other_weightings_miss(mode):
    """speed_temporal has no speed_weight_var_mode: each side weighs by its own variance."""

    def weighted(opts, pr, r, pd, d, bd):
        now = r if opts.speed_use_ref_diff else d
        ref = _sides(opts, K.picture(pr, bd), K.picture(r, bd))
        return _score(opts, ref, _sides(opts, K.picture(pd, bd), K.picture(now, bd)), mode)

    assert _misses(weighted) == NONZERO


# --- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,size,needle",
    [
        ({}, (79, 80), "a 79x80 frame, prescaled to 79x80, leaves no 5x5 block"),
        ({}, (80, 79), "leaves no 5x5 block after decimation by 16"),
        ({"speed_prescale": 0.4}, (160, 160), "prescaled to 64x64, leaves no 5x5 block"),
        ({"speed_prescale": 1.5}, (320, 240), "makes the 320x240 frame 480x360, taller"),
        ({"speed_prescale": 1.004}, (1999, 200), "frame 2007x201, taller than the buffer"),
        ({"speed_prescale": 1.0009}, (1000, 100), "is taken for 1 (no scaling) but sizes"),
    ],
)
def test_sizes_it_refuses_are_one_line(kwargs, size, needle):
    with pytest.raises(AdmError, match=re.escape(needle)) as info:
        T.check_size(T.SpeedTemporalOptions(**kwargs), *size)
    assert "\n" not in str(info.value)


def test_sizes_it_scores():
    T.check_size(T.SpeedTemporalOptions(), 80, 80)
    T.check_size(T.SpeedTemporalOptions(speed_prescale=1.004), 1999, 81)
    T.check_size(T.SpeedTemporalOptions(speed_prescale=0.5), 160, 160)
    T.check_size(T.SpeedTemporalOptions(speed_prescale=1.0009), 100, 100)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"speed_kernelscale": 0.9}, "none of libvmaf's kernel scales"),
        ({"speed_prescale_method": "bicubic"}, "does not compute libvmaf's bicubic"),
        ({"speed_prescale_method": "area"}, "must be one of nearest, bilinear"),
        ({"speed_sigma_nn": 3.0}, r"in \[0.1, 2\]"),
        ({"speed_use_ref_diff": 1}, "must be True or False"),
    ],
)
def test_options_it_refuses(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        T.SpeedTemporalOptions(**kwargs)


def test_a_frame_needs_the_distorted_frame_before():
    refs, diss = clip("t8_420")
    ex = SimpleNamespace(options=T.SpeedTemporalOptions(), outputs=("speed_temporal",))
    assert T.speed_temporal_frame(ex, refs[0], diss[0], None, None, 8) == {"speed_temporal": 0.0}
    with pytest.raises(AdmError, match="give prev_dis beside prev_ref"):
        T.speed_temporal_frame(ex, refs[1], diss[1], refs[0], None, 8)
    with pytest.raises(AdmError, match="planes of"):
        T.speed_temporal_frame(ex, refs[1], diss[1], refs[0], diss[0][:-1], 8)
    with pytest.raises(AdmError, match="non-empty 2-D plane of uint16 at 10 bits"):
        T.speed_temporal_frame(ex, refs[1], diss[1], refs[0], diss[0], 10)


# --- the kernels' stages ----------------------------------------------------------------------


@pytest.mark.parametrize("kernelscale", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("shape", [(80, 80), (97, 161), (243, 1999)])
def test_the_filter_at_every_16th_sample_is_the_whole_filters(kernelscale, shape):
    """The anti-alias filter computed at the samples decimation keeps: the same float32
    as the whole filtered picture read at every 16th row and column."""
    rng = np.random.default_rng(shape[1])
    pic = (rng.integers(-4096, 4096, shape) / np.float32(16.0)).astype(np.float32)
    taps = filters(float(np.float32(kernelscale))).antialias
    whole = K._filter1d(taps, pic)[: shape[0] >> 4 << 4 : 16, : shape[1] >> 4 << 4 : 16]
    assert np.array_equal(K._filter1d_every16(taps, pic), whole)


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
def test_the_picture_difference_is_picture_copys(bitdepth):
    rng = np.random.default_rng(bitdepth)
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    a, b = (rng.integers(0, 1 << bitdepth, (37, 53)).astype(dtype) for _ in "ab")
    want = K.picture(a, bitdepth) - K.picture(b, bitdepth)
    assert want.dtype == np.float32
    assert np.array_equal(K.picture_difference(a, b, bitdepth), want)

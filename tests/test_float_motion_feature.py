"""``float_motion`` as a feature of a run: ``admcuda score --feature float_motion``,
``admcuda.score(features=...)``, ``VmafExtractor``, its names and order, its options,
libvmaf's file layouts.

Goldens: ``testdata/float_motion_goldens.json`` (libvmaf 3.2.0's scalar C through its C
API, every frame's doubles; see ``tests/test_float_motion.py``): its synthetic clips are
written as raw files and scored through the command line, its Netflix pairs
(``../shared/netflix``; those tests skip where it is missing) likewise; every value is
compared with ``==``, names and their order too. ``testdata/libvmaf_outputs/float_motion/``:
libvmaf's tool's own JSON, XML and CSV files (its README says how they were made), for
keys, their order, the frames listed and the numbers as the tool prints them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _golden_cases import (
    TOOL_PAIRS,
    FeatureGoldens,
    check_frames,
    engine_plans,
    pair_folder,
    tool_pair,
)

import admcuda
from admcuda import VmafExtractor
from admcuda.cli.main import main
from admcuda.errors import AdmError
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip
from admcuda.vmaf.float_motion import FloatMotionOptions
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.plan import HOST_KINDS

GOLD = FeatureGoldens("float_motion", feature="float_motion", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker

# admcuda's inputs are above 16 samples a side (ADM's least): the clips under that are
# scored through score_clip
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if side > 16]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("float_motion_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case)
    assert list(doc["pooled_metrics"]) == list(case["frames"][0])
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n8_420_uv", "n16_400_odd_scale1", "netflix_scaled_48f"])
def test_batches_of_one_frame_carry_the_previous_pictures(key, folder, tmp_path):
    """One frame a batch, two threads: each batch's first score takes the last batch's
    blurred pictures."""
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json", "--batch", "1",
                              "--threads", "2"))  # fmt: skip
    check_frames([f["metrics"] for f in doc["frames"]], case)


@pytest.mark.parametrize("key", ["n10_422_uv", "swing16_400_blend"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case)
    _, options = parse_feature_arg(GOLD.feature(case))
    check_frames(list(GOLD.score(case, folder, features=[("float_motion", options)])), case)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_of_any_size(key):
    """Frames down to 3x3, below what admcuda's inputs take, through score_pair."""
    case = CASES[key]
    refs, diss = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
    bd = MAKER.PAIRS[case["pair"]][3]
    pairs = [(r[0], d[0]) for r, d in zip(refs, diss, strict=True)]
    check_frames(score_clip(plan, pairs, bd), case)


def test_score_clip_reads_chroma_with_motion_add_uv():
    case = CASES["n10_422_uv"]
    refs, diss = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
    pairs = [(tuple(r), tuple(d)) for r, d in zip(refs, diss, strict=True)]
    check_frames(score_clip(plan, pairs, 10), case)
    with pytest.raises(AdmError, match="give the Y, Cb and Cr planes"):
        score_clip(plan, [(r[0], d[0]) for r, d in zip(refs, diss, strict=True)], 10)


@pytest.mark.parametrize("subsample", [1, 2])
def test_score_clip_scores_every_frame_read(subsample):
    case = CASES["n8_400_odd"]
    refs, diss = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_motion"])
    pairs = [(r[0], d[0]) for r, d in zip(refs, diss, strict=True)]
    got = score_clip(plan, pairs, 8, subsample=subsample)
    assert got == case["frames"][::subsample]


def test_vmaf_extractor_computes_it(folder):
    """Frame by frame and in a batch, with chroma: each frame final once the next is
    extracted, as libvmaf's motion2 and motion3 read it."""
    case = CASES["n12_444_odd_uv_scale1"]
    w, h, fmt, bd = GOLD.geometry(case)
    refs, diss = MAKER.pair_planes(case["pair"])
    feature = GOLD.feature(case)
    with VmafExtractor(w, h, bd, model=None, features=[feature], pixel_format=fmt) as vmaf:
        first = vmaf.extract(refs[0][0], diss[0][0], ref_chroma=tuple(refs[0][1:]),
                             dis_chroma=tuple(diss[0][1:]))  # fmt: skip
        assert vmaf.frames_final == 0
        vmaf.extract_batch([r[0] for r in refs[1:]], [d[0] for d in diss[1:]],
                           ref_chroma=[tuple(r[1:]) for r in refs[1:]],
                           dis_chroma=[tuple(d[1:]) for d in diss[1:]])  # fmt: skip
        assert vmaf.frame_at(1) == case["frames"][1]
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == {"motion_mdc_mau": 0.0}  # known as frame 0 is extracted
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles on both, motion2 and motion after the model's features, motion3 after them
    and before integer motion's flushed outputs."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["float_motion"])  # fmt: skip
    names = list(results[0][0])
    i = names.index("integer_vif_scale3")
    assert names[i + 1 : i + 6] == ["motion2", "motion", "motion3", "integer_motion2",
                                     "integer_motion3"]  # fmt: skip
    for rung in results:
        check_frames([{n: f[n] for n in ("motion2", "motion", "motion3")} for f in rung], case)


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n8_420_uv"]
    refs, diss = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case), "float_psnr"])
    h, w = refs[0][0].shape
    host = HostFeatures(plan, w, h, "420", 8, threads=threads)
    ref = np.stack([r[0] for r in refs])
    dis = np.stack([d[0] for d in diss])
    flat = np.stack([np.concatenate([r[1].ravel(), r[2].ravel()]) for r in refs])
    out = host.compute(ref, flat, [dis, ref], [None, None], len(refs))
    want = [f["motion_mau"] for f in case["frames"]]
    assert out[0]["motion_mau"].tolist() == out[1]["motion_mau"].tolist() == want
    assert out[1]["float_psnr"].tolist() == [60.0] * len(refs)


def test_no_numba_needed(folder, monkeypatch):
    """NumPy alone: a run without Numba computes it, and starts no kernel loading."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    case = CASES["n10_400_odd_mfs3"]
    check_frames(list(GOLD.score(case, folder)), case)
    host = HostFeatures(build_plan(features=["float_motion"]), 35, 19, "400", 10)
    assert host.compiled == () and host._loading is None


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["n8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "float_motion"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "float_motion" in HOST_KINDS
    assert parse_feature_arg("float_motion") == ("float_motion", FloatMotionOptions())
    assert parse_feature_arg("float_motion=motion_filter_size=3:motion_fps_weight=2.5") == (
        "float_motion", FloatMotionOptions(motion_filter_size=3, motion_fps_weight=2.5),
    )  # fmt: skip
    # debug is no feature parameter: libvmaf keeps the first of the two
    plan = build_plan(features=["float_motion", "float_motion=debug=false"])
    assert plan.output_order() == ["motion2", "motion", "motion3"]
    assert [ex.name for ex in plan.extractors] == ["float_motion"]
    assert plan.engine_plan().extractors == ()
    assert plan.needs_every_frame and not plan.chroma_wanted("420")
    assert build_plan(features=["float_motion=motion_add_uv=true"]).chroma_wanted("420")
    zero = build_plan(features=["motion", "float_motion=motion_force_zero=true"])
    assert zero.output_order() == [
        "VMAF_integer_feature_motion_sad_score", "motion2_force_0", "motion3_force_0",
        "motion_force_0", "integer_motion2", "integer_motion3",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_motion=mfs=3", "would ignore 'mfs'; write motion_filter_size=3"),
        ("float_motion=motion_five_frame_window=true", "has no option 'motion_five_frame_"),
        ("float_motion=motion_filter_size=10", "must be in [0, 9], got '10'"),
        ("float_motion=motion_filter_size=2.5", "expects an integer in [0, 9]"),
        ("float_motion=motion_add_uv=1", "expects true or false"),
        ("float_motion=motion_fps_weight=-0", "reads as -0"),
        ("float_motion=", "bad option string ''"),
        ("float_motions", "float_psnr, float_motion, ciede, psnr_hvs, speed_temporal"),
        ("float_motion=motion_add_uv=true:motion_add_scale1=true", "wrong row stride"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


def test_chroma_on_400_input_is_one_line(folder, tmp_path, capsys):
    ref, dis = GOLD.paths(CASES["n8_400_odd"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "33", "-h", "17", "-p", "400",
            "--feature", "float_motion=motion_add_uv=true", "-n", "--json", "-o",
            str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "4:0:0 input has none" in err[0], err


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="FloatMotionOptions"):
        build_plan(features=[("float_motion", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "float_motion_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_motion"]),
    "float_motion_10bit_options": ("10b", [
        "-n", "--feature", "float_motion=motion_add_uv=true:motion_filter_size=3:"
        "motion_fps_weight=2.5:motion_max_val=20"]),
    "float_motion_force_zero": ("3f", [
        "-n", "--feature", "motion", "--feature", "float_motion=motion_force_zero=true",
        "--feature", "float_motion=debug=false"]),
    "float_motion_psnr_motion_subsample3": ("48f", [
        "-n", "--feature", "psnr", "--feature", "float_motion", "--feature", "motion",
        "--subsample", "3"]),
}  # fmt: skip
PAIR_ARGS = TOOL_PAIRS


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path)


def test_a_batch_that_forgets_the_previous_pictures_fails(folder, tmp_path, monkeypatch):
    """A run that started each batch afresh would score each batch's first frame 0: the
    batches-of-one test above would catch it."""
    from admcuda.vmaf import float_motion

    real = float_motion.MotionRun.scores

    def forgetful(self, frames, mapper=map):
        self._prev = None
        return real(self, frames, mapper)

    monkeypatch.setattr(float_motion.MotionRun, "scores", forgetful)
    case = CASES["n8_420"]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json", "--batch", "1"))
    with pytest.raises(AssertionError):
        check_frames([f["metrics"] for f in doc["frames"]], case)

"""``speed_temporal`` as a feature of a run: ``admcuda score --feature speed_temporal``,
``admcuda.score(features=...)``, ``score_clip``, ``VmafExtractor``, its names and order,
its options, ``--subsample``, several distorted inputs, libvmaf's file layouts.

Goldens: ``testdata/speed_temporal_goldens.json`` (libvmaf 3.2.0's scalar C through its
C API, every frame's double; see ``tests/test_speed_temporal.py``): its synthetic clips
are written as raw files and scored through the command line, its Netflix pairs
(``../shared/netflix``; those tests skip where it is missing) likewise; every value is
compared with ``==``, names and their order too.
``testdata/libvmaf_outputs/speed_temporal/``: libvmaf's tool's own JSON, XML and CSV
files (its README says how they were made), for keys, their order, the frames listed
and the numbers as the tool prints them.
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

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda import VmafExtractor  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip, score_pair  # noqa: E402
from admcuda.vmaf.host import HostFeatures  # noqa: E402
from admcuda.vmaf.plan import HOST_KINDS  # noqa: E402
from admcuda.vmaf.speed_temporal import SpeedTemporalOptions  # noqa: E402

GOLD = FeatureGoldens("speed_temporal", feature="speed_temporal", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("speed_temporal_pairs")


def _luma(case: dict) -> tuple[list[np.ndarray], list[np.ndarray]]:
    refs, diss = MAKER.pair_planes(case["pair"])
    return [r[0] for r in refs], [d[0] for d in diss]


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case)
    assert list(doc["pooled_metrics"]) == list(case["frames"][0])
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["t8_420_ref_diff", "t16_400_odd", "long8_420_ref_diff_ks"])
def test_batches_of_one_frame_carry_the_previous_frames(key, folder, tmp_path):
    """One frame a batch, two threads: each batch's first score takes the last batch's
    reference and distorted frames."""
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json", "--batch", "1",
                              "--threads", "2"))  # fmt: skip
    check_frames([f["metrics"] for f in doc["frames"]], case)


@pytest.mark.parametrize("subsample,batch", [(3, "2"), (4, "3")])
def test_subsample_scores_against_the_frame_read_before(subsample, batch, folder, tmp_path):
    """libvmaf runs speed_temporal on every frame read: frame 3's score is its difference
    from frame 2, whatever --subsample lists."""
    case = CASES["long8_420"]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json", "--subsample",
                              str(subsample), "--batch", batch))  # fmt: skip
    assert [f["frameNum"] for f in doc["frames"]] == list(range(0, 9, subsample))
    check_frames([f["metrics"] for f in doc["frames"]],
                 {"frames": case["frames"][::subsample]})  # fmt: skip


@pytest.mark.parametrize("key", ["t10_422", "big8_420_all"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case)
    _, options = parse_feature_arg(GOLD.feature(case))
    check_frames(list(GOLD.score(case, folder, features=[("speed_temporal", options)])), case)


def test_distorted_inputs_of_other_lengths_keep_their_own_frames(folder, tmp_path):
    """Three distorted inputs, the first two (the reference cut short) ending early: each
    batch's first frame of each input is scored against that input's own previous frame
    once the others have dropped out of the batches."""
    case = CASES["long8_420"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    frame = w * h * 3 // 2
    data = open(ref, "rb").read()
    shorts = []
    for n in (3, 5):
        path = tmp_path / f"short{n}.yuv"
        path.write_bytes(data[: n * frame])
        shorts.append(str(path))
    results = admcuda.score(ref, [*shorts, dis], width=w, height=h, pixel_format=fmt,
                            bitdepth=bd, features=["speed_temporal"], batch=2)  # fmt: skip
    check_frames(list(results[2]), case)
    assert [f["speed_temporal"] for f in results[1]] == [0.0] * 5
    assert [f["speed_temporal"] for f in results[0]] == [0.0] * 3


def test_score_clip_reads_the_frames_before(folder):
    case = CASES["t12_444_odd_ref_diff"]
    refs, diss = _luma(case)
    plan = build_plan(features=[GOLD.feature(case)])
    check_frames(score_clip(plan, list(zip(refs, diss, strict=True)), 12), case)
    for subsample in (2, 3):
        got = score_clip(plan, list(zip(refs, diss, strict=True)), 12, subsample=subsample)
        check_frames(got, {"frames": case["frames"][::subsample]})
    with pytest.raises(AdmError, match="give prev_dis beside prev_ref"):
        score_pair(plan, refs[1], diss[1], refs[0], 12)


def test_vmaf_extractor_computes_it():
    """Frame by frame and in a batch: each frame's score is final as it is extracted."""
    case = CASES["t8_420_ref_diff"]
    w, h, _, bd = GOLD.geometry(case)
    refs, diss = _luma(case)
    with VmafExtractor(w, h, bd, model=None, features=[GOLD.feature(case)]) as vmaf:
        first = vmaf.extract(refs[0], diss[0])
        second = vmaf.extract(refs[1], diss[1])
        assert vmaf.frames_final == 2
        vmaf.extract_batch(np.stack(refs[2:]), np.stack(diss[2:]))
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert [first, second] == case["frames"][:2]
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself, which scores
    0): the goldens' doubles, speed_temporal after the model's features and before
    motion's flushed outputs."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["speed_temporal"])  # fmt: skip
    names = list(results[0][0])
    i = names.index("integer_vif_scale3")
    assert names[i + 1 : i + 4] == ["speed_temporal", "integer_motion2", "integer_motion3"]
    check_frames([{"speed_temporal": f["speed_temporal"]} for f in results[0]], case)
    assert [f["speed_temporal"] for f in results[1]] == [0.0] * 3


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["long8_420"]
    refs, diss = _luma(case)
    plan = build_plan(features=["speed_temporal", "float_psnr"])
    h, w = refs[0].shape
    host = HostFeatures(plan, w, h, "420", 8, threads=threads)
    ref, dis = np.stack(refs), np.stack(diss)
    out = host.compute(ref, None, [dis, ref], [None, None], len(refs))
    assert out[0]["speed_temporal"].tolist() == [f["speed_temporal"] for f in case["frames"]]
    assert out[1]["speed_temporal"].tolist() == [0.0] * len(refs)
    assert out[1]["float_psnr"].tolist() == [60.0] * len(refs)


def test_it_needs_numba(monkeypatch):
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    with pytest.raises(AdmError, match="speed_temporal needs the compiled engine"):
        HostFeatures(build_plan(features=["speed_temporal"]), 320, 240, "420", 8)


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["t8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "speed_temporal"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "speed_temporal" in HOST_KINDS
    assert parse_feature_arg("speed_temporal") == ("speed_temporal", SpeedTemporalOptions())
    assert parse_feature_arg("speed_temporal=speed_use_ref_diff=true:speed_prescale=0.5") == (
        "speed_temporal", SpeedTemporalOptions(speed_use_ref_diff=True, speed_prescale=0.5),
    )  # fmt: skip
    plan = build_plan(features=["speed_temporal", "speed_temporal=speed_use_ref_diff=false"])
    assert plan.output_order() == ["speed_temporal"]  # the same extractor: the first kept
    assert plan.engine_plan().extractors == ()
    assert plan.needs_every_frame and not plan.chroma_wanted("420")
    two = build_plan(features=["speed_temporal", "speed_temporal=speed_max_val=20",
                               "float_motion"])  # fmt: skip
    assert two.output_order() == ["speed_temporal", "speed_temporal_mxv_20", "motion2",
                                  "motion", "motion3"]  # fmt: skip


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("speed_temporal=ks=2", "would ignore 'ks'; write speed_kernelscale=2"),
        ("speed_temporal=speed_weight_var_mode=1", "has no option 'speed_weight_var_mode'"),
        ("speed_temporal=speed_kernelscale=0.9", "none of libvmaf's kernel scales"),
        ("speed_temporal=speed_sigma_nn=3", "must be in [0.1, 2], got '3'"),
        ("speed_temporal=speed_use_ref_diff=1", "expects true or false"),
        ("speed_temporal=speed_prescale_method=lanczos4", "does not compute libvmaf's bicubic"),
        ("speed_temporal=speed_prescale=1.5", "taller than the buffer libvmaf scales it into"),
        ("speed_temporal=speed_prescale=0.2", "leaves no 5x5 block after decimation by 16"),
        ("speed_temporal=speed_nn_floor=-0", "reads as -0"),
        ("speed_temporals", "float_motion, ciede, psnr_hvs, speed_temporal"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("t8_420", feature, needle, folder, tmp_path / "x.json", capsys)


def test_small_frames_are_one_line(folder, tmp_path, capsys):
    ref, dis = GOLD.paths(CASES["t8_420"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "64", "-h", "48", "-p", "420",
            "--feature", "speed_temporal", "-n", "--json", "-o", str(tmp_path / "x")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a 64x48 frame, prescaled to 64x48, leaves no 5x5" in err[0], err


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="SpeedTemporalOptions"):
        build_plan(features=[("speed_temporal", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "speed_temporal_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature",
                                    "speed_temporal"]),
    "speed_temporal_10bit_options": ("10b", [
        "-n", "--feature",
        "speed_temporal=speed_use_ref_diff=true:speed_kernelscale=1.5:speed_max_val=20"]),
    "speed_temporal_two_float_motion": ("3f", [
        "-n", "--feature", "speed_temporal", "--feature",
        "speed_temporal=speed_prescale=0.5:speed_prescale_method=bilinear",
        "--feature", "float_motion"]),
    "speed_temporal_psnr_motion_subsample2": ("3f", [
        "-n", "--feature", "psnr", "--feature", "speed_temporal", "--feature", "motion",
        "--subsample", "2"]),
}  # fmt: skip
PAIR_ARGS = {k: TOOL_PAIRS[k] for k in ("3f", "10b")}


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path)

"""``float_moment`` as a feature of a run: ``admcuda score --feature float_moment``,
``admcuda.score(features=...)``, ``VmafExtractor``, its names and order, libvmaf's file
layouts.

Goldens: ``testdata/moment_goldens.json`` (libvmaf 3.2.0's scalar C through its C API,
every frame's doubles; see ``tests/test_moment.py``): its synthetic pairs are written as
raw files and scored through the command line, its Netflix pairs (``../shared/netflix``;
those tests skip where it is missing) likewise; every value is compared with ``==``.
``testdata/libvmaf_outputs/moment/``: libvmaf's tool's own JSON, XML and CSV files (its
README says how they were made), for keys, their order, the frames listed and the numbers
as the tool prints them.
"""

from __future__ import annotations

import json

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
from admcuda.errors import AdmError
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.moment import MomentOptions
from admcuda.vmaf.plan import HOST_KINDS

GOLD = FeatureGoldens("moment", feature="float_moment", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
NAMES = list(CASES["n8_420"]["frames"][0])

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs under that are
# scored through score_clip; the 2048x1536 pair is left to tests/test_moment.py
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if 16 < side < 1000]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("moment_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case)
    assert list(doc["pooled_metrics"]) == NAMES
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422", "n16_420"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case)
    feature = [("float_moment", MomentOptions())]
    check_frames(list(GOLD.score(case, folder, features=feature)), case)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_of_any_size(key):
    """Frames down to 1x1, below what admcuda's inputs take, through score_pair."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_moment"])
    bd = MAKER.PAIRS[case["pair"]][3]
    check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


def test_vmaf_extractor_computes_it(folder):
    case = CASES["n12_444_odd"]
    w, h, _, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    with VmafExtractor(w, h, bd, model=None, features=["float_moment"]) as vmaf:
        first = vmaf.extract(ref[0], dis[0])
        vmaf.extract_batch(ref[1:], dis[1:])
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == case["frames"][0]
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles, after the model's features; the reference's moments on both sides."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["float_moment"])  # fmt: skip
    for frame, want in zip(results[0], case["frames"], strict=True):
        names = list(frame)
        assert names[names.index("integer_vif_scale3") + 1 : names.index("integer_motion2")] == (
            NAMES
        )
        assert {n: frame[n] for n in NAMES} == want
    for frame, want in zip(results[1], case["frames"], strict=True):
        assert frame["float_moment_dis1st"] == want["float_moment_ref1st"]
        assert frame["float_moment_dis2nd"] == want["float_moment_ref2nd"]


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n8_400_odd"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_moment", "psnr"]).for_pixel_format("400")
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    assert list(out[0]) == ["psnr_y", *NAMES]
    rows = [{n: out[0][n][k] for n in NAMES} for k in range(len(ref))]
    assert rows == case["frames"]
    assert out[1]["float_moment_dis2nd"].tolist() == [f["float_moment_ref2nd"] for f in rows]


def test_no_numba_needed(folder, monkeypatch):
    """NumPy's sums: a run without Numba computes it, and starts no kernel loading."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    case = CASES["n10_400_odd"]
    check_frames(list(GOLD.score(case, folder)), case)
    plan = build_plan(features=["float_moment"])
    host = HostFeatures(plan, 35, 19, "400", 10)
    assert host.compiled == () and host._loading is None
    with pytest.raises(AdmError, match="pip install 'admcuda\\[fast\\]'"):
        HostFeatures(build_plan(features=["float_moment", "float_ssim"]), 35, 19, "400", 10)


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["n8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "float_moment"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in NAMES} for f in result], case)


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "float_moment" in HOST_KINDS
    assert parse_feature_arg("float_moment") == ("float_moment", MomentOptions())
    plan = build_plan(features=["float_moment", "float_moment"])
    assert plan.output_order() == NAMES
    assert [ex.name for ex in plan.extractors] == ["float_moment"]
    assert plan.engine_plan().extractors == ()
    assert not plan.chroma_wanted("420") and not plan.needs_every_frame


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_moment=debug=true", "float_moment has no options and would ignore 'debug'"),
        ("float_moment=a=1:b=2", "would ignore 'a', 'b'; write --feature float_moment"),
        ("float_moment=", "bad option string ''"),
        ("float_moment=x", "bad option string 'x'"),
        (
            "float_moments",
            "float_moment, float_psnr, float_motion, ciede, psnr_hvs, speed_temporal",
        ),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="MomentOptions"):
        build_plan(features=[("float_moment", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "moment_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_moment"]),
    "moment_10bit": ("10b", ["-n", "--feature", "float_moment"]),
    "moment_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature",
                                              "float_moment", "--feature", "motion",
                                              "--subsample", "3"]),
}  # fmt: skip
PAIR_ARGS = TOOL_PAIRS


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path)


def test_a_frame_mixup_fails(folder, monkeypatch):
    """Reference and distorted planes swapped on the way in give other numbers than the
    goldens: the tests above would catch it."""
    from admcuda.vmaf import host

    real = host.moment_frame
    monkeypatch.setattr(host, "moment_frame", lambda ex, r, d, bd: real(ex, d, r, bd))
    case = CASES["n8_420"]
    with pytest.raises(AssertionError):
        check_frames(list(GOLD.score(case, folder)), case)

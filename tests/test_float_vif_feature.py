"""``float_vif`` as a feature of a run: ``admcuda score --feature float_vif``,
``admcuda.score(features=...)``, ``score_clip``, ``VmafExtractor``, its names and order,
libvmaf's file layouts.

Goldens: ``testdata/float_vif_goldens.json`` (libvmaf 3.2.0's scalar C through its C
API, every frame's doubles with ``debug`` on; see ``tests/test_float_vif.py``): its
synthetic pairs are written as raw files and scored through the command line, its Netflix
pairs (``../shared/netflix``; those tests skip where it is missing) likewise; every value
is compared with ``==``, names (as libvmaf's files print them: ``vif_scale0`` for
``VMAF_feature_vif_scale0_score``) and their order too.
``testdata/libvmaf_outputs/float_vif/``: libvmaf's tool's own JSON, XML and CSV files
(its README says how they were made), for keys, their order, the frames listed and the
numbers as the tool prints them.
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
from admcuda.vmaf.float_vif import FloatVifOptions
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.plan import HOST_KINDS

GOLD = FeatureGoldens("float_vif", feature="float_vif", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
SCORES = ["vif_scale0", "vif_scale1", "vif_scale2", "vif_scale3"]

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs at 16 are scored
# through score_clip
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if side > 16]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("float_vif_pairs")


def printed(case: dict) -> dict:
    """A case with its frames under the names libvmaf's files print, and the options with
    ``debug`` on (the goldens were made with it)."""
    frames = [{MAKER.ALIASES.get(k, k): v for k, v in f.items()} for f in case["frames"]]
    options = "debug=true" + (f":{case['options']}" if case["options"] else "")
    return {**case, "frames": frames, "options": options}


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = printed(CASES[key])
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case, json_nulls=True)
    assert list(doc["pooled_metrics"]) == list(case["frames"][0])
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422", "n16_420__combined", "grey8_444__snsq0"])
def test_api_score_equals_libvmaf(key, folder):
    case = printed(CASES[key])
    check_frames(list(GOLD.score(case, folder)), case, signed=True)
    feature = [parse_feature_arg(GOLD.feature(case))]
    check_frames(list(GOLD.score(case, folder, features=feature)), case, signed=True)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_down_to_the_least(key):
    """Frames of 16 samples a side, below what admcuda's inputs take, through score_pair."""
    case = printed(CASES[key])
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
    bd = MAKER.PAIRS[case["pair"]][3]
    check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


def test_vmaf_extractor_computes_it():
    case = printed(CASES["blur12_444"])
    w, h, _, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    feature = GOLD.feature(case)
    with VmafExtractor(w, h, bd, model=None, features=[feature]) as vmaf:
        first = vmaf.extract(ref[0], dis[0])
        vmaf.extract_batch(ref[1:], dis[1:])
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == case["frames"][0]
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles after the model's features; the reference against itself scores 1 at every
    scale."""
    case = printed(CASES["netflix_src01_8"])
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["float_vif"])  # fmt: skip
    names = list(results[0][0])
    i = names.index("integer_vif_scale3")
    assert names[i + 1 : i + 6] == [*SCORES, "integer_motion2"]
    check_frames([{n: f[n] for n in SCORES} for f in results[0]],
                 {"frames": [{n: f[n] for n in SCORES} for f in case["frames"]]})  # fmt: skip
    itself = [f[n] for f in results[1] for n in SCORES]
    assert all(abs(v - 1.0) < 1e-6 for v in itself), itself


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = printed(CASES["n8_400_odd"])
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case), "float_psnr"]).for_pixel_format("400")
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    names = list(case["frames"][0])
    assert list(out[0])[: len(names)] == names
    rows = [{n: out[0][n][k] for n in names} for k in range(len(ref))]
    assert rows == case["frames"]
    assert out[1]["vif_scale0"].tolist() == [1.0] * len(ref)


def test_no_numba_needed(folder, monkeypatch):
    """NumPy's arithmetic: a run without Numba computes it, and starts no kernel loading."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    case = printed(CASES["n10_400_odd__ps2_nearest"])
    check_frames(list(GOLD.score(case, folder)), case)
    host = HostFeatures(build_plan(features=["float_vif"]), 35, 19, "400", 10)
    assert host.compiled == () and host._loading is None


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = printed(CASES["n8_420"])
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", GOLD.feature(case)])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "float_vif" in HOST_KINDS
    assert parse_feature_arg("float_vif") == ("float_vif", FloatVifOptions())
    plan = build_plan(features=["float_vif", "float_vif"])
    assert plan.output_order() == SCORES
    assert [ex.name for ex in plan.extractors] == ["float_vif"]
    assert plan.engine_plan().extractors == ()
    assert not plan.chroma_wanted("420") and not plan.needs_every_frame
    two = build_plan(features=["float_vif", "float_vif=vif_enhn_gain_limit=1", "vif"])
    assert two.output_order() == SCORES + [f"{n}_egl_1" for n in SCORES] + [
        f"integer_vif_scale{s}" for s in range(4)
    ]
    debug = build_plan(features=["float_vif=debug=true:vif_skip_scale0=true"]).output_order()
    assert debug[:5] == [f"{n}_ssclz" for n in SCORES] + ["vif_ssclz"]
    assert len(debug) == 15 and debug[-1] == "vif_den_scale3_ssclz"


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_vif=egl=1", "write vif_enhn_gain_limit=1"),
        ("float_vif=vif_kernelscale=0.3", "none of libvmaf's kernel scales"),
        ("float_vif=vif_enhn_gain_limit=101", "must be in [1, 100]"),
        ("float_vif=vif_prescale_method=area", "must be one of nearest, bilinear"),
        ("float_vif=vif_skip_scale0=yes", "expects true or false"),
        ("float_vif=vif_sigma_nsq=1x", "expects a number"),
        ("float_vif=bogus=1", "libvmaf's float_vif has no option 'bogus'"),
        ("float_vif=", "bad option string ''"),
        ("float_vifs", "float_ansnr, float_vif"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


@pytest.mark.parametrize(
    "feature,size,needle",
    [
        ("float_vif", (15, 40), "a 15x40 frame (prescaled to 15x40) is too small"),
        ("float_vif=vif_kernelscale=2", (31, 40), "scale 3's 7-tap filter"),
        ("float_vif=vif_prescale=0.5", (30, 40), "prescaled to 15x20"),
        ("float_vif=vif_prescale=2:vif_prescale_method=bilinear", (3841, 40), "7682"),
    ],
)
def test_sizes_it_does_not_score_are_refused_before_any_is_read(feature, size, needle):
    plan = build_plan(features=[feature])
    with pytest.raises(AdmError) as info:
        HostFeatures(plan, *size, "400", 8)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="FloatVifOptions"):
        build_plan(features=[("float_vif", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "float_vif_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_vif"]),
    "float_vif_10bit_debug": ("10b", ["-n", "--feature", "float_vif=debug=true"]),
    "float_vif_options": ("3f", ["-n", "--feature", "float_vif=vif_enhn_gain_limit=1.5:"
                                 "vif_kernelscale=1.5:vif_skip_scale0=true:debug=true"]),
    "float_vif_prescale_bicubic": ("48f", [
        "-n", "--feature", "float_vif=vif_prescale=2:vif_prescale_method=bicubic"]),
    "float_vif_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature",
                                                 "float_vif", "--feature", "motion",
                                                 "--subsample", "3"]),
    "float_vif_two_with_vif_float_ansnr": ("3f", [
        "-n", "--feature", "float_ansnr", "--feature", "float_vif", "--feature", "vif",
        "--feature", "float_vif=vif_enhn_gain_limit=1"]),
}  # fmt: skip
PAIR_ARGS = TOOL_PAIRS


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path)


def test_the_planes_swapped_fail(folder, monkeypatch):
    """The reference and the distorted frame swapped give other numbers than the goldens:
    the tests above would catch it."""
    from admcuda.vmaf import float_vif

    real = float_vif.float_vif_frame
    case = printed(CASES["n8_420"])
    monkeypatch.setattr(float_vif, "float_vif_frame", lambda ex, r, d, bd: real(ex, d, r, bd))
    with pytest.raises(AssertionError):
        check_frames(list(GOLD.score(case, folder)), case)

"""``float_ansnr`` as a feature of a run: ``admcuda score --feature float_ansnr``,
``admcuda.score(features=...)``, ``score_clip``, ``VmafExtractor``, its names and order,
libvmaf's file layouts.

Goldens: ``testdata/float_ansnr_goldens.json`` (libvmaf 3.2.0's scalar C through its C
API, every frame's doubles; see ``tests/test_float_ansnr.py``): its synthetic pairs are
written as raw files and scored through the command line, its Netflix pairs
(``../shared/netflix``; those tests skip where it is missing) likewise; every value is
compared with ``==`` (minus infinity is ``null`` in JSON), names and their order too.
``testdata/libvmaf_outputs/float_ansnr/``: libvmaf's tool's own JSON, XML and CSV files
(its README says how they were made), for keys, their order, the frames listed and the
numbers as the tool prints them.
"""

from __future__ import annotations

import json
import math

import pytest
from _golden_cases import (
    TOOL_PAIRS,
    FeatureGoldens,
    check_frames,
    engine_plans,
    pair_folder,
    tool_pair,
    written_pair,
)

import admcuda
from admcuda import VmafExtractor
from admcuda.errors import AdmError
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip
from admcuda.vmaf.float_ansnr import FloatAnsnrOptions
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.plan import HOST_KINDS

GOLD = FeatureGoldens("float_ansnr", feature="float_ansnr", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
NAMES = ["float_ansnr", "float_anpsnr"]

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs under that are
# scored through score_clip
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if side > 16]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("float_ansnr_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case, json_nulls=True)
    assert list(doc["pooled_metrics"]) == NAMES
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422", "flat8_420"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case, signed=True)
    feature = [("float_ansnr", FloatAnsnrOptions())]
    check_frames(list(GOLD.score(case, folder, features=feature)), case, signed=True)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_of_any_size(key):
    """Frames down to 3x3, below what admcuda's inputs take, through score_pair."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_ansnr"])
    bd = MAKER.PAIRS[case["pair"]][3]
    check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


def test_vmaf_extractor_computes_it():
    case = CASES["blur12_444"]
    w, h, _, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    with VmafExtractor(w, h, bd, model=None, features=["float_ansnr"]) as vmaf:
        first = vmaf.extract(ref[0], dis[0])
        vmaf.extract_batch(ref[1:], dis[1:])
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == case["frames"][0]
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles after the model's features; the reference against itself is no cap (the two
    sides go through different kernels)."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["float_ansnr"])  # fmt: skip
    names = list(results[0][0])
    i = names.index("integer_vif_scale3")
    assert names[i + 1 : i + 4] == ["float_ansnr", "float_anpsnr", "integer_motion2"]
    check_frames([{n: f[n] for n in NAMES} for f in results[0]], case)
    itself = [f["float_ansnr"] for f in results[1]]
    assert all(15 < v < 60 for v in itself), itself


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n8_400_odd"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_ansnr", "float_psnr"]).for_pixel_format("400")
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    assert list(out[0])[:2] == NAMES
    rows = [{n: out[0][n][k] for n in NAMES} for k in range(len(ref))]
    assert rows == case["frames"]
    assert out[1]["float_psnr"].tolist() == [60.0] * len(ref)


def test_no_numba_needed(folder, monkeypatch):
    """NumPy's arithmetic: a run without Numba computes it, and starts no kernel loading."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    case = CASES["n10_400_odd"]
    check_frames(list(GOLD.score(case, folder)), case)
    host = HostFeatures(build_plan(features=["float_ansnr"]), 35, 19, "400", 10)
    assert host.compiled == () and host._loading is None


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["n8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "float_ansnr"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in NAMES} for f in result], case)


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "float_ansnr" in HOST_KINDS
    assert parse_feature_arg("float_ansnr") == ("float_ansnr", FloatAnsnrOptions())
    plan = build_plan(features=["float_ansnr", "float_ansnr"])
    assert plan.output_order() == NAMES
    assert [ex.name for ex in plan.extractors] == ["float_ansnr"]
    assert plan.engine_plan().extractors == ()
    assert not plan.chroma_wanted("420") and not plan.needs_every_frame
    beside = build_plan(features=["float_ansnr", "speed_temporal", "float_psnr"])
    assert beside.output_order() == NAMES + ["speed_temporal", "float_psnr"]


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_ansnr=enable_chroma=true", "float_ansnr has no options and would ignore"),
        ("float_ansnr=a=1:b=2", "would ignore 'a', 'b'; write --feature float_ansnr"),
        ("float_ansnr=", "bad option string ''"),
        ("float_ansnrs", "speed_temporal, float_ansnr"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


def test_frames_under_3_samples_a_side_are_refused_before_any_is_read():
    plan = build_plan(features=["float_ansnr"])
    with pytest.raises(AdmError, match="a 2x40 frame is under 3 samples a side"):
        HostFeatures(plan, 2, 40, "400", 8)


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="FloatAnsnrOptions"):
        build_plan(features=[("float_ansnr", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "float_ansnr_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_ansnr"]),
    "float_ansnr_10bit": ("10b", ["-n", "--feature", "float_ansnr"]),
    "float_ansnr_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature",
                                                   "float_ansnr", "--feature", "motion",
                                                   "--subsample", "3"]),
    "float_ansnr_speed_temporal_float_psnr": ("3f", [
        "-n", "--feature", "float_ansnr", "--feature", "speed_temporal", "--feature",
        "float_psnr"]),
    "float_ansnr_flat": ("flat", ["-n", "--feature", "float_ansnr"]),
}  # fmt: skip
PAIR_ARGS = TOOL_PAIRS


def _printed(got: float | None, want: float | None) -> bool:
    """``got`` as libvmaf's tool prints it (``%.6f``; ``null`` in JSON where it is not
    finite) reads back as ``want``."""
    if want is None or got is None:
        return want is got
    if math.isinf(want):
        return got == want
    return float(f"{got:.6f}") == want


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, folder, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    if pair == "flat":
        ref, dis = written_pair(MAKER, "flat8_420", folder)
        run = (ref, dis, "20", "18", "8")
    else:
        run = tool_pair(PAIR_ARGS[pair])
    GOLD.check_tool_run(name, fmt, run, args, tmp_path, same=_printed)


def test_the_planes_swapped_fail(folder, monkeypatch):
    """The reference and the distorted frame swapped (each through the other's kernel)
    give other numbers than the goldens: the tests above would catch it."""
    from admcuda.vmaf import float_ansnr

    real = float_ansnr.float_ansnr_frame
    case = CASES["n8_420"]
    monkeypatch.setattr(float_ansnr, "float_ansnr_frame", lambda ex, r, d, bd: real(ex, d, r, bd))
    with pytest.raises(AssertionError):
        check_frames(list(GOLD.score(case, folder)), case)

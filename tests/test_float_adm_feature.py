"""``float_adm`` as a feature of a run: ``admcuda score --feature float_adm``,
``admcuda.score(features=...)``, ``score_clip``, ``VmafExtractor``, its names and order,
libvmaf's file layouts.

Goldens: ``testdata/float_adm_goldens.json`` (libvmaf 3.2.0's scalar C through its C
API, every frame's doubles; see ``tests/test_float_adm.py``): its synthetic pairs are
written as raw files and scored through the command line, its Netflix pairs
(``../shared/netflix``; those tests skip where it is missing) likewise; every value is
compared with ``==``, names and their order too. ``testdata/libvmaf_outputs/float_adm/``:
libvmaf's tool's own JSON, XML and CSV files (its README says how they were made), for
keys, their order, the frames listed and the numbers as the tool prints them.
"""

from __future__ import annotations

import json

import pytest
from _golden_cases import (
    TOOL_PAIRS,
    FeatureGoldens,
    check_frames,
    pair_folder,
    tool_pair,
)

import admcuda
from admcuda import VmafExtractor
from admcuda.cli.main import main
from admcuda.errors import AdmError
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip
from admcuda.vmaf.float_adm import FloatAdmOptions
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.plan import HOST_KINDS

GOLD = FeatureGoldens("float_adm", feature="float_adm", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
NAMES = ["adm2", "aim", "adm3", "adm_scale0", "adm_scale1", "adm_scale2", "adm_scale3"]

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_FILES = [k for k in SYNTHETIC if k not in {"big8_420", "big16_400"}]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("float_adm_pairs")


def _feature(case: dict) -> str:
    return "float_adm=debug=true" + (":" + case["options"] if case["options"] else "")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    out = tmp_path / "out.json"
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
            "-b", str(bd), "--feature", _feature(case), "-n", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    doc = json.loads(out.read_text())
    check_frames([f["metrics"] for f in doc["frames"]], case)
    assert list(doc["pooled_metrics"]) == list(case["frames"][0])
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422", "barten_n8_420", "ssz_n8_420"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder, features=[_feature(case)])), case, signed=True)
    options = parse_feature_arg(_feature(case))[1]
    check_frames(list(GOLD.score(case, folder, features=[("float_adm", options)])), case)


def test_score_clip_and_vmaf_extractor():
    case = CASES["blur12_444"]
    w, h, _, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[_feature(case)])
    check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)
    with VmafExtractor(w, h, bd, model=None, features=[_feature(case)]) as vmaf:
        first = vmaf.extract(ref[0], dis[0])
        vmaf.extract_batch(ref[1:], dis[1:])
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == case["frames"][0]
    check_frames(frames, case)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles after the model's features; the reference against itself scores adm2 1."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["float_adm"])  # fmt: skip
    names = list(results[0][0])
    i = names.index("integer_vif_scale3")
    assert names[i + 1 : i + 9] == [*NAMES, "integer_motion2"]
    check_frames([{n: f[n] for n in NAMES} for f in results[0]],
                 {"frames": [{n: f[n] for n in NAMES} for f in case["frames"]]})  # fmt: skip
    assert [f["adm2"] for f in results[1]] == [1.0] * 3


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n8_400_odd"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["float_adm=debug=true"]).for_pixel_format("400")
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    names = list(case["frames"][0])
    rows = [{n: out[0][n][k] for n in names} for k in range(len(ref))]
    assert rows == case["frames"]
    assert out[1]["adm2"].tolist() == [1.0] * len(ref)
    assert host.compiled == ()


# --- options, names, order ----------------------------------------------------------------------


def test_names_and_registration():
    assert "float_adm" in HOST_KINDS
    assert parse_feature_arg("float_adm") == ("float_adm", FloatAdmOptions())
    plan = build_plan(features=["float_adm", "float_adm"])
    assert plan.output_order() == NAMES
    assert [ex.name for ex in plan.extractors] == ["float_adm"]
    assert plan.engine_plan().extractors == ()
    two = build_plan(features=["float_adm", "float_adm=adm_enhn_gain_limit=1.0"])
    assert two.output_order() == NAMES + [n + "_egl_1" for n in NAMES]


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_adm=adm_p_norm=0.5", "adm_p_norm must be in [1, 20]"),
        ("float_adm=egl=1", "would ignore 'egl'; write adm_enhn_gain_limit=1"),
        ("float_adm=debug=yes", "option debug expects true or false"),
        ("float_adms", "float_vif and float_adm"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


def test_frames_under_17_samples_a_side_are_refused_before_any_is_read():
    plan = build_plan(features=["float_adm"])
    with pytest.raises(AdmError, match="a 16x40 frame is under 17 samples a side"):
        HostFeatures(plan, 16, 40, "400", 8)


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="FloatAdmOptions"):
        build_plan(features=[("float_adm", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "float_adm_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_adm"]),
    "float_adm_10bit": ("10b", ["-n", "--feature", "float_adm"]),
    "float_adm_egl1_debug": ("3f", ["-n", "--feature",
                                    "float_adm=debug=true:adm_enhn_gain_limit=1.0"]),
    "float_adm_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature",
                                                 "float_adm", "--feature", "motion",
                                                 "--subsample", "3"]),
    "float_adm_float_ansnr_csf1": ("3f", ["-n", "--feature", "float_ansnr", "--feature",
                                          "float_adm=adm_csf_mode=1"]),
}  # fmt: skip
PAIR_ARGS = TOOL_PAIRS


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path)

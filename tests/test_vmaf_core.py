"""admcuda.vmaf: the feature plan and its CPU computation against libvmaf 3.2.0.

Truth:

- ``../shared/netflix/vmaf_goldens.json`` and ``testdata/vmaf_goldens.json``: libvmaf 3.2.0's
  scalar C path through ``shared/tools/libvmaf_vmaf_oracle.py`` (provenance in each file's
  ``_provenance``): every frame's outputs and the models' pooled scores, compared with ``==``.
- ``testdata/libvmaf_outputs/``: libvmaf 3.2.0's ``vmaf`` tool's own JSON, XML and CSV files
  for command lines with models and features (README.md there); the keys of each frame and
  of ``pooled_metrics``, in order, and the numbers as the tool prints them.
"""

from __future__ import annotations

import csv
import json
import math
import pickle
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference.motion import MotionOptions
from admcuda.reference.vif import VifOptions
from conftest import NETFLIX, TESTDATA

from admcuda.errors import AdmError
from admcuda.model import load_model, output_name
from admcuda.options import AdmOptions
from admcuda.vmaf import (
    build_plan,
    finish_clip,
    parse_feature_arg,
    pooled,
    score_clip,
    score_pair,
)

OUTPUTS = TESTDATA / "libvmaf_outputs"
PAIR_3F = ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8)


def _entries(path: Path, base: Path) -> list[tuple[str, dict, Path]]:
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [(k, v, base) for k, v in data.items() if not k.startswith("_")]


GOLDENS = _entries(NETFLIX / "vmaf_goldens.json", NETFLIX) + _entries(
    TESTDATA / "vmaf_goldens.json", TESTDATA
)


def _golden_plan(entry: dict):
    """The plan of an oracle run: a model with its flags, or adm, vif and motion with
    debug=true and the entry's options, registered in that order."""
    if entry["mode"] == "model":
        arg = f"version={entry['args'][0]}"
        arg += ":enable_transform" if "transform" in entry["args"][1:] else ""
        arg += ":disable_clip" if "noclip" in entry["args"][1:] else ""
        return build_plan([arg])
    opts: dict[str, list[str]] = {"adm": ["debug=true"], "vif": ["debug=true"], "motion": []}
    opts["motion"].append("debug=true")
    for item in entry["args"]:
        feature, kv = item.split(":", 1)
        opts[feature].append(kv)
    return build_plan(features=[f"{f}={':'.join(kv)}" for f, kv in opts.items()])


_CACHE: dict[tuple, list[np.ndarray]] = {}


def _planes(base: Path, name: str, case: dict) -> list[np.ndarray]:
    key = (base, name)
    if key not in _CACHE:
        _CACHE[key] = luma_frames(base / name, case["w"], case["h"], case["fmt"], case["bitdepth"])
    return _CACHE[key]


def _same(ours: float, theirs: float) -> bool:
    return ours == theirs or (math.isnan(ours) and math.isnan(theirs))


@pytest.mark.skipif(not GOLDENS, reason="no VMAF goldens found")
@pytest.mark.parametrize("key,entry,base", GOLDENS, ids=[f"{b.name}/{k}" for k, _, b in GOLDENS])
def test_goldens(key, entry, base):
    case = entry["case"]
    refs = _planes(base, case["ref"], case)
    diss = _planes(base, case["dis"], case)
    n = len(entry["frames"])
    plan = _golden_plan(entry)
    frames = score_clip(plan, zip(refs[:n], diss[:n], strict=True), case["bitdepth"])
    assert len(frames) == n
    skip = set(entry.get("unstable_fields", ())) | set(entry.get("heap_fields", ()))
    compared = 0
    for i, (want, got) in enumerate(zip(entry["frames"], frames, strict=True)):
        assert list(got) == plan.output_order()
        for name, value in want.items():
            if name in skip:
                continue
            printed = output_name(name)
            if value is None:
                assert name in entry.get("nan_fields", ()) and math.isnan(got[printed])
            else:
                assert got[printed] == value, (i, name, got[printed] - value)
            compared += 1
    assert compared >= n * 3
    if "pooled" in entry:
        p = pooled(plan, frames)
        for model_name, methods in entry["pooled"].items():
            assert methods and p[model_name] == methods


# --- libvmaf's own output files ------------------------------------------------------------

README = (OUTPUTS / "README.md").read_text() if OUTPUTS.exists() else ""
# name -> (plan arguments, --subsample) of each command line in README.md
COMMANDS: dict[str, tuple[list[str], list[str], bool, int]] = {}
for _name, _args in re.findall(r"^\| `(\w+)` \| `vmaf [^`]*?-q (.*?) --\{json", README, re.M):
    _models = re.findall(r"--model (\S+)", _args)
    _features = re.findall(r"--feature (\S+)", _args)
    _sub = re.search(r"--subsample (\d+)", _args)
    if not _models and " -n" not in f" {_args}":
        _models = ["version=vmaf_v0.6.1"]  # the tool's default model
    COMMANDS[_name] = (_models, _features, " -n" not in f" {_args}", int(_sub[1]) if _sub else 1)


def _read_json(path: Path) -> tuple[list[tuple[int, dict]], dict]:
    data = json.loads(path.read_text(), object_pairs_hook=dict)
    return [(f["frameNum"], f["metrics"]) for f in data["frames"]], data["pooled_metrics"]


def _read_xml(path: Path) -> tuple[list[tuple[int, dict]], dict]:
    root = ET.parse(path).getroot()
    frames = []
    for el in root.find("frames"):
        attrs = dict(el.attrib)
        num = int(attrs.pop("frameNum"))
        frames.append((num, {k: float(v) for k, v in attrs.items()}))
    pools = {}
    for el in root.find("pooled_metrics"):
        attrs = dict(el.attrib)
        name = attrs.pop("name")
        pools[name] = {k: float(v) for k, v in attrs.items()}
    return frames, pools


def _read_csv(path: Path) -> tuple[list[tuple[int, dict]], dict]:
    rows = list(csv.reader(path.read_text().splitlines()))
    head = rows[0][1:-1]  # a trailing comma ends every line
    frames = [(int(r[0]), dict(zip(head, map(float, r[1:-1]), strict=True))) for r in rows[1:]]
    return frames, {}


READERS = {"json": _read_json, "xml": _read_xml, "csv": _read_csv}


def _printed(x: float) -> str:
    """libvmaf's writers: %.6f, or %.16f for a number with more than 6 leading zeros."""
    frac = abs(x) - int(abs(x))
    zeros = 0
    while frac < 1.0 and frac != 0:
        frac *= 10
        zeros += 1
    return f"{x:.6f}" if zeros <= 6 else f"{x:.16f}"


@pytest.fixture(scope="module")
def pair_3f():
    if not (NETFLIX / PAIR_3F[0]).exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    ref, dis, w, h, fmt, bd = PAIR_3F
    return (luma_frames(NETFLIX / ref, w, h, fmt, bd), luma_frames(NETFLIX / dis, w, h, fmt, bd))


def test_readme_lists_every_output():
    files = {p.stem for p in OUTPUTS.glob("*.json")}
    assert files and files == set(COMMANDS)
    for ext in ("xml", "csv"):
        assert {p.stem for p in OUTPUTS.glob(f"*.{ext}")} == files


@pytest.mark.parametrize("fmt", sorted(READERS))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_libvmaf_layouts(name, fmt, pair_3f):
    models, features, predict, subsample = COMMANDS[name]
    plan = build_plan(models, features, predict=predict)
    theirs, their_pool = READERS[fmt](OUTPUTS / f"{name}.{fmt}")
    refs, diss = pair_3f
    ours = score_clip(plan, zip(refs, diss, strict=True), 8, subsample=subsample)
    assert [num for num, _ in theirs] == list(range(0, len(refs), subsample))
    for (_, want), got in zip(theirs, ours, strict=True):
        assert list(want) == list(got) == plan.output_order()
        for k, v in want.items():
            assert float(_printed(got[k])) == v, k
    if fmt != "csv":
        ours_pool = pooled(plan, ours)
        assert list(their_pool) == list(ours_pool)
        for k, methods in their_pool.items():
            assert list(methods) == ["min", "max", "mean", "harmonic_mean"]
            for m, v in methods.items():
                assert float(_printed(ours_pool[k][m])) == v, (k, m)


def test_layouts_fail_for_another_order(pair_3f):
    # the fixtures decide: the same features registered in another order print otherwise
    theirs, _ = _read_json(OUTPUTS / "features_vif_motion.json")
    plan = build_plan(features=["motion", "vif"], predict=False)
    assert list(theirs[0][1]) != plan.output_order()


# --- the plan ---------------------------------------------------------------------------------


def test_models_share_extractors():
    plan = build_plan(["version=vmaf_v0.6.1", "version=vmaf_4k_v0.6.1:name=vmaf_4k"])
    assert [ex.name for ex in plan.extractors] == ["adm", "motion", "vif"]
    assert plan.model_outputs == ("vmaf", "vmaf_4k")
    neg = build_plan(["version=vmaf_v0.6.1", "version=vmaf_v0.6.1neg:name=neg"])
    assert [(ex.name, ex.extract_outputs[0]) for ex in neg.extractors] == [
        ("adm", "integer_adm2"),
        ("motion", "VMAF_integer_feature_motion_sad_score"),
        ("vif", "integer_vif_scale0"),
        ("adm", "integer_adm2_egl_1"),
        ("vif", "integer_vif_scale0_egl_1"),
    ]
    assert neg.extractors[3].options == AdmOptions(adm_enhn_gain_limit=1.0)
    assert neg.extractors[4].options == VifOptions(vif_enhn_gain_limit=1.0)


def test_first_registration_wins():
    # debug is no feature parameter: libvmaf keeps the model's ADM and drops this one
    plan = build_plan(["version=vmaf_v0.6.1"], ["adm=debug=true"])
    assert len(plan.extractors) == 3 and not plan.extractors[0].options.debug
    plan = build_plan(features=["motion=debug=true", "motion"], predict=False)
    assert len(plan.extractors) == 1 and plan.extractors[0].options.debug
    plan = build_plan(features=["motion", "motion=motion_force_zero=true"])
    assert len(plan.extractors) == 2


def test_model_and_admcuda_adm():
    plan = build_plan(["version=vmaf_v0.6.1neg"], adm=AdmOptions())
    assert [ex.name for ex in plan.extractors] == ["adm", "motion", "vif", "adm"]
    assert build_plan(adm=AdmOptions()).output_order()[:2] == ["integer_adm2", "integer_aim"]
    assert len(build_plan(["version=vmaf_v0.6.1"], adm=AdmOptions()).extractors) == 3


def test_no_prediction_and_names():
    plan = build_plan(["version=vmaf_v0.6.1:name=foo"], predict=False)
    assert plan.model_outputs == () and "foo" not in plan.output_order()
    assert build_plan(["version=vmaf_v0.6.1:name=foo"]).output_order()[-1] == "foo"


def test_history():
    assert build_plan(features=["vif"]).history == 0
    assert not build_plan(features=["vif"]).needs_every_frame
    assert build_plan(features=["motion=motion_force_zero=true"]).history == 0
    assert build_plan(features=["motion=motion_force_zero=true"]).needs_every_frame
    assert build_plan(["version=vmaf_v0.6.1"]).history == 1
    assert build_plan(features=["motion", "motion=motion_five_frame_window=true"]).history == 2


def test_parse_feature_arg():
    assert parse_feature_arg("vif") == ("vif", VifOptions())
    assert parse_feature_arg("vif_cuda=vif_enhn_gain_limit=1.0000001") == (
        "vif_cuda",
        VifOptions(vif_enhn_gain_limit=1.0),
    )
    assert parse_feature_arg("motion=motion_blend_factor=.5:motion_moving_average=true") == (
        "motion",
        MotionOptions(motion_blend_factor=0.5, motion_moving_average=True),
    )
    assert parse_feature_arg("motion_cuda")[1] == MotionOptions(debug=True)
    assert parse_feature_arg("adm=adm_norm_view_dist=4.1234567")[1] == AdmOptions(
        adm_norm_view_dist=4.12346
    )


@pytest.mark.parametrize(
    "args,message",
    [
        ((["version=vmaf_v9"], []), "unknown model version"),
        ((["version=vmaf_v0.6.1", "version=vmaf_4k_v0.6.1"], []), "two models are named 'vmaf'"),
        ((["version=vmaf_v0.6.1:name=integer_adm2"], []), "is a feature's output name"),
        ((["version=vmaf_v0.6.1:name=a,b"], []), "cannot be written into libvmaf's XML, CSV"),
        ((["version=vmaf_v0.6.1:name=a<b"], []), "cannot be written into libvmaf's XML, CSV"),
        ((['version=vmaf_v0.6.1:name=a"b'], []), "cannot be written into libvmaf's XML, CSV"),
        ((["version=vmaf_v0.6.1:name=a|b"], []), "cannot be written into libvmaf's XML, CSV"),
        ((["version=vmaf_v0.6.1:name=a b"], []), "cannot be written into libvmaf's XML, CSV"),
        ((["version=vmaf_v0.6.1:name=frameNum"], []), "cannot be written into libvmaf's XML"),
        ((["path=/nonexistent/model.json"], []), "cannot read model"),
        ((["version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=0.5"], []), "adm_enhn_gain_limit"),
        (([], ["null"]), "admcuda computes the features adm, vif and motion"),
        (([], ["vif=egl=1"]), "write vif_enhn_gain_limit=1"),
        (([], ["vif=vif_enhn_gain_limit=101"]), "must be in [1, 100]"),
        (([], ["vif=vif_enhn_gain_limit=1.5x"]), "expects a number"),
        (([], ["vif=vif_skip_scale0=1"]), "expects true or false"),
        (([], ["vif=vif_enhn_gain_limit"]), "bad option string"),
        (([], ["vif="]), "bad option string"),
        (([], ["vif=debug=true=false"]), "bad option string"),
        (([], ["vif=debug=true:debug=false"]), "given twice"),
        (([], ["vif=nonsense=1"]), "has no option 'nonsense'"),
        (([], ["vif_cuda=vif_skip_scale0=true"]), "has no option vif_skip_scale0"),
        (([], ["motion_cuda=motion_max_val=3"]), "has no option motion_max_val"),
        (([], ["adm_cuda=adm_csf_mode=1"]), "has no option adm_csf_mode"),
        (([], ["motion=motion_blend_factor=-0"]), "reads as -0"),
        (([], ["motion=motion_fps_weight=6"]), "must be in [0, 5]"),
        (([], ["adm=adm_norm_view_dist=1"]), "libvmaf refuses"),
        (([], ["adm=egl=1"]), "write adm_enhn_gain_limit=1"),
        ((["version=vmaf_v0.6.1"], ["adm_cuda"]), "prints too"),
        (([], ["motion", "motion_cuda"]), "prints too"),
        (([], []), "nothing to compute"),
        (([], [("vif", AdmOptions())]), "give adm, vif or motion"),
        (([], [("psnr", VifOptions())]), "give adm, vif or motion"),
    ],
)
def test_plan_errors(args, message):
    with pytest.raises(AdmError) as err:
        build_plan(*args)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_cuda_names_print_what_libvmaf_cuda_prints():
    (adm,) = build_plan(features=["adm_cuda=adm_norm_view_dist=4"]).extractors
    assert adm.extract_outputs == tuple(
        f"integer_adm{s}" for s in ("2", "_scale0", "_scale1", "_scale2", "_scale3")
    )
    (motion,) = build_plan(features=["motion_cuda=motion_force_zero=true"]).extractors
    assert motion.outputs == ("integer_motion2_force_0", "integer_motion_force_0")
    (motion,) = build_plan(features=["motion_cuda=debug=false"]).extractors
    assert motion.outputs == ("integer_motion2",)


# --- compute ----------------------------------------------------------------------------------


def test_cuda_names_compute_the_cpu_numbers(pair_3f):
    refs, diss = pair_3f
    pairs = list(zip(refs, diss, strict=True))
    cpu = score_clip(build_plan(features=["adm", "vif", "motion=debug=true"]), pairs, 8)
    cuda = score_clip(build_plan(features=["adm_cuda", "vif_cuda", "motion_cuda"]), pairs, 8)
    for a, b in zip(cpu, cuda, strict=True):
        assert "integer_aim" not in b and "integer_motion3" not in b
        assert all(a[k] == v for k, v in b.items())


def test_subsample_feeds_motion_every_frame(pair_3f):
    refs, diss = pair_3f
    plan = build_plan(["version=vmaf_v0.6.1"])
    every = score_clip(plan, zip(refs, diss, strict=True), 8)
    sub = score_clip(plan, zip(refs, diss, strict=True), 8, subsample=2)
    # frame 0's motion2 reads frame 1, which is not scored; frame 2 is the last read
    assert sub[0] == every[0] and sub[1]["integer_motion2"] == every[2]["integer_motion2"]
    assert sub[1]["VMAF_integer_feature_motion_sad_score"] == every[1]["integer_motion2"]
    frames = [score_pair(plan, refs[i], diss[i], refs[i - 1] if i else None, 8) for i in (0, 2)]
    with pytest.raises(AdmError, match="no integer_adm2"):
        finish_clip(plan, [frames[0], {"VMAF_integer_feature_motion_sad_score": 0.0}, frames[1]])


def test_frames_in_any_order_through_pickle(pair_3f):
    # score_pair is what a process pool runs: a pickled plan, frames in any order
    refs, diss = pair_3f
    plan = pickle.loads(pickle.dumps(build_plan(["version=vmaf_v0.6.1neg"])))
    frames = {
        i: score_pair(plan, refs[i], diss[i], refs[i - 1] if i else None, 8) for i in (2, 0, 1)
    }
    got = finish_clip(plan, [frames[i] for i in range(3)])
    assert got == score_clip(plan, zip(refs, diss, strict=True), 8)


def test_first_frame_after_a_skip_has_no_previous(pair_3f):
    refs, diss = pair_3f
    plan = build_plan(features=["motion=debug=true"])
    skipped = score_clip(plan, zip(refs[1:], diss[1:], strict=True), 8)
    assert skipped[0]["integer_motion"] == 0.0
    whole = score_clip(plan, zip(refs, diss, strict=True), 8)
    assert skipped[1]["integer_motion"] == whole[2]["integer_motion"] != 0.0


def test_model_score_is_the_models_prediction(pair_3f):
    # neg is vmaf_v0.6.1's SVM on the egl=1 features: each score must read its own
    refs, diss = pair_3f
    plan = build_plan(["version=vmaf_v0.6.1", "version=vmaf_v0.6.1neg:name=neg"])
    (frame, *_) = score_clip(plan, zip(refs, diss, strict=True), 8)
    assert frame["vmaf"] == load_model("vmaf_v0.6.1").predict(frame)
    assert frame["neg"] == load_model("vmaf_v0.6.1neg").predict(frame)
    assert frame["neg"] != frame["vmaf"]


def test_bad_planes():
    plan = build_plan(["version=vmaf_v0.6.1"])
    z = np.zeros((16, 16), np.uint8)
    with pytest.raises(AdmError, match="prev_ref"):
        score_pair(plan, z, z, np.zeros((8, 8), np.uint8), 8)
    with pytest.raises(AdmError, match="uint8"):
        score_pair(plan, z.astype(np.uint16), z.astype(np.uint16), None, 8)
    with pytest.raises(AdmError, match="subsample"):
        finish_clip(plan, [], subsample=0)
    with pytest.raises(AdmError, match="no frames"):
        pooled(plan, [])

"""libvmaf's float models (``vmaf_float_v0.6.1``, ``vmaf_float_v0.6.1neg``,
``vmaf_float_4k_v0.6.1``, the collection ``vmaf_float_b_v0.6.3``) over admcuda's float_adm,
float_vif and float_motion.

Truth: ``testdata/float_model_goldens.json``, libvmaf 3.2.0's scalar C with its float
features at full precision through its C API (``testdata/make_float_model_goldens.py``;
provenance in its ``_provenance`` key; float_adm's divisions are those of the AMD EPYC
CPU's ``rcpss`` that admcuda emulates), on the pairs of ``../shared/netflix`` (those tests
skip where it is missing). Each entry is one ``--model`` argument: ``order`` is the names
libvmaf's JSON output lists, ``frames`` every value per frame, ``pooled`` every name's min,
max, mean and harmonic mean; every one must come out ``==`` through the plan, the command
line, the API and VmafExtractor. ``testdata/libvmaf_outputs/float_models/``: libvmaf's
tool's own JSON, XML and CSV files of float models, alone and beside an integer model,
for keys, their order and the numbers as the tool prints them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from importlib import resources

import numpy as np
import pytest
from _frames import luma_frames
from _golden_cases import read_output
from conftest import NETFLIX, TESTDATA

import admcuda
from admcuda.cli.main import main
from admcuda.model import (
    COMPUTED_EXTRACTORS,
    FLOAT_ADM,
    FLOAT_MOTION,
    FLOAT_VERSIONS,
    FLOAT_VIF,
    load_model,
)
from admcuda.vmaf import build_plan, pooled, score_clip
from admcuda.vmaf import float_adm as _float_adm
from admcuda.vmaf import float_motion as _float_motion
from admcuda.vmaf import float_vif as _float_vif

GOLDENS = TESTDATA / "float_model_goldens.json"
OUTPUTS = TESTDATA / "libvmaf_outputs" / "float_models"
DATA = str(resources.files("admcuda.model.data"))
METHODS = ("min", "max", "mean", "harmonic_mean")

ALL = json.loads(GOLDENS.read_text())
PROVENANCE = ALL["_provenance"]
ENTRIES = {k: v for k, v in ALL.items() if not k.startswith("_")}
_FRAMES: dict[tuple, tuple] = {}


def _pair(case: dict) -> tuple[list, list]:
    key = (case["ref"], case["dis"])
    if key not in _FRAMES:
        if not (NETFLIX / case["ref"]).exists():
            pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
        geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
        _FRAMES[key] = tuple(luma_frames(NETFLIX / p, *geometry) for p in key)
    return _FRAMES[key]


def _io(case: dict) -> list[str]:
    _pair(case)  # skips without the shared pairs
    return [
        "-r", str(NETFLIX / case["ref"]), "-d", str(NETFLIX / case["dis"]),
        "-w", str(case["w"]), "-h", str(case["h"]), "-p", case["fmt"],
        "-b", str(case["bitdepth"]),
    ]  # fmt: skip


def _model(entry: dict) -> str:
    return entry["model"].format(data=DATA)


def _check_frames(entry: dict, frames: list[dict]) -> None:
    order = entry["order"]
    assert len(frames) == len(entry["frames"])
    for i, (got, want) in enumerate(zip(frames, entry["frames"], strict=True)):
        assert list(got) == order, i
        diff = max(abs(got[n] - w) for n, w in zip(order, want, strict=True))
        assert [got[n] for n in order] == want, f"frame {i}: max abs diff {diff}"


def _check_pools(entry: dict, pools: dict) -> None:
    assert list(pools) == entry["order"]
    for name, want in zip(entry["order"], entry["pooled"], strict=True):
        got = [pools[name][m] for m in METHODS]
        diff = max(abs(a - b) for a, b in zip(got, want, strict=True))
        assert got == want, f"{name}: max abs diff {diff}"


# --- the tables and the goldens' provenance -------------------------------------------------


def test_goldens_carry_their_provenance():
    assert PROVENANCE["libvmaf_version"] == "3.2.0"
    assert PROVENANCE["libvmaf_commit"].startswith("Netflix/vmaf f85a8536")
    assert "-Denable_float=true" in PROVENANCE["libvmaf_build"]
    assert PROVENANCE["cpu"].startswith("AMD EPYC")
    text = (TESTDATA / "make_float_model_goldens.py").read_bytes()
    assert PROVENANCE["script_sha256"] == hashlib.sha256(text).hexdigest()
    base = (TESTDATA / "make_model_goldens.py").read_bytes()
    assert PROVENANCE["base_script_sha256"] == hashlib.sha256(base).hexdigest()
    # every float model, by version and by path, each of the three pairs
    models = {e["model"].split(":")[0] for e in ENTRIES.values()}
    assert {f"version={v}" for v in FLOAT_VERSIONS} <= models
    assert any(m.startswith("path=") for m in models)
    assert {e["case"]["bitdepth"] for e in ENTRIES.values()} == {8, 10}
    assert len({e["case"]["ref"] for e in ENTRIES.values()}) == 3


@pytest.mark.parametrize(
    ("table", "module", "options"),
    [
        (FLOAT_ADM, _float_adm, _float_adm.FloatAdmOptions),
        (FLOAT_VIF, _float_vif, _float_vif.FloatVifOptions),
        (FLOAT_MOTION, _float_motion, _float_motion.FloatMotionOptions),
    ],
)
def test_model_tables_agree_with_the_host_features(table, module, options):
    """The model layer's rows are the host features' tables: names, order, types, aliases,
    ranges and defaults (float_motion's debug defaults to true)."""
    assert table.name == getattr(module, f"{table.name.upper()}_KIND")
    assert [o.name for o in table.options] == list(module.TABLE)
    defaults = {f.name: f.default for f in dataclasses.fields(options)}
    for opt in table.options:
        typ, alias, lo, hi = module.TABLE[opt.name]
        assert (opt.type, opt.alias) == (typ, alias), opt.name
        if typ in ("double", "int"):
            assert (opt.min, opt.max) == (lo, hi), opt.name
        assert opt.default == defaults[opt.name], opt.name
        assert opt.feature_param == (alias is not None), opt.name


def test_float_extractors_come_first_as_in_libvmafs_registry():
    assert [e.name for e in COMPUTED_EXTRACTORS[:3]] == ["float_adm", "float_vif", "float_motion"]
    provided = [f for e in COMPUTED_EXTRACTORS for f in e.provided_features]
    assert len(provided) == len(set(provided))


@pytest.mark.parametrize("version", FLOAT_VERSIONS)
def test_float_models_load_by_version_and_path(version):
    by_version = load_model(version)
    by_path = load_model(path=f"{DATA}/{version}.json")
    assert by_version.features == by_path.features
    assert {f.extractor for f in by_version.features} == {"float_adm", "float_vif", "float_motion"}
    names = [f.output_name for f in by_version.features]
    if version.endswith("neg"):
        assert names == ["adm2_egl_1", "motion2"] + [f"vif_scale{s}_egl_1" for s in range(4)]
        assert by_version.features[0].collector_name == "adm2_egl_1"
    else:
        assert names == ["adm2", "motion2"] + [f"vif_scale{s}" for s in range(4)]
        assert by_version.features[0].collector_name == "VMAF_feature_adm2_score"
    assert (by_version.bootstrap is not None) == ("_b_" in version)


# --- the plan, the command line, the API, the extractor ---------------------------------------


@pytest.mark.parametrize("key", sorted(ENTRIES))
def test_float_models_match_libvmaf(key):
    entry = ENTRIES[key]
    plan = build_plan([_model(entry)])
    refs, diss = _pair(entry["case"])
    frames = score_clip(plan, zip(refs, diss, strict=True), entry["case"]["bitdepth"])
    _check_frames(entry, frames)
    _check_pools(entry, pooled(plan, frames))


@pytest.mark.parametrize(
    "key", ["float_v061_10bit", "float_neg_576x324", "float_b_v063_path_transform_noclip"]
)
def test_float_models_through_the_command_line(key, tmp_path):
    entry = ENTRIES[key]
    out = tmp_path / "out.json"
    args = ["score", "-q", *_io(entry["case"]), "--model", _model(entry), "--json", "-o", str(out)]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    _check_frames(entry, [f["metrics"] for f in doc["frames"]])
    _check_pools(entry, doc["pooled_metrics"])


def test_a_float_model_through_the_api():
    entry = ENTRIES["float_b_v063_10bit"]
    case = entry["case"]
    _pair(case)
    result = admcuda.score(
        str(NETFLIX / case["ref"]),
        str(NETFLIX / case["dis"]),
        width=case["w"],
        height=case["h"],
        pixel_format=case["fmt"],
        bitdepth=case["bitdepth"],
        model="vmaf_float_b_v0.6.3",
    )
    _check_frames(entry, result.frames)


def test_a_float_model_through_the_extractor():
    entry = ENTRIES["float_v061_path_egl"]
    refs, diss = _pair(entry["case"])
    ext = admcuda.VmafExtractor(entry["case"]["w"], entry["case"]["h"], 8, model=_model(entry))
    assert ext.output_names == tuple(entry["order"]) and ext.model_names == ("f",)
    half = len(refs) // 2
    ext.extract_batch(np.stack(refs[:half]), np.stack(diss[:half]))
    ext.extract_batch(np.stack(refs[half:]), np.stack(diss[half:]))
    _check_frames(entry, ext.flush())
    _check_pools(entry, ext.pooled())


def test_a_float_collection_over_a_ladder():
    """Two rungs, the distorted file and the reference itself: each rung is libvmaf's run
    of that pair."""
    entry, self_entry = ENTRIES["float_b_v063_576x324"], ENTRIES["float_b_v063_576x324_self"]
    case = entry["case"]
    _pair(case)
    ref, dis = str(NETFLIX / case["ref"]), str(NETFLIX / case["dis"])
    results = admcuda.score(ref, [dis, ref], width=case["w"], height=case["h"],
                            pixel_format=case["fmt"], bitdepth=case["bitdepth"],
                            model="vmaf_float_b_v0.6.3")  # fmt: skip
    _check_frames(entry, results[0].frames)
    _check_frames(self_entry, results[1].frames)


def test_integer_features_fed_to_a_float_model_miss_the_golden():
    """The golden decides: vmaf_v0.6.1's integer features under the float names give
    another score (the float model reads libvmaf's float extractors)."""
    entry = ENTRIES["float_v061_160x90"]
    refs, diss = _pair(entry["case"])
    plan = build_plan(["version=vmaf_v0.6.1"])
    frames = score_clip(plan, zip(refs, diss, strict=True), 8)
    model = load_model("vmaf_float_v0.6.1")
    columns = {
        f.output_name: np.array([fr[f"integer_{f.output_name}"] for fr in frames])
        for f in model.features
    }
    got = model.predict_many(columns).tolist()
    want = [row[entry["order"].index("vmaf")] for row in entry["frames"]]
    assert got != want
    assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 5.0


def test_a_float_motion_without_its_debug_default_misses_the_order():
    """float_motion's debug defaults to true in libvmaf: a model's float_motion prints
    ``motion`` beside ``motion2`` and ``motion3``."""
    plan = build_plan(["version=vmaf_float_v0.6.1"])
    assert plan.output_order() == ENTRIES["float_v061_576x324"]["order"]
    without = _float_motion.FloatMotionOptions(debug=False)
    assert "motion" not in build_plan(features=[("float_motion", without)]).output_order()


# --- libvmaf's own files ------------------------------------------------------------------------

PAIRS = {
    "3f": ["src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", "576", "324", "8"],
    "10b": ["src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv",
            "576", "324", "10"],
    "48f": ["ref_160x90_48f.yuv", "dis_160x90_48f.yuv", "160", "90", "8"],
}  # fmt: skip
OUTPUT_RUNS = {
    "float_v061": ("3f", ["--model", "version=vmaf_float_v0.6.1"]),
    "float_and_integer": ("3f", ["--model", "version=vmaf_float_v0.6.1",
                                 "--model", "version=vmaf_v0.6.1:name=vmaf_int"]),
    "float_b_v063_10bit": ("10b", ["--model", "version=vmaf_float_b_v0.6.3"]),
    "float_4k_and_neg_egl": ("48f", ["--model", "version=vmaf_float_4k_v0.6.1", "--model",
                                     "version=vmaf_float_v0.6.1neg:name=neg"
                                     ":float_adm.adm_enhn_gain_limit=1.2"]),
    "float_v061_features_after": ("3f", ["--model", "version=vmaf_float_v0.6.1",
                                         "--feature", "float_vif=debug=true",
                                         "--feature", "float_adm=debug=true",
                                         "--feature", "float_motion=motion_force_zero=true"]),
    "float_v061_subsample3": ("48f", ["--model", "version=vmaf_float_v0.6.1",
                                      "--subsample", "3"]),
}  # fmt: skip


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    """libvmaf's tool's files: keys, their order, frames listed and numbers as printed
    (``%.6f``); beside a float model a later ``--feature float_vif=debug=true`` or
    ``float_adm=debug=true`` adds nothing (libvmaf keeps the first of two extractors of
    one name and feature parameters), ``float_motion=motion_force_zero=true`` another."""
    pair, args = OUTPUT_RUNS[name]
    ref, dis, w, h, bd = PAIRS[pair]
    if not (NETFLIX / ref).exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    out = tmp_path / f"out.{fmt}"
    io = ["-r", str(NETFLIX / ref), "-d", str(NETFLIX / dis), "-w", w, "-h", h, "-p", "420"]
    assert main(["score", "-q", *io, "-b", bd, *args, f"--{fmt}", "-o", str(out)]) == 0
    ours, our_pool, our_agg = read_output(out, fmt)
    theirs, their_pool, their_agg = read_output(OUTPUTS / f"{name}.{fmt}", fmt)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (_, got), (_, want) in zip(ours, theirs, strict=True):
        assert list(got) == list(want)
        assert all(float(f"{got[k]:.6f}") == v for k, v in want.items()), (got, want)
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(float(f"{our_pool[k][m]:.6f}") == v for m, v in methods.items()), k
    assert our_agg == their_agg == {}

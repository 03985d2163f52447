"""libvmaf 3.2.0's ``vmaf_v1.0.16_*`` models: their inputs, names and prediction.

Goldens: ``testdata/v1016_goldens.json`` (``testdata/make_v1016_goldens.py``: libvmaf
3.2.0's scalar C through its C API, every frame's inputs under their collector names and
its score, doubles at full precision), on synthetic 4:2:0 pairs made by that script and on
the Netflix pairs of ``../shared/netflix`` (tests reading those skip where it is missing).
Every value is compared with ``==``.

admcuda computes every input (cambi, speed_chroma, adm3 and motion3 with the models'
options) and applies the models' chroma correction: the prediction from libvmaf's own
inputs and the whole run from the files are each compared with libvmaf's scores.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from _golden_cases import load_maker, netflix_pair, pair_folder, written_pair
from conftest import TESTDATA

from admcuda.model import CAMBI, V1016_VERSIONS, load_model, pool
from admcuda.vmaf import cambi as V

GOLDENS = json.loads((TESTDATA / "v1016_goldens.json").read_text())
CASES = GOLDENS["cases"]
MAKER = load_maker("v1016")


def _model(version: str):
    return load_model(version)


def _columns(case: dict) -> dict[str, np.ndarray]:
    names = [k for k in case["frames"][0] if k != "vmaf"]
    return {n: np.array([f[n] for f in case["frames"]], dtype=np.float64) for n in names}


def test_the_goldens_name_their_provenance():
    p = GOLDENS["_provenance"]
    assert p["libvmaf_version"] == "3.2.0" and "f85a8536" in p["libvmaf_commit"]
    assert "scalar C" in p["code_path"] and p["date"] == "2026-12-07"
    assert set(MAKER.MODELS) == set(V1016_VERSIONS)


@pytest.mark.parametrize("version", V1016_VERSIONS)
def test_the_models_ship_unchanged_and_name_their_inputs_as_libvmaf(version):
    model = _model(version)
    assert [f.extractor for f in model.features] == ["cambi", "speed_chroma", "adm", "motion"]
    # the goldens were read from libvmaf's collector under exactly these names
    case = next(c for c in CASES.values() if c["model"] == version)
    assert [f.collector_name for f in model.features] == [
        k for k in case["frames"][0] if k != "vmaf"
    ]
    assert model.features[0].collector_name == "cambi_hrs_1080_cmxv_17_vlt_0.06"
    assert model.chroma_correction is not None
    assert model.chroma_correction.parameter == 120.0
    assert (model.chroma_correction.guiding, model.chroma_correction.guided) == (2, 1)


@pytest.mark.parametrize("key", list(CASES))
def test_prediction_from_libvmafs_inputs_equals_libvmaf(key):
    case = CASES[key]
    model = _model(case["model"])
    want = [f["vmaf"] for f in case["frames"]]
    assert [model.predict(f) for f in case["frames"]] == want
    got = model.predict_many(_columns(case))
    assert got.tolist() == want
    for method, value in case["pooled"].items():
        assert pool(got.tolist(), method) == value, method


def test_the_chroma_correction_changes_the_scores_it_should():
    """Where speed_chroma is 0 the correction decides the score: without it the scores
    differ from libvmaf's (the check above would fail)."""
    case = CASES["flat8_256x216/vmaf_v1.0.16_3d0h"]
    assert all(f[k] == 0.0 for f in case["frames"] for k in f if k.startswith("speed_chroma"))
    model = _model(case["model"])
    plain = dataclasses.replace(model, chroma_correction=None)
    want = [f["vmaf"] for f in case["frames"]]
    assert all(a != b for a, b in zip(plain.predict_many(_columns(case)), want, strict=True))
    # a correction applied to a non-zero speed_chroma would change those scores too
    nonzero = CASES["src01_8/vmaf_v1.0.16_3d0h"]
    assert all(f[model.features[1].collector_name] > 0 for f in nonzero["frames"])


def test_the_cambi_table_is_the_cambi_feature_table():
    rows = {o.name: (o.type, o.alias, o.feature_param) for o in CAMBI.options}
    assert rows == {k: (v[0], v[1], v[4]) for k, v in V.TABLE.items()}
    for opt in CAMBI.options:
        typ, _, lo, hi, _ = V.TABLE[opt.name]
        if typ in ("int", "double"):
            assert (opt.min, opt.max) == (lo, hi)
            assert opt.default == getattr(V.CambiOptions, opt.name)


# --- admcuda computes the models' other inputs as libvmaf does ---------------------------------


def _pair(pair: str, folder: Path) -> tuple[str, str, int, int, int]:
    if pair in MAKER.PAIRS:
        w, h, bd, *_ = MAKER.PAIRS[pair]
        return (*written_pair(MAKER, pair, folder), w, h, bd)
    ref, dis, w, h, bd = MAKER.NETFLIX_PAIRS[pair]
    return (*netflix_pair(ref, dis), w, h, bd)


folder = pair_folder("v1016_pairs")


WHOLE_RUN = [
    "ramp8_320x240/vmaf_v1.0.16_3d0h",
    "ramp10_258x218/vmaf_v1.0.16_hfr_1d5h_2160",
    "flat8_256x216/vmaf_v1.0.16_hfr_3d0h",
    "flat10_300x230/vmaf_v1.0.16_1d5h_2160",
    "texture8_1280x720/vmaf_v1.0.16_5d0h",
    "texture8_1280x720/vmaf_v1.0.16_hfr_3d0h_2160",
    "texture10_960x544/vmaf_v1.0.16_3d0h_2160",
    "texture10_960x544/vmaf_v1.0.16_hfr_5d0h",
    *[k for k in CASES if k.startswith("src01_")],
]


@pytest.mark.parametrize("key", WHOLE_RUN)
def test_the_whole_model_scores_as_libvmaf(key, folder, tmp_path):
    """``admcuda score --model version=...`` from the files: every input the model reads,
    every frame's score and the pooled scores, ==."""
    pytest.importorskip("numba")
    from admcuda.cli.main import main

    case = CASES[key]
    model = _model(case["model"])
    ref, dis, w, h, bd = _pair(case["pair"], folder)
    out = tmp_path / "out.json"
    version = f"version={case['model']}"
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", "420",
            "-b", str(bd), "--model", version, "--json", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    doc = json.loads(out.read_text())
    assert len(doc["frames"]) == len(case["frames"])
    for i, (got, want) in enumerate(zip(doc["frames"], case["frames"], strict=True)):
        metrics = got["metrics"]
        for f in model.features:
            assert metrics[f.output_name] == want[f.collector_name], (i, f.output_name)
        assert metrics["vmaf"] == want["vmaf"], i
    assert doc["pooled_metrics"]["vmaf"] == case["pooled"]


def test_the_api_scores_a_model_object(folder):
    pytest.importorskip("numba")
    import admcuda

    case = CASES["texture10_960x544/vmaf_v1.0.16_hfr_5d0h"]
    ref, dis, w, h, bd = _pair(case["pair"], folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format="420", bitdepth=bd,
                           model=_model(case["model"]))  # fmt: skip
    assert [f["vmaf"] for f in result] == [f["vmaf"] for f in case["frames"]]

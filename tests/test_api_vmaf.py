"""``admcuda.score``/``score_files``/``score_ladder`` with VMAF models and features.

Truth: ``../shared/netflix/vmaf_goldens.json`` (libvmaf 3.2.0's scalar C path at full
precision) and ``testdata/libvmaf_outputs/`` (libvmaf 3.2.0's ``vmaf`` tool's own files).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import NETFLIX
from test_cli_vmaf import OUTPUTS, _check_layout

import admcuda
from admcuda.errors import AdmError
from admcuda.model import ModelSpec, load_model, output_name

REF, DIS = (NETFLIX / n for n in ("src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv"))
GEOMETRY = {"width": 576, "height": 324, "pixel_format": "420", "bitdepth": 8}

pytestmark = pytest.mark.skipif(not REF.exists(), reason=f"shared Netflix pairs not at {NETFLIX}")


@pytest.fixture(scope="module")
def goldens():
    return json.loads((NETFLIX / "vmaf_goldens.json").read_text())


@pytest.fixture(scope="module")
def two_models():
    return admcuda.score(
        REF, DIS, **GEOMETRY, model=["vmaf_v0.6.1", "version=vmaf_v0.6.1neg:name=vmaf_neg"]
    )


def test_score_with_models_is_libvmafs(two_models, goldens):
    result = two_models
    for key, label in (("vmaf_v0.6.1", "vmaf"), ("vmaf_v0.6.1neg", "vmaf_neg")):
        entry = goldens[f"src01_576x324_8bit__model__{key}"]
        assert result.pooled[label] == entry["pooled"]["vmaf"]
        assert result.array(label).tolist() == [f["vmaf"] for f in entry["frames"]]
        for want, got in zip(entry["frames"], result.frames, strict=True):
            for name, value in want.items():
                if name != "vmaf":
                    assert got[output_name(name)] == value, name
    assert isinstance(result.array("vmaf"), np.ndarray) and result.metadata["models"] == [
        "vmaf",
        "vmaf_neg",
    ]
    assert repr(result).endswith(f", mean vmaf {np.mean(result.array('vmaf')):.6f}>")


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
def test_result_files_are_libvmafs(two_models, fmt, tmp_path):
    out = tmp_path / f"out.{fmt}"
    getattr(two_models, f"to_{fmt}")(out)
    _check_layout(out, fmt, OUTPUTS / f"model_two.{fmt}")


def test_model_forms_agree(two_models):
    spec = ModelSpec(version="vmaf_v0.6.1")
    for model in (spec, load_model("vmaf_v0.6.1"), "version=vmaf_v0.6.1", ["vmaf_v0.6.1"]):
        frames = admcuda.score_files(REF, DIS, **GEOMETRY, model=model)
        assert [f["vmaf"] for f in frames] == two_models.values("vmaf")


def test_features_and_no_prediction():
    frames = admcuda.score_files(
        REF, DIS, **GEOMETRY, model="vmaf_v0.6.1", features=["vif=debug=true"], no_prediction=True
    )
    assert "vmaf" not in frames[0] and "integer_vif" not in frames[0]  # the model's vif wins
    alone = admcuda.score_files(REF, DIS, **GEOMETRY, features=["motion", "vif"])
    assert list(alone[0])[0] == "VMAF_integer_feature_motion_sad_score"
    assert alone[2]["integer_vif_scale3"] == frames[2]["integer_vif_scale3"]


def test_ladder_rungs_equal_single_runs(two_models):
    rungs = admcuda.score_ladder(REF, [DIS, REF], **GEOMETRY, model="vmaf_v0.6.1")
    assert [f["vmaf"] for f in rungs[0]] == two_models.values("vmaf")
    single = admcuda.score_files(REF, REF, **GEOMETRY, model="vmaf_v0.6.1")
    assert rungs[1] == single and rungs[1] != rungs[0]


def test_adm_features_without_a_model_stay_adm():
    frames = admcuda.score_files(REF, DIS, **GEOMETRY, features=["adm=adm_enhn_gain_limit=1.0"])
    assert list(frames[0])[0] == "integer_adm2_egl_1" and len(frames[0]) == 7


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "vmaf_v9"}, "model: unknown model version 'vmaf_v9'"),
        ({"model": "path=/nonexistent/m.json"}, "model: cannot read model /nonexistent/m.json"),
        ({"model": 3}, "model must be a model name"),
        ({"features": "vif"}, "features must be a list"),
        ({"features": ["vif=bogus=1"]}, "features: features item 'vif'"),
        ({"model": "vmaf_v0.6.1", "backend": "cuda"}, "is not available"),
        ({"model": "vmaf_v0.6.1", "no_prediction": "yes"}, "no_prediction must be True or False"),
    ],
)
def test_errors_name_the_argument(kwargs, message):
    with pytest.raises(AdmError) as info:
        admcuda.score(REF, DIS, **GEOMETRY, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)

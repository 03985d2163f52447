"""VMAF models (admcuda.model) against libvmaf 3.2.0's own predictions and pooling.

Truth: ../shared/netflix/vmaf_goldens.json, libvmaf 3.2.0 (Netflix/vmaf f85a8536) through
shared/tools/libvmaf_vmaf_oracle.py (provenance in its ``_provenance`` key): each model
entry holds every frame's input features under libvmaf's collector names, the frame's
score ``vmaf``, and the pooled scores.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from importlib import resources

import numpy as np
import pytest
from admcuda.reference import motion as motion_ref
from admcuda.reference import vif as vif_ref
from admcuda.reference import vif_constants
from conftest import NETFLIX

from admcuda.model import (
    ADM,
    BUILTIN_VERSIONS,
    COMPUTED_EXTRACTORS,
    MOTION,
    VIF,
    Extractor,
    ModelError,
    ScoreTransform,
    SvmModel,
    libm_exp,
    load_model,
    output_name,
    parse_model_arg,
    pool,
)
from admcuda.model.bootstrap import bootstrap_scores, percentile
from admcuda.model.features import collector_name
from admcuda.model.predict import transform
from admcuda.options import OPTIONS

GOLDENS = NETFLIX / "vmaf_goldens.json"
DATA = resources.files("admcuda.model.data")


def _goldens() -> dict:
    return json.loads(GOLDENS.read_text()) if GOLDENS.exists() else {}


MODEL_ENTRIES = sorted(k for k in _goldens() if "__model__" in k)


@pytest.fixture(scope="module")
def goldens() -> dict:
    if not GOLDENS.exists():
        pytest.skip(f"shared VMAF goldens not found at {GOLDENS}")
    return _goldens()


def _model_for(entry: dict, **kw):
    version, *flags = entry["args"]
    return load_model(version, enable_transform="transform" in flags, **kw)


def _scores(entry: dict) -> list[float]:
    return [frame["vmaf"] for frame in entry["frames"]]


def _max_diff(a, b) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


# --- against libvmaf ---------------------------------------------------------------------


@pytest.mark.parametrize("key", MODEL_ENTRIES)
def test_predict_matches_libvmaf(goldens, key):
    entry = goldens[key]
    model = _model_for(entry)
    got = [model.predict(frame) for frame in entry["frames"]]
    want = _scores(entry)
    assert got == want, f"max abs diff {_max_diff(got, want)}"


@pytest.mark.parametrize("key", MODEL_ENTRIES)
def test_predict_many_matches_libvmaf(goldens, key):
    entry = goldens[key]
    model = _model_for(entry)
    columns = {
        f.collector_name: np.array([frame[f.collector_name] for frame in entry["frames"]])
        for f in model.features
    }
    got = model.predict_many(columns).tolist()
    assert got == _scores(entry), f"max abs diff {_max_diff(got, _scores(entry))}"


@pytest.mark.parametrize("key", MODEL_ENTRIES)
def test_collector_names_are_libvmafs(goldens, key):
    entry = goldens[key]
    model = _model_for(entry)
    frame_keys = set(entry["frames"][0])
    missing = [f.collector_name for f in model.features if f.collector_name not in frame_keys]
    assert not missing


@pytest.mark.parametrize("key", MODEL_ENTRIES)
@pytest.mark.parametrize("method", ["min", "max", "mean", "harmonic_mean"])
def test_pool_matches_libvmaf(goldens, key, method):
    entry = goldens[key]
    assert pool(_scores(entry), method) == entry["pooled"]["vmaf"][method]
    assert pool(np.array(_scores(entry)), method) == entry["pooled"]["vmaf"][method]


def test_overrides_make_the_neg_model(goldens):
    # vmaf_v0.6.1neg is vmaf_v0.6.1 with enhancement gain limits of 1 on adm and vif: the
    # same SVM over features named and computed with those options.
    spec = parse_model_arg(
        "version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=1.0:vif.vif_enhn_gain_limit=1.0"
    )
    model = spec.load()
    neg = load_model("vmaf_v0.6.1neg")
    assert [f.collector_name for f in model.features] == [f.collector_name for f in neg.features]
    for key in MODEL_ENTRIES:
        if goldens[key]["args"] == ["vmaf_v0.6.1neg"]:
            entry = goldens[key]
            assert [model.predict(frame) for frame in entry["frames"]] == _scores(entry)


# --- plausible mistakes give other numbers -----------------------------------------------


def _dense_rbf_terms(model, frame, exp):
    """Per support vector ``coef * exp(-gamma * |x - sv|^2)``, written independently: a dense
    walk over indices 1..n with absent nodes as 0 rounds exactly as libsvm's merge."""
    x = [f.slope * frame[f.collector_name] + f.intercept for f in model.features]
    terms = []
    for coef, sv in zip(model.svm.sv_coef, model.svm.support_vectors, strict=True):
        nodes = dict(sv)
        dist = 0.0
        for i in range(1, max(len(x), max(nodes, default=0)) + 1):
            d = (x[i - 1] if i <= len(x) else 0.0) - nodes.get(i, 0.0)
            dist += d * d
        terms.append(coef * float(exp(-model.svm.gamma * dist)))
    return terms


def _finish(model, total):
    return model._finish(total - model.svm.rho)


def _sequential(terms):
    total = 0.0
    for t in terms:
        total += t
    return total


def test_independent_svm_sum_matches_and_numpy_sum_does_not(goldens):
    differ = 0
    for key in MODEL_ENTRIES:
        entry = goldens[key]
        model = _model_for(entry)
        for frame in entry["frames"]:
            terms = _dense_rbf_terms(model, frame, libm_exp)
            assert _finish(model, _sequential(terms)) == frame["vmaf"]
            differ += _finish(model, float(np.sum(terms))) != frame["vmaf"]
    assert differ > 0  # NumPy's pairwise sum rounds differently


def test_numpy_exp_differs_where_it_differs_from_libm(goldens):
    args, differ = 0, 0
    for key in MODEL_ENTRIES:
        entry = goldens[key]
        model = _model_for(entry)
        for frame in entry["frames"]:
            terms = _dense_rbf_terms(model, frame, np.exp)
            if terms != _dense_rbf_terms(model, frame, libm_exp):
                args += 1
                differ += _finish(model, _sequential(terms)) != frame["vmaf"]
    if args == 0:
        pytest.skip("NumPy's exp equals the C library's on these inputs on this machine")
    assert differ > 0


def test_libm_exp_is_used_where_numpy_differs():
    # One support vector at the origin, gamma 1, coefficient 1, rho 0: the score of input v
    # is exp(-(v * v)). Take a v whose kernel argument NumPy's exp rounds otherwise.
    args = [(v, -(v * v)) for v in np.linspace(0.0, 2.0, 40001).tolist()]
    mismatched = [(v, a) for v, a in args if float(np.exp(a)) != libm_exp(a)]
    if not mismatched:
        pytest.skip("NumPy's exp equals the C library's on this machine")
    svm = SvmModel("nu_svr", 1.0, 0.0, (1.0,), (((1, 0.0),),))
    for v, a in mismatched[:50]:
        assert svm.predict([v]) == libm_exp(a) != float(np.exp(a))
    vs = np.array([[v] for v, _ in mismatched])
    assert svm.predict_many(vs).tolist() == [libm_exp(a) for _, a in mismatched]


@pytest.mark.parametrize("key", MODEL_ENTRIES)
def test_transform_setting_matters(goldens, key):
    entry = goldens[key]
    version, *flags = entry["args"]
    flipped = load_model(version, enable_transform="transform" not in flags)
    if flipped.score_transform is None and "transform" not in flags:
        pytest.skip(f"{version} has no score transform")
    assert [flipped.predict(frame) for frame in entry["frames"]] != _scores(entry)


def test_clip_matters(goldens):
    # Frames libvmaf clips at 100: unclipped, the same frames score above it.
    clipped = 0
    for key in MODEL_ENTRIES:
        entry = goldens[key]
        model = _model_for(entry, disable_clip=True)
        for frame in entry["frames"]:
            score = model.predict(frame)
            if frame["vmaf"] == 100.0:
                clipped += 1
                assert score > 100.0
            else:
                assert score == frame["vmaf"]
    assert clipped > 0


def test_numpy_pooling_differs_somewhere(goldens):
    mean_differs = harmonic_differs = 0
    for key in MODEL_ENTRIES:
        scores, pooled = np.array(_scores(goldens[key])), goldens[key]["pooled"]["vmaf"]
        mean_differs += float(np.mean(scores)) != pooled["mean"]
        harmonic = len(scores) / float(np.sum(1.0 / (scores + 1.0))) - 1.0
        harmonic_differs += harmonic != pooled["harmonic_mean"]
    assert mean_differs > 0 and harmonic_differs > 0


# --- models and their features -------------------------------------------------------------

EXPECTED_FEATURES = {
    "vmaf_v0.6.1": [
        ("adm", {}, "VMAF_integer_feature_adm2_score", "integer_adm2"),
        ("motion", {}, "VMAF_integer_feature_motion2_score", "integer_motion2"),
        *[
            ("vif", {}, f"VMAF_integer_feature_vif_scale{s}_score", f"integer_vif_scale{s}")
            for s in range(4)
        ],
    ],
    "vmaf_v0.6.1neg": [
        ("adm", {"adm_enhn_gain_limit": 1.0}, "integer_adm2_egl_1", "integer_adm2_egl_1"),
        ("motion", {}, "VMAF_integer_feature_motion2_score", "integer_motion2"),
        *[
            (
                "vif",
                {"vif_enhn_gain_limit": 1.0},
                f"integer_vif_scale{s}_egl_1",
                f"integer_vif_scale{s}_egl_1",
            )
            for s in range(4)
        ],
    ],
}
EXPECTED_FEATURES["vmaf_4k_v0.6.1"] = EXPECTED_FEATURES["vmaf_v0.6.1"]
EXPECTED_FEATURES["vmaf_4k_v0.6.1neg"] = EXPECTED_FEATURES["vmaf_v0.6.1neg"]
EXPECTED_FEATURES["vmaf_b_v0.6.3"] = EXPECTED_FEATURES["vmaf_v0.6.1"]


@pytest.mark.parametrize("version", BUILTIN_VERSIONS)
def test_shipped_models_load(version):
    model = load_model(version)
    got = [(f.extractor, dict(f.options), f.collector_name, f.output_name) for f in model.features]
    assert got == EXPECTED_FEATURES[version]
    assert model.score_clip == (0.0, 100.0)
    assert model.score_transform is None  # each leaves it disabled unless asked
    assert model.output_names()["vmaf"] == "vmaf"
    for member in model.bootstrap.members if model.bootstrap else ():
        assert [f.collector_name for f in member.features] == [
            f.collector_name for f in model.features
        ]


def test_the_bootstrap_collection_loads_as_libvmaf_reads_it():
    model = load_model("vmaf_b_v0.6.3")
    assert model.model_type == "BOOTSTRAP_LIBSVMNUSVR"
    members = model.bootstrap.members
    assert len(members) == 20  # keys 1..20; key 0 is the model itself
    assert [m.name for m in members] == [f"vmaf_{i:04d}" for i in range(1, 21)]
    assert model.collection_outputs() == (
        *(m.name for m in members),
        "vmaf_bagging",
        "vmaf_stddev",
        "vmaf_ci_p95_lo",
        "vmaf_ci_p95_hi",
    )
    named = parse_model_arg("version=vmaf_b_v0.6.3:name=b:enable_transform").load()
    assert named.collection_outputs()[0] == "b_0001" and named.collection_outputs()[-1] == (
        "b_ci_p95_hi"
    )
    assert all(m.score_transform is not None for m in (named, *named.bootstrap.members))
    assert load_model("vmaf_v0.6.1").collection_outputs() == ()


def test_shipped_files_are_libvmafs():
    sha = {
        "vmaf_v0.6.1.json": "5950d61fa1f861bd45d8149d80539ed9f3376cfc2495b8f0fa8e9f57cb131ee3",
        "vmaf_v0.6.1neg.json": "1fcda193aaa2a3136471b7516b3c5dc344546c05fcde2d58609f8c60a2387392",
        "vmaf_4k_v0.6.1.json": "73b187001309703c89d57cf58baab01660bd11e4ea6fac62bc064c5f5da6dac8",
        "vmaf_4k_v0.6.1neg.json": (
            "f92048bf94401a5b915f551eb248709275c61df5f20d062a3ae010dcf4d4e8fc"
        ),
        "vmaf_b_v0.6.3.json": "34f620dbaff662fe7d33dd80326553c2cc3910e4135349ba4c367171d3a3cfbd",
    }
    import hashlib

    for name, digest in sha.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest


def test_output_names():
    assert output_name("VMAF_integer_feature_adm2_score") == "integer_adm2"
    assert output_name("VMAF_integer_feature_motion2_score") == "integer_motion2"
    assert output_name("VMAF_integer_feature_vif_scale3_score") == "integer_vif_scale3"
    assert output_name("integer_adm2_egl_1") == "integer_adm2_egl_1"
    assert output_name("integer_adm_scale0") == "integer_adm_scale0"
    assert output_name("vmaf") == "vmaf"


def test_path_load_of_a_copy(goldens, tmp_path):
    path = tmp_path / "copy.json"
    with resources.as_file(DATA / "vmaf_v0.6.1neg.json") as src:
        shutil.copy(src, path)
    by_path = parse_model_arg(f"path={path}:name=neg").load()
    assert by_path.name == "neg" and by_path.label == str(path)
    assert by_path.output_names()["neg"] == "neg"
    entry = goldens["src01_160x90_48f__model__vmaf_v0.6.1neg"]
    assert [by_path.predict(frame) for frame in entry["frames"]] == _scores(entry)
    assert load_model(path=path).features == load_model("vmaf_v0.6.1neg").features


def test_predict_accepts_output_names_and_reports_missing(goldens):
    entry = goldens["src01_576x324_8bit__model__vmaf_v0.6.1"]
    model = load_model("vmaf_v0.6.1")
    frame = entry["frames"][0]
    by_output = {f.output_name: frame[f.collector_name] for f in model.features}
    assert model.predict(by_output) == frame["vmaf"]
    by_output["integer_adm2"] = "n/a"
    with pytest.raises(ModelError, match="feature integer_adm2 is not a number"):
        model.predict(by_output)
    by_output["integer_adm2"] = frame["VMAF_integer_feature_adm2_score"]
    del by_output["integer_motion2"]
    with pytest.raises(ModelError, match="no value for feature VMAF_integer_feature_motion2"):
        model.predict(by_output)
    with pytest.raises(ModelError, match="1-D arrays of one length"):
        model.predict_many(
            {f.collector_name: [0.5] * (2 + (i == 3)) for i, f in enumerate(model.features)}
        )


@pytest.mark.parametrize(
    ("options", "suffix"),
    [
        ("adm.adm_enhn_gain_limit=1.2", "_egl_1.2"),
        ("adm.adm_enhn_gain_limit=1.23456789", "_egl_1.23457"),  # libvmaf keeps %g of strtof
        ("adm.adm_enhn_gain_limit=100", ""),  # the default names nothing
        ("adm.adm_norm_view_dist=4:adm.adm_enhn_gain_limit=1.5", "_egl_1.5_nvd_4"),
        # sorted by option name (adm_csf_scale before adm_enhn_gain_limit), not by alias
        ("adm.adm_enhn_gain_limit=1.5:adm.adm_csf_scale=2", "_scf_2_egl_1.5"),
        ("adm.adm_skip_scale0=true", "_ssz"),
        ("adm.adm_ref_display_height=2160", "_rdh_2160"),
        ("adm.debug=true", ""),  # not a feature parameter
    ],
)
def test_override_names(options, suffix):
    model = parse_model_arg(f"version=vmaf_v0.6.1:{options}").load()
    adm = model.features[0]
    assert adm.collector_name == ("integer_adm2" + suffix if suffix else adm.name)


def test_an_override_replaces_an_option_the_model_sets():
    # vmaf_v0.6.1neg sets adm_enhn_gain_limit 1 itself; the override takes its place
    model = parse_model_arg("version=vmaf_v0.6.1neg:adm.adm_enhn_gain_limit=1.2").load()
    adm, _, vif = model.features[:3]
    assert adm.options == {"adm_enhn_gain_limit": 1.2}
    assert adm.collector_name == "integer_adm2_egl_1.2"
    assert vif.collector_name == "integer_vif_scale0_egl_1"  # other extractors keep theirs
    direct = load_model("vmaf_v0.6.1neg", overrides={"adm": {"adm_enhn_gain_limit": 1.2}})
    assert direct.features == model.features


def test_an_option_given_twice_takes_the_later():
    # each FEATURE.OPTION=VALUE is merged into the model's options in turn, as libvmaf's
    # dictionary merge does: the later value wins
    for first, later in (("1.5", "1.2"), ("1.2", "1.5")):
        spec = parse_model_arg(
            f"version=vmaf_v0.6.1:adm.adm_enhn_gain_limit={first}:adm.adm_enhn_gain_limit={later}"
        )
        adm = spec.load().features[0]
        assert adm.options == {"adm_enhn_gain_limit": float(later)}
        assert adm.collector_name == f"integer_adm2_egl_{later}"


@pytest.mark.parametrize("text", ["0.3", "0.30000001", "3e-1", ".3"])
def test_option_values_are_libvmafs_text(text):
    # libvmaf keeps %g of strtof as the option's text and computes with that text's double:
    # 0.3, not the float32 nearest it (0.30000001192092896)
    model = load_model("vmaf_v0.6.1", overrides={"motion": {"motion_blend_factor": text}})
    motion = model.features[1]
    assert motion.options == {"motion_blend_factor": 0.3}
    assert motion.collector_name == "integer_motion2_mbf_0.3"


def test_motion_override_name():
    model = load_model("vmaf_v0.6.1", overrides={"motion": {"motion_force_zero": True}})
    assert model.features[1].collector_name == "integer_motion2_force_0"
    assert model.features[1].options == {"motion_force_zero": True}


# --- the --model argument ----------------------------------------------------------------


def test_parse_model_arg_good():
    spec = parse_model_arg("version=vmaf_v0.6.1")
    assert (spec.version, spec.path, spec.name) == ("vmaf_v0.6.1", None, "vmaf")
    assert not spec.enable_transform and not spec.disable_clip and spec.overrides == ()
    spec = parse_model_arg(
        "path=/m/x.json:name=phone:enable_transform:disable_clip=true:vif.vif_enhn_gain_limit=1"
    )
    assert (spec.version, spec.path, spec.name) == (None, "/m/x.json", "phone")
    assert spec.enable_transform and spec.disable_clip
    assert spec.overrides == (("vif", "vif_enhn_gain_limit", "1"),)
    spec = parse_model_arg("version=vmaf_v0.6.1:enable_transform=false:disable_clip")
    assert not spec.enable_transform and spec.disable_clip


def test_model_arg_flags_reach_the_model(goldens):
    entry = goldens["src01_160x90_48f__model__vmaf_v0.6.1_transform"]
    model = parse_model_arg("version=vmaf_v0.6.1:enable_transform").load()
    assert [model.predict(frame) for frame in entry["frames"]] == _scores(entry)
    assert parse_model_arg("version=vmaf_v0.6.1:disable_clip").load().score_clip is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "bad option string"),
        ("vmaf_v0.6.1", "bad option string 'vmaf_v0.6.1'"),
        ("name=x", "exactly one of version= and path="),
        ("version=vmaf_v0.6.1:path=x.json", "exactly one of version= and path="),
        ("version=vmaf_v0.6.1:version=vmaf_v0.6.1neg", "version given twice"),
        ("version=", "empty version"),
        ("version=vmaf_v0.6.1::name=x", "bad option string ''"),
        ("version=vmaf_v0.6.1:name=a=b", "more than one '='"),
        ("version=vmaf_v0.6.1:disable_clip=yes", "disable_clip takes true or false"),
        ("version=vmaf_v0.6.1:adm_enhn_gain_limit=1", "unknown key 'adm_enhn_gain_limit'"),
        ("version=vmaf_v0.6.1:adm.a.b=1", "unknown key 'adm.a.b'"),
        ("version=vmaf_v0.6.1:adm.egl=", "empty value"),
    ],
)
def test_parse_model_arg_bad(text, message):
    with pytest.raises(ModelError, match=message) as info:
        parse_model_arg(text)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version=vmaf_v9", "unknown model version 'vmaf_v9'"),
        ("version=vmaf_float_b_v0.6.2", "unknown model version"),
        ("version=vmaf_v0.6.1:adm.egl=1", "adm extractor has no option 'egl'"),
        ("version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=0.5", r"must be in \[1, 100\]"),
        ("version=vmaf_v0.6.1:adm.adm_enhn_gain_limit=abc", "expects a number"),
        ("version=vmaf_v0.6.1:adm.adm_skip_scale0=1", "expects true or false"),
        ("version=vmaf_v0.6.1:cambi.window_size=63", "override for 'cambi'"),
        ("path=/nonexistent/model.json", "model file '/nonexistent/model.json' not found"),
    ],
)
def test_load_refusals(text, message):
    with pytest.raises(ModelError, match=message) as info:
        parse_model_arg(text).load()
    assert "\n" not in str(info.value)


def test_model_file_read_with_a_bound(tmp_path):
    """A huge model path, or a device that never ends, fails in one line."""
    spaces = tmp_path / "spaces.json"
    spaces.write_bytes(b" " * (65 * (1 << 20)))
    with pytest.raises(ModelError, match="larger than 64 MiB"):
        parse_model_arg(f"path={spaces}").load()
    with pytest.raises(ModelError, match="model /dev/zero is not a model file") as info:
        parse_model_arg("path=/dev/zero").load()
    assert "\n" not in str(info.value)


# --- unsupported model files ---------------------------------------------------------------


def _variant(tmp_path, change) -> str:
    model = json.loads((DATA / "vmaf_v0.6.1.json").read_text())
    change(model["model_dict"])
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(model))
    return str(path)


def _add_ciede(md):
    md["feature_names"].append("ciede2000")
    md["slopes"].append(1.0)
    md["intercepts"].append(0.0)


def _float_ssim(md):
    md["feature_names"][0] = "float_ssim"


def _unknown_option(md):
    md["feature_opts_dicts"] = [{"adm_bogus": 1.0}]


def _chroma(md):
    # vmaf_v0.6.1 has no adm3 and no speed_chroma input for the correction to tie
    md["chroma_correction_parameter"] = 0.5


def _chroma_zero(md):
    md["feature_names"][0] = "VMAF_integer_feature_adm3_score"
    md["chroma_correction_parameter"] = 0.0


def _linear_kernel(md):
    md["model"] = md["model"].replace("kernel_type rbf", "kernel_type linear")


def _short_slopes(md):
    md["slopes"].pop()


def _bad_knots(md):
    md["score_transform"]["knots"] = [[0.0, 0.0], [50.0, 40.0], [40.0, 100.0]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_add_ciede, r"does not compute: ciede \('ciede2000'\) \(admcuda"),
        (_float_ssim, r"does not compute: float_ssim \('float_ssim'\)"),
        (_unknown_option, "adm extractor has no option 'adm_bogus'"),
        (_chroma, "chroma_correction_parameter needs exactly one feature whose name holds 'adm3'"),
        (_chroma_zero, r"chroma_correction_parameter 0 \(libvmaf then writes no score"),
        (_linear_kernel, "kernel_type linear is not supported"),
        (_short_slopes, "slopes has 6 numbers; 6 features need 7"),
        (_bad_knots, "knots need two or more points"),
    ],
)
def test_unsupported_models_are_refused(tmp_path, change, message):
    path = _variant(tmp_path, change)
    with pytest.raises(ModelError, match=message) as info:
        load_model(path=path)
    assert str(info.value).startswith(f"model {path}")
    assert "\n" not in str(info.value)


def _other_features(md):
    """Inputs of libvmaf's float_ssim and psnr, which admcuda computes as features of a
    run but no model of it reads."""
    md["feature_names"][0] = "float_ssim"
    md["feature_names"][1] = "psnr_y"
    md["feature_names"][2] = "psnr_cb"


def test_a_model_is_refused_naming_all_it_needs(tmp_path):
    """A model needing extractors admcuda lacks is refused naming each, in one line (the
    vmaf_v1.0.16 models' cambi, speed_chroma, adm3, motion3 and chroma correction are all
    computed: tests/test_model_v1016.py; the vmaf_float_* models' float_adm, float_vif and
    float_motion too: tests/test_model_float.py)."""
    path = _variant(tmp_path, _other_features)
    with pytest.raises(ModelError) as info:
        load_model(path=path)
    assert str(info.value) == (
        f"model {path} needs what admcuda does not compute: float_ssim ('float_ssim'); "
        "psnr ('psnr_y', 'psnr_cb') (admcuda's extractors: float_adm, float_vif, "
        "float_motion, speed_chroma, adm, motion, vif, cambi)"
    )


def test_a_single_bootstrap_model_predicts_as_a_model(tmp_path, goldens):
    # libvmaf reads a file with model_dict as one model and predicts it alike whatever
    # its model_type
    def bootstrap(md):
        md["model_type"] = "BOOTSTRAP_LIBSVMNUSVR"

    model = load_model(path=_variant(tmp_path, bootstrap))
    assert model.model_type == "BOOTSTRAP_LIBSVMNUSVR" and model.bootstrap is None
    entry = goldens["src01_160x90_48f__model__vmaf_v0.6.1"]
    assert [model.predict(frame) for frame in entry["frames"]] == _scores(entry)


def _collection(tmp_path, change=None) -> str:
    root = json.loads((DATA / "vmaf_b_v0.6.3.json").read_text())
    if change is not None:
        root = change(root) or root
    path = tmp_path / "collection.json"
    path.write_text(json.dumps(root))
    return str(path)


def _residue(root):
    for key in root:
        root[key]["model_dict"]["model_type"] = "RESIDUEBOOTSTRAP_LIBSVMNUSVR"


def test_a_residue_bootstrap_collection_scores_as_a_bootstrap_one(tmp_path):
    # libvmaf scores both bootstrap types alike
    plain = load_model(path=_collection(tmp_path))
    residue = load_model(path=_collection(tmp_path, _residue))
    assert residue.bootstrap.model_type == "RESIDUEBOOTSTRAP_LIBSVMNUSVR"
    frame = {
        "integer_adm2": 0.95, "integer_motion2": 3.5, "integer_vif_scale0": 0.5,
        "integer_vif_scale1": 0.8, "integer_vif_scale2": 0.9, "integer_vif_scale3": 0.95,
    }  # fmt: skip
    assert residue.predict_collection(frame) == plain.predict_collection(frame)
    assert residue.predict(frame) == plain.predict(frame)


def _only_model_0(root):
    return {"0": root["0"]}


def _out_of_order(root):
    return {"0": root["0"], "2": root["2"], "1": root["1"]}


def _plain_members(root):
    for key in root:
        if key != "0":
            root[key]["model_dict"]["model_type"] = "LIBSVMNUSVR"


def _mixed_members(root):
    root["3"]["model_dict"]["model_type"] = "RESIDUEBOOTSTRAP_LIBSVMNUSVR"


def _member_without_model_dict(root):
    root["2"] = {"param_dict": {}}


def _model_0_reads_more(root):
    md = root["0"]["model_dict"]
    md["feature_names"][0] = "VMAF_integer_feature_adm3_score"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_only_model_0, "needs the models 0 and 1 at least"),
        (_out_of_order, "model collection key '2' where libvmaf reads '1'"),
        (_plain_members, "must all be BOOTSTRAP_LIBSVMNUSVR or RESIDUEBOOTSTRAP_LIBSVMNUSVR"),
        (_mixed_members, "got BOOTSTRAP_LIBSVMNUSVR, RESIDUEBOOTSTRAP_LIBSVMNUSVR"),
        (_member_without_model_dict, "model 2: no model_dict object"),
        (_model_0_reads_more, "its model 0 reads VMAF_integer_feature_adm3_score, which none"),
    ],
)
def test_bad_model_collections_are_refused(tmp_path, change, message):
    path = _collection(tmp_path, change)
    with pytest.raises(ModelError, match=message) as info:
        load_model(path=path)
    assert str(info.value).startswith(f"model {path}")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("root", [{}, [], {"1": {}}, {"model": "x"}])
def test_files_neither_model_nor_collection_are_refused(tmp_path, root):
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(root))
    with pytest.raises(ModelError, match="not a VMAF model .no model_dict object. nor a model"):
        load_model(path=path)


def test_extractors_can_be_extended(tmp_path):
    path = _variant(tmp_path, _add_ciede)
    ciede = Extractor("ciede", ("ciede2000",), ())
    model = load_model(path=path, extractors=(*COMPUTED_EXTRACTORS, ciede))
    assert model.features[-1].extractor == "ciede"
    assert model.features[-1].output_name == "ciede2000"
    assert ("ciede", {}) in model.extractors()


# --- score transform and pooling details ---------------------------------------------------


def test_piecewise_linear_knots():
    # predict.c: inside a segment its line; a knot shared by two segments takes the later
    # one; below the first and above the last knot the end segments extend.
    t = ScoreTransform(knots=((0.0, 0.0), (50.0, 80.0), (100.0, 100.0)))
    assert transform(t, 25.0) == 40.0
    assert transform(t, 75.0) == 90.0
    assert transform(t, 50.0) == 80.0
    assert transform(t, 110.0) == 104.0
    assert transform(t, 100.0) == 100.0  # exactly at the last knot: its y
    assert transform(t, 0.0) == 0.0  # exactly at the first knot
    last_flat = ScoreTransform(knots=((0.0, 0.0), (50.0, 80.0), (100.0, 80.0)))
    assert transform(last_flat, 100.0) == 80.0
    assert transform(t, -10.0) == -16.0
    flat = ScoreTransform(knots=((0.0, 10.0), (50.0, 10.0)), out_lte_in=True)
    assert transform(flat, 60.0) == 10.0
    assert transform(flat, 5.0) == 5.0  # rectified: not above the input


def test_pool_edges():
    assert math.isnan(pool([float("nan"), 1.0], "min"))  # a NaN first is kept
    assert pool([1.0, float("nan")], "min") == 1.0  # a later NaN never compares smaller
    assert pool([-1.0, 3.0], "harmonic_mean") == -1.0  # 1/(s+1) is infinite, as in C
    with pytest.raises(ModelError, match="empty"):
        pool([], "mean")
    with pytest.raises(ModelError, match="unknown pooling method 'median'"):
        pool([1.0], "median")


# --- the extractor tables agree with the modules that compute the features ---------------


def test_adm_rows_are_the_adm_option_table():
    rows = [
        (o.name, o.alias, o.type, o.default, o.min, o.max, o.feature_param) for o in ADM.options
    ]
    specs = [(s.name, s.alias, s.type, s.default, s.min, s.max, s.feature_param) for s in OPTIONS]
    assert rows == specs
    # one row as libvmaf's integer_adm.c has it
    egl = ADM.option("adm_enhn_gain_limit")
    assert (egl.alias, egl.type, egl.default, egl.min, egl.max) == ("egl", "double", 100.0, 1, 100)
    assert not ADM.option("adm_skip_aim").feature_param


def test_motion_rows_agree_with_the_motion_reference():
    kinds = {bool: "bool", float: "double"}
    ours = [(o.name, o.alias, o.type, o.default, o.feature_param) for o in MOTION.options]
    theirs = [
        (o.name, o.alias, kinds[o.kind], o.default, o.feature_param)
        for o in motion_ref.OPTION_TABLE
    ]
    assert ours == theirs
    for opt, ref in zip(MOTION.options, motion_ref.OPTION_TABLE, strict=True):
        assert type(opt.default) is type(ref.default)
        if opt.type == "double":
            assert (opt.min, opt.max) == (ref.lo, ref.hi)
    fields = {f.name: f.default for f in dataclasses.fields(motion_ref.MotionOptions)}
    assert fields == {o.name: o.default for o in MOTION.options}
    # every option away from its default names the outputs alike
    for opt in MOTION.options:
        value = (not opt.default) if opt.type == "bool" else opt.min
        names = motion_ref.collector_names(motion_ref.MotionOptions(**{opt.name: value}))
        for feature in MOTION.provided_features:
            assert names[feature] == collector_name(feature, MOTION, {opt.name: value}), opt.name


def test_vif_rows_agree_with_the_vif_reference():
    fields = {f.name: f.default for f in dataclasses.fields(vif_ref.VifOptions)}
    assert fields == {o.name: o.default for o in VIF.options}
    egl = VIF.option("vif_enhn_gain_limit")
    assert (egl.min, egl.max) == (
        vif_constants.MIN_ENHN_GAIN_LIMIT,
        vif_constants.MAX_ENHN_GAIN_LIMIT,
    )
    for bad in (egl.min - 0.5, egl.max + 0.5):
        with pytest.raises(ValueError, match="out of range"):
            vif_ref.VifOptions(vif_enhn_gain_limit=bad)
    vif_ref.VifOptions(vif_enhn_gain_limit=egl.min)
    for opt in VIF.options:
        value = (not opt.default) if opt.type == "bool" else 1.5
        suffix = vif_ref.feature_suffix(vif_ref.VifOptions(**{opt.name: value}))
        name = collector_name("VMAF_integer_feature_vif_scale0_score", VIF, {opt.name: value})
        assert output_name(name) == "integer_vif_scale0" + suffix, opt.name


def test_the_exp_predictions_call_is_the_c_librarys():
    """Predictions call ``math.exp``, which must be the C library's ``exp`` that libsvm
    calls: the two agree on every kernel argument drawn here (a wrong exp would differ
    from it in the last bit somewhere in this range)."""
    import math

    rng = np.random.default_rng(7)
    args = np.concatenate([rng.uniform(-60.0, 0.0, 200_000), -rng.exponential(2.0, 100_000)])
    assert [math.exp(a) for a in args.tolist()] == [libm_exp(a) for a in args.tolist()]


def test_bootstrap_percentiles_and_slope():
    # predict.c: rank perc * (n - 1) / 100, linear between neighbours; an integer rank
    # takes that score alone
    ranked = np.arange(41, dtype=np.float64)[None, :] * 1.5
    assert percentile(ranked, 2.5).tolist() == [1.5]  # rank 1.0 exactly
    p = 97.5 * 19 / 100.0
    assert percentile(ranked[:, :20], 97.5).tolist() == [27.0 * (19 - p) + 28.5 * (p - 18)]
    # the deviation is scaled by the transform's slope at the mean: 2 where it doubles,
    # 0 where the clip holds the mean +- 0.01
    raw = np.array([[10.0, 12.0, 14.0]])
    bagging, stddev, lo, hi = bootstrap_scores(raw, lambda y: 2 * y)
    assert bagging.tolist() == [24.0]
    assert math.isclose(stddev[0], 2 * math.sqrt(8 / 3), rel_tol=1e-12)
    _, flat, _, _ = bootstrap_scores(raw, lambda y: min(y, 5.0))
    assert flat.tolist() == [0.0]

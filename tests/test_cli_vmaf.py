"""``admcuda score`` with libvmaf's ``--model`` and ``--feature vif/motion``.

Truth:

- ``../shared/netflix/vmaf_goldens.json`` and ``testdata/vmaf_goldens.json``: libvmaf 3.2.0's
  scalar C path at full precision (``_provenance`` in each file); the command line's JSON
  must hold every value, frames and pooled, ``==``.
- ``testdata/libvmaf_outputs/``: libvmaf 3.2.0's ``vmaf`` tool's own files for the same
  command lines (README.md there; ``frame_controls/`` for ``--frame_cnt``,
  ``--frame_skip_*`` and ``--subsample``): keys and their order per frame and in
  ``pooled_metrics``, the frames listed, the numbers as the tool prints them.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from conftest import NETFLIX, TESTDATA
from test_vmaf_core import COMMANDS, READERS, _printed

import admcuda.backends.cpu
from admcuda.cli.main import main
from admcuda.model import output_name

OUTPUTS = TESTDATA / "libvmaf_outputs"
CONTROLS = OUTPUTS / "frame_controls"
PAIR_3F = ["src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv"]
PAIR_48F = ["ref_160x90_48f.yuv", "dis_160x90_48f.yuv"]
GEOM_3F = ["-w", "576", "-h", "324", "-p", "420", "-b", "8"]
GEOM_48F = ["-w", "160", "-h", "90", "-p", "420", "-b", "8"]
SAD = "VMAF_integer_feature_motion_sad_score"

needs_netflix = pytest.mark.skipif(
    not (NETFLIX / PAIR_48F[0]).exists(), reason=f"shared Netflix pairs not found at {NETFLIX}"
)


def _golden_entries(path: Path, base: Path) -> list[tuple[str, dict, Path]]:
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [(k, v, base) for k, v in data.items() if not k.startswith("_")]


# every model variant; the features (debug outputs) of one pair
SHARED = [
    e
    for e in _golden_entries(NETFLIX / "vmaf_goldens.json", NETFLIX)
    if e[0].startswith("src01_576x324") or e[0].endswith("48f__model__vmaf_v0.6.1")
]
# a spread of bit depths, layouts, sizes and modes from the testdata goldens
SPREAD = {
    "coffee_112x64_420_10b_blocknoise__model__vmaf_v0.6.1",
    "coffee_112x64_420_10b_blocknoise__model__vmaf_4k_v0.6.1neg",
    "chelsea_96x56_422_12b_rescalenoise__features__motion-motion_fps_weight2.5",
    "moon_64x40_444_16b_sharpen__model__vmaf_v0.6.1",
    "binnoise_128x96_400_8b_noise__model__vmaf_v0.6.1",
    "astronaut_65x41_420_8b_boxnoise__features__motion-motion_five_frame_windowtrue",
    "chelsea_33x37_422_8b_band__features",
    "astronaut_160x90_420_8b_same__model__vmaf_v0.6.1_transform_noclip",
}
TESTDATA_GOLDENS = [
    e for e in _golden_entries(TESTDATA / "vmaf_goldens.json", TESTDATA) if e[0] in SPREAD
]


def _score(args: list[str], out: Path, fmt: str = "json") -> dict | str:
    assert main(["score", "-q", *args, f"--{fmt}", "-o", str(out)]) == 0
    return json.loads(out.read_text()) if fmt == "json" else out.read_text()


def _golden_args(entry: dict, base: Path) -> list[str]:
    """The command line of an oracle run: its model with its flags, or adm, vif and
    motion with debug=true and the entry's options."""
    case = entry["case"]
    geometry = ["-w", str(case["w"]), "-h", str(case["h"]), "-p", case["fmt"]]
    geometry += ["-b", str(case["bitdepth"])]
    io = ["-r", str(base / case["ref"]), "-d", str(base / case["dis"]), *geometry]
    if entry["mode"] == "model":
        flags = {"transform": ":enable_transform", "noclip": ":disable_clip"}
        model = f"version={entry['args'][0]}" + "".join(flags[a] for a in entry["args"][1:])
        return [*io, "--model", model]
    opts: dict[str, list[str]] = {"adm": ["debug=true"], "vif": ["debug=true"], "motion": []}
    opts["motion"].append("debug=true")
    for item in entry["args"]:
        feature, kv = item.split(":", 1)
        opts[feature].append(kv)
    return [*io, "-n", *(a for f, kv in opts.items() for a in ("--feature", f"{f}={':'.join(kv)}"))]


def _check_golden(doc: dict, entry: dict) -> None:
    frames = [f["metrics"] for f in doc["frames"]]
    assert [f["frameNum"] for f in doc["frames"]] == list(range(len(entry["frames"])))
    skip = set(entry.get("unstable_fields", ())) | set(entry.get("heap_fields", ()))
    for i, (want, got) in enumerate(zip(entry["frames"], frames, strict=True)):
        assert len(got) >= len(want) - len(skip)
        for name, value in want.items():
            if name in skip:
                continue
            if value is None:
                assert got[output_name(name)] is None  # NaN, written as null
            else:
                assert got[output_name(name)] == value, (i, name)
    for model, methods in entry.get("pooled", {}).items():
        assert doc["pooled_metrics"][model] == methods


@pytest.mark.skipif(not SHARED, reason="no shared VMAF goldens")
@pytest.mark.parametrize("key,entry,base", SHARED, ids=[k for k, _, _ in SHARED])
def test_shared_goldens_through_the_command_line(key, entry, base, tmp_path):
    _check_golden(_score(_golden_args(entry, base), tmp_path / "out.json"), entry)


@pytest.mark.skipif(len(TESTDATA_GOLDENS) != len(SPREAD), reason="testdata VMAF goldens missing")
@pytest.mark.parametrize(
    "key,entry,base", TESTDATA_GOLDENS, ids=[k for k, _, _ in TESTDATA_GOLDENS]
)
def test_testdata_goldens_through_the_command_line(key, entry, base, tmp_path):
    _check_golden(_score(_golden_args(entry, base), tmp_path / "out.json"), entry)


@pytest.mark.skipif(not TESTDATA_GOLDENS, reason="testdata VMAF goldens missing")
def test_a_golden_fails_for_a_wrong_model(tmp_path):
    """The check finds a model scored in place of another (a NEG model's golden, scored
    with vmaf_v0.6.1)."""
    neg = (e for e in TESTDATA_GOLDENS if e[1]["mode"] == "model" and "neg" in e[1]["args"][0])
    key, entry, base = next(neg)
    args = _golden_args(entry, base)
    args[args.index("--model") + 1] = "version=vmaf_v0.6.1"
    with pytest.raises((AssertionError, KeyError)):
        _check_golden(_score(args, tmp_path / "out.json"), entry)


# --- libvmaf's own files -----------------------------------------------------------------


def _libvmaf_args(name: str) -> list[str]:
    models, features, predict, subsample = COMMANDS[name]
    args = [a for m in models for a in ("--model", m)]
    args += [a for f in features for a in ("--feature", f)]
    args += [] if predict else ["-n"]
    return args + (["--subsample", str(subsample)] if subsample > 1 else [])


def _check_layout(path: Path, fmt: str, fixture: Path) -> None:
    ours, our_pool = READERS[fmt](path)
    theirs, their_pool = READERS[fmt](fixture)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (_, got), (_, want) in zip(ours, theirs, strict=True):
        assert list(got) == list(want)
        for k, v in want.items():
            assert float(_printed(got[k])) == v, k
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert list(our_pool[k]) == list(methods)
        for m, v in methods.items():
            assert float(_printed(our_pool[k][m])) == v, (k, m)


# command lines of each kind (the compute itself is tested on all in test_vmaf_core)
LAYOUTS = [
    ("model_two", "json"),
    ("model_no_prediction", "json"),
    ("features_debug", "json"),
    ("model_feature_vif_egl", "json"),
    ("model_v061_subsample2", "xml"),
    ("model_name_foo", "csv"),
    ("model_b_v063", "json"),
    ("model_b_v063", "xml"),
    ("model_b_v063", "csv"),
    # -r/-d without --model or -n: the tool adds vmaf_v0.6.1, and so does admcuda
    ("features_vif_motion_default_model", "json"),
    ("features_motion_force_zero_default_model", "xml"),
]


@needs_netflix
@pytest.mark.parametrize("name,fmt", LAYOUTS)
def test_libvmaf_output_files(name, fmt, tmp_path):
    io = ["-r", str(NETFLIX / PAIR_3F[0]), "-d", str(NETFLIX / PAIR_3F[1]), *GEOM_3F]
    out = tmp_path / f"out.{fmt}"
    _score([*io, *_libvmaf_args(name)], out, fmt)
    _check_layout(out, fmt, OUTPUTS / f"{name}.{fmt}")


CONTROL_RUNS = re.findall(
    r"^run (\w+) (.*)$", (CONTROLS / "make_outputs.sh").read_text() if CONTROLS.exists() else "",
    re.M,
)  # fmt: skip


@needs_netflix
@pytest.mark.parametrize("name,args", CONTROL_RUNS, ids=[n for n, _ in CONTROL_RUNS])
def test_frame_controls_as_libvmaf(name, args, tmp_path):
    io = ["-r", str(NETFLIX / PAIR_48F[0]), "-d", str(NETFLIX / PAIR_48F[1]), *GEOM_48F]
    out = tmp_path / "out.json"
    _score([*io, *args.split()], out)
    _check_layout(out, "json", CONTROLS / f"{name}.json")


@needs_netflix
def test_frame_controls_fail_without_their_flags(tmp_path):
    # the fixtures decide: the same run without --frame_skip_ref prints other numbers
    io = ["-r", str(NETFLIX / PAIR_48F[0]), "-d", str(NETFLIX / PAIR_48F[1]), *GEOM_48F]
    out = tmp_path / "out.json"
    _score([*io, "--model", "version=vmaf_v0.6.1", "--frame_cnt", "12"], out)
    with pytest.raises(AssertionError):
        _check_layout(out, "json", CONTROLS / "skip_ref_3_cnt_12.json")


# --- batches, threads, ladders -----------------------------------------------------------


@needs_netflix
def test_batches_and_threads_give_the_same_numbers(tmp_path, monkeypatch):
    """Motion reads the previous reference frame across batch boundaries, on one process
    or on worker processes: every batch size and thread count gives libvmaf's numbers."""
    entry = next(e for k, e, _ in SHARED if k == "src01_160x90_48f__model__vmaf_v0.6.1")
    io = ["-r", str(NETFLIX / PAIR_48F[0]), "-d", str(NETFLIX / PAIR_48F[1]), *GEOM_48F]
    model = ["--model", "version=vmaf_v0.6.1", "--frame_cnt", "16"]
    runs = (
        ["--threads", "1"],
        ["--threads", "1", "--batch", "1"],
        ["--threads", "2", "--batch", "5"],
        ["--subsample", "3", "--threads", "2", "--batch", "2"],  # batches with no scored frame
    )
    monkeypatch.setattr(admcuda.backends.cpu, "POOL_MIN_PIXELS", 0)  # --threads 2: the pool
    docs = [_score([*io, *model, *extra], tmp_path / f"o{k}.json") for k, extra in enumerate(runs)]
    for doc in docs[:3]:
        assert doc["frames"] == docs[0]["frames"]
        assert doc["pooled_metrics"] == docs[0]["pooled_metrics"]
    assert [f["frameNum"] for f in docs[3]["frames"]] == list(range(0, 16, 3))
    assert [f["metrics"] for f in docs[3]["frames"]] == [
        f["metrics"] for f in docs[0]["frames"][::3]
    ]  # frame 15 is the clip's last either way
    # frames 0..14 as in libvmaf's 48-frame clip (frame 15 ends this one: its motion2)
    for want, got in zip(entry["frames"][:15], docs[0]["frames"], strict=False):
        assert want and all(got["metrics"][output_name(k)] == v for k, v in want.items())


@needs_netflix
def test_ladder_rungs_equal_single_runs(tmp_path, monkeypatch):
    """The reference's motion is computed once per frame for every rung, on the pool and
    across batches; each rung gets its own VIF and ADM."""
    monkeypatch.setattr(admcuda.backends.cpu, "POOL_MIN_PIXELS", 0)
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    args = [*GEOM_48F, "--model", "version=vmaf_v0.6.1"]
    args += ["--frame_cnt", "7", "--threads", "2", "--batch", "3"]
    ladder = tmp_path / "{index}.json"
    assert main(["score", "-q", ref, dis, ref, *args, "--json", "-o", str(ladder)]) == 0
    rungs = []
    for k, path in enumerate((dis, ref), start=1):
        single = _score(["-r", ref, "-d", path, *args, "--threads", "1"], tmp_path / f"s{k}.json")
        rungs.append(json.loads((tmp_path / f"{k}.json").read_text()))
        assert rungs[-1]["frames"] == single["frames"]
        assert rungs[-1]["pooled_metrics"] == single["pooled_metrics"]
    first, second = ([f["metrics"] for f in r["frames"]] for r in rungs)
    for a, b in zip(first, second, strict=True):
        assert a[SAD] == b[SAD] and a["integer_vif_scale0"] < b["integer_vif_scale0"]
    assert first[5][SAD] != 0.0


@needs_netflix
def test_summary_without_output(capsys):
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    args = [*GEOM_48F, "--frame_cnt", "2", "--model", "version=vmaf_v0.6.1"]
    assert main(["score", "-q", ref, dis, *args]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "pooled mean:"
    assert [line.split()[0] for line in out[2:]][0] == "vmaf"  # the model's score first
    assert main(["score", "-q", ref, dis, dis, *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all(" vmaf mean " in line for line in lines[1:])


@needs_netflix
@pytest.mark.parametrize("args", [[], ["-n", "--feature", "adm"]], ids=["positional", "-n"])
def test_adm_alone_without_model(args, tmp_path):
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    doc = _score([ref, dis, *GEOM_48F, *args], tmp_path / "out.json")
    names = list(doc["frames"][0]["metrics"])
    assert len(names) == 7 and all(n.startswith("integer_a") for n in names)
    assert list(doc["pooled_metrics"]) == names


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--model", "version=vmaf_v9"], "vmaf_v9"),
        (["--model", "path=/nonexistent/model.json"], "/nonexistent/model.json"),
        (["--model", "version=vmaf_v0.6.1:bogus"], "bogus"),
        (["--feature", "motion=motion_fps_weight=9"], "motion_fps_weight"),
        (["--feature", "null"], "--feature null"),
        (["--model", "version=vmaf_v0.6.1", "--model", "version=vmaf_v0.6.1"], "named 'vmaf'"),
    ],
)
@needs_netflix
def test_errors_in_one_line(extra, needle, tmp_path, capsys):
    ref, dis = (str(NETFLIX / p) for p in PAIR_3F)
    out = tmp_path / "out.json"
    code = main(["score", "-q", "-r", ref, "-d", dis, *GEOM_3F, *extra, "--json", "-o", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and err.startswith("admcuda: error: ")
    assert needle in err and "Traceback" not in err
    assert not out.exists()


@needs_netflix
def test_a_model_needing_a_feature_admcuda_lacks_is_refused(tmp_path, capsys):
    import admcuda.model

    shipped = Path(admcuda.model.__file__).parent / "data" / "vmaf_v0.6.1.json"
    model = json.loads(shipped.read_text())
    model["model_dict"]["feature_names"][0] = "float_ssim"
    path = tmp_path / "float_ssim.json"
    path.write_text(json.dumps(model))
    ref, dis = (str(NETFLIX / p) for p in PAIR_3F)
    out = tmp_path / "out.json"
    code = main(["score", "-q", ref, dis, *GEOM_3F, "--model", f"path={path}", "-o", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1
    assert "does not compute: float_ssim ('float_ssim')" in err
    assert not out.exists()


@pytest.mark.parametrize("version", ["vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_hfr_5d0h"])
def test_a_newer_model_on_frames_too_small_for_it_is_refused(version, capsys):
    """libvmaf 3.2.0's vmaf_v1.0.16 models are scored (tests/test_model_v1016.py); on
    frames whose chroma planes leave no 5x5 block of speed_chroma after decimation by 16
    (the example pair), where libvmaf reads outside its buffers, they are refused before
    any frame is read, in one line."""
    code = main(["score", "--example", "--model", f"version={version}"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and err.startswith("admcuda: error: ")
    assert "speed_chroma: a " in err and "leaves no 5x5 block" in err
    assert "does not compute" not in err


@needs_netflix
def test_auto_hands_a_model_to_the_cuda_engine(tmp_path, monkeypatch):
    """Where ``auto`` would take CUDA, a run with a model asks the CUDA backend for an
    engine with its feature plan (and falls back to the CPU, with the same numbers,
    where that engine cannot start)."""
    from admcuda import backends

    real = backends.select_backend
    monkeypatch.setattr(
        backends, "select_backend", lambda name: ("cuda", None) if name == "auto" else real(name)
    )
    asked = []
    real_engine = backends.engine_for

    def engine_for(name, *args, **kwargs):
        asked.append((name, kwargs.get("plan") is not None))
        if name == "cuda":
            raise RuntimeError("no GPU in this test")
        return real_engine(name, *args, **kwargs)

    monkeypatch.setattr(backends, "engine_for", engine_for)
    ref, dis = (str(NETFLIX / p) for p in PAIR_48F)
    args = ["-q", ref, dis, *GEOM_48F, "--frame_cnt", "2", "--model", "version=vmaf_v0.6.1"]
    assert main(["score", *args, "--json", "-o", str(tmp_path / "o.json")]) == 0
    assert asked == [("cuda", True), ("cpu", True)]
    assert "the CUDA backend cannot start" in backends.fallback_reason


# --- bootstrap model collections -----------------------------------------------------------

MODEL_GOLDENS = TESTDATA / "model_goldens.json"


@needs_netflix
@pytest.mark.parametrize("key", ["b_v063_160x90", "b_v063_path_transform", "b_v063_noclip_egl"])
def test_model_collections_through_the_command_line(key, tmp_path):
    """Every value libvmaf files for a collection (members, bagging, stddev, interval) at
    full precision, in its order, frame by frame and pooled (testdata/model_goldens.json)."""
    entry = json.loads(MODEL_GOLDENS.read_text())[key]
    case = entry["case"]
    io = ["-r", str(NETFLIX / case["ref"]), "-d", str(NETFLIX / case["dis"]), *GEOM_48F]
    model = entry["model"].format(data=resources.files("admcuda.model.data"))
    doc = _score([*io, "--model", model], tmp_path / "out.json")
    assert len(doc["frames"]) == len(entry["frames"])
    for frame, want in zip(doc["frames"], entry["frames"], strict=True):
        assert list(frame["metrics"]) == entry["order"]
        assert list(frame["metrics"].values()) == want, frame["frameNum"]
    assert list(doc["pooled_metrics"]) == entry["order"]
    assert [list(m.values()) for m in doc["pooled_metrics"].values()] == entry["pooled"]


@needs_netflix
def test_a_collection_prints_its_interval_line(tmp_path, capsys):
    """libvmaf's tool prints each model's pooled score, then each collection's
    ``LABEL: bagging, ci.p95: [lo, hi], stddev: s`` (pooled means)."""
    io = ["-r", str(NETFLIX / PAIR_3F[0]), "-d", str(NETFLIX / PAIR_3F[1]), *GEOM_3F]
    models = ["--model", "version=vmaf_b_v0.6.3", "--model", "version=vmaf_v0.6.1:name=x"]
    assert main(["score", *io, *models, "--json", "-o", str(tmp_path / "o.json")]) == 0
    # libvmaf 3.2.0's vmaf tool on this command line (its x is unlabelled)
    assert capsys.readouterr().out == (
        "vmaf_b_v0.6.3: 81.434010\n"
        "vmaf_v0.6.1 (x): 82.564227\n"
        "vmaf_b_v0.6.3: 80.790020, ci.p95: [78.341050, 83.653128], stddev: 1.622961\n"
    )


@needs_netflix
@pytest.mark.parametrize(
    ("models", "message"),
    [
        (["vmaf_b_v0.6.3", "vmaf_v0.6.1:name=vmaf_bagging"], "files its score vmaf_bagging"),
        (["vmaf_v0.6.1:name=vmaf_0003", "vmaf_b_v0.6.3"], "files its score vmaf_0003"),
        (["vmaf_b_v0.6.3", "vmaf_b_v0.6.3:name=vmaf"], "two models are named 'vmaf'"),
    ],
)
def test_collection_names_that_clash_are_refused(models, message, tmp_path, capsys):
    io = ["-r", str(NETFLIX / PAIR_3F[0]), "-d", str(NETFLIX / PAIR_3F[1]), *GEOM_3F]
    args = [a for m in models for a in ("--model", m)]
    assert main(["score", "-q", *io, *args, "--json", "-o", str(tmp_path / "o.json")]) != 0
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err

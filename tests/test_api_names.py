"""The Python API as a notebook user meets it: argument names, base-name lookups,
ladders with a bad rung, and the GPU path falling back where it cannot start."""

from __future__ import annotations

import numpy as np
import pytest

import admcuda
from admcuda import backends
from admcuda.api import api_message
from admcuda.errors import AdmError
from admcuda.ladder import run_ladder
from admcuda.options import AdmOptions, ScoreDict

W, H = 24, 20


def clip(path, seed, n=3):
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 256, (n, H, W), dtype=np.uint8)
    chroma = np.zeros(2 * (W // 2) * (H // 2), np.uint8).tobytes()
    path.write_bytes(b"".join(p.tobytes() + chroma for p in planes))
    return path


def test_unknown_keyword_names_the_public_function(tmp_path):
    ref = clip(tmp_path / "r.yuv", 1)
    with pytest.raises(TypeError, match=r"score\(\) got an unexpected keyword argument 'w'"):
        admcuda.score(ref, ref, w=W, h=H)


def test_base_names_work_whatever_the_options(tmp_path):
    ref, dis = clip(tmp_path / "r.yuv", 1), clip(tmp_path / "d.yuv", 2)
    result = admcuda.score(ref, dis, width=W, height=H, options={"egl": "1.2"}, backend="cpu")
    assert result.names[0] == "integer_adm2_egl_1.2"  # files keep libvmaf's names
    assert result.pooled["integer_adm2"] == result.pooled["integer_adm2_egl_1.2"]
    assert result[0]["integer_adm2"] == result[0]["integer_adm2_egl_1.2"]
    assert "integer_adm2" in result[0] and result[0].get("integer_adm2") is not None
    assert "integer_adm2" not in list(result[0])
    with pytest.raises(KeyError):
        result[0]["integer_vif"]
    with admcuda.AdmExtractor(W, H, options={"egl": "1.2"}, backend="cpu") as ext:
        planes = np.random.default_rng(3).integers(0, 256, (2, H, W), dtype=np.uint8)
        scores = ext.extract(planes[0], planes[1])
    assert scores["integer_adm2"] == scores["integer_adm2_egl_1.2"]


def test_score_dict_pickles_with_its_names():
    import pickle

    d = ScoreDict({"integer_adm2_egl_1.2": 0.5}, {"integer_adm2": "integer_adm2_egl_1.2"})
    back = pickle.loads(pickle.dumps(d))
    assert back == d and back["integer_adm2"] == 0.5


def test_ladder_with_a_bad_rung_scores_the_others(tmp_path):
    ref, good = clip(tmp_path / "r.yuv", 1), clip(tmp_path / "g.yuv", 2)
    missing = tmp_path / "missing.yuv"
    run = run_ladder(ref, [good, missing], width=W, height=H, pixel_format=None,
                      bitdepth=None, opts=AdmOptions(), backend="cpu")  # fmt: skip
    assert len(run.frames[0]) == 3 and run.frames[1] == []
    assert run.errors[0] is None and "not found" in run.errors[1]
    alone = admcuda.score_files(ref, good, width=W, height=H, backend="cpu")
    assert run.frames[0] == alone
    with pytest.raises(AdmError, match="not found"):
        admcuda.score_ladder(ref, [good, missing], width=W, height=H, backend="cpu")


def test_python_ladder_gives_a_bad_rung_its_error_and_scores_the_others(tmp_path):
    """admcuda.score with several inputs does what the command line does: a rung that
    cannot be read gets its error on its result, the others are scored."""
    ref, good = clip(tmp_path / "r.yuv", 1), clip(tmp_path / "g.yuv", 2)
    missing = tmp_path / "missing.yuv"
    first, bad = admcuda.score(ref, [good, missing], width=W, height=H, backend="cpu")
    assert first.ok and first.error is None
    assert not bad.ok and "not found" in bad.error and len(bad) == 0
    assert bad.metadata["dis_path"] == str(missing)
    alone = admcuda.score_files(ref, good, width=W, height=H, backend="cpu")
    assert first.frames == alone
    with pytest.raises(AdmError, match="not found"):  # one input: raised
        admcuda.score(ref, missing, width=W, height=H, backend="cpu")


def test_per_frame_values_as_numpy_arrays(tmp_path):
    ref, dis = clip(tmp_path / "r.yuv", 1), clip(tmp_path / "d.yuv", 2)
    result = admcuda.score(ref, dis, width=W, height=H, backend="cpu")
    adm2 = result.array("integer_adm2")
    assert isinstance(adm2, np.ndarray) and adm2.dtype == np.float64
    assert adm2.tolist() == result.values("integer_adm2") == result["integer_adm2"]
    arrays = result.arrays()
    assert list(arrays) == result.names
    for name, values in arrays.items():
        assert values.tolist() == [frame[name] for frame in result.frames]


def test_auto_falls_back_to_the_cpu_when_cuda_cannot_start(tmp_path, monkeypatch):
    ref, dis = clip(tmp_path / "r.yuv", 1), clip(tmp_path / "d.yuv", 2)
    real = backends.engine_for

    def engine_for(name, *args, **kwargs):
        if name == "cuda":
            raise RuntimeError("nvrtc: error: failed to load builtins\nmore detail")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(backends, "select_backend", lambda name: ("cuda", None))
    monkeypatch.setattr(backends, "engine_for", engine_for)
    result = admcuda.score(ref, dis, width=W, height=H)
    assert result.backend == "cpu"
    assert backends.fallback_reason == (
        "the CUDA backend cannot start (RuntimeError: nvrtc: error: failed to load builtins)"
    )
    with pytest.raises(AdmError) as err:
        admcuda.score(ref, dis, width=W, height=H, backend="cuda")
    assert str(err.value) == (
        "the cuda backend cannot start: RuntimeError: nvrtc: error: failed to load builtins"
    )


def test_small_heights_warn_which_outputs_libvmaf_leaves_undefined(tmp_path, monkeypatch, capsys):
    from admcuda.cli.main import main

    monkeypatch.delenv("ADMCUDA_SMALL_HEIGHT_WARNING")
    ref = clip(tmp_path / "r.yuv", 1)  # 24x20: scale 3 reads libvmaf's uninitialised row
    assert main(["score", str(ref), str(ref), "-w", str(W), "-h", str(H), "-q"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("admcuda: warning: frame height 20 (17..32)")
    assert "integer_adm_num_scale3" in err[0]
    monkeypatch.setenv("ADMCUDA_SMALL_HEIGHT_WARNING", "0")
    assert main(["score", str(ref), str(ref), "-w", str(W), "-h", str(H), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_api_errors_speak_of_arguments(tmp_path):
    named = clip(tmp_path / f"a_{W}x{H}.yuv420p10le.yuv", 1)
    with pytest.raises(AdmError) as err:
        admcuda.score(named, named, width=W, height=H, backend="cpu")
    text = str(err.value)
    assert "give bitdepth=10, or ignore_name=True if the name is wrong" in text, text
    assert " -b " not in text and "--" not in text
    raw = clip(tmp_path / "noname.yuv", 2)
    with pytest.raises(AdmError, match=r"give width and height|width=.*height="):
        admcuda.score_files(raw, raw, backend="cpu")
    from admcuda.cli.main import main

    assert main(["score", str(named), str(named), "-w", str(W), "-h", str(H), "-q"]) == 1


def test_api_message_keeps_ffmpeg_commands():
    text = "pipe Y4M instead: ffmpeg -i IN -f yuv4mpegpipe - | admcuda score REF -"
    assert api_message(text) == text
    assert api_message("give -w 576 -h 324 -p 422 -b 10") == (
        "give width=576, height=324 pixel_format='422' bitdepth=10"
    )
    assert api_message("use --decoder ffmpeg or --scale bicubic") == (
        "use decoder='ffmpeg' or scale='bicubic'"
    )


def test_a_size_mismatch_names_the_scale_argument(tmp_path):
    """From Python, a rung of another size is told of ``scale='bicubic'``, the argument it
    takes, as the command line is told of ``--scale bicubic``."""
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.y4m"
    ref.write_bytes(np.zeros(32 * 24 * 3 // 2, np.uint8).tobytes())
    frame = np.zeros(24 * 18 * 3 // 2, np.uint8).tobytes()
    dis.write_bytes(b"YUV4MPEG2 W24 H18 F25:1 Ip C420jpeg\nFRAME\n" + frame)
    with pytest.raises(AdmError) as caught:
        admcuda.score(ref, dis, width=32, height=24, backend="cpu")
    assert "is 32x24; give scale='bicubic' (or another ffmpeg scaler) to scale" in str(caught.value)

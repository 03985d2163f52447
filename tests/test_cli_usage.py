"""What a user coming from libvmaf's ``vmaf`` or ffmpeg meets on the command line: the
pooled score beside a written file, model names without ``version=``, ``-h`` (libvmaf's
height) and mistyped options, and notices only where a choice they made was changed.

The scores are the shipped example pair's (176x144, 3 frames), computed here; their
exactness against libvmaf is checked in test_cli_score.py and test_cli_vmaf.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from importlib import resources

import pytest
from conftest import ROOT

from admcuda.cli import score as cli_score
from admcuda.cli.main import main
from admcuda.data import EXAMPLE

EXAMPLE_ARGS = ["score", "--example"]
DATA = ROOT / "admcuda" / "data"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ADMCUDA_TRACEBACK", None)
    return subprocess.run(
        [sys.executable, "-m", "admcuda", *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip


def _mean(doc: dict, name: str) -> str:
    return f"{doc['pooled_metrics'][name]['mean']:.6f}"


def _frames(doc: dict) -> tuple:
    return doc["frames"], doc["pooled_metrics"]


# --- model names -------------------------------------------------------------------------


def test_a_bare_model_name_is_a_version_and_a_bare_json_a_path(tmp_path, monkeypatch):
    """``--model vmaf_v0.6.1`` scores as ``version=vmaf_v0.6.1``, as ``admcuda.score``
    takes it; ``m.json`` as ``path=m.json``."""
    shipped = resources.files("admcuda.model.data") / "vmaf_4k_v0.6.1.json"
    shutil.copyfile(str(shipped), tmp_path / "m.json")
    monkeypatch.chdir(tmp_path)
    pairs = [
        ("vmaf_v0.6.1", "version=vmaf_v0.6.1"),
        ("vmaf_v0.6.1neg:name=neg:disable_clip", "version=vmaf_v0.6.1neg:name=neg:disable_clip"),
        ("m.json:name=mine", "path=m.json:name=mine"),
    ]
    for bare, full in pairs:
        docs = []
        for model in (bare, full):
            out = tmp_path / "out.json"
            assert main([*EXAMPLE_ARGS, "-q", "--model", model, "--json", "-o", str(out)]) == 0
            docs.append(_frames(json.loads(out.read_text())))
        assert docs[0] == docs[1], bare


def test_an_unknown_bare_model_name_is_refused_naming_the_shipped_ones(capsys):
    assert main([*EXAMPLE_ARGS, "--model", "vmaf_v9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown model version 'vmaf_v9'" in err
    assert "vmaf_v0.6.1, vmaf_v0.6.1neg" in err


# --- -h and mistyped options -------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["-h"], "admcuda"),
        (["score", "-h"], "admcuda score"),
        (["score", "--example", "-h"], "admcuda score"),
        (["score", "-h", "ref.yuv", "dis.yuv"], "admcuda score"),
        (["map", "-h"], "admcuda map"),
        (["plot", "-h"], "admcuda plot"),
        (["plot", "a.json", "-o", "a.png", "-h"], "admcuda plot"),
        (["batch", "-h"], "admcuda batch"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_h_for_help_points_to_help(argv, where, capsys):
    """``-h`` is libvmaf's height (score, map) or no option (the others): the one-line
    error says where help is."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("admcuda: error: ")
    assert f"for help use '{where} --help'" in err


def test_h_as_a_height_gets_no_help_pointer(capsys):
    assert main([*EXAMPLE_ARGS, "-h", "0"]) == 2
    assert "--help" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        ([*EXAMPLE_ARGS, "--modle", "vmaf_v0.6.1"], "--modle (did you mean --model?)"),
        ([*EXAMPLE_ARGS, "--thread", "2"], "--thread (did you mean --threads?)"),
        ([*EXAMPLE_ARGS, "--thr", "2"], "(did you mean --threads?)"),
        ([*EXAMPLE_ARGS, "--modle=x", "--thread", "2"], "--model for --modle, --threads for"),
        (["--verison"], "(did you mean --version?)"),
        (["plot", "a.json", "--outptu", "a.png"], "(did you mean --output for --outptu?)"),
        (["batch", "m.csv", "-o", "out", "--forc"], "(did you mean --force?)"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_a_mistyped_long_option_gets_the_closest(argv, hint, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hint in err


def test_an_option_far_from_any_gets_no_guess(capsys):
    assert main([*EXAMPLE_ARGS, "--zzzzzz"]) == 2
    assert capsys.readouterr().err == "admcuda: error: unrecognized arguments: --zzzzzz\n"


# --- the score beside a written file -----------------------------------------------------


def test_a_written_file_comes_with_each_models_pooled_score(tmp_path, capsys):
    """As libvmaf's ``vmaf`` prints ``vmaf_v0.6.1: 81.555395``: a line per model, under the
    version or path it was loaded from (and its ``name=`` where one is given)."""
    out = tmp_path / "vmaf.json"
    models = ["--model", "version=vmaf_v0.6.1", "--model", "version=vmaf_v0.6.1neg:name=neg"]
    assert main([*EXAMPLE_ARGS, *models, "--json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    captured = capsys.readouterr()
    assert captured.out == (
        f"vmaf_v0.6.1: {_mean(doc, 'vmaf')}\nvmaf_v0.6.1neg (neg): {_mean(doc, 'neg')}\n"
    )
    assert captured.err == ""
    assert main([*EXAMPLE_ARGS, *models, "-q", "--json", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""


def test_without_a_model_the_line_is_adm2s_mean(tmp_path, capsys):
    out = tmp_path / "adm.json"
    assert main([*EXAMPLE_ARGS, "--option", "egl=1.2", "--json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    want = f"integer_adm2_egl_1.2: {_mean(doc, 'integer_adm2_egl_1.2')}\n"
    assert capsys.readouterr().out == want


@pytest.mark.parametrize("dest", [["-o", "-"], ["-o", "/dev/stdout"], []], ids=str)
def test_standard_output_as_the_output_keeps_the_document_alone(dest):
    """Where the document goes to standard output, the score line goes to stderr."""
    proc = _cli(*EXAMPLE_ARGS, "--model", "vmaf_v0.6.1", "--json", *dest)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert proc.stderr == f"vmaf_v0.6.1: {_mean(doc, 'vmaf')}\n"


def test_a_ladder_gets_a_line_per_rung(tmp_path, capsys):
    ref, dis = str(DATA / EXAMPLE.ref), str(DATA / EXAMPLE.dis)
    geometry = ["-w", "176", "-h", "144"]
    out = str(tmp_path / "{index}.json")
    assert main(["score", ref, dis, ref, *geometry, "-m", "vmaf_v0.6.1", "-o", out]) == 0
    docs = [json.loads((tmp_path / f"{i}.json").read_text()) for i in (1, 2)]
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    want = zip([dis, ref], docs, strict=True)
    assert lines == [[path, "vmaf_v0.6.1:", _mean(doc, "vmaf")] for path, doc in want]


def test_the_summary_gives_the_models_score_first(capsys):
    assert main([*EXAMPLE_ARGS, "--model", "vmaf_v0.6.1", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "pooled mean:" and lines[2].split()[0] == "vmaf"
    pooled = lines[3 : lines.index("over frames:")]
    assert [line.split()[0] for line in pooled].count("vmaf") == 0
    assert lines[-1].split()[:2] == ["vmaf", "min"]  # how it spreads over the frames


# --- notices -----------------------------------------------------------------------------


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"backend": "auto", "gpu": None, "decoder": "auto", **given})


def test_notices_only_where_an_explicit_choice_was_changed():
    decoded = {"/clips/a.mkv": "ffmpeg"}
    assert cli_score._notices(_args(), "cpu", decoded) == []
    assert cli_score._notices(_args(decoder="ffmpeg"), "cpu", decoded) == []
    assert cli_score._notices(_args(decoder="nvdec"), "cuda", decoded) == [
        "--decoder nvdec was given, but video decoded: a.mkv by ffmpeg"
    ]
    assert cli_score._notices(_args(backend="cuda"), "cuda", {}) == []
    (note,) = cli_score._notices(_args(backend="cuda"), "cpu", {})
    assert note.startswith("--backend cuda was given, but ") and note.endswith("on the CPU")


def test_video_decoded_by_ffmpeg_is_no_news(tmp_path, capsys, monkeypatch):
    """The decoder ``auto`` (or ``ffmpeg``) picks for a video is not said, even to a
    terminal, nor the CPU that ``auto`` takes without a GPU."""
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    dis = tmp_path / "dis.mkv"
    subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "rawvideo",
         "-pix_fmt", "yuv420p", "-s", "176x144", "-i", str(DATA / EXAMPLE.dis), "-c:v", "ffv1",
         str(dis)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    ref = str(DATA / EXAMPLE.ref)
    for decoder in ("auto", "ffmpeg"):
        out = tmp_path / f"{decoder}.json"
        argv = ["score", ref, str(dis), "--decoder", decoder, "--json", "-o", str(out)]
        assert main(argv) == 0
        err = capsys.readouterr().err.replace("\r", "\n")
        assert [line for line in err.splitlines() if line.startswith("admcuda:")] == []

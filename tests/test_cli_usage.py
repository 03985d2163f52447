"""What a user coming from libvmaf's ``vmaf`` or ffmpeg meets on the command line: the
pooled score beside a written file, model names without ``version=``, ``-h`` (libvmaf's
height) and mistyped options, and notices only where a choice they made was changed.

The scores are the shipped example pair's (176x144, 3 frames), computed here; their
exactness against libvmaf is checked in test_cli_score.py and test_cli_vmaf.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources

from conftest import ROOT

from admcuda.cli.main import main

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

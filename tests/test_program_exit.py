"""The ``admcuda`` executable's exit: a score run that started CUDA ends at once, with its
outputs written, its standard streams flushed and its status kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CODE = """
import sys
import admcuda.cli.entry as entry
entry._cuda_started = lambda: True  # as where the run started CUDA
sys.argv = ["admcuda", *sys.argv[1:]]
entry.program()
print("not reached")
"""


def _program(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADMCUDA_SERVER": "off"}
    return subprocess.run([sys.executable, "-c", _CODE, *args], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip


def test_a_hard_exit_keeps_the_outputs_and_the_printed_scores(tmp_path) -> None:
    out = tmp_path / "scores.json"
    run = _program("score", "--example", "--backend", "cpu", "--json", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert "not reached" not in run.stdout
    assert "integer_adm2" in run.stdout  # the scores printed before the exit
    frames = json.loads(out.read_text())["frames"]
    assert len(frames) == 3


def test_a_hard_exit_keeps_a_piped_summary_whole() -> None:
    run = _program("score", "--example", "--backend", "cpu")
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip().splitlines()[-1].lstrip().startswith("integer_adm2")


@pytest.mark.parametrize(("args", "status"), [
    (("score", "missing.yuv", "missing.yuv"), 1),
    (("score", "--no-such-option"), 2),
])  # fmt: skip
def test_a_hard_exit_keeps_the_status_and_the_error_line(args, status) -> None:
    run = _program(*args)
    assert run.returncode == status
    assert run.stderr.startswith("admcuda: error: ")

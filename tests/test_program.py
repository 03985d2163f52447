"""The ``admcuda`` executable: a score run leaves its oldest garbage generation
uncollected (its heap is what its imports made); other commands keep Python's default."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_CODE = """
import gc, sys
import admcuda.cli.entry as entry
entry.main = lambda: print(gc.get_threshold()[2]) or 3
sys.argv = ["admcuda", *sys.argv[1:]]
entry.program()
"""


@pytest.mark.parametrize(("command", "oldest"), [("score", 1 << 30), ("bench", None)])
def test_a_score_run_leaves_the_oldest_generation_alone(command, oldest) -> None:
    import gc

    run = subprocess.run([sys.executable, "-c", _CODE, command], capture_output=True, text=True,
                         env={**os.environ, "ADMCUDA_SERVER": "off"}, timeout=120)  # fmt: skip
    assert run.returncode == 3  # main's status is the exit status
    assert int(run.stdout) == (gc.get_threshold()[2] if oldest is None else oldest)


def test_the_executable_scores_and_exits_with_the_status(tmp_path) -> None:
    out = tmp_path / "a.json"
    args = ["score", "--example", "--backend", "cpu", "--json", "-o", str(out)]
    env = {**os.environ, "ADMCUDA_SERVER": "off"}
    run = subprocess.run([sys.executable, "-m", "admcuda", *args], capture_output=True,
                         text=True, env=env, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "integer_adm2" in run.stdout and out.is_file()
    bad = subprocess.run([sys.executable, "-m", "admcuda", "score", "missing.yuv", "m.yuv"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 1 and bad.stderr.startswith("admcuda: error: ")

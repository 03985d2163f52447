"""The house style, checked where the tests run: ruff lint and format (STYLE.md)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT

RUFF = shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
@pytest.mark.parametrize(
    "args", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"]
)
def test_ruff(args):
    run = subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr

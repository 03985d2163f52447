"""A clone without the Netflix parity data (``../shared/netflix``, see conftest.py): the
tests that read it skip, each saying why, and the others still pass.

The VMAF modules pick their goldens from both that data and ``testdata/``, so a test there
that takes a Netflix entry without asking whether it was found fails only on a clone that
lacks it; they run here in a child pytest with the data pointed at a missing folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT

MODULES = [
    "tests/test_cli_vmaf.py",
    "tests/test_vmaf_extractor.py",
    "tests/test_api_vmaf.py",
    "tests/test_compiled_engine.py",
]


def test_the_vmaf_tests_pass_or_skip_without_the_netflix_data(tmp_path):
    env = {**os.environ, "ADMCUDA_NETFLIX": str(tmp_path / "absent")}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *MODULES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips, tail  # the Netflix goldens' tests are there, and skip
    assert all(line.split(": ", 1)[-1].strip() for line in skips), tail
    assert any(str(tmp_path / "absent") in line for line in skips), tail


def test_readme_points_at_no_file_outside_the_repository():
    """README.md names the parity data's folder, which it describes; nothing else outside
    the clone, and each of its links to a file of the repository finds one."""
    text = (ROOT / "README.md").read_text()
    outside = set(re.findall(r"(?<!\.)\.\./[\w./-]*", text)) - {"../shared/netflix"}
    assert not outside, sorted(outside)
    for target in re.findall(r"\]\(([^)#]+)[^)]*\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target

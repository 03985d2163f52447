"""The one-call API and the CLI's tool subcommands."""

from __future__ import annotations

import subprocess
import sys

import pytest

import admcuda
from admcuda.data import example_paths


@pytest.fixture(scope="module")
def pair():
    with example_paths() as paths:
        yield paths


def test_score_returns_results_equal_to_score_files(tmp_path, pair):
    ref, dis = pair
    geometry = dict(width=176, height=144)
    one = admcuda.score(ref, dis, backend="cpu", **geometry)
    assert isinstance(one, admcuda.AdmResult)
    assert one.frames == admcuda.score_files(ref, dis, backend="cpu", **geometry)
    ladder = admcuda.score(ref, [dis, ref], backend="cpu", options={"egl": "1.2"}, **geometry)
    assert [len(r) for r in ladder] == [3, 3]
    assert ladder[1].frames[0]["integer_aim_egl_1.2"] == 0.0
    out = tmp_path / "r.json"
    one.to_json(out)
    back = admcuda.AdmResult.from_json(out)
    assert back.frames == one.frames


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "admcuda", *args], capture_output=True, text=True)


def test_plot_and_map_subcommands_write_pngs(tmp_path, pair):
    ref, dis = pair
    res = tmp_path / "res.json"
    run = _cli(
        "score", str(ref), str(dis), "-w", "176", "-h", "144", "--json", "-o", str(res), "-q"
    )
    assert run.returncode == 0, run.stderr
    png = tmp_path / "adm.png"
    run = _cli("plot", str(res), "-o", str(png))
    assert run.returncode == 0, run.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    heat = tmp_path / "map.png"
    run = _cli("map", str(ref), str(dis), "-w", "176", "-h", "144", "--frame", "1", "-o", str(heat))
    assert run.returncode == 0, run.stderr
    assert heat.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tool_subcommand_errors_are_one_line(tmp_path):
    run = _cli("plot", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.png"))
    assert run.returncode != 0
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert not (tmp_path / "x.png").exists()

"""Median, standard deviation and percentiles over frames beside libvmaf's pooling: in
``frame_stats``, ``AdmResult.stats``, ``score``'s summary and batch's summary, never in
libvmaf's ``pooled_metrics``."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import admcuda
from admcuda.batch.records import SUMMARY_COLUMNS, PairResult, summary_text
from admcuda.data import example_paths
from admcuda.report.stats import frame_stats
from admcuda.report.writers import pool

VALUES = [0.9, 0.5, 0.7, 0.8, 0.6, 1.0, 0.75]


def test_frame_stats_beside_libvmafs_pooling():
    s = frame_stats(VALUES)
    assert list(s) == ["min", "max", "mean", "harmonic_mean", "median", "stdev", "p5", "p95"]
    assert {k: s[k] for k in ("min", "max", "mean", "harmonic_mean")} == pool(VALUES)
    a = np.array(VALUES)
    assert s["median"] == 0.75 and s["stdev"] == float(np.std(a))  # population deviation
    assert s["p5"] == float(np.percentile(a, 5)) and s["p95"] == float(np.percentile(a, 95))
    assert 0.5 < s["p5"] < 0.6 and 0.9 < s["p95"] < 1.0
    assert frame_stats([3.0], (1, 50, 99.9)) == {
        "min": 3.0, "max": 3.0, "mean": 3.0, "harmonic_mean": 3.0, "median": 3.0,
        "stdev": 0.0, "p1": 3.0, "p50": 3.0, "p99.9": 3.0,
    }  # fmt: skip
    with_nan = frame_stats([1.0, math.nan, 2.0])
    assert math.isnan(with_nan["median"]) and math.isnan(with_nan["p95"])
    with pytest.raises(ValueError, match="percentiles must be from 0 to 100"):
        frame_stats(VALUES, (101,))


def test_result_stats_by_name_and_base_name(tmp_path):
    frames = [{"integer_adm2_egl_1.2": v, "integer_aim_egl_1.2": 0.0} for v in VALUES]
    r = admcuda.AdmResult(frames)
    assert r.stats("integer_adm2") == r.stats()["integer_adm2"] == frame_stats(VALUES)
    assert r.stats()["integer_adm2_egl_1.2"]["p95"] == frame_stats(VALUES)["p95"]
    assert r.stats("integer_adm2", percentiles=(50,))["p50"] == 0.75
    with pytest.raises(admcuda.AdmError, match="percentiles must be from 0 to 100"):
        r.stats(percentiles=(-1,))
    # libvmaf's layout is unchanged: pooled_metrics holds its four methods only.
    r.to_json(tmp_path / "r.json")
    pooled = json.loads((tmp_path / "r.json").read_text())["pooled_metrics"]
    assert set(pooled["integer_adm2_egl_1.2"]) == {"min", "max", "mean", "harmonic_mean"}


def _score(*args):
    cmd = [sys.executable, "-m", "admcuda", "score", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def test_summary_prints_the_spread_of_the_headline_score():
    with example_paths() as (ref, dis):
        text = _score("--example", "--model", "vmaf_v0.6.1", "--backend", "cpu")
        r = admcuda.score(ref, dis, width=176, height=144, model="vmaf_v0.6.1", backend="cpu")
        ladder = _score(str(ref), str(dis), str(ref), "-w", "176", "-h", "144", "--backend", "cpu")
        one = _score(str(ref), str(dis), "-w", "176", "-h", "144", "--frame-cnt", "1")
    lines = text.splitlines()
    assert lines[1] == "pooled mean:" and lines[-2] == "over frames:"
    s = r.stats("vmaf")
    assert lines[-1].split() == ["vmaf"] + [
        x for k in ("min", "p5", "median", "p95", "max", "stdev") for x in (k, f"{s[k]:.6f}")
    ]
    rung = ladder.splitlines()[1].split()
    assert rung[1:3] == ["3", "frames"] and rung[3] == "integer_adm2"
    assert rung[4::2] == ["mean", "harmonic_mean", "min", "p5", "median", "p95", "max", "stdev"]
    assert ": 1 frame, 176x144" in one.splitlines()[0]
    assert one.splitlines()[-1].split()[:2] == ["integer_adm2", "min"]


def test_batch_summary_has_the_spread_columns():
    frames = [{"integer_adm2": v, "vmaf": 100 * v} for v in VALUES]
    done = PairResult("a", "r.yuv", "d.yuv", "done", frames=frames, model_outputs=("vmaf",))
    failed = PairResult("b", "r.yuv", "x.yuv", "failed", error="bad")
    assert done.model == pool([f["vmaf"] for f in frames])  # libvmaf's four, as before
    rows = list(csv.DictReader(io.StringIO(summary_text([done, failed]))))
    assert tuple(rows[0]) == SUMMARY_COLUMNS
    s, m = frame_stats(VALUES), frame_stats([100 * v for v in VALUES])
    for k in ("p5", "median", "p95", "max", "stdev"):
        assert float(rows[0][f"adm2_{k}"]) == s[k] and float(rows[0][f"model_{k}"]) == m[k]
        assert rows[1][f"adm2_{k}"] == rows[1][f"model_{k}"] == ""
    assert float(rows[0]["adm2_mean"]) == s["mean"]

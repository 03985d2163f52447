"""``admcuda batch``'s ``feature`` column: libvmaf's ``--feature`` strings read as
``admcuda score --feature`` reads them, each pair's JSON as ``admcuda score --json -o``
writes it (``aggregate_metrics`` too), features in the ladder key and the job record.

On Netflix's 160x90 pair (48 frames; skipped where ``../shared/netflix`` is absent)."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from conftest import NETFLIX  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from admcuda.batch import manifest  # noqa: E402
from admcuda.batch import run as batch  # noqa: E402
from admcuda.cli import main as cli  # noqa: E402
from admcuda.options import AdmOptions  # noqa: E402

W, H = 160, 90
REF, DIS = NETFLIX / "ref_160x90_48f.yuv", NETFLIX / "dis_160x90_48f.yuv"
WAIT_S = 120.0  # bound on one batch: numba compiles float_ssim on the worker first
COMMON = ["-w", str(W), "-h", str(H), "--json", "-q", "--backend", "cpu"]

needs_pair = pytest.mark.skipif(
    not (REF.exists() and DIS.exists()), reason=f"Netflix 160x90 pair not found at {NETFLIX}"
)


def load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    doc.pop("fps")  # a measured rate, not a score
    return doc


def score_json(tmp_path: Path, name: str, dis: Path, *flags: str) -> dict:
    out = tmp_path / "expected" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    assert cli.main(["score", str(REF), str(dis), *flags, "-o", str(out), *COMMON]) == 0
    return load(out)


def write_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["ref", "dis", "name", "width", "height", "feature",
                                         "options", "model"])  # fmt: skip
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_summary(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster, Client(cluster, timeout="30s") as c:  # fmt: skip
        c.wait_for_workers(1, timeout=WAIT_S)
        yield c


def _row(name: str, dis: Path, feature: str = "", **more: object) -> dict[str, object]:
    return {"ref": str(REF), "dis": str(dis), "name": name, "width": W, "height": H,
            "feature": feature, **more}  # fmt: skip


@needs_pair
def test_feature_rows_write_what_score_writes(client, tmp_path):
    """psnr with apsnr and float_ssim on a two-rung ladder, psnr alone beside it, and a
    bad feature string: each pair's JSON equals ``admcuda score``'s on the same flags
    (every per-frame value ``==``, aggregate_metrics too), the bad row fails alone in one
    line, and the summary has every row."""
    pytest.importorskip("numba")
    wanted = "psnr=enable_apsnr=true;float_ssim"
    rows = [
        _row("full", DIS, wanted),
        _row("same", REF, wanted),
        _row("psnr", DIS, "psnr"),
        _row("bad", DIS, "psnr=no_such_option=1"),
    ]
    out = tmp_path / "out"
    results = batch.score_many(write_csv(tmp_path / "jobs.csv", rows), client, output=out,
                               backend="cpu", timeout=WAIT_S)  # fmt: skip
    assert [r.status for r in results] == ["done", "done", "done", "failed"]
    error = results[3].error
    assert "\n" not in error and "psnr=no_such_option=1" in error and "no_such_option" in error

    flags = ["--feature", "psnr=enable_apsnr=true", "--feature", "float_ssim"]
    for name, dis in (("full", DIS), ("same", REF)):
        expected = score_json(tmp_path, name, dis, *flags)
        got = load(out / f"{name}.json")
        assert got == expected, name
        assert set(got["aggregate_metrics"]) == {"apsnr_y", "apsnr_cb", "apsnr_cr"}
        assert "float_ssim" in got["frames"][0]["metrics"]
    expected = score_json(tmp_path, "psnr", DIS, "--feature", "psnr")
    assert load(out / "psnr.json") == expected
    assert expected["aggregate_metrics"] == {}

    summary = read_summary(out / "summary.csv")
    assert list(summary) == ["full", "same", "psnr", "bad"]
    assert [summary[n]["status"] for n in summary] == ["done", "done", "done", "failed"]
    assert summary["full"]["frames"] == "48" and summary["bad"]["error"] == error
    assert not (out / "bad.json").exists()


@needs_pair
def test_feature_is_part_of_the_ladder_key_and_the_record(client, tmp_path):
    """Rows that differ only in their features are two ladders; a rerun keeps a pair
    whose features are unchanged and scores again one whose features changed."""
    rows = [_row("a", DIS, "psnr"), _row("b", REF, "psnr"), _row("c", DIS, "motion")]
    jobs = manifest.read_jobs(rows)
    assert jobs[0].ladder_key == jobs[1].ladder_key != jobs[2].ladder_key
    plan = batch._plan(jobs, None, force=False, rungs_per_task=None)
    assert sorted(len(t.rungs) for t in plan.tasks) == [1, 2]

    out = tmp_path / "out"

    def run(feature: str) -> str:
        (result,) = batch.score_many([_row("a", DIS, feature)], client, output=out,
                                     backend="cpu", timeout=WAIT_S)  # fmt: skip
        return result.status

    assert run("psnr") == "done"
    assert run("psnr") == "skipped"
    assert run("psnr=enable_apsnr=true") == "done"
    assert load(out / "a.json")["aggregate_metrics"]
    assert json.loads((out / "a.job").read_text())["feature"] == ["psnr=enable_apsnr=true"]


@needs_pair
def test_adm_feature_and_options_as_score_takes_them(client, tmp_path):
    """``adm=K=V`` alone sets ADM's options (as ``score --feature adm=...``); beside a
    model's features with an ``options`` cell it joins that cell (as ``--option``)."""
    rows = [
        _row("adm", DIS, "adm=adm_enhn_gain_limit=1.2"),
        _row("mixed", DIS, "adm=adm_norm_view_dist=4;motion", options="egl=1.2"),
    ]
    out = tmp_path / "out"
    results = batch.score_many(rows, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in results] == ["done", "done"], [r.error for r in results]
    assert results[0].options == AdmOptions(adm_enhn_gain_limit=1.2)
    assert load(out / "adm.json") == score_json(
        tmp_path, "adm", DIS, "--feature", "adm=adm_enhn_gain_limit=1.2"
    )
    assert load(out / "mixed.json") == score_json(
        tmp_path, "mixed", DIS, "--feature", "adm=adm_norm_view_dist=4", "--feature", "motion",
        "--option", "egl=1.2",
    )  # fmt: skip


def test_feature_cells_parse_as_score_flags(tmp_path):
    """A JSON list or ``;``-separated text; a bad one is the row's one-line error, and
    the other rows stay."""
    rows = [
        {"ref": "r.yuv", "dis": "d.yuv", "feature": ["psnr", "vif=vif_enhn_gain_limit=1.0"]},
        {"ref": "r.yuv", "dis": "e.yuv", "feature": " psnr ; vif=vif_enhn_gain_limit=1.0 "},
        {"ref": "r.yuv", "dis": "f.yuv", "feature": "nosuch"},
        {"ref": "r.yuv", "dis": "g.yuv", "feature": 3},
        {"ref": "r.yuv", "dis": "h.yuv", "feature": "adm_cuda"},
        {"ref": "r.yuv", "dis": "i.yuv", "feature": "adm=egl=1.2"},
        {"ref": "r.yuv", "dis": "j.yuv", "feature": "adm=adm_enhn_gain_limit=1.2",
         "options": "adm_enhn_gain_limit=1.1"},
    ]  # fmt: skip
    jobs = manifest.read_jobs(rows, base_dir=tmp_path)
    assert jobs[0].error is None and jobs[1].error is None
    assert jobs[0].feature == jobs[1].feature == ("psnr", "vif=vif_enhn_gain_limit=1.0")
    assert jobs[0].ladder_key == jobs[1].ladder_key
    assert jobs[0].plan.output_order() == jobs[1].plan.output_order()
    for job in jobs[2:]:
        assert job.error is not None and "\n" not in job.error, job
        assert job.error.startswith("feature "), job.error
    assert "nosuch" in jobs[2].error
    assert "list of strings" in jobs[3].error
    assert "adm_cuda" in jobs[4].error
    assert "adm_enhn_gain_limit" in jobs[5].error  # libvmaf reads full names only
    assert "given twice" in jobs[6].error

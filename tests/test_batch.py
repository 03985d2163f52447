"""``admcuda batch`` / ``admcuda.score_many`` on a real Dask ``LocalCluster`` (CPU).

Every wait is bounded: results come through ``score_many(timeout=...)``, threads are
joined with a timeout, and the worker-kill test gates tasks on a file (a preload that
every worker runs, restarted ones too, wraps the task's record) so that the kill lands
while a task is running, by construction rather than by timing.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from _media import default_sigint

pytest.importorskip("distributed")

import cloudpickle  # noqa: E402 - a dependency of distributed
import psutil  # noqa: E402 - a dependency of distributed
from distributed import Client, LocalCluster  # noqa: E402

from admcuda.batch import cluster, manifest, records  # noqa: E402
from admcuda.batch import run as batch  # noqa: E402
from admcuda.cli import main as cli
from admcuda.errors import AdmError  # noqa: E402
from admcuda.options import AdmOptions  # noqa: E402

W, H, FRAMES = 32, 24, 3
WAIT_S = 60.0  # bound on any one wait; the whole file runs in about 15 s on 2 cores


# -- clips and manifests


def write_clip(path: Path, luma: np.ndarray) -> Path:
    """Raw 4:2:0 8-bit frames: the given luma, flat chroma."""
    path.parent.mkdir(parents=True, exist_ok=True)
    chroma = bytes([128]) * (2 * (W // 2) * (H // 2))
    path.write_bytes(b"".join(np.clip(y, 0, 255).astype(np.uint8).tobytes() + chroma for y in luma))
    return path


def base_luma(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 1, W)[None, :]
    y = np.linspace(0, 1, H)[:, None]
    smooth = 128 + 80 * np.sin(5 * x + 3 * y)
    return np.stack([smooth + rng.normal(0, 12, (H, W)) for _ in range(FRAMES)])


def distort(luma: np.ndarray, seed: int, amount: float) -> np.ndarray:
    return luma + np.random.default_rng(seed).normal(0, amount, luma.shape)


def make_clips(root: Path) -> dict[str, Path]:
    """Two references; a three-rung ladder on the first, one pair on the second, and a
    distorted file whose stem repeats one of the ladder's."""
    a, b = base_luma(1), base_luma(2)
    return {
        "ref_a": write_clip(root / "ref_a.yuv", a),
        "a1": write_clip(root / "a1.yuv", distort(a, 11, 4)),
        "a2": write_clip(root / "a2.yuv", distort(a, 12, 10)),
        "a3": write_clip(root / "a3.yuv", distort(a, 13, 25)),
        "ref_b": write_clip(root / "ref_b.yuv", b),
        "b1": write_clip(root / "sub" / "a1.yuv", distort(b, 21, 8)),
    }


def write_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    columns = ["ref", "dis", "name", "width", "height", "pixel_format", "bitdepth", "options",
               "ignore_name"]  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def rows_for(clips: dict[str, Path], root: Path) -> list[dict[str, object]]:
    """Relative paths (resolved against the manifest's folder) and one options row."""

    def rel(key: str) -> str:
        return str(clips[key].relative_to(root))

    return [
        {"ref": rel("ref_a"), "dis": rel("a1"), "width": W, "height": H},
        {"ref": rel("ref_a"), "dis": rel("a2"), "width": W, "height": H},
        {"ref": rel("ref_a"), "dis": rel("a3"), "width": W, "height": H},
        {"ref": rel("ref_b"), "dis": rel("b1"), "width": W, "height": H, "options": "egl=1.2"},
    ]


def load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    doc.pop("fps")  # a measured rate, not a score
    return doc


def read_summary(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


# -- a cluster shared by the tests that need no special workers


@pytest.fixture(scope="module")
def client():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster, Client(cluster, timeout="30s") as c:  # fmt: skip
        c.wait_for_workers(2, timeout=WAIT_S)
        yield c


# -- the tests


def test_cli_results_equal_admcuda_score(tmp_path, capsys, monkeypatch):
    """The local-cluster CLI path: each pair's JSON is what `admcuda score --json -o`
    writes (fps aside), names are made unique, the summary has every row; a rerun
    keeps every file and starts no cluster."""
    clips = make_clips(tmp_path)
    manifest = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path))
    out = tmp_path / "results"
    argv = ["batch", str(manifest), "-o", str(out), "--workers", "2", "--backend", "cpu", "-q"]
    assert cli.main(argv) == 0, capsys.readouterr().err

    expected = tmp_path / "expected"
    expected.mkdir()
    common = ["-w", str(W), "-h", str(H), "--json", "-q", "--backend", "cpu"]
    ladder = [str(clips[k]) for k in ("ref_a", "a1", "a2", "a3")]
    assert cli.main(["score", *ladder, "-o", str(expected), *common]) == 0
    single = [str(clips["ref_b"]), str(clips["b1"]), "--option", "egl=1.2"]
    assert cli.main(["score", *single, "-o", str(expected / "a1_2.json"), *common]) == 0
    for name in ("a1", "a2", "a3", "a1_2"):
        assert load(out / f"{name}.json") == load(expected / f"{name}.json"), name
    assert "integer_adm2_egl_1.2" in load(out / "a1_2.json")["frames"][0]["metrics"]

    summary = read_summary(out / "summary.csv")
    assert list(summary) == ["a1", "a2", "a3", "a1_2"]
    for name, row in summary.items():
        assert row["status"] == "done" and row["error"] == ""
        assert row["frames"] == str(FRAMES)
        pooled = json.loads((out / f"{name}.json").read_text())["pooled_metrics"]
        adm2 = next(v for k, v in pooled.items() if k.startswith("integer_adm2"))
        assert float(row["adm2_mean"]) == adm2["mean"]
        assert float(row["adm2_harmonic_mean"]) == adm2["harmonic_mean"]
        assert float(row["adm2_min"]) == adm2["min"]
    assert summary["a1_2"]["dis"] == str(clips["b1"])
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files

    before = {p.name: p.stat() for p in out.glob("*.json")}

    def no_cluster(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a rerun with every pair done started a cluster")

    monkeypatch.setattr(cluster, "local_cluster", no_cluster)
    assert cli.main(argv) == 0
    for name, stat in before.items():
        now = (out / name).stat()
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert {r["status"] for r in read_summary(out / "summary.csv").values()} == {"skipped"}


def _count_reference_opens() -> None:
    """On a worker: count raw-file opens per path (``admcuda.io.inputs.YuvReader``)."""
    import admcuda.io.inputs as inputs

    original = inputs.YuvReader
    opens: dict[str, int] = {}

    class Counting(original):  # type: ignore[misc, valid-type]
        def __init__(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
            opens[os.path.normpath(str(path))] = opens.get(os.path.normpath(str(path)), 0) + 1
            super().__init__(path, *args, **kwargs)

    inputs.YuvReader = Counting
    inputs._batch_test = (original, opens)


def _collect_reference_opens() -> dict[str, int]:
    import admcuda.io.inputs as inputs

    original, opens = inputs.__dict__.pop("_batch_test")
    inputs.YuvReader = original
    return dict(opens)


def test_ladder_reads_reference_once(client, tmp_path):
    clips = make_clips(tmp_path)
    jobs = [dict(row) for row in rows_for(clips, tmp_path)]
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        client.run(_count_reference_opens)
        results = batch.score_many(jobs, client, base_dir=tmp_path, backend="cpu", timeout=WAIT_S)
        per_worker = client.run(_collect_reference_opens)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    opens: dict[str, int] = {}
    for counts in per_worker.values():
        for path, n in counts.items():
            opens[path] = opens.get(path, 0) + n
    assert opens[str(clips["ref_a"])] == 1  # one pass for the three rungs
    assert opens[str(clips["ref_b"])] == 1
    assert all(opens[str(clips[k])] == 1 for k in ("a1", "a2", "a3", "b1"))

    assert [r.status for r in results] == ["done"] * 4
    ladder = [r for r in results if r.ref == str(clips["ref_a"])]
    assert len({r.task.task for r in ladder}) == 1  # one task, one record per pair
    assert all(r.task.ref_passes == 1 and r.task.pairs == 3 for r in ladder)
    assert [len(r.frames) for r in results] == [FRAMES] * 4
    assert results[3].to_result().pooled["integer_adm2"]["mean"] == results[3].adm2["mean"]


def test_rerun_skips_done_pairs_and_force_redoes_them(client, tmp_path):
    clips = make_clips(tmp_path)
    manifest = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path))
    out = tmp_path / "out"
    first = batch.score_many(manifest, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in first] == ["done"] * 4
    (out / "a2.json").unlink()
    (out / "a3.json").write_text('{"version": "0.1.0", "frames": [')  # a torn file
    kept = {n: (out / n).stat() for n in ("a1.json", "a1_2.json")}

    second = batch.score_many(manifest, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in second] == ["skipped", "done", "done", "skipped"]
    assert second[0].task is None and second[1].task is not None
    assert second[0].frames == first[0].frames  # read back from the kept file
    for name, stat in kept.items():
        now = (out / name).stat()
        assert (now.st_ino, now.st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns)
    assert load(out / "a3.json")["frames"]  # rewritten whole
    assert [r["status"] for r in read_summary(out / "summary.csv").values()] == [
        "skipped", "done", "done", "skipped",
    ]  # fmt: skip

    forced = batch.score_many(manifest, client, output=out, backend="cpu", force=True,
                              timeout=WAIT_S)  # fmt: skip
    assert [r.status for r in forced] == ["done"] * 4
    assert (out / "a1.json").stat().st_ino != kept["a1.json"].st_ino  # replaced


def test_rerun_keeps_a_result_only_for_the_same_inputs_geometry_and_options(client, tmp_path):
    """A kept result must be the score of the row as it is now: its record (<name>.job)
    names the inputs, their sizes and times, the geometry and every option. A changed
    row, an input rewritten, rows moved so that a name now means another pair, and a
    result without its record are scored again."""
    clips = make_clips(tmp_path)
    rows = rows_for(clips, tmp_path)
    out = tmp_path / "out"

    def run(rows):
        manifest = write_csv(tmp_path / "jobs.csv", rows)
        return batch.score_many(manifest, client, output=out, backend="cpu", timeout=WAIT_S)

    first = run(rows)
    assert [r.status for r in first] == ["done"] * 4
    assert json.loads((out / "a1.job").read_text())["dis"] == str(clips["a1"])
    b_frames = load(out / "a1_2.json")["frames"]  # sub/a1.yuv's
    assert [r.status for r in run(rows)] == ["skipped"] * 4

    changed = [dict(r) for r in rows]
    changed[0]["options"] = "adm_skip_aim=true"  # the same output names, other sums
    os.utime(clips["a2"], ns=(1, 1))  # rewritten, as far as a rerun can tell
    (out / "a3.job").unlink()  # a result from a run stopped before its record
    again = run(changed)
    assert [r.status for r in again] == ["done", "done", "done", "skipped"]
    assert again[0].frames[0]["integer_aim"] == 0.0 != first[0].frames[0]["integer_aim"]

    # without its first row, "a1" is now the name of sub/a1.yuv (ref_b's pair)
    moved = run([rows[1], rows[2], rows[3]])
    assert [r.status for r in moved] == ["skipped", "skipped", "done"]
    assert moved[2].name == "a1" and moved[2].frames == first[3].frames
    assert load(out / "a1.json")["frames"] == b_frames


def test_a_result_that_would_replace_an_input_fails_its_row(client, tmp_path):
    clips = make_clips(tmp_path)
    dis = clips["a1"].rename(tmp_path / "clip.json")  # a raw distorted file so named
    before = dis.read_bytes()
    row = {"ref": "ref_a.yuv", "dis": "clip.json", "width": W, "height": H}
    manifest = write_csv(tmp_path / "jobs.csv", [row])
    (result,) = batch.score_many(manifest, client, output=tmp_path, backend="cpu",
                                 timeout=WAIT_S)  # fmt: skip
    assert result.status == "failed" and "would replace one of its inputs" in result.error
    assert dis.read_bytes() == before


def test_a_control_character_in_a_row_fails_it(client, tmp_path):
    clips = make_clips(tmp_path)
    rows = rows_for(clips, tmp_path)[:2]
    rows[0]["name"] = "x\ty"
    manifest = write_csv(tmp_path / "jobs.csv", rows)
    results = batch.score_many(manifest, client, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in results] == ["failed", "done"]
    assert "holds a control character" in results[0].error


def test_wrong_json_types_and_messages_in_column_names(tmp_path):
    lines = [
        {"ref": ["a.yuv"], "dis": "d.yuv"},
        {"ref": "r.yuv", "dis": {"path": "d.yuv"}},
        {"ref": "r.yuv", "dis": "d.yuv", "name": True},
        {"ref": "r.yuv", "dis": "d.yuv", "options": ["egl=1.2"]},
        {"ref": "r.yuv", "dis": "d.yuv", "options": "egl"},
        {"ref": "r.yuv", "dis": "d.yuv", "name": 5},
    ]
    path = tmp_path / "jobs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    jobs = manifest.read_jobs(path)
    assert [j.error for j in jobs] == [
        "ref must be a string, got list ['a.yuv']",
        "dis must be a string, got dict {'path': 'd.yuv'}",
        "name must be a string, got bool True",
        "options must be a string or an object, got list ['egl=1.2']",
        "options 'egl': options expects NAME=VALUE, got 'egl'",
        None,
    ]
    assert jobs[5].name == "5"  # a JSON number as a name, as earlier versions read it
    (job,) = manifest.read_jobs([{"ref": Path("r.yuv"), "dis": Path("d.yuv")}], base_dir=tmp_path)
    assert job.error is None and job.dis == str(tmp_path / "d.yuv")


def test_model_path_points_into_the_manifest_folder(tmp_path, monkeypatch):
    """A relative ``path=`` in a model cell is the manifest's folder's file, as ``ref`` and
    ``dis`` are, whatever the working folder holds under that name."""
    from importlib import resources

    shipped = resources.files("admcuda.model.data")
    folder, elsewhere = tmp_path / "jobs", tmp_path / "cwd"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "m.json").write_text((shipped / "vmaf_v0.6.1.json").read_text())
    (elsewhere / "m.json").write_text((shipped / "vmaf_4k_v0.6.1.json").read_text())
    path = folder / "jobs.jsonl"
    model = "path=m.json:name=phone:enable_transform;version=vmaf_v0.6.1neg"
    path.write_text(json.dumps({"ref": "r.yuv", "dis": "d.yuv", "model": model}) + "\n")
    monkeypatch.chdir(elsewhere)
    (job,) = manifest.read_jobs(path)
    assert job.error is None
    assert job.model == (
        f"path={folder / 'm.json'}:name=phone:enable_transform",
        "version=vmaf_v0.6.1neg",
    )


def test_a_bare_model_name_in_a_model_cell_is_read_as_score_reads_it(tmp_path):
    """``vmaf_v0.6.1neg`` is ``version=vmaf_v0.6.1neg`` and ``m.json`` the manifest
    folder's ``path=m.json``, as ``admcuda score --model`` and the API take them."""
    from importlib import resources

    shipped = resources.files("admcuda.model.data") / "vmaf_v0.6.1.json"
    (tmp_path / "m.json").write_text(shipped.read_text())
    rows = [{"ref": "r.yuv", "dis": "d.yuv", "model": "vmaf_v0.6.1neg:name=neg; m.json"}]
    (job,) = manifest.read_jobs(rows, base_dir=tmp_path)
    assert job.error is None
    assert job.model == ("version=vmaf_v0.6.1neg:name=neg", f"path={tmp_path / 'm.json'}")


def test_scale_column_scores_lower_rungs_as_score_does(client, tmp_path):
    """A rung of another size with ``scale`` scores as ``admcuda.score(scale=...)``;
    without it that row fails, naming the column; a bad scaler fails its row."""
    pytest.importorskip("imageio_ffmpeg")
    from _media import write_y4m

    import admcuda

    ref = write_y4m(write_clip(tmp_path / "ref.raw", base_luma(1)), tmp_path / "ref.y4m",
                    W, H, "420", 8)  # fmt: skip
    w2, h2 = 24, 18  # a lower rung (a side of 16 or less is too small for ADM itself)
    small = base_luma(1)[:, :h2, :w2]
    raw = tmp_path / "small.raw"
    chroma = bytes([128]) * (2 * (w2 // 2) * (h2 // 2))
    raw.write_bytes(b"".join(np.clip(y, 0, 255).astype(np.uint8).tobytes() + chroma
                             for y in small))  # fmt: skip
    dis = write_y4m(raw, tmp_path / "small.y4m", w2, h2, "420", 8)
    rows = [
        {"ref": "ref.y4m", "dis": "small.y4m", "name": "scaled", "scale": "bicubic"},
        {"ref": "ref.y4m", "dis": "small.y4m", "name": "plain"},
        {"ref": "ref.y4m", "dis": "small.y4m", "name": "bad", "scale": "cubic"},
    ]
    path = tmp_path / "jobs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    results = batch.score_many(path, client, output=tmp_path / "out", backend="cpu",
                               timeout=WAIT_S)  # fmt: skip
    scaled, plain, bad = results
    want = admcuda.score_files(ref, dis, backend="cpu", scale="bicubic")
    assert scaled.status == "done" and scaled.frames == want
    assert (
        plain.status == "failed"
        and "; give scale='bicubic'" in plain.error
        and "--" not in plain.error
    )
    assert bad.status == "failed" and "cubic" in bad.error
    assert json.loads((tmp_path / "out" / "scaled.job").read_text())["scale"] == "bicubic"


def long_luma(seed: int, frames: int) -> np.ndarray:
    """``frames`` frames that differ from one another (so that a wrong frame shows)."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 1, W)[None, :]
    y = np.linspace(0, 1, H)[:, None]
    return np.stack(
        [
            128 + 80 * np.sin(5 * x + 3 * y + k / 3) + rng.normal(0, 12, (H, W))
            for k in range(frames)
        ]
    )


def test_frame_columns_choose_the_frames_as_score_does(client, tmp_path, capsys):
    """frame_cnt, frame_skip_ref, frame_skip_dist and subsample, in CSV cells or JSON
    numbers: each pair's JSON (frame numbers and scores) is what ``admcuda score`` writes
    with the same flags; 0 means what it means there; a rerun with another choice scores
    the pair again; a bad cell fails its row alone, naming the column."""
    ref = write_clip(tmp_path / "ref.yuv", long_luma(1, 12))
    dis = write_clip(tmp_path / "dis.yuv", distort(long_luma(1, 12), 11, 6))
    flags = {
        "cnt5_sub2": {"frame_cnt": 5, "subsample": 2},
        "skips": {"frame_skip_ref": 1, "frame_skip_dist": 3, "frame_cnt": 4},
        "zeros": {"frame_cnt": 0, "subsample": 0, "frame_skip_ref": 0},
    }
    geometry = {"ref": "ref.yuv", "dis": "dis.yuv", "width": W, "height": H}
    columns = ["ref", "dis", "name", "width", "height", *manifest.FRAME_COLUMNS]
    bad = {
        "bad_cnt": {"frame_cnt": "-1"}, "bad_sub": {"subsample": "2.0"},
        "bad_skip": {"frame_skip_dist": "x"}, "big_cnt": {"frame_cnt": str(1 << 31)},
    }  # fmt: skip
    path = tmp_path / "jobs.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for name, cells in {**flags, **bad}.items():
            writer.writerow({**geometry, "name": name, **cells})
    out = tmp_path / "out"
    results = {r.name: r for r in batch.score_many(path, client, output=out, backend="cpu",
                                                   timeout=WAIT_S)}  # fmt: skip
    for name, cells in flags.items():
        assert results[name].status == "done", results[name].error
        want = tmp_path / f"{name}.json"
        argv = [str(ref), str(dis), "-w", str(W), "-h", str(H), "--backend", "cpu", "-q"]
        for key, value in cells.items():
            argv += [f"--{key.replace('_', '-')}", str(value)]
        assert cli.main(["score", *argv, "--json", "-o", str(want)]) == 0
        assert load(out / f"{name}.json") == load(want), name
    numbers = {name: load(out / f"{name}.json")["frames"] for name in flags}
    assert [f["frameNum"] for f in numbers["cnt5_sub2"]] == [0, 2, 4]
    assert [f["frameNum"] for f in numbers["skips"]] == [0, 1, 2, 3]
    assert len(numbers["zeros"]) == 12
    assert results["bad_cnt"].error == "frame_cnt -1 is out of range (must be >= 0)"
    assert results["bad_sub"].error == "subsample '2.0' is not an integer"
    assert results["bad_skip"].error == "frame_skip_dist 'x' is not an integer"
    assert results["big_cnt"].error == (
        "frame_cnt 2147483648 is out of range (must be at most 2147483647)"
    )
    record = json.loads((out / "cnt5_sub2.job").read_text())
    assert (record["frame_cnt"], record["subsample"]) == (5, 2)
    assert not set(manifest.FRAME_COLUMNS) & set(json.loads((out / "zeros.job").read_text()))

    # JSON numbers; a changed choice scores the pair again, the same one keeps it
    lines = [{**geometry, "name": "cnt5_sub2", "frame_cnt": 5, "subsample": 2},
             {**geometry, "name": "skips", "frame_skip_ref": 1, "frame_skip_dist": 3,
              "frame_cnt": 3}]  # fmt: skip
    jsonl = tmp_path / "jobs.jsonl"
    jsonl.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = batch.score_many(jsonl, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in again] == ["skipped", "done"]
    assert [f["frameNum"] for f in load(out / "skips.json")["frames"]] == [0, 1, 2]
    jobs = manifest.read_jobs([{"ref": "r", "dis": "d", "frame_cnt": 5},
                               {"ref": "r", "dis": "d", "frame_cnt": 6}])  # fmt: skip
    assert jobs[0].ladder_key != jobs[1].ladder_key  # one selection per ladder
    capsys.readouterr()


def test_ignore_name_column(client, tmp_path):
    """A raw file whose name states another size: its row fails and offers ignore_name;
    with ``ignore_name`` true it is read at the row's geometry; a value not true or false
    fails its row."""
    ref = write_clip(tmp_path / "ref.yuv", base_luma(1))
    dis = write_clip(tmp_path / "clip_640x360.yuv", distort(base_luma(1), 11, 4))
    rows = [
        {"ref": "ref.yuv", "dis": dis.name, "name": "named", "width": W, "height": H},
        {"ref": "ref.yuv", "dis": dis.name, "name": "ignored", "width": W, "height": H,
         "ignore_name": "true"},
        {"ref": "ref.yuv", "dis": dis.name, "name": "bad", "width": W, "height": H,
         "ignore_name": "yes"},
    ]  # fmt: skip
    results = batch.score_many(write_csv(tmp_path / "jobs.csv", rows), client, backend="cpu",
                               timeout=WAIT_S)  # fmt: skip
    named, ignored, bad = results
    assert named.status == "failed" and "ignore_name" in named.error, named.error
    assert ignored.status == "done" and ignored.frames == admcuda_score(ref, dis, ignore_name=True)
    assert bad.error == "ignore_name must be true or false, got 'yes'"
    (job,) = manifest.read_jobs([{"ref": "r", "dis": "d", "ignore_name": True}])
    assert job.ignore_name is True and job.error is None


def test_allow_partial_frame_and_autorotate_columns(client, tmp_path):
    """score's --allow-partial-frame and --autorotate/--noautorotate as columns: a raw
    file ending in a partial frame, or a video with a display matrix, fails its row without
    them (naming the column) and scores as ``admcuda.score`` scores it with them; a value
    not true or false fails its row."""
    pytest.importorskip("imageio_ffmpeg")
    from _media import X264_LOSSLESS, encode, ffmpeg_exe

    ref = write_clip(tmp_path / "ref.yuv", base_luma(1))
    dis = write_clip(tmp_path / "dis.yuv", distort(base_luma(1), 11, 4))
    partial = tmp_path / "partial.yuv"
    partial.write_bytes(dis.read_bytes() + b"\x80" * 100)
    upright = encode(dis, tmp_path / "upright.mp4", W, H, "420", 8, X264_LOSSLESS)
    turned = tmp_path / "turned.mp4"  # the same pixels under a 180-degree display matrix
    subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", "-display_rotation",
         "180", "-i", str(upright), "-c", "copy", str(turned)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    geometry = {"ref": "ref.yuv", "width": W, "height": H}
    rows = [
        {**geometry, "dis": partial.name, "name": "partial"},
        {**geometry, "dis": partial.name, "name": "partial_ok", "allow_partial_frame": "true"},
        {**geometry, "dis": turned.name, "name": "turned"},
        {**geometry, "dis": turned.name, "name": "turned_ok", "autorotate": "true"},
        {**geometry, "dis": turned.name, "name": "stored", "autorotate": "false"},
        {**geometry, "dis": turned.name, "name": "bad", "autorotate": "yes"},
    ]
    path = tmp_path / "jobs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    results = {r.name: r for r in batch.score_many(path, client, output=tmp_path / "out",
                                                   backend="cpu", timeout=WAIT_S)}  # fmt: skip
    assert results["partial"].status == "failed"
    assert "allow_partial_frame" in results["partial"].error, results["partial"].error
    assert results["partial_ok"].status == "done"
    assert results["partial_ok"].frames == admcuda_score(ref, partial, allow_partial_frame=True)
    assert results["turned"].status == "failed"
    assert "autorotate" in results["turned"].error, results["turned"].error
    for name, turn in (("turned_ok", True), ("stored", False)):
        assert results[name].status == "done", results[name].error
        assert results[name].frames == admcuda_score(ref, turned, autorotate=turn)
    assert results["turned_ok"].frames != results["stored"].frames
    assert results["bad"].error == "autorotate must be true or false, got 'yes'"
    record = json.loads((tmp_path / "out" / "turned_ok.job").read_text())
    assert record["autorotate"] is True and "allow_partial_frame" not in record
    jobs = manifest.read_jobs([{"ref": "r", "dis": "d", "autorotate": ""},
                               {"ref": "r", "dis": "d", "autorotate": False,
                                "allow_partial_frame": True}])  # fmt: skip
    assert (jobs[0].autorotate, jobs[0].allow_partial_frame) == (None, False)
    assert (jobs[1].autorotate, jobs[1].allow_partial_frame) == (False, True)
    assert jobs[0].ladder_key != jobs[1].ladder_key


def admcuda_score(ref: Path, dis: Path, **kwargs: object) -> list[dict[str, float]]:
    import admcuda

    return admcuda.score_files(ref, dis, width=W, height=H, backend="cpu", **kwargs)


def test_row_errors_name_columns_not_flags(client, tmp_path):
    clips = make_clips(tmp_path)
    rows = [{"ref": "ref_a.yuv", "dis": "a1.yuv"}, *rows_for(clips, tmp_path)[:1]]
    results = batch.score_many(write_csv(tmp_path / "jobs.csv", rows), client, backend="cpu",
                               timeout=WAIT_S)  # fmt: skip
    assert [r.status for r in results] == ["failed", "done"]
    assert "is raw YUV: give width and height" in results[0].error
    assert "--" not in results[0].error


def test_a_summary_that_is_a_folder_fails_before_any_work(tmp_path):
    clip = write_clip(tmp_path / "a.yuv", base_luma(1))
    (tmp_path / "out" / "summary.csv").mkdir(parents=True)
    jobs = [{"ref": str(clip), "dis": str(clip), "width": W, "height": H}]
    with pytest.raises(AdmError, match="summary.csv' is a folder; the summary cannot be"):
        batch.score_many(jobs, output=tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["summary.csv"]


def test_given_names_are_never_renamed(tmp_path):
    """A given name that an earlier row gave fails its row; derived names (from dis)
    pass over every given name, wherever in the manifest it stands."""
    rows = [
        {"ref": "r.yuv", "dis": "x.yuv"},  # derived x; the manifest gives x below
        {"ref": "r.yuv", "dis": "a.yuv", "name": "x"},
        {"ref": "r.yuv", "dis": "b.yuv", "name": "x"},
        {"ref": "r.yuv", "dis": "c.yuv", "name": "x_2"},
        {"ref": "r.yuv", "dis": "d.yuv", "name": "x_2"},
        {"ref": "r.yuv", "dis": "x.yuv"},
    ]
    jobs = manifest.read_jobs(write_csv(tmp_path / "jobs.csv", rows))
    assert [(j.name, j.error) for j in jobs] == [
        ("x_3", None), ("x", None), ("x_4", "name 'x' given twice"), ("x_2", None),
        ("x_2_2", "name 'x_2' given twice"), ("x_5", None),
    ]  # fmt: skip
    assert [j.dis for j in jobs if j.name in ("x", "x_2")] == [
        str(tmp_path / "a.yuv"), str(tmp_path / "c.yuv"),
    ]  # fmt: skip


def test_a_name_too_long_fails_only_its_row(client, tmp_path):
    clips = make_clips(tmp_path)
    rows = rows_for(clips, tmp_path)
    rows[1]["name"] = "n" * 300
    out = tmp_path / "out"
    for force in (False, True):
        results = batch.score_many(write_csv(tmp_path / "jobs.csv", rows), client, output=out,
                                   backend="cpu", force=force, timeout=WAIT_S)  # fmt: skip
        assert [r.status for r in results] == ["done", "failed", "done", "done"]
        assert "File name too long" in results[1].error
        assert read_summary(out / "summary.csv")["n" * 300]["status"] == "failed"


def test_a_row_that_now_fails_leaves_no_earlier_result(client, tmp_path):
    """An earlier run's <name>.json (and its record) is not the result of a row that now
    fails to validate, with --force or without; other rows' files stay."""
    clips = make_clips(tmp_path)
    rows = rows_for(clips, tmp_path)
    out = tmp_path / "out"
    manifest = write_csv(tmp_path / "jobs.csv", rows)
    assert [r.status for r in batch.score_many(manifest, client, output=out, backend="cpu",
                                               timeout=WAIT_S)] == ["done"] * 4  # fmt: skip
    for force, row in ((True, 1), (False, 2)):
        bad = [dict(r) for r in rows]
        bad[row]["width"] = "abc"
        manifest = write_csv(tmp_path / "jobs.csv", bad)
        results = batch.score_many(manifest, client, output=out, backend="cpu", force=force,
                                   timeout=WAIT_S)  # fmt: skip
        assert results[row].status == "failed" and "'abc' is not an integer" in results[row].error
        name = results[row].name
        assert not (out / f"{name}.json").exists() and not (out / f"{name}.job").exists()
        assert (out / "a1.json").exists() and (out / "a1.job").exists()


def test_a_pair_that_now_fails_to_score_leaves_no_earlier_result(client, tmp_path):
    """A valid row whose input no longer scores (a distorted file cut to less than a
    frame) fails, and its earlier <name>.json and record are removed, with --force or
    without; the other pairs' files stay."""
    clips = make_clips(tmp_path)
    manifest = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path))
    out = tmp_path / "out"
    assert [r.status for r in batch.score_many(manifest, client, output=out, backend="cpu",
                                               timeout=WAIT_S)] == ["done"] * 4  # fmt: skip
    broken = []
    for force, key in ((False, "a2"), (True, "a3")):
        assert (out / f"{key}.json").exists() and (out / f"{key}.job").exists()
        clips[key].write_bytes(b"\0" * 10)
        broken.append(key)
        results = batch.score_many(manifest, client, output=out, backend="cpu", force=force,
                                   timeout=WAIT_S)  # fmt: skip
        failed = {r.name: r.error for r in results if not r.ok}
        assert list(failed) == broken and "less than one" in failed[key]
        assert not (out / f"{key}.json").exists() and not (out / f"{key}.job").exists()
        assert (out / "a1.json").exists() and (out / "a1.job").exists()


def test_bad_rows_fail_alone(client, tmp_path, capsys):
    """A missing file, a file too small for its size and a bad option fail their rows;
    the rest of the ladder and the other pair are done; exit status 1; one line each.
    A rung with fewer frames is scored, with its warning."""
    clips = make_clips(tmp_path)
    (tmp_path / "short.yuv").write_bytes(b"\0" * (W * H))  # less than one 4:2:0 frame
    write_clip(tmp_path / "two.yuv", distort(base_luma(1), 14, 6)[:2])
    rows = rows_for(clips, tmp_path)
    rows[1:1] = [
        {"ref": "ref_a.yuv", "dis": "missing.yuv", "width": W, "height": H},
        {"ref": "ref_a.yuv", "dis": "short.yuv", "width": W, "height": H},
        {"ref": "ref_a.yuv", "dis": "a2.yuv", "width": W, "height": H, "options": "egl=0.5"},
        {"ref": "ref_a.yuv", "dis": "two.yuv", "width": W, "height": H},
    ]
    manifest = write_csv(tmp_path / "jobs.csv", rows)
    out = tmp_path / "out"
    argv = ["batch", str(manifest), "-o", str(out), "--scheduler", client.scheduler.address]
    assert cli.main([*argv, "-q"]) == 1
    err = capsys.readouterr().err
    summary = read_summary(out / "summary.csv")
    failed = {name: row["error"] for name, row in summary.items() if row["status"] == "failed"}
    assert set(failed) == {"missing", "short", "a2"}
    assert "not found" in failed["missing"]
    assert "less than one" in failed["short"]
    assert "egl" in failed["a2"] and "1" in failed["a2"]
    done = ["a1", "two", "a2_2", "a3", "a1_2"]
    assert [n for n, row in summary.items() if row["status"] == "done"] == done
    assert sorted(p.name for p in out.glob("*.json")) == sorted(f"{n}.json" for n in done)
    assert summary["two"]["frames"] == "2" and summary["a1"]["frames"] == str(FRAMES)
    lines = err.splitlines()
    assert len([line for line in lines if line.startswith("admcuda: failed: ")]) == 3
    warned = [line for line in lines if line.startswith("admcuda: warning: ")]
    assert len(warned) == 1 and warned[0].startswith("admcuda: warning: two: ")
    assert str(tmp_path / "two.yuv") in warned[0] and "(2 vs 3 frames)" in warned[0]
    assert len(lines) == 4 and "Traceback" not in err


def test_warnings_go_to_their_pair_once(client, tmp_path):
    """A ladder whose rungs are opened more than once (a missing rung) logs a short
    rung's warnings more than once: each pair gets those naming it as the distorted file,
    once; a rung whose distorted file is the reference gets none of them."""
    clips = make_clips(tmp_path)
    short = tmp_path / "short.yuv"
    short.write_bytes(clips["a1"].read_bytes()[: W * H * 3 // 2])  # 1 frame of 3
    rows = [
        {"ref": "ref_a.yuv", "dis": "a1.yuv", "name": "good"},
        {"ref": "ref_a.yuv", "dis": "missing.yuv", "name": "missing"},
        {"ref": "ref_a.yuv", "dis": "short.yuv", "name": "short"},
        {"ref": "ref_a.yuv", "dis": "ref_a.yuv", "name": "same"},
    ]
    manifest = write_csv(tmp_path / "jobs.csv", [{**r, "width": W, "height": H} for r in rows])
    results = batch.score_many(manifest, client, output=tmp_path / "out", backend="cpu",
                               timeout=WAIT_S)  # fmt: skip
    assert [r.status for r in results] == ["done", "failed", "done", "done"]
    good, _, short_result, same = results
    assert good.warnings == () and same.warnings == ()
    warned = short_result.warnings
    assert len(warned) == len(set(warned)) == 2
    assert all(f"distorted file '{short}'" in text for text in warned)
    assert any("holds 1 (at" in text for text in warned)
    assert "check width/height/pixel_format/bitdepth" in " ".join(warned)  # not -w/-h/-p/-b
    summary = read_summary(tmp_path / "out" / "summary.csv")  # the warnings there too
    assert summary["short"]["warnings"] == records.WARNINGS_SEPARATOR.join(warned)
    assert summary["good"]["warnings"] == summary["same"]["warnings"] == ""


def test_a_kept_pair_shows_the_warnings_it_gave(client, tmp_path):
    """A pair kept from an earlier run has in its summary row (and PairResult) the
    warnings it gave when it was scored, from its record; a record from before warnings
    were recorded keeps the pair with none, and one whose warnings are not a list of
    text is not trusted (the pair is scored again)."""
    clips = make_clips(tmp_path)
    short = tmp_path / "short.yuv"
    short.write_bytes(clips["a1"].read_bytes()[: W * H * 3 // 2])  # 1 frame of 3
    rows = [
        {"ref": "ref_a.yuv", "dis": "a1.yuv", "name": "good", "width": W, "height": H},
        {"ref": "ref_a.yuv", "dis": "short.yuv", "name": "short", "width": W, "height": H},
    ]
    manifest = write_csv(tmp_path / "jobs.csv", rows)
    out = tmp_path / "out"

    def run():  # type: ignore[no-untyped-def]
        results = batch.score_many(manifest, client, output=out, backend="cpu",
                                   timeout=WAIT_S)  # fmt: skip
        summary = read_summary(out / "summary.csv")
        return [(r.status, r.warnings, summary[r.name]["warnings"]) for r in results]

    (_, none, _), (_, warned, text) = run()
    assert none == () and len(warned) == 2
    assert json.loads((out / "short.job").read_text())["warnings"] == list(warned)
    assert run() == [("skipped", (), ""), ("skipped", warned, text)]

    record = json.loads((out / "short.job").read_text())
    del record["warnings"]  # as an earlier admcuda wrote it
    (out / "short.job").write_text(json.dumps(record))
    assert run() == [("skipped", (), ""), ("skipped", (), "")]
    (out / "short.job").write_text(json.dumps({**record, "warnings": "not a list"}))
    assert run()[1] == ("done", warned, text)


def _ladder_task(tmp_path):
    """A three-rung ladder whose middle rung is missing, on a reference read as 8-bit whose
    first frame looks like 10-bit samples (a warning about the reference alone)."""
    clips = make_clips(tmp_path)
    ref = tmp_path / "ref_long.yuv"
    data = bytearray(clips["ref_a"].read_bytes())
    data[1::2] = bytes(b & 0x0F for b in data[1::2])  # every odd byte below 16
    data[0] = 200
    ref.write_bytes(bytes(data))
    rungs = (("a1", str(clips["a1"])), ("missing", str(tmp_path / "missing.yuv")),
             ("a3", str(clips["a3"])))  # fmt: skip
    task = batch._Task(index=1, ref=str(ref), rungs=rungs, width=W, height=H,
                       pixel_format=None, bitdepth=8, options=AdmOptions())  # fmt: skip
    return task, f"reference file '{ref}' is read as "


def _scores(one):  # type: ignore[no-untyped-def]
    return (one.name, one.error, one.frames, one.frame_numbers)


def _fail_whole_ladders(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Make a ladder's one pass fail, so that its task scores each rung alone."""
    import admcuda.ladder

    real = admcuda.ladder.run_ladder

    def one_at_a_time(ref, dis, **kwargs):  # type: ignore[no-untyped-def]
        if len(dis) > 1:
            raise AdmError("a ladder's pass failed")
        return real(ref, dis, **kwargs)

    monkeypatch.setattr(admcuda.ladder, "run_ladder", one_at_a_time)


def test_a_rung_by_rung_retry_names_each_rung_as_its_own(tmp_path, monkeypatch):
    """Where the ladder's one pass fails, each rung is scored alone: every result, and
    the error of the rung that fails, carries that rung's name and the scores the one
    pass gives it."""
    task, _ = _ladder_task(tmp_path)
    whole, log = batch._score_task(task, "cpu")
    assert log.ref_passes == 1
    assert [one.name for one in whole] == ["a1", "missing", "a3"]
    assert [one.error is None for one in whole] == [True, False, True]
    assert "missing.yuv' not found" in whole[1].error
    _fail_whole_ladders(monkeypatch)
    alone, log = batch._score_task(task, "cpu")
    assert log.ref_passes == 4
    assert [_scores(one) for one in alone] == [_scores(one) for one in whole]
    assert whole[0].frames != whole[2].frames


def test_reference_warnings_go_to_every_pair_of_a_ladder(tmp_path, monkeypatch):
    """A warning about the reference alone names no distorted file: every pair of the
    ladder gets it, from the ladder's one pass and from a rung-by-rung retry."""
    task, reference = _ladder_task(tmp_path)
    whole, _ = batch._score_task(task, "cpu")
    _fail_whole_ladders(monkeypatch)
    alone, _ = batch._score_task(task, "cpu")
    for one in [*whole, alone[0], alone[2]]:  # the missing rung fails before its reference opens
        assert [text for text in one.warnings if text.startswith(reference)], one.name


def test_killed_worker_costs_only_time(tmp_path, monkeypatch):
    """Kill a worker while its task holds a finished result: the task runs again
    elsewhere, every pair is done, and each result file is written exactly once."""
    clips = make_clips(tmp_path)
    hold = tmp_path / "hold"
    hold.mkdir()
    writes: dict[str, int] = {}
    real_write = batch.write_output

    def counting_write(fmt, frames, dest, **kwargs):  # type: ignore[no-untyped-def]
        writes[Path(dest).name] = writes.get(Path(dest).name, 0) + 1
        return real_write(fmt, frames, dest, **kwargs)

    monkeypatch.setattr(batch, "write_output", counting_write)
    jobs = rows_for(clips, tmp_path)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["results"] = batch.score_many(
                jobs, c, output=tmp_path / "out", base_dir=tmp_path, backend="cpu",
                timeout=WAIT_S,
            )  # fmt: skip
        except BaseException as exc:  # reported by the assertion below
            outcome["error"] = exc

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.CRITICAL, preload=[_hold_preload(hold)],
    ) as cluster, Client(cluster, timeout="30s") as c:  # fmt: skip
        c.wait_for_workers(2, timeout=WAIT_S)
        worker_pids = set(c.run(os.getpid).values())
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        started = _wait_for(lambda: sorted(hold.glob("*.started")))
        victim_task, victim_pid = started[0].name.split(".")[:2]
        assert int(victim_pid) in worker_pids
        os.kill(int(victim_pid), signal.SIGKILL)
        _wait_for(lambda: _gone(int(victim_pid)))
        (hold / "release").touch()
        thread.join(WAIT_S)
        assert not thread.is_alive(), "score_many did not return"

    assert "error" not in outcome, outcome.get("error")
    results = outcome["results"]
    assert [r.status for r in results] == ["done"] * 4, [r.error for r in results]
    assert writes == {"a1.json": 1, "a2.json": 1, "a3.json": 1, "a1_2.json": 1}
    runs = [p.name.split(".")[1] for p in hold.glob(f"{victim_task}.*.started")]
    assert victim_pid in runs and len(runs) >= 2  # killed mid-task, then run again
    for r in results:
        assert r.task.pid != int(victim_pid)
        assert len(load(r.path)["frames"]) == FRAMES


def _hold_preload(hold: Path) -> str:
    """A worker preload (the text of a module) that makes every task attempt, after
    scoring, touch ``hold/task<N>.<pid>.started`` and wait for ``hold/release``: it wraps
    the record a task builds once its pairs are scored (``TaskLog``)."""
    return f"""
import os
import time
from pathlib import Path

import admcuda.batch.run as run

HOLD = Path({str(hold)!r})
REAL = run.TaskLog


def held(*args, **kwargs):
    (HOLD / f"task{{kwargs['task']}}.{{os.getpid()}}.started").touch()
    deadline = time.monotonic() + {WAIT_S!r}
    while not (HOLD / "release").exists():
        if time.monotonic() > deadline:
            raise RuntimeError("no release")
        time.sleep(0.01)
    return REAL(*args, **kwargs)


def dask_setup(worker):
    run.TaskLog = held
"""


def _wait_for(probe, limit: float = WAIT_S):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"gave up after {limit} s")


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# -- manifests and command line, no cluster


def test_jsonl_by_content_relative_paths_and_unique_names(tmp_path):
    (tmp_path / "m").mkdir()
    lines = [
        {"ref": "r.yuv", "dis": "x/d.yuv", "width": 32, "height": "24", "options": {"egl": 1.2}},
        {"ref": "r.yuv", "dis": "y/d.yuv", "pixel_format": "444", "bitdepth": 10},
        {"ref": "r.yuv", "dis": "z.yuv", "name": "d_2"},
        {"ref": "r.yuv", "dis": "d.yuv", "width": "wide"},
        {"ref": "/abs/r.yuv", "dis": "d.yuv", "options": "nope"},
    ]
    path = tmp_path / "m" / "jobs.txt"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    jobs = manifest.read_jobs(path)
    assert [j.name for j in jobs] == ["d", "d_3", "d_2", "d_4", "d_5"]  # d_2 is given
    assert jobs[0].ref == str(tmp_path / "m" / "r.yuv")
    assert jobs[0].dis == str(tmp_path / "m" / "x" / "d.yuv")
    assert (jobs[0].width, jobs[0].height, jobs[0].options.adm_enhn_gain_limit) == (32, 24, 1.2)
    assert (jobs[1].pixel_format, jobs[1].bitdepth) == ("444", 10)
    assert jobs[0].ladder_key != jobs[1].ladder_key
    assert jobs[3].error == "width 'wide' is not an integer"
    assert jobs[4].ref == "/abs/r.yuv" and "nope" in jobs[4].error
    assert all(j.error is None for j in jobs[:3])


@pytest.mark.parametrize(
    "text, needle",
    [
        ("ref,dis,widht\na,b,3\n", "unknown column 'widht'"),
        ("ref,name\na,b\n", "no dis column"),
        ("ref,dis\n", "has no rows"),
        ('{"ref": "a", "dis": "b"}\n[1]\n', "line 2: not a JSON object"),
        ('ref,dis,name\na,b,"first\na,c,second\n', "line 2: unexpected end of data (a quote"),
        ("ref,ref,dis,width\na,b,c,3\n", "has column 'ref' twice"),
        (
            '{"ref": "a", "dis": "b", "width": 32, "height": 24, "width": 16}\n',
            "line 1: key 'width' given twice",
        ),
        (
            '{"ref": "a", "dis": "b", "options": {"egl": 1.2, "egl": 2}}\n',
            "line 1: key 'egl' given twice in .options",
        ),
        ("\n \n\n", "is empty"),
        (
            '{"ref": "a", "dis": "b"}\n{"options": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            "line 2: nested too deeply",
        ),  # fmt: skip
        ('\n\nref,dis,name\na,b,"first\n', "line 4: unexpected end of data (a quote"),
    ],
)
def test_bad_manifest_is_one_line(tmp_path, capsys, text, needle):
    path = tmp_path / "jobs.csv"
    path.write_text(text)
    if text.startswith("{"):
        path = path.rename(tmp_path / "jobs.jsonl")
    assert cli.main(["batch", str(path), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and err.startswith("admcuda: error: ")


def test_key_given_twice_says_where(tmp_path):
    """A key given twice anywhere in a JSON line fails the manifest, naming the line, the
    key and, inside a nested value, where that object is (a jq path)."""
    good = '{"ref": "a", "dis": "b"}'
    cases = [
        ('{"ref": "a", "dis": "b", "dis": "c"}', "key 'dis' given twice"),
        ('{"ref": "a", "dis": "b", "options": {"nvd": {"x": 1, "x": 2}}}',
         "key 'x' given twice in .options.nvd"),
        ('{"ref": "a", "dis": "b", "options": [1, {"a b": {"y": 1, "y": 2}}]}',
         "key 'y' given twice in .options[1][\"a b\"]"),
        ('{"ref": "a", "dis": "b", "n": {"x": 1, "x": 2}, "m": {"z": 1, "z": 2}}',
         "key 'x' given twice in .n"),  # the first in the line
    ]  # fmt: skip
    path = tmp_path / "jobs.jsonl"
    for line, message in cases:
        path.write_text(f"{good}\n{line}\n")
        with pytest.raises(AdmError) as info:
            manifest.read_jobs(path)
        assert str(info.value) == f"manifest '{path}' line 2: {message}"


def test_manifest_from_standard_input_and_after_blank_lines(tmp_path, monkeypatch):
    """``-`` reads the manifest from standard input, its relative paths against the
    current folder (as for a pipe); a CSV header after blank lines is found, and rows keep
    the file's line numbers."""
    import io

    text = "\n\nref,dis,width,height\nr.yuv,d.yuv,32,24\nr.yuv,e.yuv,x,24\n"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    jobs = manifest.read_jobs("-")
    assert [(j.row, j.ref, j.dis) for j in jobs] == [
        (4, str(tmp_path / "r.yuv"), str(tmp_path / "d.yuv")),
        (5, str(tmp_path / "r.yuv"), str(tmp_path / "e.yuv")),
    ]
    assert jobs[0].error is None and jobs[1].error == "width 'x' is not an integer"
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "jobs.csv").write_text(text)
    assert manifest.read_jobs(tmp_path / "m" / "jobs.csv")[0].ref == str(tmp_path / "m" / "r.yuv")


def test_interrupted_batch_keeps_what_was_done(client, tmp_path, monkeypatch):
    """Ctrl-C after one task's results came: summary.csv has those as done and the rest
    as interrupted (it had every pair as 'not run')."""
    clips = make_clips(tmp_path)
    jobs = rows_for(clips, tmp_path)
    real_collect, calls = batch._collect, []

    def collect_then_interrupt(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real_collect(*args, **kwargs)

    monkeypatch.setattr(batch, "_collect", collect_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        batch.score_many(
            jobs, client, output=tmp_path / "out", base_dir=tmp_path, backend="cpu",
            timeout=WAIT_S,
        )  # fmt: skip
    with (tmp_path / "out" / "summary.csv").open(newline="") as f:
        status = {row["name"]: row["status"] for row in csv.DictReader(f)}
    assert sorted(status.values()).count("done") in (1, 3)  # the ladder of 3, or the pair
    assert set(status.values()) == {"done", "failed"}
    with (tmp_path / "out" / "summary.csv").open(newline="") as f:
        errors = {row["error"] for row in csv.DictReader(f) if row["status"] == "failed"}
    assert errors == {"interrupted"}


def test_interrupted_before_any_task_is_sent(client, tmp_path, monkeypatch):
    """Ctrl-C before the tasks are sent: every pair is 'interrupted' in the summary."""
    clips = make_clips(tmp_path)

    def interrupt(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "_execute", interrupt)
    with pytest.raises(KeyboardInterrupt):
        batch.score_many(rows_for(clips, tmp_path), client, output=tmp_path / "out",
                         base_dir=tmp_path, backend="cpu", timeout=WAIT_S)  # fmt: skip
    summary = read_summary(tmp_path / "out" / "summary.csv")
    assert {row["error"] for row in summary.values()} == {"interrupted"} and len(summary) == 4


def _writer_once_read(fifo: Path) -> int:
    """A write end of ``fifo``, opened once a reader has it open; nothing is written."""
    for _ in range(int(WAIT_S * 10)):
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.1)
    raise AssertionError(f"nothing opened {fifo} to read it")


def _interrupt(proc: subprocess.Popen, stuck: int) -> str:
    """Ctrl-C to ``proc``'s process group: it must end with status 130; its stderr."""
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=WAIT_S) == 130
    err = proc.stderr.read()
    os.close(stuck)
    return err


def _child_env() -> dict[str, str]:
    """The environment of a child Python that imports this checkout's admcuda."""
    paths = [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}


def _batch_process(
    manifest_path: Path, out: Path, *extra: str, workers: tuple[str, ...] = ("--workers", "2")
) -> subprocess.Popen:
    """``admcuda batch`` in a session of its own (as a terminal's foreground job: Ctrl-C
    reaches every process of it), on a local cluster of 2 CPU workers (``workers=()``:
    the batch's default, one task scored in its own process)."""
    env = _child_env()
    argv = [sys.executable, "-m", "admcuda", "batch", str(manifest_path), "-o", str(out)]
    return subprocess.Popen(
        [*argv, *workers, "--backend", "cpu", *extra], stderr=subprocess.PIPE,
        text=True, start_new_session=True, env=env, preexec_fn=default_sigint,  # noqa: PLW1509 - no threads of ours yet
    )  # fmt: skip


@contextlib.contextmanager
def _ended(proc: subprocess.Popen) -> Iterator[None]:
    """Whatever happens within, ``proc``'s process group is killed and reaped after."""
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=WAIT_S)


def _stuck_manifest(root: Path) -> Path:
    """A manifest of one pair, ``stuck``, whose distorted input is a FIFO that nothing
    writes, so that the pair is certainly being read when a signal comes."""
    clips = make_clips(root)
    os.mkfifo(root / "stuck.yuv")
    return write_csv(root / "jobs.csv", [
        {"ref": str(clips["ref_a"]), "dis": str(root / "stuck.yuv"), "width": W, "height": H},
    ])  # fmt: skip


def _assert_interrupted(err: str, out: Path) -> None:
    """One line, no traceback, and the stuck pair marked interrupted in the summary."""
    assert err.splitlines()[-1] == "admcuda: error: interrupted", err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert read_summary(out / "summary.csv")["stuck"]["error"] == "interrupted"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals and /proc")
def test_ctrl_c_is_left_to_the_batch_process(tmp_path):
    """Ctrl-C (SIGINT to the whole process group) while a pair is being read: the local
    workers ignore it (they would print a KeyboardInterrupt traceback of their own) and
    the batch ends with one line, exit status 130 and the summary. The pair's distorted
    input is a FIFO held open and never written, so the pair is certainly being read when
    the signal comes; a signal before the tasks are sent is "interrupted" too."""
    path = _stuck_manifest(tmp_path)
    proc = _batch_process(path, tmp_path / "out")
    with _ended(proc):
        lines = []
        with _deadline(WAIT_S):  # until the notice: the workers are up
            while not lines or not lines[-1].startswith(("admcuda: batch: ", "admcuda: error")):
                lines.append(proc.stderr.readline() or "admcuda: error: ended")
        assert lines[-1].startswith("admcuda: batch: 1 pair(s)"), lines
        stuck = _writer_once_read(tmp_path / "stuck.yuv")  # a worker is reading it
        workers = psutil.Process(proc.pid).children(recursive=True)
        assert workers
        for worker in workers:
            ignored = int(_proc_status(worker.pid)["SigIgn"], 16)
            assert ignored & (1 << (signal.SIGINT - 1)), worker.cmdline()
        err = _interrupt(proc, stuck)
    _assert_interrupted(err, tmp_path / "out")


def test_quiet_batch_is_quiet_when_the_dashboard_port_is_taken(tmp_path):
    """distributed warns when port 8787 is taken (another cluster's dashboard) and moves
    to another; -q prints nothing at all."""
    clips = make_clips(tmp_path)
    path = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path)[:1])
    with socket.socket() as taken:
        with contextlib.suppress(OSError):  # taken already: as good
            taken.bind(("", 8787))
            taken.listen()
        proc = _batch_process(path, tmp_path / "out", "-q")
        _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0 and err == ""
    assert read_summary(tmp_path / "out" / "summary.csv")["a1"]["status"] == "done"


def _proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


@contextlib.contextmanager
def _deadline(seconds: float):  # type: ignore[no-untyped-def]
    """Raise in the main thread if the block takes longer (a read that would block)."""

    def expired(signum, frame):  # type: ignore[no-untyped-def]
        raise TimeoutError(f"no answer in {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_integer_cells_are_decimal_digits(tmp_path):
    """Not Python's int(): '5_76' and full-width digits are refused, not read as 576 and 9."""
    rows = [
        {"ref": "r.yuv", "dis": f"d{k}.yuv", "width": width, "height": H}
        for k, width in enumerate(["5_76", "\uff19", "0x20", "32.0", " 32 ", "+32"])
    ]
    jobs = manifest.read_jobs(write_csv(tmp_path / "jobs.csv", rows))
    assert [j.error for j in jobs[:4]] == [
        "width '5_76' is not an integer", "width '\uff19' is not an integer",
        "width '0x20' is not an integer", "width '32.0' is not an integer",
    ]  # fmt: skip
    assert [(j.error, j.width) for j in jobs[4:]] == [(None, 32), (None, 32)]


def test_numbers_too_long_fail_their_row_alone(tmp_path):
    """Past Python's int() limit (4,300 digits) or any double, a number fails its row with
    one line, not the manifest; the other rows are read."""
    long, longer = "9" * 400, "1" * 5000
    rows = [
        {"ref": "r.yuv", "dis": "good.yuv", "width": W, "height": H},
        {"ref": "r.yuv", "dis": "csf.yuv", "width": W, "height": H, "options": f"csf={long}"},
        {"ref": "r.yuv", "dis": "wide.yuv", "width": longer, "height": H},
        {"ref": "r.yuv", "dis": "egl.yuv", "width": W, "height": H, "options": f"egl={longer}"},
    ]
    jobs = manifest.read_jobs(write_csv(tmp_path / "jobs.csv", rows))
    errors = [j.error for j in jobs]
    assert errors[0] is None and errors[2] == "width: a 5000-digit number is out of range"
    assert errors[1].startswith("options 'csf=999") and errors[1].endswith("got a 400-digit number")
    assert errors[3].endswith("[1, 100], got inf") and len(errors[3]) < 200
    # JSON numbers, as json.dumps writes these ints (json.loads refuses one of 5,000 digits)
    lines = [
        '{"ref": "r.yuv", "dis": "good.yuv"}',
        '{"ref": "r.yuv", "dis": "wide.yuv", "width": ' + longer + "}",
        '{"ref": "r.yuv", "dis": "csf.yuv", "options": {"csf": ' + long + "}}",
    ]  # fmt: skip
    (tmp_path / "jobs.jsonl").write_text("\n".join(lines) + "\n")
    jobs = manifest.read_jobs(tmp_path / "jobs.jsonl")
    assert [j.error for j in jobs] == [
        None, "width: a 5000-digit number is out of range",
        "options: option adm_csf_mode (alias csf) must be in [0, 3], got a 400-digit number",
    ]  # fmt: skip


def test_a_manifest_is_read_with_a_bound(tmp_path, monkeypatch, capsys):
    """A binary file (/dev/zero) or one past the limit (a pipe that never ends) fails
    with one line naming it and the limit, before memory grows."""
    path = tmp_path / "zero.csv"
    path.write_bytes(b"ref,dis\n" + b"\0" * 4096)
    with pytest.raises(AdmError, match=f"^manifest '{path}' is not a text file: it holds NUL"):
        manifest.read_jobs(path)
    monkeypatch.setattr(manifest, "MANIFEST_LIMIT", 1024 * 1024)
    path.write_text("ref,dis\n" + "a.yuv,b.yuv\n" * 100_000)
    out = tmp_path / "out"
    assert cli.main(["batch", str(path), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert (
        err == f"admcuda: error: manifest '{path}' is larger than 1 MiB, the most admcuda reads\n"
    )
    assert not out.exists()


def test_usage_errors(tmp_path, capsys):
    assert cli.main(["batch", str(tmp_path / "nowhere.csv"), "-o", str(tmp_path)]) == 1
    assert "not found" in capsys.readouterr().err
    assert cli.main(["batch", "jobs.csv", "-o", "out", "--workers", "0"]) == 2
    args = ["batch", "j.csv", "-o", "o", "--workers", "2", "--scheduler", "tcp://x:1"]
    assert cli.main(args) == 2
    assert cli.main(["batch", "jobs.csv"]) == 2
    assert all(line.startswith("admcuda: error: ") for line in capsys.readouterr().err.splitlines())


def test_bad_workers_and_scheduler_files_fail_at_once(tmp_path, capsys):
    """workers below 1 (a cluster of none waits for ever) and a missing scheduler file
    (Dask waits for it to appear) are one-line errors, before any cluster is made."""
    clip = write_clip(tmp_path / "a.yuv", base_luma(1))
    jobs = [{"ref": str(clip), "dis": str(clip), "width": W, "height": H}]
    for bad in (-1, 0, 2.5, True):
        with pytest.raises(AdmError, match="workers must be an integer >= 1"):
            batch.score_many(jobs, workers=bad)
    manifest = write_csv(tmp_path / "jobs.csv", jobs)
    nowhere = tmp_path / "scheduler.json"
    assert (
        cli.main(["batch", str(manifest), "-o", str(tmp_path / "o"), "--scheduler", str(nowhere)])
        == 1
    )
    assert f"scheduler file '{nowhere}' not found" in capsys.readouterr().err
    nowhere.write_text("{}")
    assert (
        cli.main(["batch", str(manifest), "-o", str(tmp_path / "o"), "--scheduler", str(nowhere)])
        == 1
    )
    err = capsys.readouterr().err
    assert "holds no scheduler address" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
        ({"timeout": -1}, "timeout must be a number of seconds > 0, got -1"),
        ({"timeout": "5"}, "timeout must be a number of seconds > 0, got '5'"),
        ({"timeout": 10**400}, "timeout must be a number of seconds > 0, got 1000"),  # overflow
        ({"retries": 1.5}, "retries must be an integer >= 0, got 1.5"),
        ({"retries": -1}, "retries must be an integer >= 0, got -1"),
        ({"rungs_per_task": 0}, "rungs_per_task must be an integer >= 1, got 0"),
        ({"backend": "bogus"}, "unknown backend 'bogus'"),
    ],
)
def test_bad_score_many_arguments_fail_at_once(tmp_path, kwargs, needle):
    """Before any cluster is made (none is given here, and none could start in time)."""
    jobs = [{"ref": "r.yuv", "dis": "d.yuv", "width": W, "height": H}]
    with pytest.raises(AdmError, match=needle):
        batch.score_many(jobs, output=tmp_path / "o", **kwargs)
    assert not (tmp_path / "o").exists()


def test_jobs_must_be_a_path_or_a_list_of_mappings():
    one = {"ref": "r.yuv", "dis": "d.yuv"}
    for bad, kind in ((one, "dict"), (5, "int")):
        with pytest.raises(AdmError, match=f"jobs must be a manifest path or a list of .* {kind}"):
            manifest.read_jobs(bad)
    jobs = manifest.read_jobs([{**one, "width": np.int64(W), "height": np.int32(H)}])
    assert (jobs[0].width, jobs[0].height) == (W, H) and jobs[0].error is None


def test_without_distributed_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if absent
    assert cli.main(["batch", str(tmp_path / "jobs.csv"), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == 'admcuda: error: admcuda batch needs Dask: pip install ".[dask]"\n'


def test_progress_line_counts_pairs_and_frames():
    bar = batch._BatchProgress(4, enabled=False, clock=lambda: 10.0)
    bar.frames, bar.failed = 300, 1
    bar.done = 2
    line = bar.render(now=12.0)
    assert line.startswith("pairs 2/4, 1 failed [") and "300 frames  150.0 fps" in line


class _FakeCluster:
    """Stands in for a cluster class: records its keyword arguments, starts nothing."""

    made: list[tuple[str, dict]] = []

    def __init__(self, kind: str, **kwargs) -> None:  # type: ignore[no-untyped-def]
        _FakeCluster.made.append((kind, kwargs))

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *exc) -> None:  # type: ignore[no-untyped-def]
        return None


@pytest.mark.parametrize(
    "gpus, backend, workers, want",
    [
        (2, "auto", None, ("LocalCUDACluster", 2, "cuda")),
        (2, "auto", 1, ("LocalCUDACluster", 1, "cuda")),
        (2, "cpu", 3, ("LocalCluster", 3, "cpu")),
        (0, "auto", 3, ("LocalCluster", 3, "cpu")),
        (0, "cuda", None, ("LocalCluster", 1, "cuda")),
    ],
)
def test_local_cluster_choice(monkeypatch, gpus, backend, workers, want):
    """dask-cuda and GPUs: one CUDA worker per GPU; otherwise CPU worker processes, one
    thread each. dask-cuda is faked: no GPU and no install are needed."""
    import types

    import distributed

    fake = types.ModuleType("dask_cuda")
    fake.LocalCUDACluster = lambda **kw: _FakeCluster("LocalCUDACluster", **kw)
    monkeypatch.setitem(sys.modules, "dask_cuda", fake)
    monkeypatch.setattr(
        distributed, "LocalCluster", lambda **kw: _FakeCluster("LocalCluster", **kw)
    )
    monkeypatch.setattr(cluster, "gpu_count", lambda: gpus)
    _FakeCluster.made.clear()
    with cluster.local_cluster(backend, workers) as (_, task_backend, _text):
        pass
    [(kind, kwargs)] = _FakeCluster.made
    assert (kind, kwargs["n_workers"], task_backend) == want
    assert kwargs["threads_per_worker"] == 1
    assert kwargs.get("processes", True) is True


@pytest.mark.parametrize(
    "tasks, workers, want",
    [(1, None, (1, "4")), (3, None, (3, "1")), (9, None, (4, "1")), (None, None, (4, "1")),
     (1, 2, (2, "2"))],
)  # fmt: skip
def test_a_local_cpu_cluster_for_its_tasks(monkeypatch, tasks, workers, want):
    """No more CPU workers than tasks, each task on the cores the workers leave (in the
    workers' environment), and none of Dask's MALLOC_TRIM_THRESHOLD_ for them."""
    import dask
    import distributed

    import admcuda.backends.cpu

    spawn_env = []

    def fake(**kw):  # type: ignore[no-untyped-def]
        spawn_env.append(dict(dask.config.get("distributed.nanny.pre-spawn-environ")))
        return _FakeCluster("LocalCluster", **kw)

    monkeypatch.setattr(distributed, "LocalCluster", fake)
    monkeypatch.setattr(cluster, "gpu_count", lambda: 0)
    monkeypatch.setattr(admcuda.backends.cpu, "default_threads", lambda: 4)
    dask_own = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    _FakeCluster.made.clear()
    with cluster.local_cluster("cpu", workers, tasks):
        pass
    [(_, kwargs)] = _FakeCluster.made
    assert (kwargs["n_workers"], kwargs["env"][cluster.TASK_THREADS_ENV]) == want
    assert spawn_env[0]["MALLOC_TRIM_THRESHOLD_"] is None  # None: not set in the workers
    assert dask.config.get("distributed.nanny.pre-spawn-environ") == dask_own


def test_a_manifest_that_is_the_summary_is_refused_before_any_write(tmp_path, capsys, monkeypatch):
    """``admcuda batch res/summary.csv -o res``: one line, and the manifest kept."""
    clip = write_clip(tmp_path / "a.yuv", base_luma(1))
    res = tmp_path / "res"
    res.mkdir()
    manifest = write_csv(res / "summary.csv", [{"ref": str(clip), "dis": str(clip),
                                                "width": W, "height": H}])  # fmt: skip
    before = manifest.read_bytes()

    def no_cluster(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(cluster, "local_cluster", no_cluster)
    assert cli.main(["batch", str(manifest), "-o", str(res), "-q"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"admcuda: error: the manifest '{manifest}' is the file the batch would write as "
        f"'{manifest}'; move or rename it, or write the results elsewhere\n"
    )
    assert manifest.read_bytes() == before
    assert [p.name for p in res.iterdir()] == ["summary.csv"]


@pytest.mark.parametrize("suffix", [".json", ".job"])
def test_a_manifest_named_as_a_rows_result_is_refused(client, tmp_path, suffix):
    """A manifest saved as ``res/NAME.json`` (or ``NAME.job``, its record) for one of its
    rows would be replaced by that row's result: refused before anything is written."""
    clip = write_clip(tmp_path / "a.yuv", base_luma(1))
    res = tmp_path / "res"
    res.mkdir()
    row = {"ref": str(clip), "dis": str(clip), "name": "pair", "width": W, "height": H}
    manifest = write_csv(res / f"pair{suffix}", [row])
    before = manifest.read_bytes()
    with pytest.raises(AdmError, match=f"would write as '{res / f'pair{suffix}'}'"):
        batch.score_many(manifest, client, output=res, backend="cpu", timeout=WAIT_S)
    assert manifest.read_bytes() == before
    assert [p.name for p in res.iterdir()] == [manifest.name]


def test_a_read_only_summary_fails_before_any_work(tmp_path):
    clip = write_clip(tmp_path / "a.yuv", base_luma(1))
    summary = tmp_path / "out" / "summary.csv"
    summary.parent.mkdir()
    summary.write_text("kept")
    summary.chmod(0o444)
    jobs = [{"ref": str(clip), "dis": str(clip), "width": W, "height": H}]
    with pytest.raises(AdmError, match="summary.csv' is a read-only file; the summary cannot"):
        batch.score_many(jobs, output=tmp_path / "out", timeout=WAIT_S)
    assert summary.read_text() == "kept"
    assert [p.name for p in summary.parent.iterdir()] == ["summary.csv"]


def test_model_column_scores_vmaf_as_score_does(client, tmp_path, capsys):
    """A ``model`` cell: the pair's JSON is what ``admcuda score --model ... --json -o``
    writes, the summary gives the first model's pooled score (libvmaf's, from the shared
    goldens), a rerun keeps it, and a model that cannot load fails its row alone."""
    from conftest import NETFLIX

    ref, dis = NETFLIX / "src01_hrc00_576x324_3f.yuv", NETFLIX / "src01_hrc01_576x324_3f.yuv"
    if not ref.exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    golden = json.loads((NETFLIX / "vmaf_goldens.json").read_text())
    two = "version=vmaf_v0.6.1neg:name=neg;version=vmaf_v0.6.1"
    jobs = [
        {"ref": str(ref), "dis": str(dis), "name": "v061", "model": "version=vmaf_v0.6.1"},
        {"ref": str(ref), "dis": str(dis), "name": "two", "model": two},
        {"ref": str(ref), "dis": str(dis), "name": "bad", "model": "version=vmaf_v9"},
    ]
    for job in jobs:
        job.update(width=576, height=324)
    out = tmp_path / "out"
    results = batch.score_many(jobs, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in results] == ["done", "done", "failed"]
    assert "model 'version=vmaf_v9': unknown model version 'vmaf_v9'" in results[2].error
    flags = {
        "v061": ["--model", "version=vmaf_v0.6.1"],
        "two": ["-m", "version=vmaf_v0.6.1neg:name=neg", "-m", "version=vmaf_v0.6.1"],
    }
    for name, model in flags.items():
        expected = tmp_path / f"{name}.json"
        argv = ["score", str(ref), str(dis), "-w", "576", "-h", "324", *model, "-q", "--json"]
        assert cli.main([*argv, "-o", str(expected)]) == 0
        assert load(out / f"{name}.json") == load(expected)
    summary = read_summary(out / "summary.csv")
    for name, key, label in (("v061", "vmaf_v0.6.1", "vmaf"), ("two", "vmaf_v0.6.1neg", "neg")):
        want = golden[f"src01_576x324_8bit__model__{key}"]["pooled"]["vmaf"]
        row = summary[name]
        assert row["model"] == label and float(row["model_mean"]) == want["mean"]
        assert float(row["model_harmonic_mean"]) == want["harmonic_mean"]
        assert float(row["model_min"]) == want["min"] and row["adm2_mean"]
    assert results[0].model == results[0].to_result().pooled["vmaf"]
    assert summary["bad"]["model"] == "" and summary["bad"]["status"] == "failed"
    again = batch.score_many(jobs, client, output=out, backend="cpu", timeout=WAIT_S)
    assert [r.status for r in again] == ["skipped", "skipped", "failed"]
    assert again[1].model == results[1].model and again[1].frames == results[1].frames
    jobs[0]["model"] = "version=vmaf_4k_v0.6.1"  # another model: scored again
    third = batch.score_many(jobs[:1], client, output=out, backend="cpu", timeout=WAIT_S)
    assert third[0].status == "done" and third[0].model != results[0].model


def test_one_worker_runs_in_this_process(tmp_path, capsys):
    """Where the local CPU cluster would be one worker (--workers 1, or one task), the
    pairs are scored in the batch's own process: the notice says so, no Dask is imported,
    and the files and summary are those of the cluster run."""
    clips = make_clips(tmp_path)
    manifest = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path))
    common = ["--backend", "cpu"]
    assert cli.main(["batch", str(manifest), "-o", str(tmp_path / "c"), "--workers", "2",
                     *common, "-q"]) == 0  # fmt: skip
    code = (
        "import sys; from admcuda.cli.main import main; "
        f"rc = main(['batch', {str(manifest)!r}, '-o', {str(tmp_path / 'h')!r}, "
        "'--workers', '1', '--backend', 'cpu']); "
        "print('dask imported' if 'distributed' in sys.modules else 'no dask'); sys.exit(rc)"
    )
    env = _child_env()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "no dask"
    assert "2 task(s) in this process (one worker's work: no cluster started)" in proc.stderr
    for name in ("a1", "a2", "a3", "a1_2"):
        here, there = load(tmp_path / "h" / f"{name}.json"), load(tmp_path / "c" / f"{name}.json")
        assert here == there, name
    drop = ("task", "fps")
    here = read_summary(tmp_path / "h" / "summary.csv")
    there = read_summary(tmp_path / "c" / "summary.csv")
    assert {k: {c: v for c, v in r.items() if c not in drop} for k, r in here.items()} == {
        k: {c: v for c, v in r.items() if c not in drop} for k, r in there.items()
    }


def test_one_task_in_this_process_retries_and_fails_its_pairs(tmp_path, monkeypatch):
    """In this process an unexpected error is retried as Dask would retry the task, then
    fails the task's pairs with one line; the other tasks are scored."""
    clips = make_clips(tmp_path)
    manifest = write_csv(tmp_path / "jobs.csv", rows_for(clips, tmp_path))
    real = batch._run_rungs
    calls = []

    def flaky(task, dis, *args, **kwargs):
        calls.append(task.rungs[0][0])
        if task.rungs[0][0] == "a1":
            raise RuntimeError("worker fell over")
        return real(task, dis, *args, **kwargs)

    monkeypatch.setattr(batch, "_run_rungs", flaky)
    results = batch.score_many(
        manifest, output=tmp_path / "out", backend="cpu", workers=1, retries=2
    )
    assert calls.count("a1") == 3
    failed = [r for r in results if not r.ok]
    assert {r.name for r in failed} == {"a1", "a2", "a3"}
    assert all("worker fell over" in r.error for r in failed)
    assert [r.status for r in results if r.name == "a1_2"] == ["done"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals and /proc")
def test_ctrl_c_in_this_process(tmp_path):
    """Ctrl-C while the batch scores in its own process (one task): one line, exit
    status 130, the pair interrupted in the summary, no worker process."""
    path = _stuck_manifest(tmp_path)
    proc = _batch_process(path, tmp_path / "out", workers=())
    with _ended(proc):
        line = proc.stderr.readline()
        assert "in this process" in line, line
        stuck = _writer_once_read(tmp_path / "stuck.yuv")  # the batch is reading it
        assert not psutil.Process(proc.pid).children(recursive=True)
        err = _interrupt(proc, stuck)
    _assert_interrupted(err, tmp_path / "out")

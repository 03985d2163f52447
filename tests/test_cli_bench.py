"""``admcuda bench``'s encoded rows with ``--rounds``: medians of alternating rounds, every
round's scores compared. Without a GPU: the decoders, the ceilings and the CLI runs are
stand-ins; what is tested is the bookkeeping, not a speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import admcuda.backends.cuda as gpu
import admcuda.io.ffmpeg as video
import admcuda.io.nvdec.reader as nvdec
from admcuda.cli import bench


@pytest.fixture
def stand_ins(monkeypatch):
    monkeypatch.setattr(gpu, "cuda_available", lambda: True)
    monkeypatch.setattr(nvdec, "nvdec_available", lambda: True)
    monkeypatch.setattr(video, "ffmpeg_exe", lambda: "ffmpeg")
    monkeypatch.setattr(bench, "_ceiling_sessions", lambda ref, streams: [1, 2])
    calls = {"ceiling": [], "cli": []}
    ceiling_fps = iter(range(100, 10_000, 100))

    def ceiling(paths, open_reader, batch):
        calls["ceiling"].append(len(paths))
        fps = float(next(ceiling_fps))
        return {"frames": 600.0, "fps": fps, "run_fps": fps / 2}

    steady = {"nvdec": iter([300.0, 100.0, 200.0]), "ffmpeg": iter([70.0, 50.0, 60.0])}
    adm2 = {"value": 0.5}

    def cli(args, *, env=None):
        decoder = args[args.index("--decoder") + 1]
        out = args[args.index("-o") + 1]
        rungs = sum(1 for a in args if a == "dis.mp4")
        doc = {"frames": [{"frameNum": 0, "metrics": {"integer_adm2": adm2["value"]}}]}
        for k in range(1, rungs + 1):
            Path(out.format(index=k)).write_text(json.dumps(doc))
        calls["cli"].append(decoder)
        fps = next(steady[decoder])
        return {"steady_fps": fps, "startup_s": 1.0, "wall_s": 600 / fps, "frames": 600.0}

    monkeypatch.setattr(bench, "pipeline_ceiling", ceiling)
    monkeypatch.setattr(bench, "cli_run", cli)
    return calls, adm2


def test_rounds_give_medians_of_alternating_runs(stand_ins, tmp_path, capsys):
    calls, _ = stand_ins
    r = bench.bench_encoded(Path("ref.mp4"), Path("dis.mp4"), 1, str(tmp_path), None,
                            rows=("nvdec", "ffmpeg"), rounds=3)  # fmt: skip
    assert calls["cli"] == ["nvdec", "ffmpeg", "ffmpeg", "nvdec", "nvdec", "ffmpeg"]
    assert r["rows"]["nvdec"]["steady_fps"] == 200.0  # median of 300, 100, 200
    assert r["rows"]["ffmpeg"]["steady_fps"] == 60.0
    assert [x["steady_fps"] for x in r["rows"]["nvdec"]["runs"]] == [300.0, 100.0, 200.0]
    assert list(r["ceilings"]) == ["NVDEC", "NVDEC, ADMCUDA_NVDEC_SEGMENTS=2", "ffmpeg"]
    # Three ceilings a round, in order: one session, two, ffmpeg.
    assert [x["fps"] for x in r["ceilings"]["NVDEC"]["runs"]] == [100.0, 400.0, 700.0]
    assert r["ceilings"]["NVDEC"]["fps"] == 400.0
    assert r["ceilings"]["ffmpeg"]["fps"] == 600.0
    assert r["same_scores"] is True and r["rounds"] == 3
    bench.print_encoded(Path("ref.mp4"), Path("dis.mp4"), r)
    text = capsys.readouterr().out
    assert "steady 200 fps (50% of NVDEC decode alone)" in text
    assert "medians of 3 rounds, steady 100-300 fps, whole 2.00-6.00 s" in text
    assert "1.00x --decoder" not in text and "3.33x --decoder ffmpeg steady" in text


def test_one_round_is_one_run_of_each(stand_ins, tmp_path):
    calls, _ = stand_ins
    r = bench.bench_encoded(Path("ref.mp4"), Path("dis.mp4"), 4, str(tmp_path), None,
                            rows=("nvdec", "ffmpeg"))  # fmt: skip
    assert calls["cli"] == ["nvdec", "ffmpeg"] and calls["ceiling"] == [5, 5, 5]
    assert "runs" not in r["rows"]["nvdec"] and r["rows"]["nvdec"]["steady_fps"] == 300.0


def test_a_round_whose_scores_differ_is_reported(stand_ins, tmp_path, monkeypatch):
    calls, adm2 = stand_ins
    real = bench.cli_run

    def drifting(args, *, env=None):
        out = real(args, env=env)
        adm2["value"] = 0.25  # every run after the first scores differently
        return out

    monkeypatch.setattr(bench, "cli_run", drifting)
    r = bench.bench_encoded(Path("ref.mp4"), Path("dis.mp4"), 1, str(tmp_path), None,
                            rows=("nvdec",), rounds=2)  # fmt: skip
    assert r["same_scores"] is False


def test_numbers_read_as_score_reads_them():
    """bench reads its numbers as libvmaf's command line does, as score does: 010 is 8."""
    from admcuda.numeric import c_integer

    args = bench._parser().parse_args(["--repeats", "010", "--sizes", "0100x040", "1920x1080"])
    assert args.repeats == c_integer("010") == 8
    assert args.sizes == [(64, 32), (1920, 1080)]
    assert bench.main(["--repeats", "0"]) == 2

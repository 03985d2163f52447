"""Encoded video decoded on NVDEC through the whole scoring path (``decoder="nvdec"``):
the streaming pipeline takes the GPU planes into device slots, in batches, and the
scores equal the reference's on ffmpeg's software-decoded luma (testdata/nvdec)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import admcuda
from admcuda.errors import AdmError
from admcuda.options import AdmOptions

DATA = Path(__file__).resolve().parent.parent / "testdata" / "nvdec"
GOLD = json.loads((DATA / "nvdec.json").read_text())


def test_nvdec_needs_the_cuda_backend():
    pair = GOLD["pairs"][0]
    with pytest.raises(AdmError, match="NVDEC decoder needs the CUDA backend"):
        admcuda.score(DATA / pair["ref"], DATA / pair["dis"], backend="cpu", decoder="nvdec")
    with pytest.raises(AdmError, match="unknown decoder 'gpu'"):
        admcuda.score(DATA / pair["ref"], DATA / pair["dis"], backend="cpu", decoder="gpu")


def _nvdec_ok() -> bool:
    try:
        from admcuda.nvdec import nvdec_available

        return nvdec_available()
    except ImportError:
        return False


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
@pytest.mark.parametrize("pair", GOLD["pairs"], ids=lambda p: p["dis"])
@pytest.mark.parametrize("batch", [7, None])
@pytest.mark.parametrize("processes", ["1", "0"])
def test_score_on_nvdec_equals_the_reference(pair, batch, processes, monkeypatch):
    """Several batches (7 frames each) and the default, decoding in worker processes and
    in threads; every output of every frame."""
    from admcuda import _run_ladder

    monkeypatch.setenv("ADMCUDA_NVDEC_PROCESSES", processes)

    run = _run_ladder(
        DATA / pair["ref"], [DATA / pair["dis"]], width=None, height=None, pixel_format=None,
        bitdepth=None, opts=AdmOptions.from_mapping({"debug": "true"}), backend="cuda",
        decoder="nvdec", batch=batch,
    )  # fmt: skip
    assert set(run.decoded.values()) == {"nvdec"}
    frames = run.frames[0]
    assert len(frames) == pair["frames"]
    for key, values in pair["scores"].items():
        assert [f[key] for f in frames] == values, key


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
def test_nvdec_ladder_each_rung_in_its_own_worker(monkeypatch):
    """A ladder of four rungs with a bad one between them: every good rung is scored
    (two of them equal to the reference's scores), the bad one fails alone."""
    from admcuda import _run_ladder

    monkeypatch.setenv("ADMCUDA_NVDEC_PROCESSES", "1")
    pair = GOLD["pairs"][0]
    other = DATA / "h264_8b_352x288.mkv"  # another size: refused at open, alone
    rungs = [DATA / pair["dis"], other, DATA / pair["dis"], DATA / pair["ref"]]
    run = _run_ladder(
        DATA / pair["ref"], rungs, width=None, height=None, pixel_format=None, bitdepth=None,
        opts=AdmOptions.from_mapping({"debug": "true"}), backend="cuda", decoder="nvdec",
        batch=16,
    )  # fmt: skip
    assert [e is not None for e in run.errors] == [False, True, False, False], run.errors
    for k in (0, 2):
        for key, values in pair["scores"].items():
            assert [f[key] for f in run.frames[k]] == values, (k, key)
    assert len(run.frames[3]) == pair["frames"]  # the reference against itself


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
def test_worker_error_is_one_line(tmp_path):
    """A worker that cannot open its file answers with the reader's one-line error."""
    import shutil

    import cupy as cp

    from admcuda.nvdec import open_nvdec
    from admcuda.nvdec_worker import NvdecProcessSource

    copy = tmp_path / "gone.mp4"
    shutil.copy(DATA / GOLD["pairs"][0]["dis"], copy)
    reader = open_nvdec(copy, "distorted")
    copy.unlink()
    source = NvdecProcessSource(reader)
    try:
        buf = source.device_buffer((4, reader.height, reader.width), cp.uint8)
        with pytest.raises(AdmError) as info:
            source.start(buf, 4, None).wait()
        assert "gone.mp4" in str(info.value)
        assert "\n" not in str(info.value)
    finally:
        source.close()

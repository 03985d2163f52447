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
def test_score_on_nvdec_equals_the_reference(pair, batch):
    """Several batches (7 frames each) and the default; every output of every frame."""
    from admcuda import _run_ladder

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

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
        from admcuda.io.nvdec.reader import nvdec_available

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
    from admcuda.ladder import run_ladder

    monkeypatch.setenv("ADMCUDA_NVDEC_PROCESSES", processes)

    run = run_ladder(
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
    from admcuda.ladder import run_ladder

    monkeypatch.setenv("ADMCUDA_NVDEC_PROCESSES", "1")
    pair = GOLD["pairs"][0]
    other = DATA / "h264_8b_352x288.mkv"  # another size: refused at open, alone
    rungs = [DATA / pair["dis"], other, DATA / pair["dis"], DATA / pair["ref"]]
    run = run_ladder(
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

    from admcuda.io.nvdec.reader import open_nvdec
    from admcuda.io.nvdec.worker import NvdecProcessSource

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


# -- one stream on several NVDEC sessions (ADMCUDA_NVDEC_SEGMENTS), against ffmpeg's decode

_GOP = "keyint=48:min-keyint=48:scenecut=0"
_SEGMENT_ENCODES = {
    # closed GOPs: an IDR every 48 frames, so 5 segments of 48 in 240 frames
    "h264": (8, ["-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-x264-params", _GOP]),
    "hevc10": (10, ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                    f"{_GOP}:open-gop=0:bframes=3:log-level=error"]),
    # open GOPs (x265's default): CRA pictures only, no cut, one session
    "hevc10_open": (10, ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
                         f"{_GOP}:bframes=3:log-level=error"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def segment_encodes(tmp_path_factory):
    """Noisy moving 320x180 content, 240 frames, encoded as above; and a distorted copy."""
    import numpy as np
    from _media import encode

    folder = tmp_path_factory.mktemp("segments")
    rng = np.random.default_rng(7)
    h, w, n = 180, 320, 240
    yy, xx = np.mgrid[0:h, 0:w]
    out = {}
    for kind, noise in (("ref", 4), ("dis", 14)):
        frames = []
        for k in range(n):
            y = 128 + 70 * np.sin((xx + 3 * k) / 11.0) * np.cos((yy - 2 * k) / 7.0)
            y = np.clip(y + rng.normal(0, noise, (h, w)), 0, 255).astype(np.uint8)
            frames.append(y.tobytes() + bytes([128]) * (w * h // 2))
        raw = folder / f"{kind}.yuv"
        raw.write_bytes(b"".join(frames))
        for name, (bitdepth, codec) in _SEGMENT_ENCODES.items():
            pix = ["-pix_fmt", "yuv420p" if bitdepth == 8 else "yuv420p10le"]
            out[kind, name] = encode(raw, folder / f"{kind}_{name}.mp4", w, h, "420", 8,
                                     [*pix, *codec])  # fmt: skip
    return out


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
@pytest.mark.parametrize("name", sorted(_SEGMENT_ENCODES))
def test_segments_equal_ffmpeg_frame_for_frame(segment_encodes, name, monkeypatch):
    import cupy as cp
    import numpy as np

    from admcuda.io.ffmpeg import VideoReader
    from admcuda.io.nvdec.reader import open_nvdec

    path = segment_encodes["ref", name]
    with VideoReader(path) as v:
        want = list(v)
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "3")
    with open_nvdec(path) as reader:
        plan = reader.segments(3)
        if name == "hevc10_open":
            assert plan is None
        else:  # thirds of 240 frames, cut at the nearest of the IDR pictures 48 frames apart
            assert [g.start for g in plan] == [0, 96, 144]
        got = [cp.asnumpy(p) for p in reader.iter_luma()]
        part = [cp.asnumpy(p) for p in reader.iter_luma(start=60, count=100)]
    assert len(got) == len(want) == 240
    bad = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if not np.array_equal(a, b)]
    assert not bad, f"{len(bad)} frames differ from ffmpeg's, the first {bad[:8]}"
    assert len(part) == 100
    assert all(np.array_equal(a, b) for a, b in zip(part, want[60:160], strict=True))


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
@pytest.mark.parametrize("name", ["h264", "hevc10"])
def test_score_on_nvdec_segments_equals_ffmpeg(segment_encodes, name, monkeypatch):
    ref, dis = segment_encodes["ref", name], segment_encodes["dis", name]
    want = admcuda.score(ref, dis, backend="cuda", decoder="ffmpeg", batch=20)
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "4")
    got = admcuda.score(ref, dis, backend="cuda", decoder="nvdec", batch=20)
    assert len(got.frames) == len(want.frames) == 240
    assert got.frames == want.frames


def _luma_as_raw(path: Path, out: Path) -> tuple[int, int, int]:
    """NVDEC's luma planes of ``path`` written as raw 4:0:0 samples; (width, height, depth)."""
    import cupy as cp

    from admcuda.io.nvdec.reader import open_nvdec

    with open_nvdec(path) as reader, open(out, "wb") as f:
        for plane in reader.iter_luma():
            f.write(cp.asnumpy(plane).astype("<u2" if reader.bitdepth > 8 else "u1").tobytes())
        return reader.width, reader.height, reader.bitdepth


@pytest.mark.cuda
@pytest.mark.skipif(not _nvdec_ok(), reason="needs PyNvVideoCodec, CuPy and a GPU")
@pytest.mark.parametrize("pair", GOLD["pairs"], ids=lambda p: p["dis"])
def test_vmaf_on_nvdec_equals_the_cpu_on_the_same_planes(pair, tmp_path):
    """--model with --decoder nvdec: every output of every frame, and the pooled scores,
    equal the CPU's on the decoded planes handed over as raw luma."""
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    w, h, depth = _luma_as_raw(DATA / pair["ref"], ref)
    assert _luma_as_raw(DATA / pair["dis"], dis) == (w, h, depth)
    model = "version=vmaf_v0.6.1"
    got = admcuda.score(DATA / pair["ref"], DATA / pair["dis"], backend="cuda",
                        decoder="nvdec", model=model, batch=7)  # fmt: skip
    want = admcuda.score(ref, dis, width=w, height=h, pixel_format="400", bitdepth=depth,
                         backend="cpu", model=model)  # fmt: skip
    assert len(got) == pair["frames"] and "vmaf" in got.names
    assert list(got) == list(want)
    assert got.pooled == want.pooled

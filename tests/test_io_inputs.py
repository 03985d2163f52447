"""Opening inputs of every kind, agreeing on a geometry, frame controls, and ladders."""

from __future__ import annotations

import logging
import os
import sys
import types

import numpy as np
import pytest
from _media import FFV1, GOLDENS, PAIRS, encode, frame_bytes, same, write_y4m

import admcuda
import admcuda.backends.cpu as cpu_backend
from admcuda.errors import AdmError
from admcuda.io.ffmpeg import VideoReader
from admcuda.io.inputs import (
    FrameSelection,
    input_kind,
    open_input,
    open_inputs,
    size_from_name,
)
from admcuda.io.raw import YuvReader
from admcuda.io.y4m import Y4mReader
from admcuda.options import OUTPUT_BASE_NAMES

W, H = 20, 18


def write_raw(path, values, *, fmt="420", bits=8, w=W, h=H):
    """A clip whose frame k has every luma sample equal to values[k]."""
    dtype = np.dtype(np.uint8) if bits == 8 else np.dtype("<u2")
    chroma = frame_bytes(w, h, fmt, bits) // dtype.itemsize - w * h
    blob = b"".join(
        np.full(w * h, v, dtype).tobytes() + np.zeros(chroma, dtype).tobytes() for v in values
    )
    path.write_bytes(blob)
    return path


@pytest.fixture
def stub(monkeypatch):
    """Stub reference: every output of a pair is ref[0, 0] * 1000 + dis[0, 0]."""
    pairs = []

    def compute_adm(ref, dis, bitdepth, opts):
        pairs.append((int(ref[0, 0]), int(dis[0, 0])))
        value = float(int(ref[0, 0]) * 1000 + int(dis[0, 0]))
        return dict.fromkeys(OUTPUT_BASE_NAMES, value)

    module = types.ModuleType("admcuda.reference")
    module.compute_adm = compute_adm  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "admcuda.reference", module)
    return pairs


def pairs_of(frames):
    return [divmod(int(f["integer_adm2"]), 1000) for f in frames]


def warnings_of(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# What a file is.


def test_input_kind(tmp_path):
    y4m_named_yuv = write_y4m(write_raw(tmp_path / "a.yuv", [1]), tmp_path / "b.yuv", W, H,
                              "420", 8)  # fmt: skip
    assert input_kind(y4m_named_yuv) == "y4m"
    for name, kind in (("c.yuv", "yuv"), ("c.YUV", "yuv"), ("c.raw", "yuv"), ("c.y4m", "y4m"),
                       ("c.mp4", "video"), ("c.mkv", "video"), ("c", "video")):  # fmt: skip
        (tmp_path / name).write_bytes(b"\x00" * 64)
        assert input_kind(tmp_path / name) == kind, name


@pytest.mark.parametrize("suffix", [".yuv", ".y4m", ".mp4"])
@pytest.mark.parametrize(
    ("setup", "match"),
    [
        (lambda p: None, "reference file .* not found"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b""), "is empty"),
    ],
)
def test_file_problems_for_every_kind(tmp_path, suffix, setup, match):
    path = tmp_path / f"x{suffix}"
    setup(path)
    with pytest.raises(AdmError, match=match):
        open_input(path, width=W, height=H, label="reference")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path):
    path = write_raw(tmp_path / "locked.yuv", [1])
    path.chmod(0)
    with pytest.raises(AdmError, match="cannot be read"):
        open_input(path, width=W, height=H)


def test_y4m_suffix_without_magic(tmp_path):
    path = tmp_path / "fake.y4m"
    path.write_bytes(b"not y4m at all\n")
    with pytest.raises(AdmError, match="does not start with YUV4MPEG2"):
        open_input(path)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("BigBuckBunny_1920x1080_24fps.yuv", (1920, 1080)),
        ("foo_3840x2160p10.yuv", (3840, 2160)),
        ("src01_hrc00_576x324.yuv420p10le.yuv", (576, 324)),
        ("tiny_16x16_then_32x32.yuv", (32, 32)),
        ("clip.yuv", None),
        ("v1x2.yuv", None),
        ("a_123456x20.yuv", None),
    ],
)
def test_size_from_name(name, expected):
    assert size_from_name(f"/some/dir_640x480/{name}") == expected


def test_raw_without_size_suggests_the_name(tmp_path):
    path = write_raw(tmp_path / "clip_20x18_25fps.yuv", [1, 2])
    with pytest.raises(AdmError) as info:
        open_input(path, label="distorted")
    assert str(info.value) == (
        f"distorted file {str(path)!r} is raw YUV: give --width and --height "
        "(the name suggests 20x18)"
    )
    plain = write_raw(tmp_path / "clip.yuv", [1])
    with pytest.raises(AdmError, match=r"give --width and --height$"):
        open_input(plain)


def test_open_input_kinds(tmp_path):
    raw = write_raw(tmp_path / "a.yuv", [1, 2, 3])
    y4m = write_y4m(raw, tmp_path / "a.y4m", W, H, "420", 8)
    with open_input(raw, width=W, height=H) as reader:
        assert isinstance(reader, YuvReader) and len(reader) == 3
    with open_input(y4m, width=W, height=H, bitdepth=8, pixel_format="420") as reader:
        assert isinstance(reader, Y4mReader) and reader.kind == "y4m"
        assert [int(f[0, 0]) for f in reader.iter_luma(1)] == [2, 3]


@pytest.mark.parametrize(
    ("given", "match"),
    [
        ({"width": 22}, "--width 22 contradicts reference file .*, which is 20x18 420 8-bit"),
        ({"height": 20}, "--height 20 contradicts"),
        ({"bitdepth": 10}, "--bitdepth 10 contradicts"),
        ({"pixel_format": "444"}, "--pixel-format 444 contradicts"),
    ],
)
def test_flags_contradicting_a_y4m_header(tmp_path, given, match):
    y4m = write_y4m(write_raw(tmp_path / "a.yuv", [1]), tmp_path / "a.y4m", W, H, "420", 8)
    with pytest.raises(AdmError, match=match):
        open_input(y4m, label="reference", **given)


# Geometry agreed between inputs.


def test_raw_takes_size_and_bit_depth_from_y4m_but_not_its_layout(tmp_path):
    ref = write_y4m(write_raw(tmp_path / "r.yuv", [1, 2], fmt="422", bits=10, w=33, h=21),
                    tmp_path / "r.y4m", 33, 21, "422", 10)  # fmt: skip
    dis = write_raw(tmp_path / "d.yuv", [5, 6, 7], fmt="422", bits=10, w=33, h=21)
    # A raw file read with another input's layout would be misread without a sign where
    # its own differs (ADM reads luma, so layouts may differ): a layout other than 4:2:0
    # is asked for.
    for first, second in ((ref, dis), (dis, ref)):
        with pytest.raises(AdmError, match=r"d\.yuv' is raw YUV and states no chroma layout, "
                           r"and .*r\.y4m' is 422: give the raw file's layout with "
                           r"--pixel-format"):  # fmt: skip
            open_inputs(first, [second])
    named = write_raw(tmp_path / "d_422.yuv", [5, 6, 7], fmt="422", bits=10, w=33, h=21)
    with open_inputs(ref, [named]) as inputs:  # the name states the same layout
        assert inputs.dis[0].pixel_format == "422"
    with pytest.raises(AdmError, match="states no chroma layout"):
        open_inputs(ref, [named], ignore_name=True)
    with open_inputs(ref, [dis], pixel_format="422") as inputs:
        (reader,) = inputs.dis
        assert isinstance(reader, YuvReader)
        assert (reader.width, reader.height, reader.pixel_format, reader.bitdepth) == (
            33, 21, "422", 10,
        )  # fmt: skip
        assert len(reader) == 3
        assert (inputs.width, inputs.height, inputs.bitdepth) == (33, 21, 10)
    # The other way round: a raw reference, a Y4M distorted input.
    with open_inputs(dis, [ref], pixel_format="422") as inputs:
        assert (inputs.ref.width, inputs.ref.pixel_format, len(inputs.ref)) == (33, "422", 3)


def test_raw_layout_flag_beside_y4m(tmp_path):
    ref = write_y4m(write_raw(tmp_path / "r.yuv", [1]), tmp_path / "r.y4m", W, H, "420", 8)
    dis = write_raw(tmp_path / "d.yuv", [2, 3], fmt="444")
    # With raw inputs, -p describes them: a 4:4:4 raw file beside a 4:2:0 Y4M, scored as
    # the same pair in two Y4M files; without -p the raw file is 4:2:0, which a 4:4:4
    # file's size then shows (a frame count that differs, warned about).
    dis_y4m = write_y4m(dis, tmp_path / "d.y4m", W, H, "444", 8)
    with open_inputs(ref, [dis], pixel_format="444") as inputs:
        assert inputs.dis[0].pixel_format == "444" and inputs.ref.pixel_format == "420"
        assert len(inputs.dis[0]) == 2
    # Without raw inputs, -p is checked against the Y4M headers.
    with pytest.raises(AdmError, match="--pixel-format 444 contradicts"):
        open_inputs(ref, [dis_y4m], pixel_format="444")
    with open_inputs(ref, [dis_y4m]) as inputs:
        assert inputs.dis[0].pixel_format == "444" and inputs.pixel_format == "420"


@pytest.mark.parametrize(
    ("dis_geometry", "match"),
    [
        ((22, 18, "420", 8), r"distorted file .* is 22x18 but reference file .* is 20x18"),
        ((20, 18, "420", 10), r"distorted file .* is 10-bit but reference file .* is 8-bit"),
    ],
)
def test_self_describing_inputs_must_agree(tmp_path, dis_geometry, match):
    ref = write_y4m(write_raw(tmp_path / "r.yuv", [1]), tmp_path / "r.y4m", W, H, "420", 8)
    w, h, fmt, bits = dis_geometry
    dis = write_y4m(write_raw(tmp_path / "d.yuv", [1], fmt=fmt, bits=bits, w=w, h=h),
                    tmp_path / "d.y4m", w, h, fmt, bits)  # fmt: skip
    with pytest.raises(AdmError, match=match):
        open_inputs(ref, [dis])


def test_raw_pair_without_size(tmp_path):
    ref = write_raw(tmp_path / "ref_20x18.yuv", [1])
    dis = write_raw(tmp_path / "dis.yuv", [1])
    with pytest.raises(AdmError, match=r"reference file .* \(the name suggests 20x18\)"):
        open_inputs(ref, [dis])


def test_failed_open_closes_what_was_opened(tmp_path, monkeypatch):
    closed = []
    real_close = Y4mReader.close
    monkeypatch.setattr(Y4mReader, "close", lambda self: (closed.append(self), real_close(self)))
    ref = write_y4m(write_raw(tmp_path / "r.yuv", [1]), tmp_path / "r.y4m", W, H, "420", 8)
    with pytest.raises(AdmError, match="not found"):
        open_inputs(ref, [tmp_path / "missing.yuv"])
    dis = write_raw(tmp_path / "short.yuv", [1])
    dis.write_bytes(dis.read_bytes()[:10])
    with pytest.raises(AdmError, match="less than one"):
        open_inputs(ref, [dis])
    assert len(closed) == 1


# Frame controls, as libvmaf's --frame_cnt, --frame_skip_ref/dist, --subsample.


@pytest.fixture
def clips(tmp_path):
    def make(ref_values, dis_values):
        ref = write_raw(tmp_path / "ref.yuv", ref_values)
        dis = write_raw(tmp_path / "dis.yuv", dis_values)
        return ref, dis

    return make


def score(ref, dis, **kw):
    return admcuda.score_files(ref, dis, width=W, height=H, backend="cpu", **kw)


def test_frame_cnt(stub, clips, caplog):
    ref, dis = clips(range(10, 16), range(100, 105))
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = score(ref, dis, frame_cnt=4)
    assert pairs_of(frames) == [(10, 100), (11, 101), (12, 102), (13, 103)]
    assert warnings_of(caplog) == []


def test_frame_skip_ref_and_dist(stub, clips, caplog):
    ref, dis = clips(range(10, 16), range(100, 106))
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = score(ref, dis, frame_skip_ref=2)
    assert pairs_of(frames) == [(12, 100), (13, 101), (14, 102), (15, 103)]
    (message,) = warnings_of(caplog)
    assert message.startswith("reference file ")
    assert "ended before distorted file" in message and "(4 vs 6 frames)" in message
    assert pairs_of(score(ref, dis, frame_skip_dist=1, frame_cnt=3)) == [
        (10, 101), (11, 102), (12, 103),
    ]  # fmt: skip


def test_subsample(stub, clips, caplog):
    ref, dis = clips(range(10, 17), range(100, 105))
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = score(ref, dis, subsample=3)
    # Frames 0..4 are common; 0 and 3 are scored.
    assert pairs_of(frames) == [(10, 100), (13, 103)]
    # Counts two apart are told on opening (by the file sizes), then after scoring.
    opening, message = warnings_of(caplog)
    assert "holds 7 frames but distorted file" in opening and "holds 5 (at 20x18" in opening
    assert "distorted file" in message and "(5 vs 7 frames); scoring the first 5" in message
    assert pairs_of(score(ref, dis, subsample=2, frame_skip_ref=1)) == [
        (11, 100), (13, 102), (15, 104),
    ]  # fmt: skip
    assert pairs_of(score(ref, dis, subsample=10)) == [(10, 100)]


def test_nothing_left_after_skipping(stub, clips):
    ref, dis = clips(range(3), range(3))
    with pytest.raises(AdmError, match=r"reference file .* has 3 frames, and frame_skip_ref=3"):
        score(ref, dis, frame_skip_ref=3)
    with pytest.raises(AdmError, match=r"frame_skip_dist=7 skips them all"):
        score(ref, dis, frame_skip_dist=7)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"frame_cnt": -1}, "frame_cnt must be an integer >= 1"),
        ({"frame_cnt": 1.0}, "frame_cnt must be an integer >= 1"),
        ({"frame_skip_ref": -1}, "frame_skip_ref must be an integer >= 0"),
        ({"frame_skip_dist": 1.5}, "frame_skip_dist"),
        ({"subsample": 0}, "subsample must be an integer >= 1"),
        ({"subsample": True}, "subsample"),
    ],
)
def test_frame_selection_validation(kw, match):
    with pytest.raises(AdmError, match=match):
        FrameSelection(**kw)


def test_frame_selection_zero_count_is_every_frame():
    # libvmaf's --frame_cnt 0 is "no limit"; the API and the CLI read it so.
    from admcuda.io.inputs import FrameSelection

    assert FrameSelection(frame_cnt=0).frame_cnt is None
    assert FrameSelection(frame_cnt=np.int64(0)).frame_cnt is None
    assert FrameSelection(frame_cnt=3).frame_cnt == 3


def test_frame_numbers():
    assert FrameSelection(subsample=3).frame_numbers(4) == [0, 3, 6, 9]
    assert FrameSelection().frame_numbers(2) == [0, 1]


# Ladders: one reference, several distorted inputs.


def test_ladder_reads_the_reference_once(stub, tmp_path, monkeypatch, caplog):
    ref = write_raw(tmp_path / "ref.yuv", range(10, 14))
    d1 = write_raw(tmp_path / "d1.yuv", range(100, 104))
    d2 = write_raw(tmp_path / "d2.yuv", range(200, 202))
    d3 = write_raw(tmp_path / "d3.yuv", range(150, 156))
    reads = []
    real = YuvReader.luma_offset  # asked once for every luma plane read

    def counting(self, index):
        reads.append((self.path.name, index))
        return real(self, index)

    monkeypatch.setattr(YuvReader, "luma_offset", counting)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        ladder = admcuda.score_ladder(ref, [d1, d2, d3], width=W, height=H, backend="cpu")
    assert [index for name, index in reads if name == "ref.yuv"] == [0, 1, 2, 3]
    assert pairs_of(ladder[0]) == [(10 + k, 100 + k) for k in range(4)]
    assert pairs_of(ladder[1]) == [(10, 200), (11, 201)]
    assert pairs_of(ladder[2]) == [(10 + k, 150 + k) for k in range(4)]
    messages = warnings_of(caplog)
    assert len(messages) == 4  # two on opening (4 vs 2, 4 vs 6 frames), two after scoring
    assert "d2.yuv' holds 2 (at 20x18" in messages[0] and "d3.yuv' holds 6" in messages[1]
    messages = messages[2:]
    assert "d2.yuv' ended before reference file" in messages[0]
    assert "(2 vs 4 frames)" in messages[0]
    assert messages[1].startswith("reference file ") and "d3.yuv' (4 vs 6 frames)" in messages[1]
    monkeypatch.setattr(YuvReader, "luma_offset", real)
    for k, dis in enumerate((d1, d2, d3)):
        assert score(ref, dis) == ladder[k]


def test_ladder_batches_every_rung_with_the_reference(stub, tmp_path, monkeypatch):
    """Each batch the engine gets holds the reference once and every rung beside it."""
    calls = []
    real = cpu_backend.CpuEngine.submit

    def submit(self, ref, dis, frames):
        calls.append((len(dis), frames))
        return real(self, ref, dis, frames)

    monkeypatch.setattr(cpu_backend.CpuEngine, "submit", submit)
    ref = write_raw(tmp_path / "ref.yuv", range(10, 13))
    dis = [write_raw(tmp_path / f"d{k}.yuv", range(100 * k, 100 * k + 3)) for k in (1, 2)]
    ladder = admcuda.score_ladder(ref, dis, width=W, height=H, backend="cpu")
    assert calls == [(2, 3)]
    assert pairs_of(ladder[1]) == [(10, 200), (11, 201), (12, 202)]


def test_ladder_real_numbers_mixed_kinds(tmp_path):
    """A Y4M reference against raw, Y4M and (with ffmpeg) ffv1 distorted inputs.

    Goldens: testdata/goldens.json (libvmaf 3.2.0 scalar C path).
    """
    entry = GOLDENS["immunohistochemistry_160x90_422_10b_blockgauss"]
    case = entry["case"]
    geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref = write_y4m(PAIRS / case["ref"], tmp_path / "ref.y4m", *geometry)
    dis = [PAIRS / case["dis"], write_y4m(PAIRS / case["dis"], tmp_path / "dis.y4m", *geometry)]
    try:
        dis.append(encode(PAIRS / case["dis"], tmp_path / "dis.mkv", *geometry, FFV1))
    except pytest.skip.Exception:
        pass
    ladder = admcuda.score_ladder(ref, dis, backend="cpu", debug=True)
    assert len(ladder) == len(dis)
    for frames in ladder:
        for got, want in zip(frames, entry["frames"], strict=True):
            assert all(same(v, got[k]) for k, v in want.items())


def test_video_of_another_size_is_refused(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    case = GOLDENS["astronaut_160x90_420_8b_boxnoise"]["case"]
    video = encode(PAIRS / case["ref"], tmp_path / "a.mkv", 160, 90, "420", 8, FFV1)
    other = write_y4m(write_raw(tmp_path / "r.yuv", [1]), tmp_path / "r.y4m", W, H, "420", 8)
    with pytest.raises(AdmError, match=r"distorted file .*a.mkv' is 160x90 but reference"):
        open_inputs(other, [video])
    with open_inputs(video, [PAIRS / case["dis"]]) as inputs:
        assert isinstance(inputs.ref, VideoReader)
        assert (inputs.dis[0].width, inputs.dis[0].height) == (160, 90)


def test_raw_data_named_as_video_is_told_to_take_a_yuv_name(tmp_path):
    """A video extension is read as video even with -w/-h (a real video whose signature
    is not recognised must not be read as raw); ffmpeg's refusal then says how to have it
    read as raw, not to give the -w/-h already given."""
    from _media import ffmpeg_exe

    ffmpeg_exe()  # skips where imageio-ffmpeg is missing
    ref = write_raw(tmp_path / "r.yuv", [1, 2, 3])
    fake = tmp_path / "d.mp4"
    noise = np.random.default_rng(1).integers(0, 256, ref.stat().st_size, dtype=np.uint8)
    fake.write_bytes(noise.tobytes())
    with pytest.raises(AdmError, match=r"named as video \(\.mp4\), it is read as video; if it "
                       r"is raw YUV, give it a \.yuv name$"):  # fmt: skip
        open_inputs(ref, [fake], width=W, height=H)


# ---- one stream given as two inputs ----------------------------------------------------------


def test_one_fifo_named_twice_is_refused_before_it_is_opened(tmp_path):
    ref = write_raw(tmp_path / "ref.yuv", [10, 20])
    fifo = tmp_path / "clip.fifo"
    os.mkfifo(fifo)  # no writer: opening it would block, so refusing must come first
    for ref_path, dis in ((fifo, [fifo]), (ref, [fifo, fifo]), (ref, [fifo, ref, str(fifo)])):
        with pytest.raises(AdmError, match=r"are the same stream \(a pipe\)"):
            open_inputs(ref_path, dis, width=W, height=H)


def test_a_ladder_naming_one_fifo_twice_is_refused(tmp_path):
    ref = write_raw(tmp_path / "ref.yuv", [10, 20])
    fifo = tmp_path / "rung.fifo"
    os.mkfifo(fifo)
    with pytest.raises(AdmError, match="distorted input .* and distorted input .* same stream"):
        admcuda.score(ref, [fifo, fifo], width=W, height=H)


@pytest.mark.parametrize(
    "names", [("-", "/dev/stdin"), ("/proc/self/fd/0", "-"), ("/dev/fd/0", "/dev/stdin")]
)
def test_standard_input_under_two_names_is_refused(names):
    import subprocess

    code = (
        "import sys\nfrom admcuda.errors import AdmError\nfrom admcuda.io.inputs import "
        "open_inputs\ntry:\n    open_inputs(sys.argv[1], [sys.argv[2]], width=20, height=18)\n"
        "except AdmError as exc:\n    print(exc)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *names], input=bytes(W * H * 3 // 2 * 4), timeout=60,
        capture_output=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr.decode()
    assert "are the same stream (a pipe)" in run.stdout.decode()


def test_a_regular_file_named_twice_is_read_twice(tmp_path):
    """One file as reference and distorted input is a "same content" run: each input
    reads it by position, so both get every frame (unlike a pipe named twice)."""
    clip = write_raw(tmp_path / "clip.yuv", [10, 20, 30])
    with open_inputs(clip, [clip], width=W, height=H) as inputs:
        got = [[int(p[0, 0]) for p in reader] for reader in inputs.readers]
    assert got == [[10, 20, 30], [10, 20, 30]]


def test_a_decoder_given_as_a_function_is_asked_only_for_encoded_video(tmp_path):
    """``--decoder auto`` reaches the opener as a function (whether the CUDA backend runs
    is known only once CuPy is imported): raw YUV and Y4M inputs open without asking it."""
    asked = []

    def decoder():
        asked.append(True)
        return "ffmpeg"

    raw = write_raw(tmp_path / "a.yuv", [1, 2])
    y4m = write_y4m(raw, tmp_path / "a.y4m", W, H, "420", 8)
    with open_inputs(raw, [y4m], width=W, height=H, decoder=decoder) as inputs:
        assert len(inputs.readers) == 2
    assert asked == []


@pytest.mark.parametrize(("decoder", "backend", "scale", "want"), [
    ("ffmpeg", "auto", None, "ffmpeg"),
    ("auto", "cpu", None, "ffmpeg"),
    ("auto", "auto", "bicubic", "ffmpeg"),
    ("auto", "auto", None, None),  # a function: asked on the first encoded input
])  # fmt: skip
def test_the_video_decoder_imports_no_cupy_until_asked(monkeypatch, decoder, backend, scale,
                                                       want):  # fmt: skip
    from admcuda import backends, ladder

    calls = []
    monkeypatch.setattr(backends, "select_backend",
                        lambda name: calls.append(name) or ("cuda", None))  # fmt: skip
    got = ladder._video_decoder(decoder, backend, scale)
    assert calls == []
    if want is not None:
        assert got == want
    else:
        assert callable(got) and got() == "auto" and got() == "auto"
        assert calls == ["auto"]  # asked once

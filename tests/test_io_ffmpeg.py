"""Encoded video through ffmpeg: probe parsing, exact luma, lossless == raw scores, cleanup.

Lossless encodes (ffv1 in Matroska for every layout and bit depth, libx264 -qp 0 in
MP4 for 8 and 10 bits) of the committed testdata pairs must give the same luma
samples as the raw files, and therefore exactly the raw scores and libvmaf's goldens
(testdata/goldens.json: libvmaf 3.2.0 scalar C path, see its provenance).
"""

from __future__ import annotations

import logging
import subprocess

import numpy as np
import pytest
from _frames import luma_frames
from _media import FFV1, GOLDENS, PAIRS, X264_LOSSLESS, encode, ffmpeg_exe, same

import admcuda
from admcuda.errors import AdmError
from admcuda.io.ffmpeg import VideoReader, parse_probe, source_layout

pytest.importorskip("imageio_ffmpeg")

# (golden case, container suffix, codec arguments): one per layout and bit depth.
LOSSLESS = [
    ("astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1),
    ("astronaut_160x90_420_8b_boxnoise", ".mp4", X264_LOSSLESS),
    ("chelsea_33x37_422_8b_band", ".mkv", FFV1),
    ("chelsea_128x72_444_8b_sharpen", ".mkv", FFV1),
    ("coins_97x55_400_8b_rescale", ".mkv", FFV1),
    ("immunohistochemistry_160x90_422_10b_blockgauss", ".mkv", FFV1),
    ("immunohistochemistry_160x90_422_10b_blockgauss", ".mp4", X264_LOSSLESS),
    ("coffee_192x108_420_12b_band", ".mkv", FFV1),
    ("moon_200x120_400_16b_rescale", ".mkv", FFV1),
]


def _geometry(case):
    return case["w"], case["h"], case["fmt"], case["bitdepth"]


def _encode_pair(tmp_path, name, suffix, codec):
    case = GOLDENS[name]["case"]
    ref = encode(PAIRS / case["ref"], tmp_path / f"ref{suffix}", *_geometry(case), codec)
    dis = encode(PAIRS / case["dis"], tmp_path / f"dis{suffix}", *_geometry(case), codec)
    return case, ref, dis


@pytest.mark.parametrize(("name", "suffix", "codec"), LOSSLESS, ids=lambda v: str(v)[:40])
def test_lossless_encode_scores_like_raw(tmp_path, name, suffix, codec):
    entry = GOLDENS[name]
    case, ref, dis = _encode_pair(tmp_path, name, suffix, codec)

    # The decoded luma is the raw luma, sample for sample, at the source's bit depth.
    with VideoReader(ref, label="reference") as reader:
        assert (reader.width, reader.height) == (case["w"], case["h"])
        assert reader.bitdepth == case["bitdepth"]
        assert reader.num_frames is None
        got = list(reader)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)

    # So the scores are the raw scores, and libvmaf's.
    raw = admcuda.score_files(
        PAIRS / case["ref"], PAIRS / case["dis"], width=case["w"], height=case["h"],
        pixel_format=case["fmt"], bitdepth=case["bitdepth"], backend="cpu", debug=True,
    )  # fmt: skip
    video = admcuda.score_files(ref, dis, backend="cpu", debug=True)
    # Mixed: raw reference (geometry from the encoded distorted input), encoded distorted.
    mixed = admcuda.score_files(
        PAIRS / case["ref"], dis, pixel_format=case["fmt"], backend="cpu", debug=True
    )
    for frames in (video, mixed):
        assert len(frames) == len(raw)
        for got_frame, want_frame in zip(frames, raw, strict=True):
            assert list(got_frame) == list(want_frame)
            assert all(same(want_frame[k], got_frame[k]) for k in want_frame)
    unstable = set(entry["unstable_fields"])
    for got_frame, golden in zip(video, entry["frames"], strict=True):
        for key, value in golden.items():
            if key not in unstable:
                assert same(value, got_frame[key]), (key, value, got_frame[key])


def test_gray_pix_fmt_alone_would_change_levels(tmp_path):
    """Why the reader uses extractplanes: ``-pix_fmt gray`` rescales tv-range luma."""
    case, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1)
    cmd = [ffmpeg_exe(), "-nostdin", "-v", "error", "-i", str(ref), "-pix_fmt", "gray",
           "-f", "rawvideo", "pipe:1"]  # fmt: skip
    data = subprocess.run(cmd, capture_output=True, check=True, timeout=60).stdout
    naive = np.frombuffer(data, np.uint8)[: 160 * 90].reshape(90, 160)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))[0]
    assert not np.array_equal(naive, want)
    with VideoReader(ref) as reader:
        np.testing.assert_array_equal(next(iter(reader)), want)
        assert any(arg.startswith("extractplanes=y,") for arg in reader.command())


def test_skip_and_count(tmp_path):
    case, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))
    with VideoReader(ref) as reader:
        got = list(reader.iter_luma(1))
        assert len(got) == 2
        np.testing.assert_array_equal(got[0], want[1])
        (one,) = list(reader.iter_luma(2, 5))
        np.testing.assert_array_equal(one, want[2])
        assert list(reader.iter_luma(0, 1))[0].sum() == want[0].sum()
        assert reader.command(3)[-5:-2] == ["-frames:v", "3", "-f"]


def test_one_frame_after_a_skip(tmp_path):
    """Frame k alone (what ``map --frame k`` reads): ffmpeg decodes the k frames before
    it and drops them, and stops after it; a frame past the end gives none."""
    case, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))
    with VideoReader(ref) as reader:
        for k in range(len(want)):
            (one,) = list(reader.iter_luma(k, 1))
            np.testing.assert_array_equal(one, want[k])
        assert list(reader.iter_luma(len(want), 1)) == []


def test_early_stop_kills_ffmpeg(tmp_path):
    _, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1)
    reader = VideoReader(ref)
    frames = reader.iter_luma()
    next(frames)
    (proc,) = reader._procs
    frames.close()
    assert proc.returncode is not None
    assert proc.stdout.closed and proc.stderr.closed
    assert not reader._procs
    # close() ends processes of generators still open.
    other = reader.iter_luma()
    next(other)
    (proc,) = reader._procs
    reader.close()
    assert proc.returncode is not None
    other.close()


@pytest.mark.parametrize(
    ("pix_fmt", "match"),
    [
        ("yuv420p9le", "unsupported bit depth 9"),
        ("yuv420p14le", "unsupported bit depth 14"),
        ("bgr0", "pixel format bgr0 is not YUV or gray"),
        ("gbrp", "is not YUV or gray"),
    ],
)
def test_refused_source_formats(tmp_path, pix_fmt, match):
    path = tmp_path / "src.mkv"
    cmd = [ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "lavfi", "-i",
           "testsrc=size=32x24:rate=5:duration=0.4", "-pix_fmt", pix_fmt, "-c:v", "ffv1",
           str(path)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    with pytest.raises(AdmError, match=match) as info:
        VideoReader(path, label="distorted")
    assert str(info.value).startswith("distorted file ")


def test_too_small_video(tmp_path):
    path = tmp_path / "tiny.mkv"
    cmd = [ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "lavfi", "-i",
           "testsrc=size=16x24:rate=5:duration=0.4", "-pix_fmt", "yuv420p", "-c:v", "ffv1",
           str(path)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    with pytest.raises(AdmError, match="width 16 is too small"):
        VideoReader(path)


def test_not_a_video(tmp_path):
    text = tmp_path / "notes.mp4"
    text.write_text("this is not a video\n" * 20)
    with pytest.raises(AdmError, match="is not a video ffmpeg can read") as info:
        VideoReader(text, label="reference")
    assert "\n" not in str(info.value)
    ansi = tmp_path / "notes.ans"
    ansi.write_text("hello\n")
    with pytest.raises(AdmError, match="reads it as text"):
        VideoReader(ansi)
    audio = tmp_path / "tone.wav"
    cmd = [ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "lavfi", "-i",
           "sine=duration=0.1", str(audio)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    with pytest.raises(AdmError, match="has no video stream"):
        VideoReader(audio)


def test_truncated_video_does_not_hang(tmp_path):
    _, ref, _ = _encode_pair(tmp_path, "coffee_192x108_420_12b_band", ".mkv", FFV1)
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(ref.read_bytes()[: ref.stat().st_size * 2 // 3])
    try:
        with VideoReader(cut) as reader:
            frames = list(reader)
    except AdmError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(frames) <= 3


def test_output_ending_inside_a_frame_warns(tmp_path, monkeypatch, caplog):
    """ffmpeg's output that stops partway through a plane: the whole planes before it are
    scored and the partial one is dropped with a warning naming the bytes it had."""
    case, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mkv", FFV1)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))
    planes = tmp_path / "planes.y"
    planes.write_bytes(b"".join(plane.tobytes() for plane in want))
    cut = 2 * want[0].nbytes + 100
    head = ["head", "-c", str(cut), str(planes)]  # exits 0, as ffmpeg would
    with VideoReader(ref, label="reference") as reader:
        monkeypatch.setattr(reader, "command", lambda count=None: head)
        with caplog.at_level(logging.WARNING, logger="admcuda"):
            got = list(reader)
    assert len(got) == 2 and all((a == b).all() for a, b in zip(got, want, strict=False))
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"reference file '{ref}': ffmpeg's output ended inside frame 2 (100 of "
        f"{want[0].nbytes} bytes); scoring the whole frames before it"
    ]


def test_missing_ffmpeg(tmp_path, monkeypatch):
    import builtins

    import admcuda.io.ffmpeg as video

    real_import = builtins.__import__

    def no_imageio(name, *args, **kwargs):
        if name == "imageio_ffmpeg":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_imageio)
    monkeypatch.setattr(video.shutil, "which", lambda name: None)
    path = tmp_path / "a.mp4"
    path.write_bytes(b"\x00" * 100)
    with pytest.raises(AdmError, match="needs ffmpeg: pip install imageio-ffmpeg"):
        VideoReader(path)


@pytest.mark.parametrize(
    ("pix_fmt", "expected"),
    [
        ("yuv420p", ("420", 8)),
        ("yuvj420p", ("420", 8)),
        ("yuv422p10le", ("422", 10)),
        ("yuv444p12be", ("444", 12)),
        ("yuva420p", ("420", 8)),
        ("yuv440p", ("440", 8)),
        ("gray", ("400", 8)),
        ("gray10le", ("400", 10)),
        ("gray16be", ("400", 16)),
        ("nv12", ("420", 8)),
        ("p010le", ("420", 10)),
        ("p016le", ("420", 16)),
        ("yuyv422", ("422", 8)),
    ],
)
def test_source_layout(pix_fmt, expected):
    assert source_layout(pix_fmt) == expected


@pytest.mark.parametrize("pix_fmt", ["rgb24", "bgra", "pal8", "gbrp10le", "bayer_rggb8", "none"])
def test_source_layout_refuses_non_yuv(pix_fmt):
    with pytest.raises(AdmError, match="not YUV or gray"):
        source_layout(pix_fmt)


def test_parse_probe():
    text = """Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'a.mp4':
  Metadata:
    major_brand     : isom
  Duration: 00:00:00.12, start: 0.000000, bitrate: 1787 kb/s
  Stream #0:0[0x1](und): Video: png (png  / 0x20676E70), rgb24(pc), 320x240, 90k tbr (attached pic)
  Stream #0:1[0x2](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, stereo, fltp
  Stream #0:2[0x3](und): Video: h264 (High 10) (avc1 / 0x31637661), yuv420p10le(tv, bt709, progressive), 1920x1080 [SAR 1:1 DAR 16:9], 1742 kb/s, 25 fps, 25 tbr, 12800 tbn (default)
"""  # noqa: E501
    info = parse_probe(text)
    assert info is not None
    assert (info.stream, info.codec, info.pix_fmt) == (2, "h264", "yuv420p10le")
    assert (info.width, info.height) == (1920, 1080)
    assert info.container == "mov,mp4,m4a,3gp,3g2,mj2"
    # duration 0.12 s times the video stream's 25 fps (the cover art's 90k tbr not taken)
    assert (info.duration, info.frame_rate, info.estimated_frames) == (0.12, 25.0, 3)
    assert parse_probe("Input #0, wav, from 'x.wav':\n  Stream #0:0: Audio: pcm_s16le\n") is None
    assert parse_probe("") is None


def test_parse_probe_frame_rate_and_duration_where_given():
    """A frame count is estimated only from a duration and a rate: ``tbr`` where there is
    no ``fps``, ``k`` as thousands; a ``Duration: N/A`` (a raw H.264 stream) gives none."""
    head = "Input #0, h264, from 'a.264':\n  Duration: {}, bitrate: N/A\n"
    stream = "  Stream #0:0: Video: h264 (High), yuv420p(progressive), 64x48, {}\n"
    info = parse_probe(head.format("N/A") + stream.format("25 fps, 25 tbr, 1200k tbn"))
    assert (info.duration, info.frame_rate, info.estimated_frames) == (None, 25.0, None)
    info = parse_probe(head.format("01:00:00.50") + stream.format("29.97 tbr, 90k tbn"))
    assert (info.duration, info.frame_rate) == (3600.5, 29.97)
    assert info.estimated_frames == round(3600.5 * 29.97)
    info = parse_probe(head.format("00:00:01.00") + stream.format("1k tbr"))
    assert info.estimated_frames == 1000


def test_a_video_estimates_its_frames(tmp_path):
    """VideoReader's estimate, the probe's duration times its rate, is the frame count
    decoding finds for a constant-rate encode; num_frames stays unknown."""
    case, ref, _ = _encode_pair(tmp_path, "astronaut_160x90_420_8b_boxnoise", ".mp4",
                                X264_LOSSLESS)  # fmt: skip
    with VideoReader(ref) as reader:
        frames = sum(1 for _ in reader.iter_luma())
        assert reader.num_frames is None and reader.estimated_frames == frames > 1


def test_parse_probe_counts_video_streams():
    """Two real video streams (cover art aside; a stream listed under two programs counts
    once): the first is read, and the count says there is another."""
    text = """Input #0, mpegts, from 'a.ts':
  Program 1
    Stream #0:0[0x100]: Video: h264 (High), yuv420p(progressive), 1920x1080, 25 fps
  Program 2
    Stream #0:0[0x100]: Video: h264 (High), yuv420p(progressive), 1920x1080, 25 fps
    Stream #0:2[0x102]: Video: hevc (Main), yuv420p(tv), 1280x720, 25 fps
  Stream #0:1[0x101]: Video: mjpeg, yuvj420p(pc), 320x240, 90k tbr (attached pic)
"""
    info = parse_probe(text)
    assert info is not None
    assert (info.stream, info.codec, info.width, info.video_streams) == (0, "h264", 1920, 2)
    one = parse_probe("\n".join(line for line in text.splitlines() if "hevc" not in line))
    assert one is not None and one.video_streams == 1


def test_several_video_streams_warn(tmp_path, capsys):
    """A file with two video streams is scored on the first, with one warning naming it and
    the count; a file with one gets none."""
    from admcuda.cli.main import main

    case = GOLDENS["astronaut_160x90_420_8b_boxnoise"]["case"]
    ref = encode(PAIRS / case["ref"], tmp_path / "ref.mkv", *_geometry(case), FFV1)
    dis = encode(PAIRS / case["dis"], tmp_path / "dis.mkv", *_geometry(case), FFV1)
    two = tmp_path / "two.mkv"
    subprocess.run(
        [ffmpeg_exe(), "-nostdin", "-loglevel", "error", "-i", str(dis), "-i", str(ref),
         "-map", "0", "-map", "1", "-c", "copy", str(two)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    outs, errs = [], []
    for k, dist in enumerate((dis, two)):
        out = tmp_path / f"o{k}.csv"
        assert main(["score", str(ref), str(dist), "-q", "--csv", "-o", str(out)]) == 0
        outs.append(out.read_text())
        errs.append(capsys.readouterr().err)
    assert outs[0] == outs[1]
    assert errs == [
        "",
        f"admcuda: warning: distorted file '{two}' has 2 video streams; scoring the first, "
        "stream 0 (ffv1, 160x90); to score another, copy it to a file of its own "
        "(ffmpeg -i IN -map 0:N -c copy OUT)\n",
    ]


@pytest.mark.parametrize(
    ("skip", "limit", "subsample"), [(0, None, 1), (3, None, 1), (2, 5, 1), (1, None, 3), (0, 4, 2)]
)
@pytest.mark.parametrize(
    "name", ["astronaut_160x90_420_8b_boxnoise", "coffee_192x108_420_12b_band"]
)
def test_read_into_slots_equals_the_raw_frames(tmp_path, name, skip, limit, subsample):
    """The pipeline's path: ffmpeg's planes decoded straight into a slot, in batches of 4,
    with the frame selection applied, equal the raw file's frames."""
    from admcuda.io.inputs import FrameStream

    case = GOLDENS[name]["case"]
    ref = encode(PAIRS / case["ref"], tmp_path / "ref.mkv", *_geometry(case), FFV1)
    want = luma_frames(PAIRS / case["ref"], *_geometry(case))[skip:]
    want = (want if limit is None else want[:limit])[::subsample]
    with VideoReader(ref) as reader:
        stream = FrameStream(reader, skip=skip, limit=limit, subsample=subsample)
        slot = np.full((4, case["h"], case["w"]), 7, dtype=reader.dtype)
        got = []
        while True:
            n = stream.read_into(slot, 4)
            got += [slot[k].copy() for k in range(n)]
            if n < 4:
                break
        stream.close()
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.array_equal(g, w), f"frame {k}"


def test_read_into_refuses_a_slot_of_another_size(tmp_path):
    from admcuda.io.inputs import FrameStream

    name = "astronaut_160x90_420_8b_boxnoise"
    case = GOLDENS[name]["case"]
    ref = encode(PAIRS / case["ref"], tmp_path / "ref.mkv", *_geometry(case), FFV1)
    with VideoReader(ref) as reader:
        stream = FrameStream(reader)
        with pytest.raises(AdmError, match=r"frame is uint8\[90, 160\], expected uint8\[90, 161\]"):
            stream.read_into(np.empty((2, 90, 161), np.uint8), 2)
        pipe = reader.open_pipe()
        try:
            with pytest.raises(ValueError, match="C-contiguous"):
                pipe.readinto(np.empty((90, 160), np.uint16))
        finally:
            pipe.close()
        stream.close()


# ---- display matrices and frame size changes ------------------------------------------------

SMALL_CASE = "astronaut_160x90_420_8b_boxnoise"


def _with_display_rotation(src, dst, degrees):
    """``src`` remuxed with a display matrix (ffmpeg's -display_rotation, counter-clockwise
    degrees), its pixels untouched."""
    subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", "-display_rotation",
         str(degrees), "-i", str(src), "-c", "copy", str(dst)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return dst


def _turned(src, dst, chain):
    """``src`` with its pixels turned by the filter ``chain``, losslessly, no matrix."""
    subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", "-i", str(src),
         "-vf", chain, *X264_LOSSLESS, str(dst)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return dst


def test_probe_reads_a_display_matrix_of_its_stream():
    text = (
        "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'a.mp4':\n"
        "  Stream #0:0[0x1](und): Video: h264 (High), yuv420p(progressive), 160x90, 25 fps\n"
        "    Side data:\n      Display Matrix: rotation of -180.00 degrees\n"
        "  Stream #0:1[0x2](und): Audio: aac, 48000 Hz, stereo\n"
        "    Side data:\n      Display Matrix: rotation of 90.00 degrees\n"
    )
    assert parse_probe(text).rotation == -180.0
    plain = text.replace("      Display Matrix: rotation of -180.00 degrees\n", "")
    assert parse_probe(plain).rotation is None  # the audio stream's is not the video's


def test_display_rotation_is_refused_without_a_choice(tmp_path):
    """A 180-degree display matrix on an MP4 was scored as stored pixels against an upright
    reference (adm2 0.37 where ffmpeg's libvmaf filter gives 0.98), with no warning."""
    case, ref, _ = _encode_pair(tmp_path, SMALL_CASE, ".mp4", X264_LOSSLESS)
    rotated = _with_display_rotation(ref, tmp_path / "rot.mp4", 180)
    with pytest.raises(AdmError) as info:
        VideoReader(rotated, label="distorted")
    assert str(info.value) == (
        f"distorted file '{rotated}' carries a 180° display rotation, which players and "
        "ffmpeg apply; admcuda reads stored pixels: give --autorotate to score it turned as "
        "ffmpeg turns it (ffmpeg decoder only), or --noautorotate to score the stored pixels"
    )
    with pytest.raises(AdmError, match="carries a 180° display rotation"):
        admcuda.score(ref, rotated, backend="cpu")


def test_autorotate_turns_as_ffmpeg_does_and_noautorotate_keeps_stored_pixels(tmp_path):
    case, ref, _ = _encode_pair(tmp_path, SMALL_CASE, ".mp4", X264_LOSSLESS)
    stored = luma_frames(PAIRS / case["ref"], *_geometry(case))
    for degrees, chain in ((180, "hflip,vflip"), (90, "transpose=cclock")):
        rotated = _with_display_rotation(ref, tmp_path / f"rot{degrees}.mp4", degrees)
        upright = _turned(ref, tmp_path / f"upright{degrees}.mp4", chain)
        with VideoReader(upright) as reader:
            want = list(reader)
        with VideoReader(rotated, autorotate=True) as reader:
            assert (reader.width, reader.height) == want[0].shape[::-1]
            got = list(reader)
        assert len(got) == len(want) and all((a == b).all() for a, b in zip(got, want, strict=True))
        with VideoReader(rotated, autorotate=False) as reader:
            assert all((a == b).all() for a, b in zip(reader, stored, strict=True))
    upright = tmp_path / "upright180.mp4"
    frames = admcuda.score(upright, tmp_path / "rot180.mp4", backend="cpu", autorotate=True)
    assert all(f["integer_adm2"] > 0.999 for f in frames)


def test_autorotate_is_ffmpeg_s_only(tmp_path):
    """NVDEC reads stored pixels: --autorotate with it is an error (found before NVDEC is
    asked); with "auto" the rotated file goes to ffmpeg; without a choice, refused alike."""
    from admcuda.io.inputs import _decoder_for_rotation

    _, ref, _ = _encode_pair(tmp_path, SMALL_CASE, ".mp4", X264_LOSSLESS)
    rotated = _with_display_rotation(ref, tmp_path / "rot.mp4", 180)
    with pytest.raises(AdmError, match="which NVDEC does not; use --decoder ffmpeg"):
        _decoder_for_rotation(rotated, "distorted", "nvdec", True)
    with pytest.raises(AdmError, match="carries a 180° display rotation"):
        _decoder_for_rotation(rotated, "distorted", "nvdec", None)
    assert _decoder_for_rotation(rotated, "distorted", "auto", True) == "ffmpeg"
    assert _decoder_for_rotation(rotated, "distorted", "nvdec", False) == "nvdec"
    assert _decoder_for_rotation(ref, "distorted", "nvdec", None) == "nvdec"


def _h264(src, dst, w, h, frames, size):
    """Annex-B H.264 of the first ``frames`` frames of raw 4:2:0 ``src``, scaled to ``size``."""
    subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "rawvideo",
         "-pix_fmt", "yuv420p", "-s", f"{w}x{h}", "-i", str(src), "-frames:v", str(frames),
         "-vf", f"scale={size}", "-c:v", "libx264", "-preset", "ultrafast", "-f", "h264",
         str(dst)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return dst


def test_a_change_of_frame_size_stops_with_the_frame_number(tmp_path):
    """Two H.264 streams of 160x90 and 320x180 one after the other: ffmpeg scales every
    frame to the first one's size by default, so frames were misread (four small ones as
    one large one) and scored with exit 0. Now the frame where the size changes is named.
    """
    case = GOLDENS[SMALL_CASE]["case"]
    w, h = case["w"], case["h"]
    src = PAIRS / case["ref"]
    small = _h264(src, tmp_path / "small.h264", w, h, 3, "160:90")
    large = _h264(src, tmp_path / "large.h264", w, h, 3, "320:180")
    joined = tmp_path / "joined.h264"
    # 24 small frames, then 3 large (with fewer small ones ffmpeg's probe reports 320x180)
    joined.write_bytes(small.read_bytes() * 8 + large.read_bytes())
    with VideoReader(joined, label="distorted") as reader:
        assert (reader.width, reader.height) == (160, 90)
        frames = reader.iter_luma()
        for _ in range(24):
            next(frames)
        with pytest.raises(AdmError) as info:
            next(frames)
    assert str(info.value) == (
        f"distorted file '{joined}' changes frame size at frame 24: from 160x90 to 320x180; "
        "admcuda scores frames of one size: cut it where the size changes, or scale it to "
        "one size (ffmpeg -i IN -vf scale=160:90 OUT)"
    )
    with VideoReader(joined) as reader:  # the frames before the change read as they are
        assert len(list(reader.iter_luma(0, 24))) == 24
    with pytest.raises(AdmError, match="changes frame size at frame 24"):
        admcuda.score(joined, joined, backend="cpu")

"""NVDEC decoding (admcuda.io.nvdec.reader) against ffmpeg's software decode.

``testdata/nvdec/`` holds small encodes (H.264, HEVC 8/10-bit, AV1 8/10-bit, VP9 8/10-bit,
with B-frames or alt-ref frames, one coded 320x192 for a 320x180 display) and ``nvdec.json``:
per file, ffmpeg's frame count and the sha256 of each frame's luma; per pair, libvmaf's 18 ADM
outputs per frame from ``admcuda.reference.compute_adm`` on ffmpeg's planes. Provenance (tool,
version, command, date) is in the JSON; ``testdata/nvdec/make_nvdec.py`` rewrites it all.

Three groups of tests:

- always: the golden file is consistent with the encodes; without PyNvVideoCodec (or CuPy)
  the module imports, reports NVDEC unavailable and refuses to open with one-line errors.
  Where imageio-ffmpeg is installed, ffmpeg reproduces the hashes and the reference the scores.
- always, on fakes: the reader's logic (display order, end-of-stream flush, crop to display
  size, copies out of reused surfaces, 10-bit shift, start/count, refusals) with a stand-in
  PyNvVideoCodec and a NumPy stand-in for CuPy.
- ``cuda``: on a GPU with PyNvVideoCodec, every frame NVDEC decodes equals ffmpeg's luma and
  the CUDA engine's scores from NVDEC frames equal the reference's; skipped elsewhere.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import json
import math
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from admcuda.errors import AdmError
from admcuda.io.nvdec import h264, hevc, planner
from admcuda.io.nvdec import reader as nvdec

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "testdata" / "nvdec"
GOLDEN = json.loads((DATA / "nvdec.json").read_text())
FILES: dict[str, dict] = GOLDEN["files"]
PAIRS: list[dict] = GOLDEN["pairs"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fresh_nvdec():
    """Forget what the module found about the binding and the GPU, before and after."""
    nvdec._load_binding.cache_clear()
    nvdec._unavailable_reason.cache_clear()
    yield nvdec
    nvdec._load_binding.cache_clear()
    nvdec._unavailable_reason.cache_clear()


# -- the golden file


def test_golden_file_matches_the_encodes():
    prov = GOLDEN["provenance"]
    for key in ("date", "ffmpeg", "luma_command", "scores", "script"):
        assert prov[key], key
    on_disk = {p.name for p in DATA.iterdir() if p.suffix in (".mp4", ".mkv", ".webm")}
    assert on_disk == set(FILES)
    for name, f in FILES.items():
        data = (DATA / name).read_bytes()
        assert len(data) == f["bytes"] and sha256(data) == f["sha256"], name
        assert f["codec"] in nvdec.CODECS and f["bitdepth"] in (8, 10), name
        assert len(f["luma_sha256"]) == f["frames"] > 0, name
        # every frame differs, so a dropped, repeated or swapped frame changes a hash
        assert len(set(f["luma_sha256"])) == f["frames"], name
    for pair in PAIRS:
        ref, dis = FILES[pair["ref"]], FILES[pair["dis"]]
        assert ref["required"] and dis["required"]
        assert (ref["width"], ref["height"]) == (dis["width"], dis["height"])
        assert ref["bitdepth"] == dis["bitdepth"] == pair["bitdepth"]
        assert ref["frames"] == dis["frames"] == pair["frames"]
        assert len(pair["scores"]) == 18
        for values in pair["scores"].values():
            assert len(values) == pair["frames"]
            assert all(math.isfinite(v) for v in values)
    assert {f["codec"] for f in FILES.values() if f["required"]} == {"H264", "HEVC"}
    assert {(f["codec"], f["bitdepth"]) for f in FILES.values()} >= {
        ("H264", 8), ("HEVC", 8), ("HEVC", 10), ("AV1", 8), ("AV1", 10), ("VP9", 8), ("VP9", 10)
    }  # fmt: skip


def ffmpeg_luma(path: Path, f: dict) -> np.ndarray:
    """ffmpeg's luma planes, by the golden file's command."""
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error",
           "-i", str(path), "-map", "0:v:0", "-vf", "extractplanes=y",
           "-pix_fmt", "gray" if f["bitdepth"] == 8 else "gray10le",
           "-fps_mode", "passthrough", "-f", "rawvideo", "-"]  # fmt: skip
    data = subprocess.run(cmd, check=True, capture_output=True).stdout
    dtype = np.dtype("u1") if f["bitdepth"] == 8 else np.dtype("<u2")
    return np.frombuffer(data, dtype).reshape(-1, f["height"], f["width"])


@pytest.mark.parametrize("name", sorted(FILES))
def test_ffmpeg_reproduces_the_luma_hashes(name):
    f = FILES[name]
    luma = ffmpeg_luma(DATA / name, f)
    assert [sha256(p.tobytes()) for p in luma] == f["luma_sha256"]


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p["dis"])
def test_reference_reproduces_the_scores(pair):
    from admcuda.reference import compute_adm

    from admcuda.options import AdmOptions

    refs = ffmpeg_luma(DATA / pair["ref"], FILES[pair["ref"]])
    diss = ffmpeg_luma(DATA / pair["dis"], FILES[pair["dis"]])
    opts = AdmOptions()
    got = [compute_adm(r, d, pair["bitdepth"], opts) for r, d in zip(refs, diss, strict=True)]
    for key, values in pair["scores"].items():
        assert [g[key] for g in got] == values, key


# -- without PyNvVideoCodec


def test_unavailable_without_the_binding(fresh_nvdec, monkeypatch):
    monkeypatch.setitem(sys.modules, "PyNvVideoCodec", None)
    path = DATA / "h264_8b_320x180.mp4"
    assert nvdec.nvdec_available() is False
    ok, reason = nvdec.nvdec_supports(path)
    assert not ok and "PyNvVideoCodec is not installed" in reason and "\n" not in reason
    assert 'pip install ".[nvdec]"' in reason
    with pytest.raises(AdmError) as info:
        nvdec.open_nvdec(path, "distorted")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"distorted file {str(path)!r}: NVDEC decoding is not available")


def test_missing_file_is_named_before_the_binding(fresh_nvdec, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "PyNvVideoCodec", None)
    with pytest.raises(AdmError, match="reference file .*nope.mp4' not found"):
        nvdec.open_nvdec(tmp_path / "nope.mp4", "reference")


def test_imports_without_cupy_or_the_binding():
    code = (
        "import sys; sys.modules['cupy'] = None; sys.modules['PyNvVideoCodec'] = None\n"
        "import admcuda.io.nvdec.reader as n\n"
        "assert n.nvdec_available() is False\n"
        "print(n._unavailable_reason())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "PyNvVideoCodec is not installed" in done.stdout


def test_no_cupy_is_a_reason(fresh_nvdec, monkeypatch):
    monkeypatch.setitem(sys.modules, "PyNvVideoCodec", types.ModuleType("PyNvVideoCodec"))
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert nvdec._unavailable_reason().startswith("CuPy does not import")


def test_binding_messages_become_one_line():
    exc = RuntimeError(
        "CreateFormatContext : \nError code : -2\nError Type : avformat_open_input returned "
        'error " No such file or directory"\nat /project/src/FFmpegDemuxer.h:984\n'
    )
    assert nvdec._one_line(exc) == (
        'CreateFormatContext; Error code : -2; Error Type : avformat_open_input returned error "'
        ' No such file or directory"'
    )
    assert len(nvdec._one_line(RuntimeError("x" * 1000))) == 300


# -- the reader's logic, on a stand-in binding


class Enum:
    """A pybind11 enum member, as far as the reader uses one."""

    def __init__(self, name: str) -> None:
        self.name = name


# SPS NAL units written by x264 (imageio-ffmpeg's ffmpeg 9.0.2): progressive High 4:2:0 8-bit
# (from testdata/nvdec/h264_8b_320x180.mp4) and interlaced (-x264-params interlaced=1)
SPS_PROGRESSIVE = bytes.fromhex("6764000dacd941419f9f0110000003001000000303c0f1429960")
SPS_INTERLACED = bytes.fromhex("67640015acd9444fcb808800000300080000030190f8a14cb0")


class Packet:
    """A demuxed packet: ``bsl`` bytes at address ``bsl_data``, as the binding gives them,
    with its presentation time and key flag."""

    def __init__(self, payload: bytes = b"", display: int = -1, key: bool = False) -> None:
        self._buffer = ctypes.create_string_buffer(payload, len(payload) or 1)
        self.bsl, self.bsl_data = len(payload), ctypes.addressof(self._buffer)
        self.display = display
        self.pts, self.key = pts_of(display), int(key)


def pts_of(display: int) -> int:
    """The fakes' presentation time of frame ``display``: not the index itself."""
    return 1000 + 40 * display


def closed_gop_order(frames: int, gop: int) -> list[int]:
    """Decode order of ``frames`` in closed GOPs of ``gop``: in each, the first frame, then
    every third frame ahead of the two shown before it."""
    order = []
    for a in range(0, frames, gop):
        b = min(a + gop, frames)
        order.append(a)
        for anchor in range(a + 3, b + 2, 3):
            shown = [f for f in (min(anchor, b - 1), anchor - 2, anchor - 1) if a < f < b]
            order += [f for f in dict.fromkeys(shown) if f not in order]
    return order


class FakeVideo:
    """What the stand-in demuxer and decoder make of a registered file."""

    def __init__(
        self,
        codec="HEVC",
        width=40,
        height=30,
        fmt="P016",
        frames=10,
        order=None,
        shift=6,
        buggy_strides=False,
        fail_at=None,
        out_width=None,
        chroma="420",
        low_bits_at=None,
        caps=None,
        sps=SPS_PROGRESSIVE,
        idr_packets=None,
        drop_display=None,
        other_fmt_from=None,
        size_from=None,
        fail_text="Decode failed\nError code : 7\nat /project/NvDecoder.cpp:1",
        sps_at=None,
    ):
        self.codec, self.width, self.height, self.fmt = codec, width, height, fmt
        self.frames, self.shift, self.buggy_strides = frames, shift, buggy_strides
        self.fail_at, self.out_width, self.chroma = fail_at, out_width, chroma
        self.low_bits_at, self.sps = low_bits_at, sps
        # which packets hold an IDR picture (all if None) and a frame the decoder loses
        self.idr_packets, self.drop_display = idr_packets, drop_display
        self.other_fmt_from = other_fmt_from  # frames from here on in the other format
        self.size_from = size_from  # (frame, width, height): frames from there on that size
        self.fail_text = fail_text  # what the binding raises at packet fail_at
        self.sps_at = sps_at or {}  # packet -> an SPS it carries (besides the first's)
        self.caps = caps if caps is not None else {
            "supported": 1, "num_decoder_engines": 7,
            "width_min": 32, "height_min": 16, "width_max": 8192, "height_max": 8192,
        }  # fmt: skip
        # decode order with B-frames: each anchor before the frames shown ahead of it
        self.order = order if order is not None else [0, 3, 1, 2, 6, 4, 5, 9, 7, 8][:frames]
        assert sorted(self.order) == list(range(frames))
        self.bitdepth = 8 if fmt == "NV12" else 16 - shift
        self.decoders: list = []

    def fmt_of(self, i: int) -> str:
        if self.other_fmt_from is None or i < self.other_fmt_from:
            return self.fmt
        return "NV12" if self.fmt == "P016" else "P016"

    def luma(self, i: int) -> np.ndarray:
        rng = np.random.default_rng(i)
        dtype = np.uint8 if self.bitdepth == 8 else np.uint16
        return rng.integers(0, 1 << self.bitdepth, (self.height, self.width)).astype(dtype)


class FakeFrame:
    def __init__(self, fmt: str, surface: np.ndarray, pts: int) -> None:
        self.format = Enum(fmt)
        self._surface = surface
        self._pts = pts

    def getPTS(self):  # noqa: N802 - the binding's name
        return self._pts

    def __dlpack__(self, **kwargs):
        return self._surface.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._surface.__dlpack_device__()


class FakeDemuxer:
    def __init__(self, video: FakeVideo) -> None:
        self.video = video

    def GetNvCodecId(self):
        return Enum(self.video.codec)

    def ChromaFormat(self):
        return Enum(self.video.chroma)

    def Width(self):
        return self.video.width

    def Height(self):
        return self.video.height

    def __iter__(self):
        for n, i in enumerate(self.video.order):
            if n == self.video.fail_at:
                raise RuntimeError(self.video.fail_text)
            header = b"\0\0\0\1" + self.video.sps if n == 0 and self.video.sps else b""
            if n in self.video.sps_at:
                header = b"\0\0\0\1" + self.video.sps_at[n]
            idr = self.video.idr_packets is None or n in self.video.idr_packets
            if self.video.codec == "HEVC":
                nal = b"\x26\x01" if idr else b"\x02\x01"  # IDR_W_RADL (19) or TRAIL_R (1)
            else:
                nal = b"\x65\x88" if idr else b"\x41\x9a"  # IDR slice (5) or non-IDR (1)
            yield Packet(header + b"\0\0\1" + nal + b"\x84", i, key=idr)
        yield Packet()


class FakeDecoder:
    """Holds frames back until displayable (one frame of delay, as NATIVE latency does),
    outputs them in display order and, like NvDecoder, writes each call's frames into the
    same few buffers: a reader that kept views would see them overwritten."""

    def __init__(self, video: FakeVideo, **kwargs) -> None:
        assert kwargs["usedevicememory"] is True
        assert kwargs["latency"].name == "NATIVE"
        assert kwargs["codec"].name == video.codec
        assert kwargs["cudacontext"] == 0xC0
        self.stream = kwargs["cudastream"]
        self.video = video
        self.pending: set[int] = set()
        self.shown = 0  # frames output so far
        self.pool: list[np.ndarray] = []
        video.decoders.append(self)

    def _surface(self, slot: int, i: int) -> np.ndarray:
        v = self.video
        w, h = v.out_width or v.width, v.height
        if v.size_from is not None and i >= v.size_from[0]:
            w, h = v.size_from[1:]
        rows = h + h // 2
        fmt = v.fmt_of(i)
        dtype = np.uint8 if fmt == "NV12" else np.uint16
        while len(self.pool) <= slot:
            self.pool.append(np.zeros(2 * rows * w, dtype))
        if self.pool[slot].dtype != dtype or self.pool[slot].size < 2 * rows * w:
            self.pool[slot] = np.zeros(2 * rows * w, dtype)  # the stream changed format or size
        buf = self.pool[slot]
        packed = buf[: rows * w].reshape(rows, w)
        packed[:] = np.iinfo(dtype).max  # chroma rows: anything but luma
        luma = np.resize(v.luma(i)[:, :w], (h, w))
        if fmt == "NV12":
            packed[:h] = luma
        else:
            packed[:h] = luma << v.shift
            if i == v.low_bits_at:
                packed[0, 0] |= 1
        if v.buggy_strides:
            item = buf.itemsize
            return np.lib.stride_tricks.as_strided(buf, (rows, w), (w * item, 2 * item))
        return packed

    def Decode(self, packet: Packet) -> list[FakeFrame]:
        caps = self.video.caps
        if isinstance(caps, dict) and (
            caps.get("supported", 1) == 0
            or self.video.width < caps.get("width_min", 0)
            or self.video.height < caps.get("height_min", 0)
        ):  # as NVDEC's decoder refuses a stream its capabilities rule out (H200)
            raise RuntimeError("HandleVideoSequence : \nError code : 801\nat /NvDecoder.cpp:1")
        flush = packet.bsl == 0
        if not flush:
            self.pending.add(packet.display)
        shown = []
        # the earliest frame fed, once another is held back (or at the flush)
        while self.pending and (flush or len(self.pending) > 1):
            first = min(self.pending)
            self.pending.discard(first)
            if first != self.video.drop_display:
                shown.append(first)
        self.shown += len(shown)
        return [
            FakeFrame(self.video.fmt_of(i), self._surface(k, i), pts_of(i))
            for k, i in enumerate(shown)
        ]


def fake_binding(videos: dict[str, FakeVideo]) -> types.ModuleType:
    """A stand-in PyNvVideoCodec; the capabilities and decoders it gives are those of the file
    demuxed last, as the reader asks for them right after opening a demuxer."""
    nvc = types.ModuleType("PyNvVideoCodec")
    nvc.DisplayDecodeLatencyType = types.SimpleNamespace(NATIVE=Enum("NATIVE"))
    last: list[FakeVideo] = []

    def create_demuxer(filename):
        if filename not in videos:
            raise RuntimeError("CreateFormatContext : \nError code : -1094995529\nat /x.h:1")
        last[:] = [videos[filename]]
        return FakeDemuxer(videos[filename])

    def caps(gpuid, codec, chromaformat, bitdepth):
        assert chromaformat.name == "420" and bitdepth == 8 and codec.name == last[0].codec
        if last[0].caps == "raise":
            raise RuntimeError("cuvidGetDecoderCaps failed")
        return last[0].caps

    nvc.CreateDemuxer = create_demuxer
    nvc.GetDecoderCaps = caps
    nvc.CreateDecoder = lambda gpuid, **kw: FakeDecoder(last[0], **kw)
    return nvc


def fake_cupy() -> types.ModuleType:
    cp = types.ModuleType("cupy")
    streams = itertools.count(0x5000, 0x10)

    class Context:
        def __init__(self, *args, **kwargs) -> None:
            self.synced = 0
            self.ptr = next(streams)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def synchronize(self):
            self.synced += 1

    cp.from_dlpack = np.from_dlpack
    cp.lib = np.lib
    cp.cuda = types.SimpleNamespace(
        Device=Context,
        Stream=Context,
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1),
        driver=types.SimpleNamespace(ctxGetCurrent=lambda: 0xC0),
    )
    return cp


class FakeFinisher:
    """What nvdec._Finisher's kernels do, in NumPy, at once (the kernels are tested on the
    GPU); it keeps the group rule, in groups of 3 frames, and notes the stream it was given."""

    GROUP = 3
    streams: list = []

    def __init__(self, stream, low_bits_error) -> None:
        self.stream, self.error, self.pending = stream, low_bits_error, []
        FakeFinisher.streams.append(stream.ptr)

    @property
    def full(self):
        return len(self.pending) >= self.GROUP

    def add(self, view, fmt, index):
        assert len(self.pending) < self.GROUP
        finer = fmt == "P016" and bool((view & np.uint16(nvdec._P016_LOW_BITS)).any())
        plane = view >> np.uint16(nvdec.P016_SHIFT) if fmt == "P016" else view
        self.pending.append((index, np.array(plane, order="C"), finer))

    def drain(self):
        pending, self.pending = self.pending, []
        self.stream.synchronize()
        for index, _, finer in pending:
            if finer:
                raise self.error(index)
        return [plane for _, plane, _ in pending]


@pytest.fixture
def fake(fresh_nvdec, monkeypatch, tmp_path):
    """Register stand-in videos: ``path = fake(FakeVideo(...))`` gives a file to open."""
    videos: dict[str, FakeVideo] = {}
    monkeypatch.setitem(sys.modules, "PyNvVideoCodec", fake_binding(videos))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())
    monkeypatch.setattr(nvdec, "_Finisher", FakeFinisher)
    monkeypatch.setattr(FakeFinisher, "streams", [])
    monkeypatch.setattr(nvdec, "_nvcuvid_reason", lambda: "")

    def register(video: FakeVideo) -> Path:
        path = tmp_path / f"clip{len(videos)}.mp4"
        path.write_bytes(b"\0" * 64)
        videos[str(path)] = video
        return path

    return register


@pytest.mark.parametrize("fmt", ["NV12", "P016"])
def test_fake_frames_in_display_order_flushed_cropped_and_copied(fake, fmt):
    video = FakeVideo(codec="H264" if fmt == "NV12" else "HEVC", fmt=fmt)
    reader = nvdec.open_nvdec(fake(video), "distorted")
    assert (reader.kind, reader.pixel_format, reader.num_frames) == ("nvdec", "420", None)
    assert (reader.width, reader.height, reader.bitdepth) == (40, 30, video.bitdepth)
    got = list(reader)  # all kept: the decoder's buffers were rewritten meanwhile
    assert len(got) == video.frames
    for i, plane in enumerate(got):
        assert plane.shape == (30, 40) and plane.flags.c_contiguous
        assert plane.dtype == (np.uint8 if fmt == "NV12" else np.uint16)
        np.testing.assert_array_equal(plane, video.luma(i), err_msg=f"frame {i}")
    # the last frames only come out of the end-of-stream flush
    assert video.decoders[-1].shown == video.frames and not reader._sessions


def test_fake_start_and_count(fake):
    video = FakeVideo()
    reader = nvdec.open_nvdec(fake(video))
    got = list(reader.iter_luma(start=3, count=4))
    assert len(got) == 4
    for i, plane in zip(range(3, 7), got, strict=True):
        np.testing.assert_array_equal(plane, video.luma(i))
    assert list(reader.iter_luma(count=0)) == []
    assert list(reader.iter_luma(start=50)) == []
    assert len(list(reader.iter_luma(start=8, count=5))) == 2


def test_fake_p016_with_a_wrong_column_stride(fake):
    video = FakeVideo(buggy_strides=True)
    for i, plane in enumerate(nvdec.open_nvdec(fake(video))):
        np.testing.assert_array_equal(plane, video.luma(i))


def test_fake_12_bit_is_refused_at_open(fake):
    with pytest.raises(AdmError, match="finer than 10 bits"):
        nvdec.open_nvdec(fake(FakeVideo(shift=4)))


def test_fake_sessions_finish_frames_on_their_decoders_stream(fake):
    video = FakeVideo()
    reader = nvdec.open_nvdec(fake(video))
    assert len(list(reader)) == len(list(reader.iter_luma(start=2))) + 2
    assert len(video.decoders) == 2  # the opening session's, then the second iteration's
    assert [d.stream for d in video.decoders] == FakeFinisher.streams


def test_fake_bit_depth_change_stops_the_iteration(fake):
    reader = nvdec.open_nvdec(fake(FakeVideo(other_fmt_from=4)))
    assert reader.bitdepth == 10
    with pytest.raises(AdmError, match="frame 4 is a NV12 surface, but the stream began 10-bit"):
        list(reader)


@pytest.mark.parametrize("size", [(48, 30), (40, 36), (32, 24)])
def test_fake_size_change_stops_the_iteration_naming_the_frame(fake, size):
    path = fake(FakeVideo(size_from=(6, *size)))
    reader = nvdec.open_nvdec(path)
    frames = iter(reader)
    # frames are handed on in groups: those before the change may or may not come first
    with pytest.raises(AdmError) as info:
        for _ in range(7):
            next(frames)
    new = f"{size[0]}x{size[1]}"
    assert str(info.value) == (
        f"input file '{path}' changes frame size at frame 6: from 40x30 to {new}; admcuda "
        "scores frames of one size: cut it where the size changes, or scale it to one size "
        "(ffmpeg -i IN -vf scale=40:30 OUT)"
    )
    assert len(list(nvdec.open_nvdec(path).iter_luma(0, 6))) == 6


SPS_352X288 = bytes.fromhex("6764000dacd9416096c044000003000400000300f03c50a658")


# HEVC SPS NAL units: testdata/nvdec/hevc_8b_320x180.mp4's, and x265's for 96x64 frames
# in 3 temporal sub-layers (-x265-params temporal-layers=3)
HEVC_SPS_320X180 = bytes.fromhex(
    "42010101600000030090000003000003003ca00a080b9f796566924caf016808000003000800000300f040"
)
HEVC_SPS_96X64 = bytes.fromhex(
    "42010401600000030090000003000003001e0000a0308105965652b295952930bc05a02000000300200000030321"
)


def test_h264_sps_frame_sizes():
    assert h264.sps_size(SPS_PROGRESSIVE) == (320, 180)  # 192 rows, the last 12 cropped
    assert h264.sps_size(SPS_352X288) == (352, 288)


def test_hevc_sps_frame_sizes():
    assert hevc.sps_size(HEVC_SPS_320X180) == (320, 180)  # its conformance window applied
    assert hevc.sps_size(HEVC_SPS_96X64) == (96, 64)  # sub-layers in its profile_tier_level
    with pytest.raises(ValueError, match="not an SPS"):
        hevc.sps_size(SPS_PROGRESSIVE)


@pytest.mark.parametrize("size", ["322x182", "96x64", "1920x1080"])
@pytest.mark.parametrize("params", ["", "temporal-layers=3"])
def test_hevc_sps_frame_sizes_of_x265_streams(tmp_path, size, params):
    ffmpeg = pytest.importorskip("imageio_ffmpeg").get_ffmpeg_exe()
    dst = tmp_path / "t.hevc"
    extra = ["-x265-params", params] if params else []
    subprocess.run(
        [ffmpeg, "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"testsrc=size={size}:rate=25", "-frames:v", "2", "-pix_fmt", "yuv420p", "-c:v",
         "libx265", "-preset", "ultrafast", *extra, "-f", "hevc", str(dst)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    sps = [n for n in h264.annexb_nals(dst.read_bytes()) if (n[0] >> 1) & 0x3F == 33]
    assert hevc.sps_size(sps[0]) == tuple(int(v) for v in size.split("x"))


@pytest.mark.parametrize(
    ("codec", "first", "later", "new"),
    [
        ("H264", SPS_PROGRESSIVE, SPS_352X288, "352x288"),
        ("H264", SPS_PROGRESSIVE, SPS_PROGRESSIVE, None),
        ("HEVC", HEVC_SPS_320X180, HEVC_SPS_96X64, "96x64"),
        ("HEVC", HEVC_SPS_320X180, HEVC_SPS_320X180, None),
    ],
)
def test_fake_sps_of_another_size_stops_at_its_frame(fake, codec, first, later, new):
    """A later SPS of another size than the first stops the read at its packet, the new
    size's first frame; one of the same size is no change."""
    order = list(range(10))
    path = fake(FakeVideo(codec=codec, fmt="NV12", order=order, sps=first, sps_at={6: later}))
    reader = nvdec.open_nvdec(path)
    if new is None:
        assert len(list(reader)) == 10
        return
    with pytest.raises(AdmError) as info:
        list(reader)
    assert str(info.value) == (
        f"input file '{path}' changes frame size at frame 6: from 40x30 to {new}; admcuda "
        "scores frames of one size: cut it where the size changes, or scale it to one size "
        "(ffmpeg -i IN -vf scale=40:30 OUT)"
    )


def test_fake_larger_frames_stopping_the_decoder_are_a_size_change(fake):
    text = (
        "ReconfigureDecoder : \nError code : 801\nError Type : Reconfigure Not supported "
        "when width/height > maxwidth/maxheight\nat /project/NvDecoder.cpp:1"
    )  # PyNvVideoCodec 2.2's error where a later sequence is larger
    path = fake(FakeVideo(fail_at=7, fail_text=text))
    with pytest.raises(AdmError) as info:
        list(nvdec.open_nvdec(path))
    assert str(info.value) == (
        f"input file '{path}' changes frame size, to a larger one than 40x30, after about 6 "
        "frames (NVDEC: ReconfigureDecoder; Error code : 801; Error Type : Reconfigure Not "
        "supported when width/height > maxwidth/maxheight); admcuda scores frames of one "
        "size: cut it where the size changes, or scale it to one size (ffmpeg -i IN -vf "
        "scale=40:30 OUT)"
    )


def test_fake_12_bit_samples_later_stop_the_iteration(fake):
    reader = nvdec.open_nvdec(fake(FakeVideo(low_bits_at=5)))
    with pytest.raises(AdmError, match="frame 5 has samples finer than 10 bits"):
        list(reader)


def test_fake_refuses_other_codecs_and_layouts(fake):
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="MPEG2")))
    assert not ok and "is MPEG2" in reason and "use the ffmpeg decoder" in reason
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="VP9", chroma="444")))
    assert not ok and "VP9 444" in reason
    with pytest.raises(AdmError, match="YUV444 surfaces"):
        nvdec.open_nvdec(fake(FakeVideo(codec="AV1", fmt="YUV444")))
    with pytest.raises(AdmError, match=r"shape \(45, 36\), not the 40x30"):
        nvdec.open_nvdec(fake(FakeVideo(codec="H264", out_width=36)))
    with pytest.raises(AdmError, match="width 16 is too small"):
        nvdec.open_nvdec(fake(FakeVideo(codec="HEVC", width=16)))


def test_fake_supports_describes_the_stream(fake):
    assert nvdec.nvdec_supports(fake(FakeVideo())) == (True, "HEVC 40x30 10-bit")
    assert nvdec.open_nvdec(fake(FakeVideo(codec="AV1"))).nvdec_engines == 7


def test_fake_decoder_capabilities(fake):
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="AV1", caps={"supported": 0})))
    assert not ok and "NVDEC on GPU 0 does not decode AV1 4:2:0" in reason
    small = {"supported": 1, "width_min": 144, "height_min": 144}
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="HEVC", caps=small)))
    assert not ok and "40x30 is outside what NVDEC on GPU 0 decodes for HEVC 4:2:0" in reason
    # a failing query is no verdict: the decoder checks when it starts
    reader = nvdec.open_nvdec(fake(FakeVideo(codec="VP9", caps="raise")))
    assert reader.nvdec_engines is None and len(list(reader)) == 10


def test_fake_capabilities_asked_only_when_needed(fake):
    """NVDEC's capabilities (0.2 s a query on an H200, the interpreter lock held) are not
    asked where the stream decodes; asked for a refusal's reason or for ``nvdec_engines``,
    once per codec."""
    nvc = sys.modules["PyNvVideoCodec"]
    asked = []
    inner = nvc.GetDecoderCaps

    def counting(**kw):
        asked.append(kw["codec"].name)
        return inner(**kw)

    nvc.GetDecoderCaps = counting
    readers = [nvdec.open_nvdec(fake(FakeVideo(codec="HEVC"))) for _ in range(3)]
    assert asked == [] and len(list(readers[0])) == 10
    assert [r.nvdec_engines for r in readers] == [7, 7, 7] and asked == ["HEVC"]
    with pytest.raises(AdmError, match="does not decode AV1"):
        nvdec.open_nvdec(fake(FakeVideo(codec="AV1", caps={"supported": 0})))
    assert asked == ["HEVC", "AV1"]
    # a decoder failure the capabilities do not explain keeps its own message
    with pytest.raises(AdmError, match="after 0 frames .*Error code : 7"):
        nvdec.open_nvdec(fake(FakeVideo(codec="VP9", fail_at=0)))
    assert asked == ["HEVC", "AV1", "VP9"]


def test_fake_binding_errors_become_one_line(fake, tmp_path):
    reader = nvdec.open_nvdec(fake(FakeVideo(fail_at=6)), "reference")
    with pytest.raises(AdmError) as info:
        list(reader)
    message = str(info.value)
    assert "\n" not in message and "/project" not in message
    assert message.startswith("NVDEC failed decoding reference file ")
    assert "after 5 frames (HEVC on GPU 0): Decode failed; Error code : 7" in message
    unknown = tmp_path / "unknown.mp4"
    unknown.write_bytes(b"x")
    with pytest.raises(AdmError, match="cannot be read by PyNvVideoCodec's demuxer: Create"):
        nvdec.open_nvdec(unknown)


@pytest.mark.parametrize(("start", "count"), [(0, None), (0, 1), (0, 3), (1, None), (4, 2)])
def test_fake_first_iteration_goes_on_in_the_opening_session(fake, start, count):
    video = FakeVideo()
    reader = nvdec.open_nvdec(fake(video))
    assert len(video.decoders) == 1 and len(reader._sessions) == 1  # paused on frame 0
    got = list(reader.iter_luma(start, count))
    assert len(video.decoders) == 1 and not reader._sessions
    want = range(start, video.frames if count is None else start + count)
    assert len(got) == len(want)
    for i, plane in zip(want, got, strict=True):
        np.testing.assert_array_equal(plane, video.luma(i), err_msg=f"frame {i}")
    again = list(reader.iter_luma())  # a later iteration: a session of its own
    assert len(video.decoders) == 2 and len(again) == video.frames
    np.testing.assert_array_equal(again[0], video.luma(0))


def test_fake_close_releases_the_opening_session(fake):
    video = FakeVideo()
    reader = nvdec.open_nvdec(fake(video))
    reader.close()
    assert not reader._sessions and reader._probe is None
    got = list(reader)  # reopened from the first packet
    assert len(video.decoders) == 2 and len(got) == video.frames


def test_fake_close_ends_an_iteration(fake):
    reader = nvdec.open_nvdec(fake(FakeVideo()))
    frames = reader.iter_luma()
    next(frames)
    assert len(reader._sessions) == 1
    reader.close()
    assert not reader._sessions
    assert list(frames) == []


def test_fake_h264_needs_a_progressive_8_bit_420_sps(fake):
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="H264", fmt="NV12", sps=None)))
    assert not ok and "no H.264 sequence parameter set in its first 16 packets" in reason
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="H264", sps=SPS_INTERLACED)))
    assert not ok and "is interlaced H.264 (field or MBAFF coding)" in reason
    ok, reason = nvdec.nvdec_supports(fake(FakeVideo(codec="H264", sps=b"\x67\x64")))
    assert not ok and "sequence parameter set cannot be read" in reason


class BitWriter:
    def __init__(self) -> None:
        self.bits: list[int] = []

    def u(self, n: int, value: int) -> BitWriter:
        self.bits += [(value >> (n - 1 - i)) & 1 for i in range(n)]
        return self

    def ue(self, value: int) -> BitWriter:
        code = value + 1
        return self.u(code.bit_length() - 1, 0).u(code.bit_length(), code)

    def se(self, value: int) -> BitWriter:
        return self.ue(2 * value - 1 if value > 0 else -2 * value)

    def nal(self) -> bytes:
        bits = self.bits + [1] + [0] * (-(len(self.bits) + 1) % 8)  # rbsp trailing bits
        rbsp = bytes(int("".join(map(str, bits[i : i + 8])), 2) for i in range(0, len(bits), 8))
        out = bytearray()
        for byte in rbsp:  # emulation prevention (7.4.1)
            if len(out) >= 2 and out[-2:] == b"\0\0" and byte <= 3:
                out.append(3)
            out.append(byte)
        return b"\x67" + bytes(out)


# -- one stream on several sessions


def test_plan_cuts_only_before_idr_packets_shown_after_all_earlier_ones():
    order = closed_gop_order(12, 4)
    pts = [pts_of(i) for i in order]
    idr = [i % 4 == 0 for i in order]
    plan = planner.plan_segments(pts, idr, min_frames=4)
    assert [(g.packet, g.start) for g in plan] == [(0, 0), (4, 4), (8, 8)]
    assert [g.pts for g in plan] == [tuple(pts_of(i) for i in range(a, a + 4)) for a in (0, 4, 8)]
    # no segment shorter than min_frames, the last included
    assert [g.start for g in planner.plan_segments(pts, idr, min_frames=3)] == [0, 4, 8]
    assert planner.plan_segments(pts, idr, min_frames=5) is None
    # no IDR past the first, or an IDR that a frame decoded before it is shown after: no cut
    assert planner.plan_segments(pts, [True] + [False] * 11, min_frames=4) is None
    late = [pts_of(i) for i in (0, 1, 2, 5, 4, 3, 6, 7, 8, 9, 10, 11)]
    cut = planner.plan_segments(late, [n in (0, 4, 8) for n in range(12)], min_frames=4)
    assert [g.start for g in cut] == [0, 8]
    # timestamps unknown or repeated: no plan
    assert planner.plan_segments([None, *pts[1:]], idr, min_frames=4) is None
    assert planner.plan_segments([pts[0], *pts[:-1]], idr, min_frames=4) is None


def test_plan_with_a_length_cuts_even_shares_at_the_nearest_idr():
    def gops(n, gop):
        order = closed_gop_order(n, gop)
        return [pts_of(i) for i in order], [i % gop == 0 for i in order]

    pts, idr = gops(600, 60)
    assert [g.start for g in planner.plan_segments(pts, idr)] == list(range(0, 600, 60))
    assert [g.start for g in planner.plan_segments(pts, idr, length=150)] == [0, 120, 300, 420]
    assert [g.start for g in planner.plan_segments(pts, idr, length=300)] == [0, 300]
    assert planner.plan_segments(pts, idr, length=600) is None
    pts, idr = gops(3000, 60)
    plan = planner.plan_segments(pts, idr, length=512)
    sizes = [len(g.pts) for g in plan]
    assert len(plan) == 6 and sum(sizes) == 3000 and max(sizes) <= 512 + 60
    # a stream whose only IDR pictures are far from the even shares: the cuts it has
    pts, idr = gops(600, 300)
    assert [g.start for g in planner.plan_segments(pts, idr, length=100)] == [0, 300]


def test_fake_segments_no_longer_than_a_sixteenth_of_gpu_memory_holds(fake, monkeypatch):
    video = gop_video("HEVC", frames=400)  # 40x30 10-bit: 2,400 bytes a frame
    with nvdec.open_nvdec(fake(video)) as reader:
        assert [g.start for g in reader.segments(2)] == [0, 200]  # no memory size: halves
        device = sys.modules["cupy"].cuda.Device
        monkeypatch.setattr(device, "mem_info", (0, 16 * 2 * 2400 * 100), raising=False)
        assert [g.start for g in reader.segments(2)] == [0, 100, 200, 300]  # 100 frames each
        monkeypatch.setattr(device, "mem_info", (0, 1 << 50), raising=False)  # the 4 GiB cap
        assert [g.start for g in reader.segments(2)] == [0, 200]


def test_fake_first_segment_goes_on_in_the_opening_session(fake, monkeypatch):
    video = gop_video("HEVC")
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "4")
    with nvdec.open_nvdec(fake(video)) as reader:
        assert len(video.decoders) == 1
        got = list(reader)
        assert len(video.decoders) == 4 and not reader._sessions  # 4 segments, 3 started
        late = list(reader.iter_luma(start=60))  # the first segment skipped
        assert len(video.decoders) == 7 and len(late) == 140
    for i, a in enumerate(got):
        np.testing.assert_array_equal(a, video.luma(i), err_msg=f"frame {i}")
    np.testing.assert_array_equal(late[0], video.luma(60))


def test_segment_sessions_setting(monkeypatch):
    monkeypatch.delenv("ADMCUDA_NVDEC_SEGMENTS", raising=False)
    assert planner.segment_sessions() is None
    for text, value in (("auto", None), (" AUTO ", None), ("1", 1), ("4", 4), ("32", 32)):
        monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", text)
        assert planner.segment_sessions() == value
    for bad in ("0", "x", "33", "-2"):
        monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", bad)
        with pytest.raises(AdmError, match="must be auto or a whole number 1 to 32"):
            planner.segment_sessions()


def test_auto_sessions_only_where_segments_were_measured_to_pay():
    n = planner.AUTO_SEGMENT_SESSIONS
    assert n > 1
    # pairs from 1080p: H.264 on n sessions a stream, HEVC on fewer
    hevc = planner.AUTO_HEVC_PAIR_SESSIONS
    assert 1 < hevc < n
    assert planner.auto_sessions("H264", 1920, 1080, 2) == n
    assert planner.auto_sessions("H264", 3840, 2160, 1) == n
    assert planner.auto_sessions("HEVC", 3840, 2160, 2) == hevc
    assert planner.auto_sessions("HEVC", 1920, 1080, 2) == hevc
    assert planner.auto_sessions("HEVC", 3840, 2159, 1) == hevc
    assert planner.auto_sessions("H264", 1280, 720, 2) == 1
    assert planner.auto_sessions("H264", 1920, 1078, 2) == 1
    assert planner.auto_sessions("HEVC", 1920, 1078, 2) == 1
    # ladders: H.264 from 1080p on fewer sessions, up to 5 streams; HEVC on one
    ladder = planner.AUTO_LADDER_SESSIONS
    assert 1 < ladder < n
    assert planner.auto_sessions("H264", 1920, 1080, 3) == ladder
    assert planner.auto_sessions("H264", 3840, 2160, 5) == ladder
    assert planner.auto_sessions("H264", 1920, 1080, 6) == 1
    assert planner.auto_sessions("H264", 1280, 720, 5) == 1
    assert planner.auto_sessions("HEVC", 1920, 1080, 3) == 1
    assert planner.auto_sessions("HEVC", 1920, 1080, 5) == 1
    assert planner.auto_sessions("HEVC", 3840, 2160, 3) == 1
    assert planner.auto_sessions("HEVC", 3840, 2160, 5) == 1
    # codecs without IDR cuts
    assert planner.auto_sessions("AV1", 3840, 2160, 2) == 1
    assert planner.auto_sessions("VP9", 3840, 2160, 2) == 1


def test_fake_open_inputs_gives_readers_their_auto_sessions(fake, monkeypatch):
    from admcuda.io.inputs import open_inputs

    big = [fake(FakeVideo(codec="H264", fmt="NV12", width=1920, height=1080, frames=4,
                          order=[0, 3, 1, 2]))
                for _ in range(3)]  # fmt: skip
    with open_inputs(big[0], big[1:2], decoder="nvdec") as pair:
        assert [r.auto_sessions for r in (pair.ref, *pair.dis)] == [4, 4]
    with open_inputs(big[0], big[1:], decoder="nvdec") as ladder:
        assert [r.auto_sessions for r in (ladder.ref, *ladder.dis)] == [2, 2, 2]
    with open_inputs(big[0], [big[1]] * 5, decoder="nvdec") as ladder:
        assert {r.auto_sessions for r in (ladder.ref, *ladder.dis)} == {1}
    assert nvdec.open_nvdec(big[0]).auto_sessions == 1  # alone, the reader does not guess
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "many")
    opened: list = []
    monkeypatch.setattr(nvdec, "open_nvdec", lambda *a: opened.append(nvdec.NvdecReader(
        a[0], label=a[1], gpu=a[2])) or opened[-1])  # fmt: skip
    with pytest.raises(AdmError, match="ADMCUDA_NVDEC_SEGMENTS must be auto or a whole"):
        open_inputs(big[0], big[1:2], decoder="nvdec")
    assert len(opened) == 2 and not any(r._sessions for r in opened)  # closed again


def test_fake_bench_times_decode_alone_in_the_default_layout(fake):
    from admcuda.cli.bench import _ceiling_sessions

    def video(codec, width, height):
        return fake(FakeVideo(codec=codec, fmt="NV12", width=width, height=height, frames=4,
                              order=[0, 3, 1, 2]))  # fmt: skip

    hevc, h264, small = video("HEVC", 1920, 1080), video("H264", 1920, 1080), video("HEVC", 64, 48)
    assert _ceiling_sessions(hevc, 2) == [1, planner.AUTO_HEVC_PAIR_SESSIONS, 4]
    assert _ceiling_sessions(hevc, 5) == [1, 4]  # an HEVC ladder's default is one session
    assert _ceiling_sessions(h264, 2) == [1, planner.AUTO_SEGMENT_SESSIONS]
    assert _ceiling_sessions(h264, 3) == [1, planner.AUTO_LADDER_SESSIONS, 4]
    assert _ceiling_sessions(small, 2) == [1, 4]


def test_fake_decoder_auto_opens_each_input_once(fake):
    from admcuda.io.inputs import open_inputs

    videos = [FakeVideo(codec="H264", fmt="NV12"), FakeVideo(codec="H264", fmt="NV12")]
    ref, dis = (fake(v) for v in videos)
    with open_inputs(ref, [dis], decoder="auto") as pair:
        assert [r.kind for r in (pair.ref, *pair.dis)] == ["nvdec", "nvdec"]
        assert [len(v.decoders) for v in videos] == [1, 1]  # no second open to check
        got = list(pair.dis[0])
    assert [len(v.decoders) for v in videos] == [1, 1]
    np.testing.assert_array_equal(got[-1], videos[1].luma(videos[1].frames - 1))


def test_fake_auto_segments_follow_the_reader(fake, monkeypatch):
    video = gop_video("H264")
    monkeypatch.delenv("ADMCUDA_NVDEC_SEGMENTS", raising=False)
    with nvdec.open_nvdec(fake(video)) as reader:
        reader.auto_sessions = 3
        assert [g.start for g in reader.segments(3)] == [0, 50, 150]
        before = len(video.decoders)
        got = list(reader)
        assert len(video.decoders) - before == 2  # the first goes on in the opening session
        monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "1")  # the setting wins
        before = len(video.decoders)
        assert len(list(reader)) == len(got) == video.frames
        assert len(video.decoders) - before == 1
    for i, a in enumerate(got):
        np.testing.assert_array_equal(a, video.luma(i), err_msg=f"frame {i}")


def gop_video(codec: str, frames: int = 200, gop: int = 50, **kw) -> FakeVideo:
    """A stand-in stream of closed GOPs, an IDR picture where each begins."""
    order = closed_gop_order(frames, gop)
    idr = {n for n, i in enumerate(order) if i % gop == 0}
    fmt = "NV12" if codec == "H264" else "P016"
    return FakeVideo(codec=codec, fmt=fmt, frames=frames, order=order, idr_packets=idr, **kw)


@pytest.mark.parametrize("codec", ["H264", "HEVC"])
@pytest.mark.parametrize(
    ("sessions", "starts", "partial"),
    [(2, [0, 100], 1), (3, [0, 50, 150], 2), (8, [0, 50, 100, 150], 2)],
)
def test_fake_segments_give_the_frames_of_one_session(
    fake, monkeypatch, codec, sessions, starts, partial
):
    video = gop_video(codec)
    monkeypatch.delenv("ADMCUDA_NVDEC_SEGMENTS", raising=False)
    with nvdec.open_nvdec(fake(video)) as reader:
        one = list(reader)
        before = len(video.decoders)
        monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", str(sessions))
        # an even share each (48 frames at least), cut at the nearest GOP
        assert [g.start for g in reader.segments(sessions)] == starts
        got = list(reader)
        assert len(video.decoders) - before == len(starts)  # a session per segment
        assert len(got) == len(one) == video.frames
        for i, (a, b) in enumerate(zip(got, one, strict=True)):
            np.testing.assert_array_equal(a, b, err_msg=f"frame {i}")
            np.testing.assert_array_equal(a, video.luma(i), err_msg=f"frame {i}")
        # start and count: segments before start and after the count are not decoded
        before = len(video.decoders)
        part = list(reader.iter_luma(start=120, count=40))
        assert len(video.decoders) - before == partial
        assert len(part) == 40
        for i, a in enumerate(part, start=120):
            np.testing.assert_array_equal(a, video.luma(i), err_msg=f"frame {i}")
        assert not reader._sessions


def test_fake_stream_without_idr_cuts_is_read_by_one_session(fake, monkeypatch):
    video = gop_video("HEVC")
    video.idr_packets = {0}  # open GOPs: only the first picture is an IDR
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "4")
    with nvdec.open_nvdec(fake(video)) as reader:
        assert reader.segments() is None
        before = len(video.decoders)
        got = list(reader)
    # the session that opened the reader went on: no decoder started
    assert len(video.decoders) - before == 0 and len(got) == video.frames


def test_fake_close_ends_a_segmented_iteration(fake, monkeypatch):
    import threading

    video = gop_video("HEVC")
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "3")
    reader = nvdec.open_nvdec(fake(video))
    it = reader.iter_luma()
    first = [next(it) for _ in range(5)]
    reader.close()
    assert list(it) == []  # the iteration ends there, without an error
    for i, a in enumerate(first):
        np.testing.assert_array_equal(a, video.luma(i), err_msg=f"frame {i}")
    assert not reader._sessions
    assert not [t for t in threading.enumerate() if t.name.startswith("admcuda-nvdec-segment")]


def test_fake_segment_losing_a_frame_is_an_error(fake, monkeypatch):
    video = gop_video("H264", drop_display=130)
    monkeypatch.setenv("ADMCUDA_NVDEC_SEGMENTS", "3")
    with nvdec.open_nvdec(fake(video)) as reader:
        want = "segment from frame 50 gave the frame shown at 6240 where 6200 was due"
        with pytest.raises(AdmError, match=want):
            list(reader)
        assert not reader._sessions


@pytest.mark.parametrize("frames_only", [True, False])
def test_h264_sps_with_scaling_matrices_and_poc_type_1(frames_only):
    w = BitWriter().u(8, 244).u(16, 0).ue(0)  # High 4:4:4 Predictive, sps id 0
    w.ue(3).u(1, 0).ue(2).ue(2).u(1, 0)  # 4:4:4, 10-bit luma and chroma
    w.u(1, 1)  # seq_scaling_matrix_present_flag: 12 lists for 4:4:4
    for i in range(12):
        w.u(1, i % 3 != 2)
        if i % 3 != 2:
            for j in range(16 if i < 6 else 64):  # deltas, ending a list early with a 0 scale
                w.se(-8 if (i == 4 and j == 5) else (j % 5) - 2)
                if i == 4 and j == 5:
                    break
    w.ue(0).ue(1).u(1, 0).se(-3).se(2).ue(3).se(1).se(-1).se(0)  # POC type 1, 3 cycle offsets
    w.ue(4).u(1, 0).ue(19).ue(11).u(1, frames_only).u(1, 1)
    assert h264.sps_layout(w.nal()) == (3, 10, frames_only)


def test_h264_sps_layout_of_x264_streams(tmp_path):
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    cases = {
        "progressive": ([], (1, 8, True)),
        "interlaced": (["-x264-params", "interlaced=1"], (1, 8, False)),
        "high10": (["-pix_fmt", "yuv420p10le"], (1, 10, True)),
        "high444": (["-pix_fmt", "yuv444p"], (3, 8, True)),
    }
    for name, (extra, want) in cases.items():
        out = tmp_path / f"{name}.h264"
        subprocess.run(
            [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-f", "lavfi",
             "-i", "testsrc2=s=64x48:r=25", "-frames:v", "2", "-c:v", "libx264", *extra,
             str(out)],
            check=True,
        )  # fmt: skip
        sps = [n for n in h264.annexb_nals(out.read_bytes()) if n[0] & 0x1F == 7]
        assert h264.sps_layout(sps[0]) == want, name
    assert h264.sps_layout(SPS_PROGRESSIVE) == (1, 8, True)
    assert h264.sps_layout(SPS_INTERLACED) == (1, 8, False)


# -- on the GPU


@pytest.fixture
def gpu_nvdec():
    if not nvdec.nvdec_available():
        pytest.skip(f"NVDEC not available: {nvdec._unavailable_reason()}")
    return pytest.importorskip("cupy")


def open_or_skip(name: str) -> nvdec.NvdecReader:
    f = FILES[name]
    ok, reason = nvdec.nvdec_supports(DATA / name)
    if not ok:
        if f["required"]:
            pytest.fail(f"NVDEC must decode {name}: {reason}")
        pytest.skip(f"{name}: {reason}")
    return nvdec.open_nvdec(DATA / name, "test")


def nvdec_hashes(frames) -> list[str]:
    import cupy as cp

    return [sha256(cp.asnumpy(p).tobytes()) for p in frames]


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(FILES))
def test_nvdec_luma_equals_ffmpeg(gpu_nvdec, name):
    cp = gpu_nvdec
    f = FILES[name]
    with open_or_skip(name) as reader:
        assert (reader.width, reader.height, reader.bitdepth) == (
            f["width"], f["height"], f["bitdepth"]
        )  # fmt: skip
        # all kept before hashing: each must be a copy, not the decoder's reused buffer
        planes = list(reader.iter_luma())
    hashes = []
    for i, plane in enumerate(planes):
        assert isinstance(plane, cp.ndarray) and plane.device.id == 0, i
        assert plane.shape == (f["height"], f["width"]) and plane.flags.c_contiguous, i
        assert plane.dtype == (np.uint8 if f["bitdepth"] == 8 else np.uint16), i
        host = cp.asnumpy(plane).astype("u1" if f["bitdepth"] == 8 else "<u2")
        hashes.append(sha256(host.tobytes()))
    want = f["luma_sha256"]
    bad = [i for i, (g, w) in enumerate(zip(hashes, want, strict=False)) if g != w]
    assert len(hashes) == len(want), f"NVDEC gave {len(hashes)} frames, ffmpeg {len(want)}"
    assert not bad, f"{len(bad)} frames differ from ffmpeg's, the first {bad[:8]}"


@pytest.fixture
def gpu_cupy():
    cp = pytest.importorskip("cupy")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver or no device
        pytest.skip(f"no CUDA device: {exc}")
    return cp


@pytest.mark.cuda
def test_luma_finisher_kernels_on_the_gpu(gpu_cupy):
    cp = gpu_cupy
    rng = np.random.default_rng(7)
    values = rng.integers(0, 1024, (3, 37, 53), dtype=np.uint16)
    surfaces = cp.zeros((3, 37 + 19, 64), np.uint16)  # rows longer than the width, chroma below
    surfaces[:, :37, :53] = cp.asarray(values << nvdec.P016_SHIFT)
    surfaces[:, :37, 53:] = 1  # past the width: not read
    stream = cp.cuda.Stream(non_blocking=True)
    finisher = nvdec._Finisher(stream, lambda index: AdmError(f"finer at frame {index}"))
    other = nvdec._Finisher(stream, lambda index: AdmError("other"))
    for k in range(3):
        finisher.add(surfaces[k, :37, :53], "P016", 10 + k)
    planes = finisher.drain()
    assert [p.flags.c_contiguous and p.dtype == np.uint16 for p in planes] == [True] * 3
    np.testing.assert_array_equal(cp.asnumpy(cp.stack(planes)), values)
    surfaces[1, 36, 52] |= 1 << (nvdec.P016_SHIFT - 1)  # frame 21's last sample: one low bit
    for k in range(3):
        finisher.add(surfaces[k, :37, :53], "P016", 20 + k)
    for k in (0, 2):  # the flags are each finisher's own: its slot 1 is clear
        other.add(surfaces[k, :37, :53], "P016", k)
    with pytest.raises(AdmError, match="finer at frame 21"):
        finisher.drain()
    assert len(other.drain()) == 2
    finisher.add(surfaces[0, :37, :53], "P016", 30)  # drained flags start clear
    np.testing.assert_array_equal(cp.asnumpy(finisher.drain()[0]), values[0])
    nv12 = cp.asarray(rng.integers(0, 256, (37 + 19, 64), dtype=np.uint8))
    for k in range(nvdec._Finisher.GROUP):
        assert not finisher.full
        finisher.add(nv12[:37, :53], "NV12", k)
    assert finisher.full
    planes = finisher.drain()
    assert len(planes) == nvdec._Finisher.GROUP and not finisher.full
    assert planes[0].flags.c_contiguous and planes[0].dtype == np.uint8
    np.testing.assert_array_equal(cp.asnumpy(planes[-1]), cp.asnumpy(nv12[:37, :53]))


@pytest.mark.cuda
def test_nvdec_refusals_on_the_gpu(gpu_nvdec):
    ok, reason = nvdec.nvdec_supports(ROOT / "README.md")
    assert not ok and "cannot be read by PyNvVideoCodec's demuxer" in reason
    with pytest.raises(AdmError, match="GPU 999 does not exist"):
        nvdec.NvdecReader(DATA / "h264_8b_320x180.mp4", gpu=999)


@pytest.mark.cuda
def test_nvdec_start_and_count(gpu_nvdec):
    name = "h264_8b_320x180.mp4"
    with open_or_skip(name) as reader:
        got = nvdec_hashes(reader.iter_luma(start=5, count=7))
        assert got == FILES[name]["luma_sha256"][5:12]
        assert nvdec_hashes(reader.iter_luma(start=45)) == FILES[name]["luma_sha256"][45:]


@pytest.mark.cuda
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p["dis"])
def test_cuda_scores_from_nvdec_equal_the_reference(gpu_nvdec, pair):
    from admcuda.backends.cuda import CudaAdm

    cp = gpu_nvdec
    with open_or_skip(pair["ref"]) as ref, open_or_skip(pair["dis"]) as dis:
        refs = cp.stack(list(ref.iter_luma()))
        diss = cp.stack(list(dis.iter_luma()))
    assert refs.shape[0] == diss.shape[0] == pair["frames"]
    f = FILES[pair["ref"]]
    with CudaAdm(f["width"], f["height"], pair["bitdepth"]) as engine:
        got = engine.scores(refs, diss)
    assert len(got) == pair["frames"]
    for key, values in pair["scores"].items():
        assert [g[key] for g in got] == values, key


def test_fake_reader_estimates_its_frames_as_the_ffmpeg_reader_does(fake):
    """For progress, an NVDEC reader gives the same estimate as the ffmpeg decoder's
    reader (ffmpeg's duration times frame rate of the container); None where ffmpeg
    cannot read the file."""
    pytest.importorskip("imageio_ffmpeg")
    from admcuda.io.ffmpeg import VideoReader

    path = fake(FakeVideo(codec="H264", fmt="NV12"))
    unreadable = nvdec.open_nvdec(path, "distorted")  # the stand-in's bytes: no container
    assert unreadable.num_frames is None and unreadable.estimated_frames is None
    real = DATA / "h264_8b_320x180.mp4"
    path.write_bytes(real.read_bytes())
    reader = nvdec.open_nvdec(path, "distorted")
    assert reader.num_frames is None
    assert (
        reader.estimated_frames == VideoReader(real).estimated_frames == FILES[real.name]["frames"]
    )


def _annexb_packets(cp, path: Path) -> bytes:
    """The H.264 packets of ``path`` as the binding's demuxer gives them (Annex B)."""
    nvc, _ = nvdec._load_binding()
    out = bytearray()
    for packet in nvc.CreateDemuxer(filename=str(path)):
        if packet.bsl == 0:
            break
        out += ctypes.string_at(packet.bsl_data, packet.bsl)
    return bytes(out)


@pytest.mark.cuda
@pytest.mark.parametrize("larger", [False, True])
def test_nvdec_size_change_stops_the_read(gpu_nvdec, tmp_path, larger):
    """An H.264 stream of 352x288 frames followed by 320x180 ones, and the other way round:
    the read stops at the frame where the size changes, named as the ffmpeg decoder names
    it, and the frames before it read."""
    small, large = "h264_8b_320x180.mp4", "h264_8b_352x288.mkv"
    first, second = (small, large) if larger else (large, small)
    joined = tmp_path / "joined.h264"
    joined.write_bytes(
        _annexb_packets(gpu_nvdec, DATA / first) + _annexb_packets(gpu_nvdec, DATA / second)
    )
    n = len(FILES[first]["luma_sha256"])
    w, h = FILES[first]["width"], FILES[first]["height"]
    with nvdec.open_nvdec(joined, "distorted") as reader:
        assert (reader.width, reader.height) == (w, h)
        with pytest.raises(AdmError) as info:
            list(reader.iter_luma())
    tail = (
        "; admcuda scores frames of one size: cut it where the size changes, or scale it to "
        f"one size (ffmpeg -i IN -vf scale={w}:{h} OUT)"
    )
    w2, h2 = FILES[second]["width"], FILES[second]["height"]
    assert str(info.value) == (
        f"distorted file '{joined}' changes frame size at frame {n}: from {w}x{h} to "
        f"{w2}x{h2}{tail}"
    )
    with nvdec.open_nvdec(joined) as reader:
        hashes = nvdec_hashes(reader.iter_luma(0, n))
    assert hashes == FILES[first]["luma_sha256"]

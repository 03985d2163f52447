"""Inputs as a libvmaf/ffmpeg user hands them over: names that contradict the flags,
raw files without ``.yuv``, standard input, pipes, ``/dev/fd/N`` and ``--scale``.

Every wait is bounded: subprocesses run with a timeout, in-process reads of pipes run
in a helper thread that the test gives up on after :data:`WAIT_S` seconds. Writers to
pipes that the process itself scores from are separate processes: the CPU backend
forks its workers, and a forked copy of a writer's descriptor would keep the pipe from
ever ending.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from _frames import luma_frames
from _media import (
    FFV1,
    PAIRS,
    encode,
    ffmpeg_exe,
    ffmpeg_pix_fmt,
    frame_bytes,
    write_y4m,
    y4m_colorspace,
)

import admcuda
from admcuda.errors import AdmError
from admcuda.io.ffmpeg import ScaledReader, VideoReader, check_scaler, container_of
from admcuda.io.inputs import input_kind, name_hints, open_input, open_inputs
from admcuda.io.raw import YuvReader
from admcuda.io.streams import StreamReader, is_stream, open_stream
from admcuda.io.y4m import Y4mReader

ROOT = Path(__file__).resolve().parent.parent
WAIT_S = 60
CASE = "astronaut_160x90_420_8b_boxnoise"
W, H = 160, 90
REF_RAW = PAIRS / f"{CASE}_ref.yuv"
DIS_RAW = PAIRS / f"{CASE}_dis.yuv"
FRAME = W * H * 3 // 2


def warnings_of(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def bounded(fn, *args, timeout=WAIT_S, **kwargs):
    """Run ``fn`` in a thread; fail the test (instead of hanging) if it does not return."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def write_raw(path, frames=3, *, w=W, h=H, fmt_bytes=None, seed=0, bits=8):
    """Random 4:2:0 frames (``fmt_bytes`` overrides the frame size)."""
    rng = np.random.default_rng(seed)
    sample = 1 if bits == 8 else 2
    size = fmt_bytes or (w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)) * sample
    if bits == 8:
        data = rng.integers(0, 256, size * frames, dtype=np.uint8).tobytes()
    else:
        data = rng.integers(0, 1 << bits, size * frames // 2, dtype=np.uint16)
        data = data.astype("<u2").tobytes()
    path.write_bytes(data)
    return path


def lumas(reader):
    return [np.array(plane) for plane in reader.iter_luma()]


# ---- what a raw file's name says --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "size", "fmt", "bits"),
    [
        ("a_576x324.yuv420p10le.yuv", (576, 324), "420", 10),
        ("src01_hrc00_576x324.yuv", (576, 324), None, None),
        ("Tango2_3840x2160_60fps_10bit_420.yuv", (3840, 2160), "420", 10),
        ("ducks_take_off_444_720p50.yuv", None, "444", None),
        ("x.yuv422p.yuv", None, "422", 8),  # ffmpeg's yuv422p is 8-bit
        ("x_yuv420p_10bit.yuv", None, "420", 10),  # a stated number outweighs the implied 8
        ("x_yuv420p12.yuv", None, "420", 12),
        ("clip.p010.yuv", None, "420", 10),
        ("clip.nv12.yuv", None, "420", 8),
        ("clip_gray.yuv", None, "400", 8),
        ("clip.gray16le.yuv", None, "400", 16),
        ("coins_97x55_400_8b_rescale_ref.yuv", (97, 55), "400", 8),
        ("a_422p10.yuv", None, "422", 10),
        ("a_10-bit.yuv", None, None, 10),
        ("a_12le.yuv", None, None, 12),
        ("a_16bpc.yuv", None, None, 16),
        ("A_1920X1080_8BIT.YUV", (1920, 1080), None, 8),
        # Not to be taken for a geometry:
        ("crowd_run_1080p50_x264_crf23.yuv", None, None, None),
        ("foo_3840x2160p10.yuv", (3840, 2160), None, None),  # 2160p10: not a bit depth
        ("2020-04-20_take_420frames.yuv", None, None, None),
        ("20200420.yuv", None, None, None),
        ("clip_400.yuv", None, None, None),  # a bare 400 is just a number
        ("hrc444_h265_10mbps.yuv", None, None, None),
        ("v2x3_8x8.yuv", None, None, None),
        ("a_1920x1080_to_960x540.yuv", None, None, None),  # two sizes: says nothing
        ("x_8bit_yuv420p10le.yuv", None, "420", None),  # two bit depths: says nothing
    ],
)
def test_name_hints(name, size, fmt, bits):
    hints = name_hints(f"/clips_1280x720_10bit/{name}")
    assert (hints.size, hints.pixel_format, hints.bitdepth) == (size, fmt, bits)


def test_name_hints_packed():
    assert name_hints("a.yuyv422.yuv").packed == "yuyv422"
    assert name_hints("a_uyvy.yuv").packed == "uyvy"
    assert name_hints("a_yuv422p.yuv").packed is None


@pytest.mark.parametrize(
    ("name", "packed", "planar"),
    [
        ("a_2vuy.yuv", "2vuy", "yuv422p"),  # Apple's UYVY
        ("a.uyvy422.yuv", "uyvy422", "yuv422p"),
        ("a_vyuy.yuv", "vyuy", "yuv422p"),
        ("a_yuy2.yuv", "yuy2", "yuv422p"),
        ("a_hdyc.yuv", "hdyc", "yuv422p"),
        ("a_uyyvyy411.yuv", "uyyvyy411", "yuv422p"),
        ("a_1920x1080_v210.yuv", "v210", "yuv422p10le"),  # was read as 16-bit samples
        ("a.y210le.yuv", "y210le", "yuv422p10le"),
        ("a_y212.yuv", "y212", "yuv422p12le"),
        ("a_v216.yuv", "v216", "yuv422p16le"),
        ("a_ayuv.yuv", "ayuv", "yuv444p"),
        ("a_v410.yuv", "v410", "yuv444p10le"),
        ("a.xv30le.yuv", "xv30le", "yuv444p10le"),
        ("a.xv36le.yuv", "xv36le", "yuv444p12le"),
        ("a.ayuv64le.yuv", "ayuv64le", "yuv444p16le"),
        # semi-planar: a luma plane, frames the size of yuv420p's (yuv422p's, yuv444p's)
        ("a_nv12.yuv", None, None),
        ("a_nv21.yuv", None, None),
        ("a_nv16.yuv", None, None),
        ("a_2vuyx.yuv", None, None),
    ],
)
def test_name_hints_packed_aliases(name, packed, planar):
    hints = name_hints(name)
    assert (hints.packed, hints.packed_planar) == (packed, planar)


@pytest.mark.parametrize(
    ("name", "bits", "planar"),
    [("d_2vuy.yuv", 8, "yuv422p"), ("d_v210.yuv", 10, "yuv422p10le")],
)
def test_packed_name_refused_with_its_planar_format(tmp_path, name, bits, planar):
    """A packed file read as planar is a wrong score (8-bit 2vuy) or a misleading
    bit-depth error (v210): refused by name, with the format that keeps its luma."""
    path = write_raw(tmp_path / name, frames=2, bits=bits)
    with pytest.raises(AdmError) as info:
        open_input(path, width=W, height=H, pixel_format="422", bitdepth=bits, label="distorted")
    word = name.split("_")[1].split(".")[0]
    assert str(info.value) == (
        f"distorted file {str(path)!r}: its name says {word}, a packed layout whose luma is "
        f"not a plane; convert it to planar YUV (ffmpeg ... -pix_fmt {planar} out.yuv), or "
        "give --ignore-name if the name is wrong"
    )


def test_name_hints_big_endian():
    for name in ("a.yuv420p16be.yuv", "a_gray10be.yuv", "a.p010be.yuv", "a_12be.yuv",
                 "a_yuvj444p16be.yuv"):  # fmt: skip
        assert name_hints(name).big_endian == name[2:].rsplit(".", 1)[0].lstrip("._"), name
    for name in ("a.yuv420p16le.yuv", "a_be.yuv", "a_16bit_maybe.yuv", "a.yuv420p.yuv"):
        assert name_hints(name).big_endian is None, name


@pytest.mark.parametrize(
    ("name", "word", "planar"),
    [
        ("d_p010.yuv", "p010", "yuv420p10le"),
        ("d.p010le.yuv", "p010le", "yuv420p10le"),
        ("d.p010be.yuv", "p010be", "yuv420p10le"),  # MSB-aligned first: the same conversion
        ("d_p212.yuv", "p212", "yuv422p12le"),
        ("d_p410le.yuv", "p410le", "yuv444p10le"),
        ("d.yuv444p10msble.yuv", "yuv444p10msble", "yuv444p10le"),  # planar, high bits
        ("d_yuv444p12msbbe.yuv", "yuv444p12msbbe", "yuv444p12le"),
    ],
)
def test_msb_aligned_name_refused(tmp_path, name, word, planar):
    """p010-style samples (value << 6 in 16 bits) read low-bit-aligned are all out of
    range: refused by name in one line saying so, whatever -b says."""
    path = write_raw(tmp_path / name, frames=2, w=176, h=144, bits=10)
    for bits in (10, 12, 16):
        with pytest.raises(AdmError) as info:
            open_input(path, width=W, height=H, bitdepth=bits, label="distorted")
        assert str(info.value) == (
            f"distorted file {str(path)!r}: its name says {word}, MSB-aligned samples (in the "
            "high bits of 16); raw files are read with samples in the low bits: convert it "
            f"(ffmpeg ... -pix_fmt {planar} out.yuv), or give --ignore-name if the name is wrong"
        )
    assert name_hints(tmp_path / "d_p016.yuv").msb_aligned is None  # 16 bits: read right


def test_msb_aligned_samples_get_a_hint(tmp_path):
    """A file of MSB-aligned samples whose name says nothing: the range error asks
    whether they are, naming the format of the reader's layout to convert to; a sample
    that is no multiple of 64 keeps the plain message."""
    rng = np.random.default_rng(3)
    luma = rng.integers(0, 1024, (H, W), dtype=np.uint16)
    chroma = np.full(W * H, 512, np.uint16)  # 4:2:2
    path = tmp_path / "d.yuv"
    path.write_bytes((luma << 6).astype("<u2").tobytes() + (chroma << 6).astype("<u2").tobytes())
    peak = int(luma.max()) << 6
    with YuvReader(path, width=W, height=H, pixel_format="422", bitdepth=10) as reader:
        with pytest.raises(AdmError) as info:
            reader.read_luma(0)
        assert str(info.value) == (
            f"{reader.where} frame 0 has sample value {peak}, too large for 10 bits, and every "
            "sample is a multiple of 64: is --bitdepth right, or are they 10-bit samples in "
            "the high bits (MSB-aligned, as in p210)? Convert such a file "
            "(ffmpeg ... -pix_fmt yuv422p10le out.yuv)"
        )
    odd = (luma << 6) | 1
    path.write_bytes(odd.astype("<u2").tobytes() + chroma.astype("<u2").tobytes())
    with YuvReader(path, width=W, height=H, pixel_format="422", bitdepth=10) as reader:
        with pytest.raises(AdmError) as info:
            reader.read_luma(0)
        assert str(info.value) == (
            f"{reader.where} frame 0 has sample value {peak | 1}, too large for 10 bits; "
            "is --bitdepth right?"
        )


# ---- names stating a pixel format admcuda cannot read ----------------------------------


@pytest.mark.parametrize(
    ("name", "word", "planar"),
    [
        # RGB, packed and planar, by bit depth
        ("r_576x324_rgb24.rgb", "rgb24", "yuv444p"),
        ("a.bgr24.yuv", "bgr24", "yuv444p"),
        ("a_rgba.yuv", "rgba", "yuv444p"),
        ("a_bgra.yuv", "bgra", "yuv444p"),
        ("a_argb.yuv", "argb", "yuv444p"),
        ("a_abgr.yuv", "abgr", "yuv444p"),
        ("a_rgb0.yuv", "rgb0", "yuv444p"),
        ("a_bgr0.yuv", "bgr0", "yuv444p"),
        ("a_0rgb.yuv", "0rgb", "yuv444p"),
        ("a_0bgr.yuv", "0bgr", "yuv444p"),
        ("a_rgb32.yuv", "rgb32", "yuv444p"),
        ("a_gbrp.yuv", "gbrp", "yuv444p"),
        ("a_gbrap.yuv", "gbrap", "yuv444p"),
        ("a.rgb565le.yuv", "rgb565le", "yuv444p"),
        ("a_bgr8.yuv", "bgr8", "yuv444p"),
        ("a.rgb4_byte.yuv", "rgb4", "yuv444p"),
        ("a_gbrp9.yuv", "gbrp9", "yuv444p10le"),
        ("a.gbrp10le.yuv", "gbrp10le", "yuv444p10le"),
        ("a.gbrap10be.yuv", "gbrap10be", "yuv444p10le"),
        ("a.x2rgb10le.yuv", "x2rgb10le", "yuv444p10le"),
        ("a_x2bgr10.yuv", "x2bgr10", "yuv444p10le"),
        ("a.gbrp10msble.yuv", "gbrp10msble", "yuv444p10le"),
        ("a.gbrp12le.yuv", "gbrp12le", "yuv444p12le"),
        ("a.gbrap14le.yuv", "gbrap14le", "yuv444p16le"),
        ("a.gbrp16le.yuv", "gbrp16le", "yuv444p16le"),
        ("a.rgb48le.yuv", "rgb48le", "yuv444p16le"),
        ("a_bgr48.yuv", "bgr48", "yuv444p16le"),
        ("a.rgba64.yuv", "rgba64", "yuv444p16le"),
        ("a.bgra64be.yuv", "bgra64be", "yuv444p16le"),
        ("a.rgbf32le.yuv", "rgbf32le", "yuv444p16le"),
        ("a.rgbaf16le.yuv", "rgbaf16le", "yuv444p16le"),
        ("a.gbrpf32le.yuv", "gbrpf32le", "yuv444p16le"),
        ("a.gbrap32le.yuv", "gbrap32le", "yuv444p16le"),
        ("a.rgb96le.yuv", "rgb96le", "yuv444p16le"),
        ("a.rgba128le.yuv", "rgba128le", "yuv444p16le"),
        # the .rgb and .bgr extensions, and rgb or bgr as a word of any name
        ("a_576x324.rgb", "rgb", "yuv444p"),
        ("A_576X324.BGR", "bgr", "yuv444p"),
        ("bgr.yuv", "bgr", "yuv444p"),
        ("rgb_test_576x324.yuv", "rgb", "yuv444p"),
        # other formats that are not YUV
        ("a.xyz12le.yuv", "xyz12le", "yuv444p12le"),
        ("a.bayer_rggb8.yuv", "bayer_rggb8", "yuv444p"),
        ("a.bayer_bggr16le.yuv", "bayer_bggr16le", "yuv444p16le"),
        ("a.pal8.yuv", "pal8", "yuv444p"),
        ("a_monob.yuv", "monob", "gray"),
        ("a_monow.yuv", "monow", "gray"),
        # alpha: the same YUV without it
        ("a.yuva420p.yuv", "yuva420p", "yuv420p"),
        ("a_yuva422p.yuv", "yuva422p", "yuv422p"),
        ("a.yuva444p10le.yuv", "yuva444p10le", "yuv444p10le"),
        ("a.yuva420p9be.yuv", "yuva420p9be", "yuv420p10le"),
        ("a_yuva422p16.yuv", "yuva422p16", "yuv422p16le"),
        ("a.ya8.yuv", "ya8", "gray"),
        ("a.ya16le.yuv", "ya16le", "gray16le"),
        ("a.yaf32le.yuv", "yaf32le", "gray16le"),
        # other chroma subsamplings: 4:4:4 keeps every sample (yuvj: no range conversion)
        ("a.yuv410p.yuv", "yuv410p", "yuv444p"),
        ("a.yuv411p.yuv", "yuv411p", "yuv444p"),
        ("a.yuv440p.yuv", "yuv440p", "yuv444p"),
        ("a_yuv411.yuv", "yuv411", "yuv444p"),
        ("a.yuvj411p.yuv", "yuvj411p", "yuvj444p"),
        ("a.yuvj440p.yuv", "yuvj440p", "yuvj444p"),
        ("a.yuv440p10le.yuv", "yuv440p10le", "yuv444p10le"),
        ("a.yuv440p12be.yuv", "yuv440p12be", "yuv444p12le"),
        # bit depths other than 8, 10, 12, 16: 9 -> 10, 14 -> 16, of the same layout
        ("a.yuv420p9le.yuv", "yuv420p9le", "yuv420p10le"),
        ("a.yuv422p9be.yuv", "yuv422p9be", "yuv422p10le"),
        ("a_yuv444p9.yuv", "yuv444p9", "yuv444p10le"),
        ("a.yuv420p14le.yuv", "yuv420p14le", "yuv420p16le"),
        ("a.yuv444p14be.yuv", "yuv444p14be", "yuv444p16le"),
        ("a_422p9.yuv", "422p9", "yuv422p10le"),
        ("a_444p14.yuv", "444p14", "yuv444p16le"),
        ("a_gray9.yuv", "gray9", "gray10le"),
        ("a.gray9le.yuv", "gray9le", "gray10le"),
        ("a.grey14le.yuv", "grey14le", "gray16le"),
        ("a.gray32le.yuv", "gray32le", "gray16le"),
        ("a.grayf32le.yuv", "grayf32le", "gray16le"),
        ("a.grayf16be.yuv", "grayf16be", "gray16le"),
        ("a_14bit.yuv", "14bit", "yuv420p16le"),  # no layout named: 4:2:0, as for 10be
        ("a_9-bit.yuv", "9-bit", "yuv420p10le"),
        ("a_9b.yuv", "9b", "yuv420p10le"),
        ("a_14le.yuv", "14le", "yuv420p16le"),
        ("a_14bpc.yuv", "14bpc", "yuv420p16le"),
        ("a_444_14bit.yuv", "14bit", "yuv444p16le"),  # the layout the name states
        ("a_gray_9bits.yuv", "9bits", "gray10le"),
        ("a_yuv422p_14bit.yuv", "14bit", "yuv422p16le"),
        ("a_rgb24_yuv420p.yuv", "rgb24", "yuv444p"),  # the first word that says one
        # read as they are (or refused otherwise): not an unsupported format
        ("a.yuv420p.yuv", None, None),
        ("a.yuvj420p.yuv", None, None),
        ("a.yuv420p10le.yuv", None, None),
        ("a_nv12.yuv", None, None),
        ("a_nv21.yuv", None, None),
        ("a_p016.yuv", None, None),
        ("a_gray.yuv", None, None),
        ("a.gray10le.yuv", None, None),
        ("a_10bit.yuv", None, None),
        ("foo_444_10bit.yuv", None, None),
        ("coins_97x55_400_8b_rescale_ref.yuv", None, None),
        ("a_yuyv422.yuv", None, None),  # packed: its own refusal
        ("a.p010.yuv", None, None),  # MSB-aligned: its own refusal
        ("a.yuv444p10msble.yuv", None, None),  # MSB-aligned too
        ("a.yuv420p16be.yuv", None, None),  # big-endian: its own refusal
        ("a_srgb.yuv", None, None),  # words, not parts of words
        ("rgb2yuv_420.yuv", None, None),
        ("a_rgbx.yuv", None, None),
        ("a_yuv.yuv", None, None),
        ("crowd_run_1080p50_x264_crf23.yuv", None, None),
        ("a_3840x2160p14.yuv", None, None),
        ("a_1440p9.yuv", None, None),
        ("hrc411_x264_14mbps.yuv", None, None),
        ("a_14.yuv", None, None),
        ("take9_411.yuv", None, None),  # bare 411, 410, 440: numbers
        ("a_440.yuv", None, None),
        ("a_mono.yuv", None, None),
    ],
)
def test_name_hints_unsupported(name, word, planar):
    hints = name_hints(f"/clips_rgb24_14bit/{name}")  # folders are not read
    assert (hints.unsupported, hints.unsupported_planar) == (word, planar)
    assert (hints.unsupported_why is None) == (word is None)


def test_name_hints_msb_aligned_planar():
    """ffmpeg's yuv444p10msble (planar, samples in the high bits) is refused as p010 is."""
    hints = name_hints("a.yuv444p10msble.yuv")
    assert (hints.msb_aligned, hints.msb_planar) == ("yuv444p10msble", "yuv444p10le")
    hints = name_hints("a_yuv444p12msbbe.yuv")
    assert (hints.msb_aligned, hints.msb_planar) == ("yuv444p12msbbe", "yuv444p12le")


RGB = "RGB samples; admcuda reads planar YUV"
DEPTHS = "admcuda reads 8, 10, 12 or 16 bits"
LAYOUTS = "admcuda reads 4:2:0, 4:2:2, 4:4:4 or 4:0:0 chroma"


@pytest.mark.parametrize(
    ("name", "word", "why", "planar"),
    [
        ("d_160x90_rgb24.rgb", "rgb24", RGB, "yuv444p"),
        ("d_160x90.rgb", "rgb", RGB, "yuv444p"),
        ("d_bgr_160x90.yuv", "bgr", RGB, "yuv444p"),
        ("d.gbrp10le.yuv", "gbrp10le", RGB, "yuv444p10le"),
        ("d.rgb48le.yuv", "rgb48le", RGB, "yuv444p16le"),
        ("d.xyz12le.yuv", "xyz12le", "XYZ samples; admcuda reads planar YUV", "yuv444p12le"),
        ("d.bayer_rggb8.yuv", "bayer_rggb8", "a Bayer mosaic; admcuda reads planar YUV",
         "yuv444p"),
        ("d.pal8.yuv", "pal8", "palette indices; admcuda reads planar YUV", "yuv444p"),
        ("d_monob.yuv", "monob", f"1-bit samples; {DEPTHS}", "gray"),
        ("d.yuva420p.yuv", "yuva420p", "YUV with an alpha plane; admcuda reads planar YUV "
         "without alpha", "yuv420p"),
        ("d.yuva444p10le.yuv", "yuva444p10le", "YUV with an alpha plane; admcuda reads planar "
         "YUV without alpha", "yuv444p10le"),
        ("d.ya16le.yuv", "ya16le", "gray samples interleaved with alpha; admcuda reads planar "
         "YUV without alpha", "gray16le"),
        ("d.yuv410p.yuv", "yuv410p", f"4:1:0 chroma; {LAYOUTS}", "yuv444p"),
        ("d.yuv411p.yuv", "yuv411p", f"4:1:1 chroma; {LAYOUTS}", "yuv444p"),
        ("d.yuvj440p.yuv", "yuvj440p", f"4:4:0 chroma; {LAYOUTS}", "yuvj444p"),
        ("d.yuv420p9le.yuv", "yuv420p9le", f"9-bit samples; {DEPTHS}", "yuv420p10le"),
        ("d.yuv420p14le.yuv", "yuv420p14le", f"14-bit samples; {DEPTHS}", "yuv420p16le"),
        ("d_gray14.yuv", "gray14", f"14-bit samples; {DEPTHS}", "gray16le"),
        ("d_444_14bit.yuv", "14bit", f"14-bit samples; {DEPTHS}", "yuv444p16le"),
        ("d.gray32le.yuv", "gray32le", f"32-bit samples; {DEPTHS}", "gray16le"),
        ("d.grayf32le.yuv", "grayf32le", "floating-point samples; admcuda reads integer "
         "samples of 8, 10, 12 or 16 bits", "gray16le"),
    ],
)  # fmt: skip
def test_unsupported_name_refused(tmp_path, name, word, why, planar):
    """A name stating a pixel format that admcuda cannot read (RGB, alpha, 4:1:1, 9 or
    14 bits ...) was not read: the file was read as the flags say, a wrong score with
    exit 0 and no warning. Refused in one line, with a format to convert to that keeps
    the luma; --ignore-name reads it as the flags say."""
    path = write_raw(tmp_path / name, frames=4, w=176, h=144)  # big enough for any of them
    with pytest.raises(AdmError) as info:
        open_input(path, width=W, height=H, label="distorted")
    assert str(info.value) == (
        f"distorted file {str(path)!r}: its name says {word}, {why}: convert it "
        f"(ffmpeg ... -pix_fmt {planar} out.yuv), or give --ignore-name if the name is wrong"
    )
    # the frames of another layout are not whole frames of this one: read as the flags
    # say, the file needs allow_partial_frame
    with open_input(path, width=W, height=H, ignore_name=True, allow_partial_frame=True) as reader:
        frames = lumas(reader)
    assert len(frames) == path.stat().st_size // FRAME
    assert frames[0].tobytes() == path.read_bytes()[: W * H]


def test_unsupported_name_refused_whatever_the_flags(tmp_path):
    """The refusal comes before the flags are weighed: -p 444 -b 16 are no way to read
    rgb48le, whose frame size they match."""
    path = write_raw(tmp_path / "d.rgb48le.yuv", frames=2, bits=16, fmt_bytes=W * H * 3 * 2)
    for given in ({}, {"pixel_format": "444", "bitdepth": 16}):
        with pytest.raises(AdmError, match=r": its name says rgb48le, RGB samples; "):
            open_input(path, width=W, height=H, **given)
    with open_input(path, width=W, height=H, pixel_format="444", bitdepth=16,
                    ignore_name=True) as reader:  # fmt: skip
        assert len(lumas(reader)) == 2


def test_rgb24_pair_refused_by_the_cli(tmp_path):
    """An rgb24 pair converted by ffmpeg and named so is refused with one line, not
    scored as 6 frames of its RGB bytes read as 4:2:0 with exit 0 and nothing on stderr."""
    ff = ffmpeg_exe()
    pair = []
    for src, tag in ((REF_RAW, "r"), (DIS_RAW, "d")):
        dst = tmp_path / f"{tag}_{W}x{H}_rgb24.rgb"
        subprocess.run(
            [ff, "-v", "error", "-s", f"{W}x{H}", "-pix_fmt", "yuv420p", "-f", "rawvideo",
             "-i", str(src), "-pix_fmt", "rgb24", "-f", "rawvideo", str(dst)],
            check=True, timeout=WAIT_S,
        )  # fmt: skip
        pair.append(str(dst))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))  # fmt: skip
    env.pop("ADMCUDA_TRACEBACK", None)
    args = [sys.executable, "-m", "admcuda", "score", *pair, "-w", str(W), "-h", str(H)]
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.splitlines() == [
        f"admcuda: error: reference file {pair[0]!r}: its name says rgb24, RGB samples; "
        "admcuda reads planar YUV: convert it (ffmpeg ... -pix_fmt yuv444p out.yuv), or "
        "give --ignore-name if the name is wrong"
    ]
    proc = subprocess.run([*args, "--ignore-name"], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("admcuda")


# ---- names that contradict the flags ---------------------------------------------------


def test_name_says_another_bit_depth(tmp_path):
    path = write_raw(tmp_path / "a_160x90.yuv420p10le.yuv", bits=10)
    with pytest.raises(AdmError) as info:
        open_input(path, width=W, height=H, label="reference")
    assert str(info.value) == (
        f"reference file {str(path)!r}: its name says 10-bit but --bitdepth is 8 (default); "
        "give -b 10, or --ignore-name if the name is wrong"
    )
    with open_input(path, width=W, height=H, bitdepth=10) as reader:
        assert reader.bitdepth == 10
    # without the name, its 10-bit samples still give it away; -b 8 reads it so all the same
    with pytest.raises(AdmError, match=r"\(no --bitdepth given\), but every second byte"):
        open_input(path, width=W, height=H, ignore_name=True)
    with open_input(path, width=W, height=H, bitdepth=8, ignore_name=True) as reader:
        assert reader.bitdepth == 8


@pytest.mark.parametrize(
    ("name", "given", "said"),
    [
        ("c_176x144.yuv", {}, "its name says 176x144 but --width/--height are 160x90; "
         "give -w 176 -h 144, or --ignore-name"),
        ("c.yuv422p.yuv", {}, "its name says 422 but --pixel-format is 420 (default); "
         "give -p 422, or --ignore-name"),
        ("c_444.yuv", {"pixel_format": "420"}, "its name says 444 but --pixel-format is 420; "
         "give -p 444"),
        ("c_gray.yuv", {}, "its name says 400 but --pixel-format is 420 (default)"),
        ("c_10bit.yuv", {"bitdepth": 12}, "its name says 10-bit but --bitdepth is 12; "
         "give -b 10"),
        ("c_yuv422p10le.yuv", {}, "its name says 422 but --pixel-format is 420 (default), and "
         "10-bit but --bitdepth is 8 (default); give -p 422 -b 10, or --ignore-name"),
        ("c.yuyv422.yuv", {}, "its name says yuyv422, a packed layout"),
        ("c.yuv420p16be.yuv", {"bitdepth": 16}, "its name says yuv420p16be, big-endian "
         "samples; raw files are read little-endian: convert it (ffmpeg ... -pix_fmt "
         "yuv420p16le out.yuv)"),
        ("c.yuv422p10be.yuv", {"bitdepth": 10, "pixel_format": "422"}, "its name says "
         "yuv422p10be, big-endian samples; raw files are read little-endian: convert it "
         "(ffmpeg ... -pix_fmt yuv422p10le out.yuv)"),
        ("c_gray12be.yuv", {"bitdepth": 12, "pixel_format": "400"}, "its name says "
         "gray12be, big-endian samples; raw files are read little-endian: convert it "
         "(ffmpeg ... -pix_fmt gray12le out.yuv)"),
        ("c_444_10be.yuv", {"bitdepth": 10, "pixel_format": "444"}, "its name says 10be, "
         "big-endian samples; raw files are read little-endian: convert it (ffmpeg ... "
         "-pix_fmt yuv444p10le out.yuv)"),
    ],
)  # fmt: skip
def test_name_contradicts_flags(tmp_path, name, given, said):
    path = write_raw(tmp_path / name, frames=4, w=176, h=144)  # big enough for any of them
    with pytest.raises(AdmError, match="^distorted file .*: " + said.replace("(", r"\(")
                       .replace(")", r"\)")) as info:  # fmt: skip
        open_input(path, width=W, height=H, label="distorted", **given)
    assert "\n" not in str(info.value)
    with open_input(path, width=W, height=H, ignore_name=True, allow_partial_frame=True, **given):
        pass


def test_name_contradicts_a_partner(tmp_path):
    ref = write_y4m(DIS_RAW, tmp_path / "r.y4m", W, H, "420", 8)
    dis = write_raw(tmp_path / "d_10bit.yuv")
    with pytest.raises(AdmError) as info:
        open_inputs(ref, [dis])
    assert str(info.value) == (
        f"distorted file {str(dis)!r}: its name says 10-bit but reference file "
        f"{str(ref)!r} is 8-bit; give --ignore-name if the name is wrong"
    )
    with open_inputs(ref, [dis], ignore_name=True) as inputs:
        assert inputs.dis[0].bitdepth == 8


def test_distorted_name_of_another_size_offers_scale(tmp_path):
    ref = write_raw(tmp_path / "ref.yuv")
    dis = write_raw(tmp_path / "dis_176x144.yuv", frames=2, w=176, h=144)
    with pytest.raises(AdmError, match=r"its name says 176x144 but --width/--height are "
                       r"160x90; give --scale bicubic to read it at 176x144"):  # fmt: skip
        open_inputs(ref, [dis], width=W, height=H)


def test_scale_refuses_a_raw_rung_of_unnamed_size_that_is_not_whole_frames(tmp_path):
    ref = write_raw(tmp_path / "ref.yuv")
    dis = write_raw(tmp_path / "rung.yuv", frames=3, w=64, h=40)  # 3 x 3,840 bytes
    with pytest.raises(AdmError) as info:
        open_inputs(ref, [dis], width=W, height=H, scale="bicubic")
    assert str(info.value) == (
        f"distorted file {str(dis)!r}: with --scale a raw distorted file is read at the size "
        "its name states, and its name states none; at 160x90 its 11520 bytes are not whole "
        "frames: name its size (e.g. rung_640x360.yuv)"
    )
    named = tmp_path / "rung_64x40.yuv"
    dis.rename(named)
    with open_inputs(ref, [named], width=W, height=H, scale="bicubic") as inputs:
        assert inputs.dis[0].kind == "scaled"
    full = write_raw(tmp_path / "full.yuv", frames=2)  # the reference's size: kept as it is
    with open_inputs(ref, [full], width=W, height=H, scale="bicubic") as inputs:
        assert (inputs.dis[0].width, inputs.dis[0].height) == (W, H)


def test_scale_refuses_a_raw_rung_of_unnamed_size_whose_bytes_are_whole_frames(tmp_path):
    """A 80x44 rung of 8 frames is 2 frames of 160x88: read at the reference's size it
    would be scored as tiles; its frame count there gives it away."""
    ref = write_raw(tmp_path / "ref.yuv", frames=8, w=160, h=88)
    rung = write_raw(tmp_path / "rung.yuv", frames=8, w=80, h=44)
    with pytest.raises(AdmError) as info:
        open_inputs(ref, [rung], width=160, height=88, scale="bicubic")
    assert str(info.value) == (
        f"distorted file {str(rung)!r}: with --scale a raw distorted file is read at the "
        "size its name states, and its name states none; at 160x88 it holds 2 frames "
        "against the reference's 8, so it is likely of another size: name its size (e.g. "
        "rung_640x360.yuv)"
    )
    named = tmp_path / "rung_80x44.yuv"
    rung.rename(named)
    with open_inputs(ref, [named], width=160, height=88, scale="bicubic") as inputs:
        assert inputs.dis[0].kind == "scaled" and inputs.dis[0].num_frames == 8
    # at the reference's size, one frame short: kept as it is (the count warning's slack)
    short = write_raw(tmp_path / "short.yuv", frames=7, w=160, h=88)
    with open_inputs(ref, [short], width=160, height=88, scale="bicubic") as inputs:
        assert (inputs.dis[0].width, inputs.dis[0].num_frames) == (160, 7)
    # without --scale the same file keeps its old reading: two frames and a warning
    with open_inputs(ref, [tmp_path / "rung_80x44.yuv"], width=160, height=88,
                     ignore_name=True) as inputs:  # fmt: skip
        assert inputs.dis[0].num_frames == 2


def test_scale_refuses_an_unsized_raw_rung_it_cannot_check(tmp_path):
    """Where the rung's length at the reference's size cannot be checked against the
    reference's (an encoded reference, a raw stream) or names are ignored: refused, each
    in one line saying what would state its size."""
    ref = write_raw(tmp_path / "ref.yuv", frames=8, w=160, h=88)
    rung = write_raw(tmp_path / "rung.yuv", frames=8, w=80, h=44)  # 2 frames at 160x88
    mkv = encode(ref, tmp_path / "ref.mkv", 160, 88, "420", 8, FFV1)
    with pytest.raises(AdmError) as info:
        open_inputs(mkv, [rung], width=160, height=88, scale="bicubic")
    assert str(info.value) == (
        f"distorted file {str(rung)!r}: with --scale a raw distorted file is read at the "
        "size its name states, and its name states none; read at the reference's size "
        "(160x88), its length cannot be checked against the reference's, not known before "
        "it is read: name its size (e.g. rung_640x360.yuv)"
    )
    named = rung.rename(tmp_path / "rung_80x44.yuv")
    with open_inputs(mkv, [named], scale="bicubic") as inputs:
        assert inputs.dis[0].kind == "scaled"
    with pytest.raises(AdmError) as info:
        open_inputs(ref, [named], width=160, height=88, scale="bicubic", ignore_name=True)
    assert str(info.value) == (
        f"distorted file {str(named)!r}: with --scale a raw distorted file is read at the "
        "size its name states, and names are ignored (--ignore-name); at 160x88 it holds 2 "
        "frames against the reference's 8, so it is likely of another size: give it as Y4M, "
        "or drop --ignore-name and name its size (e.g. rung_640x360.yuv)"
    )
    fifo = tmp_path / "rung.fifo"
    os.mkfifo(fifo)
    writer = _fifo_writer(fifo, named.read_bytes())
    with pytest.raises(AdmError) as info:
        bounded(open_inputs, ref, [fifo], width=160, height=88, scale="bicubic")
    _reap(writer)
    assert str(info.value) == (
        f"distorted file {str(fifo)!r}: with --scale a raw distorted stream is read at the "
        "reference's size (160x88) and nothing states its own: pipe it as Y4M (ffmpeg ... "
        "-f yuv4mpegpipe -), which carries its size"
    )


def test_wrong_size_without_a_name_is_refused(tmp_path, caplog):
    """A 160x90 clip read at 100x50 is not whole frames: refused, naming the file's size,
    the frame's and what is left over; with allow_partial_frame its whole frames are read
    (as libvmaf's tool reads until a read comes up short), with a warning."""
    clip = write_raw(tmp_path / "clip.yuv", frames=3)
    with pytest.raises(AdmError) as info:
        open_input(clip, width=100, height=50)
    assert str(info.value) == (
        f"input file {str(clip)!r} has 64800 bytes, not a whole number of 100x50 420 8-bit "
        "frames of 7500 bytes: 8 whole frames and 4800 bytes over; check --width/--height/"
        "--pixel-format/--bitdepth, or give --allow-partial-frame if the file really ends in "
        "a partial frame"
    )
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        with open_input(clip, width=100, height=50, allow_partial_frame=True) as reader:
            assert len(reader) == 8
    (message,) = warnings_of(caplog)
    assert "not a multiple" in message
    named = write_raw(tmp_path / "clip_160x90.yuv", frames=3)
    with pytest.raises(AdmError, match="its name says 160x90 but --width/--height are 100x50"):
        open_input(named, width=100, height=50)


def test_frame_counts_far_apart_warn_on_opening(tmp_path, caplog):
    ref = write_raw(tmp_path / "ref.yuv", frames=5)
    dis = write_raw(tmp_path / "dis.yuv", frames=2)
    near = write_raw(tmp_path / "near.yuv", frames=4)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        open_inputs(ref, [dis, near], width=W, height=H).close()
    (message,) = warnings_of(caplog)
    assert message.startswith(f"reference file {str(ref)!r} holds 5 frames but distorted file")
    assert f"{str(dis)!r} holds 2 (at 160x90 420 8-bit)" in message


def test_common_names_do_not_trigger(tmp_path):
    path = write_raw(tmp_path / "crowd_run_1080p50_x264_crf23_20200420.yuv")
    with open_input(path, width=W, height=H) as reader:
        assert len(reader) == 3


# ---- raw files without .yuv, and what content says -----------------------------------------


def _container_samples(tmp_path):
    """(name, expected, bytes) for files the bundled ffmpeg writes."""
    exe = ffmpeg_exe()
    src = ["-f", "lavfi", "-i", "testsrc=size=64x48:rate=5:duration=0.4", "-pix_fmt", "yuv420p"]
    outputs = [
        ("a.mp4", "MP4/MOV", ["-c:v", "libx264"]),
        ("a.mov", "MP4/MOV", ["-c:v", "mpeg4"]),
        ("a.mkv", "Matroska/WebM", ["-c:v", "ffv1"]),
        ("a.webm", "Matroska/WebM", ["-c:v", "libvpx"]),
        ("a.avi", "AVI", ["-c:v", "mpeg4"]),
        ("a.ts", "MPEG-TS", ["-c:v", "mpeg2video"]),
        ("a.m2ts", "MPEG-TS", ["-c:v", "mpeg2video", "-f", "mpegts", "-mpegts_m2ts_mode", "1"]),
        ("a.ivf", "IVF", ["-c:v", "libvpx"]),
        ("a.flv", "FLV", ["-c:v", "flv"]),
        ("a.ogv", "Ogg", ["-c:v", "libtheora"]),
        ("a.nut", "NUT", ["-c:v", "ffv1"]),
        ("a.mxf", "MXF", ["-c:v", "mpeg2video", "-r", "25"]),
        ("a.mpg", "MPEG program stream", ["-c:v", "mpeg2video"]),
        ("a.m2v", "MPEG-1/2 video", ["-c:v", "mpeg2video", "-f", "mpeg2video"]),
        ("a.h264", "H.264", ["-c:v", "libx264", "-f", "h264"]),
        ("a.hevc", "HEVC", ["-c:v", "libx265", "-f", "hevc"]),
        ("a.png", "PNG image", ["-frames:v", "1", "-c:v", "png"]),
        ("a.jpg", "JPEG image", ["-frames:v", "1", "-pix_fmt", "yuvj420p"]),
    ]
    samples = []
    for name, expected, codec in outputs:
        out = tmp_path / name
        proc = subprocess.run([exe, "-nostdin", "-v", "error", "-y", *src, *codec, str(out)],
                              capture_output=True, timeout=60, check=False)  # fmt: skip
        if proc.returncode == 0:
            samples.append((name, expected, out.read_bytes()))
    return samples


def test_container_of_real_files(tmp_path):
    samples = _container_samples(tmp_path)
    assert len(samples) >= 12
    for name, expected, data in samples:
        assert container_of(data) == expected, name


@pytest.mark.parametrize("seed", range(4))
def test_container_of_raw_frames(seed):
    rng = np.random.default_rng(seed)
    assert container_of(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()) is None
    for value in (0, 1, 16, 0x47, 128, 235, 255):
        assert container_of(bytes([value]) * 4096) is None
    ramp = np.arange(4096, dtype=np.uint16).astype("<u2").tobytes()
    assert container_of(ramp) is None
    assert container_of(REF_RAW.read_bytes()) is None


@pytest.mark.parametrize("name", ["clip", "clip.bin", "clip.yuv420p", "clip.nv12"])
def test_raw_without_yuv_extension(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(REF_RAW.read_bytes())
    assert input_kind(path, sized=True) == "yuv"
    with open_input(path, width=W, height=H) as reader:
        assert isinstance(reader, YuvReader)
        assert [f.tobytes() for f in lumas(reader)] == [
            f.tobytes() for f in luma_frames(REF_RAW, W, H, "420", 8)
        ]


def test_raw_without_extension_needs_a_size(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    path = tmp_path / "clip"
    path.write_bytes(REF_RAW.read_bytes())
    with pytest.raises(AdmError, match="give -w and -h$") as info:
        open_input(path, label="reference")
    assert str(info.value).startswith(f"reference file {str(path)!r} ")


@pytest.mark.parametrize("name", ["cut.mp4", "cut_clip"])
def test_a_truncated_mp4_is_named_truncated_not_raw(tmp_path, name):
    """An MP4 whose writing was cut short (its index, the moov atom, written last, is
    missing) is MP4 by its first bytes: the message says so, not "for raw YUV give -w
    and -h", whatever its name, with -w/-h given or not."""
    mp4 = encode(DIS_RAW, tmp_path / "a.mp4", W, H, "420", 8, ["-c:v", "mpeg4"])
    cut = tmp_path / name
    cut.write_bytes(mp4.read_bytes()[: mp4.stat().st_size // 2])
    for sizes in ({}, {"width": W, "height": H}):
        with pytest.raises(AdmError) as info:
            open_inputs(REF_RAW if sizes else cut, [cut], **sizes)
        text = str(info.value)
        assert "\n" not in text and "-w" not in text and "raw YUV" not in text, text
        assert text == (
            f"{'distorted' if sizes else 'reference'} file {str(cut)!r} is not a video ffmpeg "
            "can read (moov atom not found); the file is MP4/MOV without its index (the moov "
            "atom), as a recording or encode cut short leaves it"
        )


def test_video_by_content_whatever_its_name(tmp_path):
    mkv = encode(DIS_RAW, tmp_path / "a.mkv", W, H, "420", 8, FFV1)
    plain = tmp_path / "dis_clip"
    plain.write_bytes(mkv.read_bytes())
    with open_input(plain, width=W, height=H) as reader:
        assert isinstance(reader, VideoReader)
        assert [f.tobytes() for f in lumas(reader)] == [
            f.tobytes() for f in luma_frames(DIS_RAW, W, H, "420", 8)
        ]
    named_raw = tmp_path / "oops.yuv"
    named_raw.write_bytes(mkv.read_bytes())
    with pytest.raises(AdmError) as info:
        open_input(named_raw, width=W, height=H, label="distorted")
    assert str(info.value) == (
        f"distorted file {str(named_raw)!r} is named as raw YUV (.yuv) but holds "
        "Matroska/WebM data; rename it (.mkv) to have ffmpeg decode it"
    )


def test_video_extension_is_not_read_as_raw(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    path = tmp_path / "broken.mp4"
    path.write_bytes(REF_RAW.read_bytes())
    assert input_kind(path, sized=True) == "video"
    with pytest.raises(AdmError, match="is not a video ffmpeg can read"):
        open_input(path, width=W, height=H)


# ---- streams: standard input, named pipes, /dev/fd ----------------------------------------


def _y4m_bytes(tmp_path, raw=DIS_RAW, name="s.y4m"):
    return write_y4m(raw, tmp_path / name, W, H, "420", 8).read_bytes()


def _fifo_writer(fifo, data):
    """A separate process that writes ``data`` into the named pipe ``fifo``."""
    src = fifo.with_suffix(".src")
    src.write_bytes(data)
    return subprocess.Popen(["sh", "-c", 'exec cat "$0" > "$1"', str(src), str(fifo)])


def _reap(*procs):
    for proc in procs:
        try:
            proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
            pytest.fail("a pipe writer did not finish")


def test_is_stream(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    assert is_stream("-") and is_stream(fifo) and is_stream("/dev/null")
    assert not is_stream(REF_RAW) and not is_stream(tmp_path / "missing")
    read, write = os.pipe()
    try:
        assert is_stream(f"/dev/fd/{read}")
    finally:
        os.close(read)
        os.close(write)
    with open(REF_RAW, "rb") as handle:  # a /dev/fd of a regular file is a file
        assert not is_stream(f"/dev/fd/{handle.fileno()}")


@pytest.mark.parametrize("kind", ["y4m", "raw"])
def test_fifo_reads_like_the_file(tmp_path, kind):
    fifo = tmp_path / "dis.fifo"
    os.mkfifo(fifo)
    data = _y4m_bytes(tmp_path) if kind == "y4m" else DIS_RAW.read_bytes()
    writer = _fifo_writer(fifo, data)

    def read():
        with open_inputs(REF_RAW, [fifo], width=W, height=H) as inputs:
            (reader,) = inputs.dis
            assert isinstance(reader, StreamReader) and reader.stream_format == kind
            assert reader.num_frames is None
            return lumas(reader)

    got = bounded(read)
    _reap(writer)
    want = luma_frames(DIS_RAW, W, H, "420", 8)
    assert len(got) == len(want) and all((a == b).all() for a, b in zip(got, want, strict=True))


def test_both_inputs_fifos_score_like_the_files(tmp_path):
    ref_fifo, dis_fifo = tmp_path / "ref.fifo", tmp_path / "dis.fifo"
    os.mkfifo(ref_fifo)
    os.mkfifo(dis_fifo)
    writers = [_fifo_writer(ref_fifo, REF_RAW.read_bytes()),
               _fifo_writer(dis_fifo, _y4m_bytes(tmp_path))]  # fmt: skip
    got = bounded(admcuda.score_files, ref_fifo, dis_fifo, width=W, height=H, backend="cpu")
    _reap(*writers)
    assert got == admcuda.score_files(REF_RAW, DIS_RAW, width=W, height=H, backend="cpu")


def test_stream_skips_by_reading_and_is_read_once(tmp_path):
    read, write = os.pipe()
    data = _y4m_bytes(tmp_path)
    writer = threading.Thread(target=lambda: (os.write(write, data), os.close(write)),
                              daemon=True)  # fmt: skip
    writer.start()
    try:
        reader = bounded(open_input, f"/dev/fd/{read}")
        frames = bounded(lambda: [np.array(f) for f in reader.iter_luma(1, 1)])
        want = luma_frames(DIS_RAW, W, H, "420", 8)
        assert len(frames) == 1 and (frames[0] == want[1]).all()
        with pytest.raises(AdmError, match="is a stream and can be read only once"):
            reader.iter_luma()
        reader.close()
    finally:
        writer.join(WAIT_S)
        os.close(read)


def _stream_of(data):
    """A stream input holding ``data`` (a pipe, written by a thread)."""
    read, write = os.pipe()

    def feed():
        try:
            os.write(write, data) if data else None
        finally:
            os.close(write)

    threading.Thread(target=feed, daemon=True).start()
    return read


def _stream_lumas(data):
    """The luma planes read from a stream input holding ``data``."""
    read = _stream_of(data)
    try:
        return bounded(lambda: lumas(open_input(f"/dev/fd/{read}")))
    finally:
        os.close(read)


@pytest.mark.parametrize(
    ("data", "kw", "match"),
    [
        (b"", {}, "is empty: nothing was written to it"),
        (b"\x00" * 5000, {}, "is not Y4M: for raw YUV frames give -w and -h"),
        (b"\x00" * 100, {"width": W, "height": H}, r"holds no whole frame: it ends inside "
         r"frame 0 \(100 of 21600 bytes of a 160x90 420 8-bit frame; check -w/-h/-p/-b\)"),
        (b"YUV4MPEG2 W160 H90\n", {}, "has a Y4M header but no frames"),
        (b"YUV4MPEG2 W160 H90 F25:1 C420j", {},
         r": it ends inside the Y4M header \(30 bytes, no end of line\)$"),
        (b"YUV4MPEG2 W160 H90\nFRAME I", {}, "holds no whole frame: it ends inside the FRAME "
         "marker of frame 0$"),
        (b"YUV4MPEG2 W160 H90\nFRAME " + b"x" * 300, {}, "holds no whole frame: the FRAME "
         "marker of frame 0 has no end of line within 256 bytes$"),
        (b"YUV4MPEG2 W160\n", {}, "no H tag"),
        (b"\x1a\x45\xdf\xa3" + b"\x00" * 64, {"width": W, "height": H},
         "holds Matroska/WebM data, which cannot be decoded from a stream; pipe Y4M instead"),
        (b"YUV4MPEG2 W160 H90 C420jpeg\n", {"width": 176}, "--width 176 contradicts"),
    ],
)  # fmt: skip
def test_stream_problems(data, kw, match):
    read = _stream_of(data)
    try:

        def attempt():
            with open_input(f"/dev/fd/{read}", label="distorted", **kw) as reader:
                list(reader.iter_luma())

        with pytest.raises(AdmError, match=match) as info:
            bounded(attempt)
        assert "\n" not in str(info.value)
        assert f"distorted file '/dev/fd/{read}'" in str(info.value)
    finally:
        os.close(read)


def test_stream_markers_libvmaf_accepts_are_read(tmp_path, caplog):
    # "FRAME", then anything to the newline (libvmaf's y4m_input.c): FRAME\r\n is a marker.
    data = _y4m_bytes(tmp_path)
    want = lumas(open_input(str(tmp_path / "s.y4m")))
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = _stream_lumas(data.replace(b"FRAME\n", b"FRAME\r\n"))
    assert warnings_of(caplog) == []
    assert len(frames) == len(want) > 1
    assert all(np.array_equal(a, b) for a, b in zip(frames, want, strict=True))


@pytest.mark.parametrize("tail", [b"F", b"FRA", b"abc\n", b"FRAME", b"\n\n\n\n\n"])
def test_stream_ending_in_fewer_than_6_bytes_ends_quietly(tmp_path, caplog, tail):
    # libvmaf's y4m_input.c reads 6 bytes for the next marker and takes fewer as the end.
    data = _y4m_bytes(tmp_path)
    want = lumas(open_input(str(tmp_path / "s.y4m")))
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = _stream_lumas(data + tail)
    assert warnings_of(caplog) == []
    assert len(frames) == len(want) == 3
    assert all(np.array_equal(a, b) for a, b in zip(frames, want, strict=True))
    with pytest.raises(AdmError, match="has a Y4M header but no frames"):
        _stream_lumas(data[: data.index(b"\n") + 1] + tail)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        assert len(_stream_lumas(data + tail + b"x" * (6 - len(tail)))) == 3
    assert len(warnings_of(caplog)) == 1


@pytest.mark.parametrize(
    ("tag", "meaning"),
    [("It", "top field first"), ("Ib", "bottom field first"), ("Im", "mixed")],
)
def test_interlaced_stream_is_scored_with_warning(tmp_path, caplog, tag, meaning):
    data = _y4m_bytes(tmp_path).replace(b" Ip ", f" {tag} ".encode(), 1)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = _stream_lumas(data)
    assert len(frames) == 3
    (message,) = warnings_of(caplog)
    assert f"is interlaced ({tag}, {meaning}); scoring each frame as one progressive" in message


@pytest.mark.parametrize("tag", ["Ip", "I?"])
def test_progressive_and_unknown_interlace_stream_is_quiet(tmp_path, caplog, tag):
    data = _y4m_bytes(tmp_path).replace(b" Ip ", f" {tag} ".encode(), 1)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        assert len(_stream_lumas(data)) == 3
    assert warnings_of(caplog) == []


def test_crlf_header_is_read_from_a_file_and_a_stream(tmp_path, caplog):
    # libvmaf reads W, H, F, A with sscanf and I by its letter: a CR after them is ignored.
    data = _y4m_bytes(tmp_path)
    want = lumas(open_input(str(tmp_path / "s.y4m")))
    end = data.index(b"\n")
    crlf = data[:end] + b" Ip\r" + data[end:]
    path = tmp_path / "crlf.y4m"
    path.write_bytes(crlf)
    read = _stream_of(crlf)
    try:
        with caplog.at_level(logging.WARNING, logger="admcuda"):
            frames = bounded(lambda: lumas(open_input(f"/dev/fd/{read}")))
            from_file = lumas(open_input(path))
    finally:
        os.close(read)
    assert warnings_of(caplog) == []
    for got in (frames, from_file):
        assert len(got) == len(want) == 3
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def test_stream_ending_inside_a_frame_marker_says_so(tmp_path, caplog):
    data = _y4m_bytes(tmp_path)
    read = _stream_of(data + b"FRAME I")
    try:
        with caplog.at_level(logging.WARNING, logger="admcuda"):
            frames = bounded(lambda: lumas(open_input(f"/dev/fd/{read}", label="distorted")))
    finally:
        os.close(read)
    assert len(frames) == 3
    assert warnings_of(caplog) == [
        f"distorted file '/dev/fd/{read}': it ends inside the FRAME marker of frame 3; "
        "scoring the 3 whole frames before it"
    ]


def test_stream_range_error_names_the_header(tmp_path):
    samples = np.full(W * H * 3 // 2, 512, "<u2")
    samples[W * H - 1] = 1500
    raw = tmp_path / "ten.yuv"
    raw.write_bytes(samples.tobytes())
    read = _stream_of(write_y4m(raw, tmp_path / "ten.y4m", W, H, "420", 10).read_bytes())
    try:
        with pytest.raises(AdmError) as info:
            bounded(lambda: lumas(open_input(f"/dev/fd/{read}", label="distorted")))
    finally:
        os.close(read)
    assert str(info.value) == (
        f"distorted file '/dev/fd/{read}' frame 0 has sample value 1500, too large for 10 "
        "bits (its Y4M header says C420p10)"
    )


def test_stream_ends_inside_a_frame_with_a_warning(tmp_path, caplog):
    data = _y4m_bytes(tmp_path)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        frames = _stream_lumas(data[:-100])
    assert len(frames) == 2
    (message,) = warnings_of(caplog)
    assert "it ends inside frame 2" in message and "scoring the 2 whole frames" in message
    with pytest.raises(AdmError, match="holds no whole frame: no FRAME marker"):
        _stream_lumas(data.replace(b"FRAME\n", b"FRAMX\n")[: len(data)])


def test_raw_stream_ends_inside_a_frame_with_a_warning(caplog):
    data = DIS_RAW.read_bytes()
    read = _stream_of(data[:-100])
    try:
        with caplog.at_level(logging.WARNING, logger="admcuda"):
            frames = bounded(
                lambda: lumas(open_input(f"/dev/fd/{read}", label="distorted", width=W, height=H))
            )
    finally:
        os.close(read)
    want = luma_frames(DIS_RAW, W, H, "420", 8)
    assert len(frames) == 2 and all((a == b).all() for a, b in zip(frames, want, strict=False))
    assert warnings_of(caplog) == [
        f"distorted file '/dev/fd/{read}': it ends inside frame 2 (21500 of 21600 bytes of a "
        "160x90 420 8-bit frame); scoring the 2 whole frames before it"
    ]


def test_a_stream_opened_again_keeps_its_first_bytes(tmp_path):
    """A caller that opens its inputs twice (a ladder retrying without a bad rung) gets
    the stream back as it was: the bytes read to tell its kind are not lost."""
    bad = tmp_path / "bad.yuv"
    bad.write_bytes(b"xx")
    read = _stream_of(_y4m_bytes(tmp_path))
    try:
        path = f"/dev/fd/{read}"
        assert input_kind(path) == "stream"
        with pytest.raises(AdmError, match="less than one"):
            bounded(open_inputs, REF_RAW, [path, bad], width=W, height=H)
        with bounded(open_inputs, REF_RAW, [path], width=W, height=H) as inputs:
            got = bounded(lumas, inputs.dis[0])
    finally:
        os.close(read)
    want = luma_frames(DIS_RAW, W, H, "420", 8)
    assert len(got) == 3 and all((a == b).all() for a, b in zip(got, want, strict=True))


def test_only_one_standard_input():
    with pytest.raises(AdmError, match=r"standard input \('-'\) can be only one"):
        open_inputs("-", ["-"])


# ---- the command line, reading streams -----------------------------------------------------


def run_cli(*args, timeout=120, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "admcuda", "score", *map(str, args)],
        capture_output=True, timeout=timeout, cwd=ROOT, env=env, check=False, **kwargs,
    )  # fmt: skip


def frames_of(proc):
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["frames"]


GEOMETRY = ("-w", W, "-h", H, "--json", "-q", "--backend", "cpu")


@pytest.fixture(scope="module")
def file_scores():
    return frames_of(run_cli(REF_RAW, DIS_RAW, *GEOMETRY))


@pytest.mark.parametrize("kind", ["y4m", "raw"])
def test_stdin_scores_like_the_file(tmp_path, file_scores, kind):
    data = _y4m_bytes(tmp_path) if kind == "y4m" else DIS_RAW.read_bytes()
    assert frames_of(run_cli(REF_RAW, "-", *GEOMETRY, input=data)) == file_scores
    # The reference on standard input works as well.
    ref = write_y4m(REF_RAW, tmp_path / "r.y4m", W, H, "420", 8).read_bytes()
    assert frames_of(run_cli("-", DIS_RAW, *GEOMETRY, input=ref)) == file_scores


def test_stdin_without_a_size_or_y4m_is_one_line(tmp_path):
    proc = run_cli(REF_RAW, "-", "--json", "-q", input=DIS_RAW.read_bytes())
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "give --width and --height" in err or "give -w and -h" in err


def _pipe_feeder(data):
    read, write = os.pipe()

    def feed():
        try:
            os.write(write, data)
        except OSError:
            pass
        finally:
            os.close(write)

    return read, threading.Thread(target=feed, daemon=True)


def test_dev_fd_pipes_score_like_the_files(tmp_path, file_scores):
    """``admcuda score <(...) <(...)``: both inputs on pipes, written concurrently."""
    ref_r, ref_feed = _pipe_feeder(REF_RAW.read_bytes())
    dis_r, dis_feed = _pipe_feeder(_y4m_bytes(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "admcuda", "score", f"/dev/fd/{ref_r}", f"/dev/fd/{dis_r}",
         *map(str, GEOMETRY)],
        pass_fds=(ref_r, dis_r), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
        env=env,
    )  # fmt: skip
    os.close(ref_r)
    os.close(dis_r)
    ref_feed.start()
    dis_feed.start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    ref_feed.join(WAIT_S)
    dis_feed.join(WAIT_S)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out)["frames"] == file_scores


def test_ffmpeg_pipe_scores_like_the_file(file_scores):
    """``ffmpeg ... -f yuv4mpegpipe - | admcuda score REF -``."""
    ffmpeg = subprocess.Popen(
        [ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p",
         "-s", f"{W}x{H}", "-i", str(DIS_RAW), "-f", "yuv4mpegpipe", "-"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    score = subprocess.Popen(
        [sys.executable, "-m", "admcuda", "score", str(REF_RAW), "-", "--json", "-q",
         "--backend", "cpu"],
        stdin=ffmpeg.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    assert ffmpeg.stdout is not None
    ffmpeg.stdout.close()
    try:
        out, err = score.communicate(timeout=120)
        ffmpeg.wait(timeout=WAIT_S)
    finally:
        score.kill()
        ffmpeg.kill()
    assert score.returncode == 0, err.decode()
    assert json.loads(out)["frames"] == file_scores


# ---- --scale ------------------------------------------------------------------------------


def _prescale(src_args, dst, size, flags):
    """What a user does by hand: scale with ffmpeg to a file, then score that."""
    cmd = [ffmpeg_exe(), "-nostdin", "-v", "error", "-y", *src_args, "-vf",
           f"scale={size[0]}:{size[1]}:flags={flags}", str(dst)]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)
    return dst


RAW_IN = ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", f"{W}x{H}"]


@pytest.fixture
def ladder(tmp_path):
    """A 176x144 reference and 160x90 distorted inputs as raw, Y4M and video."""
    pytest.importorskip("imageio_ffmpeg")
    ref = _prescale([*RAW_IN, "-i", str(REF_RAW)], tmp_path / "ref_176x144.y4m", (176, 144),
                    "lanczos")  # fmt: skip
    raw = tmp_path / "dis_160x90.yuv"
    raw.write_bytes(DIS_RAW.read_bytes())
    y4m = write_y4m(DIS_RAW, tmp_path / "dis.y4m", W, H, "420", 8)
    mkv = encode(DIS_RAW, tmp_path / "dis.mkv", W, H, "420", 8, FFV1)
    return ref, raw, y4m, mkv


@pytest.mark.parametrize("flags", ["bicubic", "lanczos", "neighbor", "bilinear+accurate_rnd"])
def test_scale_reads_what_a_prescaled_file_holds(tmp_path, ladder, flags):
    ref, raw, y4m, mkv = ladder
    pre = _prescale(["-i", str(y4m)], tmp_path / "pre.y4m", (176, 144), flags)
    with open_input(pre) as reader:
        want = lumas(reader)
    with open_inputs(ref, [raw, y4m, mkv], scale=flags) as inputs:
        assert all(isinstance(d, ScaledReader) for d in inputs.dis)
        assert [d.source_kind for d in inputs.dis] == ["yuv", "y4m", "video"]
        assert inputs.dis[0].num_frames == 3 and inputs.dis[2].num_frames is None
        for reader in inputs.dis:
            got = lumas(reader)
            assert len(got) == len(want)
            assert all((a == b).all() for a, b in zip(got, want, strict=True)), reader


def test_scale_scores_like_a_prescaled_file(tmp_path, ladder):
    ref, raw, y4m, _ = ladder
    if "scale" not in inspect.signature(admcuda.score_files).parameters:
        pytest.skip("score_files has no scale parameter yet")
    pre = _prescale(["-i", str(y4m)], tmp_path / "pre.y4m", (176, 144), "bicubic")
    want = admcuda.score_files(ref, pre, backend="cpu")
    assert admcuda.score_files(ref, y4m, backend="cpu", scale="bicubic") == want
    assert admcuda.score_files(ref, raw, backend="cpu", scale="bicubic") == want


def test_scale_of_a_stream(tmp_path, ladder):
    """A Y4M stream of another size goes through ffmpeg's standard input."""
    ref, _, y4m, _ = ladder
    pre = _prescale(["-i", str(y4m)], tmp_path / "pre.y4m", (176, 144), "spline")
    with open_input(pre) as reader:
        want = lumas(reader)
    read = _stream_of(y4m.read_bytes())
    try:

        def scaled():
            with open_inputs(ref, [f"/dev/fd/{read}"], scale="spline") as inputs:
                (reader,) = inputs.dis
                assert isinstance(reader, ScaledReader) and reader.source_kind == "stream"
                frames = lumas(reader)
                with pytest.raises(AdmError, match="can be read only once"):
                    next(iter(reader.iter_luma()))
                return frames

        got = bounded(scaled)
    finally:
        os.close(read)
    assert len(got) == len(want) and all((a == b).all() for a, b in zip(got, want, strict=True))


# The Y4M rungs below are read by admcuda's own reader and handed to ffmpeg on its standard
# input, frame by frame: ffmpeg scales exactly the frames admcuda read and checked.
SMALL = (40, 30)


def _clip_y4m(path, fmt="420", bits=8, *, size=SMALL, frames=4, seed=5, header=None,
              markers=None, tail=b""):  # fmt: skip
    """Random frames as Y4M, byte by byte; ``header`` and ``markers`` override the lines."""
    w, h = size
    rng = np.random.default_rng(seed)
    n = frame_bytes(w, h, fmt, bits) // (1 if bits == 8 else 2)
    head = header or f"YUV4MPEG2 W{w} H{h} F25:1 Ip C{y4m_colorspace(fmt, bits)}\n".encode()
    out = bytearray(head)
    for k in range(frames):
        samples = rng.integers(0, 1 << bits, n)
        out += markers[k] if markers else b"FRAME\n"
        out += samples.astype(np.uint8 if bits == 8 else "<u2").tobytes()
    path.write_bytes(bytes(out) + tail)
    return path


def _scaled_lumas(ref, dis, flags="bicubic", start=0, **kw):
    def read():
        with open_inputs(ref, [dis], scale=flags, **kw) as inputs:
            (reader,) = inputs.dis
            assert isinstance(reader, ScaledReader)
            return [np.array(plane) for plane in reader.iter_luma(start)]

    return bounded(read)


def _as_stream(path):
    return _stream_of(Path(path).read_bytes())


@pytest.mark.parametrize(
    ("variant", "change"),
    [
        ("a 600-byte header", {"header": b"YUV4MPEG2 W40 H30 F25:1 Ip C420jpeg X" + b"Y" * 562
                               + b"\n"}),
        ("200-byte markers", {"markers": [b"FRAME " + b"x" * 193 + b"\n"] * 4}),
        ("85-byte markers", {"markers": [b"FRAME Ip " + b"x" * 75 + b"\n"] * 4}),
        ("mixed interlacing", {"header": b"YUV4MPEG2 W40 H30 F25:1 Im C420jpeg\n"}),
        ("a CRLF header", {"header": b"YUV4MPEG2 C420jpeg W40 H30 F25:1 Ip\r\n"}),
        ("CRLF markers", {"markers": [b"FRAME\r\n"] * 4}),
    ],
)  # fmt: skip
def test_scale_reads_the_frames_admcuda_reads(tmp_path, variant, change):
    """Y4M files admcuda reads but ffmpeg's demuxer refuses (or reads otherwise) scale
    like the plain file: ffmpeg gets admcuda's frames, not the file."""
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_y4m(tmp_path / "ref.y4m", size=(64, 48), seed=1)
    want = _scaled_lumas(ref, _clip_y4m(tmp_path / "plain.y4m"))
    odd = _clip_y4m(tmp_path / "odd.y4m", **change)
    got = _scaled_lumas(ref, odd)
    assert len(want) == len(got) == 4, variant
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)), variant
    read = _as_stream(odd)
    try:
        got = _scaled_lumas(ref, f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert len(got) == 4 and all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize(
    ("change", "count", "problem"),
    [
        ({"markers": [b"FRAME\n"] * 2 + [b"GARBAGE\n"] * 2}, 2, "no FRAME marker"),
        ({"tail": b"FRAME\n" + b"\x80" * 700}, 4, "it ends inside frame 4 (700 of 1800 bytes"),
        ({"tail": b"FRAME " + b"x" * 100}, 4, "it ends inside the FRAME marker"),
    ],
)
def test_scale_scores_the_frames_and_warnings_of_the_plain_reading(tmp_path, caplog, change,
                                                                   count, problem):  # fmt: skip
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_y4m(tmp_path / "ref.y4m", size=(64, 48), seed=1, frames=6)
    want = _scaled_lumas(ref, _clip_y4m(tmp_path / "plain.y4m"))[:count]
    bad = _clip_y4m(tmp_path / "bad.y4m", **change)
    read = _as_stream(bad)
    try:
        for dis in (bad, f"/dev/fd/{read}"):
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="admcuda"):
                got = _scaled_lumas(ref, dis)
            assert len(got) == count
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
            (message,) = warnings_of(caplog)
            assert problem in message and f"scoring the {count} whole frames" in message
    finally:
        os.close(read)


def test_scale_refuses_samples_out_of_range_as_the_plain_reading(tmp_path):
    """A 10-bit sample too large in a rung of another size stops the run with the same
    line as at the reference's size; a frame before the selection is not looked at."""
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_y4m(tmp_path / "ref.y4m", "420", 10, size=(64, 48), seed=1)
    dis = _clip_y4m(tmp_path / "dis.y4m", "420", 10)
    data = bytearray(dis.read_bytes())
    frame = 6 + frame_bytes(*SMALL, "420", 10)
    first = data.index(b"\n") + 1 + 6
    data[first + frame + 100 : first + frame + 102] = (3000).to_bytes(2, "little")  # frame 1
    dis.write_bytes(bytes(data))
    with Y4mReader(dis, label="distorted") as plain, pytest.raises(AdmError) as info:
        plain.read_luma(1)
    message = str(info.value)
    assert message.endswith("frame 1 has sample value 3000, too large for 10 bits (its Y4M "
                            "header says C420p10)")  # fmt: skip
    with pytest.raises(AdmError) as info:
        _scaled_lumas(ref, dis)
    assert str(info.value) == message
    read = _as_stream(dis)
    try:
        with pytest.raises(AdmError) as info:
            _scaled_lumas(ref, f"/dev/fd/{read}")
    finally:
        os.close(read)
    assert str(info.value) == message.replace(repr(str(dis)), f"'/dev/fd/{read}'")
    assert len(_scaled_lumas(ref, dis, start=2)) == 2
    data[first + 100 : first + 102] = (3000).to_bytes(2, "little")  # frame 0 as well
    data[first + frame + 100 : first + frame + 102] = b"\x00\x00"
    dis.write_bytes(bytes(data))
    assert len(_scaled_lumas(ref, dis, start=1)) == 3


@pytest.mark.parametrize(("fmt", "bits"), [("420", 8), ("422", 10), ("444", 12), ("400", 16)])
def test_scale_of_a_y4m_equals_scale_of_its_raw_frames(tmp_path, fmt, bits):
    """The frames admcuda hands ffmpeg (behind a header of its own) scale as ffmpeg scales
    the same frames read from a raw file."""
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_y4m(tmp_path / "ref.y4m", fmt, bits, size=(64, 48), seed=1)
    y4m = _clip_y4m(tmp_path / "dis.y4m", fmt, bits, markers=[b"FRAME Ip XA=1\n"] * 4)
    data = y4m.read_bytes()
    body = data.split(b"\n", 1)[1].split(b"FRAME Ip XA=1\n")
    pix = {"400": f"gray{bits}le" if bits > 8 else "gray"}.get(fmt, f"yuv{fmt}p" + (
        f"{bits}le" if bits > 8 else ""))  # fmt: skip
    raw = tmp_path / f"dis_40x30_{pix}.yuv"
    raw.write_bytes(b"".join(body))
    for flags in ("bicubic", "lanczos"):
        want = _scaled_lumas(ref, raw, flags)
        assert len(want) == 4
        got = _scaled_lumas(ref, y4m, flags)
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


# Raw rungs too are read by admcuda's reader and fed to ffmpeg, whole frame by whole frame.
def _clip_raw(path, fmt="420", bits=10, *, size=SMALL, frames=4, seed=5, bad=(), tail=b""):
    """Random raw frames; ``bad`` holds (frame, value) pairs: that frame's 101st luma
    sample is set to that value."""
    w, h = size
    rng = np.random.default_rng(seed)
    n = frame_bytes(w, h, fmt, bits) // (1 if bits == 8 else 2)
    data = rng.integers(0, 1 << bits, (frames, n)).astype(np.uint8 if bits == 8 else "<u2")
    for frame, value in bad:
        data[frame, 100] = value
    path.write_bytes(data.tobytes() + tail)
    return path


def _geometry(fmt="420", bits=10):
    """The -w/-h/-p/-b of a 64x48 raw reference and its raw rungs."""
    return {"width": 64, "height": 48, "pixel_format": fmt, "bitdepth": bits}


def _ffmpeg_scaled(raw, fmt, bits, size, flags="bicubic", to=(64, 48)):
    """ffmpeg reading the raw file itself and scaling it, as ``--scale`` had it read a raw
    rung before admcuda fed it: the luma planes, one array per frame."""
    pix = ffmpeg_pix_fmt(fmt, bits)
    gray = "gray" if bits == 8 else f"gray{bits}le"
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-f", "rawvideo",
           "-pix_fmt", pix, "-s", f"{size[0]}x{size[1]}", "-i", str(raw), "-vf",
           f"scale={to[0]}:{to[1]}:flags={flags},format={pix},extractplanes=y", "-pix_fmt",
           gray, "-fps_mode", "passthrough", "-f", "rawvideo", "pipe:1"]  # fmt: skip
    out = subprocess.run(cmd, check=True, capture_output=True, timeout=60).stdout
    planes = np.frombuffer(out, np.uint8 if bits == 8 else "<u2")
    return list(planes.reshape(-1, to[1], to[0]))


def _same_planes(got, want):
    return len(got) == len(want) and all(
        np.array_equal(a, b) for a, b in zip(got, want, strict=True)
    )


@pytest.mark.parametrize(("fmt", "bits"), [("420", 8), ("422", 10), ("444", 12), ("400", 16)])
def test_scale_of_a_raw_rung_equals_ffmpeg_scaling_the_file(tmp_path, fmt, bits):
    """Fed by admcuda, a clean raw rung scales as ffmpeg scales it reading the file itself
    (as it did before admcuda fed it): from the first frame or after a skip, whole or with
    a partial last frame (left out)."""
    pytest.importorskip("imageio_ffmpeg")
    pix = ffmpeg_pix_fmt(fmt, bits)
    ref = _clip_raw(tmp_path / f"ref_64x48_{pix}.yuv", fmt, bits, size=(64, 48), seed=1)
    dis = _clip_raw(tmp_path / f"dis_40x30_{pix}.yuv", fmt, bits)
    geo = _geometry(fmt, bits)
    for flags in ("bicubic", "lanczos"):
        want = _ffmpeg_scaled(dis, fmt, bits, SMALL, flags)
        assert len(want) == 4
        assert _same_planes(_scaled_lumas(ref, dis, flags, **geo), want)
        assert _same_planes(_scaled_lumas(ref, dis, flags, 1, **geo), want[1:])
    partial = _clip_raw(tmp_path / f"cut_40x30_{pix}.yuv", fmt, bits, tail=b"\x01" * 333)
    got = _scaled_lumas(ref, partial, allow_partial_frame=True, **geo)
    assert _same_planes(got, _ffmpeg_scaled(dis, fmt, bits, SMALL))


def test_scale_scores_a_10_bit_raw_rung_like_a_prescaled_file(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_raw(tmp_path / "ref_64x48_yuv420p10le.yuv", size=(64, 48), seed=1)
    dis = _clip_raw(tmp_path / "dis_40x30_yuv420p10le.yuv")
    geo = _geometry()
    raw_in = ["-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-s", "40x30", "-i", str(dis)]
    pre = _prescale(raw_in, tmp_path / "pre_64x48.yuv", (64, 48), "bicubic")
    want = admcuda.score_files(ref, pre, backend="cpu", **geo)
    assert len(want) == 4
    assert admcuda.score_files(ref, dis, backend="cpu", scale="bicubic", **geo) == want


@pytest.mark.parametrize(("bits", "value"), [(10, 3000), (12, 5000)])
def test_scale_refuses_raw_samples_out_of_range_as_the_plain_reading(tmp_path, bits, value):
    """A sample too large in a raw rung of another size stops the run with the line it
    gets at the reference's size (ffmpeg used to read the file itself, and the pair was
    scored); a frame before the selection is not looked at."""
    pytest.importorskip("imageio_ffmpeg")
    pix = f"yuv420p{bits}le"
    ref = _clip_raw(tmp_path / f"ref_64x48_{pix}.yuv", bits=bits, size=(64, 48), seed=1)
    dis = _clip_raw(tmp_path / f"dis_40x30_{pix}.yuv", bits=bits, bad=[(1, value)])
    geo = _geometry(bits=bits)
    with YuvReader(dis, width=40, height=30, bitdepth=bits, label="distorted") as plain:
        with pytest.raises(AdmError) as info:
            plain.read_luma(1)
    message = str(info.value)
    assert message.endswith(f"frame 1 has sample value {value}, too large for {bits} bits; "
                            "is --bitdepth right?")  # fmt: skip
    with pytest.raises(AdmError) as info:
        _scaled_lumas(ref, dis, **geo)
    assert str(info.value) == message
    with pytest.raises(AdmError) as info:
        admcuda.score_files(ref, dis, backend="cpu", scale="bicubic", **geo)
    assert str(info.value) == message.replace("--bitdepth", "bitdepth")  # the API's names
    proc = run_cli(
        ref, dis, "-w", 64, "-h", 48, "-b", bits, "--scale", "bicubic", "--backend", "cpu", "-q"
    )
    assert proc.returncode != 0 and proc.stdout == b""
    assert proc.stderr.decode().strip().splitlines() == [f"admcuda: error: {message}"]
    assert len(_scaled_lumas(ref, dis, start=2, **geo)) == 2
    assert len(admcuda.score_files(ref, dis, backend="cpu", scale="bicubic", **geo,
                                   frame_skip_ref=2, frame_skip_dist=2)) == 2  # fmt: skip


def test_scale_refuses_samples_out_of_range_in_a_raw_stream(tmp_path):
    """A raw stream of another size (which open_inputs refuses for want of a size, but
    the API can scale) has its samples checked while it is fed, as without scaling."""
    pytest.importorskip("imageio_ffmpeg")
    dis = _clip_raw(tmp_path / "dis.yuv", bad=[(2, 3000)])

    def read(start=0, *, scaled=True):
        fd = _as_stream(dis)
        try:
            reader = StreamReader(open_stream(f"/dev/fd/{fd}", label="distorted"),
                                  width=40, height=30, bitdepth=10)  # fmt: skip
            if scaled:
                reader = ScaledReader(reader, width=64, height=48, scaler="bicubic")
            with reader:
                return [np.array(plane) for plane in reader.iter_luma(start)]
        except AdmError as exc:
            raise AdmError(str(exc).replace(f"/dev/fd/{fd}", "/dev/fd/N")) from None
        finally:
            os.close(fd)

    with pytest.raises(AdmError) as info:
        bounded(read, scaled=False)
    message = str(info.value)
    assert message == ("distorted file '/dev/fd/N' frame 2 has sample value 3000, too large "
                       "for 10 bits; is --bitdepth right?")  # fmt: skip
    with pytest.raises(AdmError) as info:
        bounded(read)
    assert str(info.value) == message
    assert len(bounded(read, 3)) == 1
    _clip_raw(dis)
    assert len(bounded(read)) == 4


def _as_y4m(raw, path, size=SMALL, bits=10):
    """The frames of a 4:2:0 raw file as a Y4M file."""
    data = raw.read_bytes()
    n = frame_bytes(*size, "420", bits)
    frames = [b"FRAME\n" + data[k : k + n] for k in range(0, len(data), n)]
    path.write_bytes(f"YUV4MPEG2 W{size[0]} H{size[1]} C420p{bits}\n".encode() + b"".join(frames))
    return path


@pytest.mark.parametrize("kind", ["raw", "y4m"])
def test_scale_checks_the_frames_a_subsample_scores(tmp_path, kind):
    """With --subsample, a rung of another size has the frames scored range-checked, as a
    file read by position has without --scale: a sample too large in a frame passed over
    is not looked at (ffmpeg is still fed that frame, which it scales and admcuda drops)."""
    pytest.importorskip("imageio_ffmpeg")
    ref = _clip_raw(tmp_path / "ref_64x48_yuv420p10le.yuv", size=(64, 48), seed=1)
    geo = _geometry()
    same = _clip_raw(tmp_path / "same_64x48_yuv420p10le.yuv", size=(64, 48), bad=[(1, 3000)])
    assert len(admcuda.score_files(ref, same, backend="cpu", subsample=2, **geo)) == 2
    with pytest.raises(AdmError, match="frame 1 has sample value 3000"):
        admcuda.score_files(ref, same, backend="cpu", **geo)

    def rung(name, bad):
        raw = _clip_raw(tmp_path / f"{name}_40x30_yuv420p10le.yuv", bad=bad)
        return raw if kind == "raw" else _as_y4m(raw, tmp_path / f"{name}.y4m")

    def score(dis, skip=0):
        return admcuda.score_files(ref, dis, backend="cpu", scale="bicubic", subsample=2,
                                   frame_skip_ref=skip, frame_skip_dist=skip, **geo)  # fmt: skip

    clean = rung("clean", [])
    odd = rung("odd", [(1, 3000), (3, 3000)])
    want = score(clean)
    assert len(want) == 2 and score(odd) == want
    with pytest.raises(AdmError, match="frame 1 has sample value 3000"):
        score(odd, skip=1)
    even = rung("even", [(2, 3000)])
    with pytest.raises(AdmError, match="frame 2 has sample value 3000"):
        score(even)
    assert score(even, skip=1) == score(clean, skip=1)


def test_size_mismatch_without_scale_names_it(ladder):
    ref, _, y4m, mkv = ladder
    for dis in (y4m, mkv):
        want = r"is 160x90 but reference file .* is 176x144; give --scale bicubic \(or another"
        with pytest.raises(AdmError, match=want):
            open_inputs(ref, [dis])


def test_scale_keeps_matching_inputs_and_checks_names(ladder):
    ref, raw, y4m, _ = ladder
    pre = ref  # already 176x144: read directly
    with open_inputs(ref, [pre], scale="bicubic") as inputs:
        assert not isinstance(inputs.dis[0], ScaledReader)
    with pytest.raises(AdmError, match="unknown scaler 'cubic' for --scale; use one of "):
        open_inputs(ref, [y4m], scale="cubic")
    assert check_scaler("Lanczos+accurate_rnd") == "lanczos+accurate_rnd"
    with pytest.raises(AdmError, match="unknown scaler"):
        check_scaler("bicubic+fast")


# ---- the command line's --scale and --ignore-name ----------------------------------------


def _cli_has_new_flags() -> bool:
    try:
        proc = run_cli("--help", timeout=60)
    except subprocess.TimeoutExpired:
        return False
    text = proc.stdout.decode()
    return "--scale" in text and "--ignore-name" in text


needs_flags = pytest.mark.skipif(not _cli_has_new_flags(), reason="CLI lacks --scale yet")


@needs_flags
def test_cli_scale_matches_prescaled(tmp_path, ladder):
    ref, raw, y4m, _ = ladder
    pre = _prescale(["-i", str(y4m)], tmp_path / "pre.y4m", (176, 144), "bicubic")
    want = frames_of(run_cli(ref, pre, "--json", "-q", "--backend", "cpu"))
    for dis in (raw, y4m):
        got = frames_of(run_cli(ref, dis, "--scale", "bicubic", "--json", "-q", "--backend",
                                "cpu"))  # fmt: skip
        assert got == want
    proc = run_cli(ref, y4m, "--json", "-q")
    assert proc.returncode != 0 and b"--scale" in proc.stderr
    assert proc.stderr.decode().count("\n") == 1


@needs_flags
def test_cli_ignore_name(tmp_path, file_scores):
    named = tmp_path / "dis_10bit.yuv"
    named.write_bytes(DIS_RAW.read_bytes())
    proc = run_cli(REF_RAW, named, *GEOMETRY)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and err.count("\n") == 1
    assert "its name says 10-bit but --bitdepth is 8 (default); give -b 10" in err
    assert frames_of(run_cli(REF_RAW, named, *GEOMETRY, "--ignore-name")) == file_scores


@pytest.mark.parametrize(
    ("name", "layout", "bits"),
    [("sparks_ref_176x144.yuv42010le.yuv", "420", 10), ("c.yuv42212le.yuv", "422", 12),
     ("c_yuv44416le.yuv", "444", 16), ("c.yuv420p10le.yuv", "420", 10)],
)  # fmt: skip
def test_netflix_names_state_their_bit_depth(tmp_path, name, layout, bits):
    """Netflix's own clips are named ``NAME_WxH.yuv42010le.yuv``: read as 8-bit 4:2:0
    (exit 0, one warning) until the name was read as ``yuv420p10le`` is."""
    hints = name_hints(name)
    assert (hints.pixel_format, hints.bitdepth) == (layout, bits)
    from admcuda.io.formats import frame_bytes as layout_bytes

    size = layout_bytes(176, 144, layout, bits)
    path = write_raw(tmp_path / name, frames=2, w=176, h=144, bits=bits, fmt_bytes=size)
    with pytest.raises(AdmError, match=f"its name says {bits}-bit but --bitdepth is 8"):
        open_input(path, width=176, height=144, pixel_format=layout)
    with open_input(path, width=176, height=144, pixel_format=layout, bitdepth=bits) as reader:
        assert reader.bitdepth == bits


def test_netflix_big_endian_and_unsupported_names():
    assert name_hints("c.yuv42010be.yuv").big_endian_planar == "yuv420p10le"
    assert name_hints("c.yuv42214le.yuv").unsupported_planar == "yuv422p16le"

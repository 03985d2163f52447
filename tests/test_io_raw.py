"""Raw YUV geometry and the luma reader: layouts, dtypes and validation messages."""

from __future__ import annotations

import logging
import os
import threading

import numpy as np
import pytest
from conftest import NETFLIX

from admcuda.errors import AdmError
from admcuda.io.formats import check_geometry, frame_bytes, plane_shapes
from admcuda.io.raw import YuvReader


@pytest.mark.parametrize(
    ("w", "h", "fmt", "bits", "expected"),
    [
        (576, 324, "420", 8, 279936),  # size of one frame of the shared Netflix 8-bit pair
        (576, 324, "420", 10, 559872),
        (17, 17, "420", 8, 17 * 17 + 2 * 9 * 9),
        (17, 19, "422", 8, 17 * 19 + 2 * 9 * 19),
        (17, 19, "444", 12, 3 * 17 * 19 * 2),
        (17, 19, "400", 16, 17 * 19 * 2),
        (176, 144, "420", 8, 38016),
    ],
)
def test_frame_bytes(w, h, fmt, bits, expected):
    assert frame_bytes(w, h, fmt, bits) == expected


def test_plane_shapes_round_chroma_up():
    assert plane_shapes(33, 21, "420") == ((21, 33), (11, 17), (11, 17))
    assert plane_shapes(33, 21, "422") == ((21, 33), (21, 17), (21, 17))
    assert plane_shapes(33, 21, "444") == ((21, 33),) * 3
    assert plane_shapes(33, 21, "400") == ((21, 33),)
    assert plane_shapes(33, 21, 420) == plane_shapes(33, 21, "420")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((16, 100, "420", 8), "width 16 is too small.*> 16"),
        ((100, 16, "420", 8), "height 16 is too small"),
        ((0, 100, "420", 8), "width 0"),
        ((100, 100, "411", 8), "unsupported pixel format"),
        ((100, 100, "420", 9), "unsupported bit depth 9"),
        ((100, 100, "420", 32), "unsupported bit depth"),
    ],
)
def test_check_geometry(args, match):
    with pytest.raises(AdmError, match=match):
        check_geometry(*args)


def _write_clip(path, w, h, fmt, bits, frames, seed=0):
    """Write a clip with random planes; return the list of (Y, U, V...) per frame."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if bits == 8 else np.uint16
    clip = []
    blob = bytearray()
    for _ in range(frames):
        planes = tuple(
            rng.integers(0, 1 << bits, size=shape, dtype=np.uint32).astype(dtype)
            for shape in plane_shapes(w, h, fmt)
        )
        clip.append(planes)
        for plane in planes:
            blob += plane.astype(plane.dtype.newbyteorder("<")).tobytes()
    path.write_bytes(bytes(blob))
    return clip


@pytest.mark.parametrize("fmt", ["420", "422", "444", "400"])
@pytest.mark.parametrize("bits", [8, 10, 12, 16])
def test_reads_luma_and_planes(tmp_path, fmt, bits):
    w, h = 19, 17
    path = tmp_path / "clip.yuv"
    clip = _write_clip(path, w, h, fmt, bits, frames=3)
    with YuvReader(path, width=w, height=h, pixel_format=fmt, bitdepth=bits) as reader:
        assert len(reader) == 3
        lumas = list(reader)
        for k, luma in enumerate(lumas):
            assert luma.dtype == (np.uint8 if bits == 8 else np.uint16)
            assert luma.dtype.isnative
            assert luma.flags.c_contiguous and luma.flags.writeable
            assert luma.shape == (h, w)
            np.testing.assert_array_equal(luma, clip[k][0])
        for k in range(3):
            for got, want in zip(reader.read_planes(k), clip[k], strict=True):
                np.testing.assert_array_equal(got, want)


def test_little_endian_decoding(tmp_path):
    w, h = 17, 17
    path = tmp_path / "le.yuv"
    luma = np.arange(w * h, dtype="<u2").reshape(h, w) * 3
    chroma = np.zeros(2 * 9 * 9, dtype="<u2")
    path.write_bytes(luma.tobytes() + chroma.tobytes())
    raw = path.read_bytes()
    assert raw[2:4] == bytes([3, 0])  # sample 1 == 3, low byte first
    with YuvReader(path, width=w, height=h, bitdepth=10) as reader:
        np.testing.assert_array_equal(reader.read_luma(0), luma.astype(np.uint16))


def test_netflix_10bit_is_8bit_shifted():
    ref8, ref10 = (
        NETFLIX / "src01_hrc00_576x324_3f.yuv",
        NETFLIX / "src01_hrc00_576x324.yuv420p10le.yuv",
    )
    if not (ref8.exists() and ref10.exists()):
        pytest.skip("shared Netflix files not present")
    with (
        YuvReader(ref8, width=576, height=324) as r8,
        YuvReader(ref10, width=576, height=324, bitdepth=10) as r10,
    ):
        assert len(r8) == len(r10) == 3
        for a, b in zip(r8, r10, strict=True):
            np.testing.assert_array_equal(a.astype(np.uint16) << 2, b)


def test_partial_frame_is_refused(tmp_path):
    """A size that is not whole frames is most often flags that do not fit the file
    (-w/-h/-p/-b): one line naming the file's size, the frame's and the remainder."""
    w, h = 17, 17
    path = tmp_path / "partial.yuv"
    _write_clip(path, w, h, "420", 8, frames=2)
    with path.open("ab") as f:
        f.write(b"\x00" * 100)
    with pytest.raises(AdmError) as info:
        YuvReader(path, width=w, height=h, label="distorted")
    assert str(info.value) == (
        f"distorted file {str(path)!r} has 1002 bytes, not a whole number of 17x17 420 8-bit "
        "frames of 451 bytes: 2 whole frames and 100 bytes over; check --width/--height/"
        "--pixel-format/--bitdepth, or give --allow-partial-frame if the file really ends in "
        "a partial frame"
    )


def test_partial_frame_allowed_warns_and_scores_whole_frames(tmp_path, caplog):
    w, h = 17, 17
    path = tmp_path / "partial.yuv"
    clip = _write_clip(path, w, h, "420", 8, frames=2)
    with path.open("ab") as f:
        f.write(b"\x00" * 100)
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        reader = YuvReader(path, width=w, height=h, label="distorted", allow_partial_frame=True)
    with reader:
        assert len(reader) == 2
        np.testing.assert_array_equal(reader.read_luma(1), clip[1][0])
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "\n" not in message
    assert "distorted" in message and "2 whole frames" in message and "100 bytes" in message


def test_missing_file(tmp_path):
    with pytest.raises(AdmError, match="reference file .*nope.yuv.* not found"):
        YuvReader(tmp_path / "nope.yuv", width=32, height=32, label="reference")


def test_directory(tmp_path):
    with pytest.raises(AdmError, match="is a directory"):
        YuvReader(tmp_path, width=32, height=32)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.yuv"
    path.write_bytes(b"")
    with pytest.raises(AdmError, match="is empty"):
        YuvReader(path, width=32, height=32)


def test_smaller_than_one_frame(tmp_path):
    path = tmp_path / "short.yuv"
    path.write_bytes(b"\x00" * 1000)
    with pytest.raises(AdmError, match=r"1000 bytes, less than one 32x32 420 8-bit frame \(1536"):
        YuvReader(path, width=32, height=32)


def test_geometry_checked_before_file(tmp_path):
    with pytest.raises(AdmError, match="> 16"):
        YuvReader(tmp_path / "missing.yuv", width=8, height=8)


def test_sample_too_large_for_bitdepth(tmp_path):
    path = tmp_path / "wide.yuv"
    _write_clip(path, 17, 17, "420", 16, frames=1, seed=3)
    with (
        YuvReader(path, width=17, height=17, bitdepth=10) as reader,
        pytest.raises(AdmError, match="too large for 10 bits"),
    ):
        reader.read_luma(0)
    with YuvReader(path, width=17, height=17, bitdepth=10, check_range=False) as reader:
        assert reader.read_luma(0).max() > 1023


@pytest.mark.parametrize("bits", [10, 12])
def test_sample_range_checked_at_10_and_12_bits(tmp_path, bits):
    """The largest sample of the bit depth reads; one more is refused, naming the file,
    the frame and the value, also in a later frame."""
    w, h = 17, 17
    y = np.ones((2, h, w), "<u2")  # not all multiples of 2**(16 - bits): not MSB-aligned
    y[:, 3, 4] = (1 << bits) - 1
    chroma = np.zeros(2 * 9 * 9, "<u2").tobytes()
    path = tmp_path / "top.yuv"
    path.write_bytes(b"".join(frame.tobytes() + chroma for frame in y))
    with YuvReader(path, width=w, height=h, bitdepth=bits) as reader:
        assert [int(reader.read_luma(k).max()) for k in (0, 1)] == [(1 << bits) - 1] * 2
    y[1, 3, 4] = 1 << bits
    path.write_bytes(b"".join(frame.tobytes() + chroma for frame in y))
    with YuvReader(path, width=w, height=h, bitdepth=bits, label="distorted") as reader:
        reader.read_luma(0)
        with pytest.raises(AdmError) as info:
            reader.read_luma(1)
    assert str(info.value) == (
        f"distorted file '{path}' frame 1 has sample value {1 << bits}, too large for {bits} "
        "bits; is --bitdepth right?"
    )


def test_index_out_of_range(tmp_path):
    path = tmp_path / "one.yuv"
    _write_clip(path, 17, 17, "400", 8, frames=1)
    with YuvReader(path, width=17, height=17, pixel_format="400") as reader:
        with pytest.raises(IndexError):
            reader.read_luma(1)
        assert "frames=1" in repr(reader)


def test_messages_are_one_line(tmp_path):
    for build in (
        lambda: YuvReader(tmp_path / "x.yuv", width=32, height=32),
        lambda: check_geometry(3, 3, "420", 8),
        lambda: check_geometry(32, 32, "abc", 8),
    ):
        with pytest.raises(AdmError) as info:
            build()
        assert "\n" not in str(info.value)


def test_wider_samples_read_as_8_bit_are_warned_about(tmp_path, caplog):
    """10- or 12-bit little-endian samples read as 8-bit never leave the 8-bit range, so
    nothing else would tell: every odd byte (a high byte) is below 16. Real 8-bit frames,
    a flat dark one and odd widths give no warning."""
    rng = np.random.default_rng(5)

    def clip(path, luma, chroma_value, dtype):
        h, w = luma.shape[1:]
        chroma = np.full(2 * ((h + 1) // 2) * ((w + 1) // 2), chroma_value, dtype)
        path.write_bytes(b"".join(y.astype(dtype).tobytes() + chroma.tobytes() for y in luma))
        return path

    cases = {
        "ten": (clip(tmp_path / "ten.yuv", rng.integers(0, 1024, (2, 24, 32)), 512, "<u2"), 32),
        "twelve": (clip(tmp_path / "tw.yuv", rng.integers(0, 4096, (2, 24, 32)), 2048, "<u2"), 32),
        "eight": (clip(tmp_path / "e.yuv", rng.integers(0, 256, (2, 24, 64)), 128, np.uint8), 64),
        "dark": (clip(tmp_path / "dk.yuv", np.full((2, 24, 64), 3), 128, np.uint8), 64),
        # a dim 8-bit picture: odd columns below 16, even ones just above (a real frame of
        # ffmpeg's darkened mandelbrot did this)
        "dim": (clip(tmp_path / "dim.yuv", np.tile([20, 15], (2, 24, 32)), 128, np.uint8), 64),
        "odd": (clip(tmp_path / "odd.yuv", rng.integers(0, 1024, (2, 24, 33)), 512, "<u2"), 33),
    }
    from admcuda.io.streams import StreamReader, open_stream

    def as_stream(path, width):
        """The same bytes on a pipe, read as raw frames up to the first."""
        read, write = os.pipe()
        writer = threading.Thread(
            target=lambda: (os.write(write, path.read_bytes()), os.close(write)), daemon=True
        )
        writer.start()
        stream = open_stream(f"/dev/fd/{read}", label="distorted")
        with StreamReader(stream, width=width, height=24, pixel_format="420", bitdepth=8,
                          check_range=False) as reader:  # fmt: skip
            next(iter(reader))
        writer.join(10)
        os.close(read)

    warned = {}
    for name, (path, width) in cases.items():
        for how in ("file", "stream"):
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="admcuda"):
                if how == "file":
                    with YuvReader(path, width=width, height=24, label="distorted",
                                   check_range=False):  # fmt: skip
                        pass
                else:
                    as_stream(path, width)
            warned[name, how] = [r.getMessage() for r in caplog.records
                                 if "every second byte" in r.getMessage()]  # fmt: skip
    assert {k for k, v in warned.items() if v} == {
        ("ten", "file"),
        ("twelve", "file"),
        ("ten", "stream"),
        ("twelve", "stream"),
    }
    for how in ("file", "stream"):
        said = warned["ten", how][0]
        assert "is read as 32x24 420 8-bit" in said and "--bitdepth" in said
    caplog.clear()
    with (
        caplog.at_level(logging.WARNING, logger="admcuda"),
        YuvReader(cases["ten"][0], width=32, height=24, bitdepth=10),
    ):
        pass
    assert not caplog.records


def _luma_clip(path, luma, bits):
    """Frames of the luma planes ``luma`` (frames, h, w) and mid-grey 4:2:0 chroma."""
    dtype = np.dtype(np.uint8) if bits == 8 else np.dtype("<u2")
    h, w = luma.shape[1:]
    chroma = np.full(2 * ((h + 1) // 2) * ((w + 1) // 2), 1 << (bits - 1), dtype)
    path.write_bytes(b"".join(y.astype(dtype).tobytes() + chroma.tobytes() for y in luma))
    return path


def _first_frame_of_stream(path, **geometry):
    """Read the first frame of ``path``'s bytes given on a pipe."""
    from admcuda.io.streams import StreamReader, open_stream

    read, write = os.pipe()
    writer = threading.Thread(
        target=lambda: (os.write(write, path.read_bytes()), os.close(write)), daemon=True
    )
    writer.start()
    try:
        stream = open_stream(f"/dev/fd/{read}", label="distorted")
        with StreamReader(stream, check_range=False, **geometry) as reader:
            next(iter(reader))
    finally:
        writer.join(10)
        os.close(read)


def test_wider_samples_with_no_bit_depth_given_are_refused(tmp_path, caplog):
    """10-bit samples read as 8-bit only because no bit depth was given are an error (the
    name of a Netflix clip, ``yuv42010le``, was not read, and the pair scored with exit 0);
    with 8 bits stated it stays a warning."""
    rng = np.random.default_rng(7)
    path = _luma_clip(tmp_path / "ten.yuv", rng.integers(0, 1024, (2, 24, 32)), 10)
    message = r"is read as 32x24 420 8-bit \(no --bitdepth given\), but every second byte"
    with pytest.raises(AdmError, match=message):
        YuvReader(path, width=32, height=24, bitdepth_stated=False, check_range=False)
    with pytest.raises(AdmError, match=message):
        _first_frame_of_stream(path, width=32, height=24)  # no bitdepth: the default
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        with YuvReader(path, width=32, height=24, bitdepth=8, check_range=False):
            pass
        _first_frame_of_stream(path, width=32, height=24, bitdepth=8)
    warned = [r.getMessage() for r in caplog.records if "every second byte" in r.getMessage()]
    assert len(warned) == 2


@pytest.mark.parametrize(
    ("peak", "bits", "fits"), [(1023, 12, 10), (1023, 16, 10), (4095, 16, 12), (1024, 12, None),
                               (4096, 16, None), (40000, 16, None)],
)  # fmt: skip
def test_narrower_samples_read_at_12_or_16_bits_are_warned_about(
    tmp_path, caplog, peak, bits, fits
):
    """10-bit samples read with -b 12 or -b 16 keep their values and were scored with no
    sign (adm2 0.9682 / 0.9959 against 0.9518 at 10 bits): a warning where no luma sample
    of the first, middle and last frames needs more bits, as for the opposite mistake."""
    rng = np.random.default_rng(3)
    luma = rng.integers(0, 256, (5, 24, 32))
    luma[2, 3, 4] = peak  # the middle frame holds the largest sample
    path = _luma_clip(tmp_path / "clip.yuv", luma, 16)
    for how in ("file", "stream"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="admcuda"):
            if how == "file":
                with YuvReader(path, width=32, height=24, bitdepth=bits, check_range=False):
                    pass
            else:
                _first_frame_of_stream(path, width=32, height=24, bitdepth=bits)
        warned = [r.getMessage() for r in caplog.records if "no luma sample" in r.getMessage()]
        # a stream's first frame alone is looked at, whose samples are all below 256
        expected = 10 if how == "stream" else fits
        if expected is None:
            assert warned == [], how
            continue
        (said,) = warned
        assert said.startswith("distorted file " if how == "stream" else "input file ")
        assert f"is read as 32x24 420 {bits}-bit, but no luma sample of its first frames " in said
        assert said.endswith(f"as in {expected}-bit samples; if it is, give --bitdepth {expected}")


def _netflix_frames(w: int = 576, h: int = 324, frames: int = 3) -> bytes:
    return (NETFLIX / "src01_hrc00_576x324_3f.yuv").read_bytes()[: frames * w * h * 3 // 2]


@pytest.mark.parametrize("bits", [8, 10])
def test_swapped_width_and_height_are_refused(tmp_path, bits):
    """Camera content read with -w and -h swapped: the frame size is the same, so only the
    rows show it; the message names the swap and the flags that read it right."""
    data = _netflix_frames()
    if bits == 10:
        data = (np.frombuffer(data, np.uint8).astype("<u2") << 2).tobytes()
    path = tmp_path / "clip.yuv"
    path.write_bytes(data)
    with YuvReader(path, width=576, height=324, bitdepth=bits) as reader:
        assert reader.num_frames == 3
    with pytest.raises(AdmError) as err:
        YuvReader(path, width=324, height=576, bitdepth=bits)
    message = str(err.value)
    assert "\n" not in message
    assert "are --width and --height swapped? (give -w 576 -h 324)" in message


def test_swapped_sides_are_told_from_the_middle_frame_after_a_black_one(tmp_path):
    w, h = 576, 324
    black = bytes(w * h) + bytes([128]) * (w * h // 2)
    path = tmp_path / "fade.yuv"
    path.write_bytes(black + _netflix_frames(frames=2))
    with pytest.raises(AdmError, match="swapped"):
        YuvReader(path, width=h, height=w)


@pytest.mark.parametrize("content", ["noise", "flat", "stripes"])
def test_content_without_lined_up_rows_is_read_as_given(tmp_path, content):
    """Noise, a flat picture and vertical stripes line up at neither width: no refusal."""
    w, h = 64, 48
    rng = np.random.default_rng(3)
    if content == "noise":
        luma = rng.integers(0, 256, (h, w))
    elif content == "flat":
        luma = np.full((h, w), 90)
    else:
        luma = np.tile((np.arange(w) % 2) * 200, (h, 1))
    frame = luma.astype(np.uint8).tobytes() + bytes([128]) * (w * h // 2)
    path = tmp_path / "c.yuv"
    path.write_bytes(frame * 2)
    for width, height in ((w, h), (h, w)):
        with YuvReader(path, width=width, height=height) as reader:
            assert reader.num_frames == 2

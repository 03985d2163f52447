"""Y4M header parsing, frame markers, and Y4M inputs scoring exactly like raw YUV."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from _frames import luma_frames
from _media import GOLDENS, PAIRS, frame_bytes, same, write_y4m, y4m_colorspace
from conftest import NETFLIX, netflix_cases

import admcuda
from admcuda.errors import AdmError
from admcuda.io.y4m import MAX_HEADER, Y4mReader, parse_colorspace, parse_header

# Cases of testdata/goldens.json with default options and committed files: one per
# layout and bit depth (420/422/444/400, 8/10/12/16).
PLAIN_CASES = [
    name
    for name, entry in GOLDENS.items()
    if entry["case"]["committed"] and not entry["case"]["options"]
]


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("420", ("420", 8)),
        ("420jpeg", ("420", 8)),
        ("420mpeg2", ("420", 8)),
        ("420paldv", ("420", 8)),
        ("420p10", ("420", 10)),
        ("420p12", ("420", 12)),
        ("420p16", ("420", 16)),
        ("422", ("422", 8)),
        ("422p10", ("422", 10)),
        ("422p12", ("422", 12)),
        ("444", ("444", 8)),
        ("444p10", ("444", 10)),
        ("444p12", ("444", 12)),
        ("444p16", ("444", 16)),
        ("mono", ("400", 8)),
        ("mono10", ("400", 10)),
        ("mono12", ("400", 12)),
        ("mono16", ("400", 16)),
    ],
)
def test_colorspaces(tag, expected):
    assert parse_colorspace(tag) == expected


@pytest.mark.parametrize(
    ("tag", "match"),
    [
        ("411", "unsupported Y4M colour space C411"),
        ("410", "unsupported Y4M colour space C410"),
        ("444alpha", "unsupported Y4M colour space C444alpha"),
        ("440", "unsupported"),
        ("420p9", "unsupported bit depth 9"),
        ("422p14", "unsupported bit depth 14"),
        ("mono9", "unsupported bit depth 9"),
        ("420p", "unknown Y4M colour space"),
        ("yuv", "unknown Y4M colour space"),
        ("", "unknown Y4M colour space"),
    ],
)
def test_refused_colorspaces(tag, match):
    with pytest.raises(AdmError, match=match):
        parse_colorspace(tag)


def test_header_fields():
    line = b"YUV4MPEG2 W33 H37 F30000:1001 It A128:117 C422p10 XYSCSS=422P10\n"
    header = parse_header(line + b"FRAME\n")
    assert (header.width, header.height) == (33, 37)
    assert (header.pixel_format, header.bitdepth, header.colorspace) == ("422", 10, "422p10")
    assert header.frame_rate == (30000, 1001)
    assert header.aspect == (128, 117)
    assert header.interlace == "t"
    assert header.size == len(line)


def test_header_defaults_and_extra_spaces():
    header = parse_header(b"YUV4MPEG2  W17   H18 \nFRAME\n")
    assert (header.width, header.height, header.pixel_format, header.bitdepth) == (
        17, 18, "420", 8,
    )  # fmt: skip
    assert header.frame_rate is None and header.aspect is None and header.interlace is None
    assert header.size == len(b"YUV4MPEG2  W17   H18 \n")


@pytest.mark.parametrize(
    "line",
    [
        b"YUV4MPEG2 C420p10 F25:1 W33 H37\r\n",
        b"YUV4MPEG2 C420p10 F25:1 W33 H37 Ip\r\n",
        b"YUV4MPEG2 C420p10 W33 H37 F25:1\r\n",
        b"YUV4MPEG2 C420p10 W33 H37 Ip A1:1\r\n",
        b"YUV4MPEG2 C420p10 H37 W33\r\n",
        b"YUV4MPEG2 W33 H37 C420p10 XCOLORRANGE=LIMITED\r\n",
    ],
)
def test_crlf_header_libvmaf_reads(line):
    # libvmaf reads W, H, F, A with sscanf and I by its letter: a CR after them is ignored.
    header = parse_header(line + b"FRAME\n")
    assert (header.width, header.height, header.pixel_format, header.bitdepth) == (
        33, 37, "420", 10,
    )  # fmt: skip
    assert header.size == len(line)
    assert header.frame_rate in (None, (25, 1)) and header.interlace in (None, "p")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"YUV4MPEG2 W32 H32 C420jpeg\r\n", r"unknown Y4M colour space C'420jpeg\\r'"),
        (b"YUV4MPEG2 W32 H32 I\r\n", "I'' is not one of Ip"),
        (b"YUV4MPEG W32 H32\n", "does not start with YUV4MPEG2"),
        (b"RIFF....", "does not start with YUV4MPEG2"),
        (b"YUV4MPEG2X W32 H32\n", "not followed by a space"),
        (b"YUV4MPEG2 W32 H32", r"^it ends inside the Y4M header \(17 bytes, no end of line\)$"),
        (b"YUV4MPEG2 W32 " + b"X" * MAX_HEADER + b"\n", "no end of line in its first 1024 bytes"),
        (b"YUV4MPEG2 H32 F25:1\n", "no W tag"),
        (b"YUV4MPEG2 W32\n", "no H tag"),
        (b"YUV4MPEG2 F25:1\n", "no W and H tag"),
        (b"YUV4MPEG2 Wabc H32\n", "Y4M tag W'abc' is not a size"),
        (b"YUV4MPEG2 W-32 H32\n", "not a size"),
        (b"YUV4MPEG2 W32 H\n", "not a size"),
        (b"YUV4MPEG2 W32 H1234567890\n", "not a size"),
        (b"YUV4MPEG2 W32 H32 F25\n", "F'25' is not of the form"),
        (b"YUV4MPEG2 W32 H32 A1:x\n", "A'1:x' is not of the form"),
        (b"YUV4MPEG2 W32 H32 Iz\n", "I'z' is not one of Ip"),
        (b"YUV4MPEG2 W32 H32 C411\n", "C411"),
        (b"YUV4MPEG2 W3\xff H32\n", "not ASCII"),
        (b"YUV4MPEG2 W16 H32\n", "width 16 is too small"),
        (b"YUV4MPEG2 W32 H8\n", "height 8 is too small"),
    ],
)
def test_bad_headers(data, match):
    with pytest.raises(AdmError, match=match) as info:
        parse_header(data)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", PLAIN_CASES)
def test_reader_matches_raw(tmp_path, name):
    case = GOLDENS[name]["case"]
    geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    for role in ("ref", "dis"):
        y4m = write_y4m(PAIRS / case[role], tmp_path / f"{role}.y4m", *geometry)
        with Y4mReader(y4m) as reader:
            assert (reader.width, reader.height) == (case["w"], case["h"])
            assert (reader.pixel_format, reader.bitdepth) == (case["fmt"], case["bitdepth"])
            assert len(reader) == case["frames"]
            want = luma_frames(PAIRS / case[role], *geometry)
            for got, expected in zip(reader, want, strict=True):
                assert got.dtype == expected.dtype and got.flags.c_contiguous
                np.testing.assert_array_equal(got, expected)
            planes = reader.read_planes(1)
            assert len(planes) == (1 if case["fmt"] == "400" else 3)
            np.testing.assert_array_equal(planes[0], want[1])


@pytest.mark.parametrize("name", PLAIN_CASES)
def test_y4m_scores_equal_raw_and_golden(tmp_path, name):
    """Provenance of the goldens: testdata/goldens.json (libvmaf 3.2.0 scalar C)."""
    entry = GOLDENS[name]
    case = entry["case"]
    geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref = write_y4m(PAIRS / case["ref"], tmp_path / "ref.y4m", *geometry)
    dis = write_y4m(PAIRS / case["dis"], tmp_path / "dis.y4m", *geometry)
    raw = admcuda.score_files(
        PAIRS / case["ref"], PAIRS / case["dis"], width=case["w"], height=case["h"],
        pixel_format=case["fmt"], bitdepth=case["bitdepth"], backend="cpu", debug=True,
    )  # fmt: skip
    both_y4m = admcuda.score_files(ref, dis, backend="cpu", debug=True)
    # A raw distorted file takes its geometry from the Y4M reference.
    mixed = admcuda.score_files(ref, PAIRS / case["dis"], backend="cpu", debug=True)
    assert both_y4m == raw or _nan_equal(both_y4m, raw)
    assert mixed == raw or _nan_equal(mixed, raw)
    unstable = set(entry["unstable_fields"])
    for got, want in zip(both_y4m, entry["frames"], strict=True):
        for key, value in want.items():
            if key not in unstable:
                assert same(value, got[key]), (key, value, got[key])


def _nan_equal(a: list[dict], b: list[dict]) -> bool:
    return all(
        list(x) == list(y) and all(same(y[k], x[k]) for k in x) for x, y in zip(a, b, strict=True)
    )


@pytest.mark.skipif(not NETFLIX.is_dir(), reason="../shared/netflix not present")
@pytest.mark.parametrize(
    "case",
    [c for c in netflix_cases() if not c["options"]],
    ids=lambda c: c["name"],
)
def test_netflix_y4m_equals_golden(tmp_path, case):
    # Goldens: ../shared/netflix/goldens.json (libvmaf 3.2.0 scalar C path).
    golden = __import__("json").loads((NETFLIX / "goldens.json").read_text())[case["name"]]
    geometry = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref = write_y4m(NETFLIX / case["ref"], tmp_path / "ref.y4m", *geometry)
    dis = write_y4m(NETFLIX / case["dis"], tmp_path / "dis.y4m", *geometry)
    frames = admcuda.score_files(ref, dis, backend="cpu", debug=True)
    assert len(frames) == len(golden["frames"])
    for got, want in zip(frames, golden["frames"], strict=True):
        for key, value in want.items():
            assert same(value, got[key]), (key, value, got[key])


def _clip(tmp_path, frames=3, fmt="420", bits=8, w=20, h=18):
    rng = np.random.default_rng(7)
    size = frame_bytes(w, h, fmt, bits)
    raw = tmp_path / "clip.yuv"
    raw.write_bytes(rng.integers(0, 256, size * frames, dtype=np.uint8).tobytes())
    if bits > 8:
        data = np.frombuffer(raw.read_bytes(), "<u2") & ((1 << bits) - 1)
        raw.write_bytes(data.astype("<u2").tobytes())
    return raw, (w, h, fmt, bits)


def test_frame_parameters_are_skipped(tmp_path):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "p.y4m", *geometry, frame_marker=b"FRAME Ip XFOO=1\n")
    with Y4mReader(path) as reader:
        want = luma_frames(raw, *geometry)
        assert len(reader) == 3
        for got, expected in zip(reader, want, strict=True):
            np.testing.assert_array_equal(got, expected)
        assert [f.sum() for f in reader.iter_luma(1, 1)] == [want[1].sum()]


@pytest.mark.parametrize("marker", [b"FRAME\r\n", b"FRAMEX\n", b"FRAMES Ip\n", b"FRAME\t1\n"])
def test_markers_libvmaf_accepts_are_read(tmp_path, caplog, marker):
    # libvmaf's y4m_input.c checks the first five bytes, "FRAME", and skips to the newline.
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "m.y4m", *geometry)
    data = bytearray(path.read_bytes())
    second = data.index(b"FRAME\n", data.index(b"FRAME\n") + 1)
    path.write_bytes(bytes(data[:second]) + marker + bytes(data[second + 6 :]))
    with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path) as reader:
        got = list(reader)
    assert _warnings(caplog) == []
    want = luma_frames(raw, *geometry)
    assert len(got) == 3
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_bad_marker_mid_file_stops_with_warning(tmp_path, caplog):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "bad.y4m", *geometry)
    data = bytearray(path.read_bytes())
    second = data.index(b"FRAME", data.index(b"FRAME") + 1)
    data[second : second + 5] = b"FRAMX"
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path) as reader:
        assert len(reader) == 1
    (message,) = _warnings(caplog)
    assert f"no FRAME marker at byte {second}" in message
    assert "scoring the 1 whole frames before it" in message


def test_truncated_last_frame_warns(tmp_path, caplog):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "cut.y4m", *geometry)
    path.write_bytes(path.read_bytes()[:-10])
    with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path) as reader:
        assert len(reader) == 2
    (message,) = _warnings(caplog)
    assert "ends inside frame 2" in message


@pytest.mark.parametrize(
    ("tail", "warns"),
    [(b"FRAME I", 1), (b"abcdef", 1)]
    + [(t, 0) for t in (b"F", b"FRA", b"abc\n", b"FRAME", b"\n\n\n\n\n")],
)
def test_trailing_bytes_after_the_last_frame(tmp_path, caplog, tail, warns):
    # libvmaf's y4m_input.c reads 6 bytes for the next marker and takes fewer as the end;
    # 6 or more that are no whole frame are warned about.
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "tail.y4m", *geometry)
    with path.open("ab") as handle:
        handle.write(tail)
    with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path) as reader:
        assert len(reader) == 3
    assert len(_warnings(caplog)) == warns
    if warns:
        return
    path.write_bytes(path.read_bytes()[: parse_header(path.read_bytes()).size] + tail)
    with pytest.raises(AdmError, match="has a header but no frames"):
        Y4mReader(path)


def test_marker_without_end_of_line(tmp_path, caplog):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "long.y4m", *geometry, frame_marker=b"FRAME " + b"x" * 300)
    with pytest.raises(AdmError, match="no end of line within 256 bytes"):
        Y4mReader(path)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d[: d.index(b"\n") + 1], "has a header but no frames"),
        (lambda d: d[: d.index(b"\n") + 1] + b"GARBAGE\n" + d[d.index(b"\n") + 7 :], "no FRAME"),
        (lambda d: d[: d.index(b"\n") + 100], "holds no whole frame: it ends inside frame 0"),
        (lambda d: d[: d.index(b"\n") + 1] + b"FRAMES\n", "holds no whole frame: it ends"),
        (lambda d: d[: d.index(b"\n") + 1] + b"FRAMX\n", "no FRAME marker"),
    ],
)
def test_no_whole_frame_is_an_error(tmp_path, mutate, match):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "x.y4m", *geometry)
    path.write_bytes(mutate(path.read_bytes()))
    with pytest.raises(AdmError, match=match):
        Y4mReader(path, label="reference")


@pytest.mark.parametrize(
    ("tag", "meaning"),
    [("It", "top field first"), ("Ib", "bottom field first"), ("Im", "mixed")],
)
def test_interlaced_is_scored_with_warning(tmp_path, caplog, tag, meaning):
    raw, geometry = _clip(tmp_path)
    path = write_y4m(raw, tmp_path / "i.y4m", *geometry, tags=f"F25:1 {tag}")
    with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path) as reader:
        assert len(reader) == 3
    (message,) = _warnings(caplog)
    assert f"interlaced ({tag}, {meaning})" in message


def test_progressive_and_unknown_interlace_are_quiet(tmp_path, caplog):
    raw, geometry = _clip(tmp_path)
    for tags in ("F25:1 Ip", "F25:1 I?", "F25:1", ""):
        path = write_y4m(raw, tmp_path / "q.y4m", *geometry, tags=tags)
        with caplog.at_level(logging.WARNING, logger="admcuda"), Y4mReader(path):
            pass
    assert _warnings(caplog) == []


def test_sample_range_checked(tmp_path):
    w, h = 20, 18
    raw = tmp_path / "wide.yuv"
    raw.write_bytes(np.full(frame_bytes(w, h, "420", 10) // 2, 4000, "<u2").tobytes())
    path = write_y4m(raw, tmp_path / "w.y4m", w, h, "420", 10)
    with Y4mReader(path) as reader, pytest.raises(AdmError, match="too large for 10 bits"):
        reader.read_luma(0)


def test_range_error_names_the_header_not_bitdepth(tmp_path):
    # The bit depth came from the header's C tag: the message says so, not "--bitdepth".
    w, h = 20, 18
    samples = np.full(frame_bytes(w, h, "422", 10) // 2, 500, "<u2")
    samples[7] = 3001
    raw = tmp_path / "wide.yuv"
    raw.write_bytes(np.tile(samples, 2).tobytes())
    path = write_y4m(raw, tmp_path / "w.y4m", w, h, "422", 10)
    want = (
        f"distorted file {str(path)!r} frame 0 has sample value 3001, too large for 10 bits "
        "(its Y4M header says C422p10)"
    )
    with Y4mReader(path, label="distorted") as reader:
        for read in (reader.read_luma, reader.read_planes):
            with pytest.raises(AdmError) as info:
                read(0)
            assert str(info.value) == want
    ref = write_y4m(raw, tmp_path / "r.y4m", w, h, "422", 10)
    ref.write_bytes(ref.read_bytes().replace(b"\xb9\x0b", b"\x00\x00"))  # 3001 -> 0
    with pytest.raises(AdmError) as info:
        admcuda.score_files(ref, path, backend="cpu")
    assert str(info.value) == want
    raw.write_bytes(np.full(2 * samples.size, 500 << 6, "<u2").tobytes())
    path = write_y4m(raw, tmp_path / "w.y4m", w, h, "422", 10)
    with Y4mReader(path, label="distorted") as reader, pytest.raises(AdmError) as info:
        reader.read_luma(0)
    assert str(info.value) == (
        f"distorted file {str(path)!r} frame 0 has sample value {500 << 6}, too large for 10 "
        "bits (its Y4M header says C422p10), and every sample is a multiple of 64: are they "
        "10-bit samples in the high bits (MSB-aligned, as in p210)? Y4M holds them in the "
        "low bits"
    )


@pytest.mark.parametrize(
    ("setup", "match"),
    [
        (lambda p: None, "not found"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b""), "is empty"),
        (lambda p: p.write_bytes(b"hello\n"), "does not start with YUV4MPEG2"),
    ],
)
def test_file_problems(tmp_path, setup, match):
    path = tmp_path / "x.y4m"
    setup(path)
    with pytest.raises(AdmError, match=match) as info:
        Y4mReader(path, label="distorted")
    assert str(info.value).startswith("distorted file ")


def test_index_and_repr(tmp_path):
    raw, geometry = _clip(tmp_path, frames=1)
    path = write_y4m(raw, tmp_path / "one.y4m", *geometry)
    with Y4mReader(path) as reader:
        with pytest.raises(IndexError):
            reader.read_luma(1)
        assert "frames=1" in repr(reader) and y4m_colorspace("420", 8) in repr(reader)

"""Fuzzing the readers: arbitrary bytes give frames or an AdmError, never a crash or a hang.

Inputs are arbitrary byte strings, valid Y4M files with bytes flipped, inserted or
cut, and valid headers with tags replaced. Examples are bounded so the suite stays
fast; hypothesis's deadline catches anything slow (a hang would be far slower). For
a deeper run: ``ADMCUDA_FUZZ_EXAMPLES=5000 python3 -m pytest tests/test_io_fuzz.py``.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from admcuda.errors import AdmError
from admcuda.io.inputs import open_input
from admcuda.io.raw import YuvReader
from admcuda.io.y4m import Y4mReader, parse_header

_EXAMPLES = int(os.environ.get("ADMCUDA_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=_EXAMPLES,
    deadline=400 if _EXAMPLES <= 200 else None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_names = itertools.count()

W, H = 18, 17
_FRAME = W * H + 2 * 9 * 9
VALID_HEADER = f"YUV4MPEG2 W{W} H{H} F25:1 Ip A1:1 C420jpeg\n".encode()
VALID_Y4M = VALID_HEADER + b"".join(
    b"FRAME\n" + bytes([k]) * _FRAME for k in range(3)
)  # fmt: skip

TAGS = st.sampled_from(
    ["W18", "H17", "W", "H", "W0", "H-1", "W99999999", "F25:1", "F", "F1:", "A0:0", "A:",
     "Ip", "It", "Ix", "I", "C420", "C420p10", "C411", "Cmono16", "C444alpha", "C", "Cp10",
     "XYSCSS=420JPEG", "X", "Z9", "", "W18\x00", "H17\xff"]
)  # fmt: skip


def _tmp(tmp_path_factory, suffix: str):
    return tmp_path_factory.getbasetemp() / f"fuzz_{next(_names)}{suffix}"


def _drain(reader) -> int:
    count = 0
    for frame in reader:
        assert frame.ndim == 2 and frame.shape == (reader.height, reader.width)
        assert frame.dtype == (np.uint8 if reader.bitdepth == 8 else np.uint16)
        count += 1
    return count


@FUZZ
@given(st.binary(max_size=2048))
def test_parse_header_arbitrary_bytes(data):
    try:
        header = parse_header(data)
    except AdmError as exc:
        assert "\n" not in str(exc)
    else:
        assert header.width > 16 and header.height > 16 and header.size <= len(data)


@FUZZ
@given(st.lists(TAGS, max_size=8), st.sampled_from([" ", "  ", "\t"]))
def test_parse_header_tag_soup(tags, sep):
    line = ("YUV4MPEG2 " + sep.join(tags) + "\n").encode("latin-1")
    try:
        parse_header(line)
    except AdmError as exc:
        assert "\n" not in str(exc)


@st.composite
def mutated_y4m(draw):
    data = bytearray(VALID_Y4M)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 8))]
        else:
            del data[pos:]
    return bytes(data)


@FUZZ
@given(data=mutated_y4m())
def test_y4m_reader_mutated_files(tmp_path_factory, data):
    path = _tmp(tmp_path_factory, ".y4m")
    path.write_bytes(data)
    try:
        with Y4mReader(path) as reader:
            assert 1 <= _drain(reader) == len(reader) <= 3
    except AdmError as exc:
        assert "\n" not in str(exc)
    finally:
        path.unlink()


@FUZZ
@given(data=st.binary(max_size=4096), magic=st.booleans())
def test_y4m_reader_arbitrary_bytes(tmp_path_factory, data, magic):
    path = _tmp(tmp_path_factory, ".y4m")
    path.write_bytes((b"YUV4MPEG2 " if magic else b"") + data)
    try:
        with Y4mReader(path) as reader:
            _drain(reader)
    except AdmError as exc:
        assert "\n" not in str(exc)
    finally:
        path.unlink()


@FUZZ
@given(
    data=st.binary(max_size=4096),
    width=st.integers(-2, 40),
    height=st.integers(-2, 40),
    fmt=st.sampled_from(["420", "422", "444", "400", "411", ""]),
    bits=st.sampled_from([8, 10, 12, 16, 9, 0]),
)
def test_yuv_reader_arbitrary_bytes(tmp_path_factory, data, width, height, fmt, bits):
    path = _tmp(tmp_path_factory, ".yuv")
    path.write_bytes(data)
    try:
        with YuvReader(path, width=width, height=height, pixel_format=fmt, bitdepth=bits) as r:
            _drain(r)
    except AdmError as exc:
        assert "\n" not in str(exc)
    finally:
        path.unlink()


@FUZZ
@given(data=st.one_of(st.binary(max_size=2048), mutated_y4m()), suffix=st.sampled_from(
    [".y4m", ".yuv", ".raw"]))  # fmt: skip
def test_open_input_y4m_and_raw(tmp_path_factory, data, suffix):
    path = _tmp(tmp_path_factory, suffix)
    path.write_bytes(data)
    try:
        with open_input(path, width=W, height=H) as reader:
            _drain(reader)
    except AdmError as exc:
        assert "\n" not in str(exc)
    finally:
        path.unlink()


@settings(max_examples=12, deadline=None)
@given(data=st.one_of(st.binary(max_size=512), mutated_y4m().map(lambda d: b"\x1aE\xdf\xa3" + d)))
def test_open_input_ffmpeg_garbage(tmp_path_factory, data):
    pytest.importorskip("imageio_ffmpeg")
    path = _tmp(tmp_path_factory, ".mkv")
    path.write_bytes(data)
    try:
        with open_input(path) as reader:
            _drain(reader)
    except AdmError as exc:
        assert "\n" not in str(exc)
    finally:
        path.unlink(missing_ok=True)

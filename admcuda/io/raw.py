"""Raw planar YUV files: frame geometry and a luma-plane reader.

A frame is the Y plane followed by the U and V planes (none for 4:0:0). Chroma
planes are halved with rounding up, ``(w + 1) // 2``, as ffmpeg writes them and
as libvmaf's raw reader sizes its frame buffer. Samples above 8 bits take two
bytes, little-endian.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from admcuda.closing import Closing
from admcuda.errors import AdmError
from admcuda.numeric import is_integer

__all__ = [
    "BITDEPTHS",
    "PIXEL_FORMATS",
    "ClosingReader",
    "PositionedFrames",
    "NameHints",
    "YuvReader",
    "check_geometry",
    "check_input_file",
    "check_plane_range",
    "decode_plane",
    "decode_planes",
    "frame_bytes",
    "name_hints",
    "plane_shapes",
    "size_from_name",
]

PIXEL_FORMATS: tuple[str, ...] = ("420", "422", "444", "400")
BITDEPTHS: tuple[int, ...] = (8, 10, 12, 16)

# ADM runs four levels of 2x wavelet decimation; libvmaf crashes at 16x16 and below.
_MIN_SIDE_EXCLUSIVE = 16

# (horizontal, vertical) chroma decimation shifts; None means no chroma planes.
_CHROMA_SHIFTS: dict[str, tuple[int, int] | None] = {
    "420": (1, 1),
    "422": (1, 0),
    "444": (0, 0),
    "400": None,
}

_NAME_SIZE = re.compile(r"(?<![0-9])([0-9]{2,5})x([0-9]{2,5})(?![0-9])")

_log = logging.getLogger("admcuda")


def size_from_name(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """A ``WxH`` written in a file name, e.g. ``foo_1920x1080_25.yuv``.

    Only ever offered as a hint in messages, never used to read a file.

    Returns
    -------
    (int, int) or None
        The first ``WxH`` with both sides above 16, or None.

    Examples
    --------
    >>> size_from_name("/clips/BigBuckBunny_1920x1080_24fps.yuv")
    (1920, 1080)
    """
    for match in _NAME_SIZE.finditer(Path(path).name):
        width, height = int(match.group(1)), int(match.group(2))
        if width > _MIN_SIDE_EXCLUSIVE and height > _MIN_SIDE_EXCLUSIVE:
            return width, height
    return None


# What a raw file's name may say about its layout and bit depth. Each pattern must be a
# whole word of the name (letters and digits on neither side), so that "x264", "crf23",
# "1080p", "2160p10" or dates never count. Groups: layout, bit depth; an absent bit depth
# in a pattern marked 8 is the 8 bits that ffmpeg's pixel format names imply.
_WORD = r"(?<![a-z0-9]){}(?![a-z0-9])"
_NAME_FORMATS: tuple[tuple[re.Pattern[str], str | None, int | None], ...] = tuple(
    (re.compile(_WORD.format(pattern)), layout, implied)
    for pattern, layout, implied in (
        # ffmpeg pixel formats: yuv420p, yuvj422p, yuv420p10le, yuv444p12 ...
        (r"yuvj?(420|422|444)p(?:(8|10|12|16)(?:le|be)?)?", None, 8),
        (r"yuv(420|422|444|400)", None, None),
        (r"gr[ae]y(?:(8|10|12|16)(?:le|be)?)?", "400", 8),
        (r"y800", "400", 8),
        (r"(?:nv12|nv21|i420|iyuv|yv12)", "420", 8),
        (r"(?:nv16|nv61)", "422", 8),
        (r"(?:nv24|nv42)", "444", 8),
        (r"p0(10|12|16)(?:le|be)?", "420", None),
        (r"p2(10|12|16)(?:le|be)?", "422", None),
        (r"p4(10|12|16)(?:le|be)?", "444", None),
        # bare layouts and bit depths: _420_, 422p10, 10bit, 10-bit, 10b, 10le, 16bpc
        (r"(420|422|444)", None, None),
        # "400" alone is too common a number; it counts beside a bit depth: _400_8b_
        (r"(400)(?=[-_. ](?:8|10|12|16)[-_ ]?(?:bits?|bpc|b)(?![a-z0-9]))", None, None),
        (r"(420|422|444)p(8|10|12|16)?", None, None),
        (r"(8|10|12|16)[-_ ]?(?:bits?|bpc|b|le|be)", "", None),
    )
)
# A name stating big-endian samples (yuv420p16be, gray10be, p010be, 12be): read here as
# little-endian, its samples would be byte-swapped (at 16 bits every value is in range).
_BIG_ENDIAN = re.compile(_WORD.format(r"(?:yuvj?(?:420|422|444)p|gr[ae]y|p[024]|)(?:10|12|16)be"))
# MSB-aligned 10- and 12-bit samples (ffmpeg's p010, p210, p410, p012 ...: value << 6 or
# << 4 in 16 bits); read as raw files are, low-bit-aligned, every value is too large.
# p016/p216/p416 fill all 16 bits: read right as 16-bit.
_MSB_ALIGNED = re.compile(_WORD.format(r"p([024])1([02])(?:le|be)?"))
_MSB_LAYOUTS = {"0": "420", "2": "422", "4": "444"}
# ffmpeg's planar MSB-aligned formats (yuv444p10msble, yuv444p12msbbe): the same samples.
_MSB_PLANAR = re.compile(_WORD.format(r"yuv(420|422|444)p1([02])msb(?:le|be)?"))

# Packed layouts, luma samples interleaved with chroma (ffmpeg's pixel format names and the
# FourCCs that name the same layouts), each with the planar ffmpeg format to convert to that
# keeps its luma and bit depth. Semi-planar nv12/nv16/nv24 (and nv21/nv61/nv42) have a luma
# plane and frames the size of yuv420p/yuv422p/yuv444p's: read as those, they are right.
_PACKED_NAMES: tuple[tuple[str, str], ...] = (
    (r"(?:yuyv|yvyu|uyvy|vyuy)(?:422)?|yuy2|2vuy|yuvs|hdyc", "yuv422p"),
    (r"uyyvyy(?:411)?|y41p", "yuv422p"),
    (r"v210|y210(?:le|be)?", "yuv422p10le"),
    (r"y212(?:le|be)?", "yuv422p12le"),
    (r"v216|y216(?:le|be)?", "yuv422p16le"),
    (r"ayuv|vuya|vuyx|uyva|vyu444|v308|v408", "yuv444p"),
    (r"v410|y410|(?:xv30|v30x)(?:le|be)?", "yuv444p10le"),
    (r"xv36(?:le|be)?", "yuv444p12le"),
    (r"y416|(?:xv48|ayuv64)(?:le|be)?", "yuv444p16le"),
)
_PACKED = tuple((re.compile(_WORD.format(f"(?:{p})")), planar) for p, planar in _PACKED_NAMES)

# Pixel formats that admcuda cannot read at all, as ffmpeg names them: RGB (and XYZ, Bayer,
# palette), alpha, chroma subsamplings other than 4:2:0/4:2:2/4:4:4/4:0:0, bit depths other
# than 8, 10, 12, 16, and floating point. Read as the flags say, such a file scored bytes
# that are not its luma (rgb24 read as yuv420p: twice the frames, exit 0, no warning).
# Each pattern (a whole word, as _WORD) comes with what the word says and what admcuda
# reads instead, and the planar format to convert to: one that keeps the luma and its bit
# depth (the next one up at 9 or 14 bits or above 16); 4:4:4 where the luma is computed
# from RGB or the chroma is resampled, so that nothing is dropped; yuvj444p for yuvj
# formats, which ffmpeg would otherwise range-convert. A target of None is built from the
# groups: "alpha" and "depth", a layout (absent: the one the name states, else 4:2:0) and
# a bit depth; "subsampling", the subsampling and a bit depth; "gray", a bit depth.
_LE = "(?:le|be)?"
_RGB = "RGB samples; admcuda reads planar YUV"
_NO_ALPHA = "admcuda reads planar YUV without alpha"
_DEPTHS_READ = "admcuda reads 8, 10, 12 or 16 bits"
_UNSUPPORTED_NAMES: tuple[tuple[str, str, str, str | None], ...] = (
    # RGB: bare rgb/bgr (so the .rgb/.bgr extensions), packed, planar (gbrp), by bit depth
    (rf"(?:rgb|bgr)(?:24|32|8|4|565{_LE}|555{_LE}|444{_LE})?|(?:rgb|bgr)[a0]|[a0](?:rgb|bgr)"
     r"|gbra?p|gbr24p", "fixed", _RGB, "yuv444p"),
    (rf"gbra?p(?:9|10)(?:msb)?{_LE}|x2(?:rgb|bgr)10{_LE}", "fixed", _RGB, "yuv444p10le"),
    (rf"gbra?p12(?:msb)?{_LE}", "fixed", _RGB, "yuv444p12le"),
    (rf"gbra?p(?:14|16|32|f16|f32){_LE}|(?:rgb|bgr)(?:48|a64){_LE}"
     rf"|(?:rgb|bgr)a?f(?:16|32){_LE}|rgb96{_LE}|rgba128{_LE}", "fixed", _RGB, "yuv444p16le"),
    (rf"xyz12{_LE}", "fixed", "XYZ samples; admcuda reads planar YUV", "yuv444p12le"),
    (r"bayer_(?:bggr|rggb|gbrg|grbg)8", "fixed", "a Bayer mosaic; admcuda reads planar YUV",
     "yuv444p"),
    (rf"bayer_(?:bggr|rggb|gbrg|grbg)16{_LE}", "fixed",
     "a Bayer mosaic; admcuda reads planar YUV", "yuv444p16le"),
    (r"pal8", "fixed", "palette indices; admcuda reads planar YUV", "yuv444p"),
    (r"mono[wb]", "fixed", f"1-bit samples; {_DEPTHS_READ}", "gray"),
    # alpha: the same YUV without it
    (rf"yuva(420|422|444)p(?:(8|9|10|12|16){_LE})?", "alpha",
     f"YUV with an alpha plane; {_NO_ALPHA}", None),
    (r"ya8", "fixed", f"gray samples interleaved with alpha; {_NO_ALPHA}", "gray"),
    (rf"ya16{_LE}|yaf(?:16|32){_LE}", "fixed",
     f"gray samples interleaved with alpha; {_NO_ALPHA}", "gray16le"),
    # chroma subsamplings that admcuda does not read
    (r"yuvj(410|411|440)p", "subsampling", "", "yuvj444p"),
    (rf"yuv(410|411|440)(?:p(?:(8|10|12|16){_LE})?)?", "subsampling", "", None),
    # bit depths that admcuda does not read
    (rf"yuvj?(420|422|444)p(9|14){_LE}|(420|422|444)p(9|14)", "depth", "", None),
    (rf"gr[ae]y(9|14|32){_LE}", "gray", "", None),
    (rf"gr[ae]yf(?:16|32){_LE}", "fixed",
     "floating-point samples; admcuda reads integer samples of 8, 10, 12 or 16 bits", "gray16le"),
    (r"(9|14)[-_ ]?(?:bits?|bpc|b|le|be)", "depth", "", None),
)  # fmt: skip
_UNSUPPORTED = tuple(
    (re.compile(_WORD.format(f"(?:{p})")), kind, why, target)
    for p, kind, why, target in _UNSUPPORTED_NAMES
)
# ffmpeg's planar format of a layout, and the little-endian suffix of the bit depth to
# convert to from a bit depth (read or not).
_PLANAR_PREFIX = {"420": "yuv420p", "422": "yuv422p", "444": "yuv444p", "400": "gray"}
_DEPTH_UP = {"8": "", "9": "10le", "10": "10le", "12": "12le", "14": "16le", "16": "16le",
             "32": "16le"}  # fmt: skip


def _earliest(name: str, table: tuple[tuple[Any, ...], ...]) -> tuple[Any, ...] | None:
    """The entry of ``table`` (a compiled pattern, then its data) whose pattern matches
    ``name`` earliest (the first such entry on a tie), as ``(match, *data)``; None if none
    matches."""
    found = None
    for pattern, *data in table:
        match = pattern.search(name)
        if match is not None and (found is None or match.start() < found[0].start()):
            found = (match, *data)
    return found


def _big_endian_planar(word: str, named_layout: str | None) -> str:
    """ffmpeg's little-endian format for a big-endian word, of the same layout and bit
    depth (yuv422p10be: yuv422p10le; gray12be: gray12le; a bare 10be: yuv420p10le, or the
    layout the name states)."""
    bits = word[-4:-2]
    if word.startswith(("yuv", "p")):
        return word[:-2] + "le"
    if word.startswith("gr"):
        return f"gray{bits}le"
    return _PLANAR_PREFIX.get(named_layout or "420", "yuv420p") + f"{bits}le"


def _unsupported(name: str, named_layout: str | None) -> tuple[str, str, str] | None:
    """The first word of ``name`` stating a pixel format that admcuda cannot read: the word,
    what it says and what admcuda reads instead (for messages), and the ffmpeg pixel format
    to convert to; ``named_layout`` is the layout the name states, if any."""
    found = _earliest(name, _UNSUPPORTED)
    if found is None:
        return None
    match, kind, why, target = found
    word = match.group(0)
    groups = [g for g in match.groups() if g is not None]
    if kind == "subsampling":
        bits = groups[1] if len(groups) > 1 else "8"
        why = f"{':'.join(groups[0])} chroma; admcuda reads 4:2:0, 4:2:2, 4:4:4 or 4:0:0 chroma"
        return word, why, target or f"yuv444p{_DEPTH_UP[bits]}"
    if kind == "gray":
        return word, f"{groups[0]}-bit samples; {_DEPTHS_READ}", f"gray{_DEPTH_UP[groups[0]]}"
    if kind == "alpha":
        layout, bits = groups[0], groups[1] if len(groups) > 1 else "8"
        return word, why, _PLANAR_PREFIX[layout] + _DEPTH_UP[bits]
    if kind == "depth":  # yuv420p14le, 422p9; or 14bit alone, of the layout the name states
        layout, bits = groups if len(groups) == 2 else (named_layout or "420", groups[0])
        return word, f"{bits}-bit samples; {_DEPTHS_READ}", _PLANAR_PREFIX[layout] + _DEPTH_UP[bits]
    return word, why, str(target)


@dataclass(frozen=True)
class NameHints:
    """What a raw file's name says about its geometry, and the words that say it.

    Each field is None where the name says nothing, or says two different things
    (``a_yuv420p_10bit`` says 10-bit: a stated number outweighs the 8 bits that
    an ffmpeg format name implies).

    Attributes
    ----------
    size : (int, int) or None
        A ``WxH`` with both sides above 16.
    pixel_format : {"420", "422", "444", "400"} or None
    bitdepth : {8, 10, 12, 16} or None
    packed : str or None
        A packed layout's name (``yuyv422``, ``2vuy``, ``v210``): its luma is not a plane.
    packed_planar : str or None
        With ``packed``, the planar ffmpeg pixel format that keeps its luma and bit depth
        (``yuv422p``, ``yuv422p10le``), to convert to.
    msb_aligned : str or None
        A name of MSB-aligned samples (``p010``, ``p212le``, ``yuv444p10msble``): read
        low-bit-aligned, every value is too large.
    msb_planar : str or None
        With ``msb_aligned``, the planar ffmpeg pixel format to convert to
        (``yuv420p10le``).
    big_endian : str or None
        A word stating big-endian samples (``yuv420p16be``).
    big_endian_planar : str or None
        With ``big_endian``, the little-endian ffmpeg pixel format of the same layout and
        bit depth (``yuv420p16le``), to convert to.
    unsupported : str or None
        A word stating a pixel format that admcuda cannot read: RGB (``rgb24``, ``gbrp10le``,
        the ``.rgb`` extension), alpha (``yuva420p``), another chroma subsampling
        (``yuv411p``) or bit depth (``yuv420p14le``, ``9bit``).
    unsupported_why : str or None
        With ``unsupported``, what it says and what admcuda reads instead, for messages
        (``RGB samples; admcuda reads planar YUV``).
    unsupported_planar : str or None
        With ``unsupported``, the planar ffmpeg pixel format to convert to, which keeps
        the luma (``yuv444p``, ``yuv420p10le``).
    size_word, format_word, bitdepth_word : str or None
        The part of the name that says it, for messages.
    """

    size: tuple[int, int] | None = None
    pixel_format: str | None = None
    bitdepth: int | None = None
    packed: str | None = None
    packed_planar: str | None = None
    msb_aligned: str | None = None
    msb_planar: str | None = None
    big_endian: str | None = None
    big_endian_planar: str | None = None
    unsupported: str | None = None
    unsupported_why: str | None = None
    unsupported_planar: str | None = None
    size_word: str | None = None
    format_word: str | None = None
    bitdepth_word: str | None = None


def _unique(found: list[tuple[object, str]]) -> tuple[object, str] | tuple[None, None]:
    values = {value for value, _ in found}
    return found[0] if len(values) == 1 else (None, None)


def name_hints(path: str | os.PathLike[str]) -> NameHints:
    """Read the geometry a raw file's name states, e.g. ``a_576x324.yuv420p10le.yuv``.

    Only clear patterns count: ``WxH``; ffmpeg pixel format names (``yuv422p``,
    ``yuv420p10le``, ``gray16le``, ``nv12``, ``p010``); layout words ``420``,
    ``422``, ``444``, ``400``; bit depths ``10bit``, ``10-bit``, ``10b``, ``10le``,
    ``10bpc``, each a whole word of the name. Folders are not read.

    Examples
    --------
    >>> h = name_hints("/clips/src01_hrc00_576x324.yuv420p10le.yuv")
    >>> (h.size, h.pixel_format, h.bitdepth)
    ((576, 324), '420', 10)
    >>> name_hints("crowd_run_1080p50_x264_crf23.yuv") == NameHints()
    True
    """
    name = Path(path).name.lower()
    sizes = []
    for match in _NAME_SIZE.finditer(name):
        width, height = int(match.group(1)), int(match.group(2))
        if width > _MIN_SIDE_EXCLUSIVE and height > _MIN_SIDE_EXCLUSIVE:
            sizes.append(((width, height), match.group(0)))
    layouts: list[tuple[object, str]] = []
    stated: list[tuple[object, str]] = []
    implied: list[tuple[object, str]] = []
    for pattern, layout, implied_bits in _NAME_FORMATS:
        for match in pattern.finditer(name):
            groups = [g for g in match.groups()]
            word = match.group(0)
            if layout == "":  # a bit depth alone
                stated.append((int(groups[0]), word))
                continue
            if layout is None:
                layouts.append((groups[0], word))
                bits = groups[1] if len(groups) > 1 else None
            else:
                layouts.append((layout, word))
                bits = groups[0] if groups else None
            if bits:
                stated.append((int(bits), word))
            elif implied_bits:
                implied.append((implied_bits, word))
    packed, packed_planar = _earliest(name, _PACKED) or (None, None)
    big_endian = _BIG_ENDIAN.search(name)
    msb = _MSB_ALIGNED.search(name)
    msb_planar = f"yuv{_MSB_LAYOUTS[msb.group(1)]}p1{msb.group(2)}le" if msb else None
    if msb is None:
        msb = _MSB_PLANAR.search(name)
        msb_planar = f"yuv{msb.group(1)}p1{msb.group(2)}le" if msb else None
    size, size_word = _unique(sizes)
    fmt, format_word = _unique(layouts)
    bitdepth, bitdepth_word = _unique(stated) if stated else _unique(implied)
    unsupported = _unsupported(name, fmt)  # type: ignore[arg-type]
    return NameHints(
        size=size,  # type: ignore[arg-type]
        pixel_format=fmt,  # type: ignore[arg-type]
        bitdepth=bitdepth,  # type: ignore[arg-type]
        packed=packed.group(0) if packed else None,
        packed_planar=packed_planar,
        msb_aligned=msb.group(0) if msb else None,
        msb_planar=msb_planar,
        big_endian=big_endian.group(0) if big_endian else None,
        big_endian_planar=_big_endian_planar(big_endian.group(0), fmt) if big_endian else None,
        unsupported=unsupported[0] if unsupported else None,
        unsupported_why=unsupported[1] if unsupported else None,
        unsupported_planar=unsupported[2] if unsupported else None,
        size_word=size_word,
        format_word=format_word,
        bitdepth_word=bitdepth_word,
    )


def _normalize_format(pixel_format: str | int) -> str:
    fmt = str(pixel_format)
    if fmt not in PIXEL_FORMATS:
        raise AdmError(
            f"unsupported pixel format {pixel_format!r}; use one of {', '.join(PIXEL_FORMATS)}"
        )
    return fmt


def warn_if_wider(
    luma: bytes | bytearray | memoryview, width: int, where: str, geometry: str
) -> None:
    """Warn where the bytes of a first 8-bit luma plane look like 10- or 12-bit
    little-endian samples: every odd byte below 16 (a sample's high byte) while even bytes
    reach 64 or more. A 10-bit input read as 8-bit is otherwise scored without a sign (its
    values never leave the 8-bit range); a real 8-bit picture does this only if every
    other column is near black. Rows of odd width would mix the byte positions: no check."""
    if width % 2 or not luma:
        return
    plane = np.frombuffer(luma, np.uint8)
    if int(plane[1::2].max()) < 16 and int(plane[0::2].max()) >= 64:
        _log.warning(
            "%s is read as %s, but every second byte of its first frame is below 16, "
            "as in 10- or 12-bit little-endian samples; if it is, give --bitdepth",
            where, geometry,
        )  # fmt: skip


def check_geometry(width: int, height: int, pixel_format: str | int, bitdepth: int) -> None:
    """Validate frame size, pixel format and bit depth.

    Parameters
    ----------
    width, height : int
        Luma size in pixels; both must exceed 16, as libvmaf's ADM needs.
    pixel_format : {"420", "422", "444", "400"}
    bitdepth : {8, 10, 12, 16}

    Raises
    ------
    AdmError
        Naming the first setting that is not accepted.
    """
    _normalize_format(pixel_format)
    # 8.0 in BITDEPTHS holds, and a float bit depth fails later in a shift
    if not is_integer(bitdepth) or bitdepth not in BITDEPTHS:
        raise AdmError(
            f"unsupported bit depth {bitdepth!r}; use one of {', '.join(map(str, BITDEPTHS))}"
        )
    for side, value in (("width", width), ("height", height)):
        if not is_integer(value):
            raise AdmError(f"{side} must be an integer, got {value!r}")
        if value <= _MIN_SIDE_EXCLUSIVE:
            raise AdmError(
                f"{side} {value} is too small: libvmaf's ADM needs width and height "
                f"> {_MIN_SIDE_EXCLUSIVE}"
            )


def plane_shapes(width: int, height: int, pixel_format: str | int) -> tuple[tuple[int, int], ...]:
    """Shapes ``(rows, columns)`` of the planes of one frame, Y first.

    Parameters
    ----------
    width, height : int
        Luma size in pixels.
    pixel_format : {"420", "422", "444", "400"}

    Returns
    -------
    tuple of (int, int)
        One shape for 4:0:0, three otherwise.
    """
    shifts = _CHROMA_SHIFTS[_normalize_format(pixel_format)]
    if shifts is None:
        return ((height, width),)
    sx, sy = shifts
    chroma = (-(-height >> sy), -(-width >> sx))
    return ((height, width), chroma, chroma)


def frame_bytes(width: int, height: int, pixel_format: str | int, bitdepth: int) -> int:
    """Size in bytes of one frame in a raw planar YUV file.

    Parameters
    ----------
    width, height : int
        Luma size in pixels.
    pixel_format : {"420", "422", "444", "400"}
    bitdepth : {8, 10, 12, 16}
        Bit depths above 8 store two bytes per sample.

    Returns
    -------
    int

    Examples
    --------
    >>> frame_bytes(576, 324, "420", 8)
    279936
    >>> frame_bytes(17, 17, "420", 10)
    902
    """
    check_geometry(width, height, pixel_format, bitdepth)
    sample = 1 if bitdepth == 8 else 2
    return sum(rows * cols for rows, cols in plane_shapes(width, height, pixel_format)) * sample


def check_input_file(path: Path, where: str, kind: str) -> int:
    """Refuse a missing, directory, unreadable or empty input; return its size.

    Parameters
    ----------
    path : pathlib.Path
    where : str
        How messages name the file, e.g. ``"reference file '/clips/a.yuv'"``.
    kind : str
        What the file should be, for the directory message (``"raw YUV file"``).

    Returns
    -------
    int
        Size in bytes, at least 1.

    Raises
    ------
    AdmError
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        raise AdmError(f"{where} not found") from None
    except OSError as exc:
        raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if path.is_dir():
        raise AdmError(f"{where} is a directory, not a {kind}")
    if not os.access(path, os.R_OK):
        raise AdmError(f"{where} cannot be read: permission denied")
    if info.st_size == 0:
        raise AdmError(f"{where} is empty")
    return info.st_size


def decode_plane(
    buf: bytes | bytearray | memoryview,
    shape: tuple[int, int],
    bitdepth: int,
    *,
    check_range: bool = True,
    where: str = "input",
    index: int = 0,
    pixel_format: str | None = None,
    colorspace: str | None = None,
) -> np.ndarray:
    """Turn the bytes of one plane into a native-endian 2-D array.

    Parameters
    ----------
    buf : bytes-like
        ``rows * cols`` samples: bytes for 8 bits, little-endian uint16 above.
    shape : (int, int)
        ``(rows, cols)``.
    bitdepth : {8, 10, 12, 16}
    check_range : bool, optional
        For 10 and 12 bits, refuse a sample that does not fit the bit depth.
    where, index : str, int, optional
        Name of the file and frame number, for the message.
    pixel_format, colorspace : str, optional
        The file's layout, and a Y4M header's colour space, for the message
        (:func:`check_plane_range`).

    Returns
    -------
    numpy.ndarray
        ``uint8`` for 8 bits, ``uint16`` otherwise, C-contiguous.

    Raises
    ------
    AdmError
        If ``check_range`` finds a sample of ``bitdepth + 1`` bits or more.
    """
    dtype = np.dtype(np.uint8) if bitdepth == 8 else np.dtype("<u2")
    plane = np.frombuffer(buf, dtype=dtype).reshape(shape)
    # Native byte order for downstream code; a no-op view on little-endian hosts.
    plane = plane.astype(np.uint8 if bitdepth == 8 else np.uint16, copy=False)
    if check_range and bitdepth in (10, 12):
        check_plane_range(
            plane, bitdepth, where=where, index=index, pixel_format=pixel_format,
            colorspace=colorspace,
        )  # fmt: skip
    return plane


_MSB_ALIGNED_DIGIT = {layout: digit for digit, layout in _MSB_LAYOUTS.items()}


def _msb_aligned_names(pixel_format: str | None, bitdepth: int) -> tuple[str, str]:
    """ffmpeg's MSB-aligned format of this layout and bit depth (``p010``), and the planar
    little-endian one to convert it to (``yuv420p10le``); all three layouts' where the
    layout is not known (and ``gray10le`` to convert to for 4:0:0)."""
    if pixel_format in _MSB_ALIGNED_DIGIT:
        return f"p{_MSB_ALIGNED_DIGIT[pixel_format]}{bitdepth}", f"yuv{pixel_format}p{bitdepth}le"
    layouts = list(_MSB_ALIGNED_DIGIT.items())
    msb = "/".join(f"p{digit}{bitdepth}" for _, digit in layouts)
    if pixel_format == "400":
        return msb, f"gray{bitdepth}le"
    return msb, "/".join(f"yuv{fmt}p{bitdepth}le" for fmt, _ in layouts)


def check_plane_range(
    plane: np.ndarray,
    bitdepth: int,
    *,
    where: str = "input",
    index: int = 0,
    pixel_format: str | None = None,
    colorspace: str | None = None,
) -> None:
    """Refuse a 10- or 12-bit plane with a sample of ``bitdepth + 1`` bits or more.

    Where every sample is a multiple of ``2 ** (16 - bitdepth)``, the message also asks
    whether they are MSB-aligned (``p010``'s ``value << 6``) and names the format to
    convert to (``pixel_format``, optional, picks its layout). ``colorspace`` is the
    ``C`` tag of the Y4M header that gave the bit depth (``"420p10"``); the message
    then names it instead of asking about ``--bitdepth``.
    """
    peak = int(plane.max())
    if not peak >> bitdepth:
        return
    step = 1 << (16 - bitdepth)
    msb, planar = _msb_aligned_names(pixel_format, bitdepth)
    aligned = not (plane & (step - 1)).any()
    if colorspace is not None:
        stated = f"{where} frame {index} has sample value {peak}, too large for {bitdepth} bits"
        stated += f" (its Y4M header says C{colorspace})"
        if aligned:
            stated += (
                f", and every sample is a multiple of {step}: are they {bitdepth}-bit samples "
                f"in the high bits (MSB-aligned, as in {msb})? Y4M holds them in the low bits"
            )
        raise AdmError(stated)
    if not aligned:
        raise AdmError(
            f"{where} frame {index} has sample value {peak}, too large for "
            f"{bitdepth} bits; is --bitdepth right?"
        )
    raise AdmError(
        f"{where} frame {index} has sample value {peak}, too large for {bitdepth} bits, and "
        f"every sample is a multiple of {step}: is --bitdepth right, or are they {bitdepth}-bit "
        f"samples in the high bits (MSB-aligned, as in {msb})? Convert such a file "
        f"(ffmpeg ... -pix_fmt {planar} out.yuv)"
    )


def decode_planes(
    buf: bytes | bytearray | memoryview,
    width: int,
    height: int,
    pixel_format: str | int,
    bitdepth: int,
    **check: Any,
) -> tuple[np.ndarray, ...]:
    """Every plane of one frame's bytes (Y, U, V; Y only for 4:0:0), each as
    :func:`decode_plane` turns it into an array; ``check`` is its ``check_range``,
    ``where``, ``index`` and ``colorspace``."""
    sample = 1 if bitdepth == 8 else 2
    layout = str(pixel_format)
    planes = []
    offset = 0
    for rows, cols in plane_shapes(width, height, pixel_format):
        nbytes = rows * cols * sample
        data = buf[offset : offset + nbytes]
        planes.append(decode_plane(data, (rows, cols), bitdepth, pixel_format=layout, **check))
        offset += nbytes
    return tuple(planes)


class ClosingReader(Closing):
    """The context-manager surface every frame reader shares: ``with reader:`` closes it
    (its ``close()``) on the way out."""


class PositionedFrames:
    """``iter_frame_bytes`` for a file reader that reads frames by position (raw and Y4M
    files): it needs ``num_frames``, ``frame_size``, ``luma_size``, ``width``,
    ``height``, ``where``, ``fileno()``, ``luma_offset()`` and ``_plane()``."""

    def iter_frame_bytes(
        self, stop: int | None = None, *, check_from: int = 0, check_every: int = 1
    ) -> Iterator[memoryview]:
        """Yield the bytes of whole frames ``0, 1, ...`` before ``stop``: each frame's
        planes as one view (a partial last frame is left out, as ``num_frames``; a Y4M
        FRAME marker too).

        The view is reused for the next frame: consume it first. Frames
        ``check_from``, ``check_from + check_every``, ... have their luma checked as
        ``read_luma`` checks it (the frames a selection reads by position). Reads by
        position, one frame at a time, so a thread may run it while another reads
        frames.
        """
        r: Any = self
        stop = r.num_frames if stop is None else min(r.num_frames, stop)
        frame = memoryview(bytearray(r.frame_size))
        fd = r.fileno()
        for index in range(stop):
            if os.preadv(fd, [frame], r.luma_offset(index)) != r.frame_size:
                raise AdmError(
                    f"{r.where} ended inside frame {index} (was it truncated while reading?)"
                )
            if index >= check_from and not (index - check_from) % check_every:
                r._plane(frame[: r.luma_size], (r.height, r.width), index)  # noqa: SLF001
            yield frame


class YuvReader(PositionedFrames, ClosingReader):
    """Read luma planes from a raw planar YUV file.

    Chroma is skipped by seeking, so only the luma bytes of each frame are read.
    Use as a context manager, or call :meth:`close`.

    Parameters
    ----------
    path : str or os.PathLike
        File to read.
    width, height : int
        Luma size in pixels, both > 16.
    pixel_format : {"420", "422", "444", "400"}, optional
        Chroma layout, default ``"420"``.
    bitdepth : {8, 10, 12, 16}, optional
        Bits per sample, default 8.
    label : str, optional
        How messages name the file, e.g. ``"reference"``.
    check_range : bool, optional
        For 10 and 12 bits, refuse samples that do not fit the bit depth (a sign
        of a wrong ``bitdepth``). Default True.

    Attributes
    ----------
    num_frames : int
        Number of whole frames in the file; a partial frame at the end is
        ignored with a warning on the ``admcuda`` logger.

    Raises
    ------
    AdmError
        If the geometry is not supported, or the file is missing, a directory,
        empty, or smaller than one frame.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        width: int,
        height: int,
        pixel_format: str | int = "420",
        bitdepth: int = 8,
        label: str = "input",
        check_range: bool = True,
    ) -> None:
        check_geometry(width, height, pixel_format, bitdepth)
        self.path = Path(path)
        self.width = width
        self.height = height
        self.pixel_format = _normalize_format(pixel_format)
        self.bitdepth = bitdepth
        self.label = label
        self.check_range = check_range
        self.dtype = np.dtype(np.uint8) if bitdepth == 8 else np.dtype("<u2")
        self.frame_size = frame_bytes(width, height, self.pixel_format, bitdepth)
        self.luma_size = width * height * self.dtype.itemsize

        where = f"{label} file {str(self.path)!r}"
        self.where = where
        size = check_input_file(self.path, where, "raw YUV file")
        geometry = f"{width}x{height} {self.pixel_format} {bitdepth}-bit"
        if size < self.frame_size:
            guess = size_from_name(self.path)
            hint = ""
            if guess and guess != (width, height):
                scale = "; --scale NAME reads it so and scales it" if label == "distorted" else ""
                hint = f" (the name suggests {guess[0]}x{guess[1]}{scale})"
            raise AdmError(
                f"{where} has {size} bytes, less than one {geometry} frame "
                f"({self.frame_size} bytes); check --width/--height/--pixel-format/--bitdepth"
                f"{hint}"
            )
        self.num_frames = size // self.frame_size
        trailing = size % self.frame_size
        if trailing:
            _log.warning(
                "%s: size %d is not a multiple of the %s frame size %d; "
                "scoring its %d whole frames and ignoring the last %d bytes",
                where, size, geometry, self.frame_size, self.num_frames, trailing,
            )  # fmt: skip
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise AdmError(f"{where} cannot be read: {exc.strerror or exc}") from None
        if bitdepth == 8:
            self._warn_if_wider(geometry)

    kind = "yuv"

    def _warn_if_wider(self, geometry: str) -> None:
        """:func:`warn_if_wider` on the first luma plane."""
        if self.width % 2:
            return  # odd rows would mix the byte positions
        try:
            plane = self._read(0, self.luma_size, 0)
        except AdmError:
            return
        warn_if_wider(plane, self.width, self.where, geometry)

    def __len__(self) -> int:
        return self.num_frames

    def close(self) -> None:
        """Close the file; further reads raise ``ValueError``."""
        self._file.close()

    def _read(self, offset: int, nbytes: int, index: int) -> bytearray:
        buf = bytearray(nbytes)
        self._file.seek(offset)
        got = self._file.readinto(buf)
        if got != nbytes:
            raise AdmError(
                f"{self.label} file {str(self.path)!r} ended inside frame {index} "
                "(was it truncated while reading?)"
            )
        return buf

    def _plane(self, buf: bytearray, shape: tuple[int, int], index: int) -> np.ndarray:
        return decode_plane(
            buf, shape, self.bitdepth, check_range=self.check_range, where=self.where,
            index=index, pixel_format=self.pixel_format,
        )  # fmt: skip

    def _check_index(self, index: int) -> int:
        index = int(index)
        if not 0 <= index < self.num_frames:
            raise IndexError(f"frame {index} out of range for {self.num_frames} frames")
        return index

    def fileno(self) -> int:
        """The open file's descriptor, for positioned reads (``os.preadv``)."""
        return self._file.fileno()

    def luma_offset(self, index: int) -> int:
        """Byte offset of frame ``index``'s Y plane in the file."""
        return self._check_index(index) * self.frame_size

    def read_luma(self, index: int) -> np.ndarray:
        """Return the Y plane of frame ``index``.

        Parameters
        ----------
        index : int
            Frame number, from 0.

        Returns
        -------
        numpy.ndarray
            C-contiguous, writable, shape ``(height, width)``, dtype ``uint8`` for
            8 bits and ``uint16`` otherwise.
        """
        index = self._check_index(index)
        buf = self._read(index * self.frame_size, self.luma_size, index)
        return self._plane(buf, (self.height, self.width), index)

    def read_planes(self, index: int) -> tuple[np.ndarray, ...]:
        """Return all planes of frame ``index`` (Y, U, V; Y only for 4:0:0).

        Parameters
        ----------
        index : int
            Frame number, from 0.

        Returns
        -------
        tuple of numpy.ndarray
            Same dtype and layout rules as :meth:`read_luma`.
        """
        index = self._check_index(index)
        buf = self._read(index * self.frame_size, self.frame_size, index)
        return decode_planes(
            buf, self.width, self.height, self.pixel_format, self.bitdepth,
            check_range=self.check_range, where=self.where, index=index,
        )  # fmt: skip

    def __iter__(self) -> Iterator[np.ndarray]:
        """Yield the Y plane of every whole frame, in order."""
        return self.iter_luma()

    def iter_luma(self, start: int = 0, count: int | None = None) -> Iterator[np.ndarray]:
        """Yield the Y planes of frames ``start``, ``start + 1``, ... in order.

        Parameters
        ----------
        start : int, optional
            First frame; frames before it are skipped without being read.
        count : int, optional
            At most this many frames; all the rest by default.

        Yields
        ------
        numpy.ndarray
            As :meth:`read_luma`.
        """
        stop = self.num_frames if count is None else min(self.num_frames, start + count)
        for index in range(max(start, 0), stop):
            yield self.read_luma(index)

    def __repr__(self) -> str:
        return (
            f"YuvReader({str(self.path)!r}, width={self.width}, height={self.height}, "
            f"pixel_format={self.pixel_format!r}, bitdepth={self.bitdepth}, "
            f"frames={self.num_frames})"
        )

"""What a raw file's name says: a size (``576x324``), a layout or bit depth, or a pixel
format admcuda does not read (packed, RGB, big-endian, MSB-aligned). Only ever offered as
hints in messages and checks, never used to read a file."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from admcuda.io.formats import MIN_SIDE_EXCLUSIVE, MSB_LAYOUTS

__all__ = ["NameHints", "name_hints", "size_from_name"]

_NAME_SIZE = re.compile(r"(?<![0-9])([0-9]{2,5})x([0-9]{2,5})(?![0-9])")


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
        if width > MIN_SIDE_EXCLUSIVE and height > MIN_SIDE_EXCLUSIVE:
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
        # Netflix's names (libvmaf's test clips): sparks_ref_480x270.yuv42010le.yuv
        (r"yuv(420|422|444)(10|12|16)(?:le|be)", None, None),
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
_BIG_ENDIAN = re.compile(_WORD.format(r"(?:yuvj?(?:420|422|444)p?|gr[ae]y|p[024]|)(?:10|12|16)be"))
# MSB-aligned 10- and 12-bit samples (ffmpeg's p010, p210, p410, p012 ...: value << 6 or
# << 4 in 16 bits); read as raw files are, low-bit-aligned, every value is too large.
# p016/p216/p416 fill all 16 bits: read right as 16-bit.
_MSB_ALIGNED = re.compile(_WORD.format(r"p([024])1([02])(?:le|be)?"))
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
    (rf"yuvj?(420|422|444)p(9|14){_LE}|(420|422|444)p(9|14)|yuv(420|422|444)(9|14)(?:le|be)",
     "depth", "", None),
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
    if re.fullmatch(r"yuv(420|422|444)[0-9]+be", word):  # Netflix's spelling: yuv42010be
        return f"yuv{word[3:6]}p{bits}le"
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
        if width > MIN_SIDE_EXCLUSIVE and height > MIN_SIDE_EXCLUSIVE:
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
    msb_planar = f"yuv{MSB_LAYOUTS[msb.group(1)]}p1{msb.group(2)}le" if msb else None
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

"""Raw planar YUV frame geometry: the pixel formats and bit depths read, plane shapes and
frame sizes, and the decoding of a plane's bytes into samples (with the range check).

A frame is the Y plane followed by the U and V planes (none for 4:0:0). Chroma
planes are halved with rounding up, ``(w + 1) // 2``, as ffmpeg writes them and
as libvmaf's raw reader sizes its frame buffer. Samples above 8 bits take two
bytes, little-endian.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from admcuda.errors import AdmError
from admcuda.numeric import is_integer

__all__ = [
    "LINE_UP_ROWS",
    "check_rows_line_up",
    "BITDEPTHS",
    "MIN_SIDE_EXCLUSIVE",
    "MSB_LAYOUTS",
    "PIXEL_FORMATS",
    "check_geometry",
    "check_plane_range",
    "decode_plane",
    "decode_planes",
    "frame_bytes",
    "frame_mismatch",
    "normalize_format",
    "size_change",
    "plane_shapes",
    "warn_if_narrower",
    "warn_if_wider",
]

PIXEL_FORMATS: tuple[str, ...] = ("420", "422", "444", "400")
BITDEPTHS: tuple[int, ...] = (8, 10, 12, 16)

# ADM runs four levels of 2x wavelet decimation; libvmaf crashes at 16x16 and below.
MIN_SIDE_EXCLUSIVE = 16

# (horizontal, vertical) chroma decimation shifts; None means no chroma planes.
_CHROMA_SHIFTS: dict[str, tuple[int, int] | None] = {
    "420": (1, 1),
    "422": (1, 0),
    "444": (0, 0),
    "400": None,
}

# ffmpeg's MSB-aligned layouts (p010, p210, p410): the digit after p, and the layout.
MSB_LAYOUTS = {"0": "420", "2": "422", "4": "444"}

_log = logging.getLogger("admcuda")


def normalize_format(pixel_format: str | int) -> str:
    fmt = str(pixel_format)
    if fmt not in PIXEL_FORMATS:
        raise AdmError(
            f"unsupported pixel format {pixel_format!r}; use one of {', '.join(PIXEL_FORMATS)}"
        )
    return fmt


def warn_if_wider(
    luma: bytes | bytearray | memoryview,
    width: int,
    where: str,
    geometry: str,
    *,
    stated: bool = True,
) -> None:
    """Warn where the bytes of a first 8-bit luma plane look like 10- or 12-bit
    little-endian samples: every odd byte below 16 (a sample's high byte) while even bytes
    reach 64 or more. A 10-bit input read as 8-bit is otherwise scored without a sign (its
    values never leave the 8-bit range); a real 8-bit picture does this only if every
    other column is near black. Rows of odd width would mix the byte positions: no check.

    Where the 8 bits are only the default (``stated`` False: no ``--bitdepth``, nothing
    else stating one), this is an :class:`AdmError` instead: the input is plainly misread,
    and ``-b 8`` keeps reading it so (with the warning)."""
    if width % 2 or not luma:
        return
    plane = np.frombuffer(luma, np.uint8)
    if int(plane[1::2].max()) < 16 and int(plane[0::2].max()) >= 64:
        if not stated:
            raise AdmError(
                f"{where} is read as {geometry} (no --bitdepth given), but every second byte "
                "of its first frame is below 16, as in 10- or 12-bit little-endian samples: "
                "give --bitdepth 10 (or 12), or --bitdepth 8 if it really is 8-bit"
            )
        _log.warning(
            "%s is read as %s, but every second byte of its first frame is below 16, "
            "as in 10- or 12-bit little-endian samples; if it is, give --bitdepth",
            where, geometry,
        )  # fmt: skip


LINE_UP_ROWS = 64
"""Rows of each reading that :func:`check_rows_line_up` compares (from a frame's middle)."""


def _row_correlation(samples: np.ndarray, stride: int) -> float:
    """Correlation of each sample with the one ``stride`` samples on (the one below, where
    ``stride`` is the width): about 0.8 to 0.95 for a picture read at its width, near 0
    at another; NaN for a flat window."""
    rows = samples.size // stride
    if rows < 2:
        return math.nan
    a = samples[: rows * stride].reshape(rows, stride)
    x, y = a[:-1].ravel(), a[1:].ravel()
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(x @ x) * float(y @ y))
    return float(x @ y) / den if den > 0 else math.nan


def check_rows_line_up(
    window: np.ndarray, width: int, height: int, where: str, geometry: str
) -> None:
    """Refuse a raw file whose frames are plainly ``height`` wide and ``width`` high:
    ``-w`` and ``-h`` swapped give frames of the same size, so nothing else shows it, and
    ADM, VIF and motion then score rows cut at the wrong places without a sign.

    ``window`` is a run of luma samples from the middle of a frame, at least
    :data:`LINE_UP_ROWS` rows of the longer side. Read at the width given, a picture's
    rows line up (each sample correlates with the one below, about 0.8 to 0.95 on camera
    content); read at the other side, they do not (about 0.1). The file is refused only
    where the swapped reading lines up well and the given one does not; flat or noisy
    content, where neither does, passes."""
    if width == height:
        return
    # Each half of the samples (by position's parity) less its own mean: a 10-bit file read
    # as 8-bit alternates high and low bytes, which correlate at every even stride.
    samples = window.astype(np.float64)
    samples[0::2] -= samples[0::2].mean()
    samples[1::2] -= samples[1::2].mean()
    given = _row_correlation(samples, width)
    swapped = _row_correlation(samples, height)
    if not (math.isfinite(given) and math.isfinite(swapped)):
        return
    if swapped >= 0.6 and swapped - given >= 0.4:
        raise AdmError(
            f"{where} is read as {geometry}, but its rows line up only {height} samples wide "
            f"(row-to-row correlation {swapped:.2f} at width {height}, {given:.2f} at "
            f"{width}): are --width and --height swapped? (give -w {height} -h {width})"
        )


def warn_if_narrower(peak: int, bitdepth: int, where: str, geometry: str) -> None:
    """Warn where the largest luma sample ``peak`` of the first frames read at 12 or 16
    bits fits in 10 (or, at 16, in 12) bits: 10-bit samples read as 12- or 16-bit keep
    their values, so ADM scores them without a sign, and differently (its thresholds
    scale with the bit depth). The opposite of :func:`warn_if_wider`."""
    if bitdepth not in (12, 16):
        return
    fits = next((bits for bits in (10, 12) if bits < bitdepth and peak < 1 << bits), None)
    if fits is None:
        return
    _log.warning(
        "%s is read as %s, but no luma sample of its first frames exceeds %d, as in "
        "%d-bit samples; if it is, give --bitdepth %d",
        where, geometry, peak, fits, fits,
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
    normalize_format(pixel_format)
    # 8.0 in BITDEPTHS holds, and a float bit depth fails later in a shift
    if not is_integer(bitdepth) or bitdepth not in BITDEPTHS:
        raise AdmError(
            f"unsupported bit depth {bitdepth!r}; use one of {', '.join(map(str, BITDEPTHS))}"
        )
    for side, value in (("width", width), ("height", height)):
        if not is_integer(value):
            raise AdmError(f"{side} must be an integer, got {value!r}")
        if value <= MIN_SIDE_EXCLUSIVE:
            raise AdmError(
                f"{side} {value} is too small: libvmaf's ADM needs width and height "
                f"> {MIN_SIDE_EXCLUSIVE}"
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
    shifts = _CHROMA_SHIFTS[normalize_format(pixel_format)]
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


_MSB_ALIGNED_DIGIT = {layout: digit for digit, layout in MSB_LAYOUTS.items()}


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


def frame_mismatch(dtype: Any, shape: tuple[int, ...], dst: Any) -> str:
    """The one-line error for a frame that does not fit the plane ``dst`` it is read into."""
    return (
        f"frame is {np.dtype(dtype)}{list(shape)}, expected {dst.dtype}[{dst.shape[0]}, "
        f"{dst.shape[1]}]"
    )


def size_change(where: str, index: int, width: int, height: int, new: str) -> AdmError:
    """The one-line error for a video whose frames change size at frame ``index`` (from
    ``width`` x ``height`` to ``new``), whichever decoder found it."""
    return AdmError(
        f"{where} changes frame size at frame {index}: from {width}x{height} to {new}; "
        f"admcuda scores frames of one size: cut it where the size changes, or scale it to "
        f"one size (ffmpeg -i IN -vf scale={width}:{height} OUT)"
    )

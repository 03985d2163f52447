"""Bit-exact reference of libvmaf's ``ciede`` extractor (``ciede.c``, a port of
av-metrics' CIEDE2000; scalar C, no SIMD path).

One output per frame pair, ``ciede2000``: ``45 - 20 log10`` of the mean CIEDE2000 colour
difference over the pixels, each pixel's Y, Cb and Cr read as BT.709 limited-range video.
The steps, with the C's types (every float32 rounding marked by :func:`f32`, everything
else double, in the C's order):

- :func:`upsample_chroma`: ``scale_chroma_planes``, chroma to the luma's size by
  repetition; 4:4:4 planes are read as they are. On 4:2:2 libvmaf's loop takes the
  row step of 4:2:0 and the column step of 4:4:4: luma row ``i`` reads chroma row
  ``i // 2`` of the picture, and its column ``j`` the picture's sample ``j`` from that
  row's start, past the row's ``w / 2`` samples into its padding (zeros: libvmaf's
  ``vmaf_picture_alloc`` clears it, its stride the chroma width rounded up to 32
  samples) and on into the next row. That is reproduced as libvmaf's pictures hold it.
  On a 4:2:0 picture of odd width or height and a 4:2:2 one of odd width the loop reads
  a chroma column or row the picture does not have (outside the plane, for the last
  row of Cr): :func:`upsample_chroma` refuses those.
- :func:`lab_color`: ``get_lab_color``, doubles: offset and scale (:func:`normalise`:
  multiplied by the reciprocal, not divided), BT.709 to RGB, the sRGB curve
  (``pow(x, 2.4)``), to XYZ, each of X, Y, Z through the CIELAB curve (``pow(x, 1/3)``)
  rounded to float32, and L, a, b rounded to float32.
- :func:`ciede2000`: the CIEDE2000 difference with kL = 0.65, kC = 1, kH = 4, float32
  variables over double expressions: ``pow(x, 2)`` is an exact double square, ``powf``
  of the chroma's seventh power is libm's float ``powf``, GCC's ``powf(x, 2)`` a float32
  product. The hue-difference test reads the unprimed chromas, and the mean hue's
  wrap adds 2 pi whenever the hues are more than pi apart.
- :func:`compute_ciede`: the float32 differences (:func:`differences`) added in a
  running double, row by row (:func:`running_sum`), then the score
  (:func:`frame_score`).

libm is called where the C calls it: Python's ``math.pow``, ``math.sin``, ``math.cos``,
``math.exp``, ``math.atan2``, ``math.log10`` call the C library's functions (NumPy's
vectorised ones are its own and may differ in the last bit), and ``powf`` through
:func:`admcuda.reference.cnum.powf`. GCC builds libvmaf with ``-O3 -std=c11`` for
baseline x86-64: SSE arithmetic, no contraction into FMA, no reassociation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .cnum import powf

__all__ = [
    "BITDEPTHS",
    "CIEDE_NAME",
    "KSUB",
    "PICTURE_ALIGN",
    "check_layout",
    "ciede2000",
    "compute_ciede",
    "differences",
    "f32",
    "frame_score",
    "lab_color",
    "normalise",
    "running_sum",
    "upsample_chroma",
]

CIEDE_NAME = "ciede2000"
BITDEPTHS = (8, 10, 12, 16)
"""The bit depths ``extract`` reads (others: ``-EINVAL``)."""

PICTURE_ALIGN = 32
"""``vmaf_picture_alloc``'s row alignment in samples (``DATA_ALIGN``)."""

KSUB = (float(np.float32(0.65)), 1.0, 4.0)
"""``default_ksub``: kL, kC, kH as the C's float struct holds them."""

_PI = math.pi  # M_PI
_TWO_PI = 2.0 * math.pi
_POW25_7 = 6103515625.0  # pow(25, 7): exact in a double
_POWF25_7 = float(np.float32(6103515625.0))  # powf(25., 7), folded by GCC: rounded to float
_SRGB_KNEE = 10.0 / 255.0
_LAB_EPSILON = 216.0 / 24389.0
_LAB_KAPPA = 24389.0 / 27.0


def f32(x: float) -> float:
    """``x`` rounded to float32 (round to nearest even), as a Python float: a C float
    variable or return value. An operation on float32 values computed in double and
    rounded once gives the float32 operation's result (+, -, *, /, sqrt)."""
    return float(np.float32(x))


def _sqrt(x: float) -> float:
    """C's ``sqrt``: NaN below zero (Python's raises)."""
    return math.sqrt(x) if x >= 0.0 else math.nan


def _srgb_linear(c: float) -> float:
    """``rgb_to_xyz_map``."""
    if c > _SRGB_KNEE:
        return math.pow((c + 0.055) * (1.0 / 1.055), 2.4)
    return c * (1.0 / 12.92)


def _lab_curve(c: float) -> float:
    """``xyz_to_lab_map``: a float32 result."""
    if c > _LAB_EPSILON:
        return f32(math.pow(c, 1.0 / 3.0))
    return f32((_LAB_KAPPA * c + 16.0) * (1.0 / 116.0))


def normalise(y: float, u: float, v: float, bitdepth: int) -> tuple[float, float, float]:
    """``get_lab_color``'s first step: limited-range samples to [0, 1] luma and
    [-0.5, 0.5] chroma, each offset then multiplied by the reciprocal of its range."""
    scale = float(1 << (bitdepth - 8))
    return (
        (y - 16.0 * scale) * (1.0 / (219.0 * scale)),
        (u - 128.0 * scale) * (1.0 / (224.0 * scale)),
        (v - 128.0 * scale) * (1.0 / (224.0 * scale)),
    )


def lab_color(y: float, u: float, v: float, bitdepth: int) -> tuple[float, float, float]:
    """``get_lab_color``: one pixel's samples to CIELAB (L, a, b), each a float32."""
    y, u, v = normalise(y, u, v, bitdepth)
    r = _srgb_linear(y + 1.28033 * v)
    g = _srgb_linear(y - 0.21482 * u - 0.38059 * v)
    b = _srgb_linear(y + 2.12798 * u)
    x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894
    yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958
    z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677
    x = _lab_curve(x * (1.0 / 0.95047))
    yy = _lab_curve(yy)
    z = _lab_curve(z * (1.0 / 1.08883))
    return f32(116.0 * yy - 16.0), f32(500.0 * (x - yy)), f32(200.0 * (yy - z))


def _h_prime(x: float, y: float) -> float:
    """``get_h_prime(b, a')``: the hue angle in [0, 2 pi), a float32."""
    if x == 0.0 and y == 0.0:
        return 0.0
    angle = f32(math.atan2(x, y))
    if angle < 0.0:
        angle = f32(angle + _TWO_PI)
    return angle


def _delta_h_prime(c1: float, c2: float, h1: float, h2: float) -> float:
    """``get_delta_h_prime``: 0 where an unprimed chroma is 0."""
    if c1 == 0.0 or c2 == 0.0:
        return 0.0
    if abs(f32(h1 - h2)) <= _PI:
        return f32(h2 - h1)
    if h2 <= h1:
        return f32(f32(h2 - h1) + _TWO_PI)
    return f32(f32(h2 - h1) - _TWO_PI)


def _h_bar_prime(h1: float, h2: float) -> float:
    """``get_upcase_h_bar_prime``."""
    if abs(f32(h1 - h2)) > _PI:
        return f32((f32(h1 + h2) + _TWO_PI) / 2.0)
    return f32(f32(h1 + h2) / 2.0)


def _upcase_t(h: float) -> float:
    """``get_upcase_t``: doubles, a float32 result."""
    return f32(
        1.0
        - 0.17 * math.cos(h - _PI / 6.0)
        + 0.24 * math.cos(2.0 * h)
        + 0.32 * math.cos(3.0 * h + _PI / 30.0)
        - 0.20 * math.cos(4.0 * h - 7.0 * _PI / 20.0)
    )


def _r_sub_t(c_bar_prime: float, h_bar_prime: float) -> float:
    """``get_r_sub_t``: the rotation term, with float32 ``powf`` and a float32 square."""
    degrees = f32((f32(h_bar_prime * (180.0 / _PI)) - 275.0) * (1.0 / 25.0))
    p = float(powf(c_bar_prime, 7.0))
    ratio = f32(p / f32(p + _POWF25_7))
    radians = f32(f32(60.0 * math.exp(-f32(degrees * degrees))) * (_PI / 180.0))
    return f32(-2.0 * _sqrt(ratio) * math.sin(radians))


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """``ciede2000``: the colour difference of two CIELAB colours, a float32."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    k_l, k_c, k_h = KSUB
    delta_l = f32(l2 - l1)
    l_bar = f32(f32(l1 + l2) / 2)
    c1 = f32(_sqrt(a1 * a1 + b1 * b1))
    c2 = f32(_sqrt(a2 * a2 + b2 * b2))
    c_bar = f32(f32(c1 + c2) / 2)
    c7 = math.pow(c_bar, 7.0)
    g = 1.0 - _sqrt(c7 / (c7 + _POW25_7))
    a1p = f32(a1 + f32(a1 / 2) * g)
    a2p = f32(a2 + f32(a2 / 2) * g)
    c1p = f32(_sqrt(a1p * a1p + b1 * b1))
    c2p = f32(_sqrt(a2p * a2p + b2 * b2))
    c_bar_p = f32(f32(c1p + c2p) / 2)
    delta_c = f32(c2p - c1p)
    l50 = f32(l_bar - 50)
    s_l = f32(1.0 + (0.015 * (l50 * l50)) / _sqrt(20 + l50 * l50))
    s_c = f32(1.0 + 0.045 * c_bar_p)
    h1p = _h_prime(b1, a1p)
    h2p = _h_prime(b2, a2p)
    delta_h = _delta_h_prime(c1, c2, h1p, h2p)
    delta_big_h = f32(2.0 * _sqrt(f32(c1p * c2p)) * math.sin(delta_h / 2.0))
    h_bar_p = _h_bar_prime(h1p, h2p)
    t = _upcase_t(h_bar_p)
    s_h = f32(1.0 + 0.015 * c_bar_p * t)
    r_t = _r_sub_t(c_bar_p, h_bar_p)
    lightness = f32(delta_l / f32(k_l * s_l))
    chroma = f32(delta_c / f32(k_c * s_c))
    hue = f32(delta_big_h / f32(k_h * s_h))
    cross = f32(f32(r_t * chroma) * hue)
    return f32(_sqrt(lightness * lightness + chroma * chroma + hue * hue + cross))


def check_layout(width: int, height: int, pixel_format: str, bitdepth: int) -> None:
    """Refuse (ValueError) what libvmaf's ciede refuses (4:0:0, a bit depth ``extract``
    does not read) and the pictures whose chroma it reads outside the picture (4:2:0 of
    odd width or height, 4:2:2 of odd width, and a 4:2:2 row read past the plane)."""
    if pixel_format == "400":
        raise ValueError("ciede reads chroma: libvmaf's ciede refuses 4:0:0 input")
    if pixel_format not in ("420", "422", "444"):
        raise ValueError(f"ciede: no pixel format {pixel_format!r}")
    if bitdepth not in BITDEPTHS:
        raise ValueError(f"ciede takes bit depths 8, 10, 12 and 16, not {bitdepth}")
    _check_sides(width, height, pixel_format)


def _check_sides(width: int, height: int, pixel_format: str) -> None:
    if pixel_format == "444":
        return
    odd = width % 2 or (pixel_format == "420" and height % 2)
    if odd:
        sides = "width or height" if pixel_format == "420" else "width"
        raise ValueError(
            f"ciede: on {pixel_format[0]}:{pixel_format[1]}:{pixel_format[2]} of odd "
            f"{sides} ({width}x{height}) libvmaf's ciede reads chroma outside the picture; "
            "give even sides"
        )
    if pixel_format == "422":
        stride = _stride(width // 2)
        if ((height - 1) // 2) * stride + width > height * stride:
            raise ValueError(
                f"ciede: a {width}x{height} 4:2:2 picture is read past its chroma planes "
                "by libvmaf's ciede; give more rows"
            )


def _stride(chroma_width: int) -> int:
    return -(-chroma_width // PICTURE_ALIGN) * PICTURE_ALIGN


def upsample_chroma(plane: np.ndarray, width: int, height: int, pixel_format: str) -> np.ndarray:
    """``scale_chroma_planes`` for one chroma plane: the ``(height, width)`` samples
    libvmaf's loop reads for each luma position (see the module's notes on 4:2:2).

    ``plane`` is the chroma plane as a file holds it (its rows and columns halved as the
    layout says); :func:`check_layout` must accept the layout and size.
    """
    _check_sides(width, height, pixel_format)
    cw = width if pixel_format == "444" else width // 2
    ch = height // 2 if pixel_format == "420" else height
    if plane.ndim != 2 or plane.shape[0] < ch or plane.shape[1] < cw:
        raise ValueError(
            f"ciede: a {pixel_format} chroma plane of {width}x{height} has at least "
            f"{ch}x{cw} samples, not {plane.shape}"
        )
    plane = plane[:ch, :cw]
    if pixel_format == "444":
        return plane
    if pixel_format == "420":
        return plane.repeat(2, axis=0).repeat(2, axis=1)
    stride = _stride(cw)
    picture = np.zeros((ch, stride), plane.dtype)
    picture[:, :cw] = plane
    flat = picture.reshape(-1)
    starts = (np.arange(height) // 2) * stride
    return flat[starts[:, None] + np.arange(width)]


def frame_score(total: float, width: int, height: int) -> float:
    """``extract``'s score from the differences' double sum: ``45 - 20 log10(mean)``,
    with the C library's ``log10`` (infinite where every difference is 0)."""
    mean = total / ((width * height) & 0xFFFFFFFF)
    if mean == 0.0:
        return math.inf
    return 45.0 - 20.0 * math.log10(mean)


def running_sum(values: Sequence[float]) -> float:
    """``de00_sum``: the values added to a double one after another (never Python's
    ``sum``, which compensates from 3.12 on, nor ``math.fsum``)."""
    total = 0.0
    for value in values:
        total += value
    return total


def compute_ciede(
    ref: Sequence[np.ndarray], dis: Sequence[np.ndarray], bitdepth: int, pixel_format: str
) -> dict[str, float]:
    """One frame pair's ``ciede2000``, one pixel at a time as the C takes them (slow:
    tens of microseconds a pixel; the compiled kernel of :mod:`admcuda.compiled.ciede`
    gives the same double).

    Parameters
    ----------
    ref, dis : sequence of three ndarray
        The Y, Cb and Cr planes of each frame as a file holds them; uint8 at 8 bits,
        uint16 above.
    bitdepth : {8, 10, 12, 16}
    pixel_format : {"420", "422", "444"}
    """
    height, width = ref[0].shape
    total = running_sum(differences(ref, dis, bitdepth, pixel_format))
    return {CIEDE_NAME: frame_score(total, width, height)}


def differences(
    ref: Sequence[np.ndarray], dis: Sequence[np.ndarray], bitdepth: int, pixel_format: str
) -> list[float]:
    """Every pixel's float32 CIEDE2000 difference, in row-major order (see
    :func:`compute_ciede`)."""
    height, width = ref[0].shape
    check_layout(width, height, pixel_format, bitdepth)
    if dis[0].shape != ref[0].shape:
        raise ValueError(f"ciede: planes of {ref[0].shape} and {dis[0].shape}")
    planes = []
    for frame in (ref, dis):
        chroma = [upsample_chroma(p, width, height, pixel_format) for p in frame[1:3]]
        planes.append([frame[0].tolist(), *(c.tolist() for c in chroma)])
    (ry, ru, rv), (dy, du, dv) = planes
    labs: dict[tuple[int, int, int], tuple[float, float, float]] = {}

    def lab(y: int, u: int, v: int) -> tuple[float, float, float]:
        key = (y, u, v)
        if key not in labs:
            labs[key] = lab_color(float(y), float(u), float(v), bitdepth)
        return labs[key]

    out = []
    for i in range(height):
        for j in range(width):
            first = lab(ry[i][j], ru[i][j], rv[i][j])
            second = lab(dy[i][j], du[i][j], dv[i][j])
            out.append(ciede2000(first, second))
    return out

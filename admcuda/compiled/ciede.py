"""libvmaf's ``ciede`` (CIEDE2000 over a frame pair) as a Numba kernel.

:func:`ciede_sum` gives the double libvmaf 3.2.0's scalar C sums (``src/feature/ciede.c``,
``extract``'s ``de00_sum``), pixel by pixel in row-major order: each step of
:mod:`admcuda.reference.ciede` (the specification, one pixel at a time in Python) in the
same precision and order. Doubles are computed as doubles and every float32 variable of
the C is a double rounded to float32 (:func:`_f32`), which for +, -, *, / and sqrt of
float32 values is the float32 operation's own result.

libm is the C library's: Numba lowers ``math.pow``, ``math.sin``, ``math.cos``,
``math.exp`` and ``math.atan2`` of doubles to calls of glibc's ``pow``, ``sin``, ``cos``,
``exp``, ``atan2``, and ``math.pow`` of two float32 values to ``powf`` (the tests compare
each with ``ctypes``' calls of the same functions). Squares the C takes with
``pow(x, 2)`` and GCC's ``powf(x, 2)`` are products, as GCC compiles them. No operation
is contracted (no ``fastmath``: Numba emits no FMA), as libvmaf's build (gcc ``-O3
-std=c11``, baseline x86-64) contracts none.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["ciede_sum"]

_JIT = {"cache": True, "nogil": True, "error_model": "numpy"}

_PI = math.pi
_TWO_PI = 2.0 * math.pi
_POW25_7 = 6103515625.0
_POWF25_7 = float(np.float32(6103515625.0))
_SEVEN = np.float32(7.0)
_K_L = float(np.float32(0.65))
_K_C = 1.0
_K_H = 4.0
_SRGB_KNEE = 10.0 / 255.0
_LAB_EPSILON = 216.0 / 24389.0
_LAB_KAPPA = 24389.0 / 27.0


@njit(**_JIT)
def _f32(x: float) -> float:
    return np.float64(np.float32(x))


@njit(**_JIT)
def _srgb_linear(c: float) -> float:
    if c > _SRGB_KNEE:
        return math.pow((c + 0.055) * (1.0 / 1.055), 2.4)
    return c * (1.0 / 12.92)


@njit(**_JIT)
def _lab_curve(c: float) -> float:
    if c > _LAB_EPSILON:
        return _f32(math.pow(c, 1.0 / 3.0))
    return _f32((_LAB_KAPPA * c + 16.0) * (1.0 / 116.0))


@njit(**_JIT)
def _lab(y: float, u: float, v: float, scale: float) -> tuple[float, float, float]:
    y = (y - 16.0 * scale) * (1.0 / (219.0 * scale))
    u = (u - 128.0 * scale) * (1.0 / (224.0 * scale))
    v = (v - 128.0 * scale) * (1.0 / (224.0 * scale))
    r = _srgb_linear(y + 1.28033 * v)
    g = _srgb_linear(y - 0.21482 * u - 0.38059 * v)
    b = _srgb_linear(y + 2.12798 * u)
    x = r * 0.4124564390896921 + g * 0.357576077643909 + b * 0.18043748326639894
    yy = r * 0.21267285140562248 + g * 0.715152155287818 + b * 0.07217499330655958
    z = r * 0.019333895582329317 + g * 0.119192025881303 + b * 0.9503040785363677
    x = _lab_curve(x * (1.0 / 0.95047))
    yy = _lab_curve(yy)
    z = _lab_curve(z * (1.0 / 1.08883))
    return _f32(116.0 * yy - 16.0), _f32(500.0 * (x - yy)), _f32(200.0 * (yy - z))


@njit(**_JIT)
def _h_prime(x: float, y: float) -> float:
    if x == 0.0 and y == 0.0:
        return 0.0
    angle = _f32(math.atan2(x, y))
    if angle < 0.0:
        angle = _f32(angle + _TWO_PI)
    return angle


@njit(**_JIT)
def _delta_h_prime(c1: float, c2: float, h1: float, h2: float) -> float:
    if c1 == 0.0 or c2 == 0.0:
        return 0.0
    if abs(_f32(h1 - h2)) <= _PI:
        return _f32(h2 - h1)
    if h2 <= h1:
        return _f32(_f32(h2 - h1) + _TWO_PI)
    return _f32(_f32(h2 - h1) - _TWO_PI)


@njit(**_JIT)
def _h_bar_prime(h1: float, h2: float) -> float:
    if abs(_f32(h1 - h2)) > _PI:
        return _f32((_f32(h1 + h2) + _TWO_PI) / 2.0)
    return _f32(_f32(h1 + h2) / 2.0)


@njit(**_JIT)
def _upcase_t(h: float) -> float:
    return _f32(
        1.0
        - 0.17 * math.cos(h - _PI / 6.0)
        + 0.24 * math.cos(2.0 * h)
        + 0.32 * math.cos(3.0 * h + _PI / 30.0)
        - 0.20 * math.cos(4.0 * h - 7.0 * _PI / 20.0)
    )


@njit(**_JIT)
def _r_sub_t(c_bar_prime: float, h_bar_prime: float) -> float:
    degrees = _f32((_f32(h_bar_prime * (180.0 / _PI)) - 275.0) * (1.0 / 25.0))
    p = np.float64(math.pow(np.float32(c_bar_prime), _SEVEN))
    ratio = _f32(p / _f32(p + _POWF25_7))
    radians = _f32(_f32(60.0 * math.exp(-_f32(degrees * degrees))) * (_PI / 180.0))
    return _f32(-2.0 * math.sqrt(ratio) * math.sin(radians))


@njit(**_JIT)
def _ciede2000(
    l1: float, a1: float, b1: float, l2: float, a2: float, b2: float
) -> float:  # fmt: skip
    delta_l = _f32(l2 - l1)
    l_bar = _f32(_f32(l1 + l2) / 2)
    c1 = _f32(math.sqrt(a1 * a1 + b1 * b1))
    c2 = _f32(math.sqrt(a2 * a2 + b2 * b2))
    c_bar = _f32(_f32(c1 + c2) / 2)
    c7 = math.pow(c_bar, 7.0)
    g = 1.0 - math.sqrt(c7 / (c7 + _POW25_7))
    a1p = _f32(a1 + _f32(a1 / 2) * g)
    a2p = _f32(a2 + _f32(a2 / 2) * g)
    c1p = _f32(math.sqrt(a1p * a1p + b1 * b1))
    c2p = _f32(math.sqrt(a2p * a2p + b2 * b2))
    c_bar_p = _f32(_f32(c1p + c2p) / 2)
    delta_c = _f32(c2p - c1p)
    l50 = _f32(l_bar - 50)
    s_l = _f32(1.0 + (0.015 * (l50 * l50)) / math.sqrt(20 + l50 * l50))
    s_c = _f32(1.0 + 0.045 * c_bar_p)
    h1p = _h_prime(b1, a1p)
    h2p = _h_prime(b2, a2p)
    delta_h = _delta_h_prime(c1, c2, h1p, h2p)
    delta_big_h = _f32(2.0 * math.sqrt(_f32(c1p * c2p)) * math.sin(delta_h / 2.0))
    h_bar_p = _h_bar_prime(h1p, h2p)
    t = _upcase_t(h_bar_p)
    s_h = _f32(1.0 + 0.015 * c_bar_p * t)
    r_t = _r_sub_t(c_bar_p, h_bar_p)
    lightness = _f32(delta_l / _f32(_K_L * s_l))
    chroma = _f32(delta_c / _f32(_K_C * s_c))
    hue = _f32(delta_big_h / _f32(_K_H * s_h))
    cross = _f32(_f32(r_t * chroma) * hue)
    return _f32(math.sqrt(lightness * lightness + chroma * chroma + hue * hue + cross))


@njit(**_JIT)
def ciede_sum(
    ry: np.ndarray, ru: np.ndarray, rv: np.ndarray,
    dy: np.ndarray, du: np.ndarray, dv: np.ndarray, bitdepth: int,
) -> float:  # fmt: skip
    """``extract``'s ``de00_sum``: the float32 CIEDE2000 difference of every pixel added
    to a double in row-major order. The six planes are the luma-sized samples
    (chroma through :func:`admcuda.reference.ciede.upsample_chroma`), one shape and
    dtype."""
    scale = np.float64(1 << (bitdepth - 8))
    total = 0.0
    height, width = ry.shape
    for i in range(height):
        for j in range(width):
            l1, a1, b1 = _lab(np.float64(ry[i, j]), np.float64(ru[i, j]), np.float64(rv[i, j]),
                              scale)  # fmt: skip
            l2, a2, b2 = _lab(np.float64(dy[i, j]), np.float64(du[i, j]), np.float64(dv[i, j]),
                              scale)  # fmt: skip
            total += _ciede2000(l1, a1, b1, l2, a2, b2)
    return total

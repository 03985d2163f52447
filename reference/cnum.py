"""C numeric semantics the reference must reproduce bit for bit.

libvmaf mixes float and double arithmetic, calls libm, and converts out-of-range doubles
to unsigned integers (undefined behaviour in C, well defined on x86-64 with GCC). These
helpers pin each of those behaviours down in one place.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Iterable

import numpy as np

f32 = np.float32

try:
    _libm = ctypes.CDLL("libm.so.6")  # glibc's name, found without ctypes.util's ldconfig run
except OSError:
    import ctypes.util

    _libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_powf = _libm.powf
_powf.restype = ctypes.c_float
_powf.argtypes = (ctypes.c_float, ctypes.c_float)
_log2f = _libm.log2f
_log2f.restype = ctypes.c_float
_log2f.argtypes = (ctypes.c_float,)


def powf(x: float, y: float) -> np.float32:
    """libm ``powf`` (NumPy's float32 power may use its own SIMD code instead)."""
    return f32(_powf(float(f32(x)), float(f32(y))))


def log2f(x: float) -> np.float32:
    """libm ``log2f`` (NumPy's float32 log2 is its own implementation, not libm's)."""
    return f32(_log2f(float(f32(x))))


def log2f_values(xs: Iterable[int]) -> np.ndarray:
    """libm ``log2f`` of each integer in ``xs`` (exact in float32), as float64 holding the
    float32 results: one C call each."""
    call = _log2f
    return np.array([call(float(x)) for x in xs], dtype=np.float64)


def u16_from_double(x: float) -> int:
    """``(uint16_t)x`` as GCC compiles it on x86-64: truncate to int32, keep 16 bits."""
    if not math.isfinite(x) or not (-(2.0**31) < x < 2.0**31):
        return 0  # cvttsd2si yields 0x80000000, whose low 16 bits are zero
    return int(x) & 0xFFFF


def u32_from_double(x: float) -> int:
    """``(uint32_t)x`` as GCC compiles it on x86-64: truncate to int64, keep 32 bits."""
    if not math.isfinite(x) or not (-(2.0**63) < x < 2.0**63):
        return 0
    return int(x) & 0xFFFFFFFF


def u32(x: int) -> int:
    """Wrap a Python int to uint32, as C unsigned arithmetic does."""
    return x & 0xFFFFFFFF


def pow2(e: int) -> float:
    """libm ``pow(2, e)`` for an integer exponent, overflowing to inf like C."""
    if e > 1023:
        return math.inf
    return math.ldexp(1.0, e) if e >= -1074 else 0.0


def ceil_log2_u32(n: int) -> int:
    """``(uint32_t)ceil(log2(n))`` for a positive int."""
    return u32_from_double(math.ceil(math.log2(n)))


def round_pow2_u32(shift: int) -> int:
    """``(uint32_t)pow(2, shift - 1)`` with ``shift`` a uint32 (libvmaf's rounding term)."""
    return u32_from_double(pow2(u32(shift - 1)))


def sar(x: np.ndarray, shift: int) -> np.ndarray:
    """Arithmetic right shift with x86's count masking (C's ``>>`` by a uint32 count)."""
    return x >> (shift & (63 if x.dtype.itemsize == 8 else 31))


def border(n: int, tap: bool) -> tuple[int, int]:
    """libvmaf's crop of one dimension: ``(start, stop)`` of the scored region.

    With ``tap`` the region grows by the 3x3 filter's reach, as the decouple and CSF
    stages compute it (clamped to ``[0, n]``).
    """
    if tap:
        lo = int(n * 0.1 - 0.5 - 1)
        hi = n - lo + 2
        return max(lo, 0), min(hi, n)
    lo = int(n * 0.1 - 0.5)
    return lo, n - lo

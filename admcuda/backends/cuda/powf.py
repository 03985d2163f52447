"""Vectorised glibc ``powf``, bit-exact with the libm the reference calls.

:func:`reference.cnum.powf` calls libm's ``powf`` through ctypes one value at a time, which
is exact but slow. NumPy's float32 power is a different function, and a correctly rounded
``x**y`` is not glibc's either: glibc (2.28 and later, from ARM's optimized-routines)
computes ``log2(x)`` with a 16-entry table and a degree-5 polynomial in double, multiplies
by ``y``, takes ``exp2`` with a 32-entry table and a cubic in double, and rounds that double
intermediate, which is only about 2**-25 accurate, once to float. :func:`powf` replays those
double steps in NumPy with glibc's own constants.

x86-64 glibc may pick a build of ``powf`` compiled with FMA, whose fused multiply-adds move
the last bits of the double intermediate. So the replay is trusted only where such bits
cannot matter: elements whose intermediate lies within a relative 2**-38 of a float32
rounding midpoint, whose ``exp2`` reduction sits near a table boundary, or whose input or
result is special (zero aside, negative, inf, NaN, huge exponents) go to libm itself. On
first use a self-check compares the replay with libm on a few thousand values; if any
differs, every later call goes element by element through libm (exact, slow) and one
warning is logged on the ``admcuda`` logger.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import logging
import threading

import numpy as np

from admcuda.reference.constants import ONE_THIRD_F

__all__ = ["fast_path_enabled", "powf"]

_log = logging.getLogger("admcuda")

# The libm function reference.cnum.powf calls (the same library, loaded once per process),
# called with the GIL held: powf is pure, and releasing and taking back the GIL around each
# call made the self-check's 4,096 calls wait on the decoding threads (0.3 s in a traced
# NVDEC run on the H200, against a few ms alone).
_libm_powf = ctypes.PyDLL(ctypes.util.find_library("m") or "libm.so.6").powf
_libm_powf.restype = ctypes.c_float
_libm_powf.argtypes = (ctypes.c_float, ctypes.c_float)

_h = float.fromhex

# ---- glibc's constants (sysdeps/ieee754/flt-32/e_powf_log2_data.c, e_exp2f_data.c) ---------

_LOG2_OFF = 0x3F330000  # x = 2**k * z with z in [OFF, 2*OFF)
_LOG2_TAB = (  # (1/c, log2(c)) for each of the 16 subintervals of z
    (_h("0x1.661ec79f8f3bep0"), _h("-0x1.efec65b963019p-2")),
    (_h("0x1.571ed4aaf883dp0"), _h("-0x1.b0b6832d4fca4p-2")),
    (_h("0x1.49539f0f010bp0"), _h("-0x1.7418b0a1fb77bp-2")),
    (_h("0x1.3c995b0b80385p0"), _h("-0x1.39de91a6dcf7bp-2")),
    (_h("0x1.30d190c8864a5p0"), _h("-0x1.01d9bf3f2b631p-2")),
    (_h("0x1.25e227b0b8eap0"), _h("-0x1.97c1d1b3b7afp-3")),
    (_h("0x1.1bb4a4a1a343fp0"), _h("-0x1.2f9e393af3c9fp-3")),
    (_h("0x1.12358f08ae5bap0"), _h("-0x1.960cbbf788d5cp-4")),
    (_h("0x1.0953f419900a7p0"), _h("-0x1.a6f9db6475fcep-5")),
    (1.0, 0.0),
    (_h("0x1.e608cfd9a47acp-1"), _h("0x1.338ca9f24f53dp-4")),
    (_h("0x1.ca4b31f026aap-1"), _h("0x1.476a9543891bap-3")),
    (_h("0x1.b2036576afce6p-1"), _h("0x1.e840b4ac4e4d2p-3")),
    (_h("0x1.9c2d163a1aa2dp-1"), _h("0x1.40645f0c6651cp-2")),
    (_h("0x1.886e6037841edp-1"), _h("0x1.88e9c2c1b9ff8p-2")),
    (_h("0x1.767dcf5534862p-1"), _h("0x1.ce0a44eb17bccp-2")),
)
_LOG2_POLY = (
    _h("0x1.27616c9496e0bp-2"),
    _h("-0x1.71969a075c67ap-2"),
    _h("0x1.ec70a6ca7baddp-2"),
    _h("-0x1.7154748bef6c8p-1"),
    _h("0x1.71547652ab82bp0"),
)
_EXP2_TAB = (  # bits of 2**(i/32), less i << 47
    0x3FF0000000000000, 0x3FEFD9B0D3158574, 0x3FEFB5586CF9890F, 0x3FEF9301D0125B51,
    0x3FEF72B83C7D517B, 0x3FEF54873168B9AA, 0x3FEF387A6E756238, 0x3FEF1E9DF51FDEE1,
    0x3FEF06FE0A31B715, 0x3FEEF1A7373AA9CB, 0x3FEEDEA64C123422, 0x3FEECE086061892D,
    0x3FEEBFDAD5362A27, 0x3FEEB42B569D4F82, 0x3FEEAB07DD485429, 0x3FEEA47EB03A5585,
    0x3FEEA09E667F3BCD, 0x3FEE9F75E8EC5F74, 0x3FEEA11473EB0187, 0x3FEEA589994CCE13,
    0x3FEEACE5422AA0DB, 0x3FEEB737B0CDC5E5, 0x3FEEC49182A3F090, 0x3FEED503B23E255D,
    0x3FEEE89F995AD3AD, 0x3FEEFF76F2FB5E47, 0x3FEF199BDD85529C, 0x3FEF3720DCEF9069,
    0x3FEF5818DCFBA487, 0x3FEF7C97337B9B5F, 0x3FEFA4AFA2A490DA, 0x3FEFD0765B6E4540,
)  # fmt: skip
_EXP2_POLY = (_h("0x1.c6af84b912394p-5"), _h("0x1.ebfce50fac4f3p-3"), _h("0x1.62e42ff0c52d6p-1"))
_EXP2_SHIFT = 1.5 * 2.0**47  # adding it rounds x to a multiple of 1/32

_INVC = np.array([t[0] for t in _LOG2_TAB], dtype=np.float64)
_LOGC = np.array([t[1] for t in _LOG2_TAB], dtype=np.float64)
_EXP2_BITS = np.array(_EXP2_TAB, dtype=np.uint64)


def _exp2_scale_table(tab: np.ndarray) -> np.ndarray:
    """glibc's ``tab[ki % 32] + (ki << 47)`` (uint64, wrapping) for every ``ki`` whose k
    is in [-4096, 4096), indexed by ``ki & 8191``: ``ki << 47`` keeps only the low 17 bits
    of ki, which are those of k, so the 13 bits pick the whole sum. Every |y log2 x| below
    ``_YLOGX_LIMIT`` has its k in that range."""
    k = np.arange(8192, dtype=np.int64)
    k = np.where(k >= 4096, k - 8192, k)
    low17 = (k & ((1 << 17) - 1)).astype(np.uint64)
    return tab[k & 31] + (low17 << np.uint64(47))


_EXP2_SCALE = _exp2_scale_table(_EXP2_BITS)
_J = np.arange(8192)
_INVC13 = _INVC[_J & 15]
# k of glibc's log2: bits 23..31 of (ix - OFF) as a signed 9-bit number.
_Y0 = _LOGC[_J & 15] + np.where(_J >> 4 >= 256, (_J >> 4) - 512, _J >> 4).astype(np.float64)

# ---- where the replay is not trusted -----------------------------------------------------

# |y * log2(x)| at or above this goes to libm (glibc's own special branch starts at 126;
# below 125 every result is a normal float).
_YLOGX_LIMIT = 125.0
# A double result whose 29 bits below float32 precision are within this many double ulps
# of the rounding midpoint (2**28) goes to libm: a relative margin of about 2**-38, far
# wider than the few double ulps an FMA build can move the intermediate.
_MID_MARGIN = 1 << 14
_LOW29 = np.uint64((1 << 29) - 1)
_MID_LO = np.uint64((1 << 28) - _MID_MARGIN + 1)  # |low - 2**28| < margin, as one
_MID_SPAN = np.uint64(2 * _MID_MARGIN - 1)  # unsigned comparison: low - _MID_LO < span
# exp2's reduction leaves |r| <= 1/64; near 1/64 another build may pick the next table
# entry, whose polynomial error differs by more than the midpoint margin covers.
_R_EDGE = 1.0 / 64 - 2.0**-36

_SELF_CHECK_SIZE = 4096
_CHUNK = 1 << 16  # elements per pass: bounds the scratch memory, keeps it in cache
_lock = threading.Lock()
_checked: set[int] = set()  # bit patterns of the exponents whose self-check passed
_disabled = False  # a self-check failed: libm for everything from then on


def _checkint(y: np.float32) -> int:
    """glibc's ``checkint`` of a finite non-zero float: 0 not integer, 1 odd, 2 even."""
    iy = int(np.asarray(y, dtype=np.float32).view(np.uint32))
    e = (iy >> 23) & 0xFF
    if e < 0x7F:
        return 0
    if e > 0x7F + 23:
        return 2
    if iy & ((1 << (0x7F + 23 - e)) - 1):
        return 0
    return 1 if iy & (1 << (0x7F + 23 - e)) else 2


class _Work(threading.local):
    """Per-thread scratch buffers of up to ``_CHUNK`` elements, kept between calls:
    fresh temporaries of this size would cost page faults on every call."""

    def __init__(self) -> None:
        self.size = 0

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if n > self.size:
            self.size = min(max(n, 2 * self.size), _CHUNK)
            self.f = np.empty((5, self.size))
            self.u = np.empty((3, self.size), dtype=np.uint64)
            self.m = np.empty((2, self.size), dtype=bool)
            self.w = np.empty(self.size, dtype=np.uint32)
        return self.f[:, :n], self.u[:, :n], self.m[:, :n], self.w[:n]


_work = _Work()


def _replay(x: np.ndarray, y: np.float32, res: np.ndarray) -> np.ndarray:
    """glibc's double steps for a flat float32 ``x`` (at most ``_CHUNK`` elements) and a
    finite non-zero ``y``, written to the float32 ``res``.

    Returns the indices of the elements that must be taken from libm instead (their
    entries in ``res`` are meaningless).
    """
    n = x.size
    fb, ub, mb, wb = _work.get(n)
    a, b, c, d, e = fb
    ki, t, j = ub
    j = j.view(np.int64)
    unsure, m2 = mb
    u32 = wb
    ix = x.view(np.uint32)
    yf = float(y)

    # Positive normals take the main path directly; the rest (zeros, subnormals,
    # negatives, inf, NaN) is sorted out here.
    zero = bad = None
    if np.minimum.reduce(ix) < 0x00800000 or np.maximum.reduce(ix) >= 0x7F800000:
        special = (ix - np.uint32(0x00800000)) >= np.uint32(0x7F000000)
        zero_ok = yf > 0 and _checkint(y) != 1  # powf(+-0, y) is +0
        zero = (ix & np.uint32(0x7FFFFFFF)) == 0
        sub = (ix >= np.uint32(1)) & (ix < np.uint32(0x00800000))
        bad = special & ~sub
        if zero_ok:
            bad &= ~zero
        ix = ix.copy()
        # glibc normalises subnormals: scale by 2**23 (exact), lower the exponent field.
        scaled = (x[sub] * np.float32(2.0**23)).view(np.uint32) & np.uint32(0x7FFFFFFF)
        ix[sub] = scaled - np.uint32(23 << 23)
        ix[special & ~sub] = 0x3F800000  # placeholder input, result overwritten
        zero = zero if zero_ok else None

    # log2(x) = log2(z/c) + log2(c) + k, with log2(z/c) a polynomial in r = z/c - 1.
    # Bits 19..31 of ix - OFF pick both the table entry (low 4) and k (high 9, signed),
    # so one 8192-entry table holds log2(c) + k with glibc's own double addition.
    np.subtract(ix, np.uint32(_LOG2_OFF), out=u32)
    np.right_shift(u32, np.uint32(19), out=j)
    np.bitwise_and(u32, np.uint32(0x007FFFFF), out=u32)
    np.add(u32, np.uint32(_LOG2_OFF), out=u32)  # iz = ix - top
    np.copyto(a, u32.view(np.float32))  # z
    np.take(_INVC13, j, out=b, mode="wrap")
    np.multiply(a, b, out=a)
    a -= 1.0  # r
    np.take(_Y0, j, out=b, mode="wrap")  # y0 = log2(c) + k
    a0, a1, a2, a3, a4 = _LOG2_POLY
    np.square(a, out=c)  # r2
    np.multiply(a, a0, out=d)
    d += a1  # y = A0 r + A1
    np.multiply(a, a2, out=e)
    e += a3  # p = A2 r + A3
    a *= a4
    b += a  # q = A4 r + y0
    e *= c
    b += e  # q = p r2 + q
    np.square(c, out=c)  # r4
    d *= c
    d += b  # log2(x)
    d *= yf  # y log2(x)
    if abs(yf) * 150.0 >= _YLOGX_LIMIT:  # otherwise no positive float can reach it
        np.abs(d, out=a)
        np.greater_equal(a, _YLOGX_LIMIT, out=m2)
        bad = m2.copy() if bad is None else bad | m2

    # exp2(v) = 2**(k/32) * 2**r with |r| <= 1/64, 2**r a cubic in r.
    np.add(d, _EXP2_SHIFT, out=e)  # its low mantissa bits hold k
    np.bitwise_and(e.view(np.uint64), np.uint64(8191), out=ki)
    np.take(_EXP2_SCALE, ki.view(np.int64), out=t, mode="wrap")  # bits of 2**(k/32)
    e -= _EXP2_SHIFT
    np.subtract(d, e, out=e)  # r
    np.abs(e, out=b)
    np.greater(b, _R_EDGE, out=unsure)
    c0, c1, c2 = _EXP2_POLY
    np.multiply(e, c0, out=c)
    c += c1  # C0 r + C1
    np.square(e, out=b)  # r2
    e *= c2
    e += 1.0  # C2 r + 1
    c *= b
    e += c
    e *= t.view(np.float64)

    # Near a float32 rounding midpoint another build's last bits could round otherwise.
    np.bitwise_and(e.view(np.uint64), _LOW29, out=ki)
    ki -= _MID_LO
    np.less(ki, _MID_SPAN, out=m2)
    unsure |= m2
    if bad is not None:
        unsure |= bad
    np.copyto(res, e, casting="same_kind")  # the one rounding to float
    if zero is not None:
        res[zero] = 0.0
    return np.flatnonzero(unsure)


def _libm_each(x: np.ndarray, y: np.float32) -> np.ndarray:
    """libm ``powf`` one element at a time: :func:`reference.cnum.powf` without its
    per-call conversions (the values already are floats)."""
    fn = _libm_powf
    return np.fromiter(
        map(fn, x.tolist(), itertools.repeat(float(y))), dtype=np.float32, count=x.size
    )


def _self_check_sample() -> np.ndarray:
    """Positive finite floats over every binade (scattered mantissas), powers of two with
    their neighbours, and a few subnormals and ones."""
    # A Weyl sequence of the golden ratio's fraction, scattered over the bit patterns of
    # the positive finite floats: no numpy.random, whose import took 30 ms of a GPU start.
    k = np.arange(1, _SELF_CHECK_SIZE - 1023, dtype=np.uint64)
    with np.errstate(over="ignore"):
        spread = (k * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    bits = (spread % np.uint64(0x7F800000 - 1) + np.uint64(1)).astype(np.uint32)
    p2 = (np.arange(1, 255, dtype=np.uint32) << np.uint32(23)).repeat(3)
    p2 += np.tile(np.array([-1, 0, 1], dtype=np.int64), 254).astype(np.uint32)
    edge = np.array([1, 2, 0x7FFFFF, 0x3F800000, 0x3F7FFFFF, 0x7F7FFFFF], dtype=np.uint32)
    return np.concatenate([bits, p2, edge]).view(np.float32)


def _self_check(y: np.float32) -> bool:
    """Whether the replay equals libm on the sample wherever it claims to be sure."""
    x = _self_check_sample()
    res = np.empty_like(x)
    with np.errstate(all="ignore"):
        unsure = _replay(x, y, res)
    want = _libm_each(x, y)
    sure = np.ones(x.size, dtype=bool)
    sure[unsure] = False
    return bool(np.array_equal(res[sure].view(np.uint32), want[sure].view(np.uint32)))


def fast_path_enabled(y: float = ONE_THIRD_F) -> bool:
    """Whether :func:`powf` replays glibc in NumPy for the exponent ``y``.

    The first call for each exponent runs the self-check against libm. A failure turns
    the replay off for good (every later :func:`powf` call goes element by element
    through libm) and logs one warning on the ``admcuda`` logger.
    """
    global _disabled
    key = int(np.float32(y).view(np.uint32))
    with _lock:
        if _disabled:
            return False
        if key not in _checked:
            if not _self_check(np.float32(y)):
                _disabled = True
                _log.warning(
                    "the NumPy replay of glibc powf differs from this machine's libm; "
                    "using per-element libm powf calls from now on (exact, slower)"
                )
                return False
            _checked.add(key)
        return True


def powf(x: np.ndarray, y: float) -> np.ndarray:
    """libm ``powf(x, y)`` elementwise, bit for bit.

    Parameters
    ----------
    x : numpy.ndarray
        Bases, float32 (anything else is converted to float32 first, as
        :func:`reference.cnum.powf` converts its argument).
    y : float
        The exponent, rounded to float32.

    Returns
    -------
    numpy.ndarray
        float32 array of ``x``'s shape, equal bit for bit to libm's ``powf`` of each
        element (NaN payloads included).
    """
    x = np.ascontiguousarray(x, dtype=np.float32)
    y32 = np.float32(y)
    flat = x.reshape(-1)
    if not (np.isfinite(y32) and y32 != 0) or not fast_path_enabled(y32):
        return _libm_each(flat, y32).reshape(x.shape)
    out = np.empty(flat.size, dtype=np.float32)
    with np.errstate(all="ignore"):
        for at in range(0, flat.size, _CHUNK):
            part = flat[at : at + _CHUNK]
            res = out[at : at + _CHUNK]
            idx = _replay(part, y32, res)
            if idx.size:
                res[idx] = _libm_each(part[idx], y32)
    return out.reshape(x.shape)

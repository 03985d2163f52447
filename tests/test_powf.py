"""The vectorised powf against libm's, bit for bit (admcuda.backends.cuda.powf)."""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import logging

import numpy as np
import pytest
from admcuda.reference import cnum
from admcuda.reference.constants import ONE_THIRD_F

from admcuda.backends.cuda import powf as _powf

# The libm function cnum.powf wraps, called without its per-call conversions so that a
# million reference values take well under a second (test_raw_libm_is_cnum_powf shows
# the two agree).
_raw = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6").powf
_raw.restype = ctypes.c_float
_raw.argtypes = (ctypes.c_float, ctypes.c_float)


def libm(x: np.ndarray, y: float) -> np.ndarray:
    xs = np.asarray(x, dtype=np.float32).reshape(-1)
    out = map(_raw, xs.tolist(), itertools.repeat(float(np.float32(y))))
    return np.fromiter(out, dtype=np.float32, count=xs.size)


def cnum_each(x: np.ndarray, y: float) -> np.ndarray:
    return np.array([cnum.powf(v, y) for v in np.asarray(x, np.float32).ravel()], np.float32)


def assert_bits_equal(got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    g, w = got.view(np.uint32), want.view(np.uint32)
    bad = np.flatnonzero(g != w)
    if bad.size:
        diff = np.abs(got[bad].astype(np.float64) - want[bad].astype(np.float64))
        k = bad[0]
        pytest.fail(
            f"{bad.size} of {got.size} differ, max abs diff {np.nanmax(diff, initial=0.0)!r}; "
            f"first: powf({x.ravel()[k]!r}) = {got[k]!r}, libm {want[k]!r}"
        )


def edge_values() -> np.ndarray:
    """Zeros, subnormals, FLT_MIN/MAX, inf, NaN, negatives, and every power of two
    with its two neighbours."""
    bits = [
        0x00000000, 0x80000000, 0x00000001, 0x00000002, 0x007FFFFF, 0x00800000,
        0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
        0x7FBFFFFF, 0x3F800000, 0xBF800000, 0x80000001, 0xC0000000, 0x3EAAAAAB,
    ]  # fmt: skip
    p2 = np.arange(1, 255, dtype=np.int64) << 23
    near = (p2[:, None] + np.array([-1, 0, 1])).ravel()
    return np.concatenate([np.array(bits, dtype=np.int64), near]).astype(np.uint32)


def random_inputs(n: int, seed: int) -> np.ndarray:
    """Uniform bit patterns over the positive finite floats (so every binade, equally),
    a slice of uniform values in ADM's usual range, and a few specials."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(1, 0x7F800000, n, dtype=np.uint32)
    bits[:64] = rng.integers(0, 0xFFFFFFFF, 64, dtype=np.uint32, endpoint=True)
    k = n // 8
    usual = rng.random(k) * 10.0 ** rng.uniform(-6, 8, k)
    bits[64 : 64 + k] = usual.astype(np.float32).view(np.uint32)[: max(n - 64, 0)]
    return bits.view(np.float32)


def test_raw_libm_is_cnum_powf():
    x = np.concatenate([edge_values().view(np.float32), random_inputs(2000, 7)])
    for y in (ONE_THIRD_F, np.float32(2.5)):
        assert_bits_equal(libm(x, y), cnum_each(x, y), x)


def test_edges_match_cnum_powf():
    x = edge_values().view(np.float32)
    for y in (ONE_THIRD_F, np.float32(0.5), np.float32(-1.0 / 3.0), np.float32(3.0)):
        assert_bits_equal(_powf.powf(x, y), cnum_each(x, y), x)


def test_million_random_one_third():
    x = random_inputs(1_000_000, 20240601)
    assert_bits_equal(_powf.powf(x, ONE_THIRD_F), libm(x, ONE_THIRD_F), x)


@pytest.mark.parametrize("y", [0.5, 2.0, 3.0, -1.0 / 3.0, 1.7, -2.25, 1e-3, 100.0])
def test_other_exponents(y):
    x = np.concatenate([edge_values().view(np.float32), random_inputs(50_000, 11)])
    assert_bits_equal(_powf.powf(x, y), libm(x, y), x)


@pytest.mark.parametrize("y", [0.0, -0.0, np.inf, -np.inf, np.nan])
def test_special_exponents(y):
    x = edge_values().view(np.float32)
    assert_bits_equal(_powf.powf(x, y), cnum_each(x, y), x)


def test_shapes_and_dtypes():
    x = random_inputs(600, 3).reshape(20, 30)
    got = _powf.powf(x, ONE_THIRD_F)
    assert got.shape == (20, 30) and got.dtype == np.float32
    assert_bits_equal(got.ravel(), libm(x, ONE_THIRD_F), x)
    x64 = np.linspace(0.0, 1e6, 1001)  # rounded to float32 first, as cnum.powf does
    assert_bits_equal(_powf.powf(x64, ONE_THIRD_F), cnum_each(x64, ONE_THIRD_F), x64)
    assert _powf.powf(np.empty(0, np.float32), ONE_THIRD_F).shape == (0,)


def test_longer_than_one_chunk():
    x = random_inputs(2 * _powf._CHUNK + 123, 5)
    assert_bits_equal(_powf.powf(x, ONE_THIRD_F), libm(x, ONE_THIRD_F), x)


def test_margin_covers_other_last_bits(monkeypatch):
    """A libm build whose double intermediate has other last bits (FMA contraction) still
    gives libm's floats. Simulated by scaling exp2's table by about 1 + 2**-40: without the
    midpoint margin some results round the other way, with it none do."""
    x = random_inputs(400_000, 17)
    x = x[(x > 0) & np.isfinite(x)]
    want = libm(x, ONE_THIRD_F)
    monkeypatch.setattr(_powf, "_checked", {int(ONE_THIRD_F.view(np.uint32))})
    monkeypatch.setattr(_powf, "_EXP2_SCALE", _powf._EXP2_SCALE + np.uint64(1 << 12))
    assert_bits_equal(_powf.powf(x, ONE_THIRD_F), want, x)
    monkeypatch.setattr(_powf, "_MID_LO", np.uint64(1 << 28))
    monkeypatch.setattr(_powf, "_MID_SPAN", np.uint64(0))  # no margin
    assert (_powf.powf(x, ONE_THIRD_F).view(np.uint32) != want.view(np.uint32)).any()


def test_fallback_when_self_check_fails(monkeypatch, caplog):
    monkeypatch.setattr(_powf, "_checked", set())
    monkeypatch.setattr(_powf, "_disabled", False)
    monkeypatch.setattr(_powf, "_self_check", lambda y: False)

    def no_replay(*args, **kwargs):
        raise AssertionError("the NumPy replay ran after a failed self-check")

    monkeypatch.setattr(_powf, "_replay", no_replay)
    x = np.concatenate([edge_values().view(np.float32), random_inputs(20_000, 23)])
    with caplog.at_level(logging.WARNING, logger="admcuda"):
        first = _powf.powf(x, ONE_THIRD_F)
        second = _powf.powf(x, np.float32(0.5))
    assert not _powf.fast_path_enabled(ONE_THIRD_F)
    warnings = [r for r in caplog.records if r.name == "admcuda" and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert_bits_equal(first, libm(x, ONE_THIRD_F), x)
    assert_bits_equal(second, libm(x, 0.5), x)


def test_self_check_passes_here():
    """On this machine the replay agrees with libm; if this fails, every finish is slow
    (but still exact)."""
    assert _powf._self_check(ONE_THIRD_F)
    assert _powf.fast_path_enabled(ONE_THIRD_F)


def test_unsure_elements_are_rare():
    x = random_inputs(_powf._CHUNK + 64, 29)[64:]  # no specials
    res = np.empty_like(x)
    with np.errstate(all="ignore"):
        unsure = _powf._replay(x, ONE_THIRD_F, res)
    assert unsure.size < 50  # about 6e-5 of random inputs

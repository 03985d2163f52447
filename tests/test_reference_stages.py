"""Stage-level and property tests of the NumPy reference.

Per-scale goldens: libvmaf's debug outputs ``integer_adm_den_scaleK`` and
``integer_adm_num_scaleK`` are exactly the outputs of the CSF-denominator and
contrast-masking stages at scale K, so each stage is checked against them on its own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference import (
    Bands,
    cm,
    compute_adm,
    csf,
    csf_den,
    csf_factors,
    decouple,
    decouple_s123,
    dwt2,
    rfactors,
)
from admcuda.reference import constants as C
from admcuda.reference.cnum import u16_from_double
from admcuda.reference.dwt2 import dwt2_s123, src_indices
from conftest import NETFLIX, netflix_cases, plain_opts


def _first_pair():
    case = next((c for c in netflix_cases() if c["name"] == "src01_576x324_8bit"), None)
    if case is None:
        pytest.skip("../shared/netflix is absent")
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    return (
        luma_frames(NETFLIX / case["ref"], *args)[0],
        luma_frames(NETFLIX / case["dis"], *args)[0],
    )


def test_stages_match_libvmaf_per_scale(netflix_goldens):
    ref, dis = _first_pair()
    gold = netflix_goldens["src01_576x324_8bit"]["frames"][0]
    opts = plain_opts()
    rb, db = dwt2(ref, 8), dwt2(dis, 8)
    for scale in range(4):
        if scale:
            rb, db = (
                dwt2_s123(rb.a.astype(np.int32), scale),
                dwt2_s123(db.a.astype(np.int32), scale),
            )
        r, a = (decouple if scale == 0 else decouple_s123)(rb, db, opts.adm_enhn_gain_limit)
        assert float(csf_den(rb, scale, opts)) == gold[f"integer_adm_den_scale{scale}"]
        rf = rfactors(scale, opts)
        wa, fa = csf(a, scale, rf)
        assert (
            float(cm(r, wa, fa, scale, rf, opts.adm_noise_weight))
            == gold[f"integer_adm_num_scale{scale}"]
        )


def _naive_dwt0(src: np.ndarray, bitdepth: int) -> tuple[np.ndarray, ...]:
    """A literal per-sample transcription of libvmaf's scale-0 DWT, for tiny inputs."""
    h, w = src.shape
    iy, ix = src_indices(h), src_indices(w)
    vr, vs = (128, 8) if bitdepth == 8 else (1 << (bitdepth - 1), bitdepth)

    def wrap16(v: int) -> int:
        return (v + 32768) % 65536 - 32768

    out = {k: np.zeros((iy.shape[1], ix.shape[1]), np.int16) for k in "avhd"}
    for i in range(iy.shape[1]):
        lo, hi = [0] * w, [0] * w
        for j in range(w):
            s = [int(src[iy[k, i], j]) for k in range(4)]
            acc = sum(c * v for c, v in zip(C.DWT_LO, s, strict=False)) - C.DWT_LO_SUM * vr
            lo[j] = wrap16((acc + vr) >> vs)
            acc = sum(c * v for c, v in zip(C.DWT_HI, s, strict=False))
            hi[j] = wrap16((acc + vr) >> vs)
        for j in range(ix.shape[1]):
            for name, tmp, coef in (
                ("a", lo, C.DWT_LO),
                ("v", lo, C.DWT_HI),
                ("h", hi, C.DWT_LO),
                ("d", hi, C.DWT_HI),
            ):
                acc = sum(c * tmp[ix[k, j]] for k, c in enumerate(coef))
                out[name][i, j] = wrap16((acc + 32768) >> 16)
    return out["a"], out["v"], out["h"], out["d"]


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
@pytest.mark.parametrize("shape", [(17, 17), (18, 22), (21, 34)])
def test_dwt2_matches_scalar_transcription(bitdepth, shape):
    rng = np.random.default_rng(bitdepth * 100 + shape[1])
    dt = np.uint8 if bitdepth == 8 else np.uint16
    src = rng.integers(0, 1 << bitdepth, size=shape, dtype=np.int64).astype(dt)
    src[0, :3] = (1 << bitdepth) - 1  # extremes exercise the 16-bit wrap
    got = dwt2(src, bitdepth)
    for g, want in zip(got, _naive_dwt0(src, bitdepth), strict=False):
        np.testing.assert_array_equal(g, want)


def test_src_indices_mirror_like_libvmaf():
    np.testing.assert_array_equal(src_indices(9)[:, 0], [1, 0, 1, 2])
    np.testing.assert_array_equal(src_indices(9)[:, -1], [7, 8, 8, 7])  # 2n - i - 1
    np.testing.assert_array_equal(src_indices(10)[:, -1], [7, 8, 9, 9])
    assert src_indices(3)[0, 0] == -1  # libvmaf's tail loop rewrites output 0


def test_constant_frames_have_no_detail():
    flat = np.full((40, 48), 77, np.uint8)
    b = dwt2(flat, 8)
    for band in (b.v, b.h, b.d):
        assert not band.any()


def test_identical_frames_give_no_additive_impairment():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 256, size=(90, 160), dtype=np.int64).astype(np.uint8)
    out = compute_adm(y, y, 8, plain_opts())
    assert out["integer_aim"] == 0.0
    for k in range(4):
        num, den = out[f"integer_adm_num_scale{k}"], out[f"integer_adm_den_scale{k}"]
        assert abs(num - den) <= 1e-4 * den


@pytest.mark.parametrize("shape", [(16, 64), (64, 16), (8, 8), (16, 16)])
def test_frames_of_16_or_less_are_refused(shape):
    y = np.zeros(shape, np.uint8)
    with pytest.raises(ValueError, match="above 16"):
        compute_adm(y, y, 8, plain_opts())


def test_dtype_and_geometry_checks():
    y8 = np.zeros((32, 32), np.uint8)
    with pytest.raises(ValueError, match="uint16"):
        compute_adm(y8, y8, 10, plain_opts())
    with pytest.raises(ValueError, match="one size"):
        compute_adm(y8, np.zeros((32, 34), np.uint8), 8, plain_opts())
    with pytest.raises(ValueError, match="3.0 \\* 1080"):
        compute_adm(
            np.zeros((40, 40), np.uint8),
            np.zeros((40, 40), np.uint8),
            8,
            plain_opts(adm_norm_view_dist=2.0),
        )


def test_decouple_restores_reference_when_frames_agree():
    rng = np.random.default_rng(3)
    band = lambda: rng.integers(-3000, 3000, size=(20, 24)).astype(np.int16)  # noqa: E731
    ref = Bands(None, band(), band(), band())
    r, a = decouple(ref, ref, 100.0)
    for rb, ab, ob in zip((r.v, r.h, r.d), (a.v, a.h, a.d), (ref.v, ref.h, ref.d), strict=False):
        np.testing.assert_array_equal(rb, ob)
        assert not ab.any()


BARTEN_OPTIONS = [{}, {"adm_csf_scale": 1.5, "adm_csf_diag_scale": 0.8}]


@pytest.mark.parametrize("scale", range(4))
@pytest.mark.parametrize("options", BARTEN_OPTIONS, ids=["defaults", "scf1.5_scfd0.8"])
def test_barten_factors_wrap_like_gcc_x86_64(scale, options):
    """libvmaf casts each Barten factor times 2**q to uint16_t (scale 0, q = 21 for h/v and
    23 for d) or uint32_t (scales 1-3, q = 32). Every one overflows the type; GCC on x86-64
    truncates towards zero and keeps the low bits (aarch64 would saturate). The csf1
    goldens hold only with the wrap; here each factor is checked against the wrap done
    by hand, and against the saturated value."""
    opts = plain_opts(adm_csf_mode=C.CSF_MODE_BARTEN, **options)
    f_hv, f_d = (float(f) for f in csf_factors(scale, opts))
    bits, q = (16, (21, 21, 23)) if scale == 0 else (32, (32, 32, 32))
    raw = (f_hv * 2.0 ** q[0], f_hv * 2.0 ** q[1], f_d * 2.0 ** q[2])
    assert all(2.0**bits <= x < 2.0 ** (bits + 15) for x in raw), raw  # they overflow
    want = tuple(math.trunc(x) % 2**bits for x in raw)
    got = rfactors(scale, opts)
    assert got == want, (
        f"{got} != wrapped {want}, max abs diff {max(map(abs, np.subtract(got, want)))}"
    )
    assert all(g != 2**bits - 1 for g in got)


@pytest.mark.parametrize(
    ("x", "want"),
    [
        (0.0, 0),
        (65535.9, 65535),
        (65536.0, 0),
        (2538530.7, 2538530 % 65536),
        (-1.5, 0xFFFF),  # cvttsd2si gives -1: all 16 low bits set
        (2.0**31, 0),  # out of int32: 0x80000000, whose low 16 bits are 0
        (math.nan, 0),
    ],
)
def test_uint16_cast_is_gcc_x86_64(x, want):
    assert u16_from_double(x) == want


def test_default_geometry_uses_libvmaf_hardwired_rfactors():
    assert rfactors(0, plain_opts()) == C.RFACTOR0_DEFAULT

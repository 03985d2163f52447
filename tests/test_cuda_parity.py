"""The CUDA backend against the NumPy reference, stage by stage and end to end.

Each stage test feeds both implementations the reference's output of the stage before
and asks for identical integers, so a failure names the stage. End-to-end tests ask for
identical doubles (NaN equal to NaN) from the reference's ``compute_adm`` and from the
shared Netflix goldens (../shared/netflix, libvmaf 3.2.0 scalar C, see conftest.py).

Every test here needs CuPy and a CUDA device and is skipped without them.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import pytest
from _frames import luma_frames, same
from admcuda.reference import compute_adm
from admcuda.reference.adm import _csf_written, stages
from admcuda.reference.cm import cm_accumulators
from admcuda.reference.csf_den import den_accumulators
from admcuda.reference.dwt2 import Bands
from admcuda.reference.dwt2 import dwt2_s123 as ref_dwt2_s123
from conftest import NETFLIX, make_opts, netflix_cases

from admcuda.backends.cuda import (
    CudaAdm,
    cm,
    csf,
    csf_den,
    cuda_available,
    dwt2,
    dwt2_s123,
    finish_frame,
    launch,
    scale_geometries,
)

cp = pytest.importorskip("cupy")
if not cuda_available():
    pytest.skip("no CUDA device visible to CuPy", allow_module_level=True)

pytestmark = pytest.mark.cuda

SIZES = [
    (17, 17),
    (18, 22),
    (33, 37),
    (97, 55),
    (160, 90),
    (576, 324),
    (1919, 1079),
    (1920, 1080),
    (3840, 2160),
]  # (width, height)
SMALL = SIZES[:6]
FRAMES = 2  # frames per stage launch, so that grid.z indexing is exercised

STAGE_CASES = (
    [(w, h, 8, "random") for w, h in SIZES]
    + [(w, h, bd, "smooth") for w, h in SMALL for bd in (8, 10, 12, 16)]
    + [(w, h, bd, "extreme") for w, h in SMALL for bd in (8, 16)]
    + [(1920, 1080, 10, "smooth"), (1920, 1080, 16, "extreme")]
)

OPTION_SETS = [
    {},
    {"adm_csf_mode": "1"},
    {"adm_csf_mode": "1", "adm_csf_scale": "2.5", "adm_csf_diag_scale": "0.5"},
    {"adm_csf_mode": "2"},
    {"adm_csf_mode": "3"},
    {"adm_csf_mode": "3", "adm_ref_display_height": "720", "adm_norm_view_dist": "5"},
    {"adm_csf_mode": "2", "adm_norm_view_dist": "4"},  # not tabulated: libvmaf's -EINVAL factor
    {"adm_skip_aim": "true"},
    {"adm_skip_scale0": "true"},
    {"adm_skip_aim": "true", "adm_skip_scale0": "true"},
    {"adm_enhn_gain_limit": "1.0"},
    {"adm_enhn_gain_limit": "1.2"},
    {"adm_noise_weight": "0.5"},
    {"adm_norm_view_dist": "4.5", "adm_ref_display_height": "2160"},
    {"adm_csf_scale": "0.7", "adm_csf_diag_scale": "3"},
    {"adm_dlm_weight": "0.2", "adm_min_val": "0.9"},
]


def _opts_id(o: dict) -> str:
    return "-".join(f"{k.removeprefix('adm_')}={v}" for k, v in o.items()) or "default"


# ---- content ------------------------------------------------------------------------------


def content(kind: str, w: int, h: int, bitdepth: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A (reference, distorted) luma pair of ``kind``: random, smooth or extreme."""
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    dtype = np.uint8 if bitdepth == 8 else np.uint16
    if kind == "random":
        ref = rng.integers(0, top + 1, (h, w))
        dis = ref + rng.integers(-top // 8, top // 8 + 1, (h, w))
    elif kind == "smooth":
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        f = rng.uniform(0.005, 0.08, 4)
        img = (np.sin(x * f[0] + y * f[1]) + np.cos(x * f[2] - y * f[3]) * 0.5 + x / w) / 2.5
        ref = np.round((img * 0.8 + 0.5) * top + rng.normal(0, top / 200, (h, w)))
        # A blur plus mild noise and a gain: the sort of change a codec makes.
        k = np.array([1, 4, 6, 4, 1]) / 16.0
        blur = np.apply_along_axis(lambda r: np.convolve(r, k, "same"), 1, ref)
        blur = np.apply_along_axis(lambda c: np.convolve(c, k, "same"), 0, blur)
        dis = np.round(blur * 1.02 + rng.normal(0, top / 100, (h, w)))
    elif kind == "extreme":
        ref = rng.choice([0, top], (h, w))
        ref[: h // 3] = top
        ref[h // 3 : h // 2] = 0
        dis = rng.choice([0, top], (h, w))
        dis[:, : w // 4] = ref[:, : w // 4]
        dis[-h // 4 :] = top - ref[-h // 4 :]
    else:
        raise ValueError(kind)
    return np.clip(ref, 0, top).astype(dtype), np.clip(dis, 0, top).astype(dtype)


def batch(kind: str, w: int, h: int, bitdepth: int, n: int = FRAMES, seed: int = 0):
    pairs = [content(kind, w, h, bitdepth, seed * 1000 + k) for k in range(n)]
    return (
        np.ascontiguousarray(np.stack([p[0] for p in pairs])),
        np.ascontiguousarray(np.stack([p[1] for p in pairs])),
    )


# ---- the reference, stage by stage -------------------------------------------------------------


class Level(NamedTuple):
    """One scale of the reference's chain (reference.adm.stages), as the stage tests read it."""

    rb: Bands
    db: Bands
    m1: np.ndarray | None  # int16 row the reference's scale-3 DWT reads as row -1
    r: Bands | None
    a: Bands | None
    csf_a: tuple[Bands, Bands] | None  # (weighted, flt) of the additive part
    csf_r: tuple[Bands, Bands] | None  # (weighted, flt) of the restored part
    rf: tuple[int, int, int] | None


def reference_levels(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> list[Level]:
    out, m1 = [], None
    for st in stages(ref, dis, bitdepth, opts):
        if st.scale == 0 and st.r is not None:
            # What the reference's scale 3 reads as row -1 (reference.adm.stages).
            m1 = _csf_written(st.fa.d if opts.adm_skip_aim else st.wr.d)[-2]
        csf_a = None if st.wa is None else (st.wa, st.fa)
        csf_r = None if st.wr is None else (st.wr, st.fr)
        rf = None if st.rfactor is None else tuple(int(x) for x in st.rfactor)
        out.append(
            Level(st.ref, st.dis, m1 if st.scale == 3 else None, st.r, st.a, csf_a, csf_r, rf)
        )
    return out


@functools.lru_cache(maxsize=4)
def case_data(w: int, h: int, bitdepth: int, kind: str, opts_key: tuple = ()):
    """Inputs, per-frame reference levels and options of one stage case (cached: every
    stage test of a case reuses them)."""
    opts = make_opts(dict(opts_key))
    refs, diss = batch(kind, w, h, bitdepth)
    levels = [reference_levels(r, d, bitdepth, opts) for r, d in zip(refs, diss, strict=True)]
    return refs, diss, levels, opts


def stack_bands(bands: list[Bands], dtype) -> np.ndarray:
    """Frames of reference Bands -> the GPU layout (n, 4, hh, ww) in (a, v, h, d) order."""
    return np.stack([np.stack([b.a, b.v, b.h, b.d]) for b in bands]).astype(dtype)


def hvd(b: Bands) -> np.ndarray:
    return np.stack([b.h, b.v, b.d])


def upload(x: np.ndarray):
    return cp.asarray(np.ascontiguousarray(x))


def stage_params(case):
    w, h, bd, kind = case
    return pytest.param(
        case, id=f"{w}x{h}-{bd}bit-{kind}", marks=pytest.mark.xdist_group(f"{w}x{h}")
    )


STAGE_PARAMS = [stage_params(c) for c in STAGE_CASES]
OPTION_STAGE_PARAMS = [
    pytest.param(o, (w, h), id=f"{w}x{h}-{_opts_id(o)}")
    for o in OPTION_SETS
    for w, h in ((33, 37), (160, 90))
]


# ---- stage parity ------------------------------------------------------------------------------


def check_dwt2(refs, diss, levels, bitdepth, opts):
    skip0 = opts.adm_skip_scale0
    for frames, key in ((refs, "rb"), (diss, "db")):
        got = dwt2(upload(frames), bitdepth, lo_only=skip0).get()
        want = [getattr(lv[0], key) for lv in levels]
        np.testing.assert_array_equal(got[:, 0], np.stack([b.a for b in want]), err_msg="dwt2 a")
        if not skip0:
            np.testing.assert_array_equal(got, stack_bands(want, np.int16), err_msg="dwt2 bands")


def check_dwt2_s123(levels, opts):
    for scale in (1, 2, 3):
        prev_r = upload(np.stack([lv[scale - 1].rb.a for lv in levels]))
        prev_d = upload(np.stack([lv[scale - 1].db.a for lv in levels]))
        m1 = None
        if levels[0][scale].m1 is not None:
            m1 = upload(np.stack([lv[scale].m1 for lv in levels]))
        got_r = dwt2_s123(prev_r, scale, role="ref", m1=m1).get()
        got_d = dwt2_s123(prev_d, scale, role="dis", m1=m1, other=prev_r).get()
        want_r = stack_bands([lv[scale].rb for lv in levels], np.int32)
        want_d = stack_bands([lv[scale].db for lv in levels], np.int32)
        np.testing.assert_array_equal(got_r, want_r, err_msg=f"dwt2_s123 ref scale {scale}")
        np.testing.assert_array_equal(got_d, want_d, err_msg=f"dwt2_s123 dis scale {scale}")
        # Plain dwt2_s123: out-of-range taps read zeros.
        plain = dwt2_s123(prev_r, scale).get()
        want = stack_bands(
            [ref_dwt2_s123(lv[scale - 1].rb.a.astype(np.int32), scale) for lv in levels], np.int32
        )
        np.testing.assert_array_equal(plain, want, err_msg=f"dwt2_s123 plain scale {scale}")


def _scales(opts):
    return range(1, 4) if opts.adm_skip_scale0 else range(4)


def check_csf(refs, levels, opts):
    h, w = refs.shape[1:]
    geoms = scale_geometries(w, h, opts)
    do_aim = not opts.adm_skip_aim
    for scale in _scales(opts):
        g = geoms[scale]
        dt = g.band_dtype
        rb = upload(stack_bands([lv[scale].rb for lv in levels], dt))
        db = upload(stack_bands([lv[scale].db for lv in levels], dt))
        n, (hh, ww) = len(levels), g.shape
        flt = cp.full((n, 2, 3, hh, ww), 7, dtype=dt)
        wgt = cp.full((n, 2, 3, hh, ww), 7, dtype=dt)
        last_d = cp.full((n, ww), 7, dtype=np.int16) if scale == 0 else None
        csf(
            rb,
            db,
            g,
            opts.adm_enhn_gain_limit,
            flt=flt,
            weighted=wgt,
            last_d=last_d,
            do_aim=do_aim,
            region=(0, hh, 0, ww),
        )
        flt, wgt = flt.get(), wgt.get()
        sets = (("csf_a", 0), ("csf_r", 1)) if do_aim else (("csf_a", 0),)
        for key, k in sets:
            want_w = np.stack([hvd(getattr(lv[scale], key)[0]) for lv in levels])
            want_f = np.stack([hvd(getattr(lv[scale], key)[1]) for lv in levels])
            np.testing.assert_array_equal(
                wgt[:, k], want_w, err_msg=f"csf weighted {key} scale {scale}"
            )
            np.testing.assert_array_equal(flt[:, k], want_f, err_msg=f"csf flt {key} scale {scale}")
        if last_d is not None:
            src = [lv[0].csf_a[1].d if opts.adm_skip_aim else lv[0].csf_r[0].d for lv in levels]
            np.testing.assert_array_equal(
                last_d.get(), np.stack([b[-2] for b in src]), err_msg="csf last_d"
            )
        # The pipeline's region: exactly libvmaf's written area (reference.adm._csf_written).
        flt2 = cp.zeros((n, 2, 3, hh, ww), dtype=dt)
        csf(rb, db, g, opts.adm_enhn_gain_limit, flt=flt2, do_aim=do_aim)
        want = np.stack(
            [hvd(Bands(None, *(_csf_written(x) for x in lv[scale].csf_a[1][1:]))) for lv in levels]
        )
        np.testing.assert_array_equal(flt2.get()[:, 0], want, err_msg=f"csf region scale {scale}")


def check_csf_den(refs, levels, opts):
    h, w = refs.shape[1:]
    geoms = scale_geometries(w, h, opts)
    for scale in _scales(opts):
        g = geoms[scale]
        rb = upload(stack_bands([lv[scale].rb for lv in levels], g.band_dtype))
        acc = cp.zeros((len(levels), 9), dtype=np.int64)
        csf_den(rb, g, acc)
        got = acc.get().view(np.uint64)[:, 6:9]
        for f, lv in enumerate(levels):
            want = den_accumulators(lv[scale].rb, scale)
            assert [int(x) for x in got[f]] == list(want[:3]), f"csf_den scale {scale} frame {f}"
            assert g.den_exp == want[3]


def check_cm(refs, levels, opts):
    h, w = refs.shape[1:]
    geoms = scale_geometries(w, h, opts)
    do_aim = not opts.adm_skip_aim
    for scale in _scales(opts):
        g = geoms[scale]
        dt = g.band_dtype
        rb = upload(stack_bands([lv[scale].rb for lv in levels], dt))
        db = upload(stack_bands([lv[scale].db for lv in levels], dt))
        acc = cp.zeros((len(levels), 9), dtype=np.int64)
        cm(rb, db, g, opts.adm_enhn_gain_limit, acc, do_aim=do_aim, do_den=True)
        got = acc.get()
        for f, lv in enumerate(levels):
            L = lv[scale]
            den = den_accumulators(L.rb, scale)
            got_den = [int(x) for x in got[f, 6:9].view(np.uint64)]
            assert got_den == list(den[:3]), f"cm (fused csf_den) scale {scale} frame {f}"
            num = cm_accumulators(L.r, *L.csf_a, scale, L.rf)
            assert [int(x) for x in got[f, 0:3]] == list(num[:3]), f"cm num scale {scale} frame {f}"
            assert g.cm_exps == num[3]
            if do_aim:
                aim = cm_accumulators(L.a, *L.csf_r, scale, L.rf)
                assert [int(x) for x in got[f, 3:6]] == list(aim[:3]), (
                    f"cm aim scale {scale} frame {f}"
                )
            else:
                assert not got[f, 3:6].any(), "cm wrote AIM without do_aim"


@pytest.mark.parametrize("case", STAGE_PARAMS)
def test_dwt2_parity(case):
    refs, diss, levels, opts = case_data(*case)
    check_dwt2(refs, diss, levels, case[2], opts)


@pytest.mark.parametrize("bitdepth", [8, 10])
def test_dwt2_word_loads_and_their_fallback(bitdepth):
    """The scale-0 DWT reads aligned words of four samples where the width is a multiple
    of 4 and both arrays start on such a word, and sample by sample otherwise: the same
    bands from an aligned source, a source one sample off and into bands one sample off."""
    w, h, n = 64, 40, 3
    refs, _ = batch("random", w, h, bitdepth, n=n, seed=9)
    want = dwt2(upload(refs), bitdepth).get()
    levels = [reference_levels(r, r, bitdepth, make_opts({}))[0] for r in refs]
    np.testing.assert_array_equal(want, stack_bands([lv.rb for lv in levels], np.int16))
    flat = cp.zeros(refs.size + 1, dtype=refs.dtype)
    flat[1:] = cp.asarray(refs.ravel())
    off = flat[1:].reshape(refs.shape)
    assert off.data.ptr % 4 and not launch._dwt0_words(off, cp.empty((n, 4, 20, 32), np.int16))
    np.testing.assert_array_equal(dwt2(off, bitdepth).get(), want)
    bands = cp.zeros(want.size + 1, dtype=np.int16)
    out = bands[1:].reshape(want.shape)
    np.testing.assert_array_equal(dwt2(upload(refs), bitdepth, out=out).get(), want)


@pytest.mark.parametrize("case", STAGE_PARAMS)
def test_dwt2_s123_parity(case):
    _, _, levels, opts = case_data(*case)
    check_dwt2_s123(levels, opts)


@pytest.mark.parametrize("case", STAGE_PARAMS)
def test_csf_parity(case):
    refs, _, levels, opts = case_data(*case)
    check_csf(refs, levels, opts)


@pytest.mark.parametrize("case", STAGE_PARAMS)
def test_csf_den_parity(case):
    refs, _, levels, opts = case_data(*case)
    check_csf_den(refs, levels, opts)


@pytest.mark.parametrize("case", STAGE_PARAMS)
def test_cm_parity(case):
    refs, _, levels, opts = case_data(*case)
    check_cm(refs, levels, opts)


@pytest.mark.parametrize("rows", [1, 2, 3, 7, 64])
@pytest.mark.parametrize("size", [(33, 37), (576, 324)])
def test_cm_parity_any_work_split(rows, size, monkeypatch):
    """The masking pass gives the same sums however its rows are split into work items
    (each item restarts its rolling window of tap rows)."""
    monkeypatch.setattr(launch, "CM_ROWS_PER_ITEM", rows)
    refs, _, levels, opts = case_data(*size, 8, "random")
    check_cm(refs, levels, opts)


def _wide_bands(rng, shape, dtype, top: int) -> Bands:
    """Bands of any value the type holds, half of them at or next to its ends."""
    x = rng.integers(-top - 1, top + 1, (4, *shape))
    ends = rng.choice([-top - 1, -top, top - 1, top], (4, *shape))
    return Bands(*np.where(rng.random((4, *shape)) < 0.5, ends, x).astype(dtype))


@pytest.mark.parametrize(
    "options",
    [{}, {"adm_csf_mode": "1", "adm_csf_scale": "2.5"}, {"adm_enhn_gain_limit": "1.2"}],
)
@pytest.mark.parametrize("scale", [0, 1, 2, 3])
def test_cm_parity_on_wide_band_values(scale, options):
    """The masking pass on bands no DWT of a picture gives: every value of the band type,
    half of them at its ends, so that int16 |csf| / 30 wraps negative and the scale-0
    threshold leaves the kernel's int32 fast path (checked here on the reference's own
    threshold before the comparison)."""
    from admcuda.reference.cm import threshold
    from admcuda.reference.cnum import border
    from admcuda.reference.csf import csf as ref_csf
    from admcuda.reference.csf import rfactors
    from admcuda.reference.decouple import decouple, decouple_s123

    from admcuda.backends.cuda.geometry import scale_geometry

    opts = make_opts(options)
    hh, ww = 40, 70
    dt, top = (np.int16, 2**15 - 1) if scale == 0 else (np.int32, 2**26)
    g = scale_geometry(scale, (2 * hh, 2 * ww), opts)
    rng = np.random.default_rng(11 + scale)
    frames = []
    for _ in range(2):
        rb = _wide_bands(rng, (hh, ww), dt, top)
        other = _wide_bands(rng, (hh, ww), dt, top)
        db = Bands(*np.where(rng.random((4, hh, ww)) < 0.3, rb, other))
        frames.append((rb, db))
    acc = cp.zeros((2, 9), dtype=np.int64)
    cm(
        upload(stack_bands([f[0] for f in frames], dt)),
        upload(stack_bands([f[1] for f in frames], dt)),
        g,
        opts.adm_enhn_gain_limit,
        acc,
        do_aim=True,
        do_den=True,
    )
    got = acc.get()
    crop = tuple(slice(*border(n, tap=False)) for n in (hh, ww))
    negative = 0
    for f, (rb, db) in enumerate(frames):
        r, a = (decouple if scale == 0 else decouple_s123)(rb, db, opts.adm_enhn_gain_limit)
        rf = tuple(int(x) for x in rfactors(scale, opts))
        csf_a, csf_r = ref_csf(a, scale, rf), ref_csf(r, scale, rf)
        negative += int((threshold(*csf_a, scale, crop) < 0).sum())
        num = cm_accumulators(r, *csf_a, scale, rf)
        aim = cm_accumulators(a, *csf_r, scale, rf)
        den = den_accumulators(rb, scale)
        assert [int(x) for x in got[f, 0:3]] == list(num[:3]), f"num scale {scale} frame {f}"
        assert [int(x) for x in got[f, 3:6]] == list(aim[:3]), f"aim scale {scale} frame {f}"
        assert [int(x) for x in got[f, 6:9].view(np.uint64)] == list(den[:3]), f"den frame {f}"
    if scale == 0:
        assert negative > 0, "no negative threshold: the int32 fast path's exit is untested"


def test_reciprocal_equals_libvmaf_table():
    """gain_k's Q30 reciprocal equals libvmaf's table at every index (-32768..32768)."""
    from admcuda.reference import constants as C

    from admcuda.backends.cuda.launch import recip_table

    got = recip_table().get()
    want = C.DIV_LOOKUP.astype(np.int32)
    assert got.shape == want.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} entries differ, first at index {bad[:5]}"


def test_reciprocal_division_equals_libvmaf_table():
    """The kernels' other reciprocal, the exact division (ADM_RECIP_DIVIDE, measured slower
    and off by default), equals libvmaf's table at every index too."""
    from admcuda.reference import constants as C

    from admcuda.backends.cuda import kernels as K

    mod = cp.RawModule(
        code=K.source("adm_cm"),
        options=(*K._OPTIONS, "-DADM_RECIP_DIVIDE"),
        name_expressions=("adm_recip_table",),
    )
    fn = mod.get_function("adm_recip_table")
    lut = cp.zeros_like(K.div_lookup())  # the division must not read the table
    out = cp.empty(lut.shape, dtype=cp.int32)
    fn(((lut.size + 255) // 256,), (256,), (out, lut))
    bad = np.flatnonzero(out.get() != C.DIV_LOOKUP.astype(np.int32))
    assert bad.size == 0, f"{bad.size} entries differ, first at index {bad[:5]}"


@pytest.mark.parametrize(("options", "size"), OPTION_STAGE_PARAMS)
def test_stages_with_options(options, size):
    w, h = size
    refs, diss, levels, opts = case_data(w, h, 8, "smooth", tuple(sorted(options.items())))
    check_dwt2(refs, diss, levels, 8, opts)
    check_dwt2_s123(levels, opts)
    check_csf(refs, levels, opts)
    check_csf_den(refs, levels, opts)
    check_cm(refs, levels, opts)


# ---- end to end ---------------------------------------------------------------------------


def assert_same_scores(got: list[dict], want: list[dict], what: str) -> None:
    assert len(got) == len(want), what
    bad = [
        (f, k, g[k], v)
        for f, (g, w_) in enumerate(zip(got, want, strict=True))
        for k, v in w_.items()
        if not same(v, g[k])
    ]
    assert not bad, f"{what}: {len(bad)} values differ, first: {bad[:3]}"
    assert all(set(g) == set(w_) for g, w_ in zip(got, want, strict=True)), what


E2E_CASES = (
    [
        pytest.param(w, h, bd, o, id=f"{w}x{h}-{bd}bit-{_opts_id(o)}")
        for o in OPTION_SETS
        for w, h in ((17, 17), (33, 37), (160, 90), (576, 324))
        for bd in (8, 10)
    ]
    + [pytest.param(w, h, 8, {}, id=f"{w}x{h}-8bit-default") for w, h in SIZES[6:]]
    + [
        pytest.param(1920, 1080, 16, {}, id="1920x1080-16bit-default"),
        pytest.param(18, 22, 12, {"adm_skip_aim": "true"}, id="18x22-12bit-skip_aim"),
    ]
)


@pytest.mark.parametrize(("w", "h", "bitdepth", "options"), E2E_CASES)
def test_scores_match_reference(w, h, bitdepth, options):
    opts = make_opts(options)
    refs, diss = batch("smooth", w, h, bitdepth, n=2, seed=7)
    diss[1] = refs[1]  # identical pair: the numerator-free corner
    want = [compute_adm(r, d, bitdepth, opts) for r, d in zip(refs, diss, strict=True)]
    got = CudaAdm(w, h, bitdepth, opts, batch=2).scores(refs, diss)
    assert_same_scores(got, want, "scores")


@pytest.mark.parametrize("size", [(17, 17), (24, 40), (160, 90)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_multi_shares_reference(size):
    """scores_multi equals one scores() call per distorted input, NumPy or CuPy input."""
    w, h = size
    opts = make_opts({})
    refs, d1 = batch("random", w, h, 8, n=5, seed=3)
    _, d2 = batch("smooth", w, h, 8, n=5, seed=4)
    adm = CudaAdm(w, h, 8, opts, batch=2)
    multi = adm.scores_multi(refs, [d1, d2, d1])
    assert_same_scores(multi[0], adm.scores(refs, d1), "multi[0]")
    assert_same_scores(multi[1], adm.scores(refs, d2), "multi[1]")
    assert_same_scores(multi[2], multi[0], "multi[2]")
    on_gpu = adm.scores_multi(cp.asarray(refs), [cp.asarray(d1), cp.asarray(d2)])
    assert_same_scores(on_gpu[0], multi[0], "cupy input")
    assert_same_scores(on_gpu[1], multi[1], "cupy input")
    want = [compute_adm(r, d, 8, opts) for r, d in zip(refs, d2, strict=True)]
    assert_same_scores(multi[1], want, "multi vs reference")


@pytest.mark.parametrize(
    ("w", "h", "options"),
    [(1920, 1080, {}), (576, 324, {"adm_skip_scale0": "true"}), (97, 55, {"adm_skip_aim": "true"})],
    ids=["1920x1080", "576x324-skip_scale0", "97x55-skip_aim"],
)
def test_masking_streams_equal_one_stream(w, h, options):
    """The masking passes on streams of their own (beside the DWT and each other) give the
    integers of every stage on the compute stream, with several distorted inputs sharing
    the bands and two batches in flight at a time."""
    opts = make_opts(options)
    refs, d1 = batch("random", w, h, 8, n=10, seed=21)
    _, d2 = batch("smooth", w, h, 8, n=10, seed=22)
    adm = CudaAdm(w, h, 8, opts, batch=4)
    assert adm._masking is not None
    got = adm.integer_accumulators(refs, [d1, d2, d1])
    adm._masking = None
    want = adm.integer_accumulators(refs, [d1, d2, d1])
    assert np.array_equal(got, want), int(np.abs(got - want).max())


GRAPH_CASES = [
    pytest.param(576, 324, 8, {}, id="576x324"),
    pytest.param(40, 20, 8, {}, id="40x20-one-stream"),
    pytest.param(97, 55, 10, {"adm_skip_aim": "true"}, id="97x55-10bit-skip_aim"),
    pytest.param(160, 90, 12, {"adm_skip_scale0": "true", "egl": "1.2"}, id="160x90-12bit"),
    pytest.param(1920, 1080, 16, {}, id="1920x1080-16bit"),
]


@pytest.mark.parametrize(("w", "h", "bitdepth", "options"), GRAPH_CASES)
def test_graph_replay_equals_launches(w, h, bitdepth, options):
    """Batches replayed as captured graphs give the integers of launch-by-launch queueing:
    7 frames in batches of 3 (the last of 1), two distorted inputs, device and host
    input, inputs whose contents change in place, and one distorted input where the
    graphs were captured with two."""
    opts = make_opts(options)
    refs, d1 = batch("random", w, h, bitdepth, n=7, seed=31)
    _, d2 = batch("smooth", w, h, bitdepth, n=7, seed=32)
    ref_d, d1_d, d2_d = cp.asarray(refs), cp.asarray(d1), cp.asarray(d2)
    plain = CudaAdm(w, h, bitdepth, opts, batch=3, graphs=False)
    adm = CudaAdm(w, h, bitdepth, opts, batch=3)
    want = plain.integer_accumulators(ref_d, [d1_d, d2_d])
    for k in range(3):
        got = adm.integer_accumulators(ref_d, [d1_d, d2_d])
        assert np.array_equal(got, want), (k, int(np.abs(got - want).max()))
    # Keys (frames, input's accumulators, first input): 3 and 1 frames, two inputs.
    assert adm.graphs.captures == 4
    replays = adm.graphs.replays
    assert replays >= 6
    got = adm.integer_accumulators(refs, [d1, d2])  # host input: the same graphs
    assert np.array_equal(got, want), int(np.abs(got - want).max())
    assert adm.graphs.replays == replays + 6
    ref_d[...] = cp.asarray(d2)  # new contents at the same addresses
    d1_d[...] = cp.asarray(refs)
    want = plain.integer_accumulators(ref_d, [d1_d, d2_d])
    got = adm.integer_accumulators(ref_d, [d1_d, d2_d])
    assert np.array_equal(got, want), int(np.abs(got - want).max())
    want1 = plain.integer_accumulators(ref_d, [d1_d])
    got1 = adm.integer_accumulators(ref_d, [d1_d])
    assert np.array_equal(got1, want1), int(np.abs(got1 - want1).max())
    assert np.array_equal(want1[0], want[0])
    assert adm.graphs.captures == 4


def test_graph_scores_equal_reference():
    """End to end through the replayed graphs: the 18 outputs equal compute_adm's."""
    opts = make_opts({})
    refs, diss = batch("smooth", 160, 90, 8, n=4, seed=33)
    ref_d, dis_d = cp.asarray(refs), cp.asarray(diss)
    adm = CudaAdm(160, 90, 8, opts, batch=4)
    for _ in range(3):
        got = adm.scores(ref_d, dis_d)
    assert (adm.graphs.captures, adm.graphs.replays) == (1, 1)
    want = [compute_adm(r, d, 8, opts) for r, d in zip(refs, diss, strict=True)]
    assert_same_scores(got, want, "replayed graph")


def test_frames_17_to_32_high_keep_one_stream():
    """Where the scale-0 CSF output feeds the reference's scale-3 DWT, nothing forks."""
    assert CudaAdm(40, 20, 8, make_opts({}), batch=2)._masking is None
    assert CudaAdm(40, 33, 8, make_opts({}), batch=2)._masking is not None


@pytest.mark.parametrize(
    "options", [{}, {"adm_skip_aim": "true"}, {"adm_skip_scale0": "true", "egl": "1.2"}]
)
def test_batched_finish_equals_per_frame_finish(options):
    """The engine's batched host finish gives, frame by frame, what the reference's own
    finish (finish_frame) makes of the same GPU accumulators, over several batches."""
    opts = make_opts(options)
    refs, diss = batch("smooth", 97, 55, 10, n=9, seed=11)
    adm = CudaAdm(97, 55, 10, opts, batch=4)
    acc = adm.integer_accumulators(refs, [diss])[0]
    want = [finish_frame(a, adm.geoms, opts, 97, 55) for a in acc]
    assert_same_scores(adm.scores(refs, diss), want, "batched finish")


def test_refuses_bad_input():
    adm = CudaAdm(33, 37, 10, make_opts({}), batch=4)
    with pytest.raises(ValueError, match="uint16"):
        adm.scores(np.zeros((1, 37, 33), np.uint8), np.zeros((1, 37, 33), np.uint8))
    with pytest.raises(ValueError, match="37, 33"):
        adm.scores(np.zeros((1, 33, 37), np.uint16), np.zeros((1, 33, 37), np.uint16))
    with pytest.raises(ValueError, match="too small"):
        CudaAdm(16, 40, 8)
    with pytest.raises(TypeError, match="int16"):
        dwt2_s123(cp.zeros((1, 9, 9), np.uint8), 1)


CASES = netflix_cases()


@pytest.mark.parametrize("case", CASES or [None], ids=[c["name"] for c in CASES] or ["absent"])
def test_netflix_goldens_any_batch(case, netflix_goldens):
    if case is None:
        pytest.skip("../shared/netflix is absent")
    gold = netflix_goldens[case["name"]]["frames"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    refs = np.stack(luma_frames(NETFLIX / case["ref"], *args))
    diss = np.stack(luma_frames(NETFLIX / case["dis"], *args))
    opts = make_opts(case["options"])
    want = [{k: (float("nan") if v is None else v) for k, v in g.items()} for g in gold]
    results = {}
    for b in (1, 7, 64):
        results[b] = CudaAdm(case["w"], case["h"], case["bitdepth"], opts, batch=b).scores(
            refs, diss
        )
        assert_same_scores(results[b], want, f"batch {b} vs goldens")
    assert_same_scores(results[7], results[1], "batch 7 vs 1")
    assert_same_scores(results[64], results[1], "batch 64 vs 1")

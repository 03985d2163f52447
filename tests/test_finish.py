"""The batch float finish against finish_frame, frame by frame and bit for bit
(admcuda.backends.cuda.finish)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference import compute_adm, stages
from admcuda.reference.adm import ALL_FEATURES
from admcuda.reference.cm import cm_accumulators
from admcuda.reference.csf_den import den_accumulators

from admcuda.backends.cuda import finish_frame, scale_geometries
from admcuda.backends.cuda import kernels as K
from admcuda.backends.cuda import powf as _powf
from admcuda.backends.cuda.finish import BatchFinish, finish_batch
from admcuda.data import EXAMPLE, example_paths
from admcuda.options import AdmOptions

NUM, AIM, DEN = (K.ACC_OFFSETS[k] for k in ("NUM", "AIM", "DEN"))
I64_MIN, I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max

SIZES = [(17, 17), (20, 64), (176, 144), (1920, 1080), (3840, 2160)]
OPTION_SETS = [
    {},
    {"adm_skip_scale0": True},
    {"adm_skip_aim": True},
    {"adm_skip_scale0": True, "adm_skip_aim": True},
    {"adm_noise_weight": 0.0},
    {"adm_noise_weight": 1500.0},
    {"adm_csf_mode": 1},
    {"adm_csf_mode": 2},
    {"adm_csf_mode": 3},
    {"adm_csf_mode": 2, "adm_ref_display_height": 2160, "adm_norm_view_dist": 1.5},
    {"adm_csf_mode": 3, "adm_ref_display_height": 1000, "adm_norm_view_dist": 4.0},
    {"adm_norm_view_dist": 5.0, "adm_csf_scale": 2.0, "adm_csf_diag_scale": 0.5},
    {"adm_enhn_gain_limit": 1.2},
    {"adm_min_val": 0.9},
    {"adm_dlm_weight": 0.0},
    {"adm_dlm_weight": 1.0, "adm_min_val": 0.3},
]


def opts_id(o: dict) -> str:
    return ",".join(f"{k.removeprefix('adm_')}={v}" for k, v in o.items()) or "defaults"


def random_accumulators(n: int, seed: int) -> np.ndarray:
    """(n, 4, ACC_COUNT) int64 over a wide range: zeros, tiny, typical and huge values,
    int64 extremes and negatives in the masking slots, uint64 extremes in the
    denominator slots, plus whole frames of zeros and frames with zero denominators."""
    rng = np.random.default_rng(seed)
    shape = (n, 4, K.ACC_COUNT)
    mag = rng.integers(0, 64, shape)
    acc = np.floor(rng.random(shape) * np.ldexp(1.0, mag)).astype(np.float64)
    acc = np.minimum(acc, 2.0**62).astype(np.int64)
    kind = rng.integers(0, 10, shape)
    acc[kind == 0] = 0
    acc[kind == 1] = rng.integers(1, 16, (kind == 1).sum())
    acc[kind == 2] = rng.integers(2**20, 2**44, (kind == 2).sum())
    acc[kind == 3] = rng.choice([I64_MIN, I64_MAX, -1, I64_MAX - 1, 2**53 + 1], (kind == 3).sum())
    num_aim = np.zeros(K.ACC_COUNT, dtype=bool)
    num_aim[NUM : NUM + 3] = num_aim[AIM : AIM + 3] = True
    neg = (kind == 4) & num_aim
    acc[neg] = -acc[neg]
    den = acc[:, :, DEN : DEN + 3].view(np.uint64)
    ext = rng.integers(0, 8, den.shape)
    den[ext == 0] = rng.choice(
        np.array([0, 1, 2**63, 2**64 - 1, 2**63 - 1, 2**63 + 1, 2**53 + 1], dtype=np.uint64),
        (ext == 0).sum(),
    )
    den[ext == 1] = rng.integers(0, 2**64 - 1, (ext == 1).sum(), dtype=np.uint64, endpoint=True)
    acc[:, :, DEN : DEN + 3] = den.view(np.int64)
    acc[0] = 0
    acc[1, :, DEN : DEN + 3] = 0
    acc[2, :, NUM : NUM + 3] = 0
    acc[2, :, AIM : AIM + 3] = 0
    return acc


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


def assert_matches_frames(acc: np.ndarray, opts: AdmOptions, w: int, h: int) -> None:
    """finish_batch equals finish_frame on every output of every frame."""
    geoms = scale_geometries(w, h, opts)
    got = finish_batch(acc, geoms, opts, w, h)
    assert tuple(got) == ALL_FEATURES
    frames = [finish_frame(a, geoms, opts, w, h) for a in acc]
    problems = []
    for key in ALL_FEATURES:
        g = got[key]
        assert g.dtype == np.float64 and g.shape == (acc.shape[0],)
        want = np.array([f[key] for f in frames], dtype=np.float64)
        bad = ~same(g, want)
        if bad.any():
            with np.errstate(all="ignore"):
                diff = np.abs(g[bad] - want[bad])
            k = int(np.flatnonzero(bad)[0])
            problems.append(
                f"{key}: {bad.sum()} of {bad.size} frames differ, max abs diff "
                f"{np.nanmax(diff, initial=0.0)!r}; frame {k}: {g[k]!r} != {want[k]!r}"
            )
    assert not problems, f"{w}x{h} {opts_id(opts.non_default())}:\n" + "\n".join(problems)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("options", OPTION_SETS, ids=[opts_id(o) for o in OPTION_SETS])
def test_random_accumulators(size, options):
    w, h = size
    seed = zlib.crc32(f"{w}x{h} {opts_id(options)}".encode())
    acc = random_accumulators(40, seed)
    assert_matches_frames(acc, AdmOptions.from_mapping(options), w, h)


@pytest.mark.parametrize("size", [(176, 144), (1920, 1080)], ids=["176x144", "1920x1080"])
def test_typical_magnitudes(size):
    """Accumulators of the size real frames give (no special values at all)."""
    w, h = size
    rng = np.random.default_rng(w)
    acc = rng.random((200, 4, K.ACC_COUNT)) * 2.0 ** rng.integers(16, 48, (200, 4, 1))
    assert_matches_frames(acc.astype(np.int64), AdmOptions(), w, h)


@pytest.mark.parametrize(
    "options",
    [{}, {"adm_dlm_weight": 0.8}, {"adm_dlm_weight": 0.3, "adm_min_val": 0.95}],
    ids=opts_id,
)
def test_zero_denominator_frames(options):
    """No noise floor and zero accumulators: den == 0, so adm2 is 1, AIM NaN (libvmaf leaves
    it unset) and adm3 1.0, as libvmaf prints it (AIM taken as 0; testdata flat_* goldens)."""
    opts = AdmOptions(adm_noise_weight=0.0, **options)
    acc = random_accumulators(16, 5)
    acc[:8] = 0
    acc[8:12, :, DEN : DEN + 3] = 0
    assert_matches_frames(acc, opts, 176, 144)
    got = finish_batch(acc, scale_geometries(176, 144, opts), opts, 176, 144)
    assert (got["integer_adm2"][:12] == 1.0).all()
    assert np.isnan(got["integer_aim"][:12]).all()
    assert (got["integer_adm_den"][:12] == 0.0).all()
    adm3 = got["integer_adm3"][:12]
    assert (adm3 == 1.0).all(), f"adm3 {adm3}, max abs diff from 1.0 {np.abs(adm3 - 1).max()!r}"
    assert np.isfinite(got["integer_adm3"]).all()


def reference_accumulators(ref: np.ndarray, dis: np.ndarray, opts: AdmOptions) -> np.ndarray:
    """One frame's (4, ACC_COUNT) accumulators from the reference's integer stages, laid
    out as the GPU returns them (slots of a skipped scale or of skipped AIM stay zero)."""
    h, w = ref.shape
    geoms = scale_geometries(w, h, opts)
    acc = np.zeros((4, K.ACC_COUNT), dtype=np.int64)
    for st in stages(ref, dis, 8, opts):
        s, g = st.scale, geoms[st.scale]
        if st.r is None:
            continue
        *den, den_exp = den_accumulators(st.ref, s)
        assert den_exp == g.den_exp
        acc[s, DEN : DEN + 3] = np.array(den, dtype=np.uint64).view(np.int64)
        *num, exps = cm_accumulators(st.r, st.wa, st.fa, s, st.rfactor)
        assert tuple(exps) == tuple(g.cm_exps)
        acc[s, NUM : NUM + 3] = num
        if st.wr is not None:
            *aim, _ = cm_accumulators(st.a, st.wr, st.fr, s, st.rfactor)
            acc[s, AIM : AIM + 3] = aim
    return acc


def synthetic_pairs(w: int, h: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Smooth random pictures with a few distortions (noise, blur, none, contrast)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(128, 40, (h // 4 + 2, w // 4 + 2))
    img = np.kron(base, np.ones((4, 4)))[:h, :w]
    img = (img + rng.normal(0, 6, (h, w))).clip(0, 255)
    ref = img.astype(np.uint8)
    blur = (img + np.roll(img, 1, 0) + np.roll(img, 1, 1) + np.roll(img, (1, 1), (0, 1))) / 4
    return [
        (ref, (img + rng.normal(0, 8, (h, w))).clip(0, 255).astype(np.uint8)),
        (ref, blur.astype(np.uint8)),
        (ref, ref.copy()),
        (ref, ((img - 128) * 1.3 + 128).clip(0, 255).astype(np.uint8)),
    ]


def example_pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    args = (EXAMPLE.width, EXAMPLE.height, EXAMPLE.pixel_format, EXAMPLE.bitdepth)
    with example_paths() as (ref, dis):
        return list(zip(luma_frames(ref, *args), luma_frames(dis, *args), strict=True))


REAL_OPTIONS = [{}, {"adm_skip_scale0": True, "adm_enhn_gain_limit": 1.2}, {"adm_csf_mode": 2}]


@pytest.mark.parametrize("options", REAL_OPTIONS, ids=[opts_id(o) for o in REAL_OPTIONS])
def test_accumulators_of_real_frames(options):
    """Accumulators from the reference's integer stages on real and synthetic pairs:
    the batch finish equals finish_frame and the reference's own compute_adm."""
    opts = AdmOptions.from_mapping(options)
    sets = [example_pairs(), synthetic_pairs(40, 36, 1), synthetic_pairs(20, 64, 2)]
    if not options:
        sets.append(synthetic_pairs(17, 17, 3))
    for pairs in sets:
        h, w = pairs[0][0].shape
        acc = np.stack([reference_accumulators(r, d, opts) for r, d in pairs])
        assert_matches_frames(acc, opts, w, h)
        got = finish_batch(acc, scale_geometries(w, h, opts), opts, w, h)
        for i, (r, d) in enumerate(pairs):
            want = compute_adm(r, d, 8, opts)
            bad = [k for k in ALL_FEATURES if not same(got[k][i], np.float64(want[k]))]
            assert not bad, f"{w}x{h} pair {i}: {bad} differ from compute_adm"


@pytest.mark.parametrize("size", [(1280, 720), (3840, 2160)], ids=["1280x720", "3840x2160"])
def test_near_zero_limit_scales_with_the_frame(size):
    """Noise floors alone (zero accumulators, a tiny adm_noise_weight) put num and den on
    either side of the near-zero limit, which scales with the frame's area: the batch
    finish keeps and zeroes them as finish_frame does for that frame size."""
    w, h = size
    acc = np.zeros((1, 4, K.ACC_COUNT), np.int64)
    unit = AdmOptions.from_mapping({"adm_noise_weight": 1.0})
    den_at_unit = finish_frame(acc[0], scale_geometries(w, h, unit), unit, w, h)["integer_adm_den"]
    limit = 1e-10 * w * h / (1920 * 1080)
    dens = []
    for factor in np.geomspace(0.25, 4.0, 33):  # den grows as the cube root of the weight
        opts = AdmOptions.from_mapping(
            {"adm_noise_weight": float((factor * limit / den_at_unit) ** 3)}
        )
        assert_matches_frames(acc, opts, w, h)
        dens.append(
            finish_batch(acc, scale_geometries(w, h, opts), opts, w, h)["integer_adm_den"][0]
        )
    assert 0.0 in dens and min(d for d in dens if d) < 2 * limit  # both sides were reached


def test_batch_shapes_and_dtypes():
    opts = AdmOptions()
    geoms = scale_geometries(176, 144, opts)
    fin = BatchFinish(geoms, opts, 176, 144)
    acc = random_accumulators(7, 9)
    full = fin(acc)
    for n in (0, 1, 3):
        part = fin(acc[:n])
        for key in ALL_FEATURES:
            assert part[key].shape == (n,)
            assert same(part[key], full[key][:n]).all()
    as_u64 = fin(acc.view(np.uint64))
    for key in ALL_FEATURES:
        assert same(as_u64[key], full[key]).all()
        assert full[key].flags.c_contiguous
    with pytest.raises(TypeError):
        fin(acc.astype(np.float64))
    with pytest.raises(ValueError):
        fin(acc[:, :3])


def test_powf_self_check_runs_when_the_finish_is_made(monkeypatch):
    """The replay's self-check against libm runs in BatchFinish's constructor, before a
    pipeline's reading threads start, not in the first batch."""
    monkeypatch.setattr(_powf, "_checked", set())
    ran = []
    real = _powf._self_check
    monkeypatch.setattr(_powf, "_self_check", lambda y: ran.append(float(y)) or real(y))
    opts = AdmOptions()
    fin = BatchFinish(scale_geometries(176, 144, opts), opts, 176, 144)
    assert len(ran) == 1
    fin(random_accumulators(3, 4))
    assert len(ran) == 1


def test_exact_without_the_replay(monkeypatch):
    """With the NumPy powf switched off (a failed self-check) results stay exact."""
    monkeypatch.setattr(_powf, "_disabled", True)
    assert not _powf.fast_path_enabled()
    assert_matches_frames(random_accumulators(12, 13), AdmOptions(), 1920, 1080)


def test_reciprocal_equals_division():
    """Every divisor of real geometries is a power of two or inf, so the finish multiplies
    by reciprocals; the plain division it would fall back to gives the same."""
    opts = AdmOptions()
    acc = random_accumulators(40, 17)
    for w, h in SIZES:
        fin = BatchFinish(scale_geometries(w, h, opts), opts, w, h)
        assert fin._exact_recip
        fast = fin(acc)
        fin._exact_recip = False
        slow = fin(acc)
        for key in ALL_FEATURES:
            assert same(fast[key], slow[key]).all(), (w, h, key)

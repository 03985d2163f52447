"""The compiled (Numba) ADM engine, admcuda.compiled.adm, against libvmaf's goldens and
the NumPy reference, bit for bit.

- every case of testdata/goldens.json (libvmaf 3.2.0, Netflix/vmaf f85a8536, scalar C
  path; provenance in that file and in tests/test_reference_testdata.py) through the
  engine's accumulators and the GPU path's batch finish, compared with ``==`` (NaN where
  the golden is null and lists the field in ``nan_fields``; ``unstable_fields`` skipped);
- the engine's integer accumulators equal the reference's cm_accumulators and
  den_accumulators per scale, laid out as the CUDA engine returns them, on structured
  random content: sizes from 17x17 (the 17..32-high frames whose scale-3 DWT reads the
  scale-0 CSF row included), bit depths 8/10/12/16, every option that changes an integer;
- one frame on several threads, a stack with frames across threads and one thread give
  the same integers.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from _frames import luma_frames  # noqa: E402
from admcuda.reference import compute_adm as reference_compute_adm  # noqa: E402
from admcuda.reference import stages  # noqa: E402
from admcuda.reference.cm import cm_accumulators  # noqa: E402
from admcuda.reference.csf_den import den_accumulators  # noqa: E402
from admcuda.reference.decouple import decouple, decouple_s123  # noqa: E402
from admcuda.reference.dwt2 import Bands  # noqa: E402
from conftest import TESTDATA  # noqa: E402

from admcuda.backends.cuda import kernels as K  # noqa: E402
from admcuda.compiled import adm as engine  # noqa: E402
from admcuda.options import AdmOptions  # noqa: E402

sys.path.insert(0, str(TESTDATA))
from generate import generate  # noqa: E402

GOLDENS = json.loads((TESTDATA / "goldens.json").read_text())["cases"]
NUM, AIM, DEN = (K.ACC_OFFSETS[k] for k in ("NUM", "AIM", "DEN"))


def reference_accumulators(ref: np.ndarray, dis: np.ndarray, bitdepth: int, opts) -> np.ndarray:
    """One frame's (4, ACC_COUNT) accumulators from the reference's integer stages, laid
    out as the CUDA engine returns them (a skipped scale's or skipped AIM's slots zero)."""
    acc = np.zeros((4, K.ACC_COUNT), dtype=np.int64)
    for st in stages(ref, dis, bitdepth, opts):
        s = st.scale
        if st.r is None:
            continue
        *den, _ = den_accumulators(st.ref, s)
        acc[s, DEN : DEN + 3] = np.array(den, dtype=np.uint64).view(np.int64)
        *num, _ = cm_accumulators(st.r, st.wa, st.fa, s, st.rfactor)
        acc[s, NUM : NUM + 3] = num
        if st.wr is not None:
            *aim, _ = cm_accumulators(st.a, st.wr, st.fr, s, st.rfactor)
            acc[s, AIM : AIM + 3] = aim
    return acc


# --- libvmaf's goldens -----------------------------------------------------------------


@pytest.fixture(scope="module")
def pair_paths():
    committed = [n for n, c in GOLDENS.items() if c["case"]["committed"]]
    paths = generate(str(TESTDATA / "pairs"), committed)
    big = [n for n, c in GOLDENS.items() if not c["case"]["committed"]]
    paths.update(generate(str(TESTDATA / "cache"), big))
    return paths


def _differences(entry: dict, got: dict) -> list[tuple]:
    """(frame, name, ours, libvmaf) of every compared value that is not equal."""
    unstable, nans = set(entry["unstable_fields"]), set(entry["nan_fields"])
    bad = []
    for n, gold in enumerate(entry["frames"]):
        for k, v in gold.items():
            if k in unstable:
                continue
            ours = float(got[k][n])
            ok = (k in nans and ours != ours) if v is None else ours == v
            if not ok:
                bad.append((n, k, ours, v))
    return bad


@pytest.mark.parametrize("name", list(GOLDENS))
def test_golden(name, pair_paths):
    entry = GOLDENS[name]
    case = entry["case"]
    args = (case["w"], case["h"], case["fmt"], case["bitdepth"])
    ref_path, dis_path = pair_paths[name]
    refs, diss = luma_frames(ref_path, *args), luma_frames(dis_path, *args)
    assert len(refs) == len(entry["frames"])
    opts = AdmOptions.from_mapping(case["options"])
    got = engine.compute_adm_batch(np.stack(refs), np.stack(diss), case["bitdepth"], opts)
    bad = _differences(entry, got)
    assert not bad, f"{len(bad)} values differ from libvmaf; (frame, name, ours, gold): {bad[:4]}"


# --- accumulators against the reference --------------------------------------------------


def structured_pair(w: int, h: int, bitdepth: int, seed: int, kind: str):
    """A reference with edges, texture and flat areas, and a distorted version of it."""
    rng = np.random.default_rng(seed)
    top = (1 << bitdepth) - 1
    dt = np.uint8 if bitdepth == 8 else np.uint16
    if kind == "extreme":  # full-swing binary noise against its inverse or a shifted copy
        ref = rng.integers(0, 2, (h, w)) * top
        dis = np.where(rng.random((h, w)) < 0.5, top - ref, np.roll(ref, 1, 1))
        return ref.astype(dt), dis.astype(dt)
    yy, xx = np.mgrid[0:h, 0:w]
    base = rng.normal(0.5, 0.2, (h // 4 + 2, w // 4 + 2))
    img = np.kron(base, np.ones((4, 4)))[:h, :w] + 0.3 * ((xx // 7 + yy // 5) % 2)
    img += rng.normal(0, 0.03, (h, w)) + 0.2 * np.sin(xx / 3.0) * (yy > h // 2)
    ref = np.clip(img / 1.6, 0, 1) * top
    if kind == "noise":
        dis = ref + rng.normal(0, 0.05 * top, (h, w))
    elif kind == "blur":
        dis = (ref + np.roll(ref, 1, 0) + np.roll(ref, 1, 1) + np.roll(ref, (1, 1), (0, 1))) / 4
    else:  # "sharpen": enhancement, where the gain limit applies
        dis = ref + 1.5 * (ref - (np.roll(ref, 1, 0) + np.roll(ref, -1, 0)) / 2)
    return ref.astype(dt), np.clip(dis, 0, top).astype(dt)


OPTION_SETS = [
    {},
    {"adm_skip_scale0": True},
    {"adm_skip_aim": True},
    {"adm_skip_scale0": True, "adm_skip_aim": True},
    {"adm_enhn_gain_limit": 1.0},
    {"adm_enhn_gain_limit": 1.2, "adm_noise_weight": 0.0},
    {"adm_csf_mode": 1},
    {"adm_csf_mode": 1, "adm_csf_scale": 1.5, "adm_csf_diag_scale": 0.8},
    {"adm_csf_mode": 2, "adm_ref_display_height": 2160, "adm_norm_view_dist": 1.5},
    {"adm_csf_mode": 3, "adm_norm_view_dist": 5.0},
    {"adm_norm_view_dist": 5.1234567, "adm_ref_display_height": 720},
]
# (w, h): the smallest frame, 17..32 high (scale 3's DWT reads row -1), 17..32 wide
# (column -1), odd sizes, and sizes whose crops start at row and column 0.
SIZES = [(17, 17), (18, 22), (40, 31), (20, 64), (33, 37), (97, 55), (64, 48)]


def _opts_id(o: dict) -> str:
    return ",".join(f"{k.removeprefix('adm_')}={v}" for k, v in o.items()) or "defaults"


@pytest.mark.parametrize("options", OPTION_SETS, ids=[_opts_id(o) for o in OPTION_SETS])
def test_accumulators_equal_reference(options):
    opts = AdmOptions.from_mapping(options)
    for k, (w, h) in enumerate(SIZES):
        bitdepth = (8, 10, 12, 16)[k % 4]
        kind = ("noise", "blur", "sharpen", "extreme")[(k + len(options)) % 4]
        ref, dis = structured_pair(w, h, bitdepth, seed=k, kind=kind)
        want = reference_accumulators(ref, dis, bitdepth, opts)
        got = engine.adm_accumulators(ref, dis, bitdepth, opts)
        assert got.dtype == np.int64 and got.shape == want.shape
        bad = np.argwhere(got != want)
        assert not bad.size, f"{w}x{h} {bitdepth}-bit {kind}: (scale, slot) differ: {bad.tolist()}"


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
def test_every_kind_and_depth(bitdepth):
    """Each content kind at each bit depth, a 17..32-high frame and a larger one."""
    opts = AdmOptions()
    for k, kind in enumerate(("noise", "blur", "sharpen", "extreme")):
        for w, h in ((37, 19), (130, 70)):
            ref, dis = structured_pair(w, h, bitdepth, seed=100 + k, kind=kind)
            want = reference_accumulators(ref, dis, bitdepth, opts)
            got = engine.adm_accumulators(ref, dis, bitdepth, opts)
            assert (got == want).all(), f"{w}x{h} {kind}: {np.argwhere(got != want).tolist()}"


def test_compute_adm_equals_reference():
    opts = AdmOptions.from_mapping({"adm_skip_aim": True, "debug": True})
    for w, h, bd in ((17, 17, 8), (45, 30, 10), (96, 64, 16)):
        ref, dis = structured_pair(w, h, bd, seed=w, kind="noise")
        got = engine.compute_adm(ref, dis, bd, opts)
        want = reference_compute_adm(ref, dis, bd, opts)
        assert got.keys() == want.keys()
        bad = [k for k in want if not (got[k] == want[k] or np.isnan([got[k], want[k]]).all())]
        assert not bad, bad


def test_threads_and_batches_agree():
    """One frame across threads, frames across threads and one thread: same integers."""
    numba = pytest.importorskip("numba")
    opts = AdmOptions()
    for w, h in ((64, 48), (33, 20)):
        pairs = [structured_pair(w, h, 8, seed=s, kind=("noise", "blur")[s % 2]) for s in range(5)]
        refs, diss = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
        want = np.stack([reference_accumulators(r, d, 8, opts) for r, d in pairs])
        assert (engine.adm_accumulators_batch(refs, diss, 8, opts) == want).all()
        for f in range(len(pairs)):
            assert (engine.adm_accumulators(refs[f], diss[f], 8, opts) == want[f]).all()
        threads = numba.get_num_threads()
        try:
            numba.set_num_threads(1)
            assert (engine.adm_accumulators_batch(refs, diss, 8, opts) == want).all()
        finally:
            numba.set_num_threads(threads)


@pytest.mark.parametrize(
    ("w", "h", "bitdepth", "options"),
    [
        (24, 48, 8, {}),  # scale 3 four wide: the distorted's column -1 reads the reference's
        (31, 64, 10, {"adm_enhn_gain_limit": "1.2"}),
        (65, 41, 8, {"adm_skip_aim": "true"}),
        (96, 40, 12, {"adm_skip_scale0": "true"}),
        (40, 30, 8, {}),  # 17..32 high: each pair's own levels
    ],
)
def test_a_ladder_equals_each_pair(w, h, bitdepth, options):
    """The reference's levels computed once for several distorted inputs: the integers
    of each pair computed alone, and the reference's."""
    opts = AdmOptions.from_mapping(options)
    pairs = [structured_pair(w, h, bitdepth, seed=s, kind=("noise", "blur")[s % 2])
             for s in range(3)]  # fmt: skip
    refs = np.stack([pairs[0][0]] * 3)
    rungs = [np.stack([p[1] for p in pairs[k:] + pairs[:k]]) for k in range(3)]
    got = engine.adm_accumulators_ladder(refs, rungs, bitdepth, opts)
    for rung, acc in zip(rungs, got, strict=True):
        assert (acc == engine.adm_accumulators_batch(refs, rung, bitdepth, opts)).all()
        want = [reference_accumulators(refs[f], rung[f], bitdepth, opts) for f in range(3)]
        assert (acc == np.stack(want)).all()


@pytest.mark.parametrize("dtype", [np.int16, np.int32])
@pytest.mark.parametrize("egl", [1.0, 1.2, 100.0])
def test_decouple_parity(dtype, egl):
    """The decouple of one row against reference.decouple (int16, scale 0) and
    decouple_s123 (int32), on the values where its rounding and wrapping bite: both
    extremes of the type, powers of two around the reciprocal table's 15 bits, and
    distorted values near a multiple of the reference's (the angle test and the gain
    limit)."""
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    special = [info.min, info.max, 0, 1, -1, 32767, -32768, 32768, 65535, -65536, 1 << 30]
    special = np.array([v for v in special if info.min <= v <= info.max], np.int64)
    n = 4096
    o = {b: rng.integers(info.min, info.max, n, endpoint=True) for b in "hvd"}
    t = {b: rng.integers(info.min, info.max, n, endpoint=True) for b in "hvd"}
    for b in "hvd":
        o[b][: special.size] = special
        t[b][special.size : 2 * special.size] = special
        near = slice(n // 2, n)
        t[b][near] = np.clip(o[b][near] * rng.uniform(0.5, 1.6, n - n // 2), info.min, info.max)
        t[b][n - 64 :] = o[b][n - 64 :]
    o = {b: v.astype(dtype) for b, v in o.items()}
    t = {b: v.astype(dtype) for b, v in t.items()}
    ref_b = Bands(None, o["v"][None], o["h"][None], o["d"][None])
    dis_b = Bands(None, t["v"][None], t["h"][None], t["d"][None])
    r_want, a_want = (decouple if dtype == np.int16 else decouple_s123)(ref_b, dis_b, egl)
    flag = np.empty(n, np.bool_)
    engine._angle(o["h"], o["v"], t["h"], t["v"], flag)
    kernel = engine._decouple0 if dtype == np.int16 else engine._decouple123
    for k, b in ((1, "v"), (2, "h"), (3, "d")):
        r, a = np.empty(n, np.int32), np.empty(n, np.int32)
        kernel(o[b], t[b], flag, r, a, egl)
        np.testing.assert_array_equal(r, r_want[k][0], err_msg=f"restored {b}")
        np.testing.assert_array_equal(a, a_want[k][0], err_msg=f"additive {b}")


def test_refuses_what_the_reference_refuses():
    ok = np.zeros((20, 20), np.uint8)
    with pytest.raises(ValueError, match="too small"):
        engine.adm_accumulators(ok[:16], ok[:16], 8)
    with pytest.raises(ValueError, match="uint16"):
        engine.adm_accumulators(ok, ok, 10)
    with pytest.raises(ValueError, match="stacks"):
        engine.adm_accumulators_batch(ok, ok, 8)

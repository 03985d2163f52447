"""libvmaf's ``ciede``: the reference (``admcuda.reference.ciede``, one pixel at a time)
and the compiled kernel (``admcuda.compiled.ciede`` through ``admcuda.vmaf.ciede``)
against libvmaf 3.2.0's scalar C.

Goldens: ``testdata/ciede_goldens.json`` (``testdata/make_ciede_goldens.py``, libvmaf
3.2.0 f85a8536, scalar path, 2026-12-07): every frame's ``ciede2000`` at full precision
from libvmaf's C API, on synthetic pairs made again here from the script (checked by
sha256) at 8, 10, 12 and 16 bits, 4:2:0, 4:2:2 and 4:4:4, odd 4:4:4 sizes down to 1x1,
hues all around the circle, colourless black, identical frames and 0 against the peak;
the kernel's cases on ``../shared/netflix``'s pairs skip where that folder is missing.
Every value is compared with ``==``; per pixel, the kernel's CIELAB colours and
differences equal the reference's on random colours, and Numba's libm calls equal the C
library's.
"""

from __future__ import annotations

import ctypes
import hashlib
import math

import numpy as np
import pytest
from _golden_cases import FeatureGoldens
from admcuda.reference import ciede as R

from admcuda.errors import AdmError

pytest.importorskip("numba")

from admcuda.compiled import ciede as K  # noqa: E402
from admcuda.vmaf import ciede as V  # noqa: E402

GOLD = FeatureGoldens("ciede", feature="ciede", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)


def _file_frames(path: str, w: int, h: int, fmt: str, bd: int) -> list[list[np.ndarray]]:
    """Every frame's Y, Cb and Cr planes of a raw file."""
    shapes = MAKER.plane_shapes(w, h, fmt)
    raw = np.fromfile(path, np.uint8 if bd == 8 else np.dtype("<u2"))
    size = sum(r * c for r, c in shapes)
    frames = []
    for frame in raw.reshape(-1, size).astype(np.uint8 if bd == 8 else np.uint16):
        planes, at = [], 0
        for rows, cols in shapes:
            planes.append(frame[at : at + rows * cols].reshape(rows, cols))
            at += rows * cols
        frames.append(planes)
    return frames


_pairs: dict[str, tuple[list, list]] = {}


def frames(key: str) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
    """A case's reference and distorted frames (Y, Cb, Cr each); a synthetic pair's file
    bytes checked against the sha256 the goldens recorded."""
    pair = CASES[key]["pair"]
    if pair not in _pairs:
        if pair in MAKER.PAIRS:
            for data, side in zip(MAKER.pair_bytes(pair), ("ref", "dis"), strict=True):
                digest = hashlib.sha256(data).hexdigest()
                assert digest == GOLDENS["pairs"][pair][f"{side}_sha256"]
            _pairs[pair] = MAKER.pair_planes(pair)
        else:
            w, h, fmt, bd = GOLD.geometry(CASES[key])
            ref, dis = GOLD.paths(CASES[key], {})
            _pairs[pair] = (_file_frames(ref, w, h, fmt, bd), _file_frames(dis, w, h, fmt, bd))
    return _pairs[pair]


def _scores(key: str, compute) -> list[dict[str, float]]:
    _, _, fmt, bd = GOLD.geometry(CASES[key])
    ref, dis = frames(key)
    return [compute(r, d, bd, fmt) for r, d in zip(ref, dis, strict=True)]


def _kernel(ref, dis, bd, fmt) -> dict[str, float]:
    return V.ciede_frame(None, ref, dis, bd)


@pytest.mark.parametrize("key", SYNTHETIC)
def test_reference_equals_libvmaf(key):
    assert _scores(key, R.compute_ciede) == CASES[key]["frames"]


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_kernel_equals_libvmaf(key):
    assert _scores(key, _kernel) == CASES[key]["frames"]


def test_identical_frames_score_infinity():
    for key in ("same8_420", "same16_444"):
        assert all(f["ciede2000"] == math.inf for f in CASES[key]["frames"])
        assert _scores(key, _kernel) == CASES[key]["frames"]


def test_the_10_bit_netflix_pair_scores_as_the_8_bit_one():
    """The 10-bit file holds the 8-bit one's samples times 4: every step scales exactly."""
    if not ON_NETFLIX:
        pytest.skip("no Netflix cases")
    assert CASES["netflix_src01_10"]["frames"] == CASES["netflix_src01_8"]["frames"]


# --- per pixel: the kernel's steps are the reference's -----------------------------------------


def _random_pixels(n: int, bd: int, seed: int) -> np.ndarray:
    """``n`` (y, u, v) triples: a third over the whole range, a third near mid-grey chroma
    (small a and b), a third colourless black (a = b = 0)."""
    rng = np.random.default_rng(seed)
    top = 1 << bd
    pixels = rng.integers(0, top, (n, 3))
    third = n // 3
    pixels[third : 2 * third, 1:] = (128 << (bd - 8)) + rng.integers(-3, 4, (third, 2))
    pixels[2 * third :] = [16 << (bd - 8), 128 << (bd - 8), 128 << (bd - 8)]
    return pixels


@pytest.mark.parametrize("bd", [8, 10, 12, 16])
def test_lab_colors_and_differences_equal_the_references(bd):
    pixels = _random_pixels(900, bd, bd)
    scale = float(1 << (bd - 8))
    labs = [R.lab_color(*map(float, p), bd) for p in pixels]
    assert [K._lab(*map(float, p), scale) for p in pixels] == labs
    rng = np.random.default_rng(bd + 1)
    pairs = [(labs[i], labs[j]) for i, j in rng.integers(0, len(labs), (900, 2))]
    pairs += [(lab, lab) for lab in labs[:20]]  # no difference at all
    assert [K._ciede2000(*a, *b) for a, b in pairs] == [R.ciede2000(a, b) for a, b in pairs]


def test_numbas_libm_calls_are_the_c_librarys():
    """Numba lowers math.pow, sin, cos, exp and atan2 of doubles, and math.pow of float32
    values, to glibc's pow, sin, cos, exp, atan2 and powf (not to an approximation of its
    own), which the kernel relies on."""
    from numba import njit

    libm = ctypes.CDLL("libm.so.6")
    double, single = ctypes.c_double, ctypes.c_float
    for name, args in (("pow", 2), ("sin", 1), ("cos", 1), ("exp", 1), ("atan2", 2)):
        getattr(libm, name).restype = double
        getattr(libm, name).argtypes = (double,) * args
    libm.powf.restype, libm.powf.argtypes = single, (single, single)

    @njit(error_model="numpy")
    def numba_side(x, y, out):
        for i in range(x.size):
            out[0, i] = math.pow(abs(y[i]), 2.4)
            out[1, i] = math.pow(abs(y[i]), 1.0 / 3.0)
            out[2, i] = math.pow(abs(x[i]), 7.0)
            out[3, i] = math.sin(x[i])
            out[4, i] = math.cos(y[i])
            out[5, i] = math.exp(-x[i] * x[i] / 16.0)
            out[6, i] = math.atan2(x[i], y[i])
            out[7, i] = math.pow(np.float32(abs(x[i]) * 9.0), np.float32(7.0))

    rng = np.random.default_rng(7)
    x, y = rng.uniform(-12.0, 12.0, 4000), rng.uniform(-1.5, 3.0, 4000)
    out = np.empty((8, x.size))
    numba_side(x, y, out)
    want = np.array(
        [
            [libm.pow(abs(b), 2.4), libm.pow(abs(b), 1.0 / 3.0), libm.pow(abs(a), 7.0),
             libm.sin(a), libm.cos(b), libm.exp(-a * a / 16.0), libm.atan2(a, b),
             libm.powf(float(np.float32(abs(a) * 9.0)), 7.0)]
            for a, b in zip(x.tolist(), y.tolist(), strict=True)
        ]
    ).T  # fmt: skip
    assert np.array_equal(out, want)


# --- chroma as libvmaf's loop reads it ---------------------------------------------------------


def test_420_chroma_repeats_each_sample_over_two_by_two():
    plane = np.arange(6, dtype=np.uint8).reshape(2, 3)
    up = R.upsample_chroma(plane, 6, 4, "420")
    assert up.tolist() == [[0, 0, 1, 1, 2, 2]] * 2 + [[3, 3, 4, 4, 5, 5]] * 2


def test_422_chroma_is_read_from_each_rows_start_through_the_padding():
    """Luma row i reads chroma row i // 2; its w samples run from that row's start over
    the row's padding (zeros, stride 32) into the next row."""
    w, h = 80, 4  # chroma rows of 40 samples, a stride of 64
    plane = (np.arange(h * 40, dtype=np.uint16) + 1).reshape(h, 40)
    up = R.upsample_chroma(plane, w, h, "422")
    assert up.shape == (h, w)
    for i in range(h):
        row = i // 2
        assert up[i, :40].tolist() == plane[row].tolist()
        assert up[i, 40:64].tolist() == [0] * 24
        assert up[i, 64:].tolist() == plane[row + 1, :16].tolist()


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(mistake, keys=SYNTHETIC) -> set[str]:
    """The cases (of ``keys``) whose goldens ``mistake`` (a compute_ciede stand-in) misses."""
    return {k for k in keys if _scores(k, mistake) != CASES[k]["frames"]}


def _fmt(key: str) -> str:
    return GOLD.geometry(CASES[key])[2]


FINITE = [k for k in SYNTHETIC if not k.startswith("same")]
# a few pairs of each layout, depth and content, for the mistakes that miss every pair
SOME = ["n8_420", "n10_422", "n12_444_odd", "w16_444", "grey8_420", "swing12_420"]


def test_textbook_422_upsampling_misses_the_422_pairs(monkeypatch):
    """Each chroma sample over two luma columns, every row its own: what 4:2:2 means, not
    what libvmaf's loop reads."""
    real = R.upsample_chroma

    def textbook(plane, width, height, fmt):
        if fmt == "422":
            return plane[:height, : width // 2].repeat(2, axis=1)
        return real(plane, width, height, fmt)

    monkeypatch.setattr(R, "upsample_chroma", textbook)
    keys = [k for k in FINITE if _fmt(k) == "422"] + ["n8_420", "n8_444_odd", "w10_420"]
    assert _misses(R.compute_ciede, keys) == {k for k in keys if _fmt(k) == "422"}


def test_doubles_throughout_miss(monkeypatch):
    """No float32 rounding anywhere (the C's float variables as doubles)."""
    monkeypatch.setattr(R, "f32", float)
    assert _misses(R.compute_ciede, SOME) == set(SOME)


def test_a_float32_sum_misses(monkeypatch):
    def narrow(values):
        return float(np.add.accumulate(np.array(values, np.float32))[-1])

    monkeypatch.setattr(R, "running_sum", narrow)
    keys = ["n8_420", "n10_422", "w8_444", "grey8_420"]
    assert _misses(R.compute_ciede, keys) == set(keys)


def test_the_textbook_mean_hue_misses(monkeypatch):
    """CIEDE2000's paper adds 2 pi to the hues' sum only where it is below 2 pi (and takes
    it away above); libvmaf always adds it when the hues are more than pi apart."""

    def textbook(h1, h2):
        if abs(R.f32(h1 - h2)) <= math.pi:
            return R.f32(R.f32(h1 + h2) / 2.0)
        total = R.f32(h1 + h2)
        turn = 2.0 * math.pi if total < 2.0 * math.pi else -2.0 * math.pi
        return R.f32((total + turn) / 2.0)

    monkeypatch.setattr(R, "_h_bar_prime", textbook)
    keys = ["w8_444", "w10_420", "w12_422", "w16_444", "grey8_420"]
    assert _misses(R.compute_ciede, keys) == set(keys)


def test_textbook_weights_miss(monkeypatch):
    """kL = 1 (the formula's reference conditions) instead of av-metrics' 0.65."""
    monkeypatch.setattr(R, "KSUB", (1.0, 1.0, 1.0))
    assert _misses(R.compute_ciede, SOME) == set(SOME)


def test_float32_normalised_samples_miss(monkeypatch):
    """``get_lab_color``'s first step in float32 (as a float port would take it)."""
    real = R.normalise
    monkeypatch.setattr(R, "normalise", lambda *a: tuple(R.f32(x) for x in real(*a)))
    keys = [k for k in SOME if not k.startswith("swing")]
    assert _misses(R.compute_ciede, keys) == set(keys)


# --- what it refuses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("geometry", "needle"),
    [
        ((64, 36, "400", 8), "libvmaf's ciede refuses 4:0:0 input"),
        ((64, 36, "420", 9), "bit depths 8, 10, 12 and 16, not 9"),
        ((65, 36, "420", 8), "on 4:2:0 of odd width or height (65x36)"),
        ((64, 37, "420", 10), "on 4:2:0 of odd width or height (64x37)"),
        ((65, 36, "422", 8), "on 4:2:2 of odd width (65x36)"),
        ((80, 1, "422", 8), "read past its chroma planes"),
    ],
)
def test_refusals_are_one_line(geometry, needle):
    with pytest.raises(AdmError) as info:
        V.check_size(*geometry)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_odd_444_and_422_heights_are_scored():
    for geometry in ((65, 37, "444", 8), (64, 37, "422", 8), (2, 2, "422", 16)):
        V.check_size(*geometry)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda f: f[:1], "give the Y, Cb and Cr planes of both frames"),
        (lambda f: [f[0], f[1].astype(np.uint16), f[2]], "planes of"),
        (lambda f: [f[0], f[1][:-1], f[2]], "planes of"),
    ],
)
def test_planes_it_cannot_read_are_one_line(change, needle):
    ref, dis = frames("n8_420")
    with pytest.raises(AdmError, match=needle):
        V.ciede_frame(None, change(ref[0]), dis[0], 8)


def test_a_bit_depth_its_planes_do_not_have_is_one_line():
    ref, dis = frames("n8_420")
    wide = [p.astype(np.uint16) for p in ref[0]], [p.astype(np.uint16) for p in dis[0]]
    with pytest.raises(AdmError, match="2-D planes of uint8 at 8 bits"):
        V.ciede_frame(None, *wide, 8)


def test_a_strided_view_reads_as_its_samples():
    ref, dis = frames("n10_420")
    wide = np.zeros((ref[0][0].shape[0], ref[0][0].shape[1] * 2), np.uint16)
    wide[:, ::2] = ref[0][0]
    got = V.ciede_frame(None, [wide[:, ::2], *ref[0][1:]], dis[0], 10)
    assert got == CASES["n10_420"]["frames"][0]

"""libvmaf's ``psnr_hvs``: the reference (``admcuda.reference.psnr_hvs``, NumPy over every
block at once) and the host feature's frame (``admcuda.vmaf.psnr_hvs``) against libvmaf
3.2.0's scalar C.

Goldens: ``testdata/psnr_hvs_goldens.json`` (``testdata/make_psnr_hvs_goldens.py``,
libvmaf 3.2.0 f85a8536, scalar path, 2026-12-07): every frame's four values at full
precision from libvmaf's C API, on synthetic pairs made again here from the script
(checked by sha256) at 8, 10 and 12 bits, 4:2:0, 4:2:2 and 4:4:4, odd sides, tiles without
variance, identical frames (infinite), planes under 8 samples a side (NaN) and a
1920x1080 pair whose float32 error sum rounds as it goes; cases on
``../shared/netflix``'s pairs skip where that folder is missing. Every value is compared
as the same double (``==``, NaN for NaN).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from _golden_cases import FeatureGoldens, same_double
from admcuda.reference import psnr_hvs as R

from admcuda.errors import AdmError
from admcuda.vmaf import psnr_hvs as V

GOLD = FeatureGoldens("psnr_hvs", feature="psnr_hvs", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)
FULL = "full8_420"  # the 1920x1080 pair
SMALL = [k for k in SYNTHETIC if k != FULL]


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
    """A case's reference and distorted frames (Y, Cb, Cr each, as the file holds them);
    a synthetic pair's file bytes checked against the sha256 the goldens recorded."""
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


def _equal(got: list[dict[str, float]], key: str) -> bool:
    """The golden's names in its order, and the same doubles (NaN for NaN)."""
    want = CASES[key]["frames"]
    return len(got) == len(want) and all(
        list(g) == list(w) and all(same_double(g[n], w[n]) for n in w)
        for g, w in zip(got, want, strict=True)
    )


def _frame(ref, dis, bd, fmt) -> dict[str, float]:
    return V.psnr_hvs_frame(None, ref, dis, bd)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key):
    assert _equal(_scores(key, R.compute_psnr_hvs), key)


@pytest.mark.parametrize("key", SMALL + ON_NETFLIX)
def test_host_frame_equals_libvmaf(key):
    assert _equal(_scores(key, _frame), key)


def test_identical_frames_score_infinity_and_blockless_planes_nan():
    for key in ("same8_420", "same12_444"):
        assert all(v == math.inf for f in CASES[key]["frames"] for v in f.values())
    (tiny,) = CASES["tiny8_420"]["frames"]  # 12x10: chroma 6x5
    assert math.isfinite(tiny["psnr_hvs_y"])
    assert all(math.isnan(tiny[n]) for n in ("psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"))
    (seven,) = CASES["seven8_444"]["frames"]
    assert all(math.isnan(v) for v in seven.values())


def test_the_pictures_rounded_down_chroma_reads_the_same():
    """Chroma given at libvmaf's picture size (an odd halved side rounded down) scores as
    the file's rounded-up planes do."""
    for key in ("n8_420_odd", "n10_422_odd"):
        w, h, fmt, bd = GOLD.geometry(CASES[key])
        (_, (ch, cw), _) = R.scored_shapes(w, h, fmt)
        ref, dis = frames(key)
        cut = [[f[0], f[1][:ch, :cw], f[2][:ch, :cw]] for f in ref]
        cut_dis = [[f[0], f[1][:ch, :cw], f[2][:ch, :cw]] for f in dis]
        got = [_frame(r, d, bd, fmt) for r, d in zip(cut, cut_dis, strict=True)]
        assert _equal(got, key)


def test_the_dct_of_a_flat_block_is_its_dc_alone():
    """od_bin_fdct8x8 is orthonormal up to its integer rounding: a flat block of c gives
    8c or one less, and no AC coefficient."""
    for c, dc in ((0, 0), (1, 8), (255, 2039), (4095, 32759)):
        coeffs = R.fdct8x8(np.full((8, 8, 1), c, np.int32)).reshape(64)
        assert coeffs[0] == dc and not coeffs[1:].any()


def test_the_tables_are_the_c_literals_in_float32():
    assert R.CSF_Y.dtype == R.CSF_CB.dtype == R.CSF_CR.dtype == np.float32
    assert R.CSF_Y[0, 0] == np.float32(1.6193873005) and R.CSF_CR[7, 7] == np.float32(
        0.285345396658
    )
    assert (R.CSF_Y == R.CSF_Y.T).all() and (R.CSF_CB == R.CSF_CB.T).all()
    mask = R.masks(R.CSF_Y)
    assert mask.dtype == np.float32
    scaled = float(R.CSF_Y[0, 1]) * R.MASK_SCALE
    assert mask[0, 1] == np.float32(scaled * scaled)


# --- plausible mistakes the goldens catch ------------------------------------------------------


def _misses(keys=SMALL) -> set[str]:
    """The cases (of ``keys``) whose goldens the reference, as patched, misses."""
    return {k for k in keys if not _equal(_scores(k, R.compute_psnr_hvs), k)}


SCORED = [k for k in SMALL if not k.startswith(("same", "seven"))]
# the pairs of more than one block a row or column, whose blocks are not all flat
TEXTURED = [k for k in SCORED if not k.startswith(("swing", "eight", "tiny"))]


def test_blocks_every_8_samples_miss(monkeypatch):
    monkeypatch.setattr(R, "BLOCK_STEP", 8)
    assert _misses(SCORED) == set(TEXTURED)


def test_the_luma_table_for_chroma_misses(monkeypatch):
    monkeypatch.setattr(R, "CSF_CB", R.CSF_Y)
    scored_cb = [k for k in SCORED if k != "tiny8_420"]
    assert _misses(scored_cb) == set(scored_cb)


def test_flooring_shifts_in_the_dct_miss(monkeypatch):
    """``a >> b`` where Xiph's DCT shifts toward zero."""
    monkeypatch.setattr(R, "_rshift", lambda a, b: a >> np.int32(b))
    assert _misses(SCORED) == set(SCORED) - {"swing8_420", "swing12_444"}  # no negative term


def test_a_float32_mask_table_misses(monkeypatch):
    """The CSF times 0.3885746225901003 squared in float32 instead of double."""
    scale = np.float32(R.MASK_SCALE)
    monkeypatch.setattr(R, "masks", lambda csf: (csf * scale) * (csf * scale))
    assert {"n8_444", "n12_420", "w12_420", "t8_420"} <= _misses(SCORED)


def test_a_double_error_sum_misses(monkeypatch):
    def wide(terms):
        return np.float32(np.add.accumulate(terms.astype(np.float64))[-1]) if terms.size else 0

    monkeypatch.setattr(R, "error_sum", wide)
    assert {"n8_420", "w8_444", "t8_420", FULL} <= _misses(SCORED + [FULL])


def test_a_pairwise_error_sum_misses(monkeypatch):
    """NumPy's float32 ``sum`` (pairwise) instead of the C's running sum."""
    monkeypatch.setattr(R, "error_sum", lambda terms: np.float32(terms.sum(dtype=np.float32)))
    assert {"n8_420", "w8_444", "t8_420", FULL} <= _misses(SCORED + [FULL])


def test_rounded_up_chroma_misses_the_odd_widths(monkeypatch):
    """Chroma scored as the file holds it: the odd widths here hold a column of blocks
    more than libvmaf's pictures."""

    def rounded_up(w, h, fmt):
        shapes = MAKER.plane_shapes(w, h, fmt)
        return [tuple(s) for s in shapes]

    monkeypatch.setattr(R, "scored_shapes", rounded_up)
    assert _misses(SCORED) == {"n8_420_odd", "n10_422_odd"}


# --- what it refuses ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "bd", "needle"),
    [
        ("420", 16, "bit depths 8, 10 and 12, not 16 (libvmaf's psnr_hvs refuses more"),
        ("444", 9, "not 9"),
        ("400", 8, "libvmaf's psnr_hvs refuses 4:0:0 input"),
    ],
)
def test_refusals_are_one_line(fmt, bd, needle):
    with pytest.raises(AdmError) as info:
        V.check_size(fmt, bd)
    assert needle in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda f: f[:1], "give the Y, Cb and Cr planes of both frames"),
        (lambda f: [f[0], f[1][:-1], f[2]], "planes of"),
        (lambda f: [f[0], f[1].astype(np.uint16), f[2]], "planes of"),
    ],
)
def test_planes_it_cannot_read_are_one_line(change, needle):
    ref, dis = frames("n8_420")
    with pytest.raises(AdmError, match=needle):
        V.psnr_hvs_frame(None, change(ref[0]), dis[0], 8)


def test_a_bit_depth_its_planes_do_not_have_is_one_line():
    ref, dis = frames("n8_420")
    wide = [p.astype(np.uint16) for p in ref[0]], [p.astype(np.uint16) for p in dis[0]]
    with pytest.raises(AdmError, match="2-D planes of uint8 at 8 bits"):
        V.psnr_hvs_frame(None, *wide, 8)


def test_chroma_smaller_than_its_layout_is_one_line():
    ref, dis = frames("n8_420")
    cut = [ref[0][0], ref[0][1][:, :-2], ref[0][2][:, :-2]]
    cut_dis = [dis[0][0], dis[0][1][:, :-2], dis[0][2][:, :-2]]
    with pytest.raises(AdmError, match="has 16x24 there"):
        V.psnr_hvs_frame(None, cut, cut_dis, 8)

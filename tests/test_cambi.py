"""CAMBI's kernels (admcuda.compiled.cambi) against libvmaf 3.2.0's scalar C, by ``==``.

Goldens: ``testdata/cambi_goldens.json``, written by ``testdata/make_cambi_goldens.py``
(libvmaf 3.2.0, Netflix/vmaf f85a8536, scalar C through its C API, every frame's doubles;
``python3 testdata/make_cambi_goldens.py --libvmaf LIBVMAF_SO``, 2026-12-07). The synthetic
pairs are made again from the script's :data:`PAIRS` and their sha256 checked first; the
Netflix pairs are read from ``../shared/netflix`` (skipped where it is missing). Beside
the goldens: the stages' properties that the C fixes (the reciprocal table, the window and
mask thresholds, the mode filter, the top-k selection's order).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("numba")

from admcuda.compiled import cambi as K  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.vmaf import cambi as V  # noqa: E402
from admcuda.vmaf.plan import make_extractor, parse_feature_arg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
GOLDENS = json.loads((TESTDATA / "cambi_goldens.json").read_text())
CASES = GOLDENS["cases"]
NETFLIX = Path(os.environ.get("ADMCUDA_NETFLIX") or ROOT.parent / "shared" / "netflix")

_spec = importlib.util.spec_from_file_location("cambi_maker", TESTDATA / "make_cambi_goldens.py")
MAKER = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(MAKER)  # type: ignore[union-attr]

SYNTHETIC = [k for k, v in CASES.items() if v["pair"] in MAKER.PAIRS]
ON_NETFLIX = [k for k, v in CASES.items() if v["pair"] in MAKER.NETFLIX_PAIRS]
# sha256 of cambi.h's reciprocal table as float32 bytes (its 4226 literals read by strtof)
LUT_SHA256 = "6bf4472df44d49676686c0e7e632c7d702215efc1b7fb23f803894e42aa2b475"


def test_goldens_provenance() -> None:
    prov = GOLDENS["_provenance"]
    assert prov["libvmaf_version"] == "3.2.0"
    assert prov["libvmaf_commit"].startswith("Netflix/vmaf f85a8536")
    assert prov["date"] == "2026-12-07"
    text = (TESTDATA / "make_cambi_goldens.py").read_bytes()
    assert prov["script_sha256"] == hashlib.sha256(text).hexdigest()


@pytest.fixture(scope="module")
def planes() -> dict:
    return {}


def _pair(name: str, planes: dict) -> tuple[np.ndarray, np.ndarray, int]:
    if name not in planes:
        if name in MAKER.PAIRS:
            ref_bytes, dis_bytes = MAKER.pair_bytes(name)
            want = GOLDENS["pairs"][name]
            assert hashlib.sha256(ref_bytes).hexdigest() == want["ref_sha256"]
            assert hashlib.sha256(dis_bytes).hexdigest() == want["dis_sha256"]
            ref, dis = MAKER.pair_planes(name)
            planes[name] = (ref, dis, MAKER.PAIRS[name][2])
        else:
            r, d, w, h, fmt, bd = MAKER.NETFLIX_PAIRS[name]
            if not (NETFLIX / r).exists():
                pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
            dtype = np.uint8 if bd == 8 else np.dtype("<u2")
            size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            lumas = []
            for path in (r, d):
                raw = np.fromfile(NETFLIX / path, dtype=dtype)
                n = raw.size // size
                lumas.append(
                    np.stack([raw[k * size : k * size + w * h].reshape(h, w) for k in range(n)])
                )
            planes[name] = (lumas[0], lumas[1], bd)
    return planes[name]


def _frames(case: dict, planes: dict) -> list[dict]:
    ref, dis, bd = _pair(case["pair"], planes)
    text = "cambi" + (f"={case['options']}" if case["options"] else "")
    ex = make_extractor(*parse_feature_arg(text))
    return [V.cambi_frame(ex, r, d, bd) for r, d in zip(ref, dis, strict=True)]


@pytest.mark.parametrize("case", SYNTHETIC + ON_NETFLIX)
def test_cambi_equals_libvmaf(case: str, planes: dict) -> None:
    want = CASES[case]["frames"]
    got = _frames(CASES[case], planes)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert list(g) == list(w), i
        for name, value in w.items():
            assert g[name] == value, (case, i, name, g[name], value)


def test_goldens_have_banding() -> None:
    """The synthetic pairs band: most default scores are well above zero."""
    scores = [CASES[f"default_{p}"]["frames"][0]["cambi"] for p in MAKER.PAIRS]
    assert sum(s > 0.5 for s in scores) >= len(scores) - 1, scores


# --- the stages ------------------------------------------------------------------------------


def test_reciprocal_table() -> None:
    lut = K.reciprocal_lut()
    assert hashlib.sha256(lut.tobytes()).hexdigest() == LUT_SHA256
    exact = np.float32(1) / np.arange(1, K.RECIPROCAL_LUT_SIZE, dtype=np.float32)
    # the table's nine-digit literals are one float32 step off 1.0f / n in 42 entries
    assert int((lut[1:] != exact).sum()) == 42
    assert lut[0] == 0


def test_window_and_mask_index() -> None:
    assert K.adjust_window(65, 3840, 2160) == 65
    assert K.adjust_window(65, 1920, 1080) == 33
    assert K.adjust_window(65, 576, 324) == 9
    assert K.adjust_window(65, 1920, 1080, speedup=True) == 17
    assert K.adjust_window(64, 3840, 2160) == 65  # made odd
    assert K.mask_index(1920, 1080) == 21
    assert K.mask_index(216, 216) == 13
    assert K.mask_index(3840, 2160) == 24


def test_tvi_tables() -> None:
    t = K.setup(1920, 1080)
    assert t.num_diffs == 4 and list(t.diff_weights) == [1, 2, 3, 4]
    assert all(t.tvi_for_diff[:-1] <= t.tvi_for_diff[1:])
    assert t.band_base == 0 and t.band_size == t.tvi_for_diff[-1] + 1


def _mode3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.where((a == b) | (a == c), a, np.where(b == c, b, np.minimum(a, np.minimum(b, c))))


def test_mode_filter_is_separable_out_of_place() -> None:
    """In place as the C writes it, equal to the out-of-place filter: the mode of three
    along each row (first and last column kept), then down the columns, the first and
    last row kept unfiltered."""
    rng = np.random.default_rng(1)
    img = rng.integers(0, 4, (9, 11)).astype(np.uint16)
    rows = img.copy()
    rows[:, 1:-1] = _mode3(img[:, :-2], img[:, 1:-1], img[:, 2:])
    want = img.copy()
    want[1:-1] = _mode3(rows[:-2], rows[1:-1], rows[2:])
    got = img.copy()
    K.filter_mode(got)
    assert np.array_equal(got, want)


def test_pooling_order_matters_and_is_the_cs() -> None:
    """The top-k mean takes the k first values after the C's quickselect, as libvmaf sums
    them; a sorted sum of the k largest is the same set of floats."""
    rng = np.random.default_rng(5)
    values = rng.random(1001).astype(np.float32)
    mine = K.spatial_pooling(values.copy(), 0.37)
    k = int(0.37 * 1001)
    top = np.sort(values)[::-1][:k]
    assert abs(mine - float(top.astype(np.float64).sum()) / k) < 1e-12


def test_refusals() -> None:
    ex = make_extractor(*parse_feature_arg("cambi"))
    small = np.zeros((100, 200), np.uint8)
    with pytest.raises(AdmError, match="216"):
        V.cambi_frame(ex, small, small, 8)
    wide = np.zeros((216, 1400), np.uint8)
    with pytest.raises(AdmError, match="outside the frame"):
        V.cambi_frame(ex, wide, wide, 8)
    over = np.full((216, 216), 1023, np.uint16)
    with pytest.raises(AdmError, match="above 255"):
        V.cambi_frame(ex, over, over, 8)
    big = make_extractor(*parse_feature_arg("cambi=window_size=127"))
    frame = np.zeros((2160, 3840), np.uint8)
    with pytest.raises(AdmError, match="too large"):
        V.cambi_frame(big, frame, frame, 8)


def test_identical_flat_frame_scores_zero() -> None:
    ex = SimpleNamespace(
        options=V.CambiOptions(full_ref=True),
        outputs=("cambi", "cambi_source", "cambi_full_reference"),
    )
    flat = np.full((240, 320), 100, np.uint8)
    assert V.cambi_frame(ex, flat, flat, 8) == {
        "cambi": 0.0,
        "cambi_source": 0.0,
        "cambi_full_reference": 0.0,
    }

"""libvmaf's ``float_ssim`` and ``float_ms_ssim``, bit-identical to libvmaf 3.2.0's scalar C.

Goldens: ``testdata/ssim_goldens.json`` (``testdata/make_ssim_goldens.py``, libvmaf 3.2.0
f85a8536, scalar C path, 2026-12-07): every frame's outputs at full precision from
libvmaf's C API on synthetic luma pairs (made again here from the script and checked by
sha256) at 8, 10, 12 and 16 bits, odd sizes, every option and each decimation factor,
identical, flat and inverted pairs and frames under the window; and on
``../shared/netflix``'s pairs (those cases skip where that folder is missing). Every value
is compared with ``==`` (NaN against NaN, and the sign of zero, too).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from admcuda.compiled import ssim as S  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
GOLDENS = json.loads((TESTDATA / "ssim_goldens.json").read_text())
CASES = GOLDENS["cases"]
NETFLIX = Path(os.environ.get("ADMCUDA_NETFLIX") or ROOT.parent / "shared" / "netflix")

_spec = importlib.util.spec_from_file_location("ssim_maker", TESTDATA / "make_ssim_goldens.py")
MAKER = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(MAKER)  # type: ignore[union-attr]

SYNTHETIC = [k for k, v in CASES.items() if v["pair"] in MAKER.PAIRS]
ON_NETFLIX = [k for k, v in CASES.items() if v["pair"] in MAKER.NETFLIX_PAIRS]
FRAME = {"float_ssim": S.float_ssim_frame, "float_ms_ssim": S.float_ms_ssim_frame}


def _options(text: str) -> dict[str, object]:
    """``enable_lcs=true:scale=2`` -> keyword options."""
    out: dict[str, object] = {}
    for item in filter(None, text.split(":")):
        key, value = item.split("=", 1)
        out[key] = value == "true" if value in ("true", "false") else int(value)
    return out


def _same(got: float, want: float) -> bool:
    """The same double: equal with the same sign, or NaN both."""
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


def _check(case: dict, refs, diss, bitdepth: int) -> int:
    fn = FRAME[case["feature"]]
    opts = _options(case["options"])
    names = (S.float_ssim_names if case["feature"] == "float_ssim" else S.float_ms_ssim_names)(
        enable_lcs=bool(opts.get("enable_lcs", False))
    )
    assert len(refs) == len(case["frames"])
    count = 0
    for i, (ref, dis, want) in enumerate(zip(refs, diss, case["frames"], strict=True)):
        got = fn(ref, dis, bitdepth, **opts)
        assert list(got) == names == list(want)
        for name in names:
            assert _same(got[name], want[name]), (i, name, got[name], want[name])
            count += 1
    return count


@pytest.fixture(scope="module")
def pairs():
    """Every synthetic pair, made again and checked against its recorded sha256."""
    out = {}
    for name in MAKER.PAIRS:
        ref, dis = MAKER.pair_bytes(name)
        rec = GOLDENS["pairs"][name]
        assert hashlib.sha256(ref).hexdigest() == rec["ref_sha256"], name
        assert hashlib.sha256(dis).hexdigest() == rec["dis_sha256"], name
        out[name] = MAKER.pair_planes(name)
    return out


@pytest.mark.parametrize("case", SYNTHETIC)
def test_synthetic_goldens(case, pairs):
    entry = CASES[case]
    refs, diss = pairs[entry["pair"]]
    assert _check(entry, refs, diss, MAKER.PAIRS[entry["pair"]][2]) > 0


def _luma_frames(path: Path, w: int, h: int, bitdepth: int) -> list[np.ndarray]:
    bps = 1 if bitdepth == 8 else 2
    frame = (w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)) * bps
    data = path.read_bytes()
    dtype = np.uint8 if bitdepth == 8 else np.dtype("<u2")
    return [
        np.frombuffer(data, dtype, w * h, i * frame).reshape(h, w)
        for i in range(len(data) // frame)
    ]


@pytest.mark.parametrize("case", ON_NETFLIX)
def test_netflix_goldens(case):
    entry = CASES[case]
    ref_name, dis_name, w, h, _, bitdepth = MAKER.NETFLIX_PAIRS[entry["pair"]]
    ref_path, dis_path = NETFLIX / ref_name, NETFLIX / dis_name
    if not (ref_path.exists() and dis_path.exists()):
        pytest.skip(f"shared Netflix clips not found at {NETFLIX}")
    rec = GOLDENS["pairs"][entry["pair"]]
    for path, key in ((ref_path, "ref_sha256"), (dis_path, "dis_sha256")):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == rec[key], path
    refs = _luma_frames(ref_path, w, h, bitdepth)
    diss = _luma_frames(dis_path, w, h, bitdepth)
    assert _check(entry, refs, diss, bitdepth) > 0


def test_goldens_cover_every_option_and_depth():
    opts = {k for c in CASES.values() for k in _options(c["options"])}
    assert opts == set(S.FLOAT_SSIM_OPTIONS) | set(S.FLOAT_MS_SSIM_OPTIONS)
    scales = {_options(c["options"]).get("scale") for c in CASES.values()}
    assert set(range(1, 11)) <= scales
    for feature in FRAME:
        depths = {MAKER.PAIRS[c["pair"]][2] for c in CASES.values() if c["pair"] in MAKER.PAIRS
                  and c["feature"] == feature}  # fmt: skip
        assert depths == {8, 10, 12, 16}, feature


def _nearest_float32(text: str) -> np.float32:
    """The float32 nearest the decimal ``text``, rounding exactly (as a C float literal)."""
    exact = Fraction(text)
    f = np.float32(float(exact))
    candidates = [np.nextafter(f, np.float32(-1)), f, np.nextafter(f, np.float32(1))]
    return min(
        candidates, key=lambda c: (abs(Fraction(float(c)) - exact), int(c.view(np.int32)) & 1)
    )


def test_constants_are_the_c_float_literals():
    """Each table entry is the float a C compiler makes of the literal (a decimal rounded
    once to float32, not through a double), and C1, C2, C3 are the float32 products."""
    literals = [f"{x:.6f}" for x in S.GAUSSIAN_TAPS.astype(np.float64)]
    for text, value in zip(literals, S.GAUSSIAN_TAPS, strict=True):
        assert _nearest_float32(text) == value, text
    for value in S.LPF_9X9.ravel():
        assert _nearest_float32(f"{float(value):.6f}") == value
    assert S.LPF_9X9[4, 4] == np.float32(0.363505) and (S.LPF_9X9 == S.LPF_9X9.T).all()
    for value in np.concatenate([S.MS_SSIM_ALPHAS, S.MS_SSIM_BETAS]):
        assert _nearest_float32(f"{float(value):.4f}") == value
    assert _nearest_float32("0.01") == np.float32(0.01)
    assert _nearest_float32("0.03") == np.float32(0.03)
    assert S.C1.dtype == S.C2.dtype == S.C3.dtype == np.float32
    assert S.C1 == np.float32(np.float32(0.01) * 255) ** 2 and S.C3 == S.C2 / np.float32(2)


def test_automatic_scale_and_clip_ceiling():
    assert [S.ssim_scale(w, h) for w, h in ((160, 90), (576, 324), (1920, 1080))] == [1, 1, 4]
    assert S.ssim_scale(384, 400) == 2  # 1.5 rounds up
    assert S.ssim_scale(3840, 2160) == 8
    assert S.ssim_scale(1920, 1080, 1) == 1
    assert S.max_db(30, 20, 8) == 79.0 and S.max_db(176, 180, 10) == 109.0


def test_ref_against_itself_and_refusals():
    rng = np.random.default_rng(3)
    plane = rng.integers(0, 1024, (200, 180), dtype=np.uint16)
    # not exactly 1: the luminance term's float32 denominator rounds apart from its numerator
    assert abs(S.float_ms_ssim_frame(plane, plane, 10)["float_ms_ssim"] - 1.0) < 1e-6
    with pytest.raises(ValueError, match="at least 176x176"):
        S.float_ms_ssim_frame(plane[:175], plane[:175], 10)
    with pytest.raises(ValueError, match="bit depths"):
        S.float_ssim_frame(plane, plane, 9)
    with pytest.raises(ValueError, match="outside"):
        S.float_ssim_frame(plane, plane, 8)
    with pytest.raises(ValueError, match="no option"):
        S.float_ssim_frame(plane, plane, 10, enable_dB=True)
    with pytest.raises(ValueError, match="integer 0..10"):
        S.float_ssim_frame(plane, plane, 10, scale=11)
    with pytest.raises(ValueError, match="scale option|no option"):
        S.float_ms_ssim_frame(plane, plane, 10, scale=2)
    with pytest.raises(ValueError, match="too small"):
        S.float_ssim_frame(plane[:4, :4], plane[:4, :4], 10, scale=10)
    with pytest.raises(ValueError, match="differ in shape"):
        S.float_ssim_frame(plane, plane[:-1], 10)


def test_names():
    assert S.float_ssim_names() == ["float_ssim"]
    assert S.float_ssim_names(enable_lcs=True)[1:] == [
        "float_ssim_l",
        "float_ssim_c",
        "float_ssim_s",
    ]
    names = S.float_ms_ssim_names(enable_lcs=True)
    assert len(names) == 16 and names[1] == "float_ms_ssim_l_scale0"
    assert names[-1] == "float_ms_ssim_s_scale4"

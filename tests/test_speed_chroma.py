"""``speed_chroma`` (libvmaf's SpEED on the chroma planes): ``admcuda score --feature
speed_chroma``, the API, ``score_clip``, its options, names and refusals, at 4:2:0, 4:2:2
and 4:4:4 and 8 to 16 bits.

Goldens: ``testdata/v1016_goldens.json``'s ``speed_chroma`` cases
(``testdata/make_v1016_goldens.py``: libvmaf 3.2.0's scalar C through its C API, every
frame's three outputs as doubles), on the script's synthetic 4:2:0 pairs; every value is
compared with ``==``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _golden_cases import check_frames, feature_arg, load_maker, pair_folder, written_pair
from conftest import TESTDATA

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.model import SPEED_CHROMA, output_name  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip  # noqa: E402
from admcuda.vmaf import speed as S  # noqa: E402

GOLDENS = json.loads((TESTDATA / "v1016_goldens.json").read_text())
CASES = GOLDENS["speed_chroma"]
MAKER = load_maker("v1016")


def _feature(case: dict) -> str:
    return feature_arg("speed_chroma", case["options"])


def _geometry(pair: str) -> tuple[int, int, int, str]:
    if pair in MAKER.LAYOUT_PAIRS:
        w, h, bd, fmt, _ = MAKER.LAYOUT_PAIRS[pair]
        return w, h, bd, fmt
    w, h, bd, *_ = MAKER.PAIRS[pair]
    return w, h, bd, "420"


folder = pair_folder("speed_pairs")


@pytest.mark.parametrize("key", list(CASES))
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    w, h, bd, fmt = _geometry(case["pair"])
    ref, dis = written_pair(MAKER, case["pair"], folder)
    out = tmp_path / "out.json"
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", fmt,
            "-b", str(bd), "--feature", _feature(case), "-n", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    doc = json.loads(out.read_text())
    check_frames([f["metrics"] for f in doc["frames"]], case)


def test_api_takes_options_objects(folder):
    case = CASES["model_5d0h"]
    w, h, bd, *_ = MAKER.PAIRS[case["pair"]]
    ref, dis = written_pair(MAKER, case["pair"], folder)
    _, opts = parse_feature_arg(_feature(case))
    assert opts == S.SpeedChromaOptions(
        speed_nn_floor=0.1, speed_sigma_nn=0.19, speed_weight_var_mode=5, speed_prescale=0.6,
        speed_prescale_method="bilinear", speed_max_val=45.0,
    )  # fmt: skip
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format="420", bitdepth=bd,
                           features=[("speed_chroma", opts)], no_prediction=True)  # fmt: skip
    check_frames(list(result), case)


def test_score_clip_computes_it_too():
    """The frame-by-frame path (score_pair, given the Y, Cb and Cr planes)."""
    case = CASES["mode_3"]
    frames = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[_feature(case)])
    pairs = [(tuple(r), tuple(d)) for r, d in frames]
    check_frames(score_clip(plan, pairs, MAKER.PAIRS[case["pair"]][2]), case)


def test_names_are_libvmafs():
    """The printed names are libvmaf's aliases of its collector names, renamed by the
    options off their defaults as libvmaf names them (the goldens were read from
    libvmaf under the collector names these stand for)."""
    for case in CASES.values():
        collector, printed = MAKER.speed_names(case["options"])
        assert list(case["frames"][0]) == printed
        assert [output_name(c) for c in collector] == printed
    assert S.output_names(S.SpeedChromaOptions()) == (
        "speed_chroma_u", "speed_chroma_v", "speed_chroma_uv",
    )  # fmt: skip
    rows = {o.name: (o.type, o.alias, o.min, o.max) for o in SPEED_CHROMA.options}
    assert rows == dict(S.TABLE)
    for opt in SPEED_CHROMA.options:
        assert opt.default == getattr(S.SpeedChromaOptions, opt.name)


@pytest.mark.parametrize(
    ("geometry", "feature", "needle"),
    [
        ((640, 480, "400"), "speed_chroma", "libvmaf refuses 4:0:0 input"),
        ((641, 480, "420"), "speed_chroma", "an odd width is not scored at 420"),
        ((640, 481, "420"), "speed_chroma", "an odd height is not scored at 420"),
        ((256, 144, "420"), "speed_chroma", "leaves no 5x5 block after decimation by 16"),
        ((1280, 720, "420"), "speed_chroma=speed_prescale=0.1", "prescaled to 64x36"),
        ((1280, 720, "420"), "speed_chroma=speed_prescale_method=bicubic", "bicubic"),
        ((1280, 720, "420"), "speed_chroma=speed_kernelscale=0.9", "kernel scales"),
        ((1280, 720, "420"), "speed_chroma=speed_weight_var_mode=7", "[0, 6]"),
    ],
)
def test_refusals_come_in_one_line_before_any_frame_is_read(geometry, feature, needle):
    from admcuda.vmaf.host import HostFeatures

    w, h, fmt = geometry
    with pytest.raises(AdmError) as info:
        plan = build_plan(features=[feature])
        HostFeatures(plan, w, h, fmt, 8)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_a_singular_plane_gives_the_other_planes_score(folder):
    """Where one plane's covariance is singular in ref and dis and the other's is not,
    uv is the other plane's score (and a singular plane scores 0)."""
    frames = MAKER.pair_planes("texture8_1280x720")
    ref, dis = (list(p) for p in frames[0])
    flat = np.full_like(ref[1], 128)
    ref[1], dis[1] = flat, flat.copy()
    plan = build_plan(features=["speed_chroma"])
    out = score_clip(plan, [(tuple(ref), tuple(dis))], 8)[0]
    assert out["speed_chroma_u"] == 0.0
    assert out["speed_chroma_uv"] == out["speed_chroma_v"] > 0

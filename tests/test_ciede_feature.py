"""``ciede`` as a feature of a run: ``admcuda score --feature ciede``,
``admcuda.score(features=...)``, ``VmafExtractor``, its name and order, what it refuses,
libvmaf's file layouts.

Goldens: ``testdata/ciede_goldens.json`` (libvmaf 3.2.0's scalar C through its C API,
every frame's double; see ``tests/test_ciede.py``): its synthetic pairs are written as
raw files and scored through the command line, its Netflix pairs (``../shared/netflix``;
those tests skip where it is missing) likewise; every value is compared with ``==``
(``null`` in admcuda's JSON where the golden is infinite).
``testdata/libvmaf_outputs/ciede/``: libvmaf's tool's own JSON, XML and CSV files (its
README says how they were made), for keys, their order, the frames listed and the numbers
as the tool prints them.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _golden_cases import (
    TOOL_PAIRS,
    FeatureGoldens,
    check_frames,
    engine_plans,
    flat_chroma,
    pair_folder,
    printed_or_null,
    tool_pair,
)

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda import VmafExtractor  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.io.formats import plane_shapes  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip  # noqa: E402
from admcuda.vmaf.ciede import CiedeOptions  # noqa: E402
from admcuda.vmaf.host import HostFeatures  # noqa: E402
from admcuda.vmaf.plan import HOST_KINDS  # noqa: E402

GOLD = FeatureGoldens("ciede", feature="ciede", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
NAMES = ["ciede2000"]

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs under that are
# scored through score_clip
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if side > 16]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("ciede_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case, json_nulls=True)
    assert list(doc["pooled_metrics"]) == NAMES
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422", "n16_420"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case)
    check_frames(list(GOLD.score(case, folder, features=[("ciede", CiedeOptions())])), case)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_of_any_size(key):
    """Frames down to 1x1, below what admcuda's inputs take, through score_pair."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["ciede"])
    bd = GOLD.geometry(case)[3]
    pairs = [(tuple(r), tuple(d)) for r, d in zip(ref, dis, strict=True)]
    check_frames(score_clip(plan, pairs, bd), case)


def test_score_pair_wants_chroma():
    ref, dis = MAKER.pair_planes("n8_420")
    with pytest.raises(AdmError, match="ciede reads chroma: give the Y, Cb and Cr planes"):
        score_clip(build_plan(features=["ciede"]), [(ref[0][0], dis[0][0])], 8)


@pytest.mark.parametrize("key", ["n12_444_odd", "n8_422"])
def test_vmaf_extractor_computes_it(key):
    case = CASES[key]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    with VmafExtractor(w, h, bd, model=None, features=["ciede"], pixel_format=fmt) as vmaf:
        first = vmaf.extract(ref[0][0], dis[0][0], ref_chroma=ref[0][1:], dis_chroma=dis[0][1:])
        rest = ref[1:], dis[1:]
        vmaf.extract_batch([f[0] for f in rest[0]], [f[0] for f in rest[1]],
                           ref_chroma=[f[1:] for f in rest[0]],
                           dis_chroma=[f[1:] for f in rest[1]])  # fmt: skip
        frames = vmaf.flush()
        assert vmaf.backend == "cpu" and vmaf.plan.engine_plan().extractors == ()
    assert first == case["frames"][0]
    check_frames(frames, case)


def test_vmaf_extractor_wants_its_pixel_format():
    with pytest.raises(AdmError, match="ciede read the chroma planes: give pixel_format"):
        VmafExtractor(64, 36, 8, model=None, features=["ciede"])
    with VmafExtractor(64, 36, 8, model=None, features=["ciede"], pixel_format="420") as vmaf:
        plane = np.zeros((36, 64), np.uint8)
        with pytest.raises(AdmError, match=r"ciede reads the chroma planes: give ref_chroma"):
            vmaf.extract(plane, plane)


def test_beside_a_model_and_the_ladder(folder):
    """With vmaf_v0.6.1 and a second rung (the reference against itself): the goldens'
    doubles, after the model's features; infinity against itself."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["ciede"])  # fmt: skip
    for frame, want in zip(results[0], case["frames"], strict=True):
        names = list(frame)
        assert names[names.index("integer_vif_scale3") + 1 : names.index("integer_motion2")] == (
            NAMES
        )
        assert {n: frame[n] for n in NAMES} == want
    assert [frame["ciede2000"] for frame in results[1]] == [math.inf] * len(case["frames"])


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n8_422"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["ciede", "psnr"])
    host = HostFeatures(plan, w, h, fmt, bd, threads=threads)
    assert host.chroma_size == 2 * h * (w // 2)
    luma = [np.stack([f[0] for f in side]) for side in (ref, dis)]
    chroma = [flat_chroma(side) for side in (ref, dis)]
    out = host.compute(luma[0], chroma[0], [luma[1], luma[0]], [chroma[1], chroma[0]], len(ref))
    assert list(out[0])[:3] == ["psnr_y", "psnr_cb", "psnr_cr"] and list(out[0])[3:] == NAMES
    assert [{"ciede2000": v} for v in out[0]["ciede2000"].tolist()] == case["frames"]
    assert out[1]["ciede2000"].tolist() == [math.inf] * len(ref)


def test_numba_is_needed(monkeypatch):
    """A run without Numba stops in one line before any frame is read."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    with pytest.raises(AdmError, match="ciede needs the compiled engine: pip install"):
        HostFeatures(build_plan(features=["ciede"]), 48, 32, "420", 8)


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["n8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "ciede"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in NAMES} for f in result], case)


def test_warm_up_and_cached_cover_the_kernel():
    from admcuda.compiled import ALL_KINDS, cached, warm_up

    assert "ciede" in ALL_KINDS
    assert warm_up((8,), ("ciede",))[-1] == "ciede"
    assert cached(("ciede",)) in (True, None)


# --- options, names, order, refusals ------------------------------------------------------------


def test_names_and_registration():
    assert "ciede" in HOST_KINDS
    assert parse_feature_arg("ciede") == ("ciede", CiedeOptions())
    plan = build_plan(features=["ciede", "ciede"])
    assert plan.output_order() == NAMES
    assert [ex.name for ex in plan.extractors] == ["ciede"]
    assert plan.engine_plan().extractors == ()
    assert plan.chroma_wanted("420") and plan.chroma_wanted("444")
    assert not plan.chroma_wanted("400") and not plan.needs_every_frame


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("ciede=debug=true", "ciede has no options and would ignore 'debug'"),
        ("ciede=a=1:b=2", "would ignore 'a', 'b'; write --feature ciede"),
        ("ciede=", "bad option string ''"),
        ("ciedes", "float_motion, ciede, psnr_hvs, speed_temporal"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


@pytest.mark.parametrize(
    "geometry,needle",
    [
        (("47", "32", "420"), "ciede: on 4:2:0 of odd width or height (47x32)"),
        (("48", "31", "420"), "ciede: on 4:2:0 of odd width or height (48x31)"),
        (("47", "32", "422"), "ciede: on 4:2:2 of odd width (47x32)"),
        (("48", "32", "400"), "libvmaf's ciede refuses 4:0:0 input"),
    ],
)
def test_inputs_it_does_not_score_are_one_line(geometry, needle, tmp_path, capsys):
    w, h, fmt = geometry
    shapes = plane_shapes(int(w), int(h), fmt)
    path = tmp_path / "in.yuv"
    path.write_bytes(bytes(2 * sum(r * c for r, c in shapes)))  # two frames
    out = tmp_path / "x.json"
    args = ["score", "-q", "-r", str(path), "-d", str(path), "-w", w, "-h", h, "-p", fmt,
            "--feature", "ciede", "-n", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not out.exists()


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="CiedeOptions"):
        build_plan(features=[("ciede", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "ciede_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "ciede"]),
    "ciede_10bit": ("10b", ["-n", "--feature", "ciede"]),
    "ciede_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature", "ciede",
                                             "--feature", "motion", "--subsample", "3"]),
    "ciede_same": ("same", ["-n", "--feature", "ciede"]),
}  # fmt: skip
PAIR_ARGS = {
    **TOOL_PAIRS,
    "same": ("src01_hrc00_576x324_3f.yuv", "src01_hrc00_576x324_3f.yuv", "576", "324", "8"),
}


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path, same=printed_or_null)


def test_swapped_chroma_planes_fail(folder, monkeypatch):
    """Cb and Cr swapped on the way in give other numbers than the goldens: the tests
    above would catch it."""
    from admcuda.vmaf import host

    real = host._ciede.ciede_frame

    def swapped(ex, ref, dis, bd):
        return real(ex, (ref[0], ref[2], ref[1]), (dis[0], dis[2], dis[1]), bd)

    monkeypatch.setattr(host._ciede, "ciede_frame", swapped)
    case = CASES["n8_420"]
    with pytest.raises(AssertionError):
        check_frames(list(GOLD.score(case, folder)), case)

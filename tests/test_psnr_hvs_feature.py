"""``psnr_hvs`` as a feature of a run: ``admcuda score --feature psnr_hvs``,
``admcuda.score(features=...)``, ``VmafExtractor``, its names and order, what it refuses,
libvmaf's file layouts.

Goldens: ``testdata/psnr_hvs_goldens.json`` (libvmaf 3.2.0's scalar C through its C API,
every frame's doubles; see ``tests/test_psnr_hvs.py``): its synthetic pairs are written
as raw files and scored through the command line, its Netflix pairs
(``../shared/netflix``; those tests skip where it is missing) likewise; every value is
compared with ``==`` (``null`` in admcuda's JSON where the golden is not finite).
``testdata/libvmaf_outputs/psnr_hvs/``: libvmaf's tool's own JSON, XML and CSV files (its
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

import admcuda
from admcuda import VmafExtractor
from admcuda.cli.main import main
from admcuda.errors import AdmError
from admcuda.io.formats import plane_shapes
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip
from admcuda.vmaf.host import HostFeatures
from admcuda.vmaf.plan import HOST_KINDS
from admcuda.vmaf.psnr_hvs import PsnrHvsOptions

GOLD = FeatureGoldens("psnr_hvs", feature="psnr_hvs", layout=None)
CASES, MAKER = GOLD.cases, GOLD.maker
NAMES = ["psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs"]

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs under that are
# scored through score_clip; the 1920x1080 pair is left to tests/test_psnr_hvs.py
SIDE = GOLD.least_sides()
ON_FILES = [k for k, side in SIDE.items() if 16 < side < 1000]
SMALL = [k for k, side in SIDE.items() if side <= 16]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("psnr_hvs_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", ON_FILES + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case, json_nulls=True)
    assert list(doc["pooled_metrics"]) == NAMES
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["n10_422_odd", "n12_420"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    check_frames(list(GOLD.score(case, folder)), case)
    check_frames(list(GOLD.score(case, folder, features=[("psnr_hvs", PsnrHvsOptions())])), case)


@pytest.mark.parametrize("key", SMALL)
def test_score_clip_takes_frames_of_any_size(key):
    """Frames down to 7x9, below what admcuda's inputs take, through score_pair; planes
    under 8 samples a side score NaN."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["psnr_hvs"])
    bd = GOLD.geometry(case)[3]
    pairs = [(tuple(r), tuple(d)) for r, d in zip(ref, dis, strict=True)]
    check_frames(score_clip(plan, pairs, bd), case, signed=True)


def test_score_pair_wants_chroma():
    ref, dis = MAKER.pair_planes("n8_420")
    with pytest.raises(AdmError, match="psnr_hvs reads chroma: give the Y, Cb and Cr planes"):
        score_clip(build_plan(features=["psnr_hvs"]), [(ref[0][0], dis[0][0])], 8)


@pytest.mark.parametrize("key", ["n12_444_odd", "n8_420_odd"])
def test_vmaf_extractor_computes_it(key):
    case = CASES[key]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    with VmafExtractor(w, h, bd, model=None, features=["psnr_hvs"], pixel_format=fmt) as vmaf:
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
    with pytest.raises(AdmError, match="psnr_hvs read the chroma planes: give pixel_format"):
        VmafExtractor(64, 36, 8, model=None, features=["psnr_hvs"])
    with pytest.raises(AdmError, match="libvmaf's psnr_hvs refuses 4:0:0 input"):
        VmafExtractor(64, 36, 8, model=None, features=["psnr_hvs"], pixel_format="400")


def test_beside_a_model_ciede_and_the_ladder(folder):
    """With vmaf_v0.6.1, ciede and a second rung (the reference against itself): the
    goldens' doubles, after the model's features and before ciede's; infinity against
    itself."""
    case = CASES["netflix_src01_8"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            model="vmaf_v0.6.1", features=["psnr_hvs", "ciede"])  # fmt: skip
    for frame, want in zip(results[0], case["frames"], strict=True):
        names = list(frame)
        start = names.index("integer_vif_scale3") + 1
        assert names[start : names.index("integer_motion2")] == [*NAMES, "ciede2000"]
        assert {n: frame[n] for n in NAMES} == want
    for frame in results[1]:
        assert [frame[n] for n in NAMES] == [math.inf] * 4


@pytest.mark.parametrize("threads", [1, 3])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["n10_422_odd"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=["psnr_hvs", "psnr"])
    host = HostFeatures(plan, w, h, fmt, bd, threads=threads)
    assert host.compiled == () and host._loading is None  # NumPy alone
    luma = [np.stack([f[0] for f in side]) for side in (ref, dis)]
    chroma = [flat_chroma(side) for side in (ref, dis)]
    out = host.compute(luma[0], chroma[0], [luma[1], luma[0]], [chroma[1], chroma[0]], len(ref))
    assert list(out[0]) == ["psnr_y", "psnr_cb", "psnr_cr", *NAMES]
    rows = [{n: out[0][n][k] for n in NAMES} for k in range(len(ref))]
    assert rows == case["frames"]
    assert (out[1]["psnr_hvs"] == math.inf).all()


def test_no_numba_needed(folder, monkeypatch):
    """NumPy alone: a run without Numba computes it, and starts no kernel loading."""
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    case = CASES["n8_422"]
    check_frames(list(GOLD.score(case, folder)), case)


def test_engines_never_see_it(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside vif the engine is given
    the plan without it."""
    seen = engine_plans(monkeypatch)
    case = CASES["n8_420"]
    GOLD.score(case, folder)
    assert seen == []
    result = GOLD.score(case, folder, features=["vif", "psnr_hvs"])
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in NAMES} for f in result], case)


# --- options, names, order, refusals ------------------------------------------------------------


def test_names_and_registration():
    assert "psnr_hvs" in HOST_KINDS
    assert parse_feature_arg("psnr_hvs") == ("psnr_hvs", PsnrHvsOptions())
    plan = build_plan(features=["psnr_hvs", "psnr_hvs"])
    assert plan.output_order() == NAMES
    assert [ex.name for ex in plan.extractors] == ["psnr_hvs"]
    assert plan.engine_plan().extractors == ()
    assert plan.chroma_wanted("420") and plan.chroma_wanted("422")
    assert not plan.chroma_wanted("400") and not plan.needs_every_frame


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("psnr_hvs=debug=true", "psnr_hvs has no options and would ignore 'debug'"),
        ("psnr_hvs=a=1:b=2", "would ignore 'a', 'b'; write --feature psnr_hvs"),
        ("psnr_hvs=", "bad option string ''"),
        ("psnr_hvs_y", "float_motion, ciede, psnr_hvs, speed_temporal"),
    ],
)
def test_bad_arguments_are_one_line(feature, needle, folder, tmp_path, capsys):
    GOLD.check_refused("n8_420", feature, needle, folder, tmp_path / "x.json", capsys)


@pytest.mark.parametrize(
    "geometry,needle",
    [
        (("48", "32", "420", "16"), "psnr_hvs takes bit depths 8, 10 and 12, not 16"),
        (("48", "32", "400", "8"), "libvmaf's psnr_hvs refuses 4:0:0 input"),
    ],
)
def test_inputs_it_does_not_score_are_one_line(geometry, needle, tmp_path, capsys):
    w, h, fmt, bd = geometry
    samples = sum(r * c for r, c in plane_shapes(int(w), int(h), fmt))
    path = tmp_path / "in.yuv"
    path.write_bytes(b"\xff" * (2 * samples * (2 if bd == "16" else 1)))  # two frames
    out = tmp_path / "x.json"
    args = ["score", "-q", "-r", str(path), "-d", str(path), "-w", w, "-h", h, "-p", fmt,
            "-b", bd, "--feature", "psnr_hvs", "-n", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not out.exists()


def test_api_refuses_other_options_objects():
    with pytest.raises(AdmError, match="PsnrHvsOptions"):
        build_plan(features=[("psnr_hvs", object())])


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "psnr_hvs_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "psnr_hvs"]),
    "psnr_hvs_10bit": ("10b", ["-n", "--feature", "psnr_hvs"]),
    "psnr_hvs_psnr_motion_subsample3": ("48f", ["-n", "--feature", "psnr", "--feature",
                                                "psnr_hvs", "--feature", "motion",
                                                "--subsample", "3"]),
    "psnr_hvs_same": ("same", ["-n", "--feature", "psnr_hvs"]),
    "psnr_hvs_ciede": ("3f", ["-n", "--feature", "psnr_hvs", "--feature", "ciede"]),
}  # fmt: skip
PAIR_ARGS = {
    **TOOL_PAIRS,
    "same": ("src01_hrc00_576x324_3f.yuv", "src01_hrc00_576x324_3f.yuv", "576", "324", "8"),
}


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    if name == "psnr_hvs_ciede":
        pytest.importorskip("numba")
    pair, args = OUTPUT_RUNS[name]
    GOLD.check_tool_run(name, fmt, tool_pair(PAIR_ARGS[pair]), args, tmp_path, same=printed_or_null)


def test_swapped_chroma_planes_fail(folder, monkeypatch):
    """Cb and Cr swapped on the way in give other numbers than the goldens: the tests
    above would catch it."""
    from admcuda.vmaf import host

    real = host._psnr_hvs.psnr_hvs_frame

    def swapped(ex, ref, dis, bd):
        return real(ex, (ref[0], ref[2], ref[1]), (dis[0], dis[2], dis[1]), bd)

    monkeypatch.setattr(host._psnr_hvs, "psnr_hvs_frame", swapped)
    case = CASES["n8_420"]
    with pytest.raises(AssertionError):
        check_frames(list(GOLD.score(case, folder)), case)

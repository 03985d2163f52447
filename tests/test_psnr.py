"""libvmaf's ``psnr`` feature, exact against libvmaf 3.2.0's scalar C path.

Goldens:

- ``testdata/psnr_goldens.json`` (``testdata/make_psnr_goldens.py``, libvmaf 3.2.0
  f85a8536, scalar path, 2026-12-07): every frame's PSNR and MSE at full precision from
  libvmaf's C API on synthetic pairs (made again here from the script and checked by
  sha256) at 8, 10, 12 and 16 bits, 4:2:0, 4:2:2, 4:4:4 and 4:0:0, each option, identical
  pairs and 0-against-peak pairs; ``aggregate_metrics`` (``apsnr_*``) as libvmaf's tool
  prints them. Cases on ``../shared/netflix``'s pairs skip where that folder is missing.
- ``testdata/libvmaf_outputs/psnr/``: libvmaf's tool's own JSON, XML and CSV files.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _golden_cases import FeatureGoldens, netflix_pair, read_output
from admcuda.reference import psnr as ref_psnr
from conftest import ROOT

import admcuda
from admcuda.cli.main import main
from admcuda.errors import AdmError
from admcuda.vmaf import aggregate_metrics, build_plan, finish_clip, score_clip, score_pair

GOLD = FeatureGoldens("psnr", feature="psnr", layout=None)
GOLDENS, CASES, MAKER = GOLD.doc, GOLD.cases, GOLD.maker

SYNTHETIC = GOLD.keys_on(MAKER.PAIRS)
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)


def _printed(x: float) -> str:
    """libvmaf's writers: %.6f, or %.16f for a number with more than 6 leading zeros."""
    frac = abs(x) - int(abs(x))
    zeros = 0
    while frac < 1.0 and frac != 0:
        frac *= 10
        zeros += 1
    return f"{x:.6f}" if zeros <= 6 else f"{x:.16f}"


def _same_aggregate(ours: dict, theirs: dict) -> None:
    """Ours at full precision against the tool's printed values (null: not finite)."""
    assert list(ours) == list(theirs)
    for name, want in theirs.items():
        got = ours[name]
        if want is None:
            assert not math.isfinite(got), name
        else:
            assert float(_printed(got)) == want, name


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """Every synthetic pair, written once and checked against its recorded sha256."""
    folder = tmp_path_factory.mktemp("psnr_pairs")
    paths = {}
    for name in MAKER.PAIRS:
        ref, dis = MAKER.write_pair(name, str(folder))
        for path, key in ((ref, "ref_sha256"), (dis, "dis_sha256")):
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            assert digest == GOLDENS["pairs"][name][key]
        paths[name] = (ref, dis)
    return paths


def _frames(path: str, w: int, h: int, fmt: str, bd: int) -> list[tuple[np.ndarray, ...]]:
    """Every frame's planes as the file holds them (chroma rounded up)."""
    shapes = MAKER._shapes(w, h, fmt)
    dtype = np.uint8 if bd == 8 else np.dtype("<u2")
    raw = np.fromfile(path, dtype=dtype)
    per = sum(r * c for r, c in shapes)
    out = []
    for i in range(len(raw) // per):
        flat, planes, at = raw[i * per : (i + 1) * per], [], 0
        for r, c in shapes:
            plane = flat[at : at + r * c].reshape(r, c)
            planes.append(plane.astype(np.uint8 if bd == 8 else np.uint16))
            at += r * c
        out.append(tuple(planes))
    return out


def _check_frames(ours: list[dict], case: dict) -> None:
    assert len(ours) == len(case["frames"])
    for got, want in zip(ours, case["frames"], strict=True):
        if case["order"] is not None:
            assert list(got) == case["order"]
        assert {k: got[k] for k in want} == want
        assert set(got) == set(want)


# --- the reference through admcuda.vmaf ---------------------------------------------------


def _reference_run(case: dict, pairs: dict | None):
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, pairs)
    plan = build_plan(features=[GOLD.feature(case)], predict=False).for_pixel_format(fmt)
    refs, diss = _frames(ref, w, h, fmt, bd), _frames(dis, w, h, fmt, bd)
    rows = [
        score_pair(plan, r[0], d[0], None, bd, ref_chroma=r[1:], dis_chroma=d[1:])
        for r, d in zip(refs, diss, strict=True)
    ]
    pixels = [r * c for r, c in ref_psnr.scored_shapes(w, h, fmt)]
    return finish_clip(plan, rows), aggregate_metrics(plan, rows, bitdepth=bd, plane_pixels=pixels)


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_reference_equals_libvmaf(key, pairs):
    case = CASES[key]
    frames, aggregate = _reference_run(case, pairs)
    _check_frames(frames, case)
    if case["aggregate_metrics"] is not None:
        _same_aggregate(aggregate, case["aggregate_metrics"])


def test_score_clip_takes_planes(pairs):
    case = CASES["mse_8_420"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, pairs)
    plan = build_plan(features=[GOLD.feature(case)], predict=False)
    pairs_read = zip(_frames(ref, w, h, fmt, bd), _frames(dis, w, h, fmt, bd), strict=True)
    got = score_clip(plan, pairs_read, bd)
    _check_frames(got, case)


def test_identical_planes_reach_the_cap():
    plane = np.arange(34 * 20, dtype=np.uint16).reshape(20, 34) % 1024
    chroma = [plane[:10, :17], plane[10:, :17]]
    for opts, want in (("", 72.0), ("reduced_hbd_peak=true", 72.0)):
        plan = build_plan(features=["psnr" + ("=" + opts if opts else "")], predict=False)
        row = score_pair(plan, plane, plane, None, 10, ref_chroma=chroma, dis_chroma=chroma)
        assert row == {"psnr_y": want, "psnr_cb": want, "psnr_cr": want}


def test_a_wrong_peak_or_layout_fails_the_goldens(pairs, monkeypatch):
    # the goldens tell these apart: a 10-bit peak of 1020 (reduced) for 1023, chroma of
    # the file's rounded-up size, min_sse ignored
    case = CASES["default_10_420"]
    monkeypatch.setattr(ref_psnr, "peak", lambda bd, reduced=False: 255 << (bd - 8))
    with pytest.raises(AssertionError):
        _check_frames(_reference_run(case, pairs)[0], case)
    monkeypatch.undo()
    case = CASES["odd_8_420"]
    monkeypatch.setattr(
        ref_psnr, "scored_shapes",
        lambda w, h, f: ((h, w), (-(-h // 2), -(-w // 2)), (-(-h // 2), -(-w // 2))),
    )  # fmt: skip
    with pytest.raises(AssertionError):
        _check_frames(_reference_run(case, pairs)[0], case)
    monkeypatch.undo()
    case = CASES["same_min_sse_8_420"]
    monkeypatch.setattr(ref_psnr, "psnr_max", lambda o, f, bd, w, h: (6.0 * bd + 12,) * 3)
    with pytest.raises(AssertionError):
        _check_frames(_reference_run(case, pairs)[0], case)


# --- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, pairs, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, pairs, tmp_path / "out.json"))
    _check_frames([f["metrics"] for f in doc["frames"]], case)
    want = case["aggregate_metrics"]
    if want is not None:
        got = {k: (-math.inf if v is None else v) for k, v in doc["aggregate_metrics"].items()}
        _same_aggregate(got, want)


def test_y4m_reads_chroma_as_raw(pairs, tmp_path):
    for key, tag in (("all_8_422", "C422"), ("default_12_444", "C444p12")):
        case = CASES[key]
        w, h, fmt, bd = GOLD.geometry(case)
        paths = []
        for src in GOLD.paths(case, pairs):
            frame = sum(r * c for r, c in MAKER._shapes(w, h, fmt)) * (1 if bd == 8 else 2)
            data = Path(src).read_bytes()
            y4m = tmp_path / (Path(src).stem + ".y4m")
            body = b"".join(b"FRAME\n" + data[i : i + frame] for i in range(0, len(data), frame))
            y4m.write_bytes(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 {tag}\n".encode() + body)
            paths.append(str(y4m))
        out = tmp_path / "y4m.json"
        assert main(["score", "-q", *paths, "--feature", GOLD.feature(case), "-n", "--json",
                     "-o", str(out)]) == 0  # fmt: skip
        doc = json.loads(out.read_text())
        _check_frames([f["metrics"] for f in doc["frames"]], case)


def test_a_stream_reads_chroma_and_luma_alone(pairs, tmp_path):
    case = CASES["default_8_420"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, pairs)
    cmd = [sys.executable, "-m", "admcuda", "score", "-q", "-r", "-", "-d", dis, "-w", str(w),
           "-h", str(h), "-p", fmt, "-b", str(bd), "--feature", "psnr", "-n", "--json",
           "-o", str(tmp_path / "x.json")]  # fmt: skip
    with open(ref, "rb") as stdin:
        run = subprocess.run(cmd, stdin=stdin, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "x.json").read_text())
    _check_frames([f["metrics"] for f in doc["frames"]], case)
    cmd[cmd.index("psnr")] = "psnr=enable_chroma=false"
    with open(ref, "rb") as stdin:
        run = subprocess.run(cmd, stdin=stdin, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "x.json").read_text())
    want = [f["psnr_y"] for f in CASES["default_8_420"]["frames"]]
    assert [f["metrics"]["psnr_y"] for f in doc["frames"]] == want
    assert all(set(f["metrics"]) == {"psnr_y"} for f in doc["frames"])


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("psnr=enable_luma=true", "has no option 'enable_luma'"),
        ("psnr=enable_mse=yes", "expects true or false"),
        ("psnr=min_sse=-1", "must be in [0,"),
        ("psnr=min_sse=abc", "expects a number"),
        ("psnr=min_sse=1e40", "must be in [0,"),
        ("psnr=enable_mse=true:enable_mse=false", "given twice"),
        ("psnr=enable_mse", "bad option string"),
    ],
)
def test_bad_options_are_one_line(feature, needle, pairs, tmp_path, capsys):
    ref, dis = pairs["n8_420"]
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "34", "-h", "18", "--feature", feature,
            "-n", "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "x.json").exists()


# --- libvmaf's own files ---------------------------------------------------------------------

OUTPUT_RUNS = {
    "psnr_default": ("3f", ["-n", "--feature", "psnr"]),
    "psnr_model_all": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature",
                              "psnr=enable_mse=true:enable_apsnr=true"]),
    "psnr_luma_apsnr": ("3f", ["-n", "--feature", "psnr=enable_chroma=false:enable_apsnr=true"]),
    "psnr_subsample3": ("48f", ["-n", "--feature", "psnr=enable_apsnr=true:enable_mse=true",
                                "--subsample", "3"]),
    "psnr_motion_subsample3": ("48f", ["-n", "--feature", "motion", "--feature",
                                       "psnr=enable_apsnr=true", "--subsample", "3"]),
}  # fmt: skip
PAIR_ARGS = {
    "3f": ["src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", "576", "324"],
    "48f": ["ref_160x90_48f.yuv", "dis_160x90_48f.yuv", "160", "90"],
}


def _same_printed(got: float, want: float) -> bool:
    if math.isnan(want) or math.isinf(want):
        return (math.isnan(want) and not math.isfinite(got)) or got == want
    return float(_printed(got)) == want


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    pair, args = OUTPUT_RUNS[name]
    ref, dis, w, h = PAIR_ARGS[pair]
    ref, dis = netflix_pair(ref, dis)
    out = tmp_path / f"out.{fmt}"
    io = ["-r", ref, "-d", dis, "-w", w, "-h", h, "-p", "420"]
    assert main(["score", "-q", *io, "-b", "8", *args, f"--{fmt}", "-o", str(out)]) == 0
    ours, our_pool, our_agg = read_output(out, fmt)
    theirs, their_pool, their_agg = read_output(GOLD.outputs / f"{name}.{fmt}", fmt)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (_, got), (_, want) in zip(ours, theirs, strict=True):
        assert list(got) == list(want)
        assert all(_same_printed(got[k], v) for k, v in want.items()), (got, want)
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(_same_printed(our_pool[k][m], v) for m, v in methods.items()), k
    assert list(our_agg) == list(their_agg)
    assert all(_same_printed(our_agg[k], v) for k, v in their_agg.items()), our_agg


# --- the API and the backends ----------------------------------------------------------------


def test_api_score_gives_psnr_and_its_aggregate(pairs, tmp_path):
    case = CASES["all_8_422"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, pairs)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
    _check_frames(list(result), case)
    _same_aggregate(result.aggregate, case["aggregate_metrics"])
    result.to_json(tmp_path / "r.json")
    back = admcuda.AdmResult.read(tmp_path / "r.json")
    assert back.aggregate == result.aggregate
    result.to_xml(tmp_path / "r.xml")
    assert ET.parse(tmp_path / "r.xml").getroot().find("aggregate_metrics").attrib == {
        k: repr(v) for k, v in result.aggregate.items()
    }


def test_engines_never_see_psnr(pairs, tmp_path, monkeypatch):
    """PSNR is computed from the frames the pipeline read, beside whichever engine runs:
    the engine is given the plan without it, so a CUDA run gives the CPU's numbers."""
    from admcuda import backends

    seen = []
    real = backends.start_engine

    def start(backend, *args, **kwargs):
        seen.append(kwargs.get("plan"))
        engine, _ = real("cpu", *args, **kwargs)
        return engine, "cuda"

    monkeypatch.setattr(backends, "start_engine", start)
    case = CASES["default_10_420"]
    out = tmp_path / "gpu.json"
    GOLD.cli(case, pairs, out, "--feature", "motion", "--backend", "cuda")
    assert seen and all(ex.kind != "psnr" for ex in seen[0].extractors)
    doc = json.loads(out.read_text())
    got = [{k: f["metrics"][k] for k in case["order"]} for f in doc["frames"]]
    assert got == case["frames"]


def test_psnr_alone_runs_no_engine(pairs, tmp_path, monkeypatch):
    from admcuda import backends

    def refuse(*args, **kwargs):
        raise AssertionError("no engine should start")

    monkeypatch.setattr(backends, "start_engine", refuse)
    case = CASES["default_16_420"]
    doc = json.loads(GOLD.cli(case, pairs, tmp_path / "out.json"))
    _check_frames([f["metrics"] for f in doc["frames"]], case)


def test_the_plan_reads_chroma_only_for_psnr():
    plan = build_plan(["version=vmaf_v0.6.1"])
    assert not plan.host_extractors and not plan.chroma_wanted("420")
    plan = build_plan(features=["psnr=enable_chroma=false"], predict=False)
    assert not plan.chroma_wanted("444")
    plan = build_plan(features=["psnr"], predict=False)
    assert plan.chroma_wanted("420") and not plan.chroma_wanted("400")
    assert plan.for_pixel_format("400").output_order() == ["psnr_y"]


def test_vmaf_extractor_refuses_psnr():
    with pytest.raises(AdmError, match="chroma"):
        admcuda.VmafExtractor(64, 64, 8, features=["psnr"])


def test_apsnr_wraps_as_uint64():
    # 16-bit peak**2 * pixels * 2 passes 2**64 after 2**31 samples: libvmaf's uint64_t
    # product wraps before its log10
    top = ref_psnr.peak(16)
    n = 1 << 32
    wrapped = (top * top * n * 2) % (1 << 64)
    assert ref_psnr.apsnr(0, n, top) == float(math.ceil(10 * math.log10(wrapped))) == 193.0


def test_8bit_rows_sum_in_32_bits():
    # libvmaf's 8-bit extract sums a row in a uint32_t: past 66,051 samples of 255 it wraps
    ref = np.full((2, 70000), 255, np.uint8)
    dis = np.zeros_like(ref)
    assert ref_psnr.plane_sse(ref, dis, 8) == 2 * ((70000 * 255 * 255) % (1 << 32))
    assert ref_psnr.plane_sse(ref.astype(np.uint16), dis.astype(np.uint16), 16) == 2 * 70000 * 65025


# --- the fast sums against the reference's ---------------------------------------------------


@pytest.mark.parametrize("bitdepth", [8, 10, 12, 16])
@pytest.mark.parametrize(
    "shape", [(1, 1), (17, 33), (90, 160), (37, 1921), (3, 70001), (2, 140000)]
)
def test_fast_plane_sse_equals_the_reference(bitdepth, shape):
    from admcuda.vmaf.psnr import plane_sse

    dtype = np.uint8 if bitdepth == 8 else np.uint16
    rng = np.random.default_rng(bitdepth * 1000 + shape[1])
    top = (1 << bitdepth) - 1
    for a, b in (
        (
            rng.integers(0, top + 1, shape, dtype=dtype),
            rng.integers(0, top + 1, shape, dtype=dtype),
        ),
        (np.zeros(shape, dtype), np.full(shape, top, dtype)),  # the largest squares
        (np.full(shape, top, dtype), np.full(shape, top, dtype)),
    ):
        want = ref_psnr.plane_sse(a, b, bitdepth)
        assert plane_sse(a, b, bitdepth) == want
        # non-contiguous planes (chroma cropped to libvmaf's size) and swapped operands
        cut = (slice(None, max(1, shape[0] - 1)), slice(None, max(1, shape[1] - 1)))
        assert plane_sse(a[cut], b[cut], bitdepth) == ref_psnr.plane_sse(a[cut], b[cut], bitdepth)
        assert plane_sse(b, a, bitdepth) == want


def test_fast_plane_sse_keeps_the_8bit_row_wrap():
    from admcuda.vmaf.psnr import ROW_WRAP_WIDTH, plane_sse

    assert ROW_WRAP_WIDTH * 255**2 < 2**32 <= (ROW_WRAP_WIDTH + 1) * 255**2
    for width in (ROW_WRAP_WIDTH, ROW_WRAP_WIDTH + 1, 70001):
        a, b = np.zeros((2, width), np.uint8), np.full((2, width), 255, np.uint8)
        exact = 2 * width * 255**2
        wrapped = 2 * ((width * 255**2) % 2**32)
        want = exact if width <= ROW_WRAP_WIDTH else wrapped
        assert ref_psnr.plane_sse(a, b, 8) == want
        assert plane_sse(a, b, 8) == want

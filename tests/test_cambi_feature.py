"""``cambi`` as a feature of a run: ``admcuda score --feature cambi``,
``admcuda.score(features=...)``, its options, names and order, libvmaf's file layouts.

Goldens: ``testdata/cambi_goldens.json`` (libvmaf 3.2.0's scalar C through its C API, every
frame's doubles; see ``tests/test_cambi.py``): its synthetic pairs are written as raw 4:0:0
files and scored through the command line, its Netflix pairs (``../shared/netflix``;
those tests skip where it is missing) as 4:2:0 files; every value is compared with ``==``.
``testdata/libvmaf_outputs/cambi/``: libvmaf's tool's own JSON, XML and CSV files (its
README says how they were made), for keys, their order, the frames listed and the numbers
as the tool prints them.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda import backends  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip  # noqa: E402
from admcuda.vmaf import cambi as V  # noqa: E402
from admcuda.vmaf.host import HostFeatures  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUTPUTS = TESTDATA / "libvmaf_outputs" / "cambi"
CASES = json.loads((TESTDATA / "cambi_goldens.json").read_text())["cases"]
NETFLIX = Path(os.environ.get("ADMCUDA_NETFLIX") or ROOT.parent / "shared" / "netflix")

_spec = importlib.util.spec_from_file_location("cambi_maker", TESTDATA / "make_cambi_goldens.py")
MAKER = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(MAKER)  # type: ignore[union-attr]

# the 1080p pairs are left to tests/test_cambi.py
SYNTHETIC = [k for k, v in CASES.items() if v["pair"] in MAKER.PAIRS and "1920" not in v["pair"]]
ON_NETFLIX = [k for k, v in CASES.items() if v["pair"] in MAKER.NETFLIX_PAIRS]


def _check_frames(frames: list[dict], case: dict) -> None:
    """Every frame's outputs: the golden's names, in its order, and its doubles."""
    assert len(frames) == len(case["frames"])
    for i, (got, want) in enumerate(zip(frames, case["frames"], strict=True)):
        assert list(got) == list(want), i
        for name, value in want.items():
            assert got[name] == value, (i, name, got[name], value)


def _feature(case: dict) -> str:
    return "cambi" + (f"={case['options']}" if case["options"] else "")


def _geometry(case: dict) -> tuple[int, int, str, int]:
    if case["pair"] in MAKER.PAIRS:
        w, h, bd, *_ = MAKER.PAIRS[case["pair"]]
        return w, h, "400", bd
    _, _, w, h, fmt, bd = MAKER.NETFLIX_PAIRS[case["pair"]]
    return w, h, fmt, bd


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cambi_pairs")


def _paths(case: dict, folder: Path) -> tuple[str, str]:
    if case["pair"] in MAKER.PAIRS:
        ref = folder / f"{case['pair']}_ref.yuv"
        if not ref.exists():
            MAKER.write_pair(case["pair"], str(folder))
        return str(ref), str(folder / f"{case['pair']}_dis.yuv")
    ref, dis, *_ = MAKER.NETFLIX_PAIRS[case["pair"]]
    if not (NETFLIX / ref).exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    return str(NETFLIX / ref), str(NETFLIX / dis)


def _cli(case: dict, folder: Path, out: Path, *extra: str, fmt: str = "json") -> str:
    w, h, pixfmt, bd = _geometry(case)
    ref, dis = _paths(case, folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", str(w), "-h", str(h), "-p", pixfmt,
            "-b", str(bd), "--feature", _feature(case), "-n", *extra,
            f"--{fmt}", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    return out.read_text()


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(_cli(case, folder, tmp_path / "out.json"))
    _check_frames([f["metrics"] for f in doc["frames"]], case)
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["netflix_10", "full_ref_216", "enc_scaled"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    w, h, fmt, bd = _geometry(case)
    ref, dis = _paths(case, folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[_feature(case)], no_prediction=True)  # fmt: skip
    _check_frames(list(result), case)
    assert result.aggregate == {}


def test_api_score_takes_options_objects(folder):
    case = CASES["window_33"]
    w, h, fmt, bd = _geometry(case)
    ref, dis = _paths(case, folder)
    feature = ("cambi", V.CambiOptions(window_size=33))
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[feature], no_prediction=True)  # fmt: skip
    _check_frames(list(result), case)


@pytest.mark.parametrize("key", ["mlc_4", "default_band12_400x300"])
def test_score_clip_computes_it_too(key):
    """The NumPy path (score_pair, frame by frame) gives the same doubles."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[_feature(case)])
    bd = MAKER.PAIRS[case["pair"]][2]
    _check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


@pytest.mark.parametrize("threads", [1, 2])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["full_ref_216"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[_feature(case)])
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    assert host.chroma_size == 0
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    assert list(out[0]) == list(case["frames"][0])
    for k, want in enumerate(case["frames"]):
        assert all(out[0][n][k] == v for n, v in want.items())
    assert out[1]["cambi_full_reference"].tolist() == [0.0] * len(ref)


def test_engines_never_see_it(folder, monkeypatch):
    seen = []
    start = backends.start_engine

    def spy(backend, *args, **kwargs):
        seen.append(kwargs["plan"])
        return start(backend, *args, **kwargs)

    monkeypatch.setattr(backends, "start_engine", spy)
    case = CASES["netflix_8"]
    w, h, fmt, bd = _geometry(case)
    ref, dis = _paths(case, folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=["vif", _feature(case)], no_prediction=True)  # fmt: skip
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    _check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


def test_vmaf_extractor_refuses_it():
    with pytest.raises(AdmError, match="cambi run on the host"):
        admcuda.VmafExtractor(400, 300, 8, model=None, features=["cambi"])


def test_warm_up_and_cached_cover_the_kernels():
    from admcuda.compiled import ALL_KINDS, cached, warm_up

    assert "cambi" in ALL_KINDS
    assert warm_up((8,), ("cambi",))[-1] == "cambi"
    assert cached(("cambi",)) in (True, None)


# --- options, names, order ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,names",
    [
        ("cambi", ("cambi",)),
        ("cambi=full_ref=true", ("cambi", "cambi_source", "cambi_full_reference")),
        ("cambi=window_size=33", ("cambi_ws_33",)),
        ("cambi=topk=0.5:tvi_threshold=0.02", ("cambi_topk_0.5_tvit_0.02",)),
        ("cambi=full_ref=true:window_size=33:eotf=pq",
         ("cambi_eotf_pq_ws_33", "cambi_source", "cambi_full_reference")),
        ("cambi=enc_width=300:enc_height=200:cambi_eotf=pq:cambi_max_val=0.1",
         ("cambi_ceot_pq_cmxv_0.1_ench_200_encw_300",)),
        ("cambi=window_size=65:eotf=bt1886", ("cambi",)),
    ],
)  # fmt: skip
def test_names_are_libvmafs(text, names):
    """As libvmaf's tool printed them (the first five from its JSON files of these
    options on the 576x324 pair)."""
    assert build_plan(features=[text]).output_order() == list(names)


def test_option_table_is_cambi_cs():
    defaults = V.CambiOptions()
    assert list(V.TABLE) == [
        "cambi_max_val", "enc_width", "enc_height", "enc_bitdepth", "src_width", "src_height",
        "window_size", "topk", "cambi_topk", "tvi_threshold", "cambi_vis_lum_threshold",
        "max_log_contrast", "heatmaps_path", "full_ref", "eotf", "cambi_eotf",
        "cambi_high_res_speedup",
    ]  # fmt: skip
    assert (defaults.window_size, defaults.topk, defaults.tvi_threshold) == (65, 0.6, 0.019)
    assert defaults.max_log_contrast == 2 and defaults.cambi_max_val == 1000.0
    assert [k for k, v in V.TABLE.items() if not v[4]] == ["heatmaps_path", "full_ref"]


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("cambi=window_size=14", "option window_size must be in [15, 127]"),
        ("cambi=window_size=33.5", "option window_size expects an integer"),
        ("cambi=topk=0", "option topk must be in [0.0001, 1]"),
        ("cambi=max_log_contrast=6", "option max_log_contrast must be in [0, 5]"),
        ("cambi=eotf=srgb", "option eotf must be one of bt1886, pq"),
        ("cambi=full_ref=1", "expects true or false"),
        ("cambi=heatmaps_path=/tmp/x", "heatmaps_path"),
        ("cambi=ws=33", "write window_size=33"),
        ("cambi=blur=3", "has no option 'blur'"),
        ("cambi=enc_width=100", "option enc_width must be in [180, 7680]"),
        ("cambi=src_width=400:src_height=200:full_ref=true", "larger one way"),
        ("cambi=cambi_vis_lum_threshold=300.5", "option cambi_vis_lum_threshold must be in"),
        ("cambi=cambi_vis_lum_threshold=300", "libvmaf 3.2.0 crashes"),
    ],
)
def test_bad_options_are_one_line(feature, needle, folder, tmp_path, capsys):
    ref, dis = _paths(CASES["window_33"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "320", "-h", "240", "-p", "400",
            "--feature", feature, "-n", "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "size,needle", [((200, 180), "at least 216"), ((1400, 216), "outside the frame")]
)
def test_sizes_refused_before_reading(size, needle, tmp_path, capsys, monkeypatch):
    import admcuda.pipeline as P

    def refuse(*args, **kwargs):
        raise AssertionError("frames were read")

    monkeypatch.setattr(P, "run", refuse)
    w, h = size
    ref = tmp_path / "r.yuv"
    ref.write_bytes(bytes(w * h * 2))
    args = ["score", "-q", "-r", str(ref), "-d", str(ref), "-w", str(w), "-h", str(h),
            "-p", "400", "--feature", "cambi", "-n", "--json",
            "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_without_numba_one_line(folder, tmp_path, capsys, monkeypatch):
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    ref, dis = _paths(CASES["window_33"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "320", "-h", "240", "-p", "400",
            "--feature", "cambi", "-n", "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cambi needs the compiled engine" in err[0], err


def test_options_parse_to_their_types():
    name, got = parse_feature_arg("cambi=window_size=33.0:topk=0.5:full_ref=true:eotf=pq")
    assert name == "cambi"
    assert got == V.CambiOptions(window_size=33, topk=0.5, full_ref=True, eotf="pq")
    assert type(got.window_size) is int and type(got.topk) is float


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "cambi_model": ("8", ["--model", "version=vmaf_v0.6.1", "--feature", "cambi=full_ref=true"]),
    "cambi_options": ("8", ["-n", "--feature",
                            "cambi=window_size=33:topk=0.5:eotf=pq:cambi_max_val=0.3"]),
    "cambi_10bit": ("10", ["-n", "--feature", "cambi", "--feature", "psnr"]),
}  # fmt: skip
PAIR_ARGS = {
    "8": ["src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv"],
    "10": ["src01_hrc00_576x324.yuv420p10le.yuv", "src01_hrc01_576x324.yuv420p10le.yuv"],
}


def _read(path: Path, fmt: str) -> tuple[list[tuple[int, dict]], dict, dict]:
    """(frameNum, metrics) per frame, pooled_metrics and aggregate_metrics of a file."""
    if fmt == "json":
        doc = json.loads(path.read_text())
        frames = [(f["frameNum"], f["metrics"]) for f in doc["frames"]]
        return frames, doc["pooled_metrics"], doc["aggregate_metrics"]
    if fmt == "xml":
        root = ET.parse(path).getroot()
        frames = []
        for el in root.find("frames"):
            attrs = dict(el.attrib)
            frames.append((int(attrs.pop("frameNum")), {k: float(v) for k, v in attrs.items()}))
        pools = {}
        for el in root.find("pooled_metrics"):
            attrs = dict(el.attrib)
            name = attrs.pop("name")
            pools[name] = {k: float(v) for k, v in attrs.items()}
        return frames, pools, dict(root.find("aggregate_metrics").attrib)
    rows = list(csv.reader(path.read_text().splitlines()))
    head = rows[0][1:-1]
    frames = [(int(r[0]), dict(zip(head, map(float, r[1:-1]), strict=True))) for r in rows[1:]]
    return frames, {}, {}


def _printed(got: float, want: float) -> bool:
    """``got`` as libvmaf's tool prints it (``%.6f``) reads back as ``want``."""
    return float(f"{got:.6f}") == want


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    depth, args = OUTPUT_RUNS[name]
    ref, dis = PAIR_ARGS[depth]
    if not (NETFLIX / ref).exists():
        pytest.skip(f"shared Netflix pairs not found at {NETFLIX}")
    out = tmp_path / f"out.{fmt}"
    io = ["-r", str(NETFLIX / ref), "-d", str(NETFLIX / dis), "-w", "576", "-h", "324"]
    assert main(["score", "-q", *io, "-p", "420", "-b", depth, *args, f"--{fmt}", "-o",
                 str(out)]) == 0  # fmt: skip
    ours, our_pool, our_agg = _read(out, fmt)
    theirs, their_pool, their_agg = _read(OUTPUTS / f"{name}.{fmt}", fmt)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (_, got), (_, want) in zip(ours, theirs, strict=True):
        assert list(got) == list(want)
        assert all(_printed(got[k], v) for k, v in want.items()), (got, want)
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(_printed(our_pool[k][m], v) for m, v in methods.items()), k
    assert our_agg == their_agg == {}

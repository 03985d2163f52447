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

import json

import pytest
from _golden_cases import FeatureGoldens, check_frames, netflix_pair, pair_folder, read_output

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda import backends  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip  # noqa: E402
from admcuda.vmaf import cambi as V  # noqa: E402
from admcuda.vmaf.host import HostFeatures  # noqa: E402

GOLD = FeatureGoldens("cambi", feature="cambi", layout="400")
CASES, MAKER = GOLD.cases, GOLD.maker

# the 1080p pairs are left to tests/test_cambi.py
SYNTHETIC = [k for k in GOLD.keys_on(MAKER.PAIRS) if "1920" not in CASES[k]["pair"]]
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

folder = pair_folder("cambi_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    check_frames([f["metrics"] for f in doc["frames"]], case)
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", ["netflix_10", "full_ref_216", "enc_scaled"])
def test_api_score_equals_libvmaf(key, folder):
    case = CASES[key]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
    check_frames(list(result), case)
    assert result.aggregate == {}


def test_api_score_takes_options_objects(folder):
    case = CASES["window_33"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    feature = ("cambi", V.CambiOptions(window_size=33))
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[feature], no_prediction=True)  # fmt: skip
    check_frames(list(result), case)


@pytest.mark.parametrize("key", ["mlc_4", "default_band12_400x300"])
def test_score_clip_computes_it_too(key):
    """The NumPy path (score_pair, frame by frame) gives the same doubles."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
    bd = MAKER.PAIRS[case["pair"]][2]
    check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


@pytest.mark.parametrize("threads", [1, 2])
def test_host_frames_on_threads_are_the_same(threads):
    case = CASES["full_ref_216"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
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
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=["vif", GOLD.feature(case)], no_prediction=True)  # fmt: skip
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


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
        ("cambi=ws=33", "write window_size=33"),
        ("cambi=blur=3", "has no option 'blur'"),
        ("cambi=enc_width=100", "option enc_width must be in [180, 7680]"),
        ("cambi=src_width=400:src_height=200:full_ref=true", "larger one way"),
        ("cambi=cambi_vis_lum_threshold=300.5", "option cambi_vis_lum_threshold must be in"),
        ("cambi=cambi_vis_lum_threshold=300", "libvmaf 3.2.0 crashes"),
    ],
)
def test_bad_options_are_one_line(feature, needle, folder, tmp_path, capsys):
    ref, dis = GOLD.paths(CASES["window_33"], folder)
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
    ref, dis = GOLD.paths(CASES["window_33"], folder)
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


def _printed(got: float, want: float) -> bool:
    """``got`` as libvmaf's tool prints it (``%.6f``) reads back as ``want``."""
    return float(f"{got:.6f}") == want


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
@pytest.mark.parametrize("name", sorted(OUTPUT_RUNS))
def test_libvmaf_output_files(name, fmt, tmp_path):
    depth, args = OUTPUT_RUNS[name]
    ref, dis = netflix_pair(*PAIR_ARGS[depth])
    out = tmp_path / f"out.{fmt}"
    io = ["-r", ref, "-d", dis, "-w", "576", "-h", "324"]
    assert main(["score", "-q", *io, "-p", "420", "-b", depth, *args, f"--{fmt}", "-o",
                 str(out)]) == 0  # fmt: skip
    ours, our_pool, our_agg = read_output(out, fmt)
    theirs, their_pool, their_agg = read_output(GOLD.outputs / f"{name}.{fmt}", fmt)
    assert [n for n, _ in ours] == [n for n, _ in theirs]
    for (_, got), (_, want) in zip(ours, theirs, strict=True):
        assert list(got) == list(want)
        assert all(_printed(got[k], v) for k, v in want.items()), (got, want)
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(_printed(our_pool[k][m], v) for m, v in methods.items()), k
    assert our_agg == their_agg == {}

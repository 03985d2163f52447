"""``float_ssim`` and ``float_ms_ssim`` as features of a run: ``admcuda score --feature``,
``admcuda.score(features=...)``, their options, names and order, libvmaf's file layouts.

Goldens: ``testdata/ssim_goldens.json`` (libvmaf 3.2.0's scalar C through its C API, every
frame's doubles; see ``tests/test_ssim.py``): its synthetic pairs are written as raw 4:0:0
files and scored through the command line, its Netflix pairs (``../shared/netflix``;
those tests skip where it is missing) as 4:2:0 files; every value is compared with ``==``
(NaN against NaN, the sign of zero too). ``testdata/libvmaf_outputs/ssim/``: libvmaf's
tool's own JSON, XML and CSV files (its README says how they were made), for keys, their
order, the frames listed and the numbers as the tool prints them.
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from _golden_cases import FeatureGoldens, check_frames, netflix_pair, pair_folder, read_output

pytest.importorskip("numba")

import admcuda  # noqa: E402
from admcuda import backends  # noqa: E402
from admcuda.cli.main import main  # noqa: E402
from admcuda.compiled import ssim as S  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.vmaf import build_plan, parse_feature_arg, score_clip  # noqa: E402
from admcuda.vmaf import ssim as V  # noqa: E402
from admcuda.vmaf.host import HostFeatures  # noqa: E402

GOLD = FeatureGoldens("ssim", feature=None, layout="400")
CASES, MAKER = GOLD.cases, GOLD.maker

# admcuda's inputs are above 16 samples a side (ADM's least): the pairs under that are
# scored through score_clip; the 1080p pairs are left to tests/test_ssim.py
SIDE = {k: min(MAKER.PAIRS[CASES[k]["pair"]][:2]) for k in GOLD.keys_on(MAKER.PAIRS)}
SYNTHETIC = [k for k, side in SIDE.items() if side > 16 and not k.endswith("_1080p")]
SMALL = [k for k, side in SIDE.items() if side <= 16]
NON_FINITE = [
    k for k in SYNTHETIC
    if not all(math.isfinite(x) for f in CASES[k]["frames"] for x in f.values())
]  # fmt: skip
ON_NETFLIX = GOLD.keys_on(MAKER.NETFLIX_PAIRS)

# the goldens hold NaN, inf and -0.0: each value is the same double, sign and all
_check_frames = partial(check_frames, signed=True)

folder = pair_folder("ssim_pairs")


# --- the command line and the API equal libvmaf's doubles --------------------------------------


@pytest.mark.parametrize("key", SYNTHETIC + ON_NETFLIX)
def test_command_line_equals_libvmaf(key, folder, tmp_path):
    case = CASES[key]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    _check_frames([f["metrics"] for f in doc["frames"]], case, json_nulls=True)
    assert doc["aggregate_metrics"] == {}


@pytest.mark.parametrize("key", NON_FINITE)
def test_api_gives_what_json_cannot(key, folder):
    """NaN, inf (and -0.0): the API's frames hold libvmaf's doubles exactly."""
    case = CASES[key]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
    _check_frames(list(result), case)


def test_both_features_in_one_run_with_a_model(folder, tmp_path):
    """The command of the README: both features beside vmaf_v0.6.1, each frame's values
    the goldens', after the model's features and before motion's flushed outputs."""
    ssim, ms = CASES["netflix_8_ssim"], CASES["netflix_8_ms_ssim"]
    ref, dis = GOLD.paths(ssim, folder)
    out = tmp_path / "out.json"
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "576", "-h", "324", "-p", "420",
            "-b", "8", "--feature", "float_ssim", "--feature", "float_ms_ssim=enable_lcs=true",
            "--model", "version=vmaf_v0.6.1", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    doc = json.loads(out.read_text())
    for frame, a, b in zip(doc["frames"], ssim["frames"], ms["frames"], strict=True):
        names = list(frame["metrics"])
        assert names[names.index("integer_vif_scale3") + 1 : names.index("integer_motion2")] == (
            ["float_ssim"] + list(b)
        )
        assert frame["metrics"]["float_ssim"] == a["float_ssim"]
        assert all(frame["metrics"][n] == v for n, v in b.items())


def test_api_score_gives_both(folder):
    ssim, ms = CASES["ssim_same_8_clip_db"], CASES["ms_ssim_8_odd"]
    for case in (ssim, ms):
        w, h, fmt, bd = GOLD.geometry(case)
        ref, dis = GOLD.paths(case, folder)
        result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                               features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
        _check_frames(list(result), case)
        assert result.aggregate == {}


def test_api_score_takes_options_objects(folder):
    case = CASES["ssim_8_scale3"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    feature = ("float_ssim", V.SsimOptions(enable_lcs=True, scale=3))
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=[feature], no_prediction=True)  # fmt: skip
    _check_frames(list(result), case)


def test_encoded_inputs(folder, tmp_path):
    """Luma alone: an encoded (lossless) pair scores as its raw frames do."""
    from _media import FFV1, encode

    case = CASES["ms_ssim_8_odd"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    files = [encode(Path(p), tmp_path / f"{k}.mkv", w, h, fmt, bd, FFV1)
             for k, p in enumerate((ref, dis))]  # fmt: skip
    out = tmp_path / "out.json"
    args = ["score", "-q", "-r", str(files[0]), "-d", str(files[1]),
            "--feature", GOLD.feature(case), "-n", "--json", "-o", str(out)]  # fmt: skip
    assert main(args) == 0
    _check_frames([f["metrics"] for f in json.loads(out.read_text())["frames"]], case)


def test_ladder_scores_each_rung(folder):
    case = CASES["ssim_8_db"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    results = admcuda.score(ref, [dis, ref], width=w, height=h, pixel_format=fmt, bitdepth=bd,
                            features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
    _check_frames(list(results[0]), case)
    # the reference against itself: SSIM 1, in dB -10 log10(0) = inf
    assert [f["float_ssim"] for f in results[1]] == [math.inf] * len(case["frames"])


@pytest.mark.parametrize("key", ["ssim_10_high", "ms_ssim_12", *SMALL])
def test_score_clip_computes_them_too(key):
    """The NumPy path (score_pair, frame by frame) gives the same doubles, frames under
    the window included."""
    case = CASES[key]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case)])
    bd = MAKER.PAIRS[case["pair"]][2]
    _check_frames(score_clip(plan, list(zip(ref, dis, strict=True)), bd), case)


# --- threads ------------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_host_frames_on_threads_are_the_same(threads):
    """Frames of a batch scored side by side equal the goldens whatever the threads."""
    case = CASES["ms_ssim_8_odd"]
    ref, dis = MAKER.pair_planes(case["pair"])
    plan = build_plan(features=[GOLD.feature(case), "float_ssim=scale=2"])
    h, w = ref.shape[1:]
    host = HostFeatures(plan, w, h, "400", 8, threads=threads)
    assert host.chroma_size == 0
    out = host.compute(ref, None, [dis, ref], [None, None], len(ref))
    assert list(out[0]) == list(case["frames"][0]) + ["float_ssim"]
    rows = [{n: out[0][n][k] for n in out[0]} for k in range(len(ref))]
    for row, want in zip(rows, case["frames"], strict=True):
        assert all(row[n] == v for n, v in want.items())
    singles = [
        S.float_ssim_frame(r, d, 8, scale=2)["float_ssim"] for r, d in zip(ref, dis, strict=True)
    ]
    assert out[0]["float_ssim"].tolist() == singles
    assert out[1]["float_ssim"].tolist() == [1.0] * len(ref)


def test_two_runs_with_other_options_print_one_name_twice():
    with pytest.raises(AdmError, match="float_ms_ssim would print float_ms_ssim"):
        build_plan(features=["float_ms_ssim=enable_db=true", "float_ms_ssim"])


# --- options, names, order ----------------------------------------------------------------------


def test_option_tables_are_libvmafs():
    """Names, types, ranges and defaults as float_ssim.c and float_ms_ssim.c declare them,
    the same as the kernels' own tables."""
    for kind, table in (("float_ssim", S.FLOAT_SSIM_OPTIONS),
                        ("float_ms_ssim", S.FLOAT_MS_SSIM_OPTIONS)):  # fmt: skip
        ours = V.TABLES[kind]
        assert list(ours) == list(table)
        defaults = V.OPTIONS_TYPES[kind]()
        for name, (default, lo, hi) in table.items():
            typ, alias, mn, mx = ours[name]
            assert alias is None and (mn, mx) == (lo, hi)
            assert typ == ("bool" if lo is None else "int")
            assert getattr(defaults, name) == default
    assert V.MS_SSIM_MIN_SIDE == S.MS_SSIM_MIN_SIDE


@pytest.mark.parametrize(
    "text,options",
    [
        ("float_ssim", V.SsimOptions()),
        ("float_ssim=enable_lcs=true:scale=10", V.SsimOptions(enable_lcs=True, scale=10)),
        ("float_ssim=scale=2.0", V.SsimOptions(scale=2)),
        ("float_ssim=enable_db=true:clip_db=false", V.SsimOptions(enable_db=True)),
        ("float_ms_ssim=clip_db=true", V.MsSsimOptions(clip_db=True)),
    ],
)
def test_options_parse_to_the_kernels_values(text, options):
    name, got = parse_feature_arg(text)
    assert name == text.partition("=")[0] and got == options
    assert all(type(v) in (bool, int) for v in vars(got).values())


def test_names_follow_feature_order():
    plan = build_plan(features=["float_ms_ssim=enable_lcs=true", "float_ssim=enable_lcs=true"])
    want = S.float_ms_ssim_names(enable_lcs=True) + S.float_ssim_names(enable_lcs=True)
    assert plan.output_order() == want
    assert plan.engine_plan().extractors == ()
    assert build_plan(features=["float_ssim", "float_ssim"]).output_order() == ["float_ssim"]


@pytest.mark.parametrize(
    "feature,needle",
    [
        ("float_ssim=scale=11", "option scale must be in [0, 10]"),
        ("float_ssim=scale=-1", "option scale must be in [0, 10]"),
        ("float_ssim=scale=2.5", "option scale expects an integer"),
        ("float_ssim=scale=two", "expects a number"),
        ("float_ssim=enable_lcs=yes", "expects true or false"),
        ("float_ssim=enable_lcs=1", "expects true or false"),
        ("float_ms_ssim=scale=2", "has no option 'scale'"),
        ("float_ssim=enable_db", "bad option string"),
        ("float_ssim=clip_db=true:clip_db=false", "given twice"),
    ],
)
def test_bad_options_are_one_line(feature, needle, folder, tmp_path, capsys):
    ref, dis = GOLD.paths(CASES["ms_ssim_8_odd"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "181", "-h", "177", "-p", "400",
            "--feature", feature, "-n", "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "x.json").exists()


def test_two_runs_of_one_feature_with_other_options_are_refused(folder, tmp_path, capsys):
    """libvmaf keeps the first and drops the second's options unsaid; refused here."""
    ref, dis = GOLD.paths(CASES["ms_ssim_8_odd"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "181", "-h", "177", "-p", "400",
            "--feature", "float_ssim", "--feature", "float_ssim=enable_lcs=true", "-n",
            "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "would print float_ssim" in err[0], err


@pytest.mark.parametrize("size", [(175, 176), (176, 175), (90, 160)])
def test_too_small_for_ms_ssim_is_one_line_before_reading(size, tmp_path, capsys, monkeypatch):
    import admcuda.pipeline as P

    def refuse(*args, **kwargs):
        raise AssertionError("frames were read")

    monkeypatch.setattr(P, "run", refuse)
    w, h = size
    ref = tmp_path / "r.yuv"
    ref.write_bytes(bytes(w * h * 2))
    args = ["score", "-q", "-r", str(ref), "-d", str(ref), "-w", str(w), "-h", str(h),
            "-p", "400", "--feature", "float_ms_ssim", "-n", "--json",
            "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "float_ms_ssim needs frames of at least 176x176" in err[0], err
    assert f"not {w}x{h}" in err[0]


def test_without_numba_one_line(folder, tmp_path, capsys, monkeypatch):
    import admcuda.compiled

    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    ref, dis = GOLD.paths(CASES["ssim_8_odd"], folder)
    args = ["score", "-q", "-r", ref, "-d", dis, "-w", "33", "-h", "17", "-p", "400",
            "--feature", "float_ssim", "-n", "--json", "-o", str(tmp_path / "x.json")]  # fmt: skip
    assert main(args) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'admcuda[fast]'" in err[0], err


def test_engines_never_see_them(folder, monkeypatch):
    """A plan of host features alone starts no engine; beside a model's features the
    engine is given the plan without them."""
    seen = []
    start = backends.start_engine

    def spy(backend, *args, **kwargs):
        seen.append(kwargs["plan"])
        return start(backend, *args, **kwargs)

    monkeypatch.setattr(backends, "start_engine", spy)
    case = CASES["ms_ssim_8_odd"]
    w, h, fmt, bd = GOLD.geometry(case)
    ref, dis = GOLD.paths(case, folder)
    admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                  features=[GOLD.feature(case)], no_prediction=True)  # fmt: skip
    assert seen == []
    result = admcuda.score(ref, dis, width=w, height=h, pixel_format=fmt, bitdepth=bd,
                           features=["vif", GOLD.feature(case)], no_prediction=True)  # fmt: skip
    assert [ex.kind for ex in seen[0].extractors] == ["vif"]
    _check_frames([{n: f[n] for n in case["frames"][0]} for f in result], case)


def test_warm_up_and_cached_cover_the_kernels():
    from admcuda.compiled import ALL_KINDS, cached, warm_up

    assert {"float_ssim", "float_ms_ssim"} <= set(ALL_KINDS)
    assert warm_up((8,), ("float_ssim", "float_ms_ssim"))[-2:] == ["float_ssim", "float_ms_ssim"]
    assert cached(("ssim",)) in (True, None)


# --- libvmaf's own files ------------------------------------------------------------------------

OUTPUT_RUNS = {
    "ssim_model": ("3f", ["--model", "version=vmaf_v0.6.1", "--feature", "float_ssim",
                          "--feature", "float_ms_ssim=enable_lcs=true"]),
    "ssim_db_order": ("3f", ["-n", "--feature", "float_ms_ssim=enable_db=true:clip_db=true",
                             "--feature", "float_ssim=enable_db=true:scale=2"]),
    "ssim_motion_subsample3": ("48f", ["-n", "--feature", "float_ssim=enable_lcs=true",
                                       "--feature", "motion", "--subsample", "3"]),
}  # fmt: skip
PAIR_ARGS = {
    "3f": ["src01_hrc00_576x324_3f.yuv", "src01_hrc01_576x324_3f.yuv", "576", "324"],
    "48f": ["ref_160x90_48f.yuv", "dis_160x90_48f.yuv", "160", "90"],
}


def _printed(got: float, want: float) -> bool:
    """``got`` as libvmaf's tool prints it (``%.6f``) reads back as ``want``."""
    return float(f"{got:.6f}") == want


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
        assert all(_printed(got[k], v) for k, v in want.items()), (got, want)
    assert list(our_pool) == list(their_pool)
    for k, methods in their_pool.items():
        assert all(_printed(our_pool[k][m], v) for m, v in methods.items()), k
    assert our_agg == their_agg == {}


def test_a_plausible_wiring_mistake_fails(folder, tmp_path, monkeypatch):
    """An option dropped on the way to the kernel (here scale) gives other numbers than
    the goldens: the tests above would catch it."""
    real = V.ssim_frame

    def dropping(ex, ref, dis, bitdepth):
        import dataclasses

        return real(dataclasses.replace(ex, options=V.SsimOptions(enable_lcs=True)), ref, dis,
                    bitdepth)  # fmt: skip

    monkeypatch.setattr("admcuda.vmaf.host.ssim_frame", dropping)
    case = CASES["ssim_8_scale2"]
    doc = json.loads(GOLD.cli(case, folder, tmp_path / "out.json"))
    with pytest.raises(AssertionError):
        _check_frames([f["metrics"] for f in doc["frames"]], case)


def test_frames_keep_their_order_in_a_batch(folder, tmp_path):
    """48 frames in batches of 5 on the thread pool: each frame's doubles in its place."""
    case = CASES["netflix_48f_ssim_scale2"]
    out = GOLD.cli(case, folder, tmp_path / "out.json", "--batch", "5", "--threads", "2")
    doc = json.loads(out)
    _check_frames([f["metrics"] for f in doc["frames"]], case)
    assert np.all(np.diff([f["frameNum"] for f in doc["frames"]]) == 1)

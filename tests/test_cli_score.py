"""The ``admcuda score`` command line: errors, output files, example pair, real numbers."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import NETFLIX

import admcuda
import admcuda.ladder
from admcuda.cli.main import main
from admcuda.data import EXAMPLE
from admcuda.options import NON_DEBUG_BASE_NAMES, OUTPUT_BASE_NAMES, AdmOptions, feature_names

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "admcuda" / "data"

# sha256 of the committed example pair, as printed by `python -m admcuda.data.make_example`.
EXAMPLE_SHA256 = {
    "example_ref_176x144_3f.yuv": (
        "64ccea2e13cc91f194865196ff916057e47b5ba44fd9b67b6e14873af2fb9ba7"
    ),
    "example_dis_176x144_3f.yuv": (
        "ea38c2fc60fda8c8ecb5ad17cd53b32836760a43a52fbe18189d4bd7cee0c7dc"
    ),
}

# libvmaf's scalar C path on the example pair, all 18 outputs per frame in
# OUTPUT_BASE_NAMES order. Provenance: libvmaf 3.2.0 (/work/ext/libvmaf build),
# `python ../shared/tools/libvmaf_oracle.py libvmaf.so example_ref_176x144_3f.yuv
# example_dis_176x144_3f.yuv 176 144 420 8`, default options, 2026-11-29. The libvmaf
# CLI's %.6f print of the same run agrees (integer_adm2 0.715872, 0.725014, 0.731576).
EXAMPLE_GOLDEN = [
    [0.7158724529978999, 0.03708605594371876, 0.8393931985270906, 0.6684991932096592,
     0.5800204508262969, 0.6924730151320557, 0.7920880385043565, 0.7158724529978999,
     232.3793888092041, 324.6100444793701, 19.76542091369629, 29.566858291625977,
     30.45586395263672, 52.50825881958008, 69.17367553710938, 99.8936767578125,
     112.98442840576172, 142.64125061035156],
    [0.7250139406929947, 0.04099219717126032, 0.8420108717608672, 0.6779718927487527,
     0.5970405071221705, 0.7100935939422537, 0.7939793545831334, 0.7250139406929947,
     233.16651916503906, 321.6028079986572, 19.884845733642578, 29.329896926879883,
     32.61533737182617, 54.62834930419922, 67.87699890136719, 95.58880615234375,
     112.78933715820312, 142.05575561523438],
    [0.7315764770283604, 0.03718219301561335, 0.8471971420063735, 0.6791359158477047,
     0.6189731914986356, 0.7039204021825523, 0.8003646146326652, 0.7315764770283604,
     237.16264533996582, 324.1802501678467, 20.131959915161133, 29.643491744995117,
     32.93633270263672, 53.21124267578125, 66.08308410644531, 93.87863159179688,
     118.01126861572266, 147.44688415527344],
]  # fmt: skip


def run_cli(
    *args: str, cwd: Path | None = None, raw: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run the CLI; unless ``raw``, drop the notice that ``auto`` fell back to the CPU."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ADMCUDA_TRACEBACK", None)
    proc = subprocess.run(
        [sys.executable, "-m", "admcuda", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=300,
    )
    if not raw:
        proc.stderr = _without_notice(proc.stderr)
    return proc


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("admcuda: error: ")
    assert proc.stdout == ""
    return lines[0]


def write_clip(path: Path, w: int, h: int, frames: int, *, seed: int = 0, bits: int = 8):
    """A random 4:2:0 clip; returns the luma planes."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if bits == 8 else np.dtype("<u2")
    c = ((h + 1) // 2) * ((w + 1) // 2) * 2
    lumas = [rng.integers(0, 1 << bits, (h, w)).astype(dtype) for _ in range(frames)]
    path.write_bytes(b"".join(y.tobytes() + np.zeros(c, dtype).tobytes() for y in lumas))
    return lumas


@pytest.fixture
def clip_pair(tmp_path):
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    write_clip(ref, 32, 24, 2, seed=1)
    write_clip(dis, 32, 24, 2, seed=2)
    return ref, dis


@pytest.fixture
def stub_reference(monkeypatch):
    """Replace admcuda.reference with a stub: output i of a frame is i + mean(ref - dis)."""
    calls = []

    def compute_adm(ref, dis, bitdepth, opts):
        calls.append((ref.shape, ref.dtype, bitdepth, opts))
        shift = float(np.mean(ref.astype(np.float64) - dis)) / 1000.0
        return {name: i + shift for i, name in enumerate(OUTPUT_BASE_NAMES)}

    module = types.ModuleType("admcuda.reference")
    module.compute_adm = compute_adm  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "admcuda.reference", module)
    return calls


# Usage errors: exit 2, before anything is read or written.
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((), "missing command"),
        (("score",), "missing REF, DIS"),
        (("score", "a.yuv"), "missing DIS"),
        (("score", "a.yuv", "b.yuv", "-w", "abc", "-h", "32"), "invalid integer: 'abc'"),
        (("score", "a.yuv", "b.yuv", "-w", "16", "-h", "32"), "> 16"),
        (("score", "a.yuv", "b.yuv", "-h", "12"), "--height 12 is too small"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "-p", "411"), "invalid choice"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "-b", "9"), "invalid choice: 9"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--backend", "gpu"), "gpu"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--option", "egl"), "NAME=VALUE"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--option", "egl=0.5"), "[1, 100]"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--option", "bogus=1"), "bogus"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--option", "nvd=1"), "refuses"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--option", "ssz=1"), "true or"),
        (("score", "a.yuv", "b.yuv", "-w", "32", "-h", "32", "--json", "--csv"), "not allowed"),
        (("score", "a.yuv", "b.yuv", "c.yuv", "-w", "32", "-h", "32"), "several DIS inputs"),
        (("score", "a.yuv", "b.yuv", "--frame-cnt", "-1"), "--frame_cnt: -1 is out of range (must"),
        (("score", "a.yuv", "b.yuv", "--frame_cnt", "x"), "invalid integer: 'x'"),
        (("score", "a.yuv", "b.yuv", "--frame-skip-ref", "-1"), "out of range (must be >= 0)"),
        (("score", "a.yuv", "b.yuv", "--frame_skip_dist", "1.5"), "invalid integer"),
        (("score", "a.yuv", "b.yuv", "--subsample", "-2"), "--subsample: -2 is out of range"),
        (("score", "a.yuv", "b.yuv", "--frame-count", "3"), "unrecognized arguments"),
        # numbers too long for Python's int() (4,300 digits) or for any range
        (("score", "a.yuv", "b.yuv", "-w", "9" * 400, "-h", "32"), "a 400-digit number is out"),
        (("score", "a.yuv", "b.yuv", "--frame_cnt", "1" * 5000), "a 5000-digit number is out"),
        (("score", "a.yuv", "b.yuv", "--option", "csf=" + "9" * 400), "[0, 3], got a 400-digit"),
        (
            ("score", "a.yuv", "b.yuv", "--feature", "adm=adm_csf_mode=" + "1" * 5000),
            "a 5000-digit",
        ),
        (("score", "--example", "-w", "32"), "--example brings its own input"),
        (("score", "--example", "a.yuv"), "REF"),
        (("scor",), "invalid choice"),
        (("-h",), "unrecognized arguments: -h"),
    ],
)
def test_usage_errors(tmp_path, args, needle):
    out = tmp_path / "out.json"
    proc = run_cli(*args, "--output", str(out)) if args[:1] == ("score",) else run_cli(*args)
    line = assert_one_line_error(proc, 2)
    assert needle in line
    assert not out.exists()


def test_runtime_errors(tmp_path, clip_pair):
    ref, dis = clip_pair
    geometry = ("-w", "32", "-h", "24")
    cases = [
        (("score", str(tmp_path / "nope.yuv"), str(dis), *geometry), "reference file"),
        (("score", str(ref), str(tmp_path), *geometry), "is a directory"),
        (("score", str(ref), str(dis), "-w", "64", "-h", "64"), "less than one 64x64"),
        (("score", str(ref), str(dis), *geometry, "--backend", "cuda"), "backend 'cuda'"),
        (("score", str(ref), str(tmp_path / "d.txt"), *geometry), "not found"),
        (("score", str(ref), str(dis)), "is raw YUV: give --width and --height"),
        (("score", str(ref), str(dis), *geometry, "-o", str(tmp_path / "x" / "o.json")), "x"),
    ]
    empty = tmp_path / "empty.yuv"
    empty.write_bytes(b"")
    cases.append((("score", str(empty), str(dis), *geometry), "is empty"))
    for args, needle in cases:
        before = sorted(tmp_path.iterdir())
        line = assert_one_line_error(run_cli(*args), 1)
        assert needle in line, line
        assert sorted(tmp_path.iterdir()) == before


def test_help_and_version():
    top = run_cli("--help")
    assert top.returncode == 0 and "score" in top.stdout and top.stderr == ""
    score = run_cli("score", "--help")
    assert score.returncode == 0
    for word in ("--width", "--height", "-p", "--bitdepth", "adm_enhn_gain_limit (alias egl)"):
        assert word in score.stdout
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"admcuda {admcuda.__version__}"


# In-process runs with the stub reference: plumbing, naming, formats, atomicity.


def test_summary_with_stub(stub_reference, clip_pair, capsys):
    ref, dis = clip_pair
    assert main(["score", str(ref), str(dis), "-w", "32", "-h", "24"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "backend cpu: 2 frames, 32x24 420 8-bit" in out
    for name in NON_DEBUG_BASE_NAMES:
        assert f"  {name} " in out
    assert len(stub_reference) == 2
    shape, dtype, bitdepth, opts = stub_reference[0]
    assert shape == (24, 32) and dtype == np.uint8 and bitdepth == 8
    assert isinstance(opts, AdmOptions)


@pytest.mark.parametrize("debug_flag", [[], ["--debug"], ["--option", "debug=true"]])
def test_json_names_follow_options_and_debug(stub_reference, clip_pair, tmp_path, debug_flag):
    ref, dis = clip_pair
    out = tmp_path / "scores.json"
    args = ["score", str(ref), str(dis), "-w", "32", "-h", "24", "--json", "-o", str(out)]
    args += ["--option", "egl=1.2:ssz=true", "--option", "adm_norm_view_dist=4", *debug_flag]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    names = list(doc["frames"][0]["metrics"])
    bases = OUTPUT_BASE_NAMES if debug_flag else NON_DEBUG_BASE_NAMES
    assert names == [f"{b}_egl_1.2_nvd_4_ssz" for b in bases]
    assert list(doc["pooled_metrics"]) == names
    assert stub_reference[0][3].adm_enhn_gain_limit == 1.2


def test_frames_match_reader_order(stub_reference, tmp_path, capsys):
    ref, dis = tmp_path / "r.yuv", tmp_path / "d.yuv"
    r = write_clip(ref, 20, 18, 3, seed=5)
    d = write_clip(dis, 20, 18, 3, seed=6)
    main(["score", str(ref), str(dis), "-w", "20", "-h", "18", "--csv"])
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    for k in range(3):
        shift = float(np.mean(r[k].astype(np.float64) - d[k])) / 1000.0
        assert float(rows[k + 1][1]) == 0 + shift
        assert float(rows[k + 1][7]) == 6 + shift


@pytest.mark.parametrize(
    ("suffix", "flag", "check"),
    [
        (".json", [], lambda t: json.loads(t)["frames"]),
        (".csv", [], lambda t: t.startswith("Frame,integer_adm2,")),
        (".JSON", [], lambda t: json.loads(t)["frames"]),  # the suffix in any case
        (".Csv", [], lambda t: t.startswith("Frame,integer_adm2,")),
        (".SUB", [], lambda t: t.startswith("{0}{1}frame: 0|integer_adm2: ")),
        (".txt", [], lambda t: ET.fromstring(t).tag == "VMAF"),
        (".txt", ["--csv"], lambda t: t.startswith("Frame,")),
    ],
)
def test_output_format_choice(stub_reference, clip_pair, tmp_path, suffix, flag, check):
    ref, dis = clip_pair
    out = tmp_path / f"scores{suffix}"
    assert main(["score", str(ref), str(dis), "-w", "32", "-h", "24", "-o", str(out), *flag]) == 0
    assert check(out.read_text())


def test_format_to_stdout(stub_reference, clip_pair, capsys):
    ref, dis = clip_pair
    assert main(["score", str(ref), str(dis), "-w", "32", "-h", "24", "--xml", "-o", "-"]) == 0
    root = ET.fromstring(capsys.readouterr().out)
    assert root.find("params").get("qualityWidth") == "32"


def test_failure_while_scoring_leaves_no_output(stub_reference, tmp_path, capsys):
    ref, dis = tmp_path / "r.yuv", tmp_path / "d.yuv"
    write_clip(ref, 20, 18, 2, seed=1, bits=10)
    lumas = write_clip(dis, 20, 18, 2, seed=2, bits=10)
    lumas[1][0, 0] = 4000  # frame 1 does not fit 10 bits
    c = np.zeros(2 * 9 * 10, np.dtype("<u2")).tobytes()
    dis.write_bytes(b"".join(y.tobytes() + c for y in lumas))
    out = tmp_path / "out.json"
    code = main(["score", str(ref), str(dis), "-w", "20", "-h", "18", "-b", "10", "-o", str(out)])
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large for 10 bits" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.yuv", "r.yuv"]


def test_unexpected_exception_is_one_line(monkeypatch, clip_pair, capsys):
    ref, dis = clip_pair

    def broken(ref, dis, bitdepth, opts):
        raise ZeroDivisionError("boom")

    module = types.ModuleType("admcuda.reference")
    module.compute_adm = broken  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "admcuda.reference", module)
    monkeypatch.delenv("ADMCUDA_TRACEBACK", raising=False)
    assert main(["score", str(ref), str(dis), "-w", "32", "-h", "24"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "admcuda: error: internal error: ZeroDivisionError: boom "
        "(set ADMCUDA_TRACEBACK=1 for details)\n"
    )


def test_frame_count_mismatch_warns(stub_reference, tmp_path, capsys):
    ref, dis = tmp_path / "r.yuv", tmp_path / "d.yuv"
    write_clip(ref, 20, 18, 3)
    write_clip(dis, 20, 18, 2)
    assert main(["score", str(ref), str(dis), "-w", "20", "-h", "18"]) == 0
    out, err = capsys.readouterr()
    assert "2 frames" in out
    assert err.count("\n") == 1
    assert err.startswith(f"admcuda: warning: distorted file '{dis}' ended before reference file")
    assert err.endswith("(2 vs 3 frames); scoring the first 2\n")


def test_score_files_api(stub_reference, clip_pair):
    ref, dis = clip_pair
    frames = admcuda.score_files(ref, dis, width=32, height=24, options={"csf": "1"}, debug=True)
    assert len(frames) == 2
    assert list(frames[0]) == [f"{b}_csf_1" for b in OUTPUT_BASE_NAMES]


# Several distorted inputs (a ladder), frame controls, Y4M and video inputs.


def _json_frames(path: Path) -> list[dict]:
    return json.loads(path.read_text())["frames"]


def test_ladder_name_placeholder(stub_reference, tmp_path):
    ref, d1, d2 = tmp_path / "ref.yuv", tmp_path / "d1.yuv", tmp_path / "d2.yuv"
    write_clip(ref, 20, 18, 3, seed=1)
    write_clip(d1, 20, 18, 3, seed=2)
    write_clip(d2, 20, 18, 2, seed=3)
    out = tmp_path / "out_{name}.json"
    args = ["score", str(ref), str(d1), str(d2), "-w", "20", "-h", "18", "-o", str(out)]
    assert main(args) == 0
    for dis, frames in ((d1, 3), (d2, 2)):
        got = _json_frames(tmp_path / f"out_{dis.stem}.json")
        assert len(got) == frames
        single = tmp_path / f"single_{dis.stem}.json"
        assert main(["score", str(ref), str(dis), "-w", "20", "-h", "18", "-o", str(single)]) == 0
        assert got == _json_frames(single)


def test_ladder_index_placeholder_and_folder(stub_reference, tmp_path, capsys):
    ref, d1, d2 = tmp_path / "ref.yuv", tmp_path / "a.yuv", tmp_path / "b.yuv"
    for k, path in enumerate((ref, d1, d2)):
        write_clip(path, 20, 18, 2, seed=k)
    geometry = ["-w", "20", "-h", "18"]
    assert main(["score", str(ref), str(d1), str(d2), *geometry,
                 "-o", str(tmp_path / "rung{index}.csv")]) == 0  # fmt: skip
    assert (tmp_path / "rung1.csv").read_text().startswith("Frame,integer_adm2,")
    assert (tmp_path / "rung2.csv").is_file()
    folder = tmp_path / "scores"
    folder.mkdir()
    assert main(["score", str(ref), str(d1), str(d2), *geometry, "-o", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["a.xml", "b.xml"]
    assert main(["score", str(ref), str(d1), *geometry, "--json", "-o", str(folder)]) == 0
    assert _json_frames(folder / "a.json")
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--json"], "several DIS inputs: give --output a path with {name} or {index}"),
        (["--csv", "-o", "-"], "several DIS inputs"),
        (["-o", "OUT/scores.json"], "several DIS inputs but one --output"),
        (["-o", "OUT"], "would both write"),
        (["-o", "OUT/{name}.json"], "would both write"),
    ],
)
def test_ladder_output_errors(tmp_path, extra, needle):
    (tmp_path / "x").mkdir()
    ref, d1, d2 = tmp_path / "ref.yuv", tmp_path / "clip.yuv", tmp_path / "x" / "clip.yuv"
    for k, path in enumerate((ref, d1, d2)):
        write_clip(path, 20, 18, 2, seed=k)
    out = tmp_path / "out"
    out.mkdir()
    extra = [e.replace("OUT", str(out)) for e in extra]
    proc = run_cli("score", str(ref), str(d1), str(d2), "-w", "20", "-h", "18", *extra)
    assert needle in assert_one_line_error(proc, 2)
    assert list(out.iterdir()) == []


def test_ladder_summary_lists_each_input(stub_reference, tmp_path, capsys):
    ref, d1, d2 = tmp_path / "ref.yuv", tmp_path / "d1.yuv", tmp_path / "d2.yuv"
    for k, path in enumerate((ref, d1, d2)):
        write_clip(path, 20, 18, 2, seed=k)
    assert main(["score", str(ref), str(d1), str(d2), "-w", "20", "-h", "18"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert "backend cpu: 20x18 420 8-bit" in head and f"reference {ref}" in head
    assert [line.split()[:3] for line in lines] == [[str(d1), "2", "frames"],
                                                     [str(d2), "2", "frames"]]  # fmt: skip
    assert all(" integer_adm2 mean " in line and " harmonic_mean " in line for line in lines)


def test_subsample_keeps_frame_numbers(stub_reference, tmp_path, capsys):
    ref, dis = tmp_path / "r.yuv", tmp_path / "d.yuv"
    write_clip(ref, 20, 18, 5, seed=1)
    write_clip(dis, 20, 18, 5, seed=2)
    base = ["score", str(ref), str(dis), "-w", "20", "-h", "18", "--subsample", "2"]
    assert main([*base, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["frameNum"] for f in doc["frames"]] == [0, 2, 4]
    assert main([*base, "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert [row[0] for row in rows[1:]] == ["0", "2", "4"]
    assert main([*base, "--xml", "--frame-skip-ref", "1", "--frame_cnt", "3"]) == 0
    root = ET.fromstring(capsys.readouterr().out)
    assert [f.get("frameNum") for f in root.iter("frame")] == ["0", "2"]
    assert main(base) == 0
    assert "3 frames, 20x18 420 8-bit, subsample 2" in capsys.readouterr().out


def _y4m(raw: Path, w: int, h: int, out: Path | None = None) -> Path:
    out = out or raw.with_suffix(".y4m")
    frame = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    data = raw.read_bytes()
    body = b"".join(b"FRAME\n" + data[k : k + frame] for k in range(0, len(data), frame))
    out.write_bytes(f"YUV4MPEG2 W{w} H{h} F25:1 Ip C420jpeg\n".encode() + body)
    return out


def test_y4m_reference_gives_the_raw_geometry(stub_reference, tmp_path, capsys):
    ref, dis = tmp_path / "r.yuv", tmp_path / "d.yuv"
    write_clip(ref, 20, 18, 3, seed=1)
    write_clip(dis, 20, 18, 3, seed=2)
    assert main(["score", str(_y4m(ref, 20, 18)), str(dis), "--csv"]) == 0
    from_y4m = capsys.readouterr().out
    assert main(["score", str(ref), str(dis), "-w", "20", "-h", "18", "--csv"]) == 0
    assert from_y4m == capsys.readouterr().out


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: d.joinpath("notes.mp4").write_text("not a video\n"), "is not a video"),
        (lambda d: d.joinpath("bad.y4m").write_bytes(b"YUV4MPEG2 W20\n"), "no H tag"),
        (lambda d: d.joinpath("c.y4m").write_bytes(b"YUV4MPEG2 W20 H18 C411\n"), "C411"),
        (lambda d: d.joinpath("bad.y4m").write_bytes(b"YUV4MPEG2 " + b"W" * 2000), "end of line"),
        (lambda d: d.joinpath("big.y4m").write_bytes(b"YUV4MPEG2 W40 H18\nFRAME\n"), "40x18"),
        (lambda d: d.joinpath("x_1920x1080.yuv").write_bytes(b"1" * 99), "suggests 1920x1080"),
    ],
)
def test_bad_distorted_inputs(tmp_path, make, needle):
    pytest.importorskip("imageio_ffmpeg")
    ref = tmp_path / "r.yuv"
    write_clip(ref, 20, 18, 2)
    ref_y4m = _y4m(ref, 20, 18)
    make(tmp_path)
    (bad,) = [p for p in tmp_path.iterdir() if p not in (ref, ref_y4m)]
    out = tmp_path / "out.json"
    line = assert_one_line_error(run_cli("score", str(ref_y4m), str(bad), "-o", str(out)), 1)
    assert needle in line
    assert not out.exists()


@pytest.mark.skipif(
    "errors" not in getattr(admcuda.ladder.LadderRun, "__dataclass_fields__", {}),
    reason="run_ladder does not report per-rung errors yet",
)
def test_ladder_failure_keeps_the_other_rungs(stub_reference, tmp_path, capsys):
    ref, good, bad = tmp_path / "r.yuv", tmp_path / "good.yuv", tmp_path / "bad.yuv"
    write_clip(ref, 20, 18, 2, bits=10)
    write_clip(good, 20, 18, 2, seed=2, bits=10)
    lumas = write_clip(bad, 20, 18, 2, seed=3, bits=10)
    lumas[1][0, 0] = 4000
    chroma = np.zeros(2 * 9 * 10, np.dtype("<u2")).tobytes()
    bad.write_bytes(b"".join(y.tobytes() + chroma for y in lumas))
    args = ["score", str(ref), str(good), str(bad), "-w", "20", "-h", "18", "-b", "10",
            "-o", str(tmp_path / "{name}.json")]  # fmt: skip
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too large for 10 bits" in err and "bad.yuv" in err
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["bad.yuv", "good.json", "good.yuv", "r.yuv"]


def test_ladder_that_falls_back_warns_once(stub_reference, tmp_path, capsys):
    """A ladder with a rung that cannot open is opened again rung by rung: each warning of
    the other rungs is printed once, not once a pass."""
    ref, short = tmp_path / "r.yuv", tmp_path / "short.yuv"
    write_clip(ref, 20, 18, 3)
    write_clip(short, 20, 18, 1, seed=2)  # 1 frame of 3: a warning when it is opened
    args = ["score", str(ref), str(short), str(tmp_path / "missing.yuv"), "-w", "20", "-h",
            "18", "-o", str(tmp_path / "{name}.json")]  # fmt: skip
    assert main(args) == 1
    lines = capsys.readouterr().err.splitlines()
    assert any("missing.yuv" in line and "not found" in line for line in lines)
    warnings = [line for line in lines if "warning" in line]
    assert any("holds 1 (at" in line for line in warnings)
    assert len(warnings) == len(set(warnings)), lines
    assert (tmp_path / "short.json").is_file()


def test_score_ladder_api(stub_reference, clip_pair, tmp_path):
    ref, dis = clip_pair
    ladder = admcuda.score_ladder(ref, [dis, dis], width=32, height=24, backend="cpu")
    assert ladder[0] == ladder[1] == admcuda.score_files(ref, dis, width=32, height=24)
    assert "score_ladder" in admcuda.__all__


# Real numbers: need the package's CPU reference (admcuda.reference).


def test_example_files_are_pinned():
    for name, digest in EXAMPLE_SHA256.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest
    for name in (EXAMPLE.ref, EXAMPLE.dis):
        assert (DATA / name).stat().st_size == EXAMPLE.frames * 176 * 144 * 3 // 2


def _without_notice(stderr: str) -> str:
    """stderr less the one-line notice that --backend auto fell back to the CPU."""
    return "".join(line for line in stderr.splitlines(True) if ": notice: " not in line)


def test_auto_takes_the_cpu_quietly_and_a_gpu_asked_for_gets_one_notice(capsys, monkeypatch):
    """``auto`` falling back to the CPU is what it is for: not said, even to a terminal.
    ``--gpu N`` asked for a GPU: its being dropped is said, in one line, unless -q."""
    from admcuda import backends

    def notices() -> list[str]:
        err = capsys.readouterr().err.replace("\r", "\n")  # a progress bar, on a terminal
        return [line for line in err.splitlines() if line.startswith("admcuda:")]

    monkeypatch.setattr(backends, "BACKENDS", ("nope", "cpu"))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["score", "--example", "--backend", "auto"]) == 0
    assert notices() == []
    assert main(["score", "--example", "--gpu", "0"]) == 0
    notes = notices()
    assert len(notes) == 1 and notes[0].startswith("admcuda: notice: --gpu 0 was given, but ")
    assert "nope" in notes[0] and notes[0].endswith("; scored on the CPU")
    assert main(["score", "--example", "--gpu", "0", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_example_matches_libvmaf(tmp_path):
    out = tmp_path / "example.json"
    proc = run_cli("score", "--example", "--debug", "--json", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    mean_adm2 = sum(frame[0] for frame in EXAMPLE_GOLDEN) / 3
    assert proc.stderr == "" and proc.stdout == f"integer_adm2: {mean_adm2:.6f}\n"
    doc = json.loads(out.read_text())
    got = [list(frame["metrics"].values()) for frame in doc["frames"]]
    assert list(doc["frames"][0]["metrics"]) == list(OUTPUT_BASE_NAMES)
    assert got == EXAMPLE_GOLDEN


def test_example_summary():
    proc = run_cli("score", "--example")
    assert proc.returncode == 0, proc.stderr
    assert "3 frames, 176x144 420 8-bit" in proc.stdout
    mean_adm2 = sum(frame[0] for frame in EXAMPLE_GOLDEN) / 3
    assert f"integer_adm2        {mean_adm2:.6f}" in proc.stdout


def _netflix_cases() -> list[dict]:
    path = NETFLIX / "cases.json"
    return json.loads(path.read_text()) if path.exists() else []


def _same(want: float | None, got: float | None) -> bool:
    if want is None or got is None:
        return want is None and got is None
    return want == got or (math.isnan(want) and math.isnan(got))


@pytest.mark.skipif(not NETFLIX.is_dir(), reason="../shared/netflix not present")
@pytest.mark.parametrize("case", _netflix_cases(), ids=lambda c: c["name"])
def test_netflix_goldens_through_cli(tmp_path, case):
    # Goldens: ../shared/netflix/goldens.json (libvmaf 3.2.0 scalar C path, see its README).
    golden = json.loads((NETFLIX / "goldens.json").read_text())[case["name"]]["frames"]
    out = tmp_path / "scores.json"
    args = [
        "score", str(NETFLIX / case["ref"]), str(NETFLIX / case["dis"]),
        "-w", str(case["w"]), "-h", str(case["h"]),
        "-p", case["fmt"], "-b", str(case["bitdepth"]),
        "--debug", "--json", "--output", str(out),
    ]  # fmt: skip
    for key, value in case["options"].items():
        args += ["--option", f"{key}={value}"]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    names = feature_names(AdmOptions.from_mapping(case["options"]))
    assert len(doc["frames"]) == len(golden)
    for index, (frame, want) in enumerate(zip(doc["frames"], golden, strict=True)):
        assert frame["frameNum"] == index
        assert list(frame["metrics"]) == [names[b] for b in OUTPUT_BASE_NAMES]
        for base in OUTPUT_BASE_NAMES:
            got = frame["metrics"][names[base]]
            assert _same(want[base], got), (index, base, want[base], got)


def test_example_as_y4m_and_ffv1_matches_libvmaf(tmp_path):
    """The example pair wrapped in Y4M and encoded losslessly scores exactly as raw."""
    ref = _y4m(DATA / EXAMPLE.ref, 176, 144, tmp_path / "ref.y4m")
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    dis = tmp_path / "dis.mkv"
    subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-v", "error", "-f", "rawvideo",
         "-pix_fmt", "yuv420p", "-s", "176x144", "-i", str(DATA / EXAMPLE.dis), "-c:v", "ffv1",
         str(dis)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    inputs = [str(ref), str(dis)]
    out = tmp_path / "scores.json"
    proc = run_cli("score", *inputs, "--debug", "--json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _without_notice(proc.stderr) == ""
    got = [list(frame["metrics"].values()) for frame in json.loads(out.read_text())["frames"]]
    assert got == EXAMPLE_GOLDEN


def _cli_env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def test_output_never_replaces_an_input_a_link_a_fifo_or_a_pipe(clip_pair, tmp_path):
    """Outputs are written through a temporary file and a rename, which would replace
    whatever the path is: an input is refused, a link's file is replaced (the link
    stays), and a FIFO or a /dev/fd pipe is written into."""
    import threading

    ref, dis = clip_pair
    geometry = ("-w", "32", "-h", "24")
    before = dis.read_bytes()
    for out in (dis, tmp_path / "link_to_dis.yuv"):
        if out != dis:
            out.symlink_to(dis)
        proc = run_cli("score", str(ref), str(dis), *geometry, "--json", "-o", str(out))
        assert f"is the input '{dis}'" in assert_one_line_error(proc, 2)
        assert dis.read_bytes() == before
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run_cli("score", str(ref), str(dis), *geometry, "-o", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(target.read_text())["frames"]
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    assert run_cli("score", str(ref), str(dis), *geometry, "--csv", "-o", str(fifo)).returncode == 0
    reader.join(timeout=60)
    assert got and got[0].startswith("Frame,") and fifo.is_fifo()
    read_end, write_end = os.pipe()
    env = _cli_env()
    child = subprocess.Popen(
        [sys.executable, "-m", "admcuda", "score", str(ref), str(dis), *geometry, "--csv",
         "-o", f"/dev/fd/{write_end}", "--backend", "cpu"],
        pass_fds=(write_end,), env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    assert child.wait(timeout=120) == 0, child.stderr.read()
    assert text.startswith("Frame,") and len(text.splitlines()) == 3


def test_empty_output_path_and_closed_stdout_are_errors(clip_pair):
    ref, dis = clip_pair
    geometry = ("-w", "32", "-h", "24")
    proc = run_cli("score", str(ref), str(dis), *geometry, "-o", "")
    assert "--output is empty" in assert_one_line_error(proc, 2)
    env = _cli_env()
    for extra in (["--json"], []):
        proc = subprocess.run(
            [sys.executable, "-m", "admcuda", "score", str(ref), str(dis), *geometry,
             "--backend", "cpu", *extra],
            stdout=None, stderr=subprocess.PIPE, text=True, env=env,
            preexec_fn=lambda: os.close(1),  # noqa: PLW1509 - the child's stdout, closed
        )  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        assert (
            proc.stderr.strip() == "admcuda: error: standard output is closed; give --output PATH"
        )


def test_cpu_workers_leave_ctrl_c_to_the_parent():
    code = (
        "import signal; from admcuda.backends.cpu import _worker_init; _worker_init(); "
        "print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "True", out.stderr


def test_outputs_through_descriptors_links_and_failed_ladders(clip_pair, tmp_path):
    """-o /dev/stdout writes through the open descriptor (a shell's >> keeps what was
    there); standard input read from a file cannot be overwritten; a ladder that fails
    late removes only regular files it made, never a link or a device; a trailing slash,
    a loop of links and a name as long as names may be are handled."""
    ref, dis = clip_pair
    geometry = ("-w", "32", "-h", "24")
    base = [sys.executable, "-m", "admcuda", "score", "--backend", "cpu", *geometry]
    log = tmp_path / "log.txt"
    log.write_text("earlier line\n")
    with open(log, "a") as out:
        args = [*base, str(ref), str(dis), "--csv", "-o", "/dev/stdout"]
        proc = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, text=True, env=_cli_env())
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert text.startswith("earlier line\nFrame,") and len(text.splitlines()) == 4
    before = ref.read_bytes()
    with open(ref, "rb") as stdin:
        proc = subprocess.run([*base, "-", str(dis), "--csv", "-o", str(ref)], stdin=stdin,
                              capture_output=True, text=True, env=_cli_env())  # fmt: skip
    assert "is standard input; write elsewhere" in assert_one_line_error(proc, 2)
    assert ref.read_bytes() == before
    outs = tmp_path / "outs"
    outs.mkdir()
    (outs / "a.csv").symlink_to("/dev/null")  # written into, never removed
    (outs / "b.csv").symlink_to("/dev/full")  # writing fails: no space left on device
    rungs = [tmp_path / "a.yuv", tmp_path / "b.yuv"]
    for rung in rungs:
        rung.write_bytes(dis.read_bytes())
    proc = run_cli("score", str(ref), *map(str, rungs), *geometry, "--csv", "-o",
                   str(outs / "{name}.csv"))  # fmt: skip
    assert proc.returncode == 1 and f"'{outs / 'b.csv'}'" in proc.stderr
    assert (outs / "a.csv").is_symlink() and (outs / "b.csv").is_symlink()
    proc = run_cli("score", str(ref), str(dis), *geometry, "-o", str(tmp_path / "nodir") + "/")
    assert "output folder" in assert_one_line_error(proc, 1) and not (tmp_path / "nodir").exists()
    (tmp_path / "l1.csv").symlink_to("l2.csv")
    (tmp_path / "l2.csv").symlink_to("l1.csv")
    proc = run_cli("score", str(ref), str(dis), *geometry, "-o", str(tmp_path / "l1.csv"))
    assert "cannot be resolved" in assert_one_line_error(proc, 1)
    long = tmp_path / ("n" * 250 + ".csv")
    assert run_cli("score", str(ref), str(dis), *geometry, "-o", str(long)).returncode == 0
    assert long.read_text().startswith("Frame,")


def test_output_paths_that_lead_to_descriptors_and_ladders_that_fail_late(clip_pair, tmp_path):
    """Any spelling of /dev/stdout (a link to it, //dev/stdout, /dev/../dev/stdout) writes
    through the descriptor; a ladder whose later output fails leaves the files that were
    there as they were; a pipe whose reader went away is a one-line error."""
    from admcuda.report.writers import write_output

    ref, dis = clip_pair
    geometry = ("-w", "32", "-h", "24")
    base = [sys.executable, "-m", "admcuda", "score", "--backend", "cpu", *geometry, "--csv"]
    link = tmp_path / "so"
    link.symlink_to("/dev/stdout")
    for spelling in (str(link), "//dev/stdout", "/dev/../dev/stdout", "/proc/self/fd/1"):
        log = tmp_path / "log.txt"
        log.write_text("OLD\n")
        inode = log.stat().st_ino
        with open(log, "a") as out:
            proc = subprocess.run([*base, str(ref), str(dis), "-o", spelling], stdout=out,
                                  stderr=subprocess.PIPE, text=True, env=_cli_env())  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert log.read_text().startswith("OLD\nFrame,") and log.stat().st_ino == inode
    folder, other = tmp_path / "d", tmp_path / "other"
    folder.mkdir()
    other.mkdir()
    (folder / "a.csv").write_text("USERDATA\n")
    (other / "keep.csv").write_text("KEEP\n")
    (folder / "c.csv").symlink_to(other / "keep.csv")
    (folder / "b.csv").symlink_to("/dev/full")
    rungs = [tmp_path / f"{name}.yuv" for name in ("a", "b", "c")]
    for rung in rungs:
        rung.write_bytes(dis.read_bytes())
    proc = run_cli("score", str(ref), *map(str, rungs), *geometry, "--csv", "-o",
                   str(folder / "{name}.csv"))  # fmt: skip
    assert proc.returncode == 1 and "No space left on device" in proc.stderr
    assert (folder / "a.csv").read_text() == "USERDATA\n"
    assert (other / "keep.csv").read_text() == "KEEP\n" and (folder / "c.csv").is_symlink()
    assert sorted(p.name for p in folder.iterdir()) == ["a.csv", "b.csv", "c.csv"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    args = [*base, str(ref), str(dis), "-o", f"/dev/fd/{write_end}"]
    proc = subprocess.run(
        args, pass_fds=(write_end,), capture_output=True, text=True, env=_cli_env()
    )
    os.close(write_end)
    assert "its reader closed it" in assert_one_line_error(proc, 1)
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "nowhere" / "x.csv")
    proc = run_cli("score", str(ref), str(dis), *geometry, "-o", str(dangling))
    assert f"output path '{dangling}' leads to folder" in assert_one_line_error(proc, 1)
    kept = tmp_path / "t.csv"
    kept.write_text("T\n")
    with pytest.raises(NotADirectoryError, match="t.csv/"):
        write_output("csv", [{"integer_adm2": 0.5}], f"{kept}/", version="v", width=32, height=24)
    assert kept.read_text() == "T\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_score_to_a_full_standard_output_fails_in_one_line():
    ref, dis = str(DATA / EXAMPLE.ref), str(DATA / EXAMPLE.dis)
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "admcuda", "score", ref, dis, "-w", "176", "-h", "144",
             "--backend", "cpu", "-q", "--csv"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr


_STDOUT_RUNS = {
    "summary": ["score", "--example", "--backend", "cpu", "-q"],
    "csv": ["score", "--example", "--backend", "cpu", "-q", "--csv"],
    "json -o -": ["score", "--example", "--backend", "cpu", "-q", "--json", "-o", "-"],
    "help": ["--help"],
    "plot help": ["plot", "--help"],
    "batch help": ["batch", "--help"],
}


def _run_with_stdout(argv, stdout, unbuffered):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ADMCUDA_TRACEBACK", None)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "admcuda", *argv], stdout=stdout, stderr=subprocess.PIPE,
        text=True, timeout=300, env=env,
    )  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("run", list(_STDOUT_RUNS))
def test_full_standard_output_is_named_in_one_line(run, unbuffered):
    """A standard output that cannot be written, whatever writes it (and whether Python
    buffers it, so that the write fails in the interpreter's flush at exit): one line
    naming it, as -o /dev/full names that path; status 1."""
    with open("/dev/full", "w") as full:
        proc = _run_with_stdout(_STDOUT_RUNS[run], full, unbuffered)
    assert (proc.returncode, proc.stderr) == (
        1, "admcuda: error: No space left on device: standard output\n"
    )  # fmt: skip


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_failing_subcommand_with_a_full_standard_output_is_one_line(tmp_path, unbuffered):
    """A subcommand that fails (its line printed, status 1) and wrote nothing to a full
    standard output: that line alone (flushing stdout after it added a second)."""
    pytest.importorskip("matplotlib")  # plot checks for it before reading its inputs
    missing = tmp_path / "nope.json"
    with open("/dev/full", "w") as full:
        proc = _run_with_stdout(["plot", str(missing), "-o", str(tmp_path / "p.png")], full,
                                unbuffered)  # fmt: skip
    assert (proc.returncode, proc.stderr) == (
        1, f"admcuda: error: No such file or directory: '{missing}'\n"
    )  # fmt: skip


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("run", list(_STDOUT_RUNS))
def test_standard_output_reader_gone_is_quiet(run, unbuffered):
    """A reader of standard output gone before anything is written (``| head -c0``):
    status 1 and nothing on stderr, as score stopped before, for help text too."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = _run_with_stdout(_STDOUT_RUNS[run], write_end, unbuffered)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")


def test_msb_aligned_10bit_file_hint(tmp_path, capsys):
    """The Netflix 10-bit distorted clip as p010 stores it (value << 6), in a file whose
    name says nothing: score's one-line range error asks whether the samples are
    MSB-aligned and names yuv420p10le; nothing is written."""
    ref = NETFLIX / "src01_hrc00_576x324.yuv420p10le.yuv"
    dis = NETFLIX / "src01_hrc01_576x324.yuv420p10le.yuv"
    if not dis.is_file():
        pytest.skip(f"shared Netflix clips not found at {NETFLIX}")
    samples = np.fromfile(dis, np.dtype("<u2"))
    shifted = tmp_path / "shifted.yuv"
    (samples << 6).astype("<u2").tofile(shifted)
    peak = int(samples[: 576 * 324].max()) << 6
    out = tmp_path / "o.json"
    argv = ["score", str(ref), str(shifted), "-w", "576", "-h", "324", "-b", "10", "-q"]
    assert main([*argv, "-o", str(out)]) == 1
    assert capsys.readouterr() == ("", (
        f"admcuda: error: distorted file '{shifted}' frame 0 has sample value {peak}, too "
        "large for 10 bits, and every sample is a multiple of 64: is --bitdepth right, or are "
        "they 10-bit samples in the high bits (MSB-aligned, as in p010)? Convert such a file "
        "(ffmpeg ... -pix_fmt yuv420p10le out.yuv)\n"
    ))  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shifted.yuv"]


def test_stats_line_gives_durations_not_clock_readings(capsys):
    assert main(["score", "--example", "--stats", "-q"]) == 0
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("admcuda: stats: ")]
    stats = dict(pair.split("=", 1) for pair in line.split(": ", 2)[2].split())
    assert {"frames", "batches", "startup_s", "scored_s"} <= set(stats)
    assert "first_done" not in stats and "end" not in stats
    assert 0 <= float(stats["startup_s"]) <= float(stats["scored_s"]) < 3600


@pytest.mark.parametrize(
    ("mode", "extra"),
    [("r+b", ["--json", "-o", "-"]), ("r+b", ["--json"]), ("ab", ["--json"]), ("ab", [])],
    ids=["json-o-dash-1<>", "json-stdout-1<>", "json-stdout->>", "summary->>"],
)
def test_standard_output_opened_on_an_input_is_refused(clip_pair, mode, extra):
    """A shell's ``1<>ref`` or ``>> ref`` opens standard output on an input: refused
    before anything is read or written, the input left as it was."""
    ref, dis = clip_pair
    before = ref.read_bytes()
    args = [sys.executable, "-m", "admcuda", "score", str(ref), str(dis), "-w", "32", "-h",
            "24", "--backend", "cpu", *extra]  # fmt: skip
    with open(ref, mode) as out:
        proc = subprocess.run(args, stdout=out, stderr=subprocess.PIPE, text=True, env=_cli_env())
    proc.stdout = ""
    line = assert_one_line_error(proc, 2)
    assert line.endswith(f"standard output is the input '{ref}'; redirect it elsewhere")
    assert ref.read_bytes() == before


def test_standard_output_to_a_pipe_or_another_file_is_written(clip_pair, tmp_path):
    """Only a file that is an input is refused: standard output on another regular file
    (or a pipe, as run_cli gives) gets the scores, while standard input is a file."""
    ref, dis = clip_pair
    log = tmp_path / "scores.json"
    args = [sys.executable, "-m", "admcuda", "score", "-", str(dis), "-w", "32", "-h", "24",
            "--backend", "cpu", "--json"]  # fmt: skip
    with open(ref, "rb") as stdin, open(log, "wb") as out:
        proc = subprocess.run(args, stdin=stdin, stdout=out, stderr=subprocess.PIPE, env=_cli_env())
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(log.read_text())["frames"]) == 2
    assert run_cli("score", str(ref), str(dis), "-w", "32", "-h", "24", "--json").returncode == 0


def test_output_onto_a_read_only_input_is_named_as_the_input(clip_pair, tmp_path):
    """-o onto an input that is also read-only (source clips often are): the error says
    that it is the input, as for any other input, not that it cannot be written."""
    ref, dis = clip_pair
    dis.chmod(0o444)
    before = dis.read_bytes()
    for flags in ((str(ref), str(dis)), ("-r", str(ref), "-d", str(dis))):
        proc = run_cli("score", *flags, "-w", "32", "-h", "24", "--json", "-o", str(dis))
        line = assert_one_line_error(proc, 2)
        assert line.endswith(f"--output '{dis}' is the input '{dis}'; write elsewhere")
        assert dis.read_bytes() == before


def test_output_onto_a_read_only_file_is_refused_before_scoring(clip_pair, tmp_path):
    """-o onto an existing 0444 file: one line before any work, the file kept; an
    existing 0600 file is replaced and keeps its mode."""
    ref, dis = clip_pair
    locked = tmp_path / "locked.json"
    locked.write_text("kept")
    locked.chmod(0o444)
    proc = run_cli("score", str(ref), str(dis), "-w", "32", "-h", "24", "--json", "-o",
                   str(locked))  # fmt: skip
    line = assert_one_line_error(proc, 1)
    assert line.endswith(f"output path '{locked}' is a read-only file: Permission denied")
    assert locked.read_text() == "kept" and locked.stat().st_mode & 0o777 == 0o444
    private = tmp_path / "private.json"
    private.write_text("old")
    private.chmod(0o600)
    proc = run_cli("score", str(ref), str(dis), "-w", "32", "-h", "24", "--json", "-o",
                   str(private))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(private.read_text())["frames"]
    assert private.stat().st_mode & 0o777 == 0o600


# ---- flags that do not fit the files -----------------------------------------------------------


def _score_cli(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "admcuda", "score", *map(str, args)], capture_output=True,
        text=True, cwd=cwd, env=env, timeout=300, check=False,
    )  # fmt: skip


def _shared(name):
    path = NETFLIX / name
    if not path.is_file():
        pytest.skip(f"shared clip {path} not found")
    return path


def test_flags_that_do_not_fit_the_files_stop_in_one_line(tmp_path):
    """576x324 4:2:0 8-bit files read at 176x144 (or 4:4:4) are not whole frames: refused
    in one line naming the sizes, nothing written (27 frames of garbage were scored); with
    --allow-partial-frame the whole frames are read as before, with a warning."""
    for tag in ("00", "01"):  # names without their size: the size check is the one to fire
        (tmp_path / f"{tag}.yuv").write_bytes(
            _shared(f"src01_hrc{tag}_576x324_3f.yuv").read_bytes()
        )
    out = tmp_path / "o.json"
    for flags, said in (
        (["-w", "176", "-h", "144"], "not a whole number of 176x144 420 8-bit frames of 38016 "
         "bytes: 22 whole frames and 3456 bytes over"),
        (["-w", "576", "-h", "324", "-p", "444"], "not a whole number of 576x324 444 8-bit "
         "frames of 559872 bytes: 1 whole frame and 279936 bytes over"),
    ):  # fmt: skip
        proc = _score_cli("00.yuv", "01.yuv", *flags, "-o", out, cwd=tmp_path)
        assert proc.returncode != 0 and proc.stderr.count("\n") == 1, proc.stderr
        assert "reference file '00.yuv' has 839808 bytes, " + said in proc.stderr
        assert "give --allow-partial-frame" in proc.stderr and not out.exists()
    proc = _score_cli("00.yuv", "01.yuv", "-w", "176", "-h", "144", "--allow-partial-frame",
                      "-o", out, cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "not a multiple of the 176x144 420 8-bit frame size" in proc.stderr
    assert len(json.loads(out.read_text())["frames"]) == 22


def test_bit_depths_that_do_not_fit_the_samples(tmp_path):
    """The shared 10-bit pair: named the Netflix way it is refused without -b, and so it
    is unnamed (its samples plainly 10-bit); with -b 12 or -b 16 it scores with a warning
    that its samples are 10-bit; -b 8 keeps reading it as 8-bit, with the old warning."""
    pair = []
    for tag in ("00", "01"):
        data = _shared(f"src01_hrc{tag}_576x324.yuv420p10le.yuv").read_bytes()
        (tmp_path / f"n{tag}_576x324.yuv42010le.yuv").write_bytes(data)
        (tmp_path / f"{tag}.yuv").write_bytes(data)
        pair.append(f"{tag}.yuv")
    geo = ["-w", "576", "-h", "324"]
    named = _score_cli("n00_576x324.yuv42010le.yuv", "n01_576x324.yuv42010le.yuv", *geo,
                       "--json", cwd=tmp_path)  # fmt: skip
    assert named.returncode != 0 and named.stderr.count("\n") == 1, named.stderr
    assert "its name says 10-bit but --bitdepth is 8 (default); give -b 10" in named.stderr
    plain = _score_cli(*pair, *geo, "--json", cwd=tmp_path)
    assert plain.returncode != 0 and plain.stderr.count("\n") == 1, plain.stderr
    assert "(no --bitdepth given), but every second byte of its first frame" in plain.stderr
    for bits in ("12", "16"):
        proc = _score_cli(*pair, *geo, "-b", bits, "--json", "--frame-cnt", "1", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.count("as in 10-bit samples; if it is, give --bitdepth 10") == 2
    proc = _score_cli(*pair, *geo, "-b", "10", "--json", "--frame-cnt", "1", cwd=tmp_path)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    proc = _score_cli(*pair, *geo, "-b", "8", "--json", "--frame-cnt", "1", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr.count("every second byte") == 2, proc.stderr

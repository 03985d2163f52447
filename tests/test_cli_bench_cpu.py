"""``admcuda bench``'s CPU rows: the commands each row runs, and a whole run on tiny files
(the NumPy engine, a stand-in ``vmaf``, ffmpeg's filter where its build has it). What is
tested is that the rows run and print, never a speed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import admcuda.backends.cuda as gpu
import admcuda.compiled
from admcuda.cli import bench, bench_cpu


def _rows(**kw):
    args = dict(
        frames=16, numpy_frames=2, threads=[1, 4], engines=["compiled", "numpy"],
        vmaf="/opt/vmaf", ffmpeg="/opt/ffmpeg",
    )  # fmt: skip
    args.update(kw)
    folder = Path("/t")
    return bench_cpu.cpu_rows(folder, folder / "r.yuv", folder / "d.yuv", 64, 48, 8, **args)


def test_rows_and_their_commands():
    rows = _rows()
    assert [(r.label, r.threads) for r in rows] == [
        ("admcuda VMAF, compiled engine", 1), ("admcuda VMAF, compiled engine", 4),
        ("admcuda VMAF, numpy engine", 1), ("admcuda VMAF, numpy engine", 4),
        ("libvmaf vmaf VMAF", 1), ("libvmaf vmaf VMAF", 4),
        ("ffmpeg libvmaf filter VMAF", 1), ("ffmpeg libvmaf filter VMAF", 4),
        ("admcuda ADM, compiled engine", 1), ("admcuda ADM, compiled engine", 4),
        ("admcuda ADM, numpy engine", 1), ("admcuda ADM, numpy engine", 4),
        ("libvmaf vmaf ADM", 1), ("libvmaf vmaf ADM", 4),
        ("cat of both files", 1),
    ]  # fmt: skip
    by = {(r.label, r.threads): r for r in rows}
    geometry = "-r /t/r.yuv -d /t/d.yuv -w 64 -h 48 -p 420 -b 8"
    r = by["admcuda VMAF, compiled engine", 4]
    assert r.argv()[:4] == [sys.executable, "-m", "admcuda", "score"]
    assert " ".join(r.argv()[4:]) == (
        f"{geometry} --model version=vmaf_v0.6.1 --backend cpu --threads 4 -q --json "
        "-o /t/admcuda-vmaf-compiled-4.json"
    )
    assert r.env == {"ADMCUDA_CPU_ENGINE": "compiled"} and r.frames == 16 and r.key == "vmaf"
    r = by["admcuda ADM, numpy engine", 1]
    assert " ".join(r.argv()[4:]) == (
        f"{geometry} --feature adm -n --frame-cnt 2 --backend cpu --threads 1 -q --json "
        "-o /t/admcuda-adm-numpy-1.json"
    )
    assert r.env == {"ADMCUDA_CPU_ENGINE": "numpy"} and r.frames == 2
    assert r.key == "integer_adm2" and r.output == Path("/t/admcuda-adm-numpy-1.json")
    assert " ".join(by["libvmaf vmaf VMAF", 4].argv()) == (
        f"/opt/vmaf {geometry} --model version=vmaf_v0.6.1 --threads 4 -q --json "
        "-o /t/vmaf-vmaf-4.json"
    )
    assert " ".join(by["libvmaf vmaf ADM", 1].argv()) == (
        f"/opt/vmaf {geometry} --feature adm -n --threads 1 -q --json -o /t/vmaf-adm-1.json"
    )
    raw = "-f rawvideo -pix_fmt yuv420p -s 64x48"
    assert " ".join(by["ffmpeg libvmaf filter VMAF", 4].argv()) == (
        f"/opt/ffmpeg -nostdin -v error {raw} -i /t/d.yuv {raw} -i /t/r.yuv -lavfi "
        "libvmaf=model=version=vmaf_v0.6.1:n_threads=4:log_fmt=json:log_path=/t/ffmpeg-vmaf-4.json "
        "-f null -"
    )
    assert by["cat of both files", 1].argv() == ["cat", "/t/r.yuv", "/t/d.yuv"]
    # The form printed under the table: T for the threads.
    assert "--threads T" in " ".join(by["admcuda VMAF, numpy engine", 1].command("T"))


def test_rows_without_libvmaf_and_at_ten_bits():
    rows = _rows(vmaf=None, ffmpeg=None, engines=["numpy"], threads=[1])
    assert [r.label for r in rows] == [
        "admcuda VMAF, numpy engine", "admcuda ADM, numpy engine", "cat of both files"
    ]  # fmt: skip
    folder = Path("/t")
    rows = bench_cpu.cpu_rows(folder, folder / "r.yuv", folder / "d.yuv", 64, 48, 10,
                              frames=4, numpy_frames=8, threads=[2], engines=["numpy"],
                              vmaf=None, ffmpeg="ff", what=("vmaf",))  # fmt: skip
    assert "--frame-cnt" not in rows[0].argv() and "-b 10" in " ".join(rows[0].argv())
    assert "yuv420p10le" in rows[1].argv()


def test_default_frames():
    assert bench_cpu.default_cpu_frames(1920, 1080) == 48
    assert bench_cpu.default_cpu_frames(3840, 2160) == 12
    assert bench_cpu.default_cpu_frames(64, 48) == 2000


@pytest.fixture
def fake_vmaf(tmp_path):
    """A stand-in for libvmaf's vmaf tool: it records its arguments and writes a JSON
    whose pooled scores are 1."""
    log = tmp_path / "vmaf-calls.txt"
    exe = tmp_path / "vmaf"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        "keys = ('vmaf', 'integer_adm2', 'psnr_y', 'float_ssim')\n"
        "pooled = {k: {'mean': 1.0} for k in keys}\n"
        "json.dump({'pooled_metrics': pooled}, open(out, 'w'))\n"
    )
    exe.chmod(0o755)
    return exe, log


def test_bench_without_a_gpu_times_the_cpu(monkeypatch, tmp_path, capsys, fake_vmaf):
    exe, log = fake_vmaf
    monkeypatch.setattr(gpu, "cuda_available", lambda: False)
    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    argv = ["--sizes", "48x40", "--frames", "3", "--numpy-frames", "2", "--rounds", "2"]
    argv += ["--vmaf", str(exe), "--tmp", str(tmp_path)]
    assert bench.main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("no CUDA device: GPU measurements skipped\nCPU: ")
    assert "48x40 8-bit 4:2:0 raw files ref.yuv and dis.yuv (3 frames)" in text
    assert "median of 2 alternating rounds" in text
    assert "compiled engine not timed: Numba is not installed" in text
    lines = text.splitlines()
    table = lines[lines.index("commands (T: the threads):") :]
    vmaf_row = next(ln for ln in lines if ln.startswith("admcuda VMAF, numpy engine (2 frames)"))
    assert vmaf_row.split()[-2] == "vmaf" and float(vmaf_row.split()[-1]) > 0
    assert next(ln for ln in lines if ln.startswith("libvmaf vmaf VMAF")).endswith("vmaf 1.000000")
    assert next(ln for ln in lines if ln.startswith("libvmaf vmaf ADM")).endswith(
        "integer_adm2 1.000000"
    )
    assert any(ln.startswith("cat of both files") for ln in lines)
    assert "--threads T" in table[1] and "ref.yuv" in table[1]
    if bench_cpu.ffmpeg_with_libvmaf():
        row = next(ln for ln in lines if ln.startswith("ffmpeg libvmaf filter VMAF"))
        assert row.split()[-2] == "vmaf" and float(row.split()[-1]) > 0
    calls = log.read_text().splitlines()
    threads = sorted({1, bench_cpu_default_threads()})
    assert len(calls) == 2 * 2 * len(threads)  # VMAF and ADM, each thread count, 2 rounds
    assert all("-w 48 -h 40 -p 420 -b 8" in c for c in calls)


def bench_cpu_default_threads() -> int:
    from admcuda.backends.cpu import default_threads

    return default_threads()


def test_skip_gpu_times_the_cpu(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench_cpu, "ffmpeg_with_libvmaf", lambda: None)
    monkeypatch.setattr(bench_cpu, "find_vmaf", lambda given: None)
    ran = []
    monkeypatch.setattr(bench_cpu, "run_cpu_rows", lambda rows, rounds: ran.append(rounds))
    argv = ["--skip-gpu", "--sizes", "32x32", "--frames", "2", "--cpu-engines", "numpy"]
    assert bench.main([*argv, "--tmp", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert ran == [2] and "no CUDA device" not in text
    assert "libvmaf's vmaf not timed: give --vmaf PATH" in text
    assert "ffmpeg's libvmaf filter not timed" in text
    assert "admcuda ADM, numpy engine" in text


def test_kernels_are_compiled_before_the_first_timed_row(monkeypatch, tmp_path, capsys):
    """Where the compiled engine (or a feature computed with Numba) is timed, its kernels
    are loaded, or compiled, before any row runs, so that no row's time is a compile;
    with neither, nothing is loaded."""
    monkeypatch.setattr(bench_cpu, "ffmpeg_with_libvmaf", lambda: None)
    monkeypatch.setattr(bench_cpu, "find_vmaf", lambda given: None)
    monkeypatch.setattr(admcuda.compiled, "available", lambda: True)
    events = []
    monkeypatch.setattr(
        admcuda.compiled, "warm_up", lambda bitdepths, kinds: events.append((bitdepths, kinds))
    )
    monkeypatch.setattr(bench_cpu, "run_cpu_rows", lambda rows, rounds: events.append("rows"))
    argv = ["--skip-gpu", "--sizes", "32x32", "--frames", "2", "--tmp", str(tmp_path)]
    assert bench.main([*argv, "--bitdepth", "10", "--features", "psnr", "cambi"]) == 0
    assert events == [((10,), ("adm", "vif", "motion", "cambi")), "rows"]
    assert "CPU engine: kernels ready (" in capsys.readouterr().out
    events.clear()
    assert bench.main([*argv, "--cpu-engines", "numpy", "--features", "psnr"]) == 0
    assert events == ["rows"]
    assert "kernels ready" not in capsys.readouterr().out


def test_a_missing_vmaf_is_one_line(tmp_path, capsys):
    missing = tmp_path / "nothing"
    assert bench.main(["--skip-gpu", "--vmaf", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"admcuda: error: --vmaf {missing}: not an executable file"


def test_whole_process_rows_beside_both_vmaf_tools(monkeypatch, tmp_path, capsys, fake_vmaf):
    """``--whole``: admcuda (here on the CPU backend) in its own process and handed to an
    ``admcuda serve``, and both builds of libvmaf's tool, each with the model and with ADM
    alone, then cat; each row's pooled score read back."""
    exe, log = fake_vmaf
    monkeypatch.setenv("ADMCUDA_CPU_ENGINE", "numpy")
    argv = ["--whole", "48x40x3", "--whole-backend", "cpu", "--rounds", "1"]
    argv += ["--vmaf", str(exe), "--vmaf-cuda", str(exe), "--tmp", str(tmp_path)]
    assert bench.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(k for k, ln in enumerate(lines) if ln.startswith("48x40 8-bit 4:2:0 raw, 3 frames"))
    labels = [ln.split("  ")[0] for ln in lines[head + 2 :]]
    cores = bench_cpu_default_threads()
    assert labels == [
        "admcuda VMAF", "admcuda VMAF, handed to admcuda serve", "libvmaf vmaf CUDA VMAF",
        f"libvmaf vmaf CPU VMAF, {cores} threads",
        "admcuda ADM", "admcuda ADM, handed to admcuda serve", "libvmaf vmaf CUDA ADM",
        f"libvmaf vmaf CPU ADM, {cores} threads",
        "cat of both files",
    ]  # fmt: skip
    assert any(ln.startswith("admcuda serve ready ") for ln in lines[:head])
    ours, served = lines[head + 2].split(), lines[head + 3].split()
    assert ours[-2] == "vmaf" and 0 < float(ours[-1]) <= 100
    assert served[-2:] == ours[-2:]
    calls = log.read_text().splitlines()
    assert [("--model" in c, "adm_cuda" in c, f"--threads {cores}" in c) for c in calls] == [
        (True, False, False), (True, False, True), (False, True, False), (False, False, True),
    ]  # fmt: skip


@pytest.mark.parametrize("clip", ["1920x1080", "8x8x3", "1920x1080x0", "axbxc", "33x32x2"])
def test_a_bad_whole_clip_is_one_line(clip, capsys):
    assert bench.main(["--whole", clip]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"admcuda: error: bad clip '{clip}'") and "\n" not in err


def test_feature_rows_and_their_commands():
    """--features: per feature admcuda (no engine: the feature has one), libvmaf's vmaf
    with --feature NAME -n and ffmpeg's filter (with its model), at each thread count,
    after VMAF's and ADM's rows and before cat."""
    rows = _rows(features=["psnr", "cambi"], engines=["compiled"])
    assert [(r.label, r.threads) for r in rows][10:] == [
        ("admcuda PSNR", 1), ("admcuda PSNR", 4),
        ("libvmaf vmaf PSNR", 1), ("libvmaf vmaf PSNR", 4),
        ("ffmpeg libvmaf filter VMAF + PSNR", 1), ("ffmpeg libvmaf filter VMAF + PSNR", 4),
        ("admcuda CAMBI", 1), ("admcuda CAMBI", 4),
        ("libvmaf vmaf CAMBI", 1), ("libvmaf vmaf CAMBI", 4),
        ("ffmpeg libvmaf filter VMAF + CAMBI", 1), ("ffmpeg libvmaf filter VMAF + CAMBI", 4),
        ("cat of both files", 1),
    ]  # fmt: skip
    by = {(r.label, r.threads): r for r in rows}
    geometry = "-r /t/r.yuv -d /t/d.yuv -w 64 -h 48 -p 420 -b 8"
    r = by["admcuda PSNR", 4]
    assert r.argv()[:4] == [sys.executable, "-m", "admcuda", "score"]
    assert " ".join(r.argv()[4:]) == (
        f"{geometry} --feature psnr -n --backend cpu --threads 4 -q --json "
        "-o /t/admcuda-psnr-4.json"
    )
    assert r.env == {} and r.frames == 16 and r.key == "psnr_y"
    assert r.output == Path("/t/admcuda-psnr-4.json")
    r = by["libvmaf vmaf CAMBI", 1]
    assert " ".join(r.argv()) == (
        f"/opt/vmaf {geometry} --feature cambi -n --threads 1 -q --json -o /t/vmaf-cambi-1.json"
    )
    assert r.key == "cambi" and r.output == Path("/t/vmaf-cambi-1.json")
    raw = "-f rawvideo -pix_fmt yuv420p -s 64x48"
    assert " ".join(by["ffmpeg libvmaf filter VMAF + PSNR", 4].argv()) == (
        f"/opt/ffmpeg -nostdin -v error {raw} -i /t/d.yuv {raw} -i /t/r.yuv -lavfi "
        "libvmaf=model=version=vmaf_v0.6.1:feature=name=psnr:n_threads=4:log_fmt=json:"
        "log_path=/t/ffmpeg-psnr-4.json -f null -"
    )
    assert "--threads T" in " ".join(by["admcuda CAMBI", 1].command("T"))
    assert "n_threads=T:" in " ".join(by["ffmpeg libvmaf filter VMAF + CAMBI", 1].command("T"))
    keys = {name: bench_cpu.FEATURES[name].key for name in bench_cpu.FEATURES}
    assert keys == {
        "psnr": "psnr_y", "float_ssim": "float_ssim", "float_ms_ssim": "float_ms_ssim",
        "cambi": "cambi", "speed_chroma": "speed_chroma_uv",
    }  # fmt: skip
    alone = _rows(features=["float_ms_ssim"], vmaf=None, ffmpeg=None, engines=[], threads=[2])
    assert [r.label for r in alone] == ["admcuda MS-SSIM", "cat of both files"]
    assert "yuv420p10le" in " ".join(
        bench_cpu.cpu_rows(Path("/t"), Path("r"), Path("d"), 64, 48, 10, frames=2,
                           numpy_frames=2, threads=[1], engines=[], vmaf=None, ffmpeg="ff",
                           what=(), features=["psnr"])[1].argv()
    )  # fmt: skip


def test_features_are_off_by_default():
    assert all("PSNR" not in r.label for r in _rows())
    args = bench._parser().parse_args(["--skip-gpu"])
    assert args.features == []
    args = bench._parser().parse_args(["--features", "psnr", "float_ssim", "cambi"])
    assert args.features == ["psnr", "float_ssim", "cambi"]


def test_an_unknown_feature_is_a_usage_error(capsys):
    assert bench.main(["--skip-gpu", "--features", "ciede"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("admcuda: error: ") and "ciede" in err and "\n" not in err


def test_bench_times_the_features_beside_libvmaf(monkeypatch, tmp_path, capsys, fake_vmaf):
    """A whole run with --features: admcuda's PSNR and SSIM rows (really run, tiny files)
    beside the stand-in vmaf (pooled 1), each with its pooled value; without Numba the
    features computed with it are left out with a note."""
    exe, log = fake_vmaf
    monkeypatch.setattr(gpu, "cuda_available", lambda: False)
    monkeypatch.setattr(bench_cpu, "ffmpeg_with_libvmaf", lambda: None)
    argv = ["--sizes", "48x40", "--frames", "2", "--rounds", "1", "--cpu-engines", "numpy"]
    argv += ["--numpy-frames", "2", "--vmaf", str(exe), "--tmp", str(tmp_path)]
    argv += ["--features", "psnr", "float_ssim"]
    if admcuda.compiled.available():
        assert bench.main(argv) == 0
        lines = capsys.readouterr().out.splitlines()
        row = next(ln for ln in lines if ln.startswith("admcuda SSIM"))
        assert row.split()[-2] == "float_ssim" and 0 < float(row.split()[-1]) <= 1
        assert next(ln for ln in lines if ln.startswith("libvmaf vmaf SSIM")).endswith(
            "float_ssim 1.000000"
        )
    monkeypatch.setattr(admcuda.compiled, "available", lambda: False)
    log.write_text("")
    assert bench.main(argv) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert (
        "(float_ssim not timed: admcuda computes them with Numba, which is not installed; "
        'pip install ".[fast]")'
    ) in lines
    row = next(ln for ln in lines if ln.startswith("admcuda PSNR"))
    assert row.split()[-2] == "psnr_y" and float(row.split()[-1]) > 0
    assert next(ln for ln in lines if ln.startswith("libvmaf vmaf PSNR")).endswith(
        "psnr_y 1.000000"
    )
    assert not any("SSIM" in ln for ln in lines)
    calls = log.read_text().splitlines()
    threads = sorted({1, bench_cpu_default_threads()})
    assert sum("--feature psnr -n" in c for c in calls) == len(threads)

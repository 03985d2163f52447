"""Chroma planes of encoded video (through ffmpeg) and of streams, for PSNR.

Lossless encodes (ffv1 in Matroska: every layout, odd sizes, 8 to 16 bits; semi-planar
rawvideo in NUT) of the synthetic pairs of ``testdata/psnr_goldens.json`` must give
libvmaf 3.2.0's per-frame values (see that file's provenance) exactly. A lossy H.264
pair must score as its frames decoded to raw YUV do, and, where the bundled ffmpeg has
its libvmaf filter, as that filter prints them (6 decimals). A run without a feature
that scores chroma keeps the luma-only ffmpeg command.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _media import FFV1, encode, ffmpeg_exe

from admcuda.cli.main import main
from admcuda.errors import AdmError
from admcuda.io.ffmpeg import VideoReader, planar_pixel_format
from admcuda.io.inputs import open_inputs

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
GOLDENS = json.loads((TESTDATA / "psnr_goldens.json").read_text())
CASES = GOLDENS["cases"]

_spec = importlib.util.spec_from_file_location("psnr_maker", TESTDATA / "make_psnr_goldens.py")
MAKER = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(MAKER)  # type: ignore[union-attr]

KEYS = ("psnr_y", "psnr_cb", "psnr_cr")


@pytest.mark.parametrize(
    "pix_fmt,planar",
    [
        ("yuv420p", "yuv420p"),
        ("yuv422p10le", "yuv422p10le"),
        ("yuv444p12be", "yuv444p12le"),
        ("yuvj420p", "yuvj420p"),
        ("yuva420p", "yuv420p"),
        ("nv12", "yuv420p"),
        ("nv21", "yuv420p"),
        ("p010le", "yuv420p10le"),
        ("p216le", "yuv422p16le"),
        ("y210le", "yuv422p10le"),
        ("gray10le", "gray10le"),
    ],
)
def test_planar_pixel_format(pix_fmt, planar):
    assert planar_pixel_format(pix_fmt) == planar


def _pair(name: str, folder: Path) -> tuple[Path, Path, tuple[int, int, str, int]]:
    ref, dis = MAKER.write_pair(name, str(folder))
    return Path(ref), Path(dis), MAKER.PAIRS[name][:4]


def _score(args: list[str], out: Path, *extra: str) -> dict:
    assert main(["score", "-q", *map(str, args), "-n", *extra, "--json", "-o", str(out)]) == 0
    return json.loads(out.read_text())


def _metrics(doc: dict) -> list[dict]:
    return [f["metrics"] for f in doc["frames"]]


# every layout and depth; odd sizes; 4:2:0 also semi-planar (NUT keeps nv12 and nv21 only)
LOSSLESS = [
    ("default_8_420", FFV1, ".mkv"),
    ("odd_8_420", FFV1, ".mkv"),
    ("all_8_422", FFV1, ".mkv"),
    ("default_8_444", FFV1, ".mkv"),
    ("default_10_420", FFV1, ".mkv"),
    ("min_sse_10_422", FFV1, ".mkv"),
    ("default_12_444", FFV1, ".mkv"),
    ("default_16_420", FFV1, ".mkv"),
    ("default_8_400", FFV1, ".mkv"),
    ("mse_8_420", ["-pix_fmt", "nv12", "-c:v", "rawvideo"], ".nut"),
    ("apsnr_8_420", ["-pix_fmt", "nv21", "-c:v", "rawvideo"], ".nut"),
]


@pytest.mark.parametrize("key,codec,suffix", LOSSLESS, ids=[f"{k}{s}" for k, _, s in LOSSLESS])
def test_lossless_video_gives_libvmaf_s_psnr(key, codec, suffix, tmp_path):
    case = CASES[key]
    ref, dis, (w, h, fmt, bd) = _pair(case["pair"], tmp_path)
    videos = [encode(p, tmp_path / (p.stem + suffix), w, h, fmt, bd, codec) for p in (ref, dis)]
    feature = "psnr" + ("=" + case["options"] if case["options"] else "")
    got = _metrics(_score(videos, tmp_path / "out.json", "--feature", feature))
    assert len(got) == len(case["frames"])
    for ours, want in zip(got, case["frames"], strict=True):
        assert ours == want


@pytest.fixture(scope="module")
def h264(tmp_path_factory):
    """A lossy H.264 pair of the 4:2:0 pair (12 frames), and the same decoded to raw."""
    folder = tmp_path_factory.mktemp("h264")
    ref, dis, (w, h, fmt, bd) = _pair("n10_420", folder)
    out = {}
    for name, src, crf in (("ref", ref, "18"), ("dis", dis, "34")):
        # 8-bit 4:2:0 pictures out of the 10-bit pair, more frames: what a ladder holds
        video = folder / f"{name}.mp4"
        subprocess.run(
            [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-y", "-f", "rawvideo",
             "-pix_fmt", "yuv420p10le", "-s", f"{w}x{h}", "-stream_loop", "3", "-i", str(src),
             "-pix_fmt", "yuv420p", "-c:v", "libx264", "-crf", crf, "-bf", "2", str(video)],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        raw = folder / f"{name}.yuv"
        subprocess.run(
            [ffmpeg_exe(), "-v", "error", "-y", "-i", str(video), "-f", "rawvideo",
             "-pix_fmt", "yuv420p", str(raw)],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        out[name] = (video, raw)
    return out, (w, h)


@pytest.mark.parametrize(
    "controls",
    [[], ["--frame-skip-ref", "2", "--frame-skip-dist", "1", "--frame-cnt", "7"],
     ["--subsample", "3"], ["--subsample", "2", "--frame-skip-dist", "3"]],
)  # fmt: skip
def test_h264_scores_as_its_decoded_frames(h264, controls, tmp_path):
    clips, (w, h) = h264
    feature = ["--feature", "psnr=enable_mse=true:enable_apsnr=true"]
    video = _score([clips["ref"][0], clips["dis"][0], *controls, *feature], tmp_path / "v.json")
    raw = ["-r", clips["ref"][1], "-d", clips["dis"][1], "-w", str(w), "-h", str(h)]
    want = _score([*raw, *controls, *feature], tmp_path / "r.json")
    assert video["frames"] == want["frames"] and len(want["frames"]) > 2
    assert video["aggregate_metrics"] == want["aggregate_metrics"]


def _has_libvmaf_filter() -> bool:
    run = subprocess.run([ffmpeg_exe(), "-hide_banner", "-filters"], capture_output=True,
                         text=True, timeout=60, check=False)  # fmt: skip
    return " libvmaf " in run.stdout


def test_h264_matches_ffmpeg_s_libvmaf_filter(h264, tmp_path):
    if not _has_libvmaf_filter():
        pytest.skip("this ffmpeg has no libvmaf filter")
    clips, _ = h264
    log = tmp_path / "lavfi.json"
    subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-i", str(clips["dis"][0]),
         "-i", str(clips["ref"][0]), "-lavfi",
         f"[0:v][1:v]libvmaf=feature=name=psnr:log_fmt=json:log_path={log}", "-f", "null", "-"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    theirs = _metrics(json.loads(log.read_text()))
    ours = _metrics(_score([clips["ref"][0], clips["dis"][0], "--feature", "psnr"],
                           tmp_path / "v.json"))  # fmt: skip
    assert len(ours) == len(theirs) > 2
    for a, b in zip(ours, theirs, strict=True):
        # libvmaf's JSON writer prints 6 decimals
        assert {k: float(f"{a[k]:.6f}") for k in KEYS} == {k: b[k] for k in KEYS}


def test_luma_only_runs_keep_the_luma_command(h264, tmp_path, monkeypatch):
    clips, _ = h264
    commands: list[list[str]] = []
    real = subprocess.Popen

    def popen(cmd, *args, **kwargs):
        commands.append(list(cmd))
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    paths = [clips["ref"][0], clips["dis"][0]]
    _score(paths, tmp_path / "a.json", "--feature", "psnr=enable_chroma=false")
    luma = [c for c in commands if "pipe:1" in c]
    assert len(luma) == 2
    for cmd in luma:
        assert cmd[cmd.index("-vf") + 1].startswith("extractplanes=y,")
        assert cmd[cmd.index("-pix_fmt") + 1] == "gray"
    commands.clear()
    _score(paths, tmp_path / "b.json", "--feature", "psnr")
    whole = [c for c in commands if "pipe:1" in c]
    assert len(whole) == 2
    for cmd in whole:
        assert "extractplanes" not in cmd[cmd.index("-vf") + 1]
        assert cmd[cmd.index("-pix_fmt") + 1] == "yuv420p"


def test_scaled_rung_reads_chroma_as_ffmpeg_scales(h264, tmp_path):
    """--scale: a lower rung (H.264 and nv12) against the scaled frames written to raw
    YUV by ffmpeg's own scale filter (as for its libvmaf filter)."""
    clips, (w, h) = h264
    exe = ffmpeg_exe()
    for name, codec in (("rung.mp4", ["-c:v", "libx264", "-crf", "30"]),
                        ("rung.nut", ["-pix_fmt", "nv12", "-c:v", "rawvideo"])):  # fmt: skip
        rung = tmp_path / name
        subprocess.run([exe, "-v", "error", "-y", "-i", str(clips["dis"][0]), "-vf",
                        "scale=20:18", *codec, str(rung)], check=True, timeout=120)  # fmt: skip
        up = tmp_path / "up.yuv"
        subprocess.run([exe, "-v", "error", "-y", "-i", str(rung), "-vf",
                        f"scale={w}:{h}:flags=bicubic", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                        str(up)], check=True, timeout=120)  # fmt: skip
        feature = ["--feature", "psnr"]
        got = _score([clips["ref"][0], rung, "--scale", "bicubic", *feature], tmp_path / "s.json")
        raw = ["-r", clips["ref"][1], "-d", up, "-w", str(w), "-h", str(h), *feature]
        assert got["frames"] == _score(raw, tmp_path / "r.json")["frames"], name


def test_a_change_of_frame_size_stops_with_the_frame_number(tmp_path):
    exe = ffmpeg_exe()
    ref, _, (w, h, fmt, bd) = _pair("n8_420", tmp_path)
    parts = []
    for size in ("32:18", "64:36"):
        part = tmp_path / f"{size.replace(':', 'x')}.h264"
        subprocess.run([exe, "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                        "-s", f"{w}x{h}", "-i", str(ref), "-vf", f"scale={size}", "-c:v",
                        "libx264", "-preset", "ultrafast", "-f", "h264", str(part)],
                       check=True, timeout=120)  # fmt: skip
        parts.append(part.read_bytes())
    joined = tmp_path / "joined.h264"
    joined.write_bytes(parts[0] * 9 + parts[1])  # 27 frames of 32x18, then 64x36
    with VideoReader(joined, label="distorted") as reader:
        pipe = reader.open_pipe(chroma=True)
        try:
            import numpy as np

            luma = np.empty((18, 32), np.uint8)
            chroma = np.empty(pipe.chroma_size, np.uint8)
            for _ in range(27):
                assert pipe.readinto(luma, chroma)
            with pytest.raises(AdmError, match="changes frame size at frame 27: from 32x18"):
                pipe.readinto(luma, chroma)
        finally:
            pipe.close()


def _stdin_run(args: list[str], stdin_path: Path, out: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "admcuda", "score", "-q", *map(str, args), "-n", "--json",
           "-o", str(out)]  # fmt: skip
    with open(stdin_path, "rb") as stdin:
        return subprocess.run(cmd, stdin=stdin, capture_output=True, text=True, cwd=ROOT,
                              timeout=300)  # fmt: skip


@pytest.mark.parametrize("key", ["odd_8_420", "min_sse_10_422", "default_12_444"])
def test_raw_and_y4m_streams_carry_chroma(key, tmp_path):
    from _media import write_y4m

    case = CASES[key]
    ref, dis, (w, h, fmt, bd) = _pair(case["pair"], tmp_path)
    feature = "psnr" + ("=" + case["options"] if case["options"] else "")
    geometry = ["-w", w, "-h", h, "-p", fmt, "-b", bd]
    run = _stdin_run(["-r", "-", "-d", dis, *geometry, "--feature", feature], ref,
                     tmp_path / "raw.json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert _metrics(json.loads((tmp_path / "raw.json").read_text())) == case["frames"]
    y4m = write_y4m(ref, tmp_path / "ref.y4m", w, h, fmt, bd)
    run = _stdin_run(["-r", "-", "-d", dis, *geometry, "--feature", feature], y4m,
                     tmp_path / "y4m.json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert _metrics(json.loads((tmp_path / "y4m.json").read_text())) == case["frames"]


def test_inputs_of_two_chroma_layouts_are_refused(tmp_path, capsys):
    ref, dis, (w, h, fmt, bd) = _pair("n8_420", tmp_path)
    dis444 = tmp_path / "dis444.mkv"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                    "-s", f"{w}x{h}", "-i", str(dis), "-pix_fmt", "yuv444p", "-c:v", "ffv1",
                    str(dis444)], check=True, timeout=120)  # fmt: skip
    code = main(["score", "-q", "-r", str(ref), "-d", str(dis444), "-w", str(w), "-h", str(h),
                 "-p", fmt, "--feature", "psnr", "--json", "-o",
                 str(tmp_path / "x.json")])  # fmt: skip
    assert code != 0 and "one chroma layout" in capsys.readouterr().err
    doc = _score(["-r", ref, "-d", dis444, "-w", w, "-h", h, "-p", fmt], tmp_path / "y.json",
                 "--feature",
                 "psnr=enable_chroma=false")  # fmt: skip
    assert set(doc["frames"][0]["metrics"]) == {"psnr_y"}


def test_chroma_samples_of_an_input(tmp_path):
    ref, _, (w, h, fmt, bd) = _pair("n10_422_odd", tmp_path)
    video = encode(ref, tmp_path / "ref.mkv", w, h, fmt, bd, FFV1)
    with open_inputs(video, [video]) as inputs:
        assert inputs.ref.chroma_samples() == 2 * ((w + 1) // 2) * h

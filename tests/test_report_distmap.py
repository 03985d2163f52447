"""Distortion maps: they split 1 - adm2 and aim exactly, land where the damage is, and draw."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from _frames import luma_frames
from admcuda.reference import compute_adm
from conftest import NETFLIX, ROOT

from admcuda.cli.map import main
from admcuda.data import EXAMPLE, example_paths
from admcuda.errors import AdmError
from admcuda.options import AdmOptions
from admcuda.report.distmap import (
    _upsample,
    distortion_figure,
    distortion_map,
    distortion_maps,
    save_distortion_png,
)


def textured(h: int, w: int, bitdepth: int = 8, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    peak = (1 << bitdepth) - 1
    y, x = np.mgrid[0:h, 0:w]
    wave = 0.5 + 0.25 * np.sin(x / 3.0) * np.cos(y / 5.0)
    noise = rng.normal(0, 0.08, (h, w))
    return (
        np.clip((wave + noise) * peak, 0, peak)
        .round()
        .astype(np.uint8 if bitdepth == 8 else np.uint16)
    )


def blur(frame: np.ndarray, region: tuple[slice, slice] | None = None) -> np.ndarray:
    f = frame.astype(np.float64)
    out = f.copy()
    for _ in range(2):
        out = (
            out
            + np.roll(out, 1, 0)
            + np.roll(out, -1, 0)
            + np.roll(out, 1, 1)
            + np.roll(out, -1, 1)
        ) / 5
    if region is not None:
        keep = f.copy()
        keep[region] = out[region]
        out = keep
    return out.round().astype(frame.dtype)


def check_sums(ref, dis, bitdepth, opts: AdmOptions) -> None:
    maps = distortion_maps(ref, dis, bitdepth, opts)
    scores = compute_adm(ref, dis, bitdepth, opts)
    # Exact up to libvmaf's fixed-point rounding of the sums, which the maps skip.
    assert maps.dlm.sum() == pytest.approx(1 - scores["integer_adm2"], abs=1e-6)
    assert maps.adm2 == pytest.approx(scores["integer_adm2"], abs=1e-6)
    den = scores["integer_adm_den"]
    for s in range(4):
        want = (scores[f"integer_adm_den_scale{s}"] - scores[f"integer_adm_num_scale{s}"]) / den
        assert maps.dlm_scales[s].sum() == pytest.approx(want, abs=1e-6)
    if opts.adm_skip_aim:
        assert not maps.aim.any()
    else:
        assert maps.aim.sum() == pytest.approx(scores["integer_aim"], abs=1e-6)
        assert maps.aim_score == pytest.approx(scores["integer_aim"], abs=1e-6)
        assert maps.aim.min() >= 0
    assert maps.dlm.shape == maps.aim.shape == ref.shape
    np.testing.assert_allclose(np.sum(maps.dlm_scales, axis=0), maps.dlm)


@pytest.mark.parametrize(
    ("h", "w", "bitdepth", "options"),
    [
        (17, 17, 8, {}),
        (37, 50, 8, {"egl": 1.0}),
        (72, 96, 10, {"ssz": True}),
        (64, 81, 12, {"adm_skip_aim": True, "nvd": 4}),
        (90, 160, 16, {"csf": 2}),
    ],
)
def test_maps_split_the_scores(h, w, bitdepth, options):
    ref = textured(h, w, bitdepth, seed=h)
    check_sums(ref, blur(ref), bitdepth, AdmOptions.from_mapping(options))


def test_netflix_frame_split():
    path = NETFLIX / "src01_hrc00_576x324_3f.yuv"
    if not path.exists():
        pytest.skip("shared Netflix clips not found")
    ref = luma_frames(path, 576, 324, "420", 8)[1]
    dis = luma_frames(NETFLIX / "src01_hrc01_576x324_3f.yuv", 576, 324, "420", 8)[1]
    check_sums(ref, dis, 8, AdmOptions())


def test_identical_frames_give_an_empty_map():
    ref = textured(48, 64)
    maps = distortion_maps(ref, ref)
    assert np.abs(maps.dlm).max() < 1e-8 and not maps.aim.any()


def _flat_and_noise() -> tuple[np.ndarray, np.ndarray]:
    ref = np.full((40, 64), 128, np.uint8)
    return ref, np.random.default_rng(1).integers(0, 255, ref.shape).astype(np.uint8)


def test_zero_denominator_gives_what_score_gives():
    """A flat reference with adm_noise_weight=0: ADM's denominator is 0, libvmaf scores
    adm2 = 1 and leaves AIM unset (null). No warning, no error: a zero detail-loss map
    and a NaN aim map."""
    ref, dis = _flat_and_noise()
    opts = AdmOptions.from_mapping({"nw": 0})
    scores = compute_adm(ref, dis, 8, opts)
    assert scores["integer_adm_den"] == 0 and math.isnan(scores["integer_aim"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        maps = distortion_maps(ref, dis, 8, opts)
    assert maps.adm2 == scores["integer_adm2"] == 1.0 and math.isnan(maps.aim_score)
    assert maps.dlm.shape == maps.aim.shape == ref.shape
    assert not maps.dlm.any() and not any(m.any() for m in maps.dlm_scales)
    assert np.isnan(maps.aim).all() and all(np.isnan(m).all() for m in maps.aim_scales)
    assert np.isnan(distortion_map(ref, dis, 8, opts, kind="aim")).all()


def test_cli_zero_denominator(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    ref, dis = _flat_and_noise()
    planes = []
    for name, luma in (("flat.yuv", ref), ("noise.yuv", dis)):
        path = tmp_path / name
        np.concatenate([luma.ravel(), np.full(luma.size // 2, 128, np.uint8)]).tofile(path)
        planes.append(str(path))
    args = [*planes, "-w", "64", "-h", "40", "--option", "nw=0"]
    out, npy = tmp_path / "m.png", tmp_path / "m.npy"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main([*args, "-o", str(out), "--npy", str(npy)]) == 0
        assert capsys.readouterr().err == ""
        assert np.load(npy).shape == (40, 64) and not np.load(npy).any()
        aim = [*args, "--kind", "aim", "-o", str(tmp_path / "a.png")]
        err = _error(capsys, aim, 1)
    assert "no aim map" in err and "integer_aim is null" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flat.yuv", "m.npy", "m.png", "noise.yuv"]


def test_cli_warns_of_small_heights_as_score_does(tmp_path, monkeypatch, capsys):
    """17..32 rows: scale 3 reads libvmaf's unwritten memory, modelled as zeros; map gives
    score's warning (admcuda.quirks.warn_small_height), once, and the variable silences it."""
    pytest.importorskip("matplotlib")
    from admcuda.cli.main import main as admcuda_main
    from admcuda.quirks import small_height_warning

    path = tmp_path / "tiny.yuv"
    luma = textured(17, 17)
    np.concatenate([luma.ravel(), np.full(2 * 9 * 9, 128, np.uint8)]).tofile(path)
    argv = ["map", str(path), str(path), "-w", "17", "-h", "17", "-o", str(tmp_path / "m.png")]
    monkeypatch.delenv("ADMCUDA_SMALL_HEIGHT_WARNING")
    assert admcuda_main(argv) == 0
    want = small_height_warning(17, 17, AdmOptions())
    assert capsys.readouterr().err == f"admcuda: warning: {want}\n"
    assert admcuda_main([*argv, "--option", "adm_skip_aim=true"]) == 0
    want = small_height_warning(17, 17, AdmOptions(adm_skip_aim=True))
    assert "integer_aim" not in want
    assert capsys.readouterr().err == f"admcuda: warning: {want}\n"
    monkeypatch.setenv("ADMCUDA_SMALL_HEIGHT_WARNING", "0")
    assert admcuda_main(argv) == 0
    assert capsys.readouterr().err == ""


def test_heat_lands_on_the_distorted_region():
    ref = textured(96, 128, seed=4)
    region = (slice(24, 72), slice(64, 120))
    heat = distortion_map(ref, blur(ref, region))
    positive = np.clip(heat, 0, None)
    # Allow the filters' reach (coarsest scale: 16-pixel squares) around the region.
    near = np.zeros(ref.shape, bool)
    near[8:88, 48:128] = True
    assert positive[near].sum() > 0.97 * positive.sum()
    assert positive[region].sum() > 0.6 * positive.sum()


def test_upsample_places_the_crop():
    band = np.zeros((4, 6))
    band[0, 0] = 64.0
    band[3, 5] = 128.0
    frame = _upsample(band, (slice(3, 7), slice(5, 11)), scale=2, shape=(50, 96))
    f = 8
    assert frame[3 * f : 4 * f, 5 * f : 6 * f].tolist() == np.ones((f, f)).tolist()
    # The last band row starts at frame row 48: only two of its eight rows fit, and
    # they take its whole value.
    assert frame[48:50, 10 * f : 11 * f].tolist() == np.full((2, f), 128 / (2 * f)).tolist()
    assert frame.sum() == 64 + 128
    assert np.count_nonzero(frame) == f * f + 2 * f


def test_kinds_and_errors():
    ref = textured(32, 40)
    dis = blur(ref)
    maps = distortion_maps(ref, dis, options={"egl": 1.2})
    np.testing.assert_array_equal(distortion_map(ref, dis, 8, {"egl": 1.2}, kind="aim"), maps.aim)
    with pytest.raises(AdmError, match="unknown map kind"):
        distortion_map(ref, dis, kind="vif")
    with pytest.raises(AdmError, match="must be 2-D planes of one size"):
        distortion_map(ref, dis[:, :-1])
    with pytest.raises(AdmError, match="must be uint16"):
        distortion_map(ref, dis, 10)
    with pytest.raises(AdmError, match="unknown ADM option"):
        distortion_map(ref, dis, 8, {"bogus": 1})
    with pytest.raises(AdmError, match="bit depth must be an integer, got 10.0"):
        distortion_map(ref.astype(np.uint16), dis.astype(np.uint16), 10.0)


def test_samples_above_the_bit_depth_are_refused():
    """As AdmExtractor (and the command line, through the reader) refuse them."""
    ref = textured(32, 40, 10)
    bad = ref.copy()
    bad[5, 6] = 1100
    with pytest.raises(AdmError, match="distorted frame has sample value 1100, too large for 10"):
        distortion_map(ref, bad, 10)
    with pytest.raises(AdmError, match="reference frame has sample value 1100"):
        distortion_maps(bad, ref, 10)
    assert distortion_map(bad, bad, 16).shape == bad.shape  # any uint16 fits 16 bits


def test_save_png(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    ref = textured(72, 96, 10)
    out = tmp_path / "m.png"
    maps = save_distortion_png(
        ref, blur(ref), 10, out, frame_label="synthetic", kind="aim", background="ref"
    )
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size[0] > 600
    assert maps.aim.sum() > 0
    with pytest.raises(AdmError, match="background"):
        save_distortion_png(ref, ref, 10, out, background="both")


def test_cli_on_the_example_pair(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out, npy = tmp_path / "map.png", tmp_path / "map.npy"
    with example_paths() as (ref, dis):
        args = [str(ref), str(dis), "-w", str(EXAMPLE.width), "-h", str(EXAMPLE.height)]
        assert main([*args, "--frame", "2", "-o", str(out), "--npy", str(npy)]) == 0
        frames_r = luma_frames(ref, EXAMPLE.width, EXAMPLE.height, "420", 8)
        frames_d = luma_frames(dis, EXAMPLE.width, EXAMPLE.height, "420", 8)
    assert capsys.readouterr().err == ""
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    np.testing.assert_array_equal(np.load(npy), distortion_map(frames_r[2], frames_d[2]))


def test_cli_scales_a_lower_rung_as_score_does(tmp_path, capsys):
    """A distorted input of another size: refused with the advice to give --scale, which
    map then takes, mapping the rung upscaled by ffmpeg's scaler as ``admcuda score
    --scale`` scores it (the same planes; its adm2 the map's)."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("imageio_ffmpeg")
    import admcuda
    from admcuda.io.inputs import open_inputs

    w, h = EXAMPLE.width, EXAMPLE.height
    small = tmp_path / "rung_88x72.yuv"  # frame 2 of the example's distorted clip, halved
    with example_paths() as (ref, dis):
        ref_copy = tmp_path / "ref.yuv"
        ref_copy.write_bytes(ref.read_bytes())
        frame = luma_frames(dis, w, h, "420", 8)[2][::2, ::2]
    chroma = bytes([128]) * (2 * (w // 4) * (h // 4))
    small.write_bytes((frame.tobytes() + chroma) * 3)
    out, npy = tmp_path / "map.png", tmp_path / "map.npy"
    args = [str(ref_copy), str(small), "-w", str(w), "-h", str(h), "--frame", "2"]
    err = _error(capsys, [*args, "-o", str(out)], 1)
    assert "--scale" in err and not out.exists()
    assert main([*args, "--scale", "bicubic", "-o", str(out), "--npy", str(npy)]) == 0
    assert capsys.readouterr().err == ""
    with open_inputs(ref_copy, [small], width=w, height=h, scale="bicubic") as inputs:
        planes = [next(iter(r.iter_luma(2, 1))) for r in inputs.readers]
    got = np.load(npy)
    np.testing.assert_array_equal(got, distortion_map(*planes))
    scored = admcuda.score_files(ref_copy, small, width=w, height=h, scale="bicubic")
    assert math.isclose(1 - got.sum(), scored[2]["integer_adm2"], abs_tol=1e-6)
    assert _error(capsys, [*args, "--scale", "cubic", "-o", str(out)], 2)


def _error(capsys, argv, status):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.startswith("admcuda: error: ") and err.count("\n") == 1, err
    return err


def test_cli_errors(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = str(tmp_path / "o.png")
    with example_paths() as (ref, dis):
        geo = [str(ref), str(dis), "-w", "176", "-h", "144"]
        assert "out of range" in _error(capsys, [*geo, "--frame", "3", "-o", out], 1)
        assert "--frame must be" in _error(capsys, [*geo, "--frame", "-1", "-o", out], 2)
        for bad in ("1_0", "\uff11", "08", "1.5"):  # not 10, 1, 8 (octal has no 8) or 1
            assert "invalid integer" in _error(capsys, [*geo, "--frame", bad, "-o", out], 2)
        assert "too small" in _error(
            capsys, [str(ref), str(dis), "-w", "16", "-h", "144", "-o", out], 2
        )
        assert "unknown ADM option" in _error(capsys, [*geo, "--option", "x=1", "-o", out], 2)
        assert "NAME=VALUE" in _error(capsys, [*geo, "--option", "egl", "-o", out], 2)
        assert "does not exist" in _error(capsys, [*geo, "-o", str(tmp_path / "d" / "o.png")], 1)
        _error(capsys, geo, 2)  # no -o
        missing = [str(tmp_path / "nope.yuv"), str(dis), "-w", "176", "-h", "144", "-o", out]
        assert "reference file" in _error(capsys, missing, 1)
    assert not (tmp_path / "o.png").exists()
    assert main(["--help"]) == 0
    assert "--frame" in capsys.readouterr().out


def test_cli_frame_reads_integers_as_libvmaf_does(tmp_path, capsys):
    """--frame takes C's integer syntax, as -w/-h/-b and libvmaf's --frame_skip_ref and
    --frame_cnt do (strtoul(text, &end, 0)): 0x2 and 02 are frame 2, 010 is frame 8."""
    pytest.importorskip("matplotlib")
    png, npy = str(tmp_path / "o.png"), tmp_path / "o.npy"
    with example_paths() as (ref, dis):
        geo = [str(ref), str(dis), "-w", "176", "-h", "144", "-o", png, "--npy", str(npy)]
        assert main([*geo, "--frame", "2"]) == 0
        want = np.load(npy)
        for text in ("0x2", "02", " +2"):
            npy.unlink()
            assert main([*geo, "--frame", text]) == 0
            np.testing.assert_array_equal(np.load(npy), want)
        assert capsys.readouterr().err == ""
        err = _error(capsys, [*geo, "--frame", "010"], 1)
        assert "frame 8 is out of range: the files have 3 frames in common" in err


def test_cli_never_writes_over_its_inputs(tmp_path, capsys):
    """-o and --npy naming an input (or each other) are usage errors; the input is kept."""
    with example_paths() as (ref, dis):
        ref_copy, dis_copy = tmp_path / "ref.yuv", tmp_path / "dis.raw"
        ref_copy.write_bytes(ref.read_bytes())
        dis_copy.write_bytes(dis.read_bytes())
    geo = [str(ref_copy), str(dis_copy), "-w", "176", "-h", "144"]
    png = str(tmp_path / "o.png")
    err = _error(capsys, [*geo, "-o", png, "--npy", str(ref_copy)], 2)
    assert f"--npy '{ref_copy}' is the input '{ref_copy}'" in err
    assert "--output" in _error(capsys, [*geo, "-o", str(dis_copy)], 2)
    link = tmp_path / "link.raw"
    link.symlink_to(dis_copy)
    assert "is the input" in _error(capsys, [*geo, "-o", str(link)], 2)
    assert "is the --output file" in _error(capsys, [*geo, "-o", png, "--npy", png], 2)
    with example_paths() as (ref, dis):
        assert ref_copy.read_bytes() == ref.read_bytes()
        assert dis_copy.read_bytes() == dis.read_bytes()


def test_cli_outputs_must_be_image_files(tmp_path, capsys):
    """-o without an image suffix, a folder, a device: one-line usage errors naming the
    path given (not a temporary file's), before any work; nothing written or replaced."""
    pytest.importorskip("matplotlib")
    with example_paths() as (ref, dis):
        geo = [str(ref), str(dis), "-w", "176", "-h", "144"]
        for bad in ("m.xyz", "mapnoext", "m.npy", "-", "m.pgf"):  # pgf: LaTeX, after the work
            out = str(tmp_path / bad) if bad != "-" else bad
            err = _error(capsys, [*geo, "-o", out], 2)
            assert f"--output '{out}' must end in .png or another image suffix" in err
        assert f"--output '{tmp_path}' is a folder" in _error(
            capsys, [*geo, "-o", str(tmp_path)], 2
        )
        png = str(tmp_path / "o.png")
        err = _error(capsys, [*geo, "-o", png, "--npy", str(tmp_path)], 2)
        assert f"--npy '{tmp_path}' is a folder" in err
        fifo = tmp_path / "pipe.png"  # as a device would be, replaced by the rename
        os.mkfifo(fifo)
        err = _error(capsys, [*geo, "-o", png, "--npy", str(fifo)], 2)
        assert f"--npy '{fifo}' is not a regular file" in err
        assert f"--output '{fifo}' is not a regular file" in _error(
            capsys, [*geo, "-o", str(fifo)], 2
        )
    assert [p.name for p in tmp_path.iterdir()] == ["pipe.png"]
    assert not fifo.is_file()


def test_cli_npy_dash_is_standard_output(tmp_path, capsysbinary, monkeypatch):
    """--npy - writes the .npy bytes to standard output (as score's -o - writes there),
    no file named '-'; a terminal there is refused before any work."""
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    png = tmp_path / "o.png"
    with example_paths() as (ref, dis):
        geo = [str(ref), str(dis), "-w", "176", "-h", "144"]
        assert main([*geo, "--frame", "1", "-o", str(png), "--npy", "-"]) == 0
        frames_r = luma_frames(ref, EXAMPLE.width, EXAMPLE.height, "420", 8)
        frames_d = luma_frames(dis, EXAMPLE.width, EXAMPLE.height, "420", 8)
        out, err = capsysbinary.readouterr()
        assert err == b""
        want = distortion_map(frames_r[1], frames_d[1])
        np.testing.assert_array_equal(np.load(io.BytesIO(out)), want)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["o.png"]
        png.unlink()
        assert main([*geo, "-o", "-", "--npy", "-"]) == 2  # -o - is no image suffix
        assert b"--output '-' must end in .png" in capsysbinary.readouterr().err
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
        assert main([*geo, "-o", str(png), "--npy", "-"]) == 2
        out, err = capsysbinary.readouterr()
        assert out == b""
        assert err == b"admcuda: error: --npy -: standard output is a terminal; " \
            b"redirect it or name a file\n"  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_cli_npy_dash_to_a_closed_pipe(tmp_path):
    """A reader gone before the map is written: one line, status 1, no PNG made."""
    pytest.importorskip("matplotlib")
    read_end, write_end = os.pipe()
    os.close(read_end)
    png = tmp_path / "o.png"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ADMCUDA_TRACEBACK", None)
    with example_paths() as (ref, dis):
        argv = [str(ref), str(dis), "-w", "176", "-h", "144", "-o", str(png), "--npy", "-"]
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "admcuda", "map", *argv],
                stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
                timeout=300,
            )  # fmt: skip
        finally:
            os.close(write_end)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        "admcuda: error: --npy -: standard output was closed before the map was written\n"
    )
    assert list(tmp_path.iterdir()) == []


def _map_child(argv, stdout, cwd, unbuffered=True):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ADMCUDA_TRACEBACK", None)
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "admcuda", "map", *argv], stdout=stdout,
        stderr=subprocess.PIPE, env=env, cwd=cwd, timeout=300,
    )  # fmt: skip


# Not /dev/stdout itself: code that renames a temporary file over the path it is given (as
# map did) replaces the system's /dev/stdout link when it runs as root.
@pytest.mark.parametrize("spelling", ["/dev/fd/1", "/proc/self/fd/1"])
def test_cli_npy_to_standard_output_by_name(tmp_path, spelling):
    """--npy naming this process's standard output writes the .npy bytes through it, as
    --npy - does: to a file it was redirected to (appended after what is there, as a
    shell's >> keeps), or to a pipe; before, a file gave an error about a temporary file
    beside the descriptor and a pipe 'is not a regular file'."""
    pytest.importorskip("matplotlib")
    png = tmp_path / "o.png"
    with example_paths() as (ref, dis):
        frames_r = luma_frames(ref, EXAMPLE.width, EXAMPLE.height, "420", 8)
        frames_d = luma_frames(dis, EXAMPLE.width, EXAMPLE.height, "420", 8)
        want = io.BytesIO()
        np.save(want, distortion_map(frames_r[1], frames_d[1]))
        argv = [str(ref), str(dis), "-w", "176", "-h", "144", "--frame", "1", "-o", str(png)]
        log = tmp_path / "out.bin"
        log.write_bytes(b"OLD\n")
        with open(log, "ab") as out:
            proc = _map_child([*argv, "--npy", spelling], out, tmp_path)
        assert (proc.returncode, proc.stderr) == (0, b"")
        assert log.read_bytes() == b"OLD\n" + want.getvalue()
        read_end, write_end = os.pipe()
        child = subprocess.Popen(
            [sys.executable, "-m", "admcuda", "map", *argv, "--npy", spelling],
            stdout=write_end, stderr=subprocess.PIPE, cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )  # fmt: skip
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            piped = pipe.read()
        assert (child.wait(timeout=300), child.stderr.read()) == (0, b"")
        assert piped == want.getvalue()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.png", "out.bin"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_cli_npy_to_a_full_standard_output(tmp_path, unbuffered):
    """--npy - to a standard output that cannot be written: score's one line naming it
    (it was '[Errno 28] No space left on device'); no PNG made."""
    pytest.importorskip("matplotlib")
    png = tmp_path / "o.png"
    with example_paths() as (ref, dis), open("/dev/full", "wb") as full:
        argv = [str(ref), str(dis), "-w", "176", "-h", "144", "-o", str(png), "--npy", "-"]
        proc = _map_child(argv, full, tmp_path, unbuffered)
    assert (proc.returncode, proc.stderr) == (
        1, b"admcuda: error: No space left on device: standard output\n"
    )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_cli_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with example_paths() as (ref, dis):
        argv = [str(ref), str(dis), "-w", "176", "-h", "144", "-o", str(tmp_path / "o.png")]
        assert 'pip install ".[plot]"' in _error(capsys, argv, 1)


def test_cli_npy_to_a_standard_output_opened_on_an_input_is_refused(tmp_path):
    """``--npy - 1<>ref.yuv``: standard output is the reference; refused, ref kept."""
    ref_copy = tmp_path / "ref.yuv"
    with example_paths() as (ref, dis):
        ref_copy.write_bytes(ref.read_bytes())
        before = ref_copy.read_bytes()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        argv = [str(ref_copy), str(dis), "-w", "176", "-h", "144", "-o",
                str(tmp_path / "o.png"), "--npy", "-"]  # fmt: skip
        with open(ref_copy, "r+b") as out:
            proc = subprocess.run([sys.executable, "-m", "admcuda", "map", *argv], stdout=out,
                                  stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == (
        f"admcuda: error: --npy -: standard output is the input '{ref_copy}'; redirect it\n"
    )
    assert ref_copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.yuv"]


def test_cli_read_only_output_is_refused_and_a_replaced_one_keeps_its_mode(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "o.png"
    png.write_bytes(b"kept")
    png.chmod(0o444)
    with example_paths() as (ref, dis):
        geo = [str(ref), str(dis), "-w", "176", "-h", "144"]
        err = _error(capsys, [*geo, "-o", str(png)], 1)
        assert f"--output '{png}' is a read-only file: Permission denied" in err
        assert png.read_bytes() == b"kept"
        png.chmod(0o600)
        assert main([*geo, "-o", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_mode & 0o777 == 0o600


def test_cli_map_refuses_standard_input_named_twice(tmp_path):
    """``map - /dev/stdin``: one pipe under two names would feed each frame to one input."""
    pytest.importorskip("matplotlib")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "admcuda", "map", "-", "/dev/stdin", "-w", "176", "-h", "144",
         "-o", str(tmp_path / "m.png")],
        input=bytes(176 * 144 * 3 // 2 * 2), capture_output=True, env=env, cwd=tmp_path,
        timeout=120, check=False,
    )  # fmt: skip
    err = proc.stderr.decode()
    assert proc.returncode != 0 and len(err.strip().splitlines()) == 1, err
    assert "are the same stream (a pipe)" in err
    assert not (tmp_path / "m.png").exists()


def _bar(fig):
    """The colour bar of a distortion figure (its second axes)."""
    image, cax = fig.axes
    return image, cax, cax._colorbar


def test_colour_bar_says_its_unit_and_where_colours_saturate():
    """The bar's numbers are in a unit its label names (no bare ``1e-6`` offset); pixels
    above its top get an arrow and a note with their share and the largest value."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    heat = rng.uniform(0, 4e-6, (40, 50))
    heat[0, :5] = 2.5e-5  # 5 hot pixels of 2000, above the bar's top (99.5th percentile)
    background = np.full(heat.shape, 128, np.uint8)
    fig = distortion_figure(background, heat, 8, colorbar_label="share of x, per pixel")
    try:
        fig.canvas.draw()
        image, cax, bar = _bar(fig)
        assert cax.get_ylabel() == "share of x, per pixel (\u00d710\u207b\u2076)"
        assert bar.extend == "max"
        assert cax.yaxis.get_offset_text().get_text() == ""
        top = bar.norm.vmax
        assert 3e-6 < top < 4e-6
        share = 100 * np.count_nonzero(heat > top) / heat.size
        assert 0.25 <= share <= 0.5
        assert cax.yaxis.get_major_formatter()(top) == f"{top / 1e-6:g}"
        (note,) = [t.get_text() for t in image.texts]
        assert note == (
            f"colours saturate: {share:.2g} % of pixels lie above the scale's top "
            f"({top / 1e-6:.3g}\u00d710\u207b\u2076; the largest is 25\u00d710\u207b\u2076)"
        )
    finally:
        plt.close(fig)
    flat = np.full((40, 50), 3e-6)  # every value at the top: nothing saturates
    fig = distortion_figure(background, flat, 8, colorbar_label="share")
    try:
        image, cax, bar = _bar(fig)
        assert bar.extend == "neither" and not image.texts
        assert cax.get_ylabel() == "share (\u00d710\u207b\u2076)"
    finally:
        plt.close(fig)


def test_saved_map_labels_its_colour_bar_plainly(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    ref = textured(72, 96, 10)
    svg = tmp_path / "m.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text
        save_distortion_png(ref, blur(ref), 10, svg, frame_label="d vs r, frame 0")
    text = svg.read_text()
    assert "share of the frame's 1 \u2212 adm2, per pixel (\u00d710" in text
    assert "1e\u22126" not in text and "colours saturate: " in text

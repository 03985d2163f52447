"""CAMBI's contrast maps: the files libvmaf's ``heatmaps_path`` writes, byte for byte, from
the kernels and from ``admcuda score``; the scores pooled from the maps; ``admcuda map
--kind cambi``.

Goldens: ``testdata/cambi_heatmap_goldens.json`` (libvmaf 3.2.0's ``vmaf`` tool, scalar C,
``python3 testdata/make_cambi_heatmap_goldens.py --vmaf VMAF_TOOL``, 2026-12-07): the sha256
of each scale's file for synthetic pairs of ``testdata/make_cambi_goldens.py``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("matplotlib")

from admcuda.cli.main import main as cli_main  # noqa: E402
from admcuda.cli.map import main as map_main  # noqa: E402
from admcuda.compiled import cambi as K  # noqa: E402
from admcuda.errors import AdmError  # noqa: E402
from admcuda.report.banding import banding_maps  # noqa: E402
from admcuda.vmaf import cambi as V  # noqa: E402
from admcuda.vmaf.plan import parse_feature_arg  # noqa: E402

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
HEATMAPS = json.loads((TESTDATA / "cambi_heatmap_goldens.json").read_text())
SCORES = json.loads((TESTDATA / "cambi_goldens.json").read_text())["cases"]

_spec = importlib.util.spec_from_file_location("cambi_maker", TESTDATA / "make_cambi_goldens.py")
MAKER = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(MAKER)  # type: ignore[union-attr]


def _options(text: str) -> V.CambiOptions:
    return parse_feature_arg("cambi" + (f"={text}" if text else ""))[1]


def test_heatmap_goldens_provenance() -> None:
    prov = HEATMAPS["_provenance"]
    assert prov["libvmaf_version"] == "3.2.0"
    assert prov["libvmaf_commit"].startswith("Netflix/vmaf f85a8536")
    assert prov["code_path"].startswith("scalar C")
    text = (TESTDATA / "make_cambi_heatmap_goldens.py").read_bytes()
    assert prov["script_sha256"] == hashlib.sha256(text).hexdigest()


@pytest.mark.parametrize("case", sorted(HEATMAPS["cases"]))
def test_heatmaps_equal_libvmaf_files(case: str) -> None:
    """Each scale's maps over the pair's frames, converted as libvmaf converts them, hash
    to the file libvmaf wrote (named by the encoding size halved per scale, as libvmaf
    names them, also where the speed-up halves the first scale's maps)."""
    spec = HEATMAPS["cases"][case]
    width, height, bitdepth = MAKER.PAIRS[spec["pair"]][:3]
    _, dis = MAKER.pair_planes(spec["pair"])
    run = V.run_for(_options(spec["options"]), width, height, bitdepth)
    per_scale: list[list[bytes]] = [[] for _ in range(K.NUM_SCALES)]
    for plane in dis:
        for s, values in enumerate(run.maps(plane)):
            per_scale[s].append(K.heatmap_16bit(values, run.tables).astype("<u2").tobytes())
    w, h = run.enc
    names = []
    for s in range(K.NUM_SCALES):
        names.append(f"cambi_heatmap_scale_{s}_{w}x{h}_16b.gray")
        w, h = (w + 1) >> 1, (h + 1) >> 1
    assert sorted(names) == sorted(spec["files"])
    for name, chunks in zip(names, per_scale, strict=True):
        data = b"".join(chunks)
        want = spec["files"][name]
        assert len(data) == want["bytes"], name
        assert hashlib.sha256(data).hexdigest() == want["sha256"], name


def test_heatmap_scaling_truncates_to_the_windows_largest_value() -> None:
    tables = K.setup(320, 240)
    top = int(tables.diff_weights.max()) * tables.window * tables.window // 4
    assert (tables.window, top) == (7, 49)
    values = np.array([[0.0, 1.0, top / 2, top - 1e-3, top]], dtype=np.float32)
    got = K.heatmap_16bit(values, tables)
    assert got.dtype == np.uint16
    # 65535 / 49 * 49 is just under 65535 in double, and the C truncates: 65534
    assert got.tolist() == [[0, 1337, 32767, 65533, 65534]]


SCORE_CASES = [
    "default_band8_320x240", "default_band10_480x270", "default_band12_400x300",
    "window_33", "topk_0.2", "max_val", "mlc_4", "eotf_pq", "enc_scaled", "speedup_1080",
]  # fmt: skip


@pytest.mark.parametrize("case", SCORE_CASES)
def test_maps_pool_to_the_score(case: str) -> None:
    """banding_maps' score is pooled from its maps, and equals libvmaf's frame score."""
    spec = SCORES[case]
    _, dis = MAKER.pair_planes(spec["pair"])
    bitdepth = MAKER.PAIRS[spec["pair"]][2]
    for k, plane in enumerate(dis):
        maps = banding_maps(plane, bitdepth, _options(spec["options"]))
        ((name, want),) = spec["frames"][k].items()
        assert maps.name == name
        assert maps.score == want, (case, k, maps.score, want)


def test_heat_places_each_scale_at_the_frame() -> None:
    _, dis = MAKER.pair_planes("band8_320x240")
    maps = banding_maps(dis[0], 8)
    assert maps.heat.shape == (240, 320)
    assert [m.shape for m in maps.scales] == [(240, 320), (120, 160), (60, 80), (30, 40), (15, 20)]
    area = (2 * (maps.window >> 1) + 1) ** 2
    # a sample's heat adds its position's value at every scale, weighted as the score is
    y, x = 101, 203
    want = sum(
        w * float(m[y * m.shape[0] // 240, x * m.shape[1] // 320]) / area
        for w, m in zip((16, 8, 4, 2, 1), maps.scales, strict=True)
    )
    assert maps.heat[y, x] == pytest.approx(want, rel=1e-12)
    assert maps.heat.max() > 0
    # where nothing is flat there is no banding: a noisy frame's maps are zero
    rng = np.random.default_rng(3)
    noise = banding_maps(rng.integers(0, 256, (240, 320), dtype=np.uint8), 8)
    assert noise.score == 0.0 and not noise.heat.any()


def test_banding_maps_refusals() -> None:
    plane = np.zeros((240, 320), np.uint8)
    with pytest.raises(AdmError, match="216"):
        banding_maps(np.zeros((90, 160), np.uint8), 8)
    with pytest.raises(AdmError, match="uint16"):
        banding_maps(plane, 10)
    with pytest.raises(AdmError, match="heatmaps_path"):
        banding_maps(plane, 8, {"heatmaps_path": "x"})
    with pytest.raises(AdmError, match="1024, too large for 10 bits"):
        banding_maps(np.full((240, 320), 1024, np.uint16), 10)


@pytest.fixture
def band_files(tmp_path: Path) -> tuple[Path, Path]:
    ref, dis = MAKER.pair_bytes("band8_320x240")
    paths = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    for path, data in zip(paths, (ref, dis), strict=True):
        path.write_bytes(data)
    return paths


def test_command_line_draws_the_banding_map(band_files, tmp_path: Path) -> None:
    ref, dis = band_files
    png, npy = tmp_path / "b.png", tmp_path / "b.npy"
    argv = [str(ref), str(dis), "-w", "320", "-h", "240", "-p", "400", "--kind", "cambi",
            "--feature", "cambi=window_size=33", "--frame", "2",
            "-o", str(png), "--npy", str(npy)]  # fmt: skip
    assert map_main(argv) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _, planes = MAKER.pair_planes("band8_320x240")
    want = banding_maps(planes[2], 8, _options("window_size=33"))
    assert np.array_equal(np.load(npy), want.heat)
    assert want.score == SCORES["window_33"]["frames"][2]["cambi_ws_33"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--feature", "cambi=heatmaps_path=x"], "heatmaps_path"),
        (["--feature", "cambi=full_ref=true"], "full_ref"),
        (["--feature", "adm=adm_enhn_gain_limit=1.1"], "--kind cambi draws CAMBI"),
        (["--feature", "cambi", "--feature", "cambi"], "given 2 times"),
        (["--option", "adm_enhn_gain_limit=1.1"], "--option sets ADM options"),
        (["--feature", "cambi=window_size=3"], "window_size"),
    ],
)
def test_command_line_refusals(band_files, tmp_path: Path, capsys, extra, message) -> None:
    ref, dis = band_files
    out = tmp_path / "x.png"
    argv = [str(ref), str(dis), "-w", "320", "-h", "240", "-p", "400", "--kind", "cambi",
            *extra, "-o", str(out)]  # fmt: skip
    assert map_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_command_line_refuses_small_frames(tmp_path: Path, capsys) -> None:
    raw = np.zeros(160 * 90, np.uint8).tobytes()
    (tmp_path / "r.yuv").write_bytes(raw)
    (tmp_path / "d.yuv").write_bytes(raw)
    out = tmp_path / "x.png"
    argv = [str(tmp_path / "r.yuv"), str(tmp_path / "d.yuv"), "-w", "160", "-h", "90",
            "-p", "400", "--kind", "cambi", "-o", str(out)]  # fmt: skip
    assert map_main(argv) == 1
    err = capsys.readouterr().err
    assert "at least 216" in err and err.count("\n") == 1
    assert not out.exists()


def _write_pair(name: str, folder: Path) -> tuple[Path, Path]:
    paths = folder / f"{name}_ref.yuv", folder / f"{name}_dis.yuv"
    for path, data in zip(paths, MAKER.pair_bytes(name), strict=True):
        path.write_bytes(data)
    return paths


def _score_argv(name: str, ref: Path, dis: Path, feature: str, out: Path) -> list[str]:
    width, height, bitdepth = MAKER.PAIRS[name][:3]
    return ["score", "-q", "-r", str(ref), "-d", str(dis), "-w", str(width), "-h", str(height),
            "-p", "400", "-b", str(bitdepth), "--feature", feature, "-n", "--json",
            "-o", str(out)]  # fmt: skip


@pytest.mark.parametrize("case", sorted(HEATMAPS["cases"]))
def test_score_writes_libvmafs_heatmap_files(case: str, tmp_path: Path) -> None:
    """``admcuda score --feature cambi=heatmaps_path=DIR`` writes the files libvmaf's tool
    wrote, byte for byte, beside the same scores."""
    spec = HEATMAPS["cases"][case]
    ref, dis = _write_pair(spec["pair"], tmp_path)
    folder = tmp_path / "maps" / "deeper"
    feature = f"cambi=heatmaps_path={folder}" + (f":{spec['options']}" if spec["options"] else "")
    out = tmp_path / "out.json"
    assert cli_main(_score_argv(spec["pair"], ref, dis, feature, out)) == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted(spec["files"])
    assert folder.stat().st_mode & 0o777 == 0o770 & ~_umask()
    for name, want in spec["files"].items():
        data = (folder / name).read_bytes()
        assert len(data) == want["bytes"], name
        assert hashlib.sha256(data).hexdigest() == want["sha256"], name
    planes = MAKER.pair_planes(spec["pair"])[1]
    frames = json.loads(out.read_text())["frames"]
    assert len(frames) == len(planes)
    for plane, frame in zip(planes, frames, strict=True):
        want = banding_maps(plane, MAKER.PAIRS[spec["pair"]][2], _options(spec["options"]))
        assert frame["metrics"] == {want.name: want.score}


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_heatmap_files_are_truncated_by_a_new_run(tmp_path: Path) -> None:
    ref, dis = _write_pair("band8_320x240", tmp_path)
    folder = tmp_path / "maps"
    folder.mkdir()
    stale = folder / "cambi_heatmap_scale_4_20x15_16b.gray"
    stale.write_bytes(b"x" * 100_000)
    argv = _score_argv("band8_320x240", ref, dis, f"cambi=heatmaps_path={folder}",
                       tmp_path / "o.json")  # fmt: skip
    assert cli_main([*argv, "--frame-cnt", "1"]) == 0
    assert stale.stat().st_size == 20 * 15 * 2


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--subsample", "2"], "drop --subsample"),
        (["DIS2"], "2 are scored"),
    ],
)
def test_heatmaps_refused_where_a_run_cannot_write_them(tmp_path, capsys, extra, needle):
    ref, dis = _write_pair("band8_320x240", tmp_path)
    folder = tmp_path / "maps"
    argv = _score_argv("band8_320x240", ref, dis, f"cambi=heatmaps_path={folder}",
                       tmp_path / "o.json")  # fmt: skip
    if extra == ["DIS2"]:  # two distorted inputs, as REF DIS DIS
        dis2 = tmp_path / "dis2.yuv"
        dis2.write_bytes(dis.read_bytes())
        argv = ["score", "-q", str(ref), str(dis), str(dis2), *argv[6:]]
        argv[argv.index("-o") + 1] = str(tmp_path / "{name}.json")
        extra = []
    assert cli_main([*argv, *extra]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not folder.exists()


def test_heatmaps_never_write_an_input(tmp_path, capsys):
    folder = tmp_path / "maps"
    folder.mkdir()
    ref, dis = _write_pair("band8_320x240", folder)
    victim = folder / "cambi_heatmap_scale_0_320x240_16b.gray"
    victim.write_bytes(dis.read_bytes())
    before = victim.read_bytes()
    argv = _score_argv("band8_320x240", ref, victim, f"cambi=heatmaps_path={folder}",
                       tmp_path / "o.json")  # fmt: skip
    assert cli_main([*argv, "--ignore-name"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "would write the input" in err[0], err
    assert victim.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == sorted([ref.name, dis.name, victim.name])


def test_heatmaps_folder_that_cannot_be_made(tmp_path, capsys):
    ref, dis = _write_pair("band8_320x240", tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = _score_argv("band8_320x240", ref, dis, f"cambi=heatmaps_path={blocker / 'maps'}",
                       tmp_path / "o.json")  # fmt: skip
    assert cli_main(argv) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "heatmaps_path: cannot write" in err[0], err
    assert not (tmp_path / "o.json").exists()


def test_heatmaps_only_where_one_run_scores_one_pair(tmp_path):
    """The API's extractor and a batch's feature column refuse heatmaps_path in one line;
    admcuda.score writes the files as the command line does."""
    import admcuda
    from admcuda import VmafExtractor
    from admcuda.batch.manifest import read_jobs

    with pytest.raises(AdmError, match="heatmaps_path"):
        VmafExtractor(320, 240, 8, model=None, features=[f"cambi=heatmaps_path={tmp_path / 'x'}"])
    assert not (tmp_path / "x").exists()
    ref, dis = _write_pair("band8_320x240", tmp_path)
    row = {"ref": str(ref), "dis": str(dis), "width": 320, "height": 240,
           "pixel_format": "400", "feature": f"cambi=heatmaps_path={tmp_path / 'y'}"}  # fmt: skip
    (job,) = read_jobs([row])
    assert "heatmaps_path writes one pair's files" in job.error
    folder = tmp_path / "z"
    result = admcuda.score(ref, dis, width=320, height=240, pixel_format="400",
                           features=[f"cambi=heatmaps_path={folder}"])  # fmt: skip
    name = "cambi_heatmap_scale_0_320x240_16b.gray"
    assert (folder / name).stat().st_size == 3 * 320 * 240 * 2
    assert result.frames[0]["cambi"] == SCORES["default_band8_320x240"]["frames"][0]["cambi"]

"""``admcuda plot``: per-frame adm2 and scales from our JSON and libvmaf's, overlaid."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from test_report_result import LIBVMAF_JSON

from admcuda.cli.plot import main
from admcuda.errors import AdmError
from admcuda.options import AdmOptions, feature_names
from admcuda.report.plot import plot_figure, plot_result, read_scores, result_series
from admcuda.report.result import AdmResult


def _result(offset: float, n: int = 5, opts: AdmOptions | None = None, **meta) -> AdmResult:
    names = list(feature_names(opts or AdmOptions()).values())[:7]
    frames = [
        {name: offset + 0.01 * k + 0.001 * j for j, name in enumerate(names)} for k in range(n)
    ]
    return AdmResult(frames, meta)


def _png_shape(path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        assert image.format == "PNG"
        return image.size


def test_series_per_option_suffix():
    plain = _result(0.9)
    (series,) = result_series(plain, "a")
    assert series.label == "a" and series.values["integer_adm2"] == plain["integer_adm2"]
    assert set(series.values) == {"integer_adm2"} | {f"integer_adm_scale{s}" for s in range(4)}
    assert series.mean() == pytest.approx(np.mean(plain["integer_adm2"]))
    assert series.frames == [0, 1, 2, 3, 4]
    sub = AdmResult(plain.frames, frame_numbers=[0, 3, 6, 9, 12])
    assert result_series(sub, "s")[0].frames == [0, 3, 6, 9, 12]
    egl = _result(0.8, opts=AdmOptions(adm_enhn_gain_limit=1.2))
    both = AdmResult([{**a, **b} for a, b in zip(plain, egl, strict=True)])
    legends = [s.legend().split(" (mean")[0] for s in result_series(both, "clip")]
    assert legends == ["clip: integer_adm2", "clip: integer_adm2_egl_1.2"]


def test_legend_mean_is_the_pooled_mean(tmp_path):
    """A null frame makes libvmaf's pooled mean null (its sum is NaN), and admcuda's
    writers pool it so; the legend says so, not the mean of the other frames."""
    plain = _result(0.9)
    (series,) = result_series(plain, "a")
    assert series.mean() == plain.pooled["integer_adm2"]["mean"]
    assert series.legend() == f"a: integer_adm2 (mean {plain.pooled['integer_adm2']['mean']:.4f})"
    frames = [dict(f) for f in plain]
    frames[1]["integer_adm2"] = math.nan
    holed = AdmResult(frames)
    path = tmp_path / "withnull.json"
    holed.to_json(path)
    assert json.loads(path.read_text())["pooled_metrics"]["integer_adm2"]["mean"] is None
    (series,) = result_series(AdmResult.from_json(path), "withnull")
    assert math.isnan(series.mean())
    assert series.legend() == "withnull: integer_adm2 (mean null: 1 of 5 frames null)"
    assert math.isfinite(series.mean("integer_adm_scale0"))  # only adm2 has a null
    pytest.importorskip("matplotlib")
    import matplotlib

    svg = tmp_path / "p.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text stays text
        plot_result([path, plain], svg, labels=["withnull", "plain"])
    text = svg.read_text()
    assert "withnull: integer_adm2 (mean null: 1 of 5 frames null)" in text
    assert f"plain: integer_adm2 (mean {plain.pooled['integer_adm2']['mean']:.4f})" in text


def test_plot_result_from_objects_and_files(tmp_path):
    pytest.importorskip("matplotlib")
    paths = []
    for k in range(3):
        path = tmp_path / f"rung{k}.json"
        _result(0.9 - 0.05 * k, n=40).to_json(path)
        paths.append(path)
    libvmaf = tmp_path / "libvmaf.json"
    libvmaf.write_text(LIBVMAF_JSON)
    out = tmp_path / "adm.png"
    plot_result([*paths, libvmaf, _result(0.7, dis_path="x/dis.yuv")], out, title="ladder")
    width, height = _png_shape(out)
    assert width > 800 and height > 600
    svg = tmp_path / "one.svg"
    plot_result(paths[0], svg, labels=["only"])
    assert svg.read_text().lstrip().startswith("<?xml")


def test_cli(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _result(0.9).to_json(a)
    _result(0.8).to_json(b)
    out = tmp_path / "adm.png"
    assert main([str(a), str(b), "-o", str(out), "--label", "A", "--label", "B"]) == 0
    _png_shape(out)
    assert capsys.readouterr().err == ""


def test_cli_reads_xml_as_json(tmp_path, capsys):
    """The XML a ladder writes by default plots as its JSON does."""
    pytest.importorskip("matplotlib")
    _result(0.9, width=32, height=24).to_xml(tmp_path / "a.xml")
    assert main([str(tmp_path / "a.xml"), "-o", str(tmp_path / "adm.png")]) == 0
    _png_shape(tmp_path / "adm.png")
    assert capsys.readouterr().err == ""


def test_cli_refuses_a_video_in_one_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    video = tmp_path / "ref.y4m"
    video.write_bytes(b"YUV4MPEG2 W32 H24 F25:1 C420jpeg\nFRAME\n" + bytes(range(128, 256)) * 9)
    out = tmp_path / "q.png"
    assert main([str(video), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"admcuda: error: '{video}' is not a score file (libvmaf's JSON, XML or CSV, as admcuda "
        "score writes): not UTF-8 text (invalid start byte)\n"
    )
    assert not out.exists()


def _error(capsys, argv, status):
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.startswith("admcuda: error: ") and err.count("\n") == 1, err
    return err


def test_cli_errors(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    good = tmp_path / "a.json"
    _result(0.9).to_json(good)
    out = str(tmp_path / "o.png")
    assert "o.png" not in "".join(map(str, tmp_path.iterdir()))
    _error(capsys, [str(good)], 2)  # no -o
    _error(capsys, ["-o", out], 2)  # no input
    assert "2 --label for 1 results" in _error(
        capsys, [str(good), "-o", out, "--label", "x", "--label", "y"], 2
    )
    assert "No such file" in _error(capsys, [str(tmp_path / "nope.json"), "-o", out], 1)
    assert "does not exist" in _error(capsys, [str(good), "-o", str(tmp_path / "d" / "o.png")], 1)
    other = tmp_path / "vif.json"
    other.write_text('{"frames": [{"frameNum": 0, "metrics": {"integer_vif_scale0": 0.9}}]}')
    assert "no integer_adm2, VMAF model, PSNR, SSIM, CAMBI or SpEED scores" in _error(
        capsys, [str(other), "-o", out], 1
    )
    assert "no feature 'vmaf'" in _error(capsys, [str(good), "-o", out, "--metric", "vmaf"], 1)
    assert not (tmp_path / "o.png").exists()
    assert main(["--help"]) == 0
    assert "RESULT.json" in capsys.readouterr().out


def test_missing_matplotlib(tmp_path, capsys, monkeypatch):
    good = tmp_path / "a.json"
    _result(0.9).to_json(good)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    err = _error(capsys, [str(good), "-o", str(tmp_path / "o.png")], 1)
    assert 'pip install ".[plot]"' in err


def test_cli_output_suffix_checked_before_reading(tmp_path, capsys):
    """-o without an image suffix matplotlib writes: map's one-line usage error, before
    any result is read (a missing one is not reported), and nothing written."""
    pytest.importorskip("matplotlib")
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(
        f for f in FigureCanvasBase.get_supported_filetypes() if f not in ("pgf", "png")
    )
    good = tmp_path / "a.json"
    _result(0.9).to_json(good)
    for bad in ("plot.txt", "plotnoext", "plot.pgf"):
        out = str(tmp_path / bad)
        for results in ([str(good)], [str(tmp_path / "missing.json")]):
            assert main([*results, "-o", out]) == 2
            assert capsys.readouterr().err == (
                f"admcuda: error: --output '{out}' must end in .png or another image suffix "
                f"matplotlib writes ({', '.join('.' + f for f in formats)})\n"
            )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_cli_output_that_is_an_input_is_refused(tmp_path, capsys, link):
    """``plot lnk.png -o lnk.png`` with lnk.png a symbolic link to a score file, or
    ``plot scores.json -o lnk.png`` with lnk.png a hard link to it: refused, the score
    file left as it was."""
    pytest.importorskip("matplotlib")
    scores = tmp_path / "scores.json"
    _result(0.9).to_json(scores)
    before = scores.read_bytes()
    image = tmp_path / "lnk.png"
    if link == "symlink":
        image.symlink_to(scores)
        given = str(image)
    else:
        image.hardlink_to(scores)
        given = str(scores)
    err = _error(capsys, [given, "-o", str(image)], 2)
    assert f"--output '{image}' is the input '{given}'" in err
    assert scores.read_bytes() == before


def test_plot_result_refuses_to_draw_over_an_input(tmp_path):
    pytest.importorskip("matplotlib")
    scores = tmp_path / "scores.json"
    _result(0.9).to_json(scores)
    before = scores.read_bytes()
    image = tmp_path / "plot.png"
    image.symlink_to(scores)
    with pytest.raises(AdmError, match="is the input"):
        plot_result(scores, image)
    assert scores.read_bytes() == before


def test_model_scores_on_top(tmp_path, capsys):
    """A result with VMAF model scores (libvmaf's own file here) plots them on top, each
    with its pooled mean, above adm2 and its scales."""
    from conftest import TESTDATA

    from admcuda.report.plot import model_scores

    libvmaf = TESTDATA / "libvmaf_outputs" / "model_two.json"
    doc = json.loads(libvmaf.read_text())
    result = AdmResult.from_json(libvmaf, adm_only=False)
    assert model_scores(result.names) == ["vmaf", "vmaf_neg"]
    plain, egl = result_series(result, "two")
    assert list(plain.top) == ["vmaf", "vmaf_neg"] and not egl.top
    assert plain.top["vmaf"] == [f["metrics"]["vmaf"] for f in doc["frames"]]
    assert egl.legend().startswith("two: integer_adm2_egl_1 (mean ")
    mean = doc["pooled_metrics"]["vmaf_neg"]["mean"]
    assert plain.top_legend("vmaf_neg") == f"two: vmaf_neg (mean {mean:.4f})"
    pytest.importorskip("matplotlib")
    import matplotlib

    svg = tmp_path / "v.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        plot_result([libvmaf], svg, labels=["two"])
    text = svg.read_text()
    assert f"two: vmaf_neg (mean {mean:.4f})" in text and "vmaf / vmaf_neg" in text
    only = tmp_path / "only.json"
    only.write_text('{"frames": [{"frameNum": 0, "metrics": {"vmaf": 90.0}}]}')
    out = tmp_path / "o.png"
    assert main([str(only), str(libvmaf), "-o", str(out)]) == 0 and out.exists()
    assert main([str(libvmaf), "-o", str(out), "--metric", "integer_vif_scale0"]) == 0
    assert capsys.readouterr().err == ""
    (series, _) = result_series(result, "m", "integer_vif_scale0")
    assert list(series.top) == ["integer_vif_scale0"]


def _legend_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_legends_name_the_input_and_the_metric(tmp_path):
    """A file named vmaf.json does not read as the metric vmaf: each entry is
    ``input: metric``, the input a result's distorted file or the score file's name."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from conftest import TESTDATA

    vmaf = tmp_path / "vmaf.json"
    vmaf.write_bytes((TESTDATA / "libvmaf_outputs" / "model_two.json").read_bytes())
    fig = plot_figure(vmaf)
    try:
        top, adm2 = fig.axes[:2]
        assert adm2.get_title() == "integer_adm2"
        assert [t.split(" (mean")[0] for t in _legend_texts(adm2)] == [
            "vmaf.json: integer_adm2",
            "vmaf.json: integer_adm2_egl_1",
        ]
        assert [t.split(" (mean")[0] for t in _legend_texts(top)] == [
            "vmaf.json: vmaf",
            "vmaf.json: vmaf_neg",
        ]
        assert fig.get_suptitle() == "Per-frame scores: vmaf.json"
    finally:
        plt.close(fig)
    rungs = [_result(0.9, dis_path=f"enc/rung{k}.mp4", ref_path="src/ref.y4m") for k in range(2)]
    fig = plot_figure(rungs)
    try:
        assert [t.split(" (mean")[0] for t in _legend_texts(fig.axes[0])] == [
            "rung0.mp4: integer_adm2",
            "rung1.mp4: integer_adm2",
        ]
        assert fig.get_suptitle() == "Per-frame scores: rung0.mp4, rung1.mp4 vs ref.y4m"
    finally:
        plt.close(fig)
    fig = plot_figure([*rungs, vmaf], labels=["A", "B", "C"], title="ladder")
    try:
        assert _legend_texts(fig.axes[0])[0] == "C: vmaf (mean 82.5642)"
        assert _legend_texts(fig.axes[1])[0].startswith("A: integer_adm2 (mean ")
        assert fig.get_suptitle() == "ladder"
    finally:
        plt.close(fig)
    many = [_result(0.9, dis_path=f"r{k}.mp4") for k in range(6)]
    fig = plot_figure(many)
    try:
        assert fig.get_suptitle() == "Per-frame scores: r0.mp4, r1.mp4, r2.mp4, r3.mp4 and 2 more"
    finally:
        plt.close(fig)


def test_legends_stand_outside_the_axes(tmp_path):
    """Four rungs fill a panel: no legend covers a line, each stands right of its axes,
    inside the figure."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    rungs = []
    for k in range(4):
        frames = [{**f, "vmaf": 90.0 - 5 * k + j} for j, f in enumerate(_result(0.9 - 0.02 * k))]
        rungs.append(AdmResult(frames, {"dis_path": f"rung{k}.mp4"}))
    fig = plot_figure(rungs)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        figure_box = fig.bbox
        legends = [ax for ax in fig.axes if ax.get_legend() is not None]
        assert len(legends) == 2  # the top panel's and adm2's
        for ax in legends:
            box = ax.get_legend().get_window_extent(renderer)
            assert box.x0 >= ax.get_window_extent(renderer).x1
            assert box.x1 <= figure_box.x1 and box.y0 >= figure_box.y0
            assert len(ax.get_legend().get_texts()) == 4
    finally:
        plt.close(fig)


def test_cli_reads_the_csv_score_writes(tmp_path, capsys):
    """libvmaf's CSV layout, as admcuda's writer (and ``admcuda score --csv``) writes it,
    plots as the JSON does; a null frame reads back as NaN."""
    frames = [dict(f) for f in _result(0.9, n=4)]
    frames[2]["integer_adm2"] = math.nan
    result = AdmResult(frames, frame_numbers=[0, 2, 4, 6])
    csv, js = tmp_path / "a.csv", tmp_path / "a.json"
    result.to_csv(csv)
    result.to_json(js)
    read = read_scores(csv)
    assert read.frame_numbers == [0, 2, 4, 6] and read.names == result.names
    np.testing.assert_array_equal(read["integer_adm2"], result["integer_adm2"])
    assert read.metadata["source"] == str(csv)
    assert result_series(read, "a")[0].legend() == result_series(read_scores(js), "a")[0].legend()
    bad = tmp_path / "bad.csv"
    bad.write_text("Frame,integer_adm2,\n0,0.9,\n1,x,\n")
    with pytest.raises(AdmError, match="line 3 holds a value that is no number"):
        read_scores(bad)
    bad.write_text("Frame,integer_adm2,\n0,0.9,0.8,\n")
    with pytest.raises(AdmError, match="line 2 has 2 values for 1 names"):
        read_scores(bad)
    pytest.importorskip("matplotlib")
    out = tmp_path / "adm.png"
    assert main([str(csv), "-o", str(out)]) == 0
    _png_shape(out)
    assert capsys.readouterr().err == ""


# As admcuda score writes them, with options giving suffixes (cambi topk=0.5, speed_chroma
# speed_kernelscale=2) and the outputs no panel takes (enable_mse, enable_lcs, full_ref).
_OTHER_FEATURES = (
    "psnr_y", "mse_y", "psnr_cb", "psnr_cr", "float_ssim", "float_ssim_l", "float_ms_ssim",
    "float_ms_ssim_c_scale2", "cambi_topk_0.5", "cambi_source", "cambi_full_reference",
    "speed_chroma_u_ks_2", "speed_chroma_v_ks_2", "speed_chroma_uv_ks_2",
)  # fmt: skip
_ADM_TITLES = ["integer_adm2"] + [f"integer_adm_scale{s}" for s in range(4)]


def _with(result: AdmResult, names, value=0.5, **meta) -> AdmResult:
    return AdmResult([{**f, **dict.fromkeys(names, value)} for f in result], meta)


def _titles(results, **kw) -> tuple[list[str], list[list[str]]]:
    import matplotlib.pyplot as plt

    fig = plot_figure(results, **kw)
    try:
        legends = [_legend_texts(ax) if ax.get_legend() else [] for ax in fig.axes]
        return [ax.get_title() for ax in fig.axes], legends
    finally:
        plt.close(fig)


def test_panel_outputs_by_name():
    from admcuda.report.plot import model_scores, panel_outputs

    assert panel_outputs(_OTHER_FEATURES) == {
        "PSNR (dB)": ["psnr_y", "psnr_cb", "psnr_cr"],
        "SSIM / MS-SSIM": ["float_ssim", "float_ms_ssim"],
        "CAMBI": ["cambi_topk_0.5"],
        "SpEED chroma": ["speed_chroma_u_ks_2", "speed_chroma_v_ks_2", "speed_chroma_uv_ks_2"],
    }
    assert panel_outputs(["cambi", "speed_chroma_uv", "psnr_hvs_y", "float_psnr"]) == {
        "CAMBI": ["cambi"],
        "SpEED chroma": ["speed_chroma_uv"],
    }
    assert panel_outputs(["integer_adm2", "vmaf"]) == {}
    assert model_scores([*_OTHER_FEATURES, "mse_cb", "vmaf"]) == ["vmaf"]


def test_panels_only_for_the_outputs_present(tmp_path):
    """Each of PSNR, SSIM / MS-SSIM, CAMBI and SpEED gets a panel where some input has its
    outputs, between the model scores and ADM's; a file without them draws what it did."""
    pytest.importorskip("matplotlib")
    plain = _result(0.9, dis_path="plain.mp4")
    titles, legends = _titles(plain)
    assert titles == _ADM_TITLES
    assert [t.split(" (mean")[0] for t in legends[0]] == ["plain.mp4: integer_adm2"]
    every = _with(_result(0.9), _OTHER_FEATURES, dis_path="every.mp4")
    modelled = AdmResult([{**f, "vmaf": 90.0} for f in every], {"dis_path": "m.mp4"})
    titles, legends = _titles([modelled, plain])
    assert titles == [
        "vmaf", "PSNR (dB)", "SSIM / MS-SSIM", "CAMBI", "SpEED chroma", *_ADM_TITLES,
    ]  # fmt: skip
    assert legends[1] == [
        "m.mp4: psnr_y (mean 0.5000)",
        "m.mp4: psnr_cb (mean 0.5000)",
        "m.mp4: psnr_cr (mean 0.5000)",
    ]
    assert legends[2] == ["m.mp4: float_ssim (mean 0.5000)", "m.mp4: float_ms_ssim (mean 0.5000)"]
    assert legends[3] == ["m.mp4: cambi_topk_0.5 (mean 0.5000)"]
    assert [t.split(" (mean")[0] for t in legends[4]] == [
        "m.mp4: speed_chroma_u_ks_2",
        "m.mp4: speed_chroma_v_ks_2",
        "m.mp4: speed_chroma_uv_ks_2",
    ]
    assert [t.split(" (mean")[0] for t in legends[5]] == [
        "m.mp4: integer_adm2",
        "plain.mp4: integer_adm2",
    ]
    # one input's PSNR and another's CAMBI: both panels, each with its input's lines
    psnr = _with(_result(0.9), ["psnr_y", "psnr_cb", "psnr_cr"], 40.0, dis_path="a.mp4")
    cambi = _with(_result(0.8), ["cambi"], 1.25, dis_path="b.mp4")
    titles, legends = _titles([psnr, cambi])
    assert titles == ["PSNR (dB)", "CAMBI", *_ADM_TITLES]
    assert legends[0][0] == "a.mp4: psnr_y (mean 40.0000)"
    assert legends[1] == ["b.mp4: cambi (mean 1.2500)"]
    # a file of the new outputs alone (admcuda score -n --feature psnr) plots them alone
    only = tmp_path / "psnr.json"
    only.write_text('{"frames": [{"frameNum": 0, "metrics": {"psnr_y": 40.0}}]}')
    assert _titles(only)[0] == ["PSNR (dB)"]
    ssim = tmp_path / "ssim.json"
    AdmResult([{"float_ssim": 0.99, "float_ms_ssim": 0.98}] * 3).to_json(ssim)
    titles, legends = _titles([only, ssim])
    assert titles == ["PSNR (dB)", "SSIM / MS-SSIM"]
    assert legends[1] == [
        "ssim.json: float_ssim (mean 0.9900)",
        "ssim.json: float_ms_ssim (mean 0.9800)",
    ]


def test_panels_draw_nulls_and_infinities(tmp_path, capsys):
    """A null frame (JSON null, read back as NaN) and an infinite PSNR (identical frames
    without a cap, as some tools write it) leave gaps, and the legends say so."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "holes.json"
    path.write_text(
        '{"frames": ['
        '{"frameNum": 0, "metrics": {"psnr_y": Infinity, "psnr_cb": null, "psnr_cr": 40.0,'
        ' "cambi": null, "speed_chroma_u": NaN}},'
        '{"frameNum": 1, "metrics": {"psnr_y": 50.0, "psnr_cb": 41.0, "psnr_cr": 40.0,'
        ' "cambi": null, "speed_chroma_u": 0.25}}]}'
    )
    titles, legends = _titles(path)
    assert titles == ["PSNR (dB)", "CAMBI", "SpEED chroma"]
    assert legends[0] == [
        "holes.json: psnr_y (mean inf)",
        "holes.json: psnr_cb (mean null: 1 of 2 frames null)",
        "holes.json: psnr_cr (mean 40.0000)",
    ]
    assert legends[1] == ["holes.json: cambi (mean null: 2 of 2 frames null)"]
    assert legends[2] == ["holes.json: speed_chroma_u (mean null: 1 of 2 frames null)"]
    capped = tmp_path / "capped.json"
    AdmResult([{"psnr_y": 60.0, "float_ssim": 1.0}] * 2).to_json(capped)
    out = tmp_path / "p.png"
    assert main([str(path), str(capped), "-o", str(out)]) == 0
    _png_shape(out)
    assert capsys.readouterr().err == ""

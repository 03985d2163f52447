"""AdmResult: construction, access, pooling through the writers, files and read-back."""

from __future__ import annotations

import io
import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from admcuda.errors import AdmError
from admcuda.options import AdmOptions, feature_names
from admcuda.report.result import AdmResult, options_from_suffix, split_feature_name
from admcuda.report.writers import pooled_metrics

# libvmaf 3.2.0 scalar C, Netflix src01 576x324 3 frames, default options
# (tests/test_report_writers.py).
FRAMES = [
    {"integer_adm2": 0.9620839149029907, "integer_aim": 0.011383920049685787},
    {"integer_adm2": 0.9497659148156563, "integer_aim": 0.01834548078029396},
    {"integer_adm2": 0.9434615069247936, "integer_aim": 0.02642431883751486},
]
META = {
    "width": 576,
    "height": 324,
    "bitdepth": 8,
    "pixel_format": "420",
    "backend": "cpu",
    "ref_path": "ref.yuv",
    "dis_path": "dis.yuv",
    "fps": 12.5,
}


def test_construct_and_access():
    r = AdmResult(FRAMES, META)
    assert len(r) == 3
    assert r[0] == FRAMES[0] and r[1:] == FRAMES[1:] and list(r) == FRAMES
    assert r["integer_adm2"] == [f["integer_adm2"] for f in FRAMES]
    assert r.names == ["integer_adm2", "integer_aim"]
    assert (r.width, r.height, r.bitdepth, r.backend, r.fps) == (576, 324, 8, "cpu", 12.5)
    assert r.metadata["pixel_format"] == "420" and r.metadata["ref_path"] == "ref.yuv"
    assert r.options is None and r.metadata["version"] is None
    assert repr(r) == "<AdmResult 3 frames, 576x324, mean integer_adm2 0.951770>"
    # The frames are copied, not shared.
    frames = [dict(f) for f in FRAMES]
    copy = AdmResult(frames)
    frames[0]["integer_adm2"] = 0.0
    assert copy[0]["integer_adm2"] == FRAMES[0]["integer_adm2"]


def test_pooled_is_the_writers_pooling():
    r = AdmResult(FRAMES)
    assert r.pooled == pooled_metrics(FRAMES)
    # libvmaf 3.2.0 CLI on the same clip printed these pooled values (%.6f).
    adm2 = r.pooled["integer_adm2"]
    assert [f"{adm2[m]:.6f}" for m in ("min", "max", "mean", "harmonic_mean")] == [
        "0.943462",
        "0.962084",
        "0.951770",
        "0.951740",
    ]
    assert AdmResult([]).pooled == {} and len(AdmResult([])) == 0


def test_inconsistent_frames_refused():
    with pytest.raises(AdmError, match="frame 1 has features"):
        AdmResult([{"integer_adm2": 1.0}, {"integer_aim": 0.0}])


def test_options_metadata():
    r = AdmResult(FRAMES, {"options": {"egl": 1.2}})
    assert r.options == AdmOptions(adm_enhn_gain_limit=1.2)
    with pytest.raises(AdmError, match="metadata 'options'"):
        AdmResult(FRAMES, {"options": 3})


def test_feature_name_lookup():
    opts = AdmOptions(adm_enhn_gain_limit=1.2, debug=True)
    names = feature_names(opts)
    frame = {name: float(k) for k, name in enumerate(names.values())}
    r = AdmResult([frame])
    assert r.feature_name("integer_adm2") == "integer_adm2_egl_1.2"
    assert r.feature_name("integer_adm_num_scale0") == "integer_adm_num_scale0_egl_1.2"
    assert r.feature_name("integer_adm") == "integer_adm_egl_1.2"
    assert r["integer_adm_scale3"] == [frame["integer_adm_scale3_egl_1.2"]]
    with pytest.raises(KeyError, match="no feature 'vmaf'"):
        r.values("vmaf")
    both = AdmResult([{"integer_adm2": 1.0, "integer_adm2_egl_1.2": 0.9}])
    assert both.feature_name("integer_adm2") == "integer_adm2"
    with pytest.raises(KeyError, match="ambiguous"):
        AdmResult([{"integer_adm2_egl_1.2": 1.0, "integer_adm2_nvd_4": 0.9}]).values("integer_adm2")


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("integer_adm2", ("integer_adm2", "")),
        ("integer_adm", ("integer_adm", "")),
        ("integer_adm_num_scale0", ("integer_adm_num_scale0", "")),
        ("integer_adm_num_egl_1.2", ("integer_adm_num", "_egl_1.2")),
        ("integer_adm_scale3_csf_2_ssz", ("integer_adm_scale3", "_csf_2_ssz")),
        ("integer_aim_nvd_4", ("integer_aim", "_nvd_4")),
        ("integer_vif", None),
        ("adm2", None),
    ],
)
def test_split_feature_name(name, parts):
    assert split_feature_name(name) == parts


@pytest.mark.parametrize(
    "opts",
    [
        AdmOptions(),
        AdmOptions(adm_enhn_gain_limit=1.2),
        AdmOptions(adm_norm_view_dist=4.0, adm_ref_display_height=2160, adm_skip_scale0=True),
        AdmOptions(adm_csf_mode=2, adm_noise_weight=0.5, adm_min_val=0.1, adm_dlm_weight=1.0),
        AdmOptions(adm_csf_scale=1.5, adm_csf_diag_scale=1e-5),
    ],
)
def test_options_from_suffix_round_trip(opts):
    names = feature_names(opts)
    suffix = names["integer_adm2"][len("integer_adm2") :]
    assert options_from_suffix(suffix) == opts


@pytest.mark.parametrize("suffix", ["egl_1.2", "_egl", "_bogus_1", "_egl_x", "_egl_1.20", "_debug"])
def test_options_from_suffix_refuses(suffix):
    assert options_from_suffix(suffix) is None


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
def test_files_match_the_writers(tmp_path, fmt):
    from admcuda.report.writers import render

    r = AdmResult(FRAMES, META)
    path = tmp_path / f"out.{fmt}"
    getattr(r, f"to_{fmt}")(path)
    stream = io.StringIO()
    getattr(r, f"to_{fmt}")(stream)
    want = render(fmt, FRAMES, width=576, height=324, fps=12.5)
    assert path.read_text() == stream.getvalue() == want
    if fmt == "xml":
        assert ET.fromstring(want).find("params").get("qualityWidth") == "576"


def test_xml_needs_geometry(tmp_path):
    with pytest.raises(AdmError, match="width and height"):
        AdmResult(FRAMES).to_xml(tmp_path / "x.xml")
    assert not (tmp_path / "x.xml").exists()


def test_json_round_trip(tmp_path):
    opts = AdmOptions(adm_enhn_gain_limit=1.2, debug=True)
    names = list(feature_names(opts).values())
    frames = [{name: 0.5 + k / 100 + j / 1000 for j, name in enumerate(names)} for k in range(4)]
    frames[2][names[1]] = math.nan  # AIM is NaN where the denominator is 0
    r = AdmResult(frames, {**META, "options": opts, "version": "9.9"})
    path = tmp_path / "r.json"
    r.to_json(path)
    back = AdmResult.from_json(path)
    assert len(back) == 4 and back.names == names
    for got, want in zip(back, frames, strict=True):
        for name in names:
            assert got[name] == want[name] or (math.isnan(got[name]) and math.isnan(want[name]))
    assert back.options == opts
    assert back.fps == 12.5 and back.metadata["version"] == "9.9"
    assert back.metadata["source"] == str(path)
    assert back.width is None
    with path.open() as handle:
        assert AdmResult.from_json(handle).names == names


# A libvmaf 3.2.0 JSON in its own formatting (%.6f, null without a newline, other
# features, frameNum from 0), shaped as `vmaf --json` writes it with
# `--feature adm=adm_enhn_gain_limit=1.2 --feature float_ssim`.
LIBVMAF_JSON = """{
  "version": "3.2.0",
  "fps": 31.27,
  "frames": [
    {
      "frameNum": 0,
      "metrics": {
        "float_ssim": 0.912000,
        "integer_adm2_egl_1.2": 0.962084,
        "integer_aim_egl_1.2": 0.011384,
        "integer_adm3_egl_1.2": 0.975350,
        "integer_adm_scale0_egl_1.2": 0.944245,
        "integer_adm_scale1_egl_1.2": 0.955931,
        "integer_adm_scale2_egl_1.2": 0.968254,
        "integer_adm_scale3_egl_1.2": 0.978128
      }
    },
    {
      "frameNum": 1,
      "metrics": {
        "float_ssim": null,        "integer_adm2_egl_1.2": 0.949766,
        "integer_aim_egl_1.2": null,        "integer_adm3_egl_1.2": 0.965711,
        "integer_adm_scale0_egl_1.2": 0.931172,
        "integer_adm_scale1_egl_1.2": 0.942093,
        "integer_adm_scale2_egl_1.2": 0.956391,
        "integer_adm_scale3_egl_1.2": 0.968860
      }
    }
  ],
  "pooled_metrics": {
    "integer_adm2_egl_1.2": {
      "min": 0.949766,
      "max": 0.962084,
      "mean": 0.955925,
      "harmonic_mean": 0.955910
    }
  },
  "aggregate_metrics": {
  }
}
"""


def test_reads_libvmaf_json(tmp_path):
    path = tmp_path / "libvmaf.json"
    path.write_text(LIBVMAF_JSON)
    r = AdmResult.from_json(path, adm_only=True)
    assert len(r) == 2 and len(r.names) == 7 and "float_ssim" not in r.names
    assert r["integer_adm2"] == [0.962084, 0.949766]
    assert math.isnan(r[1]["integer_aim_egl_1.2"])
    assert r.options == AdmOptions(adm_enhn_gain_limit=1.2)
    assert r.fps == 31.27 and r.metadata["version"] == "3.2.0"
    everything = AdmResult.from_json(path)  # every output by default
    assert everything.names[0] == "float_ssim" and math.isnan(everything[1]["float_ssim"])


def test_xml_round_trip(tmp_path):
    """admcuda's XML reads back as its JSON does, with the geometry the XML carries."""
    opts = AdmOptions(adm_enhn_gain_limit=1.2, debug=True)
    names = list(feature_names(opts).values())
    frames = [{name: 0.5 + k / 100 + j / 1000 for j, name in enumerate(names)} for k in range(4)]
    frames[2][names[1]] = math.nan
    r = AdmResult(frames, {**META, "options": opts, "version": "9.9"}, frame_numbers=[0, 2, 4, 6])
    r.to_xml(tmp_path / "r.xml")
    r.to_json(tmp_path / "r.json")
    back, json_back = (
        AdmResult.from_xml(tmp_path / "r.xml"),
        AdmResult.from_json(tmp_path / "r.json"),
    )
    assert back.names == names and back.frame_numbers == [0, 2, 4, 6]
    assert repr(back.frames) == repr(json_back.frames)  # NaN in the same places
    assert repr(back.pooled) == repr(json_back.pooled) and back.options == opts
    assert (back.width, back.height, back.fps) == (META["width"], META["height"], 12.5)
    assert back.metadata["version"] == "9.9" and back.metadata["source"] == str(tmp_path / "r.xml")
    for path in ("r.xml", "r.json"):  # read() tells them apart by content, not by name
        (tmp_path / path).rename(tmp_path / "scores.txt")
        assert repr(AdmResult.read(tmp_path / "scores.txt").frames) == repr(json_back.frames)


# libvmaf 3.2.0's XML layout (libvmaf/src/output.c, vmaf_write_output_xml): %.6f values,
# other features beside ADM, an empty <aggregate_metrics />; the numbers of LIBVMAF_JSON.
LIBVMAF_XML = """<VMAF version="3.2.0">
  <params qualityWidth="576" qualityHeight="324" />
  <fyi fps="31.27" />
  <frames>
    <frame frameNum="0" float_ssim="0.912000" integer_adm2_egl_1.2="0.962084" \
integer_aim_egl_1.2="0.011384" integer_adm3_egl_1.2="0.975350" \
integer_adm_scale0_egl_1.2="0.944245" integer_adm_scale1_egl_1.2="0.955931" \
integer_adm_scale2_egl_1.2="0.968254" integer_adm_scale3_egl_1.2="0.978128" />
    <frame frameNum="1" float_ssim="0.901000" integer_adm2_egl_1.2="0.949766" \
integer_aim_egl_1.2="nan" integer_adm3_egl_1.2="0.965711" \
integer_adm_scale0_egl_1.2="0.931172" integer_adm_scale1_egl_1.2="0.942093" \
integer_adm_scale2_egl_1.2="0.956391" integer_adm_scale3_egl_1.2="0.968860" />
  </frames>
  <pooled_metrics>
    <metric name="float_ssim" min="0.901000" max="0.912000" mean="0.906500" \
harmonic_mean="0.906467" />
    <metric name="integer_adm2_egl_1.2" min="0.949766" max="0.962084" mean="0.955925" \
harmonic_mean="0.955910" />
  </pooled_metrics>
  <aggregate_metrics />
</VMAF>
"""


def test_reads_libvmaf_xml(tmp_path):
    path = tmp_path / "libvmaf.xml"
    path.write_text(LIBVMAF_XML)
    r = AdmResult.read(path, adm_only=True)
    assert len(r) == 2 and len(r.names) == 7 and "float_ssim" not in r.names
    assert r["integer_adm2"] == [0.962084, 0.949766] and math.isnan(r[1]["integer_aim_egl_1.2"])
    assert r.pooled["integer_adm2"]["harmonic_mean"] == 0.955910
    assert r.options == AdmOptions(adm_enhn_gain_limit=1.2)
    assert (r.width, r.height, r.fps, r.metadata["version"]) == (576, 324, 31.27, "3.2.0")
    assert AdmResult.read(path)["float_ssim"] == [0.912, 0.901]  # every output by default


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"YUV4MPEG2 W176 H144 F25:1\nFRAME\n\xff\xfe\x80", "not UTF-8 text"),  # a video
        (b"FRAME\n\x10\x00\x10", "it holds NUL bytes"),
        (b"frame;integer_adm2\n0;0.9\n", "is not a score file (libvmaf's JSON, XML or CSV"),
        (b"Frame,integer_adm2,\n0,0.9,\n1,1_0,\n", "line 3 holds a value that is no number"),
        (b"Frame,integer_adm2,\n0,0.9,0.8,\n", "line 2 has 2 values for 1 names"),
        (b"Frame,integer_adm2,\n-1,0.9,\n", "line 2 has frame number '-1'"),
        (b"Frame,integer_adm2,integer_adm2,\n0,0.9,0.9,\n", "does not name each score once"),
        (b"<VMAF><frames>", "is not valid XML"),
        (b"<html><frames/></html>", "not a libvmaf XML result"),
        (b'<VMAF><frames><frame frameNum="x" integer_adm2="1" /></frames></VMAF>', "frameNum 'x'"),
        (b'<VMAF><frames><frame integer_adm2="high" /></frames></VMAF>', "is 'high', not a"),
        (b'{"frames": [{"metrics": {"integer_adm2": "high"}}]}', "is 'high', not a number"),
        (b'{"frames": [{"metrics": {"integer_adm2": 1}}], "n": ' + b"9" * 5000 + b"}", "JSON"),
    ],
    ids=[
        "y4m",
        "nul",
        "not-csv",
        "csv-value",
        "csv-row",
        "csv-frame",
        "csv-header",
        "xml",
        "html",
        "frame-number",
        "xml-value",
        "json-value",
        "digits",
    ],
)
def test_what_is_not_a_score_file_is_one_line(tmp_path, data, needle):
    path = tmp_path / "scores"
    path.write_bytes(data)
    with pytest.raises(AdmError) as info:
        AdmResult.read(path)
    message = str(info.value)
    assert needle in message and message.startswith(f"'{path}'") and "\n" not in message


def test_a_score_file_is_read_with_a_bound(tmp_path, monkeypatch):
    """Past the limit (a device or a pipe that never ends), one line names the file and
    the limit; nothing more is read."""
    from admcuda.report import result

    monkeypatch.setattr(result, "RESULT_LIMIT", 2 * 1024 * 1024)
    path = tmp_path / "big.json"
    path.write_text(" " * (2 * 1024 * 1024) + "{}")
    with pytest.raises(AdmError, match=f"^'{path}' is larger than 2 MiB, the most admcuda reads$"):
        AdmResult.read(path)
    with pytest.raises(AdmError, match="larger than 2 MiB"), path.open() as handle:
        AdmResult.from_json(handle)


def _six_decimal_file(path, frames, pooled):
    """A JSON file as libvmaf writes it: per-frame values and pooled values each rounded
    to 6 decimals, the pooled ones pooled before rounding."""

    def six(value):
        return None if value is None or math.isnan(value) else float(f"{value:.6f}")

    doc = {
        "version": "3.2.0",
        "fps": 30.0,
        "frames": [
            {"frameNum": k, "metrics": {n: six(v) for n, v in f.items()}}
            for k, f in enumerate(frames)
        ],
        "pooled_metrics": {
            name: {m: six(v) for m, v in methods.items()} for name, methods in pooled.items()
        },
        "aggregate_metrics": {},
    }
    path.write_text(json.dumps(doc, indent=2))
    return doc


def test_from_json_keeps_the_files_pooled_values(tmp_path):
    """libvmaf pools the unrounded values and prints both to 6 decimals: pooling the
    printed frames again differs (here mean 0.951770667 against the file's 0.951770).
    The file's values are kept, read and written; a feature it gives none for is pooled."""
    pooled = {"integer_adm2": pooled_metrics(FRAMES)["integer_adm2"]}
    pooled["integer_aim"] = {**pooled_metrics(FRAMES)["integer_aim"], "harmonic_mean": math.nan}
    del pooled["integer_aim"]["max"]
    path = tmp_path / "libvmaf.json"
    doc = _six_decimal_file(path, FRAMES, pooled)
    want = doc["pooled_metrics"]
    r = AdmResult.from_json(path)
    again = pooled_metrics(r.frames)
    assert again["integer_adm2"]["mean"] != want["integer_adm2"]["mean"]  # the case at hand
    assert r.pooled["integer_adm2"] == want["integer_adm2"]
    assert r.pooled["integer_aim"]["mean"] == want["integer_aim"]["mean"]
    assert math.isnan(r.pooled["integer_aim"]["harmonic_mean"])  # null in the file
    assert r.pooled["integer_aim"]["max"] == again["integer_aim"]["max"]  # not in the file
    assert list(r.pooled["integer_aim"]) == ["min", "max", "mean", "harmonic_mean"]
    out = tmp_path / "back.json"
    r.to_json(out)
    assert json.loads(out.read_text())["pooled_metrics"] == {
        "integer_adm2": want["integer_adm2"],
        "integer_aim": {**want["integer_aim"], "max": again["integer_aim"]["max"]},
    }
    again_out = tmp_path / "again.json"
    AdmResult.from_json(out).to_json(again_out)
    assert (
        json.loads(again_out.read_text())["pooled_metrics"]
        == json.loads(out.read_text())["pooled_metrics"]
    )
    xml = io.StringIO()
    r.metadata.update(width=576, height=324)
    r.to_xml(xml)
    metric = ET.fromstring(xml.getvalue()).find("pooled_metrics").find("metric")
    assert float(metric.get("mean")) == want["integer_adm2"]["mean"]
    # Frames changed since: their pooling, not the file's.
    r.frames[0]["integer_adm2"] = 0.5
    assert r.pooled["integer_adm2"] == pooled_metrics(r.frames)["integer_adm2"]
    assert r.pooled["integer_aim"]["mean"] == want["integer_aim"]["mean"]


def test_pooled_argument():
    kept = {"integer_adm2": {"mean": 0.95}}
    r = AdmResult(FRAMES, pooled=kept)
    assert r.pooled["integer_adm2"] == {**pooled_metrics(FRAMES)["integer_adm2"], "mean": 0.95}
    assert r.pooled["integer_aim"] == pooled_metrics(FRAMES)["integer_aim"]
    assert AdmResult(FRAMES, pooled={}).pooled == AdmResult(FRAMES).pooled
    for bad, needle in [
        ({"vmaf": {"mean": 1.0}}, "pooled values for 'vmaf', which the frames do not have"),
        ({"integer_adm2": {"median": 1.0}}, "unknown method 'median'"),
        ({"integer_adm2": {"mean": "0.9"}}, "integer_adm2' mean must be a number, got '0.9'"),
        ({"integer_adm2": {"mean": True}}, "must be a number, got True"),
        ({"integer_adm2": 0.9}, "pooled 'integer_adm2' must be a mapping"),
    ]:
        with pytest.raises(AdmError, match=needle):
            AdmResult(FRAMES, pooled=bad)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{", "is not valid JSON"),
        (
            '{"frames": [{"metrics": {"integer_adm2": 1}}], "pooled_metrics": []}',
            '"pooled_metrics" is not an object',
        ),
        (
            '{"frames": [{"metrics": {"integer_adm2": 1}}],'
            ' "pooled_metrics": {"integer_adm2": {"mean": "x"}}}',
            "mean must be a number",
        ),
        ("[]", 'no "frames" list'),
        ('{"frames": [1]}', 'frame entry 0 has no "metrics"'),
        ('{"frames": [{"metrics": {"vmaf": 90}}]}', "holds no integer ADM scores"),
        (
            '{"frames": [{"metrics": {"integer_adm2": 1}}, {"metrics": {"integer_aim": 0}}]}',
            "frame 1 has features",
        ),
    ],
)
def test_from_json_errors(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(AdmError, match=needle) as info:
        AdmResult.from_json(path, adm_only=True)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_from_json_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        AdmResult.from_json(tmp_path / "nope.json")


def test_written_json_is_libvmaf_layout(tmp_path):
    path = tmp_path / "r.json"
    AdmResult(FRAMES, META).to_json(path)
    doc = json.loads(path.read_text())
    assert list(doc) == [
        "version", "admcuda_version", "fps", "frames", "pooled_metrics", "aggregate_metrics"
    ]  # fmt: skip
    assert doc["version"] == "3.2.0"  # no version read: libvmaf's, whose numbers these are
    assert doc["frames"][2]["frameNum"] == 2


def test_to_dataframe():
    pd = pytest.importorskip("pandas")
    frame = AdmResult(FRAMES).to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == ["integer_adm2", "integer_aim"]
    assert frame.index.name == "frame" and frame["integer_aim"].iloc[2] == FRAMES[2]["integer_aim"]
    assert list(AdmResult(FRAMES, frame_numbers=[4, 8, 12]).to_dataframe().index) == [4, 8, 12]


def test_to_dataframe_without_pandas(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(AdmError, match="pip install pandas"):
        AdmResult(FRAMES).to_dataframe()


def test_frame_numbers(tmp_path):
    r = AdmResult(FRAMES, META, frame_numbers=[0, 5, 10])
    assert r.frame_numbers == [0, 5, 10]
    assert AdmResult(FRAMES).frame_numbers == [0, 1, 2]
    path = tmp_path / "sub.json"
    r.to_json(path)
    assert [f["frameNum"] for f in json.loads(path.read_text())["frames"]] == [0, 5, 10]
    assert AdmResult.from_json(path).frame_numbers == [0, 5, 10]
    stream = io.StringIO()
    r.to_csv(stream)
    assert [line.split(",")[0] for line in stream.getvalue().splitlines()[1:]] == ["0", "5", "10"]
    with pytest.raises(AdmError, match="2 frame numbers for 3 frames"):
        AdmResult(FRAMES, frame_numbers=[0, 1])
    bad = tmp_path / "bad.json"
    bad.write_text('{"frames": [{"frameNum": "x", "metrics": {"integer_adm2": 1}}]}')
    with pytest.raises(AdmError, match="frameNum 'x'"):
        AdmResult.from_json(bad)


def _scored_pair(tmp_path):
    rng = np.random.default_rng(3)
    ref, dis = tmp_path / "ref.yuv", tmp_path / "dis.yuv"
    frame = rng.integers(0, 256, 48 * 32 * 3 // 2, dtype=np.uint8)
    ref.write_bytes(frame.tobytes())
    dis.write_bytes(np.clip(frame.astype(int) + rng.integers(-9, 10, frame.size), 0, 255)
                    .astype(np.uint8).tobytes())  # fmt: skip
    return ref, dis


@pytest.mark.parametrize("writer", ["to_json", "to_xml", "to_csv"])
def test_writers_refuse_the_results_own_inputs(tmp_path, writer):
    """``admcuda.score(ref, dis).to_json(ref)`` would replace the reference it scored:
    refused with an AdmError naming it, directly or through a link, as ``admcuda score
    -o`` refuses; another path is written."""
    import admcuda

    ref, dis = _scored_pair(tmp_path)
    before = ref.read_bytes(), dis.read_bytes()
    result = admcuda.score(ref, dis, width=48, height=32, backend="cpu")
    link = tmp_path / "scores.out"
    link.symlink_to(dis)
    for dest, name in ((ref, ref), (str(dis), dis), (link, dis)):
        with pytest.raises(AdmError, match=f"is the input '{name}' this result was scored"):
            getattr(result, writer)(dest)
    assert (ref.read_bytes(), dis.read_bytes()) == before
    getattr(result, writer)(tmp_path / "out.txt")
    assert (tmp_path / "out.txt").stat().st_size > 0


@pytest.mark.parametrize("fmt", ["json", "xml", "csv"])
def test_a_rung_that_was_not_scored_writes_no_file(tmp_path, fmt):
    """A failed ladder rung's result refuses to write: an empty file would read as a clip
    with no frames."""
    failed = AdmResult([], {**META, "error": "distorted file 'q2.mp4' not found"})
    dest = tmp_path / f"q2.{fmt}"
    with pytest.raises(AdmError, match="not scored .distorted file 'q2.mp4' not found"):
        getattr(failed, f"to_{fmt}")(dest)
    assert not dest.exists()


def test_a_vmaf_file_reads_back_with_its_model_score(tmp_path):
    import admcuda
    from admcuda.data import EXAMPLE, example_paths

    with example_paths() as (ref, dis):
        scored = admcuda.score(ref, dis, width=EXAMPLE.width, height=EXAMPLE.height,
                               model="vmaf_v0.6.1", backend="cpu")  # fmt: skip
    path = tmp_path / "vmaf.json"
    scored.to_json(path)
    back = AdmResult.read(path)
    assert back.array("vmaf").tolist() == scored.array("vmaf").tolist()
    assert back.pooled["vmaf"]["mean"] == scored.pooled["vmaf"]["mean"]
    assert repr(back).endswith(f"mean vmaf {scored.pooled['vmaf']['mean']:.6f}>")
    assert "vmaf" not in AdmResult.read(path, adm_only=True).names


@pytest.mark.parametrize(
    "extra",
    [["--subsample", "2", "--option", "egl=1.2", "--debug"], ["--model", "vmaf_v0.6.1"]],
    ids=["adm-options-subsample", "model"],
)
def test_the_csv_score_writes_reads_back_as_its_json(tmp_path, extra):
    """``admcuda score --csv`` holds every output and frame number exactly; read back, its
    pooled values (pooled from the frames: the CSV has none) equal those of the JSON of
    the same run, and so do the options recovered from the names."""
    from admcuda.cli import main as cli

    for fmt in ("json", "csv"):
        out = tmp_path / f"scores.{fmt}"
        argv = ["score", "--example", "--backend", "cpu", "-q", f"--{fmt}", "-o", str(out)]
        assert cli.main([*argv, *extra]) == 0
    js = AdmResult.read(tmp_path / "scores.json")
    got = AdmResult.read(tmp_path / "scores.csv")
    assert got.names == js.names and len(got) == len(js) > 1
    assert got.frame_numbers == js.frame_numbers
    assert got.frames == js.frames
    assert got.pooled == js.pooled
    assert got.options == js.options
    assert got.metadata["source"] == str(tmp_path / "scores.csv")
    with (tmp_path / "scores.csv").open() as handle:
        assert AdmResult.from_csv(handle, adm_only=True).names == [
            n for n in js.names if n.startswith(("integer_adm", "integer_aim"))
        ]
    if "--subsample" in extra:
        assert got.frame_numbers == [0, 2]
        assert got.options == AdmOptions(adm_enhn_gain_limit=1.2, debug=True)
    else:
        assert "vmaf" in got.names


def test_libvmafs_own_csv_reads_with_its_rounded_values():
    """libvmaf's ``--csv`` (values to 6 decimals): every output, as written."""
    from pathlib import Path

    path = Path(__file__).parent.parent / "testdata" / "libvmaf_outputs" / "model_4k_and_v061.csv"
    r = AdmResult.read(path)
    header = path.read_text().splitlines()[0].split(",")
    assert r.names == header[1:-1] and r.frame_numbers == list(range(len(r)))
    assert r[0]["vmaf_4k"] == 90.111074 and r.options == AdmOptions()
    assert r.pooled["vmaf"] == pooled_metrics(r.frames)["vmaf"]

"""libvmaf output layouts: JSON, XML, CSV, pooling, precision and atomic writes."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import admcuda
from admcuda.errors import AdmError
from admcuda.report.writers import (
    LIBVMAF_VERSION,
    pool,
    pooled_metrics,
    render,
    render_csv,
    render_json,
    render_sub,
    render_xml,
    write_output,
    write_text,
    written_input,
)

FRAMES = [
    {"integer_adm2": 0.9620839149029907, "integer_aim": 0.011383920049685787},
    {"integer_adm2": 0.9497659148156563, "integer_aim": 0.01834548078029396},
    {"integer_adm2": 0.9434615069247936, "integer_aim": 0.02642431883751486},
]
ROOT = Path(__file__).resolve().parent.parent
META = {"version": "0.1.0", "width": 576, "height": 324, "fps": 123.456}


def _write(fmt, frames, tmp_path, name="out"):
    path = tmp_path / f"{name}.{fmt}"
    write_output(fmt, frames, path, **META)
    return path


def test_pool_formula():
    values = [0.5, 1.0, 0.0]
    got = pool(values)
    assert got["min"] == 0.0 and got["max"] == 1.0
    assert got["mean"] == (0.5 + 1.0 + 0.0) / 3
    # libvmaf: n / sum(1 / (s + 1)) - 1
    assert got["harmonic_mean"] == 3 / (1 / 1.5 + 1 / 2.0 + 1 / 1.0) - 1.0


def test_pool_matches_libvmaf_cli_print():
    # libvmaf 3.2.0 CLI, Netflix src01 576x324 3 frames, default options, 2026-11-29:
    # "integer_adm2": {"min": 0.943462, "max": 0.962084, "mean": 0.951770,
    #                  "harmonic_mean": 0.951740}
    got = pool([f["integer_adm2"] for f in FRAMES])
    assert f"{got['min']:.6f}" == "0.943462"
    assert f"{got['max']:.6f}" == "0.962084"
    assert f"{got['mean']:.6f}" == "0.951770"
    assert f"{got['harmonic_mean']:.6f}" == "0.951740"


def test_pool_sums_in_frame_order():
    values = [1e16, 1.0, -1e16, 1.0]
    total = 0.0
    for v in values:
        total += v
    assert pool(values)["mean"] == total / 4


def test_pool_nan_and_minus_one():
    first_nan = pool([math.nan, 0.5])
    assert math.isnan(first_nan["min"]) and math.isnan(first_nan["max"])
    assert math.isnan(first_nan["mean"])
    later_nan = pool([0.5, math.nan, 0.25])
    assert later_nan["min"] == 0.25 and later_nan["max"] == 0.5
    # s = -1 makes 1/(s+1) infinite in C; the harmonic mean becomes -1.
    assert pool([-1.0, 0.5])["harmonic_mean"] == -1.0
    with pytest.raises(ValueError):
        pool([])


def test_json_layout(tmp_path):
    doc = json.loads(_write("json", FRAMES, tmp_path).read_text())
    assert list(doc) == [
        "version", "admcuda_version", "fps", "frames", "pooled_metrics", "aggregate_metrics"
    ]  # fmt: skip
    assert doc["version"] == "0.1.0" and doc["admcuda_version"] == admcuda.__version__
    assert doc["fps"] == 123.46
    assert [f["frameNum"] for f in doc["frames"]] == [0, 1, 2]
    for got, want in zip(doc["frames"], FRAMES, strict=True):
        assert list(got) == ["frameNum", "metrics"]
        assert got["metrics"] == want
        assert list(got["metrics"]) == list(want)
    assert list(doc["pooled_metrics"]) == ["integer_adm2", "integer_aim"]
    for name, pooled in doc["pooled_metrics"].items():
        assert list(pooled) == ["min", "max", "mean", "harmonic_mean"]
        assert pooled == pool([f[name] for f in FRAMES])
    assert doc["aggregate_metrics"] == {}


def test_json_nonfinite_is_null():
    frames = [{"a": math.nan, "b": math.inf, "c": -math.inf, "d": 1.0}]
    text = render_json(frames, version="x")
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc["fps"] is None
    assert doc["frames"][0]["metrics"] == {"a": None, "b": None, "c": None, "d": 1.0}
    assert doc["pooled_metrics"]["a"]["mean"] is None


def test_given_pooled_values_are_written(tmp_path):
    """``pooled`` (AdmResult's kept values) replaces the frames' pooling in JSON and XML."""
    given = {name: {**p, "mean": 0.5} for name, p in pooled_metrics(FRAMES).items()}
    doc = json.loads(render_json(FRAMES, version="x", pooled=given))
    assert doc["pooled_metrics"] == given
    text = render("xml", FRAMES, version="x", width=1, height=1, pooled=given)
    means = [m.get("mean") for m in ET.fromstring(text).find("pooled_metrics")]
    assert means == ["0.5", "0.5"]
    path = tmp_path / "p.json"
    write_output("json", FRAMES, path, **META, pooled=given)
    assert json.loads(path.read_text())["pooled_metrics"] == given
    with pytest.raises(AdmError, match="pooled values for"):
        render_json(FRAMES, version="x", pooled={"integer_adm2": given["integer_adm2"]})


def test_xml_layout(tmp_path):
    root = ET.parse(_write("xml", FRAMES, tmp_path)).getroot()
    assert root.tag == "VMAF" and root.get("version") == "0.1.0"
    assert root.get("admcuda_version") == admcuda.__version__
    assert [child.tag for child in root] == [
        "params",
        "fyi",
        "frames",
        "pooled_metrics",
        "aggregate_metrics",
    ]
    assert root.find("params").attrib == {"qualityWidth": "576", "qualityHeight": "324"}
    assert root.find("fyi").get("fps") == "123.46"
    frames = root.find("frames").findall("frame")
    assert [f.get("frameNum") for f in frames] == ["0", "1", "2"]
    for element, want in zip(frames, FRAMES, strict=True):
        got = {k: float(v) for k, v in element.attrib.items() if k != "frameNum"}
        assert got == want
        assert list(element.attrib)[1:] == list(want)
    metrics = root.find("pooled_metrics").findall("metric")
    assert [m.get("name") for m in metrics] == ["integer_adm2", "integer_aim"]
    for metric in metrics:
        want = pool([f[metric.get("name")] for f in FRAMES])
        assert {k: float(v) for k, v in metric.attrib.items() if k != "name"} == want
    assert len(root.find("aggregate_metrics").attrib) == 0


def test_csv_layout(tmp_path):
    text = _write("csv", FRAMES, tmp_path).read_text()
    assert text.splitlines()[0] == "Frame,integer_adm2,integer_aim,"
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Frame", "integer_adm2", "integer_aim", ""]
    for index, (row, want) in enumerate(zip(rows[1:], FRAMES, strict=True)):
        assert row[0] == str(index) and row[-1] == ""
        assert [float(v) for v in row[1:-1]] == list(want.values())


def test_csv_and_xml_nonfinite():
    frames = [{"a": math.nan, "b": math.inf}]
    row = render_csv(frames).splitlines()[1]
    assert row == "0,nan,inf,"
    got = [float(v) for v in row.split(",")[1:-1]]
    assert math.isnan(got[0]) and got[1] == math.inf


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=5))
def test_full_precision_round_trip(values):
    frames = [{"integer_adm2": v, "integer_aim": -v} for v in values]
    doc = json.loads(render_json(frames, version="x"))
    assert [f["metrics"]["integer_adm2"] for f in doc["frames"]] == values
    rows = list(csv.reader(io.StringIO(render_csv(frames))))[1:]
    assert [float(r[1]) for r in rows] == values
    assert [float(r[2]) for r in rows] == [-v for v in values]


def test_inconsistent_frames_refused(tmp_path):
    bad = [{"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}]
    with pytest.raises(AdmError, match="frame 1"):
        _write("json", bad, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_unknown_format(tmp_path):
    with pytest.raises(AdmError, match="unknown output format"):
        write_output("yaml", FRAMES, tmp_path / "x", **META)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_file_object_destination():
    buffer = io.StringIO()
    write_output("json", FRAMES, buffer, **META)
    assert json.loads(buffer.getvalue())["frames"][2]["metrics"] == FRAMES[2]


def test_atomic_replace_and_permissions(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    write_output("json", FRAMES, path, **META)
    assert json.loads(path.read_text())["version"] == "0.1.0"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    umask = os.umask(0)
    os.umask(umask)
    new = tmp_path / "new.csv"
    write_output("csv", FRAMES, new, **META)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_output("json", FRAMES, path, **META)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_missing_folder_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        write_output("json", FRAMES, tmp_path / "no" / "out.json", **META)
    assert list(tmp_path.iterdir()) == []


def test_pooled_metrics_empty():
    assert pooled_metrics([]) == {}
    assert json.loads(render_json([], version="x"))["frames"] == []


def test_sub_layout():
    # libvmaf's vmaf_write_output_sub: "{N}{N+1}frame: N|name: value|...|" per frame.
    text = render_sub(FRAMES[:2], frame_numbers=[0, 5])
    assert text == (
        "{0}{1}frame: 0|integer_adm2: 0.9620839149029907|integer_aim: 0.011383920049685787|\n"
        "{5}{6}frame: 5|integer_adm2: 0.9497659148156563|integer_aim: 0.01834548078029396|\n"
    )
    assert render("sub", FRAMES, **META) == render_sub(FRAMES)
    assert render_sub([]) == ""


def _varied_frames(n=240):
    """Frames whose values span binades and hold every special float, some of them NumPy
    float32; made with exact float operations only (no RNG, no libm)."""
    import numpy as np

    scales = [1e-8, 1e-5, 1e-3, 0.5, 1.0, 3.0, 1e3, 1e7]
    special = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1e300, 1e308, 1e16, 1.0, 2.5e-7]
    names = ["integer_adm2", "integer_adm_scale0", "integer_aim", "integer_adm3"]
    frames = []
    for i in range(n):
        values = [(i * 7919 + 13 * k) % 10007 / 10007 * scales[(i + k) % 8] for k in range(4)]
        if i < 4 * len(special) and i % 2 == 0:
            values[i % 4] = special[(i // 2) % len(special)]
        if i == 5:
            values[:2] = [1e308, 1e308]  # finite values whose sum overflows
        frame = {name: v for name, v in zip(names, values, strict=True)}
        if i % 7 == 3:
            frame["integer_aim"] = np.float32(values[2])
        frames.append(frame)
    return frames


@pytest.mark.parametrize("numbers", [None, "every third"])
def test_json_equals_the_json_modules_rendering(numbers):
    """render_json writes its frames itself (the json module's indent=2 encoder is slow):
    the text equals json.dumps of the same document, special values and float32 included."""
    frames = _varied_frames()
    fn = None if numbers is None else [3 * k + 1 for k in range(len(frames))]
    got = render_json(frames, version="0.1.0", fps=99.456, frame_numbers=fn)

    def number(v):
        v = float(v)
        return v if math.isfinite(v) else None

    document = {
        "version": "0.1.0",
        "admcuda_version": admcuda.__version__,
        "fps": 99.46,
        "frames": [
            {
                "frameNum": k if fn is None else fn[k],
                "metrics": {name: number(v) for name, v in frame.items()},
            }
            for k, frame in enumerate(frames)
        ],  # fmt: skip
        "pooled_metrics": {
            name: {m: number(v) for m, v in p.items()} for name, p in pooled_metrics(frames).items()
        },
        "aggregate_metrics": {},
    }
    assert got == json.dumps(document, indent=2, allow_nan=False) + "\n"
    odd = [{"a%d\u00e9": 0.5, "b%r": math.nan}]  # a name with % and one that needs escaping
    got = json.loads(render_json(odd, version="v"))
    assert got["frames"] == [{"frameNum": 0, "metrics": {"a%d\u00e9": 0.5, "b%r": None}}]
    assert json.loads(render_json([{}, {}], version="v"))["frames"] == [
        {"frameNum": 0, "metrics": {}},
        {"frameNum": 1, "metrics": {}},
    ]
    assert json.loads(render_json([], version="v"))["frames"] == []


def test_text_layouts_write_every_value_as_its_repr():
    """XML, CSV and subtitle rows (written from one template a frame): each value is
    repr(float(value)), NaN and inf included, in the frame's key order."""
    frames = _varied_frames()
    fn = [3 * k + 1 for k in range(len(frames))]
    names = list(frames[0])
    xml = render("xml", frames, version="v", width=8, height=6, frame_numbers=fn)
    xml_rows = [line for line in xml.splitlines() if "<frame " in line]
    csv_rows = render_csv(frames, frame_numbers=fn).splitlines()[1:]
    sub_rows = render_sub(frames, frame_numbers=fn).splitlines()
    for k, frame in enumerate(frames):
        text = [repr(float(frame[n])) for n in names]
        assert xml_rows[k] == f'    <frame frameNum="{fn[k]}" ' + "".join(
            f'{n}="{t}" ' for n, t in zip(names, text, strict=True)) + "/>"  # fmt: skip
        assert csv_rows[k] == f"{fn[k]}," + "".join(f"{t}," for t in text)
        assert sub_rows[k] == f"{{{fn[k]}}}{{{fn[k] + 1}}}frame: {fn[k]}|" + "".join(
            f"{n}: {t}|" for n, t in zip(names, text, strict=True))  # fmt: skip
    odd = [{"a%d": 1.5, "b%r": math.inf}]
    assert render_csv(odd) == "Frame,a%d,b%r,\n0,1.5,inf,\n"
    assert render_sub(odd) == "{0}{1}frame: 0|a%d: 1.5|b%r: inf|\n"
    assert '<frame frameNum="0" a%d="1.5" b%r="inf" />' in render(
        "xml", odd, version="v", width=8, height=6)  # fmt: skip


def test_output_paths_resolve_as_the_kernel_does(tmp_path):
    """'link/..' is the parent of the link's target, not the link's own folder: output
    paths are not normalised lexically."""
    (tmp_path / "other" / "sub").mkdir(parents=True)
    (tmp_path / "lnk").symlink_to(tmp_path / "other" / "sub")
    made = write_output("csv", FRAMES, str(tmp_path / "lnk" / ".." / "x.csv"), **META)
    assert made == tmp_path / "other" / "x.csv" and made.read_text().startswith("Frame,")
    assert not (tmp_path / "x.csv").exists()


def test_staged_output_takes_bytes(tmp_path, capsysbinary):
    """Bytes are staged and written as they are: a regular file (renamed into place),
    standard output (a dest of None: sys.stdout's buffer, after the text before them)."""
    from admcuda.report.writers import StagedOutput, commit_all

    data = bytes(range(256)) + b"\r\n"
    out = tmp_path / "a.bin"
    print("text first", end="")
    commit_all([StagedOutput(out, data), StagedOutput(None, data)])
    assert out.read_bytes() == data
    assert capsysbinary.readouterr().out == b"text first" + data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]


def test_write_stdout_writes_every_byte_through_a_raw_non_blocking_stdout(monkeypatch):
    """Under PYTHONUNBUFFERED standard output's binary layer is raw: a write to a full
    non-blocking pipe takes part of the data, or none. Every byte still arrives, text too,
    in order, while a reader drains the pipe."""
    import threading

    from admcuda.report.writers import write_stdout

    read, write = os.pipe()
    os.set_blocking(write, False)
    stdout = io.TextIOWrapper(io.FileIO(write, "w"), write_through=True)
    monkeypatch.setattr("sys.stdout", stdout)
    data = bytes(range(256)) * 8192  # 2 MiB, more than a pipe holds
    got = bytearray()

    def drain():
        while chunk := os.read(read, 1 << 14):
            got.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        write_stdout(data)
        write_stdout("and text after it\n" * 5000)
    finally:
        stdout.close()
    reader.join(30)
    os.close(read)
    assert bytes(got) == data + b"and text after it\n" * 5000


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664], ids=oct)
def test_a_replaced_file_keeps_its_mode(tmp_path, mode):
    """The temporary file renamed over an existing one gets its permission bits, as a
    write into it would keep them (not the umask's 0644)."""
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(mode)
    write_output("json", FRAMES, path, **META)
    assert json.loads(path.read_text())["frames"]
    assert path.stat().st_mode & 0o777 == mode


@pytest.mark.parametrize("mode", [0o444, 0o400], ids=oct)
def test_a_read_only_file_is_refused(tmp_path, mode):
    """A file with no write permission for anyone is not replaced, even by root (whom
    ``os.access`` always lets write): PermissionError naming it, nothing left behind."""
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(mode)
    with pytest.raises(PermissionError, match="read-only file") as caught:
        write_output("json", FRAMES, path, **META)
    assert caught.value.filename == str(path)
    assert path.read_text() == "old" and path.stat().st_mode & 0o777 == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def _no_write_access(monkeypatch, denied):
    """``os.access`` as a user other than the file's owner sees it: no W_OK on ``denied``."""
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.path.abspath(path) == str(denied):
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_a_file_this_process_may_not_write_is_refused(tmp_path, monkeypatch):
    """Where ``os.access`` says the file may not be written (another user's 0644 file), a
    shell's ``>`` is refused with "Permission denied": so is the rename over it."""
    path = tmp_path / "out.csv"
    path.write_text("old")
    _no_write_access(monkeypatch, path)
    with pytest.raises(PermissionError, match="Permission denied"):
        write_text(path, "new\n")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_new_file_in_a_folder_this_process_may_not_write_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    _no_write_access(monkeypatch, folder)
    with pytest.raises(PermissionError, match="read-only folder"):
        write_text(folder / "new.csv", "new\n")
    assert list(folder.iterdir()) == []


def test_written_input_follows_links_and_descriptors(tmp_path):
    """An output is an input where it is the same file: by name, through a symbolic or
    hard link, through /dev/fd/N; a terminal or pipe never is, nor a new file."""
    ref = tmp_path / "ref.yuv"
    ref.write_bytes(b"\0" * 16)
    other = tmp_path / "other.yuv"
    other.write_bytes(b"\0" * 16)
    (tmp_path / "sym").symlink_to(ref)
    (tmp_path / "hard").hardlink_to(ref)
    inputs = [str(other), str(ref)]
    assert written_input(ref, inputs) == str(ref)
    assert written_input(tmp_path / "sym", inputs) == str(ref)
    assert written_input(tmp_path / "hard", inputs) == str(ref)
    assert written_input(tmp_path / "new.json", inputs) is None
    with open(ref, "rb+") as handle:
        assert written_input(f"/dev/fd/{handle.fileno()}", inputs) == str(ref)
    read_end, write_end = os.pipe()
    try:
        assert written_input(f"/dev/fd/{write_end}", [f"/dev/fd/{read_end}"]) is None
    finally:
        os.close(read_end)
        os.close(write_end)


def test_version_is_libvmafs_and_admcudas_its_own_key():
    """Without a version given, "version" is the libvmaf release whose numbers admcuda
    reproduces, as libvmaf 3.2.0's own files carry it; admcuda's is under its own key,
    which None leaves out (libvmaf's keys alone)."""
    libvmaf = ROOT / "testdata" / "libvmaf_outputs"
    want_json = json.loads((libvmaf / "features_debug.json").read_text())["version"]
    want_xml = ET.parse(libvmaf / "features_debug.xml").getroot().get("version")
    assert want_json == want_xml == LIBVMAF_VERSION == "3.2.0"
    doc = json.loads(render_json(FRAMES))
    assert doc["version"] == "3.2.0" and doc["admcuda_version"] == admcuda.__version__
    root = ET.fromstring(render_xml(FRAMES, width=576, height=324))
    assert root.get("version") == "3.2.0"
    assert root.get("admcuda_version") == admcuda.__version__
    bare = json.loads(render_json(FRAMES, admcuda_version=None))
    assert list(bare) == ["version", "fps", "frames", "pooled_metrics", "aggregate_metrics"]

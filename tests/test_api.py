"""The one-call API and the CLI's tool subcommands."""

from __future__ import annotations

import subprocess
import sys

import pytest

import admcuda
from admcuda.api import api_message
from admcuda.data import example_paths


@pytest.fixture(scope="module")
def pair():
    with example_paths() as paths:
        yield paths


def test_score_returns_results_equal_to_score_files(tmp_path, pair):
    ref, dis = pair
    geometry = dict(width=176, height=144)
    one = admcuda.score(ref, dis, backend="cpu", **geometry)
    assert isinstance(one, admcuda.AdmResult)
    assert one.frames == admcuda.score_files(ref, dis, backend="cpu", **geometry)
    ladder = admcuda.score(ref, [dis, ref], backend="cpu", options={"egl": "1.2"}, **geometry)
    assert [len(r) for r in ladder] == [3, 3]
    assert ladder[1].frames[0]["integer_aim_egl_1.2"] == 0.0
    out = tmp_path / "r.json"
    one.to_json(out)
    back = admcuda.AdmResult.from_json(out)
    assert back.frames == one.frames


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "admcuda", *args], capture_output=True, text=True)


def test_plot_and_map_subcommands_write_pngs(tmp_path, pair):
    pytest.importorskip("matplotlib")
    ref, dis = pair
    res = tmp_path / "res.json"
    run = _cli(
        "score", str(ref), str(dis), "-w", "176", "-h", "144", "--json", "-o", str(res), "-q"
    )
    assert run.returncode == 0, run.stderr
    png = tmp_path / "adm.png"
    run = _cli("plot", str(res), "-o", str(png))
    assert run.returncode == 0, run.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    heat = tmp_path / "map.png"
    run = _cli("map", str(ref), str(dis), "-w", "176", "-h", "144", "--frame", "1", "-o", str(heat))
    assert run.returncode == 0, run.stderr
    assert heat.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tool_subcommand_errors_are_one_line(tmp_path):
    run = _cli("plot", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.png"))
    assert run.returncode != 0
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"bitdepth": 10.0}, "unsupported bit depth 10.0"),
        ({"bitdepth": 8.0}, "unsupported bit depth 8.0"),  # 8.0 in (8, 10, 12, 16)
        ({"bitdepth": True}, "unsupported bit depth True"),
        ({"options": [("egl", "1.2")]}, "options must be AdmOptions, a mapping"),
        ({"options": "egl"}, "options expects NAME=VALUE, got 'egl'"),
        ({"options": "egl=1.2:egl=1.3"}, "option 'egl' given twice"),
        ({"threads": "x"}, "threads must be an integer >= 1, got 'x'"),
        ({"threads": 0}, "threads must be an integer >= 1, got 0"),
        ({"threads": -2}, "threads must be an integer >= 1"),
        ({"host_memory": 0}, "host_memory must be an integer >= 1, got 0"),
        ({"host_memory": -1}, "host_memory must be an integer >= 1"),
        ({"batch": 0}, "batch must be an integer >= 1, got 0"),
        ({"batch": 2.5}, "batch must be an integer >= 1, got 2.5"),
        ({"device": -1}, "device must be an integer >= 0"),
        ({"threads": 10**30}, "threads must be at most 2147483647"),
        ({"options": {1: 2}}, "option names must be strings, got int 1"),
        ({"debug": "no"}, "debug must be True or False, got 'no'"),
        ({"debug": 0}, "debug must be True or False, got 0"),
        ({"ignore_name": "yes"}, "ignore_name must be True or False"),
        ({"frame_cnt": 1.0}, "frame_cnt must be an integer >= 1, got 1.0"),
        ({"options": {"egl": 10**400}}, r"\[1, 100\], got a 401-digit integer"),
        ({"options": "csf=" + "1" * 5000}, r"\[0, 3\], got a 5000-digit number"),
        ({"width": 10**5000}, "width must be at most 2147483647, got a 5001-digit integer"),
        ({"frame_cnt": 10**5000}, "frame_cnt must be at most 2147483647, got a 5001-digit"),
    ],
)
def test_bad_arguments_are_adm_errors(pair, kwargs, needle):
    ref, dis = pair
    with pytest.raises(admcuda.AdmError, match=needle) as info:
        admcuda.score(ref, dis, **{"width": 176, "height": 144, "backend": "cpu", **kwargs})
    assert "\n" not in str(info.value)


def test_frame_cnt_zero_is_all_frames_as_on_the_command_line(pair):
    # libvmaf's --frame_cnt 0 is "no limit", and so is the CLI's; the API says it the same way.
    ref, dis = pair
    every = admcuda.score(ref, dis, width=176, height=144, backend="cpu")
    zero = admcuda.score(ref, dis, width=176, height=144, backend="cpu", frame_cnt=0)
    assert len(every.frames) == 3
    assert zero.frames == every.frames
    with pytest.raises(admcuda.AdmError, match="frame_cnt must be an integer >= 1, got -1"):
        admcuda.score(ref, dis, width=176, height=144, backend="cpu", frame_cnt=-1)


def test_one_path_is_not_a_ladder(pair):
    """A str (or PathLike) dis_paths would be read as its characters; a list is not one
    path, nor is None."""
    ref, dis = pair
    for one in (str(dis), dis):
        with pytest.raises(admcuda.AdmError, match="dis_paths must be a list of paths, not one"):
            admcuda.score_ladder(ref, one, width=176, height=144, backend="cpu")
    with pytest.raises(admcuda.AdmError, match="dis_path must be a path .*, got list"):
        admcuda.score_files(ref, [dis], width=176, height=144, backend="cpu")
    with pytest.raises(admcuda.AdmError, match="ref_path must be a path .*, got NoneType"):
        admcuda.score(None, dis, width=176, height=144, backend="cpu")


@pytest.mark.parametrize("dis", [None, 5, b"dis.yuv", {"a": 1}], ids=repr)
def test_distorted_inputs_that_are_not_paths_are_named(pair, dis):
    ref, _ = pair
    kind = type(dis).__name__
    with pytest.raises(
        admcuda.AdmError, match=f"^dis must be a path or a sequence .*, got {kind}$"
    ):
        admcuda.score(ref, dis, width=176, height=144, backend="cpu")
    with pytest.raises(admcuda.AdmError, match="^dis_paths must be a list of paths, "):
        admcuda.score_ladder(ref, dis, width=176, height=144, backend="cpu")


def test_numpy_integers_and_option_strings(pair):
    """NumPy integers are taken as ints (the metadata holds ints); options as libvmaf's
    string score as the same options given as a mapping."""
    ref, dis = pair
    np = pytest.importorskip("numpy")
    got = admcuda.score(ref, dis, width=np.int64(176), height=np.int32(144),
                        bitdepth=np.int64(8), frame_cnt=np.int64(2), threads=np.int64(1),
                        backend="cpu", options="egl=1.2:nvd=4")  # fmt: skip
    want = admcuda.score(ref, dis, width=176, height=144, frame_cnt=2, threads=1,
                         backend="cpu", options={"egl": 1.2, "nvd": 4})  # fmt: skip
    assert got.frames == want.frames and len(got) == 2
    assert "integer_adm2_egl_1.2_nvd_4" in got.frames[0]
    assert type(got.metadata["width"]) is int and type(got.metadata["bitdepth"]) is int


def test_flag_lists_become_argument_names():
    """As the API (and batch rows) read the input layer's hints; never inside what the
    message quotes (a path)."""
    text = "only the frames both have are scored, so check -w/-h/-p/-b if they should be"
    assert "check width/height/pixel_format/bitdepth if" in api_message(text)
    text = "distorted file '/x/out--width-576 -b 10.yuv' not found; give -w 576 -h 324"
    assert api_message(text) == (
        "distorted file '/x/out--width-576 -b 10.yuv' not found; give width=576, height=324"
    )


def test_true_false_arguments(pair):
    """debug and ignore_name: bools, NumPy bools, or None for False."""
    ref, dis = pair
    np = pytest.importorskip("numpy")
    base = admcuda.score(ref, dis, width=176, height=144, frame_cnt=1, backend="cpu")
    for value in (None, np.False_):
        got = admcuda.score(ref, dis, width=176, height=144, frame_cnt=1, backend="cpu",
                            debug=value, ignore_name=value)  # fmt: skip
        assert got.frames == base.frames
    debug = admcuda.score(ref, dis, width=176, height=144, frame_cnt=1, backend="cpu",
                          debug=np.True_)  # fmt: skip
    assert len(debug.frames[0]) > len(base.frames[0])


def test_host_memory_is_mib_as_on_the_command_line(pair, monkeypatch):
    """host_memory= is --host-memory's MiB; a count of bytes (1 TiB or more) is refused."""
    import admcuda.api

    seen = []
    real = admcuda.api.run_ladder

    def spy(*args, **kwargs):
        seen.append(kwargs["host_memory"])
        return real(*args, **kwargs)

    monkeypatch.setattr(admcuda.api, "run_ladder", spy)
    ref, dis = pair
    geometry = dict(width=176, height=144, backend="cpu")
    assert len(admcuda.score(ref, dis, host_memory=64, **geometry)) == 3
    assert len(admcuda.score(ref, dis, **geometry)) == 3
    assert seen == [64 << 20, None]
    with pytest.raises(
        admcuda.AdmError,
        match=r"host_memory is in MiB, as --host-memory; "
        r"1073741824 MiB is 1 TiB or more \(for 1 GiB give host_memory=1024\)",
    ):
        admcuda.score(ref, dis, host_memory=1 << 30, **geometry)
    with pytest.raises(admcuda.AdmError, match="host_memory must be an integer >= 1, got 0"):
        admcuda.score(ref, dis, host_memory=0, **geometry)

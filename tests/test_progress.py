"""Progress: silent off a terminal or when disabled, rate-limited, ends its line."""

from __future__ import annotations

import io
import math

import pytest

from admcuda.progress import Progress, format_duration


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_silent_when_not_a_tty_or_disabled():
    plain = io.StringIO()
    with Progress(10, stream=plain) as p:
        p.update(5)
    assert plain.getvalue() == "" and not p.active and p.done == 5
    tty = Tty()
    with Progress(10, enabled=False, stream=tty) as p:
        p.update(10)
    assert tty.getvalue() == ""


def test_draws_counts_fps_and_eta():
    tty, clock = Tty(), Clock()
    p = Progress(100, stream=tty, clock=clock)
    clock.now += 2.0
    p.update(20)
    line = tty.getvalue()
    assert line.startswith("\r")
    assert "frames 20/100" in line and "20%" in line and "10.0 fps" in line and "ETA 0:08" in line
    assert "[" + "#" * 4 + "." * 20 + "]" in line


def test_rate_limited_to_ten_per_second():
    tty, clock = Tty(), Clock()
    p = Progress(1000, stream=tty, clock=clock)
    for _ in range(100):
        clock.now += 0.01  # 100 updates in one second
        p.update()
    assert 9 <= tty.getvalue().count("\r") <= 11


def test_last_frame_always_drawn_and_newline_on_close():
    tty, clock = Tty(), Clock()
    with Progress(3, stream=tty, clock=clock) as p:
        clock.now += 1.0
        p.update()
        p.update()  # within 0.1 s: not drawn
        p.update()  # the last frame: drawn anyway
        assert tty.getvalue().count("\r") == 2
    out = tty.getvalue()
    assert out.endswith("\n") and out.count("\n") == 1
    assert "frames 3/3" in out.splitlines()[-1] and "in 0:01" in out
    p.close()  # a second close adds nothing
    assert tty.getvalue() == out


def test_newline_even_on_exception():
    tty = Tty()
    with pytest.raises(RuntimeError), Progress(10, stream=tty) as p:
        p.update()
        raise RuntimeError("boom")
    assert tty.getvalue().endswith("\n")


def test_unknown_total():
    tty, clock = Tty(), Clock()
    p = Progress(None, stream=tty, clock=clock)
    clock.now += 4.0
    p.update(10)
    line = tty.getvalue()
    assert "frames 10 " in line and "2.5 fps" in line and "ETA" not in line and "[" not in line


def test_shorter_line_blanks_the_longer_one():
    tty, clock = Tty(), Clock()
    p = Progress(None, stream=tty, clock=clock, label="a much longer label than usual")
    clock.now += 1.0
    p.update()
    first = len(tty.getvalue()) - 1
    p.label = "x"
    clock.now += 1.0
    p.update()
    second = tty.getvalue()[first + 1 :]
    assert len(second) == first + 1  # "\r" + text + padding covers the old text


def test_clear():
    tty, clock = Tty(), Clock()
    p = Progress(10, stream=tty, clock=clock)
    clock.now += 1.0
    p.update()
    drawn = tty.getvalue()
    p.clear()
    assert tty.getvalue() == drawn + "\r" + " " * (len(drawn) - 1) + "\r"
    p.update()  # redraws at once after a clear
    assert tty.getvalue().endswith(
        "frames 2/10 [" + "#" * 4 + "." * 20 + "]  20%  2.0 fps  ETA 0:04"
    )


def test_broken_stream_turns_it_off():
    class Broken(Tty):
        def write(self, text):
            raise BrokenPipeError

    p = Progress(10, stream=Broken())
    p.update()
    assert not p.active
    p.close()


def test_zero_total_and_bad_total():
    tty = Tty()
    with Progress(0, stream=tty):
        pass
    assert "frames 0/0" in tty.getvalue() and "100%" in tty.getvalue()
    with pytest.raises(ValueError):
        Progress(-1)


def test_format_duration():
    assert format_duration(0) == "0:00"
    assert format_duration(59.6) == "1:00"
    assert format_duration(3600) == "1:00:00"
    assert format_duration(math.inf) == format_duration(-1) == "--:--"


def test_plain_lines_off_a_terminal_every_30_s():
    """Off a terminal (a log): nothing for a run shorter than 30 s; else a plain line every
    30 s and a last one at the end."""
    short, clock = io.StringIO(), Clock()
    with Progress(10, stream=short, clock=clock) as p:
        clock.now += 29.0
        p.update(10)
    assert short.getvalue() == "" and p.plain and not p.active
    log, clock = io.StringIO(), Clock()
    with Progress(100, stream=log, clock=clock) as p:
        for _ in range(100):
            clock.now += 1.0
            p.update()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and log.getvalue().endswith("\n")
    assert [line.split()[1] for line in lines] == ["30/100", "60/100", "90/100", "100/100"]
    assert "ETA 1:10" in lines[0] and "in 1:40" in lines[-1]


def test_every_gives_plain_lines_on_a_terminal_too():
    tty, clock = Tty(), Clock()
    with Progress(None, stream=tty, clock=clock, every=10.0) as p:
        clock.now += 5.0
        p.update(5)
        assert tty.getvalue() == ""
        clock.now += 5.0
        p.update(5)
    assert tty.getvalue() == "frames 10  1.0 fps  0:10\nframes 10  1.0 fps  0:10\n"
    with pytest.raises(ValueError):
        Progress(10, every=0)


def test_estimated_total_and_note():
    """An estimated total reads ~N; past it the ETA is unknown until the end; a note (a
    ladder's rungs) follows the ETA (the terminal's width may cut it, never the counts)."""
    clock = Clock()
    p = Progress(100, stream=Tty(), clock=clock, estimated=True, note="2 rungs: a.mp4, b.mp4")
    clock.now += 2.0
    p.update(50)
    assert p.render() == (
        "frames 50/~100 [" + "#" * 12 + "." * 12 + "]  50%  25.0 fps  ETA 0:02  "
        "2 rungs: a.mp4, b.mp4"
    )
    clock.now += 3.0
    p.update(60)
    assert p.render().startswith("frames 110/~100 [") and "ETA --:--  2 rungs" in p.render()
    p.close()
    assert "in 0:05  2 rungs" in p.render()


# -- on the command line


def _example_videos(tmp_path):
    """The example pair as lossless MP4s, a copy of the distorted one for a second rung."""
    pytest.importorskip("imageio_ffmpeg")
    from _media import X264_LOSSLESS, encode

    from admcuda.data import EXAMPLE, example_paths

    with example_paths() as (ref, dis):
        geometry = (EXAMPLE.width, EXAMPLE.height, "420", 8)
        ref_mp4 = encode(ref, tmp_path / "ref.mp4", *geometry, X264_LOSSLESS)
        dis_mp4 = encode(dis, tmp_path / "dis.mp4", *geometry, X264_LOSSLESS)
    rung = tmp_path / "rung2.mp4"
    rung.write_bytes(dis_mp4.read_bytes())
    return ref_mp4, dis_mp4, rung


def _progress_lines(capsys):
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("frames ")]


def test_cli_progress_gives_a_video_total_a_ladder_its_rungs(tmp_path, capsys):
    """--progress: plain lines for a log (here its last), of a video's total estimated
    from its duration and rate (~3, as decoding finds), exact under --frame-cnt; a ladder's
    line names its rungs."""
    from admcuda.cli.main import main

    ref, dis, rung = _example_videos(tmp_path)
    assert main(["score", str(ref), str(dis), "--progress", "--backend", "cpu"]) == 0
    (line,) = _progress_lines(capsys)
    assert line.startswith("frames 3/~3 [" + "#" * 24 + "] 100%  ") and " in 0:" in line
    argv = ["score", str(ref), str(dis), str(rung), "--progress", "--frame-cnt", "2"]
    assert main(argv) == 0
    (line,) = _progress_lines(capsys)
    assert line.startswith("frames 2/2 [") and line.endswith("  2 rungs: dis.mp4, rung2.mp4")


def test_cli_quiet_and_progress_contradict(tmp_path, capsys):
    from admcuda.cli.main import main

    assert main(["score", "--example", "-q", "--progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("admcuda: error: ") and err.count("\n") == 1 and "--progress" in err


# -- in the Python API


def _raw_pair(tmp_path, frames=20):
    import numpy as np

    rng = np.random.default_rng(5)
    w, h = 32, 24
    chroma = bytes([128]) * (2 * (w // 2) * (h // 2))
    paths = []
    for name, noise in (("ref.yuv", 0), ("dis.yuv", 9)):
        planes = rng.integers(40, 200, (frames, h, w)) + rng.normal(0, noise + 1e-9, (frames, h, w))
        data = b"".join(p.clip(0, 255).astype(np.uint8).tobytes() + chroma for p in planes)
        (tmp_path / name).write_bytes(data)
        paths.append(tmp_path / name)
    return (*paths, dict(width=w, height=h, backend="cpu"))


def test_api_progress_function_gets_frames_done_and_the_total(tmp_path, capsys):
    """progress=function: (0, total) first, then the frames done after each batch, up to
    the total (frame_cnt and subsample counted as score counts them); nothing on stderr."""
    import admcuda

    ref, dis, geometry = _raw_pair(tmp_path)
    calls = []
    result = admcuda.score(ref, dis, **geometry, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 20) and calls[-1] == (20, 20) and len(result) == 20
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert {t for _, t in calls} == {20}
    calls.clear()
    frames = admcuda.score_files(ref, dis, **geometry, frame_cnt=9, subsample=2,
                                 progress=lambda *a: calls.append(a))  # fmt: skip
    assert calls[0] == (0, 5) and calls[-1] == (5, 5) and len(frames) == 5
    assert capsys.readouterr().err == ""

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop

    with pytest.raises(Stop):
        admcuda.score_ladder(ref, [dis, dis], **geometry, progress=stop)


def test_api_progress_true_writes_the_line_score_writes(tmp_path, capsys):
    """progress=True off a terminal: plain lines as --progress writes them (here the last
    one: the run is short); a number of seconds the same; False, the default, nothing."""
    import admcuda

    ref, dis, geometry = _raw_pair(tmp_path)
    admcuda.score(ref, dis, **geometry)
    assert capsys.readouterr().err == ""
    for progress in (True, 2.5):
        admcuda.score(ref, dis, **geometry, progress=progress)
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("frames 20/20 [" + "#" * 24 + "] 100%  ") and " in 0:" in line
    admcuda.score(ref, dis, **geometry, progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("yes", "progress must be True, False, a number of seconds or a function"),
        (0, "progress must be a number of seconds > 0, got 0"),
        (math.nan, "got nan"),
        (10**400, "got a 401-digit integer"),
    ],
)
def test_api_progress_refuses_what_it_cannot_show(tmp_path, value, needle):
    import admcuda

    ref, dis, geometry = _raw_pair(tmp_path, frames=2)
    with pytest.raises(admcuda.AdmError, match=needle):
        admcuda.score(ref, dis, **geometry, progress=value)


def test_api_progress_of_a_video_has_its_estimated_total(tmp_path):
    """An encoded video's total comes from its duration and rate, as on the command line;
    frame_cnt makes it exact."""
    import admcuda

    ref, dis, _ = _example_videos(tmp_path)
    calls = []
    admcuda.score(ref, dis, backend="cpu", progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 3) and calls[-1] == (3, 3)
    calls.clear()
    admcuda.score(ref, dis, backend="cpu", frame_cnt=2, progress=lambda *a: calls.append(a))
    assert calls[0] == (0, 2) and calls[-1] == (2, 2)


# -- the total


def test_total_comes_from_the_run_selection_not_the_source():
    """The expected total of sources that keep no selection of their own (NVDEC's in a
    process of their own): frame_cnt caps a video's estimate and makes it exact, the skips
    and subsample apply; a raw input's own count wins."""
    from types import SimpleNamespace

    from admcuda.io.inputs import FrameSelection
    from admcuda.ladder import _expected_total

    def video(frames):
        return SimpleNamespace(scored=None, reader=SimpleNamespace(estimated_frames=frames))

    ref, dis = video(30), video(28)
    assert _expected_total(ref, [dis], FrameSelection(), 1) == (28, True)
    selection = FrameSelection(frame_cnt=10, subsample=3)
    assert _expected_total(ref, [dis], selection, 3) == (4, False)
    selection = FrameSelection(frame_skip_ref=2, frame_skip_dist=6, subsample=2)
    assert _expected_total(ref, [dis], selection, 2) == (11, True)
    raw = SimpleNamespace(scored=7, reader=SimpleNamespace(num_frames=7))
    assert _expected_total(raw, [dis], FrameSelection(frame_cnt=10), 1) == (7, False)
    unknown = SimpleNamespace(scored=None, reader=SimpleNamespace())
    assert _expected_total(unknown, [unknown], FrameSelection(), 1) == (None, False)
    assert _expected_total(unknown, [unknown], FrameSelection(frame_cnt=5), 1) == (5, False)


def test_frames_done_stop_at_the_shorter_input(tmp_path, capsys):
    """A reference longer than its distorted input (here by --frame-skip-dist) counts the
    frames scored, not those read: the last line reads 18/18, not 20/18; likewise for a
    video, whose total is an estimate."""
    import admcuda
    from admcuda.cli.main import main

    ref, dis, geometry = _raw_pair(tmp_path)
    calls = []
    result = admcuda.score(
        ref, dis, **geometry, frame_skip_dist=2, progress=lambda *a: calls.append(a)
    )
    assert len(result) == 18 and calls[-1] == (18, 18)
    argv = [str(ref), str(dis), "-w", "32", "-h", "24", "--frame-skip-dist", "2", "--progress"]
    assert main(["score", *argv, "--backend", "cpu"]) == 0
    (line,) = _progress_lines(capsys)
    assert line.startswith("frames 18/18 [" + "#" * 24 + "] 100%  ")
    ref_mp4, dis_mp4, _ = _example_videos(tmp_path)
    argv = [str(ref_mp4), str(dis_mp4), "--frame-skip-dist", "1", "--progress"]
    assert main(["score", *argv, "--backend", "cpu"]) == 0
    (line,) = _progress_lines(capsys)
    assert line.startswith("frames 2/~2 [" + "#" * 24 + "] 100%  ")

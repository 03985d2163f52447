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

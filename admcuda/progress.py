"""Progress on stderr: frames done (of the total, where known or estimated), frames per
second, ETA.

On a terminal it is a bar redrawn on one line, at most ten times a second, the line
ended when it closes. Elsewhere (a log, a pipe) it writes a plain line every 30 seconds,
none for a run shorter than that, and a last one when it closes if it wrote any; with
``every`` (``--progress``) a plain line every that many seconds and a last one, terminal
or not. Disabled (``--quiet``), it writes nothing.

:class:`ProgressCallback` hands the same counts to a function instead (the Python API's
``progress=callable``).

Typical use::

    with Progress(total, enabled=not args.quiet) as progress:
        for ...:
            ...
            progress.update()
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from collections.abc import Callable
from typing import IO

from admcuda.closing import Closing

__all__ = ["Progress", "ProgressCallback", "format_duration"]

_MIN_INTERVAL_S = 0.1  # at most ten redraws a second
PLAIN_EVERY_S = 30.0  # off a terminal: a plain line this often
PROGRESS_EVERY_S = 10.0  # asked for (--progress, the API's progress=True off a terminal)
_BAR_WIDTH = 24


def format_duration(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``; ``--:--`` when unknown.

    Examples
    --------
    >>> format_duration(75.4), format_duration(3725), format_duration(math.nan)
    ('1:15', '1:02:05', '--:--')
    """
    if not math.isfinite(seconds) or seconds < 0:
        return "--:--"
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress(Closing):
    """Frames-done counter drawn on one terminal line.

    Parameters
    ----------
    total : int, optional
        Frames expected; ``None`` when unknown (no bar, percentage or ETA then).
    enabled : bool, optional
        ``False`` turns it off (``--quiet``). Even when ``True`` it draws only if
        ``stream.isatty()``.
    stream : text file, optional
        Where to draw; ``sys.stderr`` at the time of drawing by default.
    label : str, optional
        Word before the counts, default ``"frames"``.
    clock : callable, optional
        Seconds as a float, ``time.monotonic`` by default (tests pass a fake).
    estimated : bool, optional
        ``total`` is an estimate (a video's duration times its frame rate): shown ``~N``.
    note : str, optional
        Text after the ETA (a ladder's rungs).
    every : float, optional
        Plain lines every ``every`` seconds and one at the end, on a terminal too, instead
        of the bar.

    Attributes
    ----------
    done : int
        Frames counted so far.
    active : bool
        Whether the bar is being drawn.
    plain : bool
        Whether plain lines are being written.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        label: str = "frames",
        clock: Callable[[], float] = time.monotonic,
        estimated: bool = False,
        note: str = "",
        every: float | None = None,
    ) -> None:
        if total is not None and total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        if every is not None and not every > 0:
            raise ValueError(f"every must be > 0 seconds, got {every}")
        self.total = total
        self.label = label
        self.estimated = estimated and total is not None
        self.note = note
        self.done = 0
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._last_draw = -math.inf
        self._width = 0  # characters of the line on screen, to blank what is left over
        self._closed = False
        self.active = bool(enabled) and every is None and self._isatty()
        self.plain = bool(enabled) and not self.active
        self._every = PLAIN_EVERY_S if every is None else float(every)
        self._last_line = every is not None  # a last line at the end, whatever was written
        self._next_line = self._start + self._every

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stderr

    def _isatty(self) -> bool:
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def update(self, n: int = 1) -> None:
        """Count ``n`` more frames; redraw if the last redraw is 0.1 s old, or on the last frame."""
        self.done += n
        if self._closed:
            return
        if self.plain:
            now = self._clock()
            if now >= self._next_line:
                self._line(now)
                self._next_line = max(self._next_line + self._every, now)
            return
        if not self.active:
            return
        now = self._clock()
        finished = self.total is not None and self.done >= self.total
        if finished or now - self._last_draw >= _MIN_INTERVAL_S:
            self._draw(now)

    def clear(self) -> None:
        """Blank the line (before printing something else); the next update redraws it."""
        if self.active and self._width:
            self._emit("\r" + " " * self._width + "\r")
            self._width = 0
            self._last_draw = -math.inf

    def close(self) -> None:
        """Draw the final state and end the line. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.active:
            self._draw(self._clock())
            self._emit("\n")
        elif self.plain and self._last_line:
            self._line(self._clock())

    def render(self, now: float | None = None) -> str:
        """The line as it would be drawn at time ``now``."""
        elapsed = (self._clock() if now is None else now) - self._start
        rate = self.done / elapsed if elapsed > 0 else math.nan
        fps = f"{rate:.1f} fps" if math.isfinite(rate) else "-- fps"
        note = f"  {self.note}" if self.note else ""
        if self.total is None:
            return f"{self.label} {self.done}  {fps}  {format_duration(elapsed)}{note}"
        total = max(self.total, 1)
        share = min(self.done / total, 1.0) if self.total else 1.0
        filled = int(share * _BAR_WIDTH)
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        if self.done >= self.total and (self._closed or not self.estimated):
            eta = f"in {format_duration(elapsed)}"
        elif self.done >= self.total:
            eta = "ETA --:--"  # past an estimate: the end is not known
        else:
            left = (self.total - self.done) / rate if rate > 0 else math.nan
            eta = f"ETA {format_duration(left)}"
        of = f"~{self.total}" if self.estimated else f"{self.total}"
        return f"{self.label} {self.done}/{of} [{bar}] {share:4.0%}  {fps}  {eta}{note}"

    def _line(self, now: float) -> None:
        """One plain line, for a log: the text the bar shows, ended."""
        self._emit(self.render(now) + "\n")
        self._last_line = True

    def _draw(self, now: float) -> None:
        self._last_draw = now
        line = self.render(now)
        columns = shutil.get_terminal_size((80, 24)).columns
        line = line[: max(columns - 1, 1)]
        pad = max(self._width - len(line), 0)
        self._emit("\r" + line + " " * pad)
        self._width = len(line)

    def _emit(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            # A closed or broken terminal must not stop the scoring.
            self.active = self.plain = False


class ProgressCallback(Closing):
    """Frames done, handed to a function instead of drawn: ``report(done, total)`` once
    with 0 before the first frame, then after each batch of frames scored.

    Parameters
    ----------
    report : callable
        Called with the frames done so far and ``total``, in the thread that scores
        (what it raises ends the run).
    total : int, optional
        Frames expected, as :class:`Progress` takes it; None when unknown.

    Attributes
    ----------
    done : int
        Frames counted so far.
    """

    def __init__(self, report: Callable[[int, int | None], object], total: int | None) -> None:
        self.report = report
        self.total = total
        self.done = 0
        report(0, total)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more frames and report them."""
        self.done += n
        self.report(self.done, self.total)

    def clear(self) -> None:
        """Nothing to blank (the :class:`Progress` surface)."""

    def close(self) -> None:
        """Nothing to end (the :class:`Progress` surface)."""

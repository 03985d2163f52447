"""A one-line progress bar on stderr: frames done (of total), frames per second, ETA.

It draws only when enabled and its stream is a terminal, so piped or redirected runs
and ``--quiet`` stay silent; redraws are limited to ten a second, and closing it ends
the line with a newline.

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

__all__ = ["Progress", "format_duration"]

_MIN_INTERVAL_S = 0.1  # at most ten redraws a second
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

    Attributes
    ----------
    done : int
        Frames counted so far.
    active : bool
        Whether anything is being drawn.
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        enabled: bool = True,
        stream: IO[str] | None = None,
        label: str = "frames",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if total is not None and total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        self.total = total
        self.label = label
        self.done = 0
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._last_draw = -math.inf
        self._width = 0  # characters of the line on screen, to blank what is left over
        self._closed = False
        self.active = bool(enabled) and self._isatty()

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
        if not self.active or self._closed:
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

    def render(self, now: float | None = None) -> str:
        """The line as it would be drawn at time ``now``."""
        elapsed = (self._clock() if now is None else now) - self._start
        rate = self.done / elapsed if elapsed > 0 else math.nan
        fps = f"{rate:.1f} fps" if math.isfinite(rate) else "-- fps"
        if self.total is None:
            return f"{self.label} {self.done}  {fps}  {format_duration(elapsed)}"
        total = max(self.total, 1)
        share = min(self.done / total, 1.0) if self.total else 1.0
        filled = int(share * _BAR_WIDTH)
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        if self.done >= self.total:
            eta = f"in {format_duration(elapsed)}"
        else:
            left = (self.total - self.done) / rate if rate > 0 else math.nan
            eta = f"ETA {format_duration(left)}"
        return f"{self.label} {self.done}/{self.total} [{bar}] {share:4.0%}  {fps}  {eta}"

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
            self.active = False

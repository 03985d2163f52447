"""The ``with obj:`` surface of the objects that hold something until their ``close()``:
frame readers, the frame-by-frame extractor and the progress line."""

from __future__ import annotations

from types import TracebackType
from typing import TypeVar

_T = TypeVar("_T", bound="Closing")


class Closing:
    """``with obj:`` gives ``obj`` and calls its ``close()`` on the way out, whatever
    happened inside; exceptions are not swallowed."""

    def close(self) -> None:  # pragma: no cover - every subclass defines its own
        raise NotImplementedError

    def __enter__(self: _T) -> _T:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

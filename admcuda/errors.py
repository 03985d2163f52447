"""The one exception type that admcuda raises for user-facing failures."""

from __future__ import annotations

__all__ = ["AdmError"]


class AdmError(Exception):
    """A failure the user can act on: bad option, unreadable input, refused setting.

    The message is a single line, written so that ``admcuda: error: <message>``
    reads as a complete explanation on its own.
    """

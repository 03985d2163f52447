"""The exceptions admcuda raises for user-facing failures."""

from __future__ import annotations

__all__ = ["AdmError", "UsageError"]


class AdmError(Exception):
    """A failure the user can act on: bad option, unreadable input, refused setting.

    The message is a single line, written so that ``admcuda: error: <message>``
    reads as a complete explanation on its own.
    """


class UsageError(Exception):
    """A bad command line (or option string): reported with exit status 2 by the command
    line, turned into :class:`AdmError` by the Python API."""

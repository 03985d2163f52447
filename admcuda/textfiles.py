"""Text files read whole (a batch manifest, a score file), with a bound: a device or a
pipe that never ends (``/dev/zero``, ``yes |``) fails with one line instead of filling
memory, and so does a file that is plainly binary (a video given in the place of a
score file)."""

from __future__ import annotations

import os
from typing import IO, Any

from admcuda.errors import AdmError

__all__ = ["MIB", "read_text"]

MIB = 1 << 20
_CHUNK = MIB


def read_text(
    source: str | os.PathLike[str] | IO[Any],
    *,
    limit: int,
    what: str,
    kind: str | None = None,
    encoding: str = "utf-8",
) -> str:
    """The text of ``source`` (a path, or a file object opened in text or binary mode),
    read a chunk at a time, stopping past ``limit`` bytes (characters for a text stream).

    Parameters
    ----------
    source : path or file object
    limit : int
        Most bytes the file may have.
    what : str
        The file in messages, quoted as the caller names it: ``"manifest 'jobs.csv'"``.
    kind : str, optional
        What the file should be (``"a score file"``), for the message where it is binary.
    encoding : str, optional

    Raises
    ------
    AdmError
        If it is larger than ``limit``, holds a NUL byte (no text file does) or is not
        text in ``encoding``.
    OSError
        If it cannot be opened or read.
    """
    if hasattr(source, "read"):
        return _read_chunks(source, limit, what, kind, encoding)
    with open(os.fspath(source), "rb") as handle:  # type: ignore[arg-type]
        return _read_chunks(handle, limit, what, kind, encoding)


def _read_chunks(handle: IO[Any], limit: int, what: str, kind: str | None, encoding: str) -> str:
    chunks: list[Any] = []
    size = 0
    while True:
        chunk = handle.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        if ("\0" if isinstance(chunk, str) else b"\0") in chunk:
            raise AdmError(f"{what} is not {kind or 'a text file'}: it holds NUL bytes")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise AdmError(f"{what} is larger than {limit // MIB} MiB, the most admcuda reads")
    if chunks and isinstance(chunks[0], str):
        return "".join(chunks)
    try:
        return b"".join(chunks).decode(encoding)
    except UnicodeDecodeError as exc:
        if kind is None:
            raise AdmError(f"{what} is not UTF-8 text: {exc.reason}") from None
        raise AdmError(f"{what} is not {kind}: not UTF-8 text ({exc.reason})") from None

"""What every ``admcuda`` subcommand shares: usage errors, a parser that raises instead
of exiting, ``--option NAME=VALUE`` parsing, and one-line failure reporting."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from admcuda.errors import AdmError

PROG = "admcuda"
EXIT_RUNTIME = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad command line; reported with exit status 2."""


class Parser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`UsageError` instead of printing usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parse_option_args(items: Sequence[str]) -> dict[str, str]:
    """``--option`` values (``NAME=VALUE``, or libvmaf's ``A=1:B=2``) as a mapping."""
    settings: dict[str, str] = {}
    for item in items:
        for part in item.split(":"):
            name, sep, value = part.partition("=")
            if not sep or not name:
                raise UsageError(f"--option expects NAME=VALUE, got '{part}'")
            if name in settings:
                raise UsageError(f"option '{name}' given twice")
            settings[name] = value
    return settings


def fail(message: str) -> None:
    """Print ``admcuda: error: message`` as one line on stderr."""
    print(f"{PROG}: error: {' '.join(str(message).split())}", file=sys.stderr)


def os_error_text(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: '{exc.filename}'"
    return str(exc)


def run_tool(run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    """Run a subcommand's ``run(argv)``: usage errors exit 2, failures 1, one line each."""
    try:
        return run(argv)
    except UsageError as exc:
        fail(str(exc))
        return EXIT_USAGE
    except AdmError as exc:
        fail(str(exc))
        return EXIT_RUNTIME
    except OSError as exc:
        fail(os_error_text(exc))
        return EXIT_RUNTIME
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0

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


def counter(low: int, *, zero: int | None = None):  # type: ignore[no-untyped-def]
    """argparse type: a decimal integer >= ``low``; with ``zero``, 0 is accepted too and
    read as ``zero`` (libvmaf's 0 for "no limit" or "the default")."""

    def parse(text: str) -> int | None:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer: '{text}'") from None
        if value == 0 and zero is not None:
            return zero or None
        if value < low:
            floor = 0 if zero is not None else low
            raise argparse.ArgumentTypeError(f"{value} is out of range (must be >= {floor})")
        return value

    parse.__name__ = "integer"
    return parse


# libvmaf's feature names for its integer ADM extractor: the CPU one and the CUDA one.
# Both are the same feature here (libvmaf's adm_cuda writes a subset of the outputs).
ADM_FEATURES: tuple[str, ...] = ("adm", "adm_cuda")


def parse_option_args(
    items: Sequence[str], *, flag: str = "--option", settings: dict[str, str] | None = None
) -> dict[str, str]:
    """``--option`` values (``NAME=VALUE``, or libvmaf's ``A=1:B=2``) as a mapping.

    ``flag`` names the option in messages; ``settings``, where given, is extended in
    place, so that a name already there counts as given twice.
    """
    settings = {} if settings is None else settings
    for item in items:
        for part in item.split(":"):
            name, sep, value = part.partition("=")
            if not sep or not name:
                raise UsageError(f"{flag} expects NAME=VALUE, got '{part}'")
            if name in settings:
                raise UsageError(f"option '{name}' given twice")
            settings[name] = value
    return settings


def parse_feature_args(items: Sequence[str], settings: dict[str, str]) -> None:
    """libvmaf's ``--feature adm=NAME=VALUE:NAME=VALUE`` (or bare ``adm``), into ``settings``.

    As libvmaf's ``parse_feature_config``, the feature name ends at the first ``=`` and
    the rest is a ``:``-separated option list. ``adm_cuda`` is the same feature; any other
    name is a usage error, and so is a second ``--feature``, since one run computes one
    ADM configuration.
    """
    if len(items) > 1:
        raise UsageError(
            f"--feature given {len(items)} times; admcuda computes one ADM configuration "
            "per run, so give one --feature adm[=NAME=VALUE:...]"
        )
    for item in items:
        name, sep, rest = item.partition("=")
        if name not in ADM_FEATURES:
            raise UsageError(
                f"--feature {name or item}: admcuda computes ADM only; use --feature adm "
                "(or adm_cuda), with options as adm=NAME=VALUE:NAME=VALUE"
            )
        if sep:
            parse_option_args([rest], flag=f"--feature {name}", settings=settings)


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

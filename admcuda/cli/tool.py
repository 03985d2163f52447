"""What every ``admcuda`` subcommand shares: usage errors, a parser that raises instead
of exiting, ``--option NAME=VALUE`` parsing, the image ``--output`` check, and one-line
failure reporting."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import IO, NoReturn

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

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        # argparse drops an OSError writing --help; raised, a full disk or a reader gone
        # is reported as for any other output (and the same whether Python buffers
        # standard output or not). None where stdout is closed: stderr, as argparse does.
        from admcuda.report.writers import write_stdout

        file = file or sys.stderr
        if not message or file is None:
            return
        if file is sys.stdout:
            write_stdout(message)
        else:
            file.write(message)


_C_SPACE = " \t\n\v\f\r"


def c_integer(text: str) -> int:
    """An integer as libvmaf's command line reads one (C's ``strtoul(text, &end, 0)``, all
    of it): optional leading white space and sign, then decimal, ``0x`` hexadecimal or
    ``0``-led octal digits, nothing after them (so ``010`` is 8). Negative numbers stay
    negative here, for the caller's range check. ValueError if it is not one."""
    body = text.lstrip(_C_SPACE)
    sign = -1 if body[:1] == "-" else 1
    if body[:1] in "+-":
        body = body[1:]
    if body[:2] in ("0x", "0X") and len(body) > 2:
        base, digits, allowed = 16, body[2:], "0123456789abcdefABCDEF"
    elif body[:1] == "0" and len(body) > 1:
        base, digits, allowed = 8, body[1:], "01234567"
    else:
        base, digits, allowed = 10, body, "0123456789"
    if not digits or any(c not in allowed for c in digits):
        raise ValueError(text)
    return sign * int(digits, base)


def counter(low: int, *, zero: int | None = None):  # type: ignore[no-untyped-def]
    """argparse type: an integer >= ``low`` in libvmaf's syntax (:func:`c_integer`); with
    ``zero``, 0 is accepted too and read as ``zero`` (libvmaf's 0 for "no limit" or "the
    default")."""

    def parse(text: str) -> int | None:
        try:
            value = c_integer(text)
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
# The options libvmaf 3.2.0's adm_cuda has (libvmaf/src/feature/cuda/integer_adm_cuda.c,
# options_cuda); it ignores any other, where admcuda would apply it.
ADM_CUDA_OPTIONS: frozenset[str] = frozenset(
    {"debug", "adm_enhn_gain_limit", "adm_norm_view_dist", "adm_ref_display_height"}
)


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

    Where libvmaf would silently ignore an option, it is a usage error here, so that a
    libvmaf command line never scores differently: libvmaf looks a feature's options up
    by their full names only, so an alias (``egl``) is refused (``--option`` takes
    aliases), and ``adm_cuda`` takes only the options libvmaf's adm_cuda has
    (:data:`ADM_CUDA_OPTIONS`).
    """
    from admcuda.options import lookup_option

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
        if not sep:
            continue
        before = set(settings)
        parse_option_args([rest], flag=f"--feature {name}", settings=settings)
        for key, value in settings.items():
            if key in before:
                continue
            try:
                spec = lookup_option(key)
            except AdmError:
                continue  # unknown: refused with the option parser's suggestion
            if key != spec.name:
                raise UsageError(
                    f"--feature {name}: libvmaf reads options by their full names and would "
                    f"ignore '{key}'; write {spec.name}={value}"
                )
            if name == "adm_cuda" and key not in ADM_CUDA_OPTIONS:
                raise UsageError(
                    f"--feature adm_cuda: libvmaf's adm_cuda has no option {key} and would "
                    f"ignore it; use --feature adm={key}={value}"
                )


def check_image_suffix(path: str) -> None:
    """Refuse an ``--output`` whose suffix names no format matplotlib writes (it takes the
    format from the suffix, and finds out only when it saves, after the work). Needs
    matplotlib: callers check that it imports first."""
    from pathlib import Path

    from matplotlib.backend_bases import FigureCanvasBase

    # pgf needs a LaTeX installation, found only after the work: not offered
    formats = {f for f in FigureCanvasBase.get_supported_filetypes() if f != "pgf"}
    if Path(path).suffix.lower().lstrip(".") not in formats:
        raise UsageError(
            f"--output '{path}' must end in .png or another image suffix matplotlib writes "
            f"({', '.join('.' + f for f in sorted(formats) if f != 'png')})"
        )


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
    except BrokenPipeError:
        # The reader of standard output went away: stop quietly, as `admcuda score` does.
        from admcuda.report.writers import drop_stdout

        drop_stdout()
        return EXIT_RUNTIME
    except OSError as exc:
        fail(os_error_text(exc))
        return EXIT_RUNTIME
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0

"""What every ``admcuda`` subcommand shares: the program name and exit codes, a parser
that raises instead of exiting, the number parser (:func:`counter`, libvmaf's syntax
through :func:`admcuda.numeric.c_integer`), ``--feature`` parsing, the image
``--output`` check, and the one exit-code handler (:func:`run_tool`)."""

from __future__ import annotations

import argparse
import functools
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from admcuda.errors import AdmError, UsageError
from admcuda.numeric import NumberTooLong, c_integer
from admcuda.options import AdmOptions, OptionValue, lookup_option, parse_option_args
from admcuda.report.writers import drop_stdout, flush_stdout, write_stdout

PROG = "admcuda"
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    """ArgumentParser that raises :class:`UsageError` instead of printing usage and exiting.

    Its messages help where argparse's alone would not: where ``-h`` was meant as help
    (``-h`` is libvmaf's height in ``score`` and ``map``, and no option elsewhere) they
    name ``--help``, and an unknown long option gets the option it is closest to
    (``--modle``: did you mean --model?).
    """

    _argv: Sequence[str] = ()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            hint = _closest_options(extras, self._long_options(parsed))
            self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def error(self, message: str) -> NoReturn:
        if message.startswith("the following arguments are required"):
            # argparse finds the missing ones before it reports an unknown option, which
            # may be the missing one mistyped (--ouptut)
            given = [
                t for t in self._given() if t.partition("=")[0] not in self._option_string_actions
            ]
            message += _closest_options(given, self._long_options(argparse.Namespace()), True)
        raise UsageError(message + self._help_hint(message))

    def _given(self) -> list[str]:
        """The arguments this parser was given, up to a ``--``."""
        argv = list(self._argv)
        return argv[: argv.index("--")] if "--" in argv else argv

    def _long_options(self, parsed: argparse.Namespace) -> list[str]:
        """This parser's long options and those of the subcommand ``parsed`` chose (whose
        unknown arguments argparse reports here)."""
        parsers: list[argparse.ArgumentParser] = [self]
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None))
                parsers += [chosen] if chosen is not None else []
        return [
            flag
            for parser in parsers
            for action in parser._actions
            if action.help != argparse.SUPPRESS
            for flag in action.option_strings
            if flag.startswith("--")
        ]

    def _help_hint(self, message: str) -> str:
        """Where ``-h`` was given for help: a pointer to ``--help``."""
        where = f"'{self.prog} --help'"
        action = self._option_string_actions.get("-h")
        if action is not None and not isinstance(action, argparse._HelpAction):
            if message.startswith("argument -h/") and (
                "expected one argument" in message or "invalid" in message
            ):
                return f" (-h is the height, as in libvmaf; for help use {where})"
            return ""
        unknown = message.startswith("unrecognized arguments:") and "-h" in message.split()
        missing = message.startswith("the following arguments are required")
        missing = missing and "-h" in self._given()
        return f" (for help use {where})" if action is None and (unknown or missing) else ""

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        # argparse drops an OSError writing --help; raised, a full disk or a reader gone
        # is reported as for any other output (and the same whether Python buffers
        # standard output or not). None where stdout is closed: stderr, as argparse does.
        file = file or sys.stderr
        if not message or file is None:
            return
        if file is sys.stdout:
            write_stdout(message)
        else:
            file.write(message)


def _closest_options(given: Sequence[str], options: Sequence[str], named: bool = False) -> str:
    """`` (did you mean --model?)`` for unknown long options near a known one, else "";
    with ``named`` or several, each with the option given (``--model for --modle``)."""
    import difflib  # only for a command line with a mistake

    pairs = []
    for token in given:
        name = token.partition("=")[0]
        close = difflib.get_close_matches(name, options, n=1) if name.startswith("--") else []
        if close:
            pairs.append((name, close[0]))
    if not pairs:
        return ""
    if len(pairs) == 1 and not named:
        return f" (did you mean {pairs[0][1]}?)"
    return f" (did you mean {', '.join(f'{want} for {name}' for name, want in pairs)}?)"


def counter(low: int, *, zero: int | None = None):  # type: ignore[no-untyped-def]
    """argparse type: an integer >= ``low`` in libvmaf's syntax (:func:`c_integer`); with
    ``zero``, 0 is accepted too and read as ``zero`` (libvmaf's 0 for "no limit" or "the
    default")."""

    def parse(text: str) -> int | None:
        try:
            value = c_integer(text)
        except NumberTooLong as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
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


def parse_feature_args(items: Sequence[str], settings: dict[str, str]) -> None:
    """libvmaf's ``--feature adm=NAME=VALUE:NAME=VALUE`` (or bare ``adm``), into ``settings``.

    As libvmaf's ``parse_feature_config``, the feature name ends at the first ``=`` and
    the rest is a ``:``-separated option list. ``adm_cuda`` is the same feature; any other
    name is a usage error (``admcuda score`` hands vif, motion and models to
    :mod:`admcuda.vmaf` before this), and so is a second ``--feature``, since one run
    computes one ADM configuration.

    Where libvmaf would silently ignore an option, it is a usage error here, so that a
    libvmaf command line never scores differently: libvmaf looks a feature's options up
    by their full names only, so an alias (``egl``) is refused (``--option`` takes
    aliases), and ``adm_cuda`` takes only the options libvmaf's adm_cuda has
    (:data:`ADM_CUDA_OPTIONS`).
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
                f"--feature {name or item}: this command computes ADM alone (admcuda score "
                "computes adm, vif, motion, also named adm_cuda, vif_cuda and motion_cuda, "
                "and psnr); "
                "use --feature adm (or adm_cuda), with options as adm=NAME=VALUE:NAME=VALUE"
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


@dataclass(frozen=True)
class FeatureRequest:
    """What one run computes, as ``admcuda score`` reads ``--model``, ``--feature``,
    ``--option`` and ``--debug`` (:func:`feature_request`); hashable and small, so that it
    travels to a worker, which builds the plan there (:meth:`plan`).

    Attributes
    ----------
    options : AdmOptions
        The run's ADM options: of ADM alone, or of admcuda's own ADM beside a plan.
    models : tuple of str
        ``--model`` strings, as :func:`admcuda.vmaf.build_plan` takes them.
    features : tuple of str
        The ``--feature`` strings the plan registers (an ``adm`` folded into ``options``
        is not among them).
    own_adm : bool
        Whether ``options`` add admcuda's ADM to the plan (``--option`` or ``--debug``).
    predict : bool
        False for ``--no-prediction``.
    planned : bool
        Whether the run computes more than ADM: a model, or a feature other than
        adm/adm_cuda. Without it there is no plan and ``options`` are the whole run.
    """

    options: AdmOptions
    models: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    own_adm: bool = False
    predict: bool = True
    planned: bool = False

    def plan(self) -> Any:
        """The :class:`admcuda.vmaf.FeaturePlan`, None where :attr:`planned` is False.

        Raises
        ------
        AdmError
            One line: a model or feature that cannot be loaded or computed.
        """
        return _request_plan(self) if self.planned else None


@functools.lru_cache(maxsize=64)
def _request_plan(request: FeatureRequest) -> Any:
    from admcuda.vmaf import build_plan

    return build_plan(
        request.models,
        request.features,
        adm=request.options if request.own_adm else None,
        predict=request.predict,
    )


def feature_request(
    models: Sequence[str] = (),
    features: Sequence[str] = (),
    option_items: Sequence[str] = (),
    *,
    options: Mapping[str, OptionValue] | None = None,
    debug: bool = False,
    predict: bool = True,
) -> FeatureRequest:
    """``admcuda score``'s ``--model``, ``--feature``, ``--option`` and ``--debug`` as one
    :class:`FeatureRequest`: libvmaf's ``--feature adm=...`` gives the ADM options of a run
    without a plan; with a plan (a model, or vif, motion, psnr, float_ssim...) it is a
    feature of the plan, unless admcuda's own options are given (``option_items``,
    ``options``, ``debug``): then it joins them as that one ADM.

    Parameters
    ----------
    models : sequence of str
        ``--model`` strings, already through :func:`admcuda.model.model_arg`.
    features : sequence of str
        libvmaf's ``--feature NAME=K=V:...`` strings.
    option_items : sequence of str
        ``--option`` values (``NAME=VALUE`` or ``A=1:B=2``).
    options : mapping, optional
        More of admcuda's ADM options, by name or alias (a batch row's ``options``).
    debug : bool
        ``--debug``.
    predict : bool
        False for ``--no-prediction``.

    Raises
    ------
    UsageError
        A feature or option that does not parse, or one given twice.
    AdmError
        ADM options that do not make one configuration.
    """
    planned = bool(models) or any(f.partition("=")[0] not in ADM_FEATURES for f in features)
    settings: dict[str, OptionValue] = {}
    own = bool(option_items) or bool(options) or debug
    adm = [f for f in features if f.partition("=")[0] == "adm"]
    if planned:
        if own:
            parse_feature_args(adm, settings)  # type: ignore[arg-type]
    else:
        parse_feature_args(features, settings)  # type: ignore[arg-type]
    parse_option_args(option_items, settings=settings)  # type: ignore[arg-type]
    for key, value in (options or {}).items():
        if key in settings:
            raise UsageError(f"option '{key}' given twice")
        settings[key] = value
    opts = AdmOptions.from_mapping(settings)
    if debug:
        opts = opts.replace(debug=True)
    kept = tuple(f for f in features if not (own and f.partition("=")[0] == "adm"))
    return FeatureRequest(
        options=opts, models=tuple(models), features=kept if planned else (), own_adm=own,
        predict=bool(predict), planned=planned,
    )  # fmt: skip


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


def os_error_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.strerror}: '{exc.filename}'"
    return str(exc)


class LogFormatter(logging.Formatter):
    """``admcuda: warning: message``, one line per record."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{PROG}: {record.levelname.lower()}: {' '.join(record.getMessage().split())}"


def settle_stdout() -> None:
    """Where standard output still holds text it could not write (another error came
    first and was reported), drop it (:func:`drop_stdout`)."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        drop_stdout()


def run_tool(run: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None) -> int:
    """Run a subcommand's ``run(argv)`` and turn what it raises into an exit status and one
    line on stderr: 0 on success, 1 on a runtime failure, 2 on a usage error, 130 on Ctrl-C
    (SIGTERM is not caught: the process ends by it). ``ADMCUDA_TRACEBACK=1`` lets an
    unexpected error through with its traceback."""
    try:
        try:
            code = run(argv)
        except SystemExit as exc:  # --help and --version, whose text is flushed below too
            code = exc.code if isinstance(exc.code, int) else 0
        # Here, so that a write to standard output that fails (a full disk, a reader gone)
        # is reported as any error is: at exit the interpreter would print two lines of
        # its own and exit 120. After a failure (its line printed), stdout is only
        # settled, below, so that the failure stays the one line.
        if code == 0:
            flush_stdout()
        return code
    except UsageError as exc:
        fail(str(exc))
        return EXIT_USAGE
    except AdmError as exc:
        fail(str(exc))
        return EXIT_RUNTIME
    except BrokenPipeError:
        # The reader went away (`admcuda ... | head`): stop quietly, and point stdout
        # at devnull so the interpreter's final flush does not complain either.
        drop_stdout()
        return EXIT_RUNTIME
    except OSError as exc:
        fail(os_error_text(exc))
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        fail("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if os.environ.get("ADMCUDA_TRACEBACK"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} (set ADMCUDA_TRACEBACK=1 for details)")
        return EXIT_RUNTIME
    finally:
        settle_stdout()

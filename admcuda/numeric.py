"""Integers, read one way each everywhere.

- :func:`c_integer`: a command-line number, as libvmaf's command line reads one (C's
  ``strtoul(text, &end, 0)``): ``010`` is 8, ``0x10`` is 16. Every subcommand's numbers
  (``score``, ``map``, ``bench``) go through it.
- :func:`decimal_integer`: a number in an option value or a manifest cell: decimal digits
  with an optional sign, nothing else (not Python's ``int()``, which takes ``5_76``).
- :func:`is_integer` / :func:`check_integer`: a Python or NumPy integer handed to the API.
"""

from __future__ import annotations

import numbers
import operator
import re

from admcuda.errors import AdmError

__all__ = ["DECIMAL", "c_integer", "check_integer", "decimal_integer", "is_integer"]

DECIMAL = re.compile(r"[+-]?[0-9]+")


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


def decimal_integer(text: str) -> int | None:
    """``text`` as an integer where it is decimal digits with an optional sign (the whole
    of it); None otherwise."""
    return int(text) if DECIMAL.fullmatch(text) else None


def is_integer(value: object) -> bool:
    """A Python or NumPy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_integer(name: str, value: object, low: int, high: int = (1 << 31) - 1) -> int:
    """``value`` as an ``int``, where it is an integer (Python's or NumPy's, not a bool)
    from ``low`` to ``high`` (a C int's largest by default); AdmError naming ``name``
    otherwise."""
    if not is_integer(value) or value < low:  # type: ignore[operator]
        raise AdmError(f"{name} must be an integer >= {low}, got {value!r}")
    if value > high:  # type: ignore[operator]
        raise AdmError(f"{name} must be at most {high}, got {value!r}")
    return operator.index(value)  # type: ignore[arg-type]

"""Integers, read one way each everywhere.

- :func:`c_integer`: a command-line number, as libvmaf's command line reads one (C's
  ``strtoul(text, &end, 0)``): ``010`` is 8, ``0x10`` is 16. Every subcommand's numbers
  (``score``, ``map``, ``bench``) go through it.
- :func:`decimal_integer`: a number in an option value or a manifest cell: decimal digits
  with an optional sign, nothing else (not Python's ``int()``, which takes ``5_76``).
- :func:`is_integer` / :func:`check_integer`: a Python or NumPy integer handed to the API.

A number longer than :data:`LONGEST` digits is refused by its length before it is
converted (Python's ``int()`` refuses text of more than 4,300 digits with a ValueError of
its own) and shown in messages by its length (:func:`shown`), not digit by digit.
"""

from __future__ import annotations

import math
import numbers
import operator
import re

from admcuda.errors import AdmError

__all__ = [
    "DECIMAL", "LONGEST", "NumberTooLong", "c_integer", "check_integer", "decimal_integer",
    "counted", "is_integer", "shown",
]  # fmt: skip

DECIMAL = re.compile(r"[+-]?[0-9]+")
LONGEST = 30  # digits: more than any value admcuda takes (a 64-bit integer has 20)
_LOG10_2 = math.log10(2)


class NumberTooLong(AdmError, ValueError):
    """A number with more than :data:`LONGEST` significant digits: out of every range.
    A ValueError too, as the text that is not a number at all."""

    def __init__(self, digits: int) -> None:
        self.digits = digits
        super().__init__(f"a {digits}-digit number is out of range")


def _check_length(digits: str) -> str:
    """``digits`` without leading zeros; NumberTooLong where they are too many."""
    significant = digits.lstrip("0")
    if len(significant) > LONGEST:
        raise NumberTooLong(len(significant))
    return significant or "0"


def digit_count(value: int) -> int:
    """Decimal digits of ``abs(value)``, without writing them out (``str()`` refuses an
    integer of more than 4,300 digits)."""
    value = abs(value)
    count = max(1, int((value.bit_length() - 1) * _LOG10_2) - 1)  # at most the true count
    while 10**count <= value:
        count += 1
    return count


def shown(value: object) -> str:
    """``repr(value)`` for a message; an integer of more than :data:`LONGEST` digits by its
    length (``a 401-digit integer``)."""
    if is_integer(value):
        digits = digit_count(int(value))  # type: ignore[call-overload]
        if digits > LONGEST:
            return f"a {digits}-digit integer"
    return repr(value)


_C_SPACE = " \t\n\v\f\r"


def c_integer(text: str) -> int:
    """An integer as libvmaf's command line reads one (C's ``strtoul(text, &end, 0)``, all
    of it): optional leading white space and sign, then decimal, ``0x`` hexadecimal or
    ``0``-led octal digits, nothing after them (so ``010`` is 8). Negative numbers stay
    negative here, for the caller's range check. ValueError if it is not one;
    NumberTooLong (a ValueError) if it has more than :data:`LONGEST` digits."""
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
    return sign * int(_check_length(digits), base)


def decimal_integer(text: str) -> int | None:
    """``text`` as an integer where it is decimal digits with an optional sign (the whole
    of it); None otherwise. NumberTooLong if it has more than :data:`LONGEST` digits."""
    if not DECIMAL.fullmatch(text):
        return None
    sign = -1 if text[0] == "-" else 1
    return sign * int(_check_length(text.lstrip("+-")))


def is_integer(value: object) -> bool:
    """A Python or NumPy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_integer(name: str, value: object, low: int, high: int = (1 << 31) - 1) -> int:
    """``value`` as an ``int``, where it is an integer (Python's or NumPy's, not a bool)
    from ``low`` to ``high`` (a C int's largest by default); AdmError naming ``name``
    otherwise."""
    if not is_integer(value) or value < low:  # type: ignore[operator]
        raise AdmError(f"{name} must be an integer >= {low}, got {shown(value)}")
    if value > high:  # type: ignore[operator]
        raise AdmError(f"{name} must be at most {high}, got {shown(value)}")
    return operator.index(value)  # type: ignore[arg-type]


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 frame``, ``3 frames``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

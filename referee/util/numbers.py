"""The one parser for whole numbers people type: in a request (a query or form value, a
header such as Last-Event-ID) or at a terminal prompt.

`str.isdigit()` accepts far more than `int()` does (a superscript two is a digit to it and no
number to `int()`), and `int()` accepts more than a person means (other scripts' digits,
underscores, signs, spaces). Every number from outside goes through `whole_number` instead:
ASCII digits only, at most `digits` of them, within [low, high], or one `NumberError` line.
"""

from __future__ import annotations

import re

from referee.errors import InputError

MAX_DIGITS = 18          # every such number fits SQLite's and the protocol's 64-bit integers
_ASCII_DIGITS = re.compile(r"[0-9]+")   # a class of the ten ASCII digits, never \d


class NumberError(InputError):
    """A text that is not a whole number in the range asked for (one line, no traceback)."""


def whole_number(text: str, what: str, low: int = 0, high: int = 10**MAX_DIGITS - 1,
                 digits: int = MAX_DIGITS) -> int:
    """`text` as a whole number from `low` to `high`: ASCII digits only, at most `digits` of
    them (no sign, space, underscore or other script's digit). NumberError naming `what`
    otherwise."""
    if not isinstance(text, str) or len(text) > digits or not _ASCII_DIGITS.fullmatch(text):
        raise NumberError(f"{what} must be a whole number from {low} to {high}")
    number = int(text)
    if not low <= number <= high:
        raise NumberError(f"{what} must be a whole number from {low} to {high}")
    return number


def whole_number_or(text: str | None, default: int, what: str, low: int = 0,
                    high: int = 10**MAX_DIGITS - 1, digits: int = MAX_DIGITS) -> int:
    """`text` as `whole_number` reads it, or `default` when it is absent or empty (a value a
    client may leave out); NumberError for one that is there and no such number."""
    if text is None or text == "":
        return default
    return whole_number(text, what, low, high, digits)


def is_whole(text: str, digits: int = MAX_DIGITS) -> bool:
    """True when `whole_number` reads `text` (ASCII digits only, at most `digits`): the test
    to use where `str.isdigit()` was, since `int()` refuses some of what it accepts."""
    return isinstance(text, str) and len(text) <= digits and bool(_ASCII_DIGITS.fullmatch(text))

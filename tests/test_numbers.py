"""The one parser of numbers people type (referee.util.numbers): ASCII digits only, bounded,
one NumberError line for everything else, never another exception. A property test over all
of Unicode's digits and over any text; the club server's routes and the terminal prompt that
use it are tested against real processes in tests/test_server_share.py and tests/test_play.py.
"""

from __future__ import annotations

import string
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.game.human import read_choice
from referee.util.numbers import NumberError, is_whole, whole_number

# Every character str.isdigit() or str.isdecimal() takes that is not one of the ten ASCII
# digits: superscripts, circled digits, Arabic-Indic, full-width, Devanagari...
OTHER_DIGITS = "".join(c for c in map(chr, range(sys.maxunicode + 1))
                       if (c.isdigit() or c.isdecimal()) and c not in string.digits)


def plain(text: str, digits: int = 18) -> bool:
    return 0 < len(text) <= digits and all(c in string.digits for c in text)


def test_the_other_digits_are_many_and_int_takes_some_of_them() -> None:
    """Why one parser: isdigit() takes what int() refuses, int() takes what no person means."""
    assert len(OTHER_DIGITS) > 500
    assert "\u00b2".isdigit() and int("\u0661") == 1   # ² is a digit; Arabic-Indic 1 is int 1
    with pytest.raises(ValueError):
        int("\u00b2")


@given(st.text(alphabet=st.sampled_from(OTHER_DIGITS + string.digits + " _+-\n"),
               max_size=25))
def test_only_plain_ascii_digits_are_a_number(text: str) -> None:
    if plain(text):
        assert whole_number(text, "n") == int(text) and is_whole(text)
        return
    assert not is_whole(text)
    with pytest.raises(NumberError) as refused:
        whole_number(text, "n")
    assert str(refused.value) == "n must be a whole number from 0 to 999999999999999999"


@given(st.text(max_size=30))
def test_any_text_is_a_number_or_the_one_error(text: str) -> None:
    try:
        number = whole_number(text, "choice", 0, 40, digits=3)
    except NumberError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("choice must be")
        assert not (plain(text, 3) and 0 <= int(text) <= 40)
    else:
        assert plain(text, 3) and number == int(text) <= 40


@given(st.sampled_from(OTHER_DIGITS))
def test_the_terminal_prompt_asks_again_for_another_scripts_digit(digit: str) -> None:
    legal = list(range(9))
    assert read_choice(digit, legal) is None    # type: ignore[arg-type]
    assert read_choice(f"1{digit}", legal) is None    # type: ignore[arg-type]
    assert unicodedata.category(digit)[0] == "N"

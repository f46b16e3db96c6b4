"""Bot-supplied text is made safe to print: nothing a bot sends can drive a terminal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.present.text import safe_block, safe_line


def is_safe(text: str) -> bool:
    """True if `text` holds no character `safe_block` would escape: it comes back unchanged."""
    return safe_block(text) == text


NASTY = "\x1b[2J\x1b]0;title\x07\rX\u202eY\x9b6n\x00\u2028"


def test_escape_sequences_are_shown_not_interpreted() -> None:
    line = safe_line(f"name{NASTY}")
    assert line == ("name\\x1b[2J\\x1b]0;title\\x07\\x0dX\\u202eY\\x9b6n\\x00\\u2028")
    assert is_safe(line)


def test_plain_text_and_non_latin_letters_are_unchanged() -> None:
    for text in ("alice", "Zoë's bot: 3 → 4", "骰子", "line one"):
        assert safe_line(text) == text
    assert safe_block("one\n\ttwo\r\nthree") == "one\n\ttwo\nthree"


def test_a_line_has_no_newline_and_a_block_has_no_carriage_return() -> None:
    assert safe_line("a\nb\tc") == "a\\x0ab\\x09c"
    assert safe_block("progress 10%\rprogress 99%") == "progress 10%\\x0dprogress 99%"


def test_length_is_capped() -> None:
    assert len(safe_line("x" * 10_000_000)) == 300
    assert safe_line("x" * 400).endswith("…")
    block = safe_block("a" * 1000 + "TAIL", limit=100)
    assert block.startswith("[904 characters cut]\n") and block.endswith("TAIL")


def test_bytes_are_decoded() -> None:
    assert safe_line(b"\xff\x1bok") == "\ufffd\\x1bok"


@given(st.text())
@pytest.mark.slow
def test_any_text_comes_out_safe(text: str) -> None:
    assert is_safe(safe_line(text))
    assert "\n" not in safe_line(text)
    assert is_safe(safe_block(text))

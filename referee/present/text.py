"""Making bot-supplied text safe to print or write.

Everything a bot controls (its name in `HelloReply`, its stdout/stderr, gRPC status details,
strike details quoting its messages) may hold terminal escape sequences, carriage returns that
overwrite a line, bidirectional overrides that reorder it, or megabytes of text. Pass it through
`safe_line` (one line: names, reasons, table cells) or `safe_block` (several lines: captured
output) before it reaches a terminal, a table, a report or a log file. The result shows every
such character visibly (`\\x1b`, `\\u202e`), so nothing is hidden and nothing is interpreted.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["LINE_LIMIT", "BLOCK_LIMIT", "safe_line", "safe_block"]

LINE_LIMIT = 300          # characters kept of one line of bot text
BLOCK_LIMIT = 64 * 1024   # characters kept of a block (the newest part: output tails matter)

# Categories shown escaped: controls (Cc: C0, DEL, C1 incl. CSI), format characters (Cf: bidi
# overrides, zero-width joiners...), line and paragraph separators (Zl, Zp), surrogates (Cs),
# private use (Co) and unassigned code points (Cn).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
# Fast path: printable ASCII needs no look-up.
_PLAIN = re.compile(r"[\x20-\x7e]*")


def _escape_char(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _escape(text: str, keep: str) -> str:
    if _PLAIN.fullmatch(text):
        return text
    out = []
    for char in text:
        if char in keep or (" " <= char <= "~"):
            out.append(char)
        elif unicodedata.category(char) in _UNSAFE_CATEGORIES:
            out.append(_escape_char(char))
        else:
            out.append(char)
    return "".join(out)


def _as_text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


def safe_line(value: object, limit: int = LINE_LIMIT) -> str:
    """`value` as one printable line: control and format characters (newlines, tabs, ESC,
    bidi overrides...) shown as `\\xNN`/`\\uNNNN`, cut to `limit` characters with a marker."""
    text = _as_text(value)
    if len(text) > limit * 4:          # never scan megabytes for a line we cut anyway
        text = text[: limit * 4]
    text = _escape(text, keep="")
    if len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def safe_block(value: object, limit: int = BLOCK_LIMIT) -> str:
    """`value` as printable lines: newlines and tabs kept, every other control or format
    character shown escaped (a lone `\\r` too: it would overwrite the line); when longer than
    `limit` characters, only the tail is kept, after a `[N characters cut]` line."""
    text = _as_text(value).replace("\r\n", "\n")
    cut = 0
    if len(text) > limit:
        cut = len(text) - limit
        text = text[cut:]
    text = _escape(text, keep="\n\t")
    return f"[{cut} characters cut]\n{text}" if cut else text

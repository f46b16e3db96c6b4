"""Notes from bots: the optional text and named numbers a bot sends with a decision
(`Decision.note`, `Decision.values`, docs/protocol.md "Notes"), made safe to keep in a game
record.

A bot's notes are its own business and never a strike: what is too long is cut and flagged
(`note_cut`), so a record keeps at most NOTE_MAX_BYTES of text and VALUES_MAX finite numbers
under names of at most NAME_MAX_BYTES, and a league's tables keep NAMES_PER_BOT names per bot
(`referee.league.tables`).
The text is kept as sent (within the cut); whoever shows it escapes it (`referee.present.text`), as
every bot-supplied text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

NOTE_MAX_BYTES = 256
VALUES_MAX = 16
NAME_MAX_BYTES = 32


def _cut_utf8(text: str, limit: int) -> str:
    if len(text) * 4 <= limit:   # short enough whatever its characters
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")   # never half a character


def _number(value: float) -> int | float:
    """Whole numbers as ints in the record (120, not 120.0)."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def record_notes(note: str, values: Mapping[str, float]) -> dict[str, Any]:
    """The keys a decision entry of the record gets for a bot's notes: `note` (if not empty),
    `values` (if any survive; names sorted), and `note_cut: True` if anything was cut or
    dropped. {} when the bot sent no notes."""
    if not note and not values:
        return {}
    out: dict[str, Any] = {}
    cut = False
    if note:
        kept = _cut_utf8(note, NOTE_MAX_BYTES)
        cut = kept != note
        out["note"] = kept
    if values:
        kept_values: dict[str, int | float] = {}
        for name, value in sorted(dict(values).items()):   # one read of a protobuf map
            value = float(value)
            if (len(kept_values) >= VALUES_MAX or not name
                    or len(name.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES
                    or not math.isfinite(value)):
                cut = True
                continue
            kept_values[name] = _number(value)
        if kept_values:
            out["values"] = kept_values
    if cut:
        out["note_cut"] = True
    return out

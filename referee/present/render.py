"""Readable text for game events: what `referee match` prints turn by turn, and (with
`details`) what `referee show` and `referee match --verbose` print: each decision's think time
and note, and the dice on every casino before a round is scored."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from referee.engine import SLOT
from referee.present.text import safe_line
from referee.util.numbers import is_whole

NARRATION_LIMIT = 4096   # characters of one narrated line: a strike detail quotes the legal moves


def printable(text: str) -> str:
    """`text` with control and format characters shown as escapes: bot names and notes are
    bot-supplied and must not drive the terminal (a whole narration line is kept)."""
    return safe_line(text, limit=NARRATION_LIMIT)


def money(amount: int) -> str:
    """$50k style amounts."""
    return f"${amount // 1000}k" if amount % 1000 == 0 else f"${amount:,}"


def target_name(target: int) -> str:
    """'casino 3' or 'the slot'."""
    return "the slot" if target == SLOT else f"casino {target}"


def notes_text(notes: Sequence[int]) -> str:
    """Banknotes highest first (as a bot's view and the report show them): '$90k $20k'."""
    return " ".join(money(n) for n in sorted(notes, reverse=True))


def terminal_width() -> int | None:
    """The width to fit lines to: $COLUMNS, else the terminal's; None (no wrapping: a line per
    item, for grep and scripts) when the output goes to a file or a pipe without $COLUMNS."""
    columns = os.environ.get("COLUMNS", "")
    if is_whole(columns) and int(columns) > 0:
        return max(40, int(columns))
    if sys.stdout.isatty():
        return max(40, shutil.get_terminal_size((80, 24)).columns)
    return None


SEPARATORS = ("; ", ", ", " ")   # where `fit` prefers to break a line, best first


def fit(line: str, width: int | None = None, hang: int | None = None) -> list[str]:
    """`line` wrapped to `width` columns (default `terminal_width()`; the one wrapping rule of
    the referee's terminal output): between its
    "; "-separated parts where it has them (a casino's notes stay together), else after its
    commas, else at spaces; a continuation is
    indented `hang` spaces (default: four more than the line, so it reads as part of it), and
    words longer than a line are cut."""
    width = width or terminal_width()
    if width is None or len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip(" "))
    more = " " * (min(indent + 4, width // 2) if hang is None else min(hang, width - 20))
    return _pack(line, width, more, 0)


def _pack(text: str, width: int, more: str, level: int) -> list[str]:
    """`text` broken after SEPARATORS[level] into lines of `width`; a part that is still too
    long is broken at the next separator."""
    if len(text) <= width:
        return [text]
    if level == len(SEPARATORS) - 1:
        return textwrap.wrap(text, width, subsequent_indent=more, break_on_hyphens=False,
                             replace_whitespace=False) or [text[:width]]
    separator = SEPARATORS[level]
    lines: list[str] = []
    current = ""
    for part in text.split(separator):
        piece = part if not current else separator + part
        # (a line that ends here keeps the separator's mark: "; " leaves ";")
        if current.strip() and len((current + piece).rstrip() + separator.strip()) > width:
            lines += _pack(current.rstrip() + separator.rstrip(), width, more, level + 1)
            current = more + part
        else:
            current += piece
    lines += _pack(current.rstrip(), width, more, level + 1)
    return lines


class Narrator:
    """Turns engine events (and the match's decision notes) into lines of text.

    With `details`, a placement also shows the bot's think time, note and values, and each
    round's scoring is preceded by the dice on every casino (`rules` says whether big dice and
    the slot exist); the narrator then follows the game's dice itself, so feed it every event
    in order."""

    def __init__(self, names: Sequence[str], *, details: bool = False,
                 rules: Any = None) -> None:
        self.names = list(names)
        self.details = details
        self.big_dice = bool(rules is not None and rules.big_dice)
        self.targets = 7 if rules is not None and rules.slot else 6
        self.dice: dict[int, list[int]] = {}   # target -> dice per participant this round

    def who(self, participant: int) -> str:
        """A seat's label, or 'neutral' for the neutral player."""
        if participant >= len(self.names):
            return "neutral"
        return f"{self.names[participant]} (seat {participant})"

    def lines(self, event: tuple, decision: dict[str, Any] | None = None) -> list[str]:
        """The text for one event (and, with `details`, its decision's and board's)."""
        if not self.details:
            return self._event_lines(event, decision)
        before = self._follow(event)
        lines = [*before, *self._event_lines(event, decision)]
        if decision:
            latency = decision.get("latency_us")
            if isinstance(latency, int | float):
                lines[-1] += f"  ({latency / 1000:.1f} ms)"
            lines += decision_lines(decision)
        return lines

    def _follow(self, event: tuple) -> list[str]:
        """Keep the dice on the board up to date; the board line when scoring begins."""
        kind, players = event[0], len(self.names)
        if kind == "round":
            self.dice = {t: [0] * (players + 1) for t in range(1, self.targets + 1)}
        elif kind == "preroll" and self.dice:
            for face in event[1]:
                self.dice[face][players] += 1
        elif kind == "place" and self.dice:
            _, seat, value, slot, own, big, neutral = event
            target = self.dice[SLOT if slot else value]
            target[seat] += own + 2 * big
            target[players] += neutral
        elif kind == "score" and event[1] == 1 and self.dice:
            return [self._board_line()]
        return []

    def _board_line(self) -> str:
        parts = []
        for target, counts in self.dice.items():
            present = ", ".join(f"{self.who(p).split(' (')[0]} {n}"
                                for p, n in enumerate(counts) if n)
            parts.append(f"{target_name(target)}: {present or '-'}")
        big = " (dice, big dice count 2)" if self.big_dice else ""
        return f"  dice before scoring{big}: " + "; ".join(parts)

    def _event_lines(self, event: tuple, decision: dict[str, Any] | None) -> list[str]:
        kind = event[0]
        if kind == "round":
            _, round_index, start, casinos = event
            funded = "; ".join(
                f"{t}: {notes_text(notes) or '-'}"
                for t, notes in zip(self._targets(len(casinos)), casinos, strict=True)
            )
            return [f"Round {round_index + 1}, {self.who(start)} starts. Casinos {funded}"]
        if kind == "preroll":
            return [f"  white dice pre-rolled onto casinos {', '.join(map(str, event[1]))}"]
        if kind == "roll":
            _, seat, faces, a, b = event
            text = " ".join(map(str, faces[:a]))
            if b:
                text += f" | big {' '.join(map(str, faces[a:a + b]))}"
            if len(faces) > a + b:
                text += f" | neutral {' '.join(map(str, faces[a + b:]))}"
            return [f"  {self.who(seat)} rolls {text}"]
        if kind == "place":
            _, seat, value, slot, own, big, neutral = event
            dice = own + big
            parts = [f"{dice} die" if dice == 1 else f"{dice} dice"]
            if neutral:
                parts.append(f"{neutral} neutral")
            line = (f"    puts {' + '.join(parts)} showing {value} on "
                    f"{target_name(SLOT if slot else value)}")
            if decision and decision.get("strike"):
                detail = safe_line(decision.get("detail", ""))
                line += f"  [{safe_line(decision['strike'])} strike: {detail}; " \
                        f"substitute move]"
            elif decision and decision.get("auto"):
                line += f"  [{decision['auto']}]"
            return [line]
        if kind == "score":
            _, target, counts, cancelled, payouts, leaving = event
            present = [p for p, c in enumerate(counts) if c]
            if not present and not payouts:
                return [f"  {target_name(target)}: no dice; "
                        f"{notes_text(leaving) or 'nothing'} leaves"]
            count_text = ", ".join(f"{self.who(p)} {counts[p]}" for p in present)
            line = f"  {target_name(target)}: {count_text}"
            if cancelled:
                line += f"; ties cancel {', '.join(self.who(p) for p in cancelled)}"
            if payouts:
                line += "; pays " + ", ".join(f"{self.who(p)} {money(n)}" for p, n in payouts)
            if leaving:
                line += f"; {notes_text(leaving)} leaves"
            return [line]
        if kind == "end":
            _, cash, notes, places = event
            order = sorted(range(len(cash)), key=lambda s: places[s])
            rows = [f"  {places[s]}. {self.who(s)}: {money(cash[s])} in {notes[s]} notes"
                    for s in order]
            return ["Game over. Ranking (R26):", *rows]
        return [repr(event)]

    @staticmethod
    def _targets(count: int) -> list[int]:
        return list(range(1, count + 1))


def decision_lines(decision: dict[str, Any]) -> list[str]:
    """The bot's note and values, under its placement."""
    out = []
    note = decision.get("note")
    if note:
        cut = " (cut)" if decision.get("note_cut") else ""
        out.append(f"      note{cut}: {note!s}")
    values = decision.get("values")
    if isinstance(values, dict) and values:
        out.append("      values: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return out

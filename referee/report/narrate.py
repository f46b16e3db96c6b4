"""`referee show`: a stored game told event by event, as `referee match` prints it, with the
think time (and any note) of each decision and the casinos' dice before each round's scoring."""

from __future__ import annotations

from typing import Any

from referee.engine import SLOT, GameRecord
from referee.render import Narrator, target_name
from referee.text import safe_line

NARRATION_LIMIT = 4096   # characters of one line: a strike detail quotes the legal moves


def seat_names(data: dict[str, Any]) -> list[str]:
    """The bot name per seat of a record (`seat N` where the record names no bots)."""
    names = [f"seat {seat}" for seat in range(int(data.get("players", 0)))]
    for bot in data.get("bots") or []:
        if isinstance(bot, dict) and bot.get("seat") in range(len(names)):
            names[bot["seat"]] = str(bot.get("name", names[bot["seat"]]))
    return names


def narrate(data: dict[str, Any]) -> list[str]:
    """The lines that tell the game of one record (JSON data)."""
    record = GameRecord.from_json(data)
    names = seat_names(data)
    narrator = Narrator(names)
    decisions = data.get("decisions") or []
    targets = 7 if record.rules.slot else 6
    dice: dict[int, list[int]] = {}        # target -> dice per participant this round
    lines = [f"Game {data.get('game_id', '?')}: {record.rules.preset}, {record.players} seats, "
             f"seed {record.seed}"]
    placed = 0
    for event in record.events:
        kind = event[0]
        if kind == "round":
            dice = {t: [0] * (record.players + 1) for t in range(1, targets + 1)}
        elif kind == "preroll":
            for face in event[1]:
                dice[face][record.players] += 1
        elif kind == "score" and event[1] == 1:
            lines.append(_board_line(narrator, dice))
        decision = None
        if kind == "place":
            _, seat, value, slot, own, big, neutral = event
            target = dice[SLOT if slot else value]
            target[seat] += own + 2 * big
            target[record.players] += neutral
            decision = decisions[placed] if placed < len(decisions) else None
            placed += 1
        lines += narrator.lines(event, decision)
        latency = decision.get("latency_us") if decision else None
        if isinstance(latency, int | float):
            lines[-1] += f"  ({latency / 1000:.1f} ms)"
        if decision:
            lines += _decision_lines(decision)
    return [printable(line) for line in lines]


def printable(text: str) -> str:
    """`text` with control and format characters shown as escapes: bot names and notes are
    bot-supplied and must not drive the terminal (a whole narration line is kept)."""
    return safe_line(text, limit=NARRATION_LIMIT)


def _board_line(narrator: Narrator, dice: dict[int, list[int]]) -> str:
    parts = []
    for target, counts in dice.items():
        present = ", ".join(f"{narrator.who(p).split(' (')[0]} {n}"
                            for p, n in enumerate(counts) if n)
        parts.append(f"{target_name(target)}: {present or '-'}")
    return "  dice before scoring (dice, big dice count 2): " + "; ".join(parts)


def _decision_lines(decision: dict[str, Any]) -> list[str]:
    """The bot's note and values, under the placement."""
    out = []
    note = decision.get("note")
    if note:
        cut = " (cut)" if decision.get("note_cut") else ""
        out.append(f"      note{cut}: {note!s}")
    values = decision.get("values")
    if isinstance(values, dict) and values:
        out.append("      values: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return out

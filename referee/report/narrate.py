"""`referee show`: a stored game told event by event, as `referee match --verbose` prints it,
with the think time (and any note) of each decision and the casinos' dice before each round's
scoring."""

from __future__ import annotations

from typing import Any

from referee.engine import GameRecord
from referee.present.render import Narrator, printable


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
    narrator = Narrator(seat_names(data), details=True, rules=record.rules)
    decisions = data.get("decisions") or []
    lines = [f"Game {data.get('game_id', '?')}: {record.rules.preset}, {record.players} seats, "
             f"seed {record.seed}"]
    placed = 0
    for event in record.events:
        decision = None
        if event[0] == "place":
            decision = decisions[placed] if placed < len(decisions) else None
            placed += 1
        lines += narrator.lines(event, decision)
    return [printable(line) for line in lines]

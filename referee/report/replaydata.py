"""The data a replay viewer needs for one game: the record's events and decisions, and what
the viewer cannot derive from them (each seat's dice at the start of a round). The viewer
rebuilds the board from the events; no per-step state is stored."""

from __future__ import annotations

from typing import Any

from referee.engine import RuleSet
from referee.report.narrate import seat_names

# The keys of a record's decisions the viewer shows (the action is the place event's).
DECISION_KEYS = ("seat", "latency_us", "strike", "detail", "auto", "note", "values", "note_cut")


def replay_data(data: dict[str, Any]) -> dict[str, Any]:
    """The viewer's data for one record (JSON data as stored)."""
    rules = RuleSet.from_dict(data["rules"])
    players = int(data["players"])
    versions = {bot.get("seat"): bot.get("version", "") for bot in data.get("bots") or []
                if isinstance(bot, dict)}
    return {
        "game_id": str(data.get("game_id", "")),
        "seed": str(data["seed"]),          # 64-bit: JavaScript numbers would round it
        "rules": data["rules"],
        "players": players,
        "bots": [{"name": name, "version": str(versions.get(seat, ""))}
                 for seat, name in enumerate(seat_names(data))],
        "hand": [rules.dice, rules.big_dice, rules.neutral_per_player(players)],
        "events": data["events"],
        "decisions": [{key: d[key] for key in DECISION_KEYS if key in d}
                      for d in data.get("decisions") or [] if isinstance(d, dict)],
        "places": data.get("places"),
        "forfeits": data.get("forfeits") or [],
        "strikes": data.get("strikes") or [],
        "worker": data.get("worker"),
    }

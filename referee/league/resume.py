"""A league already in --out against the settings given now: what differs, said plainly.

A league is defined by its stored settings. Running `referee league` again on the same --out
continues it (or reprints it) only when every setting the organiser gave agrees with the stored
one; settings left out take the stored values.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from referee.league.config import DEFINING_KEYS, LeagueSettings
from referee.league.stored import StoredLeague


def _given_value(settings: LeagueSettings, key: str, bot_names: list[str]) -> Any:
    """A given setting in its stored form."""
    if key == "bots":
        return sorted(bot_names)
    if key == "rules":
        return settings.rules.to_dict()
    if key == "players":
        return list(settings.players) if settings.players else None
    if key == "seed":
        return settings.seed
    if key == "ratings":
        return dataclasses.asdict(settings.ratings)
    return getattr(settings, key)


def _stored_value(stored: StoredLeague, key: str) -> Any:
    """A stored setting in the form `_given_value` gives."""
    if key == "bots":
        return sorted(stored.bots_given)
    if key == "games":
        return stored.games_asked
    if key == "players":
        return list(stored.players_asked) if stored.players_asked else None
    if key == "seed":
        return stored.secret
    if key == "rules":
        return stored.rules_table
    if key == "ratings":
        return stored.ratings_table
    if key == "limits":
        return dict(stored.limits)
    return getattr(stored, key)


def _show(key: str, value: Any) -> str:
    if key == "players" and isinstance(value, list):
        return str(value[0]) if value[0] == value[1] else f"{value[0]}-{value[1]}"
    if key == "bots":
        return ", ".join(value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    return str(value)


def _rules_difference(kept: dict[str, Any], given: dict[str, Any]) -> str:
    changed = [f"{key} {_show(key, kept.get(key))} (given {_show(key, given[key])})"
               for key in given if kept.get(key) != given[key]]
    return "rules: " + ", ".join(changed)


def differences(settings: LeagueSettings, stored: StoredLeague,
                bot_names: list[str]) -> list[str]:
    """One phrase per defining setting that was given and differs from the stored league,
    e.g. "games: stored 40, given 60"; empty when they all agree. `bot_names` are the names in
    the given bot specs."""
    found = []
    for key in DEFINING_KEYS:
        if key not in settings.given:
            continue
        given = _given_value(settings, key, bot_names)
        kept = _stored_value(stored, key)
        if given == kept:
            continue
        if key == "rules":
            found.append(_rules_difference(kept, given))
        else:
            found.append(f"{key}: stored {_show(key, kept)}, given {_show(key, given)}")
    return found

"""Rule sets: every option of docs/rules.md, the five presets, and validation.

A rule set is data. The presets are named bundles of options; every option can also be set on
its own, so a club can invent variants without code changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.engine.errors import RulesError

FUNDING_MODES = ("threshold", "notes")
NEUTRAL_MODES = ("none", "white", "grey")
LEFTOVER_MODES = ("bottom", "discard")
MAX_SEATS = 8

# R2: the official deck, value -> count (54 notes, $2,500,000).
OFFICIAL_DECK: dict[int, int] = {
    10_000: 6, 20_000: 8, 30_000: 8, 40_000: 6, 50_000: 6,
    60_000: 5, 70_000: 5, 80_000: 5, 90_000: 5,
}
HUNDRED_K_NOTES = 5  # R2 module hundred_k: five $100,000 notes shuffled in.

_OFFICIAL_DECK = tuple(v for v, count in sorted(OFFICIAL_DECK.items()) for _ in range(count))
_HUNDRED_K_DECK = _OFFICIAL_DECK + (100_000,) * HUNDRED_K_NOTES

# R10 module scaled_threshold (Las Vegas Boulevard): funding threshold by player count.
SCALED_THRESHOLDS: dict[int, int] = {
    2: 30_000, 3: 40_000, 4: 50_000, 5: 60_000, 6: 70_000, 7: 80_000, 8: 90_000,
}


@dataclass(frozen=True)
class RuleSet:
    """Every option of the rules (docs/rules.md). Build one with `preset()` or `from_dict()`."""

    preset: str = "custom"          # informational: the preset this rule set started from
    min_players: int = 2
    max_players: int = 5
    rounds: int = 4                 # R25
    dice: int = 8                   # R3: ordinary dice per player
    big_dice: int = 0               # R3 module big_dice: dice that count 2 when scored (R20)
    funding: str = "threshold"      # R10: "threshold" or "notes"
    threshold: int = 50_000         # R10: dollars a casino is funded up to (threshold mode)
    scaled_threshold: bool = False  # R10: Boulevard thresholds by player count
    notes_per_casino: int = 2       # R10: notes per casino (notes mode)
    hundred_k: bool = False         # R2: five $100k notes shuffled in
    slot: bool = False              # R30-R32: the slot machine
    neutral: str = "none"           # R40-R43: "none", "white" (R41) or "grey" (R43)
    leftovers: str = "bottom"       # R23: "bottom" (under the deck) or "discard"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise RulesError naming the option and the valid range if anything is off."""
        _check_int("min_players", self.min_players, 2, MAX_SEATS)
        _check_int("max_players", self.max_players, self.min_players, MAX_SEATS)
        _check_int("rounds", self.rounds, 1, 100)
        _check_int("dice", self.dice, 0, 20)
        _check_int("big_dice", self.big_dice, 0, 20)
        if self.dice + self.big_dice < 1:
            raise RulesError("dice + big_dice must be at least 1: a player needs a die to play")
        _check_choice("funding", self.funding, FUNDING_MODES)
        _check_choice("neutral", self.neutral, NEUTRAL_MODES)
        _check_choice("leftovers", self.leftovers, LEFTOVER_MODES)
        _check_int("threshold", self.threshold, 1, 10_000_000)
        _check_int("notes_per_casino", self.notes_per_casino, 1, 100)
        for name in ("scaled_threshold", "hundred_k", "slot"):
            if not isinstance(getattr(self, name), bool):
                raise RulesError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.scaled_threshold and self.funding != "threshold":
            raise RulesError("scaled_threshold needs funding = \"threshold\"")
        if not isinstance(self.preset, str) or not self.preset:
            raise RulesError("preset must be a non-empty name")

    def check_players(self, players: int) -> None:
        """Raise RulesError unless `players` seats can play under these rules."""
        if not isinstance(players, int) or not self.min_players <= players <= self.max_players:
            raise RulesError(
                f"players must be between {self.min_players} and {self.max_players} "
                f"for rules {self.preset!r}, got {players}"
            )

    def deck(self) -> list[int]:
        """The starting deck (R2) in canonical order: ascending value."""
        return list(_HUNDRED_K_DECK if self.hundred_k else _OFFICIAL_DECK)

    def funding_threshold(self, players: int) -> int:
        """The dollars each casino is funded up to in threshold mode (R10)."""
        return SCALED_THRESHOLDS[players] if self.scaled_threshold else self.threshold

    def neutral_per_player(self, players: int) -> int:
        """Neutral dice each player holds at the start of a round (R41, R43)."""
        if self.neutral == "white":
            return 4 if players == 2 else 2
        if self.neutral == "grey":
            return {2: 3, 3: 2}.get(players, 1)
        return 0

    def neutral_preroll(self, players: int) -> int:
        """White dice the start player rolls onto casinos before the first turn (R41, 3 players)."""
        return 2 if self.neutral == "white" and players == 3 else 0

    def to_dict(self) -> dict[str, Any]:
        """All options as a plain dict (the form used in TOML, JSON and records)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """Build a rule set from a preset name plus overrides.

        `{"preset": "classic", "slot": True}` starts from `classic` and turns the slot on. An
        unknown key raises RulesError naming it and the known keys.
        """
        data = dict(data)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(
                f"unknown rule option {unknown[0]!r}; known options: {', '.join(sorted(known))}"
            )
        name = data.get("preset", "classic")
        if name not in PRESETS and set(data) == known:
            return cls(**data)  # a complete rule set, e.g. a custom variant read from a record
        base = preset(name)
        return dataclasses.replace(base, **data)

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed (validated)."""
        return dataclasses.replace(self, **changes)


def _check_int(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RulesError(f"{name} must be a whole number from {low} to {high}, got {value!r}")


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        options = ", ".join(f'"{c}"' for c in choices)
        raise RulesError(f"{name} must be one of {options}, got {value!r}")


PRESETS: dict[str, RuleSet] = {
    "classic": RuleSet(preset="classic"),
    "classic-white": RuleSet(preset="classic-white", neutral="white"),
    "classic-neutral-discard": RuleSet(
        preset="classic-neutral-discard", max_players=4, neutral="white", leftovers="discard"
    ),
    "biggy-slot": RuleSet(
        preset="biggy-slot", max_players=6, dice=6, big_dice=1, rounds=3,
        funding="notes", notes_per_casino=2, slot=True,
    ),
    "boulevard": RuleSet(
        preset="boulevard", max_players=8, dice=7, big_dice=1, scaled_threshold=True,
        slot=True, hundred_k=True,
    ),
}

PRESET_NOTES: dict[str, str] = {
    "classic": "official 2012 rules (seeds 000, 001)",
    "classic-white": "official white-dice variant (R41)",
    "classic-neutral-discard": "neutral dice, the bank keeps leftovers (R42)",
    "biggy-slot": "Biggy die and slot machine, 3 rounds, 2 notes a casino (seed 004)",
    "boulevard": "Las Vegas Boulevard: big die, slot, $100k notes, scaled funding",
}


def preset(name: str) -> RuleSet:
    """The named preset; RulesError listing the presets if there is none of that name."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RulesError(
            f"unknown preset {name!r}; presets: {', '.join(PRESETS)}"
        ) from None

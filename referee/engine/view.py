"""What a player may see (R24, R51): the view a bot is given, as frozen data.

The game builds views (`Game.view`) and builds a game back from one (`Game.from_view`,
`determinize`); this module knows nothing of the game, so the engine's modules import in one
direction: rules and actions, then views, then the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from referee.engine.actions import Action, Roll
from referee.engine.rules import RuleSet

_T = TypeVar("_T")


@dataclass(frozen=True)
class CasinoView:
    """One casino (1..6) or the slot machine (7): its notes and the dice placed on it."""

    target: int
    notes: tuple[int, ...]      # values in dollars, highest first
    ordinary: tuple[int, ...]   # ordinary dice per seat
    big: tuple[int, ...]        # big dice per seat
    neutral: int                # neutral dice (the neutral player's)

    def count(self, seat: int) -> int:
        """The seat's count on this casino (R20: a big die counts 2)."""
        return self.ordinary[seat] + 2 * self.big[seat]


@dataclass(frozen=True)
class SlotPlacement:
    """One placement on the slot machine (R31 allows one per face value)."""

    value: int
    seat: int
    ordinary: int
    big: int
    neutral: int


@dataclass(frozen=True)
class SeatView:
    """A seat's public situation: dice it still holds, money and notes won (R24)."""

    seat: int
    dice: int
    big_dice: int
    neutral_dice: int
    money: int
    notes: int


@dataclass(frozen=True)
class View:
    """The public state of a game as seen by `seat`. The deck's order and the seeds are hidden."""

    rules: RuleSet
    players: int
    seat: int
    round: int
    start_seat: int
    current_seat: int
    casinos: tuple[CasinoView, ...]
    seats: tuple[SeatView, ...]
    deck_notes: tuple[int, ...]       # notes still in the deck, ascending; their order is hidden
    slot: tuple[SlotPlacement, ...]
    roll: Roll
    legal: tuple[Action, ...]
    is_over: bool

    def casino(self, target: int) -> CasinoView:
        """The casino numbered `target` (1..6, or 7 for the slot)."""
        return self.casinos[target - 1]


_set_attribute = object.__setattr__


def make_frozen(cls: type[_T], **fields: object) -> _T:
    """A frozen dataclass instance without its generated __init__, which sets each field
    through object.__setattr__: four times slower, and the referee builds a view per decision."""
    instance = object.__new__(cls)
    _set_attribute(instance, "__dict__", fields)   # `fields` is a fresh dict: adopt it
    return instance

"""Actions a player can take, and the dice roll it chooses from."""

from __future__ import annotations

from typing import NamedTuple

SLOT = 7  # the target number of the slot machine (R30); casinos are 1..6


class Action(NamedTuple):
    """Put all rolled dice showing `value` on casino `value`, or on the slot machine (R15, R31)."""

    value: int
    slot: bool = False

    @property
    def target(self) -> int:
        """The casino number (1..6) the dice go to, or SLOT (7)."""
        return SLOT if self.slot else self.value

    def __str__(self) -> str:
        return f"{self.value}->slot" if self.slot else f"{self.value}->casino {self.value}"


class Roll(NamedTuple):
    """The faces of one roll (R14): the player's ordinary dice, big dice and neutral dice."""

    own: tuple[int, ...]
    big: tuple[int, ...] = ()
    neutral: tuple[int, ...] = ()

    def values(self) -> list[int]:
        """The distinct face values shown, ascending."""
        return sorted(set(self.own) | set(self.big) | set(self.neutral))


# Every possible action, built once: the engine hands these out instead of making new ones.
CASINO_ACTIONS: dict[int, Action] = {v: Action(v, False) for v in range(1, 7)}
SLOT_ACTIONS: dict[int, Action] = {v: Action(v, True) for v in range(1, 7)}

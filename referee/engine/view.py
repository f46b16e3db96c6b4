"""What a player may see (R24, R51), and rebuilding a playable game from it for look-ahead."""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import filterfalse
from typing import TYPE_CHECKING, TypeVar

from referee.engine.actions import Action, Roll
from referee.engine.rules import RuleSet

if TYPE_CHECKING:
    from referee.engine.game import Game

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


def public_parts(game: Game) -> tuple[tuple[CasinoView, ...], tuple[SeatView, ...],
                                       tuple[int, ...], tuple[SlotPlacement, ...]]:
    """The casinos, seats, deck notes and slot placements of `game` as its views show them.

    Parts that did not change since the game's last call are the same objects: a placement
    changes one casino and one seat, so a referee asking every turn rebuilds little, and
    encoders can cache by identity.
    """
    parts = game._view_parts
    if parts is None:
        parts = game._view_parts = {}
    get = parts.get
    notes = get("notes")   # notes change only between rounds, when all parts are dropped
    if notes is None:
        notes = parts["notes"] = {t: tuple(sorted(game._notes[t], reverse=True))
                                  for t in game._targets}
    # Usually one casino and one seat changed since the last call: find the missing ones
    # without a Python loop over all of them.
    targets = game._targets
    for t in filterfalse(parts.__contains__, targets):
        parts[t] = make_frozen(
            CasinoView, target=t, notes=notes[t], ordinary=tuple(game._own[t]),
            big=tuple(game._big[t]), neutral=game._neu[t])
    seat_keys = range(-1, -1 - game.players, -1)   # seat s is key -1 - s
    for key in filterfalse(parts.__contains__, seat_keys):
        s = -1 - key
        parts[key] = make_frozen(
            SeatView, seat=s, dice=game._hand_own[s], big_dice=game._hand_big[s],
            neutral_dice=game._hand_neu[s], money=game.money[s], notes=len(game.notes_won[s]))
    # Every key is there now: indexing, not get, says so (to the reader and to mypy).
    casinos = tuple(map(parts.__getitem__, targets))
    seats = tuple(map(parts.__getitem__, seat_keys))
    deck = get("deck")
    if deck is None:
        deck = parts["deck"] = tuple(sorted(game._deck[game._deck_pos:]))
    slot = get("slot")
    if slot is None:
        slot = parts["slot"] = tuple(SlotPlacement(*p) for p in game._slot_log)
    return casinos, seats, deck, slot


def make_view(game: Game, seat: int) -> View:
    """Build `seat`'s view of `game` (its parts shared with earlier views, see public_parts)."""
    if not 0 <= seat < game.players:
        raise ValueError(f"seat must be from 0 to {game.players - 1}, got {seat}")
    casinos, seats, deck, slot = public_parts(game)
    return make_frozen(View, rules=game.rules, players=game.players, seat=seat,
                       round=game.round, start_seat=game.start_seat, current_seat=game.seat,
                       casinos=casinos, seats=seats, deck_notes=deck, slot=slot,
                       roll=game.roll, legal=game.legal_actions(), is_over=game.is_over)


def determinize(view: View, seed: int) -> Game:
    """A playable game that agrees with everything `view` shows, for look-ahead.

    What the view hides is drawn from `seed`: the deck's order and every future roll. The game
    keeps no record. Players' won notes are known by count only, so they hold zeros of that
    count; money and ranking are exact.
    """
    from referee.engine.game import Game

    game = Game.__new__(Game)
    game.rules, game.players, game.seed = view.rules, view.players, seed
    game.events = None
    game._setup_empty()
    if game._plain:
        game._hand_own = game._held
    n = view.players
    game.round, game.start_seat, game.seat = view.round, view.start_seat, view.current_seat
    game.is_over = view.is_over
    for c in view.casinos:
        game._notes[c.target] = list(c.notes)
        game._own[c.target] = list(c.ordinary)
        game._big[c.target] = list(c.big)
        game._neu[c.target] = c.neutral
    for p in view.slot:
        game._slot_values.add(p.value)
        game._slot_log.append((p.value, p.seat, p.ordinary, p.big, p.neutral))
        game._slot_sum[p.seat] += p.value * (p.ordinary + p.big)
        game._slot_sum[n] += p.value * p.neutral
    for s in view.seats:
        game._hand_big[s.seat], game._hand_neu[s.seat] = s.big_dice, s.neutral_dice
        game._held[s.seat] = s.dice + s.big_dice + s.neutral_dice
        if not game._plain:
            game._hand_own[s.seat] = s.dice
        game.money[s.seat] = s.money
        game.notes_won[s.seat] = [0] * s.notes
    deck = list(view.deck_notes)
    random.Random(seed).shuffle(deck)
    game._deck = deck
    roll = view.roll
    game._roll_own, game._roll_big = bytes(roll.own), bytes(roll.big)
    game._roll_neu = bytes(roll.neutral)
    game._roll_all = game._roll_own + game._roll_big + game._roll_neu
    return game

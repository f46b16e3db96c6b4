"""The game state machine: whose turn, the roll, legal actions, apply, scoring, ranking.

A `Game` runs every automatic step itself (funding, the neutral pre-roll, rolling, scoring, the
next round), so between two calls to `apply` it always waits on one seat's choice, or is over.
The engine has no I/O and no hidden global state: a game is fully determined by its rule set,
seat count, seed and the actions applied (R50).

Events are kept as tuples (see `referee.engine.record` for their fields); this keeps random
playouts fast enough for bots to use the engine for look-ahead.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import filterfalse
from typing import Any

from referee.engine.actions import CASINO_ACTIONS, SLOT, SLOT_ACTIONS, Action, Roll
from referee.engine.errors import GameOverError, IllegalActionError
from referee.engine.record import GameRecord
from referee.engine.rng import DiceStream, check_seed, shuffled_deck
from referee.engine.rules import RuleSet
from referee.engine.view import CasinoView, SeatView, SlotPlacement, View, make_frozen

Event = tuple


_LEGAL_CACHE: dict[frozenset[int], tuple[Action, ...]] = {}


def _casino_actions(values: frozenset[int]) -> tuple[Action, ...]:
    """The casino actions for the values shown, cached (at most 64 distinct sets of values)."""
    actions = _LEGAL_CACHE[values] = tuple(CASINO_ACTIONS[v] for v in sorted(values))
    return actions


class Game:
    """One game of Las Vegas between `players` seats (seat 0 starts round 1, R12)."""

    __slots__ = (
        "rules", "players", "seed", "round", "start_seat", "seat", "is_over", "events",
        "money", "notes_won", "discard", "_deck", "_deck_pos", "_targets", "_targets_slot",
        "_plain", "_notes", "_own", "_big", "_neu", "_slot_values", "_slot_log", "_slot_sum",
        "_hand_own", "_hand_big", "_hand_neu", "_held", "_successor", "_dice", "_roll_own",
        "_roll_big", "_roll_neu", "_roll_all", "_view_parts",
    )

    def __init__(self, rules: RuleSet, players: int, seed: int, *, record: bool = True) -> None:
        rules.check_players(players)
        self.rules = rules
        self.players = players
        self.seed = check_seed(seed)
        self.events: list[Event] | None = [] if record else None
        self._setup_empty()
        self._deck = shuffled_deck(seed, rules.deck())  # R2: shuffled once, at game start
        self._start_round(0)

    def _setup_empty(self) -> None:
        n = self.players
        self.round = 0
        self.start_seat = 0
        self.seat = 0
        self.is_over = False
        self.money = [0] * n
        self.notes_won: list[list[int]] = [[] for _ in range(n)]
        self.discard: list[int] = []
        self._deck = []
        self._deck_pos = 0
        self._targets_slot = self.rules.slot
        # Plain rules (no big, no neutral dice) take a shorter path through apply().
        self._plain = self.rules.big_dice == 0 and self.rules.neutral == "none"
        self._targets = range(1, 8) if self.rules.slot else range(1, 7)
        self._notes: list[list[int]] = [[] for _ in range(8)]
        self._own = [[0] * n for _ in range(8)]
        self._big = [[0] * n for _ in range(8)]
        self._neu = [0] * 8
        self._slot_values: set[int] = set()
        self._slot_log: list[tuple[int, int, int, int, int]] = []  # (value, seat, own, big, neu)
        self._slot_sum = [0] * (n + 1)  # R32: face sums on the slot; index n is the neutral player
        self._hand_own = [0] * n
        self._hand_big = [0] * n
        self._hand_neu = [0] * n
        self._held = [0] * n  # all dice each seat holds: ordinary + big + neutral
        self._successor = [(s + 1) % n for s in range(n)]  # clockwise (R13)
        # R50: one dice stream per seat, and index n for the neutral pre-roll.
        self._dice = [DiceStream(self.seed, f"dice/{s}") for s in range(n)]
        self._dice.append(DiceStream(self.seed, "dice/neutral"))
        self._roll_own = self._roll_big = self._roll_neu = self._roll_all = b""
        # Parts of views that are still valid (see public_parts): None until a view is made.
        self._view_parts: dict[object, Any] | None = None

    # ----------------------------------------------------------------- queries

    @property
    def current_seat(self) -> int:
        """The seat whose choice the game waits on."""
        return self.seat

    @property
    def roll(self) -> Roll:
        """The current roll the seat to move chooses from (R14)."""
        return Roll(tuple(self._roll_own), tuple(self._roll_big), tuple(self._roll_neu))

    def roll_faces(self) -> tuple[bytes, bytes, bytes]:
        """The current roll as bytes of faces (ordinary, big, neutral): `roll` without building
        tuples, for encoders."""
        return self._roll_own, self._roll_big, self._roll_neu

    def legal_actions(self) -> tuple[Action, ...]:
        """Every legal action, ordered by value, the casino before the slot (R15, R16, R31)."""
        values = frozenset(self._roll_all)  # empty once the game is over
        casino = _LEGAL_CACHE.get(values) or _casino_actions(values)
        if not self._targets_slot:
            return casino
        actions = []
        for action in casino:
            actions.append(action)
            if action.value not in self._slot_values:
                actions.append(SLOT_ACTIONS[action.value])
        return tuple(actions)

    def deck_size(self) -> int:
        """Notes still in the deck."""
        return len(self._deck) - self._deck_pos

    def dice_held(self, seat: int) -> tuple[int, int, int]:
        """(ordinary, big, neutral) dice `seat` still holds this round."""
        return self._hand_own[seat], self._hand_big[seat], self._hand_neu[seat]

    def ranking(self) -> list[int]:
        """Each seat's place (R26): by money, then number of notes; equal players share a place."""
        keys = [(m, len(notes)) for m, notes in zip(self.money, self.notes_won, strict=True)]
        return [1 + sum(other > key for other in keys) for key in keys]

    # ----------------------------------------------------------------- actions

    def apply(self, action: Action | tuple[int, bool]) -> None:
        """Place the dice of `action` for the seat to move, then run the automatic steps.

        Raises IllegalActionError (with the reason) if the rules do not allow it.
        """
        value, to_slot = action
        try:
            legal = value in self._roll_all and type(value) is int
        except (TypeError, ValueError):
            legal = False
        target = value if legal and not to_slot else self._check_unusual(value, to_slot)
        seat = self.seat
        held = self._held
        # R16: every rolled die showing the value goes to the target.
        if self._plain:  # held is also the hand of ordinary dice
            own = self._roll_all.count(value)
            self._own[target][seat] += own
            held[seat] -= own
            big = neu = 0
        else:
            own = self._roll_own.count(value)
            big = self._roll_big.count(value)
            neu = self._roll_neu.count(value)
            self._own[target][seat] += own
            self._big[target][seat] += big
            self._neu[target] += neu
            self._hand_own[seat] -= own
            self._hand_big[seat] -= big
            self._hand_neu[seat] -= neu
            held[seat] -= own + big + neu
        if to_slot:
            self._slot_values.add(value)
            self._slot_log.append((value, seat, own, big, neu))
            self._slot_sum[seat] += value * (own + big)
            self._slot_sum[self.players] += value * neu
        events = self.events
        if events is not None:
            events.append(("place", seat, value, to_slot, own, big, neu))
        parts = self._view_parts
        if parts is not None:  # this casino and this seat's hand changed
            parts.pop(target, None)
            parts.pop(-1 - seat, None)
            if to_slot:
                parts.pop("slot", None)
        # R13: the next seat clockwise that holds dice rolls; if none does, the round ends.
        successor = self._successor
        nxt = successor[seat]
        while not held[nxt]:
            if nxt == seat:
                self._end_round()
                return
            nxt = successor[nxt]
        # R14: roll all dice the seat holds, from that seat's own stream (R50).
        self.seat = nxt
        count = held[nxt]
        stream = self._dice[nxt]
        faces = stream.faces
        if len(faces) < count:
            faces = stream.extend(count)
        stream.faces = faces[count:]
        faces = faces[:count]
        self._roll_all = faces
        if self._plain:
            self._roll_own = faces
            if events is not None:
                events.append(("roll", nxt, faces, count, 0))
        else:
            self._split_roll(nxt, faces)

    def _check_unusual(self, value: object, to_slot: object) -> int:
        """The target of a slot action, or IllegalActionError saying why the action is illegal."""
        if self.is_over:
            raise GameOverError("the game is over; no more actions can be applied")
        if type(value) is not int or not 1 <= value <= 6:
            raise IllegalActionError(f"R15: the value must be a face from 1 to 6, got {value!r}")
        if value not in self._roll_all:
            shown = ", ".join(map(str, sorted(set(self._roll_all))))
            raise IllegalActionError(f"R15: no die in the roll shows {value} (shown: {shown})")
        if not self.rules.slot:
            raise IllegalActionError("R30: these rules have no slot machine")
        if value in self._slot_values:
            raise IllegalActionError(f"R31: a die showing {value} is already on the slot")
        return SLOT

    # ----------------------------------------------------------------- automatic steps

    def _start_turn(self, seat: int) -> None:
        """R14: roll all dice the seat holds, from that seat's own stream (R50)."""
        self.seat = seat
        faces = self._dice[seat].take(self._held[seat])
        self._roll_all = faces
        self._split_roll(seat, faces)

    def _split_roll(self, seat: int, faces: bytes) -> None:
        """Tell the seat's ordinary, big and neutral dice apart in a roll, and record it."""
        a, b = self._hand_own[seat], self._hand_big[seat]
        self._roll_own = faces[:a]
        self._roll_big = faces[a:a + b]
        self._roll_neu = faces[a + b:]
        if self.events is not None:
            self.events.append(("roll", seat, faces, a, b))

    def _start_round(self, round_index: int) -> None:
        rules, n = self.rules, self.players
        self._view_parts = None
        self.round = round_index
        self.start_seat = round_index % n  # R12
        funded = self._fund()
        neutral = rules.neutral_per_player(n)  # R41, R43: dealt afresh each round
        self._held = [rules.dice + rules.big_dice + neutral] * n
        self._hand_own = self._held if self._plain else [rules.dice] * n
        self._hand_big = [rules.big_dice] * n
        self._hand_neu = [neutral] * n
        if self.events is not None:
            self.events.append(("round", round_index, self.start_seat, funded))
        preroll = rules.neutral_preroll(n)
        if preroll:
            # R41: with 3 players the start player rolls 2 white dice onto the casinos of their
            # faces before the first turn (never the slot); the bot is not asked.
            faces = self._dice[n].take(preroll)
            for face in faces:
                self._neu[face] += 1
            if self.events is not None:
                self.events.append(("preroll", tuple(faces)))
        self._start_turn(self.start_seat)

    def _fund(self) -> list[list[int]]:
        """R10, R11: fund casinos 1..6 then the slot from the top of the deck."""
        deck, pos, end = self._deck, self._deck_pos, len(self._deck)
        rules = self.rules
        all_notes = self._notes
        if rules.funding == "threshold":
            threshold = rules.funding_threshold(self.players)
            for t in self._targets:
                notes, total = all_notes[t], 0
                while total < threshold and pos < end:
                    notes.append(deck[pos])
                    total += deck[pos]
                    pos += 1
        else:
            per_casino = rules.notes_per_casino
            for t in self._targets:
                take = min(per_casino, end - pos)
                all_notes[t].extend(deck[pos:pos + take])
                pos += take
        self._deck_pos = pos
        if self.events is None:
            return []
        return [all_notes[t][:] for t in self._targets]

    def _end_round(self) -> None:
        """Score every casino (R20-R23, R32), then start the next round or end the game."""
        self._view_parts = None
        n = self.players
        rules = self.rules
        money, notes_won, events = self.money, self.notes_won, self.events
        gone = self._deck if rules.leftovers == "bottom" else self.discard
        for t in self._targets:
            if rules.big_dice:
                counts = [o + 2 * b for o, b in zip(self._own[t], self._big[t], strict=True)]
            else:
                counts = self._own[t]  # R20 (reset below, so it can be reused here)
            counts.append(self._neu[t])
            if t == SLOT:
                ranked, cancelled = self._slot_order(counts)
            else:
                # R21: every participant whose count equals another's is removed, at every rank.
                ranked, cancelled = [], []
                for p, c in enumerate(counts):
                    if c:
                        if counts.count(c) == 1:
                            ranked.append(p)
                        else:
                            cancelled.append(p)
                if len(ranked) > 1:
                    ranked.sort(key=counts.__getitem__, reverse=True)
            notes = self._notes[t]
            if len(notes) > 1:
                notes.sort(reverse=True)
            leaving = notes[len(ranked):]  # R23: leftovers leave play ...
            for p, note in zip(ranked, notes, strict=False):  # R22
                if p == n:
                    leaving.insert(0, note)  # ... and so does the neutral player's note
                else:
                    money[p] += note
                    notes_won[p].append(note)
            if leaving:
                gone.extend(leaving)  # bottom: under the deck, highest first, casino by casino
            if events is not None:
                events.append(("score", t, counts, cancelled,
                               list(zip(ranked, notes, strict=False)), leaving))
        self._notes = [[] for _ in range(8)]
        self._own = [[0] * n for _ in range(8)]
        if rules.big_dice:
            self._big = [[0] * n for _ in range(8)]
        self._neu = [0] * 8
        if rules.slot:
            self._slot_values = set()
            self._slot_log = []
            self._slot_sum = [0] * (n + 1)
        if self._deck_pos > 64:  # drop drawn notes so the deck list stays small
            del self._deck[: self._deck_pos]
            self._deck_pos = 0
        if self.round + 1 < rules.rounds:  # R25
            self._start_round(self.round + 1)
            return
        self.is_over = True
        self.seat = -1
        self._roll_own = self._roll_big = self._roll_neu = self._roll_all = b""
        if events is not None:
            events.append(("end", self.money[:], [len(notes) for notes in notes_won],
                           self.ranking()))

    def _slot_order(self, counts: list[int]) -> tuple[list[int], list[int]]:
        """R32: the leaders on the slot are ordered by face sum, then physical dice; R21 below."""
        present = [p for p, c in enumerate(counts) if c]
        if not present:
            return [], []
        top = max(counts)
        leaders = [p for p in present if counts[p] == top]
        below = [p for p in present if counts[p] != top]
        cancelled = [p for p in below if counts.count(counts[p]) > 1]
        below = sorted((p for p in below if counts.count(counts[p]) == 1),
                       key=counts.__getitem__, reverse=True)
        if len(leaders) == 1:
            return leaders + below, cancelled
        own, big = self._own[SLOT][: self.players], self._big[SLOT]
        physical = [o + b for o, b in zip(own, big, strict=True)]
        physical.append(self._neu[SLOT])
        keys = {p: (self._slot_sum[p], physical[p]) for p in leaders}
        tied = [key for key in keys.values()]
        kept = sorted((p for p in leaders if tied.count(keys[p]) == 1),
                      key=keys.__getitem__, reverse=True)
        cancelled += [p for p in leaders if tied.count(keys[p]) > 1]
        return kept + below, sorted(cancelled)

    # ----------------------------------------------------------------- views

    def view(self, seat: int) -> View:
        """The public state as `seat` sees it (R24, R51): no deck order, no seeds. Its parts
        are shared with earlier views (see public_parts)."""
        if not 0 <= seat < self.players:
            raise ValueError(f"seat must be from 0 to {self.players - 1}, got {seat}")
        casinos, seats, deck, slot = self.public_parts()
        return make_frozen(View, rules=self.rules, players=self.players, seat=seat,
                           round=self.round, start_seat=self.start_seat, current_seat=self.seat,
                           casinos=casinos, seats=seats, deck_notes=deck, slot=slot,
                           roll=self.roll, legal=self.legal_actions(), is_over=self.is_over)

    def public_parts(self) -> tuple[tuple[CasinoView, ...], tuple[SeatView, ...],
                                    tuple[int, ...], tuple[SlotPlacement, ...]]:
        """The casinos, seats, deck notes and slot placements as this game's views show them.

        Parts that did not change since the last call are the same objects: a placement
        changes one casino and one seat, so a referee asking every turn rebuilds little, and
        encoders can cache by identity.
        """
        parts = self._view_parts
        if parts is None:
            parts = self._view_parts = {}
        get = parts.get
        notes = get("notes")   # notes change only between rounds, when all parts are dropped
        if notes is None:
            notes = parts["notes"] = {t: tuple(sorted(self._notes[t], reverse=True))
                                      for t in self._targets}
        # Usually one casino and one seat changed since the last call: find the missing ones
        # without a Python loop over all of them.
        targets = self._targets
        for t in filterfalse(parts.__contains__, targets):
            parts[t] = make_frozen(
                CasinoView, target=t, notes=notes[t], ordinary=tuple(self._own[t]),
                big=tuple(self._big[t]), neutral=self._neu[t])
        seat_keys = range(-1, -1 - self.players, -1)   # seat s is key -1 - s
        for key in filterfalse(parts.__contains__, seat_keys):
            s = -1 - key
            parts[key] = make_frozen(
                SeatView, seat=s, dice=self._hand_own[s], big_dice=self._hand_big[s],
                neutral_dice=self._hand_neu[s], money=self.money[s],
                notes=len(self.notes_won[s]))
        # Every key is there now: indexing, not get, says so (to the reader and to mypy).
        casinos = tuple(map(parts.__getitem__, targets))
        seats = tuple(map(parts.__getitem__, seat_keys))
        deck = get("deck")
        if deck is None:
            deck = parts["deck"] = tuple(sorted(self._deck[self._deck_pos:]))
        slot = get("slot")
        if slot is None:
            slot = parts["slot"] = tuple(SlotPlacement(*p) for p in self._slot_log)
        return casinos, seats, deck, slot

    @classmethod
    def from_view(cls, view: View, seed: int) -> Game:
        """A playable game that agrees with everything `view` shows, for look-ahead
        (`determinize`); see there for what is drawn from `seed`."""
        game = cls.__new__(cls)
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

    def record(self, **meta: Any) -> GameRecord:
        """The complete game record of this game so far (needs record=True)."""
        if self.events is None:
            raise ValueError("this game was created with record=False")
        return GameRecord(rules=self.rules, players=self.players, seed=self.seed,
                          events=list(self.events), meta=meta)

    def play(self, actions: Sequence[Action]) -> None:
        """Apply several actions in turn."""
        for action in actions:
            self.apply(action)


def determinize(view: View, seed: int) -> Game:
    """A playable game that agrees with everything `view` shows, for look-ahead.

    What the view hides is drawn from `seed`: the deck's order and every future roll. The game
    keeps no record. Players' won notes are known by count only, so they hold zeros of that
    count; money and ranking are exact.
    """
    return Game.from_view(view, seed)

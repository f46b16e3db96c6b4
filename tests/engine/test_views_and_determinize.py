"""Views (R24, R51) against the game state, and determinize() for look-ahead."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from referee.engine import (
    SLOT,
    Game,
    Roll,
    SlotPlacement,
    View,
    determinize,
    preset,
)
from referee.engine.record import event_to_dict

CONFIGS = [
    (preset("classic"), 2),
    (preset("classic"), 5),
    (preset("classic-white"), 3),
    (preset("classic-neutral-discard"), 4),
    (preset("biggy-slot"), 3),
    (preset("biggy-slot").replace(neutral="grey"), 2),
    (preset("boulevard"), 6),
    (preset("boulevard").replace(neutral="white"), 3),
]
IDS = [f"{rules.preset}{'-' + rules.neutral if rules.neutral != 'none' else ''}-{players}p"
       for rules, players in CONFIGS]


class Tracker:
    """The public state rebuilt from the game's events, to compare views with."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.seen = 0
        n = game.players
        self.targets = list(range(1, 8 if game.rules.slot else 7))
        self.funded: dict[int, list[int]] = {}
        self.own = {t: [0] * n for t in self.targets}
        self.big = {t: [0] * n for t in self.targets}
        self.neu = dict.fromkeys(self.targets, 0)
        self.slot: list[SlotPlacement] = []
        self.money = [0] * n
        self.notes = [0] * n

    def update(self) -> None:
        assert self.game.events is not None
        n = self.game.players
        for event in map(event_to_dict, self.game.events[self.seen:]):
            kind = event["type"]
            if kind == "round":
                self.funded = dict(zip(self.targets, event["casinos"], strict=True))
                self.own = {t: [0] * n for t in self.targets}
                self.big = {t: [0] * n for t in self.targets}
                self.neu = dict.fromkeys(self.targets, 0)
                self.slot = []
            elif kind == "preroll":
                for face in event["faces"]:
                    self.neu[face] += 1
            elif kind == "place":
                target = SLOT if event["slot"] else event["value"]
                self.own[target][event["seat"]] += event["own"]
                self.big[target][event["seat"]] += event["big"]
                self.neu[target] += event["neutral"]
                if event["slot"]:
                    self.slot.append(SlotPlacement(event["value"], event["seat"], event["own"],
                                                   event["big"], event["neutral"]))
            elif kind == "score":
                self.funded[event["target"]] = []
                self.own[event["target"]] = [0] * n
                self.big[event["target"]] = [0] * n
                self.neu[event["target"]] = 0
                for seat, note in event["payouts"]:
                    if seat < n:
                        self.money[seat] += note
                        self.notes[seat] += 1
                if event["target"] == self.targets[-1]:
                    self.slot = []
        self.seen = len(self.game.events)

    def check(self, view: View, seat: int) -> None:
        game = self.game
        assert (view.rules, view.players, view.seat) == (game.rules, game.players, seat)
        assert (view.round, view.start_seat) == (game.round, game.round % game.players)
        assert view.current_seat == game.current_seat
        assert view.is_over == game.is_over
        assert view.roll == game.roll
        assert view.legal == game.legal_actions()
        assert [c.target for c in view.casinos] == self.targets
        for casino in view.casinos:
            t = casino.target
            assert view.casino(t) is casino
            assert casino.notes == tuple(sorted(self.funded.get(t, []), reverse=True))
            assert list(casino.ordinary) == self.own[t]
            assert list(casino.big) == self.big[t]
            assert casino.neutral == self.neu[t]
            for s in range(game.players):
                assert casino.count(s) == self.own[t][s] + 2 * self.big[t][s]
        assert list(view.slot) == self.slot
        for s, seat_view in enumerate(view.seats):
            assert seat_view.seat == s
            assert (seat_view.dice, seat_view.big_dice, seat_view.neutral_dice) == (
                game.dice_held(s))
            assert (seat_view.money, seat_view.notes) == (self.money[s], self.notes[s])
            assert seat_view.money == game.money[s]
        assert list(view.deck_notes) == sorted(view.deck_notes)
        assert len(view.deck_notes) == game.deck_size()
        # Every note is somewhere: deck, casinos, players, discard (R2, R23).
        everywhere = Counter(view.deck_notes) + Counter(game.discard)
        for casino in view.casinos:
            everywhere.update(casino.notes)
        for notes in game.notes_won:
            everywhere.update(notes)
        assert everywhere == Counter(game.rules.deck())


@pytest.mark.parametrize("rules,players", CONFIGS, ids=IDS)
def test_view_matches_the_state_at_every_step(rules, players):
    for seed in range(3):
        game = Game(rules, players, seed)
        tracker = Tracker(game)
        rng = random.Random(seed)
        while True:
            tracker.update()
            views = [game.view(s) for s in range(players)]
            for s, view in enumerate(views):
                tracker.check(view, s)
                assert dataclasses.replace(view, seat=0) == views[0]  # all public (R24)
            if game.is_over:
                break
            game.apply(rng.choice(game.legal_actions()))
        assert views[0].legal == () and views[0].roll == Roll(())


def test_view_of_a_seat_that_does_not_exist():
    game = Game(preset("classic"), 3, seed=1)
    for seat in (-1, 3):
        with pytest.raises(ValueError, match="seat must be from 0 to 2"):
            game.view(seat)


def positions(rules, players: int, seed: int, stride: int):
    """(game, view of the seat to move) every `stride` steps of a random game, and at its end."""
    game = Game(rules, players, seed)
    rng = random.Random(seed)
    step = 0
    while not game.is_over:
        if step % stride == 0:
            yield game, game.view(game.current_seat)
        game.apply(rng.choice(game.legal_actions()))
        step += 1
    yield game, game.view(0)


@pytest.mark.parametrize("rules,players", CONFIGS, ids=IDS)
def test_determinize_gives_a_game_with_the_same_view(rules, players):
    for seed in range(2):
        for game, view in positions(rules, players, seed, stride=5):
            orders = set()
            for det_seed in (0, 1, 2**63):
                det = determinize(view, det_seed)
                assert det.view(view.seat) == view  # equal except the deck's hidden order
                for s in range(players):
                    assert det.view(s) == dataclasses.replace(view, seat=s)
                assert det.events is None  # no record for look-ahead games
                assert det.deck_size() == len(view.deck_notes)
                assert sorted(det._deck[det._deck_pos:]) == list(view.deck_notes)
                assert det.ranking() == game.ranking()  # money exact, note counts exact
                orders.add(tuple(det._deck[det._deck_pos:]))
            if len(set(view.deck_notes)) > 3:
                assert len(orders) > 1  # the hidden order is drawn from the seed


@pytest.mark.parametrize("rules,players", CONFIGS, ids=IDS)
def test_determinized_games_play_to_the_end(rules, players):
    for _game, view in positions(rules, players, seed=7, stride=9):
        det = determinize(view, seed=11)
        available = sum(view.deck_notes) + sum(sum(c.notes) for c in view.casinos)
        rng = random.Random(3)
        while not det.is_over:
            det.apply(rng.choice(det.legal_actions()))
        assert det.round == rules.rounds - 1
        gained = [after - before for after, before in
                  zip(det.money, (s.money for s in view.seats), strict=True)]
        assert all(g >= 0 for g in gained)
        assert sum(gained) <= available
        assert det.legal_actions() == ()


def test_determinize_is_deterministic_in_its_seed():
    game = Game(preset("boulevard").replace(neutral="white"), 3, seed=5)
    for _ in range(7):
        game.apply(game.legal_actions()[-1])
    view = game.view(1)
    finals = []
    for _ in range(2):
        det = determinize(view, seed=99)
        while not det.is_over:
            det.apply(det.legal_actions()[0])
        finals.append((det.money, [len(n) for n in det.notes_won], det.discard))
    assert finals[0] == finals[1]


def test_determinize_a_hand_made_view_with_slot_and_neutral_dice():
    rules = preset("biggy-slot").replace(neutral="grey")
    game = Game(rules, 2, seed=0)
    base = game.view(0)
    casinos = list(base.casinos)
    casinos[SLOT - 1] = dataclasses.replace(casinos[SLOT - 1], ordinary=(2, 0), big=(0, 1),
                                            neutral=1)
    casinos[2] = dataclasses.replace(casinos[2], ordinary=(1, 1))
    seats = (dataclasses.replace(base.seats[0], dice=2, big_dice=0, neutral_dice=2, money=70_000,
                                 notes=2),
             dataclasses.replace(base.seats[1], dice=5, big_dice=0, neutral_dice=2))
    view = dataclasses.replace(
        base, casinos=tuple(casinos), seats=seats,
        slot=(SlotPlacement(4, 0, 2, 0, 0), SlotPlacement(6, 1, 0, 1, 1)),
        roll=Roll((6, 4), (), (4, 1)), legal=())
    det = determinize(view, seed=1)
    # Values 4 and 6 are on the slot already (R31): only 1 may still go there.
    expected = dataclasses.replace(view, legal=det.legal_actions())
    assert [str(a) for a in det.legal_actions()] == ["1->casino 1", "1->slot", "4->casino 4",
                                                     "6->casino 6"]
    assert det.view(0) == expected
    det.apply(det.legal_actions()[2])  # 4: one ordinary and one grey die go to casino 4
    assert det.view(0).casino(4).ordinary == (1, 0) and det.view(0).casino(4).neutral == 1
    assert det.dice_held(0) == (1, 0, 1)
    while not det.is_over:
        det.apply(det.legal_actions()[0])
    assert det.money[0] >= 70_000

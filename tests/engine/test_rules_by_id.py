"""One or more tests per rule id of docs/rules.md (R1..R51), each named after the rule it checks.

Exact situations are built with `stage()`: a hand-made `View` turned into a playable game by
`determinize` (the public look-ahead API), with recording switched back on. Where a test needs an
exact deck order it sets `game._deck` directly. Scoring tests end the round with one last
placement and compare the `score` events (in their JSON form, docs/replay-format.md) with payouts
worked out by hand from the rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pytest

from referee.engine import (
    PRESETS,
    SLOT,
    Action,
    CasinoView,
    Game,
    GameOverError,
    IllegalActionError,
    Roll,
    RulesError,
    RuleSet,
    SeatView,
    SlotPlacement,
    View,
    determinize,
    preset,
)
from referee.engine.record import event_to_dict
from referee.engine.rng import DiceStream, shuffled_deck

CLASSIC = preset("classic")
SLOT_RULES = CLASSIC.replace(slot=True)
BIG_RULES = CLASSIC.replace(big_dice=1)

# ----------------------------------------------------------------------------------- helpers

# (notes, ordinary dice per seat, big dice per seat, neutral dice)
CasinoSpec = tuple[Sequence[int], Sequence[int], Sequence[int], int]


def stage(
    rules: RuleSet,
    players: int,
    *,
    casinos: Mapping[int, CasinoSpec] | None = None,
    slot: Sequence[SlotPlacement] = (),
    slot_notes: Sequence[int] = (),
    roll: Sequence[int] = (),
    big: Sequence[int] = (),
    neutral: Sequence[int] = (),
    current: int = 0,
    held: Mapping[int, tuple[int, int, int]] | None = None,
    money: Sequence[int] | None = None,
    notes: Sequence[int] | None = None,
    deck: Sequence[int] = (),
    round_: int = 0,
    start_seat: int | None = None,
    seed: int = 0,
) -> Game:
    """A recording game in an exact situation, built from a hand-made View with determinize.

    `casinos` maps a target to (notes, ordinary dice per seat, big dice per seat, neutral dice);
    the slot's dice are derived from the `slot` placements (its notes are `slot_notes`). The seat
    `current` holds exactly the dice of its roll (`roll`, `big`, `neutral` faces); other seats
    hold what `held` says (ordinary, big, neutral), nothing by default. `deck` is the multiset of
    notes left in the deck (its order is drawn from `seed`).
    """
    n = players
    zeros = (0,) * n
    casinos = dict(casinos or {})
    targets = range(1, 8) if rules.slot else range(1, 7)
    views = []
    for t in targets:
        if t == SLOT and t not in casinos:
            ordinary, bigs = [0] * n, [0] * n
            neu = 0
            for p in slot:
                ordinary[p.seat] += p.ordinary
                bigs[p.seat] += p.big
                neu += p.neutral
            spec: CasinoSpec = (slot_notes, ordinary, bigs, neu)
        else:
            spec = casinos.get(t, ((), zeros, zeros, 0))
        t_notes, ordinary, bigs, neu = spec
        views.append(CasinoView(t, tuple(sorted(t_notes, reverse=True)), tuple(ordinary),
                                tuple(bigs), neu))
    hands = {s: (0, 0, 0) for s in range(n)}
    hands.update(held or {})
    hands[current] = (len(roll), len(big), len(neutral))
    money = list(money or [0] * n)
    notes = list(notes or [0] * n)
    seats = tuple(SeatView(s, *hands[s], money[s], notes[s]) for s in range(n))
    view = View(
        rules=rules, players=n, seat=current, round=round_,
        start_seat=round_ % n if start_seat is None else start_seat, current_seat=current,
        casinos=tuple(views), seats=seats, deck_notes=tuple(sorted(deck)), slot=tuple(slot),
        roll=Roll(tuple(roll), tuple(big), tuple(neutral)), legal=(), is_over=False,
    )
    game = determinize(view, seed)
    game.events = []  # determinize builds a game without a record; record from here on
    return game


def events_of(game: Game, kind: str) -> list[dict]:
    """The game's recorded events of one type, in their JSON form."""
    assert game.events is not None
    return [event_to_dict(e) for e in game.events if e[0] == kind]


def scores(game: Game) -> dict[int, dict]:
    """The `score` events of the last scored round, by target."""
    found = events_of(game, "score")
    width = 7 if game.rules.slot else 6
    return {e["target"]: e for e in found[-width:]}


def payout(score: dict) -> list[tuple[int, int]]:
    return [tuple(p) for p in score["payouts"]]


def first_legal(game: Game) -> Action:
    return game.legal_actions()[0]


def play_out(game: Game, choose: Callable[[Game], Action] = first_legal) -> Game:
    while not game.is_over:
        game.apply(choose(game))
    return game


def fund_by_hand(deck: Iterable[int], rules: RuleSet, players: int) -> list[list[int]]:
    """R10 worked out independently: fund casinos 1..6 (then the slot) from the top of `deck`."""
    deck = list(deck)
    casinos = []
    for _ in range(7 if rules.slot else 6):
        got: list[int] = []
        if rules.funding == "threshold":
            threshold = rules.funding_threshold(players)
            while sum(got) < threshold and deck:
                got.append(deck.pop(0))
        else:
            while len(got) < rules.notes_per_casino and deck:
                got.append(deck.pop(0))
        casinos.append(got)
    return casinos


# ----------------------------------------------------------------------------------- R1-R3


def test_R1_six_numbered_casinos_and_an_optional_slot():
    game = Game(CLASSIC, 2, seed=1)
    assert [c.target for c in game.view(0).casinos] == [1, 2, 3, 4, 5, 6]
    assert len(events_of(game, "round")[0]["casinos"]) == 6
    game = Game(SLOT_RULES, 2, seed=1)
    view = game.view(0)
    assert [c.target for c in view.casinos] == [1, 2, 3, 4, 5, 6, 7]
    assert view.casino(SLOT).target == SLOT == 7
    assert len(events_of(game, "round")[0]["casinos"]) == 7
    assert Action(4, True).target == SLOT and Action(4).target == 4


def test_R2_official_deck_has_54_notes_worth_2_5_million():
    deck = CLASSIC.deck()
    assert len(deck) == 54
    assert sum(deck) == 2_500_000
    assert Counter(deck) == {
        10_000: 6, 20_000: 8, 30_000: 8, 40_000: 6, 50_000: 6,
        60_000: 5, 70_000: 5, 80_000: 5, 90_000: 5,
    }


def test_R2_hundred_k_adds_five_100k_notes():
    deck = CLASSIC.replace(hundred_k=True).deck()
    assert len(deck) == 59
    assert sum(deck) == 3_000_000
    assert Counter(deck) - Counter(CLASSIC.deck()) == {100_000: 5}
    assert len(preset("boulevard").deck()) == 59


@pytest.mark.parametrize("seed", [0, 1, 2, 2**64 - 1])
def test_R2_deck_is_shuffled_once_at_game_start(seed):
    """The deck is a permutation of the canonical deck, and every round draws on from the same
    order (no reshuffle between rounds) until the original notes run out."""
    game = play_out(Game(CLASSIC, 2, seed))
    order = shuffled_deck(seed, CLASSIC.deck())
    assert sorted(order) == CLASSIC.deck()
    assert order != CLASSIC.deck()
    drawn = [note for e in events_of(game, "round") for casino in e["casinos"] for note in casino]
    limit = min(len(drawn), len(order))
    assert drawn[:limit] == order[:limit]
    assert limit > 30  # four rounds of a 2-player game draw well into the deck


def test_R3_each_player_rolls_eight_ordinary_dice_in_classic():
    game = Game(CLASSIC, 3, seed=5)
    assert game.dice_held(0) == (8, 0, 0)
    first = events_of(game, "roll")[0]
    assert first["seat"] == 0 and len(first["own"]) == 8 and first["big"] == []


def test_R3_big_die_is_rolled_and_placed_like_any_other_die():
    game = Game(preset("biggy-slot"), 3, seed=5)
    assert game.dice_held(0) == (6, 1, 0)
    first = events_of(game, "roll")[0]
    assert len(first["own"]) == 6 and len(first["big"]) == 1
    # A big die showing the chosen value goes along with the ordinary dice showing it (R16).
    game = stage(BIG_RULES, 2, roll=(5, 3), big=(5,), held={1: (2, 0, 0)})
    game.apply(Action(5))
    place = events_of(game, "place")[0]
    assert (place["own"], place["big"], place["neutral"]) == (1, 1, 0)
    assert game.view(0).casino(5).ordinary == (1, 0)
    assert game.view(0).casino(5).big == (1, 0)
    assert game.dice_held(0) == (1, 0, 0)


# ----------------------------------------------------------------------------------- R10-R16


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("players", [2, 4])
def test_R10_threshold_funding_draws_until_50k_in_casino_order(seed, players):
    game = Game(CLASSIC, players, seed)
    funded = events_of(game, "round")[0]["casinos"]
    assert funded == fund_by_hand(shuffled_deck(seed, CLASSIC.deck()), CLASSIC, players)
    for notes in funded:
        assert sum(notes) >= 50_000
        assert sum(notes) - notes[-1] < 50_000  # the last note drawn is the one that reached it


@pytest.mark.parametrize("seed", range(4))
def test_R10_notes_funding_gives_each_casino_then_the_slot_two_notes(seed):
    rules = preset("biggy-slot")
    game = Game(rules, 3, seed)
    funded = events_of(game, "round")[0]["casinos"]
    order = shuffled_deck(seed, rules.deck())
    assert [len(notes) for notes in funded] == [2] * 7
    # Casinos 1..6 then the slot (R30), straight from the top of the deck.
    assert [note for notes in funded for note in notes] == order[:14]


@pytest.mark.parametrize("players", range(2, 9))
def test_R10_scaled_threshold_by_player_count(players):
    expected = {2: 30_000, 3: 40_000, 4: 50_000, 5: 60_000, 6: 70_000, 7: 80_000, 8: 90_000}
    rules = preset("boulevard")
    assert rules.funding_threshold(players) == expected[players]
    assert CLASSIC.funding_threshold(players) == 50_000
    for seed in range(3):
        game = Game(rules, players, seed)
        funded = events_of(game, "round")[0]["casinos"]
        assert len(funded) == 7
        assert funded == fund_by_hand(shuffled_deck(seed, rules.deck()), rules, players)
        for notes in funded:
            assert sum(notes) >= expected[players] > sum(notes) - notes[-1]


def test_R10_casinos_are_funded_afresh_before_every_round():
    game = play_out(Game(CLASSIC, 2, seed=3))
    rounds = events_of(game, "round")
    assert [e["round"] for e in rounds] == [0, 1, 2, 3]
    for e in rounds:
        assert all(sum(notes) >= 50_000 for notes in e["casinos"])


def test_R11_deck_exhaustion_during_funding_stops_it_without_error():
    """A tiny deck: casino 1 gets its $50k, casino 2 what is left, casinos 3-6 nothing."""
    rules = CLASSIC.replace(rounds=2, leftovers="discard")
    game = stage(rules, 2, roll=(6,))
    game._deck, game._deck_pos = [30_000, 30_000, 10_000], 0
    game.apply(Action(6))  # the last die of round 1: round 2 is funded from the tiny deck
    funded = events_of(game, "round")[-1]["casinos"]
    assert funded == [[30_000, 30_000], [10_000], [], [], [], []]
    assert game.deck_size() == 0
    assert game.view(0).casino(3).notes == ()
    play_out(game)  # casinos without notes pay nothing; never an error
    for score in events_of(game, "score")[6:]:
        if score["target"] >= 3:
            assert score["payouts"] == [] and score["leaving"] == []
    assert sum(game.money) <= 70_000
    assert sorted(game.discard + [n for notes in game.notes_won for n in notes]) == [
        10_000, 30_000, 30_000]


def test_R11_notes_mode_exhaustion_mid_casino():
    rules = CLASSIC.replace(rounds=2, funding="notes", notes_per_casino=2, leftovers="discard")
    game = stage(rules, 2, roll=(6,))
    game._deck, game._deck_pos = [40_000, 20_000, 90_000], 0
    game.apply(Action(6))
    assert events_of(game, "round")[-1]["casinos"] == [[40_000, 20_000], [90_000], [], [], [], []]


def test_R11_whole_deck_on_casino_one_then_nothing_left():
    """A huge threshold puts the whole deck on casino 1; with discarded leftovers the later
    rounds have no notes at all, and the game still plays to its end."""
    rules = CLASSIC.replace(threshold=10_000_000, leftovers="discard")
    game = play_out(Game(rules, 3, seed=11))
    rounds = events_of(game, "round")
    assert sorted(rounds[0]["casinos"][0]) == CLASSIC.deck()
    assert rounds[0]["casinos"][1:] == [[]] * 5
    for later in rounds[1:]:
        assert later["casinos"] == [[]] * 6
    assert sum(game.money) + sum(game.discard) == 2_500_000


@pytest.mark.parametrize("players,rounds,expected", [
    (3, 4, [0, 1, 2, 0]),
    (2, 5, [0, 1, 0, 1, 0]),
    (5, 4, [0, 1, 2, 3]),
])
def test_R12_start_seat_rotates_clockwise_each_round(players, rounds, expected):
    game = play_out(Game(CLASSIC.replace(rounds=rounds, max_players=5), players, seed=2))
    assert [e["start_seat"] for e in events_of(game, "round")] == expected
    # The first roll of each round is the start seat's.
    starts = []
    for i, e in enumerate(game.events):
        if e[0] == "round":
            starts.append(next(event_to_dict(f)["seat"] for f in game.events[i:] if f[0] == "roll"))
    assert starts == expected


def test_R13_seats_without_dice_are_skipped():
    game = stage(CLASSIC, 3, roll=(1, 2, 3), held={1: (0, 0, 0), 2: (2, 0, 0)})
    game.apply(Action(1))
    assert game.current_seat == 2  # seat 1 holds no dice: skipped
    last_roll = events_of(game, "roll")[-1]
    assert last_roll["seat"] == 2 and len(last_roll["own"]) == 2


def test_R13_a_player_takes_several_turns_in_a_row_at_the_end_of_a_round():
    game = stage(CLASSIC, 3, roll=(1, 2, 3, 4))
    seats = []
    while not events_of(game, "score"):
        game.apply(first_legal(game))
        seats.append(events_of(game, "place")[-1]["seat"])
    assert set(seats) == {0} and len(seats) >= 2
    # Only seat 0 rolled, and each roll had exactly the dice it still held (R14).
    first_score = next(i for i, e in enumerate(game.events) if e[0] == "score")
    rolls = [event_to_dict(e) for e in game.events[:first_score] if e[0] == "roll"]
    assert {r["seat"] for r in rolls} == {0}
    sizes = [len(r["own"]) for r in rolls]
    assert len(sizes) == len(seats) - 1  # the staged roll, then one roll per later turn
    assert sizes == sorted(sizes, reverse=True) and sizes[0] < 4


def test_R13_turn_order_in_whole_games():
    """Every roll goes to the next seat clockwise (from the last placer) that still holds dice,
    and a round ends exactly when every die is placed."""
    for rules, players in [(CLASSIC, 4), (preset("biggy-slot").replace(neutral="grey"), 3),
                           (preset("classic-white"), 3)]:
        for seed in range(3):
            game = Game(rules, players, seed)
            rng = random.Random(seed)
            while not game.is_over:
                held = [sum(game.dice_held(s)) for s in range(players)]
                seat = game.current_seat
                before = len(game.events)
                game.apply(rng.choice(game.legal_actions()))
                placed = event_to_dict(game.events[before])
                held[seat] -= placed["own"] + placed["big"] + placed["neutral"]
                following = event_to_dict(game.events[before + 1])
                if any(held):
                    nxt = next(s % players for s in range(seat + 1, seat + players + 1)
                               if held[s % players])
                    assert following == {**following, "type": "roll", "seat": nxt}
                else:
                    assert following["type"] == "score"


def test_R14_every_roll_is_all_held_dice_from_the_seats_own_stream():
    rules = preset("biggy-slot").replace(neutral="grey")
    seed = 21
    game = Game(rules, 3, seed)
    faces: dict[int, list[int]] = {0: [], 1: [], 2: []}
    rng = random.Random(4)
    while not game.is_over:
        seat = game.current_seat
        roll = events_of(game, "roll")[-1]
        assert roll["seat"] == seat
        held = game.dice_held(seat)
        assert (len(roll["own"]), len(roll["big"]), len(roll["neutral"])) == held
        assert tuple(game.roll) == (tuple(roll["own"]), tuple(roll["big"]),
                                    tuple(roll["neutral"]))
        game.apply(rng.choice(game.legal_actions()))
    for roll in events_of(game, "roll"):
        faces[roll["seat"]] += roll["own"] + roll["big"] + roll["neutral"]
    for seat, got in faces.items():
        assert got == list(DiceStream(seed, f"dice/{seat}").take(len(got)))


def test_R15_legal_actions_are_the_values_shown_to_their_casinos():
    game = stage(CLASSIC, 2, roll=(6, 2, 2, 5))
    assert game.legal_actions() == (Action(2), Action(5), Action(6))
    game = stage(SLOT_RULES, 2, roll=(6, 2))
    assert game.legal_actions() == (Action(2), Action(2, True), Action(6), Action(6, True))


def test_R15_a_single_legal_choice_is_still_asked_for():
    game = stage(CLASSIC, 2, roll=(4, 4, 4), held={1: (3, 0, 0)})
    assert game.legal_actions() == (Action(4),)
    assert game.current_seat == 0 and not game.is_over
    assert events_of(game, "place") == []  # the engine waits for the choice


@pytest.mark.parametrize("action,fragment", [
    (Action(3), "R15"),            # no die shows 3
    (Action(0), "R15"),            # not a face
    (Action(7), "R15"),
    (("4", False), "R15"),         # not an int
    ((True, False), "R15"),        # a bool is not a face
    (Action(4, True), "R30"),      # no slot in these rules
])
def test_R15_illegal_actions_raise_with_a_message(action, fragment):
    game = stage(CLASSIC, 2, roll=(4, 4, 1), held={1: (3, 0, 0)})
    with pytest.raises(IllegalActionError, match=fragment) as info:
        game.apply(action)
    assert str(info.value)
    # Nothing happened: same seat, same roll.
    assert game.current_seat == 0 and game.roll.own == (4, 4, 1)
    assert events_of(game, "place") == []


def test_R15_no_action_after_the_game_is_over():
    game = play_out(Game(CLASSIC.replace(rounds=1), 2, seed=0))
    assert game.legal_actions() == ()
    with pytest.raises(GameOverError):
        game.apply(Action(1))


def test_R16_all_dice_of_the_value_are_placed():
    game = stage(CLASSIC, 2, roll=(2, 5, 2, 2, 6), held={1: (3, 0, 0)})
    game.apply(Action(2))
    assert game.view(0).casino(2).ordinary == (3, 0)
    assert game.dice_held(0) == (2, 0, 0)
    assert events_of(game, "place")[0] == {"type": "place", "seat": 0, "value": 2, "slot": False,
                                           "own": 3, "big": 0, "neutral": 0}


def test_R16_own_big_and_neutral_dice_of_the_value_all_go():
    rules = BIG_RULES.replace(neutral="white")
    game = stage(rules, 2, roll=(3, 1), big=(3,), neutral=(3, 6), held={1: (1, 0, 0)})
    game.apply(Action(3))
    casino = game.view(0).casino(3)
    assert (casino.ordinary, casino.big, casino.neutral) == ((1, 0), (1, 0), 1)
    assert game.dice_held(0) == (1, 0, 1)


def test_R16_value_shown_only_by_neutral_dice_places_only_neutral_dice():
    game = stage(CLASSIC.replace(neutral="white"), 2, roll=(1, 3), neutral=(3, 6, 6),
                 held={1: (1, 0, 0)})
    assert Action(6) in game.legal_actions()
    game.apply(Action(6))
    place = events_of(game, "place")[0]
    assert (place["own"], place["big"], place["neutral"]) == (0, 0, 2)
    casino = game.view(0).casino(6)
    assert casino.ordinary == (0, 0) and casino.neutral == 2
    assert game.dice_held(0) == (2, 0, 1)


# ----------------------------------------------------------------------------------- R20-R26


def test_R20_counts_big_die_as_two_and_neutral_as_a_participant():
    rules = BIG_RULES.replace(neutral="white")
    game = stage(rules, 3, casinos={
        # seat 0: 3 ordinary = 3; seat 1: 1 + big = 3; seat 2: big = 2; neutral: 2 -> all tied
        2: ((90_000, 10_000), (3, 1, 0), (0, 1, 1), 2),
        # seat 0: big = 2, seat 1: 1 ordinary = 1: seat 0 first, seat 1 second
        3: ((40_000, 20_000), (0, 1, 0), (1, 0, 0), 0),
    }, roll=(6,))
    game.apply(Action(6))
    got = scores(game)
    assert got[2]["counts"] == [3, 3, 2, 2]
    assert got[2]["cancelled"] == [0, 1, 2, 3]
    assert got[2]["payouts"] == []
    assert got[2]["leaving"] == [90_000, 10_000]
    assert got[3]["counts"] == [2, 1, 0, 0]
    assert payout(got[3]) == [(0, 40_000), (1, 20_000)]
    assert got[6]["counts"] == [1, 0, 0, 0]


def test_R21_ties_cancel_at_every_rank():
    game = stage(CLASSIC.replace(max_players=5), 5, casinos={
        # counts 5,5,3,3,1: both pairs cancel, the lone single die takes the top note
        1: ((90_000, 60_000, 50_000, 20_000), (5, 5, 3, 3, 1), (0,) * 5, 0),
        # counts 4,2,2,1,0: the 2s cancel; 4 takes the top note, 1 the second
        2: ((70_000, 40_000, 30_000), (4, 2, 2, 1, 0), (0,) * 5, 0),
    }, roll=(6,))
    game.apply(Action(6))
    got = scores(game)
    assert got[1]["cancelled"] == [0, 1, 2, 3]
    assert payout(got[1]) == [(4, 90_000)]
    assert got[1]["leaving"] == [60_000, 50_000, 20_000]
    assert got[2]["cancelled"] == [1, 2]
    assert payout(got[2]) == [(0, 70_000), (3, 40_000)]
    assert got[2]["leaving"] == [30_000]
    assert game.money == [70_000, 0, 0, 40_000, 90_000]


def test_R21_a_player_tied_with_the_neutral_player_cancels_too():
    game = stage(CLASSIC.replace(neutral="white"), 2, casinos={
        4: ((80_000, 30_000), (2, 1), (0, 0), 2),  # seat 0 and neutral cancel; seat 1 takes 80k
    }, roll=(6,))
    game.apply(Action(6))
    got = scores(game)[4]
    assert got["counts"] == [2, 1, 2]
    assert got["cancelled"] == [0, 2]
    assert payout(got) == [(1, 80_000)]
    assert got["leaving"] == [30_000]


def test_R22_payout_by_count_highest_note_first_one_note_each():
    game = stage(CLASSIC, 3, casinos={
        # counts 1,4,2 and notes 10k,50k,30k: seat 1 50k, seat 2 30k, seat 0 10k
        1: ((10_000, 50_000, 30_000), (1, 4, 2), (0, 0, 0), 0),
        # three participants, two notes: the smallest count gets nothing
        2: ((20_000, 60_000), (3, 1, 2), (0, 0, 0), 0),
        # one participant, three notes: one note at most, the rest are leftovers
        3: ((90_000, 40_000, 10_000), (0, 0, 1), (0, 0, 0), 0),
    }, roll=(6,))
    game.apply(Action(6))
    got = scores(game)
    assert payout(got[1]) == [(1, 50_000), (2, 30_000), (0, 10_000)]
    assert payout(got[2]) == [(0, 60_000), (2, 20_000)]
    assert got[2]["leaving"] == []
    assert payout(got[3]) == [(2, 90_000)]
    assert got[3]["leaving"] == [40_000, 10_000]
    assert game.money == [70_000, 50_000, 140_000]
    assert [sorted(n) for n in game.notes_won] == [[10_000, 60_000], [50_000],
                                                  [20_000, 30_000, 90_000]]


R23_RULES = CLASSIC.replace(slot=True, neutral="white", funding="notes", notes_per_casino=1,
                            rounds=2)


def r23_stage(rules: RuleSet, deck: Sequence[int] = ()) -> Game:
    """Leftovers on casinos 1, 2, 4, 5 and the slot, and neutral winnings on 2 and 5."""
    return stage(rules, 2, casinos={
        1: ((50_000, 20_000, 10_000), (2, 0), (0, 0), 0),  # seat 0: 50k; left 20k, 10k
        2: ((40_000, 30_000), (0, 0), (0, 0), 1),          # neutral: 40k; left 30k
        3: ((90_000,), (0, 1), (0, 0), 0),                 # seat 1: 90k
        4: ((70_000, 60_000), (0, 0), (0, 0), 0),          # nobody: left 70k, 60k
        5: ((60_000, 50_000, 10_000), (3, 0), (0, 0), 2),  # seat 0: 60k, neutral 50k; left 10k
    }, slot_notes=(80_000,), roll=(6,), deck=deck)          # slot: nobody, left 80k


def test_R23_leftovers_go_under_the_deck_casino_by_casino_highest_first():
    game = r23_stage(R23_RULES)
    game.apply(Action(6))
    got = scores(game)
    assert [got[t]["leaving"] for t in range(1, 8)] == [
        [20_000, 10_000], [40_000, 30_000], [], [70_000, 60_000], [50_000, 10_000], [], [80_000]]
    assert payout(got[2]) == [(2, 40_000)]  # the neutral player (index 2 = players) won it
    assert payout(got[5]) == [(0, 60_000), (2, 50_000)]
    assert game.money == [110_000, 90_000]
    # The deck was empty: round 2 (one note per target) draws the leftovers in that order.
    assert events_of(game, "round")[-1]["casinos"] == [
        [20_000], [10_000], [40_000], [30_000], [70_000], [60_000], [50_000]]
    assert game._deck[game._deck_pos:] == [10_000, 80_000]
    assert game.view(0).deck_notes == (10_000, 80_000)
    assert game.discard == []


def test_R23_leftovers_go_under_the_notes_already_in_the_deck():
    game = r23_stage(R23_RULES, deck=(90_000,))
    game.apply(Action(6))
    assert events_of(game, "round")[-1]["casinos"] == [
        [90_000], [20_000], [10_000], [40_000], [30_000], [70_000], [60_000]]
    assert game._deck[game._deck_pos:] == [50_000, 10_000, 80_000]


def test_R23_discard_mode_removes_leftovers_and_neutral_winnings_from_the_game():
    game = r23_stage(R23_RULES.replace(leftovers="discard"))
    game.apply(Action(6))
    assert Counter(game.discard) == Counter(
        [20_000, 10_000, 40_000, 30_000, 70_000, 60_000, 50_000, 10_000, 80_000])
    assert game.money == [110_000, 90_000]
    assert events_of(game, "round")[-1]["casinos"] == [[]] * 7  # the deck was empty (R11)
    assert game.view(0).deck_notes == ()


def test_R24_every_seat_sees_everybodys_money_and_notes():
    game = stage(CLASSIC, 3, casinos={
        1: ((50_000, 20_000), (1, 2, 0), (0, 0, 0), 0),
        2: ((70_000,), (0, 0, 3), (0, 0, 0), 0),
    }, roll=(6,), money=[10_000, 0, 30_000], notes=[1, 0, 1], round_=1)
    game.apply(Action(6))
    assert game.money == [30_000, 50_000, 100_000]
    for seat in range(3):
        view = game.view(seat)
        assert [s.money for s in view.seats] == game.money
        assert [s.notes for s in view.seats] == [2, 1, 2]


@pytest.mark.parametrize("name,rounds", [("classic", 4), ("biggy-slot", 3), ("boulevard", 4)])
def test_R25_number_of_rounds(name, rounds):
    assert preset(name).rounds == rounds
    game = play_out(Game(preset(name), 3, seed=8))
    assert [e["round"] for e in events_of(game, "round")] == list(range(rounds))
    assert game.events[-1][0] == "end"


def test_R25_rounds_option():
    game = play_out(Game(CLASSIC.replace(rounds=1), 2, seed=8))
    assert len(events_of(game, "round")) == 1
    assert len(events_of(game, "score")) == 6


def test_R26_ranking_by_money_then_notes_with_shared_places():
    game = Game(CLASSIC.replace(max_players=5), 5, seed=0)
    game.money = [100_000, 100_000, 50_000, 100_000, 20_000]
    game.notes_won = [[50_000] * 2, [50_000] * 2, [50_000], [10_000, 40_000, 50_000], [20_000]]
    assert game.ranking() == [2, 2, 4, 1, 5]
    game = Game(CLASSIC, 3, seed=0)
    game.money = [90_000, 90_000, 50_000]
    game.notes_won = [[90_000], [90_000], [50_000]]
    assert game.ranking() == [1, 1, 3]


def test_R26_end_event_ranks_shared_first_place():
    """The last round leaves seats 0 and 1 with equal money and notes: places 1, 1, 3."""
    game = stage(CLASSIC, 3, casinos={
        1: ((60_000,), (2, 0, 0), (0, 0, 0), 0),
        2: ((60_000,), (0, 2, 0), (0, 0, 0), 0),
        3: ((50_000, 10_000), (0, 0, 1), (0, 0, 0), 0),
    }, roll=(4,), current=1, round_=3, money=[40_000, 40_000, 90_000], notes=[1, 1, 2])
    game.apply(Action(4))
    assert game.is_over
    end = events_of(game, "end")[0]
    assert end == {"type": "end", "money": [100_000, 100_000, 140_000], "notes": [2, 2, 3],
                   "places": [2, 2, 1]}
    assert game.ranking() == [2, 2, 1]
    game2 = stage(CLASSIC, 3, casinos={1: ((60_000,), (2, 0, 0), (0, 0, 0), 0),
                                       2: ((60_000,), (0, 2, 0), (0, 0, 0), 0)},
                  roll=(6,), current=2, round_=3, money=[0, 0, 50_000], notes=[0, 0, 2])
    game2.apply(Action(6))
    assert events_of(game2, "end")[0]["places"] == [1, 1, 3]


# ----------------------------------------------------------------------------------- R30-R32


def test_R30_slot_is_funded_after_casino_6_and_scored_like_a_casino():
    seed = 4
    game = Game(SLOT_RULES, 2, seed)
    funded = events_of(game, "round")[0]["casinos"]
    assert funded == fund_by_hand(shuffled_deck(seed, SLOT_RULES.deck()), SLOT_RULES, 2)
    assert len(funded) == 7 and sum(funded[6]) >= 50_000
    # A single leader and a lower count: ordinary R22 payout on the slot.
    game = stage(SLOT_RULES, 2, slot=[SlotPlacement(2, 0, 3, 0, 0), SlotPlacement(5, 1, 1, 0, 0)],
                 slot_notes=(30_000, 70_000), roll=(6,))
    game.apply(Action(6))
    slot = scores(game)[SLOT]
    assert slot["counts"] == [3, 1, 0]
    assert payout(slot) == [(0, 70_000), (1, 30_000)]


def test_R31_a_value_already_on_the_slot_cannot_go_there_again():
    game = stage(SLOT_RULES, 2, slot=[SlotPlacement(3, 1, 1, 0, 0)], slot_notes=(50_000,),
                 roll=(3, 3, 5), held={1: (2, 0, 0)})
    assert game.legal_actions() == (Action(3), Action(5), Action(5, True))
    with pytest.raises(IllegalActionError, match="R31"):
        game.apply(Action(3, True))
    game.apply(Action(5, True))
    assert game.view(0).slot == (SlotPlacement(3, 1, 1, 0, 0), SlotPlacement(5, 0, 1, 0, 0))
    # The value placed by seat 0 now blocks seat 1 as well (whoever placed it).
    game._roll_own = game._roll_all = bytes([5, 3])
    assert Action(5, True) not in game.legal_actions()
    assert Action(3, True) not in game.legal_actions()
    assert Action(5) in game.legal_actions()
    with pytest.raises(IllegalActionError, match="R31"):
        game.apply(Action(5, True))


def test_R31_the_slot_is_open_again_next_round():
    game = stage(SLOT_RULES.replace(rounds=2), 2, slot=[SlotPlacement(v, 0, 1, 0, 0)
                                                         for v in range(1, 6)], roll=(6,),
                 deck=CLASSIC.deck())
    game.apply(Action(6))
    assert game.view(0).slot == ()
    values = set(game.roll.own)
    assert {a.value for a in game.legal_actions() if a.slot} == values


def test_R32_equal_leaders_on_the_slot_ordered_by_face_sum():
    # seat 0: two 6s (count 2, sum 12); seat 2: one 1. Seat 1 places two 4s last (sum 8).
    game = stage(SLOT_RULES, 3, slot=[SlotPlacement(6, 0, 2, 0, 0), SlotPlacement(1, 2, 1, 0, 0)],
                 slot_notes=(90_000, 50_000, 20_000), roll=(4, 4), current=1)
    game.apply(Action(4, True))
    slot = scores(game)[SLOT]
    assert slot["counts"] == [2, 2, 1, 0]
    assert slot["cancelled"] == []
    assert payout(slot) == [(0, 90_000), (1, 50_000), (2, 20_000)]


def test_R32_then_by_physical_dice_a_big_die_counting_its_face_once():
    # seat 0: two ordinary 3s (count 2, sum 6, 2 dice); seat 1 places its big die showing 6
    # last (count 2, sum 6, 1 die): seat 0 wins on the number of physical dice.
    game = stage(BIG_RULES.replace(slot=True), 2, slot=[SlotPlacement(3, 0, 2, 0, 0)],
                 slot_notes=(80_000, 30_000), big=(6,), current=1)
    game.apply(Action(6, True))
    slot = scores(game)[SLOT]
    assert slot["counts"] == [2, 2, 0]
    assert payout(slot) == [(0, 80_000), (1, 30_000)]


def test_R32_face_sum_before_physical_dice():
    # seat 0: two 2s (sum 4, 2 dice); seat 1: big die showing 5 (sum 5, 1 die): sum decides.
    game = stage(BIG_RULES.replace(slot=True), 2, slot=[SlotPlacement(2, 0, 2, 0, 0)],
                 slot_notes=(80_000, 30_000), big=(5,), current=1)
    game.apply(Action(5, True))
    assert payout(scores(game)[SLOT]) == [(1, 80_000), (0, 30_000)]


def test_R32_leaders_equal_on_all_three_cancel_and_R21_applies_below():
    # seat 0: 3,3 (count 2, sum 6, 2 dice); seat 1: 1 and 5 (count 2, sum 6, 2 dice): cancel.
    # Below: seat 2 one 6 and seat 3 one 2: equal counts cancel although their sums differ.
    placements = [SlotPlacement(3, 0, 2, 0, 0), SlotPlacement(1, 1, 1, 0, 0),
                  SlotPlacement(5, 1, 1, 0, 0), SlotPlacement(6, 2, 1, 0, 0)]
    game = stage(SLOT_RULES, 4, slot=placements, slot_notes=(90_000, 50_000), roll=(2,),
                 current=3)
    game.apply(Action(2, True))
    slot = scores(game)[SLOT]
    assert slot["counts"] == [2, 2, 1, 1, 0]
    assert slot["cancelled"] == [0, 1, 2, 3]
    assert slot["payouts"] == []
    assert slot["leaving"] == [90_000, 50_000]


def test_R32_after_leaders_cancel_the_next_count_takes_the_top_note():
    placements = [SlotPlacement(3, 0, 2, 0, 0), SlotPlacement(1, 1, 1, 0, 0),
                  SlotPlacement(5, 1, 1, 0, 0)]
    game = stage(SLOT_RULES, 3, slot=placements, slot_notes=(90_000, 50_000), roll=(6,),
                 current=2)
    game.apply(Action(6, True))
    slot = scores(game)[SLOT]
    assert slot["cancelled"] == [0, 1]
    assert payout(slot) == [(2, 90_000)]
    assert slot["leaving"] == [50_000]


def test_R32_three_leaders_one_ahead_two_still_equal():
    # seat 2 (3 and 6, sum 9) leads; seats 0 (1+5) and 1 (2+4) are equal on count, sum, dice.
    placements = [SlotPlacement(1, 0, 1, 0, 0), SlotPlacement(5, 0, 1, 0, 0),
                  SlotPlacement(2, 1, 1, 0, 0), SlotPlacement(4, 1, 1, 0, 0),
                  SlotPlacement(3, 2, 1, 0, 0)]
    game = stage(SLOT_RULES, 3, slot=placements, slot_notes=(90_000, 40_000, 10_000), roll=(6,),
                 current=2)
    game.apply(Action(6, True))
    slot = scores(game)[SLOT]
    assert slot["counts"] == [2, 2, 2, 0]
    assert slot["cancelled"] == [0, 1]
    assert payout(slot) == [(2, 90_000)]
    assert slot["leaving"] == [40_000, 10_000]


def test_R32_unique_counts_below_the_leaders_are_paid_in_order():
    placements = [SlotPlacement(6, 0, 3, 0, 0), SlotPlacement(2, 1, 1, 0, 0),
                  SlotPlacement(5, 2, 1, 0, 0), SlotPlacement(1, 3, 2, 0, 0)]
    game = stage(SLOT_RULES, 4, slot=placements, slot_notes=(60_000, 30_000, 20_000),
                 roll=(4,))
    game.apply(Action(4))  # the last die goes to casino 4, not the slot
    slot = scores(game)[SLOT]
    assert slot["counts"] == [3, 1, 1, 2, 0]
    assert slot["cancelled"] == [1, 2]
    assert payout(slot) == [(0, 60_000), (3, 30_000)]
    assert slot["leaving"] == [20_000]


def test_R32_neutral_player_on_the_slot_uses_its_face_sum():
    # seat 0: two 2s (sum 4); neutral: two 6s placed by seat 1 (sum 12): the neutral player leads
    # and its note leaves play (R23).
    rules = SLOT_RULES.replace(neutral="white")
    game = stage(rules, 2, slot=[SlotPlacement(2, 0, 2, 0, 0)], slot_notes=(70_000, 40_000),
                 roll=(1,), neutral=(6, 6), current=1)
    game.apply(Action(6, True))
    game.apply(Action(game.roll.own[0]))  # seat 1 rolls its last die again and places it
    slot = scores(game)[SLOT]
    assert slot["counts"] == [2, 0, 2]
    assert payout(slot) == [(2, 70_000), (0, 40_000)]
    assert slot["leaving"] == [70_000]
    assert game.money[0] == 40_000


# ----------------------------------------------------------------------------------- R40-R43


def test_R40_neutral_player_scores_as_an_extra_participant_and_keeps_nothing():
    game = stage(CLASSIC.replace(neutral="white"), 2, casinos={
        5: ((80_000, 50_000, 20_000), (1, 0), (0, 0), 3),  # neutral 3 > seat 0's 1
    }, roll=(6,))
    game.apply(Action(6))
    got = scores(game)[5]
    assert got["counts"] == [1, 0, 3]
    assert payout(got) == [(2, 80_000), (0, 50_000)]
    assert got["leaving"] == [80_000, 20_000]
    assert game.money == [50_000, 0]
    # Back under the (empty) deck, highest first (R23): round 2 draws 80k, then 20k.
    assert events_of(game, "round")[-1]["casinos"][:3] == [[80_000], [20_000], []]


@pytest.mark.parametrize("players,per_player,preroll", [
    (2, 4, 0), (3, 2, 2), (4, 2, 0), (5, 2, 0), (6, 2, 0), (7, 2, 0), (8, 2, 0),
])
def test_R41_white_dice_per_player(players, per_player, preroll):
    rules = (preset("classic-white") if players <= 5
             else preset("boulevard").replace(neutral="white"))
    assert rules.neutral_per_player(players) == per_player
    assert rules.neutral_preroll(players) == preroll
    game = play_out(Game(rules, players, seed=players))
    first = events_of(game, "roll")[0]
    assert len(first["neutral"]) == per_player
    assert len(events_of(game, "preroll")) == (rules.rounds if preroll else 0)
    # Dealt afresh every round: each seat places exactly per_player neutral dice a round.
    per_round: Counter = Counter()
    round_index = -1
    for e in map(event_to_dict, game.events):
        if e["type"] == "round":
            round_index = e["round"]
        elif e["type"] == "place":
            per_round[round_index, e["seat"]] += e["neutral"]
    assert set(per_round.values()) == {per_player}
    assert len(per_round) == rules.rounds * players
    if players <= 4:
        assert players * per_player + preroll == 8  # the 8 white dice of the official game


@pytest.mark.parametrize("seed", range(5))
def test_R41_three_players_preroll_onto_the_casinos_of_their_faces(seed):
    game = Game(preset("classic-white"), 3, seed)
    kinds = [e[0] for e in game.events]
    assert kinds[:3] == ["round", "preroll", "roll"]
    faces = events_of(game, "preroll")[0]["faces"]
    assert len(faces) == 2
    assert faces == list(DiceStream(seed, "dice/neutral").take(2))
    view = game.view(0)
    assert [c.neutral for c in view.casinos] == [faces.count(v) for v in range(1, 7)]
    assert view.current_seat == 0  # the start player then takes the first turn
    assert game.dice_held(0) == (8, 0, 2)


def test_R41_preroll_every_round_from_the_neutral_stream():
    seed = 9
    game = play_out(Game(preset("classic-white"), 3, seed))
    prerolls = [e["faces"] for e in events_of(game, "preroll")]
    stream = DiceStream(seed, "dice/neutral")
    assert prerolls == [list(stream.take(2)) for _ in range(4)]
    # Each round's neutral dice on the casinos: 2 pre-rolled + 2 per player.
    for score_round in range(4):
        round_scores = events_of(game, "score")[6 * score_round: 6 * score_round + 6]
        assert sum(s["counts"][-1] for s in round_scores) == 8


@pytest.mark.parametrize("seed", range(6))
def test_R41_preroll_never_goes_on_the_slot(seed):
    game = Game(preset("classic-white").replace(slot=True), 3, seed)
    faces = events_of(game, "preroll")[0]["faces"]
    view = game.view(0)
    assert view.casino(SLOT).neutral == 0 and view.slot == ()
    assert sum(c.neutral for c in view.casinos) == 2
    assert [view.casino(v).neutral for v in range(1, 7)] == [faces.count(v) for v in range(1, 7)]
    # No value is blocked on the slot by the pre-roll (R31).
    assert {a.value for a in view.legal if a.slot} == set(view.roll.values())


def test_R42_classic_neutral_discard_bank_keeps_neutral_winnings():
    rules = preset("classic-neutral-discard")
    assert (rules.neutral, rules.leftovers, rules.max_players) == ("white", "discard", 4)
    game = stage(rules, 2, casinos={
        1: ((60_000, 20_000, 10_000), (1, 0), (0, 0), 2),  # neutral 60k, seat 0 20k, 10k left
    }, roll=(6,), deck=(30_000,) * 12)
    game.apply(Action(6))
    got = scores(game)[1]
    assert payout(got) == [(2, 60_000), (0, 20_000)]
    assert got["leaving"] == [60_000, 10_000]
    assert sorted(game.discard) == [10_000, 60_000]
    assert game.view(0).deck_notes.count(60_000) == 0
    assert game.money == [20_000, 0]


@pytest.mark.parametrize("players,per_player", [(2, 3), (3, 2), (4, 1), (5, 1), (6, 1), (8, 1)])
def test_R43_grey_dice_per_player_and_no_preroll(players, per_player):
    rules = preset("biggy-slot").replace(neutral="grey", max_players=8)
    assert rules.neutral_per_player(players) == per_player
    assert rules.neutral_preroll(players) == 0
    game = Game(rules, players, seed=3)
    assert game.dice_held(0) == (6, 1, per_player)
    assert events_of(game, "preroll") == []
    assert len(events_of(game, "roll")[0]["neutral"]) == per_player


# ----------------------------------------------------------------------------------- R50-R51


def own_roll_policy(seat: int, salt: int) -> Callable[[Game], Action]:
    """A choice that depends only on the seat's own rolls: always legal casino actions."""
    rng = random.Random(salt)

    def choose(game: Game) -> Action:
        values = game.roll.values()
        return Action(values[rng.randrange(len(values))])

    return choose


def duplicate_runs(rules: RuleSet, players: int, seed: int, seat: int) -> list[Game]:
    rng = random.Random(seed)
    others: list[Callable[[Game], Action]] = [
        first_legal,
        lambda g: g.legal_actions()[-1],
        lambda g: rng.choice(g.legal_actions()),
    ]
    games = []
    for other in others:
        mine = own_roll_policy(seat, salt=seed)
        game = Game(rules, players, seed)
        while not game.is_over:
            game.apply(mine(game) if game.current_seat == seat else other(game))
        games.append(game)
    return games


@pytest.mark.parametrize("name,players", [
    ("classic", 3), ("classic-white", 3), ("biggy-slot", 4), ("boulevard", 5),
])
def test_R50_a_seats_dice_do_not_depend_on_other_seats_choices(name, players):
    rules = preset(name)
    if name == "biggy-slot":
        rules = rules.replace(neutral="grey")
    for seed in (1, 77):
        for seat in range(players):
            games = duplicate_runs(rules, players, seed, seat)
            rolls = [[e for e in events_of(g, "roll") if e["seat"] == seat] for g in games]
            assert rolls[0] == rolls[1] == rolls[2]
            prerolls = [events_of(g, "preroll") for g in games]
            assert prerolls[0] == prerolls[1] == prerolls[2]
            # The other seats did play differently.
            assert len({tuple(g.record().actions()) for g in games}) > 1


@pytest.mark.parametrize("name,players", [("classic", 2), ("biggy-slot", 3), ("boulevard", 5)])
def test_R50_the_deck_does_not_depend_on_choices(name, players):
    rules = preset(name)
    seed = 5
    order = shuffled_deck(seed, rules.deck())
    for game in duplicate_runs(rules, players, seed, seat=0):
        drawn = [n for e in events_of(game, "round") for casino in e["casinos"] for n in casino]
        limit = min(len(drawn), len(order))
        assert drawn[:limit] == order[:limit]


def test_R50_same_rules_seats_seed_and_choices_give_the_same_game():
    rules = preset("boulevard").replace(neutral="white")
    first = duplicate_runs(rules, 3, 12345, seat=1)[2]
    second = duplicate_runs(rules, 3, 12345, seat=1)[2]
    assert first.events == second.events
    assert Game(rules, 3, 12346).events != Game(rules, 3, 12345).events


def _doc_stream(seed: int, label: str, length: int) -> bytes:
    """The stream of docs/replay-format.md, written from the document, not from the engine."""
    out = b""
    block = 0
    while len(out) < length:
        out += hashlib.sha512(f"lasvegas/v1/{seed}/{label}/{block}".encode()).digest()
        block += 1
    return out


def _doc_faces(seed: int, label: str, count: int) -> list[int]:
    faces: list[int] = []
    stream = _doc_stream(seed, label, 64 * (count // 10 + 2))
    for byte in stream:
        if byte < 252:
            faces.append(byte % 6 + 1)
        if len(faces) == count:
            return faces
    raise AssertionError("stream too short")


def _doc_deck(seed: int, canonical: list[int]) -> list[int]:
    n = len(canonical)
    keys = struct.unpack(f">{n}I", _doc_stream(seed, "deck", 4 * n)[: 4 * n])
    return [canonical[i] for i in sorted(range(n), key=lambda i: (keys[i], i))]


@pytest.mark.parametrize("seed", [0, 1, 42, 2**64 - 1])
def test_R50_streams_follow_the_documented_method(seed):
    for label in ("dice/0", "dice/3", "dice/neutral"):
        assert list(DiceStream(seed, label).take(200)) == _doc_faces(seed, label, 200)
    for rules in (CLASSIC, preset("boulevard")):
        assert shuffled_deck(seed, rules.deck()) == _doc_deck(seed, rules.deck())
    game = Game(CLASSIC, 2, seed)
    assert list(game.roll.own) == _doc_faces(seed, "dice/0", 8)


def test_R50_worked_example_of_the_replay_format_document():
    """docs/replay-format.md, 'Worked example': seed 1."""
    block0 = _doc_stream(1, "dice/0", 64)
    assert block0[:8].hex() == "786352cb3a789756"
    assert _doc_faces(1, "dice/0", 8) == [1, 4, 5, 6, 5, 1, 2, 3]
    assert block0[63] == 0xFC  # skipped: face 64 is the first byte of block 1, 0x83 -> 6
    assert _doc_stream(1, "dice/0", 65)[64] == 0x83
    assert list(DiceStream(1, "dice/0").take(64))[60:] == [5, 4, 2, 6]
    assert _doc_faces(1, "dice/0", 64)[60:] == [5, 4, 2, 6]
    assert _doc_deck(1, CLASSIC.deck())[:5] == [20_000, 30_000, 50_000, 30_000, 60_000]
    game = Game(CLASSIC, 2, seed=1)
    assert game.roll.own == (1, 4, 5, 6, 5, 1, 2, 3)
    assert events_of(game, "round")[0]["casinos"][:3] == [[20_000, 30_000], [50_000],
                                                          [30_000, 60_000]]


def test_R50_reference_code_of_the_replay_format_document():
    """The Python reference in docs/replay-format.md reproduces the engine's dice and deck."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "replay-format.md"
    code = re.search(r"```python\n(import hashlib.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert code is not None
    namespace: dict = {}
    exec(code.group(1), namespace)  # the code block of our own documentation
    for seed in (0, 1, 2**64 - 1):
        for label in ("dice/0", "dice/5", "dice/neutral"):
            assert namespace["faces"](seed, label, 130) == list(DiceStream(seed, label).take(130))
        for rules in (CLASSIC, preset("boulevard")):
            assert namespace["deck"](seed, rules.deck()) == shuffled_deck(seed, rules.deck())


def test_R51_views_hold_no_seed_and_no_deck_order():
    names = {f.name for f in dataclasses.fields(View)}
    assert names == {"rules", "players", "seat", "round", "start_seat", "current_seat", "casinos",
                     "seats", "deck_notes", "slot", "roll", "legal", "is_over"}
    assert not any("seed" in name for name in names)
    assert "seed" not in {f.name for f in dataclasses.fields(RuleSet)}
    seed = 987_654_321_987_654_321
    game = Game(preset("boulevard"), 4, seed)
    view = game.view(2)
    assert str(seed) not in repr(view)
    assert list(view.deck_notes) == sorted(view.deck_notes)
    # Two games that differ only in the order of their decks show the same view.
    other = Game(preset("boulevard"), 4, seed)
    rest = other._deck[other._deck_pos:]
    other._deck[other._deck_pos:] = rest[::-1]
    assert other._deck != game._deck
    assert other.view(2) == view


def test_R51_a_seat_sees_the_same_public_state_as_every_other_seat():
    game = Game(preset("classic-white"), 3, seed=6)
    for _ in range(5):
        game.apply(first_legal(game))
    views = [game.view(s) for s in range(3)]
    assert all(dataclasses.replace(v, seat=0) == views[0] for v in views)


# ----------------------------------------------------------------------------------- presets

PRESET_TABLE = {
    # name: (min, max, dice, big, rounds, funding, threshold, notes, slot, neutral, leftovers,
    #        hundred_k, scaled)
    "classic": (2, 5, 8, 0, 4, "threshold", 50_000, None, False, "none", "bottom", False, False),
    "classic-white": (2, 5, 8, 0, 4, "threshold", 50_000, None, False, "white", "bottom", False,
                      False),
    "classic-neutral-discard": (2, 4, 8, 0, 4, "threshold", 50_000, None, False, "white",
                                "discard", False, False),
    "biggy-slot": (2, 6, 6, 1, 3, "notes", None, 2, True, "none", "bottom", False, False),
    "boulevard": (2, 8, 7, 1, 4, "threshold", None, None, True, "none", "bottom", True, True),
}


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_presets_table(name):
    (low, high, dice, big, rounds, funding, threshold, per_casino, slot, neutral, leftovers,
     hundred_k, scaled) = PRESET_TABLE[name]
    rules = preset(name)
    assert rules.preset == name
    assert (rules.min_players, rules.max_players) == (low, high)
    assert (rules.dice, rules.big_dice, rules.rounds) == (dice, big, rounds)
    assert (rules.funding, rules.slot, rules.neutral, rules.leftovers) == (
        funding, slot, neutral, leftovers)
    assert (rules.hundred_k, rules.scaled_threshold) == (hundred_k, scaled)
    if threshold is not None:
        assert rules.threshold == threshold
    if per_casino is not None:
        assert rules.notes_per_casino == per_casino
    for players in range(low, high + 1):
        play_out(Game(rules, players, seed=players))
    for players in (low - 1, high + 1):
        with pytest.raises(RulesError, match=f"players must be between {low} and {high}"):
            Game(rules, players, seed=0)


def test_presets_are_the_five_named_ones_and_round_trip_through_dicts():
    assert set(PRESETS) == set(PRESET_TABLE)
    for name, rules in PRESETS.items():
        assert RuleSet.from_dict(rules.to_dict()) == rules
        assert RuleSet.from_dict({"preset": name}) == rules
    assert RuleSet.from_dict({"preset": "classic", "slot": True}) == SLOT_RULES.replace(
        preset="classic")


@pytest.mark.parametrize("build,fragment", [
    (lambda: preset("poker"), "unknown preset 'poker'; presets: classic, classic-white"),
    (lambda: RuleSet.from_dict({"preset": "classic", "dices": 3}), "unknown rule option 'dices'"),
    (lambda: CLASSIC.replace(dice=21), "dice must be a whole number from 0 to 20, got 21"),
    (lambda: CLASSIC.replace(dice=0, big_dice=0), "dice \\+ big_dice must be at least 1"),
    (lambda: CLASSIC.replace(big_dice=-1), "big_dice must be a whole number from 0 to 20"),
    (lambda: CLASSIC.replace(funding="auction"), 'funding must be one of "threshold", "notes"'),
    (lambda: CLASSIC.replace(neutral="blue"), 'neutral must be one of "none", "white", "grey"'),
    (lambda: CLASSIC.replace(leftovers="burn"), 'leftovers must be one of "bottom", "discard"'),
    (lambda: CLASSIC.replace(funding="notes", scaled_threshold=True),
     'scaled_threshold needs funding = "threshold"'),
    (lambda: CLASSIC.replace(rounds=0), "rounds must be a whole number from 1 to 100, got 0"),
    (lambda: CLASSIC.replace(max_players=9), "max_players must be a whole number from 2 to 8"),
    (lambda: CLASSIC.replace(min_players=4, max_players=3),
     "max_players must be a whole number from 4 to 8, got 3"),
    (lambda: CLASSIC.replace(slot="yes"), "slot must be true or false"),
    (lambda: CLASSIC.replace(threshold=0), "threshold must be a whole number from 1"),
    (lambda: CLASSIC.replace(rounds=True), "rounds must be a whole number"),
])
def test_presets_invalid_options_raise_RulesError_naming_the_range(build, fragment):
    with pytest.raises(RulesError, match=fragment):
        build()


@pytest.mark.parametrize("name,players,low,high", [
    ("classic", 1, 2, 5), ("classic", 6, 2, 5), ("classic-white", 6, 2, 5),
    ("classic-neutral-discard", 5, 2, 4), ("biggy-slot", 7, 2, 6), ("boulevard", 9, 2, 8),
    ("boulevard", 0, 2, 8),
])
def test_presets_player_count_outside_the_range(name, players, low, high):
    with pytest.raises(RulesError) as info:
        Game(preset(name), players, seed=1)
    assert str(info.value) == (
        f"players must be between {low} and {high} for rules {name!r}, got {players}")
    assert isinstance(info.value, ValueError)


def test_presets_bad_seed_is_rejected():
    for seed in (-1, 2**64, 1.5, "7"):
        with pytest.raises(ValueError, match="seed"):
            Game(CLASSIC, 2, seed)  # type: ignore[arg-type]

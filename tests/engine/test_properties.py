"""Property tests: random rule sets, seat counts, seeds and legal choices (hypothesis).

Every game is played to its end and checked against an independent model of the rules built
only from docs/rules.md and the game's events: funding (R10, R11), turn order and rolls (R13, R14),
placements (R16, R31), counts, cancellations, payouts and leftovers (R20-R23, R32), money and
ranking (R26), plus note conservation at every step, the duplicate property of R50, and replay
of records (also after a JSON round trip, and tampered).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.engine import PRESETS, Action, Game, GameRecord, RuleSet, preset, replay
from referee.engine.record import event_to_dict
from referee.engine.rng import DiceStream, shuffled_deck

SLOT = 7
# ENGINE_PROPERTY_EXAMPLES=5000 python -m pytest tests/engine/test_properties.py for a long hunt.
SETTINGS = settings(max_examples=int(os.environ.get("ENGINE_PROPERTY_EXAMPLES", "300")),
                    deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Case:
    rules: RuleSet
    players: int
    seed: int
    choices: int  # seeds the random legal choices

    def __repr__(self) -> str:  # short, so that failures are easy to reproduce by hand
        return (f"Case(RuleSet(**{self.rules.to_dict()}), players={self.players}, "
                f"seed={self.seed}, choices={self.choices})")


@st.composite
def cases(draw: st.DrawFn) -> Case:
    dice = draw(st.integers(0, 8))
    big_dice = draw(st.integers(0 if dice else 1, 2))
    funding = draw(st.sampled_from(["threshold", "notes"]))
    low = draw(st.integers(2, 8))
    high = draw(st.integers(low, 8))
    # Options are set on top of a named preset: a record names its rules by preset + options.
    rules = preset(draw(st.sampled_from(sorted(PRESETS)))).replace(
        min_players=low,
        max_players=high,
        rounds=draw(st.integers(1, 5)),
        dice=dice,
        big_dice=big_dice,
        funding=funding,
        threshold=draw(st.sampled_from([10_000, 30_000, 50_000, 90_000, 150_000, 400_000])),
        scaled_threshold=funding == "threshold" and draw(st.booleans()),
        notes_per_casino=draw(st.integers(1, 4)),
        hundred_k=draw(st.booleans()),
        slot=draw(st.booleans()),
        neutral=draw(st.sampled_from(["none", "white", "grey"])),
        leftovers=draw(st.sampled_from(["bottom", "discard"])),
    )
    players = draw(st.integers(low, high))
    seed = draw(st.integers(0, 2**64 - 1))
    return Case(rules, players, seed, draw(st.integers(0, 2**32)))


def play(case: Case, *, check_steps: bool = False) -> Game:
    """Play a case to its end with random legal choices (checking notes at every step)."""
    game = Game(case.rules, case.players, case.seed)
    rng = random.Random(case.choices)
    start = Counter(case.rules.deck())
    while True:
        if check_steps:
            check_conservation(game, start)
        if game.is_over:
            return game
        legal = game.legal_actions()
        assert legal, "a seat to move always has a legal action"
        game.apply(legal[rng.randrange(len(legal))])


def check_conservation(game: Game, start: Counter) -> None:
    """Deck + casinos + players' notes + discard == the starting deck, as multisets."""
    view = game.view(0)
    where = Counter(view.deck_notes)
    for casino in view.casinos:
        where.update(casino.notes)
    for notes in game.notes_won:
        where.update(notes)
    where.update(game.discard)
    assert where == start
    assert game.money == [sum(notes) for notes in game.notes_won]
    assert [s.money for s in view.seats] == game.money


# ------------------------------------------------------------------ the independent model


def expected_order(counts: list[int], slot: tuple[list[int], list[int]] | None):
    """R21 (and R32 on the slot): (participants paid in order, participants cancelled)."""
    present = [p for p, c in enumerate(counts) if c > 0]
    if not present:
        return [], []

    def unique(group: list[int], key) -> list[int]:
        return [p for p in group if sum(key(q) == key(p) for q in group) == 1]

    if slot is None:
        ranked = sorted(unique(present, counts.__getitem__), key=lambda p: -counts[p])
    else:
        sums, physical = slot
        top = max(counts)
        leaders = [p for p in present if counts[p] == top]
        below = [p for p in present if counts[p] < top]

        def tiebreak(p: int) -> tuple[int, int]:
            return sums[p], physical[p]

        ranked = sorted(unique(leaders, tiebreak), key=tiebreak, reverse=True)
        ranked += sorted(unique(below, counts.__getitem__), key=lambda p: -counts[p])
    cancelled = sorted(set(present) - set(ranked))
    return ranked, cancelled


def expected_places(money: list[int], notes: list[int]) -> list[int]:
    """R26, written out: 1 + the number of players strictly ahead."""
    return [1 + sum((m2, n2) > (m, n) for m2, n2 in zip(money, notes, strict=True))
            for m, n in zip(money, notes, strict=True)]


def check_events(case: Case, game: Game) -> None:
    """Re-derive every event of a finished game from the rules and the placements."""
    rules, n = case.rules, case.players
    targets = list(range(1, 8 if rules.slot else 7))
    deck = shuffled_deck(case.seed, rules.deck())  # the deck order is checked in test_rules_by_id
    discard: list[int] = []
    money, won = [0] * n, [0] * n
    streams = [DiceStream(case.seed, f"dice/{s}") for s in range(n)]
    neutral_stream = DiceStream(case.seed, "dice/neutral")
    per_player = rules.neutral_per_player(n)
    events = [event_to_dict(e) for e in game.events]
    expect_next: str | int = "round"   # what the next event must be: a type, or a seat to roll
    round_no = 0
    scored = 0
    funded: dict[int, list[int]] = {}
    for event in events:
        kind = event["type"]
        if isinstance(expect_next, int):
            assert (kind, event.get("seat")) == ("roll", expect_next)
        elif expect_next == "score":
            assert kind == "score"
        elif expect_next == "round":
            assert kind in ("round", "end")
        if kind == "round":
            assert (event["round"], event["start_seat"]) == (round_no, round_no % n)  # R12
            # R10, R11: casinos 1..6 then the slot, from the top of the deck.
            expected = []
            for _ in targets:
                got: list[int] = []
                if rules.funding == "threshold":
                    while sum(got) < rules.funding_threshold(n) and deck:
                        got.append(deck.pop(0))
                else:
                    while len(got) < rules.notes_per_casino and deck:
                        got.append(deck.pop(0))
                expected.append(got)
            assert event["casinos"] == expected
            funded = dict(zip(targets, expected, strict=True))
            hands = [[rules.dice, rules.big_dice, per_player] for _ in range(n)]
            own = {t: [0] * n for t in targets}
            big = {t: [0] * n for t in targets}
            neu = {t: 0 for t in targets}
            slot_sum, slot_dice, slot_values = [0] * (n + 1), [0] * (n + 1), set()
            preroll = rules.neutral_preroll(n)
            expect_next = "preroll" if preroll else event["start_seat"]
            roll: dict | None = None
        elif kind == "preroll":
            assert expect_next == "preroll"
            assert event["faces"] == list(neutral_stream.take(preroll))  # R41, R50
            for face in event["faces"]:
                neu[face] += 1  # never the slot
            expect_next = round_no % n
        elif kind == "roll":
            seat = event["seat"]
            # R14: all the dice the seat holds, from its own stream (R50).
            assert [len(event["own"]), len(event["big"]), len(event["neutral"])] == hands[seat]
            faces = event["own"] + event["big"] + event["neutral"]
            assert faces == list(streams[seat].take(len(faces)))
            roll = event
            expect_next = "place"
        elif kind == "place":
            assert expect_next == "place" and roll is not None
            seat, value = event["seat"], event["value"]
            assert seat == roll["seat"]
            # R15, R16: a value shown; every die showing it goes.
            placed = [roll["own"].count(value), roll["big"].count(value),
                      roll["neutral"].count(value)]
            assert sum(placed) > 0
            assert [event["own"], event["big"], event["neutral"]] == placed
            target = SLOT if event["slot"] else value
            if event["slot"]:
                assert rules.slot and value not in slot_values  # R31
                slot_values.add(value)
                slot_sum[seat] += value * (placed[0] + placed[1])
                slot_dice[seat] += placed[0] + placed[1]
                slot_sum[n] += value * placed[2]
                slot_dice[n] += placed[2]
            own[target][seat] += placed[0]
            big[target][seat] += placed[1]
            neu[target] += placed[2]
            for i in range(3):
                hands[seat][i] -= placed[i]
            # R13: the next seat clockwise holding dice, or scoring.
            holding = [s % n for s in range(seat + 1, seat + n + 1) if sum(hands[s % n])]
            expect_next = holding[0] if holding else "score"
        elif kind == "score":
            target = targets[scored % len(targets)]
            assert event["target"] == target
            counts = [o + 2 * b for o, b in zip(own[target], big[target], strict=True)]
            counts.append(neu[target])  # R20
            assert event["counts"] == counts
            if target == targets[0]:
                # Every die dealt this round was placed exactly once.
                dealt = n * (rules.dice + rules.big_dice + per_player) + preroll
                assert sum(sum(own[t]) + sum(big[t]) + neu[t] for t in targets) == dealt
                weighted = n * (rules.dice + 2 * rules.big_dice + per_player) + preroll
                assert sum(sum(own[t]) + 2 * sum(big[t]) + neu[t] for t in targets) == weighted
            tiebreak = (slot_sum, slot_dice) if target == SLOT else None
            ranked, cancelled = expected_order(counts, tiebreak)
            assert event["cancelled"] == cancelled
            notes = sorted(funded[target], reverse=True)
            payouts = [[p, note] for p, note in zip(ranked, notes, strict=False)]
            assert event["payouts"] == payouts
            leaving = notes[len(payouts):] + [note for p, note in payouts if p == n]
            leaving.sort(reverse=True)
            assert event["leaving"] == leaving
            for p, note in payouts:
                if p < n:
                    money[p] += note
                    won[p] += 1
            (deck if rules.leftovers == "bottom" else discard).extend(leaving)  # R23
            scored += 1
            if target == targets[-1]:
                round_no += 1
                expect_next = "round" if round_no < rules.rounds else "end"
        elif kind == "end":
            assert expect_next == "end"
            assert event["money"] == money and event["notes"] == won
            assert event["places"] == expected_places(money, won)
            expect_next = "nothing"
        else:
            raise AssertionError(f"unknown event {event}")
    assert expect_next == "nothing"
    assert game.money == money and game.ranking() == expected_places(money, won)
    assert sorted(game.view(0).deck_notes) == sorted(deck)
    assert Counter(game.discard) == Counter(discard)
    # R25 and R12
    assert round_no == rules.rounds


# ------------------------------------------------------------------ properties


@SETTINGS
@given(cases())
@pytest.mark.slow
def test_random_games_follow_the_rules_and_conserve_notes(case):
    game = play(case, check_steps=True)
    check_events(case, game)


@SETTINGS
@given(cases(), st.data())
@pytest.mark.slow
def test_duplicate_play_a_seat_gets_the_same_dice_whatever_the_others_do(case, data):
    """R50: play a seed twice; one seat chooses the same way (from its own rolls only), the
    others choose differently. That seat's rolls, the pre-rolls and the deck are the same."""
    seat = data.draw(st.integers(0, case.players - 1))
    runs = []
    for others in (case.choices, case.choices + 1):
        game = Game(case.rules, case.players, case.seed)
        mine, theirs = random.Random(case.seed), random.Random(others)
        while not game.is_over:
            if game.current_seat == seat:
                values = game.roll.values()  # a casino choice is always legal
                game.apply(Action(values[mine.randrange(len(values))]))
            else:
                legal = game.legal_actions()
                game.apply(legal[theirs.randrange(len(legal))])
        runs.append(game)
    events = [[event_to_dict(e) for e in g.events] for g in runs]
    mine_rolls = [[e for e in ev if e["type"] == "roll" and e["seat"] == seat] for ev in events]
    assert mine_rolls[0] == mine_rolls[1]
    prerolls = [[e for e in ev if e["type"] == "preroll"] for ev in events]
    assert prerolls[0] == prerolls[1]
    order = shuffled_deck(case.seed, case.rules.deck())
    for ev in events:
        drawn = [note for e in ev if e["type"] == "round" for c in e["casinos"] for note in c]
        limit = min(len(drawn), len(order))
        assert drawn[:limit] == order[:limit]


@SETTINGS
@given(cases(), st.data())
@pytest.mark.slow
def test_records_replay_round_trip_json_and_report_tampering(case, data):
    game = play(case)
    record = game.record(game_id="g1", bots=[{"name": "x", "version": "0"}])
    assert replay(record) is None
    text = json.dumps(record.to_json())
    # The fast writer a league stores records with gives exactly the compact json.dumps text.
    assert record.to_json_text() == json.dumps(record.to_json(), separators=(",", ":"))
    loaded = json.loads(text)
    assert loaded["format"] == "referee-game-record" and loaded["version"] == 1
    again = GameRecord.from_json(loaded)
    assert again.meta == {"game_id": "g1", "bots": [{"name": "x", "version": "0"}]}
    assert replay(again) is None
    assert [event_to_dict(e) for e in again.events] == loaded["events"]
    assert again.actions() == record.actions()

    # One roll face changed: reported at that event.
    rolls = [i for i, e in enumerate(loaded["events"]) if e["type"] == "roll"]
    index = data.draw(st.sampled_from(rolls))
    tampered = json.loads(text)
    event = tampered["events"][index]
    part = data.draw(st.sampled_from([k for k in ("own", "big", "neutral") if event[k]]))
    position = data.draw(st.integers(0, len(event[part]) - 1))
    event[part][position] = event[part][position] % 6 + 1
    divergence = replay(GameRecord.from_json(tampered))
    assert divergence is not None
    assert divergence.index == index
    assert divergence.expected == event
    assert divergence.actual == loaded["events"][index]
    assert str(divergence).startswith(f"event {index}: ")

    # One payout changed: reported at that score event.
    paid = [i for i, e in enumerate(loaded["events"]) if e["type"] == "score" and e["payouts"]]
    if paid:
        index = data.draw(st.sampled_from(paid))
        tampered = json.loads(text)
        tampered["events"][index]["payouts"][0][1] += 10_000
        divergence = replay(GameRecord.from_json(tampered))
        assert divergence is not None and divergence.index == index
        assert divergence.actual == loaded["events"][index]

    # A record cut short: fine while the game is still running, a divergence once the
    # placements it holds are enough to end the game.
    cut = data.draw(st.integers(1, len(loaded["events"]) - 1))
    short = GameRecord.from_json({**loaded, "events": loaded["events"][:cut]})
    last_place = max(i for i, e in enumerate(loaded["events"]) if e["type"] == "place")
    divergence = replay(short)
    if cut > last_place:
        assert divergence is not None and divergence.index == cut
        assert divergence.expected is None
    else:
        assert divergence is None


def test_record_of_a_custom_rule_set_round_trips_json():
    """A rule set built option by option (preset "custom", the RuleSet default) must survive
    GameRecord.to_json / from_json like any other (docs/rules.md: "every option can also be set on
    its own")."""
    rules = RuleSet(dice=3, rounds=1)
    game = Game(rules, 2, seed=1)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    loaded = GameRecord.from_json(json.loads(json.dumps(game.record().to_json())))
    assert loaded.rules == rules
    assert replay(loaded) is None

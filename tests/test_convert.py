"""Engine <-> message conversions (referee/protocol/convert.py): exact round trips, checked
against messages built field by field from bot.proto's documentation."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from referee.engine import PRESETS, Action, Game, Roll, RulesError, RuleSet, View, determinize
from referee.engine.actions import CASINO_ACTIONS, SLOT_ACTIONS
from referee.protocol import convert, pb
from referee.protocol.convert import (
    MalformedAction,
    MalformedMessage,
    action_from_pb,
    action_to_pb,
    canonical_view,
    decision_message,
    decision_request,
    decode_message,
    decode_request,
    game_end,
    game_start,
    read_decision,
    request_message,
    rules_from_pb,
    rules_to_pb,
    view_from_request,
)

ALL_ACTIONS = [*CASINO_ACTIONS.values(), *SLOT_ACTIONS.values()]

# Rule sets beyond the presets: every module on its own and mixed.
EXTRA_RULES = [
    PRESETS["classic"].replace(preset="classic+slot", slot=True),
    PRESETS["classic"].replace(preset="grey-big", neutral="grey", big_dice=2, dice=5),
    PRESETS["biggy-slot"].replace(preset="biggy-white", neutral="white", max_players=5),
    PRESETS["boulevard"].replace(preset="boulevard-white", neutral="white", leftovers="discard"),
]


def _views(rules: RuleSet, players: int, seed: int) -> list[View]:
    """Every view the referee would send in one random game (the seat to move's)."""
    game = Game(rules, players, seed, record=False)
    rng = random.Random(seed)
    views = []
    while not game.is_over:
        view = game.view(game.seat)
        views.append(view)
        game.apply(rng.choice(view.legal))
    return views


def _all_views() -> list[View]:
    views = []
    for rules in [*PRESETS.values(), *EXTRA_RULES]:
        for players in range(rules.min_players, rules.max_players + 1):
            for seed in (1, 2):
                views += _views(rules, players, seed * 1000 + players)
    return views


VIEWS = _all_views()


def _reference_request(view: View, request_id: int, bank: int, latency: int) -> pb.DecisionRequest:
    """A DecisionRequest built field by field as bot.proto documents it (the slow way)."""
    state = pb.State(
        round=view.round, rounds=view.rules.rounds, start_seat=view.start_seat,
        current_seat=view.current_seat, deck_notes=sorted(view.deck_notes),
    )
    for c in view.casinos:
        casino = state.casinos.add(target=c.target, notes=sorted(c.notes, reverse=True),
                                   neutral_dice=c.neutral)
        for seat in range(view.players):
            casino.dice.add(seat=seat, ordinary=c.ordinary[seat], big=c.big[seat])
    for s in view.seats:
        state.seats.add(seat=s.seat, dice_ordinary=s.dice, dice_big=s.big_dice,
                        dice_neutral=s.neutral_dice, money=s.money, notes=s.notes)
    for p in sorted(view.slot, key=lambda p: p.value):
        state.slot_values.append(p.value)
        state.slot_dice.add(value=p.value, seat=p.seat, ordinary=p.ordinary, big=p.big,
                            neutral=p.neutral)
    request = pb.DecisionRequest(
        request_id=request_id, state=state, time_bank_ms=bank, last_latency_us=latency,
        roll=pb.Roll(ordinary=sorted(view.roll.own), big=sorted(view.roll.big),
                     neutral=sorted(view.roll.neutral)),
    )
    for a in view.legal:
        request.legal.add(value=a.value, slot=a.slot)
    return request


# ------------------------------------------------------------------------------------ rules


@pytest.mark.parametrize("rules", [*PRESETS.values(), *EXTRA_RULES], ids=lambda r: r.preset)
def test_rules_round_trip(rules: RuleSet) -> None:
    msg = rules_to_pb(rules)
    assert rules_from_pb(pb.Rules.FromString(msg.SerializeToString())) == rules
    assert msg.preset == rules.preset


@given(
    base=st.sampled_from(sorted(PRESETS)),
    rounds=st.integers(1, 6), dice=st.integers(0, 9), big=st.integers(0, 2),
    funding=st.sampled_from(["threshold", "notes"]), threshold=st.integers(1, 200_000),
    scaled=st.booleans(), per_casino=st.integers(1, 5), hundred_k=st.booleans(),
    slot=st.booleans(), neutral=st.sampled_from(["none", "white", "grey"]),
    leftovers=st.sampled_from(["bottom", "discard"]),
)
@pytest.mark.slow
def test_any_rule_set_round_trips(base, rounds, dice, big, funding, threshold, scaled,
                                  per_casino, hundred_k, slot, neutral, leftovers) -> None:
    try:
        rules = PRESETS[base].replace(
            rounds=rounds, dice=dice, big_dice=big, funding=funding, threshold=threshold,
            scaled_threshold=scaled, notes_per_casino=per_casino, hundred_k=hundred_k,
            slot=slot, neutral=neutral, leftovers=leftovers)
    except RulesError:
        assume(False)
    assert rules_from_pb(rules_to_pb(rules)) == rules


def test_rules_from_pb_rejects_unspecified_enums() -> None:
    msg = rules_to_pb(PRESETS["classic"])
    for field in ("funding", "neutral", "leftovers"):
        bad = pb.Rules()
        bad.CopyFrom(msg)
        setattr(bad, field, 0)
        with pytest.raises(RulesError, match="enum") as info:
            rules_from_pb(bad)
        assert isinstance(info.value, ValueError)
    bad = pb.Rules()
    bad.CopyFrom(msg)
    bad.rounds = 0
    with pytest.raises(RulesError, match="rounds"):
        rules_from_pb(bad)


# ------------------------------------------------------------------------------------ requests


def test_views_cover_every_module() -> None:
    assert len(VIEWS) > 2000
    assert any(v.slot and len(v.slot) > 1 for v in VIEWS)
    assert any(v.roll.big for v in VIEWS) and any(v.roll.neutral for v in VIEWS)
    assert any(c.neutral for v in VIEWS for c in v.casinos)
    assert any(list(v.roll.own) != sorted(v.roll.own) for v in VIEWS)  # order matters below
    assert any(v.legal[0].slot is False and any(a.slot for a in v.legal) for v in VIEWS)


@pytest.mark.slow
def test_request_matches_the_documented_message() -> None:
    for i, view in enumerate(VIEWS):
        rid, bank, latency = i * 7919 % 2**40, i % 3 * 1500, i % 5 * 10**6
        reference = _reference_request(view, rid, bank, latency)
        assert decision_request(view, rid, bank, latency) == reference
        assert request_message(view, rid, bank, latency) == pb.RefereeMessage(decision=reference)


@pytest.mark.slow
def test_requests_straight_from_the_game_match_the_views() -> None:
    """One reused request message per game, changed in place move by move, always equals the
    request built afresh from the view (also when a builder goes on to another table)."""
    requests = convert.GameRequests()
    for rules in [*PRESETS.values(), *EXTRA_RULES]:
        for players in sorted({rules.min_players, rules.max_players}):
            for seed in (11, 12):
                game = Game(rules, players, seed, record=False)
                rng = random.Random(seed)
                request_id = 0
                while not game.is_over:
                    request_id += 1
                    expected = request_message(game.view(game.current_seat), request_id, 4500,
                                               321)
                    built = requests.build(game, request_id, 4500, 321)
                    assert built == expected
                    assert built.SerializeToString() == expected.SerializeToString()
                    game.apply(rng.choice(game.legal_actions()))


@pytest.mark.slow
def test_view_round_trip_over_the_wire() -> None:
    for i, view in enumerate(VIEWS):
        expected = canonical_view(view)
        data = pb.RefereeMessage.FromString(request_message(view, i + 1, 250, 99)
                                            .SerializeToString())
        decoded = decode_message(view.rules, view.players, view.seat, data).request
        assert decoded is not None
        assert decoded.view == expected
        assert (decoded.request_id, decoded.time_bank_ms, decoded.last_latency_us) == (i + 1, 250,
                                                                                       99)
        request = decision_request(view, i + 1)
        assert view_from_request(view.rules, view.players, view.seat, request) == expected


@pytest.mark.slow
def test_lazy_views_decode_their_state_when_first_read() -> None:
    for i, view in enumerate(VIEWS[::5]):
        expected = canonical_view(view)
        data = request_message(view, i + 1, 250, 99)

        def lazy(view: View = view, data: pb.RefereeMessage = data,
                 request_id: int = i + 1) -> View:
            decoded = decode_message(view.rules, view.players, view.seat, data, lazy=True)
            assert decoded.request is not None and decoded.request.request_id == request_id
            return decoded.request.view

        first = lazy()
        assert isinstance(first, View) and type(first) is convert.LazyView
        assert (first.legal, first.roll, first.seat) == (expected.legal, expected.roll,
                                                         expected.seat)
        assert type(first) is convert.LazyView   # the roll and legal actions are not the state
        assert first.casinos == expected.casinos
        assert type(first) is View and first == expected
        # Comparing, hashing and printing decode it too, from either side.
        assert expected == lazy() and lazy() == expected
        assert hash(lazy()) == hash(expected) and repr(lazy()) == repr(expected)
        assert dataclasses.asdict(lazy()) == dataclasses.asdict(expected)
        with pytest.raises(AttributeError):
            lazy().no_such_field  # noqa: B018


def test_lazy_view_with_a_bad_state_fails_when_read() -> None:
    view = VIEWS[100]
    data = request_message(view, 4)
    decoded = decode_message(view.rules, view.players + 1, view.seat, data, lazy=True).request
    assert decoded is not None and decoded.view.legal == view.legal
    with pytest.raises(MalformedMessage, match="seats"):
        decoded.view.seats  # noqa: B018


@pytest.mark.slow
def test_canonical_view_only_orders() -> None:
    for view in VIEWS[::7]:
        canon = canonical_view(view)
        assert canonical_view(canon) is canon
        assert tuple(sorted(view.roll.own)) == canon.roll.own
        assert [p.value for p in canon.slot] == sorted(p.value for p in view.slot)
        assert dataclasses.replace(view, roll=canon.roll, slot=canon.slot) == canon
        # Nothing a rule depends on: look-ahead from either plays the same game.
        a, b = determinize(view, 5), determinize(canon, 5)
        rng = random.Random(5)
        while not a.is_over:
            assert a.legal_actions() == b.legal_actions()
            action = rng.choice(a.legal_actions())
            a.apply(action)
            b.apply(action)
        assert a.money == b.money and a.ranking() == b.ranking()


def test_unknown_kinds_are_ignored() -> None:
    """A RefereeMessage of a kind this version does not know (here: none set) needs no answer."""
    view = VIEWS[3]
    assert decode_message(view.rules, view.players, view.seat, pb.RefereeMessage()) == (
        convert.Decoded())


def test_start_and_end_messages() -> None:
    rules = PRESETS["boulevard"]
    start = game_start("g1", rules, ["a", "b", "c"], 2, decision_ms=100, game_bank_ms=5000,
                       autoplay_forced=True)
    decoded = decode_message(None, 0, 0, start)
    assert decoded.request is None and decoded.end is None
    assert decoded.start == start.start
    assert rules_from_pb(decoded.start.rules) == rules
    assert [s.seat for s in start.start.seats] == [0, 1, 2]
    assert start.start.time_control.game_bank_ms == 5000
    assert game_start("g1", rules_to_pb(rules), ["a", "b", "c"], 2, decision_ms=100,
                      game_bank_ms=5000, autoplay_forced=True) == start
    end = game_end("g1", [2, 1, 3], [100, 200, 0], [2, 3, 0], forfeited_seats=[False, False, True],
                   forfeited=True, reason="3 strikes", strikes=3)
    decoded = decode_message(rules, 3, 2, end)
    assert decoded.end == end.end
    assert [(s.seat, s.place, s.money, s.notes, s.forfeited) for s in end.end.standings] == [
        (0, 2, 100, 2, False), (1, 1, 200, 3, False), (2, 3, 0, 0, True)]


def test_malformed_requests() -> None:
    view = VIEWS[100]
    data = request_message(view, 4)
    with pytest.raises(MalformedMessage, match="before the GameStart"):
        decode_message(None, 0, 0, data)
    with pytest.raises(MalformedMessage, match="seats"):
        decode_message(view.rules, view.players + 1, view.seat, data)
    bad_legal = decision_request(view, 4)
    bad_legal.legal.add(value=9)
    with pytest.raises(MalformedMessage, match="value 9"):
        decode_request(view.rules, view.players, view.seat, bad_legal)
    assert issubclass(MalformedMessage, ValueError)


# ------------------------------------------------------------------------------------ actions


def test_read_decision_takes_well_formed_decisions_only() -> None:
    for request_id in (0, 1, 300, 2**40):
        for action in ALL_ACTIONS:
            assert read_decision(decision_message(request_id, action)) == (request_id, action)
    odd = [
        decision_message(9, None),                       # no action
        decision_message(9, (9, False)),                 # not a face
        decision_message(9, (0, True)),
        pb.BotMessage(),                                 # no decision
    ]
    for message in odd:
        assert read_decision(message) is None, message


def test_actions_round_trip() -> None:
    for action in ALL_ACTIONS:
        msg = action_to_pb(action)
        assert (msg.value, msg.slot) == (action.value, action.slot)
        assert action_from_pb(msg) is action
        for rid in (0, 1, 300, 2**33 + 5):
            bot_msg = decision_message(rid, action)
            assert bot_msg.decision.request_id == rid
            assert action_from_pb(bot_msg.decision) is action
        assert decision_message(7, (action.value, action.slot)) == decision_message(7, action)
    assert action_to_pb((3, True)) == pb.Action(value=3, slot=True)


def test_malformed_actions() -> None:
    with pytest.raises(MalformedAction, match="no action"):
        action_from_pb(pb.Decision(request_id=3))
    for value in (0, 7, 1000):
        for slot in (False, True):
            with pytest.raises(MalformedAction, match="face from 1 to 6"):
                action_from_pb(pb.Decision(request_id=3, action=pb.Action(value=value, slot=slot)))
            with pytest.raises(MalformedAction):
                action_from_pb(pb.Action(value=value, slot=slot))
    assert issubclass(MalformedAction, MalformedMessage)
    assert issubclass(MalformedAction, ValueError)
    # No action at all is sent as a Decision without one (the referee's "malformed").
    empty = decision_message(5, None)
    assert empty.decision.request_id == 5 and not empty.decision.HasField("action")
    # A value out of range is still sent: the referee, not the bot, judges it.
    odd = decision_message(5, Action(9))
    with pytest.raises(MalformedAction):
        action_from_pb(odd.decision)


def test_roll_is_sent_sorted() -> None:
    view = next(v for v in VIEWS if list(v.roll.own) != sorted(v.roll.own))
    request = decision_request(view, 1)
    assert list(request.roll.ordinary) == sorted(view.roll.own)
    assert canonical_view(view).roll == Roll(*(tuple(sorted(x)) for x in view.roll))

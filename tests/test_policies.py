"""Built-in policies (referee/engine/policies.py): scoring against the engine's own, legality,
determinism, and strength in in-process games."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.engine import PRESETS, SLOT, Action, Game, View, preset
from referee.engine import policies as P
from referee.engine.policies import (
    action_gains,
    casino_payouts,
    greedy_policy,
    greedy_score,
    montecarlo_policy,
    random_policy,
)

Policy = Callable[[View, random.Random, int], Action]

RULES = [*PRESETS.values(), PRESETS["classic"].replace(preset="classic+slot", slot=True),
         PRESETS["biggy-slot"].replace(preset="biggy-grey", neutral="grey")]


def _random_states(rules, players: int, seed: int):
    """(game, view) at every decision of a random game."""
    game = Game(rules, players, seed, record=False)
    rng = random.Random(seed)
    while not game.is_over:
        view = game.view(game.current_seat)
        yield game, view
        game.apply(random_policy(view, rng))


def _dice(view: View, action: Action) -> int:
    r = view.roll
    return r.own.count(action.value) + r.big.count(action.value) + r.neutral.count(action.value)


# ------------------------------------------------------------------------------------ scoring


def _payouts_if_scored(view: View, action: Action) -> list[int]:
    """Each seat's winnings over all casinos if the round were scored right after `action`."""
    n, me = view.players, view.current_seat
    won = [0] * n
    for c in view.casinos:
        counts = [o + 2 * b for o, b in zip(c.ordinary, c.big, strict=True)] + [c.neutral]
        keys = None
        if c.target == SLOT:
            sums, physical = [0] * (n + 1), [0] * (n + 1)
            for p in view.slot:
                sums[p.seat] += p.value * (p.ordinary + p.big)
                physical[p.seat] += p.ordinary + p.big
                sums[n] += p.value * p.neutral
                physical[n] += p.neutral
        if c.target == action.target:
            r, v = view.roll, action.value
            counts[me] += r.own.count(v) + 2 * r.big.count(v)
            counts[n] += r.neutral.count(v)
            if c.target == SLOT:
                sums[me] += v * (r.own.count(v) + r.big.count(v))
                physical[me] += r.own.count(v) + r.big.count(v)
                sums[n] += v * r.neutral.count(v)
                physical[n] += r.neutral.count(v)
        if c.target == SLOT:
            keys = list(zip(sums, physical, strict=True))
        for p, note in casino_payouts(counts, c.notes, keys).items():
            if p < n:
                won[p] += note
    return won


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset)
def test_scoring_matches_the_engine(rules) -> None:
    """At every round's last placement, casino_payouts predicts the engine's payout exactly
    (R20-R22 and R32 on the slot, neutral participant included)."""
    checked = 0
    for players in range(rules.min_players, min(rules.max_players, 6) + 1):
        for seed in range(6):
            game = Game(rules, players, seed, record=False)
            rng = random.Random(seed)
            played: list[Action] = []
            while not game.is_over:
                view = game.view(game.current_seat)
                held = [s.dice + s.big_dice + s.neutral_dice for s in view.seats]
                if sum(held) == held[view.current_seat]:  # only the seat to move holds dice
                    for action in view.legal:
                        if _dice(view, action) != held[view.current_seat]:
                            continue  # the round goes on after this placement
                        trial = Game(rules, players, seed, record=False)
                        trial.play(played)
                        before, round_ = trial.money[:], trial.round
                        trial.apply(action)
                        assert trial.is_over or trial.round == round_ + 1
                        paid = [m - b for m, b in zip(trial.money, before, strict=True)]
                        assert paid == _payouts_if_scored(view, action)
                        checked += 1
                action = random_policy(view, rng)
                played.append(action)
                game.apply(action)
    assert checked > 10


@given(
    counts=st.lists(st.integers(0, 5), min_size=3, max_size=6),
    sums=st.lists(st.integers(0, 12), min_size=6, max_size=6),
    notes=st.lists(st.sampled_from([10_000, 50_000, 90_000]), max_size=3),
    data=st.data(),
)
def test_fast_slot_scoring_agrees(counts, sums, notes, data) -> None:
    """The rollouts' slot scoring equals casino_payouts for any slot position (R32)."""
    notes = sorted(notes, reverse=True)
    keys = [(s, data.draw(st.integers(0, 3))) for s in sums[: len(counts)]]
    payouts = casino_payouts(counts, notes, keys)
    for p in range(len(counts)):
        others = counts[:p] + counts[p + 1:]
        other_keys = keys[:p] + keys[p + 1:]
        assert P._slot_win_against(others, other_keys, counts[p], keys[p], notes) == (
            payouts.get(p, 0))
        assert P._slot_win_against(others, other_keys, counts[p], keys[p], notes) == (
            payouts.get(p, 0))


@given(counts=st.lists(st.integers(0, 5), min_size=2, max_size=7),
       notes=st.lists(st.sampled_from([10_000, 40_000, 90_000]), max_size=4))
def test_casino_ties_cancel_at_every_rank(counts, notes) -> None:
    """R21: equal counts are removed at every rank; R22: the k-th remaining takes the k-th."""
    notes = sorted(notes, reverse=True)
    payouts = casino_payouts(counts, notes)
    unique = sorted((c for c in counts if c and counts.count(c) == 1), reverse=True)
    expected = {counts.index(c): note for c, note in zip(unique, notes, strict=False)}
    assert payouts == expected
    for p in range(len(counts)):
        others = counts[:p] + counts[p + 1:]
        assert P._win_against(others, counts[p], notes) == payouts.get(p, 0)


def _crafted_view() -> View:
    """2 players, seat 0 to move with the roll 3, 3, 5. Casino 3: seat 1 has two dice, notes
    90k + 10k. Casino 5: empty, a 50k note."""
    view = Game(preset("classic"), 2, 1, record=False).view(0)
    casinos = []
    for c in view.casinos:
        if c.target == 3:
            c = dataclasses.replace(c, notes=(90_000, 10_000), ordinary=(0, 2))
        elif c.target == 5:
            c = dataclasses.replace(c, notes=(50_000,), ordinary=(0, 0))
        casinos.append(c)
    seats = (dataclasses.replace(view.seats[0], dice=3), view.seats[1])
    return dataclasses.replace(
        view, casinos=tuple(casinos), seats=seats, current_seat=0, seat=0,
        roll=view.roll._replace(own=(3, 5, 3)), legal=(Action(3), Action(5)))


def test_greedy_knows_ties_cancel() -> None:
    view = _crafted_view()
    # Two 3s tie seat 1's two dice: both are removed (R21), nobody wins the 90k.
    assert action_gains(view, Action(3)) == [0, -90_000]
    assert action_gains(view, Action(5)) == [50_000, 0]
    assert greedy_score(view, Action(3)) == P.DENY_WEIGHT * 90_000
    assert greedy_policy(view) == Action(5)


def test_greedy_denies_the_leader_when_it_pays() -> None:
    view = _crafted_view()
    rich = dataclasses.replace(view.seats[1], money=300_000)
    casinos = tuple(dataclasses.replace(c, notes=(20_000,)) if c.target == 5 else c
                    for c in view.casinos)
    view = dataclasses.replace(view, seats=(view.seats[0], rich), casinos=casinos)
    assert greedy_policy(view) == Action(3)  # 45k of denial beats a 20k note


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset)
def test_greedy_is_legal_best_and_tie_breaks(rules) -> None:
    for _game, view in _random_states(rules, min(rules.max_players, 4), 3):
        action = greedy_policy(view)
        assert action in view.legal
        best = max(greedy_score(view, a) for a in view.legal)
        tied = [a for a in view.legal if greedy_score(view, a) == best]
        fewest = min(_dice(view, a) for a in tied)
        assert action == next(a for a in tied if _dice(view, a) == fewest)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.preset)
def test_rollout_step_is_greedy(rules) -> None:
    """The rollouts' fast step picks a largest-gain action (then the fewest dice), as
    action_gains computes it on the view."""
    rng = random.Random(4)
    for players in (rules.min_players, min(rules.max_players, 5)):
        for game, view in _random_states(rules, players, 8):
            notes = [sorted(x, reverse=True) for x in game._notes]
            value, slot = P._rollout_step(game, notes, rng.random)
            action = Action(value, slot)
            assert action in view.legal
            gains = {a: action_gains(view, a)[view.current_seat] for a in view.legal}
            assert gains[action] == max(gains.values())
            assert _dice(view, action) == min(_dice(view, a) for a in view.legal
                                              if gains[a] == gains[action])


# ------------------------------------------------------------------------------------ determinism


def test_random_policy_is_seeded_and_legal() -> None:
    for _game, view in _random_states(PRESETS["boulevard"], 5, 2):
        a = random_policy(view, random.Random(7))
        assert a in view.legal and a == random_policy(view, random.Random(7))


@pytest.mark.parametrize("rules", [PRESETS["classic"], PRESETS["biggy-slot"],
                                   PRESETS["classic-white"]], ids=lambda r: r.preset)
def test_montecarlo_is_deterministic_and_legal(rules) -> None:
    views = [v for _, v in _random_states(rules, 3, 6)][::6]
    for i, view in enumerate(views):
        action = montecarlo_policy(view, rollouts=24, seed=i)
        assert action in view.legal
        assert montecarlo_policy(view, rollouts=24, seed=i) == action
    # The view is not changed by the look-ahead.
    again = [v for _, v in _random_states(rules, 3, 6)][::6]
    assert again == views


def test_montecarlo_single_legal_action_is_free() -> None:
    view = _crafted_view()
    one = dataclasses.replace(view, legal=(Action(5),))
    assert montecarlo_policy(one, rollouts=10**9) == Action(5)


# ------------------------------------------------------------------------------------ strength


def _tournament(rules_name: str, table: list[tuple[str, Policy]], deals: int,
                ) -> dict[str, tuple[float, float]]:
    """`deals` seeds, each played once per rotation of the seats (duplicate play, R50).
    Returns per policy (wins, mean place); a shared first place counts fractionally."""
    n = len(table)
    wins = {name: 0.0 for name, _ in table}
    places = {name: 0 for name, _ in table}
    for deal in range(deals):
        for rotation in range(n):
            seated = table[rotation:] + table[:rotation]
            game = Game(preset(rules_name), n, 7_000 + deal, record=False)
            rng = random.Random(deal * 10 + rotation)
            turn = 0
            while not game.is_over:
                seat = game.current_seat
                game.apply(seated[seat][1](game.view(seat), rng, turn))
                turn += 1
            ranking = game.ranking()
            for seat, (name, _) in enumerate(seated):
                places[name] += ranking[seat]
                if ranking[seat] == 1:
                    wins[name] += 1 / ranking.count(1)
    games = deals * n
    return {name: (wins[name], places[name] / games) for name in wins}


def _greedy(view: View, rng: random.Random, turn: int) -> Action:
    return greedy_policy(view)


def _random(view: View, rng: random.Random, turn: int) -> Action:
    return random_policy(view, rng)


def _montecarlo(rollouts: int) -> Policy:
    return lambda view, rng, turn: montecarlo_policy(view, rollouts=rollouts, seed=turn)


@pytest.mark.slow
def test_strength_montecarlo_greedy_random() -> None:
    """60 three-player games (20 deals x 3 seat rotations): Monte Carlo wins more than greedy,
    greedy more than random, and the mean places agree. Same code and budget as the sample bot
    in classic games (about 20 s). Measured over 150 games: wins 53% / 39% / 7%; at 40
    playouts Monte Carlo is no better than greedy at this table, so do not cut the budget."""
    results = _tournament("classic", [("montecarlo", _montecarlo(120)), ("greedy", _greedy),
                                      ("random", _random)], deals=20)
    (mc_wins, mc_place), (greedy_wins, greedy_place), (random_wins, random_place) = (
        results["montecarlo"], results["greedy"], results["random"])
    assert mc_wins > greedy_wins > random_wins
    assert mc_place < greedy_place < random_place

"""Profile-likelihood bounds of the strengths (referee/ratings/profiled.py), on leagues whose
answer is known."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from referee.ratings import profiled
from referee.ratings.blocks import BlockSolver, components
from referee.ratings.intervals import fit_with_interval, standings
from referee.ratings.plackett import ELO, Design, _ascent, strength_sd
from referee.ratings.results import PlayedGame

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from simulated import synthetic_league  # noqa: E402

Z = 1.959963984540054


def duel(index: int, winner: str, loser: str) -> PlayedGame:
    return PlayedGame(index, (winner, loser), (1, 2), (0, 0), (False, False), ({}, {}),
                      ((), ()))


def phantom(x: float) -> float:
    """The fit's weak prior on one strength: a win and a loss against a bot of strength 0."""
    return x - 2 * math.log1p(math.exp(x))


def duel_profile(wins: int, losses: int, gap: float) -> float:
    """The highest the fit's objective gets for two bots a, b whose gap theta_a - theta_b is
    `gap` (a won `wins` of their games): the games' log-likelihood plus the priors, maximised
    over the common level t by bisection on its slope (the objective is concave in t)."""
    games = wins * (gap - math.log1p(math.exp(gap))) - losses * math.log1p(math.exp(gap))

    def slope(t: float) -> float:
        return sum(1 - 2 / (1 + math.exp(-x)) for x in (t + gap / 2, t - gap / 2))

    low, high = -20.0, 20.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if slope(middle) > 0 else (low, middle)
    t = (low + high) / 2
    return games + phantom(t + gap / 2) + phantom(t - gap / 2)


def duel_bound(wins: int, losses: int, best: float, side: float) -> float:
    """a's reported strength (Elo: half the gap, centred) where the profile is Z^2 / 2 below
    its top, on `side` of it: bisection on the gap."""
    top = duel_profile(wins, losses, best)
    inner, outer = best, best + side * 20
    for _ in range(200):
        middle = (inner + outer) / 2
        if top - duel_profile(wins, losses, middle) < Z * Z / 2:
            inner = middle
        else:
            outer = middle
    return ELO * (inner + outer) / 4


def test_the_bounds_are_where_the_profile_falls_by_the_chi_square_quantile(monkeypatch):
    """Two bots, a won 9 of 10: the profile of a's strength (the common level maximised out)
    falls by z^2 / 2 at bounds found here by bisection; the fit's bounds are those, and they
    are not symmetric (a strength that wins nearly everything is pinned less upwards), as
    a Wald interval would be."""
    games = [duel(i, "a", "b") for i in range(9)] + [duel(9, "b", "a")]
    design = Design(games, ["a", "b"])
    theta, log_scale = design.fit_scaled()
    best = float(theta[0] - theta[1])
    with_priors = strength_sd(design, theta, log_scale, games_only=False)
    assert with_priors is not None
    monkeypatch.setattr(profiled, "_QUADRATIC", 0.0)      # every bound profiled
    bounds = profiled.profile_bounds(design, theta, log_scale, with_priors, Z)
    assert bounds is not None
    low, high = bounds
    want_low, want_high = duel_bound(9, 1, best, -1.0), duel_bound(9, 1, best, 1.0)
    assert low[0] == pytest.approx(want_low, abs=1e-4)
    assert high[0] == pytest.approx(want_high, abs=1e-4)
    assert low[1] == pytest.approx(-want_high, abs=1e-4)   # b's is a's mirrored
    point = ELO * best / 2
    assert high[0] - point > 1.2 * (point - low[0])
    # the reported interval has that shape at the games' width
    reported, shown_low, shown_high = fit_with_interval(design, theta, log_scale)
    assert shown_low is not None and shown_high is not None
    assert reported[0] == pytest.approx(point)
    assert (shown_high[0] - point) / (point - shown_low[0]) == pytest.approx(
        (high[0] - point) / (point - low[0]))
    games_sd = strength_sd(design, theta, log_scale)
    assert games_sd is not None
    assert (shown_high[0] - shown_low[0]) / (high[0] - low[0]) == pytest.approx(
        games_sd[0] / with_priors[0])


def test_a_near_parabola_takes_one_newton_step_to_the_profiled_bound(monkeypatch):
    """Leagues of 5 bots x 300 games at tables of 2-5: the bounds from one Newton step on
    the objective's drop (where it is a parabola to within `_QUADRATIC`) are the profiled
    ones to within 2% of a standard error (1.7% at most in these six leagues; 9% when the
    step took the strength at the parabola's bound to be where it aimed, which the scales'
    curvature moves by a few Elo); each holds its strength."""
    names = [f"b{i}" for i in range(5)]
    real = profiled._profile_bound
    stepped_bounds = 0
    calls: list[int] = []

    def counted(*args):
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(profiled, "_profile_bound", counted)
    for seed in range(11, 17):
        rng = np.random.default_rng(seed)
        games = synthetic_league(rng, np.linspace(-1.0, 1.0, 5), 300, (2, 3, 4, 5),
                                 {2: 1.0, 3: 0.5, 4: 0.4, 5: 0.3})
        design = Design(games, names)
        theta, log_scale = design.fit_scaled()
        with_priors = strength_sd(design, theta, log_scale, games_only=False)
        assert with_priors is not None
        calls.clear()
        monkeypatch.setattr(profiled, "_QUADRATIC", 0.05)
        stepped = profiled.profile_bounds(design, theta, log_scale, with_priors, Z)
        stepped_bounds += 10 - len(calls)
        calls.clear()
        monkeypatch.setattr(profiled, "_QUADRATIC", -1.0)       # every bound profiled
        exact = profiled.profile_bounds(design, theta, log_scale, with_priors, Z)
        assert stepped is not None and exact is not None
        assert len(calls) == 10
        for mine, want in zip(stepped, exact, strict=True):
            assert np.max(np.abs(mine - want) / with_priors) < 0.02
        point = fit_with_interval(design, theta, log_scale)[0]
        assert np.all(stepped[0] < point) and np.all(point < stepped[1])
    assert stepped_bounds >= 20      # most of the 60 bounds took the step


def test_the_intervals_are_order_free_and_seeded():
    """The same games in another order give bit-identical intervals."""
    rng = np.random.default_rng(3)
    names = [f"b{i}" for i in range(6)]
    games = synthetic_league(rng, np.linspace(-1.5, 1.5, 6), 20, (2, 3, 4, 5),
                             {2: 1.0, 3: 0.4, 4: 0.35, 5: 0.3})
    first = standings(games, names, seed=5, resamples=10)
    again = standings(games[::-1], names, seed=5, resamples=10)
    assert (first.low, first.high) == (again.low, again.high)
    for bot in names:
        assert first.low[bot] < first.strength[bot] < first.high[bot]


# ---------------------------------------------------------------- the held fits by components

def dense_step(held: profiled._Held, y: np.ndarray, s: float) -> np.ndarray:
    """The held fit's Newton step as profiled.py took it before blocks.py (the slow reference):
    the Hessian in y formed densely as C^T H C over every bot, then plackett's `_ascent`."""
    f, n, i = held.f, held.f.n, held.i
    x = held.x(y, s)
    grad, info = f.newton(x)
    inverse_gain = held.k / f.gain(x)
    chain = np.zeros((len(f.w) + n, len(f.w) + n - 1))
    chain[held.others, np.arange(n - 1)] = 1.0
    chain[n:, n - 1:] = np.eye(len(f.w))
    chain[i, :n - 1] = held.a
    chain[i, n - 1:] = -s * inverse_gain * f.w
    hessian = chain.T @ info @ chain
    hessian[n - 1:, n - 1:] -= grad[i] * s * inverse_gain * np.outer(f.w, f.w)
    return _ascent(chain.T @ grad, hessian)


def league_fit(bots: int, per_bot: float, sizes: tuple[int, ...], seed: int):
    """A synthetic league's design, fit and standard errors with the priors."""
    rng = np.random.default_rng(seed)
    games = synthetic_league(rng, np.linspace(-1.5, 1.5, bots), per_bot, sizes,
                             {2: 1.0, 3: 0.5, 4: 0.4, 5: 0.3})
    design = Design(games, [f"b{i}" for i in range(bots)])
    theta, log_scale = design.fit_scaled()
    with_priors = strength_sd(design, theta, log_scale, games_only=False)
    assert with_priors is not None
    return games, design, theta, log_scale, with_priors


#: profile_bounds of three small leagues as the code before blocks.py computed them (commit
#: e742e89): 12 bots in 3 games of 4 (three components), 10 bots at tables of 2-5 (the scales
#: held fits), 8 bots at tables of 2 and 3
BEFORE = {
    (12, 1, (4,), 2): (
        [-687.402513, -307.24531, -421.07336, -687.402513, -307.24531, -421.07336, -421.07336,
         -307.24531, -220.965662, -220.965662, -687.402513, -220.965662],
        [160.97559, 436.359738, 289.571043, 160.97559, 436.359738, 289.571043, 289.571043,
         436.359738, 687.678825, 687.678825, 160.97559, 687.678825]),
    (10, 2, (2, 3, 4, 5), 5): (
        [-934.17549, -418.942225, -326.173866, -437.146011, -330.917836, -163.77364,
         -301.262282, -161.845283, -178.761191, -176.819573],
        [-0.362249, 212.669655, 215.347688, 153.078784, 317.879863, 644.898367, 385.877351,
         484.397549, 390.152482, 622.522187]),
    (8, 6, (2, 3), 9): (
        [-747.437592, -1120.688371, -515.036732, -406.23888, -98.688818, -254.560682,
         -270.343579, -81.913671],
        [67.830993, 77.220862, 266.858828, 424.310417, 692.198732, 509.408372, 538.155888,
         743.396056]),
}


@pytest.mark.parametrize("league", sorted(BEFORE))
def test_the_bounds_are_the_ones_before_the_held_fits_were_solved_by_components(league):
    """The same leagues give the bounds the dense held fits gave (to 1e-5 Elo; they agree
    to about 1e-11)."""
    _, design, theta, log_scale, with_priors = league_fit(*league)
    bounds = profiled.profile_bounds(design, theta, log_scale, with_priors, Z)
    assert bounds is not None
    want_low, want_high = BEFORE[league]
    assert bounds[0] == pytest.approx(want_low, abs=1e-5)
    assert bounds[1] == pytest.approx(want_high, abs=1e-5)


@pytest.mark.parametrize("per_bot", [1, 2])
def test_a_held_step_is_the_dense_newton_step(per_bot, monkeypatch):
    """At points along the held fits of a 40-bot league at tables of 2-5 (joint scales), the
    step by components is the dense reduced Newton step, damped or not: a game per bot (small
    components, the damped steps by components too) and two (one component of most bots)."""
    _, design, theta, log_scale, with_priors = league_fit(40, per_bot, (2, 3, 4, 5), 1)
    objective = profiled._Objective(design)
    real = profiled._Held._damped
    damped: list[bool] = []

    def counted(*args):
        found = real(*args)
        damped.append(found is not None)
        return found

    monkeypatch.setattr(profiled._Held, "_damped", counted)
    x0 = objective.pack(theta, log_scale)
    point = objective.reported(x0)[0]
    compared = 0
    for i in (0, 7, 19, 33):
        held = profiled._Held(objective, i)
        for s in (point[i] - 2.5 * with_priors[i], point[i] + 1.5 * with_priors[i]):
            y = np.delete(x0, i)

            def value(v: np.ndarray, s: float = s, held: profiled._Held = held) -> float:
                return held.f.value(held.x(v, s))

            current = value(y)
            for _ in range(3):       # the first steps of the held fit, from the fit's maximum
                mine, want = held.step(y, s), dense_step(held, y, s)
                assert np.allclose(mine, want, rtol=1e-7, atol=1e-9)
                compared += 1
                y, current, _, _ = Design._line_search(current, value, y, want)
    assert compared == 24
    assert any(damped) == (per_bot == 1)     # damped steps by components, where small


def test_a_league_of_200_bots_that_played_a_game_each_gets_its_bounds():
    """200 bots in 50 games of 4 (the league that ran for minutes at its end): every bound is
    profiled and finishes; a subset agrees with the dense held fits, and the standings hold
    every strength inside its interval."""
    games, design, theta, log_scale, with_priors = league_fit(200, 1, (4,), 1)
    assert len(games) == 50
    profiled_bounds: list[tuple[int, float]] = []
    real = profiled._profile_bound

    def counted(*args):
        profiled_bounds.append((args[1], float(np.sign(args[5]))))
        return real(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profiled, "_profile_bound", counted)
        bounds = profiled.profile_bounds(design, theta, log_scale, with_priors, Z)
    assert bounds is not None
    assert len(profiled_bounds) >= 300          # nearly every bound of 200 bots
    objective = profiled._Objective(design)
    x0 = objective.pack(theta, log_scale)
    f0 = objective.value(x0)
    point = objective.reported(x0)[0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profiled._Held, "step", dense_step)
        for i, side in profiled_bounds[::40]:           # 9 of them, both sides
            want = profiled._profile_bound(objective, i, x0, f0, point[i],
                                           side * Z * with_priors[i], Z * Z / 2)
            assert want is not None
            assert bounds[0 if side < 0 else 1][i] == pytest.approx(want, abs=1e-6)
    table = standings(games, design.bots, seed=1, resamples=10)
    for bot in design.bots:
        assert table.low[bot] < table.strength[bot] < table.high[bot]


def test_components_are_the_bots_that_shared_tables():
    """a-b met, b-c met (one component), d-e-f met, g played no game."""
    games = [PlayedGame(0, ("a", "b"), (1, 2), (0, 0), (False, False), ({}, {}), ((), ())),
             PlayedGame(1, ("c", "b"), (1, 1), (0, 0), (False, False), ({}, {}), ((), ())),
             PlayedGame(2, ("f", "e", "d"), (3, 1, 2), (0, 0, 0), (False, True, False),
                        ({}, {}, {}), ((), (), ()))]
    design = Design(games, ["a", "b", "c", "d", "e", "f", "g"])
    found = sorted(sorted(design.bots[i] for i in row)
                   for rows in components(design) for row in rows)
    assert found == [["a", "b", "c"], ["d", "e", "f"], ["g"]]


def test_the_block_solver_solves_and_refuses_what_is_not_positive_definite():
    """A strength block of components (sizes 1, 3, 20: the last beyond the batch) bordered by
    two scales: the solve is numpy's; a block or a Schur complement that is not positive
    definite gives None."""
    rng = np.random.default_rng(4)
    groups = [np.array([[0]]), np.array([[1, 5, 2]]), np.arange(3, 24).reshape(1, 21)[:, 1:]]
    groups[2] = np.setdiff1d(np.arange(24), [0, 1, 5, 2])[None, :]
    n = 24
    info = np.zeros((n + 2, n + 2))
    for rows in groups:
        for row in rows:
            square = rng.normal(size=(len(row), len(row)))
            info[np.ix_(row, row)] = square @ square.T + len(row) * np.eye(len(row))
    info[:n, n:] = rng.normal(size=(n, 2)) * 0.3
    info[n:, :n] = info[:n, n:].T
    info[n:, n:] = np.diag([30.0, 40.0])
    rhs = rng.normal(size=(n + 2, 2))
    solver = BlockSolver(groups, n)
    assert len(solver.large) == 1
    solved = solver.solve(info, rhs)
    assert solved is not None
    assert np.allclose(solved, np.linalg.solve(info, rhs))
    scales_not = info.copy()
    scales_not[n + 1, n + 1] = -1.0
    assert solver.solve(scales_not, rhs) is None
    block_not = info.copy()
    block_not[5, 5] = -50.0
    assert solver.solve(block_not, rhs) is None

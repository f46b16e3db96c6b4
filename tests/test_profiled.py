"""Profile-likelihood bounds of the strengths (referee/ratings/profiled.py), on leagues whose
answer is known."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from referee.ratings import profiled
from referee.ratings.intervals import fit_with_interval, standings
from referee.ratings.plackett import ELO, Design, strength_sd
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

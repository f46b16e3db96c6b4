"""The gauntlet's sequential test: is the candidate better than the baseline?

Candidate and baseline play *pairs* of games: the same table, opponents, seats and seed, with
the candidate in one game and the baseline in its place in the other (the free-for-all analogue
of the game pairs fastchess plays with colours reversed). Each game gives the tested bot a
**score**: the share of its opponents it finished ahead of, a shared place counting half
(1 = first alone, 0 = last alone; forfeits finish last). A pair gives the difference
D = candidate's score - baseline's score, in -1..1.

`delta` is in Elo on the scale of the tables played: a candidate `delta` better finishes ahead
of a given opponent with odds 10 ** (delta / 400) times the baseline's (the global fit's
meaning of a gap at that table size). With the baseline's score s (estimated from its games,
shrunk towards 1/2 by one game), such a candidate's expected score is
L(logit(s) + delta * ln(10) / 400), L the logistic function, so the gain in score to detect is

    d = L(logit(s) + delta * ln(10) / 400) - s.

(Exact when the opponents are equally strong; an approximation otherwise, measured in
bench/fairness.py.) The test is a generalised sequential probability ratio test (GSPRT) on the
mean of D, H0: mean D = 0 (no better) against H1: mean D = d, with the *empirical likelihood*
ratio: each hypothesis gets the distribution, on the values D has taken, that is most likely
under its mean (the multinomial fit fishtest makes of its pentanomial game pairs):

    LLR = max_l sum log(1 + l D) - max_l sum log(1 + l (D - d))

Two pseudo-pairs, D = -1 and D = +1 with weight 1/2 each, keep both hypotheses possible from
the first pair. A normal likelihood (one variance for both hypotheses, as used before, or a
variance per hypothesis) calls equal bots better more often than alpha (bench/fairness.py
prints both): the differences of a multi-player game are far from normal (many exact zeros,
a few large jumps). The test stops with *better* when LLR >= log(1 / alpha) and *not better* when
LLR <= log(beta) (Ville's bounds; Wald's log((1 - beta) / alpha) allows up to
alpha / (1 - beta)), and otherwise runs until the budget (*inconclusive*). No decision is
taken before `min_pairs` pairs. The reported interval, mean +- 1.96 sd / sqrt(n), is the usual
normal approximation (after a sequential stop it is slightly optimistic). The measured error
rates are in bench/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

BETTER, NOT_BETTER, INCONCLUSIVE = "better", "not better", "inconclusive at the budget"
TEST_NAME = "empirical-likelihood GSPRT, delta in Elo"   # stored with a gauntlet
_PER_ELO = math.log(10) / 400    # theta units per Elo point


@dataclass(frozen=True)
class SprtParams:
    """The test's parameters (documented in docs/ratings.md)."""

    delta: float = 50.0        # smallest gain worth detecting, in Elo on the table's scale
    alpha: float = 0.05        # false "better" rate
    beta: float = 0.05         # missed-gain rate at delta
    max_games: int = 4000      # budget: candidate and baseline games together
    min_pairs: int = 20        # no decision before this many pairs

    def __post_init__(self) -> None:
        if not 0 < self.delta <= 1000:
            raise ValueError(f"delta must be in (0, 1000] Elo, got {self.delta}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {getattr(self, name)}")
        if self.max_games < 2 or self.min_pairs < 2:
            raise ValueError("max_games and min_pairs must be at least 2")

    @property
    def lower(self) -> float:
        """The LLR at or below which the test says *not better*: log(beta) (Ville's
        inequality bounds the chance of reaching it under H1 by beta)."""
        return math.log(self.beta)

    @property
    def upper(self) -> float:
        """The LLR at or above which the test says *better*: log(1 / alpha), not Wald's
        log((1 - beta) / alpha), whose error rate may reach alpha / (1 - beta)."""
        return math.log(1 / self.alpha)

    @property
    def max_pairs(self) -> int:
        """The budget in pairs."""
        return self.max_games // 2

    def score_gain(self, baseline_score: float) -> float:
        """The score gain of a candidate `delta` Elo better than a baseline scoring
        `baseline_score` (0 < score < 1)."""
        return logistic(logit(baseline_score) + self.delta * _PER_ELO) - baseline_score

    def to_dict(self) -> dict[str, Any]:
        """As plain data (stored with a gauntlet)."""
        return asdict(self)


@dataclass(frozen=True)
class SprtState:
    """The test after `pairs` pairs."""

    pairs: int
    mean: float                 # estimated score difference per game
    sd: float                   # sample standard deviation of the pair differences
    llr: float
    verdict: str | None         # BETTER, NOT_BETTER, INCONCLUSIVE, or None while running
    baseline_score: float = 0.5  # the baseline's mean score (shrunk towards 1/2 by one game)
    gain: float = 0.0           # the score gain H1 stands for at that baseline score

    @property
    def interval(self) -> tuple[float, float]:
        """95% interval of the mean difference (normal approximation)."""
        half = 1.96 * self.sd / math.sqrt(self.pairs) if self.pairs else math.inf
        return self.mean - half, self.mean + half

    @property
    def elo(self) -> float:
        """The estimated gain in Elo on the table's scale (from the mean scores)."""
        return elo_gap(self.baseline_score + self.mean, self.baseline_score)

    def to_dict(self) -> dict[str, Any]:
        """As plain data."""
        low, high = self.interval
        return {**asdict(self), "low": low, "high": high, "elo": self.elo}


def logistic(x: float) -> float:
    """1 / (1 + e^-x)."""
    return 1 / (1 + math.exp(-x))


def logit(p: float) -> float:
    """The inverse of `logistic`."""
    return math.log(p / (1 - p))


def elo_gap(score: float, baseline_score: float) -> float:
    """Elo gap between a bot scoring `score` and one scoring `baseline_score` against the same
    opponents (scores clipped into (0.001, 0.999))."""
    def clip(p: float) -> float:
        return min(0.999, max(0.001, p))

    return (logit(clip(score)) - logit(clip(baseline_score))) / _PER_ELO


def seat_score(place_groups: Sequence[Sequence[int]], seat: int) -> float:
    """The score of `seat` in a game given its finishing groups (seat numbers, best first):
    the share of the other seats it finished ahead of, shared places counting half."""
    others = sum(len(group) for group in place_groups) - 1
    ahead = 0.0
    for position, group in enumerate(place_groups):
        if seat in group:
            tied = len(group) - 1
            behind = sum(len(g) for g in place_groups[position + 1:])
            ahead = behind + tied / 2
            break
    else:
        raise ValueError(f"seat {seat} is not in the game")
    return ahead / others if others else 0.5


class SequentialTest:
    """The test, updated one pair at a time (the pair differences are kept as counts of their
    distinct values: a game's scores take few values, so each update is cheap)."""

    def __init__(self, params: SprtParams) -> None:
        self.params = params
        self.counts: dict[float, float] = {-1.0: 0.5, 1.0: 0.5}   # the pseudo-pairs
        self.n = 0
        self.total = self.square = self.base = 0.0
        self.current = SprtState(0, 0.0, 0.0, 0.0, None)
        self._lambdas = [0.0, 0.0]   # warm starts of the two inner maximisations

    def add(self, candidate: float, baseline: float) -> SprtState:
        """The test after one more pair; once decided, further pairs change nothing."""
        if self.current.verdict is not None:
            return self.current
        params = self.params
        diff = candidate - baseline
        key = round(diff, 9)
        self.counts[key] = self.counts.get(key, 0.0) + 1.0
        self.n += 1
        n = self.n
        self.total += diff
        self.square += diff * diff
        self.base += baseline
        mean = self.total / n
        var = max(0.0, (self.square - n * mean * mean) / (n - 1)) if n > 1 else 0.0
        baseline_score = (self.base + 0.5) / (n + 1)
        gain = params.score_gain(baseline_score)
        values = list(self.counts.items())
        at_zero, self._lambdas[0] = _divergence(values, 0.0, self._lambdas[0])
        at_gain, self._lambdas[1] = _divergence(values, gain, self._lambdas[1])
        llr = at_zero - at_gain
        verdict = None
        if n >= params.min_pairs:
            if llr >= params.upper:
                verdict = BETTER
            elif llr <= params.lower:
                verdict = NOT_BETTER
        if verdict is None and n >= params.max_pairs:
            verdict = INCONCLUSIVE
        self.current = SprtState(n, mean, math.sqrt(var), llr, verdict, baseline_score, gain)
        return self.current


def _divergence(values: list[tuple[float, float]], mu: float,
                start: float) -> tuple[float, float]:
    """max over lambda of sum w log(1 + lambda (x - mu)): minus the empirical log-likelihood
    ratio of mean `mu` (0 at the sample mean, growing as mu moves away). Damped Newton on a
    concave function of one variable; returns the maximum and the maximiser."""
    z = [(w, x - mu) for x, w in values]

    def value(lam: float) -> float | None:
        total = 0.0
        for w, d in z:
            inner = 1 + lam * d
            if inner <= 0:
                return None
            total += w * math.log(inner)
        return total

    lam = start
    current = value(lam)
    if current is None:
        lam, current = 0.0, 0.0
    for _ in range(50):
        grad = hess = 0.0
        for w, d in z:
            r = d / (1 + lam * d)
            grad += w * r
            hess -= w * r * r
        if hess == 0 or abs(grad) < 1e-12:
            break
        step = -grad / hess
        while True:
            trial = value(lam + step)
            if trial is not None and trial >= current - 1e-15:
                break
            step /= 2
            if abs(step) < 1e-15:
                trial = None
                break
        if trial is None:
            break
        lam, current = lam + step, trial
        if abs(step) < 1e-10:
            break
    return current, lam


def trail(pairs: Sequence[tuple[float, float]], params: SprtParams) -> list[SprtState]:
    """The test after each pair (candidate score, baseline score), in order, up to the
    verdict."""
    test = SequentialTest(params)
    states = []
    for candidate, baseline in pairs:
        states.append(test.add(candidate, baseline))
        if states[-1].verdict is not None:
            break
    return states


def state(pairs: Sequence[tuple[float, float]], params: SprtParams) -> SprtState:
    """The test over the pairs taken in order: it stops at the first pair (from `min_pairs`
    on) whose LLR crosses a bound, so later pairs never change a verdict."""
    states = trail(pairs, params)
    return states[-1] if states else SprtState(0, 0.0, 0.0, 0.0, None)

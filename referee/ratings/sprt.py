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
bench/fairness.py.)

The test is a sequential test *by betting* (Shafer; Waudby-Smith and Ramdas): two gamblers
start with 1 each and, before every pair, stake a share lambda (chosen from the pairs before it
only) of their wealth, one on the candidate being better and one on it not being better by d:

    W_better     = prod (1 + lambda_i D_i)
    W_not_better = prod (1 + lambda_i (d_i - D_i))

If the candidate is no better (mean D at most 0, whatever the distribution of D, however noisy
and whatever its table sizes), W_better is a nonnegative supermartingale starting at 1, and
Ville's inequality bounds the chance that it ever reaches 1/a by a; likewise W_not_better for a
candidate better by d. So the test says *better* when W_better reaches 1 / (margin * alpha) and
*not better* when W_not_better reaches 1 / (margin * beta): wrong at most margin * alpha and
margin * beta of the time, at any stopping time, with no normal approximation. margin = 0.7
keeps the measured rates below alpha and beta with room to spare for the luck of a finite
measurement (2,000 simulated gauntlets estimate a rate of 0.05 only to +-0.01) and for the
approximation in d. lambda_i = min(1/2, d_i / (v_i + d_i^2)), v_i the variance of the earlier
differences (with one pseudo-pair of variance 1/4), is the bet that grows fastest when the
candidate is better by d; the test then needs about as many pairs as a likelihood-ratio test.
The GSPRTs tried before (a normal approximation with one variance for both hypotheses, a normal
profile likelihood, an empirical likelihood) have no such guarantee and called equal bots
better at or above alpha (bench/fairness.py prints two of them beside this test). The evidence
printed is log W. The test runs until the budget (*inconclusive*); no decision is taken before
`min_pairs` pairs. The reported interval, mean +- 1.96 sd / sqrt(n), is the usual normal
approximation (after a sequential stop it is slightly optimistic). The measured error rates are
in bench/README.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

BETTER, NOT_BETTER, INCONCLUSIVE = "better", "not better", "inconclusive at the budget"
TEST_NAME = "test by betting, delta in Elo"   # stored with a gauntlet
_PER_ELO = math.log(10) / 400    # theta units per Elo point


@dataclass(frozen=True)
class SprtParams:
    """The test's parameters (documented in docs/ratings.md)."""

    delta: float = 50.0        # smallest gain worth detecting, in Elo on the table's scale
    alpha: float = 0.05        # false "better" rate
    beta: float = 0.05         # missed-gain rate at delta
    max_games: int = 4000      # budget: candidate and baseline games together
    min_pairs: int = 20        # no decision before this many pairs
    margin: float = 0.7        # the test decides at margin * alpha and margin * beta

    def __post_init__(self) -> None:
        if not 0 < self.delta <= 1000:
            raise ValueError(f"delta must be in (0, 1000] Elo, got {self.delta}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {getattr(self, name)}")
        if self.max_games < 2 or self.min_pairs < 2:
            raise ValueError("max_games and min_pairs must be at least 2")
        if not 0 < self.margin <= 1:
            raise ValueError(f"margin must be in (0, 1], got {self.margin}")

    @property
    def better_at(self) -> float:
        """The evidence (log wealth) at which the test says *better*."""
        return math.log(1 / (self.margin * self.alpha))

    @property
    def not_better_at(self) -> float:
        """The evidence at which the test says *not better*."""
        return math.log(1 / (self.margin * self.beta))

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
    evidence: float             # log W_better: decides *better* at params.better_at
    verdict: str | None         # BETTER, NOT_BETTER, INCONCLUSIVE, or None while running
    against: float = 0.0        # log W_not_better: decides *not better* at not_better_at
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
    """The test, updated one pair at a time."""

    def __init__(self, params: SprtParams) -> None:
        self.params = params
        self.n = 0
        self.total = self.square = self.base = 0.0
        self.evidence = self.against = 0.0
        self.current = SprtState(0, 0.0, 0.0, 0.0, None)

    def add(self, candidate: float, baseline: float) -> SprtState:
        """The test after one more pair; once decided, further pairs change nothing."""
        if self.current.verdict is not None:
            return self.current
        params = self.params
        # the bet, from the earlier pairs only
        n = self.n
        mean = self.total / n if n else 0.0
        var = (self.square - n * mean * mean + 0.25) / (n + 1)
        gain = params.score_gain((self.base + 0.5) / (n + 1))
        stake = min(0.5, gain / (var + gain * gain))
        diff = candidate - baseline
        self.evidence += math.log1p(stake * diff)
        self.against += math.log1p(stake * (gain - diff))
        self.n = n = n + 1
        self.total += diff
        self.square += diff * diff
        self.base += baseline
        mean = self.total / n
        sd = math.sqrt(max(0.0, (self.square - n * mean * mean) / (n - 1))) if n > 1 else 0.0
        verdict = None
        if n >= params.min_pairs:
            if self.evidence >= params.better_at:
                verdict = BETTER
            elif self.against >= params.not_better_at:
                verdict = NOT_BETTER
        if verdict is None and n >= params.max_pairs:
            verdict = INCONCLUSIVE
        baseline_score = (self.base + 0.5) / (n + 1)
        self.current = SprtState(n, mean, sd, self.evidence, verdict, against=self.against,
                                 baseline_score=baseline_score,
                                 gain=params.score_gain(baseline_score))
        return self.current


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

"""The gauntlet's sequential test: is the candidate better than the baseline?

Candidate and baseline play *pairs* of games: the same table, opponents, seats and seed, with
the candidate in one game and the baseline in its place in the other (the free-for-all analogue
of the game pairs fastchess plays with colours reversed). Each game gives the tested bot a
**score**: the share of its opponents it finished ahead of, a shared place counting half
(1 = first alone, 0 = last alone; forfeits finish last). A pair gives the difference
D = candidate's score - baseline's score, in -1..1. Pairing removes most of the dice luck.

The test is a generalised sequential probability ratio test (GSPRT) on the mean of D with the
normal approximation fishtest uses for its pentanomial test:

    H0: mean D = 0 (no better)      H1: mean D = delta (better by the smallest gain worth having)
    LLR = n * delta * (2 * mean - delta) / (2 * var)

after n pairs with mean `mean` and sample variance `var` (never below `var_floor`, so that a
run of identical results, as a deterministic bot against itself gives, still needs evidence).
The test stops with *better* when LLR >= log((1 - beta) / alpha), with *not better* when
LLR <= log(beta / (1 - alpha)), and otherwise runs until the game budget (*inconclusive*). No
decision is taken before `min_pairs` pairs. alpha is the chance of calling an equal bot better,
beta the chance of missing a gain of `delta`. The reported interval, mean +- 1.96 sd / sqrt(n),
is the usual normal approximation (after a sequential stop it is slightly optimistic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

BETTER, NOT_BETTER, INCONCLUSIVE = "better", "not better", "inconclusive at the budget"


@dataclass(frozen=True)
class SprtParams:
    """The test's parameters (documented in docs/ratings.md)."""

    delta: float = 0.1         # smallest score gain worth detecting (10% of opponents)
    alpha: float = 0.05        # false "better" rate
    beta: float = 0.05         # missed-gain rate at delta
    max_games: int = 1000      # budget: candidate and baseline games together
    min_pairs: int = 20        # no decision before this many pairs
    var_floor: float = 0.01    # smallest variance of D assumed (sd 0.1)

    def __post_init__(self) -> None:
        if not 0 < self.delta <= 1:
            raise ValueError(f"delta must be in (0, 1], got {self.delta}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, got {getattr(self, name)}")
        if self.max_games < 2 or self.min_pairs < 2:
            raise ValueError("max_games and min_pairs must be at least 2")
        if self.var_floor <= 0:
            raise ValueError("var_floor must be positive")

    @property
    def lower(self) -> float:
        """The LLR at or below which the test says *not better*."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which the test says *better*."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def max_pairs(self) -> int:
        """The budget in pairs."""
        return self.max_games // 2

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

    @property
    def interval(self) -> tuple[float, float]:
        """95% interval of the mean difference (normal approximation)."""
        half = 1.96 * self.sd / math.sqrt(self.pairs) if self.pairs else math.inf
        return self.mean - half, self.mean + half

    def to_dict(self) -> dict[str, Any]:
        """As plain data."""
        low, high = self.interval
        return {**asdict(self), "low": low, "high": high}


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


def state(diffs: Sequence[float], params: SprtParams) -> SprtState:
    """The test over the pair differences `diffs` taken in order: it stops at the first pair
    (from `min_pairs` on) whose LLR crosses a bound, so later pairs never change a verdict."""
    total = square = 0.0
    current = SprtState(0, 0.0, 0.0, 0.0, None)
    for n, diff in enumerate(diffs, start=1):
        if n > params.max_pairs:
            break
        total += diff
        square += diff * diff
        current = _after(n, total, square, params)
        if current.verdict is not None:
            return current
    return current


def _after(n: int, total: float, square: float, params: SprtParams) -> SprtState:
    mean = total / n
    var = max(0.0, (square - n * mean * mean) / (n - 1)) if n > 1 else 0.0
    llr = n * params.delta * (2 * mean - params.delta) / (2 * max(var, params.var_floor))
    verdict = None
    if n >= params.min_pairs:
        if llr >= params.upper:
            verdict = BETTER
        elif llr <= params.lower:
            verdict = NOT_BETTER
    if verdict is None and n >= params.max_pairs:
        verdict = INCONCLUSIVE
    return SprtState(n, mean, math.sqrt(var), llr, verdict)

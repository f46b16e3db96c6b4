"""The gauntlet's sequential test: is the candidate better than the baseline?

Candidate and baseline play *pairs* of games: the same table, opponents, seats and seed, with
the candidate in one game and the baseline in its place in the other (the free-for-all analogue
of the game pairs fastchess plays with colours reversed). Each game gives the tested bot a
**score**: the share of its opponents it finished ahead of, a shared place counting half
(1 = first alone, 0 = last alone; forfeits finish last). A pair gives the difference
D = candidate's score - baseline's score, in -1..1.

`delta` is in the Elo of the league table (docs/ratings.md, "Table sizes"): the Elo at the
typical table of a league playing the gauntlet's table sizes. Gaps at a table of k are that
times the size's scale, so `delta_by_size` turns delta into Elo at each size with the fixed
scales `TABLE_SCALES` (measured by bench/fairness.py; fixed rather than fitted from the
gauntlet's own games, which a gauntlet at one size could not fit and which would leave the
meaning of --delta unknown until the games are in). At a table of k, a candidate delta_k better
finishes ahead of a given opponent with odds 10 ** (delta_k / 400) times the baseline's (under
the Plackett-Luce model of the league table this holds whoever else is seated). So for pair i,
with the baseline's chance p_j of finishing ahead of each seated opponent j, the gain in score
to detect is the average over the seated opponents

    d_i = mean_j [ L(logit(p_j) + delta_k * ln(10) / 400) - p_j ],   L the logistic function.

(A score is the average over the opponents of finishing ahead of each, so this is the
candidate's expected gain whatever the field's spread; only its estimates p_j are
approximate, measured in bench/fairness.py.) p_j comes from one number per opponent, the
baseline's log-odds r_j against it on the league table's scale: at a table of k the log-odds
are r_j times delta_k / delta (the size's scale over the typical one). r_j is the maximum
likelihood estimate from the earlier games against j at every size (a shared place counting
half), the baseline's and the candidate's, the candidate's read as those of a bot delta better
(as the hypothesis bet on says they are), with one game finishing level as a prior; se_j its
standard error. The gain bet against is, per opponent, the smaller of the gains at r_j -+
CAUTION * se_j (the stake is chosen at r_j itself). Why: an estimate shrunk towards 1/2, or
merely noisy, overstates the gain early on (the gain is largest near an even chance and,
against opponents far apart, convex in the log-odds), and a gambler betting on an overstated
gain wins even against a candidate exactly delta better: estimated from the baseline's games
alone, at the estimate, a candidate 50 Elo better was called not better 0.046 of the time at
--players 2-5 against a field of +-300 Elo (0.077 with one estimate per opponent and size).

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
approximation in d. lambda_i = min(3/4, d_i / (v_i + d_i^2)), v_i the variance of the earlier
differences (with one pseudo-pair of variance 1/4), is the bet that grows fastest when the
candidate is better by d (any stake below 1 keeps both wealths positive; the cap only binds
when the pairs barely vary, as for identical bots, which 3/4 settles in fewer pairs than 1/2);
the test then needs about as many pairs as a likelihood-ratio test.
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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

BETTER, NOT_BETTER, INCONCLUSIVE = "better", "not better", "inconclusive at the budget"
# stored with a gauntlet: a gauntlet made with another test cannot be resumed
TEST_NAME = ("test by betting, delta in league-table Elo, gain from the seated opponents, one "
             "chance per opponent over table sizes from both bots' games, cautious gain")
_PER_ELO = math.log(10) / 400    # theta units per Elo point
#: Each table size's scale against tables of 2 (bench/fairness.py, "Table sizes": 600 games at
#: each size of five greedy bots with 0-100% random moves). Larger tables use the scale of 5.
#: Also the centre of the league fit's prior on its scales (plackett.py, CENTRED_SCALE_PRIOR).
TABLE_SCALES = {2: 1.0, 3: 0.40, 4: 0.35, 5: 0.29}
_PRIOR_GAMES = 1.0   # each estimate p_j starts from one game finishing level
CAUTION = 0.5       # standard errors of each chance's estimate the bet's gain is read off by
MAX_STAKE = 0.75    # the largest share of its wealth a gambler stakes on one pair (see above)


@dataclass(frozen=True)
class SprtParams:
    """The test's parameters (documented in docs/ratings.md)."""

    delta: float = 50.0        # smallest gain worth detecting, in league-table Elo
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
    gain: float = 0.0           # the score gain H1 stood for at the last pair (its d_i)

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


def scale_at(players: int) -> float:
    """The scale of gaps at tables of `players` against tables of 2 (`TABLE_SCALES`)."""
    return TABLE_SCALES[min(max(players, 2), max(TABLE_SCALES))]


def delta_by_size(delta: float, sizes: Sequence[int]) -> dict[int, float]:
    """`delta` in league-table Elo as Elo at each table size in `sizes` (one entry per pair
    of the schedule): the league table of these games reads strengths where the geometric
    mean of the scales over its games is 1 (docs/ratings.md, "Table sizes")."""
    if not sizes:
        return {}
    typical = math.exp(sum(math.log(scale_at(k)) for k in sizes) / len(sizes))
    return {k: delta * scale_at(k) / typical for k in sorted(set(sizes))}


def _shifted(x: float, shift: float) -> float:
    """The gain in the chance to finish ahead from log-odds `x` to `x + shift`."""
    return logistic(x + shift) - logistic(x)


def ahead_chance(elo: float) -> float:
    """The chance to finish ahead of an equal opponent for a bot `elo` better."""
    return logistic(elo * _PER_ELO)


@dataclass(frozen=True)
class Pair:
    """One pair of games: the table size, the tested seat's opponents, and what the candidate
    and the baseline made of each of them (1 finished ahead, 1/2 a shared place, 0 behind)."""

    players: int
    opponents: tuple[str, ...]
    candidate_results: tuple[float, ...]
    baseline_results: tuple[float, ...]

    @property
    def candidate(self) -> float:
        """The candidate's score: the share of its opponents it finished ahead of."""
        return _share(self.candidate_results)

    @property
    def baseline(self) -> float:
        """The baseline's score."""
        return _share(self.baseline_results)

    def swapped(self) -> Pair:
        """The pair with candidate and baseline exchanged."""
        return Pair(self.players, self.opponents, self.baseline_results, self.candidate_results)


def _share(results: tuple[float, ...]) -> float:
    return sum(results) / len(results) if results else 0.5


def seat_results(place_groups: Sequence[Sequence[int]], seat: int) -> dict[int, float]:
    """What `seat` made of each other seat given the finishing groups (seat numbers, best
    first): 1 finished ahead, 1/2 a shared place, 0 behind (their mean is `seat_score`)."""
    position = {s: rank for rank, group in enumerate(place_groups) for s in group}
    if seat not in position:
        raise ValueError(f"seat {seat} is not in the game")
    mine = position[seat]
    return {other: 1.0 if mine < rank else 0.5 if mine == rank else 0.0
            for other, rank in sorted(position.items()) if other != seat}


class SequentialTest:
    """The test, updated one pair at a time."""

    caution = CAUTION     # the gain bet against: at its estimate -+ this many standard errors
    from_both = True      # the baseline's chances estimated from the candidate's games too

    def __init__(self, params: SprtParams, delta_at: Mapping[int, float] | None = None) -> None:
        """`delta_at`: `params.delta` as Elo at each table size (`delta_by_size`); without it,
        `params.delta` at every size (right for a gauntlet of one size)."""
        self.params = params
        self.delta_at = dict(delta_at or {})
        self.n = 0
        self.total = self.square = self.base = 0.0
        self.evidence = self.against = 0.0
        # (opponent, size) -> [ahead, games] of the baseline, and of the candidate
        self.versus: dict[tuple[str, int], list[float]] = {}
        self.candidate_versus: dict[tuple[str, int], list[float]] = {}
        self._edges: dict[str, tuple[float, float]] = {}   # opponent -> `_edge`, until it plays
        self.current = SprtState(0, 0.0, 0.0, 0.0, None)

    def gain(self, pair: Pair) -> float:
        """d_i for `pair`: the score gain of a candidate delta better than the baseline against
        the opponents seated at its table, from the earlier pairs only, each opponent's at the
        cautious end of its estimate (`gains`)."""
        return self.gains(pair)[1]

    def gains(self, pair: Pair) -> tuple[float, float]:
        """The gain against the opponents seated at `pair`'s table at the estimates of the
        baseline's chances (the stake's), and cautious (the one bet against): for each
        opponent the smaller of the gains at its estimate -+ `caution` standard errors (the
        gain is largest near an even chance and falls off on both sides)."""
        factor = self._factor(pair.players)
        shift = factor * self.params.delta * _PER_ELO
        point = cautious = 0.0
        for opponent in pair.opponents:
            edge, se = self._edge(opponent)
            point += _shifted(factor * edge, shift)
            cautious += min(_shifted(factor * (edge - self.caution * se), shift),
                            _shifted(factor * (edge + self.caution * se), shift))
        seated = len(pair.opponents) or 1
        return point / seated, cautious / seated

    def _factor(self, players: int) -> float:
        """The scale of gaps at tables of `players` over the league table's (1 without
        `delta_at`)."""
        return self.delta_at.get(players, self.params.delta) / self.params.delta

    def _edge(self, opponent: str) -> tuple[float, float]:
        """The baseline's log-odds of finishing ahead of `opponent` on the league table's scale
        and its standard error: one number per opponent from the games at every table size (at
        a table of k the log-odds are this times the size's factor), fitted by maximum
        likelihood with one game finishing level at the league table's scale as a prior. With
        `from_both`, the candidate's results count too, read as those of a bot delta better
        (what the "not better" gambler stakes on: under that hypothesis they are), which halves
        the estimate's variance early on. Pooled over sizes so that a mix of sizes does not
        split the early pairs into many small cells, each shrunk towards 1/2."""
        if opponent in self._edges:
            return self._edges[opponent]
        offset = self.params.delta * _PER_ELO
        counts = [(self._factor(k), 0.0, ahead, games)
                  for (name, k), (ahead, games) in self.versus.items() if name == opponent]
        if self.from_both:
            counts += [(self._factor(k), offset, ahead, games)
                       for (name, k), (ahead, games) in self.candidate_versus.items()
                       if name == opponent]
        counts.append((1.0, 0.0, _PRIOR_GAMES / 2, _PRIOR_GAMES))
        edge = curve = 0.0
        for _ in range(100):          # Newton's method on a concave log-likelihood
            slope = curve = 0.0
            for a, shift, ahead, games in counts:
                p = logistic(a * (edge + shift))
                slope += a * (ahead - games * p)
                curve += a * a * games * p * (1 - p)
            step = max(-2.0, min(2.0, slope / curve))     # bounded: no overshooting far out
            edge += step
            if abs(step) < 1e-10:
                break
        self._edges[opponent] = (edge, 1 / math.sqrt(curve))
        return self._edges[opponent]

    def add(self, pair: Pair) -> SprtState:
        """The test after one more pair; once decided, further pairs change nothing."""
        if self.current.verdict is not None:
            return self.current
        params = self.params
        # the bet, from the earlier pairs only
        n = self.n
        mean = self.total / n if n else 0.0
        var = (self.square - n * mean * mean + 0.25) / (n + 1)
        point, gain = self.gains(pair)
        stake = min(MAX_STAKE, point / (var + point * point)) if point > 0 else 0.0
        diff = pair.candidate - pair.baseline
        self.evidence += math.log1p(stake * diff)
        self.against += math.log1p(stake * (gain - diff))
        self._record(pair)
        n = self.n
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
        self.current = SprtState(n, mean, sd, self.evidence, verdict, against=self.against,
                                 baseline_score=(self.base + 0.5) / (n + 1), gain=gain)
        return self.current

    def _record(self, pair: Pair) -> None:
        """Count the pair in the running sums and the baseline's results per opponent."""
        diff = pair.candidate - pair.baseline
        self.n += 1
        self.total += diff
        self.square += diff * diff
        self.base += pair.baseline
        for opponent, mine, theirs in zip(pair.opponents, pair.candidate_results,
                                          pair.baseline_results, strict=True):
            self._edges.pop(opponent, None)
            for versus, result in ((self.candidate_versus, mine), (self.versus, theirs)):
                counts = versus.setdefault((opponent, pair.players), [0.0, 0.0])
                counts[0] += result
                counts[1] += 1


def trail(pairs: Sequence[Pair], params: SprtParams,
          delta_at: Mapping[int, float] | None = None) -> list[SprtState]:
    """The test after each pair, in order, up to the verdict."""
    test = SequentialTest(params, delta_at)
    states = []
    for pair in pairs:
        states.append(test.add(pair))
        if states[-1].verdict is not None:
            break
    return states


def state(pairs: Sequence[Pair], params: SprtParams,
          delta_at: Mapping[int, float] | None = None) -> SprtState:
    """The test over the pairs taken in order: it stops at the first pair (from `min_pairs`
    on) whose evidence crosses a bound, so later pairs never change a verdict."""
    states = trail(pairs, params, delta_at)
    return states[-1] if states else SprtState(0, 0.0, 0.0, 0.0, None)

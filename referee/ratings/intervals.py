"""How sure the global fit is: seeded bootstrap intervals, rank ranges and separation.

The games are grouped into resampling units: one game each, or, under `--duplicate`, every
rotation of one table and seed together, so that the dice luck the rotations cancel stays
paired. A resample draws as many units as there are, with replacement (numpy's PCG64,
seeded one-way from the league's secret seed); the Plackett-Luce fit (plackett.py) is
repeated on each. A bot's rank range is the 2.5th..97.5th percentile of its rank over the
resamples. Its 95% interval is the profile-likelihood interval of its strength (profiled.py:
where the fit with that strength held has lost z^2 / 2 of its objective, on either side, so it
is asymmetric where the games are), each side's length times the games' standard error over
the one with the weak priors' curvature (plackett.py's `strength_sd`: the priors keep the fit
finite, they are no knowledge, and counting them made small leagues at mixed table sizes'
intervals too narrow). Where the objective is a parabola that is the strength plus or minus
1.96 standard errors from the games' curvature with the per-size scales profiled out; the
symmetric interval left a small league's strongest and weakest bots' truth beyond the outer
end far more often than beyond the inner one. A percentile interval of the bootstrap
undercovered where table sizes are mixed (the split between strengths and scales is skewed in
small leagues) and could even leave out the strength itself; this one always holds it, and
bench/fairness.py (section 5) measures its coverage in synthetic leagues of known strengths.
Two bots next to each other in the table are *separated* when their intervals do not overlap.

Not every bot fitted need be ranked: in a season a newer version retires the older one, which
keeps its games in the fit (its opponents' results against it count) but is no longer in the
table. `standings(ranked=...)` names the bots the table ranks; rank ranges (a bot's rank among
the ranked in each resample), the order and the separation of neighbours are over those alone,
while every bot is fitted and keeps its strength and interval.

A table that is looked at repeatedly (`--until-settled` checks after every block) would, at
95% per look, separate truly equal bots far more often than 5% of the time. For `looks` > 1
two neighbours are separated when their gap exceeds z standard deviations of its bootstrap
distribution, z = Phi^-1(1 - 0.05 / (2 looks)) (Bonferroni: the chance that any of the looks
separates two equal bots is at most 5%).

Units are put in a canonical order (by their games' content) before drawing, so the same games
give bit-identical results in any order, at any concurrency and after any resume.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from referee.ratings.plackett import (
    Design,
    SizeTest,
    canonical_key,
    canonical_order,
    curvature,
    sd_from_curvature,
    size_test,
    to_elo,
    typical,
)
from referee.ratings.profiled import profile_bounds
from referee.ratings.results import PlayedGame
from referee.util.seeds import keyed_seed

RESAMPLES = 300
LEVEL = 0.95


@dataclass
class Standings:
    """The global fit with its uncertainty. `order` holds the ranked bots, best first: those
    with games by strength (ties by name), then those without games by name. `unranked` holds
    the bots fitted but not ranked (retired versions), in the same manner; they have strengths
    and intervals but no rank range."""

    order: list[str]
    strength: dict[str, float | None]               # Elo scale, mean 0 over bots with games
    low: dict[str, float | None]                    # 95% interval
    high: dict[str, float | None]
    rank_low: dict[str, int | None]                 # best rank held at 95%
    rank_high: dict[str, int | None]                # worst rank held at 95%
    games: dict[str, int]                           # games that entered the fit, per bot
    resamples: int = RESAMPLES
    seed: int = 0
    ahead: dict[tuple[str, str], float] = field(default_factory=dict)  # P(a ahead of b)
    # bootstrap standard deviation of the gap between neighbours (upper, lower) in `order`
    gap_sd: dict[tuple[str, str], float] = field(default_factory=dict)
    looks: int = 1                                  # how often the table is checked
    # table size -> scale of the strengths there (plackett.py; geometric mean 1 over the games)
    scale: dict[int, float] = field(default_factory=dict)
    # bot -> table size -> games that entered the fit
    games_by_size: dict[str, dict[int, int]] = field(default_factory=dict)
    # the test of one scale per table size against free strengths per size (plackett.py)
    size_test: SizeTest | None = None
    unranked: list[str] = field(default_factory=list)

    def strength_at(self, bot: str, players: int) -> float | None:
        """`bot`'s strength at tables of `players` (its gaps to others at that size); None
        without games at that size."""
        value = self.strength[bot]
        if value is None or not self.games_by_size.get(bot, {}).get(players):
            return None
        return value * self.scale[players]

    @property
    def z(self) -> float | None:
        """The gap, in bootstrap standard deviations, that separates neighbours when the table
        is looked at more than once (None: one look, intervals that do not overlap)."""
        return look_z(self.looks) if self.looks > 1 else None

    def gap_z(self, upper: str, lower: str) -> float | None:
        """The gap between neighbours in bootstrap standard deviations (None without games)."""
        top, bottom = self.strength[upper], self.strength[lower]
        sd = self.gap_sd.get((upper, lower))
        if top is None or bottom is None or sd is None:
            return None
        return (top - bottom) / sd if sd > 0 else (0.0 if top == bottom else float("inf"))

    def separated(self, upper: str, lower: str) -> bool | None:
        """True when `upper` is separated from `lower` (see the module's docstring); None
        without games."""
        top, bottom = self.low[upper], self.high[lower]
        if top is None or bottom is None:
            return None
        z = self.z
        if z is None:
            return top > bottom
        gap = self.gap_z(upper, lower)
        return gap is not None and gap > z

    def separated_from_next(self) -> dict[str, bool | None]:
        """For each bot, whether it is separated from the next bot in `order` (None for the
        last one and for bots without games)."""
        result: dict[str, bool | None] = dict.fromkeys(self.order)
        for upper, lower in zip(self.order, self.order[1:], strict=False):
            result[upper] = self.separated(upper, lower)
        return result

    def unresolved(self) -> list[tuple[str, str]]:
        """Adjacent pairs (upper, lower) that are not separated at 95%."""
        return [(a, b) for a, b in zip(self.order, self.order[1:], strict=False)
                if not self.separated(a, b)]


def look_z(looks: int, level: float = LEVEL) -> float:
    """The z a gap must exceed at each of `looks` looks so that two equal bots are separated at
    any of them with a chance of at most 1 - `level` (Bonferroni)."""
    return NormalDist().inv_cdf(1 - (1 - level) / (2 * looks))


def resampling_units(games: Sequence[PlayedGame],
                     groups: Mapping[int, int] | None = None) -> list[list[PlayedGame]]:
    """The games grouped by `groups` (game index -> duplicate group; default: each game alone),
    in a canonical order that does not depend on the order or indexes of the games."""
    by_group: dict[int, list[PlayedGame]] = {}
    for game in games:
        key = groups.get(game.index, -1 - game.index) if groups else game.index
        by_group.setdefault(key, []).append(game)
    # a unit of one game (a league without duplicates) needs no sorting of its own; a unit's
    # key is the tuple of its games' keys (compared as the list of them was)
    units = [unit if len(unit) == 1 else sorted(unit, key=canonical_key)
             for unit in by_group.values()]
    if all(len(unit) == 1 for unit in units):   # a unit's key is then its game's, in a tuple
        return [units[i] for i in canonical_order([unit[0] for unit in units])]
    return sorted(units, key=lambda unit: tuple(map(canonical_key, unit)))


def standings(games: Sequence[PlayedGame], bots: Sequence[str], seed: int,
              groups: Mapping[int, int] | None = None,
              resamples: int = RESAMPLES, looks: int = 1,
              ranked: Collection[str] | None = None) -> Standings:
    """The global fit of `games` with bootstrap intervals, rank ranges and the pairwise matrix.
    `seed` is the league seed (the bootstrap stream is derived from it); `looks` is how often
    the table is checked (`--until-settled`: one look per block of its budget). `ranked` names
    the bots the table ranks (default: all of `bots`): every bot is fitted on every game, but
    order, rank ranges and separation are among the ranked alone."""
    units = resampling_units(games, groups)
    ordered = [game for unit in units for game in unit]
    design = Design(ordered, bots)
    kept = {id(game) for game in design.games}
    # Each kept game's unit, in the design's (canonical) game order.
    unit_of = {id(game): u for u, unit in enumerate(units) for game in unit}
    game_unit = np.array([unit_of[id(game)] for game in design.games], dtype=np.int64)
    theta, log_scale = design.fit_scaled()
    point, low, high = fit_with_interval(design, theta, log_scale)
    names = design.bots
    has = design.played > 0
    samples = np.empty((resamples, len(names)))
    if units and any(id(g) in kept for unit in units for g in unit):
        weights = (draw[game_unit] for draw in unit_draws(len(units), resamples, seed))
        for b, (fitted, scales) in enumerate(design.fit_resamples(weights, theta, log_scale)):
            samples[b] = to_elo(typical(design, fitted, scales)[0], design.played)
    else:
        samples[:] = point
    alpha = (1 - LEVEL) / 2 * 100
    if low is None or high is None:
        # no curvature to read (a degenerate league): the bootstrap's, holding the point
        low = np.minimum(np.percentile(samples, alpha, axis=0), point)
        high = np.maximum(np.percentile(samples, 100 - alpha, axis=0), point)
    chosen = set(names) if ranked is None else set(ranked)
    counted = has & np.array([bot in chosen for bot in names], dtype=bool)
    # a bot's rank in a resample is among the ranked bots with games only
    ranks = _ranks(samples[:, counted])
    rank_low = np.percentile(ranks, alpha, axis=0, method="lower").astype(int)
    rank_high = np.percentile(ranks, 100 - alpha, axis=0, method="higher").astype(int)
    playing = [bot for bot, h in zip(names, has, strict=True) if h]
    position = {bot: i for i, bot in enumerate(
        bot for bot, c in zip(names, counted, strict=True) if c)}
    strength = {bot: float(point[i]) if has[i] else None for i, bot in enumerate(names)}
    by_strength = sorted(playing, key=lambda bot: (-strength[bot], bot))  # type: ignore
    idle = sorted(bot for bot in names if strength[bot] is None)
    order = [bot for bot in (*by_strength, *idle) if bot in chosen]
    unranked = [bot for bot in (*by_strength, *idle) if bot not in chosen]

    def per_bot(values: np.ndarray, cast: type) -> dict:
        return {bot: cast(values[position[bot]]) if bot in position else None for bot in names}

    ahead = {(a, b): float(1 / (1 + 10 ** ((strength[b] - strength[a]) / 400)))  # type: ignore
             for a in playing for b in playing if a != b}
    column = {bot: i for i, bot in enumerate(names)}
    gap_sd = {(a, b): float(np.std(samples[:, column[a]] - samples[:, column[b]], ddof=1))
              for a, b in zip(order, order[1:], strict=False)
              if a in position and b in position}
    return Standings(
        order=order, strength=strength,
        low={bot: float(low[i]) if has[i] else None for i, bot in enumerate(names)},
        high={bot: float(high[i]) if has[i] else None for i, bot in enumerate(names)},
        rank_low=per_bot(rank_low, int), rank_high=per_bot(rank_high, int),
        games={bot: int(design.played[i]) for i, bot in enumerate(names)},
        resamples=resamples, seed=seed, ahead=ahead, gap_sd=gap_sd, looks=looks,
        scale={k: float(c) for k, c in
               zip(design.sizes, np.exp(typical(design, theta, log_scale)[1]), strict=True)},
        games_by_size=_games_by_size(design),
        size_test=size_test(design, theta, log_scale), unranked=unranked,
    )


def unit_draws(units: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """How often each of `units` resampling units is drawn in each of `resamples` bootstrap
    resamples (float weights), seeded from the league `seed`: `units` uniform draws with
    replacement, counted per unit (multinomial with equal chances). numpy's `multinomial` drew
    the same distribution at five times the CPU (a binomial per unit: 2.3 s of a 100,000-game
    refit), and all resamples at once (8 bytes per unit and resample: 240 MB there); these are
    made one resample at a time, as the fits use them."""
    rng = np.random.Generator(np.random.PCG64(keyed_seed(seed, "bootstrap")))
    for _ in range(resamples):
        yield np.bincount(rng.integers(0, units, size=units), minlength=units).astype(np.float64)


def fit_with_interval(design: Design, theta: np.ndarray, log_scale: np.ndarray,
                      level: float = LEVEL
                      ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The reported strengths of the fit's maximum and their `level` intervals (None, None
    without curvature): on each side of the strength, the profile-likelihood bound's distance
    (profiled.py, the priors in) times the games' standard error over the standard error with
    the priors (the priors keep the fit finite but are no knowledge). Where the objective is a
    parabola that is the Wald interval of the games' curvature (`wald_interval`)."""
    point = to_elo(typical(design, theta, log_scale)[0], design.played)
    info = curvature(design, theta, log_scale)
    sd = sd_from_curvature(design, theta, log_scale, info)
    with_priors = sd_from_curvature(design, theta, log_scale, info, games_only=False)
    if sd is None or with_priors is None:
        return point, None, None
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    bounds = profile_bounds(design, theta, log_scale, with_priors, z, info)
    if bounds is None:
        low, high = wald_interval(point, sd, level)
        return point, low, high
    # the games' share of each side's width (1 where the priors' curvature is nil)
    ratio = np.divide(sd, with_priors, out=np.ones_like(sd), where=with_priors > 0)
    return point, point - (point - bounds[0]) * ratio, point + (bounds[1] - point) * ratio


def wald_interval(point: np.ndarray, sd: np.ndarray, level: float = LEVEL
                  ) -> tuple[np.ndarray, np.ndarray]:
    """point -/+ z sd: the `level` interval (it always holds its point)."""
    half = NormalDist().inv_cdf(1 - (1 - level) / 2) * sd
    return point - half, point + half


def _games_by_size(design: Design) -> dict[str, dict[int, int]]:
    """bot -> table size -> games of the design at that size (sizes ascending)."""
    counts = design.games_by_size()
    ascending = sorted(range(len(design.sizes)), key=lambda k: design.sizes[k])
    return {bot: {design.sizes[k]: int(counts[i, k]) for k in ascending if counts[i, k]}
            for i, bot in enumerate(design.bots)}


def _ranks(samples: np.ndarray) -> np.ndarray:
    """Rank (1 = best) of each column in each row; equal strengths share the better rank."""
    if samples.shape[1] == 0:
        return np.zeros_like(samples, dtype=np.int64)
    # rank = 1 + number of bots strictly stronger in that resample
    return 1 + np.sum(samples[:, None, :] > samples[:, :, None], axis=2)

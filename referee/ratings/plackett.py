"""The order-free global fit: a Plackett-Luce model of every game's places, fitted at once.

Each bot i has a strength theta_i. A game is read as a sequence of choices from the top: the
first place is chosen from everyone at the table with probability exp(theta_i) / sum over the
table, the second from the rest, and so on. A consequence organisers can use: the probability
that bot a finishes ahead of bot b at any table is 1 / (1 + exp(theta_b - theta_a)), the Elo
formula, so strengths are reported on the Elo scale (400 / ln 10 per unit of theta).

* **Shared places (R26)** are ties handled by Breslow's method (as for tied event times in Cox
  regression): every bot of a shared place is chosen from the same remaining set, and the whole
  group then leaves it. A game where everyone shares one place says only that they were level.
* **Forfeits** finish last, sharing the last place among themselves (ahead of no one).
* **Games where every seat forfeited** say nothing about strength and are left out (as they win
  no one anything in the table).
* **A weak prior** keeps every estimate finite (a bot that won every game would otherwise have
  an infinite strength): each bot is credited with one win and one loss against a phantom bot of
  strength 0, like the pseudo-rankings of the R package PlackettLuce. It pulls ratings slightly
  towards the average; after a few dozen games per bot it no longer matters.

The fit is the maximum of the (concave) log-likelihood, found by Newton's method with a
backtracking line search in numpy. The games are put in a canonical order first (by their bots
and places, not by schedule index), so any order of the same games gives bit-identical results.
Neither `choix` (no ties in its ranking fits) nor `openskill` (an online update whose result
depends on the order of the games) does this.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from referee.ratings.results import PlayedGame

#: Elo points per unit of theta: a 400-point gap is 10:1 odds of finishing ahead.
ELO = 400 / math.log(10)
_TOLERANCE = 1e-10     # stop when no strength moves more than this (theta units)
_MAX_STEPS = 200


def finishing_groups(game: PlayedGame) -> list[list[str]]:
    """The game's bots grouped by finishing place, best first: shared places (R26) form one
    group, forfeits form the last group whatever their recorded place."""
    keyed = sorted(zip(game.bots, game.places, game.forfeited, strict=True),
                   key=lambda seat: (seat[2], seat[1], seat[0]))
    groups: list[list[str]] = []
    last_key = None
    for bot, place, forfeited in keyed:
        key = ("forfeit",) if forfeited else ("place", place)
        if key != last_key:
            groups.append([])
            last_key = key
        groups[-1].append(bot)
    return groups


def canonical_key(game: PlayedGame) -> tuple:
    """A key that orders games by their content alone (bots per seat, places, forfeits)."""
    return (game.bots, game.places, game.forfeited)


class Design:
    """The games in a form the fit iterates over: one 'stage' per choice of a finishing group.

    `units` lists, per game, the resampling unit it belongs to (for the bootstrap), so that
    `fit(weights)` can weight whole units.
    """

    def __init__(self, games: Iterable[PlayedGame], bots: Sequence[str]) -> None:
        self.bots = list(bots)
        index = {bot: i for i, bot in enumerate(self.bots)}
        self.n = len(self.bots)
        kept = sorted((g for g in games if not g.void), key=canonical_key)  # void: all forfeited
        self.games = kept
        win_bot, win_stage, set_bot, set_stage, stage_game, stage_k = [], [], [], [], [], []
        pair_i, pair_j, pair_stage = [], [], []
        played = np.zeros(self.n, dtype=np.int64)
        for g, game in enumerate(kept):
            for bot in game.bots:
                if bot not in index:
                    raise ValueError(f"game {game.index}: unknown bot {bot!r}")
                played[index[bot]] += 1
            groups = [sorted(index[b] for b in group) for group in finishing_groups(game)]
            remaining = sorted(i for group in groups for i in group)
            for group in groups:
                if len(remaining) == 1:
                    break   # the last bot alone: chosen with certainty, no information
                stage = len(stage_k)
                stage_game.append(g)
                stage_k.append(len(group))
                win_bot += group
                win_stage += [stage] * len(group)
                set_bot += remaining
                set_stage += [stage] * len(remaining)
                for a in remaining:
                    pair_i += [a] * len(remaining)
                    pair_j += remaining
                    pair_stage += [stage] * len(remaining)
                members = set(group)
                remaining = [i for i in remaining if i not in members]
        self.played = played
        self.win_bot = np.array(win_bot, dtype=np.int64)
        self.win_stage = np.array(win_stage, dtype=np.int64)
        self.set_bot = np.array(set_bot, dtype=np.int64)
        self.set_stage = np.array(set_stage, dtype=np.int64)
        self.stage_game = np.array(stage_game, dtype=np.int64)
        self.stage_k = np.array(stage_k, dtype=np.float64)
        self.pair_i = np.array(pair_i, dtype=np.int64)
        self.pair_j = np.array(pair_j, dtype=np.int64)
        self.pair_flat = self.pair_i * self.n + self.pair_j
        self.pair_stage = np.array(pair_stage, dtype=np.int64)

    def _objective(self, theta: np.ndarray, stage_w: np.ndarray) -> float:
        """Log-likelihood plus log-prior at `theta` with per-stage weights."""
        stages = len(self.stage_k)
        sums = np.bincount(self.set_stage, weights=np.exp(theta[self.set_bot]), minlength=stages)
        wins = np.bincount(self.win_bot, weights=stage_w[self.win_stage], minlength=self.n)
        value = float(wins @ theta - np.sum(stage_w * self.stage_k * np.log(sums)))
        return value + float(np.sum(theta - 2 * np.logaddexp(0.0, theta)))   # the phantom

    def fit(self, game_weights: np.ndarray | None = None,
            start: np.ndarray | None = None) -> np.ndarray:
        """The strengths (theta, one per bot) maximising the weighted log-likelihood plus the
        prior. `game_weights` (one per game of `self.games`, default 1) lets the bootstrap fit
        resamples without rebuilding the design."""
        n, stages = self.n, len(self.stage_k)
        theta = np.zeros(n) if start is None else start.astype(np.float64, copy=True)
        if stages == 0:
            return theta
        stage_w = (np.ones(stages) if game_weights is None
                   else np.asarray(game_weights, dtype=np.float64)[self.stage_game])
        wins = np.bincount(self.win_bot, weights=stage_w[self.win_stage], minlength=n)
        wk = stage_w * self.stage_k
        current = self._objective(theta, stage_w)
        for _ in range(_MAX_STEPS):
            exp = np.exp(theta)
            sums = np.bincount(self.set_stage, weights=exp[self.set_bot], minlength=stages)
            p = exp[self.set_bot] / sums[self.set_stage]
            spread = wk[self.set_stage] * p
            grad = wins - np.bincount(self.set_bot, weights=spread, minlength=n)
            sig = 1 / (1 + np.exp(-theta))
            grad += 1 - 2 * sig
            # Negative Hessian: sum over stages of w k (diag(p) - p p^T), plus the prior's;
            # p_i p_j = e_i e_j / S^2, so one gather from the outer product of e per pair.
            per_stage = wk / sums ** 2
            pp = np.outer(exp, exp).ravel()[self.pair_flat] * per_stage[self.pair_stage]
            info = -np.bincount(self.pair_flat, weights=pp, minlength=n * n).reshape(n, n)
            diag = np.bincount(self.set_bot, weights=spread, minlength=n)
            info[np.diag_indices(n)] += diag + 2 * sig * (1 - sig)
            step = np.linalg.solve(info, grad)
            scale = 1.0
            while True:   # backtracking: never accept a step that lowers the objective
                trial = theta + scale * step
                value = self._objective(trial, stage_w)
                if value >= current or scale < 1e-6:
                    break
                scale /= 2
            theta, current = trial, value
            if float(np.max(np.abs(scale * step))) < _TOLERANCE:
                break
        return theta


@dataclass(frozen=True)
class GlobalFit:
    """Strengths of the bots from one fit, on the Elo scale, averaging 0 over the bots that
    played; None for a bot without games."""

    strength: dict[str, float | None]

    def ahead(self, a: str, b: str) -> float | None:
        """The model's probability that `a` finishes ahead of `b` at a table they share."""
        sa, sb = self.strength[a], self.strength[b]
        if sa is None or sb is None:
            return None
        return 1 / (1 + 10 ** ((sb - sa) / 400))


def to_elo(theta: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Strengths on the Elo scale, centred on the mean of the bots that played (the others are
    left as they are: callers report them as None)."""
    mask = played > 0
    centre = float(np.mean(theta[mask])) if mask.any() else 0.0
    return (theta - centre) * ELO


def fit_games(games: Iterable[PlayedGame], bots: Sequence[str]) -> GlobalFit:
    """The global Plackett-Luce fit of `games` (any order) for `bots`."""
    design = Design(games, bots)
    elo = to_elo(design.fit(), design.played)
    return GlobalFit({bot: float(elo[i]) if design.played[i] else None
                      for i, bot in enumerate(design.bots)})

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

* **Table size.** In Las Vegas the same two bots are much further apart at a table of 2 than
  at a table of 5 (more opponents, more luck in who takes which casino). One strength per bot
  with the same meaning at every size does not fit that, so each table size k gets a *scale*
  c_k: at a table of k, bot i's weight is exp(c_k theta_i). The scale of the league's most
  played size (the *reference*, the smallest of equals) is 1, so a strength is read at that
  size, and c_k times it is the strength at size k (bench/fairness.py compares the observed
  finishing-ahead rates at each size with both models). Each log c_k has a weak normal prior
  (sd 1), so that a size where all bots look alike keeps a finite scale. A league of one size
  is the plain model.

The fit is the maximum of the log-likelihood, found by Newton's method with a backtracking line
search in numpy, on the strengths and the scales at once (damped where the joint problem is
not concave). The games are put in a canonical
order first (by their bots and places, not by schedule index), so any order of the same games
gives bit-identical results.
Neither `choix` (no ties in its ranking fits) nor `openskill` (an online update whose result
depends on the order of the games) does this.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
        stage_size: list[int] = []
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
                stage_size.append(game.players)
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
        # table sizes: the reference (most games, smallest of equals) first, scale 1
        size_games: dict[int, int] = {}
        for game in kept:
            size_games[game.players] = size_games.get(game.players, 0) + 1
        self.sizes = sorted(size_games, key=lambda k: (-size_games[k], k))
        self.size_games = size_games
        size_index = {k: i for i, k in enumerate(self.sizes)}
        self.stage_size = np.array([size_index[k] for k in stage_size], dtype=np.int64)
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

    def _objective(self, theta: np.ndarray, stage_w: np.ndarray,
                   log_scale: np.ndarray | None = None) -> float:
        """Log-likelihood plus log-prior at `theta` (and the log scales per size); -inf where
        it overflows (a line search then steps back)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return self._objective_at(theta, stage_w, log_scale)

    def _objective_at(self, theta: np.ndarray, stage_w: np.ndarray,
                      log_scale: np.ndarray | None) -> float:
        stages = len(self.stage_k)
        log_scale = np.zeros(len(self.sizes)) if log_scale is None else log_scale
        mult = np.exp(log_scale)[self.stage_size]
        utility = mult[self.set_stage] * theta[self.set_bot]
        top = np.full(stages, -np.inf)
        np.maximum.at(top, self.set_stage, utility)        # log-sum-exp without overflow
        sums = np.bincount(self.set_stage, weights=np.exp(utility - top[self.set_stage]),
                           minlength=stages)
        won = np.bincount(self.win_stage, weights=theta[self.win_bot], minlength=stages)
        value = float(np.sum(stage_w * (mult * won - self.stage_k * (top + np.log(sums)))))
        if not np.isfinite(value):
            return -np.inf
        value -= float(np.sum(log_scale ** 2)) / 2                          # scale prior
        return value + float(np.sum(theta - 2 * np.logaddexp(0.0, theta)))   # the phantom

    def fit(self, game_weights: np.ndarray | None = None,
            start: np.ndarray | None = None) -> np.ndarray:
        """The strengths (theta, one per bot) maximising the weighted log-likelihood plus the
        prior. `game_weights` (one per game of `self.games`, default 1) lets the bootstrap fit
        resamples without rebuilding the design."""
        return self.fit_scaled(game_weights, start)[0]

    def fit_scaled(self, game_weights: np.ndarray | None = None,
                   start: np.ndarray | None = None,
                   start_scale: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The strengths and the log scale of each table size (`self.sizes` order, the
        reference's 0)."""
        n, stages = self.n, len(self.stage_k)
        theta = np.zeros(n) if start is None else start.astype(np.float64, copy=True)
        log_scale = (np.zeros(len(self.sizes)) if start_scale is None
                     else start_scale.astype(np.float64, copy=True))
        if stages == 0:
            return theta, log_scale
        stage_w = (np.ones(stages) if game_weights is None
                   else np.asarray(game_weights, dtype=np.float64)[self.stage_game])
        current = self._objective(theta, stage_w, log_scale)
        n_free = len(self.sizes) - 1          # the reference's scale is fixed at 1
        for _ in range(_MAX_STEPS):
            if n_free:
                grad, info = self._joint_newton(theta, stage_w, log_scale)
                step = _ascent(grad, info)
                x = np.concatenate([theta, log_scale[1:]])

                def objective(y: np.ndarray) -> float:
                    return self._objective(y[:n], stage_w, np.concatenate([[0.0], y[n:]]))

                x, current, moved = self._line_search(current, objective, x, step)
                theta, log_scale = x[:n], np.concatenate([[0.0], x[n:]])
            else:
                step = self._theta_step(theta, stage_w, log_scale)
                theta, current, moved = self._line_search(
                    current, lambda t, b=log_scale: self._objective(t, stage_w, b), theta,
                    step)
            if moved < _TOLERANCE:
                break
        return theta, log_scale

    @staticmethod
    def _line_search(current: float, objective, x: np.ndarray,
                     step: np.ndarray) -> tuple[np.ndarray, float, float]:
        """Backtracking: never accept a step that lowers the objective."""
        scale = 1.0
        while True:
            trial = x + scale * step
            value = objective(trial)
            if value >= current or scale < 1e-6:
                break
            scale /= 2
        if value < current:     # no ascent along this direction: stay
            return x, current, 0.0
        return trial, value, float(np.max(np.abs(scale * step)))

    def _theta_step(self, theta: np.ndarray, stage_w: np.ndarray,
                    log_scale: np.ndarray) -> np.ndarray:
        """Newton's step on theta with the scales fixed."""
        grad, info, _ = self._theta_block(theta, stage_w, np.exp(log_scale)[self.stage_size])
        return np.linalg.solve(info, grad)

    def _theta_block(self, theta: np.ndarray, stage_w: np.ndarray,
                     c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gradient and negative Hessian in theta (with `c`, the scale of each stage), and
        each set entry's choice probability p."""
        n, stages = self.n, len(self.stage_k)
        exp = np.exp(c[self.set_stage] * theta[self.set_bot])
        sums = np.bincount(self.set_stage, weights=exp, minlength=stages)
        p = exp / sums[self.set_stage]
        wk = stage_w * self.stage_k
        grad = np.bincount(self.win_bot, weights=(stage_w * c)[self.win_stage], minlength=n)
        grad -= np.bincount(self.set_bot, weights=(wk * c)[self.set_stage] * p, minlength=n)
        sig = 1 / (1 + np.exp(-theta))
        grad += 1 - 2 * sig
        # Negative Hessian: sum over stages of w k c^2 (diag(p) - p p^T), plus the prior's;
        # p_i p_j = e_i e_j / S^2 with e = exp(c theta) of that stage.
        per_stage = wk * c ** 2 / sums ** 2
        pp = (np.exp(c[self.pair_stage] * (theta[self.pair_i] + theta[self.pair_j]))
              * per_stage[self.pair_stage])
        info = -np.bincount(self.pair_flat, weights=pp, minlength=n * n).reshape(n, n)
        diag = np.bincount(self.set_bot, weights=(wk * c ** 2)[self.set_stage] * p,
                           minlength=n)
        info[np.diag_indices(n)] += diag + 2 * sig * (1 - sig)
        return grad, info, p

    def _joint_newton(self, theta: np.ndarray, stage_w: np.ndarray,
                      log_scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and negative Hessian of the objective in (theta, log scale of every size
        but the reference), for one Newton step on both at once."""
        n, stages, sizes = self.n, len(self.stage_k), len(self.sizes)
        c = np.exp(log_scale)[self.stage_size]           # per stage
        grad_t, info_tt, p = self._theta_block(theta, stage_w, c)
        t = theta[self.set_bot]
        mu = np.bincount(self.set_stage, weights=p * t, minlength=stages)
        second = np.bincount(self.set_stage, weights=p * t * t, minlength=stages)
        won = np.bincount(self.win_stage, weights=theta[self.win_bot], minlength=stages)
        wk = stage_w * self.stage_k
        # scale block, in b = log c: d/db = c d/dc, d2/db2 = c d/dc + c^2 d2/dc2
        d1 = stage_w * won - wk * mu                     # d loglik / dc per stage
        d2 = -wk * (second - mu ** 2)                    # d2 loglik / dc2 per stage
        grad_b = np.bincount(self.stage_size, weights=c * d1, minlength=sizes) - log_scale
        hess_b = np.bincount(self.stage_size, weights=c * d1 + c ** 2 * d2,
                             minlength=sizes) - 1
        # cross: d2 / dtheta_i dc = w (1[i won] - m p_i) - w m c p_i (theta_i - mu), times c
        cross = np.zeros((n, sizes))
        np.add.at(cross, (self.win_bot, self.stage_size[self.win_stage]),
                  (stage_w * c)[self.win_stage])
        s_of = self.set_stage
        np.add.at(cross, (self.set_bot, self.stage_size[s_of]),
                  -(wk * c)[s_of] * p * (1 + c[s_of] * (t - mu[s_of])))
        grad = np.concatenate([grad_t, grad_b[1:]])
        info = np.zeros((n + sizes - 1, n + sizes - 1))
        info[:n, :n] = info_tt
        info[:n, n:] = -cross[:, 1:]
        info[n:, :n] = -cross[:, 1:].T
        info[n:, n:] = np.diag(-hess_b[1:])
        return grad, info


def _ascent(grad: np.ndarray, info: np.ndarray) -> np.ndarray:
    """Newton's step solve(info, grad), damped (Levenberg) until `info` is positive definite,
    so that the step always points uphill."""
    damping = 0.0
    scale = float(np.max(np.abs(np.diag(info)))) or 1.0
    eye = np.eye(len(grad))
    for _ in range(60):
        try:
            factor = np.linalg.cholesky(info + damping * eye)
        except np.linalg.LinAlgError:
            damping = max(2 * damping, 1e-6 * scale)
            continue
        return np.linalg.solve(factor.T, np.linalg.solve(factor, grad))
    return grad   # a gradient step: uphill, if slow


@dataclass(frozen=True)
class GlobalFit:
    """Strengths of the bots from one fit, on the Elo scale, averaging 0 over the bots that
    played; None for a bot without games."""

    strength: dict[str, float | None]
    scale: dict[int, float] = field(default_factory=dict)   # table size -> scale (ref. 1)

    def ahead(self, a: str, b: str, players: int | None = None) -> float | None:
        """The model's probability that `a` finishes ahead of `b` at a table they share (of
        `players`, default the reference size)."""
        sa, sb = self.strength[a], self.strength[b]
        if sa is None or sb is None:
            return None
        scale = self.scale.get(players, 1.0) if players is not None else 1.0
        return 1 / (1 + 10 ** (scale * (sb - sa) / 400))


def to_elo(theta: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Strengths on the Elo scale, centred on the mean of the bots that played (the others are
    left as they are: callers report them as None)."""
    mask = played > 0
    centre = float(np.mean(theta[mask])) if mask.any() else 0.0
    return (theta - centre) * ELO


def fit_games(games: Iterable[PlayedGame], bots: Sequence[str]) -> GlobalFit:
    """The global Plackett-Luce fit of `games` (any order) for `bots`."""
    design = Design(games, bots)
    theta, log_scale = design.fit_scaled()
    elo = to_elo(theta, design.played)
    return GlobalFit({bot: float(elo[i]) if design.played[i] else None
                      for i, bot in enumerate(design.bots)},
                     {k: float(c) for k, c in zip(design.sizes, np.exp(log_scale), strict=True)})

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
  towards the average, a small league's strongest and weakest most; the intervals' coverage
  is measured with that pull in (bench/fairness.py, section 5).

* **Table size.** In Las Vegas the same two bots are much further apart at a table of 2 than
  at a table of 5 (more opponents, more luck in who takes which casino). One strength per bot
  with the same meaning at every size does not fit that, so each table size k gets a *scale*
  c_k: at a table of k, bot i's weight is exp(c_k theta_i). The games fix only the products
  c_k theta_i, so the split is a convention: strengths are reported at the league's *typical
  table*, where the geometric mean of the scales over the league's games is 1 (no size is
  picked by a tie-break, and the numbers do not move with which size is the most played);
  c_k times a strength is the strength at size k. Each log c_k (against the most played size,
  which the fit holds at 1 while it iterates) has a normal prior (sd `SCALE_PRIOR_SD`, centred
  on the scales measured in Las Vegas: `CENTRED_SCALE_PRIOR`) so that a size where all bots
  look alike keeps a finite scale. The intervals (`strength_sd`, profiled.py)
  leave both priors' curvature out of their width (bench/fairness.py measures their coverage
  with the priors' pull in the fit). A league of one size is the plain model.

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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from referee.ratings.results import PlayedGame
from referee.ratings.sprt import scale_at

#: Elo points per unit of theta: a 400-point gap is 10:1 odds of finishing ahead.
ELO = 400 / math.log(10)
_TOLERANCE = 1e-10     # stop when no strength moves more than this (theta units)
_DONE_BELOW = 1e-6     # ...or when a whole Newton step moved less than this (error ~ its square)
_REUSE_BELOW = 1e-4    # after a step this small, the next step reuses the Hessian
_ROUNDING = 1e-13      # relative rounding of the objective's sum over games
_MAX_STEPS = 200
_RESAMPLE_DONE = 1e-9  # a resample's fit stops when its estimated error is below this (theta)
_RESAMPLE_STEPS = 8    # ...within this many steps, or is fitted by `fit_scaled`
_RESAMPLE_FRESH = 0.05  # a resample's steps that shrink slower than this get a fresh Hessian
#: sd of each table size's log scale against the reference's. Where a league's bots are close,
#: 20 games per bot barely tell the scales apart; under a looser prior (1, 2) they wandered
#: further than the games' curvature says and the 95% intervals of 12 bots at tables of 2-5
#: covered 0.927 and 0.896; at 0.7, 0.943, every cell of bench/fairness.py within 0.93-0.97
SCALE_PRIOR_SD = 0.7
_SCALE_PRECISION = 1 / SCALE_PRIOR_SD ** 2
#: Whether the scale prior is centred on the measured scales (sprt.py's `TABLE_SCALES`: 1, 0.40,
#: 0.35, 0.29 at tables of 2-5, a size above 5 as 5) rather than on one scale for all sizes.
#: Centred on 1, 20-60 games per bot fitted the scales of 3/4/5 against 2 at 0.8-1.2 where
#: they were 0.40/0.35/0.29, which shrank every reported strength ~15% and pulled the
#: strongest and weakest bots' intervals in (bench/fairness.py, section 5, wide leagues)
CENTRED_SCALE_PRIOR = True


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


def canonical_order(games: Sequence[PlayedGame]) -> list[int]:
    """The positions of `games` in `canonical_key` order, equal keys in their given order: what
    sorted(range(len(games)), key=...) gives, sorted by numpy (a refit orders 100,000 games
    twice, and comparing tuples of tuples of names in Python was seconds of it).

    Each key becomes a row of integers: the rank of each seat's name among the names, then the
    places, then the forfeits, every part padded with a value below all others (a shorter tuple
    that is a prefix of a longer one sorts first, as tuples do)."""
    if not games:
        return []
    places = list(chain.from_iterable(game.places for game in games))
    if not all(type(place) is int for place in places):    # not what a store holds
        return sorted(range(len(games)), key=lambda i: canonical_key(games[i]))
    rank = {name: i for i, name in enumerate(sorted({n for game in games for n in game.bots}))}
    sizes = np.fromiter((game.players for game in games), np.int64, len(games))
    seated = np.arange(sizes.max())[None, :] < sizes[:, None]       # (game, seat)
    rows = []
    for values, pad in ((map(rank.__getitem__, chain.from_iterable(g.bots for g in games)), -1),
                        (places, np.iinfo(np.int64).min),
                        (chain.from_iterable(game.forfeited for game in games), -1)):
        part = np.full(seated.shape, pad, dtype=np.int64)
        part[seated] = np.fromiter(values, np.int64, len(places))
        rows.append(part)
    keys = np.concatenate(rows, axis=1)
    # lexsort's last key is its first criterion, and it is stable
    return np.lexsort(keys.T[::-1]).tolist()


def _positions(games: Sequence[PlayedGame], index: dict[str, int], width: int
               ) -> tuple[np.ndarray, ...]:
    """The (position, game) arrays of `Design`: each game's bots in finishing order (the order
    of `finishing_groups`, a group's bots by index), whether the position exists, whether it
    chooses at a stage that says something (all but a last group of one), and the first and
    last position of its group."""
    count = len(games)
    names: list[int] = []
    places: list[int] = []
    forfeits: list[bool] = []
    sizes: list[int] = []
    for game in games:
        for name in game.bots:
            if name not in index:
                raise ValueError(f"game {game.index}: unknown bot {name!r}")
        names += [index[name] for name in game.bots]
        places += game.places
        forfeits += game.forfeited
        sizes.append(game.players)
    seat = np.arange(width)[:, None]
    real = seat < np.array(sizes, dtype=np.int64)[None, :]
    bot = np.zeros((width, count), dtype=np.int64)
    # forfeits share the last group whatever their place; empty positions go after it
    group_key = np.full((width, count), np.iinfo(np.int64).max)
    flat_bot = np.array(names, dtype=np.int64)
    flat_key = np.where(np.array(forfeits, dtype=np.bool_), np.iinfo(np.int64).max - 1,
                        np.array(places, dtype=np.int64))
    bot.T[real.T] = flat_bot
    group_key.T[real.T] = flat_key
    order = np.lexsort((bot, group_key), axis=0)
    bot = np.take_along_axis(bot, order, axis=0)
    group_key = np.take_along_axis(group_key, order, axis=0)
    new_group = np.ones((width, count), dtype=bool)
    new_group[1:] = group_key[1:] != group_key[:-1]
    start = np.maximum.accumulate(np.where(new_group, seat, 0), axis=0)
    closes = np.ones((width, count), dtype=bool)     # the position ends its group
    closes[:-1] = new_group[1:] | ~real[1:]
    end = np.minimum.accumulate(np.where(closes, seat, width)[::-1], axis=0)[::-1]
    last_group = np.take_along_axis(start, (real.sum(axis=0) - 1)[None, :], axis=0)
    alone_last = (start == last_group) & (end == start)
    return bot, real, real & ~alone_last, start, end


class Design:
    """The games in a form the fit iterates over: each game's seats in finishing order.

    A game is a sequence of choices ('stages'), one per finishing group: the group is chosen
    from every bot not placed yet. With the seats sorted best first, the bots left at a stage
    are a suffix of the game's seats, so every stage's sum over them is a suffix sum: one
    evaluation of the model costs a few passes over (seats x games) arrays, and the Hessian
    one entry per pair of seats of a game (10 at a table of 4), not per pair per stage.
    Arrays are (seat position, game): position j of game g holds bot `bot[j, g]`.
    """

    def __init__(self, games: Iterable[PlayedGame], bots: Sequence[str]) -> None:
        self.bots = list(bots)
        index = {bot: i for i, bot in enumerate(self.bots)}
        self.n = len(self.bots)
        kept = sorted((g for g in games if not g.void), key=canonical_key)  # void: all forfeited
        self.games = kept
        width = max((game.players for game in kept), default=0)
        bot, real, win, start, end = _positions(kept, index, width)
        self.played = np.bincount(bot[real], minlength=self.n).astype(np.int64)
        # table sizes: the reference (most games, smallest of equals) first, scale 1
        size_games: dict[int, int] = {}
        for game in kept:
            size_games[game.players] = size_games.get(game.players, 0) + 1
        self.sizes = sorted(size_games, key=lambda k: (-size_games[k], k))
        self.size_games = size_games
        # each size's share of the games: the typical table's weights (`typical`)
        total = max(len(kept), 1)
        self.size_weights = np.array([size_games[k] / total for k in self.sizes])
        size_index = {k: i for i, k in enumerate(self.sizes)}
        self.game_size = np.array([size_index[game.players] for game in kept], dtype=np.int64)
        # the scale prior's centre: each size's log scale against the reference's
        self.scale_centre = np.array([math.log(scale_at(k) / scale_at(self.sizes[0]))
                                      if CENTRED_SCALE_PRIOR and kept else 0.0
                                      for k in self.sizes])
        self.width, self.bot, self.win = width, bot, win
        self.winf = win.astype(np.float64)
        self.realf = real.astype(np.float64)
        self.pad = 1 - self.realf               # D is 1 at empty positions: no 0 to divide by
        # a league of one table size has no empty positions, and its scale is 1: the passes
        # over the games skip multiplying by 1 and adding 0 there (the same numbers)
        self.padded = not real.all()
        self.one_size = len(self.sizes) == 1
        same = np.arange(width)[:, None]
        # shared places are rare: without them the gathers below are the identity
        self.start = None if (start == same).all() else start
        self.end = None if (end == same).all() else end
        self.size_bot = self.game_size[None, :] * self.n + bot   # into (size, bot) tables
        # seat pairs (l < l2) of a game, for the Hessian's off-diagonal entries, and their
        # flat matrix indexes (row by row: (0, 1), (0, 2), ..., (1, 2), ...)
        pairs = [(a, b) for a in range(width) for b in range(a + 1, width)]
        pair_low = np.array([a for a, _ in pairs], dtype=np.int64)
        pair_high = np.array([b for _, b in pairs], dtype=np.int64)
        self.pair_low = pair_low
        self.pair_flat = (bot[pair_low] * self.n + bot[pair_high]).ravel()
        self.bot_flat = bot.ravel()
        self.cross_flat = (bot * len(self.sizes) + self.game_size[None, :]).ravel()
        # the last point evaluated, and the start of the last fit (every bootstrap resample
        # starts at the point estimate)
        self._cached: tuple[bytes, dict[str, np.ndarray]] | None = None
        self._pinned: tuple[bytes, dict[str, np.ndarray]] | None = None
        self.fallbacks = 0      # resamples of the last `fit_resamples` fitted by `fit_scaled`

    def games_by_size(self) -> np.ndarray:
        """Games per bot (rows) and table size (columns, in `self.sizes` order)."""
        sizes = len(self.sizes)
        return np.bincount(self.cross_flat, weights=self.realf.ravel(),
                           minlength=self.n * sizes).reshape(self.n, sizes).astype(np.int64)

    # ------------------------------------------------------------------ the model at a point

    def _gather(self, values: np.ndarray, at: np.ndarray | None) -> np.ndarray:
        """values[at[j, g], g] (the identity when `at` is None)."""
        return values if at is None else np.take_along_axis(values, at, axis=0)

    @staticmethod
    def _suffix(values: np.ndarray, in_place: bool = False) -> np.ndarray:
        """Sums over positions j..end of each game (row by row: few rows, long ones), in
        `values` itself when `in_place` (a temporary: one copy fewer of a seats x games array)."""
        out = values if in_place else values.copy()
        for j in range(len(out) - 2, -1, -1):
            out[j] += out[j + 1]
        return out

    @staticmethod
    def _prefix(values: np.ndarray, in_place: bool = False) -> np.ndarray:
        """Sums over positions 0..j of each game (in `values` itself when `in_place`)."""
        out = values if in_place else values.copy()
        for j in range(1, len(out)):
            out[j] += out[j - 1]
        return out

    def _state(self, theta: np.ndarray, log_scale: np.ndarray | None) -> dict[str, np.ndarray]:
        """What the objective and its derivatives share at (theta, log scales), whatever the
        weights (kept for the last point asked: a bootstrap resample starts where the fit
        ended): the scale c of each game, the utilities u = c theta less a shift per size,
        e = exp(u) (0 at empty positions) and D, the sum of e over the bots left at the
        stage of each position's group (1 at empty positions)."""
        log_scale = np.zeros(len(self.sizes)) if log_scale is None else log_scale
        key = theta.tobytes() + log_scale.tobytes()
        for kept in (self._cached, self._pinned):
            if kept is not None and kept[0] == key:
                return kept[1]
        scale = np.exp(log_scale)
        utility = scale[:, None] * theta[None, :]
        # a shift per size keeps exp finite; it cancels between u and log D
        utility -= np.max(utility, axis=1, keepdims=True)
        e = np.exp(utility).ravel()[self.size_bot]
        if self.padded:
            e *= self.realf
        D = self._gather(self._suffix(e), self.start)
        if self.padded:
            D += self.pad
        state = {"c": scale[self.game_size], "utility": utility, "e": e,
                 "log_scale": log_scale, "D": D}
        self._cached = (key, state)
        return state

    def _chosen(self, state: dict[str, np.ndarray]) -> np.ndarray:
        """Each game's log-likelihood at `state` (unweighted)."""
        if "chosen" not in state:
            # one log per game: of the product of its choosers' D (at most a few numbers
            # of at most 1 each: no overflow, and an underflow is a point to step back from)
            chosen_d = np.prod(state["D"] * self.winf + (1 - self.winf), axis=0)
            u = state["utility"].ravel()[self.size_bot]
            state["chosen"] = (self.winf * u).sum(axis=0) - np.log(chosen_d)
        return state["chosen"]

    def log_likelihood(self, theta: np.ndarray, log_scale: np.ndarray) -> float:
        """The log-likelihood of the games at (theta, log scales), without the priors."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return float(self._chosen(self._state(theta, log_scale)).sum())

    def _objective(self, theta: np.ndarray, weights: np.ndarray,
                   log_scale: np.ndarray | None = None) -> float:
        """Log-likelihood plus log-prior at `theta` (and the log scales per size), with one
        weight per game; -inf where it overflows (a line search then steps back)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            state = self._state(theta, log_scale)
            value = float(weights @ self._chosen(state))
        if not np.isfinite(value):
            return -np.inf
        off = state["log_scale"] - self.scale_centre
        value -= _SCALE_PRECISION * float(np.sum(off ** 2)) / 2                  # scale prior
        return value + float(np.sum(theta - 2 * np.logaddexp(0.0, theta)))   # the phantom

    # ------------------------------------------------------------------ the fit

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
        reference's 0), by Newton's method from `start` (default 0) with a backtracking line
        search, on the strengths and the scales at once when there are several sizes."""
        n = self.n
        theta = np.zeros(n) if start is None else start.astype(np.float64, copy=True)
        log_scale = (np.zeros(len(self.sizes)) if start_scale is None
                     else start_scale.astype(np.float64, copy=True))
        if not self.win.any():
            return theta, log_scale
        weights = (np.ones(len(self.games)) if game_weights is None
                   else np.asarray(game_weights, dtype=np.float64))
        joint = len(self.sizes) > 1           # the reference's scale is fixed at 1

        def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return (x[:n], np.concatenate([[0.0], x[n:]])) if joint else (x, log_scale)

        def objective(x: np.ndarray) -> float:
            theta, log_scale = split(x)
            return self._objective(theta, weights, log_scale)

        x = np.concatenate([theta, log_scale[1:]]) if joint else theta
        current = objective(x)
        self._pinned = self._cached
        info = None
        moved = np.inf
        for _ in range(_MAX_STEPS):
            theta, log_scale = split(x)
            # Newton's quadratic convergence: once the steps are tiny the Hessian hardly
            # changes, and the one from the step before still contracts the error ~1e4-fold
            if info is None or moved >= _REUSE_BELOW:
                grad, info = (self._joint_newton(theta, weights, log_scale) if joint else
                              self._theta_newton(theta, weights, log_scale))
            else:
                grad = self._gradient(theta, weights, log_scale, joint)
            assert info is not None   # the first step's Newton call set it (with the Hessian)
            step = _ascent(grad, info) if joint else np.linalg.solve(info, grad)
            x, current, moved, full = self._line_search(current, objective, x, step)
            # A full step this small leaves an error of about its square (below 1e-10)
            if moved < _TOLERANCE or (full and moved < _DONE_BELOW):
                break
        return split(x)

    def fit_resamples(self, weight_rows: Iterable[np.ndarray], start: np.ndarray,
                      start_scale: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The fit of each row of game weights (bootstrap resamples of `self.games`), as
        `fit_scaled` gives it from (`start`, `start_scale`), the maximum of the unweighted fit.

        A resample's maximum is close to that one, so each fit costs one evaluation of the
        Hessian instead of several, and no line search: a first step from the start with the
        unweighted Hessian there (shared by every resample, so the step costs one weighted sum
        of the gradient's parts kept at the start), one Newton step with the resample's own
        Hessian, then steps with that same Hessian, whose error shrinks by about the distance
        the Newton step moved (a thousandfold at 100,000 games; a fresh Hessian when it
        shrinks less than `_RESAMPLE_FRESH`-fold). A resample stops when the a posteriori
        estimate of its error, the last step times rate / (1 - rate) with the rate of the last
        two steps, is below `_RESAMPLE_DONE`. One that does not get there in `_RESAMPLE_STEPS`
        steps (a tiny league whose resample lies far from the start) is fitted by
        `fit_scaled` instead; `self.fallbacks` counts them."""
        start = np.asarray(start, dtype=np.float64)
        start_scale = np.asarray(start_scale, dtype=np.float64)
        self.fallbacks = 0
        if not self.win.any():
            for _ in weight_rows:
                yield start.copy(), start_scale.copy()
            return
        joint = len(self.sizes) > 1
        ones = np.ones(len(self.games))
        _, info = (self._joint_newton(start, ones, start_scale) if joint else
                   self._theta_newton(start, ones, start_scale))
        assert info is not None   # a Newton call with its Hessian
        shared = _inverse(info)
        self._state(start, start_scale)
        pinned = self._cached                  # every resample's first gradient is taken here
        for row in weight_rows:
            weights = np.asarray(row, dtype=np.float64)
            self._pinned = pinned
            fitted = self._fit_near(weights, start, start_scale, shared)
            if fitted is None:
                self.fallbacks += 1
                fitted = self.fit_scaled(weights, start, start_scale)
            yield fitted

    def _fit_near(self, weights: np.ndarray, start: np.ndarray, start_scale: np.ndarray,
                  shared: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
        """`fit_resamples`'s steps for one row of weights; None when they do not settle."""
        n, joint = self.n, len(self.sizes) > 1

        def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return (x[:n], np.concatenate([[0.0], x[n:]])) if joint else (x, start_scale)

        if shared is None:
            return None
        x = np.concatenate([start, start_scale[1:]]) if joint else start.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            x = x + shared @ self._gradient(start, weights, start_scale, joint)
            own: np.ndarray | None = None     # the inverse Hessian the steps use
            last = None                       # how far the step before moved (same Hessian)
            for _ in range(_RESAMPLE_STEPS):
                theta, log_scale = split(x)
                if own is None:
                    grad, info = (self._joint_newton(theta, weights, log_scale) if joint else
                                  self._theta_newton(theta, weights, log_scale))
                    assert info is not None   # a Newton call with its Hessian
                    own, last = _inverse(info), None
                    if own is None:
                        return None
                else:
                    grad = self._gradient(theta, weights, log_scale, joint)
                step = own @ grad
                moved = float(np.max(np.abs(step)))
                if not np.isfinite(moved):
                    return None
                x = x + step
                if last is not None:
                    # the error left is about moved * rate / (1 - rate): the steps shrink
                    # geometrically, at the rate of the last two
                    rate = moved / last if last > 0 else 0.0
                    if rate < 0.5 and moved * rate / (1 - rate) < _RESAMPLE_DONE:
                        return split(x)
                    if rate > _RESAMPLE_FRESH:
                        own = None                # too slow: a fresh Hessian at the next point
                last = moved
        return None

    @staticmethod
    def _line_search(current: float, objective, x: np.ndarray,
                     step: np.ndarray) -> tuple[np.ndarray, float, float, bool]:
        """Backtracking: never accept a step that lowers the objective by more than its
        rounding (near the maximum a Newton step gains less than the sum's rounding, and
        halving it would only slow the end down). Returns the point, its value, how far it
        moved and whether the whole step was taken."""
        floor = current - _ROUNDING * (abs(current) + 1)
        scale = 1.0
        while True:
            trial = x + scale * step
            value = objective(trial)
            if value >= floor or scale < 1e-6:
                break
            scale /= 2
        if value < floor:       # no ascent along this direction: stay
            return x, current, 0.0, False
        return trial, value, float(np.max(np.abs(scale * step))), scale == 1.0

    # ------------------------------------------------------------------ derivatives

    def _parts(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The weight-free parts of the gradient at `state` (kept with it): `reach`, per
        position the sum of 1/D over the stages whose bots left include it (its choice
        probability there is e * reach), and the gradient per position."""
        if "reach" not in state:
            state["inverse"] = self.winf / state["D"]
            state["reach"] = self._gather(self._prefix(state["inverse"]), self.end)
            grad = self.winf - state["e"] * state["reach"]
            state["grad"] = grad if self.one_size else state["c"] * grad
        return state

    def _hessian_parts(self, state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The weight-free parts of the Hessian at `state` (kept with it): per seat pair
        l < l2 (in `pair_flat`'s order) and per position (the diagonal)."""
        self._parts(state)
        if "pair" not in state:
            # the same products as written out, into arrays made once: a resample's Hessian
            # is most of its fit, and each temporary of seats x games costs a pass of memory
            e, inverse = state["e"], state["inverse"]
            square = self._gather(self._prefix(np.multiply(inverse, inverse), in_place=True),
                                  self.end)
            # over the stages still holding seats l <= l2: sum of k p_l p_l2 = e_l e_l2 square_l
            lead = np.multiply(e, square, out=square)      # square is a temporary
            if not self.one_size:
                lead *= state["c"] * state["c"]
            pair = np.empty((len(self.pair_low), len(self.games)))
            done = 0
            for low in range(self.width - 1):
                np.multiply(lead[low], e[low + 1:], out=pair[done:done + self.width - 1 - low])
                done += self.width - 1 - low
            state["pair"] = pair
            # sum of k (p_l - p_l^2) over the stages holding l
            reach = state["reach"] if self.one_size else state["c"] * state["c"] * state["reach"]
            diag = e * reach
            diag -= np.multiply(lead, e, out=lead)
            state["diag"] = diag
        return state

    def _gradient(self, theta: np.ndarray, weights: np.ndarray, log_scale: np.ndarray,
                  joint: bool) -> np.ndarray:
        """The gradient alone (in theta, and the free log scales when `joint`)."""
        if joint:
            return self._joint_newton(theta, weights, log_scale, hessian=False)[0]
        state = self._parts(self._state(theta, log_scale))
        return self._theta_gradient(theta, weights, state)

    def _theta_gradient(self, theta: np.ndarray, weights: np.ndarray,
                        state: dict[str, np.ndarray]) -> np.ndarray:
        grad = np.bincount(self.bot_flat, weights=(weights * state["grad"]).ravel(),
                           minlength=self.n)
        return grad + 1 - 2 / (1 + np.exp(-theta))                          # the phantom

    def _theta_newton(self, theta: np.ndarray, weights: np.ndarray,
                      log_scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and negative Hessian in theta with the scales fixed."""
        state = self._hessian_parts(self._state(theta, log_scale))
        return self._theta_gradient(theta, weights, state), self._theta_info(theta, weights,
                                                                            state)

    def _theta_info(self, theta: np.ndarray, weights: np.ndarray,
                    state: dict[str, np.ndarray]) -> np.ndarray:
        """Negative Hessian in theta: sum over stages of w k c^2 (diag(p) - p p^T), plus the
        prior's."""
        n = self.n
        pairs = np.bincount(self.pair_flat, weights=(weights * state["pair"]).ravel(),
                            minlength=n * n).reshape(n, n)
        # float even with no pairs at all (bincount of nothing is integer): every seat forfeited
        info = -(pairs + pairs.T).astype(float)   # a pair (l, l2) stands for (l2, l) too
        diag = np.bincount(self.bot_flat, weights=(weights * state["diag"]).ravel(),
                           minlength=n)
        sig = 1 / (1 + np.exp(-theta))
        info[np.diag_indices(n)] += diag + 2 * sig * (1 - sig)
        return info

    def _joint_newton(self, theta: np.ndarray, weights: np.ndarray, log_scale: np.ndarray,
                      hessian: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """Gradient and (with `hessian`) negative Hessian of the objective in (theta, log
        scale of every size but the reference), for one Newton step on both at once."""
        n, sizes = self.n, len(self.sizes)
        state = self._parts(self._state(theta, log_scale))
        grad_t = self._theta_gradient(theta, weights, state)
        e, c, D, reach = state["e"], state["c"], state["D"], state["reach"]
        t = theta[self.bot]
        # mean and second moment of theta over the bots left at each position's stage
        mu = self._gather(self._suffix(e * t, in_place=True), self.start) / D
        second = self._gather(self._suffix(e * t * t, in_place=True), self.start) / D
        # scale block, in b = log c: d/db = c d/dc, d2/db2 = c d/dc + c^2 d2/dc2; per
        # choosing position, d loglik/dc = w (theta - mu) and d2/dc2 = -w (second - mu^2)
        d1 = (self.winf * (t - mu)).sum(axis=0) * weights
        d2 = -(self.winf * (second - mu * mu)).sum(axis=0) * weights
        grad_b = (np.bincount(self.game_size, weights=c * d1, minlength=sizes)
                  - _SCALE_PRECISION * (log_scale - self.scale_centre))
        grad = np.concatenate([grad_t, grad_b[1:]])
        if not hessian:
            return grad, None
        hess_b = np.bincount(self.game_size, weights=c * d1 + c * c * d2,
                             minlength=sizes) - _SCALE_PRECISION
        # cross: d2 / dtheta_i dc = w (1[i chose] - sum of k p_i - c sum of k p_i (theta_i -
        # mu)) over the stages holding i, times c for b = log c
        mean_reach = self._gather(self._prefix(self.winf * mu / D, in_place=True), self.end)
        cross_value = (weights * c) * (self.winf - e * ((1 + c * t) * reach - c * mean_reach))
        cross = np.bincount(self.cross_flat, weights=cross_value.ravel(),
                            minlength=n * sizes).reshape(n, sizes)
        info = np.zeros((n + sizes - 1, n + sizes - 1))
        info[:n, :n] = self._theta_info(theta, weights, self._hessian_parts(state))
        info[:n, n:] = -cross[:, 1:]
        info[n:, :n] = -cross[:, 1:].T
        info[n:, n:] = np.diag(-hess_b[1:])
        return grad, info


def _inverse(info: np.ndarray) -> np.ndarray | None:
    """The inverse of `info` when it is positive definite (a maximum's negative Hessian), so
    that a step along it points uphill; None otherwise, or when it has non-finite entries."""
    if not np.all(np.isfinite(info)):
        return None
    try:
        np.linalg.cholesky(info)
    except np.linalg.LinAlgError:
        return None
    return np.linalg.inv(info)


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


def to_elo(theta: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Strengths on the Elo scale, centred on the mean of the bots that played (the others are
    left as they are: callers report them as None)."""
    mask = played > 0
    centre = float(np.mean(theta[mask])) if mask.any() else 0.0
    return (theta - centre) * ELO


def typical(design: Design, theta: np.ndarray, log_scale: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """`theta` and `log_scale` moved to the league's typical table: the same products c_k
    theta (the same likelihood), with the games-weighted mean of the log scales 0."""
    shift = float(design.size_weights @ log_scale) if len(design.sizes) > 1 else 0.0
    return theta * math.exp(shift), log_scale - shift


def strength_sd(design: Design, theta: np.ndarray, log_scale: np.ndarray,
                games_only: bool = True) -> np.ndarray | None:
    """The standard error (Elo) of each bot's reported strength (at the typical table, centred
    on the bots that played) at the fit's maximum (`theta`, `log_scale` as `fit_scaled` gives
    them): the inverse of the negative Hessian in the strengths and the scales (so the scales'
    uncertainty is in it: they are profiled out), carried to the reported numbers by their
    derivatives (the delta method). None when the Hessian is not invertible.

    With `games_only` (the default) the curvature is the games' alone (`games_curvature`): the
    weak priors keep the fit finite but claim no certainty, so a small league at mixed table
    sizes, where the scale prior's curvature is a large share of what is known about a scale,
    does not get intervals that are too narrow. `games_only=False` is the curvature with the
    priors in (the intervals before; bench/fairness.py prints both)."""
    return sd_from_curvature(design, theta, log_scale, curvature(design, theta, log_scale),
                             games_only)


def curvature(design: Design, theta: np.ndarray, log_scale: np.ndarray) -> np.ndarray:
    """The objective's negative Hessian in the strengths and the free log scales at (`theta`,
    `log_scale`), the priors' curvature in."""
    ones = np.ones(len(design.games))
    _, info = (design._joint_newton(theta, ones, log_scale) if len(design.sizes) > 1
               else design._theta_newton(theta, ones, log_scale))
    assert info is not None     # a Newton call with its Hessian
    return info


def sd_from_curvature(design: Design, theta: np.ndarray, log_scale: np.ndarray,
                      info: np.ndarray, games_only: bool = True) -> np.ndarray | None:
    """`strength_sd` from the `curvature` at the fit's maximum (one Hessian for several
    readings of it)."""
    n, joint = design.n, len(design.sizes) > 1
    covariance = _inverse(games_curvature(design, theta, info)) if games_only else None
    if covariance is None:      # the games alone do not pin every scale: the priors' help
        covariance = _inverse(info)
    if covariance is None:
        return None
    played = design.played > 0
    shift = float(design.size_weights @ log_scale) if joint else 0.0
    gain = ELO * math.exp(shift)
    # reported s_i = gain (theta_i - mean of the played theta); gain = ELO exp(w . b)
    jacobian = np.zeros((n, len(covariance)))
    jacobian[:, :n] = gain * (np.eye(n) - played[None, :] / max(int(played.sum()), 1))
    if joint:
        centred = theta - (theta[played].mean() if played.any() else 0.0)
        jacobian[:, n:] = (gain * centred)[:, None] * design.size_weights[None, 1:]
    variance = np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian)
    return np.sqrt(np.maximum(variance, 0.0))


def games_curvature(design: Design, theta: np.ndarray, info: np.ndarray) -> np.ndarray:
    """`info` (the objective's negative Hessian in the strengths and the free log scales, as
    `fit_scaled` steps on it) less the priors' curvature: the phantom's on each strength and
    the scale prior's (1 / SCALE_PRIOR_SD^2) on each log scale. The games alone cannot tell
    the strengths' common level (adding one number to every strength changes no game's odds),
    and the reported, centred strengths do not depend on it either, so that one direction is
    pinned (any pin gives the centred strengths the same variance); a bot without games is
    pinned alone (it is reported as None)."""
    n = design.n
    games = info.copy()
    sig = 1 / (1 + np.exp(-theta))
    games[np.arange(n), np.arange(n)] -= 2 * sig * (1 - sig)          # the phantom
    free = np.arange(n, len(info))
    games[free, free] -= _SCALE_PRECISION                             # the scale prior
    played = design.played > 0
    level = np.zeros(len(info))
    level[:n] = played
    games += np.outer(level, level) / max(int(played.sum()), 1)
    idle = np.flatnonzero(~played)
    games[idle, idle] += 1.0
    return games


#: p below which the league's games reject one scale per table size
REJECT_BELOW = 0.05
#: at most this many Newton steps of the size test to the per-size model's maximum without
#: the scale prior (a few from the fit's maximum)
_SIZE_TEST_STEPS = 50


@dataclass(frozen=True)
class SizeTest:
    """The likelihood-ratio test of one scale per table size (strengths c_k theta_i) against
    free strengths at each size (each size fitted alone): the statistic, its degrees of
    freedom, its p-value (chi-square) and the free strengths (Elo, centred, at that size)."""

    statistic: float
    df: int
    p: float
    by_size: dict[int, dict[str, float | None]]

    @property
    def rejected(self) -> bool:
        """True when the games reject the model of one scale per size (p < REJECT_BELOW)."""
        return self.df > 0 and self.p < REJECT_BELOW


def size_test(design: Design, theta: np.ndarray, log_scale: np.ndarray) -> SizeTest | None:
    """The test of the per-size model at its fit (`theta`, `log_scale` from `fit_scaled`);
    None for a league of one table size."""
    if len(design.sizes) < 2:
        return None
    free = 0.0
    df = -(int((design.played > 0).sum()) - 1) - (len(design.sizes) - 1)
    by_size: dict[int, dict[str, float | None]] = {}
    for k in sorted(design.sizes):
        alone = Design([game for game in design.games if game.players == k], design.bots)
        fitted = alone.fit()
        free += alone.log_likelihood(fitted, np.zeros(1))
        df += int((alone.played > 0).sum()) - 1
        elo = to_elo(fitted, alone.played)
        by_size[k] = {bot: float(elo[i]) if alone.played[i] else None
                      for i, bot in enumerate(design.bots)}
    statistic = max(2 * (free - _joint_log_likelihood(design, theta, log_scale)), 0.0)
    return SizeTest(statistic, df, chi2_sf(statistic, df) if df > 0 else 1.0, by_size)


def _joint_log_likelihood(design: Design, theta: np.ndarray, log_scale: np.ndarray) -> float:
    """The log-likelihood of the per-size model for the size test, at its maximum without the
    scale prior (the phantom kept, as in each size's own fit): the fit's maximum holds each log
    scale a little towards the reference's (by SCALE_PRIOR_SD), which would count against the
    model and reject it too often. Newton's method with a line search from the fit, at most
    `_SIZE_TEST_STEPS` steps (where the games alone do not pin the scales, it stops where
    they no longer gain)."""
    n, ones = design.n, np.ones(len(design.games))

    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[:n], np.concatenate([[0.0], x[n:]])

    def objective(x: np.ndarray) -> float:
        theta, log_scale = split(x)
        return (design._objective(theta, ones, log_scale)
                + _SCALE_PRECISION * float(np.sum((log_scale - design.scale_centre) ** 2))
                / 2)   # the prior, out

    x = np.concatenate([theta, log_scale[1:]])
    current = objective(x)
    for _ in range(_SIZE_TEST_STEPS):
        held_theta, held_scale = split(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            grad, info = design._joint_newton(held_theta, ones, held_scale)
        assert info is not None     # a Newton call with its Hessian
        if not (np.all(np.isfinite(grad)) and np.all(np.isfinite(info))):
            break                   # a scale gone out of range: no higher to read there
        grad[n:] += _SCALE_PRECISION * (x[n:] - design.scale_centre[1:])
        info[n:, n:] -= _SCALE_PRECISION * np.eye(len(x) - n)
        x, current, moved, full = Design._line_search(current, objective, x,
                                                      _ascent(grad, info))
        if moved < _TOLERANCE or (full and moved < _DONE_BELOW):
            break
    found = design.log_likelihood(*split(x))
    at_fit = design.log_likelihood(theta, log_scale)
    return max(found, at_fit) if np.isfinite(found) else at_fit


def chi2_sf(x: float, df: int) -> float:
    """P(chi-square with `df` degrees of freedom > x): the regularized upper incomplete gamma
    Q(df/2, x/2), by its series below a + 1 and its continued fraction above (Numerical
    Recipes' gammq)."""
    a, z = df / 2, x / 2
    if z <= 0:
        return 1.0
    log_front = -z + a * math.log(z) - math.lgamma(a)
    if z < a + 1:
        term = total = 1 / a
        for n in range(1, 1000):
            term *= z / (a + n)
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1 - total * math.exp(log_front))
    b = z + 1 - a                       # Lentz's method
    c, d = 1 / 1e-300, 1 / b
    h = d
    for n in range(1, 1000):
        an = -n * (n - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(log_front) * h

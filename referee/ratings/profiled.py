"""Profile-likelihood bounds of the reported strengths: where a bot's interval is not symmetric.

The curvature at the fit's maximum (plackett.py's `strength_sd`) sees the objective as a
parabola. In a small league it is not one: a strong bot's likelihood falls slowly upwards and
fast downwards (a bot far ahead of the field wins nearly everything whatever its exact
strength), so a symmetric interval reaches too little outwards and the truth falls beyond the
outer end more often than the inner one (bench/fairness.py, section 5). The profile of a bot's
reported strength s is the highest the objective gets with s held (every other strength and
every table size's scale free); its 95% bounds are where the profile is z^2 / 2 below the
maximum (the likelihood-ratio interval). They lie on either side as far as the data let them.

The objective profiled is the one the fit maximises (its weak priors in, so that every bound
is finite). Where the objective is a parabola to within `_QUADRATIC` at the curvature's
bounds (a league of more than a few hundred games per bot), one Newton step on the drop from
there is the bound and no profile is computed: a refit of a big league costs one objective
evaluation per bound more. Elsewhere (a few games per bot: every bound) each held fit's Newton
step is solved by the league's components (blocks.py): the same steps as a dense solve over
every bot, at a cost that grows with the bots a bot met rather than with the league's cube.
"""

from __future__ import annotations

import math

import numpy as np

from referee.ratings.blocks import BlockSolver, components
from referee.ratings.plackett import ELO, Design, _ascent, _inverse

#: up to this difference between the objective's drop at the parabola's bound and the
#: parabola's, the bound is moved by one Newton step on the drop (within 2% of a standard
#: error of the profiled bound in tests/test_profiled.py); beyond it, the bound is profiled
_QUADRATIC = 0.05
_ROOT_STEPS = 40        # steps of the search for one bound
_ROOT_TOLERANCE = 1e-6  # ...until its drop is this close to z^2 / 2
_INNER_STEPS = 50       # Newton steps of the fit with one strength held


def profile_bounds(design: Design, theta: np.ndarray, log_scale: np.ndarray,
                   sd: np.ndarray, z: float, info: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The profile-likelihood bounds (Elo, as `intervals.fit_with_interval` reports strengths) of
    each bot's strength where the objective falls by z^2 / 2, from the fit's maximum (`theta`,
    `log_scale` as `fit_scaled` gives them). `sd` is the standard error with the priors'
    curvature in (`strength_sd(games_only=False)`): the parabola the check starts from; `info`
    the objective's negative Hessian there (plackett.py's `curvature`: computed when None).
    Bots without games get their point twice. None without curvature."""
    held = _Objective(design)
    x0 = held.pack(theta, log_scale)
    if info is None:
        info = held.newton(x0)[1]
    covariance = _inverse(info)
    if covariance is None:
        return None
    f0 = held.value(x0)
    point, jacobian = held.reported(x0)
    low, high = point.copy(), point.copy()
    drop = z * z / 2
    playing = np.flatnonzero(design.played > 0)
    if len(playing) < 2:
        return low, high
    for i in playing:
        direction = covariance @ jacobian[i]
        spread = float(jacobian[i] @ direction)
        if spread <= 0:
            continue
        for side, bounds in ((-1.0, low), (1.0, high)):
            step = side * z * sd[i]
            # the parabola's bound: s moved by `step`, the rest where the parabola puts them;
            # s is not linear in the scales, so the strength there is read, not assumed
            quadratic = x0 + (step / spread) * direction
            at = held.strength(quadratic, int(i))
            fallen = f0 - held.value(quadratic)
            parabola = (at - point[i]) ** 2 / (2 * sd[i] ** 2)
            if abs(fallen - parabola) <= _QUADRATIC and (at - point[i]) * side > 0:
                # one Newton step on the drop, whose slope there is (s - point) / sd^2
                bounds[i] = at + (drop - fallen) * sd[i] ** 2 / (at - point[i])
            else:
                # from the fit's maximum: where the scales have more than one held maximum
                # (mixed table sizes, few games), the path decides which one is found
                found = _profile_bound(held, int(i), x0, f0, point[i], step, drop)
                bounds[i] = point[i] + step if found is None else found
    return low, high


class _Objective:
    """The fit's objective over x = (strengths, log scales of every size but the reference),
    with its derivatives, and the reported strengths as a function of x."""

    def __init__(self, design: Design) -> None:
        self.design = design
        self.n = design.n
        self.joint = len(design.sizes) > 1
        self.ones = np.ones(len(design.games))
        self.played = design.played > 0
        self.m = int(self.played.sum())
        # d (log gain) / d x over the free log scales: the typical table's weights
        self.w = design.size_weights[1:] if self.joint else np.zeros(0)
        self._solver: BlockSolver | None = None

    @property
    def solver(self) -> BlockSolver:
        """Solves with the negative Hessian by the league's components (made when first
        asked: a league whose bounds are all parabolas never needs it)."""
        if self._solver is None:
            self._solver = BlockSolver(components(self.design), self.n)
        return self._solver

    def pack(self, theta: np.ndarray, log_scale: np.ndarray) -> np.ndarray:
        return np.concatenate([theta, log_scale[1:]]) if self.joint else theta.copy()

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.n
        return (x[:n], np.concatenate([[0.0], x[n:]])) if self.joint else (x, np.zeros(1))

    def value(self, x: np.ndarray) -> float:
        if not np.all(np.isfinite(x)):
            return -np.inf
        return self.design._objective(*self._args(x))

    def _args(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        theta, log_scale = self.split(x)
        return theta, self.ones, log_scale

    def newton(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The objective's gradient and negative Hessian at x."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            grad, info = (self.design._joint_newton(*self._args(x)) if self.joint
                          else self.design._theta_newton(*self._args(x)))
        assert info is not None   # a Newton call with its Hessian
        return grad, info

    def gradient(self, x: np.ndarray) -> np.ndarray:
        """The objective's gradient at x (no Hessian)."""
        theta, ones, log_scale = self._args(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return self.design._gradient(theta, ones, log_scale, self.joint)

    def gain(self, x: np.ndarray) -> float:
        """Elo per unit of theta at the typical table."""
        if not self.joint:
            return ELO
        try:
            return ELO * math.exp(float(self.w @ x[self.n:]))
        except OverflowError:
            return math.inf

    def strength(self, x: np.ndarray, i: int) -> float:
        """Bot i's reported strength at x."""
        theta = x[:self.n]
        return self.gain(x) * float(theta[i] - theta[self.played].mean())

    def reported(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reported strengths at x and their derivatives in x (rows)."""
        n, gain = self.n, self.gain(x)
        centred = x[:n] - x[:n][self.played].mean()
        jacobian = np.zeros((n, len(x)))
        jacobian[:, :n] = gain * (np.eye(n) - self.played[None, :] / self.m)
        jacobian[:, n:] = (gain * centred)[:, None] * self.w[None, :]
        return gain * centred, jacobian


class _Held:
    """The objective with bot i's reported strength held at s: x as a function of y, every
    coordinate of x but theta_i (theta_i is what the held strength then asks)."""

    def __init__(self, objective: _Objective, i: int) -> None:
        self.f, self.i = objective, i
        n = objective.n
        self.others = np.delete(np.arange(n), i)
        self.kept = np.delete(np.arange(n + len(objective.w)), i)   # x's coordinates in y
        # s = gain (theta_i - mean): theta_i = k (s / gain + sum of the others played / m)
        self.k = 1 / (1 - 1 / objective.m)
        self.a = self.k * objective.played[self.others] / objective.m

    def x(self, y: np.ndarray, s: float) -> np.ndarray:
        n, i = self.f.n, self.i
        x = np.empty(len(y) + 1)
        x[self.kept] = y
        x[i] = 0.0
        # a scale out of range gives a strength out of range: the objective's -inf there
        x[i] = self.k * s * _reciprocal(self.f.gain(x)) + float(self.a @ y[:n - 1])
        return x

    def step(self, y: np.ndarray, s: float) -> np.ndarray:
        """Newton's ascent step in y at y (damped where the held objective is not concave
        there, as plackett.py's `_ascent`).

        x = x(y) moves theta_i with the others: its Jacobian C is the identity on y plus the
        row dtheta_i / dy = q, so the Hessian in y is C^T H C (H: the negative Hessian in x,
        with theta_i's curvature in the log scales on the scales' block). Its Newton step is
        not formed that way (a dense matrix over all bots, factorized anew at every step): it
        is the step in x that solves H dx = grad + mu nu with nu . dx = 0, nu (orthogonal to
        C's columns) the held strength's gradient; dx is then C times the step in y, and two
        solves with H, which `BlockSolver` does by the league's components. Where H is not
        positive definite (the scales' part, far from the maximum), the dense step in y."""
        f, n, i = self.f, self.f.n, self.i
        x = self.x(y, s)
        grad, info = f.newton(x)
        inverse_gain = self.k * _reciprocal(f.gain(x))
        q = np.concatenate([self.a, -s * inverse_gain * f.w])      # d theta_i / d y
        if f.joint:
            # theta_i is curved in the log scales: d2 theta_i = s k / gain w w^T
            info = info.copy()
            info[n:, n:] -= grad[i] * s * inverse_gain * np.outer(f.w, f.w)
        nu = np.zeros(len(x))
        nu[i] = 1.0
        nu[self.kept] = -q
        solved = f.solver.solve(info, np.stack([grad, nu], axis=1))
        if solved is not None:
            towards, across = solved[:, 0], solved[:, 1]
            bend = float(nu @ across)
            if bend > 0:
                return (towards - (nu @ towards) / bend * across)[self.kept]
        damped = self._damped(grad, info, q)
        if damped is not None:
            return damped
        # C^T H C and C^T grad without forming C: H without theta_i's row and column, plus
        # the terms of its row
        kept = self.kept
        column = info[kept, i]
        hessian = (info[np.ix_(kept, kept)] + np.outer(column, q) + np.outer(q, column)
                   + info[i, i] * np.outer(q, q))
        return _ascent(grad[kept] + grad[i] * q, hessian)

    def _damped(self, grad: np.ndarray, info: np.ndarray, q: np.ndarray) -> np.ndarray | None:
        """plackett's `_ascent` on the Hessian in y, by the components: the same dampings
        tried in turn, the same step. With theta_i and the scales out, the strength block T
        (H's, without theta_i's row and column, plus the damping) is block-diagonal and
        positive definite; the rest is low rank: C^T H C + d I = diag(T, I) + Z G Z^T, Z's
        columns theta_i's (H's column i and q), the scales' border and the scales, G =
        diag(((0, 1), (1, H_ii)), ((0, I), (I, D + d I - I))) with D the scales' block of H.
        Then it is positive definite exactly when the small matrix G^-1 + Z^T diag(T, I)^-1 Z
        has as many negative eigenvalues as G (the inertia of the bordered matrix), and its
        solve is Woodbury's. None where T is not positive definite, or where a component is
        too big to be solved apart (its solve is then as dense as the dense step's, which
        only factorizes while it looks for its damping)."""
        f, n, i, kept = self.f, self.f.n, self.i, self.kept
        if f.solver.large:
            return None
        scales = len(f.w)
        column, corner = info[kept, i], float(info[i, i])
        towards = grad[kept] + grad[i] * q
        diagonal = np.diagonal(info)[kept] + 2 * column * q + corner * q * q
        size = float(np.max(np.abs(diagonal))) or 1.0
        # Z in y's coordinates (the others' strengths, then the scales), G^-1 without d
        border = info[kept[:n - 1], n:]
        z = np.zeros((n - 1 + scales, 2 + 2 * scales))
        z[:, 0], z[:, 1] = column, q
        z[:n - 1, 2:2 + scales] = border
        z[n - 1:, 2 + scales:] = np.eye(scales)
        inverse_g = np.zeros((2 + 2 * scales, 2 + 2 * scales))
        inverse_g[:2, :2] = [[-corner, 1.0], [1.0, 0.0]]
        inverse_g[2:2 + scales, 2 + scales:] = np.eye(scales)
        inverse_g[2 + scales:, 2:2 + scales] = np.eye(scales)
        scale_block = info[n:, n:] - np.eye(scales)
        rhs = np.zeros((n, 3 + 2 * scales))
        rhs[kept[:n - 1]] = np.column_stack([towards[:n - 1], z[:n - 1]])
        block = info[:n, :n].copy()
        block[i, :] = 0.0
        block[:, i] = 0.0
        strengths = np.diagonal(block).copy()
        damping = 0.0
        for _ in range(60):
            np.fill_diagonal(block, strengths + damping)
            block[i, i] = 1.0
            solved = f.solver.solve(block, rhs)
            if solved is None:
                return None
            solved = solved[kept[:n - 1]]
            # diag(T, I)^-1 applied to the step's right side and to Z
            t_towards = np.concatenate([solved[:, 0], towards[n - 1:]])
            t_z = np.concatenate([solved[:, 1:], z[n - 1:]])
            inverse_g[2:2 + scales, 2:2 + scales] = -(scale_block + damping * np.eye(scales))
            small = inverse_g + z.T @ t_z
            values = np.linalg.eigvalsh(small)
            if (values < 0).sum() == 1 + scales and (values > 0).sum() == 1 + scales:
                return t_towards - t_z @ np.linalg.solve(small, z.T @ t_towards)
            damping = max(2 * damping, 1e-6 * size)
        return towards   # a gradient step: uphill, if slow (as `_ascent`)

    def slope(self, y: np.ndarray, s: float) -> float:
        """The derivative of the objective in s at y (the others held)."""
        x = self.x(y, s)
        return float(self.f.gradient(x)[self.i] * self.k * _reciprocal(self.f.gain(x)))


def _reciprocal(gain: float) -> float:
    """1 / gain, infinite at 0 (as numpy divides)."""
    return 1 / gain if gain else math.inf


def _fit_held(held: _Held, y: np.ndarray, s: float) -> tuple[np.ndarray, float, float]:
    """The maximum of the objective with the strength held at s, from y (Newton's method with
    a backtracking line search, as `fit_scaled`): y there, the objective and its slope in s."""
    def value(v: np.ndarray) -> float:
        return held.f.value(held.x(v, s))

    current = value(y)
    for _ in range(_INNER_STEPS):
        y, current, moved, full = Design._line_search(current, value, y, held.step(y, s))
        if moved < 1e-10 or (full and moved < 1e-7):
            break
    return y, current, held.slope(y, s)


def _profile_bound(objective: _Objective, i: int, start: np.ndarray, f0: float, point: float,
                   step: float, drop: float) -> float | None:
    """The s on the side of `step` where the profile of bot i's strength is `drop` below f0:
    Newton's method on s (the profile's slope is the held fit's slope in s), kept inside a
    bracket that grows outwards until it holds the bound, each held fit from the one before
    (the first from `start`, the fit's maximum). None when it does not settle."""
    held = _Held(objective, i)
    y = np.delete(start, i)
    inside: float = point
    outside: float | None = None
    s = point + step
    for _ in range(_ROOT_STEPS):
        y, value, slope = _fit_held(held, y, s)
        fall_here = f0 - value
        if not np.isfinite(fall_here):
            outside = s
        elif abs(fall_here - drop) < _ROOT_TOLERANCE:
            return s
        elif fall_here < drop:
            inside = s
        else:
            outside = s
        guess = s + (fall_here - drop) / slope if slope and np.isfinite(fall_here) else None
        if outside is None:      # not past the bound yet: grow outwards
            far = inside + (inside - point) + step
            s = guess if guess is not None and abs(guess - point) > abs(s - point) else far
            s = min(s, far) if step > 0 else max(s, far)
        else:
            between = sorted((inside, outside))
            s = (guess if guess is not None and between[0] < guess < between[1]
                 else (inside + outside) / 2)
        if not np.all(np.isfinite(y)):
            return None
    return None

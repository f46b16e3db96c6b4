"""Solves with the fit's negative Hessian that use the league's shape: a bot's strength is
coupled only to the strengths of the bots it shared a table with, and to the scales.

The Hessian's strength block is block-diagonal over the connected components of the graph
"shared a table" (a bot without games is a component of its own, held by the weak prior), and
the few log scales border it. A league of 200 bots that played a game or so each is about 50
components of 4: a solve is then 50 factorizations of 4 x 4 (batched by numpy) and one of the
scales' Schur complement, instead of one of 200 x 200. A league where every bot met every other
is one component: the same dense solve as before.
"""

from __future__ import annotations

import numpy as np

from referee.ratings.plackett import Design


def components(design: Design) -> list[np.ndarray]:
    """The bots (indexes) grouped by the connected components of "shared a table" in
    `design`'s games: one (count, k) array per component size k, each row a component."""
    n = design.n
    real = design.realf > 0
    # each seat joined to its game's first seat (a star per game connects the game)
    seat = design.bot[real]
    first = np.broadcast_to(design.bot[:1], design.bot.shape)[real]
    labels = np.arange(n)
    while True:
        # every bot takes the lowest label among its own and its neighbours', then the label's
        # own label (pointer jumping): constant on each component when nothing moves
        lowest = np.minimum(labels[seat], labels[first])
        moved = labels.copy()
        np.minimum.at(moved, seat, lowest)
        np.minimum.at(moved, first, lowest)
        moved = moved[moved]
        if np.array_equal(moved, labels):
            break
        labels = moved
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    size = counts[inverse]
    order = np.lexsort((np.arange(n), inverse, size))   # by component size, then component
    groups = []
    start = 0
    for k in np.unique(size):
        count = int((size == k).sum())
        groups.append(order[start:start + count].reshape(count // int(k), int(k)))
        start += count
    return groups


#: components up to this many bots are solved together, padded to the largest of them
_BATCHED = 16


class BlockSolver:
    """Solves info z = r for the negative Hessian `info` of the fit in (strengths, free log
    scales), using `components` of its strength block."""

    def __init__(self, groups: list[np.ndarray], n: int) -> None:
        self.n = n
        small = [rows for rows in groups if rows.shape[1] <= _BATCHED]
        # the small components in one batch (numpy's batched factorizations, one call): each
        # padded to the largest with rows of the identity (index 0, masked out)
        self.batch: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if small:
            k = max(rows.shape[1] for rows in small)
            index = np.concatenate([np.pad(rows, ((0, 0), (0, k - rows.shape[1])))
                                    for rows in small])
            real = np.concatenate([np.arange(k)[None, :].repeat(len(rows), 0) < rows.shape[1]
                                   for rows in small])
            pair = real[:, :, None] & real[:, None, :]
            self.batch = (index, real, pair)
        self.large = [component for rows in groups if rows.shape[1] > _BATCHED
                      for component in rows]

    def _strengths(self, block: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
        """block^{-1} rhs for the strength block (n x n, block-diagonal over the components);
        None when a component's block is not positive definite."""
        out = np.empty_like(rhs)
        try:
            if self.batch is not None:
                index, real, pair = self.batch
                small = np.where(pair, block[index[:, :, None], index[:, None, :]],
                                 np.eye(index.shape[1]))                    # (count, k, k)
                np.linalg.cholesky(small)       # positive definite, or no solve here
                solved = np.linalg.solve(small, np.where(real[:, :, None], rhs[index], 0.0))
                out[index[real]] = solved[real]
            for rows in self.large:
                big = block[np.ix_(rows, rows)]
                np.linalg.cholesky(big)
                out[rows] = np.linalg.solve(big, rhs[rows])
        except np.linalg.LinAlgError:
            return None
        return out

    def solve(self, info: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
        """info^{-1} rhs (rhs: one column per right-hand side) when `info` is positive definite
        (a maximum's negative Hessian, so that a step along it points uphill); None otherwise,
        or when it has non-finite entries."""
        if not (np.all(np.isfinite(info)) and np.all(np.isfinite(rhs))):
            return None
        n = self.n
        border = info[:n, n:]
        both = self._strengths(info[:n, :n], np.concatenate([rhs[:n], border], axis=1))
        if both is None:
            return None
        columns = rhs.shape[1]
        theta, spread = both[:, :columns], both[:, columns:]
        if len(info) == n:
            return theta
        # the scales: the Schur complement of the strength block, positive definite with info
        schur = info[n:, n:] - border.T @ spread
        try:
            np.linalg.cholesky(schur)
        except np.linalg.LinAlgError:
            return None
        scales = np.linalg.solve(schur, rhs[n:] - border.T @ theta)
        return np.concatenate([theta - spread @ scales, scales])

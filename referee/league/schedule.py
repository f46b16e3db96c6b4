"""Fair league schedules: which bots meet at which table, in which seats, with which game seed.

A schedule is a pure function of its arguments (seeded `random.Random`, never the global one).
Tables are built in blocks of consecutive tables that seat each bot about once:

* **sizes** — with a range of table sizes, each table takes the size with fewest games so far;
* **bots** — a table may only take the bots that have played least at its size (fewest games
  in all first), so games per bot stay within one table per size. Among those, each next bot
  is the one that has met the bots already chosen least (then the one whose least-used seats
  still leave everyone a seat of their own), with seeded tie-breaking. When a block is chosen,
  bots are swapped between its tables of one size while that lowers the sum of squared pair
  meetings (swaps keep everyone's game counts);
* **seats** — each table is seated by the exact minimum-cost assignment of bots to the seats
  they have sat in least at that table size (so every bot cycles through every seat).

With `duplicate` (R50), each table is played once per rotation of its seats (the rows of a
Latin square), all with one game seed, so every bot of the table gets every seat and every
seat's dice once: dice luck cancels out between the bots.

The league seed is a secret (`referee.util.seeds`): the schedule's tie-breaking and every game seed
are derived from it one-way, and game ids are opaque, so nothing a bot is sent reveals a seed
(R51).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from referee.util.seeds import keyed_seed, opaque_id

_PASSES = 4   # at most this many passes of swaps over a block


@dataclass(frozen=True)
class ScheduledGame:
    """One game of a schedule."""

    index: int              # position in the schedule, 0-based
    bots: tuple[str, ...]   # bot name per seat (seat order)
    seed: int               # game seed (R50)
    group: int              # duplicate group (same table and seed, other rotations); else index
    rotation: int = 0       # with duplicate: which rotation of its group's table (0..k-1)

    def game_id(self, secret: int) -> str:
        """The game's id as bots see it: opaque, derived one-way from the league secret."""
        return opaque_id(secret, "game", self.index)


def table_sizes(bots: int, players: int | tuple[int, int]) -> list[int]:
    """The distinct table sizes a schedule uses: `players` (a size or an inclusive range), with
    sizes above the number of bots capped at it."""
    low, high = (players, players) if isinstance(players, int) else players
    if low < 2 or high < low:
        raise ValueError(f"bad table size {players!r}: need 2 <= low <= high")
    return sorted({min(size, bots) for size in range(low, high + 1)})


def make_schedule(
    bots: Sequence[str],
    games: int,
    players: int | tuple[int, int],
    seed: int,
    duplicate: bool = False,
) -> list[ScheduledGame]:
    """A balanced schedule of `games` games, deterministic from `seed`.

    `players` is a table size or an inclusive range of sizes (spread evenly over the games).
    With `duplicate`, each table is played in all k rotations of its k seats with one seed, so
    the game count is rounded up to complete the last table's rotations.
    Game seeds are `keyed_seed(seed, "game", group)`; `seed` is the league secret.
    """
    names = list(bots)
    if len(names) < 2:
        raise ValueError("a league needs at least 2 bots")
    if len(set(names)) != len(names):
        raise ValueError("bot names must be unique")
    if games < 0:
        raise ValueError("games must be >= 0")
    builder = _Builder(len(names), random.Random(keyed_seed(seed, "schedule")))
    schedule: list[ScheduledGame] = []
    group = 0   # one group per table (its rotations, with duplicate)
    for block in _blocks(_plan(table_sizes(len(names), players), games, duplicate), len(names)):
        for members in builder.block(block, duplicate):
            game_seed = keyed_seed(seed, "game", group)
            if duplicate:  # R50: one table, one seed, every rotation of the seats
                rotations = [members[shift:] + members[:shift] for shift in range(len(members))]
            else:
                rotations = [builder.seat(members)]
            for rotation, seats in enumerate(rotations):
                game = ScheduledGame(len(schedule), _named(names, seats), game_seed, group,
                                     rotation if duplicate else 0)
                schedule.append(game)
            group += 1
    return schedule


def _plan(sizes: list[int], games: int, duplicate: bool) -> list[int]:
    """The size of each table in turn: the size with fewest games so far (smallest first)."""
    played = dict.fromkeys(sizes, 0)
    plan: list[int] = []
    while sum(played.values()) < games:
        size = min(sizes, key=lambda k: (played[k], k))
        played[size] += size if duplicate else 1
        plan.append(size)
    return plan


def _blocks(plan: list[int], bots: int) -> list[list[int]]:
    """Consecutive tables grouped so that a block seats every bot at most once (mostly)."""
    blocks: list[list[int]] = []
    block: list[int] = []
    for size in plan:
        if block and sum(block) + size > bots:
            blocks.append(block)
            block = []
        block.append(size)
    if block:
        blocks.append(block)
    return blocks


def _named(names: list[str], seats: Sequence[int]) -> tuple[str, ...]:
    return tuple(names[i] for i in seats)


class _Builder:
    """Running counts (games, pair meetings, seats by table size) and the greedy choices."""

    def __init__(self, bots: int, rng: random.Random) -> None:
        self.n = bots
        self.rng = rng
        self.games = [0] * bots
        self.by_size: dict[int, list[int]] = {}          # size -> games per bot at that size
        self.met = [[0] * bots for _ in range(bots)]     # pair -> tables shared
        self.seats: dict[int, list[list[int]]] = {}      # size -> bot -> seat -> games
        self.prefs: dict[int, list[int]] = {}            # size -> bot -> mask of least-used seats

    def block(self, sizes: list[int], duplicate: bool) -> list[list[int]]:
        """The members of a block of tables, chosen and counted (games, pairs)."""
        tables = []
        for size in sizes:
            members = self.choose(size)
            self.count(members, size if duplicate else 1, +1)
            tables.append(members)
        self.improve(tables, duplicate)
        return tables

    def choose(self, size: int) -> list[int]:
        """`size` distinct bots for the next table, in a seeded order.

        Only bots that have played least at this size may be taken (fewest games in all first),
        so games per bot stay within one table per size; among those, each next bot is the one
        that has met the bots already chosen least.
        """
        noise = [self.rng.random() for _ in range(self.n)]  # seeded tie-breaking
        played = self.by_size.setdefault(size, [0] * self.n)
        order = sorted(range(self.n), key=lambda b: (played[b], self.games[b], noise[b]))
        cutoff = (played[order[size - 1]], self.games[order[size - 1]])
        chosen = [b for b in order if (played[b], self.games[b]) < cutoff]
        left = [b for b in order if (played[b], self.games[b]) == cutoff]
        prefs = self.prefs.setdefault(size, [(1 << size) - 1] * self.n)
        union = 0
        for b in chosen:
            union |= prefs[b]
        while len(chosen) < size:
            need = len(chosen) + 1
            best = min(left, key=lambda b: (
                sum(self.met[b][c] for c in chosen),
                max((self.met[b][c] for c in chosen), default=0),
                # would the table's least-used seats no longer cover everyone? (Hall's test on
                # the whole table only: cheap, and enough to steer clear of most clashes)
                (union | prefs[b]).bit_count() < need,  # noqa: B023
                noise[b],
            ))
            left.remove(best)
            chosen.append(best)
            union |= prefs[best]
        self.rng.shuffle(chosen)
        return chosen

    def count(self, members: list[int], weight: int, sign: int) -> None:
        """Add (sign +1) or remove (-1) a table played `weight` times to games and pairs."""
        played = self.by_size.setdefault(len(members), [0] * self.n)
        for b in members:
            self.games[b] += sign * weight
            played[b] += sign * weight
        for a, b in itertools.combinations(members, 2):
            self.met[a][b] += sign * weight
            self.met[b][a] += sign * weight

    def improve(self, tables: list[list[int]], duplicate: bool) -> None:
        """Swap bots between tables of the same size in a block while that lowers the sum of
        squared pair meetings (games per bot and per size are unchanged by such swaps)."""
        met = self.met
        for _ in range(_PASSES):
            improved = False
            for t1, t2 in itertools.combinations(tables, 2):
                if len(t1) != len(t2):
                    continue
                w = len(t1) if duplicate else 1
                shared = bool(set(t1) & set(t2))
                for i, j in itertools.product(range(len(t1)), range(len(t2))):
                    a, b = t1[i], t2[j]
                    if a in t2 or b in t1:
                        continue
                    if shared:
                        delta = _swap_delta(met, t1, t2, a, b, w)
                    else:  # (m-w)^2 - m^2 for each pair left, (m+w)^2 - m^2 for each joined
                        delta = sum(met[b][c] - met[a][c] + w for c in t1 if c != a)
                        delta += sum(met[a][d] - met[b][d] + w for d in t2 if d != b)
                    if delta < 0:
                        self._swap(t1, t2, i, j, w)
                        improved = True
            if not improved:
                break

    def _swap(self, t1: list[int], t2: list[int], i: int, j: int, weight: int) -> None:
        self.count(t1, weight, -1)
        self.count(t2, weight, -1)
        t1[i], t2[j] = t2[j], t1[i]
        self.count(t1, weight, +1)
        self.count(t2, weight, +1)

    def seat(self, members: list[int]) -> list[int]:
        """The seat order of `members` giving each bot the seats it has sat in least (at this
        table size), counted."""
        size = len(members)
        counts = self.seats.setdefault(size, [[0] * size for _ in range(self.n)])
        # Minimising the sum of counts is minimising the sum of their squares after the game.
        order = [members[i] for i in _assign([counts[b] for b in members])]
        prefs = self.prefs.setdefault(size, [(1 << size) - 1] * self.n)
        for s, b in enumerate(order):
            counts[b][s] += 1
            low = min(counts[b])
            prefs[b] = sum(1 << t for t in range(size) if counts[b][t] == low)
        return order


def _assign(cost: list[list[int]]) -> list[int]:
    """The minimum-cost assignment of rows to columns of a square matrix, as the row for each
    column (dynamic programming over sets of columns; first found wins ties)."""
    size = len(cost)
    best: dict[int, tuple[int, list[int]]] = {0: (0, [])}
    for row in range(size):   # rows are placed in order; the mask is the columns taken
        step: dict[int, tuple[int, list[int]]] = {}
        for mask, (total, cols) in best.items():
            for col in range(size):
                if not mask >> col & 1:
                    key = mask | 1 << col
                    value = total + cost[row][col]
                    if key not in step or value < step[key][0]:
                        step[key] = (value, [*cols, col])
        best = step
    _, cols = best[(1 << size) - 1]
    rows = [0] * size
    for row, col in enumerate(cols):
        rows[col] = row
    return rows


def _swap_delta(met: list[list[int]], t1: list[int], t2: list[int], a: int, b: int,
                w: int) -> int:
    """The change in the sum of squared meetings if `a` (in t1) and `b` (in t2) swap tables."""
    change: dict[tuple[int, int], int] = {}
    for table, old, new in ((t1, a, b), (t2, b, a)):
        for c in table:
            if c != old:
                for x, sign in ((old, -w), (new, w)):
                    key = (min(x, c), max(x, c))
                    change[key] = change.get(key, 0) + sign
    return sum((met[x][y] + d) ** 2 - met[x][y] ** 2 for (x, y), d in change.items())


@dataclass
class Balance:
    """How even a schedule is: (min, max) games per bot, meetings per pair of bots, and seat
    counts per bot and seat (seats are compared within a table size)."""

    games: tuple[int, int]
    pairs: tuple[int, int]
    seats: tuple[int, int]

    def describe(self) -> str:
        """One line, e.g. 'games per bot 29-31, pair meetings 14-16, seats per bot 7-8'."""
        return (f"games per bot {self.games[0]}-{self.games[1]}, "
                f"pair meetings {self.pairs[0]}-{self.pairs[1]}, "
                f"seats per bot {self.seats[0]}-{self.seats[1]}")


def balance(schedule: Sequence[ScheduledGame], bots: Sequence[str]) -> Balance:
    """The balance of `schedule` over `bots` (bots that never play count as zeros). Seat counts
    are per (bot, table size, seat) over the table sizes the schedule uses."""
    names = sorted(bots)
    n = len(names)
    index = {bot: i for i, bot in enumerate(names)}
    by_size: dict[int, list[list[int]]] = {}
    for game in schedule:
        by_size.setdefault(len(game.bots), []).append([index[bot] for bot in game.bots])
    games = np.zeros(n, dtype=np.int64)
    pairs = np.zeros((n, n), dtype=np.int64)
    seat_counts: list[np.ndarray] = []
    for size, rows in by_size.items():
        seated = np.array(rows, dtype=np.int64).reshape(len(rows), size)
        games += np.bincount(seated.ravel(), minlength=n)
        for a, b in itertools.combinations(range(size), 2):
            one, two = seated[:, a], seated[:, b]   # a pair counts once, lower index first
            flat = np.minimum(one, two) * n + np.maximum(one, two)
            pairs += np.bincount(flat, minlength=n * n).reshape(n, n)
        seat_counts += [np.bincount(seated[:, s], minlength=n) for s in range(size)]
    return Balance(
        games=_span(games.tolist()),
        pairs=_span(pairs[np.triu_indices(n, 1)].tolist()),
        seats=_span(np.concatenate(seat_counts).tolist() if seat_counts else []),
    )


def _span(values: Iterable[int]) -> tuple[int, int]:
    items = list(values)
    return (min(items), max(items)) if items else (0, 0)

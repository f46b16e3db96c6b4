"""League tables and head-to-head counts from played games: the numbers, not their text.

`league_table` and `head_to_head` are pure. Their text is elsewhere: the files a league writes
(Markdown, CSV, JSON) in `referee.report.table_files`, the terminal view in `referee.cli.tables`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from referee.bots.errors import STRIKE_TYPES
from referee.ratings.intervals import Standings
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import Ratings

#: Distinct value names a league keeps per bot in its tables and report (the first ones in
#: schedule order); more are dropped and counted, so a bot that sends new names every move
#: cannot grow them.
NAMES_PER_BOT = 16

# head_to_head value: (games at one table, times a finished ahead of b, times b ahead of a)
HeadToHead = dict[tuple[str, str], tuple[int, int, int]]


@dataclass(frozen=True)
class Row:
    """One bot's line of the league table. Averages and percentages are None without games.

    Its JSON form (`to_json`, read back by `from_json`) is the one every output gives: the
    table files' JSON (`LeagueFolder.table_json`), the club's season snapshot, its leaderboard
    and its API; its fields are listed once, in docs/ratings.md."""

    rank: int | None                    # None: fitted, not ranked (a season's retired version)
    bot: str
    mu: float
    sigma: float
    conservative: float                 # mu - 3 sigma: the sort key
    games: int                          # games with a result (not all_forfeit ones)
    wins: int                           # games at place 1 (a shared first place counts)
    win_pct: float | None               # 0..100
    avg_place: float | None
    avg_money: float | None             # dollars
    seat_win_pct: list[float | None]    # per seat 0..max seats - 1; None where never seated
    strikes: dict[str, int]             # per strike type (every type, zeros included)
    forfeits: int
    think_p50_ms: float | None          # over all the bot's decision latencies
    think_p95_ms: float | None
    # The global fit (referee/ratings/intervals.py), on the Elo scale; None without games or
    # without a fit.
    strength: float | None = None
    strength_low: float | None = None   # 95% interval (from the fit's curvature)
    strength_high: float | None = None
    rank_low: int | None = None         # the ranks the bot holds at 95%
    rank_high: int | None = None
    separated_from_next: bool | None = None   # intervals of this row and the next do not overlap
    all_forfeit: int = 0                # games where every seat forfeited: no result, no rating
    # per table size: win % per seat 0..size-1 (None where never seated)
    seat_win_pct_by_size: dict[int, list[float | None]] = field(default_factory=dict)
    # the numbers the bot sent with its decisions (notes): name -> mean over the decisions
    # that carried it, for its first NAMES_PER_BOT names in schedule order
    note_values: dict[str, float] = field(default_factory=dict)
    # the global fit at each table size the bot played: its strength there (the strength
    # times that size's scale, plackett.py) and its games there
    strength_by_size: dict[int, float | None] = field(default_factory=dict)
    games_by_size: dict[int, int] = field(default_factory=dict)
    note_names_dropped: int = 0         # distinct names past those, not kept

    def to_json(self) -> dict[str, Any]:
        """The row as JSON-ready data: its fields by name (the per-size maps keyed by the
        table size as text, as JSON keys are)."""
        # By hand, not dataclasses.asdict (a deep copy through every value: most of shaping
        # a leaderboard of a hundred rows); the containers are copied, their values are plain.
        data = {name: getattr(self, name) for name in _FIELDS}
        data["seat_win_pct"] = list(self.seat_win_pct)
        data["strikes"] = dict(self.strikes)
        data["note_values"] = dict(self.note_values)
        data["seat_win_pct_by_size"] = {str(size): list(values) for size, values
                                        in self.seat_win_pct_by_size.items()}
        for key in ("strength_by_size", "games_by_size"):
            data[key] = {str(size): value for size, value in getattr(self, key).items()}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Row:
        """The row `to_json` gave (ValueError, one line, when a field is missing); keys of no
        field are ignored."""
        missing = [f.name for f in _REQUIRED if f.name not in data]
        if missing:
            raise ValueError(f"a table row without {', '.join(missing)}")
        values = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        for key in _BY_SIZE:
            if key in values:
                values[key] = {int(size): value for size, value in values[key].items()}
        return cls(**values)


# The fields in order, those keyed by table size (JSON keys them by its text), and those
# without a default.
_FIELDS = tuple(f.name for f in dataclasses.fields(Row))
_BY_SIZE = ("seat_win_pct_by_size", "strength_by_size", "games_by_size")
_REQUIRED = [f for f in dataclasses.fields(Row)
             if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


def league_table(
    games: Sequence[PlayedGame], bots: Sequence[str], ratings: Ratings,
    standings: Standings | None = None,
) -> list[Row]:
    """One row per ranked bot, ranked 1, 2, 3... With `standings` (the global fit) rows follow
    its order, strongest first, and carry its intervals; without, best `mu - 3 sigma` first
    (ties by name)."""
    return league_rows(games, bots, ratings, standings)[0]


def league_rows(
    games: Sequence[PlayedGame], bots: Sequence[str], ratings: Ratings,
    standings: Standings | None = None,
) -> tuple[list[Row], list[Row]]:
    """(ranked, unranked): the rows of `league_table` and, for the bots the fit leaves unranked
    (`standings.unranked`: a season's retired versions), rows with their strengths and
    intervals but no rank nor rank range, strongest first."""
    seats = max((game.players for game in games), default=0)
    stats = {bot: _Stats(seats) for bot in bots}
    _count_places(games, bots, stats)
    quiet: dict[int, tuple] = {}   # table size -> strikes and latencies of a game without any
    for game in games:
        size = game.players
        if size not in quiet:
            quiet[size] = ((dict.fromkeys(STRIKE_TYPES, 0),) * size, ((),) * size)
        if not game.note_values and (game.strikes, game.latencies_us) == quiet[size]:
            continue    # nothing rare to add (no strikes, no notes, no latencies measured)
        for seat, bot in enumerate(game.bots):
            stats[bot].add_rare(game, seat)
    if standings is None:
        order = sorted(bots, key=lambda bot: (-ratings.conservative(bot), bot))
        return [stats[bot].row(rank, bot, ratings) for rank, bot in enumerate(order, start=1)], []
    separated = standings.separated_from_next()

    def fitted(rank: int | None, bot: str) -> Row:
        by_size = dict(standings.games_by_size.get(bot, {}))
        return dataclasses.replace(
            stats[bot].row(rank, bot, ratings),
            strength=standings.strength[bot], strength_low=standings.low[bot],
            strength_high=standings.high[bot], rank_low=standings.rank_low[bot],
            rank_high=standings.rank_high[bot], separated_from_next=separated.get(bot),
            games_by_size=by_size,
            strength_by_size={k: standings.strength_at(bot, k) for k in by_size})

    return ([fitted(rank, bot) for rank, bot in enumerate(standings.order, start=1)],
            [fitted(None, bot) for bot in standings.unranked])


# P(row bot finishes ahead of column bot), from the global fit
Pairwise = dict[tuple[str, str], float]


def head_to_head(games: Iterable[PlayedGame], bots: Sequence[str]) -> HeadToHead:
    """For every ordered pair (a, b) of distinct bots: (games together, a ahead, b ahead), where
    a is ahead of b when a's place is lower (better) than b's at the same table."""
    names = list(bots)
    n = len(names)
    together, ahead = np.zeros(n * n, dtype=np.int64), np.zeros(n * n, dtype=np.int64)
    for _, same, seat_bot, place in _by_size(games, names):
        scored = ~np.array([game.void for game in same], dtype=bool)
        seat_bot, place = seat_bot[scored], place[scored]   # all forfeited: nobody ahead
        for i, j in itertools.permutations(range(seat_bot.shape[1]), 2):
            pair = seat_bot[:, i] * n + seat_bot[:, j]
            together += np.bincount(pair, minlength=n * n)
            ahead += np.bincount(pair, weights=place[:, i] < place[:, j],
                                 minlength=n * n).astype(np.int64)
    return {(a, b): (int(together[x * n + y]), int(ahead[x * n + y]), int(ahead[y * n + x]))
            for x, a in enumerate(names) for y, b in enumerate(names) if x != y}


def _by_size(games: Iterable[PlayedGame], bots: Sequence[str]
             ) -> Iterable[tuple[int, list[PlayedGame], np.ndarray, np.ndarray]]:
    """Per table size k, ascending: k, the games of that size, and their bots' indexes in
    `bots` and places as (games, k) arrays (ValueError naming the first game with a bot not
    in `bots`)."""
    index = {bot: i for i, bot in enumerate(bots)}
    by_size: dict[int, tuple[list[PlayedGame], list[list[int]]]] = {}
    for game in games:
        try:
            seats = [index[bot] for bot in game.bots]
        except KeyError as exc:
            raise ValueError(f"game {game.index}: unknown bot {exc.args[0]!r}") from None
        same, rows = by_size.setdefault(len(seats), ([], []))
        same.append(game)
        rows.append(seats)
    for size, (same, rows) in sorted(by_size.items()):
        shape = (len(same), size)
        seat_bot = np.array(rows, dtype=np.int64).reshape(shape)
        place = np.array([game.places for game in same], dtype=np.int64).reshape(shape)
        yield size, same, seat_bot, place


def _count_places(games: Sequence[PlayedGame], bots: Sequence[str],
                  stats: dict[str, _Stats]) -> None:
    """Add to `stats` what league_table counts of every seat (games, wins, places, money,
    forfeits, per seat and table size): counted with numpy, per table size."""
    names = list(bots)
    for size, same, seat_bot, place in _by_size(games, names):
        counts = _SizeCounts(size, same, seat_bot, place, len(names))
        for i, bot in enumerate(names):
            counts.add_to(stats[bot], i)


class _SizeCounts:
    """The counts of league_table at one table size, per bot index (numpy)."""

    def __init__(self, size: int, games: list[PlayedGame], seat_bot: np.ndarray,
                 place: np.ndarray, bots: int) -> None:
        self.size, self.seat_bot, self.bots = size, seat_bot, bots
        forfeited = np.array([game.forfeited for game in games], dtype=bool).reshape(place.shape)
        money = np.array([game.money for game in games]).reshape(place.shape)
        every_seat_out = np.asarray(forfeited.all(axis=1))
        void = np.broadcast_to(every_seat_out[:, None], place.shape)
        scored, every = ~void, np.ones(place.shape, dtype=bool)
        won = scored & (place == 1)
        ones = np.ones(place.shape)
        self.forfeits, self.void = self._per_bot(forfeited, every), self._per_bot(ones, void)
        self.games, self.wins = self._per_bot(ones, scored), self._per_bot(ones, won)
        self.places = self._per_bot(place, scored)
        # money is whole dollars: a float64 sum of them is exact (far below 2**53)
        self.money = self._per_bot(money, scored, whole=money.dtype.kind in "iub")
        seat = np.broadcast_to(np.arange(size)[None, :], place.shape)
        flat = seat_bot * size + seat
        self.seat_games = np.bincount(flat[scored], minlength=bots * size).reshape(bots, size)
        self.seat_wins = np.bincount(flat[won], minlength=bots * size).reshape(bots, size)

    def _per_bot(self, values: np.ndarray, where: np.ndarray, whole: bool = True) -> list:
        sums = np.bincount(self.seat_bot[where], weights=values[where].astype(np.float64),
                           minlength=self.bots)
        return [int(v) for v in sums] if whole else sums.tolist()

    def add_to(self, total: _Stats, i: int) -> None:
        """Add bot `i`'s counts at this size to its running totals."""
        total.forfeits += self.forfeits[i]
        total.void += self.void[i]
        if not self.games[i]:
            return
        total.games += self.games[i]
        total.wins += self.wins[i]
        total.places += self.places[i]
        total.money += self.money[i]
        games, wins = self.seat_games[i].tolist(), self.seat_wins[i].tolist()
        size_games, size_wins = total.by_size.setdefault(self.size, ([0] * self.size,
                                                                     [0] * self.size))
        for s in range(self.size):
            total.seat_games[s] += games[s]
            total.seat_wins[s] += wins[s]
            size_games[s] += games[s]
            size_wins[s] += wins[s]


def percentile(values: Sequence[float], pct: float) -> float | None:
    """The `pct` percentile of `values`, interpolating linearly between the closest ranks (as
    numpy's default); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * pct / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class _Stats:
    """Running totals for one bot."""

    def __init__(self, seats: int) -> None:
        self.games = self.wins = self.forfeits = self.void = 0
        self.by_size: dict[int, tuple[list[int], list[int]]] = {}   # size -> (games, wins)
        self.places = self.money = 0
        self.seat_games = [0] * seats
        self.seat_wins = [0] * seats
        self.strikes = dict.fromkeys(STRIKE_TYPES, 0)
        self.latencies: list[int] = []
        self.note_values: dict[str, list[float]] = {}
        self.names_dropped: set[str] = set()

    def add_rare(self, game: PlayedGame, seat: int) -> None:
        """Add what is rare at a seat and kept per bot: strikes, latencies and notes (the
        counts of places come from _count_places)."""
        marks = game.strikes[seat]
        if not (marks.keys() <= self.strikes.keys() and not any(marks.values())):
            for kind, count in marks.items():
                self.strikes[kind] = self.strikes.get(kind, 0) + count
        if game.latencies_us[seat]:
            self.latencies.extend(game.latencies_us[seat])
        if game.note_values:
            kept = self.note_values
            for name, (total, count) in sorted(game.note_values[seat].items()):
                if name not in kept and len(kept) >= NAMES_PER_BOT:
                    self.names_dropped.add(name)
                    continue
                entry = kept.setdefault(name, [0.0, 0])
                entry[0] += total
                entry[1] += count

    def row(self, rank: int | None, bot: str, ratings: Ratings) -> Row:
        def ms(pct: float) -> float | None:
            value = percentile(self.latencies, pct)
            return None if value is None else value / 1000

        return Row(
            rank=rank, bot=bot,
            mu=ratings.mu[bot], sigma=ratings.sigma[bot], conservative=ratings.conservative(bot),
            games=self.games, wins=self.wins,
            win_pct=_pct(self.wins, self.games),
            avg_place=self.places / self.games if self.games else None,
            avg_money=self.money / self.games if self.games else None,
            seat_win_pct=[_pct(w, g) for w, g in zip(self.seat_wins, self.seat_games, strict=True)],
            strikes=dict(self.strikes), forfeits=self.forfeits,
            think_p50_ms=ms(50), think_p95_ms=ms(95), all_forfeit=self.void,
            seat_win_pct_by_size={
                size: [_pct(w, g) for w, g in zip(wins, games, strict=True)]
                for size, (games, wins) in sorted(self.by_size.items())},
            note_values={name: total / count
                         for name, (total, count) in sorted(self.note_values.items())},
            note_names_dropped=len(self.names_dropped),
        )


def _pct(part: int, whole: int) -> float | None:
    return 100 * part / whole if whole else None

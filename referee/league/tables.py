"""League tables and head-to-head counts from played games, and their renderings.

`league_table` and `head_to_head` are pure; the renderers turn their results into a rich
terminal view, Markdown, CSV and JSON, and `write_tables` writes those files to a directory.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from referee.bots.errors import STRIKE_TYPES
from referee.present.notes import NAMES_PER_BOT
from referee.ratings.intervals import Standings
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import Ratings

# head_to_head value: (games at one table, times a finished ahead of b, times b ahead of a)
HeadToHead = dict[tuple[str, str], tuple[int, int, int]]


@dataclass
class Row:
    """One bot's line of the league table. Averages and percentages are None without games."""

    rank: int
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
    strength_low: float | None = None   # 95% bootstrap interval
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


def league_table(
    games: Sequence[PlayedGame], bots: Sequence[str], ratings: Ratings,
    standings: Standings | None = None,
) -> list[Row]:
    """One row per bot, ranked 1, 2, 3... With `standings` (the global fit) rows follow its
    order, strongest first, and carry its intervals; without, best `mu - 3 sigma` first (ties
    by name)."""
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
        return [stats[bot].row(rank, bot, ratings) for rank, bot in enumerate(order, start=1)]
    separated = standings.separated_from_next()
    rows = []
    for rank, bot in enumerate(standings.order, start=1):
        row = stats[bot].row(rank, bot, ratings)
        row.strength, row.strength_low = standings.strength[bot], standings.low[bot]
        row.strength_high = standings.high[bot]
        row.rank_low, row.rank_high = standings.rank_low[bot], standings.rank_high[bot]
        row.separated_from_next = separated[bot]
        row.games_by_size = dict(standings.games_by_size.get(bot, {}))
        row.strength_by_size = {k: standings.strength_at(bot, k) for k in row.games_by_size}
        rows.append(row)
    return rows


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
        void = np.broadcast_to(forfeited.all(axis=1)[:, None], place.shape)
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

    def row(self, rank: int, bot: str, ratings: Ratings) -> Row:
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


def _known(bot: str, known: Container[str], game: PlayedGame) -> None:
    if bot not in known:
        raise ValueError(f"game {game.index}: unknown bot {bot!r}")


# --- Renderings ---------------------------------------------------------------------------

def _sizes(rows: Sequence[Row]) -> list[int]:
    """The table sizes of the rows' games (for win % by seat, which is given per size)."""
    return sorted({size for row in rows for size in row.seat_win_pct_by_size})


def _seat_columns(rows: Sequence[Row]) -> list[str]:
    """seat{s}_win_pct with one table size; seat{s}_of_{k}_win_pct per size k with several
    (pooling tables of 3 and 4 seats would mix unlike seats)."""
    sizes = _sizes(rows)
    if len(sizes) > 1:
        return [f"seat{s}_of_{k}_win_pct" for k in sizes for s in range(k)]
    seats = max((len(row.seat_win_pct) for row in rows), default=0)
    return [f"seat{s}_win_pct" for s in range(seats)]


def _fit_sizes(rows: Sequence[Row]) -> list[int]:
    """The table sizes the global fit saw (its per-size columns when there are several)."""
    sizes = sorted({size for row in rows for size in row.games_by_size})
    return sizes if len(sizes) > 1 else []


def _columns(rows: Sequence[Row]) -> list[str]:
    """The flat column names shared by CSV and Markdown."""
    kinds = _strike_kinds(rows)
    by_size = [f"{kind}_at_{k}" for k in _fit_sizes(rows) for kind in ("strength", "games")]
    return [
        "rank", "bot", "strength", "strength_low", "strength_high", "rank_low", "rank_high",
        "separated_from_next", *by_size, "mu", "sigma", "conservative", "games", "wins", "win_pct",
        "avg_place", "avg_money", *_seat_columns(rows),
        *(f"strikes_{kind}" for kind in kinds),
        "forfeits", "all_forfeit", "think_p50_ms", "think_p95_ms",
    ]


def _strike_kinds(rows: Sequence[Row]) -> list[str]:
    extra = sorted({kind for row in rows for kind in row.strikes} - set(STRIKE_TYPES))
    return [*STRIKE_TYPES, *extra]


def _flat(row: Row) -> dict[str, Any]:
    """A row as flat columns (raw values, None where undefined)."""
    flat = {key: value for key, value in asdict(row).items()
            if key not in ("seat_win_pct", "strikes", "seat_win_pct_by_size", "note_values",
                           "strength_by_size", "games_by_size", "note_names_dropped")}
    for size, games in row.games_by_size.items():
        flat[f"strength_at_{size}"] = row.strength_by_size.get(size)
        flat[f"games_at_{size}"] = games
    for seat, value in enumerate(row.seat_win_pct):
        flat[f"seat{seat}_win_pct"] = value
    for size, values in row.seat_win_pct_by_size.items():
        for seat, value in enumerate(values):
            flat[f"seat{seat}_of_{size}_win_pct"] = value
    for kind, count in row.strikes.items():
        flat[f"strikes_{kind}"] = count
    return flat


def _fmt(value: Any, digits: int = 2) -> str:
    """A value for people: floats with `digits` decimals, '-' for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _h2h_cell(h2h: HeadToHead, a: str, b: str) -> str:
    """'a_ahead-b_ahead' for a row bot a and column bot b; '' if they never met."""
    if a == b:
        return "x"
    together, ahead, behind = h2h.get((a, b), (0, 0, 0))
    return f"{ahead}-{behind}" if together else ""


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0f}"


def _interval(row: Row) -> str:
    if row.strength_low is None or row.strength_high is None:
        return "-"
    return f"{_signed(row.strength_low)}..{_signed(row.strength_high)}"


def rank_text(low: int | None, high: int | None, dash: str = "-") -> str:
    """The ranks a bot holds at 95% as the tables print them: `3`, `2-5` (joined by `dash`),
    or `-` before the bot has a rank."""
    if low is None or high is None:
        return "-"
    return str(low) if low == high else f"{low}{dash}{high}"


def _ranks(row: Row) -> str:
    return rank_text(row.rank_low, row.rank_high)


def _apart(row: Row) -> str:
    """The separation mark of a row from the next: '' if separated (or last), '~' if not."""
    return "~" if row.separated_from_next is False else ""


def _pair_cell(pairwise: Pairwise, a: str, b: str) -> str:
    if a == b:
        return "x"
    value = pairwise.get((a, b))
    return "" if value is None else f"{100 * value:.0f}%"


# Terminal columns: (heading, minimum width it needs); the first ones are always shown, the
# others while the terminal is wide enough. Every column is in the table files.
_TERMINAL_COLUMNS = [("#", 3), ("bot", 12), ("strength", 8), ("95% interval", 12),
                     ("ranks", 5), ("", 1), ("by size", 8), ("mu-3s", 7), ("games", 6), ("wins", 5),
                     ("win %", 6), ("avg place", 6), ("strikes", 8), ("forfeits", 6),
                     ("mu", 6), ("sigma", 6), ("avg $", 8), ("win % by seat", 14),
                     ("think p50 ms", 7), ("think p95 ms", 7)]
_FIT_COLUMNS = ("strength", "95% interval", "ranks", "", "by size")
_ALWAYS = ("#", "bot", "strength", "mu-3s", "games", "wins")
# With the global fit, its interval, rank range and separation mark are what a reader needs
# most (docs/ratings.md); mu-3s then waits its turn.
_ALWAYS_FITTED = ("#", "bot", "strength", "95% interval", "ranks", "", "games", "wins")


def _terminal_cells(row: Row, multi_size: bool) -> dict[str, str]:
    strikes = " ".join(f"{kind}:{n}" for kind, n in row.strikes.items() if n) or "-"
    if multi_size:
        by_seat = " ".join(f"{k}p:" + "/".join(_fmt(pct, 0) for pct in values)
                           for k, values in row.seat_win_pct_by_size.items())
    else:
        by_seat = "/".join(_fmt(pct, 0) for pct in row.seat_win_pct)
    forfeits = str(row.forfeits) + (f" ({row.all_forfeit} void)" if row.all_forfeit else "")
    return {
        "#": str(row.rank), "bot": row.bot, "strength": _signed(row.strength),
        "95% interval": _interval(row), "ranks": _ranks(row), "": _apart(row),
        "mu": _fmt(row.mu), "sigma": _fmt(row.sigma),
        "mu-3s": _fmt(row.conservative), "games": str(row.games), "wins": str(row.wins),
        "win %": _fmt(row.win_pct, 1), "avg place": _fmt(row.avg_place),
        "avg $": _fmt(None if row.avg_money is None else round(row.avg_money)),
        "win % by seat": by_seat, "strikes": strikes, "forfeits": forfeits,
        "think p50 ms": _fmt(row.think_p50_ms, 1), "think p95 ms": _fmt(row.think_p95_ms, 1),
        "by size": " ".join(f"{k}p:{_signed(v)}" for k, v in row.strength_by_size.items()),
    }


def render_terminal(rows: Sequence[Row], h2h: HeadToHead, console: Console | None = None,
                    pairwise: Pairwise | None = None, scale: dict[int, float] | None = None,
                    separation: str | None = None) -> None:
    """Print the league table, the head-to-head matrix and (with `pairwise`) the global fit's
    chance of each bot finishing ahead of each other, with rich, in the console's width: the
    most useful columns first, the others only while they fit (all are in the files).
    `scale` (table size -> scale of the strengths) says what a strength means at each size;
    `separation` the rule behind the `~` marks (default: 95% intervals overlap)."""
    console = console or Console()
    fitted = any(row.strength is not None for row in rows)
    skip = set() if _fit_sizes(rows) else {"by size"}   # one table size: nothing to say
    multi = len(_sizes(rows)) > 1
    cells = [_terminal_cells(row, multi) for row in rows]
    budget = console.width - 4
    shown = []
    candidates = [(name, minimum) for name, minimum in _TERMINAL_COLUMNS
                  if (fitted or name not in _FIT_COLUMNS) and name not in skip]
    always = _ALWAYS_FITTED if fitted else _ALWAYS
    for name, minimum in sorted(candidates, key=lambda c: c[0] not in always):
        wanted = max([minimum, len(name), *(len(c[name]) for c in cells)]) + 3
        if name not in always and wanted > budget:
            continue
        budget -= wanted
        shown.append(name)
    order = [name for name, _ in candidates if name in shown]
    hidden = len(candidates) - len(order)
    title = "League table" + (f" ({hidden} more columns in table.md)" if hidden else "")
    _say(console, title)    # not rich's title: it pads the line to the table's width
    table = Table()
    for name in order:
        table.add_column(name, justify="left" if name == "bot" else "right",
                         overflow="fold", no_wrap=name == "95% interval")
    for row_cells in cells:
        table.add_row(*(row_cells[name] for name in order))
    console.print(table)
    for line in note_lines(rows):
        _say(console, line)
    if fitted:
        _say(console, "strength: global fit, Elo scale: 0 is average, +100 about 64% to "
                      "finish ahead; ranks: held at 95%; ~: not separated from the next row "
                      f"({separation or '95% intervals overlap'})")
        if scale and len(scale) > 1:
            _say(console, scale_line(scale))
    names = [row.bot for row in rows]
    width = 4 + max(len(n) for n in names) + sum(max(len(n), 5) + 3 for n in names) \
        if names else 0
    if width > console.width:
        _say(console, "Head to head: in table.md and head_to_head.csv (too wide for this "
                      "terminal)")
        return
    _say(console, "Head to head: games the row bot finished ahead of the column bot - behind it")
    _print_matrix(console, names, lambda a, b: _h2h_cell(h2h, a, b))
    if pairwise:
        _say(console, "Chance that the row bot finishes ahead of the column bot (global fit)")
        _print_matrix(console, names, lambda a, b: _pair_cell(pairwise, a, b))


def _say(console: Console, text: str) -> None:
    """A line of plain text (bot names in it are not markup) wrapped to the console's width
    at word breaks, with no trailing spaces (rich's own wrapping pads lines)."""
    from rich.text import Text

    from referee.present.render import fit

    for part in fit(text, console.width):
        console.print(Text(part), soft_wrap=True)


def scale_line(scale: dict[int, float]) -> str:
    """What a strength means at each table size: the scale of each size against the
    reference (the size whose scale is 1)."""
    reference = next(k for k, c in scale.items() if c == 1.0)
    others = ", ".join(f"{k}: x{c:.2f}" for k, c in sorted(scale.items()) if k != reference)
    return (f"strength is read at tables of {reference} (the most played); gaps at other "
            f"sizes ('by size'): {others}")


def note_lines(rows: Sequence[Row]) -> list[str]:
    """The averages of the numbers bots sent with their decisions, a heading and one line per
    bot that sent any (names are bot text: escaped); [] if none did."""
    from referee.present.text import safe_line

    lines = [f"{safe_line(row.bot)}: " + ", ".join(
        f"{safe_line(name, 40)} {_fmt(mean, 3 if abs(mean) < 100 else 0)}"
        for name, mean in row.note_values.items()) for row in rows if row.note_values]
    lines += [dropped_names_line(row) for row in rows if row.note_names_dropped]
    return ["Notes from bots (average per decision):", *lines] if lines else []


def dropped_names_line(row: Row) -> str:
    """The one line that says a bot sent more value names than a league keeps."""
    from referee.present.text import safe_line

    return (f"{safe_line(row.bot)}: {row.note_names_dropped} more value names dropped; a "
            f"league keeps the first {NAMES_PER_BOT} names of each bot")


def _print_matrix(console: Console, names: list[str], cell: Any) -> None:
    matrix = Table()
    matrix.add_column("")
    for name in names:
        matrix.add_column(name, justify="center")
    for a in names:
        matrix.add_row(a, *(cell(a, b) for b in names))
    console.print(matrix)


def to_markdown(rows: Sequence[Row], h2h: HeadToHead, pairwise: Pairwise | None = None) -> str:
    """The league table, the head-to-head matrix and (with `pairwise`) the chance matrix as
    Markdown tables (numbers to 2 decimals, '-' where undefined)."""
    columns = _columns(rows)
    lines = ["## League table", "", _md_line(columns), _md_line(["---"] * len(columns))]
    for row in rows:
        flat = _flat(row)
        lines.append(_md_line([_fmt(flat.get(column)) for column in columns]))
    notes = note_lines(rows)
    if notes:
        lines += ["", "## Notes from bots", "", "Average per decision of the numbers each bot "
                  "sent with its moves.", "", *(f"- {_md_text(line)}" for line in notes[1:])]
    names = [row.bot for row in rows]
    lines += ["", "## Head to head", "", "Cells: times the row bot finished ahead of the column "
              "bot - times behind, at the same table.", "",
              _md_line(["", *names]), _md_line(["---"] * (len(names) + 1))]
    for a in names:
        lines.append(_md_line([a, *(_h2h_cell(h2h, a, b) for b in names)]))
    if any(row.strength is not None for row in rows):
        lines += ["", "strength: global Plackett-Luce fit on the Elo scale (0 = average), with "
                  "its 95% bootstrap interval and the ranks held at 95%; separated_from_next: "
                  "no when this row is not separated from the next (the rule is under "
                  "'separation' above; by default their 95% intervals overlap)."]
        if _fit_sizes(rows):
            lines += ["", "strength_at_K: the bot's strength at tables of K (a gap there is "
                      "the strength gap times that size's scale, under "
                      "'strength_scale_by_table_size' above); games_at_K: its games there."]
    if pairwise:
        lines += ["", "## Chance of finishing ahead", "",
                  "Cells: the global fit's chance that the row bot finishes ahead of the column "
                  "bot at a table they share.", "",
                  _md_line(["", *names]), _md_line(["---"] * (len(names) + 1))]
        for a in names:
            lines.append(_md_line([a, *(_pair_cell(pairwise, a, b) for b in names)]))
    return "\n".join(lines) + "\n"


def _md_text(text: str) -> str:
    """`text` (bot-chosen names included) with Markdown's and HTML's special characters
    escaped, so that it shows as written and links or tags in it do nothing."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~])", r"\\\1", text)


def _md_line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def to_csv(rows: Sequence[Row], facts: dict[str, Any] | None = None) -> str:
    """The league table as CSV: the league's `facts` as `# key: value` lines first (if any),
    one header row, flat columns (seatN_win_pct, strikes_KIND), numbers rounded to 2 decimals
    (full precision is in table.json), empty cells where undefined."""
    columns = _columns(rows)
    out = io.StringIO()
    for key, value in (facts or {}).items():
        out.write(f"# {key}: {_fact(value)}\n")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        flat = _flat(row)
        writer.writerow({column: _csv_value(flat.get(column)) for column in columns})
    return out.getvalue()


def _csv_value(value: Any) -> str:
    return "" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _fact(value: Any) -> str:
    """A league fact on one line, numbers rounded for reading."""
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fact(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(_fact(v) for v in value) or "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def h2h_csv(h2h: HeadToHead) -> str:
    """Head-to-head counts as CSV: a, b, games, a_ahead, b_ahead (one line per ordered pair)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "games", "a_ahead", "b_ahead"])
    for (a, b), (together, ahead, behind) in h2h.items():
        writer.writerow([a, b, together, ahead, behind])
    return out.getvalue()


def pairwise_csv(pairwise: Pairwise) -> str:
    """The chance matrix as CSV: a, b, p_ahead (one line per ordered pair)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "p_ahead"])
    for (a, b), value in pairwise.items():
        writer.writerow([a, b, repr(value)])
    return out.getvalue()


def to_json(rows: Sequence[Row], h2h: HeadToHead,
            pairwise: Pairwise | None = None) -> dict[str, Any]:
    """The table and head-to-head counts as JSON-ready data: {"table": [row, ...],
    "head_to_head": [{"a", "b", "games", "a_ahead", "b_ahead"}, ...]}, plus with `pairwise`
    "pairwise": [{"a", "b", "p_ahead"}, ...] (the global fit's chance a finishes ahead of b)."""
    data: dict[str, Any] = {
        "table": [asdict(row) for row in rows],
        "head_to_head": [
            {"a": a, "b": b, "games": together, "a_ahead": ahead, "b_ahead": behind}
            for (a, b), (together, ahead, behind) in h2h.items()
        ],
    }
    if pairwise is not None:
        data["pairwise"] = [{"a": a, "b": b, "p_ahead": value}
                            for (a, b), value in pairwise.items()]
    return data


def write_tables(
    out_dir: Path, rows: Sequence[Row], h2h: HeadToHead, extra: dict[str, Any] | None = None,
    pairwise: Pairwise | None = None,
) -> list[Path]:
    """Write table.md, table.csv, table.json and head_to_head.csv (and, with `pairwise`,
    pairwise.csv) into `out_dir` (created if needed) and return their paths. `extra` (e.g.
    league settings) is listed at the top of the Markdown and kept under "extra" in the JSON."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    markdown = to_markdown(rows, h2h, pairwise)
    data = to_json(rows, h2h, pairwise)
    if extra:
        markdown = ("## League\n\n" + "".join(f"- {key}: {_fact(value)}\n"
                                             for key, value in extra.items())
                    + "\n" + markdown)
        data["extra"] = extra
    files = {
        "table.md": markdown,
        "table.csv": to_csv(rows, extra),
        "table.json": json.dumps(data, indent=2, default=str) + "\n",
        "head_to_head.csv": h2h_csv(h2h),
    }
    if pairwise is not None:
        files["pairwise.csv"] = pairwise_csv(pairwise)
    paths = []
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths

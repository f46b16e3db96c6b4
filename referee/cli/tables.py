"""The league table in a terminal, with rich: the most useful columns first, the others only
while they fit the console's width (every column is in the table files), then the
head-to-head and chance matrices; and the worker table of a league played on a cluster."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from referee.league.folder import HEAD_TO_HEAD_CSV, TABLE_MD
from referee.league.tables import HeadToHead, Pairwise, Row
from referee.league.worker_health import WorkerRow
from referee.present.render import fit
from referee.ratings.plackett import SizeTest
from referee.report.table_files import (
    apart,
    fit_sizes,
    fmt,
    h2h_cell,
    interval,
    note_lines,
    pair_cell,
    ranks,
    signed,
    table_sizes,
)
from referee.report.worker_tables import HEADERS, worker_cells

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
        by_seat = " ".join(f"{k}p:" + "/".join(fmt(pct, 0) for pct in values)
                           for k, values in row.seat_win_pct_by_size.items())
    else:
        by_seat = "/".join(fmt(pct, 0) for pct in row.seat_win_pct)
    forfeits = str(row.forfeits) + (f" ({row.all_forfeit} void)" if row.all_forfeit else "")
    return {
        "#": str(row.rank), "bot": row.bot, "strength": signed(row.strength),
        "95% interval": interval(row), "ranks": ranks(row), "": apart(row),
        "mu": fmt(row.mu), "sigma": fmt(row.sigma),
        "mu-3s": fmt(row.conservative), "games": str(row.games), "wins": str(row.wins),
        "win %": fmt(row.win_pct, 1), "avg place": fmt(row.avg_place),
        "avg $": fmt(None if row.avg_money is None else round(row.avg_money)),
        "win % by seat": by_seat, "strikes": strikes, "forfeits": forfeits,
        "think p50 ms": fmt(row.think_p50_ms, 1), "think p95 ms": fmt(row.think_p95_ms, 1),
        "by size": " ".join(f"{k}p:{signed(v)}" for k, v in row.strength_by_size.items()),
    }


def render_terminal(rows: Sequence[Row], h2h: HeadToHead, console: Console | None = None,
                    pairwise: Pairwise | None = None, scale: dict[int, float] | None = None,
                    separation: str | None = None, size_test: SizeTest | None = None) -> None:
    """Print the league table, the head-to-head matrix and (with `pairwise`) the global fit's
    chance of each bot finishing ahead of each other, with rich, in the console's width: the
    most useful columns first, the others only while they fit (all are in the files).
    `scale` (table size -> scale of the strengths) says what a strength means at each size;
    `separation` the rule behind the `~` marks (default: 95% intervals overlap); `size_test`
    whether the games fit one scale per size (`size_test_lines`)."""
    console = console or Console()
    fitted = any(row.strength is not None for row in rows)
    skip = set() if fit_sizes(rows) else {"by size"}   # one table size: nothing to say
    multi = len(table_sizes(rows)) > 1
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
    title = "League table" + (f" ({hidden} more columns in {TABLE_MD})" if hidden else "")
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
        where = " at the typical table" if scale and len(scale) > 1 else ""
        _say(console, "strength: global fit, Elo scale: 0 is average, +100 about 64% to "
                      f"finish ahead{where}; ranks: held at 95%; ~: not separated from the next "
                      f"row ({separation or '95% intervals overlap'})")
        if scale and len(scale) > 1:
            _say(console, scale_line(scale))
        for line in size_test_lines(size_test):
            _say(console, line)
    names = [row.bot for row in rows]
    width = 4 + max(len(n) for n in names) + sum(max(len(n), 5) + 3 for n in names) \
        if names else 0
    if width > console.width:
        _say(console, f"Head to head: in {TABLE_MD} and {HEAD_TO_HEAD_CSV} (too wide for this "
                      "terminal)")
        return
    _say(console, "Head to head: games the row bot finished ahead of the column bot - behind it")
    _print_matrix(console, names, lambda a, b: h2h_cell(h2h, a, b))
    if pairwise:
        _say(console, "Chance that the row bot finishes ahead of the column bot (global fit)")
        _print_matrix(console, names, lambda a, b: pair_cell(pairwise, a, b))


def _say(console: Console, text: str) -> None:
    """A line of plain text (bot names in it are not markup) wrapped to the console's width
    at word breaks, with no trailing spaces (rich's own wrapping pads lines)."""
    for part in fit(text, console.width):
        console.print(Text(part), soft_wrap=True)


def scale_line(scale: dict[int, float]) -> str:
    """What a strength means at each table size: it is read at the league's typical table
    (the scales' geometric mean over its games is 1), and a gap at size k is c_k times it."""
    sizes = ", ".join(f"{k}: x{c:.2f}" for k, c in sorted(scale.items()))
    return (f"strength is read at this league's typical table (scales average 1 over its "
            f"games); gaps at each size ('by size'): {sizes}")


def size_test_lines(test: SizeTest | None) -> list[str]:
    """What the likelihood-ratio test of one scale per table size says, in a line; when the
    games reject it, the strengths fitted at each size alone, one line per bot."""
    if test is None:
        return []
    said = f"likelihood ratio {test.statistic:.1f}, {test.df} df, p = {test.p:.3f}"
    if not test.rejected:
        return [f"one scale per table size fits these games ({said})"]
    lines = [f"one scale per table size does NOT fit these games ({said}): the bots' gaps "
             f"differ between sizes beyond the scales; each size fitted alone (Elo at that "
             f"size):"]
    bots = next(iter(test.by_size.values()))
    for bot in bots:
        cells = [f"{k}p {v:+.0f}" for k, by_bot in sorted(test.by_size.items())
                 if (v := by_bot.get(bot)) is not None]
        lines.append(f"  {bot}: {', '.join(cells) or '-'}")
    return lines


def _print_matrix(console: Console, names: list[str], cell: Any) -> None:
    matrix = Table()
    matrix.add_column("")
    for name in names:
        matrix.add_column(name, justify="center")
    for a in names:
        matrix.add_row(a, *(cell(a, b) for b in names))
    console.print(matrix)


def render_workers(rows: Sequence[WorkerRow], console: Console | None = None) -> None:
    """Print the worker table with rich."""
    table = Table(title="Workers", title_justify="left")
    for name in HEADERS:
        table.add_column(name, justify="left" if name == "worker" else "right")
    for row in rows:
        table.add_row(*worker_cells(row))
    (console or Console()).print(table)

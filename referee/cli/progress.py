"""League progress for people: a live bar with the standings on a terminal, plain periodic
lines elsewhere, or nothing; and a line per finished game with `referee league --verbose`.
The league runner is handed one of these (`make_progress`) and calls the `Progress`
interface (`referee.league.progress`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from rich.console import Console
from rich.progress import Progress as RichProgress

from referee.game.match import MatchResult
from referee.league.progress import Progress
from referee.present.render import fit, money
from referee.present.text import safe_line

STANDINGS_ROWS = 5   # bots shown under the bar


class _Shown(Progress):
    """A display that prints: a finished game is told with `say`."""

    def log_game(self, result: MatchResult, index: int | None) -> None:
        self.say([game_line(result, index)])


class LineProgress(_Shown):
    """A line every `every` seconds (and at the end): for logs and pipes."""

    def __init__(self, stream: TextIO = sys.stderr, every: float = 5.0) -> None:
        super().__init__()
        self.stream, self.every = stream, every
        self.last = 0.0

    def say(self, lines: list[str]) -> None:
        for line in lines:
            for part in fit(line):
                print(part, file=self.stream, flush=True)

    def show(self) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or self.done == self.total:
            self.last = now
            print(f"games {self.done}/{self.total}, {self.rate_text()}, "
                  f"strikes {self.strikes}, forfeits {self.forfeits}",
                  file=self.stream, flush=True)


class BarProgress(_Shown):
    """A live rich progress bar for terminals (rate and ETA from `Progress`, not rich's own
    estimate, which counts the games recorded before a resume as if just played)."""

    wants_live_table = True

    def __init__(self, console: Any = None) -> None:
        super().__init__()
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn

        self.bar = _BarAndTable(self.live_table, TextColumn("games"), BarColumn(),
                                MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                                TextColumn("{task.fields[strikes]}"), transient=False,
                                console=console or Console(stderr=True))
        self.task = self.bar.add_task("league", total=1, rate="", strikes="")

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
        self.bar.update(self.task, total=total, completed=done, rate=self.rate_text())
        self.bar.start()

    def show(self) -> None:
        self.bar.update(self.task, completed=self.done, rate=self.rate_text(),
                        strikes=f"strikes {self.strikes}, forfeits {self.forfeits}")

    def say(self, lines: list[str]) -> None:
        from rich.text import Text

        width = self.bar.console.width
        parts = [part for line in lines for part in fit(line, width)]
        # one print: above the bar, which stays at the bottom and is redrawn once
        self.bar.console.print(Text("\n".join(parts)), soft_wrap=True)

    def close(self) -> None:
        self.bar.stop()

    def live_table(self) -> Any:
        """The top of the table as it stands (a rich Table), or None before any game is rated."""
        live = self.live
        if live is None or live.rated == 0:
            return None
        from rich.table import Table

        table = Table(title=f"standings after {live.rated} of {len(live.order)} games",
                      title_justify="left", box=None, pad_edge=False)
        for name in ("#", "bot", "mu", "sigma", "mu-3s", "games", "wins"):
            table.add_column(name, justify="left" if name == "bot" else "right")
        for rank, row in enumerate(live.top(STANDINGS_ROWS), start=1):
            table.add_row(str(rank), _printable(row.bot), f"{row.mu:.2f}", f"{row.sigma:.2f}",
                          f"{row.conservative:.2f}", str(row.games), str(row.wins))
        return table


def game_line(result: MatchResult, index: int | None) -> str:
    """One finished game as a line, as chess tournament runners print them: its schedule index
    (what `referee show DIR INDEX` takes) and id, the bots in finishing order with their money,
    then any strikes and the reason of any forfeit, e.g. 'game 12 g3f9c0a1b2c3d4e5: 1. greedy
    $340k, 2. random $210k; strikes: random 1 timeout'."""
    where = f"game {index}" if index is not None else "game"
    order = sorted(range(len(result.seats)), key=lambda s: (result.places[s], s))
    standing = ", ".join(f"{result.places[s]}. {safe_line(result.seats[s].bot)} "
                         f"{money(result.money[s])}" for s in order)
    parts = [f"{where} {result.game_id}: {standing}"]
    struck = [f"{safe_line(seat.bot)} " + " ".join(f"{n} {kind}" for kind, n in
                                                   seat.strikes.items() if n)
              for seat in result.seats if seat.strike_count]
    if struck:
        parts.append("strikes: " + ", ".join(struck))
    parts += [f"{safe_line(seat.bot)} forfeited: {safe_line(seat.reason, 200)}"
              for seat in result.seats if seat.forfeited]
    return "; ".join(parts)


def _printable(name: str) -> str:
    """A bot name for the live table: escapes shown, no rich markup."""
    from rich.markup import escape

    return escape(safe_line(name))


class _BarAndTable(RichProgress):
    """A rich progress bar with a renderable drawn under it, refreshed with the bar."""

    def __init__(self, below: Callable[[], Any], *columns: Any, **options: Any) -> None:
        self.below = below
        super().__init__(*columns, **options)

    def get_renderables(self) -> Iterable[Any]:
        yield self.make_tasks_table(self.tasks)
        table = self.below()
        if table is not None:
            yield table


def make_progress(quiet: bool, games_log: bool = False) -> Progress:
    """Nothing when quiet, a bar on a terminal, lines otherwise; with `games_log`, a line
    per finished game as well."""
    if quiet:
        return Progress()
    progress = BarProgress() if sys.stderr.isatty() else LineProgress()
    progress.games_log = games_log
    return progress

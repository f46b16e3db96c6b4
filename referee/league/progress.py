"""League progress: a live bar on a terminal, plain periodic lines elsewhere, or nothing."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from referee.match import MatchResult


class Progress:
    """Counts games and strikes; subclasses show them."""

    def __init__(self) -> None:
        self.total = 0
        self.done = 0
        self.strikes = 0
        self.forfeits = 0
        self.played = 0          # games played in this run (not resumed ones)
        self.started = time.monotonic()

    def start(self, total: int, done: int) -> None:
        """The league has `total` games, `done` of them already recorded."""
        self.total, self.done = total, done
        self.started = time.monotonic()

    def game_done(self, result: MatchResult) -> None:
        """One more game is recorded."""
        self.done += 1
        self.played += 1
        self.strikes += sum(seat.strike_count for seat in result.seats)
        self.forfeits += sum(seat.forfeited for seat in result.seats)
        self.show()

    def show(self) -> None:
        """Display the counts (nothing by default)."""

    def close(self) -> None:
        """The run ended."""

    def rate(self) -> float:
        """Games per second in this run."""
        elapsed = time.monotonic() - self.started
        return self.played / elapsed if elapsed > 0 else 0.0

    def eta(self) -> float | None:
        """Seconds left at the current rate."""
        rate = self.rate()
        return (self.total - self.done) / rate if rate > 0 else None


class LineProgress(Progress):
    """A line every `every` seconds (and at the end): for logs and pipes."""

    def __init__(self, stream: TextIO = sys.stderr, every: float = 5.0) -> None:
        super().__init__()
        self.stream, self.every = stream, every
        self.last = 0.0

    def show(self) -> None:
        now = time.monotonic()
        if now - self.last >= self.every or self.done == self.total:
            self.last = now
            eta = self.eta()
            eta_text = f", ETA {eta:.0f} s" if eta is not None and self.done < self.total else ""
            print(f"games {self.done}/{self.total}, {self.rate():.1f} games/s{eta_text}, "
                  f"strikes {self.strikes}, forfeits {self.forfeits}",
                  file=self.stream, flush=True)


class BarProgress(Progress):
    """A live rich progress bar for terminals."""

    def __init__(self) -> None:
        super().__init__()
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        self.bar = RichProgress(TextColumn("games"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
                                TextColumn("{task.fields[strikes]}"), transient=False)
        self.task = self.bar.add_task("league", total=1, rate="", strikes="")

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
        self.bar.update(self.task, total=total, completed=done)
        self.bar.start()

    def show(self) -> None:
        self.bar.update(self.task, completed=self.done, rate=f"{self.rate():.1f} games/s",
                        strikes=f"strikes {self.strikes}, forfeits {self.forfeits}")

    def close(self) -> None:
        self.bar.stop()


def make_progress(quiet: bool) -> Progress:
    """Nothing when quiet, a bar on a terminal, lines otherwise."""
    if quiet:
        return Progress()
    return BarProgress() if sys.stderr.isatty() else LineProgress()

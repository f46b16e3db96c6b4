"""What a running league tells its display: the interface the league runner is handed.

The league shows nothing itself. It calls `start`, `announce`, `game_done` and `close` on the
`Progress` it is given; this base counts games, strikes and the rate, and shows nothing (a
quiet run, tests, benchmarks). The displays for people (a live bar on a terminal, plain
periodic lines elsewhere) subclass it in `referee.cli.progress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from referee.game.match import MatchResult
from referee.league.live import LiveTable, played_game


class Progress:
    """Counts games and strikes; subclasses show them.

    The rate counts only games played in this run, from the moment the first of them was
    recorded: starting the bots, the first games' warm-up and the games recorded before a
    resume never make the rate or the ETA look better or worse than the league runs.
    """

    wants_live_table = False   # True: the runner keeps `live` (the table so far) up to date
    games_log = False          # True: a line per finished game (`referee league --verbose`)

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.live: LiveTable | None = None
        self.total = 0
        self.done = 0
        self.strikes = 0
        self.forfeits = 0
        self.played = 0          # games played in this run (not resumed ones)
        self.first_at: float | None = None   # when this run's first game was recorded

    def start(self, total: int, done: int) -> None:
        """The league has `total` games, `done` of them already recorded."""
        self.total, self.done = total, done

    def game_done(self, result: MatchResult, index: int | None = None) -> None:
        """One more game is recorded (at schedule index `index`, for the live standings)."""
        if self.live is not None and index is not None:
            self.live.add(played_game(index, result))
        self.count(sum(seat.strike_count for seat in result.seats),
                   sum(seat.forfeited for seat in result.seats))
        if self.games_log:
            self.log_game(result, index)
        self.show()

    def announce(self, lines: list[str]) -> None:
        """What the league is about to do (its seed, its schedule's balance), at the start."""
        self.say(lines)

    def say(self, lines: list[str]) -> None:
        """Print `lines` beside the progress display (nothing by default: quiet)."""

    def log_game(self, result: MatchResult, index: int | None) -> None:
        """Tell one finished game, when `games_log` asks for it (nothing by default)."""

    def count(self, strikes: int = 0, forfeits: int = 0) -> None:
        """Count one more recorded game with its strikes and forfeits."""
        self.done += 1
        self.played += 1
        self.strikes += strikes
        self.forfeits += forfeits
        if self.first_at is None:
            self.first_at = self.clock()

    def show(self) -> None:
        """Display the counts (nothing by default)."""

    def close(self) -> None:
        """The run ended."""

    def rate(self) -> float | None:
        """Games per second in this run since its first game was recorded (None until two)."""
        if self.first_at is None or self.played < 2:
            return None
        elapsed = self.clock() - self.first_at
        return (self.played - 1) / elapsed if elapsed > 0 else None

    def eta(self) -> float | None:
        """Seconds left at the current rate (None while unknown)."""
        rate = self.rate()
        return (self.total - self.done) / rate if rate else None

    def rate_text(self) -> str:
        """"2.5 games/s, ETA 40 s" or "measuring" before the rate is known."""
        rate, eta = self.rate(), self.eta()
        if rate is None:
            return "rate: measuring"
        eta_text = f", ETA {eta:.0f} s" if eta is not None and self.done < self.total else ""
        return f"{rate:.1f} games/s{eta_text}"

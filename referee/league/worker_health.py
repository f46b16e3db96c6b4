"""Per-worker health of a league played on a cluster: games, strikes and think time per worker.

A slow or broken machine stands out: its bots strike more, or think longer, than on the other
workers. `think_ratio` compares a worker's median think time with that of all games. These are
the numbers; their text (the terminal's and the files') is `referee.report.worker_tables`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.bots.errors import STRIKE_TYPES
from referee.league.tables import percentile
from referee.ratings.results import PlayedGame


@dataclass
class WorkerRow:
    """One worker's line: what it played and how the bots fared there."""

    worker: str
    games: int
    strikes: dict[str, int]          # per strike type, every type
    forfeits: int
    think_p50_ms: float | None
    think_p95_ms: float | None
    think_ratio: float | None        # its median think time / the league's (1.0 = typical)


def worker_health(games: Sequence[PlayedGame], workers: Mapping[int, str]) -> list[WorkerRow]:
    """One row per worker that played any of `games` (by `workers`: index -> worker), by name."""
    by_worker: dict[str, list[PlayedGame]] = {}
    for game in games:
        if game.index in workers:
            by_worker.setdefault(workers[game.index], []).append(game)
    overall = percentile([us for game in games for seat in game.latencies_us for us in seat], 50)
    rows = []
    for name in sorted(by_worker):
        played = by_worker[name]
        strikes = dict.fromkeys(STRIKE_TYPES, 0)
        for game in played:
            for seat in game.strikes:
                for kind, count in seat.items():
                    strikes[kind] = strikes.get(kind, 0) + count
        latencies = [us for game in played for seat in game.latencies_us for us in seat]
        p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
        rows.append(WorkerRow(
            worker=name, games=len(played), strikes=strikes,
            forfeits=sum(sum(game.forfeited) for game in played),
            think_p50_ms=None if p50 is None else p50 / 1000,
            think_p95_ms=None if p95 is None else p95 / 1000,
            think_ratio=None if p50 is None or not overall else p50 / overall))
    return rows

"""Per-worker health of a league played on a cluster: games, strikes and think time per worker.

A slow or broken machine stands out: its bots strike more, or think longer, than on the other
workers. `think_ratio` compares a worker's median think time with that of all games.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.bots.errors import STRIKE_TYPES
from referee.league.tables import percentile
from referee.ratings.results import PlayedGame

MARKDOWN_TITLE = "## Workers"


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


def worker_cells(row: WorkerRow) -> list[str]:
    """A worker's line as the tables print it (the terminal's and table.md's)."""
    strikes = " ".join(f"{kind}:{n}" for kind, n in row.strikes.items() if n) or "-"

    def fmt(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return [row.worker, str(row.games), strikes, str(row.forfeits), fmt(row.think_p50_ms, 1),
            fmt(row.think_p95_ms, 1), fmt(row.think_ratio, 2)]


HEADERS = ["worker", "games", "strikes", "forfeits", "think p50 ms", "think p95 ms",
           "p50 vs all"]


def to_markdown(rows: Sequence[WorkerRow]) -> str:
    """The worker table as a Markdown section."""
    lines = [MARKDOWN_TITLE, "", "| " + " | ".join(HEADERS) + " |",
             "| " + " | ".join(["---"] * len(HEADERS)) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in worker_cells(row)) + " |"
              for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Sequence[WorkerRow]) -> str:
    """The worker table as CSV (strikes_KIND columns, full precision, empty where undefined)."""
    columns = ["worker", "games", *(f"strikes_{kind}" for kind in STRIKE_TYPES), "forfeits",
               "think_p50_ms", "think_p95_ms", "think_ratio"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        flat: dict[str, Any] = {**asdict(row), **{f"strikes_{k}": v
                                                  for k, v in row.strikes.items()}}
        writer.writerow({key: "" if value is None else value for key, value in flat.items()})
    return out.getvalue()


def write_worker_tables(out_dir: Path, rows: Sequence[WorkerRow]) -> None:
    """Add the worker table to a league's written tables: workers.csv, a section at the end of
    table.md and "workers" in table.json (call after `write_tables`)."""
    if not rows:
        return
    (out_dir / "workers.csv").write_text(to_csv(rows), encoding="utf-8")
    markdown = out_dir / "table.md"
    markdown.write_text(markdown.read_text(encoding="utf-8") + "\n" + to_markdown(rows),
                        encoding="utf-8")
    path = out_dir / "table.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["workers"] = [asdict(row) for row in rows]
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")

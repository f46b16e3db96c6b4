"""The worker table of a league played on a cluster: its numbers (the league's), its files
(workers.csv, a section of table.md, "workers" in table.json) and its terminal view (the CLI's)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from rich.console import Console

from referee.cli.tables import render_workers
from referee.league.folder import LeagueFolder
from referee.league.tables import head_to_head, league_table
from referee.league.worker_health import worker_health
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import rate_games
from referee.report.table_files import write_tables
from referee.report.worker_tables import write_worker_tables

BOTS = ["ann", "bob"]
GAMES = [
    PlayedGame(0, ("ann", "bob"), (1, 2), (90_000, 10_000), (False, False),
               ({}, {"timeout": 1}), ((1000, 3000), (2000,))),
    PlayedGame(1, ("bob", "ann"), (1, 2), (70_000, 20_000), (False, True),
               ({}, {"crash": 1}), ((8000,), (4000,))),
]
WORKERS = {0: "fast|box", 1: "slow"}   # a worker's name is its --name: any text


def test_worker_rows_count_games_strikes_and_think_time() -> None:
    fast, slow = worker_health(GAMES, WORKERS)
    assert (fast.worker, fast.games, fast.forfeits) == ("fast|box", 1, 0)
    assert fast.strikes["timeout"] == 1 and slow.strikes["crash"] == 1
    assert (fast.think_p50_ms, slow.think_p50_ms) == (2.0, 6.0)
    assert slow.think_ratio == 6000 / 3000   # the league's median: 3000 us of 1000..8000


def test_worker_table_files_and_terminal(tmp_path: Path) -> None:
    rows = worker_health(GAMES, WORKERS)
    league = league_table(GAMES, BOTS, rate_games(GAMES, BOTS))
    folder = LeagueFolder(tmp_path)
    write_tables(folder, league, head_to_head(GAMES, BOTS))
    write_worker_tables(folder, rows)
    parsed = list(csv.DictReader(io.StringIO(folder.workers_csv.read_text())))
    assert [(r["worker"], r["games"], r["strikes_timeout"]) for r in parsed] == [
        ("fast|box", "1", "1"), ("slow", "1", "0")]
    markdown = folder.table_md.read_text()
    assert markdown.startswith("## League table")
    assert "## Workers" in markdown and "| fast\\|box | 1 | timeout:1 |" in markdown
    data = json.loads(folder.table_json.read_text())
    assert [w["worker"] for w in data["workers"]] == ["fast|box", "slow"]

    console = Console(file=io.StringIO(), width=120)
    render_workers(rows, console)
    shown = console.file.getvalue()
    assert shown.startswith("Workers")
    assert "fast|box" in shown and "crash:1" in shown and "2.00" in shown

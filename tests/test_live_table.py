"""The live standings under a league's progress bar: rated in schedule order as games finish."""

from __future__ import annotations

import os
import pty
import random
import select
import subprocess
from pathlib import Path

import pytest
from cli_support import referee, start_referee
from report_support import league_bots

from referee.league.live import LiveTable
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import RatingParams, rate_games

BOTS = ["a", "b", "c", "d"]


def games(count: int, seed: int = 3) -> list[PlayedGame]:
    rng = random.Random(seed)
    out = []
    for index in range(count):
        table = rng.sample(BOTS, rng.randint(2, 4))
        places = list(range(1, len(table) + 1))
        rng.shuffle(places)
        out.append(PlayedGame(index, tuple(table), tuple(places), (0,) * len(table),
                              (False,) * len(table), ({},) * len(table), ((),) * len(table)))
    return out


def test_games_finishing_out_of_order_are_rated_in_schedule_order() -> None:
    played = games(30)
    live = LiveTable(BOTS, RatingParams(), range(30))
    shuffled = played[:]
    random.Random(1).shuffle(shuffled)
    for n, game in enumerate(shuffled, start=1):
        live.add(game)
        # What is rated is exactly the longest recorded prefix of the schedule.
        seen = {g.index for g in shuffled[:n]}
        prefix = next((i for i in range(30) if i not in seen), 30)
        assert live.rated == prefix
    final = rate_games(played, BOTS, RatingParams())
    for row in live.top(4):
        assert row.mu == final.mu[row.bot] and row.sigma == final.sigma[row.bot]
    assert [row.bot for row in live.top(4)] == final.bots()
    assert len(live.top(2)) == 2


def test_games_recorded_before_a_resume_count_from_the_start() -> None:
    played = games(10)
    live = LiveTable(BOTS, RatingParams(), range(10), played[:6])
    assert live.rated == 6
    for game in played[6:]:
        live.add(game)
    final = rate_games(played, BOTS, RatingParams())
    assert {r.bot: r.mu for r in live.top(4)} == final.mu


def run_on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal; return its status and what the terminal
    showed."""
    master, slave = pty.openpty()
    proc = start_referee(*args, env={"COLUMNS": "120"}, stdout=subprocess.DEVNULL,
                         stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=300), shown.decode(errors="replace")


@pytest.mark.slow
def test_on_a_terminal_the_bar_shows_the_top_of_the_table(tmp_path: Path) -> None:
    bots = map(str, league_bots(tmp_path))
    status, shown = run_on_a_terminal(["league", *bots, "--games", "8",
                                       "--seed", "2", "--out", str(tmp_path / "out"),
                                       "--no-report"])
    assert status == 0, shown
    assert "standings after 8 of 8 games" in shown
    assert "mu-3s" in shown and "greedy" in shown


@pytest.mark.slow
def test_off_a_terminal_progress_lines_are_unchanged(tmp_path: Path) -> None:
    done = referee("league", *league_bots(tmp_path), "--games", "4", "--seed", "2",
                   "--out", tmp_path / "out", "--no-report", timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "games 4/4" in done.stderr and "standings after" not in done.stderr

"""Watching games as they are played (issue "Play and watch", item 4): a running league writes
each game in play to a live file (referee.game.livefile) and `referee watch` follows one in a
real pseudo-terminal, told as `referee show` tells the stored game. A gated test bot holds the
game in play until the test opens the gate, so nothing depends on timing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import REFEREE, cli_env, referee, start_referee
from league_support import install_test_bot
from pty_support import Terminal
from test_league import ROOT
from wait_support import wait_for

from referee.game.livefile import public_step
from referee.league.folder import LeagueFolder


def gated_league(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    """A league of one game, the gated bot against the greedy sample bot, started; its folder
    and the gate file (create it to let the game go on)."""
    spec = install_test_bot(tmp_path, "gated")
    # Generous stated limits: the bot waits for the gate, the referee's clock must not end it.
    spec.write_text(spec.read_text() + "[limits]\ndecision_ms = 600000\n")
    out = tmp_path / "league"
    league = start_referee("league", spec, ROOT / "sample_bots" / "greedy.toml", "--games", "1",
                           "--players", "2", "--seed", "7", "--out", out, "--no-report", "-q",
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return league, out, tmp_path / "gated" / "go"


def live_files(out: Path) -> list[Path]:
    live = LeagueFolder(out).live
    return sorted(live.glob("*.jsonl")) if live.is_dir() else []


@pytest.mark.sandbox
def test_a_terminal_follows_a_league_game_to_its_end_as_show_tells_it(tmp_path: Path) -> None:
    league, out, gate = gated_league(tmp_path)
    try:
        # The game is in play (the gated bot holds it): its live file has the header and the
        # steps so far, never the game's seed.
        (path,) = wait_for("the game's live file", lambda: live_files(out))
        header = json.loads(wait_for("its header", lambda: path.read_text().split("\n", 1)[0]))
        assert header["bots"] == ["gated", "greedy"] and header["players"] == 2
        assert "seed" not in header
        terminal = Terminal([*REFEREE, "watch", str(out), "--games", "1"],
                            env=cli_env(env={"COLUMNS": "100"}), cwd=str(tmp_path))
        terminal.expect(r"Game (g[0-9a-f]+) \(live\): classic, 2 seats\n")
        terminal.expect(r"Round 1, ")   # what was played before the watcher came
        gate.write_text("")
        gate.chmod(0o644)
        ended = terminal.expect(
            r"game (g[0-9a-f]+) ended;\s+its record: referee show\s+\S+\s+\1\n")
        assert terminal.wait() == 0
        league_out, _ = league.communicate(timeout=300)
        assert league.returncode == 0, league_out
    finally:
        gate.touch()
        if league.poll() is None:
            league.kill()
            league.wait()
    game_id = ended.group(1)
    assert path.stem == game_id
    assert live_files(out) == []   # the record is stored: no game in play
    referee("verify", out)
    # The watcher told the game move by move as `show` tells the stored one.
    shown = referee("show", out, game_id, env={"COLUMNS": "100"}).stdout
    watched = terminal.screen[terminal.screen.index("Round 1, "):ended.start()]
    assert watched.strip() and watched.strip() in shown


def test_what_a_watcher_may_see_of_a_step_has_no_notes_or_think_times() -> None:
    step = {"events": [{"type": "place", "seat": 1}], "t": 1.0,
            "decision": {"seat": 1, "action": [3, False], "latency_us": 812,
                         "note": "secret plan", "values": {"3": 0.5}}}
    assert public_step(step) == {"events": [{"type": "place", "seat": 1}],
                                 "decision": {"seat": 1, "action": [3, False]}}


def test_watch_refuses_a_folder_that_holds_no_league_in_one_line(tmp_path: Path) -> None:
    done = referee("watch", tmp_path, check=False)
    assert done.returncode == 2
    assert "not a league folder" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.sandbox
def test_league_watch_tells_its_game_as_it_is_played_then_prints_its_table(
        tmp_path: Path) -> None:
    spec = install_test_bot(tmp_path, "gated")
    spec.write_text(spec.read_text() + "[limits]\ndecision_ms = 600000\n")
    gate, out = tmp_path / "gated" / "go", tmp_path / "league"
    terminal = Terminal([*REFEREE, "league", str(spec),
                         str(ROOT / "sample_bots" / "greedy.toml"), "--games", "1",
                         "--players", "2", "--seed", "7", "--out", str(out), "--no-report",
                         "--watch"], env=cli_env(env={"COLUMNS": "100"}),
                        cwd=str(tmp_path))
    try:
        terminal.expect(r"Game (g[0-9a-f]+) \(live\): classic, 2 seats\n", timeout=600)
        terminal.expect(r"Round 1, ", timeout=600)   # the gated bot holds the game here
        gate.write_text("")
        ended = terminal.expect(
            r"game (g[0-9a-f]+) ended;\s+its record: referee show\s+\S+\s+\1\n")
        terminal.expect(r"gated", timeout=600)       # the league's table follows
        assert terminal.wait(timeout=600) == 0
    finally:
        gate.touch()
    shown = referee("show", out, ended.group(1), env={"COLUMNS": "100"}).stdout
    watched = terminal.screen[terminal.screen.index("Round 1, "):ended.start()]
    assert watched.strip() and watched.strip() in shown


@pytest.mark.sandbox
def test_league_watch_tells_every_game_even_those_too_quick_to_follow_live(
        tmp_path: Path) -> None:
    """Two sample bots play their games faster than a watcher can catch them in play: each
    game is still told, from its record, before the league's table (issue 42, item 10)."""
    out = tmp_path / "league"
    terminal = Terminal([*REFEREE, "league", str(ROOT / "sample_bots" / "greedy.toml"),
                         str(ROOT / "sample_bots" / "random.toml"), "--games", "2",
                         "--seed", "7", "--out", str(out), "--no-report", "--watch"],
                        env=cli_env(env={"COLUMNS": "100"}), cwd=str(tmp_path))
    ended = r"game (g[0-9a-f]+) ended;\s+its record: referee show\s+\S+\s+\1\n"
    first = terminal.expect(ended, timeout=600)
    second = terminal.expect(ended, timeout=600)
    terminal.expect(r"League table", timeout=600)
    assert terminal.wait(timeout=600) == 0
    assert first.group(1) != second.group(1)
    for told in (first, second):   # each told move by move as `show` tells it
        game_id = told.group(1)
        start = terminal.screen.index(f"Game {game_id}")
        watched = terminal.screen[terminal.screen.index("Round 1, ", start):told.start()]
        shown = referee("show", out, game_id, env={"COLUMNS": "100"}).stdout
        assert watched.strip() and watched.strip() in shown


def test_league_watch_refuses_quiet_in_one_line(tmp_path: Path) -> None:
    done = referee("league", ROOT / "sample_bots" / "greedy.toml", "--watch", "--quiet",
                   "--out", tmp_path / "l", check=False)
    assert done.returncode == 2 and "--watch tells the games" in done.stderr
    assert "Traceback" not in done.stderr

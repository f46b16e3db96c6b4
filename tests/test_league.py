"""End-to-end leagues: real bot processes, real gRPC, real SQLite, the real CLI."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest
from cli_support import referee, start_referee
from wait_support import wait_for

from referee.checking.conformance import processes_with_run_id
from referee.league.folder import LeagueFolder
from referee.league.store import games_stored

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"


def bot_spec(directory: Path, name: str, source: str = "honest", **limits: int) -> Path:
    """A copy of a test bot under another name (bots need distinct names), laid out as a league
    wants it: its code in directory/NAME/, its spec directory/NAME.toml beside it (two specs of
    a league may not share a folder)."""
    text = (TEST_BOTS / f"{source}.toml").read_text()
    text = text.replace(f'name = "{source}"', f'name = "{name}"')
    text = text.replace('workdir = "."', f'workdir = "{name}"')
    folder = directory / name
    if not folder.exists():
        shutil.copytree(TEST_BOTS / source, folder / source,
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(TEST_BOTS / "botlib.py", folder / "botlib.py")
    if limits:
        text += "[limits]\n" + "".join(f"{k} = {v}\n" for k, v in limits.items())
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def outcome(out: Path) -> dict:
    """Everything in the league's results that must not depend on timing."""
    table = json.loads(LeagueFolder(out).table_json.read_text())
    table["extra"].pop("started")   # the date the league started: a fact, not a result
    for row in table["table"]:
        row.pop("think_p50_ms")
        row.pop("think_p95_ms")
    db = sqlite3.connect(LeagueFolder(out).store_path)
    games = db.execute("SELECT idx, bots, seed, places, money, forfeited, strikes FROM games "
                       "ORDER BY idx").fetchall()
    db.close()
    return {"table": table, "games": games}


@pytest.fixture()
def bots(tmp_path: Path) -> list[Path]:
    return [bot_spec(tmp_path, f"honest-{n}") for n in "abcd"]


def test_same_seed_same_tables_at_concurrency_1_and_4(tmp_path: Path, bots: list[Path]) -> None:
    for j in (1, 4):
        referee("league", *bots, "--games", "16", "--seed", "5", "-j", str(j),
                "--out", tmp_path / f"j{j}", "--quiet")
    first, second = outcome(tmp_path / "j1"), outcome(tmp_path / "j4")
    assert len(first["games"]) == 16
    assert first == second


def test_killed_league_resumes_to_the_same_tables(tmp_path: Path, bots: list[Path]) -> None:
    straight = tmp_path / "straight"
    referee("league", *bots, "--games", "24", "--seed", "9", "--out", straight, "--quiet")
    out = tmp_path / "killed"
    run_id = uuid.uuid4().hex[:12]
    proc = start_referee("league", *bots, "--games", "24", "--seed", "9", "-j", "2", "--out",
                         out, "--quiet", run_id=run_id, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        recorded = wait_for("five stored games",
                            lambda: (n := games_stored(LeagueFolder(out).store_path)) >= 5 and n,
                            timeout=120)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert 5 <= recorded < 24, recorded
    # The bots die with the referee (their guards get SIGTERM from the kernel).
    wait_for(f"the bots of run {run_id} to end", lambda: not processes_with_run_id(run_id),
             timeout=60)
    unfinished = referee("league", *bots, "--out", out, "--quiet", check=False)
    assert unfinished.returncode != 0 and "--resume" in unfinished.stderr
    assert "Traceback" not in unfinished.stderr
    resumed = referee("league", "--resume", "--out", out, "--quiet")
    assert "24/24 games recorded" in resumed.stdout
    assert outcome(out) == outcome(straight)
    again = referee("league", *bots, "--out", out, "--quiet")
    assert "played now: 0" in again.stdout
    table = referee("table", out)
    assert "honest-a" in table.stdout


def test_a_bot_that_cannot_start_stops_the_league_before_the_first_game(
        tmp_path: Path, bots: list[Path]) -> None:
    broken = bot_spec(tmp_path, "broken", "exit_at_start")
    done = referee("league", *bots[:3], broken, "--games", "6", "--out", tmp_path / "out",
                   "--quiet", check=False)
    assert done.returncode != 0
    assert "bot 'broken'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()   # a start that fails leaves no league behind
    skipped = referee("league", *bots[:3], broken, "--games", "6", "--out", tmp_path / "skip",
                      "--skip-broken", "--quiet")
    assert "skipped bot 'broken'" in skipped.stderr
    assert "6/6 games recorded" in skipped.stdout


def test_a_bot_that_crashes_during_the_league_cannot_stop_it(tmp_path: Path,
                                                              bots: list[Path]) -> None:
    crasher = bot_spec(tmp_path, "crasher", "crash_mid")
    out = tmp_path / "out"
    referee("league", *bots[:3], crasher, "--games", "8", "--out", out, "--quiet")
    rows = json.loads(LeagueFolder(out).table_json.read_text())["table"]
    table = {row["bot"]: row for row in rows}
    assert table["crasher"]["games"] == 8
    # Each process answers three decisions, then dies; games sharing it all see the crash.
    assert table["crasher"]["strikes"]["crash"] >= 3
    assert table["crasher"]["forfeits"] >= 1
    assert all(table[f"honest-{n}"]["strikes"]["crash"] == 0 for n in "abc")
    db = sqlite3.connect(LeagueFolder(out).store_path)
    assert db.execute("SELECT count(*), count(DISTINCT idx) FROM games").fetchone() == (8, 8)


def test_league_file_settings_and_stored_records_replay(tmp_path: Path, bots: list[Path]) -> None:
    league = tmp_path / "league.toml"
    league.write_text(
        'bots = ["honest-*.toml"]\nrules = "biggy-slot"\ngames = 6\nplayers = "2-3"\n'
        'seed = 3\nout = "season"\n[ratings]\nbeta = 3.0\n'
    )
    referee("league", league, "--quiet")
    out = tmp_path / "season"
    folder = LeagueFolder(out)
    for path in (folder.table_md, folder.table_csv, folder.table_json, folder.head_to_head_csv):
        assert path.exists()
    from referee.engine import GameRecord, replay

    store = LeagueFolder(out).open_store()
    try:
        records = list(store.records())
        assert store.settings()["rules"]["preset"] == "biggy-slot"
    finally:
        store.close()
    assert len(records) == 6
    for data in records:
        record = GameRecord.from_json(data)
        assert record.players in (2, 3)
        assert replay(record) is None

"""The league store stays small and its pages' look-ups stay cheap: a real league of 4-player
games costs at most 4 KB of database per game, records with the preset dictionary and old
plain-zlib records both read back, and a bot's games are found through the game_seats index
(built for a store written before it)."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest
from cli_support import referee
from league_support import install_test_bot

from referee.league.folder import LeagueFolder
from referee.league.store import LeagueStore, load_record, pack_record, unpack_record

GAMES = 60
BYTES_PER_GAME = 4096
# Everything that grows with the games: their rows, the seats' index, the strike marks, the
# schedule.
PER_GAME_TABLES = ("games", "game_seats", "schedule", "game_workers", "game_strikes")


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real league of four honest bots, 60 games at tables of 4."""
    base = tmp_path_factory.mktemp("store-size")
    specs = [install_test_bot(base / "bots", f"h{n}", source="honest") for n in range(4)]
    referee("league", *specs, "--games", str(GAMES), "--players", "4", "--seed", "5",
            "--out", base / "league", "--quiet", "--no-report", timeout=900)
    return base / "league"


def test_a_game_costs_at_most_4_kb_of_the_store(league: Path) -> None:
    db = sqlite3.connect(f"file:{LeagueFolder(league).store_path}?mode=ro", uri=True)
    try:
        games = db.execute("SELECT count(*) FROM games").fetchone()[0]
        marks = ", ".join("?" * len(PER_GAME_TABLES))
        used = db.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks}) OR name IN "
                          f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))",
                          PER_GAME_TABLES * 2).fetchone()[0]
    finally:
        db.close()
    assert games == GAMES
    assert used / games <= BYTES_PER_GAME, f"{used / games:.0f} bytes per game"


def test_old_and_new_records_read_back(league: Path) -> None:
    """A record packed with the dictionary is smaller than plain zlib, and a plain zlib record
    (as stores before the dictionary hold them) reads back the same."""
    store = LeagueFolder(league).open_store()
    try:
        first = store.record(0)
        blob = store.db.execute("SELECT record FROM games WHERE idx = 0").fetchone()[0]
    finally:
        store.close()
    text = unpack_record(blob)
    plain = zlib.compress(text, 6)
    assert first is not None and first["players"] == 4
    assert load_record(plain) == first == load_record(pack_record(text))
    assert len(blob) < 0.8 * len(plain)


def test_a_bots_games_are_found_by_index_also_in_an_older_store(league: Path,
                                                                 tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    source = sqlite3.connect(LeagueFolder(league).store_path)
    source.execute(f"VACUUM INTO '{old}'")
    source.close()
    store = LeagueStore.open_readonly(LeagueFolder(league).store_path)
    try:
        expected = store.games_of(["h1"], limit=10)
        plan = " ".join(str(row) for row in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT DISTINCT idx FROM game_seats WHERE name IN (?) "
            "ORDER BY idx DESC", ["h1"]))
    finally:
        store.close()
    assert len(expected) == 10 and all("h1" in game["bots"] for game in expected)
    assert [game["index"] for game in expected] == sorted(
        (game["index"] for game in expected), reverse=True)
    assert "SEARCH game_seats" in plan, plan
    # A store written before the index: read-only it scans; opened by the referee it is indexed.
    db = sqlite3.connect(old)
    db.execute("DROP TABLE game_seats")
    db.close()
    for opened in (LeagueStore.open_readonly(old), LeagueStore(old)):
        try:
            assert opened.games_of(["h1"], limit=10) == expected
        finally:
            opened.close()
    db = sqlite3.connect(old)
    assert db.execute("SELECT count(*) FROM game_seats").fetchone()[0] == 4 * GAMES
    db.close()

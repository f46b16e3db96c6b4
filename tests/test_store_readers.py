"""A reader that starts beside a new league (`referee league --watch`, a club's page) may find
the store's file before its writer has made the tables: it reads that as "no games yet", never
as an error (sqlite3's "no such table: games" once killed the league's watcher)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from referee.cli.games import watch_games
from referee.league.folder import LeagueFolder
from referee.league.store import LeagueStore


def file_without_tables(path: Path, header: bool) -> None:
    """The store's file as its writer leaves it between opening and making its tables: empty,
    or with SQLite's header and the write-ahead log switched on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not header:
        path.touch()
        return
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
    finally:
        db.close()


@pytest.mark.parametrize("header", [False, True], ids=["empty file", "header only"])
def test_a_store_whose_tables_are_not_made_yet_reads_as_none(tmp_path: Path,
                                                             header: bool) -> None:
    folder = LeagueFolder(tmp_path / "league")
    assert LeagueStore.open_made(folder.store_path) is None   # no file yet
    file_without_tables(folder.store_path, header)
    assert LeagueStore.open_made(folder.store_path) is None
    LeagueStore(folder.store_path).close()   # the writer makes its tables
    store = LeagueStore.open_made(folder.store_path)
    assert store is not None
    try:
        assert store.done() == set()
    finally:
        store.close()


@pytest.mark.parametrize("header", [False, True], ids=["empty file", "header only"])
def test_the_league_s_watcher_waits_on_a_store_whose_tables_are_not_made_yet(
        tmp_path: Path, header: bool, capsys: pytest.CaptureFixture[str]) -> None:
    folder = LeagueFolder(tmp_path / "league")
    file_without_tables(folder.store_path, header)
    stopped = threading.Event()
    stopped.set()   # one turn of the watcher's loop: it looks for missed games, then returns
    watch_games(folder.root, stop=stopped, every=True)
    assert capsys.readouterr().err == ""

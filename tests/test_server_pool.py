"""The web process's pooled connections (referee/server/pool.py): each request runs in a
thread of its own, so connections are handed from one request's thread to the next instead of
opened per request. The pool itself on real files, then the club's database through the real
ASGI application and Django's own connection handling, on the real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

from server_support import club_django
from test_server_upload_thread import request

club_django()

from django.db import connection  # noqa: E402

from referee.server.pool import Pool  # noqa: E402
from referee.server.sqlitepool.base import POOL  # noqa: E402


class Conn:
    """A stand-in connection: the pool only keeps and closes what it is given."""

    def __init__(self) -> None:
        self.closed = False


def closer(conn: Conn) -> None:
    conn.closed = True


def test_the_pool_hands_an_idle_connection_to_the_next_taker(tmp_path: Path) -> None:
    path = tmp_path / "db"
    path.write_text("x")
    pool: Pool[Conn] = Pool(closer, limit=2)
    assert pool.take(str(path)) is None
    first, second, third = Conn(), Conn(), Conn()
    pool.give(str(path), first)
    pool.give(str(path), second)
    pool.give(str(path), third)   # above the limit: closed, not kept
    assert third.closed and not first.closed and not second.closed
    assert {id(pool.take(str(path))), id(pool.take(str(path)))} == {id(first), id(second)}
    assert pool.take(str(path)) is None


def test_a_replaced_file_drops_its_idle_connections(tmp_path: Path) -> None:
    path = tmp_path / "db"
    path.write_text("old")
    pool: Pool[Conn] = Pool(closer)
    kept = Conn()
    pool.give(str(path), kept)
    path.unlink()
    path.write_text("new")    # another file under the same name (maybe the same inode)
    assert pool.take(str(path)) is None and kept.closed
    gone = Conn()
    path.unlink()
    pool.give(str(path), gone)   # a file that is gone keeps nothing
    assert gone.closed and pool.take(str(path)) is None


def test_requests_in_threads_of_their_own_share_one_database_connection() -> None:
    name = str(connection.settings_dict["NAME"])
    while POOL.take(name) is not None:   # what other tests of this process left idle
        pass

    async def two_pages() -> tuple[int, int]:
        first = await request("GET", "/login/")
        idle = POOL.take(name)
        assert idle is not None, "the request's connection was not given back"
        POOL.give(name, idle)
        second = await request("GET", "/login/")
        again = POOL.take(name)
        assert again is idle, "the next request opened a connection of its own"
        POOL.give(name, again)
        return first.status, second.status

    assert asyncio.run(two_pages()) == (200, 200)


def test_a_connection_is_given_back_without_its_open_transaction() -> None:
    name = str(connection.settings_dict["NAME"])
    while POOL.take(name) is not None:
        pass

    def write_and_leave() -> None:
        connection.ensure_connection()
        raw = connection.connection
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("CREATE TABLE IF NOT EXISTS pool_probe (n INTEGER)")
        raw.execute("INSERT INTO pool_probe VALUES (1)")
        assert raw.in_transaction
        connection.close()   # as Django closes it at a request's end

    thread = threading.Thread(target=write_and_leave)
    thread.start()
    thread.join()
    kept = POOL.take(name)
    assert isinstance(kept, sqlite3.Connection) and not kept.in_transaction
    found = kept.execute("SELECT name FROM sqlite_master WHERE name = 'pool_probe'").fetchall()
    assert found == [], "the unfinished transaction was handed on"
    POOL.give(name, kept)

"""The club server on the open internet: a real `referee serve`, one web worker under the
common open-file limit of 1,024 (`prlimit`), flooded from loopback with connections that send
nothing or trickle, and with requests for long paths that do not exist. The pages still
answer, the server closes what sends too little, the log stays small, and a token's read
writes nothing to the database.

The floods are bench/attack.py's (its replay prints the same measures)."""

from __future__ import annotations

import http.client
import sqlite3
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import REFEREE
from server_support import ServerProcess, make_student
from wait_support import wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from attack import (  # noqa: E402
    Flood,
    closed_count,
    not_found_flood,
    page_time,
    raise_own_open_files,
)

pytestmark = pytest.mark.slow

OPEN_FILES = 1024          # the server's limit, soft and hard: a service's default
IDLE, SLOW_HEAD, SLOW_BODY = 1500, 200, 100   # together well past OPEN_FILES
PAGE_BOUND_S = 30          # a page during the flood (a generous bound, not a timing)
CLOSE_BOUND_S = 120        # every flood connection closed by then (the deadline is 15 s)
FLOOD_LOG_MAX = 16 * 1024  # bytes the log may grow by during a flood (the runner's lines too)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    raise_own_open_files()   # the flood's sockets are this process's descriptors
    data = tmp_path_factory.mktemp("flood") / "club"
    proc = ServerProcess(data, "--workers", "1",
                         program=("prlimit", f"--nofile={OPEN_FILES}", *REFEREE))
    yield proc
    proc.stop()


def log_size(server: ServerProcess) -> int:
    return server.log.stat().st_size


def test_idle_and_slow_connections_neither_stop_the_pages_nor_stay_open(
        server: ServerProcess) -> None:
    before = log_size(server)
    flood = Flood(server.port)
    try:
        flood.open(IDLE, SLOW_HEAD, SLOW_BODY, lasts=CLOSE_BOUND_S)
        socks = flood.sockets()
        assert len(socks) > OPEN_FILES + 500, f"only {len(socks)} connections opened"
        for _ in range(3):
            status, took = page_time(server.port, timeout=PAGE_BOUND_S)
            assert status == 200, f"a page during the flood: no answer in {took:.0f} s"
        closed = wait_for("the server to close every flood connection",
                          lambda: closed_count(socks) == len(socks) or None, server,
                          timeout=CLOSE_BOUND_S, every=1)
        assert closed
    finally:
        flood.stop()
    server.alive()
    grown = log_size(server) - before
    assert grown < FLOOD_LOG_MAX, f"the log grew by {grown} bytes:\n{server.output()[-3000:]}"
    status, _ = page_time(server.port, timeout=PAGE_BOUND_S)
    assert status == 200
    assert f"open files: {OPEN_FILES} per web worker" in server.output()   # said at start


def test_requests_for_long_missing_paths_keep_the_log_small(server: ServerProcess) -> None:
    before = log_size(server)
    answered = not_found_flood(server.port, 2000, path_bytes=8000)
    assert answered == 2000
    grown = log_size(server) - before
    # One line for the first 404 (its path cut to 300 characters), the rest counted in the
    # next minute's line: not 2,000 lines of 8 KB.
    assert grown < 4 * 1024, f"the log grew by {grown} bytes:\n{server.output()[-3000:]}"
    assert "Not Found: /no-such-page-0-" in server.output()


def last_used(data: Path) -> str | None:
    with sqlite3.connect(f"file:{data / 'server.sqlite3'}?mode=ro", uri=True) as db:
        (value,) = db.execute("SELECT last_used_at FROM club_apitoken").fetchone()
    return value


def test_a_token_read_writes_nothing(server: ServerProcess) -> None:
    token = make_student(server.data, "reader")

    def read() -> int:
        request = urllib.request.Request(f"{server.url}/api/leaderboard",
                                         headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status

    assert read() == 200
    first = last_used(server.data)
    assert first is not None   # the first use is written
    for _ in range(3):
        time.sleep(0.01)   # a new microsecond for the clock: a write would show
        assert read() == 200
        assert last_used(server.data) == first


def test_a_kept_alive_connection_in_use_outlives_the_head_deadline(server: ServerProcess) -> None:
    """An honest client's connection, a request every second for 20 s (past the 15 s a
    request head may take), is never closed under it: each head is awaited from the end of
    the answer before (uvicorn's own 5 s keep-alive closes it when it rests)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request("GET", "/login/")
        first = conn.getresponse()
        first.read()
        sock = conn.sock
        for _ in range(20):
            time.sleep(1)
            conn.request("GET", "/login/")
            answer = conn.getresponse()
            answer.read()
            assert answer.status == 200
            assert conn.sock is sock, "the server closed a connection in use"
    finally:
        conn.close()

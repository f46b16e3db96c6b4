"""The club server on the open internet: a real `referee serve`, one web worker under the
common open-file limit of 1,024 (`prlimit`), flooded from loopback with connections that send
nothing or trickle, and with requests for long paths that do not exist. The pages still
answer, the server closes what sends too little, the log stays small, and a token's read
writes nothing to the database.

The floods are bench/attack.py's (its replay prints the same measures)."""

from __future__ import annotations

import http.client
import socket
import sqlite3
import subprocess
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


ACCEPTOR = """
import asyncio, resource, socket, sys
from referee.server import connections, logbound

logbound.install()
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

async def main():
    loop = asyncio.get_running_loop()
    connections.Watch(loop, 10_000)   # a cap it never reaches: only the accept errors matter
    held = []

    class Hold(asyncio.Protocol):
        def connection_made(self, transport):
            held.append(transport)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    await loop.create_server(Hold, sock=sock, backlog=connections.ACCEPT_BATCH)
    sock.listen(1024)   # as a web worker does: the kernel's queue holds the rest
    print(sock.getsockname()[1], flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)   # the test connected and waited
    print(len(held), flush=True)

asyncio.run(main())
"""


def test_failed_accepts_are_one_line_with_a_count(tmp_path: Path) -> None:
    """A real asyncio server under an open-file limit of 64, with the worker's Watch, is
    opened 200 connections it keeps: accept() fails (EMFILE) again and again, and its log
    says so in one line with a count (asyncio's own handler wrote a traceback per try, up to
    the accept batch every loop turn)."""
    errors = (tmp_path / "stderr").open("w+")
    proc = subprocess.Popen([sys.executable, "-c", ACCEPTOR], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=errors, text=True)
    socks = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        port = int(proc.stdout.readline())
        for _ in range(200):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(3)   # accept() is retried each second meanwhile: failures to count
        proc.stdin.write("\n")
        proc.stdin.flush()
        held = int(proc.stdout.readline())
    finally:
        for sock in socks:
            sock.close()
        proc.kill()
        proc.wait()
    errors.seek(0)
    log = errors.read()
    assert 0 < held < 64 <= len(socks)   # it accepted until the limit
    assert log.count("accept() failed") == 1, log[-3000:]
    assert "Traceback" not in log and len(log) < 1000, log[-3000:]

"""`referee serve` as a real process: an upload cut off in the middle never becomes a version,
an upload declared too big is refused before its body is sent, and a port in use is one line."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from server_support import ServerProcess, free_port, make_student


def versions(data: Path) -> int:
    db = sqlite3.connect(f"file:{data / 'server.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM club_botversion").fetchone()[0]
    finally:
        db.close()


def raw_request(port: int, head: str, body: bytes, close_early: bool) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head.encode() + body)
        if close_early:
            return b""
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_uploads_cut_off_or_too_big_never_become_versions(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        token = make_student(server.data)
        head = (f"POST /api/submit?bot=cut&filename=b.zip HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\nContent-Type: application/octet-stream\r\n"
                f"Content-Length: {{length}}\r\nConnection: close\r\n\r\n")
        # The client goes away after 50 of 200 KiB: nothing is kept.
        raw_request(server.port, head.format(length=200_000), b"PK" + bytes(50_000), True)
        # A declared size over the cap is refused at once, before any body is sent.
        answer = raw_request(server.port, head.format(length=10 ** 12), b"", False)
        status, _, rest = answer.partition(b"\r\n")
        assert b" 413 " in status, answer
        error = json.loads(rest.split(b"\r\n\r\n", 1)[1])["error"]
        assert "more than the limit" in error
        # The server still takes a good request afterwards.
        answer = raw_request(server.port, head.format(length=3), b"abc", False)
        assert b" 400 " in answer.partition(b"\r\n")[0]
        assert b"not a zip or tar archive" in answer
        assert versions(server.data) == 0
        # A form posted without its CSRF token (a cross-site request) is refused.
        answer = raw_request(server.port, "POST /join/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/x-www-form-urlencoded\r\n"
                             "Content-Length: 9\r\nConnection: close\r\n\r\n", b"code=abcd",
                             False)
        assert b" 403 " in answer.partition(b"\r\n")[0], answer[:200]
        incoming = server.data / "uploads" / ".incoming"
        assert not incoming.exists() or list(incoming.iterdir()) == []
        assert list((server.data / "tmp").iterdir()) == []
    finally:
        assert server.stop() == 0, server.output()


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run([sys.executable, "-m", "referee.cli", "serve", "--data",
                               str(tmp_path / "data"), "--port", str(port)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def runner_pids(parent: int) -> set[int]:
    """The season runners `referee serve` (pid `parent`) has running now."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"referee.server.runner" in cmdline:
            found.add(int(entry.name))
    return found


def wait_for(what: str, test, timeout: float = 300):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = test()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_runner_that_dies_is_started_again(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        first = wait_for("the runner", lambda: runner_pids(server.proc.pid))
        os.kill(next(iter(first)), signal.SIGKILL)
        wait_for("the restart notice", lambda: "the season runner stopped (status -9); "
                                               "starting it again" in server.output())
        second = wait_for("a new runner", lambda: runner_pids(server.proc.pid) - first)
        assert second and not second & first
        with urllib.request.urlopen(f"{server.url}/login/", timeout=30) as answer:
            assert answer.status == 200   # the web process went on meanwhile
    finally:
        assert server.stop() == 0, server.output()
    assert runner_pids(server.proc.pid) == set()

"""No request body is read past its limit: a real `referee serve` is sent chunked bodies with
no Content-Length, and its web process must answer 413 and close the connection early, its
memory staying where it was."""

from __future__ import annotations

import json
import os
import select
import socket
import urllib.request
from pathlib import Path

from proc_support import modules_below, rss_kib
from server_support import ServerProcess, make_student, student_bot, zip_of

MIB = 1 << 20
BUDGET = 512 * MIB          # the most the test ever sends (the old server read all of it)
GROWTH_KIB = 64 * 1024      # the web process may grow by this much, no more


def web_rss_kib(web_pids: list[int]) -> int:
    """The resident memory of the web workers together, in KiB (the kernel gives a connection
    to any one of them)."""
    return sum(rss_kib(pid) for pid in web_pids)


def chunked_flood(port: int, head: str, web_pids: list[int]) -> tuple[bytes, int, int]:
    """Send `head` and then a chunked body of 1 MiB chunks until the server answers or closes
    (at most BUDGET bytes); (its answer, bytes of body sent, the web workers' highest RSS
    growth in KiB)."""
    before = web_rss_kib(web_pids)
    sent = grew = 0
    chunk = b"%x\r\n" % MIB + b"a" * MIB + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head.encode())
        while sent < BUDGET:
            grew = max(grew, web_rss_kib(web_pids) - before)
            if grew > 4 * GROWTH_KIB or select.select([conn], [], [], 0)[0]:
                break   # the server grows without bound (the old one did), or it answered
            try:
                conn.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break   # it closed the connection: its answer is waiting to be read
            sent += MIB
        answer = b""
        try:
            while part := conn.recv(65536):
                answer += part
        except (ConnectionResetError, TimeoutError):
            pass
    return answer, sent, max(grew, web_rss_kib(web_pids) - before)


def spooled(data: Path) -> list[Path]:
    """What the web process left in DATA/tmp (the house bots' checks have folders of their own
    there, `referee-check-*`, while they run)."""
    return [p for p in (data / "tmp").iterdir() if not p.name.startswith("referee-check-")]


def test_a_chunked_body_without_a_length_is_refused_as_it_streams_in(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        web = modules_below(server.proc.pid, "referee.server.web")
        assert web, server.output()
        for method, path in (("POST", "/login/"), ("GET", "/leaderboard/"),
                             ("POST", "/admin/login/")):
            head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Content-Type: application/x-www-form-urlencoded\r\n"
                    f"Transfer-Encoding: chunked\r\n\r\n")
            answer, sent, grew = chunked_flood(server.port, head, web)
            status = answer.partition(b"\r\n")[0]
            assert b" 413 " in status, (method, path, sent, answer[:300])
            assert b"more than the limit of 1048576 bytes" in answer
            # Refused after its limit (1 MiB), not after the body: what was sent past it is
            # what the sockets' buffers held.
            assert sent < 64 * MIB, (method, path, sent)
            assert grew < GROWTH_KIB, (method, path, grew)
        # The server goes on answering.
        with urllib.request.urlopen(f"{server.url}/login/", timeout=60) as page:
            assert page.status == 200
        assert spooled(server.data) == []
    finally:
        assert server.stop() == 0, server.output()


def test_an_upload_under_its_limit_is_spooled_to_disk_and_accepted(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        token = make_student(server.data)
        folder = student_bot(tmp_path / "big", "big", "b")
        (folder / "noise.bin").write_bytes(os.urandom(3 * MIB))   # past Django's 1 MiB spool
        archive = zip_of(folder, tmp_path / "big.zip")
        request = urllib.request.Request(
            f"{server.url}/api/submit?bot=big&filename=big.zip", data=archive.read_bytes(),
            headers={"Authorization": f"Bearer {token}",
                     "Content-Type": "application/octet-stream"}, method="POST")
        with urllib.request.urlopen(request, timeout=120) as answer:
            assert answer.status == 201
            assert json.loads(answer.read())["league_name"] == "big.v1"
        assert spooled(server.data) == []
    finally:
        assert server.stop() == 0, server.output()

"""Replays attacks from the open internet on a real `referee serve`, on loopback only, and
prints what held (bench/README.md, "Attacks from the open internet").

The idle-connection flood: a real server with one web worker under an open-file limit of 1,024
(`prlimit`, a service's default) is opened IDLE connections that never send a byte, SLOW_HEAD
that send their request head a byte every few seconds and SLOW_BODY whose body trickles the same
way; while they are open, pages are asked for and timed; then the flood's connections are
watched until the server closes them (or a bound passes). The 404 flood: many requests to
long paths, the log's growth measured.

Every loop here is bounded (counts and deadlines) and every connection goes to 127.0.0.1.
`tests/test_server_flood.py` uses the same functions.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import resource
import select
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TRICKLE_S = 2.0          # a slow connection's pause between bytes
SLOW_HEAD = b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000
SLOW_BODY_HEAD = (b"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                  b"application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n")


def raise_own_open_files() -> int:
    """The test's or bench's own descriptors: its soft limit raised to its hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class Flood:
    """The flood's connections to 127.0.0.1:port and the thread that trickles the slow ones
    (it stops by itself after `lasts` seconds, or at stop())."""

    port: int
    idle: list[socket.socket] = field(default_factory=list)
    slow: list[tuple[socket.socket, bytes]] = field(default_factory=list)
    refused: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)

    def connect(self) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            self.refused += 1
            return None
        sock.setblocking(False)
        return sock

    def open(self, idle: int, slow_head: int, slow_body: int, lasts: float) -> None:
        """Open the connections (a bounded loop each) and start trickling the slow ones."""
        for _ in range(idle):
            if (sock := self.connect()) is not None:
                self.idle.append(sock)
        for count, head, text in ((slow_head, b"", SLOW_HEAD),
                                  (slow_body, SLOW_BODY_HEAD, b"a" * 50000)):
            for _ in range(count):
                if (sock := self.connect()) is not None:
                    with contextlib.suppress(OSError):   # a body's head goes at once
                        sock.send(head)
                    self.slow.append((sock, text))
        threading.Thread(target=self.trickle, args=(time.monotonic() + lasts,),
                         daemon=True).start()

    def trickle(self, until: float) -> None:
        """Send each slow connection's text a byte every TRICKLE_S, until `until`."""
        sent = 0
        while time.monotonic() < until and not self.stopping.wait(TRICKLE_S):
            for sock, text in self.slow:
                if sent < len(text) and sock.fileno() >= 0:
                    with contextlib.suppress(OSError):   # closed by the server
                        sock.send(text[sent:sent + 1])
            sent += 1

    def sockets(self) -> list[socket.socket]:
        return [*self.idle, *(sock for sock, _ in self.slow)]

    def stop(self) -> None:
        self.stopping.set()
        for sock in self.sockets():
            sock.close()


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server has closed the connection (a read sees its end, or a reset)."""
    if sock.fileno() < 0:
        return True
    poller = select.poll()   # select() takes no descriptor past 1023
    poller.register(sock, select.POLLIN)
    if not poller.poll(0):
        return False
    try:
        while part := sock.recv(65536):
            del part   # an answer before the end (none is sent to these): read past it
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def closed_count(socks: list[socket.socket]) -> int:
    return sum(closed_by_server(sock) for sock in socks)


def page_time(port: int, path: str = "/login/", timeout: float = 60) -> tuple[int, float]:
    """(the HTTP status of one GET, its seconds); status 0 when it got no answer in time."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        answer = conn.getresponse()
        answer.read()
        status = answer.status
    except OSError:
        status = 0
    finally:
        conn.close()
    return status, time.monotonic() - start


def wait_closed(socks: list[socket.socket], bound: float) -> tuple[int, float]:
    """Watch until every socket is closed by the server or `bound` seconds pass; (how many
    were closed, seconds waited)."""
    start = time.monotonic()
    closed = closed_count(socks)
    while closed < len(socks) and time.monotonic() - start < bound:
        time.sleep(1)
        closed = closed_count(socks)
    return closed, time.monotonic() - start


def not_found_flood(port: int, requests: int, path_bytes: int = 8000) -> int:
    """`requests` GETs of distinct long paths that do not exist, on kept-alive connections;
    how many were answered 404."""
    answered = 0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for i in range(requests):
        path = f"/no-such-page-{i}-" + "x" * path_bytes
        try:
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
            answered += answer.status == 404
            if answer.will_close:
                conn.close()
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.close()
    return answered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1500)
    parser.add_argument("--slow-head", type=int, default=300)
    parser.add_argument("--slow-body", type=int, default=200)
    parser.add_argument("--open-files", type=int, default=1024)
    parser.add_argument("--not-found", type=int, default=2000)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from cli_support import REFEREE
    from server_support import ServerProcess

    print(f"this process: {raise_own_open_files()} open files")
    data = Path(tempfile.mkdtemp(prefix="attack-")) / "club"
    server = ServerProcess(data, "--workers", "1",
                           program=("prlimit", f"--nofile={args.open_files}", *REFEREE))
    try:
        print(next(line for line in server.output().splitlines() if "open files" in line)
              if "open files" in server.output() else "the server printed no open-file limit")
        log_before = server.log.stat().st_size
        flood = Flood(server.port)
        started = time.monotonic()
        flood.open(args.idle, args.slow_head, args.slow_body, lasts=120)
        socks = flood.sockets()
        print(f"flood: {len(flood.idle)} idle, {args.slow_head} slow-head, {args.slow_body} "
              f"slow-body connections open in {time.monotonic() - started:.1f} s "
              f"({flood.refused} not connected)")
        times = [page_time(server.port) for _ in range(5)]
        print("pages during the flood: " + ", ".join(f"{status} in {took:.2f} s"
                                                     for status, took in times))
        print(f"closed by the server at once (past the worker's connection cap): "
              f"{closed_count(socks)} of {len(socks)}")
        closed, waited = wait_closed(socks, bound=90)
        print(f"closed by the server: {closed} of {len(socks)} within "
              f"{time.monotonic() - started:.0f} s of the flood's start (watched {waited:.0f} s)")
        flood.stop()
        grown = server.log.stat().st_size - log_before
        print(f"log growth during the flood: {grown} bytes")
        log_before = server.log.stat().st_size
        started = time.monotonic()
        answered = not_found_flood(server.port, args.not_found)
        print(f"404 flood: {answered} of {args.not_found} long paths answered 404 in "
              f"{time.monotonic() - started:.0f} s; log growth "
              f"{server.log.stat().st_size - log_before} bytes")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Replay: the parallel sign-in race against a real `referee serve`.

A fresh data folder and a `referee serve` on a free loopback port (its web workers and the
season runner, the season file's defaults: 30 failed sign-ins an hour from one address, 10
for one name from one address). Then, for each limit, N wrong sign-ins are sent at once from
threads on 127.0.0.1 (one HTTP connection each, released together by a barrier, the CSRF token
of one sign-in page), and the answers are counted: those let through (the form again, 200) and
those refused (429). It prints, per limit, the requests sent, how many were let through, and the
limit; a limit holds when the two numbers match (before the counters were atomic, 100 of 100
went through each).

    PYTHONPATH=. python bench/signin_race.py [--requests 100]

Loopback only; every loop is bounded (N requests per limit, one server start).
"""

from __future__ import annotations

import argparse
import http.client
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ADDRESS_LIMIT, PAIR_LIMIT = 30, 10   # the defaults (server/shared/seasonkeys.py: ServerLimits)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(data: Path, port: int) -> subprocess.Popen[bytes]:
    """`referee serve` on `port`, once its sign-in page answers (at most 180 s)."""
    proc = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--data", str(data),
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(360):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=5):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"referee serve stopped ({proc.returncode})") from None
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit("referee serve did not answer within 180 s")


def sign_in_form(port: int, address: str) -> tuple[str, str]:
    """(the CSRF cookie, the form's token) of one sign-in page fetched from `address`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                      source_address=(address, 0))
    conn.request("GET", "/login/", headers={"Host": "127.0.0.1"})
    answer = conn.getresponse()
    cookie = re.search(r"csrftoken=([^;]+)", answer.getheader("Set-Cookie") or "").group(1)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                      answer.read().decode()).group(1)
    conn.close()
    return cookie, token


def race(port: int, address: str, names: list[str], count: int) -> Counter[int]:
    """`count` wrong sign-ins (names in turn) sent at once from `address`; statuses counted."""
    cookie, token = sign_in_form(port, address)
    gate = threading.Barrier(count)

    def one(i: int) -> int:
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username":
                                       names[i % len(names)], "password": f"wrong-{i}"})
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600,
                                          source_address=(address, 0))
        gate.wait(timeout=120)
        try:
            conn.request("POST", "/login/", body=body, headers={
                "Host": "127.0.0.1", "Cookie": f"csrftoken={cookie}",
                "Content-Type": "application/x-www-form-urlencoded"})
            answer = conn.getresponse()
            answer.read()
            return answer.status
        finally:
            conn.close()

    with ThreadPoolExecutor(count) as pool:
        return Counter(pool.map(one, range(count)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100, help="requests per limit (100)")
    count = min(max(parser.parse_args().requests, 1), 500)
    data = Path(tempfile.mkdtemp(prefix="signin-race-")) / "data"
    data.mkdir()
    port = free_port()
    proc = start(data, port)
    try:
        cases = [("per address (many names)", "127.0.0.2",
                  [f"nobody-{i}" for i in range(count)], ADDRESS_LIMIT),
                 ("per name from one address", "127.0.0.3", ["organiser"], PAIR_LIMIT)]
        print(f"{'limit':28} {'sent':>5} {'let through':>12} {'refused':>8} {'limit':>6}  held")
        for label, address, names, limit in cases:
            started = time.monotonic()
            statuses = race(port, address, names, count)
            through = sum(n for status, n in statuses.items() if status != 429)
            print(f"{label:28} {count:5} {through:12} {statuses[429]:8} {limit:6}  "
                  f"{'yes' if through == min(limit, count) else 'NO'} "
                  f"({time.monotonic() - started:.1f} s; statuses {dict(statuses)})")
    finally:
        proc.terminate()
        proc.wait(timeout=300)
        shutil.rmtree(data.parent, ignore_errors=True)


if __name__ == "__main__":
    main()

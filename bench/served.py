"""Benchmark: each page's CPU per request as a real web worker serves it, beside a baseline.

`bench/server.py --pages-alone` times the pages through Django's test client in one thread;
a served request also goes through uvicorn and Django's ASGI handler, which runs each request's
view in a thread of its own (so whatever a thread keeps, a request opens anew). Here part 0's
club (B bots, a season of G games, a standing, rating histories: bench/server.py) is served by
one real web worker (`python -m referee.server.web`, one process, nothing else serving), from
this tree and, with --baseline DIR, from another source tree (a git worktree of an older
commit) on the same data, in turn: A B B A ... Per page, N requests one after another on one
kept-alive connection, signed in; the worker's CPU from /proc before and after, per request.

    python bench/served.py [--bots 100] [--games 20000] [--requests 200] [--baseline DIR]

It prints a table of ms of CPU per request (the mean of the rounds) per page and tree, the
ratio baseline / this tree, and a verdict per page: cheaper or dearer when the ratio is
outside the rounds' own spread (at least 5%), else the same within the noise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import server as club_bench  # noqa: E402  (part 0's club, the students' sessions)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def cpu_of(pid: int) -> float:
    """CPU seconds (user and system) of process `pid` so far."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_for(username: str) -> str:
    """A signed-in session of `username`, made in the club's database; its key."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return str(session.session_key)


def serve_round(tree: Path, env: dict[str, str], session: str, pages: dict,
                requests: int) -> dict[str, float]:
    """One worker from source tree `tree`: ms of CPU per request per page."""
    port = free_port()
    worker = subprocess.Popen(
        [sys.executable, "-m", "referee.server.web", "--host", "127.0.0.1", "--port",
         str(port)], env={**env, "PYTHONPATH": str(tree)}, cwd=tree,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        club_bench.wait("the web worker", lambda: club_bench._answers(url + "/login/"), 300)
        costs = {}
        with httpx.Client(base_url=url, cookies={"sessionid": session}, timeout=120) as client:
            for page, target in pages.items():
                for _ in range(5):   # warm: the worker's first requests of a page
                    assert client.get(target()).status_code == 200, page
                before = cpu_of(worker.pid)
                for _ in range(requests):
                    answer = client.get(target())
                    assert answer.status_code == 200, (page, answer.status_code)
                costs[page] = 1000 * (cpu_of(worker.pid) - before) / requests
        return costs
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=200, help="per page and round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each tree")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="another source tree to serve beside")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-served-"))
    env = {**os.environ, "REFEREE_SERVER_DATA": str(data),
           "REFEREE_SEASON_FILE": str(data / "season.toml"),
           "REFEREE_ALLOWED_HOSTS": "127.0.0.1",
           "DJANGO_SETTINGS_MODULE": "referee.server.settings"}
    os.environ.update(env)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    try:
        club_bench.pages_club(data, args.bots, args.games, args.seed)
        session = session_for("b000")
        trees = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline
                                  else {})
        order = [name for n in range(args.rounds)
                 for name in (list(trees) if n % 2 == 0 else list(trees)[::-1])]
        print(f"{args.bots} bots, a season of {args.games} games; {args.requests} requests "
              f"per page and round, one web worker; rounds {' '.join(order)}; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        found: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for name in order:
            costs = serve_round(trees[name], env, session,
                                club_bench.page_urls(args.bots, args.games, args.seed),
                                args.requests)
            found[name].append(costs)
            print(f"  {name:<9} " + "  ".join(f"{page} {ms:.2f}" for page, ms in
                                              costs.items()), flush=True)
        print(f"\nms of CPU per request, served (mean of {args.rounds} rounds):")
        print(f"  {'page':<18}" + "".join(f"{name:>10}" for name in trees)
              + ("     ratio  verdict" if len(trees) > 1 else ""))
        for page in found["this"][0]:
            means = {name: statistics.mean(r[page] for r in rows)
                     for name, rows in found.items()}
            line = f"  {page:<18}" + "".join(f"{means[name]:>10.2f}" for name in trees)
            if len(trees) > 1:
                ratio = means["baseline"] / means["this"]
                spread = max([0.05] + [abs(a[page] - b[page]) / means[name]
                                       for name, rows in found.items()
                                       for a, b in zip(rows, rows[1:], strict=False)])
                verdict = ("cheaper" if ratio > 1 + spread else "dearer"
                           if ratio < 1 - spread else "the same within the noise")
                line += f"  {ratio:8.2f}  {verdict} (spread {spread:.2f})"
            print(line)
    finally:
        time.sleep(0.1)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()

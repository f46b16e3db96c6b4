"""Benchmark: watching games live on the club server (issue "Play and watch", item 5).

A real `referee serve` (one web process, the season runner) plays a season of B bots (the
sample random and greedy bots as passed versions, 4-player tables, unpaced). Windows of W
seconds alternate, side by side: no watcher, then 20 watchers (asyncio tasks here, httpx,
127.0.0.1 only, each signed in by a session made in the database: each takes a game from
/games/live.json and follows its stream /games/<index>/live to its end, then the next), twice.
It prints the season's games per second in each window, the ratio with watchers to without,
the CPU seconds of the web process and of the whole server (its bots too) per window, and a
verdict: nothing measurable when the ratio is within the no-watcher windows' own spread (at
least 5%).

Latency: a thread here follows the season's live files (referee.game.livefile.follow) and
keeps each step's "t", the referee's time of writing it; a watcher's latency is its time of
receiving the step minus that "t". p50/p95 over every step received, in a window of 1 watcher
and in the windows of 20; target 300 ms at p95.

    python bench/watch.py [--bots 8] [--window 30] [--watchers 20] [--stream games]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import server as club_bench  # noqa: E402  (bench/server.py: the club's setup, the store's count)

TARGET_MS = 300.0


class StepTimes:
    """The referee's writing time of each step of every season game, from the live files."""

    def __init__(self, live: Path) -> None:
        self.live = live
        self.times: dict[tuple[int, int], float] = {}
        self.followed: set[Path] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        from referee.game.livefile import games_in_play

        while not self.stop.is_set():
            for path in games_in_play(self.live):
                if path not in self.followed:
                    self.followed.add(path)
                    threading.Thread(target=self.follow, args=(path,), daemon=True).start()
            time.sleep(0.02)

    def follow(self, path: Path) -> None:
        from referee.game.livefile import follow

        index, step = None, 0
        for line in follow(path, poll=0.01):
            if "players" in line:
                index = line.get("index")
            elif not line.get("end") and index is not None:
                step += 1
                self.times[(index, step)] = line["t"]


async def watcher(url: str, session: str, until: float, got: list[tuple[int, int, float]],
                  errors: list[str], offset: int) -> None:
    """Follow games in play to their ends until `until`; (index, step, received) per step."""
    async with httpx.AsyncClient(base_url=url, cookies={"sessionid": session},
                                 timeout=60.0) as client:
        while time.time() < until:
            listed = (await client.get("/games/live.json")).json()["games"]
            if not listed:
                await asyncio.sleep(0.2)
                continue
            index = listed[offset % len(listed)]["index"]
            try:
                async with client.stream("GET", f"/games/{index}/live") as answer:
                    if answer.status_code != 200:
                        errors.append(f"HTTP {answer.status_code}")
                        await asyncio.sleep(0.5)
                        continue
                    step = None
                    async for line in answer.aiter_lines():
                        if line.startswith("id: "):
                            step = int(line[4:])
                        elif line.startswith("event: step") and step is not None:
                            got.append((index, step, time.time()))
                        elif line.startswith("event: end") or time.time() > until:
                            break
            except httpx.HTTPError as exc:
                errors.append(type(exc).__name__)


STEP_ID = re.compile(rb"id: (\d+)\.(\d+)\nevent: step\n")


async def season_watcher(url: str, session: str, until: float,
                         got: list[tuple[int, int, float]], errors: list[str],
                         offset: int) -> None:
    """Follow the season on one stream (/games/live: game after game) until `until`. A raw
    socket and one regular expression over what arrives: the watchers stand for browsers on
    machines of their own, so their own CPU here is kept as small as it can be (httpx's line
    parsing of some 4,000 events a second took a good part of a core from the season)."""
    host, port = url.removeprefix("http://").split(":")
    request = (f"GET /games/live HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Cookie: sessionid={session}\r\nAccept: text/event-stream\r\n\r\n").encode()
    while time.time() < until:
        writer = None
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            if status != 200:
                errors.append(f"HTTP {status}")
                await asyncio.sleep(0.5)
                continue
            tail = b""
            while time.time() < until:
                try:
                    chunk = await asyncio.wait_for(reader.read(1 << 16),
                                                   max(0.1, until - time.time()))
                except TimeoutError:
                    break
                if not chunk:
                    break
                now, found, last = time.time(), tail + chunk, 0
                for match in STEP_ID.finditer(found):
                    got.append((int(match[1]), int(match[2]), now))
                    last = match.end()
                # An event is one chunk of the answer: keep only a short unmatched end.
                tail = found[max(last, len(found) - 64):]
        except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
            errors.append(type(exc).__name__)
        finally:
            if writer is not None:
                writer.close()


async def crowd(url: str, sessions: list[str], seconds: float,
                got: list[tuple[int, int, float]], errors: list[str], mode: str) -> None:
    until = time.time() + seconds
    follow = season_watcher if mode == "season" else watcher
    await asyncio.gather(*(follow(url, session, until, got, errors, n)
                           for n, session in enumerate(sessions)))


def cpu_seconds(root: int) -> tuple[float, float]:
    """CPU seconds so far of the server's processes (`root` and every descendant, which run in
    sessions of their own): (the web process, all of them, the bots included)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent, used, web = {}, {}, set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        pid = int(stat.parent.name)
        fields = text[text.rindex(")") + 2:].split()
        parent[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / tick
        if b"referee.server.web" in cmdline:   # a web worker (referee/server/web.py)
            web.add(pid)

    def under_root(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parent.get(pid, 0)
        return False

    mine = [pid for pid in used if under_root(pid)]
    return sum(used[p] for p in mine if p in web), sum(used[p] for p in mine)


def window(data: Path, root: int, seconds: float, url: str, sessions: list[str],
           got: list[tuple[int, int, float]], errors: list[str],
           mode: str = "season") -> tuple[float, float, float, float]:
    """One window: (games per second, web CPU s, all CPU s, this process's CPU s: the
    watchers'), watched by `sessions`."""
    start, began, cpu = club_bench.games(data), time.monotonic(), cpu_seconds(root)
    own = own_cpu()
    if sessions:
        # The watchers stand for browsers on machines of their own: in a cgroup of the web
        # server's weight, so they do not wait for a core behind the season they measure.
        with club_bench.crowd_group():
            asyncio.run(crowd(url, sessions, seconds, got, errors, mode))
    else:
        time.sleep(seconds)
    rate = (club_bench.games(data) - start) / (time.monotonic() - began)
    after = cpu_seconds(root)
    return rate, after[0] - cpu[0], after[1] - cpu[1], own_cpu() - own


def own_cpu() -> float:
    """CPU seconds of this process so far (its watchers and its thread of step times)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def latencies(got: list[tuple[int, int, float]], times: StepTimes) -> list[float]:
    return [(received - times.times[(index, step)]) * 1000 for index, step, received in got
            if (index, step) in times.times]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--watchers", type=int, default=20)
    parser.add_argument("--stream", choices=("season", "games"), default="season",
                        help="season: each watcher follows /games/live, game after game on "
                             "one connection; games: each takes a game from /games/live.json "
                             "and opens its stream, then the next game's")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    (data / "season.toml").write_text("seed = 1\nplayers = 4\nround_games = 2\n"
                                      "games_per_bot_per_hour = 0\nhouse_bots = []\n")
    env = {**os.environ, "REFEREE_SERVER_DATA": str(data),
           "REFEREE_SEASON_FILE": str(data / "season.toml"),
           "DJANGO_SETTINGS_MODULE": "referee.server.settings"}
    os.environ.update(env)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = (data / "serve.log").open("w")
    serve = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--data", str(data),
                              "--port", str(port), "--workers", "1"], stdout=log,
                             stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        club_bench.wait("the server", lambda: club_bench._answers(url + "/login/"), 300)
        import django

        django.setup()
        students = club_bench.setup_club(data, args.bots)
        sessions = [students[n % len(students)]["session"] for n in range(args.watchers)]
        club_bench.wait("20 games stored", lambda: club_bench.games(data) >= 20)
        times = StepTimes(data / "season" / "live")
        threading.Thread(target=times.run, daemon=True).start()
        follows = "/games/live" if args.stream == "season" else "a stream per game"
        print(f"season: {args.bots} bots, 4-player tables, unpaced, one web process; "
              f"watchers follow {follows}; "
              f"windows of {args.window:.0f} s; load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores", flush=True)
        one: list[tuple[int, int, float]] = []
        errors: list[str] = []
        window(data, serve.pid, args.window, url, sessions[:1], one, errors, args.stream)
        rows: dict[str, list[tuple[float, float, float, float]]] = {"none": [],
                                                                    "watched": []}
        many: list[tuple[int, int, float]] = []
        for _ in range(2):
            rows["none"].append(window(data, serve.pid, args.window, url, [], [], errors))
            rows["watched"].append(window(data, serve.pid, args.window, url, sessions, many,
                                          errors, args.stream))
        times.stop.set()
        for name, found in rows.items():
            for rate, web, total, own in found:
                print(f"  {name:<8} {rate:6.2f} games/s  web CPU {web:5.1f} s  "
                      f"server CPU {total:6.1f} s  watchers' CPU {own:5.1f} s", flush=True)
        none = statistics.mean(r for r, _, _, _ in rows["none"])
        watched = statistics.mean(r for r, _, _, _ in rows["watched"])
        ratio = watched / none if none else float("nan")
        spread = max(0.05, abs(rows["none"][0][0] - rows["none"][1][0]) / none if none else 0)
        verdict = "nothing measurable" if abs(1 - ratio) <= spread else "MEASURABLE"
        print(f"games/s with {args.watchers} watchers / none: {ratio:.3f} (no-watcher windows' "
              f"spread {spread:.3f}): {verdict}")
        web_extra = (statistics.mean(w for _, w, _, _ in rows["watched"])
                     - statistics.mean(w for _, w, _, _ in rows["none"]))
        print(f"web process CPU added by {args.watchers} watchers: {web_extra:.1f} s per "
              f"{args.window:.0f} s window ({100 * web_extra / args.window:.1f}% of a core)")
        for name, got in (("1 watcher", one), (f"{args.watchers} watchers", many)):
            late = latencies(got, times)
            p95 = pct(late, 0.95)
            print(f"latency, {name}: {len(late)} steps, p50 {pct(late, 0.5):.0f} ms, "
                  f"p95 {p95:.0f} ms (target {TARGET_MS:.0f} ms): "
                  f"{'met' if p95 <= TARGET_MS else 'MISSED'}")
        print(f"stream errors: {len(errors)}" + (f" ({json.dumps(errors[:5])})" if errors
                                                 else ""))
    finally:
        serve.terminate()
        serve.wait(timeout=300)


if __name__ == "__main__":
    main()

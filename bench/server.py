"""Benchmark: the club server under a room of students, and the refit of a big season.

Part 1, load. A real `referee serve` (uvicorn + the season runner) on a fresh data folder plays
a season of B bots (copies of the sample random and greedy bots, entered as versions that
passed their check; 4-player tables, rounds of 2 games per bot). Once every bot is in and the
first table is fitted, the season's games per second are measured three times:

* idle A: W seconds, nobody on the pages;
* load:   W seconds while S simulated students (one asyncio task each, httpx, 127.0.0.1 only,
          a think time of 0.5-1.5 s between requests, signed in by a session made in the
          database) load the leaderboard (page and JSON), bot pages, game pages and replay
          viewers of stored games, and one in five uploads a new version of its bot (a zip
          through POST /api/submit with a personal token), whose check the runner runs
          meanwhile;
* idle B: W seconds after the check queue has drained.

It prints p50 and p95 latency per page with the request counts, the error count (any answer
other than 200 or 201, or no answer), the CPU under load and the connections held of each
process holding the listening socket, how late the students' own event loop woke (the times
include it), and games per second under load against the mean of the two idle windows (the
ratio; goal at least 0.8). `--no-refit` stops here.

Part 2, refit. A season of R bots and G games is stored (results simulated with the engine's
greedy-or-random policies would take hours; places are drawn from a Plackett-Luce model with
spread strengths instead, at seeded random tables of 4, which is what the fit consumes) and
refitted exactly as the runner does, by `python -m referee.server.runner.refit DIR` in a
subprocess: a first refit of the season less its last 50 games (no state yet), then, while the
served season keeps playing, the refit after those 50 new games (as the runner refits back to
back): its wall time against the target of 30 s with a verdict, and the season's games per
second meanwhile. bench/refit.py compares it with the old way.

    python bench/server.py [--bots 50] [--students 50] [--window 60] [--refit-bots 100]
                           [--refit-games 100000] [--no-refit]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import random
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from referee.league.folder import LeagueFolder  # noqa: E402  (this checkout's)


def games(data: Path) -> int:
    """Games the season's store holds (0 before its first game)."""
    from referee.league.store import games_stored

    return games_stored(LeagueFolder(data / "season").store_path)


def rate(data: Path, seconds: float) -> tuple[float, int]:
    """Games per second stored over `seconds` (and the count)."""
    start, began = games(data), time.monotonic()
    time.sleep(seconds)
    count = games(data) - start
    return count / (time.monotonic() - began), count


def wait(what: str, test, timeout: float = 1800.0) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: timed out waiting for {what}")
        time.sleep(1.0)


def bot_zip(sample: str, name: str) -> bytes:
    """A bot folder as a student zips it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("bot.toml", f'name = "{name}"\ncommand = ["{{python}}", "main.py"]\n')
        zipped.write(ROOT / "sample_bots" / sample / "main.py", "main.py")
    return buffer.getvalue()


def setup_club(data: Path, bots: int) -> list[dict]:
    """Students, their bots as passed versions, sessions and tokens (through the ORM here)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore

    from referee.server.club.models import Bot, BotVersion, CheckRun, Profile
    from referee.server.club.people import new_token

    students = []
    for n in range(bots):
        name, sample = f"s{n:02d}", ("random", "greedy")[n % 2]
        user = User.objects.create_user(name, password="a long bench password")
        Profile.objects.create(user=user, display_name=name, max_bots=3)
        bot = Bot.objects.create(owner=user, name=f"{name}-bot")
        folder = data / "uploads" / bot.name / "1" / "bot"
        folder.parent.mkdir(parents=True)
        shutil.copytree(ROOT / "sample_bots" / sample, folder)
        (folder / "bot.toml").write_text(f'name = "{bot.name}"\n'
                                         'command = ["{python}", "main.py"]\n')
        version = BotVersion.objects.create(
            bot=bot, number=1, kind="folder", archive_name="bot.zip", archive_sha256="0" * 64,
            archive_size=1, folder=f"uploads/{bot.name}/1/bot", spec="bot.toml",
            league_name=f"{bot.name}.v1", check_state="passed")
        CheckRun.objects.create(version=version, state="passed")
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]   # the club's own
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        token, _ = new_token(user)
        students.append({"name": name, "bot": bot.name, "sample": sample,
                         "uploads": n % 5 == 0,   # one student in five uploads a new version
                         "session": session.session_key, "token": token})
    return students


async def student(url: str, me: dict, bots: list[str], indexes: list[int], until: float,
                  trace: list[tuple[float, str, float]], errors: list[str],
                  rng: random.Random) -> None:
    """One student's visit: pages with a think time, one upload of a new version; each answered
    request goes into `trace` as (moment it began, page, seconds)."""
    uploaded = False
    # A class arrives over a think time, not within one millisecond (a burst of 50 requests at
    # once measures the first second of the window, not the pages).
    await asyncio.sleep(rng.uniform(0, 1.5))
    # verify=False: the server is plain HTTP on loopback, and a client that loads the system's
    # certificates takes 50 ms of this process's one event loop: fifty of them in the window's
    # first seconds delayed every request then by up to a second.
    async with httpx.AsyncClient(base_url=url, cookies={"sessionid": me["session"]},
                                 timeout=120.0, verify=False) as client:
        while time.monotonic() < until:
            roll = rng.random()
            if not uploaded and me["uploads"] and roll < 0.05:
                page, method = "upload", "POST"
                target = f"/api/submit?bot={me['bot']}&filename=bot.zip"
                body = bot_zip(me["sample"], me["bot"])
                headers = {"Authorization": f"Bearer {me['token']}"}
                uploaded = True
            else:
                method, body, headers = "GET", None, {}
                index = rng.choice(indexes)
                page, target = rng.choice([
                    ("leaderboard", "/leaderboard/"), ("leaderboard.json", "/leaderboard.json"),
                    ("bot page", f"/bots/{rng.choice(bots)}/"),
                    ("game page", f"/games/{index}/"), ("replay viewer", f"/games/{index}/viewer"),
                ])
            began = time.perf_counter()
            try:
                answer = await client.request(method, target, content=body, headers=headers)
                if answer.status_code not in (200, 201):
                    errors.append(f"{page} {target}: HTTP {answer.status_code}")
                else:
                    trace.append((began, page, time.perf_counter() - began))
            except httpx.HTTPError as exc:
                errors.append(f"{page} {target}: {type(exc).__name__}")
            await asyncio.sleep(rng.uniform(0.5, 1.5))


@contextlib.contextmanager
def crowd_group() -> Iterator[None]:
    """Run this process (the students' browsers) in a cgroup of the web server's weight while
    it is in the block, where one can be made: the students' browsers stand for machines of
    their own, so the measuring end must not wait for a core behind the season it measures."""
    from referee.server.priority import WEB_CPU_WEIGHT, new_cgroup

    made = new_cgroup("referee-bench-crowd-", WEB_CPU_WEIGHT)
    if made is None:
        print("(the students share the season's cores: no cgroup could be made)", flush=True)
        yield
        return
    group, _ = made
    home = group.parent   # made beside this process's own cgroup
    (group / "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield
    finally:
        (home / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()


LAG_TICK_S = 0.01


async def lag(until: float, late: list[float]) -> None:
    """How late the students' own event loop wakes from a short sleep, until `until`: a
    latency measured here includes that much of waiting for this process, not the server."""
    while time.monotonic() < until:
        began = time.perf_counter()
        await asyncio.sleep(LAG_TICK_S)
        late.append(time.perf_counter() - began - LAG_TICK_S)


async def crowd(url: str, students: list[dict], indexes: list[int], seconds: float,
                seed: int) -> tuple[list[tuple[float, str, float]], list[str], list[float]]:
    """Every student's visit for `seconds`: (every answered request as (moment it began, page,
    seconds), errors, the event loop's lateness samples)."""
    trace: list[tuple[float, str, float]] = []
    errors: list[str] = []
    late: list[float] = []
    until = time.monotonic() + seconds
    bots = [s["bot"] for s in students]
    await asyncio.gather(lag(until, late),
                         *(student(url, me, bots, indexes, until, trace, errors,
                                   random.Random(seed * 1000 + n))
                           for n, me in enumerate(students)))
    return trace, errors, late


def big_season(out: Path, bots: int, count: int, seed: int, record: bytes = b"",
               names: list[str] | None = None) -> None:
    """A stored season of `bots` entrants and `count` games with simulated places (what the
    fit reads); every game's record is `record` (a stored record's blob; empty by default),
    and the bots are `names` (default b000, b001, ...)."""
    import numpy as np

    from referee.bots.errors import STRIKE_TYPES
    from referee.league.config import LeagueSettings
    from referee.league.schedule import ScheduledGame
    from referee.league.season import open_season

    names = names or [f"b{n:03d}" for n in range(bots)]
    with open_season(out, LeagueSettings(bots=[], seed=seed, players=(4, 4))) as season:
        for name in names:
            season.enter(name, "v1", None)
        rng = np.random.default_rng(seed)
        # Seeded random tables: the fit does not need the balanced schedule (slow to make for
        # 100,000 games), only who sat together and how they placed.
        schedule = [ScheduledGame(i, tuple(names[b] for b in rng.choice(bots, 4, replace=False)),
                                  i, i) for i in range(count)]
        season.store.extend({"games": len(schedule)}, {}, schedule)
        strength = dict(zip(names, rng.normal(0, 1, bots), strict=True))
        rows = []
        for game in schedule:
            # Plackett-Luce: Gumbel noise on log-strengths orders the table
            keys = [strength[b] + rng.gumbel() for b in game.bots]
            order = sorted(range(4), key=lambda s: -keys[s])
            places = [order.index(s) + 1 for s in range(4)]
            rows.append((game.index, "g", json.dumps(list(game.bots)), str(game.seed),
                         json.dumps(places), json.dumps([100 * (5 - p) for p in places]),
                         json.dumps([False] * 4), json.dumps([dict.fromkeys(STRIKE_TYPES, 0)] * 4),
                         json.dumps([[]] * 4),
                         json.dumps(["v1"] * 4), 0.0, 0.0, record, "[]"))
        db = season.store.db
        db.execute("BEGIN")
        db.executemany(f"INSERT INTO games VALUES ({', '.join('?' * 14)})", rows)
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'game_seats'").fetchone():
            db.executemany("INSERT OR IGNORE INTO game_seats VALUES (?, ?)",
                           [(name, game.index) for game in schedule for name in set(game.bots)])
        db.execute("COMMIT")


# Targets (the issue "The club server answers in 100 ms with fifty students on the pages").
CPU_TARGET_MS = {"leaderboard": 10.0, "leaderboard.json": 10.0, "game page": 10.0,
                 "replay viewer": 10.0, "bot page": 20.0}
P95_TARGET_MS = 100.0
RATE_RATIO_TARGET = 0.8
BYTES_PER_GAME_TARGET = 4096


def sample_record(folder: Path, seed: int) -> bytes:
    """The stored record (blob) of one real 4-player game of copies of the sample random bot."""

    bots = []
    for n in range(4):
        shutil.copytree(ROOT / "sample_bots" / "random", folder / f"r{n}")
        spec = folder / f"r{n}.toml"
        spec.write_text(f'name = "r{n}"\ncommand = ["{{python}}", "main.py"]\nworkdir = "r{n}"\n')
        bots.append(str(spec))
    subprocess.run([sys.executable, "-m", "referee.cli", "league", *bots, "--games", "1",
                    "--players", "4", "--seed", str(seed), "--out", str(folder / "league"),
                    "--quiet"], check=True, capture_output=True)
    store = LeagueFolder(folder / "league").open_store()
    try:
        return store.db.execute("SELECT record FROM games").fetchone()[0]
    finally:
        store.close()


def season_standing(folder: Path, names: list[str], seed: int) -> dict:
    """A standing of `names` shaped as the runner stores it: the snapshot of a small real
    season (8 of the bots, 160 games) grown to every bot, with a row each and records against
    every other bot (the fit of a big season is the refit's business, not the pages')."""
    from referee.league.season import Season, snapshot

    big_season(folder, 8, 160, seed, b"", names[:8])
    with Season(LeagueFolder(folder).open_store()) as season:
        small = json.loads(json.dumps(snapshot(season)))
    rng = random.Random(seed)
    template = small["rows"][0]
    rows = [{**template, "table": {**template["table"], "bot": name, "rank": n + 1,
                                   "strength": 200 - 4 * n, "games": rng.randrange(3000, 5000)}}
            for n, name in enumerate(names)]
    head = {name: {other: {"games": rng.randrange(100, 200), "ahead": rng.randrange(100),
                           "behind": rng.randrange(100)} for other in names if other != name}
            for name in names}
    facts = {**small["facts"], "bots": dict.fromkeys(names, "v1")}
    return {"rows": rows, "facts": facts, "head_to_head": head}


def struck_seats(db_path: Path) -> None:
    """Every game's first seat struck three times and forfeited (the store's strike marks, as
    `LeagueStore.save` keeps them): the bot pages' worst case, a link per mark."""
    from referee.bots.errors import STRIKE_TYPES

    struck = [{**dict.fromkeys(STRIKE_TYPES, 0), "timeout": 3}] + \
        [dict.fromkeys(STRIKE_TYPES, 0)] * 3
    db = sqlite3.connect(db_path)
    try:
        with db:
            db.execute("UPDATE games SET strikes = ?, forfeited = ?",
                       (json.dumps(struck), json.dumps([True, False, False, False])))
            db.executemany("INSERT INTO game_strikes VALUES (?, 0, ?, ?)",
                           [(idx, move, kind) for (idx,) in db.execute("SELECT idx FROM games")
                            for move, kind in ((1, "timeout"), (5, "timeout"), (9, "timeout"),
                                               (9, "forfeit"))])
    finally:
        db.close()


def full_history(seed: int) -> list[list[float]]:
    """A bot's rating history at its longest (HISTORY_POINTS points over three versions)."""
    from referee.league.tables import Row
    from referee.server.shared.ratinghistory import grown

    rng = random.Random(seed)
    points: list[list[float]] = []
    for refit in range(1000):
        strength = rng.uniform(-100, 100)
        row = Row(rank=1, bot="bot", mu=25.0, sigma=1.0, conservative=22.0,
                  games=10 * refit + 4, wins=0, win_pct=None, avg_place=None, avg_money=None,
                  seat_win_pct=[], strikes={}, forfeits=0, think_p50_ms=None,
                  think_p95_ms=None, strength=strength, strength_low=strength - 40,
                  strength_high=strength + 40)
        points = grown(points, [(1 + refit // 400, row)], 1.7e9 + 30 * refit)
    return points


def pages_club(data: Path, bots: int, count: int, seed: int) -> dict:
    """Part 0's club in the data folder `data` (Django set up on it and migrated): `bots`
    users with a bot each, a season store of `count` games, a standing of them (returned),
    every bot's full rating history and chart."""
    from django.contrib.auth.models import User

    from referee.server.club.models import Bot, BotVersion, Profile, RatingHistory, Standing
    from referee.server.shared.ratinghistory import HISTORY_POINTS, rating_chart

    names = [f"b{n:03d}.v1" for n in range(bots)]
    record = sample_record(data / "sample", seed)
    big_season(data / "season", bots, count, seed, record, names)
    struck_seats(LeagueFolder(data / "season").store_path)
    standing = season_standing(data / "fit", names, seed)
    for name in names:
        user = User.objects.create(username=name.split(".")[0])
        Profile.objects.create(user=user, display_name=user.username, max_bots=3)
        bot = Bot.objects.create(owner=user, name=user.username)
        BotVersion.objects.create(
            bot=bot, number=1, kind="folder", archive_name="bot.zip",
            archive_sha256="0" * 64, archive_size=1, folder=f"uploads/{bot.name}/1/bot",
            spec="bot.toml", league_name=name, check_state="passed", season_state="active")
    Standing.objects.create(games=count, data=standing)
    history = full_history(seed)
    assert len(history) == HISTORY_POINTS
    RatingHistory.objects.bulk_create(
        RatingHistory(bot=bot, points=history, chart=rating_chart(history))
        for bot in Bot.objects.all())
    return standing


def page_urls(bots: int, count: int, seed: int) -> dict:
    """Part 0's pages: a function per page that gives the next URL to ask for."""
    rng = random.Random(seed)
    return {"leaderboard": lambda: "/leaderboard/",
            "leaderboard.json": lambda: "/leaderboard.json",
            "bot page": lambda: f"/bots/b{rng.randrange(bots):03d}/",
            "game page": lambda: f"/games/{rng.randrange(count)}/",
            "replay viewer": lambda: f"/games/{rng.randrange(count)}/viewer"}


def pages_alone(bots: int, count: int, seed: int, requests: int, profile: Path | None) -> None:
    """Each page's CPU per request with nobody else on the server, in this process (Django's
    test client through the whole middleware), on a club of `bots` bots whose season holds
    `count` games; prints one JSON line {page: ms}. Run in a subprocess of its own (Django is
    set up on a data folder of its own)."""
    data = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    os.environ.update({"REFEREE_SERVER_DATA": str(data),
                       "REFEREE_SEASON_FILE": str(data / "season.toml"),
                       "REFEREE_ALLOWED_HOSTS": "testserver",
                       "DJANGO_SETTINGS_MODULE": "referee.server.settings"})
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    from django.contrib.auth.models import User
    from django.test import Client

    from referee.server.club.models import Standing

    try:
        standing = pages_club(data, bots, count, seed)
        client = Client()
        client.force_login(User.objects.get(username="b000"))
        pages = page_urls(bots, count, seed)
        costs = {}
        for page, target in pages.items():
            for _ in range(3):   # warm: the process's first request of a page
                assert client.get(target()).status_code == 200, page
            profiler = cProfile.Profile() if profile else None
            times = []
            for _ in range(requests):
                url = target()
                began = time.process_time()
                if profiler:
                    profiler.enable()
                answer = client.get(url)
                if profiler:
                    profiler.disable()
                times.append(time.process_time() - began)
                assert answer.status_code == 200, (page, url, answer.status_code)
            costs[page] = 1000 * statistics.mean(times)
            if profiler and profile:
                profiler.dump_stats(profile.with_suffix(f".{page.replace(' ', '-')}.prof"))
        # The request that meets a new standing shapes it (its worker's other requests wait
        # behind it: Django runs a process's views on one thread).
        shaped = []
        for n in range(max(3, requests // 4)):
            Standing.objects.create(games=count + n + 1, data=standing)
            began = time.process_time()
            assert client.get("/leaderboard/").status_code == 200
            shaped.append(time.process_time() - began)
        costs["new standing"] = 1000 * statistics.mean(shaped)
        costs["standing bytes"] = len(json.dumps(standing))
        print(json.dumps(costs))
    finally:
        shutil.rmtree(data, ignore_errors=True)


def bytes_per_game(season: Path) -> float:
    """What a game takes in a season's store: the pages of everything that grows with the
    games (their rows, the seats' index, the schedule), per game stored."""

    tables = ("games", "game_seats", "schedule", "game_workers", "game_strikes")
    marks = ", ".join("?" * len(tables))
    db = sqlite3.connect(f"file:{LeagueFolder(season).store_path}?mode=ro", uri=True)
    try:
        used = db.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks}) OR name IN "
                          f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))",
                          tables * 2).fetchone()[0]
        count = db.execute("SELECT count(*) FROM games").fetchone()[0]
    finally:
        db.close()
    return used / max(1, count)


def verdicts(cpu_alone: dict[str, float], seen: dict[str, list[float]], errors: list[str],
             idle: float, load: float, per_game: float) -> None:
    """The table of every measure with its target and a verdict line."""
    print("\ntargets:")
    print(f"  {'page':<18} {'CPU alone ms':>12} {'target':>7} {'p50 ms':>8} {'p95 ms':>8} "
          f"{'target':>7}  verdict")
    pages_met = True
    for page, target in CPU_TARGET_MS.items():
        cpu, times = cpu_alone.get(page, float("nan")), seen.get(page, [])
        p50 = 1000 * statistics.median(times) if times else float("nan")
        p95 = 1000 * pct(times, 0.95) if times else float("nan")
        met = cpu <= target and p95 <= P95_TARGET_MS
        pages_met &= met
        print(f"  {page:<18} {cpu:>12.1f} {target:>7.0f} {p50:>8.1f} {p95:>8.1f} "
              f"{P95_TARGET_MS:>7.0f}  {'met' if met else 'NOT MET'}")
    ratio = load / idle if idle else float("nan")
    season_met = ratio >= RATE_RATIO_TARGET
    lines = [(f"errors under load: {len(errors)} (target 0)", not errors),
             (f"games per second: idle {idle:.2f}, under load {load:.2f}, ratio {ratio:.2f} "
              f"(target >= {RATE_RATIO_TARGET})", season_met),
             (f"season's store: {per_game:.0f} bytes per game (target <= "
              f"{BYTES_PER_GAME_TARGET})", per_game <= BYTES_PER_GAME_TARGET)]
    for text, met in lines:
        print(f"  {text}: {'met' if met else 'NOT MET'}")
    if pages_met and not season_met:
        print("verdict: the cores could not give both; the server chose the pages (the season "
              "runs as one scheduling group beside the web server) and the season kept "
              f"{ratio:.0%} of its idle games per second")
    elif season_met and not pages_met:
        print("verdict: the season kept its pace, and the pages missed a target above")
    else:
        met = pages_met and season_met and not errors and per_game <= BYTES_PER_GAME_TARGET
        print("verdict: " + ("every target met" if met else "targets missed (NOT MET above)"))


def _tcp_on_port(port: int) -> dict[int, str]:
    """This machine's TCP sockets whose local port is `port`: inode -> state ("0A" listening,
    "01" established), from /proc/net/tcp and tcp6."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    found[int(fields[9])] = fields[3]
    return found


def _sockets_of(pid: int) -> set[int]:
    """The inodes of the sockets process `pid` holds."""
    found = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    found.add(int(target[8:-1]))
    return found


def web_workers(port: int) -> list[int]:
    """The processes that hold a socket listening on `port`: the web workers (and, with
    uvicorn's --workers, the supervisor that shares its socket with them)."""
    listening = {inode for inode, state in _tcp_on_port(port).items() if state == "0A"}
    return sorted(int(entry.name) for entry in Path("/proc").iterdir()
                  if entry.name.isdigit() and _sockets_of(int(entry.name)) & listening)


def connections_held(pids: list[int], port: int) -> dict[int, int]:
    """How many connections to `port` each of `pids` holds open now."""
    established = {inode for inode, state in _tcp_on_port(port).items() if state == "01"}
    return {pid: len(_sockets_of(pid) & established) for pid in pids}


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process `pid` has used so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--refit-bots", type=int, default=100)
    parser.add_argument("--refit-games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--alone-bots", type=int, default=100)
    parser.add_argument("--alone-games", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40, help="per page, alone")
    parser.add_argument("--no-refit", action="store_true", help="stop after part 1")
    parser.add_argument("--pages-alone", action="store_true",
                        help="only each page's CPU per request alone (one JSON line)")
    parser.add_argument("--profile", type=Path, help="with --pages-alone: cProfile files "
                        "PROFILE.<page>.prof")
    args = parser.parse_args()
    if args.pages_alone:
        pages_alone(args.alone_bots, args.alone_games, args.seed, args.requests, args.profile)
        return
    print(f"pages alone: a club of {args.alone_bots} bots, a season of {args.alone_games} games "
          f"(simulated places, real records), {args.requests} requests per page in-process",
          flush=True)
    alone = subprocess.run([sys.executable, __file__, "--pages-alone", "--alone-bots",
                            str(args.alone_bots), "--alone-games", str(args.alone_games),
                            "--requests", str(args.requests), "--seed", str(args.seed)],
                           capture_output=True, text=True)
    if alone.returncode != 0:
        raise SystemExit(f"bench: the pages alone failed:\n{alone.stderr[-2000:]}")
    cpu_alone = json.loads(alone.stdout.strip().splitlines()[-1])
    for page, target in CPU_TARGET_MS.items():
        print(f"  {page:<18} {cpu_alone[page]:6.1f} ms CPU per request (target {target:.0f})")
    print(f"  (the standing: {cpu_alone['standing bytes']} bytes of JSON; the leaderboard "
          f"request that shapes a new one: {cpu_alone['new standing']:.1f} ms CPU)", flush=True)

    data = Path(tempfile.mkdtemp(prefix="bench-server-"))
    # The runner's defaults otherwise: a refit after 50 new games or 30 s. Unpaced: the
    # bench measures how fast games go.
    (data / "season.toml").write_text(f"seed = {args.seed}\nplayers = 4\nround_games = 2\n"
                                      "games_per_bot_per_hour = 0\nuploads_per_hour = 1000\n")
    env = {**os.environ, "REFEREE_SERVER_DATA": str(data),
           "REFEREE_SEASON_FILE": str(data / "season.toml"),
           "DJANGO_SETTINGS_MODULE": "referee.server.settings"}
    os.environ.update(env)
    with socket.socket() as probe:   # a free port on loopback
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    log = (data / "serve.log").open("w")
    serve = subprocess.Popen([sys.executable, "-m", "referee.cli", "serve", "--data", str(data),
                              "--port", str(port)], stdout=log, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
    try:
        wait("the server", lambda: _answers(url + "/login/"), 300)
        import django

        django.setup()
        from referee.server.club.models import BotVersion, Standing

        students = setup_club(data, args.bots)[: args.students]
        wait("every bot in the season", lambda: BotVersion.objects.filter(
            season_state="active", bot__house=False).count() == args.bots)
        wait("a fitted table and 100 games",
             lambda: Standing.objects.exists() and games(data) >= 100)
        print(f"season: {args.bots} bots, 4-player tables, rounds of 2 games per bot; "
              f"{games(data)} games stored before measuring", flush=True)
        idle_a, count_a = rate(data, args.window)
        indexes = list(range(games(data)))
        began = games(data)
        load_start = time.monotonic()
        workers = web_workers(port)
        cpu_before = {pid: cpu_seconds(pid) for pid in workers}
        held: dict[int, int] = {}
        # Halfway through the load, once every student has a connection open.
        sample = threading.Timer(args.window / 2,
                                 lambda: held.update(connections_held(workers, port)))
        sample.start()
        crowd_cpu = time.process_time()
        with crowd_group():
            trace, errors, late = asyncio.run(crowd(url, students, indexes, args.window,
                                                   args.seed))
        crowd_cpu = time.process_time() - crowd_cpu
        seen: dict[str, list[float]] = {}
        for _, page, took in trace:
            seen.setdefault(page, []).append(took)
        sample.cancel()
        load = (games(data) - began) / (time.monotonic() - load_start)
        web_cpu = {pid: cpu_seconds(pid) - cpu_before[pid] for pid in workers}
        count_load = games(data) - began
        wait("the check queue to drain", lambda: not BotVersion.objects.filter(
            check_state__in=["queued", "running"]).exists())
        idle_b, count_b = rate(data, args.window)
        idle = (idle_a + idle_b) / 2
        print(f"\npages under load ({args.students} students, {args.window:.0f} s, think time "
              f"0.5-1.5 s):")
        print(f"  {'page':<18} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8}")
        for page in sorted(seen):
            times = seen[page]
            print(f"  {page:<18} {len(times):>8} {1000 * statistics.median(times):>8.1f} "
                  f"{1000 * pct(times, 0.95):>8.1f}")
        print(f"  errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
        # The slowest with their moments tell a stall of the whole server from a page's cost.
        first = min((began for began, _, _ in trace), default=0.0)
        print("  slowest requests (s into the window, page, ms): " + "; ".join(
            f"{began - first:.1f} {page} {1000 * took:.0f}"
            for began, page, took in sorted(trace, key=lambda t: -t[2])[:12]))
        passed = BotVersion.objects.filter(number=2, check_state="passed").count()
        uploads = len(seen.get("upload", []))
        print(f"  uploads accepted: {uploads}; their checks passed: {passed}")
        print(f"  the students' own process: {crowd_cpu:.1f} s CPU; its event loop woke late "
              f"by p50 {1000 * statistics.median(late):.1f} ms, p95 {1000 * pct(late, 0.95):.1f} "
              f"ms, at most {1000 * max(late, default=0.0):.0f} "
              f"ms (included in the times above)")
        print("  web processes (holding the listening socket): CPU s under load, connections "
              "held halfway: " + "; ".join(f"pid {pid} {web_cpu[pid]:.1f} s, {held.get(pid, 0)}"
                                            for pid in workers))
        print(f"\ngames per second: idle A {idle_a:.2f} ({count_a} games), under load "
              f"{load:.2f} ({count_load} games), idle B {idle_b:.2f} ({count_b} games)")
        print(f"ratio load / mean idle: {load / idle:.2f} (goal >= 0.8)", flush=True)
        verdicts(cpu_alone, seen, errors, idle, load, bytes_per_game(data / "season"))
        if args.no_refit:
            return

        out = data / "big-season"
        made = time.monotonic()
        big_season(out, args.refit_bots, args.refit_games, args.seed)
        print(f"\nrefit: a season of {args.refit_bots} bots and {args.refit_games} games "
              f"(simulated places) stored in {time.monotonic() - made:.0f} s", flush=True)
        from refit import TARGET_S, prime, timed_refit  # bench/refit.py

        first = prime(out, 50, data / "big-season-earlier")
        print(f"first refit (no state yet, 50 games fewer): {first[0]:.1f} s wall, "
              f"{first[1]:.1f} s CPU", flush=True)
        before = games(data)
        seconds, cpu, snapshot = timed_refit(out)
        during = (games(data) - before) / seconds
        print(f"refit after 50 new games (python -m referee.server.runner.refit, as the "
              f"runner runs it): {seconds:.1f} s wall, {cpu:.1f} s CPU, for "
              f"{len(snapshot['rows'])} rows; the served season played {during:.2f} games/s "
              f"meanwhile ({games(data) - before} games)")
        print(f"verdict: refit of {args.refit_bots} bots and {args.refit_games} games in "
              f"{seconds:.1f} s wall (target <= {TARGET_S:.0f} s): "
              f"{'met' if seconds <= TARGET_S else 'NOT met'}", flush=True)
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=180)
        except subprocess.TimeoutExpired:
            serve.kill()
        shutil.rmtree(data, ignore_errors=True)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=10).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()

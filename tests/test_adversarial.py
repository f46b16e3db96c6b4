"""Untrusted bots against the real referee: one league of misbehaving and hostile bots.

Every bot runs from a directory of its own (a copy of its `tests/bots/` code plus botlib), the
way an organiser lays out handed-in bots, so that a bot's sandbox can only show it its own files.
The league runs through the CLI in a subprocess with a known REFEREE_RUN_ID, bubblewrap on (the
default wherever it works). The tests below read its database, tables and the bots' output stored
in the game records. `docs/security.md` maps each sandbox guarantee to one of these tests.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import tomllib
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from referee.bots.process import GAME_LOG_CAP
from referee.bots.sandbox import sandbox_available
from referee.check import processes_with_run_id
from referee.engine import Game, GameRecord
from referee.engine.record import event_to_dict

pytestmark = pytest.mark.skipif(
    not sandbox_available(),
    reason="bubblewrap sandbox unavailable: `bwrap` (apt-get install bubblewrap), `prlimit` "
    "or `setpriv` missing, or `bwrap ... true` failed on this machine",
)

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"

DECISION_MS = 200
BANK_MS = 200
GAMES = 12          # 16 bots at tables of 3-4: every bot plays 2 or 3 games
SEED = 3
HONEST = ("honest-a", "honest-b")
MISBEHAVING = ("hang", "slow", "illegal", "garbage", "crash_mid", "random_crasher", "forker",
               "stderr_flood", "memory_hog", "fork_bomb", "net_probe", "snoop", "writer")
BROKEN = "exit_in_handshake"
# The strike types each misbehaving bot must earn (at least one) and may earn (nothing else).
STRIKES = {
    "hang": ({"timeout"}, {"timeout"}),
    "slow": ({"timeout"}, {"timeout"}),
    "illegal": ({"illegal"}, {"illegal"}),
    "garbage": ({"malformed", "protocol"}, {"malformed", "protocol"}),
    "crash_mid": ({"crash"}, {"crash"}),
    "random_crasher": ({"crash"}, {"crash"}),
    # Touching fresh memory can be slow on a loaded machine: a late answer is a timeout.
    "memory_hog": ({"crash"}, {"crash", "timeout"}),
}

def _spec_limit(bot: str, key: str) -> int:
    return tomllib.loads((TEST_BOTS / f"{bot}.toml").read_text())["limits"][key]


MEMORY_MB = _spec_limit("memory_hog", "memory_mb")
MAX_PROCESSES = _spec_limit("fork_bomb", "max_processes")
REFEREE_RSS_LIMIT_KB = 400 * 1024


# ---------------------------------------------------------------------------- helpers


def install_bot(base: Path, name: str, source: str, env: dict[str, str] | None = None) -> Path:
    """Copy test bot `source` into base/bots/NAME (its main.py and botlib.py, nothing else) and
    write base/bots/NAME.toml from its spec (a spec's workdir must be inside its folder): the
    bot's sandbox shows it only that directory."""
    spec = tomllib.loads((TEST_BOTS / f"{source}.toml").read_text())
    bot_dir = base / "bots" / name
    (bot_dir / source).mkdir(parents=True)
    shutil.copy(TEST_BOTS / "botlib.py", bot_dir / "botlib.py")
    shutil.copy(TEST_BOTS / source / "main.py", bot_dir / source / "main.py")
    for path in (bot_dir, bot_dir / source):
        path.chmod(0o755)
    for path in (bot_dir / "botlib.py", bot_dir / source / "main.py"):
        path.chmod(0o644)
    lines = [f"name = {json.dumps(name)}", f"command = {json.dumps(spec['command'])}",
             f"workdir = {json.dumps(name)}"]
    merged_env = {**spec.get("env", {}), **(env or {})}
    if merged_env:
        lines.append("[env]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in merged_env.items()]
    if spec.get("limits"):
        lines.append("[limits]")
        lines += [f"{key} = {value}" for key, value in spec["limits"].items()]
    path = base / "bots" / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_league(base: Path, games: int, seed: int, concurrency: int = 4) -> Path:
    path = base / "league.toml"
    path.write_text(
        f'bots = ["bots/*.toml"]\ngames = {games}\nplayers = "3-4"\nseed = {seed}\n'
        f'concurrency = {concurrency}\nout = "out"\nskip_broken = true\n'
        f"[limits]\ndecision_ms = {DECISION_MS}\ngame_bank_ms = {BANK_MS}\n"
        "startup_ms = 30000\n"   # generous: 16 bots start at once, the fork bomb forks first
    )
    return path


def start_referee(league: Path, run_id: str) -> subprocess.Popen[bytes]:
    """`referee league LEAGUE -q` in a subprocess; its stdout and stderr go to files next to
    the league file (league.stdout, league.stderr), so that nothing can block on a pipe."""
    env = {**os.environ, "REFEREE_RUN_ID": run_id}
    with open(league.with_suffix(".stdout"), "wb") as out, \
            open(league.with_suffix(".stderr"), "wb") as err:
        return subprocess.Popen([sys.executable, "-m", "referee.cli", "league", str(league),
                                 "-q"], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)


def wait_for_no_processes(run_id: str, seconds: float) -> tuple[list[int], float]:
    """Poll until no run-id process is left or `seconds` pass: (the survivors, time waited)."""
    start = time.monotonic()
    left = processes_with_run_id(run_id)
    while left and time.monotonic() - start < seconds:
        time.sleep(0.05)
        left = processes_with_run_id(run_id)
    return left, time.monotonic() - start


def rss_kb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match.group(1)) if match else None


def games_recorded(db_path: Path) -> int:
    try:
        db = sqlite3.connect(db_path)
        try:
            return db.execute("SELECT count(*) FROM games").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


@dataclass
class League:
    base: Path
    out: Path
    run_id: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    rss_kb: list[int]
    leftover: list[int]
    leftover_wait: float
    port: int
    accepted_after: list[str]
    scheduled: int = 0
    settings: dict = field(default_factory=dict)
    games: list[dict] = field(default_factory=list)       # rows of the games table
    records: list[dict] = field(default_factory=list)     # game records (JSON)
    table: dict[str, dict] = field(default_factory=dict)  # table.json rows by bot

    def seats(self, bot: str) -> Iterator[tuple[dict, int]]:
        """(record, seat) for every seat `bot` had."""
        for record in self.records:
            for entry in record["bots"]:
                if entry["name"] == bot:
                    yield record, entry["seat"]

    def output_lines(self, bot: str, prefix: str) -> list[str]:
        """Lines starting with `prefix` that `bot` wrote during its games (all its seats)."""
        return [line for record, seat in self.seats(bot)
                for line in record["output"][seat].splitlines() if line.startswith(prefix)]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    """Run the adversarial league once for the whole module."""
    base = tmp_path_factory.mktemp("adversarial")
    out = base / "out"
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # Control: the port is reachable from the host, outside any sandbox.
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    listener.accept()[0].close()
    listener.setblocking(False)
    for name in HONEST:
        install_bot(base, name, "honest")
    secrets = [base / "bots" / "honest-a" / "honest" / "main.py", TEST_BOTS / "honest" / "main.py",
               base / "bots" / "honest-a.toml", base / "league.toml", ROOT / "pyproject.toml"]
    envs = {
        "net_probe": {"NET_PROBE_PORT": str(port)},
        "snoop": {"LEAGUE_DB_GUESS": str(out / "league.db"),
                  "SNOOP_PATHS": ":".join(map(str, secrets))},
        "writer": {"WRITER_PATHS": ":".join([str(ROOT), str(ROOT / "referee"), str(out),
                                             str(base / "bots" / "honest-a"), str(base)])},
    }
    for name in (*MISBEHAVING, BROKEN):
        install_bot(base, name, name, envs.get(name))
    league_file = write_league(base, GAMES, SEED)
    run_id = f"adv-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    proc = start_referee(league_file, run_id)
    samples: list[int] = []
    try:
        while proc.poll() is None:
            if time.monotonic() - started > 240:
                raise AssertionError("the adversarial league took more than 240 s")
            rss = rss_kb(proc.pid)
            if rss is not None:
                samples.append(rss)
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - started
    stdout = league_file.with_suffix(".stdout").read_text()
    stderr = league_file.with_suffix(".stderr").read_text()
    leftover, waited = wait_for_no_processes(run_id, 5.0)
    accepted = []
    try:
        while True:
            conn, peer = listener.accept()
            accepted.append(f"{peer[0]}:{peer[1]}")
            conn.close()
    except BlockingIOError:
        pass
    listener.close()
    result = League(base, out, run_id, proc.returncode, stdout, stderr, seconds, samples,
                    leftover, waited, port, accepted)
    if (out / "league.db").exists():
        db = sqlite3.connect(out / "league.db")
        try:
            result.scheduled = db.execute("SELECT count(*) FROM schedule").fetchone()[0]
            result.settings = {k: json.loads(v) for k, v in db.execute("SELECT * FROM settings")}
            for idx, *values in db.execute(
                    "SELECT idx, bots, strikes, latencies_us, forfeited FROM games ORDER BY idx"):
                bots, strikes, latencies, forfeited = map(json.loads, values)
                result.games.append({"idx": idx, "bots": bots, "strikes": strikes,
                                     "latencies_us": latencies, "forfeited": forfeited})
            result.records = [json.loads(zlib.decompress(blob)) for (blob,) in
                              db.execute("SELECT record FROM games ORDER BY idx")]
        finally:
            db.close()
    if (out / "table.json").exists():
        table = json.loads((out / "table.json").read_text())["table"]
        result.table = {row["bot"]: row for row in table}
    print(f"\nadversarial league: {seconds:.1f} s, exit {proc.returncode}, referee RSS "
          f"{min(samples, default=0) // 1024}-{max(samples, default=0) // 1024} MB in "
          f"{len(samples)} samples, leftovers gone after {waited:.2f} s\n{stdout}\n{stderr}")
    yield result


# ---------------------------------------------------------------------------- the league


def test_league_completes_and_records_every_scheduled_game(league: League) -> None:
    assert league.returncode == 0, league.stderr
    assert "Traceback" not in league.stderr
    assert league.scheduled == GAMES
    assert len(league.games) == league.scheduled
    assert [g["idx"] for g in league.games] == list(range(GAMES))
    assert f"{GAMES}/{GAMES} games recorded, finished" in league.stdout
    playing = sorted((*HONEST, *MISBEHAVING))
    assert sorted(league.settings["bot_names"]) == playing
    assert sorted(league.table) == playing
    games_per_bot = Counter(bot for g in league.games for bot in g["bots"])
    assert min(games_per_bot[bot] for bot in playing) >= 2, games_per_bot
    assert league.seconds < 150, league.seconds


def test_a_bot_that_dies_in_the_handshake_is_skipped_and_reported(league: League) -> None:
    assert f"skipped bot '{BROKEN}'" in league.stderr
    assert BROKEN not in league.settings["bot_names"]
    assert all(BROKEN not in g["bots"] for g in league.games)


def test_each_misbehaviour_earns_its_strike_type(league: League) -> None:
    for bot, (required, allowed) in STRIKES.items():
        strikes = {kind for kind, count in league.table[bot]["strikes"].items() if count}
        assert strikes & required, (bot, league.table[bot]["strikes"])
        assert strikes <= allowed, (bot, league.table[bot]["strikes"])
        # The games table and the records agree with the league table.
        per_game = Counter()
        for g in league.games:
            for seat, name in enumerate(g["bots"]):
                if name == bot:
                    per_game.update(g["strikes"][seat])
        assert {k: v for k, v in per_game.items() if v} == \
            {k: v for k, v in league.table[bot]["strikes"].items() if v}
    decided = Counter()
    for record, seat in (s for bot in STRIKES for s in league.seats(bot)):
        decided.update(d["strike"] for d in record["decisions"]
                       if d["seat"] == seat and "strike" in d)
    assert sum(decided.values()) == sum(sum(league.table[b]["strikes"].values()) for b in STRIKES)


def test_random_crasher_crashes_where_its_seeded_draw_says(league: League) -> None:
    """Its exits are a function of (game id, seat, decision number): reproducible."""
    crashes = league.output_lines("random_crasher", "CRASH:")
    assert crashes, "random_crasher never crashed: pick another SEED"
    for line in set(crashes):
        match = re.fullmatch(r"CRASH: exiting at decision (\d+) of game (\S+) seat (\d+)", line)
        assert match, line
        n, game_id, seat = int(match[1]), match[2], int(match[3])
        draws = [random.Random(f"{game_id}/{seat}/{k}").random() for k in range(1, n + 1)]
        assert draws[-1] < 0.05 and all(d >= 0.05 for d in draws[:-1]), line


def test_honest_bots_get_no_strikes_and_keep_their_time(league: League) -> None:
    for bot in HONEST:
        row = league.table[bot]
        assert row["games"] >= 2
        assert sum(row["strikes"].values()) == 0, row["strikes"]
        assert row["forfeits"] == 0
        latencies = [us for g in league.games for seat, name in enumerate(g["bots"])
                     if name == bot for us in g["latencies_us"][seat]]
        assert latencies
        assert max(latencies) < DECISION_MS * 1000, max(latencies)


def _seat_rolls(events: list[tuple], seat: int) -> list[dict]:
    return [event_to_dict(e) for e in events if e[0] == "roll" and e[1] == seat]


def test_honest_dice_streams_do_not_depend_on_the_other_seats(league: League) -> None:
    """R50: replay each game with the honest seat's own choices and every other seat playing
    something else (first or last legal action): the honest seat rolls exactly the same dice."""
    checked = 0
    for bot in HONEST:
        for data, seat in league.seats(bot):
            record = GameRecord.from_json(data)
            mine = [(e[2], e[3]) for e in record.events if e[0] == "place" and e[1] == seat]
            recorded = _seat_rolls(record.events, seat)
            assert recorded
            for pick in (0, -1):
                game = Game(record.rules, record.players, record.seed)
                choices = iter(mine)
                while not game.is_over:
                    if game.current_seat == seat:
                        game.apply(next(choices))
                    else:
                        game.apply(game.legal_actions()[pick])
                assert next(choices, None) is None
                assert _seat_rolls(game.events, seat) == recorded
                checked += 1
    assert checked >= 2 * 2 * len(HONEST)


# ---------------------------------------------------------------------------- the sandbox


def _results(lines: list[str], prefix: str) -> list[tuple[str, str]]:
    out = []
    for line in lines:
        match = re.match(rf"{prefix}: (.+?) (denied|READ|WROTE|blocked|OPEN|lists)\b", line)
        assert match, line
        out.append((match[1], match[2]))
    return out


def test_sandbox_hides_other_bots_the_league_files_and_the_host(league: League) -> None:
    lines = league.output_lines("snoop", "SNOOP:")
    assert lines, "snoop never reported"
    results = _results(lines, "SNOOP")
    targets = {path for path, _ in results}
    secrets = [league.out / "league.db", league.base / "bots" / "honest-a" / "honest" / "main.py",
               TEST_BOTS / "honest" / "main.py", league.base / "bots" / "honest-a.toml",
               league.base / "league.toml", ROOT / "pyproject.toml"]
    for path in secrets:
        assert path.read_bytes()           # control: the file exists and the host can read it
        assert str(path) in targets
    for path, verdict in results:
        if path == "/root":
            continue
        assert verdict == "denied", (path, verdict)
    assert {"other bot sockets", "referee process"} <= targets   # also tried
    # /root holds only the mount point of the interpreter the bot runs with, not the host's.
    # (A virtual environment's python is a link to the base interpreter, exposed too.)
    allowed = set()
    for interpreter in (Path(sys.executable), Path(sys.executable).resolve(),
                        Path(sys.base_prefix)):
        if interpreter.is_relative_to("/root"):
            allowed.add(interpreter.relative_to("/root").parts[0])
    for line in lines:
        if line.startswith("SNOOP: /root lists "):
            assert set(line.removeprefix("SNOOP: /root lists ").split()) <= allowed, line


def test_sandbox_has_no_network(league: League) -> None:
    lines = league.output_lines("net_probe", "NET:")
    assert lines, "net_probe never reported"
    verdicts = dict(_results([x for x in lines if "interfaces" not in x], "NET"))
    assert verdicts == {f"127.0.0.1:{league.port}": "blocked", "192.0.2.1:80": "blocked"}
    assert {x for x in lines if "interfaces" in x} == {"NET: interfaces lo"}
    assert league.accepted_after == []   # nothing reached the host's listener


def test_sandbox_is_read_only_except_a_private_tmp(league: League) -> None:
    lines = league.output_lines("writer", "WRITE:")
    assert lines, "writer never reported"
    results = _results(lines, "WRITE")
    wrote = {path for path, verdict in results if verdict == "WROTE"}
    assert wrote and all(re.fullmatch(r"/tmp/writer-probe-[^/]+", p) for p in wrote), wrote
    denied = {path for path, verdict in results if verdict == "denied"}
    writer_dir = league.base / "bots" / "writer"
    for place in (writer_dir / "writer" / "main.py", writer_dir, "/etc", "/usr", "/dev/shm",
                  "/tmp/..", ROOT, ROOT / "referee", league.out, league.base / "bots" / "honest-a"):
        assert any(p == str(place) or p.startswith(f"{place}/") for p in denied), place
    assert len(denied) + len(wrote) == len(set(p for p, _ in results))
    # Nothing landed on the host, and the bot's own code is intact.
    for directory in (ROOT, ROOT / "referee", league.out, league.base, writer_dir,
                      league.base / "bots" / "honest-a"):
        assert not list(directory.glob("writer-probe-*")), directory
    assert (writer_dir / "writer" / "main.py").read_bytes() == \
        (TEST_BOTS / "writer" / "main.py").read_bytes()


def test_memory_limit_stops_a_memory_hog(league: League) -> None:
    lines = league.output_lines("memory_hog", "MEMORY:")
    assert lines, "memory_hog never reported"
    for line in lines:
        match = re.fullmatch(r"MEMORY: MemoryError after (\d+) MB; exiting", line)
        assert match, line
        assert int(match[1]) < MEMORY_MB
    assert league.table["memory_hog"]["strikes"]["crash"] > 0


def test_process_limit_stops_a_fork_bomb(league: League) -> None:
    lines = set(league.output_lines("fork_bomb", "FORK:"))
    assert lines, "fork_bomb never reported"
    for line in lines:
        match = re.match(r"FORK: (\d+) forks succeeded in (\d+) attempts, then BlockingIOError",
                         line)
        assert match, line
        forks, attempts = int(match[1]), int(match[2])
        assert forks < MAX_PROCESSES and attempts == forks + 1 < 2000
    # The bomb is over before the bot listens: it plays like the honest bots.
    assert league.table["fork_bomb"]["games"] >= 2


def test_output_capture_is_capped(league: League) -> None:
    outputs = [record["output"][seat] for record, seat in league.seats("stderr_flood")]
    assert outputs
    for text in outputs:
        header, _, rest = text.partition("\n")
        assert re.fullmatch(r"\[\d+ bytes dropped\]", header), header
        assert len(rest.encode()) <= GAME_LOG_CAP


def test_referee_memory_stays_bounded(league: League) -> None:
    samples = league.rss_kb
    assert len(samples) >= 30, len(samples)
    assert max(samples) < REFEREE_RSS_LIMIT_KB, max(samples)
    third = len(samples) // 3
    first, last = samples[:third], samples[-third:]
    # Not growing without bound: the last third stays near the first third's peak.
    assert max(last) <= max(first) * 1.25 + 32 * 1024, (max(first), max(last))


def test_no_bot_process_outlives_the_league(league: League) -> None:
    assert league.leftover == []
    assert league.leftover_wait < 2.0, league.leftover_wait


def test_bots_die_with_a_killed_referee(tmp_path: Path) -> None:
    """SIGKILL the referee mid-league: every bot (and every child a bot left) ends with it."""
    for name in HONEST:
        install_bot(tmp_path, name, "honest")
    for name in ("hang", "forker", "fork_bomb", "stderr_flood", "writer"):
        install_bot(tmp_path, name, name)
    league_file = write_league(tmp_path, games=200, seed=5)
    run_id = f"adv-kill-{uuid.uuid4().hex[:8]}"
    proc = start_referee(league_file, run_id)
    try:
        deadline = time.monotonic() + 60
        while games_recorded(tmp_path / "out" / "league.db") < 3:
            assert proc.poll() is None, league_file.with_suffix(".stderr").read_text()
            assert time.monotonic() < deadline, "no games recorded within 60 s"
            time.sleep(0.05)
        running = processes_with_run_id(run_id)
        # The referee, then a guard, bwrap and the bot per instance, forker's children.
        assert len(running) >= 1 + 3 * 7, running
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left, waited = wait_for_no_processes(run_id, 6.0)
    assert left == [], left
    assert games_recorded(tmp_path / "out" / "league.db") < 200

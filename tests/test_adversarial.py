"""Untrusted bots against the real referee: one league of misbehaving and hostile bots.

Every bot runs from a directory of its own (a copy of its `tests/bots/` code plus botlib), the
way an organiser lays out handed-in bots, so that a bot's sandbox can only show it its own files.
The league runs through the CLI in a subprocess with a known REFEREE_RUN_ID, bubblewrap on (the
default wherever it works). The tests below read its database, tables and the bots' output stored
in the game records. `docs/security.md` maps each sandbox guarantee to one of these tests.
"""

from __future__ import annotations

import contextlib
import json
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
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import net_support
import pytest
from cli_support import start_referee
from league_support import hide_files
from wait_support import wait_for

from referee.bots import netns
from referee.bots.process import GAME_LOG_CAP
from referee.checking.conformance import processes_with_run_id
from referee.engine import Game, GameRecord
from referee.engine.record import event_to_dict
from referee.league.folder import LeagueFolder
from referee.league.store import games_stored, load_record
from referee.league.tables import NAMES_PER_BOT

pytestmark = pytest.mark.sandbox   # fails in CI if the sandbox cannot start (conftest.py)

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"

# Generous limits for honest work (the machine may be very busy); faults are provoked
# deterministically (a hang never answers, the hog's mapping fails at once, ...).
DECISION_MS = 1000
BANK_MS = 1000
MAX_PROCESSES = 150   # per instance (its own uid): far below what 25 bots' threads add up to
GAMES = 20          # 25 bots at tables of 3-4: every bot plays 2 to 4 games
SEED = 4
# Two honest sample bots (sample_bots/), each in a folder of its own.
HONEST = ("greedy", "random")
OTHER_BOT = "greedy"   # the honest bot whose files the snoops try to read and write
MISBEHAVING = ("hang", "slow", "illegal", "garbage", "crash_mid", "random_crasher", "forker",
               "stderr_flood", "memory_hog", "fork_bomb", "net_probe", "snoop", "writer",
               "escaper", "raiser", "fork_holder", "build_attacker",
               # the stream's faults (docs/security.md, "The stream to a bot")
               "no_reader", "chatter", "flood", "bloat", "strict_pings", "gone",
               # docs/security.md, "Round 3"
               "guesser", "namer", "peeker",
               # a build given the network hunts for the host (docs/security.md, "Builds")
               "net_build")
BROKEN = "exit_in_handshake"
HUNG_BUILD = "build_hang"   # its build scans its loopback and never ends: stopped at 5 s
# Specs that cannot be used: left out with --skip-broken, each with one line naming the key.
BAD_SPECS = {"bad_nul": "key 'command[1]': a string with a NUL character",
             "bad_env_key": "key 'env.LD_PRELOAD=/tmp/evil.so X'",
             "bad_binary": "not a text file",
             "bad_deep": "nested too deeply",
             "escape_workdir": "key 'workdir': expected a folder inside the spec's folder",
             "escape_program": "key 'command': expected a program inside the bot's folder",
             # a plain workdir that is another bot's folder, or holds them all
             "intruder": f"key 'workdir': its folder {{bots}}/{OTHER_BOT} belongs to the bot "
                         f"in {{bots}}/{OTHER_BOT}.toml",
             "nester": "key 'workdir': its folder {bots} holds "}
# The strike types each misbehaving bot must earn (at least one) and may earn (nothing else).
STRIKES = {
    "hang": ({"timeout"}, {"timeout"}),
    "slow": ({"timeout"}, {"timeout"}),
    "illegal": ({"illegal"}, {"illegal"}),
    "garbage": ({"malformed", "protocol"}, {"malformed", "protocol"}),
    "crash_mid": ({"crash"}, {"crash"}),
    "random_crasher": ({"crash"}, {"crash"}),
    "memory_hog": ({"crash"}, {"crash"}),
    "escaper": ({"protocol"}, {"protocol"}),
    "raiser": ({"protocol"}, {"protocol"}),
    "no_reader": ({"timeout"}, {"timeout"}),
    "chatter": ({"protocol"}, {"protocol"}),
    "flood": ({"protocol"}, {"protocol"}),
    "bloat": ({"protocol"}, {"protocol"}),
    "guesser": ({"protocol"}, {"protocol"}),
    # In the sandbox its marker lands in a private /tmp, so it is restarted like crash_mid.
    "gone": ({"crash"}, {"crash"}),
}
# Bots whose misbehaviour is outside the game: they must play without a single strike.
CLEAN = ("forker", "stderr_flood", "fork_bomb", "net_probe", "snoop", "writer", "fork_holder",
         "build_attacker", "strict_pings", "namer", "peeker", "net_build")
SECRET_VARIABLE = "REFEREE_ADVERSARIAL_SECRET"   # in the referee's environment, not the bots'
GRPC_LINE = re.compile(r"^[EWI]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]", re.MULTILINE)

def _spec_limit(bot: str, key: str) -> int:
    return tomllib.loads((TEST_BOTS / f"{bot}.toml").read_text())["limits"][key]


MEMORY_MB = _spec_limit("memory_hog", "memory_mb")
REFEREE_RSS_LIMIT_KB = 400 * 1024


# ---------------------------------------------------------------------------- helpers


def install_bot(base: Path, name: str, source: str, env: dict[str, str] | None = None) -> Path:
    """Copy test bot `source` into base/bots/NAME (its folder and botlib.py, nothing else) and
    write base/bots/NAME.toml from its spec (a spec's workdir must be inside its folder): the
    bot's sandbox shows it only that directory."""
    spec = tomllib.loads((TEST_BOTS / f"{source}.toml").read_text())
    bot_dir = base / "bots" / name
    shutil.copytree(TEST_BOTS / source, bot_dir / source,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(TEST_BOTS / "botlib.py", bot_dir / "botlib.py")
    _open_to_all(bot_dir)
    lines = [f"name = {json.dumps(name)}", f"command = {json.dumps(spec['command'])}",
             f"workdir = {json.dumps(name)}"]
    if "build" in spec:
        lines.append(f"build = {json.dumps(spec['build'])}")
    if spec.get("build_network"):
        lines.append("build_network = true")
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


def install_sample(base: Path, name: str) -> Path:
    """A sample bot (sample_bots/NAME) in base/bots/NAME, its spec beside it."""
    shutil.copytree(ROOT / "sample_bots" / name, base / "bots" / name,
                    ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    _open_to_all(base / "bots" / name)
    path = base / "bots" / f"{name}.toml"
    shutil.copy(ROOT / "sample_bots" / f"{name}.toml", path)
    return path


def install_bad_specs(base: Path) -> None:
    """The bad test specs beside the bots, and the two path escapers made to aim at this
    league: a workdir symlink to the league's output folder, a program symlink to /bin/sh."""
    for name in BAD_SPECS:
        if name.startswith("bad_"):
            shutil.copy(TEST_BOTS / f"{name}.toml", base / "bots" / f"{name}.toml")
    escape = base / "bots" / "escape_workdir"
    escape.mkdir()
    (escape / "data").symlink_to(base / "out")
    (base / "bots" / "escape_workdir.toml").write_text(
        'name = "escape_workdir"\ncommand = ["{python}", "main.py"]\n'
        'workdir = "escape_workdir/data"\n')
    (base / "bots" / "intruder.toml").write_text((TEST_BOTS / "intruder.toml").read_text()
                                                 .replace('"honest"', json.dumps(OTHER_BOT)))
    (base / "bots" / "nester.toml").write_text(
        f'name = "nester"\ncommand = ["{{python}}", "{OTHER_BOT}/main.py"]\nworkdir = "."\n')
    program = base / "bots" / "escape_program"
    program.mkdir()
    (program / "run").symlink_to("/bin/sh")
    (base / "bots" / "escape_program.toml").write_text(
        'name = "escape_program"\ncommand = ["./run", "-c", "cat /etc/shadow"]\n'
        'workdir = "escape_program"\n')


def _open_to_all(folder: Path) -> None:
    """World-readable like an organiser's checkout: bots run as uids of their own."""
    for path in (folder.parent, folder, *folder.rglob("*")):
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def write_league(base: Path, games: int, seed: int, concurrency: int = 4) -> Path:
    path = base / "league.toml"
    path.write_text(
        f'bots = ["bots/*.toml"]\ngames = {games}\nplayers = "3-4"\nseed = {seed}\n'
        f'concurrency = {concurrency}\nout = "out"\nskip_broken = true\n'
        f"[limits]\ndecision_ms = {DECISION_MS}\ngame_bank_ms = {BANK_MS}\n"
        f"max_processes = {MAX_PROCESSES}\n"
        "startup_ms = 60000\n"   # generous: 25 bots start at once, the fork bombs fork first
    )
    return path


def _owners(folder: Path) -> dict[str, tuple[int, int]]:
    """(uid, gid) of every path below `folder`: a build lends its folder and gives it back."""
    found = {}
    for path in (folder, *folder.rglob("*")):
        st = path.lstat()
        found[str(path)] = (st.st_uid, st.st_gid)
    return found


def start_league(league: Path, run_id: str) -> subprocess.Popen[str]:
    """`referee league LEAGUE -q` in a subprocess; its stdout and stderr go to files next to
    the league file (league.stdout, league.stderr), so that nothing can block on a pipe. Its
    temporary folder (TMPDIR) and build cache are private, beside the league file, so that
    anything left there is seen; a secret in its environment must reach no bot or build."""
    tmp = league.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {"TMPDIR": str(tmp), "XDG_CACHE_HOME": str(league.parent / "cache"),
           SECRET_VARIABLE: "hunter2"}
    with open(league.with_suffix(".stdout"), "wb") as out, \
            open(league.with_suffix(".stderr"), "wb") as err:
        return start_referee("league", league, "-q", run_id=run_id, env=env, cwd=ROOT,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=err)


def wait_for_no_processes(run_id: str, seconds: float) -> tuple[list[int], float]:
    """Wait until no run-id process is left or `seconds` pass: (the survivors, time waited)."""
    start = time.monotonic()
    with contextlib.suppress(AssertionError):   # the caller says what is left
        wait_for(f"the processes of run {run_id} to end",
                 lambda: not processes_with_run_id(run_id), timeout=seconds, every=0.05)
    return processes_with_run_id(run_id), time.monotonic() - start


def rss_kb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match.group(1)) if match else None


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
    tmp_left: list[str] = field(default_factory=list)
    # net_build's targets on the host: connections each saw, and the dask scheduler's clients
    host_accepted: list[str] = field(default_factory=list)
    scheduler_clients: list[str] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)   # code net_build got a cluster to run
    owners_before: dict[str, tuple[int, int]] = field(default_factory=dict)
    owners_after: dict[str, tuple[int, int]] = field(default_factory=dict)
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
    # Where a build given the network might go on the host: its other address and a dask
    # scheduler on loopback (net_build).
    own = [str(a.ip) for a in netns.host_addresses() if not a.ip.is_loopback]
    host_listener = socket.create_server((own[0] if own else "127.0.0.2", 0))
    host_target = "{}:{}".format(*host_listener.getsockname())
    marks = base / "marks"
    marks.mkdir()
    scheduler = net_support.dask_scheduler(base)
    scheduler_address = scheduler.__enter__()
    for name in HONEST:
        install_sample(base, name)
    other = base / "bots" / OTHER_BOT
    secrets = [other / "main.py", TEST_BOTS / "honest" / "main.py",
               base / "bots" / f"{OTHER_BOT}.toml", base / "league.toml", ROOT / "pyproject.toml"]
    envs = {
        "net_probe": {"NET_PROBE_PORT": str(port)},
        "snoop": {"LEAGUE_DB_GUESS": str(LeagueFolder(out).store_path),
                  "SNOOP_PATHS": ":".join(map(str, secrets))},
        "writer": {"WRITER_PATHS": ":".join([str(ROOT), str(ROOT / "referee"), str(out),
                                             str(other), str(base)])},
        "build_attacker": {"BUILD_READ_PATHS": ":".join(map(str, secrets)),
                           "BUILD_WRITE_PATHS": ":".join(map(str, [base, base / "bots", other,
                                                                   ROOT, "/etc"])),
                           "BUILD_SECRET_NAMES": SECRET_VARIABLE,
                           "BUILD_PROBE_PORT": str(port)},
        "net_build": {"NET_BUILD_TARGETS": ",".join([f"127.0.0.1:{port}", host_target,
                                                     scheduler_address.removeprefix("tcp://")]),
                      "NET_BUILD_SCHEDULERS": scheduler_address, "NET_BUILD_MARK": str(marks)},
    }
    envs["peeker"] = {"PEEK_PATHS": "secret.txt:linked.txt:closed/inner.txt"}
    for name in (*MISBEHAVING, BROKEN, HUNG_BUILD):
        install_bot(base, name, name, envs.get(name))
    hide_files(base, base / "bots" / "peeker")
    install_bad_specs(base)
    owners = _owners(base / "bots")
    league_file = write_league(base, GAMES, SEED)
    run_id = f"adv-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    proc = start_league(league_file, run_id)
    samples: list[int] = []
    rss_at_first_game = None   # the referee's memory once every bot has started
    try:
        while proc.poll() is None:
            if rss_at_first_game is None and samples and len(samples) % 5 == 0 and \
                    games_stored(LeagueFolder(out).store_path) > 0:
                rss_at_first_game = samples[-1]
            if time.monotonic() - started > 900:   # a bound for a hung league, not a timing
                raise AssertionError("the adversarial league took more than 900 s")
            rss = rss_kb(proc.pid)
            if rss:   # 0 while the interpreter is still being exec'd
                samples.append(rss)
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - started
    stdout = league_file.with_suffix(".stdout").read_text()
    stderr = league_file.with_suffix(".stderr").read_text()
    leftover, waited = wait_for_no_processes(run_id, 15.0)
    accepted = net_support.accepted(listener)
    listener.close()
    result = League(base, out, run_id, proc.returncode, stdout, stderr, seconds, samples,
                    leftover, waited, port, accepted)
    result.host_accepted = net_support.accepted(host_listener)
    host_listener.close()
    result.scheduler_clients = net_support.scheduler_clients(scheduler_address)
    scheduler.__exit__(None, None, None)
    result.marks = sorted(p.name for p in marks.iterdir())
    result.tmp_left = sorted(p.name for p in (base / "tmp").iterdir())
    result.owners_before, result.owners_after = owners, _owners(base / "bots")
    if LeagueFolder(out).store_path.exists():
        db = sqlite3.connect(LeagueFolder(out).store_path)
        try:
            result.scheduled = db.execute("SELECT count(*) FROM schedule").fetchone()[0]
            result.settings = {k: json.loads(v) for k, v in db.execute("SELECT * FROM settings")}
            for idx, *values in db.execute(
                    "SELECT idx, bots, strikes, latencies_us, forfeited FROM games ORDER BY idx"):
                bots, strikes, latencies, forfeited = map(json.loads, values)
                result.games.append({"idx": idx, "bots": bots, "strikes": strikes,
                                     "latencies_us": latencies, "forfeited": forfeited})
            result.records = [load_record(blob) for (blob,) in
                              db.execute("SELECT record FROM games ORDER BY idx")]
        finally:
            db.close()
    if LeagueFolder(out).table_json.exists():
        table = json.loads(LeagueFolder(out).table_json.read_text())["table"]
        result.table = {row["bot"]: row for row in table}
    strikes = Counter()
    for row in result.table.values():
        strikes.update({kind: n for kind, n in row["strikes"].items() if n})
    figures = {"games": len(result.games), "scheduled": result.scheduled,
               "bots": len(result.table), "strikes": dict(sorted(strikes.items())),
               "rss_mb_first_game": (rss_at_first_game or 0) // 1024,
               "rss_mb_end": samples[-1] // 1024 if samples else None,
               "rss_mb_max": max(samples, default=0) // 1024, "seconds": round(seconds, 1),
               "leftovers_gone_after_s": round(waited, 2)}
    (base / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(f"\nadversarial league: {json.dumps(figures)}, exit {proc.returncode}, "
          f"{len(samples)} RSS samples, leftovers gone after {waited:.2f} s\n{stdout}\n{stderr}")
    yield result


# ---------------------------------------------------------------------------- the league


def test_league_completes_and_records_every_scheduled_game(league: League) -> None:
    assert league.returncode == 0, league.stderr
    assert "Traceback" not in league.stderr
    assert league.scheduled == GAMES
    assert len(league.games) == league.scheduled
    assert [g["idx"] for g in league.games] == list(range(GAMES))
    # A table of misbehaving bots may all forfeit: recorded, counted apart, still finished.
    assert re.search(rf"^{GAMES}/{GAMES} games recorded( \(\d+ where every seat forfeited: no "
                     r"result\))?, finished", league.stdout, re.MULTILINE), league.stdout
    playing = sorted((*HONEST, *MISBEHAVING))
    assert sorted(league.settings["bot_names"]) == playing
    assert sorted(league.table) == playing
    games_per_bot = Counter(bot for g in league.games for bot in g["bots"])
    assert min(games_per_bot[bot] for bot in playing) >= 2, games_per_bot
    # Quiet transport: no gRPC log line reached the organiser's terminal.
    assert not GRPC_LINE.search(league.stderr), league.stderr


def test_bad_specs_are_left_out_with_one_line_each(league: League) -> None:
    for name, reason in BAD_SPECS.items():
        lines = [line for line in league.stderr.splitlines()
                 if line.startswith(f"skipped bot '{name}': ")]
        assert len(lines) == 1, (name, league.stderr)
        bots = league.base / "bots"
        assert str(bots / f"{name}.toml") in lines[0], lines[0]
        assert reason.format(bots=bots) in lines[0], lines[0]
        assert name not in league.settings["bot_names"]


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
    for bot in CLEAN:
        assert sum(league.table[bot]["strikes"].values()) == 0, (bot, league.table[bot])


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


def test_guessed_request_ids_are_protocol_strikes(league: League) -> None:
    """Issue 22, item 3: guesser sends, after each answer, a decision for the id consecutive
    ids would give its next turn. No guessed id is ever asked, each of its strikes names one
    of its guesses, and no move it was credited with was read before its request (0 us)."""
    asked = {int(line.split()[1]) for line in league.output_lines("guesser", "asked ")}
    guessed = {int(line.split()[1]) for line in league.output_lines("guesser", "guessed ")}
    assert asked and guessed and not asked & guessed
    strikes = 0
    for record, seat in league.seats("guesser"):
        for decision in record["decisions"]:
            if decision["seat"] != seat or "auto" in decision:
                continue
            if "strike" not in decision:
                assert decision["latency_us"] > 0, decision
                continue
            strikes += 1
            assert decision["strike"] == "protocol", decision
            assert int(decision["detail"].split()[4].rstrip(",")) in guessed, decision
    assert strikes >= 2


def test_a_bot_cannot_read_files_hidden_in_its_own_folder(league: League) -> None:
    """Issue 22, item 2 at home: peeker is denied its folder's root-only file, the hard link to
    the organiser's root-only file and the file in a closed folder, and plays without a strike
    (test_cluster.py shows the same on a worker)."""
    peeks = league.output_lines("peeker", "PEEK: ")
    assert {line.split(":")[1].strip() for line in peeks} == {
        "secret.txt", "linked.txt", "closed/inner.txt"}, peeks
    assert all(line.endswith("denied (PermissionError)") for line in peeks), peeks


def test_a_bot_s_value_names_stay_bounded(league: League) -> None:
    """Issue 22, item 4: namer sends 16 new value names with every decision; the tables keep
    its first NAMES_PER_BOT and say in one line how many more were dropped."""
    row = league.table["namer"]
    assert len(row["note_values"]) == NAMES_PER_BOT and row["note_names_dropped"] > 0
    line = f"namer: {row['note_names_dropped']} more value names dropped; a league keeps"
    assert LeagueFolder(league.out).table_md.read_text().count(line) == 1
    assert len(json.dumps(row)) < 4_000   # its row of table.json, names and all


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
    secrets = [LeagueFolder(league.out).store_path, league.base / "bots" / OTHER_BOT / "main.py",
               TEST_BOTS / "honest" / "main.py", league.base / "bots" / f"{OTHER_BOT}.toml",
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
                  "/tmp/..", ROOT, ROOT / "referee", league.out, league.base / "bots" / OTHER_BOT):
        assert any(p == str(place) or p.startswith(f"{place}/") for p in denied), place
    assert len(denied) + len(wrote) == len(set(p for p, _ in results))
    # Nothing landed on the host, and the bot's own code is intact.
    for directory in (ROOT, ROOT / "referee", league.out, league.base, writer_dir,
                      league.base / "bots" / OTHER_BOT):
        assert not list(directory.glob("writer-probe-*")), directory
    assert (writer_dir / "writer" / "main.py").read_bytes() == \
        (TEST_BOTS / "writer" / "main.py").read_bytes()


def test_memory_limit_stops_a_memory_hog(league: League) -> None:
    lines = league.output_lines("memory_hog", "MEMORY:")
    assert lines, "memory_hog never reported"
    for line in lines:
        match = re.fullmatch(r"MEMORY: (?:MemoryError|OSError) after (\d+) MB more; exiting",
                             line)
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


def test_a_bot_that_keeps_its_process_budget_spent_does_not_stop_the_others(
        league: League) -> None:
    """fork_holder spends its whole max_processes and keeps it spent while it plays; with every
    bot under one uid the others could not have started their threads (25 bots' threads add up
    to far more than MAX_PROCESSES). Each instance has a uid of its own: everyone plays."""
    lines = set(league.output_lines("fork_holder", "HOLD:"))
    assert lines, "fork_holder never reported"
    # The league's limit is a ceiling on the bot's own (120 in its spec): it gets the smaller.
    own = tomllib.loads((TEST_BOTS / "fork_holder.toml").read_text())["limits"]["max_processes"]
    budget = min(own, MAX_PROCESSES)
    for line in lines:
        match = re.fullmatch(r"HOLD: holding (\d+) children after BlockingIOError: .+", line)
        assert match, line
        assert budget - 60 <= int(match[1]) < budget
    assert league.table["fork_holder"]["games"] >= 2
    for bot in HONEST:
        assert sum(league.table[bot]["strikes"].values()) == 0


def test_a_build_runs_in_the_sandbox(league: League) -> None:
    """build_attacker's build step read, wrote and reached nothing outside its own folder, did
    not run as root and did not see the referee's environment; it wrote only its own folder."""
    report = league.output_lines("build_attacker", "BUILD:")
    assert report, "build_attacker never printed its build's report"
    report = list(dict.fromkeys(report))          # the same report, once per game
    assert report[0].endswith(" not-root"), report[0]
    verdicts = {" ".join(line.split()[1:3]): line.split()[3] for line in report
                if line.split()[1] in ("read", "write", "connect")}
    probed = [key for key in verdicts if key.startswith(("read ", "write "))]
    assert len(probed) >= 10, verdicts
    for key in probed:
        assert verdicts[key] == "denied", (key, verdicts[key])
    assert verdicts[f"connect 127.0.0.1:{league.port}"] == "blocked"
    assert f"BUILD: env {SECRET_VARIABLE} absent" in report
    assert "BUILD: own folder WROTE" in report
    for folder in (league.base, league.base / "bots", league.base / "bots" / OTHER_BOT, ROOT):
        assert not list(folder.glob("build-attack-*")), folder


def test_a_network_build_reaches_nothing_on_the_host(league: League) -> None:
    """net_build's build (build_network = true) tried the host's loopback, the host's other
    address, a dask scheduler on loopback (connecting and driving it) and slirp4netns's gateway
    and resolver addresses: all blocked; no listener saw a connection, the scheduler saw no
    client and ran none of its code; the bot then played without a strike."""
    report = list(dict.fromkeys(league.output_lines("net_build", "NETBUILD:")))
    assert report, "net_build never printed its build's report"
    verdicts = {line.split()[2]: line.split()[3] for line in report}
    assert len(verdicts) == 3 * 3 + 1, report
    assert set(verdicts.values()) == {"blocked"}, report
    assert league.accepted_after == [] and league.host_accepted == []
    assert league.scheduler_clients == [] and league.marks == []
    assert sum(league.table["net_build"]["strikes"].values()) == 0


def test_a_build_that_hangs_is_stopped_at_its_time_limit_and_left_out(league: League) -> None:
    """build_hang's build never ends (and leaves a child that ignores SIGTERM): it is stopped
    at its limits.build_seconds, the bot is left out with one line, and the league plays."""
    lines = [line for line in league.stderr.splitlines()
             if line.startswith(f"skipped bot '{HUNG_BUILD}': ")]
    assert len(lines) == 1, league.stderr
    assert "build timed out after 5 s" in lines[0], lines[0]
    assert HUNG_BUILD not in league.settings["bot_names"]
    assert all(HUNG_BUILD not in g["bots"] for g in league.games)


def test_bot_text_cannot_drive_a_terminal(league: League) -> None:
    """escaper's name, stderr and gRPC status details hold escape sequences: nowhere the referee
    prints or writes them do they arrive raw; they are shown escaped (`\\x1b`)."""
    raw = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    outputs = [record["output"][seat] for record, seat in league.seats("escaper")]
    assert any("ESCAPE: decision" in text and "\\x1b[2J" in text for text in outputs)
    details = [d.get("detail", "") for record, seat in league.seats("escaper")
               for d in record["decisions"] if d["seat"] == seat and "strike" in d]
    assert details and any("\\x1b]0;pwned\\x07" in d for d in details), details[:3]
    for record in league.records:        # every string anywhere in every record
        todo: list = [record]
        while todo:
            item = todo.pop()
            if isinstance(item, dict):
                todo += [*item.keys(), *item.values()]
            elif isinstance(item, list):
                todo += item
            elif isinstance(item, str):
                assert not raw.search(item.replace("\n", "").replace("\t", "")), item[:200]
    for text in (league.stdout, league.stderr,
                 *(p.read_text() for p in league.out.iterdir() if p.suffix in
                   (".md", ".csv", ".json", ".txt"))):
        assert not raw.search(text.replace("\n", "").replace("\t", ""))


def test_no_temporary_folder_left_and_the_bots_folders_are_as_they_were(
        league: League) -> None:
    assert league.tmp_left == []
    changed = {path for path, owner in league.owners_before.items()
               if league.owners_after.get(path) != owner}
    assert changed == set(), sorted(changed)[:5]
    created = set(league.owners_after) - set(league.owners_before)
    # The builds' own output, owned like the folder it is in; nothing else appeared.
    names = {Path(p).name for p in created}
    assert {"build_report.txt", "net_build_report.txt"} <= names, sorted(created)
    assert names <= {"build_report.txt", "net_build_report.txt", "build_hang_report.txt"}, \
        sorted(created)
    for path in created:
        assert league.owners_after[path] == league.owners_before[str(Path(path).parent)]


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


def test_bots_die_with_a_killed_referee(tmp_path: Path) -> None:
    """SIGKILL the referee mid-league: every bot (and every child a bot left) ends with it."""
    for name in HONEST:
        install_bot(tmp_path, name, "honest")
    for name in ("hang", "forker", "fork_bomb", "stderr_flood", "writer"):
        install_bot(tmp_path, name, name)
    league_file = write_league(tmp_path, games=200, seed=5)
    run_id = f"adv-kill-{uuid.uuid4().hex[:8]}"
    proc = start_league(league_file, run_id)
    try:
        def three_stored() -> bool:
            assert proc.poll() is None, league_file.with_suffix(".stderr").read_text()
            return games_stored(LeagueFolder(tmp_path / "out").store_path) >= 3

        wait_for("three recorded games", three_stored, timeout=120)
        running = processes_with_run_id(run_id)
        # The referee, then a guard, bwrap and the bot per instance, forker's children.
        assert len(running) >= 1 + 3 * 7, running
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left, waited = wait_for_no_processes(run_id, 15.0)
    assert left == [], left
    assert games_stored(LeagueFolder(tmp_path / "out").store_path) < 200

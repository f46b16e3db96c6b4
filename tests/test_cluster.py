"""Leagues on a real dask cluster: a `dask scheduler` and `dask worker` processes on localhost,
real bot processes on the workers, the real CLI as the coordinator."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_support import referee, start_referee
from league_support import hide_files, install_test_bot
from net_support import dies_with_pytest
from wait_support import wait_for

from referee.checking.conformance import processes_with_run_id
from referee.league.folder import LeagueFolder
from referee.league.store import games_stored, load_record

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
DASK = str(Path(sys.executable).parent / "dask")


def canonical(out: Path) -> dict:
    """A league's results without what depends on timing (think times) or on where games ran:
    the tables as written, and every stored game's facts."""
    table = json.loads(LeagueFolder(out).table_json.read_text())
    table.pop("workers", None)
    table.get("extra", {}).pop("started", None)
    for row in table["table"]:
        for key in [key for key in row if key.endswith("_ms")]:
            row.pop(key)
    db = sqlite3.connect(LeagueFolder(out).store_path)
    games = db.execute("SELECT idx, bots, seed, places, money, forfeited, strikes FROM games "
                       "ORDER BY idx").fetchall()
    db.close()
    return {"table": table, "games": games}


def stored(out: Path) -> int:
    """Games in the league's store so far (0 before it exists)."""
    return games_stored(LeagueFolder(out).store_path)


def workers_of(out: Path) -> list[str]:
    """The worker named in each stored record, in schedule order."""
    db = sqlite3.connect(LeagueFolder(out).store_path)
    blobs = db.execute("SELECT record FROM games ORDER BY idx").fetchall()
    db.close()
    return [load_record(blob)["worker"] for (blob,) in blobs]


@dataclass
class Cluster:
    """A scheduler and its workers, each a process of its own."""

    root: Path
    scheduler: subprocess.Popen | None = None
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    run_ids: dict[str, str] = field(default_factory=dict)
    # each worker's own processes once it registered (its guard and the dask worker), no bot's
    own_pids: dict[str, set[int]] = field(default_factory=dict)

    @property
    def file(self) -> Path:
        return self.root / "scheduler.json"

    @property
    def address(self) -> str:
        return json.loads(self.file.read_text())["address"]

    def start(self, workers: list[str]) -> Cluster:
        log = open(self.root / "scheduler.log", "w")  # noqa: SIM115
        self.scheduler = dies_with_pytest(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(self.file)], stdout=log, stderr=subprocess.STDOUT,
            cwd=self.root)
        wait_for("the scheduler", self.file.exists, timeout=120)
        for name in workers:
            self.add_worker(name)
        return self

    def add_worker(self, name: str, **env_extra: str) -> None:
        run_id = self.run_ids[name] = uuid.uuid4().hex[:12]
        env = {**os.environ, "REFEREE_RUN_ID": run_id, **env_extra}
        log = open(self.root / f"{name}.log", "w")  # noqa: SIM115
        self.workers[name] = dies_with_pytest(
            [DASK, "worker", "--scheduler-file", str(self.file), "--name", name,
             "--nthreads", "2", "--resources", "games=2", "--no-nanny", "--no-dashboard",
             "--host", "127.0.0.1", "--local-directory", str(self.root / name)],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root)
        log_text = (self.root / f"{name}.log").read_text
        wait_for(f"worker {name}", lambda: f"'{name}'" in log_text()
                 or "Registered to" in log_text(), timeout=300)
        self.own_pids[name] = set(processes_with_run_id(run_id))

    def kill_worker(self, name: str) -> None:
        self.workers[name].send_signal(signal.SIGKILL)
        self.workers[name].wait()

    def stop(self) -> None:
        for process in [*self.workers.values(), self.scheduler]:
            if process is not None and process.poll() is None:
                process.terminate()
        for process in [*self.workers.values(), self.scheduler]:
            if process is not None:
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("cluster")).start(["w1", "w2"])
    try:
        yield running
    finally:
        running.stop()


def honest_bots(directory: Path, names: str = "abcd") -> list[Path]:
    """Specs of honest test bots, each with a copy of its files in a folder of its own
    (directory/honest-N/ beside honest-N.toml: a league refuses specs that share a folder)."""
    return [install_test_bot(directory, f"honest-{n}", "honest") for n in names]


def sample_bots() -> list[Path]:
    names = ["random", "greedy"] + (["greedy-js"] if shutil.which("npm") else [])
    return [ROOT / "sample_bots" / f"{name}.toml" for name in names]


def test_sample_league_on_the_cluster_matches_the_local_league(tmp_path: Path,
                                                                 cluster: Cluster) -> None:
    args = [*sample_bots(), "--games", "12", "--seed", "3", "--quiet"]
    referee("league", *args, "--out", tmp_path / "local")
    done = referee("league", *args, "--out", tmp_path / "cluster", "--cluster", cluster.address)
    assert "12/12 games recorded, finished" in done.stdout
    assert canonical(tmp_path / "cluster") == canonical(tmp_path / "local")
    assert set(workers_of(tmp_path / "cluster")) <= {"w1", "w2"}
    health = json.loads(LeagueFolder(tmp_path / "cluster").table_json.read_text())["workers"]
    assert sum(row["games"] for row in health) == 12
    assert {row["worker"] for row in health} <= {"w1", "w2"}
    report = (LeagueFolder(tmp_path / "cluster").report / "index.html").read_text()
    assert 'id="workers"' in report and "p50 vs all" in report
    # The league's end stops its bots on the workers, which stay up for the next league.
    for name, worker in cluster.workers.items():
        assert worker.pid in cluster.own_pids[name] and len(cluster.own_pids[name]) == 2
        wait_for(f"{name}'s bots to stop",
                 lambda: set(processes_with_run_id(cluster.run_ids[name]))  # noqa: B023
                 == cluster.own_pids[name], timeout=30)  # noqa: B023


def test_a_killed_worker_loses_no_game_and_doubles_none(tmp_path: Path) -> None:
    own = Cluster(tmp_path / "cluster")
    own.root.mkdir()
    own.start(["a1", "a2"])
    try:
        bots = honest_bots(tmp_path)
        args = [*bots, "--games", "40", "--seed", "11", "--quiet"]
        out = tmp_path / "cluster-out"
        league = start_referee("league", *args, "--out", out, "--cluster", own.address,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for("four stored games", lambda: stored(out) >= 4, timeout=300)
        own.kill_worker("a1")
        at_kill = stored(out)
        assert at_kill < 40, "the league ended before the worker was killed"
        # The killed worker's bots die with it (their guards get SIGTERM from the kernel).
        wait_for("a1's bots to end", lambda: not processes_with_run_id(own.run_ids["a1"]),
                 timeout=30)
        stdout, stderr = league.communicate(timeout=400)
        assert league.returncode == 0, stderr
        assert "40/40 games recorded, finished" in stdout
        db = sqlite3.connect(LeagueFolder(out).store_path)
        indexes = [idx for (idx,) in db.execute("SELECT idx FROM games ORDER BY idx")]
        db.close()
        assert indexes == list(range(40))   # none lost, none twice
        workers = workers_of(out)
        assert workers[-1] == "a2" and set(workers) <= {"a1", "a2"}
        referee("league", *args, "--out", tmp_path / "local")
        assert canonical(out) == canonical(tmp_path / "local")
    finally:
        own.stop()


def test_resume_refuses_a_changed_bot_on_the_workers_then_finishes(tmp_path: Path,
                                                                    cluster: Cluster) -> None:
    bots = honest_bots(tmp_path, "abc")
    args = [*bots, "--games", "30", "--seed", "7", "--quiet"]
    out = tmp_path / "cluster-out"
    coordinator = start_referee("league", *args, "--out", out, "--cluster", cluster.address,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for("three stored games", lambda: stored(out) >= 3, timeout=300)
    coordinator.send_signal(signal.SIGKILL)
    coordinator.wait()
    recorded = stored(out)
    assert 3 <= recorded < 30

    main = tmp_path / "honest-a" / "honest" / "main.py"
    original = main.read_text()
    main.write_text(original + "# changed after the league began\n")
    refused = referee("league", "--resume", "--out", out, "--quiet", "--cluster",
                      cluster.address, check=False)
    assert refused.returncode != 0
    assert "Traceback" not in refused.stderr
    assert "changed since the league began" in refused.stderr
    assert "w1" in refused.stderr and "w2" in refused.stderr
    assert stored(out) == recorded

    main.write_text(original)
    resumed = referee("league", "--resume", "--out", out, "--quiet", "--cluster",
                      cluster.address)
    assert "30/30 games recorded, finished" in resumed.stdout
    referee("league", *args, "--out", tmp_path / "local")
    assert canonical(out) == canonical(tmp_path / "local")


PICKY_BOT = """import os, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
if os.environ.get("REFEREE_TEST_REFUSE"):
    sys.exit("picky: this machine will not do")
import botlib
botlib.run("honest")
"""


def test_a_bot_that_cannot_start_on_one_worker_plays_on_the_others(tmp_path: Path) -> None:
    own = Cluster(tmp_path / "cluster")
    own.root.mkdir()
    own.start(["good"])
    own.add_worker("bad", REFEREE_TEST_REFUSE="1")   # unconfined bots see the worker's env
    try:
        bots = honest_bots(tmp_path, "ab")
        picky = install_test_bot(tmp_path, "picky", "honest")
        (tmp_path / "picky" / "honest" / "main.py").write_text(PICKY_BOT)
        out = tmp_path / "out"
        done = referee("league", *bots, picky, "--games", "9", "--players", "2", "--quiet",
                       "--no-sandbox", "--out", out, "--cluster", own.address)
        assert "9/9 games recorded, finished" in done.stdout
        assert "bot 'picky' cannot start on worker bad" in done.stderr
        assert "picky: this machine will not do" in done.stderr
        db = sqlite3.connect(LeagueFolder(out).store_path)
        seats = [json.loads(bots) for (bots,) in db.execute("SELECT bots FROM games ORDER BY idx")]
        db.close()
        workers = workers_of(out)
        assert any("picky" in table for table in seats)
        assert all(worker == "good" for table, worker in zip(seats, workers, strict=True)
                   if "picky" in table)
    finally:
        own.stop()


def test_a_build_that_hangs_on_the_workers_is_left_out_and_the_league_plays(
        tmp_path: Path) -> None:
    """build_hang (a port scan, then a build that never ends; `build_seconds = 5`) on the two
    workers of `local:2`, which share one build cache: each worker gives up at the limit (the
    second one does not wait for the first and then build again), the bot is left out with the
    reason, and the league plays its games."""
    folder = tmp_path / "bots" / "build_hang"
    shutil.copytree(TEST_BOTS / "build_hang", folder / "build_hang")
    shutil.copy(TEST_BOTS / "botlib.py", folder)
    for path in (tmp_path, tmp_path / "bots", folder, folder / "build_hang"):
        path.chmod(0o755)
    spec = tmp_path / "bots" / "build_hang.toml"
    spec.write_text((TEST_BOTS / "build_hang.toml").read_text().replace(
        'workdir = "."', 'workdir = "build_hang"'))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = referee(
        "league", *sample_bots()[:2], spec,
        "--games", "6", "--seed", "5", "--quiet", "--skip-broken", "--out",
        tmp_path / "out", "--cluster", "local:2", env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6/6 games recorded, finished" in done.stdout
    skipped = [line for line in done.stderr.splitlines()
               if line.startswith("skipped bot 'build_hang': ")]
    assert len(skipped) == 1, done.stderr
    assert skipped[0].count("build timed out after 5 s") == 2, skipped[0]
    assert "Traceback" not in done.stderr


@pytest.mark.sandbox
def test_a_file_the_bot_cannot_read_at_home_stays_unreadable_on_a_worker(
        tmp_path: Path, cluster: Cluster) -> None:
    """Issue 22, item 2: peeker's folder holds a root-only file (0600), a hard link to the
    organiser's root-only file and a file in a folder others cannot enter (0700). Packs used to
    carry such files as 0644: the bot read them on a worker. Now each keeps its mode (sent
    empty): the sandboxed bot is denied all three locally and on the workers, plays without a
    strike, and the league gives the same tables and games in both places."""
    bots = honest_bots(tmp_path, "ab")
    peeker = install_test_bot(tmp_path, "peeker",
                              env={"PEEK_PATHS": "secret.txt:linked.txt:closed/inner.txt"})
    hide_files(tmp_path, tmp_path / "peeker")
    args = [*bots, peeker, "--games", "6", "--players", "3", "--seed", "5", "--quiet"]
    referee("league", *args, "--out", tmp_path / "local")
    referee("league", *args, "--out", tmp_path / "cluster", "--cluster", cluster.address)
    assert canonical(tmp_path / "cluster") == canonical(tmp_path / "local")
    for out in ("local", "cluster"):
        table = json.loads(LeagueFolder(tmp_path / out).table_json.read_text())["table"]
        row = next(r for r in table if r["bot"] == "peeker")
        assert sum(row["strikes"].values()) == 0, (out, row["strikes"])
        db = sqlite3.connect(LeagueFolder(tmp_path / out).store_path)
        records = [load_record(blob)
                   for (blob,) in db.execute("SELECT record FROM games")]
        db.close()
        peeks = [line for record in records for bot, output in
                 zip(record["bots"], record["output"], strict=True) if bot["name"] == "peeker"
                 for line in output.splitlines() if line.startswith("PEEK: ")]
        # (a record's output is its process's while the game ran: other games' lines too)
        assert {line.split(":")[1].strip() for line in peeks} == {
            "secret.txt", "linked.txt", "closed/inner.txt"}, (out, peeks)
        assert all(line.endswith("denied (PermissionError)") for line in peeks), (out, peeks)
    assert set(workers_of(tmp_path / "cluster")) <= {"w1", "w2"}


PYTHON = sys.executable   # the referee's interpreter: in the sandbox's runtime on every worker


def _bot_folder(base: Path, name: str, files: dict[str, str]) -> Path:
    """base/NAME holding `files` (a `run...` file executable) and botlib.py, open to the
    sandboxed bot's uid, as a league wants a bot's folder laid out."""
    folder = base / name
    folder.mkdir(parents=True)
    shutil.copy(TEST_BOTS / "botlib.py", folder / "botlib.py")
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    for path in (folder, *folder.rglob("*")):
        runs = path.is_dir() or path.name.startswith("run")
        path.chmod(0o755 if runs else 0o644)
    return folder


# An honest bot whose program is a script of its own folder, as a compiled `./main` would be.
RUN_HONEST = f'#!/bin/sh\nexec {PYTHON} play.py "$@"\n'   # run in the bot's folder
PLAY_HONEST = """import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import botlib
botlib.run("honest")
"""


@pytest.mark.sandbox
def test_a_bot_whose_program_is_in_its_folder_runs_on_a_worker(tmp_path: Path,
                                                              cluster: Cluster) -> None:
    """A spec's program inside the bot's folder (`./run`, `bin/run`) is made absolute in the
    coordinator's folder when the spec is loaded. A worker used to run that path, which its
    sandbox does not show (only the worker's unpacked copy): such a bot never started on a
    worker. Now the worker runs its own copy's program (`spec.moved_to`): these bots play every
    game there, as `{python} main.py` does."""
    base = tmp_path / "bots"
    specs = []
    for name, command in (("dot-slash", '["./run"]'), ("in-bin", '["bin/run"]'),
                          ("python-main", '["{python}", "play.py"]')):
        program = "bin/run" if name == "in-bin" else "run"
        _bot_folder(base, name, {program: RUN_HONEST, "play.py": PLAY_HONEST})
        spec = base / f"{name}.toml"
        spec.write_text(f'name = "{name}"\ncommand = {command}\nworkdir = "{name}"\n')
        specs.append(spec)
    done = referee("league", *specs, "--games", "4", "--seed", "9", "--quiet", "--out",
                   tmp_path / "out", "--cluster", cluster.address)
    assert "4/4 games recorded, finished" in done.stdout, done.stdout + done.stderr
    assert "skipped" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    table = json.loads(LeagueFolder(tmp_path / "out").table_json.read_text())["table"]
    assert {row["bot"]: row["games"] for row in table} == {
        "dot-slash": 4, "in-bin": 4, "python-main": 4}
    assert all(sum(row["strikes"].values()) == 0 for row in table), table
    assert set(workers_of(tmp_path / "out")) <= {"w1", "w2"}


CLUSTER_SECRET = "the-club's-password-hashes-on-the-worker-51c2"

# What the linker's build and bot try: each path in paths.txt as it is, and through `evil`,
# the link to / that its build leaves in its folder. One `LINK:` line per try.
LINK_PROBE = """from pathlib import Path
HERE = Path(__file__).resolve().parent


def tries(who):
    lines = []
    for path in (HERE / "paths.txt").read_text().split():
        for tried in (path, str(HERE / "evil") + path):
            try:
                seen = Path(tried).read_bytes()[:60]
                lines.append(f"LINK: {who} {tried} READ {seen!r}")
            except OSError as exc:
                lines.append(f"LINK: {who} {tried} denied ({type(exc).__name__})")
    return lines
"""
LINK_BUILD = """from probe import HERE, tries
if not (HERE / "evil").is_symlink():
    (HERE / "evil").symlink_to("/")
(HERE / "report.txt").write_text("\\n".join(tries("build")) + "\\n")
"""
LINK_MAIN = """import sys
from probe import HERE, tries
import botlib


def decide(request, start, n):
    if n == 1:
        print((HERE / "report.txt").read_text() + "\\n".join(tries("bot")), file=sys.stderr,
              flush=True)
    return botlib.honest(request, start, n)


botlib.run("linker", decide)
"""


@pytest.mark.sandbox
def test_a_bot_and_its_build_read_nothing_outside_its_folder_on_a_worker(
        tmp_path: Path, cluster: Cluster) -> None:
    """Round 4, item 1 on a real cluster. Secrets lie on the workers' machine outside the bot's
    folder, open to every uid: a club data folder's, one in the coordinator's copy of the bot's
    folder that packs leave out (node_modules/), the league's database. linker's build leaves
    `evil -> /` in its folder on the worker; build and bot read each secret directly and
    through the link: every read is denied, and linker plays all its games. linked_program's
    program goes through such a link made by its build on the worker; linked_workdir's folder
    is a link to / an earlier build left: each is left out with one line. The league finishes."""
    root = Path(tempfile.mkdtemp(prefix="cluster-escape-", dir="/tmp"))   # open to others,
    try:                                                                  # as a club's is
        root.chmod(0o755)
        data, base = root / "club", root / "bots"
        data.mkdir()
        (data / "secret.txt").write_text(CLUSTER_SECRET + "\n")
        linker = _bot_folder(base, "linker", {"probe.py": LINK_PROBE, "build.py": LINK_BUILD,
                                              "main.py": LINK_MAIN,
                                              "node_modules/secret.txt": CLUSTER_SECRET})
        out = root / "out"
        secrets = [data / "secret.txt", linker / "node_modules" / "secret.txt",
                   LeagueFolder(out).store_path]
        (linker / "paths.txt").write_text("\n".join(map(str, secrets)) + "\n")
        (base / "linker.toml").write_text(
            'name = "linker"\ncommand = ["{python}", "main.py"]\n'
            'build = ["{python}", "build.py"]\nworkdir = "linker"\n')
        reads = "; ".join(f"cat {secret}; cat evil{secret}" for secret in secrets)
        _bot_folder(base, "linked_program", {"paths.txt": " ".join(map(str, secrets))})
        (base / "linked_program.toml").write_text(
            f'name = "linked_program"\ncommand = ["./evil/bin/sh", "-c", "{reads}; exit 3"]\n'
            f'build = ["/bin/ln", "-s", "/", "evil"]\nworkdir = "linked_program"\n')
        _bot_folder(base, "linked_workdir", {"paths.txt": ""})
        (base / "linked_workdir" / "evil").symlink_to("/")
        (base / "linked_workdir.toml").write_text(
            f'name = "linked_workdir"\ncommand = ["/bin/sh", "-c", "{reads}; exit 3"]\n'
            f'workdir = "linked_workdir/evil"\n')
        bots = honest_bots(base, "ab")
        for folder in (base, *base.glob("honest-*")):
            folder.chmod(0o755)

        done = referee("league", *bots, *(base / f"{name}.toml" for name in
                                          ("linker", "linked_program", "linked_workdir")),
                       "--games", "6", "--players", "3", "--seed", "4", "--skip-broken",
                       "--quiet", "--out", out, "--cluster", cluster.address)
        assert "6/6 games recorded, finished" in done.stdout, done.stdout + done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        for name in ("linked_program", "linked_workdir"):
            said = [line for line in done.stderr.splitlines() if f"'{name}'" in line]
            assert len(said) == 1, done.stderr
        assert "leads outside the bot's folder" in next(
            line for line in done.stderr.splitlines() if "'linked_program'" in line)
        db = sqlite3.connect(LeagueFolder(out).store_path)
        records = [load_record(blob)
                   for (blob,) in db.execute("SELECT record FROM games")]
        db.close()
        assert records and all(record["worker"] in ("w1", "w2") for record in records)
        outputs = [output for record in records for output in record["output"]]
        assert not any(CLUSTER_SECRET in output for output in outputs)
        tried = {line for output in outputs for line in output.splitlines()
                 if line.startswith("LINK: ")}
        for who in ("build", "bot"):   # (on the worker's copy of linker's folder)
            for secret in secrets:
                direct = [line for line in tried if line.startswith(f"LINK: {who} {secret} ")]
                linked = [line for line in tried if line.startswith(f"LINK: {who} /")
                          and f"/evil{secret} " in line]
                assert direct and linked, (who, secret, sorted(tried))
                assert all(" denied (" in line for line in direct + linked), sorted(tried)
        assert not any(" READ " in line for line in tried), sorted(tried)
        table = json.loads(LeagueFolder(out).table_json.read_text())["table"]
        row = next(row for row in table if row["bot"] == "linker")
        assert row["games"] == 6 and sum(row["strikes"].values()) == 0, row
    finally:
        shutil.rmtree(root, ignore_errors=True)


def gauntlet_games(out: Path) -> dict[int, tuple]:
    """The gauntlet's stored games by schedule index: who sat where, the seed and the result."""
    db = sqlite3.connect(LeagueFolder(out).gauntlet_store)
    rows = db.execute("SELECT idx, bots, seed, places, money, forfeited, strikes FROM games "
                      "ORDER BY idx").fetchall()
    db.close()
    return {row[0]: row[1:] for row in rows}


def test_a_gauntlet_on_the_cluster_gives_the_local_verdict_and_games(tmp_path: Path,
                                                                       cluster: Cluster) -> None:
    greedy, random = (ROOT / "sample_bots" / f"{name}.toml" for name in ("greedy", "random"))
    args = [greedy, "--baseline", random, "--field", random, greedy, "--players", "3",
            "--seed", "4", "--quiet"]
    referee("gauntlet", *args, "--out", tmp_path / "local", "-j", "2")
    done = referee("gauntlet", *args, "--out", tmp_path / "cluster", "--cluster",
                   cluster.address)
    assert "verdict: better" in done.stdout
    local, remote = (json.loads(LeagueFolder(tmp_path / where).gauntlet_result.read_text())
                     for where in ("local", "cluster"))
    # Games still in flight when the test decided are stored but never judged, so only
    # games_stored may differ (more places are in flight on the cluster).
    for outcome in (local, remote):
        outcome.pop("games_stored")
    assert remote == local
    local_games, cluster_games = gauntlet_games(tmp_path / "local"), gauntlet_games(
        tmp_path / "cluster")
    judged = range(2 * local["state"]["pairs"])
    assert set(judged) <= set(cluster_games) and set(judged) <= set(local_games)
    assert {i: cluster_games[i] for i in cluster_games.keys() & local_games.keys()} == \
        {i: local_games[i] for i in cluster_games.keys() & local_games.keys()}
    db = sqlite3.connect(LeagueFolder(tmp_path / "cluster").gauntlet_store)
    workers = {worker for (worker,) in db.execute("SELECT worker FROM game_workers")}
    db.close()
    assert workers and workers <= {"w1", "w2"}

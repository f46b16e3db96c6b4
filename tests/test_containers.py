"""Container bots (referee/bots/container.py, docs/containers.md) and the guard's `--on-exit`.

The container tests need a working podman (`bash .ci/setup-containers.sh` as root) and build a
test image once (`tests/bots/honest` + `botlib.py` with sample_bots/container/build-image.sh,
tagged with a hash of its inputs and reused while they do not change; ~60 s the first time on a
fresh machine, of which ~50 s for the base image). Without a runtime they are skipped with the
reason, unless the machine was set up for containers (the containers.conf written by
setup-containers.sh) or REFEREE_REQUIRE_CONTAINERS=1, where that is a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from cli_support import referee
from container_support import TEST_REPO, bot_image, need_runtime
from wait_support import wait_for

from referee.bots.archive import ArchiveError, archive_image_id
from referee.bots.client import BotClient
from referee.bots.container import (
    DEFAULT_CPUS,
    ContainerProcess,
    image_id,
    remove_run_containers,
    run_containers,
)
from referee.bots.errors import BotStartError
from referee.bots.process import RUN_ID
from referee.bots.runtime import BotRunner
from referee.bots.spec import BotSpecError, load_spec
from referee.engine import preset
from referee.game.single import run_match
from referee.league.folder import LeagueFolder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux")

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "bots"
HONEST = BOTS / "honest.toml"
SAMPLE_SPEC = ROOT / "sample_bots" / "container" / "random-container.toml"
GUARD = [sys.executable, "-m", "referee.bots.guard"]


# ---------------------------------------------------------------- guard --on-exit (no runtime)


def test_guard_runs_on_exit_after_the_bot_exits(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    done = subprocess.run([*GUARD, "--grace", "1", "--on-exit", f"touch {mark}", "--",
                           "sh", "-c", "exit 3"], capture_output=True, timeout=30, check=False)
    assert done.returncode == 3
    assert mark.exists()


def test_guard_removes_the_instance_directory_after_on_exit(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    (instance / "tmp").mkdir(parents=True)
    (instance / "tmp" / "scratch").write_text("x")
    seen = tmp_path / "seen"   # the on-exit command still finds the directory
    done = subprocess.run([*GUARD, "--grace", "1", "--remove-dir", str(instance),
                           "--on-exit", f"cp -r {instance} {seen}", "--", "sh", "-c", "exit 0"],
                          capture_output=True, timeout=30, check=False)
    assert done.returncode == 0
    assert (seen / "tmp" / "scratch").read_text() == "x"
    assert not instance.exists()


def test_guard_runs_on_exit_when_stopped_and_can_skip_the_subreaper(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    command = f"sh -c 'echo stopped > {mark}'"
    proc = subprocess.Popen([*GUARD, "--grace", "1", "--no-subreaper", "--on-exit", command,
                             "--on-exit-timeout", "5", "--", "sleep", "30"],
                            start_new_session=True)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    # the guard handles SIGTERM once it has started the bot
    wait_for("the guard to start its command", lambda: children.read_text().strip(), timeout=60,
             every=0.02)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    assert time.monotonic() - began < 10   # not the 30 s of the sleep
    assert mark.read_text() == "stopped\n"


def test_guard_bounds_on_exit_and_rejects_bad_options(tmp_path: Path) -> None:
    began = time.monotonic()
    done = subprocess.run([*GUARD, "--on-exit", "sleep 30", "--on-exit-timeout", "0.5", "--",
                           "true"], capture_output=True, timeout=30, check=False)
    assert done.returncode == 0 and time.monotonic() - began < 15   # not 30 s
    for bad in (["--on-exit"], ["--grace", "x", "--", "true"], ["--nope", "--", "true"]):
        done = subprocess.run([*GUARD, *bad], capture_output=True, text=True, timeout=30,
                              check=False)
        assert done.returncode == 2 and "usage:" in done.stderr


def test_sample_container_spec_loads() -> None:
    spec = load_spec(SAMPLE_SPEC)
    assert spec.kind == "image"
    assert spec.image == "localhost/referee-sample-bot:latest"
    assert spec.runtime == "podman"


# ---------------------------------------------------------------- containers


@pytest.fixture(scope="module")
def runtime() -> str:
    return need_runtime()


@pytest.fixture(scope="module")
def image(runtime: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The honest test bot as an image, built once per change of its inputs."""
    return bot_image(runtime, tmp_path_factory.mktemp("honest-image"), "honest", TEST_REPO)


@pytest.fixture(scope="module")
def hog_image(runtime: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The container_hog test bot as an image (over its memory or its process limit)."""
    return bot_image(runtime, tmp_path_factory.mktemp("hog-image"), "container_hog",
                       "localhost/referee-test-hog")


def write_spec(directory: Path, name: str, image: str, *, env: str = "",
               limits: str = "") -> Path:
    path = directory / f"{name}.toml"
    path.write_text(textwrap.dedent(f"""\
        name = "{name}"
        image = "{image}"
        runtime = "podman"
        {env}
        [limits]
        startup_ms = 60000
        {limits}
        """))
    return path


def inspect(runtime: str, name: str) -> dict:
    done = subprocess.run([runtime, "container", "inspect", name], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)[0]


def labelled(runtime: str) -> list[str]:
    done = subprocess.run([runtime, "ps", "-a", "-q", "--filter", f"label=referee.run={RUN_ID}"],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_container_bot_plays_a_game_against_a_command_bot(runtime: str, image: str,
                                                          tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, "boxed", image))
    result = run_match([spec, load_spec(HONEST)], preset("classic"), 11)
    for seat in result.seats:
        assert seat.strike_count == 0 and not seat.forfeited, (seat.bot, seat.strikes)
        assert seat.latencies_us
    ident = image_id(runtime, image)
    version = f"image:{image}@sha256:{ident}"
    assert result.seats[0].version == version
    bots = result.record.meta["bots"]
    assert bots[0] == {"seat": 0, "name": "boxed", "version": version}
    assert bots[1]["version"].startswith("sha256:")
    # The roster stopped: no container of this run is left.
    assert labelled(runtime) == []


def test_container_is_confined(runtime: str, image: str, tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, "confined", image, env='env = { LEVEL = "3" }',
                                limits="memory_mb = 256\nmax_processes = 40"))

    async def scenario() -> tuple[dict, dict, ContainerProcess]:
        process = ContainerProcess(spec)
        address = await process.start()
        client = BotClient(spec.name, address, alive=lambda: process.alive)
        try:
            hello = await client.handshake(60)
            assert hello.name == "honest"
            info = await asyncio.to_thread(inspect, runtime, process.name)
            probe = await asyncio.to_thread(subprocess.run, [
                runtime, "exec", process.name, "python3", "-c", PROBE],
                capture_output=True, text=True, check=False)
            assert probe.returncode == 0, probe.stderr
            return info, json.loads(probe.stdout), process
        finally:
            await client.close()
            await process.stop()

    info, seen, process = asyncio.run(scenario())
    host = info["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert "CAP_NET_RAW" in host["CapDrop"] and "CAP_SYS_CHROOT" in host["CapDrop"]
    assert not info.get("EffectiveCaps")
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == host["MemorySwap"] == 256 * 1024 * 1024
    assert host["PidsLimit"] == 40
    assert host["NanoCpus"] == int(DEFAULT_CPUS * 1e9)
    assert info["Config"]["User"] == "65534:65534"
    assert info["Config"]["Labels"]["referee.run"] == RUN_ID
    assert info["Config"]["Labels"]["referee.bot"] == "confined"
    assert info["Image"] == image_id(runtime, image)
    # Seen from inside the container:
    assert seen["interfaces"] == ["lo"]
    assert seen["connect"] in ("ENETUNREACH", "ECONNREFUSED", "EHOSTUNREACH")
    assert seen["uid"] == seen["gid"] == 65534
    assert seen["cap_eff"] == 0 and seen["no_new_privs"] == 1
    assert seen["write_root"] == seen["write_bot"] == "EROFS"
    assert seen["write_tmp"] == "ok"
    assert seen["env"] == ["3", "unix:/run/referee/bot.sock"]
    assert seen["init"].startswith("/run/podman-init")
    # Stopped: the container and its socket directory are gone.
    assert labelled(runtime) == []
    assert process._dir is None and not process.alive


PROBE = r"""
import errno, json, os, socket
def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc))
def connect():
    with socket.create_connection(("1.1.1.1", 53), timeout=2):
        pass
def write(path):
    def go():
        with open(path, "w") as handle:
            handle.write("x")
    return go
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines()
              if ":\t" in line)
print(json.dumps({
    "interfaces": sorted(os.listdir("/sys/class/net")),
    "connect": attempt(connect),
    "uid": os.getuid(), "gid": os.getgid(),
    "cap_eff": int(status["CapEff"], 16), "no_new_privs": int(status["NoNewPrivs"]),
    "write_root": attempt(write("/x")), "write_bot": attempt(write("/bot/x")),
    "write_tmp": attempt(write("/tmp/x")),
    "env": [os.environ.get("LEVEL"), os.environ.get("REFEREE_BOT_ADDRESS")],
    "init": open("/proc/1/cmdline").read().replace("\0", " "),
}))
"""


def test_a_dead_container_is_noticed_and_its_output_kept(runtime: str, image: str,
                                                         tmp_path: Path) -> None:
    # PYTHONPATH without the image's dependencies: the bot dies on `import grpc`.
    spec = load_spec(write_spec(tmp_path, "broken", image,
                                env='env = { PYTHONPATH = "/nowhere" }'))
    runner = BotRunner(spec)

    async def start() -> None:
        try:
            await runner.start()
        finally:
            await runner.stop()

    with pytest.raises(BotStartError) as caught:
        asyncio.run(start())
    assert "exited during start-up with exit status 1" in caught.value.reason
    # Its output is kept for its owner (the detail), never in the reason others may read.
    assert "No module named 'grpc'" in caught.value.detail
    assert "No module named 'grpc'" not in caught.value.reason
    assert labelled(runtime) == []

    # A container killed from outside: the instance is no longer alive, and stop cleans up.
    spec = load_spec(write_spec(tmp_path, "killed", image))

    async def kill_it() -> None:
        process = ContainerProcess(spec)
        address = await process.start()
        client = BotClient(spec.name, address, alive=lambda: process.alive)
        try:
            await client.handshake(60)
            await asyncio.to_thread(subprocess.run, [runtime, "kill", process.name],
                                    capture_output=True, check=True)
            for _ in range(100):
                if not process.alive:
                    break
                await asyncio.sleep(0.05)
            assert not process.alive and process.exit_status == 137
        finally:
            await client.close()
            await process.stop()

    asyncio.run(kill_it())
    assert labelled(runtime) == []


def test_missing_image_fails_fast_without_pulling(runtime: str, tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, "ghost", "localhost/referee-no-such-image:none"))
    began = time.monotonic()
    with pytest.raises(BotStartError) as caught:
        asyncio.run(BotRunner(spec).start())
    assert "not stored in podman" in caught.value.reason
    assert time.monotonic() - began < 10


KILLED_REFEREE = """
import asyncio, sys
from referee.bots.runtime import BotRunner
from referee.bots.spec import load_spec

async def main():
    runner = BotRunner(load_spec(sys.argv[1]))
    await runner.start()
    process = runner.instances[0].process
    print(process.name, process._dir, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def test_no_container_outlives_a_killed_referee(runtime: str, image: str,
                                                tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "orphan", image)
    run_id = f"killed-{os.getpid()}"
    referee = subprocess.Popen([sys.executable, "-c", KILLED_REFEREE, str(spec)], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "REFEREE_RUN_ID": run_id})
    try:
        assert referee.stdout is not None
        name, socket_dir = referee.stdout.readline().split()
        assert Path(socket_dir, "bot.sock").exists()
        assert name.startswith(f"referee-{run_id}-orphan-")
        assert run_containers(run_id, runtime) == [name]
        referee.kill()   # SIGKILL: no atexit, no finally; only the guard is left to clean up
        referee.wait()
        wait_for("the container gone", lambda: run_containers(run_id, runtime) == [],
                 timeout=60)
        # removed by the guard's --on-exit too
        wait_for("the socket folder gone", lambda: not Path(socket_dir).exists(), timeout=60)
    finally:
        referee.kill()
        remove_run_containers(run_id)


def test_remove_run_containers_sweeps_by_label(runtime: str, image: str) -> None:
    run_id = f"sweep-{os.getpid()}"
    names = [f"referee-{run_id}-{bot}" for bot in ("a", "b")]
    for name, bot in zip(names, ("a", "b"), strict=True):
        subprocess.run([runtime, "create", "--pull=never", "--name", name, "--label",
                        f"referee.run={run_id}", "--label", f"referee.bot={bot}", image],
                       capture_output=True, check=True)
    try:
        assert run_containers(run_id, runtime) == names
        assert remove_run_containers(run_id, ["b"]) == [names[1]]
        assert run_containers(run_id, runtime) == [names[0]]
        assert remove_run_containers(run_id) == [names[0]]
        assert run_containers(run_id, runtime) == []
    finally:
        subprocess.run([runtime, "rm", "-f", "-i", *names], capture_output=True, check=False)


def test_referee_check_passes_a_container_bot(runtime: str, image: str, tmp_path: Path) -> None:
    spec = write_spec(tmp_path, "checked", image)
    done = referee("check", spec, "--opponent", HONEST, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^PASS  spec +image bot", done.stdout, re.M), done.stdout
    assert "checked conforms" in done.stdout
    assert labelled(runtime) == []


def test_container_bot_plays_a_league_with_the_sample_bots(runtime: str, image: str,
                                                           tmp_path: Path) -> None:
    import asyncio

    from referee.league.config import LeagueSettings
    from referee.league.runner import run_league

    samples = ROOT / "sample_bots"
    settings = LeagueSettings(
        bots=[write_spec(tmp_path, "boxed", image), samples / "random.toml",
              samples / "greedy.toml"],
        games=6, players=(3, 3), seed=4, out=tmp_path / "league")
    outcome = asyncio.run(run_league(settings))
    assert outcome.finished and len(outcome.games) == 6
    rows = {row.bot: row for row in outcome.rows}
    assert rows["boxed"].games == 6
    assert sum(rows["boxed"].strikes.values()) == 0 and rows["boxed"].forfeits == 0
    assert labelled(runtime) == []


def test_container_bots_over_their_limits_play_a_league(runtime: str, image: str,
                                                        hog_image: str, tmp_path: Path) -> None:
    """A container bot over its memory (killed by its cgroup: crash strikes) and one that spends
    its whole pids limit (it plays on, no strike) beside an honest container and the sample bots:
    the league completes, the honest bots are not struck, no container is left."""
    from referee.league.config import LeagueSettings
    from referee.league.runner import run_league

    samples = ROOT / "sample_bots"
    settings = LeagueSettings(
        bots=[write_spec(tmp_path, "hog-memory", hog_image, env='env = { HOG_MODE = "memory" }',
                         limits="memory_mb = 160\ndecision_ms = 10000"),
              write_spec(tmp_path, "hog-fork", hog_image, env='env = { HOG_MODE = "fork" }',
                         limits="max_processes = 48"),
              write_spec(tmp_path, "boxed", image), samples / "random.toml",
              samples / "greedy.toml"],
        games=8, players=(3, 4), seed=2**70 + 14, out=tmp_path / "league")
    outcome = asyncio.run(run_league(settings))
    assert outcome.finished and len(outcome.games) == 8
    rows = {row.bot: row for row in outcome.rows}
    memory = {kind for kind, n in rows["hog-memory"].strikes.items() if n}
    assert memory == {"crash"}, rows["hog-memory"].strikes
    for bot in ("hog-fork", "boxed", "random", "greedy"):
        assert sum(rows[bot].strikes.values()) == 0, (bot, rows[bot].strikes)
        assert rows[bot].games >= 2
    db = sqlite3.connect(LeagueFolder(tmp_path / "league").store_path)
    try:
        from referee.league.store import load_record
        records = [load_record(blob) for (blob,) in
                   db.execute("SELECT record FROM games")]
    finally:
        db.close()
    held = {line for record in records for entry, text in zip(record["bots"], record["output"],
                                                              strict=True)
            if entry["name"] == "hog-fork" for line in text.splitlines()
            if line.startswith("HOLD:")}
    assert held, "hog-fork never reported"
    for line in held:
        count = int(line.split()[2])
        assert 48 - 30 <= count < 48 and "BlockingIOError" in line, line
    assert labelled(runtime) == []


# ---------------------------------------------------------------- bots handed in as one file


def write_archive_spec(directory: Path, name: str, archive: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(f'name = "{name}"\nimage_archive = "{archive}"\nruntime = "podman"\n'
                    "[limits]\nstartup_ms = 60000\n")
    return path


@pytest.fixture()
def archive(runtime: str, image: str, tmp_path: Path):
    """The honest test image saved as one file under a tag of its own, removed afterwards (the
    image itself stays: it is the shared test image)."""
    tag = f"localhost/referee-test-handed-in:{uuid.uuid4().hex[:12]}"
    subprocess.run([runtime, "tag", image, tag], check=True, capture_output=True)
    path = tmp_path / "alice.tar"
    try:
        subprocess.run([runtime, "save", "-o", str(path), tag], check=True, capture_output=True,
                       timeout=600)
        subprocess.run([runtime, "rmi", tag], capture_output=True, check=False)
        yield path
    finally:   # loading the archive tags its image again
        subprocess.run([runtime, "rmi", tag], capture_output=True, check=False)


def test_archive_image_id_reads_both_archive_formats(runtime: str, image: str,
                                                     tmp_path: Path) -> None:
    ident = image_id(runtime, image)
    for fmt in ("docker-archive", "oci-archive"):
        path = tmp_path / f"{fmt}.tar"
        subprocess.run([runtime, "save", "--format", fmt, "-o", str(path), image], check=True,
                       capture_output=True, timeout=600)
        assert archive_image_id(path) == ident
    (tmp_path / "junk.tar").write_bytes(b"not a tar file")
    with pytest.raises(ArchiveError, match="not a tar archive"):
        archive_image_id(tmp_path / "junk.tar")


def test_a_league_plays_a_bot_handed_in_as_an_image_archive(runtime: str, image: str,
                                                           archive: Path, tmp_path: Path) -> None:
    import asyncio

    from referee.league.config import LeagueSettings
    from referee.league.runner import run_league

    name = f"handed-in-{uuid.uuid4().hex[:6]}"
    spec = write_archive_spec(archive.parent, name, archive.name)
    samples = ROOT / "sample_bots"
    settings = LeagueSettings(bots=[spec, samples / "random.toml", samples / "greedy.toml"],
                              games=6, players=(3, 3), seed=4, out=tmp_path / "league")
    try:
        outcome = asyncio.run(run_league(settings))
        assert outcome.finished and len(outcome.games) == 6
        rows = {row.bot: row for row in outcome.rows}
        assert rows[name].games == 6
        assert sum(rows[name].strikes.values()) == 0 and rows[name].forfeits == 0
        # Its version is the digest of the image in the file.
        ident = image_id(runtime, image)
        db = sqlite3.connect(LeagueFolder(tmp_path / "league").store_path)
        version = db.execute("SELECT version FROM bots WHERE name = ?", (name,)).fetchone()[0]
        db.close()
        assert version == f"image-archive:alice.tar@sha256:{ident}"
        assert labelled(runtime) == []
    finally:
        subprocess.run([runtime, "rmi", f"localhost/referee-archive/{name}:latest"],
                       capture_output=True, check=False)


def test_an_archive_changed_since_the_league_started_is_refused(runtime: str, archive: Path,
                                                                 tmp_path: Path) -> None:
    name = f"changed-{uuid.uuid4().hex[:6]}"
    spec = load_spec(write_archive_spec(archive.parent, name, archive.name))

    async def scenario() -> str:
        runner = BotRunner(spec)
        try:
            await runner.start()
            first = runner._archive_digest
            assert first is not None and first.startswith("sha256:")
            with archive.open("ab") as stream:   # a different file, still a valid archive
                stream.write(b"\0" * 1024)
            later = ContainerProcess(spec, 1, archive_digest=first)
            with pytest.raises(BotStartError) as caught:
                await later.start()
            assert later.image_id is None
            return str(caught.value)
        finally:
            await runner.stop()

    try:
        message = asyncio.run(scenario())
    finally:
        subprocess.run([runtime, "rmi", f"localhost/referee-archive/{name}:latest"],
                       capture_output=True, check=False)
    assert "changed since the league started" in message and "\n" not in message
    assert labelled(runtime) == []


def test_archive_spec_errors_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text('name = "a"\nimage_archive = "missing.tar"\n')
    with pytest.raises(BotSpecError, match="key 'image_archive': expected an existing file"):
        load_spec(path)
    (tmp_path / "a.tar").write_bytes(b"")
    path.write_text('name = "a"\nimage_archive = "a.tar"\nimage = "localhost/a:1"\n')
    with pytest.raises(BotSpecError, match="exactly one of"):
        load_spec(path)
    path.write_text('name = "a"\nimage_archive = "a.tar"\n')
    spec = load_spec(path)
    assert spec.kind == "image" and spec.image_archive == (tmp_path / "a.tar").resolve()


def test_referee_check_passes_a_bot_handed_in_as_an_archive(runtime: str, archive: Path) -> None:
    name = f"checked-{uuid.uuid4().hex[:6]}"
    spec = write_archive_spec(archive.parent, name, archive.name)
    try:
        done = referee("check", spec, "--preset", "classic", "--opponent", HONEST, cwd=ROOT,
                       timeout=600, check=False)
    finally:
        subprocess.run([runtime, "rmi", f"localhost/referee-archive/{name}:latest"],
                       capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{name} conforms" in done.stdout
    assert labelled(runtime) == []

"""A spec's build runs bot-controlled code: it runs in the bot's sandbox (not root, only its own
folder writable, no referee environment, no host files, no network unless the spec asks), and
the JavaScript sample bot still builds (with `build_network = true`) and plays."""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import tomllib
import uuid
from pathlib import Path

import pytest
from cli_support import referee
from net_support import accepted, dask_scheduler, scheduler_clients
from wait_support import wait_for

from referee.bots import build, netns
from referee.bots.build import ensure_built
from referee.bots.process import protocol_env
from referee.bots.sandbox import default_env
from referee.bots.spec import load_spec
from referee.checking.conformance import processes_with_run_id
from referee.league.folder import LeagueFolder

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"
SECRET = "REFEREE_TEST_BUILD_SECRET"

needs_sandbox = pytest.mark.sandbox


def _attacker(base: Path, **env: str) -> Path:
    """build_attacker in a folder of its own (as handed in), its spec beside it."""
    folder = base / "bots" / "build_attacker"
    shutil.copytree(BOTS / "build_attacker", folder / "build_attacker")
    shutil.copy(BOTS / "botlib.py", folder / "botlib.py")
    for path in (base, base / "bots", folder, folder / "build_attacker"):
        path.chmod(0o755)
    spec = folder / "build_attacker.toml"
    lines = ['name = "build_attacker"', 'command = ["{python}", "build_attacker/main.py"]',
             'build = ["{python}", "build_attacker/build.py"]', "[env]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in env.items()]
    spec.write_text("\n".join(lines) + "\n")
    return spec


def _owners(folder: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for path in (dirpath, *(os.path.join(dirpath, n) for n in (*dirnames, *filenames))):
            st = os.lstat(path)
            found[path] = (st.st_uid, st.st_gid)
    return found


@needs_sandbox
def test_a_build_runs_confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.setblocking(False)
    other = tmp_path / "bots" / "other"
    other.mkdir(parents=True)
    (other / "main.py").write_text("SECRET_STRATEGY = 1\n")
    database = LeagueFolder(tmp_path / "out").store_path
    database.parent.mkdir()
    database.write_text("scores\n")
    spec_path = _attacker(tmp_path, BUILD_READ_PATHS=f"{other / 'main.py'}:{database}:"
                          f"{ROOT / 'pyproject.toml'}:/root/.bash_history",
                          BUILD_WRITE_PATHS=f"{tmp_path}:{tmp_path / 'bots'}:{other}:{ROOT}:"
                          "/tmp:/etc", BUILD_SECRET_NAMES=SECRET, BUILD_PROBE_PORT=str(port))
    folder = spec_path.parent
    monkeypatch.setenv(SECRET, "hunter2")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    run_id = f"build-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr("referee.bots.process.RUN_ID", run_id)
    before = _owners(folder)

    assert ensure_built(load_spec(spec_path), sandbox=True) is True

    report = (folder / "build_report.txt").read_text().splitlines()
    verdicts = {" ".join(line.split()[1:3]): line.split()[3] for line in report
                if line.split()[1] in ("read", "write", "connect")}
    assert report[0].endswith("not-root") and " uid 0 " not in report[0], report[0]
    assert verdicts.pop("read /etc/shadow") == "denied"
    for path in (other / "main.py", database, ROOT / "pyproject.toml"):
        assert verdicts.pop(f"read {path}") == "denied", path
    assert verdicts.pop("read /root/.bash_history") == "denied"
    for place in (tmp_path, tmp_path / "bots", other, ROOT, "/etc"):
        assert verdicts.pop(f"write {place}") == "denied", place
    assert verdicts.pop("write /tmp") == "WROTE"       # its private /tmp, gone afterwards
    assert verdicts.pop(f"connect 127.0.0.1:{port}") == "blocked"
    assert verdicts == {}
    assert f"BUILD: env {SECRET} absent" in report
    names = set(next(x for x in report if x.startswith("BUILD: env count")).split()[5:])
    given = {"BUILD_READ_PATHS", "BUILD_WRITE_PATHS", "BUILD_SECRET_NAMES", "BUILD_PROBE_PORT"}
    # (LASVEGAS_PROTO: the path of the referee's public bot.proto, no secret)
    assert names <= {*default_env(), *protocol_env(), *given, "PWD", "REFEREE_RUN_ID"}, names
    assert "BUILD: own folder WROTE" in report
    # Nothing landed outside; the folder is given back to its owner, new files included.
    for place in (tmp_path, tmp_path / "bots", other, ROOT, Path("/etc")):
        assert not list(place.glob("build-attack-*")), place
    after = _owners(folder)
    assert all(after[path] == owner for path, owner in before.items())
    assert after[str(folder / "build_report.txt")] == before[str(folder)]
    assert list(private_tmp.iterdir()) == []          # no build folder left
    # the daemon it left was ended
    wait_for(f"the processes of run {run_id} to end", lambda: not processes_with_run_id(run_id),
             timeout=60)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


@needs_sandbox
def test_the_javascript_sample_bot_builds_with_network_and_plays(tmp_path: Path) -> None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm")
    bots = tmp_path / "bots"
    shutil.copytree(ROOT / "sample_bots" / "greedy-js", bots / "greedy-js",
                    ignore=shutil.ignore_patterns("node_modules"))
    # Copied as docs/league.md says, spec and folder only: nothing beside them is its proto
    # (the sandbox shows it none); the referee's $LASVEGAS_PROTO leads it to bot.proto.
    shutil.copy(ROOT / "sample_bots" / "greedy-js.toml", bots / "greedy-js.toml")
    shutil.copytree(BOTS / "honest", bots / "honest")
    shutil.copy(BOTS / "botlib.py", bots / "botlib.py")
    shutil.copy(BOTS / "honest.toml", bots / "honest.toml")
    spec = load_spec(bots / "greedy-js.toml")
    assert spec.build_network
    done = referee("match", bots / "greedy-js.toml", bots / "honest.toml",
                   "--seed", "71923844416237641235",
                   env={"XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "greedy-js" in done.stdout and "strikes: none" in done.stdout, done.stdout
    assert (bots / "greedy-js" / "node_modules" / "@grpc" / "grpc-js").is_dir()
    owner = os.stat(bots / "greedy-js").st_uid
    assert os.stat(bots / "greedy-js" / "node_modules").st_uid == owner


@needs_sandbox
def test_without_build_network_the_build_has_no_network(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "fetch.py").write_text(
        "import socket, sys\n"
        "try:\n    socket.create_connection(('registry.npmjs.org', 443), timeout=5)\n"
        "except OSError as exc:\n    sys.exit(f'no network: {type(exc).__name__}')\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "fetcher"\ncommand = ["{python}", "fetch.py"]\n'
                         'build = ["{python}", "fetch.py"]\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError, match="no network"):
            ensure_built(load_spec(spec_file), sandbox=True)


@pytest.mark.parametrize("sandbox", [False, pytest.param(True, marks=needs_sandbox)])
def test_a_build_is_told_where_bot_proto_is_and_can_read_it(tmp_path: Path,
                                                             sandbox: bool) -> None:
    """$LASVEGAS_PROTO leads a build (and a bot: tests/test_guides.py, the JavaScript sample
    above) to the referee's bot.proto, confined or not, wherever the bot's folder is."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "peek.py").write_text(
        "import os, sys\n"
        "path = os.environ.get('LASVEGAS_PROTO', 'unset')\n"
        "head = open(path).read() if os.path.isfile(path) else 'unreadable'\n"
        "sys.exit(f'proto at {path}: ' + ('syntax = \"proto3\"' in head and 'readable' or head))\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "peek"\ncommand = ["{python}", "peek.py"]\n'
                         'build = ["{python}", "peek.py"]\n')
    proto = ROOT / "proto" / "lasvegas" / "v1" / "bot.proto"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError, match=f"proto at {proto}: readable"):
            ensure_built(load_spec(spec_file), sandbox=sandbox)


@pytest.mark.sandbox
def test_a_failed_build_names_its_own_folder_under_tmp_and_hides_its_private_tmp(
        tmp_path: Path) -> None:
    """The bot's folder may lie under the host's /tmp (here it does: pytest's tmp_path): a
    failed confined build's error names it as it is, and only paths into the build's private
    /tmp are said to be gone."""
    assert str(tmp_path).startswith("/tmp/")
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "fail.py").write_text(
        "import os, sys\nopen('/tmp/build.log', 'w').write('x')\n"
        "sys.exit(f'cannot compile {os.getcwd()}/main.c; log in /tmp/build.log')\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "fail"\ncommand = ["{python}", "fail.py"]\n'
                         'build = ["{python}", "fail.py"]\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError) as failed:
            ensure_built(load_spec(spec_file), sandbox=True)
    assert (f"cannot compile {folder}/main.c; log in (the build's private /tmp, removed)"
            in str(failed.value)), str(failed.value)


@needs_sandbox
@pytest.mark.parametrize(("says", "hint"), [
    ("main.cpp:3:1: error: expected ';' before '}' token", False),
    ("npm error code EAI_AGAIN | npm error request to https://registry.npmjs.org/x failed",
     True)])
def test_a_failed_build_hints_at_the_network_only_when_it_failed_to_reach_it(
        tmp_path: Path, says: str, hint: bool) -> None:
    """A compile error is the student's to fix in the code: no word of the network; a build
    that could not reach the network is told how to give it one."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "fail.py").write_text(f"import sys\nsys.exit({says!r})\n")
    spec_file = folder / "bot.toml"
    spec_file.write_text('name = "fail"\ncommand = ["{python}", "fail.py"]\n'
                         'build = ["{python}", "fail.py"]\n')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(build.BotStartError) as failed:
            ensure_built(load_spec(spec_file), sandbox=True)
    line = str(failed.value)
    offline = " (it ran without network: `build_network = true` in the spec gives it one)"
    assert f"failed with exit 1{offline if hint else ''}: {says}" in line, line
    assert ("build_network" in line) == hint, line


def _net_build(base: Path, name: str, source: str, **env: str) -> Path:
    """Test bot `source` (net_build, build_hang) in a folder of its own as `name`, its spec
    beside it with the test's environment."""
    folder = base / "bots" / name
    shutil.copytree(BOTS / source, folder / source)
    shutil.copy(BOTS / "botlib.py", folder / "botlib.py")
    for path in (base, base / "bots", folder, folder / source):
        path.chmod(0o755)
    spec = tomllib.loads((BOTS / f"{source}.toml").read_text())
    lines = [f"name = {json.dumps(name)}", f"command = {json.dumps(spec['command'])}",
             f"build = {json.dumps(spec['build'])}", "build_network = true",
             f"workdir = {json.dumps(name)}", "[env]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in env.items()]
    if "limits" in spec:
        lines += ["[limits]", *(f"{k} = {v}" for k, v in spec["limits"].items())]
    path = base / "bots" / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_sandbox
def test_a_network_build_reaches_the_registry_and_nothing_on_the_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """net_build (build_network = true) tries the host's loopback, the host's own address, a
    dask scheduler on loopback (to run code on it), and slirp4netns's gateway and resolver
    addresses: no listener sees a connection, the scheduler sees no client and runs nothing;
    the registry resolves and is reached, so `npm ci` works."""
    listeners = [socket.create_server(("127.0.0.1", 0))]
    own = [str(a.ip) for a in netns.host_addresses() if not a.ip.is_loopback]
    if own:
        listeners.append(socket.create_server((own[0], 0)))
    targets = [f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in listeners]
    for target in targets:   # control: reachable from the host, outside any sandbox
        host, _, port = target.rpartition(":")
        socket.create_connection((host, int(port)), timeout=5).close()
    assert all(len(accepted(s)) == 1 for s in listeners)
    marks = tmp_path / "marks"
    marks.mkdir()
    with dask_scheduler(tmp_path) as scheduler:
        spec = _net_build(tmp_path, "net_build", "net_build",
                          NET_BUILD_TARGETS=",".join([*targets, scheduler.removeprefix("tcp://")]),
                          NET_BUILD_SCHEDULERS=scheduler, NET_BUILD_MARK=str(marks),
                          NET_BUILD_PUBLIC="registry.npmjs.org:443")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        assert ensure_built(load_spec(spec), sandbox=True) is True
        clients = scheduler_clients(scheduler)
    report = (spec.parent / "net_build" / "net_build_report.txt").read_text().splitlines()
    verdicts = {line.split()[2]: line.split()[3] for line in report
                if line.split()[1] in ("connect", "via-slirp", "dask")}
    assert len(verdicts) == 3 * (len(targets) + 1) + 1, report
    assert all(v == "blocked" for v in verdicts.values()), report
    assert [accepted(s) for s in listeners] == [[] for _ in listeners]
    assert clients == [], clients          # the scheduler never saw a client of the build
    assert list(marks.iterdir()) == []     # nor ran its code, on itself or a worker
    assert any(line.startswith("NETBUILD: resolve registry.npmjs.org ") and "failed" not in line
               for line in report), report
    assert "NETBUILD: public registry.npmjs.org:443 OPEN" in report
    for listener in listeners:
        listener.close()


@needs_sandbox
def test_a_network_build_fails_closed_without_its_isolated_network(tmp_path: Path) -> None:
    """A machine without /dev/net/tun (here a mount namespace of the test's own where /dev/net
    is an empty tmpfs): slirp4netns cannot start, the build does not run, and says why in one
    line; it never gets the host's network instead."""
    spec = _net_build(tmp_path, "net_build", "net_build")
    attempt = ("import sys\nfrom pathlib import Path\nfrom referee.bots.build import "
               "BotStartError, ensure_built\nfrom referee.bots.spec import load_spec\ntry:\n"
               f"    ensure_built(load_spec(Path({str(spec)!r})), sandbox=True)\n"
               "except BotStartError as exc:\n    print(exc)\n    sys.exit(3)\n")
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
         'mount -t tmpfs none /dev/net && exec "$0" -c "$1"', sys.executable, attempt],
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}, capture_output=True,
        text=True, timeout=300, check=False)
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    message = done.stdout.strip()
    assert "\n" not in message
    assert "no isolated network" in message and "slirp4netns failed" in message, message
    assert "/dev/net/tun" in message, message
    assert not (spec.parent / "net_build" / "net_build_report.txt").exists()   # never ran


@needs_sandbox
def test_a_build_that_hangs_is_stopped_at_its_time_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build_hang scans its loopback's ports, leaves a child that ignores SIGTERM and never
    ends: at its `limits.build_seconds` the whole build is stopped and the bot fails to start
    with one line; no process of it is left."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run_id = f"hang-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr("referee.bots.process.RUN_ID", run_id)
    spec = load_spec(_net_build(tmp_path, "build_hang", "build_hang"))
    assert spec.limits.build_seconds == 5
    with pytest.raises(build.BotStartError, match=r"build timed out after 5 s"):
        ensure_built(spec, sandbox=True)
    assert processes_with_run_id(run_id) == []
    # Its scan found nothing listening: its loopback is its own.
    report = (spec.workdir / "build_hang_report.txt").read_text() \
        if (spec.workdir / "build_hang_report.txt").exists() else "BUILDHANG: open ports []"
    assert report.strip() == "BUILDHANG: open ports []", report


@needs_sandbox
def test_the_network_filter_refuses_private_ranges_and_the_host(tmp_path: Path) -> None:
    """In a build's isolated network, a connection to an address of each refused range (the
    private ones, link-local, shared, loopback's, the host's own networks) is refused at once
    by the filter's rule for that range (its packet counter says so), none by another; no
    IPv6 leaves at all."""
    with netns.isolated_network(tmp_path) as net:
        targets = {block: str(ipaddress.ip_network(block)[1]) for block in net.blocked
                   if not block.startswith(("127.", "224.", "240."))}
        probe = "\n".join([
            "import socket, sys",
            "for host in [*sys.argv[1:], 'fd00::1']:",
            "    try:",
            "        socket.create_connection((host, 80), timeout=10).close()",
            "        print(host, 'OPEN')",
            "    except OSError as exc:",
            "        print(host, type(exc).__name__)"])
        done = subprocess.run(["nsenter", f"--net={net.path}", "--", sys.executable, "-c",
                               probe, *targets.values()], capture_output=True, text=True,
                              timeout=300)
        rules = subprocess.run(["nsenter", f"--net={net.path}", "--", "iptables", "-L",
                                "OUTPUT", "-v", "-n", "-x"], capture_output=True, text=True,
                               timeout=60).stdout
    results = dict(line.split() for line in done.stdout.splitlines())
    assert {results[address] for address in targets.values()} == {"ConnectionRefusedError"}
    assert results["fd00::1"] != "OPEN"
    hits = {}
    for line in rules.splitlines():   # pkts bytes target prot opt in out source destination
        fields = line.split()
        if len(fields) >= 9 and fields[2] == "REJECT" and fields[3] == "6":
            hits[fields[8]] = int(fields[0])
    for block in targets:
        assert hits[block] >= 1, (block, rules)
    assert {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
            "100.64.0.0/10"} <= set(targets)


# The first build waits for the test's go, SIGUSR1 (at most 300 s): as root a build writes in a
# copy of its folder, so the test cannot see or touch its files while it runs.
WAITING_BUILD = """import signal, sys, time
from pathlib import Path
first = not Path("starts").exists()
with open("starts", "a") as starts:   # one line per build that ran
    starts.write("started\\n")
if first:
    signal.signal(signal.SIGUSR1, lambda *_: sys.exit(0))
    time.sleep(300)
"""


def _waiting(token: str) -> list[int]:
    """Pids of the processes running `python wait.py TOKEN` (not the guard or bubblewrap that
    started one, whose command lines end the same) once they catch SIGUSR1."""
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, StopIteration):
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[:-1]
            if not (entry.isdigit() and words[1:] == [b"wait.py", token.encode()]):
                continue
            caught = next(line for line in Path(f"/proc/{entry}/status").read_text().splitlines()
                          if line.startswith("SigCgt:"))
            if int(caught.split()[1], 16) & (1 << (signal.SIGUSR1 - 1)):
                found.append(int(entry))
    return found


@needs_sandbox
def test_a_folder_is_built_by_one_build_at_a_time_whatever_the_build_cache(
        tmp_path: Path) -> None:
    """Two referees with build caches of their own build one folder: the second waits for the
    first (the lock is on the folder, not in a cache), so the second builds on what the first
    left, and the folder is its owner's afterwards. (With a lock per cache, the second build
    took the first one's uid for the owner and gave the folder to it.)"""
    folder = tmp_path / "bot"
    folder.mkdir()
    folder.chmod(0o755)
    (folder / "wait.py").write_text(WAITING_BUILD)
    spec = folder / "bot.toml"
    token = f"wait-{uuid.uuid4().hex}"   # names this test's build among the machine's
    spec.write_text('name = "waiter"\ncommand = ["{python}", "wait.py"]\n'
                    f'build = ["{{python}}", "wait.py", "{token}"]\n')
    before = _owners(folder)
    code = ("import sys; from referee.bots.build import ensure_built; "
            "from referee.bots.spec import load_spec; "
            "print(ensure_built(load_spec(sys.argv[1]), sandbox=True))")

    def referee_building(cache: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", code, str(spec)], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / cache)})

    first = referee_building("cache-a")
    def started() -> list[int]:
        assert first.poll() is None, first.communicate()
        return _waiting(token)

    waiting = wait_for("the first build to start", started, timeout=300)
    lock = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:   # the running build holds the folder's lock
        with pytest.raises(BlockingIOError):
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(lock)
    second = referee_building("cache-b")
    for pid in waiting:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGUSR1)
    results = [process.communicate(timeout=600) for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0], results
    assert [out.strip() for out, _ in results] == ["True", "True"], results
    after = _owners(folder)
    assert all(after[path] == owner for path, owner in before.items()), (before, after)
    assert (folder / "starts").read_text() == "started\n" * 2


@needs_sandbox
def test_a_build_made_without_the_sandbox_is_made_again_under_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that gains the sandbox mid-season: every bot built before is built again,
    never run from a build made unconfined (files owned by the referee's user)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    spec_path = tmp_path / "bot.toml"
    spec_path.write_text('name = "twice"\ncommand = ["{python}", "main.py"]\nworkdir = "bot"\n'
                         'build = ["sh", "-c", "echo built >> builds.log"]\n')
    assert ensure_built(load_spec(spec_path), sandbox=False) is True
    assert ensure_built(load_spec(spec_path), sandbox=False) is False   # stamped
    assert ensure_built(load_spec(spec_path), sandbox=True) is True     # built again
    assert ensure_built(load_spec(spec_path), sandbox=True) is False
    assert (folder / "builds.log").read_text().count("built") == 2

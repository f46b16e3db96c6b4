"""Each test demonstrates one guarantee of the bubblewrap sandbox with real processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_support import referee
from proc_support import descendants, running
from wait_support import wait_for

from referee.bots.sandbox import NOBODY, bwrap_argv, default_env, prepare_dirs
from referee.league.folder import LeagueFolder
from referee.server.shared.clubfolder import ClubFolder

pytestmark = pytest.mark.sandbox   # fails in CI if the sandbox cannot start (conftest.py)

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not IS_ROOT, reason="needs root: RLIMIT_NPROC is only meaningful with a dedicated host uid"
)


@dataclass
class Box:
    base: Path
    bot_dir: Path
    tmp_dir: Path
    socket_dir: Path

    def argv(self, argv: list[str], **kw) -> list[str]:
        limits = {"memory_mb": None, "cpu_seconds": None, "max_processes": None}
        limits.update(kw)
        return bwrap_argv(
            argv,
            bot_dir=self.bot_dir,
            tmp_dir=self.tmp_dir,
            socket_dir=self.socket_dir,
            env=default_env(),
            **limits,
        )

    def python(
        self, code: str, *args: str, timeout: float = 30, **kw
    ) -> subprocess.CompletedProcess:
        cmd = self.argv([sys.executable, "-c", textwrap.dedent(code), *args], **kw)
        return subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )


@pytest.fixture
def box(tmp_path: Path) -> Box:
    base = tmp_path / "league"
    bots = base / "bots"
    bot_dir = bots / "alice"
    bot_dir.mkdir(parents=True)
    for d in (base, bots, bot_dir):
        d.chmod(0o755)
    (bot_dir / "main.py").write_text("print('alice')\n")
    (bot_dir / "main.py").chmod(0o644)
    # Things the bot must not see: another bot's code and the league database.
    other = bots / "bob"
    other.mkdir(mode=0o755)
    (other / "main.py").write_text("SECRET_STRATEGY = 42\n")
    (other / "main.py").chmod(0o644)
    LeagueFolder(base).store_path.write_text("not really sqlite\n")
    LeagueFolder(base).store_path.chmod(0o644)

    run = tmp_path / "run"
    tmp_dir, socket_dir = run / "tmp", run / "sock"
    if IS_ROOT:
        prepare_dirs(tmp_dir, socket_dir)
    else:
        tmp_dir.mkdir(parents=True)
        socket_dir.mkdir(parents=True)
    return Box(base, bot_dir, tmp_dir, socket_dir)


def test_runs_a_python_bot_from_its_directory(box: Box) -> None:
    res = box.python("import os, grpc; print(os.getcwd()); exec(open('main.py').read())")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(box.bot_dir), "alice"]


def test_no_network(box: Box) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        # Control: the port is reachable from outside the sandbox.
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        res = box.python(
            """
            import socket, sys
            try:
                socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
            except OSError as e:
                print("blocked", type(e).__name__)
            else:
                print("connected")
            print(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
            """,
            str(port),
        )
    finally:
        listener.close()
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["blocked ConnectionRefusedError", "['lo']"]


def test_cannot_read_outside_bot_dir(box: Box) -> None:
    repo = Path(__file__).resolve().parents[1]
    res = box.python(
        """
        import sys
        for path in sys.argv[1:]:
            try:
                open(path).read()
            except OSError as e:
                print(type(e).__name__)
            else:
                print("READ", path)
        """,
        str(box.base / "bots" / "bob" / "main.py"),
        str(LeagueFolder(box.base).store_path),
        str(repo / "pyproject.toml"),
        "/root/.bash_history",
        "/etc/shadow",
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["FileNotFoundError"] * 5


def test_cannot_write_to_bot_dir_or_outside_tmp(box: Box) -> None:
    res = box.python(
        """
        import sys
        for path in sys.argv[1:]:
            try:
                open(path, "w").write("x")
            except OSError as e:
                print(type(e).__name__)
            else:
                print("WROTE", path)
        """,
        str(box.bot_dir / "main.py"),
        str(box.bot_dir / "new.py"),
        "/usr/pwned",
        "/etc/pwned",
        "/pwned",
        "/dev/shm/pwned",
        sys.prefix + "/pwned",
    )
    assert res.returncode == 0, res.stderr
    assert "WROTE" not in res.stdout
    assert len(res.stdout.split()) == 7
    assert (box.bot_dir / "main.py").read_text() == "print('alice')\n"
    assert not (box.bot_dir / "new.py").exists()


def test_can_write_in_private_tmp(box: Box) -> None:
    res = box.python(
        """
        import os, tempfile
        with open("/tmp/scratch.txt", "w") as f:
            f.write("hello")
        with tempfile.NamedTemporaryFile(dir=None) as f:
            print(os.path.dirname(f.name))
        print(open("/tmp/scratch.txt").read())
        """
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["/tmp", "hello"]
    written = box.tmp_dir / "scratch.txt"
    assert written.read_text() == "hello"
    if IS_ROOT:
        assert written.stat().st_uid == NOBODY


def test_runs_as_non_root_without_capabilities(box: Box) -> None:
    res = box.python(
        """
        import os
        print(os.getuid(), os.geteuid(), os.getgid(), os.getegid(), os.getgroups())
        status = dict(l.split(":\\t", 1) for l in open("/proc/self/status").read().splitlines()
                      if ":\\t" in l)
        print(status["CapEff"].strip(), status["CapBnd"].strip(), status["NoNewPrivs"].strip())
        try:
            os.setuid(0)
        except PermissionError:
            print("setuid denied")
        """
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"{NOBODY} {NOBODY} {NOBODY} {NOBODY}")
    assert lines[2] == "setuid denied"
    if IS_ROOT:
        assert lines[0] == f"{NOBODY} {NOBODY} {NOBODY} {NOBODY} []"
        assert lines[1] == "0000000000000000 0000000000000000 1"
        # The real host uid is the unprivileged one, not root behind a user namespace.
        proc = subprocess.Popen(box.argv(["sleep", "30"]), stdin=subprocess.DEVNULL)
        try:
            uids = wait_for("the sandboxed sleep", lambda: {
                u for p, u in _sandboxed_sleeps(proc.pid)}, timeout=60, every=0.05)
            assert uids == {NOBODY}
        finally:
            proc.kill()
            proc.wait()


def _sandboxed_sleeps(root_pid: int) -> list[tuple[int, int]]:
    """(pid, real uid) of the `sleep` processes descending from ``root_pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("Name", "").strip() != "sleep":
            continue
        pid = int(entry)
        p = pid
        while p > 1:
            try:
                stat = Path(f"/proc/{p}/stat").read_text()
            except OSError:
                break
            p = int(stat.rsplit(")", 1)[1].split()[1])
            if p == root_pid:
                found.append((pid, int(fields["Uid"].split()[0])))
                break
    return found


def test_memory_limit_stops_big_allocation(box: Box) -> None:
    res = box.python(
        """
        small = bytearray(50 * 2**20)   # fits
        print("small ok")
        try:
            big = bytearray(400 * 2**20)
        except MemoryError:
            print("MemoryError")
        else:
            print("allocated 400 MiB")
        """,
        memory_mb=256,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["small", "ok", "MemoryError"]


@needs_root
def test_process_limit_stops_fork_bomb(box: Box) -> None:
    # Bounded "fork bomb": at most 50 children, each exits after 3 s.
    res = box.python(
        """
        import os, time
        started = 0
        try:
            for _ in range(50):
                if os.fork() == 0:
                    time.sleep(3)
                    os._exit(0)
                started += 1
        except OSError as e:
            print("fork failed", type(e).__name__, "after", started)
        else:
            print("forked", started)
        """,
        max_processes=8,
    )
    assert res.returncode == 0, res.stderr
    words = res.stdout.split()
    assert words[:3] == ["fork", "failed", "BlockingIOError"], res.stdout
    assert int(words[-1]) < 8


def test_cpu_limit_kills_busy_loop(box: Box) -> None:
    # Bounded by CPU time, not wall time: on a busy machine the loop gets little of a core,
    # and it still must not reach 5 CPU seconds under a 1-second limit.
    res = box.python(
        """
        import time
        while time.process_time() < 5:
            pass
        print("survived")
        """,
        cpu_seconds=1,
    )
    assert "survived" not in res.stdout
    assert res.returncode != 0


def test_dies_with_parent(box: Box) -> None:
    # A parent process starts the sandbox and is then SIGKILLed: the sandboxed
    # process must go away too.
    cmd = box.argv(["sleep", "60"])
    parent_code = textwrap.dedent(
        """
        import subprocess, sys, time, json
        p = subprocess.Popen(json.loads(sys.argv[1]), stdin=subprocess.DEVNULL)
        print(p.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code, json.dumps(cmd)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        bwrap_pid = int(parent.stdout.readline())
        sleeps = wait_for("the sandboxed sleep", lambda: _sandboxed_sleeps(bwrap_pid),
                          timeout=60, every=0.05)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        wait_for("bwrap and the sleep to end",
                 lambda: not running(bwrap_pid, *(p for p, _ in sleeps)), timeout=60,
                 every=0.05)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_grpc_server_in_sandbox_reachable_through_unix_socket(box: Box) -> None:
    import grpc

    sock_path = box.socket_dir / "bot.sock"
    server_code = textwrap.dedent(
        """
        import sys
        from concurrent import futures
        import grpc

        def echo(request, context):
            return b"pong:" + request

        handler = grpc.method_handlers_generic_handler(
            "test.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
        )
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((handler,))
        server.add_insecure_port("unix:" + sys.argv[1])
        server.start()
        print("ready", flush=True)
        server.wait_for_termination(timeout=30)
        """
    )
    cmd = box.argv(
        [sys.executable, "-c", server_code, str(sock_path)],
        memory_mb=1024,
        cpu_seconds=30,
        max_processes=64 if IS_ROOT else None,
    )
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with grpc.insecure_channel(f"unix:{sock_path}") as channel:
            echo = channel.unary_unary("/test.Echo/Echo")
            assert echo(b"ping", timeout=10) == b"pong:ping"
    finally:
        proc.kill()
        proc.wait()


@needs_root
def test_a_bot_that_spends_its_process_budget_does_not_stop_another_from_starting() -> None:
    """fork_holder keeps its `max_processes` spent; an honest bot with the same small budget
    starts next and plays without a strike: each sandboxed instance has a uid of its own."""
    import asyncio
    import dataclasses

    from referee.bots.runtime import Roster
    from referee.bots.spec import load_spec
    from referee.engine import preset
    from referee.game.match import play_match

    bots = Path(__file__).parent / "bots"
    holder = load_spec(bots / "fork_holder.toml")
    budget = holder.limits.max_processes
    honest = load_spec(bots / "honest.toml")
    honest = dataclasses.replace(honest, limits=dataclasses.replace(honest.limits,
                                                                     max_processes=budget))

    async def run() -> tuple[str, list, set[int]]:
        async with Roster([holder]) as first:
            await first.start()            # the holder's budget is spent before it listens
            process = first.runners["fork_holder"].instances[0].process
            held = process.log.since(0)
            async with Roster([honest]) as second:
                await second.start()
                leases = [await first.runners["fork_holder"].lease(),
                          await second.runners["honest"].lease()]
                uids = {os.stat(f"/proc/{lease.instance.process.pid}").st_uid
                        for lease in leases}
                owners = set()
                for lease in leases:
                    for pid in descendants(lease.instance.process.pid):
                        with contextlib.suppress(OSError):
                            owners.add(os.stat(f"/proc/{pid}").st_uid)
                result = await play_match(preset("classic"), leases, 5, "budget")
                for lease in leases:
                    await lease.runner.release(lease)
        assert uids == {0}                 # the guards run as the referee
        return held, [dict(seat.strikes) for seat in result.seats], owners - {0}

    held, strikes, owners = asyncio.run(run())
    match = re.search(r"HOLD: holding (\d+) children after BlockingIOError", held)
    assert match, held
    assert int(match[1]) >= budget - 50          # the budget really is spent
    assert sum(strikes[1].values()) == 0, strikes
    assert sum(strikes[0].values()) == 0, strikes
    assert len(owners) == 2 and not owners & {NOBODY}, owners   # one uid per instance


PROBE = """
import os, sys
seen = []
for path in os.environ["PROBE"].split(":"):
    try:
        open(path).read()
    except OSError as exc:
        seen.append(type(exc).__name__)
    else:
        seen.append("READ " + path)
own = bool(open("main.py").read())
sys.exit(f"probe: own={own} " + " ".join(seen))
"""


def test_an_uploaded_bot_sees_the_folder_its_spec_names_and_nothing_of_the_server(
        tmp_path: Path) -> None:
    """An upload laid out as the guides lay it out (mybot.toml beside mybot/), unpacked by the
    server's unpacker and run by `referee check` as the club's runner runs it: the bot reads its
    own folder, and neither the spec beside it, nor its upload's archive, nor another upload,
    nor the server's database."""
    import io
    import zipfile

    from referee.server.unpack import unpack_upload

    data = tmp_path / "data"
    other = ClubFolder(data).bot_uploads("bob") / "1" / "bot" / "mybot"
    other.mkdir(parents=True)
    (other / "main.py").write_text("SECRET_STRATEGY = 42\n")
    (data / "server.sqlite3").write_text("accounts\n")
    upload = ClubFolder(data).bot_uploads("alice") / "1"
    upload.mkdir(parents=True)
    secrets = [upload / "archive", upload / "bot" / "mybot.toml", other / "main.py",
               data / "server.sqlite3"]
    spec = (f'name = "alice"\ncommand = ["{{python}}", "main.py"]\nworkdir = "mybot"\n'
            f'env = {{ PROBE = "{":".join(map(str, secrets))}" }}\n')
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as zipped:
        zipped.writestr("mybot.toml", spec)
        zipped.writestr("mybot/main.py", PROBE)
    (upload / "archive").write_bytes(packed.getvalue())
    for path in (tmp_path, data, ClubFolder(data).uploads, ClubFolder(data).bot_uploads("bob"),
                 other.parents[1], other.parent, other):
        path.chmod(0o755)   # as readable as the server could ever leave them
    unpacked = unpack_upload(upload / "archive", upload / "bot")
    done = referee("check", unpacked.folder / unpacked.spec, "--preset", "classic",
                   "--no-probes", timeout=300, env={"COLUMNS": "200"}, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "probe: own=True " + " ".join(["FileNotFoundError"] * len(secrets)) in done.stdout, \
        done.stdout

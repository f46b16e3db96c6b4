"""`referee serve` as a real process: an upload cut off in the middle never becomes a version,
an upload declared too big is refused before its body is sent, a port in use is one line, a
runner that dies is started again, and SIGKILL of the server leaves nothing running."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from cli_support import free_port, referee
from proc_support import (
    ESTABLISHED,
    LISTEN,
    descendants,
    parent_of,
    running,
    runs_module,
    socket_inodes,
    tcp_sockets,
)
from runner_support import Club, sample, write_season
from server_support import ServerProcess, make_student
from wait_support import wait_for

from referee.league.store import games_stored
from referee.server.shared.clubfolder import ClubFolder


def versions(data: Path) -> int:
    db = sqlite3.connect(f"file:{data / 'server.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM club_botversion").fetchone()[0]
    finally:
        db.close()


def raw_request(port: int, head: str, body: bytes, close_early: bool) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head.encode() + body)
        if close_early:
            return b""
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_uploads_cut_off_or_too_big_never_become_versions(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    write_season(tmp_path / "data", "")   # no house bots: no check's files in DATA/tmp
    server = ServerProcess(tmp_path / "data")
    try:
        token = make_student(server.data)
        head = (f"POST /api/submit?bot=cut&filename=b.zip HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\nContent-Type: application/octet-stream\r\n"
                f"Content-Length: {{length}}\r\nConnection: close\r\n\r\n")
        # The client goes away after 50 of 200 KiB: nothing is kept.
        raw_request(server.port, head.format(length=200_000), b"PK" + bytes(50_000), True)
        # A declared size over the cap is refused at once, before any body is sent.
        answer = raw_request(server.port, head.format(length=10 ** 12), b"", False)
        status, _, rest = answer.partition(b"\r\n")
        assert b" 413 " in status, answer
        error = json.loads(rest.split(b"\r\n\r\n", 1)[1])["error"]
        assert "more than the limit" in error
        # The server still takes a good request afterwards.
        answer = raw_request(server.port, head.format(length=3), b"abc", False)
        assert b" 400 " in answer.partition(b"\r\n")[0]
        assert b"not a zip or tar archive" in answer
        assert versions(server.data) == 0
        # A form posted without its CSRF token (a cross-site request) is refused.
        answer = raw_request(server.port, "POST /join/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/x-www-form-urlencoded\r\n"
                             "Content-Length: 9\r\nConnection: close\r\n\r\n", b"code=abcd",
                             False)
        assert b" 403 " in answer.partition(b"\r\n")[0], answer[:200]
        incoming = ClubFolder(server.data).uploads / ".incoming"
        assert not incoming.exists() or list(incoming.iterdir()) == []
        assert list((server.data / "tmp").iterdir()) == []
    finally:
        assert server.stop() == 0, server.output()


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = referee("serve", "--data", tmp_path / "data", "--port", str(port), timeout=120,
                       check=False)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def runner_pids(parent: int) -> set[int]:
    """The season runners `referee serve` (pid `parent`) has running now (each under its
    guard: python -I -c ... referee.server.runner ...)."""
    return {pid for pid, line in descendants(parent).items()
            if runs_module(line, "referee.server.runner")}


def test_a_runner_that_dies_is_started_again(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        first = wait_for("the runner", lambda: runner_pids(server.proc.pid))
        os.kill(next(iter(first)), signal.SIGKILL)
        wait_for("the restart notice", lambda: "the season runner stopped (killed by SIGKILL); "
                                               "starting it again" in server.output())
        second = wait_for("a new runner", lambda: runner_pids(server.proc.pid) - first)
        assert second and not second & first
        with urllib.request.urlopen(f"{server.url}/login/", timeout=30) as answer:
            assert answer.status == 200   # the web process went on meanwhile
    finally:
        assert server.stop() == 0, server.output()
    assert runner_pids(server.proc.pid) == set()


def stored_indexes(db: Path) -> set[int]:
    """The schedule indexes of the games the league database `db` holds."""
    store = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {idx for (idx,) in store.execute("SELECT idx FROM games")}
    finally:
        store.close()


def test_sigkill_of_the_server_takes_its_processes_along_and_a_restart_loses_nothing(
        tmp_path: Path) -> None:
    """SIGKILL of `referee serve` itself in the middle of games: its web server, runner and
    bots go too (no orphan keeps the port or plays the season on beside the next start), a
    second runner on the same data folder waits for the first, and a restart plays on with
    every game stored once and none missing."""
    data = tmp_path / "data"
    club = Club(data)
    write_season(data, """
        seed = 7
        players = 2
        round_games = 4
        refit_seconds = 1
    """)
    club.ann_and_ben_passed()
    club.close()
    db = ClubFolder(data).season_league.store_path
    server = ServerProcess(data)
    try:
        wait_for("games", lambda: games_stored(db) >= 4)
        # A runner started by hand beside the server's waits for the lock instead of playing.
        second = subprocess.Popen([sys.executable, "-m", "referee.server.runner", "--data",
                                   str(data)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        try:
            assert second.stderr is not None
            line = second.stderr.readline()
            assert "another season runner (pid " in line and "waiting for it to stop" in line
            assert second.poll() is None
        finally:
            second.kill()
            second.wait()
        below = descendants(server.proc.pid)
        assert runner_pids(server.proc.pid)
        assert any("referee.server.web" in line for line in below.values())
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        wait_for("the server's processes to stop", lambda: not running(*below), timeout=240)
        at_kill = stored_indexes(db)
    finally:
        if server.proc.poll() is None:
            server.stop()
    again = ServerProcess(data, port=server.port)     # the port is free again
    try:
        # The games in flight at the kill are played again, and play goes on past them.
        wait_for("games after the restart", lambda: stored_indexes(db) >= set(
            range(max(at_kill) + 1)) and len(stored_indexes(db)) >= len(at_kill) + 4)
        assert "another season runner" not in again.output()
    finally:
        assert again.stop() == 0, again.output()
    assert stored_indexes(db) >= at_kill        # nothing stored before the kill was lost


def scheduling(pid: int) -> tuple[str, int, str] | None:
    """A process's CPU cgroup (v1 `cpu` or v2 line's path), its session and its autogroup's
    line; None once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        session = int((Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1]).split()[3])
        autogroup = Path(f"/proc/{pid}/autogroup").read_text().strip()
    except (OSError, ValueError, IndexError):
        return None
    cpu = [line.split(":", 2)[2] for line in lines
           if "cpu" in line.split(":")[1].split(",") or line.startswith("0::")]
    return cpu[0] if cpu else "", session, autogroup


@pytest.mark.parametrize("cgroup", ["on", "off"])
def test_the_season_and_its_checks_run_below_the_pages(tmp_path: Path, monkeypatch,
                                                        cgroup: str) -> None:
    """The runner and everything it starts (bots, a check) run in the season's one scheduling
    group, which the web processes are not in: a cgroup where one can be made (here as root),
    else sessions at the season's autogroup nice. Where cgroups can be made the web server's
    processes run in one of their own, of a greater CPU weight than the season's. A page
    answers meanwhile."""
    from referee.server.priority import (
        CGROUP_ENV,
        SEASON_CPU_WEIGHT,
        SEASON_NICE,
        WEB_CPU_WEIGHT,
        season_group,
    )

    monkeypatch.setenv(CGROUP_ENV, cgroup)
    if cgroup == "on":
        probe = season_group()
        probe.remove()
        if probe.cgroup is None:
            pytest.skip("no cgroup can be made here (not root, no delegated cpu controller)")
    data = tmp_path / "data"
    club = Club(data)
    write_season(data, """
        seed = 7
        players = 2
        round_games = 4
    """)
    club.ann_and_ben_passed()
    club.version(club.student("cid"), "cid-bot", sample("random"))   # its check is queued
    club.close()
    server = ServerProcess(data)
    seen: dict[str, int] = {}
    starting: dict[int, str] = {}   # guard sessions seen before they lowered themselves
    try:
        def look() -> bool:
            """Every process below the runner's guard is where it belongs; True once a check
            and a season bot were among them."""
            below = descendants(server.proc.pid)
            guards = {parent_of(pid) for pid in runner_pids(server.proc.pid)} - {None}
            for guard in guards:
                for pid in {guard, *descendants(guard)}:
                    found = scheduling(pid)
                    line = below.get(pid, "")
                    if found is None:
                        continue
                    group, session, autogroup = found
                    if cgroup == "on":
                        assert "referee-season-" in group, (line, found)
                    elif session == pid and "referee/bots/guard.py" in line:
                        # the sessions the club starts; a sandbox's own (bubblewrap's
                        # --new-session) is beyond autogroup's reach (docs/server.md). A
                        # guard lowers its session as its first step: one seen just after
                        # its start is checked again below.
                        if autogroup.endswith(f"nice {SEASON_NICE}"):
                            seen["session"] = pid
                        else:
                            starting[pid] = line
                    if "--build-output" in line:
                        seen["check"] = pid
                    if any(word.endswith("main.py") for word in line.split()):
                        seen["bot"] = pid
            for pid, line in below.items():
                if "referee.server.web" in line and (found := scheduling(pid)):
                    assert "referee-season-" not in found[0] and not found[2].endswith(
                        f"nice {SEASON_NICE}"), (line, found)
                    assert ("referee-web-" in found[0]) == (cgroup == "on"), (line, found)
                    seen["web"] = pid
            wanted = {"check", "bot", "web"} | ({"session"} if cgroup == "off" else set())
            return wanted <= seen.keys()

        wait_for("a check and a season bot below the runner", look, timeout=600)
        for pid, line in starting.items():
            wait_for(f"the guard {line!r} at the season's nice", lambda pid=pid: (
                (found := scheduling(pid)) is None or found[2].endswith(
                    f"nice {SEASON_NICE}")), timeout=120)
        with urllib.request.urlopen(f"{server.url}/login/", timeout=60) as answer:
            assert answer.status == 200
        made = re.search(r"run in cgroup (\S+) ", server.output())
        web = re.search(r"the web server runs in cgroup (\S+) ", server.output())
        assert (made is not None) == (web is not None) == (cgroup == "on"), server.output()
        if made and web:
            # The pages first: the web's weight is WEB_CPU_WEIGHT to the season's SEASON_CPU_WEIGHT.
            assert (cpu_weight(Path(web.group(1))) * SEASON_CPU_WEIGHT
                    == cpu_weight(Path(made.group(1))) * WEB_CPU_WEIGHT > 0)
    finally:
        assert server.stop() == 0, server.output()
    for group in (made, web):
        if group:
            assert not Path(group.group(1)).exists()   # removed once the server stopped


def cpu_weight(group: Path) -> int:
    """A cgroup's CPU weight: cgroup v2's cpu.weight, or v1's cpu.shares."""
    for name in ("cpu.weight", "cpu.shares"):
        if (group / name).is_file():
            return int((group / name).read_text())
    raise AssertionError(f"{group} has no CPU weight")


CONNECTIONS = 24    # all on one of two workers by chance: once in 2**23 runs


def listeners_below(pid: int, port: int) -> dict[int, set[int]]:
    """The processes below `pid` that hold a socket listening on `port`, each with the inodes
    of those sockets."""
    on_port = tcp_sockets(port)
    held = {child: {inode for inode in socket_inodes(child) if on_port.get(inode) == LISTEN}
            for child in descendants(pid)}
    return {child: inodes for child, inodes in held.items() if inodes}


def test_each_web_worker_listens_on_a_socket_of_its_own_and_connections_spread(
        tmp_path: Path) -> None:
    """Each web worker holds a listening socket of its own on the server's port (SO_REUSEPORT:
    the kernel spreads new connections across them), and connections that many clients keep
    open reach every worker. With uvicorn's --workers the workers shared one socket, and the
    first to wake accepted nearly every student's connection while the other idled."""
    server = ServerProcess(tmp_path / "data", "--workers", "2")
    clients: list[socket.socket] = []
    try:
        # Each worker warms up before it listens (club/warm.py): the server answers once the
        # first listens, the second may still be warming.
        held = wait_for("both workers listening", lambda: (
            found if len(found := listeners_below(server.proc.pid, server.port)) >= 2
            else None), server, timeout=300)
        assert len(held) == 2, held
        assert all(len(inodes) == 1 for inodes in held.values()), held
        assert len(set.union(*held.values())) == 2, held     # not one socket shared
        # Connections that send nothing yet: the server keeps them open (no keep-alive timer
        # runs before a first request), so counting them does not race a timeout.
        clients = [socket.create_connection(("127.0.0.1", server.port), timeout=60)
                   for _ in range(CONNECTIONS)]

        def accepted() -> dict[int, int] | None:
            """Connections on the port each worker holds, once they hold them all."""
            on_port = tcp_sockets(server.port)
            counts = {pid: sum(on_port.get(inode) == ESTABLISHED for inode in socket_inodes(pid))
                      for pid in held}
            return counts if sum(counts.values()) == CONNECTIONS else None

        counts = wait_for("the web workers to accept every connection", accepted, server,
                          timeout=300)
        assert all(counts.values()), counts
        with urllib.request.urlopen(f"{server.url}/login/", timeout=60) as answer:
            assert answer.status == 200
    finally:
        for client in clients:
            client.close()
        assert server.stop() == 0, server.output()

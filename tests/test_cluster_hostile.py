"""A hostile bot on a real `referee serve --cluster local:2`: a bot whose check passed and that
then exits at every start on the workers forfeits its games and is taken out of the season
with its reason on its owner's pages, while the season runner (the same process) goes on, a
queued check gets its verdict and a new upload of the bot comes back. The workers' bots write
at most the season's `write_max_mb`; the cluster serves no dashboard; a test game against the
hostile bot shows its requester the reason, never the other student's output. On one machine
(the runner's own bots) the same bot is taken out alike."""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest
from proc_support import descendants
from runner_support import ROOT, Club, RunnerProcess, sample, season_rows, write_season
from server_support import ServerProcess, WebClient
from wait_support import wait_for

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PASSWORD = "a long password 1"   # Club.student's
DASHBOARD_PORT = 8787
WRITE_LIMIT_MB = 4


def secret_bot(folder: Path, secret: str) -> Path:
    """A bot that prints `secret` on stderr and exits at once, at every start."""
    folder.mkdir(parents=True)
    (folder / "main.py").write_text(
        f"import sys\nprint({secret!r}, file=sys.stderr, flush=True)\nsys.exit(3)\n")
    return folder / "main.py"


def big_writer(folder: Path) -> Path:
    """The sample random bot that writes 20 MiB into its /tmp at its first decision."""
    folder.mkdir(parents=True)
    source = (ROOT / "sample_bots" / "random" / "main.py").read_text()
    source = source.replace("    def choose(self, view):\n", (
        "    def choose(self, view):\n"
        "        if not getattr(self, 'wrote', False):\n"
        "            self.wrote = True\n"
        "            with open('/tmp/big', 'wb') as out:\n"
        "                for _ in range(20):\n"
        "                    out.write(bytes(1 << 20))\n"), 1)
    (folder / "main.py").write_text(source)
    return folder / "main.py"


def runner_pid(server: ServerProcess) -> int | None:
    """The season runner below `server`, if it runs."""
    found = [pid for pid, line in descendants(server.proc.pid).items()
             if "referee.server.runner" in line and "multiprocessing" not in line]
    return min(found) if found else None


def listening_ports(pids: set[int]) -> set[int]:
    """The TCP ports the processes `pids` listen on (their sockets in /proc/net/tcp{,6})."""
    inodes = set()
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        try:
            links = [fd.readlink() for fd in fds.iterdir()]
        except OSError:
            continue
        inodes |= {str(link)[8:-1] for link in links if str(link).startswith("socket:[")}
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:   # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def http_status(port: int, path: str) -> str:
    """The status line a plain HTTP GET of `path` gets on 127.0.0.1:`port` ('' if none)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
            return conn.recv(200).decode(errors="replace").split("\r\n", 1)[0]
    except OSError:
        return ""


def games_of(data: Path, name: str) -> list[tuple[int, list[str], list[bool], list[dict], str]]:
    """(index, bots, forfeited, strikes, worker) of the stored games `name` sat at."""
    rows = season_rows(data, "SELECT g.idx, g.bots, g.forfeited, g.strikes, w.worker FROM games g "
                             "LEFT JOIN game_workers w ON w.idx = g.idx ORDER BY g.idx")
    return [(idx, json.loads(bots), json.loads(out), json.loads(strikes), worker)
            for idx, bots, out, strikes, worker in rows if name in json.loads(bots)]


def test_a_bot_that_cannot_start_on_the_workers_leaves_the_season_and_the_runner_goes_on(
        tmp_path: Path) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, f"""
        seed = 3
        players = 2
        round_games = 2
        check_concurrency = 1
        write_max_mb = {WRITE_LIMIT_MB}
        [limits]
        startup_ms = 180000   # a busy machine's honest bots start in time
    """)
    ann, mal, carol, wes = (club.student(name) for name in ("ann", "mal", "carol", "wes"))
    club.version(ann, "ann-bot", sample("random"), passed=True)
    # Its check passed (as a bot that counts its starts passes it); every start from now on
    # exits at once.
    club.version(mal, "mal-bot", secret_bot(tmp_path / "mal", secret), passed=True)
    club.version(wes, "wes-bot", big_writer(tmp_path / "wes"), passed=True)
    server = ServerProcess(data, "--cluster", "local:2")
    try:
        first = wait_for("the season runner", lambda: runner_pid(server), server)

        def same_runner(test):  # noqa: ANN001, ANN202 - a wait that ends once the runner changed
            def check():  # noqa: ANN202
                assert runner_pid(server) == first, f"the runner stopped:\n{server.output()}"
                return test()
            return check

        carol_check = club.version(carol, "carol-bot", sample("greedy"))   # queued
        wait_for("mal-bot taken out", same_runner(lambda: club.value(
            "BotVersion.objects.get(league_name='mal-bot.v1').season_state == 'disabled'")),
            server)
        verdict = wait_for("carol's check verdict", same_runner(lambda: club.value(
            f"BotVersion.objects.get(pk={carol_check}).check_state in ('passed', 'failed') "
            f"and BotVersion.objects.get(pk={carol_check}).check_state")), server)
        # The workers' bots write at most the season's limit: the writer is stopped there at
        # its first decision, in its first game on a worker.
        wes_games = wait_for("wes-bot's games on the workers", same_runner(lambda: [
            (out[bots.index("wes-bot.v1")], strikes[bots.index("wes-bot.v1")])
            for _, bots, out, strikes, worker in games_of(data, "wes-bot.v1") if worker]),
            server)
        # No dashboard: nothing of the server's listens on 8787 or answers HTTP as dask's.
        tree = {server.proc.pid, *descendants(server.proc.pid)}
        ports = listening_ports(tree) - {server.port}
        answers = {port: http_status(port, "/health") for port in ports}
        # A test game against mal-bot, asked by ann, played on a worker.
        request = club(f"""
            from django.db import transaction
            with transaction.atomic():
                game = TestGame.objects.create(
                    requester_id={ann}, version=BotVersion.objects.get(league_name="ann-bot.v1"))
                game.opponents.add(BotVersion.objects.get(league_name="mal-bot.v1"))
            result = game.pk
        """)
        wait_for("the test game", lambda: club.value(
            f"TestGame.objects.get(pk={request}).finished_at is not None"), server, timeout=600)
        ann_web, mal_web = WebClient(server.url), WebClient(server.url)
        ann_web.sign_in("ann", PASSWORD)
        mal_web.sign_in("mal", PASSWORD)
        ann_pages = [ann_web.get(f"/testgames/{request}/").text, ann_web.get("/testgames/").text]
        mal_pages = [mal_web.get("/").text, mal_web.get("/bots/mal-bot/").text]
        # A new upload of the bot comes back.
        club.version(mal, "mal-bot", sample("random"), passed=True)
        wait_for("mal-bot v2 playing", lambda: games_of(data, "mal-bot.v2"), server,
                 timeout=900)
        last = runner_pid(server)
        error = club.value(
            "BotVersion.objects.get(league_name='mal-bot.v1').error")
        test_error = club.value(f"TestGame.objects.get(pk={request}).error")
    finally:
        server.stop()
        club.close()
    # The runner never stopped: the same process throughout.
    assert last == first, server.output()
    # No error while it ran (stopping it, dask may log the games it cancels).
    running = server.output().split("stopping: ")[0]
    assert "Traceback" not in running, running
    assert error.startswith("taken out of the season: its bot could not be started 3 times "
                            "in a row"), error
    assert secret not in error   # the reason, not its output (shown on every page of the bot)
    for page in mal_pages:       # its owner reads why, on My bots and on the bot's page
        assert "taken out of the season" in page, page
    assert verdict in ("passed", "failed")
    assert any(out or sum(strikes.values()) for out, strikes in wes_games), wes_games
    # mal-bot's games before it left were forfeits, never a stopped runner.
    assert all(out[bots.index("mal-bot.v1")] for _, bots, out, _, _ in games_of(
        data, "mal-bot.v1"))
    assert DASHBOARD_PORT not in ports, ports
    assert not [port for port, line in answers.items() if " 200 " in f"{line} "], answers
    # ann sees why the game could not be played, never mal's output.
    assert "exited during start-up" in test_error and secret not in test_error, test_error
    for page in ann_pages:
        assert secret not in page


def test_on_one_machine_too_a_bot_that_cannot_start_is_taken_out(tmp_path: Path) -> None:
    """The same mechanism without a cluster: the runner's own bots. mal-bot's forfeits stop
    at its third failed start (each tried again with the bots started anew), well before the
    12 games it would forfeit if it stayed."""
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, "seed = 4\nplayers = 2\nround_games = 2\n")
    ann, ben, mal = (club.student(name) for name in ("ann", "ben", "mal"))
    club.version(ann, "ann-bot", sample("random"), passed=True)
    club.version(ben, "ben-bot", sample("greedy"), passed=True)
    club.version(mal, "mal-bot", secret_bot(tmp_path / "mal", "local secret"), passed=True)
    runner = RunnerProcess(data)
    try:
        wait_for("mal-bot taken out, or 12 of its games", lambda: club.value(
            "BotVersion.objects.get(league_name='mal-bot.v1').season_state == 'disabled'")
            or len(games_of(data, "mal-bot.v1")) >= 12, runner)
        error = club.value("BotVersion.objects.get(league_name='mal-bot.v1').error")
        # Marked taken out, as a bot that forfeits game after game is: the organiser may put
        # it back (test_server_takenout.py, test_server_forfeits.py).
        marked = club.value("BotVersion.objects.get(league_name='mal-bot.v1').taken_out")
        wait_for("the others play on", lambda: len(games_of(data, "ann-bot.v1")) >= 4, runner)
        runner.alive()
    finally:
        runner.stop()
        club.close()
    assert error.startswith("taken out of the season: its bot could not be started 3 times "
                            "in a row: exited during start-up"), error
    assert marked is True
    assert "local secret" not in error
    assert all(out[bots.index("mal-bot.v1")] for _, bots, out, _, _ in games_of(
        data, "mal-bot.v1"))

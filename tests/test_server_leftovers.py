"""What a real `referee serve` leaves and shows: a test game against another student's bot
that prints a secret and exits at start shows its requester why, never that output (its owner
may read it); the bot instance folders of a server killed with everything it ran (SIGKILL, a
power cut) are gone after its next start."""

from __future__ import annotations

import os
import signal
import uuid
from pathlib import Path

import pytest
from proc_support import descendants
from runner_support import Club, sample, write_season
from server_support import ServerProcess, WebClient
from wait_support import wait_for

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PASSWORD = "a long password 1"   # Club.student's


def secret_bot(folder: Path, secret: str) -> Path:
    """A bot that prints `secret` on stderr and exits at once, at every start."""
    folder.mkdir(parents=True)
    (folder / "main.py").write_text(
        f"import sys\nprint({secret!r}, file=sys.stderr, flush=True)\nsys.exit(3)\n")
    return folder / "main.py"


def test_a_test_game_shows_its_requester_no_output_of_another_students_bot(
        tmp_path: Path) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, "seed = 3\nplayers = 2\n")
    alice, bob = club.student("alice"), club.student("bob")
    club.version(alice, "alice-bot", sample("random"), passed=True)
    club.version(bob, "bob-bot", secret_bot(tmp_path / "bob", secret), passed=True)
    club.season_state("paused")   # the test game alone
    server = ServerProcess(data)
    try:
        games = []
        for requester, mine, theirs in ((alice, "alice-bot.v1", "bob-bot.v1"),
                                        (bob, "bob-bot.v1", "alice-bot.v1")):
            games.append(club(f"""
                from django.db import transaction
                with transaction.atomic():   # as the page queues it: with its opponents
                    game = TestGame.objects.create(
                        requester_id={requester},
                        version=BotVersion.objects.get(league_name={mine!r}))
                    game.opponents.add(BotVersion.objects.get(league_name={theirs!r}))
                result = game.pk
            """))
        for game in games:
            wait_for("the test game", lambda game=game: club.value(
                f"TestGame.objects.get(pk={game}).finished_at is not None"), server)
        errors = [club.value(f"TestGame.objects.get(pk={game}).error") for game in games]
        pages = {}
        for name, game in zip(("alice", "bob"), games, strict=True):
            web = WebClient(server.url)
            web.sign_in(name, PASSWORD)
            pages[name] = web.get(f"/testgames/{game}/").text + web.get("/testgames/").text
    finally:
        server.stop()
        club.close()
    # alice reads why her game was not played, without bob's output.
    assert "exited during start-up" in errors[0] and secret not in errors[0], errors
    assert "exited during start-up" in pages["alice"] and secret not in pages["alice"]
    # bob, the bot's owner, may read his own bot's output.
    assert secret in errors[1], errors


def instance_folders(data: Path) -> set[str]:
    """The bot instance folders in DATA/tmp (a bot's socket and private /tmp)."""
    return {path.name for path in (data / "tmp").glob("referee-*")
            if (path / "tmp").is_dir() or (path / "bot.sock").exists()}


def test_the_instance_folders_of_a_killed_server_are_gone_after_its_next_start(
        tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, "seed = 3\nplayers = 2\nround_games = 4\n")
    club.ann_and_ben_passed()
    server = ServerProcess(data)
    try:
        left = wait_for("bots running", lambda: instance_folders(data), server)
        # A power cut: the server, its runner, the guards and the bots, all at once.
        tree = [server.proc.pid, *descendants(server.proc.pid)]
        for pid in tree:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        server.proc.wait(timeout=60)
        wait_for("the killed processes gone", lambda: all(_state(pid) in "ZX" for pid in tree))
        stayed = left & {path.name for path in (data / "tmp").glob("referee-*")}
        assert stayed, "the kill left no folder: nothing to show"
        again = ServerProcess(data)
        try:
            wait_for("the leftovers removed", lambda: not stayed & {
                path.name for path in (data / "tmp").glob("referee-*")}, again)
            said = again.output()
        finally:
            again.stop()
    finally:
        server.stop()
        club.close()
    assert "folders a stopped runner left" in said, said


def _state(pid: int) -> str:
    """The process's state letter (Z: a zombie), "" once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""

"""The club server's season runner on a real dask cluster: a `dask scheduler` and two `dask
worker`s on loopback, all three speaking mutual TLS with a CA of their own, and the runner as
a real subprocess (`cluster = "tls://..."` in its season file, the credentials in dask's
configuration). The season's games, the checks and a test game run on the workers, a command
bot and a container bot handed in as an image archive alike; the runner runs no bot."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from container_support import TEST_REPO, bot_image, need_runtime
from net_support import dask_scheduler, dask_worker, tls_credentials
from proc_support import descendants
from runner_support import Club, RunnerProcess, sample, season_rows, write_season
from wait_support import wait_for

from referee.bots.archive import archive_image_id

pytestmark = pytest.mark.sandbox

WORKERS = {"w1", "w2"}
BOT_PROCESSES = ("referee/bots/guard.py", "bwrap", "podman", "main.py")   # what runs a bot


def image_archive(folder: Path, tmp_path: Path) -> Path:
    """The honest test bot as an image archive in `folder`, readable by root only (as an
    upload stores it), under a tag that is removed again: the file is all there is."""
    runtime = need_runtime()
    image = bot_image(runtime, tmp_path / "image-context", "honest", TEST_REPO)
    tag = f"localhost/referee-test-club-cluster:{uuid.uuid4().hex[:12]}"
    folder.mkdir()
    path = folder / "archive.tar"
    subprocess.run([runtime, "tag", image, tag], check=True, capture_output=True)
    try:
        subprocess.run([runtime, "save", "-o", str(path), tag], check=True,
                       capture_output=True, timeout=600)
    finally:
        subprocess.run([runtime, "rmi", tag], capture_output=True, check=False)
    path.chmod(0o600)
    return path


def test_a_club_on_a_tls_cluster_checks_and_plays_every_bot_on_its_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "image-context").mkdir()
    archive = image_archive(tmp_path / "boxed", tmp_path)
    options, env = tls_credentials(tmp_path)
    for key, value in env.items():        # the runner's dask configuration: its credentials
        monkeypatch.setenv(key, value)
    with dask_scheduler(tmp_path, "--protocol", "tls", *options) as address, \
            dask_worker(tmp_path, address, "w1", *options), \
            dask_worker(tmp_path, address, "w2", *options):
        assert address.startswith("tls://127.0.0.1:"), address
        data = tmp_path / "club"
        club = Club(data)
        write_season(data, f"""
            seed = 3
            players = 2
            round_games = 2
            max_rounds = 1
            check_concurrency = 2
            cluster = "{address}"
        """)
        alice, bob = club.student("alice"), club.student("bob")
        club.version(alice, "alice-bot", sample("random"))
        club.version(bob, "boxed-bot", archive.parent, spec_text=(
            'name = "boxed-bot"\nimage_archive = "archive.tar"\n[limits]\nstartup_ms = 60000\n'))
        runner = RunnerProcess(data)
        seen: dict[int, str] = {}     # every process ever seen below the runner
        looks = []                    # when the tree was read (on a cluster it may be empty)

        def watched(test):  # noqa: ANN001, ANN202 - a wait_for test that also looks at the tree
            def look():  # noqa: ANN202
                seen.update(descendants(runner.proc.pid))
                looks.append(runner.proc.poll() is None)
                return test()
            return look

        try:
            wait_for("both checks passed", watched(lambda: club.value(
                "BotVersion.objects.filter(check_state='passed').count()") == 2), runner)
            wait_for("the season's games", watched(lambda: len(stored(data)) >= 2), runner)
            request = club(f"""
                from django.db import transaction
                with transaction.atomic():   # as the page queues it: with its opponents
                    game = TestGame.objects.create(
                        requester_id={bob},
                        version=BotVersion.objects.get(league_name="boxed-bot.v1"))
                    game.opponents.add(BotVersion.objects.get(league_name="alice-bot.v1"))
                result = game.pk
            """)
            wait_for("the test game", watched(lambda: club.value(
                f"TestGame.objects.get(pk={request}).finished_at is not None")), runner)
            record_file, failed = club.value(
                f"TestGame.objects.filter(pk={request}).values_list('record_file', 'error')[0]")
            assert record_file, failed
            record = json.loads((data / record_file).read_text())
            lines = {name: club.value(
                f"list(CheckLine.objects.filter(run__version__league_name='{name}')"
                ".order_by('seq').values_list('text', flat=True))")
                for name in ("alice-bot.v1", "boxed-bot.v1")}
            notices = club.value("list(Notice.objects.values_list('text', flat=True))")
        finally:
            runner.stop()
            club.close()
    said = runner.output()
    assert "Traceback" not in said and "Warning" not in said, said
    # Each check ran on a worker, and passed there.
    for name, text in lines.items():
        assert text[0] in {f"on cluster worker {w}:" for w in WORKERS}, (name, text[:3])
        assert text[1].startswith("referee check") and "conforms" in text[-1], (name, text)
    # Every game of the season was played on a worker, the container bot's too, by the image
    # in its archive.
    games = stored(data)
    assert {worker for _, _, worker in games} <= WORKERS and len(games) >= 2
    ident = archive_image_id(archive)
    assert any("boxed-bot.v1" in bots and f"image-archive:archive.tar@sha256:{ident}" in versions
               for bots, versions, _ in games), games
    assert not [n for n in notices if "could not start" in n], notices
    # The test game, too; with the container bot's output shown to its owner.
    assert record["worker"] in WORKERS
    assert record["test_game"]["seats"] == ["boxed-bot.v1", "alice-bot.v1"]
    assert record["output"][1].startswith("(another student's bot")
    # And the runner's machine ran no bot: nothing below the runner ever ran one.
    # The tree was read while the runner ran (it may hold no process at all: on a cluster it
    # starts none of its own).
    assert any(looks), "the runner's process tree was never read while it ran"
    # (The runner's one look at whether the sandbox works here, `true` in a sandbox of its own
    # in an `sbx-probe-` folder, is no bot.)
    bots = {pid: line for pid, line in seen.items()
            if any(m in line for m in BOT_PROCESSES) and "sbx-probe-" not in line}
    assert not bots, bots


def stored(data: Path) -> list[tuple[str, str, str]]:
    """(bots, versions, worker) of each stored game of the season."""
    return season_rows(data, "SELECT g.bots, g.versions, w.worker FROM games g "
                             "LEFT JOIN game_workers w ON w.idx = g.idx ORDER BY g.idx")


def test_a_check_on_a_worker_keeps_its_time_limit_and_leaves_nothing_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that never ends, checked on a worker: the check fails at the season's time
    limit with the line a local check gives, and its build is gone from the machine."""
    options, env = tls_credentials(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    forever = f"sleep {3600 + uuid.uuid4().int % 100000}"   # this test's own, to look for
    with dask_scheduler(tmp_path, "--protocol", "tls", *options) as address, \
            dask_worker(tmp_path, address, "w1", *options):
        data = tmp_path / "club"
        club = Club(data)
        write_season(data, f"""
            check_timeout_s = 20
            cluster = "{address}"
        """)
        hang = club.version(club.student("han"), "hang-bot", sample("random"), spec_text=(
            f'name = "hang"\ncommand = ["{{python}}", "main.py"]\n'
            f'build = {json.dumps(forever.split())}\n'))
        runner = RunnerProcess(data)
        try:
            wait_for("the build running on the worker", lambda: building(forever), runner)
            summary = wait_for("the hanging check stopped", lambda: club.value(
                f"CheckRun.objects.filter(version_id={hang}, state='failed')"
                ".values_list('summary', flat=True).first()"), runner)
            lines = club.value(f"list(CheckLine.objects.filter(run__version_id={hang})"
                               ".order_by('seq').values_list('text', flat=True))")
            wait_for("the build gone", lambda: not building(forever), runner)
        finally:
            runner.stop()
            club.close()
    assert summary.startswith("stopped after the check's time limit of 20 s"), summary
    assert lines[0] == "on cluster worker w1:" and lines[-1] == summary, lines


def building(command: str) -> list[int]:
    """The processes on this machine (any namespace) whose command line is `command`."""
    return [pid for pid, line in descendants(1).items() if line == command]

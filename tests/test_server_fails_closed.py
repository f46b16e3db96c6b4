"""The club server fails closed and its defaults are safe (docs/security.md, round 5): a real
`referee serve` on a machine where bubblewrap cannot start (the organiser's REFEREE_BWRAP names
a program that is not there) stores uploads but runs none of their code, saying so in one line
to the organiser and to the student, unless the season file says `unconfined_uploads = true`
(then a banner on every organiser page); and with the season file the server writes, a spec
that asks for 30,000 processes, 1 TiB and one-hour decisions gets the default ceilings."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import REFEREE
from server_support import (
    ServerProcess,
    WebClient,
    make_student,
    signed_in_organiser,
    signed_in_student,
    web_upload,
)
from wait_support import wait_for

from referee.bots.confinement import NO_SANDBOX
from referee.bots.sandbox import BWRAP_ENV
from referee.server.shared.clubfolder import ClubFolder

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

# A bot whose build writes a marker at a host path (unconfined, it lands there; in the sandbox
# it would land in its private /tmp; not run, nowhere), then plays as the random sample bot.
BUILD = "import sys\nopen(sys.argv[1], 'w').write('built')\n"

# A bot that says which limits it runs under, then exits: its check fails with that line.
PROBE = ("import resource, sys\n"
         "memory = resource.getrlimit(resource.RLIMIT_AS)[0]\n"
         "processes = resource.getrlimit(resource.RLIMIT_NPROC)[0]\n"
         "print(f'probe: memory={memory >> 20}MiB processes={processes}', flush=True)\n"
         "sys.exit(3)\n")
GREEDY_LIMITS = ("[limits]\ndecision_ms = 3600000\ngame_bank_ms = 86400000\n"
                 "startup_ms = 600000\nmemory_mb = 1048576\ncpu_seconds = 86400\n"
                 "max_processes = 30000\nbuild_seconds = 86400\n")


@pytest.fixture
def data() -> Iterator[Path]:
    """A fresh data folder's path (not made: `referee serve` makes it)."""
    root = Path(tempfile.mkdtemp(prefix="closed-", dir="/tmp"))
    try:
        yield root / "club"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def marking_bot(folder: Path, marker: Path, name: str = "marking") -> Path:
    """A zip of a random bot `name` whose build writes `marker`."""
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "sample_bots/random/main.py", folder / "main.py")
    (folder / "build.py").write_text(BUILD)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "main.py"]\n'
        f'build = ["{{python}}", "build.py", "{marker}"]\n')
    return zipped(folder)


def zipped(folder: Path) -> Path:
    archive = folder.with_suffix(".zip")
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.iterdir()):
            out.write(path, path.name)
    return archive


def no_bwrap_server(data: Path, season: str = "") -> ServerProcess:
    """`referee serve` whose organiser points REFEREE_BWRAP at a program that is not there;
    `season`: the season file's text, written before its first start."""
    if season:
        data.mkdir(parents=True)
        (data / "season.toml").write_text(season)
    env = {**os.environ, BWRAP_ENV: "/nonexistent/bwrap"}
    return ServerProcess(data, env=env)


def serve_lines(server: ServerProcess, text: str) -> list[str]:
    """The lines of `referee serve` itself holding `text` (the runner, which says it again at
    each of its starts, prefixes its own with `runner`)."""
    return [line for line in server.output().splitlines()
            if text in line and not line.startswith("runner ")]



def state(client: WebClient, version: int) -> dict[str, Any]:
    answer = client.get(f"/api/versions/{version}")
    assert answer.status == 200, answer.text[:300]
    return answer.json()


def house_checks_done(server: ServerProcess) -> bool:
    """Every house bot's check has its verdict (the runner's check queue went past them)."""
    import sys

    from runner_support import club_env

    code = ("import django; django.setup()\n"
            "from referee.server.club.models import BotVersion\n"
            "versions = BotVersion.objects.filter(bot__house=True)\n"
            "print(versions.count(), versions.exclude(check_state__in=['passed', 'failed'])"
            ".count())\n")
    done = subprocess.run([sys.executable, "-c", code], env=club_env(server.data),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    total, waiting = map(int, done.stdout.split())
    return total > 0 and waiting == 0


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


def test_without_a_sandbox_uploads_are_stored_but_their_code_never_runs(
        data: Path, tmp_path: Path) -> None:
    server = no_bwrap_server(data, 'house_bots = ["random"]\n')
    try:
        said = serve_lines(server, "uploads are stored but not built or run")
        assert len(said) == 1 and "bubblewrap (bwrap) is not installed or does not work here" \
            in said[0] and "unconfined_uploads = true" in said[0], server.output()
        boss = signed_in_organiser(server)
        page = text_of(boss.get("/organiser/").text)
        assert "uploads are stored but not built or run" in page, page[:2000]
        marker = tmp_path / "built"
        carol = signed_in_student(server)
        version, landed = web_upload(server.url, "carol", marking_bot(tmp_path / "bot", marker))
        assert version is not None, landed[:2000]
        wait_for("the held check's line", lambda: state(carol, version)["lines"], server,
                 timeout=300)
        # The house bot's check (the organiser's own program) runs; the queue went past the
        # upload's, which it would have started first or next were it allowed to.
        wait_for("the house bot's check", lambda: house_checks_done(server), server,
                 timeout=600)
        seen = state(carol, version)
        assert [line["text"] for line in seen["lines"]] == [NO_SANDBOX], seen
        assert seen["check_state"] == "queued", seen
        assert not marker.exists()
        # Stored, nothing lost: the archive and the unpacked folder stay for a later start.
        stored = list((ClubFolder(data).uploads).rglob("build.py"))
        assert stored, list((ClubFolder(data).uploads).rglob("*"))
        # The student reads the one line on the version's page too.
        assert NO_SANDBOX in text_of(carol.get(f"/versions/{version}/").text)
        # No page tells the student the organiser's details.
        assert "sandbox-banner" not in carol.get("/").text
        # `referee submit` prints the line and stops following: the check waits.
        token = make_student(server.data, "dave")
        other = tmp_path / "dave-built"
        marking_bot(tmp_path / "dave-bot", other, "daves")
        sent = subprocess.run([*REFEREE, "submit", "--server", server.url, "--token", token,
                               str(tmp_path / "dave-bot")], capture_output=True, text=True,
                              timeout=300)
        assert sent.returncode == 1, sent
        assert f"  {NO_SANDBOX}\n" in sent.stdout and "check waiting" in sent.stderr, sent
        assert not other.exists()
    finally:
        assert server.stop(signal.SIGTERM) == 0, server.output()
    assert not marker.exists()


def test_with_unconfined_uploads_checks_run_and_every_organiser_page_says_so(
        data: Path, tmp_path: Path) -> None:
    server = no_bwrap_server(data, "house_bots = []\nunconfined_uploads = true\n")
    try:
        said = serve_lines(server, "WITHOUT a sandbox")
        assert len(said) == 1 and "unconfined_uploads = true" in said[0], server.output()
        marker = tmp_path / "built"
        carol = signed_in_student(server)
        version, landed = web_upload(server.url, "carol", marking_bot(tmp_path / "bot", marker))
        assert version is not None, landed[:2000]
        wait_for("the check", lambda: state(carol, version)["check_state"]
                 in ("passed", "failed"), server, timeout=600)
        seen = state(carol, version)
        assert seen["check_state"] == "passed", seen
        assert marker.read_text() == "built"   # its build ran, unconfined, on the host
        boss = signed_in_organiser(server)
        for path in ("/organiser/", "/", "/leaderboard/", "/season/", "/testgames/",
                     "/play/", "/tokens/", "/password/"):
            page = boss.get(path)
            assert page.status == 200, (path, page.status)
            banner = re.findall(r'id="sandbox-banner"[^>]*>([^<]*)<', page.text)
            assert len(banner) == 1 and "uploads run WITHOUT a sandbox" in banner[0], \
                (path, banner)
        assert "sandbox-banner" not in carol.get("/").text
    finally:
        assert server.stop(signal.SIGTERM) == 0, server.output()


def test_the_written_season_file_holds_a_greedy_spec_to_the_default_ceilings(
        data: Path, tmp_path: Path) -> None:
    from referee.server.shared.seasonkeys import CEILINGS

    server = ServerProcess(data)   # its first start writes the season file
    try:
        assert "wrote the season file" in server.output()
        folder = tmp_path / "greedy"
        folder.mkdir()
        (folder / "main.py").write_text(PROBE)
        (folder / "bot.toml").write_text('name = "greedy"\ncommand = ["{python}", "main.py"]\n'
                                         + GREEDY_LIMITS)
        carol = signed_in_student(server)
        version, landed = web_upload(server.url, "carol", zipped(folder))
        assert version is not None, landed[:2000]
        wait_for("the check", lambda: state(carol, version)["check_state"]
                 in ("passed", "failed"), server, timeout=900)
        lines = " ".join(line["text"].strip() for line in state(carol, version)["lines"])
        # What the bot measured in its sandbox, and the limits its check says it had.
        assert f"probe: memory={CEILINGS['memory_mb']}MiB " \
               f"processes={CEILINGS['max_processes']}" in lines, lines
        assert f"decision {CEILINGS['decision_ms']} ms, bank {CEILINGS['game_bank_ms']} ms, " \
               f"start-up {CEILINGS['startup_ms']} ms" in lines, lines
        assert f"CPU seconds {CEILINGS['cpu_seconds']}" in lines, lines
        # The season page shows the ceilings in force and the server's defaults.
        page = text_of(signed_in_organiser(server).get("/season/").text)
        assert f"time per decision (ms) at most {CEILINGS['decision_ms']}" in page, page[:3000]
    finally:
        assert server.stop(signal.SIGTERM) == 0, server.output()


def test_every_limit_key_has_a_default_ceiling(tmp_path: Path) -> None:
    """A new limit key without a ceiling fails here; the written file and a file without a
    [limits] table both mean the defaults, a key left out means its default."""
    from referee.bots.spec import LIMIT_KEYS
    from referee.server.shared.seasonfile import default_text
    from referee.server.shared.seasonkeys import CEILINGS, RunnerSettings, load_runner_settings

    assert set(CEILINGS) == set(LIMIT_KEYS)
    for key, value in CEILINGS.items():
        low, high = LIMIT_KEYS[key]
        assert low <= value < high, key   # a ceiling, below what a spec may ask
    written = tmp_path / "written.toml"
    written.write_text(default_text())
    assert load_runner_settings(written).league.limits == CEILINGS
    bare = tmp_path / "bare.toml"
    bare.write_text("name = 'bare'\n[limits]\nmemory_mb = 512\n")
    assert load_runner_settings(bare).league.limits == {**CEILINGS, "memory_mb": 512}
    assert RunnerSettings().league.limits == CEILINGS
    assert load_runner_settings(tmp_path / "missing.toml").league.limits == CEILINGS


def test_a_version_that_passed_before_runs_nowhere_once_the_sandbox_is_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The backstop where a bot's confinement is decided: a version that passed its check
    while the sandbox worked, asked for in a test game (and waiting for the season) on a
    runner without one, fails with the one line; its program never starts."""
    from runner_support import Club, RunnerProcess, sample, write_season

    data = tmp_path / "club"
    club = Club(data)
    write_season(data, "seed = 5\nplayers = 2\n")
    marker = tmp_path / "started"
    (tmp_path / "main.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "import runpy\nrunpy.run_path('randbot.py', run_name='__main__')\n")
    try:
        alice, bob = club.student("alice"), club.student("bob")
        marking = club.version(alice, "marking", tmp_path / "main.py", passed=True,
                               files={"randbot.py": sample("random") / "main.py"})
        other = club.version(bob, "bob-bot", sample("random"), passed=True)
        game = club(f"""
            game = TestGame.objects.create(requester_id={alice}, version_id={marking})
            game.opponents.add({other})
            result = game.pk
        """)
        monkeypatch.setenv(BWRAP_ENV, "/nonexistent/bwrap")
        runner = RunnerProcess(data)
        try:
            wait_for("the test game", lambda: club.value(
                f"TestGame.objects.get(pk={game}).state") in ("done", "failed"), runner,
                timeout=600)
        finally:
            runner.stop()
        error = club.value(f"TestGame.objects.get(pk={game}).error")
        assert NO_SANDBOX in error, error
        assert "uploads are stored but not built or run" in runner.output(), runner.output()
        assert not marker.exists()
    finally:
        club.close()

"""The season runner against specs that ask for more than the sandbox gives: a program through
a link an earlier version left (docs/security.md, round 4, item 1) and limits above the
season's (item 3). Real runner process, real `referee check` subprocesses, real sandbox."""

from __future__ import annotations

import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from runner_support import Club, RunnerProcess, sample, write_season
from wait_support import wait_for

from referee.server.shared.clubfolder import ClubFolder

pytestmark = pytest.mark.sandbox   # fails in CI if the sandbox cannot start (conftest.py)

# Version 1's build leaves a link to / in its own folder; its bot is the random sample bot, so
# its check passes and its folder stays (a failed version's folder is removed).
LINK_BUILD = "import os\nos.symlink('/', 'evil')\n"
EXITS = "import sys\nsys.exit(3)\n"

# A bot that says which limits it runs under, maps 3 GiB and forks up to 100 processes
# (each waits on a pipe, so they all live at once), then exits: its check fails with its
# output shown, and a test game fails with its reason.
LIMITS_PROBE = textwrap.dedent("""
    import mmap, os, resource, sys
    memory = resource.getrlimit(resource.RLIMIT_AS)[0]
    processes = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    try:
        mmap.mmap(-1, 3 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000)  # NORESERVE
        mapped = "yes"
    except (OSError, MemoryError):
        mapped = "no"
    reader, writer = os.pipe()
    forked = 0
    for _ in range(100):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(writer)
            os.read(reader, 1)
            os._exit(0)
        forked += 1
    os.close(writer)
    for _ in range(forked):
        os.wait()
    print(f"probe: memory={memory >> 20}MiB processes={processes} mapped-3GiB={mapped} "
          f"forked={forked}", flush=True)
    sys.exit(3)
""")


@pytest.fixture
def data() -> Iterator[Path]:
    """A club data folder open to others, as `referee serve` leaves it (pytest's tmp_path is
    0700): only the sandbox's view stands between a bot and the server's files."""
    root = Path(tempfile.mkdtemp(prefix="club-", dir="/tmp"))
    root.chmod(0o755)
    try:
        yield root / "club"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _lines(club: Club, version: int) -> list[str]:
    """The lines of a version's check, in order."""
    return club.value(f"list(CheckLine.objects.filter(run__version_id={version})"
                      ".order_by('seq').values_list('text', flat=True))")


def _checked(club: Club, version: int, runner: RunnerProcess) -> None:
    wait_for(f"the check of version {version}", lambda: club.value(
        f"BotVersion.objects.get(pk={version}).check_state") in ("passed", "failed"), runner)


def test_a_spec_naming_a_program_through_an_earlier_versions_link_reads_nothing(
        data: Path) -> None:
    club = Club(data)
    write_season(data, "seed = 5\nplayers = 2\n")
    alice = club.student("alice")
    database = data / "server.sqlite3"
    for path in (data, *data.glob("server.sqlite3*")):   # as an organiser's umask may leave them
        path.chmod(0o755 if path.is_dir() else 0o644)
    try:
        (data / "build.py").write_text(LINK_BUILD)
        (data / "exits.py").write_text(EXITS)
        first = club.version(alice, "alice-bot", sample("random"),
                             files={"build.py": data / "build.py"},
                             spec_text='name = "alice-bot"\ncommand = ["{python}", "main.py"]\n'
                                       'build = ["{python}", "build.py"]\n')
        bot = ClubFolder(data).bot_uploads("alice-bot")
        earlier = bot / "1" / "bot"
        for folder in (ClubFolder(data).uploads, bot, earlier.parent, earlier):
            folder.chmod(0o755)
        runner = RunnerProcess(data)
        try:
            _checked(club, first, runner)
            assert (earlier / "evil").is_symlink()     # the build left its link
            # Version 2 names a program through it and reads the password hashes.
            program = f"{earlier}/evil/bin/sh"
            steal = f"grep -aoh 'pbkdf2_sha256[^$]*' '{earlier}/evil{database}'*; exit 3"
            second = club.version(alice, "alice-bot", data / "exits.py",
                                  spec_text=f'name = "alice-bot"\ncommand = ["{program}", '
                                            f'"-c", "{steal}"]\n')
            _checked(club, second, runner)
        finally:
            runner.stop()
        lines = _lines(club, second)
        assert not any("pbkdf2" in line for line in lines), lines
        said = " ".join(line.strip() for line in lines)   # the report wraps at 120 columns
        assert sum(line.startswith("FAIL") for line in lines) == 1, lines
        assert "FAIL spec" in said.replace("FAIL  spec", "FAIL spec") and "key 'command': " \
            "expected a program inside the bot's folder or in the system's runtime" in said, said
        assert club.value(f"BotVersion.objects.get(pk={second}).check_state") == "failed"
    finally:
        club.close()


def test_the_seasons_limits_hold_a_bot_that_asks_for_more_in_checks_and_test_games(
        data: Path) -> None:
    club = Club(data)
    write_season(data, """
        seed = 5
        players = 2
        [limits]
        memory_mb = 512
        max_processes = 64
    """)
    club.season_state("paused")     # no season games: the check and the test game show it
    alice, bob = club.student("alice"), club.student("bob")
    (data / "probe.py").write_text(LIMITS_PROBE)
    spec = ('name = "greedy-bot"\ncommand = ["{python}", "main.py"]\n'
            '[limits]\nmemory_mb = 4096\nmax_processes = 600\n')
    try:
        checked = club.version(alice, "greedy-bot", data / "probe.py", spec_text=spec)
        played = club.version(alice, "greedy-bot", data / "probe.py", spec_text=spec,
                              passed=True)
        opponent = club.version(bob, "bob-bot", sample("random"), passed=True)
        game = club(f"""
            game = TestGame.objects.create(requester_id={alice}, version_id={played})
            game.opponents.add({opponent})
            result = game.pk
        """)
        runner = RunnerProcess(data)
        try:
            _checked(club, checked, runner)
            wait_for("the test game", lambda: club.value(
                f"TestGame.objects.get(pk={game}).state") in ("done", "failed"), runner)
        finally:
            runner.stop()
        held = "probe: memory=512MiB processes=64 mapped-3GiB=no"
        said = " ".join(line.strip() for line in _lines(club, checked))
        assert held in said, said
        forked = int(said.split("forked=")[1].split()[0])
        assert forked < 64, said
        error = club.value(f"TestGame.objects.get(pk={game}).error")
        assert held in error, error
    finally:
        club.close()

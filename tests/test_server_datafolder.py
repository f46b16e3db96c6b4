"""The club server's data folder against the other users of the machine, and against a build
that writes without end: against a real `referee serve`, with real uploads, checks in the
sandbox, season games, a test game and refits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from runner_support import Club, write_season
from server_support import ServerProcess, make_student, student_bot
from wait_support import wait_for

from referee.league.store import games_stored
from referee.server.client import SubmitError, submit
from referee.server.shared.clubfolder import ClubFolder

# A build step that writes a module the bot imports: the bot (another uid than its build) must
# read what its build made.
BUILD = "from pathlib import Path\nPath('made.py').write_text('WORD = \"built\"\\n')\n"


def built_bot(folder: Path, name: str) -> Path:
    """A student bot whose main.py imports what its build step writes; the folder."""
    student_bot(folder, name, "decides")
    (folder / "build.py").write_text(BUILD)
    main = (folder / "main.py").read_text()
    (folder / "main.py").write_text("import made  # noqa: F401  (written by the build)\n" + main)
    spec = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(spec.replace('workdir = "."\n', 'workdir = "."\n'
                                                  'build = ["{python}", "build.py"]\n'))
    return folder


def in_a_bot_folder(data: Path, path: Path) -> bool:
    """True for a version's bot folder DATA/uploads/<bot>/<n>/bot and what is in it."""
    parts = path.relative_to(data).parts
    return len(parts) >= 4 and parts[0] == ClubFolder.UPLOADS and parts[1] != ".incoming" \
        and parts[3] == "bot"


def open_to_others(data: Path) -> list[str]:
    """Every path under `data` (itself included) that another user could read, write or pass
    through, or that the server does not own; a version's bot folder may be read (not written)
    by others, since only the server and that bot's sandbox can reach it, and a running bot's
    own folder in DATA/tmp (its socket and private /tmp; in a check's own folder there while
    the check runs) is that bot's uid's alone."""
    found = []
    for dirpath, dirnames, filenames in os.walk(data):
        here = Path(dirpath)
        if data / "tmp" in here.parents and _private_to_another_uid(here):
            dirnames.clear()          # a running bot's own folder: nobody else may enter
            continue
        for path in (here, *(here / name for name in filenames)):
            try:
                st = os.lstat(path)
            except FileNotFoundError:   # a bot's folder gone as its game ended
                continue
            mode = stat.S_IMODE(st.st_mode)
            if st.st_uid != os.getuid():
                found.append(f"{path}: owned by uid {st.st_uid}")
            allowed = 0o055 if in_a_bot_folder(data, path) else 0
            if not stat.S_ISLNK(st.st_mode) and mode & 0o077 & ~allowed:
                found.append(f"{path}: mode {oct(mode)}")
    return found


def _private_to_another_uid(folder: Path) -> bool:
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return True
    return st.st_uid != os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def test_nothing_of_the_data_folder_is_readable_by_another_user(tmp_path: Path) -> None:
    """After a season with uploads (one of them built), their checks in the sandbox, games, a
    test game, refits and the closed season's report, no file or folder of the data folder is
    open to another user but a version's bot folder, below folders only the server may enter;
    and the bots (other uids) still read their folders and what their builds made: they pass
    their checks and play."""
    data = tmp_path / "data"
    data.mkdir()
    write_season(data, """
        seed = 5
        players = 2
        round_games = 2
        refit_games = 2
        refit_seconds = 1
    """)
    server = ServerProcess(data)
    try:
        tokens = {name: make_student(data, name) for name in ("ann", "ben")}
        submit(built_bot(tmp_path / "src" / "ann", "ann-bot"), server.url, tokens["ann"])
        submit(student_bot(tmp_path / "src" / "ben", "ben-bot", "ben"), server.url,
               tokens["ben"])
        club = Club(data)
        try:
            wait_for("both versions active", lambda: club.value(
                "BotVersion.objects.filter(season_state='active').count()") == 2
                or club.value("list(BotVersion.objects.filter(check_state='failed')"
                              ".values_list('error', flat=True))"), timeout=900)
            assert club.value("list(BotVersion.objects.values_list('check_state', flat=True))") \
                == ["passed", "passed"], server.output()
            wait_for("games", lambda: games_stored(ClubFolder(data).season_league.store_path) >= 4)
            wait_for("a refit", lambda: club.value("Standing.objects.exists()"))
            game = club("""
                from django.db import transaction
                with transaction.atomic():   # as the page queues it: with its opponents
                    game = TestGame.objects.create(
                        requester=User.objects.get(username="ann"),
                        version=BotVersion.objects.get(league_name="ann-bot.v1"))
                    game.opponents.add(BotVersion.objects.get(league_name="ben-bot.v1"))
                result = game.pk
            """)
            wait_for("the test game", lambda: club.value(
                f"TestGame.objects.get(pk={game}).state") in ("done", "failed"))
            assert club.value(f"TestGame.objects.get(pk={game}).error") == ""
            # While it runs: the club's database's -wal and -shm files are there now.
            assert (data / "server.sqlite3-wal").exists()
            assert open_to_others(data) == []
            # Closed: the season's static report is written into the data folder too.
            club.season_state("closed")
            wait_for("the report", lambda: club.value("Competition.first().report_path"))
        finally:
            club.close()
    finally:
        assert server.stop() == 0, server.output()
    assert (data / "testgames").is_dir() and (data / "uploads" / "ann-bot" / "1" / "bot" /
                                              "made.py").is_file()
    assert (ClubFolder(data).season_league.report / "index.html").is_file()
    assert open_to_others(data) == []


# A build that writes 200 MiB (4 MiB files, half in its folder, half in its /tmp) and succeeds.
# The watch stops a writer within one measurement of its passing the limit (its documented
# promise); a flood paced at 20 MiB a second gives a starved watch thread seconds to measure
# once, where an unpaced one would test the machine's load instead of the limit.
FLOOD = """import os
import time

block = bytes(range(256)) * 4096        # 1 MiB that no file system stores as a hole
os.makedirs("junk", exist_ok=True)
for i in range(50):
    where = "junk" if i % 2 else os.environ.get("TMPDIR", "/tmp")
    with open(os.path.join(where, f"junk{i}"), "wb") as out:
        for _ in range(4):
            out.write(block)
            out.flush()
            time.sleep(0.05)
print("wrote 200 MiB")
"""


def test_a_build_cannot_fill_the_disk(tmp_path: Path) -> None:
    """A build that writes 200 MiB under a season limit of 32 MiB is stopped at the limit and
    fails its check; the failed version keeps only its archive and its check's lines, and a
    refused upload leaves nothing."""
    data = tmp_path / "data"
    data.mkdir()
    write_season(data, """
        write_max_mb = 32
    """)
    server = ServerProcess(data)
    try:
        token = make_student(data, "flo")
        folder = student_bot(tmp_path / "src" / "flo", "flo-bot", "flo")
        (folder / "build.py").write_text(FLOOD)
        spec = (folder / "bot.toml").read_text()
        (folder / "bot.toml").write_text(spec.replace('workdir = "."\n', 'workdir = "."\n'
                                                      'build = ["{python}", "build.py"]\n'))
        submit(folder, server.url, token)
        bad = tmp_path / "bad.zip"
        bad.write_bytes(b"PK\x05\x06" + bytes(18))      # an empty zip: no spec in it
        with pytest.raises(SubmitError, match="spec"):
            submit(bad, server.url, token, bot="flo-bot")
        club = Club(data)
        try:
            error = wait_for("the failed check", lambda: club.value(
                "BotVersion.objects.filter(check_state='failed').values_list('error', "
                "flat=True).first()") or club.value(
                "BotVersion.objects.filter(check_state='passed').exists()"), timeout=900)
            lines = club.value("list(CheckLine.objects.values_list('text', flat=True))")
        finally:
            club.close()
    finally:
        assert server.stop() == 0, server.output()
    assert isinstance(error, str) and "NOT conform" in error, (error, lines)
    assert any("build failed: it ran out of its write limit of 32 MiB" in line
               for line in lines), lines
    # What is left on disk: the failed version's archive, nothing of the refused upload.
    uploads = ClubFolder(data).uploads
    left = sorted(str(p.relative_to(uploads)) for p in uploads.rglob("*"))
    assert left == [".incoming", "flo-bot", "flo-bot/1", "flo-bot/1/archive"], left
    assert list((data / "tmp").iterdir()) == []


@pytest.mark.sandbox
def test_a_bot_cannot_fill_the_disk_through_its_tmp(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A confined bot that writes 200 MiB into its private /tmp under a limit of 32 MiB is
    stopped at the limit (ENOSPC as root, killed where its writes are measured), its log says
    why, and its folder is gone once it is stopped."""
    import asyncio

    from referee.bots.process import BotProcess
    from referee.bots.spec import load_spec

    monkeypatch.setenv("REFEREE_WRITE_MAX_MB", "32")   # as the season's runner sets it
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "flood.py").write_text(FLOOD.replace('"junk" if i % 2 else ', "").replace(
        'os.makedirs("junk", exist_ok=True)', ""))   # all in its /tmp
    (folder / "bot.toml").write_text('name = "flood"\ncommand = ["{python}", "flood.py"]\n')

    async def run() -> tuple[int | None, str, Path | None]:
        bot = BotProcess(load_spec(folder / "bot.toml"))
        await bot.start()
        own = bot._dir
        assert bot.proc is not None
        await asyncio.wait_for(bot.proc.wait(), 600)   # it ends by itself either way
        await bot.stop()   # its output read to the end
        return bot.exit_status, bot.log.since(0), own

    status, text, own = asyncio.run(run())
    assert "ran out of its write limit of 32 MiB" in text, (status, text)
    assert "wrote 200 MiB" not in text and status != 0
    assert own is not None and not own.exists()


# A build that ignores SIGTERM and never ends, writing small files into its folder and its
# /tmp again and again (a bounded set of names), and through any error (its folder removed).
KEEPS_WRITING = """import os, signal, time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
tmp = os.environ.get("TMPDIR", "/tmp")
print("writing", flush=True)
i = 0
while True:
    for where in ("junk", tmp):
        try:
            os.makedirs(where, exist_ok=True)
            with open(os.path.join(where, f"f{i % 500}"), "wb") as out:
                out.write(b"x" * 4096)
        except OSError:
            pass
    i += 1
    time.sleep(0.01)
"""


def test_a_check_stopped_at_its_time_limit_leaves_no_process_and_nothing_on_disk(
        tmp_path: Path) -> None:
    """A build that ignores SIGTERM, keeps writing and never ends is stopped at the check's
    time limit: when its failure is recorded no process of the check is left, its version's
    folder is gone and stays gone, and nothing of it is left in DATA/tmp."""
    from proc_support import descendants

    data = tmp_path / "data"
    data.mkdir()
    write_season(data, """
        check_timeout_s = 30
    """)

    def of_the_check() -> dict[int, str]:
        """Every process of the check: its guard and `referee check`, the build's guard, its
        sandbox (both name the version's folder) and the build itself."""
        return {pid: command for pid, command in descendants(1).items()
                if str(ClubFolder(data).uploads) in command or "keeps_writing.py" in command}

    server = ServerProcess(data)
    try:
        token = make_student(data, "kim")
        folder = student_bot(tmp_path / "src" / "kim", "kim-bot", "kim")
        (folder / "keeps_writing.py").write_text(KEEPS_WRITING)
        spec = (folder / "bot.toml").read_text()
        (folder / "bot.toml").write_text(spec.replace(
            'workdir = "."\n', 'workdir = "."\nbuild = ["{python}", "keeps_writing.py"]\n'))
        submit(folder, server.url, token)
        wait_for("the build running", lambda: any("keeps_writing.py" in command
                                                  for command in of_the_check().values()))
        club = Club(data)
        try:
            summary = wait_for("the check stopped", lambda: club.value(
                "CheckRun.objects.filter(state='failed').values_list('summary', flat=True)"
                ".first()"))
            left = of_the_check()      # as the verdict is recorded: nothing runs any more
            version = data / club.value("BotVersion.objects.get().folder")
        finally:
            club.close()
        assert "stopped after the check's time limit of 30 s" in summary, summary
        assert left == {}, left
        # Whatever ran on would have had its grace by now: the folder is still gone.
        wait_for("no process of the check", lambda: not of_the_check())
        assert not version.exists(), sorted(version.rglob("*"))
        assert [p.name for p in (data / "tmp").iterdir()
                if p.name.startswith("referee-build-")] == []
    finally:
        assert server.stop() == 0, server.output()

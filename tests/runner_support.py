"""Helpers for the season runner's tests: a club data folder of its own (migrated, reached
through the ORM in a helper process, so each test has its own Django database), student bots
made from the sample bots, and the runner as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from orphans import stops_with_pytest

from referee.league.store import LeagueStore
from referee.server.shared.clubfolder import ClubFolder

ROOT = Path(__file__).resolve().parents[1]

# The helper: Django set up on one data folder, then one JSON request per line: code to exec,
# with `result` sent back as JSON.
_HELPER = textwrap.dedent("""
    import json, os, sys
    import django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0, interactive=False)
    from django.contrib.auth.models import User
    from referee.server.club.models import *  # noqa
    print("ready", flush=True)
    space = dict(globals())
    for line in sys.stdin:
        try:
            space["result"] = None
            exec(json.loads(line), space)
            answer = {"ok": space["result"]}
        except Exception as exc:  # the test sees the error
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer, default=str), flush=True)
""")


def club_env(data: Path) -> dict[str, str]:
    return {**os.environ, "REFEREE_SERVER_DATA": str(data),
            "REFEREE_SEASON_FILE": str(data / "season.toml"),
            "DJANGO_SETTINGS_MODULE": "referee.server.settings"}


class Club:
    """A migrated club database in `data`, reached through the ORM of a helper process."""

    def __init__(self, data: Path) -> None:
        self.data = data
        data.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", _HELPER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=club_env(data))
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"

    def __call__(self, code: str) -> Any:
        """Run `code` (it may set `result`) and return `result`."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(textwrap.dedent(code)) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise AssertionError(answer["error"])
        return answer["ok"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)

    def student(self, name: str) -> int:
        """A student account with a profile; its user id."""
        return self(f"""
            user = User.objects.create_user({name!r}, password="a long password 1")
            Profile.objects.create(user=user, display_name={name!r})
            result = user.pk
        """)

    def ann_and_ben_passed(self) -> None:
        """ann-bot (the sample random bot) and ben-bot (greedy), each a student's passed
        version: the smallest season that plays."""
        for name, bot in (("ann", "random"), ("ben", "greedy")):
            self.version(self.student(name), f"{name}-bot", sample(bot), passed=True)

    def version(self, owner: int, bot: str, sample: str | Path, *, passed: bool = False,
                spec_text: str | None = None, disabled: bool = False,
                files: dict[str, Path] | None = None) -> int:
        """Version n+1 of `bot` (created if new): a copy of a sample bot folder (or a bot's
        main.py) and `files` (relative path -> source), as an upload would have left it, with
        its check queued (or passed)."""
        number = self(f"""
            bot, _ = Bot.objects.get_or_create(name={bot!r}, defaults={{"owner_id": {owner},
                                                                        "disabled": {disabled}}})
            result = bot.versions.count() + 1
        """)
        folder = ClubFolder(self.data).bot_uploads(bot) / str(number) / "bot"
        source = Path(sample)
        if source.is_dir():
            shutil.copytree(source, folder)
        else:   # a single file: the bot's main.py
            folder.mkdir(parents=True)
            shutil.copy(source, folder / "main.py")
        for relative, path in (files or {}).items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, folder / relative)
        (folder / "bot.toml").write_text(spec_text or
                                         f'name = "{bot}"\ncommand = ["{{python}}", "main.py"]\n')
        state = "passed" if passed else "queued"
        return self(f"""
            bot = Bot.objects.get(name={bot!r})
            version = BotVersion.objects.create(
                bot=bot, number={number}, kind="folder", archive_name="bot.zip",
                archive_sha256="0" * 64, archive_size=1,
                folder="uploads/{bot}/{number}/bot", spec="bot.toml",
                league_name="{bot}.v{number}", check_state={state!r})
            CheckRun.objects.create(version=version, state={state!r})
            result = version.pk
        """)

    def season_state(self, state: str) -> None:
        self(f"Competition.first_row().update(state={state!r})")

    def value(self, expression: str) -> Any:
        return self(f"result = {expression}")


def sample(name: str) -> Path:
    return ROOT / "sample_bots" / name


def write_season(data: Path, text: str) -> None:
    """The season file; without house bots unless `text` names them (a test's own bots), and
    unpaced (rounds at once) unless `text` sets `games_per_bot_per_hour`."""
    text = textwrap.dedent(text)
    # First: after a [table] they would land in it.
    if "games_per_bot_per_hour" not in text:
        text = "games_per_bot_per_hour = 0\n" + text
    if "house_bots" not in text:
        text = "house_bots = []\n" + text
    (data / "season.toml").write_text(text)


class RunnerProcess:
    """`python -m referee.server.runner --data DATA` as a real subprocess."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.log = data / f"runner-{time.monotonic_ns()}.log"
        handle = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee.server.runner", "--data", str(data)],
            stdout=handle, stderr=subprocess.STDOUT, env=club_env(data), start_new_session=True,
            preexec_fn=stops_with_pytest)

    def output(self) -> str:
        return self.log.read_text()

    def kill(self) -> None:
        """SIGKILL, as a power cut would: no clean-up at all."""
        self.proc.kill()
        self.proc.wait(timeout=60)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=300)

    def alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(f"the runner stopped ({self.proc.returncode}):\n"
                                 f"{self.output()}")


def season_rows(data: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows `sql` selects from the club's season store, read-only; [] while there is none
    to read (no file yet, or the runner has not made its tables yet)."""
    store = LeagueStore.open_made(ClubFolder(data).season_league.store_path)
    if store is None:
        return []
    try:
        return store.db.execute(sql, params).fetchall()
    finally:
        store.close()

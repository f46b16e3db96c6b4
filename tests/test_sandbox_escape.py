"""The sandbox shows a bot (and its build) its own folder and the system's runtime, nothing else.

An earlier version of a student's bot left a link to `/` in its own folder; a later spec named
its program (or its PATH, or its folder) through it. The sandbox once bound the program's
"installation prefix", following the link, and the bot read the server's whole file system.
Each case here hands the sandbox such a spec directly (past the spec checks, which refuse most
of them: test_spec_safety) and shows that nothing of the server's data folder is seen.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.bots.build import ensure_built
from referee.bots.errors import BotStartError
from referee.bots.process import BotProcess
from referee.bots.sandbox import DATA_ENV
from referee.bots.spec import BotSpec
from referee.server.shared.clubfolder import ClubFolder

pytestmark = pytest.mark.sandbox   # fails in CI if the sandbox cannot start (conftest.py)

SECRET = "the-season's-password-hashes-7f3a"


@dataclass
class Club:
    """A club's data folder: a secret at its top, version 1 of alice's bot holding `evil -> /`
    (as its build left it), version 2's folder (holding `link -> /` too)."""

    data: Path
    earlier: Path
    bot: Path

    def through(self, link: Path) -> str:
        """The secret's path through `link` (a link to /)."""
        return str(link) + str(self.data / "secret.txt")

    def script(self, out: str = "") -> str:
        """A shell script that prints (or writes to `out`) whatever secret it can reach."""
        paths = [self.through(self.earlier / "evil"), self.through(self.bot / "link"),
                 str(self.data / "secret.txt")]
        redirect = f" >> {out}" if out else ""
        return "".join(f"cat '{p}'{redirect} 2>/dev/null; " for p in paths) + "exit 3"


@pytest.fixture
def club(monkeypatch: pytest.MonkeyPatch) -> Iterator[Club]:
    # Under /tmp, every folder open to others, as `referee serve` leaves its data folder: only
    # the sandbox's view stands between a bot and the secret (pytest's tmp_path is 0700).
    root = Path(tempfile.mkdtemp(prefix="escape-", dir="/tmp"))
    try:
        data = root / "club"
        club_folder = ClubFolder(data)
        earlier, bot = (club_folder.version_upload("alice", 1) / "bot",
                        club_folder.version_upload("alice", 2) / "bot")
        for folder in (earlier, bot):
            folder.mkdir(parents=True)
        for folder in (root, *earlier.parents, earlier, bot):
            if folder.is_relative_to(root):
                folder.chmod(0o755)
        (data / "secret.txt").write_text(SECRET + "\n")
        (data / "secret.txt").chmod(0o644)
        (earlier / "evil").symlink_to("/")
        (bot / "link").symlink_to("/")
        monkeypatch.setenv(DATA_ENV, str(data))
        yield Club(data, earlier, bot)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _spec(club: Club, **fields: object) -> BotSpec:
    """Version 2's spec as given, unchecked: what the sandbox must hold against by itself."""
    values: dict[str, object] = {"name": "alice", "path": club.bot / "bot.toml",
                                 "workdir": club.bot, **fields}
    return BotSpec(**values)  # type: ignore[arg-type]


def _run_bot(spec: BotSpec) -> str:
    """Start the bot in the sandbox and return what it wrote (or why it could not start)."""
    async def run() -> str:
        process = BotProcess(spec, sandbox=True)
        try:
            await process.start()
        except BotStartError as exc:
            return exc.reason
        assert process.proc is not None
        await asyncio.wait_for(process.proc.wait(), 120)   # the script ends by itself
        await process.stop()
        return b"".join(process.log.chunks).decode(errors="replace")
    return asyncio.run(run())


BOT_CASES = {
    # An absolute program through the earlier version's link: its "prefix" was bound.
    "program through a link": lambda c: {"command": (str(c.earlier / "evil/bin/sh"), "-c",
                                                     c.script())},
    # The same with `..`, starting in the bot's own folder.
    "program with ..": lambda c: {"command": (f"{c.bot}/../../1/bot/evil/bin/sh", "-c",
                                              c.script())},
    # A bare name looked up on the spec's own PATH, which leads through the link.
    "PATH through a link": lambda c: {"command": ("sh", "-c", c.script()),
                                      "env": {"PATH": str(c.earlier / "evil/bin")}},
    # The bot's folder itself a link (to /): bound as the bot's folder.
    "workdir a link": lambda c: {"command": ("/bin/sh", "-c", c.script()),
                                 "workdir": c.bot / "link"},
    # The bot's folder one that holds the data folder: bound whole.
    "workdir holding the data folder": lambda c: {"command": ("/bin/sh", "-c", c.script()),
                                                  "workdir": c.data.parent},
}


@pytest.mark.parametrize("case", sorted(BOT_CASES))
def test_a_bot_sees_nothing_of_the_server_whatever_its_spec_names(club: Club,
                                                                   case: str) -> None:
    said = _run_bot(_spec(club, **BOT_CASES[case](club)))
    assert SECRET not in said, said


BUILD_CASES = {
    "program through a link": lambda c, s: {"build": (str(c.earlier / "evil/bin/sh"), "-c", s)},
    "program with ..": lambda c, s: {"build": (f"{c.bot}/../../1/bot/evil/bin/sh", "-c", s)},
    "PATH through a link": lambda c, s: {"build": ("sh", "-c", s),
                                         "env": {"PATH": str(c.earlier / "evil/bin")}},
}


@pytest.mark.parametrize("case", sorted(BUILD_CASES))
def test_a_build_sees_nothing_of_the_server_whatever_its_spec_names(club: Club,
                                                                     case: str) -> None:
    stolen = club.bot / "stolen.txt"
    script = club.script(out=str(stolen)).replace("exit 3", "exit 0")
    spec = _spec(club, command=("/bin/true",), **BUILD_CASES[case](club, script))
    try:
        ensure_built(spec, timeout=300, sandbox=True)
    except BotStartError as exc:   # refused, or the program is not there: nothing was read
        assert SECRET not in exc.reason
    assert not stolen.exists() or SECRET not in stolen.read_text()


def test_a_refused_bind_is_one_line_naming_the_folder(club: Club) -> None:
    said = _run_bot(_spec(club, command=("/bin/sh", "-c", "exit 3"), workdir=club.bot / "link"))
    assert said.startswith("cannot start: the bot's folder") and "symbolic link" in said, said
    assert "\n" not in said
    said = _run_bot(_spec(club, command=("/bin/sh", "-c", "exit 3"), workdir=club.data.parent))
    assert "overlaps the server's data folder" in said and "\n" not in said, said


def test_an_honest_bot_still_runs_its_own_program_and_the_system_runtime(club: Club) -> None:
    program = club.bot / "run.sh"
    program.write_text("#!/bin/sh\necho own program ran; node --version >/dev/null && "
                       "echo node ran; exit 3\n")
    program.chmod(0o755)
    said = _run_bot(_spec(club, command=(str(program),)))
    assert "own program ran" in said and ("node ran" in said or not shutil.which("node")), said
    assert os.path.realpath(club.bot) == str(club.bot)

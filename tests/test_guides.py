"""Every bot guide in docs/bots/ followed from its own code blocks (tests/doc_support.py), as a
student would on a fresh clone: an empty npm cache, pip cache and referee build cache, the
files saved exactly as the guide shows them, its commands run as it shows them, `referee
check` passing at the end, then its hand-in to a club: a real `referee serve` on a free port,
a student's token, the guide's `referee submit` to a passed check, and the archive the guide
makes uploaded with the web page's form to a passed check too. A guide that drifts from the
program or the server fails here.

The C++ guide needs the C++ toolchain: skipped without it, failed where REFEREE_REQUIRE_CPP=1
(as tests/test_cpp_bot.py). The JavaScript guide needs node and npm, and npm the registry.
"""

from __future__ import annotations

import re
import shutil
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_support import ROOT, clean_env, fresh_clone, guide_steps, run_step
from server_support import ServerProcess, make_student, web_upload
from test_cpp_bot import _require_toolchain

from referee.league.folder import LeagueFolder
from referee.server.client import follow as follow_check

GUIDES = ROOT / "docs" / "bots"


@pytest.fixture
def club(tmp_path: Path) -> Iterator[tuple[ServerProcess, str]]:
    """A real club server and one student's token: where a guide hands its bot in."""
    server = ServerProcess(tmp_path / "club")
    try:
        yield server, make_student(server.data, "student")
    finally:
        assert server.stop() == 0, server.output()


def follow(guide: str, tmp_path: Path, club: tuple[ServerProcess, str]) -> tuple[str, str]:
    """Follow docs/bots/GUIDE, its hand-in to `club` included; return the bot's name (from
    the spec the guide writes) and what its run steps printed."""
    steps = guide_steps(GUIDES / guide)
    assert any(s.path is None and "referee check" in s.text for s in steps), \
        f"{guide} has no marked `referee check` step"
    assert any(s.server and "referee submit" in s.text for s in steps), \
        f"{guide} does not hand the bot in with a marked `referee submit` step"
    top = fresh_clone(tmp_path / "clone")
    env = clean_env(tmp_path / "caches")
    server, token = club
    printed = []
    for step in steps:
        printed.append(run_step(step.against(server.url, token), top, env).stdout)
    specs = [s.path for s in steps if s.path and s.path.endswith(".toml")]
    assert len(specs) == 1, f"{guide} should write one bot spec, it writes {specs}"
    name = tomllib.loads((top / specs[0]).read_text())["name"]
    return name, "\n".join(printed)


def assert_handed_in(name: str, printed: str, top: Path, club: tuple[ServerProcess, str]
                     ) -> None:
    """`referee submit` made version 1 and saw its check pass; the archive the guide zipped
    holds the same files, so the web page refuses it as nothing new; with a file added it
    becomes version 2 and passes its check too."""
    server, token = club
    assert f"uploaded {name} v1 as {name}.v1" in printed and "check passed" in printed, printed
    archives = list(top.glob("*.zip"))
    assert len(archives) == 1, f"the guide should zip one archive for the web, it made {archives}"
    version, page = web_upload(server.url, "student", archives[0])
    assert version is None and f"identical to {name}.v1 (v1, the same files), nothing new" \
        in page, page[:3000]
    with zipfile.ZipFile(archives[0], "a") as zipped:   # in the bot's folder, beside its code
        folder = next(n for n in zipped.namelist() if "/" in n).split("/")[0]
        zipped.writestr(f"{folder}/NOTES.txt", "a second version\n")
    version, page = web_upload(server.url, "student", archives[0])
    assert version is not None, page
    state = follow_check(server.url, token, version, lambda line: None, poll_s=0.5)
    assert state["check_state"] == "passed", state
    assert state["league_name"] == f"{name}.v2", state


def assert_followed(guide: str, name: str, printed: str, top: Path) -> None:
    # The check's last line is what the guide quotes (`mine conforms: 27 passed, 0 failed`).
    quoted = re.findall(rf"`({re.escape(name)} conforms[^`]*)`", (GUIDES / guide).read_text())
    assert quoted, f"{guide} does not quote the check's last line"
    for text in quoted:
        assert text in printed, f"{guide} says {text!r}; referee check printed:\n{printed}"
    # The guides then play a game (--replay game.json), a league (my-league) and show a game.
    assert (top / "game.json").is_file() and LeagueFolder(top / "my-league").store_path.is_file()
    # ... and `referee show my-league 0` tells the bot's game to its ranking.
    assert "Game over. Ranking" in printed and f"{name} (seat " in printed


def test_the_python_guide_gives_a_bot_that_passes_check(tmp_path: Path, club) -> None:
    name, printed = follow("python.md", tmp_path, club)
    assert name == "mine"
    assert_followed("python.md", name, printed, tmp_path / "clone")
    assert_handed_in(name, printed, tmp_path / "clone", club)


@pytest.mark.skipif(shutil.which("npm") is None, reason="node/npm are not installed")
def test_the_javascript_guide_gives_a_bot_that_passes_check(tmp_path: Path, club) -> None:
    name, printed = follow("javascript.md", tmp_path, club)
    assert name == "mine-js"
    assert_followed("javascript.md", name, printed, tmp_path / "clone")
    assert_handed_in(name, printed, tmp_path / "clone", club)
    # The npm cache the guide's install used is the empty one given (nothing came from ~/.npm).
    assert any((tmp_path / "caches" / "npm").iterdir())


def test_the_cpp_guide_gives_a_bot_that_passes_check(tmp_path: Path, club) -> None:
    _require_toolchain()
    name, printed = follow("cpp.md", tmp_path, club)
    assert name == "mine-cpp"
    assert_followed("cpp.md", name, printed, tmp_path / "clone")
    assert_handed_in(name, printed, tmp_path / "clone", club)


def test_every_guide_marks_its_files_and_commands() -> None:
    """The marks are what the tests follow: a guide without them would pass unfollowed."""
    for guide in ("python.md", "javascript.md", "cpp.md"):
        steps = guide_steps(GUIDES / guide)
        assert [s for s in steps if s.path], f"{guide} marks no file"
        assert [s for s in steps if s.path is None], f"{guide} marks no command"

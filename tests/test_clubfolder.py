"""The club's data folder has one owner (`referee.server.shared.clubfolder.ClubFolder`): its
paths are where the module says, and no other module of the server spells one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.server.shared.clubfolder import SEASON_FILE_ENV, ClubFolder

ROOT = Path(__file__).resolve().parents[1]
OWNER = ROOT / "referee/server/shared/clubfolder.py"
# The names ClubFolder gives the entries of the data folder.
NAMES = {ClubFolder.DATABASE, ClubFolder.SEASON_FILE, ClubFolder.LAST_GOOD, ClubFolder.SEASON,
         ClubFolder.UPLOADS, ClubFolder.TEST_GAMES, ClubFolder.HUMAN_GAMES, ClubFolder.TMP,
         ClubFolder.RUNNER_LOCK}


def test_the_paths_are_where_the_folder_says(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    club = ClubFolder(tmp_path)
    assert club.season_league.store_path == tmp_path / "season" / "league.db"
    assert club.bot_uploads("ann-bot") == tmp_path / "uploads" / "ann-bot"
    assert club.version_upload("ann-bot", 2) / "bot" == tmp_path / ClubFolder.version_folder(
        "ann-bot", 2)
    assert club.root / club.season_report == club.season_league.report / "index.html"
    assert club.root / ClubFolder.test_game_record(7) == club.test_games / "7.json"
    assert club.database == tmp_path / "server.sqlite3"
    monkeypatch.delenv(SEASON_FILE_ENV, raising=False)
    assert club.season_file() == club.default_season_file == tmp_path / "season.toml"
    monkeypatch.setenv(SEASON_FILE_ENV, str(tmp_path / "elsewhere.toml"))
    assert club.season_file() == tmp_path / "elsewhere.toml"


def test_a_test_games_live_file_is_found_while_it_plays(tmp_path: Path) -> None:
    club = ClubFolder(tmp_path)
    assert not club.test_game_live_file(3).exists()   # not in play: a path that is not there
    club.test_game_live(3).mkdir(parents=True)
    (club.test_game_live(3) / "g1.jsonl").write_text("{}\n")
    assert club.test_game_live_file(3) == club.test_games / "live" / "3" / "g1.jsonl"


def spelled_paths(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) for each data-folder name the file puts into a path itself: a name joined
    with `/`, or an f-string path starting with one (f"uploads/{bot}/...")."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and isinstance(side.value, str) \
                        and side.value.split("/")[0] in NAMES:
                    yield node.lineno, side.value
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and "/" in first.value and first.value.split("/")[0] in NAMES:
                yield node.lineno, first.value


def spellers(root: Path) -> list[str]:
    """file:line: text for every server module but ClubFolder's that spells a club path."""
    found = []
    for path in sorted((root / "referee/server").rglob("*.py")):
        if path.resolve() == OWNER or "migrations" in path.parts:
            continue
        found += [f"{path.relative_to(root)}:{line}: {text!r}"
                  for line, text in spelled_paths(path)]
    return found


def test_no_other_server_module_spells_a_club_path() -> None:
    assert spellers(ROOT) == []


def test_a_spelled_club_path_is_named(tmp_path: Path) -> None:
    """The check itself: planted spellings are found with their place."""
    club = tmp_path / "referee/server/club"
    club.mkdir(parents=True)
    (club / "extra.py").write_text('season = data / "season"\n'
                                   'folder = f"uploads/{name}/1/bot"\n'
                                   'url = "season/"\n'   # a URL, not a path
                                   'fine = ClubFolder(data).season\n')
    assert spellers(tmp_path) == ["referee/server/club/extra.py:1: 'season'",
                                  "referee/server/club/extra.py:2: 'uploads/'"]

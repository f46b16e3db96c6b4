"""A league's folder names every path in it (referee.league.folder): whatever a league, a
gauntlet and a season's refit write into a folder is a path `LeagueFolder` names.

What lies inside the folder's two folders (the live files, the report) is theirs
(referee.game.livefile, referee.report.site); the folder names the two folders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import referee
from test_season import bot_copy, play

from referee.league.config import LeagueSettings
from referee.league.folder import LeagueFolder
from referee.league.season import open_season

ROOT = Path(__file__).resolve().parents[1]
GREEDY, RANDOM = ROOT / "sample_bots" / "greedy.toml", ROOT / "sample_bots" / "random.toml"


def unnamed(folder: LeagueFolder) -> set[str]:
    """The names of what lies in the folder that the folder does not name."""
    return {path.name for path in folder.root.iterdir()} - {p.name for p in folder.paths()}


@pytest.mark.slow
def test_a_league_and_a_gauntlet_write_only_what_the_folder_names(tmp_path: Path) -> None:
    folder = LeagueFolder(tmp_path / "out")
    referee("league", GREEDY, RANDOM, "--games", "4", "--seed", "1", "--out", folder.root,
            "--quiet")
    written = set(folder.root.iterdir())
    assert {folder.store_path, *folder.table_files[:5], folder.live, folder.report} <= written
    assert unnamed(folder) == set()
    # a gauntlet in a folder of its own, and beside the league in the same one
    for out in (tmp_path / "gauntlet", folder.root):
        gauntlet = LeagueFolder(out)
        referee("gauntlet", GREEDY, "--baseline", RANDOM, "--field", RANDOM, "--max-games", "4",
                "--seed", "1", "--out", out, "--quiet")
        assert gauntlet.gauntlet_store.is_file() and gauntlet.gauntlet_result.is_file()
        assert unnamed(gauntlet) == set()


@pytest.mark.slow
def test_a_seasons_refit_writes_only_what_the_folder_names(tmp_path: Path) -> None:
    folder = LeagueFolder(tmp_path / "season")
    with open_season(folder.root, LeagueSettings(bots=[], seed=5, players=(2, 2)),
                     round_games=2) as season:
        for name, sample in (("a", "random"), ("b", "greedy")):
            season.enter(name, "v1", str(bot_copy(tmp_path, name, sample)))
        season.next_round()
        play(season)
    subprocess.run([sys.executable, "-m", "referee.server.runner.refit", str(folder.root)],
                   capture_output=True, text=True, timeout=600, check=True)
    assert folder.refit_state.is_file()
    assert unnamed(folder) == set()

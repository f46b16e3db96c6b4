"""A league's settings read back from its store are one typed object (referee.league.stored),
its folder names every path in it (referee.league.folder), and its store says which schema it
is (a store of another version: one line through the real CLI, and the store left alone)."""

from __future__ import annotations

import ast
import dataclasses
import sqlite3
import subprocess
from pathlib import Path

import pytest
from league_support import install_test_bot
from test_league_settings import fails

from referee.engine import preset
from referee.game.match import MatchOptions
from referee.league.config import LeagueSettings
from referee.league.folder import SQLITE_SIDES, STORE_NAME, LeagueFolder
from referee.league.gauntlet import GauntletSettings, _create, stored_gauntlet, stored_params
from referee.league.runner import league_definition
from referee.league.schedule import make_schedule
from referee.league.season import open_season
from referee.league.store import SCHEMA_VERSION, LeagueStore, StoreVersionError
from referee.league.stored import (
    GAUNTLET,
    LEAGUE,
    SEASON,
    read_league,
    store_changes,
    store_league,
)
from referee.ratings.sprt import SprtParams
from referee.ratings.trueskill import RatingParams

ROOT = Path(__file__).resolve().parent.parent
SECRET = 2**70 + 12345   # wider than 64 bits: the store keeps it as text


def new_league(out: Path, **given: object) -> LeagueStore:
    """A league stored as `referee league` stores it (its definition and schedule), without
    playing: the store is what is read back."""
    settings = LeagueSettings(bots=[], out=out, seed=SECRET, **given)  # type: ignore[arg-type]
    names = ["ann", "ben", "cy", "dee"]
    sizes = settings.table_sizes(len(names))
    asked = settings.game_count(len(names))
    schedule = make_schedule(names, asked, sizes, SECRET, settings.duplicate)
    store = LeagueFolder(out).open_store()
    store_league(store, league_definition(settings, names, [*names, "gone"], len(schedule),
                                          asked, sizes),
                 {name: ("v1", None) for name in names}, schedule)
    return store


def test_every_league_setting_reads_back_typed(tmp_path: Path) -> None:
    rules = preset("biggy-slot")
    ratings = RatingParams(mu=30.0, sigma=7.5, beta=3.0, tau=0.02, draw_probability=0.2)
    limits = {"decision_ms": 500, "memory_mb": 256}
    store = new_league(tmp_path / "league", rules=rules, games=12, players=(2, 4),
                       duplicate=True, strikes_to_forfeit=5, autoplay_forced=True,
                       limits=limits, ratings=ratings)
    try:
        first = read_league(store)
        assert first is not None
        store_changes(store, first, dataclasses.replace(first, looks=7, blocks=3, additions=2))
        stored = read_league(store)
    finally:
        store.close()
    assert stored is not None
    assert stored.kind == LEAGUE
    assert stored.rules == rules and stored.rules_table == rules.to_dict()
    assert stored.options == MatchOptions(5, True)
    assert (stored.strikes_to_forfeit, stored.autoplay_forced) == (5, True)
    assert stored.secret == SECRET
    assert stored.duplicate is True
    assert stored.limits == limits
    assert stored.ratings == ratings and stored.ratings_table == dataclasses.asdict(ratings)
    assert stored.players == (2, 4) and stored.players_asked == (2, 4)
    assert stored.bot_names == ("ann", "ben", "cy", "dee")
    assert stored.bots_given == ("ann", "ben", "cy", "dee", "gone")
    assert stored.games_asked == 12 and stored.games >= 12   # --duplicate: whole tables
    assert stored.started is not None and stored.started.endswith("Z")
    assert (stored.looks, stored.blocks, stored.additions) == (7, 3, 2)
    assert stored.season is None and stored.gauntlet is None


def test_a_league_given_no_settings_reads_back_its_defaults(tmp_path: Path) -> None:
    store = new_league(tmp_path / "league")
    try:
        stored = read_league(store)
    finally:
        store.close()
    assert stored is not None
    assert stored.rules == preset("classic") and stored.options == MatchOptions()
    assert stored.players == (4, 4) and stored.players_asked is None   # the default was asked
    assert (stored.games, stored.games_asked) == (100, 100)
    assert stored.limits == {} and stored.ratings == RatingParams()
    assert (stored.duplicate, stored.looks, stored.blocks, stored.additions) == (False, 1, 1, 0)


def test_a_store_holding_no_league_reads_none(tmp_path: Path) -> None:
    store = LeagueFolder(tmp_path).open_store()
    try:
        assert read_league(store) is None
    finally:
        store.close()


def test_a_seasons_settings_read_back_typed(tmp_path: Path) -> None:
    settings = LeagueSettings(bots=[], seed=SECRET, players=(2, 3), limits={"decision_ms": 900})
    with open_season(tmp_path / "season", settings, round_games=3, max_rounds=5,
                     max_catch_up=7) as season:
        for name in ("ann", "ben", "cy"):
            season.enter(name, "v1", None)
        season.next_round()
        season.enter("ann-2", "v2", None, retire=["ann"])
        cancelled = season.disable("ben")
        stored = season.stored
    assert stored.kind == SEASON and stored.secret == SECRET
    assert stored.players == (2, 3) and stored.limits == {"decision_ms": 900}
    assert stored.bot_names == ("ann", "ben", "cy", "ann-2")
    part = stored.season
    assert part is not None
    assert part.states == {"ann": "retired", "ben": "disabled", "cy": "active",
                           "ann-2": "active"}
    assert part.cancelled == frozenset(cancelled)
    assert (part.rounds, part.entries, part.round_games) == (1, 4, 3)
    assert (part.max_rounds, part.max_catch_up) == (5, 7)
    assert part.round_started is not None


def test_a_gauntlets_settings_read_back_typed(tmp_path: Path) -> None:
    specs = [install_test_bot(tmp_path, name, "honest") for name in ("new", "old", "f1", "f2")]
    params = SprtParams(delta=80.0, max_games=80)
    settings = GauntletSettings(specs[0], specs[1], specs[2:], seed=SECRET, params=params,
                                players=(3, 3), strikes_to_forfeit=4)
    store = LeagueStore(LeagueFolder(tmp_path / "g").gauntlet_store)
    try:
        _create(store, settings)
        stored = read_league(store)
        gauntlet = stored_gauntlet(store)
    finally:
        store.close()
    assert stored is not None and stored.kind == GAUNTLET and stored.gauntlet == gauntlet
    assert stored.secret == SECRET and stored.players == (3, 3)
    assert stored.options == MatchOptions(4, False)
    assert (gauntlet.candidate, gauntlet.baseline, gauntlet.field) == ("new", "old",
                                                                        ("f1", "f2"))
    assert stored_params(gauntlet, store.path) == params


# ------------------------------------------------------------------ the schema version

def test_a_new_store_carries_the_schema_version(tmp_path: Path) -> None:
    new_league(tmp_path).close()
    assert user_version(LeagueFolder(tmp_path).store_path) == SCHEMA_VERSION == 1


def test_a_store_from_before_versions_is_version_1(tmp_path: Path) -> None:
    new_league(tmp_path).close()
    path = LeagueFolder(tmp_path).store_path
    set_user_version(path, 0)   # as every store written before it was kept
    store = LeagueStore.open_readonly(path)   # the club's pages: unchanged
    try:
        assert read_league(store) is not None
    finally:
        store.close()
    assert user_version(path) == 0
    store = LeagueFolder(tmp_path).open_store()   # opened to write: marked as what it is
    store.close()
    assert user_version(path) == 1


def test_a_store_of_another_version_is_one_line_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "league"
    new_league(out).close()
    path = LeagueFolder(out).store_path
    set_user_version(path, 7)
    before = path.read_bytes()
    expected = (f"{path}: a league store of schema version 7; this referee reads version 1 "
                f"(use the referee that wrote it, or start a new league)")
    assert fails("table", out) == f"Error: {expected}"
    assert fails("show", out, "0") == f"Error: {expected}"
    assert path.read_bytes() == before   # nothing was written to it
    with pytest.raises(StoreVersionError, match="schema version 7"):
        LeagueStore.open_readonly(path)


def user_version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def set_user_version(path: Path, version: int) -> None:
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute(f"PRAGMA user_version={version}")
    finally:
        db.close()


# ------------------------------------------------------------------ one owner of each name

def test_only_the_folder_names_the_store_and_only_stored_reads_its_keys() -> None:
    named = string_uses(STORE_NAME)
    assert named == ["referee/league/folder.py"], named
    readers = subprocess.run(["git", "grep", "-l", r"stored\[", "--", "referee"], cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
    assert readers == ["referee/league/stored.py"], readers


def string_uses(text: str) -> list[str]:
    """The source files of referee/ with a string (not a docstring) holding `text`."""
    found = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                    | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)}
        if any(isinstance(node, ast.Constant) and isinstance(node.value, str)
               and text in node.value and id(node) not in docstrings
               for node in ast.walk(tree)):
            found.append(str(path.relative_to(ROOT)))
    return found


def test_each_file_name_of_a_league_folder_is_spelled_once_in_the_package() -> None:
    """The store, the table files, a season's refit state, a gauntlet's store and result:
    each name is written once, in referee/league/folder.py, and nowhere else in the package
    (code, docstrings, templates); everything else asks `LeagueFolder`."""
    names = sorted(path.name for path in LeagueFolder(Path("league")).paths()
                   if "." in path.name and not path.name.endswith(SQLITE_SIDES))
    assert len(names) == 10 and STORE_NAME in names, names
    folder_source = (ROOT / "referee" / "league" / "folder.py").read_text(encoding="utf-8")
    for name in names:
        found = subprocess.run(["git", "grep", "-l", "-F", name, "--", "referee"], cwd=ROOT,
                               capture_output=True, text=True).stdout.split()
        assert found == ["referee/league/folder.py"], (name, found)
        assert folder_source.count(name) == 1, name

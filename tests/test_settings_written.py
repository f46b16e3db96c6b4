"""A league's settings are written through the same typed object they are read back as
(referee.league.stored): the typed form and the stored form are each other's inverse, every
writer (a league, `--until-settled`, `--add`, a season, a gauntlet) stores exactly the typed
object's form, and a store holding a key no referee writes is refused in one line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from league_support import install_test_bot
from test_league_settings import fails

from referee.engine import PRESETS, preset
from referee.game.match import MatchOptions
from referee.league.config import LeagueSettings
from referee.league.extend import add_bots, run_until_settled
from referee.league.folder import LeagueFolder
from referee.league.gauntlet import GauntletSettings, _create
from referee.league.runner import run_league
from referee.league.season import open_season
from referee.league.store import LeagueStore
from referee.league.stored import (
    ACTIVE,
    DISABLED,
    GAUNTLET,
    LEAGUE,
    RETIRED,
    SEASON,
    LimitCeiling,
    StoredGauntlet,
    StoredLeague,
    StoredSeason,
    StoredSettingsError,
    read_league,
    store_changes,
    stored_league,
)
from referee.ratings.sprt import TEST_NAME, SprtParams
from referee.ratings.trueskill import RatingParams

ROOT = Path(__file__).resolve().parent.parent
SECRET = 2**70 + 99   # wider than 64 bits: stored as text

# ------------------------------------------------------------------ the round trip

names = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8)
counts = st.integers(min_value=0, max_value=10_000)
maybe_counts = st.none() | st.integers(min_value=1, max_value=500)
numbers = st.floats(min_value=0.001, max_value=100, allow_nan=False, allow_infinity=False)
sizes = st.tuples(st.integers(2, 3), st.integers(3, 5))
limits = st.builds(LimitCeiling, **{
    field.name: st.none() | st.integers(min_value=1, max_value=100_000)
    for field in dataclasses.fields(LimitCeiling)})
ratings = st.builds(RatingParams, mu=numbers, sigma=numbers, beta=numbers,
                    tau=st.floats(0, 1), draw_probability=st.floats(0, 0.9))


@st.composite
def leagues(draw: st.DrawFn) -> StoredLeague:
    """Any league as a writer could store it (a plain league, grown by --until-settled and
    --add or not)."""
    bots = tuple(draw(st.lists(names, min_size=2, max_size=6, unique=True)))
    return StoredLeague(
        kind=LEAGUE, rules=preset(draw(st.sampled_from(sorted(PRESETS)))),
        options=MatchOptions(draw(st.integers(1, 9)), draw(st.booleans())),
        secret=draw(st.integers(0, 2**128)), duplicate=draw(st.booleans()),
        limits=draw(limits), ratings=draw(ratings), players=draw(sizes),
        players_asked=draw(st.none() | sizes), bot_names=bots,
        bots_given=tuple(draw(st.lists(names, min_size=1, max_size=6, unique=True))),
        games=draw(counts), games_asked=draw(counts),
        started=draw(st.none() | st.just("2026-01-31T18:00:00Z")),
        looks=draw(st.integers(1, 20)), blocks=draw(st.integers(1, 20)),
        additions=draw(st.integers(0, 5)))


@st.composite
def seasons(draw: st.DrawFn) -> StoredLeague:
    league = draw(leagues())
    states = {name: draw(st.sampled_from([ACTIVE, RETIRED, DISABLED]))
              for name in league.bot_names}
    part = StoredSeason(states=states, cancelled=frozenset(draw(st.sets(counts, max_size=5))),
                        rounds=draw(counts), entries=len(states),
                        round_games=draw(st.integers(1, 9)), max_rounds=draw(maybe_counts),
                        max_catch_up=draw(maybe_counts),
                        round_started=draw(st.none() | st.floats(0, 2e9)))
    return dataclasses.replace(league, kind=SEASON, season=part)


@st.composite
def gauntlets(draw: st.DrawFn) -> StoredLeague:
    league = draw(leagues())
    candidate, baseline, *field = league.bot_names
    params = SprtParams(delta=draw(st.floats(1, 1000)), alpha=draw(st.floats(0.01, 0.4)),
                        beta=draw(st.floats(0.01, 0.4)), max_games=draw(st.integers(2, 9000)),
                        min_pairs=draw(st.integers(2, 50)), margin=draw(st.floats(0.1, 1)))
    part = StoredGauntlet(test=TEST_NAME, params=params, candidate=candidate,
                          baseline=baseline, field=tuple(field),
                          renamed=draw(st.dictionaries(names, names, max_size=2)))
    return dataclasses.replace(league, kind=GAUNTLET, gauntlet=part)


# No deadline: the machine may be busy; 50 examples keep the quick lane quick.
@settings(max_examples=50, deadline=None)
@given(leagues() | seasons() | gauntlets())
def test_the_typed_settings_and_their_stored_form_are_each_others_inverse(
        league: StoredLeague) -> None:
    stored = json.loads(json.dumps(league.to_stored()))   # as the store keeps each value
    assert stored_league(stored) == league
    assert stored_league(stored).to_stored() == stored


def test_a_ceiling_reads_as_the_mapping_of_the_limits_it_sets() -> None:
    ceiling = LimitCeiling.of({"memory_mb": 256, "decision_ms": 500})
    assert ceiling == {"decision_ms": 500, "memory_mb": 256} and len(ceiling) == 2
    assert ceiling.to_dict() == {"decision_ms": 500, "memory_mb": 256}
    assert ceiling.get("startup_ms") is None and LimitCeiling() == {}
    assert [field.name for field in dataclasses.fields(LimitCeiling)] == \
        ["decision_ms", "game_bank_ms", "startup_ms", "memory_mb", "cpu_seconds",
         "max_processes", "build_seconds"]   # every bot limit (referee.bots.spec.LIMIT_KEYS)
    with pytest.raises(ValueError, match="unknown limit 'decision'"):
        LimitCeiling.of({"decision": 500})


# ------------------------------------------------------------------ what a store may hold

def stored_form(**changes: object) -> dict:
    """The stored form of a small league with `changes` made to it (None: the key left out)."""
    league = StoredLeague(
        kind=LEAGUE, rules=preset("classic"), options=MatchOptions(), secret=SECRET,
        duplicate=False, limits=LimitCeiling(decision_ms=900), ratings=RatingParams(),
        players=(2, 2), players_asked=(2, 2), bot_names=("ann", "ben"),
        bots_given=("ann", "ben"), games=4, games_asked=4, started="2026-01-31T18:00:00Z")
    stored = {**league.to_stored(), **changes}
    return {key: value for key, value in stored.items() if value is not None}


@pytest.mark.parametrize(("changes", "line"), [
    ({"gmaes": 40}, "unknown setting 'gmaes' in the store"),
    ({"limits": {"decision": 500}}, "unknown limit 'decision' in the stored limits"),
    ({"ratings": {"mu": 25.0, "tua": 0.1}}, "unknown parameter 'tua' in the stored ratings"),
    ({"kind": GAUNTLET, "test": TEST_NAME, "candidate": "ann", "baseline": "ben",
      "field": [], "params": {"delta": 50.0, "max_pair": 9}},
     "unknown parameter 'max_pair' in the stored params"),
    ({"players": None}, "the store holds no setting 'players'"),
])
def test_a_store_with_a_key_no_referee_writes_is_refused_in_one_line(
        changes: dict, line: str) -> None:
    with pytest.raises(StoredSettingsError) as refused:
        stored_league(stored_form(**changes), "out/league.db")
    message = str(refused.value)
    assert message.startswith("out/league.db: ") and line in message and "\n" not in message


def test_the_command_line_says_an_unknown_stored_key_in_one_line(tmp_path: Path) -> None:
    store = LeagueFolder(tmp_path / "league").open_store()
    try:
        store.create(stored_form(strikes_to_forfiet=3), {}, [])   # a hand-made store
    finally:
        store.close()
    line = fails("table", tmp_path / "league")
    assert line.startswith("Error: ") and "unknown setting 'strikes_to_forfiet'" in line
    assert "\n" not in line and "internal error" not in line


def test_keys_an_older_referee_left_out_read_as_they_meant_and_stay_out(
        tmp_path: Path) -> None:
    # A league as the first releases stored it: no kind, asked values, limits, ratings, ...
    old = {"rules": preset("classic").to_dict(), "seed": str(SECRET), "strikes_to_forfeit": 3,
           "autoplay_forced": False, "players": [2, 2], "bot_names": ["ann", "ben"],
           "games": 4}
    store = LeagueStore(LeagueFolder(tmp_path).store_path)
    try:
        store.create(old, {}, [])
        before = read_league(store)
        assert before is not None and before.kind == LEAGUE
        assert (before.players_asked, before.bots_given, before.games_asked) == \
            ((2, 2), ("ann", "ben"), 4)
        assert (before.limits, before.ratings, before.looks) == ({}, RatingParams(), 1)
        store_changes(store, before, dataclasses.replace(before, looks=3))
        assert store.settings() == {**old, "looks": 3}   # only what changed is written
        after = read_league(store)
    finally:
        store.close()
    assert after == dataclasses.replace(before, looks=3)


# ------------------------------------------------------------------ every writer

def stores_its_typed_form(path: Path) -> StoredLeague:
    """The league in the store at `path`, after checking that the store holds exactly the typed
    object's stored form: every key a writer wrote is one the typed object writes, with its
    value."""
    store = LeagueStore.open_readonly(path)
    try:
        league = read_league(store)
        assert league is not None
        assert store.settings() == league.to_stored()
        return league
    finally:
        store.close()


def tiny_league(tmp_path: Path, **given: object) -> LeagueSettings:
    """A league of two honest bots, played."""
    specs = [install_test_bot(tmp_path, name, "honest") for name in ("ann", "ben")]
    settings = LeagueSettings(bots=specs, games=2, players=(2, 2), seed=SECRET, concurrency=1,
                              out=tmp_path / "league", sandbox=False,
                              limits={"decision_ms": 2000}, **given)  # type: ignore[arg-type]
    asyncio.run(run_league(settings))
    return settings


def test_a_league_stores_its_typed_settings(tmp_path: Path) -> None:
    tiny_league(tmp_path, duplicate=True, strikes_to_forfeit=4)
    league = stores_its_typed_form(LeagueFolder(tmp_path / "league").store_path)
    assert (league.kind, league.secret, league.players) == (LEAGUE, SECRET, (2, 2))
    assert league.limits == {"decision_ms": 2000} and league.duplicate
    assert league.options == MatchOptions(4, False) and league.bot_names == ("ann", "ben")


def test_until_settled_and_add_store_their_typed_settings(tmp_path: Path) -> None:
    settings = tiny_league(tmp_path)
    first = stores_its_typed_form(LeagueFolder(tmp_path / "league").store_path)
    asyncio.run(run_until_settled(settings, resume=True, max_games=4))
    settled = stores_its_typed_form(LeagueFolder(tmp_path / "league").store_path)
    assert settled.looks == 2 and settled.blocks in (1, 2)
    assert settled.games == first.games * settled.blocks
    newcomer = install_test_bot(tmp_path, "cy", "honest")
    asyncio.run(add_bots(settings, [newcomer]))
    added = stores_its_typed_form(LeagueFolder(tmp_path / "league").store_path)
    assert added.bot_names == ("ann", "ben", "cy") and added.additions == 1
    assert added.games > settled.games
    assert dataclasses.replace(added, bot_names=settled.bot_names, additions=0,
                               games=settled.games) == settled   # nothing else changed


def test_a_season_stores_its_typed_settings_at_every_change(tmp_path: Path) -> None:
    settings = LeagueSettings(bots=[], seed=SECRET, players=(2, 3),
                              limits={"decision_ms": 900})
    out = tmp_path / "season"
    with open_season(out, settings, round_games=2, max_rounds=4, max_catch_up=6) as season:
        seen = [stores_its_typed_form(LeagueFolder(out).store_path)]
        for step in (lambda: season.enter("ann", "v1", None),
                     lambda: season.enter("ben", "v1", None),
                     lambda: season.enter("cy", "v1", None),
                     season.next_round,
                     lambda: season.enter("ann-2", "v2", None, retire=["ann"]),
                     lambda: season.disable("ben"),
                     lambda: season.restore("ben"),
                     lambda: season.set_limits({"memory_mb": 512})):
            step()
            seen.append(stores_its_typed_form(LeagueFolder(out).store_path))
    last = seen[-1]
    assert last.kind == SEASON and last.limits == {"memory_mb": 512}
    assert last.season is not None and last.season.states == {
        "ann": RETIRED, "ben": ACTIVE, "cy": ACTIVE, "ann-2": ACTIVE}
    assert (last.season.rounds, last.season.entries, last.season.max_catch_up) == (1, 4, 6)
    assert all(earlier != later for earlier, later in zip(seen, seen[1:], strict=False))


def test_a_gauntlet_stores_its_typed_settings(tmp_path: Path) -> None:
    specs = [install_test_bot(tmp_path, name, "honest") for name in ("new", "old", "f1")]
    params = SprtParams(delta=70.0, max_games=40)
    settings = GauntletSettings(specs[0], specs[1], specs[2:], seed=SECRET, params=params,
                                players=(2, 3), strikes_to_forfeit=2)
    store = LeagueStore(tmp_path / "g" / "gauntlet.db")
    try:
        _create(store, settings)   # what run_gauntlet stores when it makes a gauntlet
    finally:
        store.close()
    gauntlet = stores_its_typed_form(LeagueFolder(tmp_path / "g").gauntlet_store)
    assert gauntlet.kind == GAUNTLET and gauntlet.gauntlet is not None
    assert gauntlet.gauntlet.params == params and gauntlet.gauntlet.test == TEST_NAME
    assert (gauntlet.gauntlet.candidate, gauntlet.gauntlet.field) == ("new", ("f1",))


def test_only_the_typed_object_writes_a_stores_settings() -> None:
    """No writer spells a settings key: the store's create and extend are called by
    referee.league.stored alone."""
    writers = subprocess.run(["git", "grep", "-n", "-E", r"\.(create|extend)\(\{|"
                              r"store\.(create|extend)\(", "--", "referee/league"], cwd=ROOT,
                             capture_output=True, text=True).stdout.splitlines()
    assert [line for line in writers if not line.startswith("referee/league/stored.py:")] \
        == [], writers

"""The season library: a league that entrants join, leave and are disabled in while it runs,
played by real bot processes over gRPC into a real store that the league's commands read."""

from __future__ import annotations

import asyncio
import collections
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import referee

from referee.league.config import LeagueSettings
from referee.league.executors.local import LocalExecutor
from referee.league.folder import LeagueFolder
from referee.league.schedule import table_sizes
from referee.league.season import (
    ACTIVE,
    DISABLED,
    RETIRED,
    Season,
    SeasonError,
    open_season,
    play_pending,
    season_specs,
    snapshot,
)

ROOT = Path(__file__).resolve().parent.parent


def bot_copy(tmp: Path, name: str, sample: str) -> Path:
    """A sample bot copied into a folder of its own, with a spec named `name`."""
    folder = tmp / "bots" / name
    shutil.copytree(ROOT / "sample_bots" / sample, folder)
    spec = folder / "bot.toml"
    spec.write_text(f'name = "{name}"\ncommand = ["{{python}}", "main.py"]\n')
    return spec


def play(season: Season) -> int:
    """Play every pending game with the bots they need."""
    names = sorted({bot for game in season.pending() for bot in game.bots})
    if not names:
        return 0

    async def go() -> int:
        executor = LocalExecutor(season_specs(season, names), concurrency=3, sandbox=None)
        async with executor:
            await executor.start(skip_broken=False)
            return await play_pending(season, executor)

    return asyncio.run(go())


def run_season(out: Path, specs: dict[str, Path]) -> Season:
    """A scripted season: three bots, a round, a newcomer, a new version, a disable, a round."""
    season = open_season(out, LeagueSettings(bots=[], seed=2024, players=(3, 3)), round_games=3)
    for name in ("a", "b", "c"):
        assert season.enter(name, "v1", str(specs[name])) == []   # no field games yet: none
    first = season.next_round()
    assert first and season.next_round() == []                 # not while games are pending
    assert play(season) == len(first)
    joined = season.enter("d", "v1", str(specs["d"]))
    assert joined and all("d" in game.bots for game in joined)
    version2 = season.enter("a2", "v2", str(specs["a2"]), retire=["a"])
    assert all("a" not in game.bots for game in version2)       # the old one is not its field
    gone = season.disable("b")
    assert gone and all("b" in season.store.schedule()[i].bots for i in gone)
    assert all("b" not in game.bots for game in season.pending())
    play(season)
    last = season.next_round()
    assert {bot for game in last for bot in game.bots} == {"c", "d", "a2"}
    play(season)
    return season


@pytest.mark.slow
def test_a_season_grows_retires_and_disables_and_is_the_same_twice(tmp_path: Path) -> None:
    specs = {name: bot_copy(tmp_path, name, sample) for name, sample in
             (("a", "random"), ("b", "greedy"), ("c", "random"), ("d", "greedy"),
              ("a2", "greedy"))}
    one = run_season(tmp_path / "one", specs)
    assert one.states() == {"a": RETIRED, "b": DISABLED, "c": ACTIVE, "d": ACTIVE,
                            "a2": ACTIVE}
    schedule = one.store.schedule()
    played = one.store.played()
    assert len(played) + len(one.cancelled()) == len(schedule) and not one.pending()
    # Everyone keeps a row, the retired and the disabled with the games they played.
    games = collections.Counter(bot for game in played for bot in game.bots)
    assert set(games) == {"a", "b", "c", "d", "a2"}
    rows = {row["table"]["bot"]: row for row in snapshot(one)["rows"]}
    assert rows["a"]["state"] == RETIRED and rows["b"]["state"] == DISABLED
    assert rows["a"]["table"]["games"] == games["a"]
    assert rows["a2"]["table"]["strength_low"] <= rows["a2"]["table"]["strength_high"]
    data = snapshot(one)
    assert "seed" not in data["facts"] and data["facts"]["rounds"] == 2
    assert data["head_to_head"]["c"]["d"]["games"] > 0
    # The newcomer sat in every seat of its tables.
    seats = collections.Counter(game.bots.index("d") for game in schedule if "d" in game.bots)
    assert set(seats) == set(range(3))
    # Same entries in the same order with the same seed: the same games, played the same.
    two = run_season(tmp_path / "two", specs)
    assert two.store.schedule() == schedule
    assert [(g.bots, g.places, g.money) for g in two.store.played()] == \
        [(g.bots, g.places, g.money) for g in played]
    assert two.cancelled() == one.cancelled()
    one.close()
    two.close()


@pytest.mark.slow
def test_ranks_count_the_current_versions_not_every_version(tmp_path: Path) -> None:
    """a2 replaces a and b is taken out: three bots play on. Their rank ranges are among those
    three (a and b stay in the fit, unranked), and the tables written at the close rank one
    row per bot, the other versions in a section of their own."""
    from referee.report.site import build_report
    from referee.report.table_files import write_outputs

    specs = {name: bot_copy(tmp_path, name, sample) for name, sample in
             (("a", "random"), ("b", "greedy"), ("c", "random"), ("d", "greedy"),
              ("a2", "greedy"))}
    season = run_season(tmp_path / "s", specs)
    current = ["c", "d", "a2"]
    assert season.active() == current
    data = snapshot(season)
    ranked = [row["table"] for row in data["rows"] if row["state"] == ACTIVE]
    assert [row["table"]["bot"] for row in data["rows"][:3]] == [r["bot"] for r in ranked]
    assert sorted(row["bot"] for row in ranked) == sorted(current)
    assert [row["rank"] for row in ranked] == [1, 2, 3]
    assert all(1 <= row["rank_low"] <= row["rank_high"] <= len(ranked) for row in ranked), ranked
    assert ranked[-1]["separated_from_next"] is None
    others = {row["table"]["bot"]: row["table"] for row in data["rows"][3:]}
    assert set(others) == {"a", "b"}
    assert all(row["rank"] is None and row["rank_low"] is None and row["rank_high"] is None
               and row["strength_low"] <= row["strength"] <= row["strength_high"]
               for row in others.values())
    assert snapshot(season) == data   # the same seed and games: the same table

    outcome = season.outcome()
    write_outputs(outcome)
    build_report(tmp_path / "s", None, outcome)
    table = json.loads(LeagueFolder(tmp_path / "s").table_json.read_text())
    assert sorted(row["bot"] for row in table["table"]) == sorted(current)
    assert [row["rank"] for row in table["table"]] == [1, 2, 3]
    assert all(row["rank_high"] <= 3 for row in table["table"])
    assert {row["bot"]: row["rank"] for row in table["unranked"]} == {"a": None, "b": None}
    markdown = LeagueFolder(tmp_path / "s").table_md.read_text()
    ranked_part, _, apart = markdown.partition("## Not ranked")
    assert "| a | " not in ranked_part and "| a | " in apart and "| b | " in apart
    report = (LeagueFolder(tmp_path / "s").report / "index.html").read_text()
    league, _, rest = report.partition('id="not-ranked"')
    assert league.count('class="bot-row"') == 3 and 'data-bot="a"' not in league
    assert 'href="bots/bot-0.html">a</a>' in rest   # a's page, listed apart
    season.close()
    shown = referee("table", tmp_path / "s").stdout
    said = " ".join(shown.split()).partition(
        "not ranked (versions retired or taken out; their games stay in the fit): ")[2]
    assert sorted(said.replace(",", " ").split()[:2]) == ["a", "b"], shown


@pytest.mark.slow
def test_the_league_commands_read_a_season(tmp_path: Path) -> None:
    specs = {name: bot_copy(tmp_path, name, sample) for name, sample in
             (("a", "random"), ("b", "greedy"), ("c", "random"))}
    with open_season(tmp_path / "s", LeagueSettings(bots=[], seed=5, players=(2, 3)),
                     round_games=2) as season:
        for name in specs:
            season.enter(name, "v1", str(specs[name]))
        assert set(table_sizes(3, (2, 3))) == {len(g.bots) for g in season.next_round()}
        recorded = play(season)
    out = tmp_path / "s"
    table = referee("table", out)
    assert f"{recorded}/{recorded} games recorded" in table.stdout
    assert json.loads(LeagueFolder(out).table_json.read_text())
    shown = referee("show", out, "1")
    assert "game" in shown.stdout.lower()
    referee("export", out, "--out", tmp_path / "e.jsonl")
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == recorded
    referee("verify", out)   # fails with its output if the store does not verify
    referee("report", out)
    assert (LeagueFolder(out).report / "index.html").is_file()


def test_a_season_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    spec = bot_copy(tmp_path, "a", "random")
    with pytest.raises(SeasonError, match="no season here"):
        open_season(tmp_path / "none")
    with open_season(tmp_path / "s", LeagueSettings(bots=[], seed=1)) as season:
        season.enter("a", "v1", str(spec))
        with pytest.raises(SeasonError, match="has entered this season already"):
            season.enter("a", "v1", str(spec))
        with pytest.raises(SeasonError, match="is not in this season"):
            season.disable("zed")
        assert season.next_round() == []          # one entrant fills no table


def test_late_entrants_get_the_rounds_share_however_many_come(tmp_path: Path) -> None:
    """Ten newcomers one after another each get what a round gave the first bots (capped),
    not more and more as the field's games grow with each newcomer's tables."""
    spec = bot_copy(tmp_path, "a", "random")
    for round_games, cap, expected in ((2, 40, 2), (8, 5, 5)):
        out = tmp_path / f"s{round_games}"
        with open_season(out, LeagueSettings(bots=[], seed=3, players=(2, 2)),
                         round_games=round_games, max_catch_up=cap) as season:
            for name in ("a", "b"):
                season.enter(name, "v1", str(spec))
            assert len(season.next_round()) == round_games
            for n in range(10):
                added = season.enter(f"n{n}", "v1", str(spec))
                assert len(added) == expected and all(f"n{n}" in g.bots for g in added)


def refit_subprocess(out: Path) -> dict:
    """The season's snapshot as the runner gets it: `python -m referee.server.runner.refit`."""
    done = subprocess.run([sys.executable, "-m", "referee.server.runner.refit", str(out)],
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_refit_resumes_trueskill_and_gives_the_table_of_a_refit_from_scratch(
        tmp_path: Path) -> None:
    from referee.server.runner.refit import load_state

    specs = {name: bot_copy(tmp_path, name, sample) for name, sample in
             (("a", "random"), ("b", "greedy"), ("c", "random"), ("d", "greedy"))}
    out = tmp_path / "season"
    state_file = LeagueFolder(out).refit_state
    season = open_season(out, LeagueSettings(bots=[], seed=77, players=(3, 3)), round_games=3)
    for name in specs:
        season.enter(name, "v1", str(specs[name]))
    first = season.next_round()
    play(season)
    refit_subprocess(out)
    state = load_state(state_file)
    assert state is not None and state.through == max(game.index for game in first)
    second = season.next_round()
    season.disable("d")                                   # its games of round 2 are cancelled
    play(season)
    resumed = refit_subprocess(out)
    state = load_state(state_file)
    assert state is not None and state.through == max(game.index for game in second)
    state_file.unlink()
    assert resumed == refit_subprocess(out)              # from scratch: the same table
    # A state file that is not one costs a line and the time to rate every game again.
    state_file.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "referee.server.runner.refit", str(out)],
                          capture_output=True, text=True, timeout=600, check=True)
    assert json.loads(done.stdout) == resumed
    assert done.stderr.count("\n") == 1 and "ignored, rating every game again" in done.stderr
    season.close()


def test_the_runners_refit_runs_blas_in_one_thread(monkeypatch, tmp_path):
    """The refit's subprocess gets BLAS in one thread: a second thread only busy-waits for
    the core a game or a page needs (bench/README.md)."""
    from referee.server.runner import refit as refit_module

    seen = {}

    class Done:
        returncode = 0

        async def communicate(self):
            return b"{}", b""

    async def spawn(*args, **kwargs):
        seen.update(kwargs.get("env") or {})
        return Done()

    monkeypatch.setattr(refit_module.asyncio, "create_subprocess_exec", spawn)
    monkeypatch.setenv("REFEREE_PROBE", "kept")
    assert asyncio.run(refit_module.refit(tmp_path)) == {}
    assert seen.get("OPENBLAS_NUM_THREADS") == "1" and seen.get("OMP_NUM_THREADS") == "1"
    assert seen.get("REFEREE_PROBE") == "kept"

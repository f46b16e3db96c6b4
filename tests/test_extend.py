"""Leagues that grow: blocks until settled, and bots that join late (schedules and real CLI)."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

from cli_support import referee
from test_league import bot_spec

from referee.league.entrants import more_games, newcomer_games
from referee.league.folder import LeagueFolder
from referee.league.schedule import make_schedule

ROOT = Path(__file__).resolve().parents[1]
GREEDY = ROOT / "sample_bots" / "greedy.toml"
FIELD = ["a", "b", "c", "d"]


def test_newcomer_games_are_balanced_and_numbered_after_the_league():
    schedule = make_schedule(FIELD, 40, 3, seed=11)
    games = newcomer_games(schedule, FIELD, ["new", "newer"], (3, 3), 11, False, 1)
    average = sum(len(g.bots) for g in schedule) / len(FIELD)   # 30 games per field bot
    per_bot = Counter(bot for game in games for bot in game.bots)
    assert per_bot["new"] == per_bot["newer"] == round(average)
    assert [g.index for g in games] == list(range(40, 40 + len(games)))
    assert min(g.group for g in games) > max(g.group for g in schedule)
    for game in games:   # one newcomer per table, with bots of the field
        assert sum(bot in ("new", "newer") for bot in game.bots) == 1
    field_uses = [per_bot[bot] for bot in FIELD]
    assert max(field_uses) - min(field_uses) <= 2
    seats = Counter(game.bots.index("new") for game in games if "new" in game.bots)
    assert max(seats.values()) - min(seats.values()) <= 1       # its seat cycles
    assert games == newcomer_games(schedule, FIELD, ["new", "newer"], (3, 3), 11, False, 1)
    assert [g.seed for g in games] != [g.seed for g in newcomer_games(
        schedule, FIELD, ["new", "newer"], (3, 3), 11, False, 2)]


def test_duplicate_newcomer_tables_are_played_in_every_rotation():
    schedule = make_schedule(FIELD, 24, 3, seed=3, duplicate=True)
    games = newcomer_games(schedule, FIELD, ["new"], (3, 3), 3, True, 1)
    by_group: dict[int, list] = {}
    for game in games:
        by_group.setdefault(game.group, []).append(game)
    for rotations in by_group.values():
        assert len(rotations) == 3 and len({g.seed for g in rotations}) == 1
        assert sorted(g.bots.index("new") for g in rotations) == [0, 1, 2]
        assert [g.rotation for g in rotations] == [0, 1, 2]


def test_more_games_continue_the_numbering_with_new_seeds():
    schedule = make_schedule(FIELD, 12, 2, seed=5)
    block = more_games(schedule, FIELD, 12, (2, 2), 5, False, 1)
    assert [g.index for g in block] == list(range(12, 24))
    assert min(g.group for g in block) == max(g.group for g in schedule) + 1
    assert not {g.seed for g in block} & {g.seed for g in schedule}
    assert Counter(bot for g in block for bot in g.bots) == Counter(
        bot for g in schedule for bot in g.bots)   # a balanced block like the first


def stored_games(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    rows = con.execute("SELECT idx, game_id, bots, seed, places, money, record FROM games "
                       "ORDER BY idx").fetchall()
    con.close()
    return rows


def test_until_settled_stops_on_its_own(tmp_path: Path) -> None:
    weak = bot_spec(tmp_path, "honest-a")
    done = referee("league", GREEDY, weak, "--players", "2", "--games", "10", "--seed",
                   "2" * 30, "--until-settled", "--out", tmp_path / "settled", "--quiet",
                   "--no-report")
    # a look after each block of the 10-block budget: z = Phi^-1(1 - 0.05 / 20) = 2.81
    assert "settled: every pair of neighbours separated (gap z > 2.81, 95% over 10 looks)" \
        in " ".join(done.stdout.split())
    table = json.loads(LeagueFolder(tmp_path / "settled").table_json.read_text())["table"]
    assert [row["bot"] for row in table] == ["greedy", "honest-a"]
    assert table[0]["strength_low"] > table[1]["strength_high"]
    games = len(stored_games(LeagueFolder(tmp_path / "settled").store_path))
    assert games % 10 == 0 and games < 100     # whole blocks, before the 10-block budget


def test_until_settled_names_the_pairs_left_at_the_budget(tmp_path: Path) -> None:
    twins = [bot_spec(tmp_path, f"twin-{n}") for n in "ab"]
    done = referee("league", *twins, "--players", "2", "--games", "8", "--seed", "3" * 30,
                   "--until-settled", "--max-games", "20", "--out", tmp_path / "twins",
                   "--no-report")
    assert "not settled within 20 games" in done.stdout
    # each new block is announced with its reason (3 looks: blocks of 8, 8 and 4 games)
    said = " ".join(done.stderr.split())
    assert "block 2 of at most 3: 8 more games after 8, because not separated " \
        "(gap z > 2.39, 95% over 3 looks): twin-" in said
    assert "block 3 of at most 3: 4 more games after 16, because" in said
    assert "twin-a ~ twin-b" in done.stdout or "twin-b ~ twin-a" in done.stdout
    assert len(stored_games(LeagueFolder(tmp_path / "twins").store_path)) == 20


def test_add_plays_only_the_newcomers_games_on_a_finished_league(tmp_path: Path) -> None:
    field = [bot_spec(tmp_path, f"honest-{n}") for n in "abc"]
    out = tmp_path / "league"
    referee("league", *field, "--players", "3", "--games", "6", "--seed", "4" * 30,
            "--out", out, "--quiet", "--no-report")
    before = stored_games(LeagueFolder(out).store_path)
    newer = tmp_path / "v2"
    newer.mkdir()
    second_version = bot_spec(newer, "honest-a")          # same name, another spec
    newcomer = bot_spec(tmp_path, "honest-d")
    added = referee("league", "--out", out, "--add", newcomer, "--add", second_version,
                    "--quiet", "--no-report")
    after = stored_games(LeagueFolder(out).store_path)
    assert after[: len(before)] == before                  # stored games untouched
    new_games = after[len(before):]
    assert f"played now: {len(new_games)}" in added.stdout
    assert len(new_games) == 2 * 6                         # 6 games each, the field's average
    for _, _, bots, *_ in new_games:
        seated = json.loads(bots)
        assert sum(bot in ("honest-d", "honest-a-2") for bot in seated) == 1
    table = json.loads(LeagueFolder(out).table_json.read_text())["table"]
    assert sorted(row["bot"] for row in table) == ["honest-a", "honest-a-2", "honest-b",
                                                   "honest-c", "honest-d"]
    again = referee("league", "--out", out, "--add", newcomer, check=False)
    assert again.returncode != 0 and "already in the league as 'honest-d'" in again.stderr
    assert stored_games(LeagueFolder(out).store_path) == after
    none = referee("league", "--out", tmp_path / "nothing", "--add", newcomer, check=False)
    assert none.returncode != 0 and "holds no league" in none.stderr
    assert "Traceback" not in none.stderr + again.stderr

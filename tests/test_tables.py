"""League tables from hand-made games: exact numbers, head-to-head, and the renderings."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import pytest
from rich.console import Console

from referee.cli.tables import render_terminal
from referee.league.folder import LeagueFolder
from referee.league.season import SeasonRow
from referee.league.stored import RETIRED
from referee.league.tables import Row, head_to_head, league_table, percentile
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import Ratings, rate_games
from referee.report.table_files import h2h_csv, to_csv, to_json, to_markdown, write_tables

BOTS = ["ann", "bob", "cat"]
GAMES = [
    # ann and bob share first place (R26); bob has a timeout strike.
    PlayedGame(0, ("ann", "bob", "cat"), (1, 1, 3), (100_000, 100_000, 50_000),
               (False, False, False), ({}, {"timeout": 1}, {}),
               ((1000, 3000), (2000,), ())),
    # cat forfeits (last place) after a crash and two timeouts.
    PlayedGame(1, ("bob", "cat"), (1, 2), (80_000, 60_000), (False, True),
               ({}, {"crash": 1, "timeout": 2}), ((4000, 6000), (500,))),
    PlayedGame(2, ("cat", "ann"), (1, 2), (90_000, 30_000), (False, False),
               ({}, {}), ((1500,), (5000, 7000, 9000))),
]
# conservative: cat 20-3*1 = 17 first; ann 30-15 = 15 and bob 24-9 = 15 tie: by name.
RATINGS = Ratings(mu={"ann": 30.0, "bob": 24.0, "cat": 20.0},
                  sigma={"ann": 5.0, "bob": 3.0, "cat": 1.0})
NO_STRIKES = {"timeout": 0, "illegal": 0, "malformed": 0, "protocol": 0, "crash": 0}


@pytest.fixture
def rows() -> list[Row]:
    return league_table(GAMES, BOTS, RATINGS)


@pytest.fixture
def h2h():
    return head_to_head(GAMES, BOTS)


def test_rows_are_ranked_by_conservative_rating_then_name(rows):
    assert [(row.rank, row.bot) for row in rows] == [(1, "cat"), (2, "ann"), (3, "bob")]
    cat = rows[0]
    assert (cat.mu, cat.sigma, cat.conservative) == (20.0, 1.0, 17.0)


def test_exact_numbers(rows):
    cat, ann, bob = rows
    assert ann == Row(
        rank=2, bot="ann", mu=30.0, sigma=5.0, conservative=15.0, games=2, wins=1,
        win_pct=50.0, avg_place=1.5, avg_money=65_000.0, seat_win_pct=[100.0, 0.0, None],
        strikes=NO_STRIKES, forfeits=0,
        think_p50_ms=5.0, think_p95_ms=pytest.approx(8.6),   # 7000 + 0.8 * 2000 us
        seat_win_pct_by_size={2: [None, 0.0], 3: [100.0, None, None]},
    )
    # A shared first place is a win for each bot that shares it.
    assert (bob.games, bob.wins, bob.win_pct, bob.avg_place) == (2, 2, 100.0, 1.0)
    assert bob.avg_money == 90_000.0
    assert bob.seat_win_pct == [100.0, 100.0, None]
    assert bob.strikes == {**NO_STRIKES, "timeout": 1}
    assert (bob.think_p50_ms, bob.think_p95_ms) == (4.0, pytest.approx(5.8))
    assert (cat.games, cat.wins, cat.avg_place, cat.forfeits) == (3, 1, 2.0, 1)
    assert cat.win_pct == pytest.approx(100 / 3)
    assert cat.avg_money == pytest.approx(200_000 / 3)
    assert cat.seat_win_pct == [100.0, 0.0, 0.0]
    assert cat.strikes == {**NO_STRIKES, "timeout": 2, "crash": 1}
    assert (cat.think_p50_ms, cat.think_p95_ms) == (1.0, pytest.approx(1.45))


def test_bots_without_games_and_real_ratings():
    ratings = rate_games(GAMES, [*BOTS, "dan"])
    rows = league_table(GAMES, [*BOTS, "dan"], ratings)
    assert [row.bot for row in rows] == ratings.bots()
    dan = next(row for row in rows if row.bot == "dan")
    assert (dan.games, dan.wins, dan.forfeits) == (0, 0, 0)
    assert (dan.win_pct, dan.avg_place, dan.avg_money) == (None, None, None)
    assert dan.seat_win_pct == [None, None, None]
    assert (dan.think_p50_ms, dan.think_p95_ms) == (None, None)
    with pytest.raises(ValueError, match="unknown bot"):
        league_table(GAMES, ["ann", "bob"], ratings)
    with pytest.raises(ValueError, match="unknown bot"):
        head_to_head(GAMES, ["ann", "bob"])


def test_head_to_head_counts(h2h):
    assert h2h == {
        ("ann", "bob"): (1, 0, 0), ("bob", "ann"): (1, 0, 0),   # shared first: nobody ahead
        ("ann", "cat"): (2, 1, 1), ("cat", "ann"): (2, 1, 1),
        ("bob", "cat"): (2, 2, 0), ("cat", "bob"): (2, 0, 2),
    }
    assert head_to_head([], ["a", "b"]) == {("a", "b"): (0, 0, 0), ("b", "a"): (0, 0, 0)}


def test_percentile_interpolates_linearly():
    assert percentile([], 50) is None
    assert percentile([7], 95) == 7
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 0, 20], 100) == 20 and percentile([10, 0, 20], 0) == 0


def test_csv_parses_back(rows):
    parsed = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert list(parsed[0]) == [
        "rank", "bot", "strength", "strength_low", "strength_high", "rank_low",
        "rank_high", "separated_from_next", "mu", "sigma", "conservative", "games", "wins",
        "win_pct", "avg_place", "avg_money", "seat0_of_2_win_pct", "seat1_of_2_win_pct",
        "seat0_of_3_win_pct", "seat1_of_3_win_pct", "seat2_of_3_win_pct",
        "strikes_timeout", "strikes_illegal", "strikes_malformed", "strikes_protocol",
        "strikes_crash", "forfeits", "all_forfeit", "think_p50_ms", "think_p95_ms",
    ]
    for row, line in zip(rows, parsed, strict=True):
        assert line["bot"] == row.bot and int(line["rank"]) == row.rank
        assert int(line["games"]) == row.games and int(line["wins"]) == row.wins
        # Rounded to 2 decimals for reading (full precision is in table.json).
        assert float(line["mu"]) == round(row.mu, 2)
        assert float(line["win_pct"]) == round(row.win_pct, 2)
        assert float(line["avg_money"]) == round(row.avg_money, 2)
        assert float(line["think_p95_ms"]) == round(row.think_p95_ms, 2)
        seats = [line[f"seat{s}_of_3_win_pct"] for s in range(3)]
        assert [float(v) if v else None for v in seats] == row.seat_win_pct_by_size[3]
        assert {k: int(line[f"strikes_{k}"]) for k in row.strikes} == row.strikes
        assert int(line["forfeits"]) == row.forfeits


def test_markdown_parses_back(rows, h2h):
    text = to_markdown(rows, h2h)
    table, matrix = text.split("## Head to head")
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    records = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
               for line in lines[2:]]
    assert [r["bot"] for r in records] == ["cat", "ann", "bob"]
    cat, ann, bob = records
    assert cat["win_pct"] == "33.33" and cat["avg_money"] == "66666.67"
    assert cat["strikes_crash"] == "1" and cat["forfeits"] == "1"
    assert ann["seat2_of_3_win_pct"] == "-" and ann["think_p95_ms"] == "8.60"
    assert ann["seat0_of_3_win_pct"] == "100.00" and ann["seat1_of_2_win_pct"] == "0.00"
    assert float(bob["mu"]) == 24.0 and bob["wins"] == "2"
    cells = {line.strip("|").split("|")[0].strip(): [c.strip() for c in line.strip("|").split("|")]
             for line in matrix.splitlines() if line.startswith("|")}
    assert cells[""] == ["", "cat", "ann", "bob"]
    assert cells["bob"] == ["bob", "2-0", "0-0", "x"]
    assert cells["cat"] == ["cat", "x", "1-1", "0-2"]


def test_json_parses_back(rows, h2h):
    data = json.loads(json.dumps(to_json(rows, h2h)))
    assert [entry["bot"] for entry in data["table"]] == ["cat", "ann", "bob"]
    cat = data["table"][0]
    assert cat["seat_win_pct"] == [100.0, 0.0, 0.0]
    assert cat["strikes"] == {**NO_STRIKES, "timeout": 2, "crash": 1}
    assert cat["win_pct"] == rows[0].win_pct and cat["avg_money"] == rows[0].avg_money
    assert data["table"][1]["seat_win_pct"] == [100.0, 0.0, None]
    pairs = {(e["a"], e["b"]): (e["games"], e["a_ahead"], e["b_ahead"])
             for e in data["head_to_head"]}
    assert pairs == h2h


def fitted_row() -> Row:
    """A row with every field set, the global fit's and the per-size ones too."""
    return Row(
        rank=2, bot="ann.v3", mu=30.5, sigma=4.25, conservative=17.75, games=12, wins=5,
        win_pct=41.666666666666664, avg_place=1.75, avg_money=61_250.5,
        seat_win_pct=[50.0, None, 25.0], strikes={**NO_STRIKES, "timeout": 2}, forfeits=1,
        think_p50_ms=3.5, think_p95_ms=None, strength=35.2, strength_low=-12.75,
        strength_high=83.0, rank_low=1, rank_high=3, separated_from_next=False, all_forfeit=1,
        seat_win_pct_by_size={2: [50.0, None], 3: [50.0, 0.0, 25.0]},
        note_values={"risk": 0.25}, strength_by_size={2: 40.0, 3: None},
        games_by_size={2: 4, 3: 8}, note_names_dropped=3)


def test_a_row_s_json_form_reads_back_as_the_same_row(rows):
    """to_json, through JSON text, and from_json give the same row, its per-size maps keyed
    by table size again; that JSON is what table.json holds; a row missing a field is one
    ValueError naming it."""
    for row in (fitted_row(), *rows):
        text = json.dumps(row.to_json())
        assert Row.from_json(json.loads(text)) == row
        assert json.loads(text) == row.to_json()
    assert fitted_row().to_json()["games_by_size"] == {"2": 4, "3": 8}
    assert to_json(rows, {})["table"] == [row.to_json() for row in rows]
    partial = fitted_row().to_json()
    del partial["mu"], partial["games"]
    with pytest.raises(ValueError, match=r"^a table row without mu, games$"):
        Row.from_json(partial)


def test_a_season_row_reads_back_and_an_older_release_s_reads_as_the_same_row():
    """A season snapshot's row is its entrant's state and table row, read back the same; an
    older release's flat row (the club's standings it kept) reads as the same table row, the
    fields it lacked at their defaults."""
    row = fitted_row()
    season_row = SeasonRow(RETIRED, row)
    assert SeasonRow.from_json(json.loads(json.dumps(season_row.to_json()))) == season_row
    older = {"league_name": "ann.v3", "bot": "ann", "version": 3, "rank": 2, "state": RETIRED,
             "strength": 35.2, "lo": -12.75, "hi": 83.0, "rank_lo": 1, "rank_hi": 3,
             "separated": False, "mu": 30.5, "sigma": 4.25, "conservative": 17.75,
             "games": 12, "wins": 5, "win_pct": 41.666666666666664, "avg_place": 1.75,
             "avg_money": 61_250.5, "strikes": 2, "strike_kinds": {**NO_STRIKES, "timeout": 2},
             "forfeits": 1, "think_p50_ms": 3.5, "think_p95_ms": None,
             "seat_win_pct_by_size": {"2": [50.0, None], "3": [50.0, 0.0, 25.0]}}
    assert SeasonRow.from_json(older) == SeasonRow(RETIRED, dataclasses.replace(
        row, seat_win_pct=[], all_forfeit=0, note_values={}, strength_by_size={},
        games_by_size={}, note_names_dropped=0))
    with pytest.raises(ValueError, match="without its table row"):
        SeasonRow.from_json({"state": "active"})


def test_write_tables(tmp_path, rows, h2h):
    folder = LeagueFolder(tmp_path / "out")
    paths = write_tables(folder, rows, h2h, extra={"league": "demo", "seed": 7})
    assert sorted(paths) == sorted([folder.head_to_head_csv, folder.table_csv, folder.table_json,
                                    folder.table_md])
    data = json.loads(folder.table_json.read_text())
    assert data["extra"] == {"league": "demo", "seed": 7}
    assert data["table"] == json.loads(json.dumps(to_json(rows, h2h)["table"]))
    assert folder.table_csv.read_text() == to_csv(rows, {"league": "demo", "seed": 7})
    assert folder.table_csv.read_text().startswith("# league: demo\n# seed: 7\nrank,")
    assert folder.table_md.read_text().startswith("## League\n\n- league: demo\n- seed: 7\n")
    lines = list(csv.DictReader(io.StringIO(folder.head_to_head_csv.read_text())))
    assert {(r["a"], r["b"]): (int(r["games"]), int(r["a_ahead"]), int(r["b_ahead"]))
            for r in lines} == h2h
    assert folder.head_to_head_csv.read_text() == h2h_csv(h2h)


def test_render_terminal(rows, h2h):
    console = Console(file=io.StringIO(), width=220, color_system=None)
    render_terminal(rows, h2h, console)
    text = console.file.getvalue()
    assert "League table" in text and "Head to head" in text
    for bot in BOTS:
        assert bot in text
    assert "timeout:2 crash:1" in text
    assert "2-0" in text and "0-2" in text


def test_render_terminal_fits_80_columns(rows, h2h):
    console = Console(file=io.StringIO(), width=80, color_system=None)
    render_terminal(rows, h2h, console)
    text = console.file.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "more columns in table.md" in text
    for heading in ("bot", "mu-3s", "games", "wins"):
        assert heading in text
    for bot in BOTS:
        assert bot in text


def test_a_game_every_seat_forfeited_gives_no_win_and_no_rating():
    void = PlayedGame(3, ("ann", "bob"), (1, 1), (0, 0), (True, True),
                      ({"crash": 3}, {"timeout": 3}), ((), ()))
    ratings = rate_games(GAMES, BOTS)
    assert rate_games([*GAMES, void], BOTS).mu == ratings.mu
    before = {row.bot: row for row in league_table(GAMES, BOTS, ratings)}
    after = {row.bot: row for row in league_table([*GAMES, void], BOTS, ratings)}
    for bot in ("ann", "bob"):
        assert after[bot].wins == before[bot].wins
        assert after[bot].games == before[bot].games
        assert after[bot].all_forfeit == 1 and after[bot].forfeits == before[bot].forfeits + 1
    assert after["ann"].strikes["crash"] == 3
    assert head_to_head([*GAMES, void], BOTS) == head_to_head(GAMES, BOTS)


def test_note_values_are_averaged_per_bot_and_shown_escaped():
    noted = [
        PlayedGame(0, ("ann", "bob"), (1, 2), (10, 5), (False, False), ({}, {}),
                   ((1,), (1,)), ({"eval": (30.0, 2), "<b>[x](y)": (1.0, 1)}, {})),
        PlayedGame(1, ("bob", "ann"), (1, 2), (10, 5), (False, False), ({}, {}),
                   ((1,), (1,)), ({}, {"eval": (10.0, 2)})),
        GAMES[2],   # a game stored without notes
    ]
    rows = league_table(noted, BOTS, RATINGS)
    by_bot = {row.bot: row for row in rows}
    assert by_bot["ann"].note_values == {"<b>[x](y)": 1.0, "eval": 10.0}
    assert by_bot["bob"].note_values == {} == by_bot["cat"].note_values
    assert json.loads(json.dumps(to_json(rows, head_to_head(noted, BOTS))))["table"][0][
        "note_values"] == rows[0].note_values
    markdown = to_markdown(rows, head_to_head(noted, BOTS))
    assert "## Notes from bots" in markdown
    assert "- ann: \\<b\\>\\[x\\]\\(y\\) 1.000, eval 10.000" in markdown
    console = Console(record=True, width=120)
    render_terminal(rows, head_to_head(noted, BOTS), console=console)
    assert "ann: <b>[x](y) 1.000, eval 10.000" in console.export_text()

"""The parts of a bot page's story that need no server: the rating history the runner keeps
(bounded however long the season runs), its chart (numbers only, whatever a row holds), and
the strike marks the league store keeps per game for the links to the replay's moves."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from server_support import club_django

club_django()


from referee.league.folder import LeagueFolder  # noqa: E402
from referee.league.store import LeagueStore, strike_moves  # noqa: E402
from referee.league.tables import Row  # noqa: E402
from referee.server.shared.ratinghistory import HISTORY_POINTS, chart_svg, grown  # noqa: E402


def row(version: int, games: int, strength: float | None = 10.0) -> tuple[int, Row]:
    """A version's table row with `games` and `strength`, its interval 30 either side."""
    return version, Row(
        rank=1, bot=f"bot.v{version}", mu=25.0, sigma=2.0, conservative=19.0, games=games,
        wins=0, win_pct=None, avg_place=None, avg_money=None, seat_win_pct=[], strikes={},
        forfeits=0, think_p50_ms=None, think_p95_ms=None, strength=strength,
        strength_low=None if strength is None else strength - 30,
        strength_high=None if strength is None else strength + 30)


def test_a_history_stays_bounded_and_keeps_its_newest_point() -> None:
    points: list = []
    for refit in range(5000):
        points = grown(points, [row(1 + refit // 2000, 10 * refit + 4)], 1000.0 + refit)
        assert len(points) <= HISTORY_POINTS
    assert points[-1] == [1000.0 + 4999, 3, 49994, 10.0, -20.0, 40.0]
    assert points[0][0] == 1000.0   # the season's start stays on the chart
    times = [p[0] for p in points]
    assert times == sorted(times) and len(points) > HISTORY_POINTS // 2


def test_a_standing_that_rated_nothing_new_adds_no_point() -> None:
    points = grown([], [row(1, 40), row(2, 0)], 1.0)   # v2 entered, has not played yet
    assert points == [[1.0, 1, 40, 10.0, -20.0, 40.0]]
    assert grown(points, [row(1, 40, strength=12.0)], 2.0) is points   # a retired version
    missing = row(1, 50, strength=None)
    assert grown(points, [missing], 3.0) is points   # a fit without values for it


def test_the_chart_draws_numbers_only_and_fits_a_phone() -> None:
    hostile = [[1, 1, 5, "<script>alert(1)</script>", 0, 1], [2, 1, 5, float("nan"), 0, 1],
               "<b>", [3, 1], None, [4, 1, 8, 5, -20, 30], [5, 2, 9, 7, -10, 25]]
    svg = str(chart_svg(hostile))
    assert "<script" not in svg and "<b>" not in svg and "nan" not in svg.lower()
    assert svg.count('<circle class="point"') == 2
    assert re.findall(r'data-version="(\d+)"><polygon class="band"', svg) == ["1", "2"]
    width = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1))
    assert width <= 390 and "style=" not in svg   # the policy allows no style attribute
    assert str(chart_svg([])) == ""


def test_strikes_and_forfeits_are_marked_at_their_moves() -> None:
    decisions = [{"seat": 0}, {"seat": 1, "strike": "timeout"}, {"seat": 0},
                 {"seat": 1, "strike": "illegal"}, {"seat": 1, "strike": "crash"},
                 {"seat": 1, "auto": "forfeited"}, {"seat": 2, "auto": "forfeited"}]
    forfeits = [{"seat": 1, "reason": "3 strikes"}, {"seat": 2, "reason": "not started"},
                {"seat": 3, "reason": "not started"}]
    assert strike_moves(decisions, forfeits) == [
        (1, 2, "timeout"), (1, 4, "illegal"), (1, 5, "crash"), (1, 5, "forfeit"),
        (2, 7, "forfeit"), (3, 0, "forfeit")]


def test_a_store_from_before_the_marks_answers_none(tmp_path: Path) -> None:
    path = LeagueFolder(tmp_path).store_path
    LeagueStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE game_strikes")
    db.close()
    store = LeagueStore.open_readonly(path)
    try:
        assert store.strikes_in([0, 1]) == {}
    finally:
        store.close()


def test_the_bot_pages_fast_tables_escape_every_name() -> None:
    """The opponents' table and the recent games are written without the template engine:
    names still reach the page escaped, numbers as numbers."""
    from referee.server.club.board import opponents, opponents_table
    from referee.server.club.views.pages import recent_rows

    hostile = '<img src=x onerror="alert(1)">.v1'
    table = str(opponents_table(opponents(
        {"mine.v1": {hostile: {"games": 5, "ahead": 3, "behind": 1}}}, ["mine.v1"])))
    assert "<img" not in table and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in table
    assert "<td>5</td><td>3</td><td>1</td><td>1</td>" in table
    rows = str(recent_rows([{"index": 7, "bots": ["mine.v1", hostile], "place": "<b>",
                             "struck": 3, "marks": [(4, "timeout"), (9, "<i>")],
                             "finished_at": 0.0}]))
    assert "<img" not in rows and "<b>" not in rows and "<i>" not in rows
    assert '<a class="strike" href="/games/7/?move=4">timeout at move 4</a>' in rows
    assert '<a class="strike" href="/games/7/?move=9">strike at move 9</a>' in rows

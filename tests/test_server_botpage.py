"""A bot page tells its bot's story, on a real `referee serve` (web process and season runner)
playing a real season of sandboxed bots: its rating over time as a chart with its interval, its
record against each opponent, its versions with their checks and first and last games, and
the strikes and forfeits of its recent games, each linking to the replay at its move, where a
real headless Chromium opens the viewer."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_support import chromium_missing, start_browser
from runner_support import ROOT, Club, sample, write_season
from server_support import ServerProcess, WebClient
from wait_support import wait_for

from referee.league.folder import LeagueFolder
from referee.league.store import games_stored, load_record
from referee.server.shared.clubfolder import ClubFolder

TEST_BOTS = ROOT / "tests" / "bots"
PASSWORD = "a long password 1"   # Club.student's
ILLEGAL_SPEC = 'name = "illegal"\ncommand = ["{python}", "illegal/main.py"]\n'


def store_rows(data: Path) -> list[tuple[int, list[str], list[int]]]:
    """(index, seats' league names, places) of every stored game."""
    db = sqlite3.connect(f"file:{LeagueFolder(data / 'season').store_path}?mode=ro", uri=True)
    try:
        return [(idx, json.loads(bots), json.loads(places)) for idx, bots, places in
                db.execute("SELECT idx, bots, places FROM games ORDER BY idx")]
    finally:
        db.close()


def stored_record(data: Path, index: int) -> dict:
    db = sqlite3.connect(f"file:{LeagueFolder(data / 'season').store_path}?mode=ro", uri=True)
    try:
        return load_record(db.execute("SELECT record FROM games WHERE idx = ?",
                                      (index,)).fetchone()[0])
    finally:
        db.close()


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A closed season of three students' bots on a real server: ann-bot (the sample random
    bot) in two versions, ben-bot (greedy) and ill-bot, whose every answer is an illegal move
    (three strikes, then it forfeits: deterministic, whatever the machine's speed); refits
    every few games, so ann-bot's history has points from several standings."""
    data = tmp_path_factory.mktemp("botpage") / "data"
    helper = Club(data)
    write_season(data, """
        seed = 5
        players = 2
        round_games = 2
        refit_games = 3
        refit_seconds = 1
    """)
    ann, ben, ill = (helper.student(name) for name in ("ann", "ben", "ill"))
    helper.version(ann, "ann-bot", sample("random"), passed=True)
    helper.version(ben, "ben-bot", sample("greedy"), passed=True)
    helper.version(ill, "ill-bot", TEST_BOTS / "illegal" / "main.py", passed=True,
                   spec_text=ILLEGAL_SPEC,
                   files={"illegal/main.py": TEST_BOTS / "illegal" / "main.py",
                          "botlib.py": TEST_BOTS / "botlib.py"})
    server = ServerProcess(data)
    try:
        wait_for("two standings", lambda: helper.value("Standing.objects.count()") >= 2)
        helper.version(ann, "ann-bot", sample("random"), passed=True)   # its version 2
        wait_for("ann-bot v2 rated", lambda: helper.value(
            "any(row['table']['bot'] == 'ann-bot.v2' and row['table']['games'] > 0 "
            "for row in Standing.objects.latest('id').data['rows'])"))
        helper.season_state("closed")
        wait_for("the season's report", lambda: helper.value(
            "Competition.first().report_path"))
        web = WebClient(server.url)
        db = ClubFolder(data).season_league.store_path
        # The refit after the close rates every game: the leaderboard counts them all.
        web.sign_in("ben", PASSWORD)
        wait_for("the final standing", lambda: web.get("/leaderboard.json").json()["games"]
                 == games_stored(db))
        yield {"data": data, "server": server, "club": helper, "web": web}
    finally:
        status = server.stop(signal.SIGTERM)
        helper.close()
        assert status == 0, server.output()


def test_the_rating_chart_shows_every_stored_point_with_its_band(club: dict) -> None:
    page = club["web"].get("/bots/ann-bot/").text
    chart = re.search(r'<svg class="chart" id="rating-chart" viewBox="0 0 (\d+) (\d+)".*?</svg>',
                      page, re.S)
    assert chart, page
    assert int(chart.group(1)) <= 390   # drawn to fit a phone; CSS scales it to its card
    points = club["club"].value("RatingHistory.objects.get(bot__name='ann-bot').points")
    assert len(points) >= 3 and {p[1] for p in points} == {1, 2}
    assert chart.group(0).count('<circle class="point"') == len(points)
    assert re.findall(r'data-version="(\d+)"><polygon class="band" points="[^"]+"/>',
                      chart.group(0)) == ["1", "2"]
    # Each dot's tooltip is its point: version, games, strength and interval.
    first = points[0]
    assert (f"<title>v1: {first[2]:.0f} games, {first[3]:+.0f} [{first[4]:+.0f}, "
            f"{first[5]:+.0f}]</title>") in chart.group(0)
    assert re.search(r'from <time class="local" datetime="[0-9T:-]+Z">', page)


def test_the_record_against_each_opponent_is_the_games(club: dict) -> None:
    page = club["web"].get("/bots/ann-bot/").text
    table = re.search(r'<table id="opponents">.*?</table>', page, re.S).group(0)
    shown = {name: tuple(map(int, numbers)) for name, *numbers in re.findall(
        r'<tr><td><a href="/bots/[^/]+/">([^<]+)</a></td><td>(\d+)</td><td>(\d+)</td>'
        r'<td>(\d+)</td><td>(\d+)</td></tr>', table)}
    expected: dict[str, list[int]] = {}
    for _, bots, places in store_rows(club["data"]):
        mine = [i for i, name in enumerate(bots) if name.startswith("ann-bot.")]
        for seat in mine:
            for other, name in enumerate(bots):
                if other == seat:
                    continue
                total = expected.setdefault(name.rsplit(".v", 1)[0], [0, 0, 0, 0])
                total[0] += 1
                total[1] += places[seat] < places[other]
                total[2] += places[other] < places[seat]
                total[3] += places[seat] == places[other]
    assert shown == {name: tuple(total) for name, total in expected.items()}, table
    assert set(shown) == {"ben-bot", "ill-bot"}
    assert shown["ill-bot"][1] == shown["ill-bot"][0] > 0   # it forfeits every game


def test_versions_link_their_checks_and_first_and_last_games(club: dict) -> None:
    owner = WebClient(club["server"].url)
    owner.sign_in("ann", PASSWORD)
    page = owner.get("/bots/ann-bot/").text
    table = re.search(r'<table id="versions">.*?</table>', page, re.S).group(0)
    rows = store_rows(club["data"])
    ids = club["club"].value("dict(BotVersion.objects.filter(bot__name='ann-bot')"
                             ".values_list('number', 'pk'))")
    for number in (1, 2):
        played = [idx for idx, bots, _ in rows if f"ann-bot.v{number}" in bots]
        row = re.search(rf'<tr><td><a href="/versions/{ids[str(number)]}/">v{number}</a>.*?</tr>',
                        table, re.S)
        assert row, table
        assert f'<a href="/versions/{ids[str(number)]}/">passed</a>' in row.group(0)
        assert f'<a class="first-game" href="/games/{min(played)}/">' in row.group(0)
        assert f'<a class="last-game" href="/games/{max(played)}/">' in row.group(0)
    # Another student sees the games, not the owner's version pages.
    other = club["web"].get("/bots/ann-bot/").text
    assert 'class="first-game"' in other and "/versions/" not in other


def strike_links(page: str) -> dict[int, list[tuple[int, str]]]:
    """Game index -> (move, kind) of each strike and forfeit link of a bot page's recent
    games."""
    found: dict[int, list[tuple[int, str]]] = {}
    for index, move, kind, again in re.findall(
            r'<a class="strike" href="/games/(\d+)/\?move=(\d+)">(\w+) at move (\d+)</a>', page):
        assert move == again
        found.setdefault(int(index), []).append((int(move), kind))
    return found


def test_strikes_and_forfeits_link_to_the_replay_at_their_move(club: dict) -> None:
    web = club["web"]
    page = web.get("/bots/ill-bot/").text
    recent = re.findall(r'<tr><td><a href="/games/(\d+)/">', page)
    links = strike_links(page)
    assert recent and set(links) == {int(index) for index in recent}, page
    for index, marks in links.items():
        record = stored_record(club["data"], index)
        seat = next(b["seat"] for b in record["bots"] if b["name"].startswith("ill-bot."))
        struck = [move for move, d in enumerate(record["decisions"], start=1)
                  if d["seat"] == seat and d.get("strike")]
        assert len(struck) == 3   # three strikes, then the substitute plays its dice
        assert marks == sorted([(move, "illegal") for move in struck] +
                               [(struck[-1], "forfeit")]), (index, marks)
    index, marks = next(iter(links.items()))
    game = web.get(f"/games/{index}/?move={marks[0][0]}").text
    assert f'src="/games/{index}/viewer#move={marks[0][0]}"' in game
    assert f'src="/games/{index}/viewer"' in web.get(f"/games/{index}/?move=x1").text


MISSING = chromium_missing()


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
def test_the_viewer_opens_at_the_strikes_move(club: dict, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from test_server_browser import sign_in

    url = club["server"].url
    links = strike_links(club["web"].get("/bots/ill-bot/").text)
    index, marks = next(iter(links.items()))
    move = marks[1][0]   # its second strike: not the replay's opening board
    record = stored_record(club["data"], index)
    places = [i for i, event in enumerate(record["events"]) if event["type"] == "place"]
    browser = start_browser(tmp_path / "profile")
    try:
        sign_in(browser, url, "ben", PASSWORD)
        browser.get(f"{url}/games/{index}/?move={move}")
        browser.switch_to.frame(browser.find_element(By.ID, "replay"))
        position = f"event {places[move - 1] + 1} / {len(record['events'])}"
        wait_for("the viewer at the move", lambda: browser.find_element(
            By.ID, "step-position").text == position, timeout=120)
        current = browser.find_element(By.ID, "current").text
        assert "ill-bot" in current and "illegal strike" in current, current
    finally:
        browser.quit()

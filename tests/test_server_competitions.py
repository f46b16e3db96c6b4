"""Several competitions on one club (docs/server.md, "Competitions"): the real season runner
plays a second competition in its own folder under its own rules, table sizes and house bots
beside the first, the two take turns at its machines, a paused one plays nothing, a
withdrawn bot leaves, a closed one writes its report and its final table; and a club of an
older release upgrades with its season as its first competition, nothing lost."""

from __future__ import annotations

import asyncio
import json
import re
import tarfile
from pathlib import Path

import pytest
from runner_support import Club, RunnerProcess, write_season
from server_support import ServerProcess, WebClient
from wait_support import wait_for

from referee.league.season import Season
from referee.league.store import LeagueStore, games_stored
from referee.league.stored import read_league
from referee.server.runner.turns import Turns
from referee.server.shared.clubfolder import ClubFolder

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RELEASES = sorted(FIXTURES.glob("club-*.tar.gz"))
BIGGY = {"rules": "biggy-slot", "players": 3, "round_games": 2, "games_per_bot_per_hour": 0,
         "house_bots": ["greedy"], "seed": 5, "limits": {"decision_ms": 1500}}


def states(store: Path) -> dict[str, str]:
    """The entrants' states in the season stored at `store` (read beside the runner)."""
    with Season(LeagueStore(store)) as season:
        return season.states()


def open_biggy(club: Club, **entry: object) -> int:
    return club(f"""
        from referee.server.club import services
        result = services.open_competition("Biggy month", "biggy", {BIGGY!r},
                                           **{entry!r}).pk
    """)


def test_a_second_competition_plays_beside_the_first_in_turns_and_pauses_and_closes(
        tmp_path: Path) -> None:
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 11
        players = 2
        round_games = 2
        refit_games = 2
        refit_seconds = 1
    """)
    club.ann_and_ben_passed()
    biggy = open_biggy(club, bots_per_student=1)
    for name in ("ann", "ben"):
        club(f"""
            from referee.server.club import services
            user = User.objects.get(username={name!r})
            services.enter_bot(user, Bot.objects.get(name="{name}-bot"),
                               Competition.objects.get(pk={biggy}))
        """)
    club("""
        from referee.server.club import services
        services.move(services.open_competition("Empty", "empty", {}), "close")
    """)   # closed before it played a game: it ends without stopping the others
    first = ClubFolder(data).season_league.store_path
    second = ClubFolder(data).competition_league("competitions/biggy").store_path
    runner = RunnerProcess(data)
    try:
        wait_for("games in both competitions", lambda: games_stored(first) >= 6
                 and games_stored(second) >= 6, runner, timeout=900)
        store = LeagueStore(second)
        try:
            stored = read_league(store)
        finally:
            store.close()
        assert stored is not None and stored.rules.preset == "biggy-slot"
        assert stored.players_asked == (3, 3) and stored.limits["decision_ms"] == 1500
        assert set(states(second)) == {"ann-bot.v1", "ben-bot.v1", "house-greedy.v1"}
        assert "house-greedy.v1" not in states(first)   # the first's house bots: none
        # Its own table: a standing of its own, its rows its entrants.
        wait_for("its table", lambda: club.value(
            f"Standing.objects.filter(competition_id={biggy}).exists()"), runner)
        rows = club.value(f"[row['bot'] for row in Standing.objects.filter("
                          f"competition_id={biggy}).latest().data['rows']]")
        assert sorted(rows) == ["ann-bot", "ben-bot", "house-greedy"]
        # Paused, it plays nothing while the first plays on.
        club(f"""
            from referee.server.club import services
            services.move(Competition.objects.get(pk={biggy}), "pause")
        """)
        wait_for("the pause said", lambda: "Biggy month: play paused" in runner.output(),
                 runner)
        held = games_stored(second)
        later = games_stored(first) + 6
        wait_for("the first playing on", lambda: games_stored(first) >= later, runner,
                 timeout=900)
        assert games_stored(second) == held
        # Resumed, a withdrawn bot leaves it (its games stay) and the organiser reads why.
        club(f"""
            from referee.server.club import services
            services.move(Competition.objects.get(pk={biggy}), "resume")
            services.withdraw_bot(User.objects.get(username="ben"),
                                  Bot.objects.get(name="ben-bot"),
                                  Competition.objects.get(pk={biggy}))
        """)
        wait_for("ben-bot out of Biggy month",
                 lambda: states(second).get("ben-bot.v1") == "disabled", runner)
        assert club.value("Notice.objects.filter(text__contains='Biggy month: ben-bot v1 left "
                          "Biggy month: withdrawn from Biggy month').exists()")
        assert states(first)["ben-bot.v1"] == "active"   # in the first, it plays on
        # Closed: its report and its final table; the first plays on.
        club(f"""
            from referee.server.club import services
            services.move(Competition.objects.get(pk={biggy}), "close")
        """)
        wait_for("its report", lambda: club.value(
            f"Competition.objects.get(pk={biggy}).report_path"), runner, timeout=600)
        report = club.value(f"Competition.objects.get(pk={biggy}).report_path")
        assert report == "competitions/biggy/report/index.html"
        assert (data / report).is_file()
        assert club.value("Competition.first().state") == "running"
        assert "Empty:" not in runner.output()   # closed before it played: never started
        runner.alive()
    finally:
        assert runner.stop() == 0, runner.output()
        club.close()


def test_turns_go_round_robin_and_a_competition_alone_plays_on() -> None:
    """Two competitions with games waiting take turns of `share` games each (the games of one
    never run ahead of the other's by more than a turn); alone, one plays all of its games in
    one turn."""
    played: list[int] = []

    async def competition(turns: Turns, key: int, games: int) -> None:
        left = games
        while left:
            async with turns.turn(key):
                started = 0
                while left and not turns.over(started):
                    started += 1
                    left -= 1
                    played.append(key)
                    await asyncio.sleep(0)   # a game: the other asks for its turn meanwhile

    async def main() -> Turns:
        turns = Turns(share=3)
        await asyncio.gather(competition(turns, 1, 9), competition(turns, 2, 6))
        return turns

    turns = asyncio.run(main())
    assert played == [1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 1, 1, 1]
    assert turns.turns == {1: 3, 2: 2}
    played.clear()

    async def alone() -> Turns:
        turns = Turns(share=3)
        await competition(turns, 1, 7)
        return turns

    assert asyncio.run(alone()).turns == {1: 1} and played == [1] * 7


@pytest.mark.parametrize("fixture", RELEASES, ids=[p.name for p in RELEASES])
def test_an_older_clubs_season_becomes_its_first_competition_with_nothing_lost(
        fixture: Path, tmp_path: Path) -> None:
    with tarfile.open(fixture) as tar:
        tar.extractall(tmp_path, filter="data")
    data = tmp_path / "club-data"
    made = json.loads((data / "fixture.json").read_text())
    standings = None
    import sqlite3

    with sqlite3.connect(data / "server.sqlite3") as db:
        season = db.execute("SELECT name, state, report_path FROM club_season").fetchone()
        standings = db.execute("SELECT count(*) FROM club_standing").fetchone()[0]
    club = Club(data)   # migrates, as `referee serve` does at its start
    try:
        first = club.value("[Competition.first().name, Competition.first().state, "
                           "Competition.first().report_path, Competition.first().slug, "
                           "Competition.first().folder, Competition.objects.count()]")
        assert first == [season[0], season[1], season[2], "season", "season", 1]
        assert club.value("Standing.objects.filter(competition_id=1).count()") == standings > 0
        assert games_stored(ClubFolder(data).competition_league(first[4]).store_path) == \
            made["games"] > 0
    finally:
        club.close()
    (data / "season.toml").write_text("games_per_bot_per_hour = 0\nhouse_bots = []\n"
                                      + (data / "season.toml").read_text())
    server = ServerProcess(data)
    try:   # its pages: the club's as before, and the first competition's at its slug
        student = WebClient(server.url)
        name = next(iter(made["tokens"]))
        student.sign_in(name, made["password"])
        for path in ("/leaderboard/", "/season/", "/c/season/", "/c/season/season/"):
            answer = student.get(path)
            assert answer.status == 200, (path, answer.status, answer.text[:300])
        board = student.get("/c/season/leaderboard.json").json()
        assert sorted(row["bot"] for row in board["rows"]) == sorted(made["bots"].values())
        assert board == student.get("/leaderboard.json").json()
        for index in range(made["games"]):
            assert student.get(f"/games/{index}/").status == 200
        organiser = WebClient(server.url)
        organiser.sign_in("organiser", made["organiser_password"])
        page = organiser.get("/organiser/").text
        assert 'id="competition-list"' in page and f">{first[0]}</a> (the season" in page
    finally:
        assert server.stop() == 0, server.output()


def test_competitions_on_a_real_server_opened_entered_shown_and_paused(tmp_path: Path) -> None:
    """The organiser opens a competition on the Organiser page (a bad one is refused in one
    line), students enter their bots on the bots' pages, and the competition's leaderboard
    and season page at its slug show its own table and rules; the first's pages go on."""
    data = tmp_path / "club"
    club = Club(data)
    write_season(data, """
        seed = 3
        players = 2
        round_games = 2
        refit_seconds = 1
    """)
    club.ann_and_ben_passed()
    token = club("""
        from referee.server.club.people import new_token
        result = new_token(User.objects.get(username="ann"))[0]
    """)
    club.close()
    server = ServerProcess(data)
    try:
        boss = WebClient(server.url)
        boss.sign_in("organiser", server.organiser_password())
        form = {"name": "Biggy month", "slug": "biggy", "rules": "biggy-slot", "players": "3",
                "games_per_bot_per_hour": "0", "round_games": "2", "decision_ms": "1500",
                "house_bots": "greedy", "who_may_enter": "students", "bots_per_student": "1"}
        assert boss.post_form("/organiser/competitions/new", {**form, "slug": "Big!"}).status \
            == 302
        page = boss.get("/organiser/").text
        assert "not opened: the short name &#x27;Big!&#x27; is not lower-case letters" in page
        assert boss.post_form("/organiser/competitions/new", form).status == 302
        page = boss.get("/organiser/").text
        assert "Biggy month is open: its page is /c/biggy/" in page
        found = re.search(r"/organiser/competitions/(\d+)/pause", page)
        assert found, page
        biggy = int(found.group(1))
        ann, ben = WebClient(server.url), WebClient(server.url)
        ann.sign_in("ann", "a long password 1")
        ben.sign_in("ben", "a long password 1")
        page = ann.get("/bots/ann-bot/").text
        assert f'action="/bots/ann-bot/enter/{biggy}"' in page
        assert ann.post_form(f"/bots/ann-bot/enter/{biggy}", {}).status == 302
        page = ann.get("/bots/ann-bot/").text
        assert "ann-bot is entered in Biggy month" in page
        assert f'action="/bots/ann-bot/withdraw/{biggy}"' in page
        ann.post_form(f"/bots/ann-bot/enter/{biggy}", {})
        assert "ann-bot is in Biggy month already" in ann.get("/bots/ann-bot/").text
        assert ann.post_form(f"/bots/ben-bot/enter/{biggy}", {}).status == 404   # not hers
        assert ben.post_form(f"/bots/ben-bot/enter/{biggy}", {}).status == 302
        wait_for("Biggy month's table of its three bots", lambda: sorted(
            row["bot"] for row in ann.get("/c/biggy/leaderboard.json").json()["rows"]) ==
            ["ann-bot", "ben-bot", "house-greedy"], server, timeout=900)
        api = WebClient(server.url)   # the JSON API, with a token, for a competition too
        bearer = {"Authorization": f"Bearer {token}"}
        rows = api.request("GET", "/api/leaderboard?competition=biggy", headers=bearer).json()[
            "rows"]
        assert sorted(row["bot"] for row in rows) == ["ann-bot", "ben-bot", "house-greedy"]
        assert {row["games_url"] for row in rows} == {""}   # the season's games API only
        missing = api.request("GET", "/api/leaderboard?competition=nope", headers=bearer)
        assert missing.status == 404 and "no competition 'nope'" in missing.text
        page = ann.get("/bots/ann-bot/").text   # its place in each competition it is in
        places = re.findall(r'<tr data-slug="(\w+)">.*?<td class="places">([^<]*)</td>', page)
        assert dict(places)["biggy"].startswith("v1: rank "), places
        board = ann.get("/c/biggy/").text
        assert "<h1>Biggy month</h1>" in board and "/c/biggy/leaderboard.json" in board
        season = ann.get("/c/biggy/season/").text
        assert 'id="competition-rules">biggy-slot<' in season
        assert 'id="competition-players">3-3<' in season
        assert "limit decision_ms</th><td colspan=\"2\">1500<" in season
        # The first competition's board is its own: no house bot (its season file has none).
        wait_for("the first competition's table", lambda: sorted(
            row["bot"] for row in ann.get("/c/season/leaderboard.json").json()["rows"]) ==
            ["ann-bot", "ben-bot"], server, timeout=900)
        assert ann.get("/leaderboard/").status == 200
        assert boss.post_form(f"/organiser/competitions/{biggy}/pause", {}).status == 302
        assert "Biggy month: the competition is paused now" in boss.get("/organiser/").text
        assert 'id="competition-state">paused<' in ann.get("/c/biggy/").text
        assert ann.post_form(f"/organiser/competitions/{biggy}/close", {}).status == 404
        # Closed: its report, for the organiser's eyes only (its replays hold every output).
        assert boss.post_form(f"/organiser/competitions/{biggy}/close", {}).status == 302
        wait_for("its report linked", lambda: "/c/biggy/report/" in boss.get(
            "/organiser/").text, server, timeout=600)
        answer = boss.get("/c/biggy/report/")
        assert answer.status == 200 and "<html" in answer.text.lower()
        assert ann.get("/c/biggy/report/").status == 404
        assert ann.get("/c/biggy/leaderboard.json").json()["rows"]   # its final table stays
    finally:
        assert server.stop() == 0, server.output()

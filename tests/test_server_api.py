"""The read-only results API against a real `referee serve`: the leaderboard, a bot's games and
a game's record, by token and by session; other students' output and notes never in it;
anonymous refused until the organiser's `public_leaderboard` opens the leaderboard alone."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cli_support import referee
from doc_support import ROOT, Step, clean_env, guide_steps, run_step
from server_support import WebClient, rated_club

from referee.league.folder import LeagueFolder
from referee.league.season import Season, snapshot
from referee.league.tables import Row
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonkeys import load_runner_settings
from referee.util.config import ConfigError

MARKERS = {"alice": "ALICE-SAYS-HI", "bob": "BOB-SAYS-HI"}
PASSWORD = "a long password 1"   # every student Club.student makes
ROUND_GAMES = 4                  # one round of two bots at two seats: 4 games in all


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real server whose runner plays one round of alice's and bob's bots (each printing
    and noting its own marker) and rates it; both students with a token."""
    with rated_club(tmp_path_factory.mktemp("api"), MARKERS, seed=11, round_games=ROUND_GAMES,
                    noting=True) as rated:
        yield {"server": rated.server, "data": rated.data, "tokens": rated.tokens,
               "ids": rated.ids}


def bearer(client: WebClient, path: str, token: str) -> Any:
    """GET `path` with a personal token; the JSON it answered (200 only)."""
    answer = client.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 200, (path, answer.status, answer.text[:300])
    return answer.json()


def signed_in(club: dict[str, Any], name: str) -> WebClient:
    client = WebClient(club["server"].url)
    client.sign_in(name, PASSWORD)
    return client


def session_json(client: WebClient, path: str) -> Any:
    answer = client.get(path)
    assert answer.status == 200, (path, answer.status, answer.text[:300])
    return answer.json()


def stored_games(data: Path) -> list[int]:
    """Every season game's index, newest first, as the league database holds them."""
    db = sqlite3.connect(ClubFolder(data).season_league.store_path)
    try:
        return [idx for (idx,) in db.execute("SELECT idx FROM games ORDER BY idx DESC")]
    finally:
        db.close()


def test_a_token_and_a_session_read_the_same_results(club: dict[str, Any]) -> None:
    token, bot = club["tokens"]["alice"], club["ids"]["alice"]
    by_token, by_session = WebClient(club["server"].url), signed_in(club, "alice")
    paths = ["/api/leaderboard", f"/api/bots/{bot}/games", "/api/games/0"]
    for path in paths:
        assert bearer(by_token, path, token) == session_json(by_session, path), path
    board = bearer(by_token, "/api/leaderboard", token)
    assert board == {**session_json(by_session, "/leaderboard.json"),
                     "rows": board["rows"]}   # the page's standing, rows with their API link
    assert {row["bot"]: row["games_url"] for row in board["rows"]} == {
        name: f"/api/bots/{pk}/games" for name, pk in club["ids"].items()}
    games = bearer(by_token, f"/api/bots/{bot}/games", token)
    assert [g["index"] for g in games["games"]] == stored_games(club["data"])
    assert all("record" not in g and "output" not in g for g in games["games"])
    # Times as everywhere in the API: ISO 8601 with the zone.
    for game in games["games"]:
        assert "finished" not in game
        assert datetime.fromisoformat(game["finished_at"]).utcoffset() is not None


def test_a_row_has_one_shape_in_the_table_file_the_snapshot_and_both_jsons(
        club: dict[str, Any], tmp_path: Path) -> None:
    """The same version's row, from the same games, is the same JSON (the league's `Row`,
    docs/ratings.md) in the table file `referee table` writes, in the season's snapshot, on
    /leaderboard.json and on /api/leaderboard: every field, under one name, with one value;
    but the bots' note values, in the organiser's table file only (they are their owners')."""
    copy = tmp_path / "season"
    copy.mkdir()
    source, target = (sqlite3.connect(path) for path in (
        ClubFolder(club["data"]).season_league.store_path, LeagueFolder(copy).store_path))
    try:
        source.backup(target)   # the store as the runner left it, its log included
    finally:
        source.close()
        target.close()
    referee("table", copy)
    table_file = json.loads((copy / "table.json").read_text())["table"]
    with Season(LeagueFolder(copy).open_store()) as season:
        season_rows = snapshot(season)["rows"]
    page = session_json(signed_in(club, "alice"), "/leaderboard.json")["rows"]
    api = bearer(WebClient(club["server"].url), "/api/leaderboard",
                 club["tokens"]["bob"])["rows"]
    assert [row["bot"] for row in table_file] == [row["table"]["bot"] for row in season_rows]
    assert len(table_file) == 2 and all(row["state"] == "active" for row in season_rows)
    assert all(row["note_values"] == {"marked": 7.0} for row in table_file), table_file
    public = [{**row, "note_values": {}} for row in table_file]
    for shown in (season_rows, page, api):
        assert [row["table"] for row in shown] == public
    assert set(table_file[0]) == {field.name for field in dataclasses.fields(Row)}
    assert all(Row.from_json(row).to_json() == row for row in table_file)


def test_a_bots_games_come_in_pages_newest_first(club: dict[str, Any]) -> None:
    token, bot, client = club["tokens"]["bob"], club["ids"]["alice"], WebClient(
        club["server"].url)
    seen, path = [], f"/api/bots/{bot}/games?limit=1"
    while path is not None and len(seen) <= 100:   # bounded: a few games are stored
        page = bearer(client, path, token)
        assert len(page["games"]) <= 1
        seen += [g["index"] for g in page["games"]]
        path = page["next"]
    assert seen == stored_games(club["data"])
    for query, why in (("limit=0", "limit must be a whole number from 1 to 200"),
                       ("limit=201", "limit must be a whole number from 1 to 200"),
                       ("before=-1", "before must be a whole number from 0 to"),
                       ("limit=x", "limit must be a whole number")):
        answer = client.request("GET", f"/api/bots/{bot}/games?{query}",
                                headers={"Authorization": f"Bearer {token}"})
        assert answer.status == 400 and why in answer.json()["error"], (query, answer.text)
    answer = client.request("GET", "/api/bots/999999/games",
                            headers={"Authorization": f"Bearer {token}"})
    assert answer.status == 404 and answer.json() == {"error": "no bot has the id 999999"}


def test_another_students_output_and_notes_never_appear(club: dict[str, Any]) -> None:
    client = WebClient(club["server"].url)
    organiser = WebClient(club["server"].url)
    organiser.sign_in("organiser", club["server"].organiser_password())
    for index in stored_games(club["data"]):
        path = f"/api/games/{index}"
        everything = json.dumps(session_json(organiser, path))
        for name, marker in MARKERS.items():
            assert marker in everything and f"{marker}-NOTE" in everything
            other = MARKERS["bob" if name == "alice" else "alice"]
            record = bearer(client, path, club["tokens"][name])
            text = json.dumps(record)
            assert f"{marker}-NOTE" in text and marker in text, (name, index)
            assert other not in text, (name, index)   # neither output nor note
            seat = [bot["name"] for bot in record["bots"]].index(f"{name}.v1")
            for decision in record["decisions"]:
                noted = {"note", "values"} & set(decision)
                assert noted if decision["seat"] == seat else not noted, decision


def anonymous_statuses(url: str, ids: dict[str, int]) -> dict[str, int]:
    """Each results address as a spectator without session or token gets it: its status."""
    client = WebClient(url)
    paths = ["/leaderboard/", "/leaderboard.json", "/api/leaderboard",
             f"/api/bots/{ids['alice']}/games", "/api/games/0", "/bots/alice/", "/games/0/",
             "/games/0/viewer"]
    return {path: client.get(path).status for path in paths}


def test_anonymous_is_refused_until_the_switch_opens_the_leaderboard_alone(
        club: dict[str, Any]) -> None:
    server, season = club["server"], club["data"] / "season.toml"
    closed = {"/leaderboard/": 302, "/leaderboard.json": 302, "/api/leaderboard": 401,
              f"/api/bots/{club['ids']['alice']}/games": 401, "/api/games/0": 401,
              "/bots/alice/": 302, "/games/0/": 302, "/games/0/viewer": 302}
    assert anonymous_statuses(server.url, club["ids"]) == closed
    answer = WebClient(server.url).get("/api/games/0")
    assert answer.json() == {"error": "sign in or pass a token (Authorization: Bearer ...)"}
    season.write_text("public_leaderboard = true\n")
    try:
        opened = {**closed, "/leaderboard/": 200, "/leaderboard.json": 200,
                  "/api/leaderboard": 200}
        assert anonymous_statuses(server.url, club["ids"]) == opened
        spectator = WebClient(server.url)
        assert "alice" in spectator.get("/leaderboard/").text
        assert len(spectator.get("/api/leaderboard").json()["rows"]) == 2
        # A bad token is refused, not taken for a spectator.
        answer = spectator.request("GET", "/api/leaderboard",
                                   headers={"Authorization": "Bearer rt_not-a-token"})
        assert answer.status == 401 and "token is not valid" in answer.json()["error"]
    finally:
        season.write_text("public_leaderboard = false\n")
    assert anonymous_statuses(server.url, club["ids"]) == closed


def test_the_documented_curl_and_python_examples_run_as_shown(club: dict[str, Any],
                                                              tmp_path: Path) -> None:
    """docs/server.md's results API examples, run against the real server with alice's token
    (her bot for the docs' `mybot`, and her bot's id for the `1` of the curl line)."""
    steps = [step for step in guide_steps(ROOT / "docs" / "server.md")
             if step.server or step.path == "results.py"]
    assert [step.path for step in steps] == [None, "results.py"]
    assert club["ids"]["alice"] == 1   # the curl line's bot id: the first bot of the club
    env = clean_env(tmp_path / "caches")
    curls, script = (step.against(club["server"].url, club["tokens"]["alice"]) for step in steps)
    done = run_step(curls, tmp_path, env, timeout=300)
    assert done.stdout.count('"rows"') == 1 and done.stdout.count('"next"') == 1
    run_step(Step(script.path, script.text.replace('BOT = "mybot"', 'BOT = "alice"')),
             tmp_path, env)
    done = run_step(Step(None, "python results.py"), tmp_path, env, timeout=300)
    lines = done.stdout.splitlines()
    assert [int(line.split()[1].rstrip(":")) for line in lines] == stored_games(club["data"])
    assert all(re.fullmatch(r"game \d+: place [12], [1-9]\d* notes", line) for line in lines)


def test_a_bad_public_leaderboard_value_is_one_line(tmp_path: Path) -> None:
    """The runner refuses it at start, naming the file and the key. (The web process keeps
    the last good season meanwhile and says so to the organiser only:
    test_server_share.py::test_a_broken_season_file_keeps_the_last_good_season.)"""
    season = tmp_path / "season.toml"
    season.write_text('public_leaderboard = "yes"\n')
    with pytest.raises(ConfigError, match=r"season\.toml: key 'public_leaderboard': expected "
                                          r"true or false, got 'yes'$"):
        load_runner_settings(season)


def test_a_season_game_downloaded_with_a_token_replays_with_the_students_bot(
        club: dict[str, Any], tmp_path: Path) -> None:
    """`referee replay` of a season game's address with alice's token: the record comes from
    /api/games/<index>, alice's bot (the same code as her uploaded version) takes the seat of
    alice.v1 and makes every move as the season recorded it. The game page links the record;
    a token that is not valid is one line, exit 2."""
    server, token = club["server"], club["tokens"]["alice"]
    spec = club["data"].parent / "src" / "alice" / "bot.toml"
    index = stored_games(club["data"])[0]
    record = bearer(WebClient(server.url), f"/api/games/{index}", token)
    seat = [bot["name"] for bot in record["bots"]].index("alice.v1")
    moves = sum(1 for d in record["decisions"] if d["seat"] == seat)
    done = referee("replay", f"{server.url}/games/{index}/", spec,
                   env={"REFEREE_TOKEN": token}, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"identical: your bot made every one of seat {seat} "
                                  f"(alice.v1)'s {moves} moves"), done.stdout
    page = signed_in(club, "alice").get(f"/games/{index}/").text
    assert f'<a href="/api/games/{index}" id="record-download" download="game-{index}.json">' \
        in page
    done = referee("replay", f"{server.url}/games/{index}/", spec, "--token", "rt_not_valid",
                   check=False)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr == "error: the token is not valid (revoked, or mistyped): make one on " \
                          "your Tokens page\n"

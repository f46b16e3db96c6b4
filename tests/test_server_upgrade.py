"""A club's data folder written by an older release (tests/fixtures/club-REV.tar.gz, made by
that release's own code with scripts/make_release_club.py) is served by this referee: every
page, game, password and token as it was, and the old uploads play a newcomer's games."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
from server_support import (
    ServerProcess,
    WebClient,
    make_student,
    student_bot,
    web_upload,
    zip_of,
)
from wait_support import wait_for

from referee.league.store import games_stored
from referee.server.shared.clubfolder import ClubFolder

FIXTURES = Path(__file__).resolve().parent / "fixtures"
RELEASES = sorted(FIXTURES.glob("club-*.tar.gz"))


def unpack(fixture: Path, top: Path) -> tuple[Path, dict]:
    with tarfile.open(fixture) as tar:
        tar.extractall(top, filter="data")
    data = top / "club-data"
    return data, json.loads((data / "fixture.json").read_text())


@pytest.mark.parametrize("fixture", RELEASES, ids=[p.name for p in RELEASES])
def test_a_club_of_an_older_release_is_served_whole_and_plays_on(
        fixture: Path, tmp_path: Path) -> None:
    data, made = unpack(fixture, tmp_path)
    season = data / "season.toml"
    # Games at full speed, between the students' bots only (settings this release added, which
    # the old file lacks: the pace and the house bots).
    season.write_text("games_per_bot_per_hour = 0\nhouse_bots = []\n" + season.read_text())
    old_games = made["games"]
    assert games_stored(ClubFolder(data).season_league.store_path) == old_games
    server = ServerProcess(data)
    try:
        token = made["tokens"]["ann"]
        api = WebClient(server.url)
        board = api.request("GET", "/api/leaderboard",
                            headers={"Authorization": f"Bearer {token}"}).json()
        assert sorted(row["bot"] for row in board["rows"]) == sorted(made["bots"].values())
        for index in range(old_games):
            answer = api.request("GET", f"/api/games/{index}",
                                 headers={"Authorization": f"Bearer {token}"})
            assert answer.status == 200, (index, answer.text[:300])
        for name, password in ((n, made["password"]) for n in made["tokens"]):
            student = WebClient(server.url)
            student.sign_in(name, password)
            pages = ["/", "/leaderboard/", "/season/", "/testgames/", "/play/",
                     *(f"/bots/{bot}/" for bot in made["bots"].values()),
                     *(f"/games/{i}/" for i in range(old_games))]
            for path in pages:
                answer = student.get(path)
                assert answer.status == 200, (name, path, answer.status, answer.text[:300])
            mine = student.get(f"/bots/{made['bots'][name]}/").text
            assert re.search(r"/versions/\d+/", mine), mine[:500]
        organiser = WebClient(server.url)
        organiser.sign_in("organiser", made["organiser_password"])
        assert organiser.get("/organiser/").status == 200
        # A new student's upload enters and plays its catch-up games against the old uploads.
        make_student(data, "cleo")
        bot = student_bot(tmp_path / "cleo", "cleobot", "CLEO")
        version, page = web_upload(server.url, "cleo", zip_of(bot, tmp_path / "cleo.zip"))
        assert version is not None, page[:500]
        wait_for("the newcomer's games against the old bots", lambda: games_stored(
            ClubFolder(data).season_league.store_path) > old_games, server, timeout=900)
    finally:
        assert server.stop() == 0, server.output()

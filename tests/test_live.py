"""Watching a game as it is played on the club server (issue "Play and watch", item 4): a real
`referee serve` (web process and season runner), real bots in the sandbox, real SQLite. A gated
bot holds its games in play until the test opens its gate (tests/bots/gated), so nothing
depends on timing: a season game and a test game stay in play while the streams are read."""

from __future__ import annotations

import json
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from runner_support import Club, write_season
from server_support import ServerProcess, WebClient, student_bot
from wait_support import wait_for

from referee.server.shared.clubfolder import ClubFolder

ROOT = Path(__file__).resolve().parents[1]
TEST_BOTS = ROOT / "tests" / "bots"
PASSWORD = "a long password 1"    # every Club.student's
MARKER = "ANN-SECRET"             # ann's bot writes it to stderr and, with -NOTE, as its note


class GatedClub:
    """A club whose season holds a game of the gated bot in play, a test game of it queued,
    and a real server on it; `gate` lets the games go on once it exists."""

    def __init__(self, tmp: Path, watchers: int) -> None:
        self.data = tmp / "club"
        self.club = Club(self.data)
        # The bots' generous limits need the season's ceilings raised as much.
        write_season(self.data, "seed = 5\nplayers = 2\nround_games = 1\nrefit_games = 2\n"
                                "refit_seconds = 2\n[limits]\ndecision_ms = 600000\n"
                                "startup_ms = 300000\n")
        gat, ann = self.club.student("gat"), self.club.student("ann")
        self.club.student("eve")
        self.club.version(
            gat, "gate-bot", TEST_BOTS / "gated" / "main.py", passed=True,
            # The gate waits for the test, never the referee's clock: generous limits.
            spec_text='name = "gated"\ncommand = ["{python}", "gated/main.py"]\n'
                      "[limits]\ndecision_ms = 600000\nstartup_ms = 300000\n",
            files={"gated/main.py": TEST_BOTS / "gated" / "main.py",
                   "botlib.py": TEST_BOTS / "botlib.py"})
        self.gate = ClubFolder(self.data).bot_uploads("gate-bot") / "1" / "bot" / "go"
        self.club.version(ann, "ann-bot", student_bot(tmp / "ann-src", "ann", MARKER,
                                                      noting=True), passed=True,
                          spec_text='name = "ann"\ncommand = ["{python}", "main.py"]\n'
                                    "[limits]\ndecision_ms = 60000\nstartup_ms = 300000\n")
        self.test_game = self.club(f"""
            from django.db import transaction
            with transaction.atomic():
                game = TestGame.objects.create(
                    requester_id={gat}, version=BotVersion.objects.get(league_name="gate-bot.v1"))
                game.opponents.add(BotVersion.objects.get(league_name="ann-bot.v1"))
            result = game.pk
        """)
        env = {**os.environ, "REFEREE_LIVE_WATCHERS": str(watchers)}
        # One web process: the bound on watchers is per process.
        self.server = ServerProcess(self.data, "--workers", "1", env=env)

    def client(self, name: str) -> WebClient:
        client = WebClient(self.server.url)
        client.sign_in(name, PASSWORD)
        return client

    def close(self) -> None:
        self.gate.touch()
        try:
            assert self.server.stop(signal.SIGTERM) == 0, self.server.output()
        finally:
            self.club.close()


@pytest.fixture
def gated_club(tmp_path: Path) -> Iterator[GatedClub]:
    club = GatedClub(tmp_path, watchers=2)
    try:
        yield club
    finally:
        club.close()


class Stream:
    """One server-sent event stream read as EventSource reads it."""

    def __init__(self, client: WebClient, path: str,
                 last_id: int | str | None = None) -> None:
        headers = {"Accept": "text/event-stream"}
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        self.answer = client.opener.open(urllib.request.Request(client.url + path,
                                                                headers=headers), timeout=300)
        self.text = ""

    def next(self) -> tuple[str, str | None, dict[str, Any]]:
        """The next event: (name, id, data); comments (keep-alives) are skipped."""
        name, ident, data = "message", None, ""
        while True:
            line = self.answer.readline().decode()
            assert line, "the stream ended without an end event"
            self.text += line
            if line == "\n" and data:
                return name, ident, json.loads(data)
            key, _, value = line.rstrip("\n").partition(": ")
            if key == "event":
                name = value
            elif key == "id":
                ident = value
            elif key == "data":
                data = value

    def to_end(self) -> list[tuple[str, str | None, dict[str, Any]]]:
        """Every event up to and with the end event."""
        events = []
        while not events or events[-1][0] != "end":
            events.append(self.next())
        return events

    def close(self) -> None:
        self.answer.close()


def in_play(client: WebClient) -> list[dict[str, Any]]:
    return client.get("/games/live.json").json()["games"]


@pytest.mark.sandbox
def test_a_stream_follows_a_season_game_and_a_test_game_to_their_ends(
        gated_club: GatedClub) -> None:
    club, server = gated_club, gated_club.server
    eve, gat, ann = club.client("eve"), club.client("gat"), club.client("ann")
    (game,) = wait_for("the season's game in play", lambda: in_play(eve), server, timeout=600)
    assert set(game["bots"]) == {"gate-bot.v1", "ann-bot.v1"}
    index = game["index"]
    # Listed for everyone signed in, and its page (not stored yet) frames the live viewer.
    assert f'href="/games/{index}/"' in eve.get("/leaderboard/").text
    page = eve.get(f"/games/{index}/")
    assert page.status == 200 and f'src="/games/{index}/watch"' in page.text

    season = Stream(eve, f"/games/{index}/live")
    name, _, start = season.next()
    assert name == "start" and start["players"] == 2 and start["index"] == index
    assert set(start["bots"]) == {"gate-bot.v1", "ann-bot.v1"}
    # The first step (the round's start, before the gated bot's turn) is there already.
    name, ident, first = season.next()
    assert (name, ident) == ("step", "1") and first["events"][0]["type"] == "round"

    # The test game: its owner watches it; another student finds no such stream or page.
    tid = club.test_game
    def test_game_in_play() -> bool:
        state, error = club.club.value(f"TestGame.objects.filter(pk={tid})"
                                       ".values_list('state', 'error').get()")
        assert state != "failed", error
        # Its live file, in the folder of its own its executor writes (ClubFolder.test_game_live).
        return any((ClubFolder(club.data).test_games / "live" / str(tid)).glob("*.jsonl"))

    wait_for("the test game in play", test_game_in_play, server, timeout=600)
    assert eve.get(f"/testgames/{tid}/live").status == 404
    assert eve.get(f"/testgames/{tid}/watch").status == 404
    assert eve.get(f"/testgames/{tid}/").status == 404
    assert eve.get(f"/testgames/{tid}/part").status == 404
    test = Stream(gat, f"/testgames/{tid}/live")
    assert test.next()[0] == "start"
    assert f'src="/testgames/{tid}/watch"' in gat.get(f"/testgames/{tid}/").text
    # The page's changing part, which the page asks for until the game is over: live now.
    part = gat.get(f"/testgames/{tid}/part").text
    assert 'data-phase="live"' in part and f'src="/testgames/{tid}/watch"' in part

    # Two streams are this process's bound: a third is refused at once in one line, and the
    # pages still answer.
    refused = ann.get(f"/games/{index}/live")
    assert refused.status == 503 and "already streams 2 games" in refused.text
    assert refused.text.count("\n") == 1 and "Traceback" not in refused.text
    assert ann.get("/leaderboard/").status == 200
    # A watcher that leaves gives its place back (Django cancels its stream).
    season.close()

    def a_place() -> bool:
        try:
            Stream(ann, f"/games/{index}/live").close()
        except urllib.error.HTTPError as exc:
            assert exc.code == 503
            return False
        return True

    wait_for("a place for another watcher", a_place, server)

    # EventSource reconnecting: the steps it had are not sent again.
    season = Stream(eve, f"/games/{index}/live", last_id=1)
    club.gate.write_text("")
    events = season.to_end()
    assert all(name == "step" for name, _, _ in events[:-1]) and events[:-1]
    assert [int(ident or 0) for _, ident, _ in events[:-1]] == list(range(2, len(events) + 1))
    assert events[-1][2] == {"finished": True, "url": f"/games/{index}/"}
    places = [e for _, _, step in events[:-1] for e in step["events"] if e["type"] == "place"]
    assert places and all(step.get("decision") is None or set(step["decision"]) <=
                          {"seat", "action", "auto", "strike"} for _, _, step in events[:-1])
    test_events = test.to_end()
    assert test_events[-1][2]["url"] == f"/testgames/{tid}/"
    # Never a bot's notes, output or think time in a stream.
    for text in (season.text, test.text):
        assert MARKER not in text and "latency" not in text and "values" not in text
    # Once stored, the game's page is its replay, and its stream says so at once.
    wait_for("the game stored", lambda: "/viewer" in eve.get(f"/games/{index}/").text, server)
    late = Stream(eve, f"/games/{index}/live")
    assert late.next() == ("end", None, {"finished": True, "url": f"/games/{index}/"})
    # The newest stored game, cut into a stream's steps for the idle viewer to replay: its
    # moves with their public decisions, never a bot's notes or output.
    newest = eve.get("/games/newest.json")
    game_now = newest.json()["game"]
    assert game_now["index"] >= index and game_now["players"] == 2
    moves = [step for step in game_now["steps"] if step.get("decision") is not None]
    assert moves and all(set(step["decision"]) <= {"seat", "action", "auto", "strike"}
                         and step["events"][-1]["type"] == "place" for step in moves)
    assert MARKER not in newest.text and "latency" not in newest.text
    wait_for("the test game's replay on its part",
             lambda: 'data-phase="over"' in gat.get(f"/testgames/{tid}/part").text, server)
    assert eve.get("/games/999999/live").status == 404


@pytest.mark.sandbox
def test_the_season_stream_follows_game_after_game_on_one_connection(tmp_path: Path) -> None:
    club = GatedClub(tmp_path, watchers=3)
    try:
        eve = club.client("eve")
        (game,) = wait_for("the season's game in play", lambda: in_play(eve), club.server,
                           timeout=600)
        index = game["index"]
        season = Stream(eve, "/games/live")
        name, _, start = season.next()
        assert name == "start" and start["index"] == index and start["players"] == 2
        name, ident, first = season.next()
        assert (name, ident) == ("step", f"{index}.1") and first["events"][0]["type"] == "round"
        # A reconnecting EventSource gets the steps after the one it had, not the start again.
        resumed = Stream(club.client("ann"), "/games/live", last_id=f"{index}.1")
        club.gate.write_text("")
        rest = season.to_end()
        idents = [ident for name, ident, _ in rest[:-1]]
        assert all(name == "step" for name, _, _ in rest[:-1]) and idents
        assert idents == [f"{index}.{step}" for step in range(2, len(idents) + 2)]
        assert rest[-1][2] == {"finished": True, "url": f"/games/{index}/"}
        # The same connection goes on to the next game the season plays, from its start.
        name, _, following = season.next()
        assert name == "start" and following["index"] != index
        name, ident, _ = season.next()
        assert (name, ident) == ("step", f"{following['index']}.1")
        assert resumed.next()[:2] == ("step", f"{index}.2")
        assert MARKER not in season.text
        season.close()
        resumed.close()
    finally:
        club.close()

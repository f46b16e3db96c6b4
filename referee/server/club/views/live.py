"""Games as they are played, on the club's pages (issue "Play and watch", item 4).

The referee writes each game in play to a live file (referee.game.livefile): the season's
games in DATA/season/live/, test games in DATA/testgames/live/. A game's page follows its file
with server-sent events: `GET /games/<index>/live` (a season game by schedule index) and
`GET /testgames/<id>/live` (a test game; its owner and the organiser only) answer
`text/event-stream` with

    event: start   data: {"players", "rules", "bots": [league names], "index"}
    id: K          event: step    data: public_step(the K-th step): {"events", "decision"}
    event: end     data: {"finished": bool, "url": the game's page}

A reconnecting EventSource sends Last-Event-ID: the steps it had are not sent again.
`GET /games/live` follows the season itself on one stream: the newest game in play not yet
shown (its start, its steps with ids "INDEX.STEP", its end), then the next, for as long as the
client stays: a projector or a script watches all evening without a request per game.
While none is in play, the season's viewer replays the newest stored game from
`GET /games/newest.json` (its start data and its steps in the same public shape).

Each stream is an async generator (it never holds a thread or the event loop); the streams of
one game share one reader of its file (livehub.Tail: one poll, each line parsed once). A stream
ends at the end line, when the file goes without one (its referee was stopped) or when the
client goes (Django cancels it). At most `watcher_limit()` streams are
open per web process: one more is answered 503 at once, so watchers never starve the pages.
One viewer holds at most `streams_per_student` of them across every web process
(club.streamslots): one more is answered 429, so no student holds every place; the organiser
(the big screen) is held to neither limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render

from referee.engine import RuleSet
from referee.game.livefile import games_in_play, public_step
from referee.server.club import games, livehub, streamslots
from referee.server.club.board import newest_board
from referee.server.club.people import is_organiser
from referee.server.club.views.common import (
    framed,
    leaderboard_open,
    organiser_only,
    own_test_game,
    refusal,
    replay_coming,
)
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonread import server_limits
from referee.util.numbers import NumberError, whole_number, whole_number_or

WATCHERS_ENV = "REFEREE_LIVE_WATCHERS"
DEFAULT_WATCHERS = 50     # open streams per web process (see watcher_limit)


def watcher_limit() -> int:
    """Streams one web process keeps open at once (REFEREE_LIVE_WATCHERS, default 50): each
    costs a poll every 100 ms and a socket, not a thread, so pages always find a thread."""
    text = os.environ.get(WATCHERS_ENV, "")
    try:
        return whole_number_or(text, DEFAULT_WATCHERS, WATCHERS_ENV, low=1)
    except NumberError:
        return DEFAULT_WATCHERS


class Watchers:
    """The count of open streams in this process, never above its limit."""

    def __init__(self) -> None:
        self.open = 0

    def take(self) -> bool:
        """One more stream, if there is room (the event loop is one thread: no lock)."""
        if self.open >= watcher_limit():
            return False
        self.open += 1
        return True

    def give(self) -> None:
        self.open = max(0, self.open - 1)


WATCHERS = Watchers()


# ------------------------------------------------------------------------- games in play

def header_of(path: Path) -> dict[str, Any] | None:
    """A live file's header line, or None (the game ended meanwhile, or no header yet)."""
    try:
        with path.open(encoding="utf-8") as file:
            line = file.readline()
    except OSError:
        return None
    if not line.endswith("\n"):
        return None
    with contextlib.suppress(ValueError):
        data = json.loads(line)
        if isinstance(data, dict) and isinstance(data.get("players"), int):
            return data
    return None


def season_in_play() -> list[dict[str, Any]]:
    """The season's games in play, oldest first: index, seats' names and their pages."""
    found = []
    for path in games_in_play(games.season_folder().live):
        header = header_of(path)
        if header is None or not isinstance(header.get("index"), int):
            continue
        index = header["index"]
        found.append({"index": index, "bots": [str(name) for name in header["bots"]],
                      "url": f"/games/{index}/", "watch": f"/games/{index}/watch",
                      "path": path})
    return found


def season_live_file(index: int) -> tuple[Path, dict[str, Any]] | None:
    """The live file of season game `index` and its header, if it is in play."""
    for path in games_in_play(games.season_folder().live):
        header = header_of(path)
        if header is not None and header.get("index") == index:
            return path, header
    return None


def test_live_file(game_id: int) -> tuple[Path, dict[str, Any]] | None:
    """The live file of test game `game_id` and its header, if it is in play."""
    path = ClubFolder.of_django().test_game_live_file(game_id)
    header = header_of(path)
    return (path, header) if header is not None else None


@leaderboard_open
def in_play_json(request: HttpRequest) -> HttpResponse:
    """The season's games in play: the pages that list them (the leaderboard) ask for it every
    few seconds and redraw their list, so it is listed at most once a second per process."""
    games_now = [{key: value for key, value in game.items() if key != "path"}
                 for game in PAGES_LISTING.now()]
    return JsonResponse({"games": games_now})


def public_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A stored record cut into the steps a live stream sends (public_step's shape): each
    move with the events before it and its decision's public part, then the events after the
    last move. The idle big screen replays them as if the game were being played."""
    found = record.get("decisions")
    decisions: list[Any] = found if isinstance(found, list) else []
    steps: list[dict[str, Any]] = []
    pending: list[Any] = []
    for event_data in record.get("events", []):
        pending.append(event_data)
        if isinstance(event_data, dict) and event_data.get("type") == "place":
            made = decisions[len(steps)] if len(steps) < len(decisions) else None
            steps.append(public_step({"events": pending, "decision": made}))
            pending = []
    if pending:
        steps.append({"events": pending})
    return steps


NEWEST: dict[int, dict[str, Any]] = {}   # the newest stored game's replay, by its index


def newest_replay() -> dict[str, Any] | None:
    """The newest stored season game as the season's viewer replays it while no game is in
    play: its start data (as a stream's start event) and its public steps. Built once per game
    and process (one record read), then shared."""
    with games.season_store() as store:
        row = None if store is None else store.db.execute("SELECT MAX(idx) FROM games").fetchone()
    if row is None or row[0] is None:
        return None
    index = int(row[0])
    cached = NEWEST.get(index)   # requests run in threads: read once, never twice
    if cached is None:
        found = games.season_game(index)
        if found is None:
            return None
        record, names = found
        rules = RuleSet.from_dict(record["rules"])
        players = int(record["players"])
        cached = {"index": index, "players": players, "rules": record["rules"],
                  "bots": [str(name) for name in names], "preset": rules.preset,
                  "hand": livehub.hand_of(rules, players), "url": f"/games/{index}/",
                  "steps": public_steps(record)}
        NEWEST.clear()
        NEWEST[index] = cached
    return cached


@login_required
def newest_json(request: HttpRequest) -> HttpResponse:
    """The newest finished season game to replay ({"game": null} before the first)."""
    return JsonResponse({"game": newest_replay()})


# ------------------------------------------------------------------------- the stream

def event(name: str, data: dict[str, Any], ident: int | None = None) -> str:
    """One server-sent event (JSON has no raw newline: one data line)."""
    return livehub.event(name, data, ident)


async def follow_events(path: Path, page_url: str, seen: int) -> AsyncIterator[str]:
    """The events of the game of live file `path`, from step `seen` + 1 on; ends after the
    end line, or when the file is gone without one (its referee was stopped). Every watcher
    of one file in this process shares one reader of it (livehub.Tail)."""
    async for text in livehub.follow_file(path, page_url, seen):
        yield text


def season_ident(last: str) -> tuple[int, int] | None:
    """(index, step) of a season stream's Last-Event-ID "INDEX.STEP", or None for none;
    NumberError (answered 400) for one that is not two whole numbers."""
    index, dot, step = last.partition(".")
    if not last:
        return None
    if not dot:
        raise NumberError("Last-Event-ID must be INDEX.STEP, two whole numbers")
    return (whole_number(index, "Last-Event-ID's game", digits=9),
            whole_number(step, "Last-Event-ID's step", digits=8))


class Listing:
    """The season's games in play, listed at most once per poll for every stream of this
    process that waits for the next game (a listing reads each live file's header)."""

    def __init__(self, age: float) -> None:
        self.age = age   # seconds a listing is used for
        self.taken = -1.0
        self.games: list[dict[str, Any]] = []

    def now(self) -> list[dict[str, Any]]:
        if time.monotonic() - self.taken >= self.age:
            self.games, self.taken = season_in_play(), time.monotonic()
        return self.games


SEASON_LISTING = Listing(livehub.POLL_S / 2)
PAGES_LISTING = Listing(1.0)   # what the pages' lists poll (in_play_json)


async def season_events(resume: tuple[int, int] | None) -> AsyncIterator[str]:
    """The season's games in play one after another on one stream: the newest game not yet
    shown, its start, steps (id "INDEX.STEP") and end, then the next; keep-alive comments
    while no game is in play. `resume`: the game and step a reconnecting EventSource had."""
    shown: set[int] = set()
    quiet = 0.0
    while True:
        playing = {game["index"]: game for game in SEASON_LISTING.now()}
        shown &= set(playing)   # ended games are no longer listed: forget them
        if resume is not None and resume[0] in playing:
            index, seen = resume
        else:
            fresh = [index for index in playing if index not in shown]
            index, seen = (max(fresh), 0) if fresh else (-1, 0)
        resume = None
        if index < 0:
            await asyncio.sleep(livehub.POLL_S)
            quiet += livehub.POLL_S
            if quiet >= livehub.KEEPALIVE_S:
                quiet = 0.0
                yield livehub.KEEPALIVE
            continue
        quiet = 0.0
        shown.add(index)
        tail = livehub.TAILS.join(playing[index]["path"])
        ident = functools.partial("{}.{}".format, index)
        try:
            async for text in livehub.game_events(tail, f"/games/{index}/", seen, ident=ident,
                                                  unseen_end=False):
                yield text
        finally:
            livehub.TAILS.leave(tail)


def last_event_id(request: HttpRequest) -> int:
    """The last step a reconnecting EventSource had (0 for a new one); NumberError (answered
    400) for a header that is no whole number."""
    return whole_number_or(request.headers.get("Last-Event-ID"), 0, "Last-Event-ID", digits=8)


async def stream(request: HttpRequest, source: AsyncIterator[str]) -> HttpResponse:
    """The answer that streams `source`'s events: 429 when the viewer already holds their
    `streams_per_student` streams (across every web process), 503 when this process has its
    fill. The organiser (the big screen) is held to neither: their stream always opens."""
    user = await request.auser()
    if await sync_to_async(is_organiser)(user):
        return streaming(source, None, counted=False)
    key = streamslots.viewer_key(user.pk if user.is_authenticated else None,
                                 request.META.get("REMOTE_ADDR", ""))
    cap = (await sync_to_async(server_limits)()).streams_per_student
    slot = streamslots.take(key, cap)
    if slot is None:
        answer = refusal(request, f"you have {cap} live games open already, the most one "
                                  f"viewer may have; close one and try again", 429)
        answer["Retry-After"] = "10"
        return answer
    if not WATCHERS.take():
        slot.release()
        answer = refusal(request, f"this server process already streams {watcher_limit()} "
                                  f"games to watchers; try again in a while", 503)
        answer["Retry-After"] = "10"
        return answer
    return streaming(source, slot, counted=True)


def streaming(source: AsyncIterator[str], slot: streamslots.Slot | None,
              counted: bool) -> HttpResponse:
    """The streaming answer of `source`; when it ends (or the client goes) the viewer's
    `slot` and this process's count (if `counted`) are given back."""

    async def events() -> AsyncIterator[str]:
        try:
            async for text in source:
                yield text
        finally:
            if counted:
                WATCHERS.give()
            if slot is not None:
                slot.release()

    response = StreamingHttpResponse(events(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"   # a proxy in front must not hold the events back
    return response


def stored_game_end(page_url: str) -> HttpResponse:
    """The stream of a game that is no longer in play: its end at once (the page shows its
    replay)."""
    return HttpResponse(event("end", {"finished": True, "url": page_url}),
                        content_type="text/event-stream")


@login_required
async def season_stream(request: HttpRequest, index: int) -> HttpResponse:
    """A season game's moves as they are played (anyone signed in sees a season game)."""
    page_url = f"/games/{index}/"
    seen = last_event_id(request)   # a bad one is refused whether the game is in play or not
    found = await sync_to_async(season_live_file)(index)
    if found is not None:
        return await stream(request, follow_events(found[0], page_url, seen))
    if await sync_to_async(games.season_game)(index) is not None:
        return stored_game_end(page_url)
    raise Http404("no such game")


@login_required
async def test_stream(request: HttpRequest, game_id: int) -> HttpResponse:
    """A test game's moves as they are played: its owner's and the organiser's only."""
    user = await request.auser()
    await sync_to_async(own_test_game)(user, game_id)   # 404 for anyone else
    page_url = f"/testgames/{game_id}/"
    seen = last_event_id(request)
    found = await sync_to_async(test_live_file)(game_id)
    if found is None:
        return stored_game_end(page_url)
    return await stream(request, follow_events(found[0], page_url, seen))


@login_required
async def season_follow(request: HttpRequest) -> HttpResponse:
    """The season's games in play, one after another, on one stream (the big screen's
    rotation, and anyone who follows the season without a request per game)."""
    resume = season_ident(request.headers.get("Last-Event-ID", ""))
    return await stream(request, season_events(resume))


# ------------------------------------------------------------------------- the viewer

def watch_html(request: HttpRequest, header: dict[str, Any], stream_url: str,
               page_url: str) -> HttpResponse:
    """The replay viewer on a game in play: the record so far is its header only, and
    watch.js appends each step the stream brings (the viewer draws as for a replay)."""
    rules = RuleSet.from_dict(header["rules"])
    players = int(header["players"])
    record = {"players": players, "rules": header["rules"], "events": [], "decisions": [],
              "bots": [{"seat": seat, "name": str(name)}
                       for seat, name in enumerate(header["bots"])]}
    hand = ",".join(map(str, livehub.hand_of(rules, players)))
    return render(request, "club/live_viewer.html", {
        "record": record, "hand": hand, "stream_url": stream_url, "page_url": page_url,
        "preset": rules.preset, "players": players})


@login_required
@framed
def season_watch(request: HttpRequest, index: int) -> HttpResponse:
    """The live viewer of a season game in play (its game page frames it)."""
    found = season_live_file(index)
    if found is not None:
        return watch_html(request, found[1], f"/games/{index}/live", f"/games/{index}/")
    if games.season_game(index) is not None:   # over by now: its replay viewer
        return redirect("club:game-viewer", index=index)
    # Over, and its record not stored yet (or never played: at most a few tries, then 404).
    return replay_coming(request, f"/games/{index}/")


@login_required
@framed
def test_watch(request: HttpRequest, game_id: int) -> HttpResponse:
    """The live viewer of a test game in play: its owner's and the organiser's only."""
    game = own_test_game(request.user, game_id)
    found = test_live_file(game_id)
    if found is not None:
        return watch_html(request, found[1], f"/testgames/{game_id}/live",
                          f"/testgames/{game_id}/")
    if game.state == game.DONE:   # over by now: its replay viewer
        return redirect("club:testgame-viewer", game_id=game_id)
    if game.state == game.FAILED:
        raise Http404("the test game failed: its page says why")
    return replay_coming(request, f"/testgames/{game_id}/")   # between its end and its record


@login_required
@framed
def season_follow_watch(request: HttpRequest) -> HttpResponse:
    """The season as it is played, game after game, in one live viewer on one stream
    (/games/live): a student's "watch the season" and the big screen's game."""
    return render(request, "club/season_viewer.html", {"stream_url": "/games/live"})


def season_game_in_play(request: HttpRequest, index: int) -> HttpResponse:
    """The page of a season game that is not stored yet: its live viewer, or 404."""
    found = season_live_file(index)
    if found is None:
        raise Http404("no such game")
    return render(request, "club/game.html", {
        "title": f"Game {index}", "seats": [], "live_url": f"/games/{index}/watch",
        "in_play": [str(name) for name in found[1]["bots"]]})


# ------------------------------------------------------------------------- the big screen

@organiser_only
def screen(request: HttpRequest) -> HttpResponse:
    """The organiser's projector page: the leaderboard beside the games in play."""
    board = newest_board()
    return render(request, "club/live_screen.html", {"board": board.payload,
                                                     "rows_html": board.rows_html})

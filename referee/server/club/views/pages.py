"""The student's pages: their bots and uploads, the leaderboard, bot pages, replays, test games.

Everything here reads: the leaderboard and records against opponents come from the newest
Standing row (the runner's last fit), games from the season's league store (read-only).
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from referee.bots.errors import STRIKE_TYPES
from referee.report.site import single_game_html
from referee.server.club import games, services
from referee.server.club.board import newest_board
from referee.server.club.forms import TestGameForm, UploadForm
from referee.server.club.models import Bot, BotVersion, ClubMessage, Notice, TestGame
from referee.server.club.people import is_organiser
from referee.server.club.templatetags.club import local_time
from referee.server.club.uploads import UploadRefused
from referee.server.club.views import live
from referee.server.club.views.common import (
    framed,
    leaderboard_open,
    may_see_code,
    own_test_game,
    own_version,
    refusal,
)
from referee.server.club.views.competitions import bot_competitions
from referee.server.club.waiting import waiting_for
from referee.server.shared.diskuse import RULE as RETENTION_RULE
from referee.server.shared.diskuse import mib, student_use
from referee.server.shared.seasonread import server_limits


def shown_line(text: str) -> str:
    """A check's line as people see it: the data folder's path left out (it is the server's
    business; `uploads/alicebot/3/bot/bot.toml` says enough)."""
    return text.replace(f"{settings.DATA_DIR}/", "")


# ------------------------------------------------------------------------- leaderboard

def standing_payload() -> dict[str, Any]:
    """The newest Standing as the leaderboard shows it, with each row's owner (shared between
    requests: read it, never change it)."""
    return newest_board().payload


@leaderboard_open
def leaderboard(request: HttpRequest) -> HttpResponse:
    board = newest_board()
    return render(request, "club/leaderboard.html", {"board": board.payload,
                                                     "rows_html": board.rows_html,
                                                     "retired_html": board.retired_html,
                                                     "in_play": live.season_in_play()})


@leaderboard_open
def leaderboard_json(request: HttpRequest) -> HttpResponse:
    return HttpResponse(newest_board().json, content_type="application/json")


# ------------------------------------------------------------------------- my page, uploads

def content_length(request: HttpRequest) -> int:
    """The request's Content-Length; -1 when it says none (or nonsense)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or -1)
    except ValueError:
        return -1


@login_required
def home(request: HttpRequest) -> HttpResponse:
    user: User = request.user
    bots = Bot.objects.filter(owner=user).prefetch_related("versions").order_by("name")
    notices = Notice.objects.filter(user=user).order_by("-created_at")[:20]
    return render(request, "club/home.html", {
        "bots": bots, "notices": notices, "form": UploadForm(), "limits": server_limits(),
        "disk_used": mib(student_use(Path(settings.DATA_DIR), user.pk)),
        "retention_rule": RETENTION_RULE,
        "club_messages": ClubMessage.objects.order_by("-created_at")[:20],
        "max_bots": getattr(getattr(user, "profile", None), "max_bots", None)})


@login_required
@require_POST
def upload(request: HttpRequest) -> HttpResponse:
    limits = server_limits()
    try:
        services.check_upload(request.user, content_length(request), limits)
    except services.Refused as why:
        messages.error(request, f"upload refused: {why.line}")
        return redirect("club:home")
    try:
        form = UploadForm(request.POST, request.FILES)
        valid = form.is_valid()
    except OSError as exc:
        messages.error(request, f"upload refused: the server could not store it "
                                f"({exc.strerror or exc}); nothing was kept")
        return redirect("club:home")
    if not valid:
        messages.error(request, "upload refused: " + "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
        return redirect("club:home")
    archive = form.cleaned_data["archive"]
    try:
        version = services.upload_version(request.user, Path(archive.temporary_file_path()),
                                          archive.name, form.cleaned_data["bot"].strip(),
                                          limits)
    except UploadRefused as exc:
        # Tagged so the page links the upload's layout beside the line (base.html).
        messages.error(request, f"upload refused: {exc}", extra_tags="upload-refused")
        return redirect("club:home")
    # Shown above the check as it runs and after its verdict: words true at every stage.
    messages.success(request, f"{version.league_name} uploaded: its check's verdict and "
                              f"report follow below")
    return redirect("club:version", version_id=version.pk)


# ------------------------------------------------------------------------- bots, versions

@login_required
def bot_page(request: HttpRequest, name: str) -> HttpResponse:
    bot = get_object_or_404(Bot.objects.select_related("owner", "history")
                            .defer("history__points"), name=name)
    versions = list(bot.versions.select_related("checkrun").order_by("-number"))
    names = [v.league_name for v in versions]
    board = newest_board()
    show = request.GET.get("show", "")
    show = show if show in ("losses", "strikes") else ""
    recent = games.recent_games(names, show) if names else []
    played = bool(recent) or bool(show and games.recent_games(names, "", limit=1))
    spans = games.version_spans(names) if names else {}
    for version in versions:
        version.first_game, version.last_game = spans.get(version.league_name, (None, None))
    return render(request, "club/bot.html", {
        "bot": bot, "versions": versions, "mine": may_see_code(request.user, bot),
        "organiser": is_organiser(request.user),
        "rows": board.rows_of(bot.name), "chart": rating_chart_of(bot),
        "opponents": board.opponents_html(names), "show": show, "recent": recent,
        "recent_rows": recent_rows(recent), "waiting": waiting_for(bot, versions, played),
        "competitions": bot_competitions(bot)})


def rating_chart_of(bot: Bot) -> SafeString:
    """The bot's rating chart as the runner drew it with its history (history.rating_chart:
    numbers and times only, no bot's text); empty before its first rated games."""
    history = getattr(bot, "history", None)
    return SafeString(history.chart if history is not None else "")


def recent_rows(recent: list[dict[str, Any]]) -> SafeString:
    """A bot's recent games as table rows: the seats' names and the place escaped, the index
    a whole number (cheaper than fifty rows through the template engine, or through
    format_html escaping every number); times as `local_time` shows them."""
    return SafeString("".join(
        f'<tr><td><a href="/games/{int(g["index"])}/">{int(g["index"])}</a></td>'
        f'<td>{escape(", ".join(map(str, g["bots"])))}</td><td>{escape(str(g["place"]))}</td>'
        f'<td>{strike_links(g)}</td><td>{local_time(g["finished_at"])}</td></tr>'
        for g in recent))


MARK_WORDS = frozenset((*STRIKE_TYPES, "forfeit"))   # what a store's strike mark may say


def strike_links(game: dict[str, Any]) -> SafeString | int:
    """A recent game's strikes: its count, then a link per strike and forfeit to the replay
    at its move (the game page passes `move` on to the viewer); the bare count for a game
    stored before the moves were kept. Written without escaping (fifty rows of links through
    format_html cost a page's budget): only whole numbers and the words of MARK_WORDS."""
    if not game["marks"]:
        return game["struck"]
    index = int(game["index"])
    links = " ".join(f'<a class="strike" href="/games/{index}/?move={int(move)}">'
                     f'{kind if kind in MARK_WORDS else "strike"} at move {int(move)}</a>'
                     for move, kind in game["marks"] if move > 0)
    unplayed = " forfeit from the start" if (0, "forfeit") in game["marks"] else ""
    return SafeString(f"{int(game['struck'])} {links}{unplayed}")


@login_required
def version_page(request: HttpRequest, version_id: int) -> HttpResponse:
    version = own_version(request.user, version_id)
    check = getattr(version, "checkrun", None)
    lines = list(check.lines.all()) if check else []
    for line in lines:
        line.text = shown_line(line.text)
    return render(request, "club/version.html", {"version": version, "check": check,
                                                 "lines": lines,
                                                 "after": lines[-1].seq if lines else 0})


@login_required
def download(request: HttpRequest, version_id: int) -> HttpResponse:
    """A version's uploaded archive: its owner's and the organiser's only."""
    version = own_version(request.user, version_id)
    path = Path(settings.DATA_DIR) / version.folder
    archive = path.parent / "archive"
    if not archive.is_file():
        raise Http404("the archive is gone")
    return FileResponse(archive.open("rb"), as_attachment=True,
                        filename=f"{version.league_name}-{Path(version.archive_name).name}")


# ------------------------------------------------------------------------- replays

def replay_html(record: dict[str, Any]) -> str:
    """The replay viewer's page for a record as the user may see it; its script and styles
    come from /static/report/ (the Content-Security-Policy runs no inline script)."""
    return single_game_html(record, assets_url=static("report/"))


def _season_game(index: int) -> tuple[dict[str, Any], list[str]]:
    """A season game's record and its seats' names (404 for no such game)."""
    found = games.season_game(index)
    if found is None:
        raise Http404("no such game")
    return found


def at_move(request: HttpRequest) -> str:
    """The replay viewer's anchor for the page's `?move=N` (a placement, from 1), or ""."""
    move = request.GET.get("move", "")
    return f"#move={int(move)}" if re.fullmatch("[0-9]{1,6}", move) else ""


@login_required
def game_page(request: HttpRequest, index: int) -> HttpResponse:
    if games.season_game(index) is None:   # in play: its live viewer (else 404)
        return live.season_game_in_play(request, index)
    record, names = _season_game(index)
    seats = games.seats(request.user, record, names)
    return render(request, "club/game.html", {
        "title": f"Game {index}", "seats": seats.rows,
        "outputs": seats.outputs, "others_hidden": seats.others_hidden,
        "viewer_url": f"/games/{index}/viewer{at_move(request)}",
        "record_url": f"/api/games/{index}", "record_file": f"game-{index}.json"})


@login_required
@framed
def game_viewer(request: HttpRequest, index: int) -> HttpResponse:
    """The project's replay viewer (the report's one-game page) for a season game."""
    record, names = _season_game(index)
    return HttpResponse(replay_html(games.visible_record(request.user, record, names)))


# ------------------------------------------------------------------------- test games

def with_owners(queryset: QuerySet[Any]) -> QuerySet[Any]:
    """Games (test or in the browser) with their opponents and their owners fetched at once."""
    return queryset.prefetch_related(Prefetch(
        "opponents", queryset=BotVersion.objects.select_related("bot__owner")
        .order_by("id")))


@login_required
def test_games(request: HttpRequest) -> HttpResponse:
    user: User = request.user
    form = TestGameForm(user, request.POST or None)
    if request.method == "POST":
        try:
            game = services.ask_test_game(user, form)
        except services.Refused as why:
            return refusal(request, why.line, why.status)
        if game is not None:
            messages.success(request, f"test game {game.pk} queued; the runner plays it soon")
            return redirect("club:testgame", game_id=game.pk)
    mine = with_owners(TestGame.objects.filter(requester=user).select_related("version")
                       .order_by("-requested_at"))[:50]
    return render(request, "club/testgames.html", {"form": form, "games": mine})


def test_game_context(user: User, game: TestGame) -> dict[str, Any]:
    """What a test game's page shows of it now: queued, in play (its live viewer), between its
    end and its record, done (its replay and outputs) or failed."""
    record = games.test_game_record(game) if game.state == TestGame.DONE else None
    names = games.record_seat_names(record) if record else []
    seats = games.seats(user, record, names) if record else games.Seats([], [], False)
    live_url = (f"/testgames/{game.pk}/watch"
                if game.state == TestGame.RUNNING and live.test_live_file(game.pk) else None)
    # The page asks for its part again until the game is over and its replay is shown.
    settled = game.state == TestGame.FAILED or (game.state == TestGame.DONE and record is not None)
    return {"title": f"Test game {game.pk}", "test_game": game,
            "seats": seats.rows, "outputs": seats.outputs, "others_hidden": seats.others_hidden,
            "viewer_url": f"/testgames/{game.pk}/viewer" if record else None,
            "live_url": live_url, "part_url": f"/testgames/{game.pk}/part",
            "part_phase": "over" if settled else ("live" if live_url else game.state)}


@login_required
def test_game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game = own_test_game(request.user, game_id)
    return render(request, "club/game.html", test_game_context(request.user, game))


@login_required
def test_game_part(request: HttpRequest, game_id: int) -> HttpResponse:
    """The changing part of a test game's page (its state, its live viewer or its replay):
    the page (live.js) asks for it every few seconds and swaps it in when its phase changes,
    so it follows its game from the queue to its replay without a reload."""
    game = own_test_game(request.user, game_id)
    return render(request, "club/game_part.html", test_game_context(request.user, game))


@login_required
@framed
def test_game_viewer(request: HttpRequest, game_id: int) -> HttpResponse:
    game = own_test_game(request.user, game_id)
    record = games.test_game_record(game)
    if record is None:
        raise Http404("the test game has no record yet")
    names = games.record_seat_names(record)
    return HttpResponse(replay_html(games.visible_record(request.user, record, names)))

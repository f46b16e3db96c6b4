"""Games a student plays in the browser against bots they chose.

The season runner plays the game (referee.server.runner.humangames); these views only read
what it wrote (the steps, the board, the question open for the player) and write the player's
answers. Only the player and the organiser see a game; only the player answers. Every answer
is checked against the question the runner asks now: a stale or made-up one is refused with
one line, never applied to another question.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from referee.server.club import games, services
from referee.server.club.forms import BrowserGameForm
from referee.server.club.models import HumanGame, HumanMove
from referee.server.club.people import is_organiser
from referee.server.club.views.common import framed, refusal
from referee.server.club.views.pages import replay_html, with_owners
from referee.server.shared.seasonread import play_against_students
from referee.util.numbers import NumberError, whole_number, whole_number_or


@login_required
def play_games(request: HttpRequest) -> HttpResponse:
    """Start a game in the browser (rate-limited as test games are), and the list of yours."""
    user: User = request.user
    form = BrowserGameForm(user, request.POST or None)
    if request.method == "POST":
        try:
            game = services.start_browser_game(user, form)
        except services.Refused as why:
            return refusal(request, why.line, why.status)
        if game is not None:
            return redirect("club:play-game", play_id=game.pk)
    mine = with_owners(HumanGame.objects.filter(owner=user).order_by("-created_at"))[:50]
    return render(request, "club/play_list.html", {
        "form": form, "games": mine, "against_students": play_against_students()})


def _visible_game(user: User, game_id: int) -> HumanGame:
    """The game if `user` may see it (its player or the organiser); 404 otherwise."""
    game = get_object_or_404(HumanGame, pk=game_id)
    if game.owner_id != user.pk and not is_organiser(user):
        raise Http404("no such game")
    return game


@login_required
def play_page(request: HttpRequest, play_id: int) -> HttpResponse:
    """The game's page: drawn and kept up to date by club/play.js; its replay once it ended."""
    game = _visible_game(request.user, play_id)
    opponents = game.opponents.select_related("bot__owner").order_by("id")
    finished = game.state in (HumanGame.DONE, HumanGame.FAILED)
    result = games.game_result(games.record_file(game.record_file) or {}) if finished else None
    rows, decided = result if result else ([], [])
    rows = [{**row, "you": row["seat"] == HumanGame.PLAYER_SEAT} for row in rows]
    return render(request, "club/play.html", {
        "game": game, "opponents": opponents, "finished": finished,
        "player": game.owner_id == request.user.pk,
        "result": rows, "decided": decided, "seats_in_game": len(rows),
        "mine": next((row for row in rows if row["you"]), None),
        "viewer_url": f"/play/{game.pk}/viewer" if game.record_file else None})


def open_move(game: HumanGame) -> HumanMove | None:
    """The question the runner asks the player now, if any."""
    if game.state != HumanGame.RUNNING:
        return None
    return game.moves.filter(state=HumanMove.OPEN).order_by("-number").first()


@login_required
def play_state(request: HttpRequest, play_id: int) -> HttpResponse:
    """The game so far as JSON: its steps from `?since=N` on, the board, and the question
    open for the player (the page polls it)."""
    game = _visible_game(request.user, play_id)
    start = whole_number_or(request.GET.get("since"), 0, "since", digits=6)
    steps = game.steps if isinstance(game.steps, list) else []
    move = open_move(game) if game.owner_id == request.user.pk else None
    return JsonResponse({
        "state": game.state, "error": game.error, "names": game.names, "limits": game.limits,
        "steps_from": start, "steps": steps[start:], "steps_total": len(steps),
        "board": game.board, "question": move.question if move else None})


def _answered(request: HttpRequest, game: HumanGame, text: str, status: int) -> HttpResponse:
    """The answer's outcome: JSON for the page's script, a message and the game's page for a
    plain form."""
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"ok": status == 200, "message": text}, status=status)
    (messages.success if status == 200 else messages.error)(request, text)
    return redirect("club:play-game", play_id=game.pk)


def read_answer(request: HttpRequest, move: HumanMove | None) -> tuple[int, str, int]:
    """The choice the form names for the open `move`; or -1, why, and the HTTP status: 409
    when the move it answers is not the one asked now, 400 for a choice that is none of it."""
    number, choice = request.POST.get("number", ""), request.POST.get("choice", "")
    if move is None:
        return -1, "no move is asked of you now", 409
    try:
        asked: int | None = whole_number(number, "number", digits=6)
    except NumberError:
        asked = None   # no move's number: not the move asked now
    if asked != move.number:
        return -1, f"that move is no longer asked (the game is at move {move.number})", 409
    count = len(move.question.get("choices", []))
    try:
        return whole_number(choice, "choice", 0, count - 1, digits=3), "", 200
    except NumberError:
        return -1, f"choose one of the {count} moves the buttons offer", 400


@login_required
@require_POST
def play_answer(request: HttpRequest, play_id: int) -> HttpResponse:
    """The player's choice for the question the runner asks now."""
    game = get_object_or_404(HumanGame, pk=play_id)
    if game.owner_id != request.user.pk:
        raise Http404("no such game")
    move = open_move(game)
    choice, why, status = read_answer(request, move)
    if why:
        return _answered(request, game, why, status)
    assert move is not None
    if not services.answer_move(move, choice):
        return _answered(request, game, "that move is no longer asked", 409)
    return _answered(request, game, "your move is in", 200)


@login_required
@framed
def play_viewer(request: HttpRequest, play_id: int) -> HttpResponse:
    """The replay viewer for a finished game (the other students' bots' output left out)."""
    game = _visible_game(request.user, play_id)
    record = games.record_file(game.record_file)
    if record is None:
        raise Http404("the game has no record yet")
    names = games.record_seat_names(record)
    shown = games.visible_record(request.user, record, names)
    if game.owner_id == request.user.pk:
        shown = as_player_reads(shown)
    return HttpResponse(replay_html(shown))


def as_player_reads(record: dict[str, Any]) -> dict[str, Any]:
    """The record with the player's own seat named as they read it ("ann (you)"), for their
    replay; the record itself keeps the plain name."""
    bots = record.get("bots")
    if not isinstance(bots, list) or len(bots) <= HumanGame.PLAYER_SEAT or not isinstance(
            bots[HumanGame.PLAYER_SEAT], dict):
        return record
    bots = list(bots)
    seat = bots[HumanGame.PLAYER_SEAT]
    bots[HumanGame.PLAYER_SEAT] = {**seat, "name": f"{seat.get('name', '')} (you)"}
    return {**record, "bots": bots}

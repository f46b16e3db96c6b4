"""The read-only JSON API of the season's results: the leaderboard, a bot's games, a game's
record. For students' own scripts: a personal token (Authorization: Bearer ...) or a signed-in
session; what each answer holds is what the pages show the same person (games.visible_record
removes other students' output and notes). Anonymous requests get 401, except the leaderboard
while the organiser's switch `public_leaderboard` is on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, overload

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from referee.server.club import games
from referee.server.club.board import newest_board
from referee.server.club.models import Bot, Competition
from referee.server.club.views.common import api_user, refusal
from referee.server.club.views.pages import standing_payload
from referee.server.shared.seasonread import public_leaderboard
from referee.util import numbers

MAX_LIMIT = 200        # games in one page of a bot's games
DEFAULT_LIMIT = 50
ReadView = Callable[..., HttpResponse]


def reader(*, public: bool = False) -> Callable[[ReadView], ReadView]:
    """A GET of the API that reads: the view gets the user of the token or session, or None
    for a spectator (only where `public` and the organiser's switch is on); everyone else
    gets 401 in one line. A token that is not valid is refused, never taken for a spectator:
    a script with a revoked token learns so instead of reading less."""

    def decorate(view: ReadView) -> ReadView:
        @functools.wraps(view)
        @require_GET
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            user = api_user(request)
            if user is None and "Authorization" in request.headers:
                return refusal(request, "the token is not valid (revoked, or mistyped): make "
                                        "one on your Tokens page", 401)
            if user is None and not (public and public_leaderboard()):
                return refusal(request, "sign in or pass a token (Authorization: Bearer ...)",
                               401)
            return view(request, user, *args, **kwargs)

        return wrapper

    return decorate


@overload
def whole_number(request: HttpRequest, key: str, default: int, low: int, high: int) -> int: ...
@overload
def whole_number(request: HttpRequest, key: str, default: None, low: int,
                 high: int) -> int | None: ...
def whole_number(request: HttpRequest, key: str, default: int | None, low: int,
                 high: int) -> int | None:
    """The query parameter `key` as a whole number from `low` to `high` (`default` when it
    is absent); ValueError, one line, otherwise."""
    text = request.GET.get(key)
    if text is None or text == "":
        return default
    return numbers.whole_number(text, key, low, high)


@reader(public=True)
def leaderboard(request: HttpRequest, user: User | None) -> HttpResponse:
    """GET /api/leaderboard[?competition=SLUG]: the newest standing's rows of the first
    competition (the season), or of the competition SLUG names, as the leaderboard's JSON
    gives them (board.BoardRow), each with the API address of its bot's games (the season's
    games: another competition's rows have none)."""
    slug = request.GET.get("competition", "")
    competition = Competition.objects.filter(slug=slug).first() if slug else None
    if slug and competition is None:
        return refusal(request, f"no competition {slug[:40]!r}", 404)
    first = competition is None or competition.is_first
    # shared between requests: copied before rows gain a field
    shared = standing_payload() if first or competition is None \
        else newest_board(competition.pk).payload
    board = {**shared, "rows": [dict(row) for row in shared["rows"]]}
    ids = dict(Bot.objects.filter(name__in=[row["bot"] for row in board["rows"]])
               .values_list("name", "pk"))
    for row in board["rows"]:
        row["games_url"] = f"/api/bots/{ids[row['bot']]}/games" \
            if row["bot"] in ids and first else ""
    return JsonResponse(board)


def iso_time(epoch: float) -> str:
    """A moment (seconds since the epoch) in ISO 8601, UTC, to the second."""
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat(timespec="seconds")


@reader()
def bot_games(request: HttpRequest, user: User, bot_id: int) -> HttpResponse:
    """GET /api/bots/<id>/games?limit=N&before=INDEX: the bot's season games, newest first,
    from the games index (places, money, strikes; never records); `next` is the address of
    the page after this one, or null on the last."""
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        return refusal(request, f"no bot has the id {bot_id}", 404)
    try:
        limit = whole_number(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        before = whole_number(request, "before", None, 0, 10**18)
    except ValueError as exc:
        return refusal(request, str(exc), 400)
    names = list(bot.versions.values_list("league_name", flat=True))
    found = games.recent_games(names, limit=limit, before=before) if names else []
    for game in found:
        game["url"] = f"/api/games/{game['index']}"
        # When it ended in ISO 8601 with its zone, as every time the API gives.
        game["finished_at"] = iso_time(game["finished_at"])
        del game["finished"]   # the page's own copy of it
    more = len(found) == limit
    return JsonResponse({
        "bot": bot.name, "bot_id": bot.pk, "games": found,
        "next": f"/api/bots/{bot.pk}/games?limit={limit}&before={found[-1]['index']}"
                if more else None})


@reader()
def game(request: HttpRequest, user: User, index: int) -> HttpResponse:
    """GET /api/games/<index>: the season game's record as its replay shows it to `user`:
    other students' seats without their output and notes (the organiser sees all)."""
    found = games.season_game(index)
    if found is None:
        return refusal(request, f"no season game has the index {index}", 404)
    record, names = found
    return JsonResponse(games.visible_record(user, record, names))

"""What every view shares: who may see what, rate limits, one-line refusals."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.deprecation import MiddlewareMixin

from referee.server.club import ratecount
from referee.server.club.models import Bot, BotVersion, TestGame
from referee.server.club.people import is_organiser, token_hash, user_for_token
from referee.server.club.refusal import refusal
from referee.server.shared.seasonread import public_leaderboard, server_limits
from referee.util.numbers import NumberError, whole_number_or

View = Callable[..., HttpResponse]


def rate_limited(request: HttpRequest, why: str = "") -> HttpResponse:
    """The answer to a request over a rate limit: 429, one line."""
    return refusal(request, why or "too many requests of this kind; wait a while and try "
                                   "again", 429)


def server_error(request: HttpRequest) -> HttpResponse:
    """A fault of the server itself: one line here, the details in the server's log."""
    return refusal(request, "the server could not answer this request; the organiser finds "
                            "why in the server's log", 500)


class NumberRefusalMiddleware(MiddlewareMixin):
    """A number from the request that is none (referee.util.numbers.NumberError, raised by
    any view that reads one) is answered 400 with its one line, never 500."""

    def process_exception(self, request: HttpRequest,
                          exception: Exception) -> HttpResponse | None:
        if isinstance(exception, NumberError):
            return refusal(request, str(exception), 400)
        return None


def framed(view: View) -> View:
    """A view the club's own pages frame (a replay viewer, a live viewer): every answer of it
    may be framed by the club's pages (X-Frame-Options SAMEORIGIN), its 404 too, so a frame
    says what happened in one line where the browser would only refuse to show it."""

    @functools.wraps(view)
    def answer(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except Http404 as exc:
            response = refusal(request, str(exc) or "not found", 404)
        except NumberError as exc:
            response = refusal(request, str(exc), 400)
        response["X-Frame-Options"] = "SAMEORIGIN"
        return response

    return cast(View, answer)


def replay_coming(request: HttpRequest, page_url: str) -> HttpResponse:
    """A framed viewer's answer for a game that has just ended and whose record is not stored
    yet (the referee stores it a moment after its live file goes): a line that says so, and
    the page loads itself again each second, at most COMING_TRIES times, then 404."""
    tried = whole_number_or(request.GET.get("tries"), 0, "tries", digits=3)
    if tried >= COMING_TRIES:
        raise Http404("the game has no replay")
    return render(request, "club/replay_coming.html", {
        "again": f"{request.path}?tries={tried + 1}", "page_url": page_url})


COMING_TRIES = 30


def organiser_only(view: View) -> View:
    """Only the organiser: everyone else gets 404 (the page does not exist for them)."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_organiser(request.user):
            if not request.user.is_authenticated:
                from django.contrib.auth.views import redirect_to_login
                return redirect_to_login(request.get_full_path())
            raise Http404("no such page")
        return view(request, *args, **kwargs)

    return wrapper


def leaderboard_open(view: View) -> View:
    """The leaderboard's page and JSON: for anyone signed in, and for spectators too while the
    organiser's switch `public_leaderboard` is on; else to the sign-in page."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated and not public_leaderboard():
            from django.contrib.auth.views import redirect_to_login
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def token_user(request: HttpRequest) -> User | None:
    """The user of a personal token (Authorization: Bearer ...), or None: a request without
    one counts as anonymous whatever session cookie it carries. Each request of a good token
    is counted (`api_requests_per_hour`); over it, TooMany (429, one line)."""
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return None
    token = header[7:].strip()
    user = user_for_token(token)
    if user is not None:   # a good token: its requests are counted
        most = server_limits().api_requests_per_hour
        ratecount.refuse_if_over(ratecount.Bucket(
            ratecount.key("api-token", token_hash(token)), most,
            why=f"too many requests with this token ({most} an hour); wait a while"))
    return user


def api_user(request: HttpRequest) -> User | None:
    """The user of an API request that only reads: a personal token or, without an
    Authorization header, the session of a signed-in page (the version page polls this way).
    A header that is not a good token is refused, never taken for the session."""
    if "Authorization" in request.headers:
        return token_user(request)
    user = request.user
    return user if user.is_authenticated and user.is_active else None


def may_see_code(user: User, bot: Bot) -> bool:
    """A bot's files, check output and test games: its owner and the organiser only."""
    return bot.owner_id == user.pk or is_organiser(user)


def own_version(user: User, version_id: int) -> BotVersion:
    """A version the user may look inside (their own, or any for the organiser); else 404."""
    version = get_object_or_404(BotVersion.objects.select_related("bot"), pk=version_id)
    if not may_see_code(user, version.bot):
        raise Http404("no such version")
    return version


def own_test_game(user: User, game_id: int) -> TestGame:
    """The test game if `user` may see it (its requester, or the organiser), else 404."""
    game = get_object_or_404(TestGame.objects.select_related("version"), pk=game_id)
    if game.requester_id != user.pk and not is_organiser(user):
        raise Http404("no such test game")
    return game

"""What a student asks of the club, one function each, called by the pages and by the token
API alike: upload a version, ask for a test game, start a game in the browser, answer its
moves. Each checks the request's limits, then writes its rows in one transaction (the runner's
job queue picks them up, shared.jobsync), or raises Refused with one line and its HTTP status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from referee.errors import UserError
from referee.server.club import ratecount
from referee.server.club.forms import BrowserGameForm, TestGameForm
from referee.server.club.models import BotVersion, HumanGame, HumanMove, TestGame
from referee.server.club.uploads import accept_upload
from referee.server.shared.seasonkeys import ServerLimits
from referee.server.shared.seasonread import server_limits

MULTIPART_SLACK = 64 * 1024   # form fields and boundaries around the file itself
GOING = (HumanGame.QUEUED, HumanGame.RUNNING)


class Refused(UserError):
    """A request the club does not carry out: one line for the student, and its status."""

    def __init__(self, line: str, status: int) -> None:
        super().__init__(line)
        self.line, self.status = line, status


def over_limit(kind: str, who: str, most: int, window_s: int = ratecount.HOUR) -> bool:
    """Count this request of `kind` by `who` (an address, "user:7") in its window of
    `window_s` seconds; True once it is over `most` (refuse it). Atomic across the web
    workers (referee.server.club.ratecount)."""
    return ratecount.over(ratecount.Bucket(ratecount.key(kind, who), most, window_s))


def check_upload(user: User, length: int, limits: ServerLimits) -> None:
    """Refused when an upload of `length` bytes (-1: not said) may not come in now, before
    its body is read: its size unknown or over the limit, or the student's uploads this hour
    at their limit (this one counted)."""
    if length < 0:
        raise Refused("the upload has no Content-Length; send it as one file of known size",
                      411)
    if length > limits.upload_max_bytes + MULTIPART_SLACK:
        raise Refused(f"the upload is {length} bytes, more than the limit of "
                      f"{limits.upload_max_bytes}", 413)
    if over_limit("upload", f"user:{user.pk}", limits.uploads_per_hour):
        raise Refused(f"you uploaded {limits.uploads_per_hour} times this hour; wait a while",
                      429)


def upload_version(user: User, path: Path, original: str, bot: str | None,
                   limits: ServerLimits) -> BotVersion:
    """The one way an upload becomes a version with its check queued (web form and
    `referee submit`); club.uploads.UploadRefused says why one is not."""
    return accept_upload(user, path, original, bot or None, limits)


def ask_test_game(user: User, form: TestGameForm) -> TestGame | None:
    """Queue the test game `form` asks for; None when the form has errors (it shows them).
    Refused over the student's test games per hour (an invalid form counts too)."""
    per_hour = server_limits().test_games_per_hour
    if over_limit("testgame", f"user:{user.pk}", per_hour):
        raise Refused(f"you asked for {per_hour} test games this hour; wait a while", 429)
    if not form.is_valid():
        return None
    game = _queued_with_opponents(TestGame, form.cleaned_data["opponents"], requester=user,
                                  version=form.cleaned_data["version"])
    assert isinstance(game, TestGame)
    return game


def start_browser_game(user: User, form: BrowserGameForm) -> HumanGame | None:
    """Queue the game in the browser `form` asks for; None when the form has errors. Refused
    while the student's last one is still going (one at a time: the runner's places are for
    everyone) and over their games per hour (the test games' limit)."""
    going = (HumanGame.objects.filter(owner=user, state__in=GOING)
             .values_list("pk", flat=True).first())
    if going is not None:
        raise Refused(f"your game {going} in the browser is still going: finish it (or "
                      f"leave it: it ends on its own) before another", 429)
    per_hour = server_limits().test_games_per_hour
    if over_limit("humangame", f"user:{user.pk}", per_hour):
        raise Refused(f"you started {per_hour} games this hour; wait a while", 429)
    if not form.is_valid():
        return None
    game = _queued_with_opponents(HumanGame, form.cleaned_data["opponents"], owner=user)
    assert isinstance(game, HumanGame)
    return game


def answer_move(move: HumanMove, choice: int) -> bool:
    """The player's `choice` for the question `move` (checked against it by the caller);
    False when it was no longer open. Only an open question takes an answer, once: two quick
    clicks answer it once."""
    return bool(HumanMove.objects.filter(pk=move.pk, state=HumanMove.OPEN).update(
        state=HumanMove.ANSWERED, choice=choice, answered_at=timezone.now()))


def _queued_with_opponents(model: type[TestGame] | type[HumanGame], opponents: Any,
                           **fields: Any) -> TestGame | HumanGame:
    """A game row with its opponents, in one transaction: the runner never claims a game
    without them."""
    with transaction.atomic():
        game = model.objects.create(**fields)
        game.opponents.set(opponents)
    return game

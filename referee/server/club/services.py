"""What a student asks of the club, one function each, called by the pages and by the token
API alike: upload a version, ask for a test game, start a game in the browser, answer its
moves, enter a bot in a competition or withdraw it; and what the organiser asks: open a
competition, pause, resume or close one. Each checks the request's limits, then writes its
rows in one transaction (the runner's job queue picks them up, shared.jobsync; the runner
follows a competition's state and entries), or raises Refused with one line and its HTTP
status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from referee.errors import UserError
from referee.server.club import ratecount
from referee.server.club.forms import BrowserGameForm, TestGameForm
from referee.server.club.models import (
    Bot,
    BotVersion,
    Competition,
    CompetitionEntry,
    HumanGame,
    HumanMove,
    TestGame,
)
from referee.server.club.seasonstate import move_competition
from referee.server.club.uploads import accept_upload
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonkeys import ServerLimits, competition_settings
from referee.server.shared.seasonread import season_file, season_read, server_limits
from referee.util.config import ConfigError

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


# ---------------------------------------------------------------------------- competitions

RESERVED_SLUGS = frozenset({"season", "new"})   # the first's pages, the organiser's form


def open_competition(name: str, slug: str, settings: dict[str, Any], *,
                     who_may_enter: str = Competition.STUDENTS,
                     bots_per_student: int = 1) -> Competition:
    """A new competition, open from the runner's next look (it plays once two bots are
    entered). `settings`: its keys of the season file's shape (rules, players, pace, limits,
    house bots...: seasonkeys.COMPETITION_KEYS), checked by the runner's own parser. Refused
    with one line for a name, slug, entry rule or setting it cannot take."""
    name = name.strip()
    if not name or len(name) > 100:
        raise Refused("a competition needs a name of 1 to 100 characters", 400)
    if not slug or slugify(slug) != slug or len(slug) > 40:
        raise Refused(f"the short name {slug!r} is not lower-case letters, digits and dashes "
                      f"(at most 40)", 400)
    if slug in RESERVED_SLUGS or Competition.objects.filter(slug=slug).exists():
        raise Refused(f"a competition named {slug!r} exists already; choose another short "
                      f"name", 409)
    if who_may_enter not in dict(Competition.ENTRY):
        raise Refused(f"who may enter is one of {', '.join(dict(Competition.ENTRY))}, not "
                      f"{who_may_enter!r}", 400)
    if not 1 <= bots_per_student <= 100:
        raise Refused("bots per student is a whole number from 1 to 100", 400)
    try:
        competition_settings(season_read().table, settings, season_file())
    except ConfigError as exc:
        raise Refused(f"its settings cannot be used: {exc}", 400) from None
    return Competition.objects.create(
        name=name, slug=slug, folder=ClubFolder.competition_folder(slug), settings=settings,
        who_may_enter=who_may_enter, bots_per_student=bots_per_student,
        state=Competition.RUNNING, created_at=timezone.now())


def move(competition: Competition, action: str) -> str:
    """Pause, resume or close `competition` (`action`); the line that says so. Refused when
    it cannot (a closed competition stays closed)."""
    done, line = move_competition(competition.pk, action)
    if not done:
        raise Refused(line, 409)
    return line


def enter_bot(user: User, bot: Bot, competition: Competition) -> CompetitionEntry:
    """Enter the student's `bot` in `competition`: its newest version that passed its check
    plays there from the competition's next round. Refused with one line when it may not."""
    _may_change_entry(user, bot, competition)
    if competition.who_may_enter != Competition.STUDENTS:
        raise Refused(f"{competition.name} plays the house bots only: students do not enter "
                      f"it", 403)
    with transaction.atomic():
        if CompetitionEntry.objects.filter(competition=competition, bot=bot).exists():
            raise Refused(f"{bot.name} is in {competition.name} already", 409)
        mine = CompetitionEntry.objects.filter(competition=competition, bot__owner=user).count()
        if mine >= competition.bots_per_student:
            most = competition.bots_per_student
            raise Refused(f"{competition.name} takes {most} bot{'' if most == 1 else 's'} per "
                          f"student, and you entered {mine}: withdraw one first", 409)
        return CompetitionEntry.objects.create(competition=competition, bot=bot)


def withdraw_bot(user: User, bot: Bot, competition: Competition) -> None:
    """Take the student's `bot` out of `competition` (its games there stay, its next ones are
    not played). Refused with one line when it is not in it."""
    _may_change_entry(user, bot, competition)
    if not CompetitionEntry.objects.filter(competition=competition, bot=bot).delete()[0]:
        raise Refused(f"{bot.name} is not in {competition.name}", 409)


def _may_change_entry(user: User, bot: Bot, competition: Competition) -> None:
    """Refused unless `user` owns `bot`, a bot that may play, and `competition` takes entries
    (the first takes every bot of the club, without asking)."""
    if bot.owner_id != user.pk:
        raise Refused(f"{bot.name} is not your bot", 403)
    if bot.disabled:
        raise Refused(f"{bot.name} is disabled: {bot.disabled_reason or 'by the organiser'}",
                      403)
    if competition.is_first:
        raise Refused(f"every bot of the club plays in {competition.name}: there is nothing "
                      f"to enter or withdraw", 409)
    if competition.state == Competition.CLOSED:
        raise Refused(f"{competition.name} is closed", 409)

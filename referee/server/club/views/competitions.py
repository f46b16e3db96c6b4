"""A competition's pages and the requests about competitions: its leaderboard and its season
page at /c/<slug>/ (the first competition's are the club's /leaderboard/ and /season/, shown
at its slug too), the organiser's opening, pausing, resuming and closing, and a student's
entering and withdrawing a bot. Every change goes through the service layer
(club.services); a refused one is its one line on the page it came from."""

from __future__ import annotations

import contextlib
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from referee.engine import PRESET_NOTES
from referee.league.store import LeagueStore
from referee.league.stored import read_league
from referee.server.club import services
from referee.server.club.board import newest_board
from referee.server.club.models import Bot, Competition, CompetitionEntry
from referee.server.club.views import season as season_views
from referee.server.club.views.common import leaderboard_open, organiser_only
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonfile import pace_words
from referee.server.shared.seasonkeys import competition_settings
from referee.server.shared.seasonread import season_file, season_read
from referee.util.config import ConfigError


def competition_of(slug: str) -> Competition:
    return get_object_or_404(Competition, slug=slug)


@leaderboard_open
def board(request: HttpRequest, slug: str) -> HttpResponse:
    """GET /c/<slug>/: the competition's leaderboard (the first's is /leaderboard/'s)."""
    competition = competition_of(slug)
    shaped = newest_board(competition.pk)
    facts: dict[str, Any] = {"board": shaped.payload, "rows_html": shaped.rows_html,
                             "retired_html": shaped.retired_html, "competition": competition}
    if competition.is_first:
        from referee.server.club.views import live

        facts["in_play"] = live.season_in_play()
    return render(request, "club/leaderboard.html", facts)


@leaderboard_open
def board_json(request: HttpRequest, slug: str) -> HttpResponse:
    """GET /c/<slug>/leaderboard.json: the board's JSON, as the page polls it."""
    return HttpResponse(newest_board(competition_of(slug).pk).json,
                        content_type="application/json")


@leaderboard_open
def season_page(request: HttpRequest, slug: str) -> HttpResponse:
    """GET /c/<slug>/season/: what the competition is (the first's: the season page)."""
    competition = competition_of(slug)
    if competition.is_first:
        return season_views.season_page(request)
    return render(request, "club/competition.html", competition_facts(competition))


def competition_facts(competition: Competition) -> dict[str, Any]:
    """What a competition's season page shows: its settings as the runner reads them (or the
    one line why it cannot), its store's once it started, its entrants."""
    facts: dict[str, Any] = {"competition": competition, "problem": "", "settings": None}
    try:
        settings = competition_settings(season_read().table, competition.settings,
                                        season_file())
    except ConfigError as exc:
        facts["problem"] = str(exc)
    else:
        league = settings.league
        low, high = league.players or (0, 0)
        facts["settings"] = {
            "rules": league.rules.preset, "rules_note": PRESET_NOTES.get(league.rules.preset, ""),
            "players": f"{low}-{high}" if league.players else "tables of 4 (fewer where the "
                                                                "rules allow fewer)",
            "pace": pace_words(settings.games_per_bot_per_hour),
            "round_games": settings.round_games, "max_rounds": settings.max_rounds or "none",
            "limits": sorted(league.limits.items()),
            "house": [spec.stem for spec in settings.house_bots]}
    store_path = ClubFolder.of_django().competition_league(competition.folder).store_path
    facts["recorded"], facts["rounds"] = 0, 0
    if store_path.exists():
        store = LeagueStore.open_readonly(store_path)
        with contextlib.closing(store):
            stored = read_league(store)
            facts["recorded"] = store.count()
            if stored is not None and stored.season is not None:
                facts["rounds"] = stored.season.rounds
    facts["entrants"] = (CompetitionEntry.objects.filter(competition=competition)
                         .select_related("bot__owner").order_by("bot__name"))
    return facts


# ------------------------------------------------------------------------- the organiser

@organiser_only
def report(request: HttpRequest, slug: str, path: str = "") -> HttpResponse:
    """GET /c/<slug>/report/[path]: the closed competition's static report (the organiser's
    only, as the season's: its replays hold every seat's output)."""
    from referee.server.club.views.organiser import report_file

    return report_file(competition_of(slug), path)


FORM_KEYS = ("rules", "players", "games_per_bot_per_hour", "round_games", "decision_ms",
             "house_bots")


def settings_of(form: Any) -> dict[str, Any]:
    """A competition's own settings from the organiser's form (blank fields left out: their
    defaults). Refused, one line, for a number that is none."""
    own: dict[str, Any] = {}
    rules = form.get("rules", "").strip()
    if rules:
        own["rules"] = rules
    players = form.get("players", "").strip()
    if players:
        own["players"] = players
    for key in ("games_per_bot_per_hour", "round_games"):
        text = form.get(key, "").strip()
        if text:
            try:
                own[key] = season_views.whole_number(text, key)
            except ValueError as exc:
                raise services.Refused(str(exc), 400) from None
    decision = form.get("decision_ms", "").strip()
    if decision:
        try:
            own["limits"] = {"decision_ms": season_views.whole_number(decision, "decision_ms")}
        except ValueError as exc:
            raise services.Refused(str(exc), 400) from None
    house = [name.strip() for name in form.get("house_bots", "").split(",") if name.strip()]
    if house:
        own["house_bots"] = house
    return own


@organiser_only
@require_POST
def competition_new(request: HttpRequest) -> HttpResponse:
    """POST /organiser/competitions/new: open a competition (services.open_competition)."""
    form = request.POST
    try:
        per_student = form.get("bots_per_student", "1").strip() or "1"
        made = services.open_competition(
            form.get("name", ""), form.get("slug", "").strip(), settings_of(form),
            who_may_enter=form.get("who_may_enter", Competition.STUDENTS),
            bots_per_student=season_views.whole_number(per_student, "bots per student"))
    except (services.Refused, ValueError) as why:
        messages.error(request, f"not opened: {getattr(why, 'line', str(why))}")
    else:
        messages.success(request, f"{made.name} is open: its page is /c/{made.slug}/")
    return redirect("club:organiser")


@organiser_only
@require_POST
def competition_action(request: HttpRequest, competition_id: int, action: str
                       ) -> HttpResponse:
    """POST /organiser/competitions/<id>/<pause|resume|close>."""
    competition = get_object_or_404(Competition, pk=competition_id)
    try:
        line = services.move(competition, action)
    except services.Refused as why:
        messages.error(request, f"{competition.name}: {why.line}")
    else:
        messages.success(request, f"{competition.name}: {line}")
    return redirect("club:organiser")


# ------------------------------------------------------------------------- a student's bot

@login_required
@require_POST
def bot_enter(request: HttpRequest, name: str, competition_id: int) -> HttpResponse:
    """POST /bots/<name>/enter/<id>: the owner enters the bot in the competition."""
    return _entry(request, name, competition_id, services.enter_bot, "is entered in")


@login_required
@require_POST
def bot_withdraw(request: HttpRequest, name: str, competition_id: int) -> HttpResponse:
    """POST /bots/<name>/withdraw/<id>: the owner takes the bot out of the competition."""
    return _entry(request, name, competition_id, services.withdraw_bot, "is withdrawn from")


def _entry(request: HttpRequest, name: str, competition_id: int, change: Any,
           words: str) -> HttpResponse:
    bot = get_object_or_404(Bot, name=name, owner=request.user)   # the owner's alone
    competition = get_object_or_404(Competition, pk=competition_id)
    try:
        change(request.user, bot, competition)
    except services.Refused as why:
        messages.error(request, why.line)
    else:
        messages.success(request, f"{bot.name} {words} {competition.name}")
    return redirect("club:bot", name=bot.name)


def bot_competitions(bot: Bot) -> list[dict[str, Any]]:
    """The competitions a bot's page lists: the first (every bot plays in it), and each
    other one it is in or may enter (not closed), with whether it is in."""
    entered = set(CompetitionEntry.objects.filter(bot=bot)
                  .values_list("competition_id", flat=True))
    rows = []
    for competition in Competition.objects.order_by("pk"):
        inside = competition.is_first or competition.pk in entered
        if not inside and (competition.state == Competition.CLOSED
                           or competition.who_may_enter != Competition.STUDENTS):
            continue
        # Its place there: its rows of that board (one per version that played there).
        placed = newest_board(competition.pk).rows_of(bot.name) if inside else []
        rows.append({"competition": competition, "entered": inside,
                     "may_change": not competition.is_first
                     and competition.state != Competition.CLOSED,
                     "places": [(row.version, row.table.rank, row.table.games, row.state)
                                for row in placed]})
    return rows

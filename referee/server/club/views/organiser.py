"""The organiser's page: the season's state and settings, join codes, bots to disable,
versions the runner took out (to put back), notices."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from referee.engine import PRESET_NOTES
from referee.server.club import streamslots
from referee.server.club.models import Bot, ClubMessage, Competition, HumanGame, JoinCode, Notice
from referee.server.club.people import make_join_code
from referee.server.club.seasonstate import move_season
from referee.server.club.takenout import put_back, taken_out_versions
from referee.server.club.views.common import organiser_only
from referee.server.club.views.season import FORM_LIMITS, LIMIT_WORDS, file_settings, form_initial
from referee.server.csp import allow_style_attributes
from referee.server.hostcheck import INSTALL_ALL
from referee.server.hostcheck import saved as saved_host_check
from referee.server.shared.seasonkeys import START_FAILURES_OUT
from referee.server.shared.seasonread import season_file


class JoinCodeForm(forms.Form):
    note = forms.CharField(max_length=100, required=False)
    max_uses = forms.IntegerField(min_value=1, max_value=10000, initial=30)


def usage() -> list[dict[str, Any]]:
    """What each viewer holds of what all share, now: live streams open (across every web
    process) and games in the browser waiting or running; busiest first."""
    streams = streamslots.in_use()
    games: Counter[int] = Counter(HumanGame.objects.filter(state=HumanGame.RUNNING)
                                  .values_list("owner_id", flat=True))
    waiting: Counter[int] = Counter(HumanGame.objects.filter(state=HumanGame.QUEUED)
                                    .values_list("owner_id", flat=True))
    ids = {int(key[5:]) for key in streams if key.startswith("user-")} | set(games) | set(waiting)
    names = dict(User.objects.filter(pk__in=ids).values_list("pk", "username"))
    rows = [{"who": names.get(pk, f"user {pk}"), "streams": streams.get(f"user-{pk}", 0),
             "playing": games.get(pk, 0), "waiting": waiting.get(pk, 0)} for pk in ids]
    rows += [{"who": f"address {key[5:]}", "streams": count, "playing": 0, "waiting": 0}
             for key, count in streams.items() if key.startswith("addr-")]
    return sorted(rows, key=lambda r: (-(r["streams"] + r["playing"] + r["waiting"]),
                                       r["who"]))


@organiser_only
def organiser(request: HttpRequest) -> HttpResponse:
    season = Competition.first()
    runner, problem = file_settings()
    initial = form_initial(runner)
    return render(request, "club/organiser.html", {
        "season_row": season, "codes": JoinCode.objects.order_by("-created_at")[:50],
        "competitions": Competition.objects.order_by("pk"),
        "presets": list(PRESET_NOTES.items()),
        "settings_form": initial, "settings_problem": problem, "season_file": season_file(),
        "form_limits": [(name, LIMIT_WORDS[name], initial[name]) for name in FORM_LIMITS],
        "code_form": JoinCodeForm(), "usage": usage(),
        "bots": Bot.objects.select_related("owner").order_by("name"),
        "taken_out": taken_out_versions(), "start_failures_out": START_FAILURES_OUT,
        "forfeits_out": runner.forfeits_to_take_out,
        "students": User.objects.filter(is_superuser=False).select_related("profile")
        .order_by("username"),
        "notices": Notice.objects.filter(user__isnull=True).order_by("-created_at")[:30],
        "club_messages": ClubMessage.objects.order_by("-created_at")[:50],
        "host_missing": saved_host_check(Path(settings.DATA_DIR)), "install_all": INSTALL_ALL})


@organiser_only
@require_POST
def season_action(request: HttpRequest, action: str) -> HttpResponse:
    done, text = move_season(action)
    (messages.success if done else messages.error)(request, text)
    return redirect("club:organiser")


@organiser_only
@require_POST
def message_new(request: HttpRequest) -> HttpResponse:
    """Post a message to every student (shown on their My bots page until removed)."""
    from referee.present.text import safe_line

    text = safe_line(str(request.POST.get("text", "")), limit=500).strip()
    if not text:
        messages.error(request, "message not posted: write something first")
    else:
        ClubMessage.objects.create(text=text[:500])
        messages.success(request, "message posted: every student sees it on My bots")
    return redirect("club:organiser")


@organiser_only
@require_POST
def message_remove(request: HttpRequest, message_id: int) -> HttpResponse:
    ClubMessage.objects.filter(pk=message_id).delete()
    messages.success(request, "message removed")
    return redirect("club:organiser")


@organiser_only
@require_POST
def join_code_new(request: HttpRequest) -> HttpResponse:
    form = JoinCodeForm(request.POST)
    if form.is_valid():
        code = make_join_code(form.cleaned_data["note"], form.cleaned_data["max_uses"])
        messages.success(request, f"new join code: {code.code}")
    else:
        messages.error(request, "join code not made: give a number of uses from 1 to 10000")
    return redirect("club:organiser")


@organiser_only
@require_POST
def join_code_withdraw(request: HttpRequest, code_id: int) -> HttpResponse:
    JoinCode.objects.filter(pk=code_id).update(active=False)
    messages.success(request, "join code withdrawn")
    return redirect("club:organiser")


@organiser_only
@require_POST
def bot_disable(request: HttpRequest, bot_id: int) -> HttpResponse:
    """Disable a bot (its recorded games stay; the runner takes it out of the schedule), or
    enable it again."""
    bot = get_object_or_404(Bot, pk=bot_id)
    enable = request.POST.get("enable") == "1"
    bot.disabled = not enable
    bot.disabled_reason = "" if enable else request.POST.get("reason", "")[:200]
    bot.save(update_fields=["disabled", "disabled_reason"])
    messages.success(request, f"{bot.name} is {'enabled' if enable else 'disabled'}")
    return redirect("club:organiser")


@organiser_only
@require_POST
def version_put_back(request: HttpRequest, version_id: int) -> HttpResponse:
    """Put a version the runner took out back into the season (referee.server.club.takenout);
    back to the page the button was on."""
    done, text = put_back(version_id)
    (messages.success if done else messages.error)(request, text)
    bot = Bot.objects.filter(versions__pk=version_id).first()
    if request.POST.get("back") == "bot" and bot is not None:
        return redirect("club:bot", bot.name)
    return redirect("club:organiser")


@organiser_only
def season_report(request: HttpRequest, path: str = "") -> HttpResponse:
    """The closed season's static report (written by the runner). The organiser's only: its
    replays hold every seat's output."""
    return report_file(Competition.first(), path)


def report_file(competition: Competition, path: str) -> HttpResponse:
    """A file of a closed competition's static report (404 before it is written, and for a
    path outside it)."""
    from pathlib import Path

    from django.conf import settings
    from django.http import FileResponse, Http404

    if not competition.report_path:
        raise Http404("the competition has no report yet")
    root = (Path(settings.DATA_DIR) / competition.report_path).resolve()
    if root.is_file():
        root = root.parent
    target = (root / (path or "index.html")).resolve()
    if not target.is_relative_to(root) or not target.is_file():
        raise Http404("no such report file")
    return allow_style_attributes(FileResponse(target.open("rb")))

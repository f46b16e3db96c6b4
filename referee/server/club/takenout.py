"""Versions the runner took out of the season (their bot could not start, or forfeited game
after game: referee.server.runner.seasonloop), and the organiser's word that puts one back.

One mechanism whatever the cause: the runner marks the version `taken_out`, with the reason in
its `error` (shown on its owner's My bots and on the bot's page). A new upload of the bot enters
as any upload does; the organiser's put-back makes the version wait again, and the runner
enters it anew between rounds (referee.league.season.Season.restore)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from referee.present.text import safe_line
from referee.server.club.models import BotVersion, Competition, Notice


def taken_out_versions() -> QuerySet[BotVersion]:
    """The versions taken out of the season now, newest first."""
    return (BotVersion.objects.select_related("bot__owner")
            .filter(taken_out=True, season_state=BotVersion.DISABLED).order_by("-pk"))


def put_back_refusal(version: BotVersion) -> str | None:
    """Why `version` cannot be put back now (one line), or None."""
    label = f"{version.bot.name} v{version.number}"
    if not version.taken_out or version.season_state != BotVersion.DISABLED:
        return f"{label} is not taken out of the season"
    if Competition.first().state == Competition.CLOSED:
        return "the season is closed"
    if version.bot.disabled:
        return f"{version.bot.name} is disabled: enable the bot first"
    owner = version.bot.owner
    if owner is not None and not owner.is_active:
        return f"{owner.username}'s account is disabled"
    newer = (BotVersion.objects.filter(bot_id=version.bot_id, number__gt=version.number)
             .exclude(check_state__in=[BotVersion.FAILED, BotVersion.REPLACED])
             .order_by("number").first())
    if newer is not None:
        return f"{label} has a newer version, v{newer.number}, that takes its place"
    return None


def put_back(version_id: int) -> tuple[bool, str]:
    """The organiser's word: the taken-out version waits to enter the season again (the
    runner enters it between rounds, with a fresh count of its failed starts and forfeits)
    and its owner is told. (done, one line for the organiser)."""
    with transaction.atomic():
        version = BotVersion.objects.select_related("bot__owner").filter(pk=version_id).first()
        if version is None:
            return False, "no such version"
        refusal = put_back_refusal(version)
        if refusal is not None:
            return False, f"not put back: {refusal}"
        was = version.error
        version.season_state, version.taken_out, version.error = BotVersion.WAITING, False, ""
        version.save(update_fields=["season_state", "taken_out", "error"])
        label = f"{version.bot.name} v{version.number}"
        Notice.objects.create(
            user_id=version.bot.owner_id, version_id=version.pk,
            text=safe_line(f"{label} is put back into the season by the organiser: it plays "
                           f"again from the next round (it was {was})", limit=490))
    return True, f"{label} is put back: it enters the season again between rounds"

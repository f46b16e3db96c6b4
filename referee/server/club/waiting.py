"""What a bot is waiting for, in words for its page: nobody should wait with no word why."""

from __future__ import annotations

from django.db.models import Q

from referee.server.club.models import Bot, BotVersion, CheckRun, Competition


def queue_position(check: CheckRun) -> int:
    """1 for the next check the runner takes, 2 after that one...; the checks queued before it
    (oldest first, as the runner claims them) plus one."""
    ahead = CheckRun.objects.filter(state=CheckRun.QUEUED).filter(
        Q(queued_at__lt=check.queued_at) | Q(queued_at=check.queued_at, pk__lt=check.pk))
    return ahead.count() + 1


def waiting_for(bot: Bot, versions: list[BotVersion], played: bool) -> list[str]:
    """One line per thing `bot` waits for: a version's check in the queue (its position) or
    running, a passed version entering the season, the first game of the version in play, a
    paused season. `versions` are the bot's, newest first; `played`: it has recorded games."""
    if bot.disabled:
        return []
    state = Competition.first().state
    lines = []
    for version in versions:
        label = f"v{version.number}"
        check = getattr(version, "checkrun", None)
        if version.season_state != BotVersion.WAITING:
            continue
        if version.check_state == BotVersion.QUEUED and check is not None:
            position = queue_position(check)
            ahead = position - 1
            lines.append(f"{label}: its check is next in the queue" if not ahead else
                         f"{label}: its check is in the queue, {ahead} "
                         f"{'check' if ahead == 1 else 'checks'} before it")
        elif version.check_state == BotVersion.RUNNING:
            lines.append(f"{label}: its check is running")
        elif version.check_state == BotVersion.PASSED and state != Competition.CLOSED:
            lines.append(f"{label}: it passed its check and is entering the season (when the "
                         f"games now in play end)")
    active = next((v for v in versions if v.season_state == BotVersion.ACTIVE), None)
    if state == Competition.PAUSED:
        lines.append("the season is paused: no games are played until the organiser resumes it")
    elif active is not None and not played and state == Competition.RUNNING:
        lines.append(f"v{active.number}: in the season, waiting for its first game")
    return lines

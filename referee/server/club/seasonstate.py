"""The organiser's moves of the season: pause, resume, close (the runner follows the state)."""

from __future__ import annotations

from django.utils import timezone

from referee.server.club.models import Season

# action -> (the state it leads to, the states it may start from); a closed season stays closed.
MOVES = {
    "pause": (Season.PAUSED, {Season.RUNNING}),
    "resume": (Season.RUNNING, {Season.PAUSED}),
    "close": (Season.CLOSED, {Season.RUNNING, Season.PAUSED}),
}


def move_season(action: str) -> tuple[bool, str]:
    """Apply `action` to the season; (done, one line for the organiser)."""
    if action not in MOVES:
        return False, f"no season action {action!r}"
    state, allowed = MOVES[action]
    changes = {"state": state, "updated_at": timezone.now()}
    if state == Season.CLOSED:
        changes["closed_at"] = timezone.now()
    season = Season.current()
    if Season.row().filter(state__in=allowed).update(**changes):
        return True, f"the season is {state} now"
    season.refresh_from_db(fields=["state"])
    return False, f"the season cannot {action} from {season.state}"

"""The organiser's moves of a competition: pause, resume, close (the runner follows the
state). The first competition is the club's season: its moves keep their words."""

from __future__ import annotations

from django.utils import timezone

from referee.server.club.models import Competition

# action -> (the state it leads to, the states it may start from); a closed one stays closed.
MOVES = {
    "pause": (Competition.PAUSED, {Competition.RUNNING}),
    "resume": (Competition.RUNNING, {Competition.PAUSED}),
    "close": (Competition.CLOSED, {Competition.RUNNING, Competition.PAUSED}),
}


def move_competition(competition: int, action: str) -> tuple[bool, str]:
    """Apply `action` to the competition of id `competition`; (done, one line for the
    organiser)."""
    what = "the season" if competition == Competition.FIRST else "the competition"
    if action not in MOVES:
        return False, f"no {what.removeprefix('the ')} action {action!r}"
    state, allowed = MOVES[action]
    changes = {"state": state, "updated_at": timezone.now()}
    if state == Competition.CLOSED:
        changes["closed_at"] = timezone.now()
    row = Competition.objects.filter(pk=competition)
    if row.filter(state__in=allowed).update(**changes):
        return True, f"{what} is {dict(Competition.STATES)[state]} now"
    found = row.values_list("state", flat=True).first()
    if found is None:
        return False, "no such competition"
    return False, f"{what} cannot {action} from {dict(Competition.STATES)[found]}"


def move_season(action: str) -> tuple[bool, str]:
    """Apply `action` to the season (the first competition); (done, one line)."""
    return move_competition(Competition.FIRST, action)

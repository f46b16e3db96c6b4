"""What every page's template knows: the season's state, and for the organiser whether
uploads run outside the sandbox or not at all (a banner on every page they see)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from referee.server.club.models import Competition
from referee.server.club.people import is_organiser


def club(request: HttpRequest) -> dict[str, Any]:
    """The season row, and for the organiser `sandbox_banner`: "" or the one line saying that
    uploads run unconfined or not at all (referee.server.shared.confinement)."""
    facts: dict[str, Any] = {"season": Competition.first()}
    if is_organiser(request.user):
        facts["sandbox_banner"] = sandbox_line()
    return facts


def sandbox_line() -> str:
    """How uploads run here under the season file as it is now: "" in the sandbox."""
    from referee.server.club.views.season import file_settings
    from referee.server.shared.confinement import confinement

    return confinement(file_settings()[0]).line

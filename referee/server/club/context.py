"""What every page's template knows: the season's state."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from referee.server.club.models import Season


def club(request: HttpRequest) -> dict[str, Any]:
    return {"season": Season.objects.filter(pk=1).first()}

"""A moment as the club's pages show it: a <time> element the reader's browser puts in their
own time zone (the pages' filter `local_time`, and the rating charts the runner draws)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.utils.html import format_html


def local_time(value: Any) -> str:
    """A moment (a datetime, or seconds since the epoch as game records keep them) as a
    <time> element: in UTC as the page is sent, rewritten into the reader's own time zone by
    club/times.js ("2026-03-14 09:26"). Empty for no moment."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value, tz=UTC)
    elif isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    else:
        return ""
    return format_html('<time class="local" datetime="{}">{} UTC</time>',
                       moment.strftime("%Y-%m-%dT%H:%M:%SZ"), moment.strftime("%Y-%m-%d %H:%M"))

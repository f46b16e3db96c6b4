"""Template filters of the club's pages."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django import template
from django.utils.html import format_html

from referee.league.tables import Row
from referee.report.table_files import rank_text

register = template.Library()


@register.filter
def signed(value: Any) -> str:
    """A strength as the league's tables print it: a whole number with its sign (+182, -39)."""
    if not isinstance(value, int | float):
        return "-"
    return f"{round(value):+d}" if round(value) else "0"


@register.filter
def ranks(row: Row) -> str:
    """A table row's rank range as the league's tables print it (`3`, `2–5`, `-`)."""
    return rank_text(row.rank_low, row.rank_high, dash="\u2013")


@register.filter
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

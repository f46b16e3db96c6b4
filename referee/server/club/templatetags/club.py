"""Template filters of the club's pages."""

from __future__ import annotations

from typing import Any

from django import template

from referee.league.tables import Row
from referee.report.table_files import rank_text
from referee.server.shared.timehtml import local_time

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


register.filter("local_time", local_time)

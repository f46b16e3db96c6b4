"""Template filters of the club's pages."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def signed(value: Any) -> str:
    """A strength as the league's tables print it: a whole number with its sign (+182, -39)."""
    if not isinstance(value, int | float):
        return "-"
    return f"{round(value):+d}" if round(value) else "0"

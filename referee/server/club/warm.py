"""A web worker's warm-up before it takes its first connection.

A worker's first requests pay for what every later one reuses: the templates compiled, the
URL patterns resolved, the newest standing shaped into the board (referee.server.club.board).
When a class opens the pages at once, those first requests queue behind each other on a cold
worker: in bench/server.py every request over 0.4 s came in the first four seconds of a
window. Done here, before the worker listens, nobody waits for it.
"""

from __future__ import annotations

from pathlib import Path

from django.db import connections
from django.template.loader import get_template
from django.urls import get_resolver

from referee.server.club.board import newest_board

TEMPLATES = Path(__file__).parent / "templates"


def warm() -> None:
    """Compile every club template, resolve the routes and shape the newest board."""
    for path in sorted(TEMPLATES.rglob("*.html")):
        get_template(path.relative_to(TEMPLATES).as_posix())
    get_resolver().url_patterns   # noqa: B018 - imports every view module and its patterns
    newest_board()
    connections.close_all()       # the threads that serve requests open their own

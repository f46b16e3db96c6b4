"""The newest standing as pages show it, decoded once per standing and process.

A standing (the runner's snapshot after a refit) is written once and never changed, and it is
large (about 180 KB of JSON at 50 bots, 550 KB at 100). Pages ask for the newest one on every
request: here its id is looked up by index, and only a standing not seen before is read,
decoded and shaped for the leaderboard, its JSON and the bot pages.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from django.core.serializers.json import DjangoJSONEncoder
from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from referee.server.club.models import Bot, Standing

EMPTY = {"standing": None, "games": 0, "rows": [], "facts": {}}


def league_bot(league_name: str) -> str:
    """The bot a league name (`bot.vN`) is a version of."""
    return league_name.rsplit(".v", 1)[0]


@dataclass(frozen=True)
class Board:
    """One standing, shaped once: what the leaderboard shows, that as JSON, the table's rows
    as HTML (autoescaped like any page: names are the students'), and the records against
    opponents by league name (for bot pages)."""

    standing: int | None
    payload: dict[str, Any]
    json: bytes
    rows_html: SafeString
    head_to_head: dict[str, Any]
    # league names of a bot -> its table against each opponent, rendered on first use
    _opponents: dict[tuple[str, ...], SafeString] = field(default_factory=dict, compare=False)

    def rows_of(self, bot: str) -> list[dict[str, Any]]:
        """The leaderboard's rows of one bot (one per version in the season)."""
        return [row for row in self.payload["rows"] if row.get("bot") == bot]

    def opponents_html(self, league_names: list[str]) -> SafeString:
        """The table of a bot's records against each opponent bot (its versions' records
        summed), rendered once per standing; empty when it has none."""
        key = tuple(league_names)
        html = self._opponents.get(key)
        if html is None:
            rows = opponents(self.head_to_head, league_names)
            html = self._opponents[key] = opponents_table(rows) if rows else SafeString("")
        return html


def opponents_table(rows: list[tuple[str, dict[str, Any]]]) -> SafeString:
    """The opponents' table as HTML, every value escaped (format_html_join: a hundred rows
    through the template engine cost more than the rest of the bot page)."""
    body = format_html_join("", '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td>'
                                '<td>{}</td></tr>',
                            ((rec["url"], name, rec["games"], rec["ahead"], rec["behind"])
                             for name, rec in rows))
    return format_html('<table id="opponents"><thead><tr><th>opponent</th><th>games</th>'
                       '<th>ahead</th><th>behind</th></tr></thead><tbody>{}</tbody></table>',
                       body)


def opponents(h2h: dict[str, Any], league_names: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(opponent bot, {games, ahead, behind, url}) summed over these versions, by name."""
    found: dict[str, dict[str, Any]] = {}
    for league_name in league_names:
        for other, rec in (h2h.get(league_name) or {}).items():
            total = found.setdefault(league_bot(other), {"games": 0, "ahead": 0, "behind": 0})
            for key in ("games", "ahead", "behind"):
                total[key] += int(rec.get(key, 0)) if isinstance(rec, dict) else 0
    for name, total in found.items():   # a path each, cheaper than a {% url %} per row
        total["url"] = f"/bots/{quote(name, safe='')}/"
    return sorted(found.items())


_lock = threading.Lock()
_cached: Board | None = None


def newest_board() -> Board:
    """The newest standing as a Board (the one decoded before while it is still the newest)."""
    global _cached
    newest = Standing.objects.order_by("-id").values_list("pk", flat=True).first()
    board = _cached
    if board is not None and board.standing == newest:
        return board
    with _lock:   # one request decodes a new standing; the others wait for it
        board = _cached
        if board is None or board.standing != newest:
            board = _cached = _shape(Standing.objects.filter(pk=newest).first())
    return board


def _shape(standing: Standing | None) -> Board:
    """A standing (or none yet) as the pages show it, with each row's owner."""
    if standing is None:
        return Board(None, EMPTY, json.dumps(EMPTY).encode(), SafeString(""), {})
    data = standing.data if isinstance(standing.data, dict) else {}
    rows = [dict(row) for row in data.get("rows", []) if isinstance(row, dict)]
    for row in rows:
        row["bot"] = str(row.get("bot") or league_bot(str(row.get("league_name", ""))))
    owners = dict(Bot.objects.filter(name__in=[row["bot"] for row in rows])
                  .values_list("name", "owner__username"))
    for row in rows:
        row["owner"] = owners.get(str(row.get("bot", "")), "")
        row["url"] = f"/bots/{row['bot']}/" if row["bot"] in owners else ""
    payload = {"standing": standing.pk, "created_at": standing.created_at.isoformat(),
               "fitted": standing.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
               "games": standing.games, "rows": rows, "facts": data.get("facts", {})}
    h2h = data.get("head_to_head", {})
    return Board(standing.pk, payload, json.dumps(payload, cls=DjangoJSONEncoder).encode(),
                 SafeString(render_to_string("club/board_rows.html", {"rows": rows})),
                 h2h if isinstance(h2h, dict) else {})

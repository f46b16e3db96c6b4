"""The newest standing as pages show it, decoded once per standing and process, and what the
leaderboard ranks in it.

A standing (the runner's snapshot after a refit) is written once and never changed, and it is
large (about 180 KB of JSON at 50 bots, 550 KB at 100). Pages ask for the newest one on every
request: here its id is looked up by index, and only a standing (or a set of versions that play
now) not seen before is read, decoded and shaped for the leaderboard, its JSON and the bot pages.

A standing has a row for every version that ever played. The board ranks the versions that play
now (active in the club's records) 1, 2, 3...; retired and disabled versions keep their final
rows in a list of their own, unranked. The rank ranges are the fit's, among the versions active
at its refit (referee.league.season.snapshot; the runner refits at once when one leaves), so
they count bots, not versions. The `~` mark is the tables' rule (docs/league.md) applied to the
rows as shown: a row whose 95% interval overlaps the NEXT shown row's, so the last row never
has it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any
from urllib.parse import quote

from django.core.serializers.json import DjangoJSONEncoder
from django.utils.safestring import SafeString

from referee.league.season import SeasonRow
from referee.league.tables import Row
from referee.server.club.models import Bot, BotVersion, Competition, Standing
from referee.server.club.templatetags.club import ranks, signed

NO_RANK = "\u2013"   # a retired version's rank cell
EMPTY: dict[str, Any] = {"standing": None, "games": 0, "rows": [], "retired": [], "facts": {}}


def league_bot(league_name: str) -> str:
    """The bot a league name (`bot.vN`) is a version of."""
    return league_name.rsplit(".v", 1)[0]


@dataclass(frozen=True)
class Board:
    """One standing, shaped once: what the leaderboard shows, that as JSON, the table's rows
    as HTML (autoescaped like any page: names are the students'), and the records against
    opponents by league name (for bot pages)."""

    standing: int | None
    playing: tuple[int, ...]   # the versions that played now when it was shaped
    rows: tuple[BoardRow, ...]      # ranked
    retired: tuple[BoardRow, ...]   # the retired and disabled versions' final rows
    payload: dict[str, Any]    # what the leaderboard's JSON gives: the rows' `to_json`
    json: bytes
    rows_html: SafeString      # the ranked rows
    retired_html: SafeString   # the retired versions' final rows
    head_to_head: dict[str, Any]
    # league names of a bot -> its table against each opponent, rendered on first use
    _opponents: dict[tuple[str, ...], SafeString] = field(default_factory=dict, compare=False)

    def rows_of(self, bot: str) -> list[BoardRow]:
        """The leaderboard's rows of one bot (one per version in the season)."""
        return [row for row in (*self.rows, *self.retired) if row.bot == bot]

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
    """The opponents' table as HTML: names escaped, counts written as the whole numbers
    `opponents` made them, paths as it quoted them (a hundred rows through the template engine
    cost more than the rest of the bot page; through format_html, escaping every count, a
    millisecond)."""
    body = "".join(f'<tr><td><a href="{rec["url"]}">{escape(name)}</a></td>'
                   f'<td>{rec["games"]:d}</td><td>{rec["ahead"]:d}</td><td>{rec["behind"]:d}</td>'
                   f'<td>{rec["games"] - rec["ahead"] - rec["behind"]:d}</td></tr>'
                   for name, rec in rows)
    return SafeString('<table id="opponents"><thead><tr><th>opponent</th><th>games</th>'
                      '<th>ahead</th><th>behind</th><th>even</th></tr></thead><tbody>'
                      f'{body}</tbody></table>')


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


@dataclass(frozen=True)
class BoardRow:
    """One row of the leaderboard: a version's line of the season's table (the league's
    `Row`, its `bot` the version's league name, its `rank` and `separated_from_next` those of
    the rows as the board shows them) and what the club knows of the version."""

    bot: str               # the club's name of the bot ("" when the club has none)
    version: int | None    # its version number
    state: str             # active, retired or disabled, as the club's records say
    owner: str             # its owner's username ("" for a house bot)
    house: bool
    url: str               # its bot page ("" when the club has none)
    table: Row

    def to_json(self) -> dict[str, Any]:
        """The row as the leaderboard's JSON gives it: the club's fields and `table`, the
        table row's one JSON form (docs/ratings.md)."""
        return {"bot": self.bot, "version": self.version, "state": self.state,
                "owner": self.owner, "house": self.house, "url": self.url,
                "table": self.table.to_json()}

    @property
    def strikes(self) -> int:
        """The row's strikes, every kind together (the board's column)."""
        return sum(self.table.strikes.values())


def _shown(value: Any) -> str:
    """A value as a template's {{ value }} shows it: text, escaped ("" for nothing)."""
    return "" if value is None else escape(str(value))


def _one_place(value: Any) -> str:
    """A number with one decimal place ("" for none), as the TrueSkill column shows it."""
    return f"{value:.1f}" if isinstance(value, int | float) and not isinstance(value, bool) \
        else ""


def row_html(row: BoardRow) -> str:
    """One leaderboard row as HTML: names escaped (they are the students'), numbers written as
    the league's tables write them, `~` by the tables' rule. Written here, not through a
    template: a hundred rows through the template engine were half of shaping a standing
    (board_rows_html)."""
    table = row.table
    bot = _shown(row.bot)
    name = f'<a href="{_shown(row.url)}">{bot}</a>' if row.url else bot
    owner = '<span class="house">house</span>' if row.house else _shown(row.owner)
    mark = " ~" if table.separated_from_next is False else ""
    state = _shown(row.state)
    return (f'<tr class="state-{state}"><td>{NO_RANK if table.rank is None else table.rank}'
            f'</td><td>{name}</td><td>{owner}</td><td>{_shown(row.version)}</td>\n'
            f'<td>{signed(table.strength)} [{signed(table.strength_low)}, '
            f'{signed(table.strength_high)}]{mark}</td><td>{_shown(ranks(table))}</td>\n'
            f'<td>{_one_place(table.mu)} \u00b1 {_one_place(table.sigma)}</td>'
            f'<td>{table.games}</td><td>{table.wins}</td>'
            f'<td>{row.strikes}</td><td>{state}</td></tr>')


def board_rows_html(rows: Sequence[BoardRow]) -> SafeString:
    """The leaderboard's rows as HTML, rendered once per standing."""
    return SafeString("\n".join(row_html(row) for row in rows))


def _separated(upper: Row, lower: Row) -> bool | None:
    """The tables' rule between two rows as shown: False when `upper`'s interval reaches down
    to `lower`'s, True when it does not; None without intervals."""
    top, bottom = upper.strength_low, lower.strength_high
    if not isinstance(top, int | float) or not isinstance(bottom, int | float):
        return None
    return top > bottom


# A standing's row as the runner stored it: the club's bot name and version number (None where
# the runner did not know them) and the season's row.
Stored = tuple[str | None, int | None, SeasonRow]


def board_rows(rows: Sequence[Stored], club_states: bool = True
               ) -> tuple[list[BoardRow], list[BoardRow]]:
    """(ranked, retired): the standing's rows split by the versions' current state, each with
    its owner, ranked 1, 2, 3... and marked by the tables' rule among the rows shown; the
    retired ones without rank nor mark. `club_states`: the state is the club's record of the
    version (the first competition's); else the standing's own (another competition's, whose
    entrants' states its store keeps)."""
    # Plain tuples of the columns shown: model instances cost more than the rest of the rows.
    versions = {name: (state, (bot, house, owner)) for name, state, bot, house, owner in
                BotVersion.objects.filter(league_name__in=[row.table.bot for _, _, row in rows])
                .values_list("league_name", "season_state", "bot__name", "bot__house",
                             "bot__owner__username")}
    named = [bot or league_bot(row.table.bot) for bot, _, row in rows]
    bots = {name: (name, house, owner) for name, house, owner in
            Bot.objects.filter(name__in=named).values_list("name", "house", "owner__username")}
    ranked: list[BoardRow] = []
    retired: list[BoardRow] = []
    for (_, number, row), fallback in zip(rows, named, strict=True):
        state, bot = versions.get(row.table.bot, (None, None))
        if not club_states:
            state = row.state
        if bot is None:
            bot = bots.get(fallback)
        name, house, owner = bot or (fallback, False, None)
        # The club's records say what plays now; the fit's own state may be a refit behind.
        shown = BoardRow(bot=name, version=number,
                         state=state or row.state or BotVersion.ACTIVE, owner=owner or "",
                         house=bool(house), url=f"/bots/{name}/" if bot else "",
                         table=row.table)
        (ranked if shown.state == BotVersion.ACTIVE else retired).append(shown)
    ranked = [replace(row, table=replace(
        row.table, rank=rank, separated_from_next=_separated(row.table, ranked[rank].table)
        if rank < len(ranked) else None)) for rank, row in enumerate(ranked, start=1)]
    retired = [replace(row, table=replace(row.table, rank=None, separated_from_next=None))
               for row in retired]
    return ranked, retired


_lock = threading.Lock()
_cached: dict[int, Board] = {}   # competition id -> its newest board


def newest_board(competition: int = Competition.FIRST) -> Board:
    """The newest standing of a competition as a Board (the one decoded before while it is
    still the newest).

    One request shapes a newer standing; the others are served the board in hand meanwhile
    (a refit older), so a standing's arrival never holds a page. Only the process's first
    requests wait for the first board."""
    newest = (Standing.objects.filter(competition_id=competition).order_by("-id")
              .values_list("pk", flat=True).first())
    first = competition == Competition.FIRST
    # A version retired or entering changes the ranks before the next refit: two index reads.
    # (Another competition's entrants change state in its store, which its next refit tells.)
    playing = tuple(BotVersion.objects.filter(season_state=BotVersion.ACTIVE)
                    .order_by("pk").values_list("pk", flat=True)) if first else ()
    board = _cached.get(competition)
    if board is not None and (board.standing, board.playing) == (newest, playing):
        return board
    if not _lock.acquire(blocking=board is None):
        assert board is not None
        return board   # another request is shaping the newer one
    try:
        board = _cached.get(competition)
        if board is None or (board.standing, board.playing) != (newest, playing):
            board = _cached[competition] = _shape(
                Standing.objects.filter(pk=newest).first(), playing, first)
    finally:
        _lock.release()
    return board


def _shape(standing: Standing | None, playing: tuple[int, ...],
           club_states: bool = True) -> Board:
    """A standing (or none yet) as the pages show it: its rows ranked or retired by
    `board_rows`, each with its owner."""
    if standing is None:
        return Board(None, playing, (), (), EMPTY, json.dumps(EMPTY).encode(), SafeString(""),
                     SafeString(""), {})
    data = standing.data if isinstance(standing.data, dict) else {}
    ranked, retired = board_rows(stored_rows(data.get("rows", [])), club_states)
    payload = {"standing": standing.pk, "created_at": standing.created_at.isoformat(),
               "fitted": standing.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
               "fitted_at": standing.created_at.timestamp(),   # local_time, club/times.js
               "games": standing.games, "rows": [row.to_json() for row in ranked],
               "retired": [row.to_json() for row in retired], "facts": data.get("facts", {})}
    h2h = data.get("head_to_head", {})
    return Board(standing.pk, playing, tuple(ranked), tuple(retired), payload,
                 json.dumps(payload, cls=DjangoJSONEncoder).encode(),
                 board_rows_html(ranked), board_rows_html(retired),
                 h2h if isinstance(h2h, dict) else {})


def stored_rows(rows: Any) -> list[Stored]:
    """A standing's rows as the runner stored them (`SeasonRow`s' JSON, or an older
    release's rows), each with the club's bot name and version number; a row that is
    neither is left out."""
    found: list[Stored] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        try:
            season_row = SeasonRow.from_json(row)
        except (ValueError, TypeError, AttributeError):
            continue
        bot, number = row.get("bot"), row.get("version")
        found.append((bot if isinstance(bot, str) and bot else None,
                      number if isinstance(number, int) else None, season_row))
    return found

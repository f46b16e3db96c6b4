"""What the leaderboard ranks: the current versions only, marked by the documented rule.

A standing (the runner's last fit) has a row for every version that ever played. The board
ranks the versions that play now (active in the club's records) 1, 2, 3...; retired and
disabled versions keep their final rows in a list of their own, unranked. The `~` mark is the
tables' rule (docs/league.md) applied to the rows as shown: a row whose 95% interval overlaps
the NEXT shown row's, so the last row never has it.
"""

from __future__ import annotations

from typing import Any

from referee.server.club.models import Bot, BotVersion


def _overlaps(upper: dict[str, Any], lower: dict[str, Any]) -> bool | None:
    """True when `upper`'s interval reaches down to `lower`'s (not separated); None without
    intervals."""
    top, bottom = upper.get("lo"), lower.get("hi")
    if not isinstance(top, int | float) or not isinstance(bottom, int | float):
        return None
    return not top > bottom


def board_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(ranked, retired): the standing's rows split by the versions' current state, each with
    `owner` (a username, or "" for a house bot), `house`, `url`, and for ranked rows `rank` and
    `overlaps_next`."""
    versions = {v.league_name: v for v in BotVersion.objects.select_related("bot__owner")
                .filter(league_name__in=[str(row.get("league_name", "")) for row in rows])}
    bots = {b.name: b for b in Bot.objects.select_related("owner")
            .filter(name__in=[str(row.get("bot", "")) for row in rows])}
    ranked, retired = [], []
    for row in rows:
        version = versions.get(str(row.get("league_name", "")))
        bot = version.bot if version else bots.get(str(row.get("bot", "")))
        row["house"] = bool(bot and bot.house)
        row["owner"] = bot.owner.username if bot and bot.owner else ""
        row["url"] = f"/bots/{bot.name}/" if bot else ""
        # The club's records say what plays now; the fit's own state may be a refit behind.
        row["state"] = (version.season_state if version
                        else str(row.get("state") or BotVersion.ACTIVE))
        (ranked if row["state"] == BotVersion.ACTIVE else retired).append(row)
    for rank, row in enumerate(ranked, start=1):
        row["rank"] = rank
        row["overlaps_next"] = (_overlaps(row, ranked[rank]) is True
                                if rank < len(ranked) else False)
    for row in retired:
        row["rank"] = None
        row["overlaps_next"] = False
    return ranked, retired

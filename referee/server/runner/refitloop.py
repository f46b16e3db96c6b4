"""A competition's table, refitted as its games come in: the refits' schedule (`refit_loop`)
and one refit stored as the competition's newest standing (`refit_once`). The fit itself runs
in a subprocess (refit.py) while the games go on."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from typing import Any

from referee.server.runner.logline import log
from referee.server.shared.database import Database


async def refit_loop(db: Database, loop_: Any, games_every: int, seconds: float) -> None:
    """Refit after every `games_every` new games, or `seconds` after the last refit when there
    are new games, or at once when `loop_.refit_now` asks (the season closed, or a ranked
    version left the ranks); the fit runs in a subprocess while the games go on."""
    seen = 0                                  # loop_.saved at the last refit
    due = loop_.season.store.count() > 0      # a restart refits what is stored at once
    last = time.monotonic()
    while True:
        fresh = loop_.saved - seen
        due |= loop_.refit_now or (fresh > 0 and (fresh >= games_every
                                                  or time.monotonic() - last >= seconds))
        if due:
            due, loop_.refit_now = False, False
            seen, last = loop_.saved, time.monotonic()
            await refit_once(db, loop_)
            continue
        loop_.game_saved.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(loop_.game_saved.wait(), 1.0)


async def refit_once(db: Database, loop_: Any) -> None:
    """Fit the competition of `loop_` on its stored games (in a subprocess) and store the
    standing, each row with the club's name of its version."""
    from referee.server.runner import clubdb
    from referee.server.runner.refit import refit

    try:
        data = await refit(loop_.season.store.path.parent)
    except RuntimeError as exc:
        log(str(exc))
        return
    names = await db(clubdb.names_by_league_name)
    for row in data["rows"]:   # a SeasonRow's JSON, with the club's name of it
        league_name = row["table"]["bot"]
        bot, number, _ = names.get(league_name, (league_name, 0, 0))
        row["bot"], row["version"] = bot, number
    data = _finite(data)
    await db(clubdb.write_standing, data["facts"]["games_recorded"], data, loop_.book.id)


def _finite(value: Any) -> Any:
    """JSON without NaN or infinities (they are no JSON): None in their place."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value

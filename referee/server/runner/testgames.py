"""Test games on demand: one unrated game of a student's version against bots they picked.

Never stored in the season's league store: the record goes to DIR/testgames/<id>.json, with the
output of every seat but the requester's own bots left out (a student sees only their own
bots' stderr), so the web can show the file as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from referee.bots.spec import capped_limits, load_spec
from referee.game.livefile import LiveFile
from referee.game.match import MatchResult
from referee.game.single import play_one
from referee.league.stored import StoredLeague
from referee.present.text import safe_line
from referee.server.runner import records
from referee.server.runner.checks import Db
from referee.util.seeds import draw_secret

HIDDEN = "(another student's bot: its output is not shown)"
LIVE = "testgames/live"   # relative to DIR: the live files of the test games in play


def live_path(data: Path, game_id: int) -> Path:
    """The live file of test game `game_id` while it is played here (referee.game.livefile)."""
    return data / LIVE / f"{game_id}.jsonl"


async def play_test_game(db: Db, data: Path, request: records.TestRequest,
                         stored: StoredLeague, timeout: float, cluster: Any = None) -> None:
    """Play one claimed test game (here, or on a worker of `cluster`, a dask.Cluster) under
    the season's `stored` settings, and record it (or say why it could not be played)."""
    owned = await db(_owned_names, request)
    try:
        # The season's [limits] are a ceiling here as in its games (capped_limits).
        specs = [capped_limits(dataclasses.replace(load_spec(path), name=name), stored.limits)
                 for name, path in request.seats]
        rules, options = stored.rules, stored.options
        if cluster is not None:
            from referee.server.runner.remote import play_on_cluster

            result = await play_on_cluster(cluster, specs, rules, options, timeout)
        else:
            result = await asyncio.wait_for(_play_here(data, request, specs, stored), timeout)
    except TimeoutError:
        await db(records.finish_test_game, request.id, "",
                 f"not finished within {timeout:.0f} s")
        return
    except Exception as exc:  # noqa: BLE001 - a bot that cannot start, a spec gone: one line
        await db(records.finish_test_game, request.id, "", safe_line(str(exc), limit=300))
        return
    record = result.record.to_json()   # its match metadata is at the top (replay-format.md)
    names = [name for name, _ in request.seats]
    record["output"] = [text if name in owned else HIDDEN
                        for name, text in zip(names, record.get("output", []), strict=False)]
    record["test_game"] = {"id": request.id, "unrated": True, "seats": names}
    relative = f"testgames/{request.id}.json"
    path = data / relative
    partial = path.with_suffix(".part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(record), encoding="utf-8")
        os.replace(partial, path)     # never a half-written record
    except OSError as exc:           # a full disk: the game is lost, the runner goes on
        partial.unlink(missing_ok=True)
        await db(records.finish_test_game, request.id, "",
                 f"its record could not be written ({exc.strerror or exc})")
        return
    await db(records.finish_test_game, request.id, relative, "")


async def _play_here(data: Path, request: records.TestRequest, specs: list[Any],
                     stored: StoredLeague) -> MatchResult:
    """Play the test game on this machine, each step written to its live file for the
    watchers of its page, as a season game is; the file goes when the game ends."""
    live = LiveFile(live_path(data, request.id), f"test{request.id}",
                    [name for name, _ in request.seats])
    finished = False
    try:
        result = await play_one(specs, stored.rules, draw_secret(), options=stored.options,
                                sandbox=None, observer=live.observe)
        finished = True
        return result
    finally:
        live.finish(finished)


def _owned_names(request: records.TestRequest) -> set[str]:
    """The league names among the seats that belong to the requester."""
    owners = records.names_by_league_name()
    return {name for name, _ in request.seats
            if owners.get(name, ("", 0, -1))[2] == request.requester_id}


async def test_game_queue(db: Db, data: Path, stored: StoredLeague, timeout: float,
                          idle: float = 1.0, cluster: Any = None) -> None:
    """Claim and play queued test games forever, one at a time (on `cluster` if given)."""
    while True:
        request = await db(records.claim_test_game, data)
        if request is None:
            await asyncio.sleep(idle)
            continue
        await play_test_game(db, data, request, stored, timeout, cluster)

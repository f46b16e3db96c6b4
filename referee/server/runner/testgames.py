"""Test games on demand: one unrated game of a student's version against bots they picked.

A test game plays through the one loop (referee.league.playing.play_schedule) as a schedule of
one game, on this machine's executor or, with a cluster, as one task before the season's games
(remote.TaskExecutor). Its store is the club's test games, not the season's league store and
not rated: the record goes to DIR/testgames/<id>.json, with the output of every seat but the
requester's own bots left out (a student sees only their own bots' stderr), so the web can show
the file as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

from referee.bots.errors import told
from referee.bots.spec import BotSpec, capped_limits, load_spec
from referee.errors import StoreError
from referee.game.match import MatchResult
from referee.league.executors import Executor, make_executor
from referee.league.playing import OnSaved, play_schedule
from referee.league.schedule import ScheduledGame
from referee.league.stored import StoredLeague
from referee.server.club.models import Job
from referee.server.runner import clubdb, jobqueue
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.database import Db
from referee.util.seeds import draw_secret, keyed_seed, opaque_id

HIDDEN = "(another student's bot: its output is not shown)"
class RecordNotWritten(StoreError):
    """A test game's record file could not be written (a full disk): the game is lost."""


class TestGameFiles:
    """The club's store of test games: the record of game `id` in DIR/testgames/<id>.json,
    showing the output of the `owned` seats only."""

    __test__ = False

    def __init__(self, data: Path, request: clubdb.TestRequest, owned: set[str]) -> None:
        self.data, self.request, self.owned = data, request, owned
        self.relative = ClubFolder(data).test_game_record(request.id)

    def save(self, game: ScheduledGame, result: MatchResult) -> None:
        """Write the game's record, whole or not at all; RecordNotWritten if it cannot be."""
        record = result.record.to_json()   # its match metadata is at the top (replay-format.md)
        names = list(game.bots)
        record["output"] = [text if name in self.owned else HIDDEN
                            for name, text in zip(names, record.get("output", []), strict=False)]
        record["test_game"] = {"id": self.request.id, "unrated": True, "seats": names}
        path = self.data / self.relative
        partial = path.with_suffix(".part")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(record), encoding="utf-8")
            os.replace(partial, path)     # never a half-written record
        except OSError as exc:           # a full disk: the game is lost, the runner goes on
            partial.unlink(missing_ok=True)
            raise RecordNotWritten(
                f"its record could not be written ({exc.strerror or exc})") from exc


async def play_test_game(db: Db, data: Path, request: clubdb.TestRequest,
                         stored: StoredLeague, timeout: float, cluster: Any = None) -> None:
    """Play one claimed test game (here, or on a worker of `cluster`, a dask.Cluster) under
    the season's `stored` settings, and record it (or say why it could not be played)."""
    store = TestGameFiles(data, request, await db(_owned_names, request))
    saved: list[str] = []   # the record file, once the game is stored
    # R51: the game's seed and id come one-way from a secret of its own, not the season's.
    secret = draw_secret()
    game = ScheduledGame(0, tuple(name for name, _ in request.seats),
                         keyed_seed(secret, "match"), 0)
    try:
        # The season's [limits] are a ceiling here as in its games (capped_limits).
        specs = [capped_limits(dataclasses.replace(load_spec(path), name=name), stored.limits)
                 for name, path in request.seats]
        stored.rules.check_players(len(specs))   # a table the rules refuse starts no bot
        # Played here, each step goes to the game's live file for the watchers of its page.
        live = ClubFolder(data).test_game_live(request.id) if cluster is None else None
        playing = _play(_executor(specs, timeout, cluster, live), store, stored, game,
                        opaque_id(secret, "match"), lambda *_: saved.append(store.relative))
        try:
            # On a cluster the task keeps the time limit on its worker, where it is played.
            await (playing if cluster is not None else asyncio.wait_for(playing, timeout))
        finally:
            if live is not None:
                shutil.rmtree(live, ignore_errors=True)
    except TimeoutError:
        await db(clubdb.finish_test_game, request.id, "",
                 f"not finished within {timeout:.0f} s")
        return
    except RecordNotWritten as exc:
        await db(clubdb.finish_test_game, request.id, "", str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - a bot that cannot start, a spec gone: one line
        # A bot's start-up output only if it is the requester's own bot.
        await db(clubdb.finish_test_game, request.id, "", told(exc, store.owned))
        return
    await db(clubdb.finish_test_game, request.id, saved[0], "")


def _executor(specs: list[BotSpec], timeout: float, cluster: Any,
              live: Path | None) -> Executor:
    """This machine's executor for one game (its live files in `live`), or the cluster's
    task executor."""
    if cluster is not None:
        from referee.server.runner.remote import TaskExecutor

        return TaskExecutor(cluster, specs, timeout)
    return make_executor(specs, concurrency=1, sandbox=None, live=live)


async def _play(executor: Executor, store: TestGameFiles, stored: StoredLeague,
                game: ScheduledGame, game_id: str, on_saved: OnSaved) -> None:
    """Start the bots of `game` on `executor`, play it through the one loop, stop them."""
    async with executor:
        await executor.start(skip_broken=False)
        await play_schedule(executor, store, stored, [game], game_id=lambda _: game_id,
                            on_saved=on_saved)


def _owned_names(request: clubdb.TestRequest) -> set[str]:
    """The league names among the seats that belong to the requester."""
    owners = clubdb.names_by_league_name()
    return {name for name, _ in request.seats
            if owners.get(name, ("", 0, -1))[2] == request.requester_id}


async def test_game_queue(db: Db, data: Path, stored: StoredLeague, timeout: float,
                          idle: float = 1.0, cluster: Any = None) -> None:
    """Claim and play queued test games forever, one at a time (on `cluster` if given)."""
    while True:
        job = await db(jobqueue.claim, Job.TEST_GAME)
        if job is None:
            await asyncio.sleep(idle)
            continue
        request = await db(clubdb.test_request, data, job.ref)
        await play_test_game(db, data, request, stored, timeout, cluster)

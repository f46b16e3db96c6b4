"""The club's checks and test games on the season's dask cluster (`--cluster`).

With a cluster the club's machine runs no bot: a check goes to a worker as one task (the
folder holding the version's spec packed as a league's bots are, an image archive beside it by
its digest; the worker runs `referee check` there, under the guard, with the check's time
limit) and so does a test game (its bots shipped as a league's are, played with `play_seeded`:
`TaskExecutor`, the executor its one loop plays it on).
They go before the season's games waiting on the workers (a higher dask priority): a student
waits for them. The check's lines are stored when it ends, after a first line naming the
worker; a test game's record names its worker as a league game's does.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.bots.errors import BotStartError
from referee.bots.spec import BotSpec, BotSpecError, load_spec
from referee.engine import RuleSet
from referee.game.match import MatchOptions
from referee.league.executors import GameId, Save, Stop
from referee.league.executors.dask import RESOURCE, Cluster, ship
from referee.league.executors.packs import pack_tree
from referee.league.executors.worker import ShippedBot
from referee.league.schedule import ScheduledGame
from referee.present.text import safe_line
from referee.server.runner import clubdb
from referee.server.runner.checklines import MAX_LINES, CheckLines, record_verdict
from referee.server.runner.jobs import CheckJob, run_check_job, run_test_game_job
from referee.server.shared.database import Db

PRIORITY = 10   # before the season's games (priority 0) that wait on the workers


def check_job(spec_path: Path) -> CheckJob:
    """A check's work as a worker gets it: the folder of the spec packed, and the image
    archive the spec names (if it names one inside that folder) with its digest. OSError if
    the files cannot be read; a spec that does not load is the check's to report."""
    folder = spec_path.parent
    try:
        spec = load_spec(spec_path)
    except BotSpecError:   # the check says why
        pack = pack_tree(folder)
        return CheckJob(pack.data, pack.version, spec_path.name)
    archive = spec.image_archive
    if archive is None or not archive.is_relative_to(folder):
        pack = pack_tree(folder)
        return CheckJob(pack.data, pack.version, spec_path.name)
    # The image archive goes aside, never in the pack: it is no file of the bot's to bound or
    # hash as one (an image is hundreds of MiB), and the worker checks it by its digest.
    pack = pack_tree(folder, leave_out={archive})
    shipped = ship(spec, None)
    return CheckJob(pack.data, pack.version, spec_path.name, shipped.archive,
                    archive.relative_to(folder).as_posix(), shipped.archive_digest)


async def run_check_on_cluster(db: Db, claimed: clubdb.Claimed, timeout: float,
                               cluster: Cluster, write_max_mb: int | None = None,
                               limits: Mapping[str, int] | None = None) -> None:
    """Run one claimed check on a worker of `cluster` and store its lines and verdict; there
    the season's `limits` cap the spec's own and its build and bot write `write_max_mb` MiB."""
    assert cluster.client is not None
    lines = CheckLines(db, claimed)
    try:
        job = await asyncio.to_thread(check_job, claimed.spec)
    except (OSError, BotStartError, BotSpecError) as exc:   # BotFilesTooLarge among them
        reason = exc.detail if isinstance(exc, BotStartError) else \
            (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        await record_verdict(db, claimed, False,
                             f"the check could not start: its files cannot be sent ({reason})")
        return
    try:
        done = await submit(cluster, run_check_job, job, timeout, MAX_LINES, write_max_mb,
                            dict(limits or {}),
                            key=f"referee-check-{claimed.id}")
    except Exception as exc:  # noqa: BLE001 - the cluster lost it: one line, the runner goes on
        await record_verdict(db, claimed, False, safe_line(
            f"the check could not run on the cluster: {exc}", limit=280))
        return
    await lines(f"on cluster worker {safe_line(done.worker, limit=100)}:")
    for text in done.lines:
        await lines(text)
    lines.seq, lines.last = done.count + 1, done.last or lines.last
    await lines.finish(done.returncode, timeout)


class TaskExecutor:
    """An executor (referee.league.executors) for the club's test games on `cluster`: each
    game is one self-contained task (its bots shipped with it, started, played and stopped on
    one worker within `timeout` seconds) that goes before the season's games."""

    def __init__(self, cluster: Cluster, specs: list[BotSpec], timeout: float) -> None:
        self.cluster, self.specs, self.timeout = cluster, specs, timeout
        self.bots: dict[str, ShippedBot] = {}

    async def start(self, skip_broken: bool) -> tuple[dict[str, str], list[BotStartError]]:
        """Pack every bot to be sent (BotStartError if its files cannot be); the workers
        start them with each game."""
        for spec in self.specs:
            self.bots[spec.name] = await asyncio.to_thread(ship, spec, None)
        return {name: bot.version for name, bot in self.bots.items()}, []

    async def play(self, games: Sequence[ScheduledGame], rules: RuleSet, options: MatchOptions,
                   game_id: GameId, save: Save, stop: Stop | None = None) -> None:
        """Play `games` one after the other, a task each; RuntimeError with one line if one
        could not be played (a bot that cannot start, the time limit)."""
        assert self.cluster.client is not None
        for game in games:
            if stop is not None and stop():
                return
            bots = [self.bots[name] for name in game.bots]
            done = await submit(self.cluster, run_test_game_job, bots, rules, game.seed,
                                game_id(game), options, self.timeout, key="referee-test-game")
            if done.failure is not None:
                raise done.failure
            if done.result is None:
                raise RuntimeError(done.error)
            save(game, done.result)

    async def __aenter__(self) -> TaskExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


async def submit(cluster: Cluster, fn: Any, payload: Any, *args: Any, key: str) -> Any:
    """`fn(payload, *args)` run on a worker that offers games, before the season's games; its
    result. The payload (the bots' files: an image archive may be hundreds of MB) is scattered
    first, so it travels to the worker as data, not inside the task's graph through the
    scheduler. Cancelled, the task is cancelled on the cluster too."""
    client = cluster.client
    assert client is not None
    [data] = await client.scatter([payload], hash=False)
    future = client.submit(fn, data, *args, pure=False, priority=PRIORITY,
                           key=f"{key}-{uuid.uuid4().hex[:12]}", resources={RESOURCE: 1})
    try:
        return await future
    except asyncio.CancelledError:
        await client.cancel([future, data])
        raise
    finally:
        future.release()
        data.release()

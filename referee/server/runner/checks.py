"""The check queue: `referee check` on each new version, in the sandbox, a few at a time.

Each check is a subprocess (referee.checking.isolated: under the guard, in a process group of its
own, stopped whole at its time limit), here or, with a cluster, on one of its workers
(referee.server.runner.remote). Its output is stored line by line, for the owner to watch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from referee.bots.confinement import NO_SANDBOX
from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB
from referee.checking.isolated import check_process
from referee.server.club.models import Job
from referee.server.runner import clubdb, jobqueue
from referee.server.runner.checklines import CheckLines, record_verdict
from referee.server.shared.database import Db


async def run_check(db: Db, claimed: clubdb.Claimed, timeout: float,
                    write_max_mb: int = DEFAULT_WRITE_MAX_MB, cluster: Any = None,
                    limits: Mapping[str, int] | None = None) -> None:
    """Run one claimed check to its verdict (passed, failed, or failed at the time limit):
    here, or on a worker of `cluster` (a dask.Cluster) when there is one; under the season's
    `limits` (a ceiling on the spec's own), its build and bot writing at most `write_max_mb`
    MiB (referee.bots.diskwatch)."""
    if cluster is not None:   # dask is an extra: imported only with a cluster
        from referee.server.runner.remote import run_check_on_cluster

        await run_check_on_cluster(db, claimed, timeout, cluster, write_max_mb, limits)
        return
    lines = CheckLines(db, claimed)
    try:
        returncode = await check_process(claimed.spec, timeout, lines, write_max_mb, limits)
    except OSError as exc:
        await record_verdict(db, claimed, False, f"the check could not start: {exc}")
        return
    await lines.finish(returncode, timeout)


async def check_queue(db: Db, data: Any, concurrency: int, timeout: float,
                      write_max_mb: int = DEFAULT_WRITE_MAX_MB, idle: float = 1.0,
                      cluster: Any = None, limits: Mapping[str, int] | None = None,
                      uploads_run: bool = True) -> None:
    """Claim and run queued checks forever, at most `concurrency` at once (on `cluster`'s
    workers if given), each under the season's `limits`. Unless `uploads_run`, only the
    house bots' checks run: an upload's stays queued, its one line saying why (NO_SANDBOX)."""
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            if not uploads_run:
                await db(clubdb.hold_upload_checks, NO_SANDBOX)
            while len(running) < concurrency:
                job = await db(jobqueue.claim, Job.CHECK, not uploads_run)
                if job is None:
                    break
                claimed = await db(clubdb.claimed_check, data, job.ref)
                task = asyncio.create_task(run_check(db, claimed, timeout, write_max_mb,
                                                      cluster, limits))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.sleep(idle)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

"""The check queue: `referee check` on each new version, in the sandbox, a few at a time.

Each check is a subprocess (referee.checking.isolated: under the guard, in a process group of its
own, stopped whole at its time limit), here or, with a cluster, on one of its workers
(referee.server.runner.remote). Its output is stored line by line, for the owner to watch.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from referee.bots.confinement import NO_SANDBOX
from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB
from referee.checking.isolated import check_process, time_limit_line
from referee.server.club.models import Job
from referee.server.runner import jobqueue, records

MAX_LINES = 2000       # lines kept of one check's output; the rest are counted

Db = Callable[..., Awaitable[Any]]


class CheckLines:
    """A check's output as it is stored: the first MAX_LINES lines, the rest counted, and the
    last line that is not blank (the check's verdict, its summary)."""

    def __init__(self, db: Db, claimed: records.Claimed) -> None:
        self.db, self.claimed = db, claimed
        self.seq = 0
        self.last = ""

    async def __call__(self, text: str) -> None:
        self.seq += 1
        if text.strip():
            self.last = text
        if self.seq <= MAX_LINES:
            await self.db(records.add_check_line, self.claimed.id, self.seq, text)

    async def finish(self, returncode: int | None, timeout: float) -> None:
        """Store the verdict: passed on exit status 0; `returncode` None is the time limit."""
        if returncode is None:
            summary = time_limit_line(timeout)
            await self(summary)
            await record_verdict(self.db, self.claimed, False, summary)
            return
        if self.seq > MAX_LINES:
            await self.db(records.add_check_line, self.claimed.id, MAX_LINES + 1,
                          f"... {self.seq - MAX_LINES} more lines not kept")
        summary = self.last or f"referee check exited with status {returncode}"
        await record_verdict(self.db, self.claimed, returncode == 0, summary)


async def record_verdict(db: Db, claimed: records.Claimed, passed: bool, summary: str) -> None:
    """Record a check's verdict. A version that failed keeps only what its page needs: its folder
    (the upload as unpacked, and what its build wrote) is removed before the verdict is stored;
    the uploaded archive and the check's lines stay. A version that passed but whose build took
    its owner past their disk budget fails, saying so in one line."""
    if passed and claimed.uploaded:   # what its build left counts: over budget, it fails
        over = await db(records.over_disk_budget, claimed)
        if over:
            await db(records.add_check_line, claimed.id, MAX_LINES + 2, over)
            passed, summary = False, over
    if not passed and claimed.uploaded:   # never a folder outside DIR/uploads (house bots')
        await asyncio.to_thread(shutil.rmtree, claimed.folder, True)
    await db(records.finish_check, claimed.id, passed, summary)


async def run_check(db: Db, claimed: records.Claimed, timeout: float,
                    write_max_mb: int = DEFAULT_WRITE_MAX_MB, cluster: Any = None,
                    limits: Mapping[str, int] | None = None) -> None:
    """Run one claimed check to its verdict (passed, failed, or failed at the time limit):
    here, or on a worker of `cluster` (a dask.Cluster) when there is one; under the season's
    `limits` (a ceiling on the spec's own), its build and bot writing at most `write_max_mb`
    MiB (referee.bots.diskwatch)."""
    if cluster is not None:
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
                await db(records.hold_upload_checks, NO_SANDBOX)
            while len(running) < concurrency:
                job = await db(jobqueue.claim, Job.CHECK, not uploads_run)
                if job is None:
                    break
                claimed = await db(records.claimed_check, data, job.ref)
                task = asyncio.create_task(run_check(db, claimed, timeout, write_max_mb,
                                                      cluster, limits))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.sleep(idle)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

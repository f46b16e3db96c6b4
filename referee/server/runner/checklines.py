"""A check's output as the club keeps it, line by line for its owner to watch, and its
verdict: the same wherever the check ran (here: checks, or on a cluster's worker: remote)."""

from __future__ import annotations

import asyncio
import shutil

from referee.checking.isolated import time_limit_line
from referee.server.runner import clubdb
from referee.server.shared.database import Db

MAX_LINES = 2000       # lines kept of one check's output; the rest are counted


class CheckLines:
    """A check's output as it is stored: the first MAX_LINES lines, the rest counted, and the
    last line that is not blank (the check's verdict, its summary)."""

    def __init__(self, db: Db, claimed: clubdb.Claimed) -> None:
        self.db, self.claimed = db, claimed
        self.seq = 0
        self.last = ""

    async def __call__(self, text: str) -> None:
        self.seq += 1
        if text.strip():
            self.last = text
        if self.seq <= MAX_LINES:
            await self.db(clubdb.add_check_line, self.claimed.id, self.seq, text)

    async def finish(self, returncode: int | None, timeout: float) -> None:
        """Store the verdict: passed on exit status 0; `returncode` None is the time limit."""
        if returncode is None:
            summary = time_limit_line(timeout)
            await self(summary)
            await record_verdict(self.db, self.claimed, False, summary)
            return
        if self.seq > MAX_LINES:
            await self.db(clubdb.add_check_line, self.claimed.id, MAX_LINES + 1,
                          f"... {self.seq - MAX_LINES} more lines not kept")
        summary = self.last or f"referee check exited with status {returncode}"
        await record_verdict(self.db, self.claimed, returncode == 0, summary)


async def record_verdict(db: Db, claimed: clubdb.Claimed, passed: bool, summary: str) -> None:
    """Record a check's verdict. A version that failed keeps only what its page needs: its folder
    (the upload as unpacked, and what its build wrote) is removed before the verdict is stored;
    the uploaded archive and the check's lines stay. A version that passed but whose build took
    its owner past their disk budget fails, saying so in one line."""
    if passed and claimed.uploaded:   # what its build left counts: over budget, it fails
        over = await db(clubdb.over_disk_budget, claimed)
        if over:
            await db(clubdb.add_check_line, claimed.id, MAX_LINES + 2, over)
            passed, summary = False, over
    if not passed and claimed.uploaded:   # never a folder outside DIR/uploads (house bots')
        await asyncio.to_thread(shutil.rmtree, claimed.folder, True)
    await db(clubdb.finish_check, claimed.id, passed, summary)

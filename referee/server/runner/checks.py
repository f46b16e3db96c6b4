"""The check queue: `referee check` on each new version, in the sandbox, a few at a time.

Each check is a subprocess in a process group of its own (its build and its bots below it), so
that a check past its time limit is stopped whole. Its output is stored line by line as it
comes, for the owner to watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from referee.bots.guard import guarded
from referee.server.runner import records
from referee.text import safe_line

MAX_LINES = 2000       # lines kept of one check's output; the rest are counted
LINE_LIMIT = 2000      # characters kept of one line
STOP_GRACE = 10.0      # seconds between SIGTERM and SIGKILL of a check's process group

Db = Callable[..., Awaitable[Any]]


def check_command(spec: str, limits: Mapping[str, int]) -> list[str]:
    """The `referee check` command line of one version, under the season's [limits] (a
    ceiling on the spec's own: `referee.bots.spec.capped_limits`)."""
    ceiling = [f"--limit={key}={value}" for key, value in sorted(limits.items())]
    return [sys.executable, "-m", "referee.cli", "check", "--build-output", *ceiling, spec]


async def run_check(db: Db, claimed: records.Claimed, timeout: float,
                    limits: Mapping[str, int] | None = None) -> None:
    """Run one claimed check to its verdict (passed, failed, or failed at the time limit),
    under the season's `limits`."""
    # Under the guard (referee.bots.guard), which dies with the runner, even by SIGKILL, and
    # takes the check's processes with it: no check goes on unseen, holding its build's lock.
    # (A preexec_fn in this threaded process could crash the child between fork and exec.)
    argv, env = guarded(check_command(str(claimed.spec), limits or {}),
                        {**os.environ, "COLUMNS": "120"}, STOP_GRACE)
    seq = 0
    last = ""

    async def line(text: str) -> None:
        nonlocal seq
        seq += 1
        if seq <= MAX_LINES:
            await db(records.add_check_line, claimed.id, seq, text)

    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True, limit=1 << 22,
            cwd=str(claimed.spec.parent),
            env=env)
    except OSError as exc:
        await db(records.finish_check, claimed.id, False, f"the check could not start: {exc}")
        return
    assert process.stdout is not None

    async def read() -> None:
        nonlocal last
        while raw := await process.stdout.readline():
            text = safe_line(raw.decode("utf-8", "replace").rstrip("\n"), limit=LINE_LIMIT)
            if text.strip():
                last = text
            await line(text)
        await process.wait()

    try:
        await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        await stop_group(process)
        summary = (f"stopped after the check's time limit of {timeout:.0f} s (a build or a "
                   f"bot that hangs?)")
        await line(summary)
        await db(records.finish_check, claimed.id, False, summary)
        return
    except asyncio.CancelledError:   # the runner stops: the check is queued again next start
        await stop_group(process)
        raise
    if seq > MAX_LINES:
        await db(records.add_check_line, claimed.id, MAX_LINES + 1,
                 f"... {seq - MAX_LINES} more lines not kept")
    passed = process.returncode == 0
    summary = last or f"referee check exited with status {process.returncode}"
    await db(records.finish_check, claimed.id, passed, summary)


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the check's process group, SIGKILL to what is left after a grace."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
            if sig == signal.SIGTERM:   # the leader is gone; its group may not be
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            return
        except TimeoutError:
            continue


async def check_queue(db: Db, data: Any, concurrency: int, timeout: float,
                      idle: float = 1.0, limits: Mapping[str, int] | None = None) -> None:
    """Claim and run queued checks forever, at most `concurrency` at once, each under the
    season's `limits`."""
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            while len(running) < concurrency:
                claimed = await db(records.claim_check, data)
                if claimed is None:
                    break
                task = asyncio.create_task(run_check(db, claimed, timeout, limits))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.sleep(idle)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

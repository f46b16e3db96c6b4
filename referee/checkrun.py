"""`referee check` on an uploaded bot as a subprocess: the club's checks, here or on a worker.

The check runs under the guard (referee.bots.guard), which dies with its parent (the season
runner, or the dask worker that runs it for a cluster), even by SIGKILL, and takes the check's
processes with it: no check goes on unseen, holding its build's lock. (A preexec_fn in a
threaded process could crash the child between fork and exec.) It has a process group of its
own (its build and its bots below it), so a check past its time limit is stopped whole. Its
output comes line by line, escaped and cut to one line each.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from referee.bots.guard import guarded
from referee.text import safe_line

LINE_LIMIT = 2000      # characters kept of one line
STOP_GRACE = 10.0      # seconds between SIGTERM and SIGKILL of a check's process group

Line = Callable[[str], Awaitable[None]]


def check_command(spec: Path, write_max_mb: int | None = None,
                  limits: Mapping[str, int] | None = None) -> list[str]:
    """The `referee check` command line of one spec: its build's output shown, what its build
    and bot write bounded by `write_max_mb`, and a season's `limits` a ceiling on the spec's own
    (`referee.bots.spec.capped_limits`)."""
    written = [] if write_max_mb is None else ["--write-limit-mb", str(write_max_mb)]
    ceiling = [f"--limit={key}={value}" for key, value in sorted((limits or {}).items())]
    return [sys.executable, "-m", "referee.cli", "check", "--build-output", *written, *ceiling,
            str(spec)]


async def check_process(spec: Path, timeout: float, line: Line,
                        write_max_mb: int | None = None,
                        limits: Mapping[str, int] | None = None) -> int | None:
    """Run `check_command(spec, ...)`, handing each line of its output to `line`; its exit
    status, or None when it was stopped at `timeout` seconds. OSError if it cannot start;
    cancelled, it is stopped first."""
    argv, env = guarded(check_command(spec, write_max_mb, limits),
                        {**os.environ, "COLUMNS": "120"}, STOP_GRACE)
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True, limit=1 << 22,
        cwd=str(spec.parent), env=env)
    assert process.stdout is not None
    stdout = process.stdout

    async def read() -> None:
        while raw := await stdout.readline():
            await line(safe_line(raw.decode("utf-8", "replace").rstrip("\n"), limit=LINE_LIMIT))
        await process.wait()

    try:
        await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        await stop_group(process)
        return None
    except asyncio.CancelledError:   # the runner stops: the check is queued again next start
        await stop_group(process)
        raise
    return process.returncode


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


def time_limit_line(timeout: float) -> str:
    """The check's last line when it was stopped at its time limit."""
    return f"stopped after the check's time limit of {timeout:.0f} s (a build or a bot that hangs?)"

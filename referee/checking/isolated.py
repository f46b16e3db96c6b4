"""`referee check` on an uploaded bot as a subprocess: the club's checks, here or on a worker.

The check runs under the guard (referee.bots.guard), which dies with its parent (the season
runner, or the dask worker that runs it for a cluster), even by SIGKILL, and takes the check's
processes with it: no check goes on unseen, holding its build's lock. (A preexec_fn in a
threaded process could crash the child between fork and exec.) It has a process group of its
own (its build and its bots below it), so a check past its time limit is stopped whole, and
the runner waits for the guard, which exits only once every process below it is gone. The
check's TMPDIR is a folder of its own (its builds' and bots' folders), removed after that. Its
output comes line by line, escaped and cut to one line each.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from referee.bots.guard import guarded
from referee.bots.scratch import release_instance_dir
from referee.present.text import safe_line
from referee.util.trusted import TRUSTED_CWD, python_module

LINE_LIMIT = 2000      # characters kept of one line
STOP_GRACE = 10.0      # the check's guard's grace between SIGTERM and SIGKILL of what it runs
GUARD_MARGIN = 10.0    # more seconds for the guard to kill and reap them before it is killed

Line = Callable[[str], Awaitable[None]]


def check_command(spec: Path, write_max_mb: int | None = None,
                  limits: Mapping[str, int] | None = None) -> list[str]:
    """The `referee check` command line of one spec: its build's output shown, what its build
    and bot write bounded by `write_max_mb`, and a season's `limits` a ceiling on the spec's own
    (`referee.bots.spec.capped_limits`)."""
    written = [] if write_max_mb is None else ["--write-limit-mb", str(write_max_mb)]
    ceiling = [f"--limit={key}={value}" for key, value in sorted((limits or {}).items())]
    return python_module("referee.cli", "check", "--build-output", *written, *ceiling,
                         os.path.abspath(spec))


async def check_process(spec: Path, timeout: float, line: Line,
                        write_max_mb: int | None = None,
                        limits: Mapping[str, int] | None = None) -> int | None:
    """Run `check_command(spec, ...)`, handing each line of its output to `line`; its exit
    status, or None when it was stopped at `timeout` seconds. OSError if it cannot start;
    cancelled, it is stopped first. However it ends, it returns (or raises) only once every
    process the check started is gone, and the check's own temporary folder with them."""
    scratch = Path(tempfile.mkdtemp(prefix="referee-check-"))
    try:
        return await _run(spec, timeout, line, write_max_mb, limits, scratch)
    finally:
        # Only now: nothing that could write in it runs any more. Its builds' and bots' own
        # folders are in it, which their processes killed at once never removed, and with them
        # their size-limited mounts (`referee.bots.scratch`): unmounted first.
        release_instance_dir(scratch)


async def _run(spec: Path, timeout: float, line: Line, write_max_mb: int | None,
               limits: Mapping[str, int] | None, scratch: Path) -> int | None:
    """`check_process` with `scratch` as the check's TMPDIR."""
    argv, env = guarded(check_command(spec, write_max_mb, limits),
                        {"COLUMNS": "120", "TMPDIR": str(scratch)}, STOP_GRACE)
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True, limit=1 << 22,
        cwd=TRUSTED_CWD, env=env)
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
    """SIGTERM to the check's process group, and wait for its guard: the guard ends every
    process below it, those in sessions of their own too (builds, bots), and exits only once
    they are all gone. Only a guard not gone after its grace and GUARD_MARGIN more is
    SIGKILLed with its group (what is below it then dies with it, by its parent-death signal)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), STOP_GRACE + GUARD_MARGIN)
    # The leader is gone, or is killed now; its group may not be gone.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


def time_limit_line(timeout: float) -> str:
    """The check's last line when it was stopped at its time limit."""
    return f"stopped after the check's time limit of {timeout:.0f} s (a build or a bot that hangs?)"

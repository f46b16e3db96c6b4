"""The referee's command line as the tests run it, the one way they do: the real CLI in a
subprocess of its own (`referee()` to its end, `start_referee()` to watch or stop it), each run
tagged with a run id of its own; and a free loopback port for a server a test starts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

# `referee ...` as this checkout's interpreter runs it (the installed command may be another's).
REFEREE = (sys.executable, "-m", "referee.cli")


def cli_env(run_id: str | None = None, env: Mapping[str, str] | None = None,
            unset: Collection[str] = ()) -> dict[str, str]:
    """This process's environment without the variables `unset`, with `env` on top and
    REFEREE_RUN_ID set (`run_id`, or a fresh one): every process of the run carries it, so a
    test can find what is left."""
    kept = {key: value for key, value in os.environ.items() if key not in unset}
    return {**kept, "REFEREE_RUN_ID": run_id or uuid.uuid4().hex[:12], **(env or {})}


def start_referee(*args: str | Path, run_id: str | None = None,
                  env: Mapping[str, str] | None = None, unset: Collection[str] = (),
                  **popen: Any) -> subprocess.Popen[str]:
    """`referee ARGS` started in text mode; `popen` as subprocess.Popen takes it (stdout,
    stderr, cwd...). The caller waits for it or stops it."""
    return subprocess.Popen([*REFEREE, *map(str, args)], env=cli_env(run_id, env, unset),
                            text=True, **popen)


def referee(*args: str | Path, timeout: float = 300, check: bool = True,
            run_id: str | None = None, env: Mapping[str, str] | None = None,
            unset: Collection[str] = (), cwd: str | Path | None = None,
            merged: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `referee ARGS` to its end with its output captured (`timeout`: a bound for a hung
    run; `merged`: stderr into stdout, in the order written). AssertionError with that output
    when `check` and it fails."""
    with start_referee(*args, run_id=run_id, env=env, unset=unset, cwd=cwd,
                       stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if merged else subprocess.PIPE) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check and done.returncode != 0:
        raise AssertionError(f"referee {[str(a) for a in args]} failed "
                             f"({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

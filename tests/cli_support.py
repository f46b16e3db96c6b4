"""The referee's command line as the tests run it, the one way they do: the real CLI in a
subprocess of its own (`referee()` to its end, `start_referee()` to watch or stop it), each run
tagged with a run id of its own; and a free loopback port for a server a test starts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# `referee ...` as this checkout's interpreter runs it (the installed command may be another's).
REFEREE = (sys.executable, "-m", "referee.cli")


def cli_env(run_id: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `env` on top and REFEREE_RUN_ID set (`run_id`, or a
    fresh one): every process of the run carries it, so a test can find what is left."""
    return {**os.environ, "REFEREE_RUN_ID": run_id or uuid.uuid4().hex[:12], **(env or {})}


def start_referee(*args: str | Path, run_id: str | None = None,
                  env: Mapping[str, str] | None = None, **popen: Any) -> subprocess.Popen[str]:
    """`referee ARGS` started in text mode; `popen` as subprocess.Popen takes it (stdout,
    stderr, cwd...). The caller waits for it or stops it."""
    return subprocess.Popen([*REFEREE, *map(str, args)], env=cli_env(run_id, env), text=True,
                            **popen)


def referee(*args: str | Path, timeout: float = 300, check: bool = True,
            run_id: str | None = None, env: Mapping[str, str] | None = None,
            cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `referee ARGS` to its end with its output captured (`timeout`: a bound for a hung
    run). AssertionError with that output when `check` and it fails."""
    with start_referee(*args, run_id=run_id, env=env, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE) as process:
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

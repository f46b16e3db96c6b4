"""gRPC's own log lines never reach the organiser's terminal unless REFEREE_DEBUG asks."""

from __future__ import annotations

import os
import re
import subprocess
import sys

# A C-core error line: severity letter, date, time, thread, file:line]
GRPC_LINE = re.compile(r"^[EWI]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]", re.MULTILINE)

# Importing the CLI the way `referee` does, then making gRPC's C core log an error.
PROGRAM = """
import referee.cli
import grpc
from concurrent import futures
server = grpc.server(futures.ThreadPoolExecutor(1))
try:
    server.add_insecure_port("unix:/nonexistent-referee-dir/x.sock")
except RuntimeError:
    print("bind failed")
"""


def _run(**extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GRPC_VERBOSITY", "REFEREE_DEBUG")}
    return subprocess.run([sys.executable, "-c", PROGRAM], env={**env, **extra},
                          capture_output=True, text=True, timeout=60)


def test_grpc_logs_are_silenced_by_default() -> None:
    quiet = _run()
    assert quiet.stdout == "bind failed\n"
    assert quiet.stderr == ""


def test_referee_debug_shows_them() -> None:
    loud = _run(REFEREE_DEBUG="1")
    assert loud.stdout == "bind failed\n"
    assert GRPC_LINE.search(loud.stderr), loud.stderr   # control: the line exists
    assert "add_port" in loud.stderr

"""Plays the first legal action, but only once a file `go` exists in its folder (the folder
of its spec's workdir): a test holds a game in play for as long as it needs, with no timing.
It waits at most 300 s per decision; give it a decision limit above that."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

GATE = Path(__file__).resolve().parent.parent / "go"


def decide(request, start, n):
    deadline = time.monotonic() + 300
    while not GATE.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return botlib.honest(request, start, n)


botlib.run("gated", decide)

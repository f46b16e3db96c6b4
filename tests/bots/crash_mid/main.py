"""Plays three decisions honestly, then the process exits (os._exit) on the next request."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402

import botlib  # noqa: E402


def decide(request, start, n):
    if botlib.decisions_in_process > 3:
        print("crash_mid: exiting on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    return botlib.honest(request, start, n)


botlib.run("crash_mid", decide)

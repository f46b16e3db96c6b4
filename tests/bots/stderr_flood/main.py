"""Plays honestly and writes about 64 KiB to stderr per decision (megabytes per game)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

LINE = "flood " + "x" * 1017 + "\n"   # 1 KiB


def decide(request, start, n):
    sys.stderr.write(LINE * 64)
    sys.stderr.flush()
    return botlib.honest(request, start, n)


botlib.run("stderr_flood", decide)

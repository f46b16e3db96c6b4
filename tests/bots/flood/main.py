"""Answers its first request of each game, then sends 5000 more copies of that answer at once:
the referee must cut the stream off (a protocol strike), not read them all, and not slow the
other seats."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    answer = botlib.honest(request, start, n)
    return answer * 5001 if n == 1 else answer


botlib.run("flood", decide)

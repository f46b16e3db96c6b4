"""Raises in its Play handler at each decision request: every game's stream fails with a gRPC
error status (`unknown`), while the process keeps serving (it still answers Hello)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    raise RuntimeError("raiser: failing the stream on purpose")


botlib.run("raiser", decide)

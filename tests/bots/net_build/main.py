"""Plays honestly and, at the first decision of every game, prints the report its build step
wrote (build.py): what a build given the network could reach."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

REPORT = (Path(__file__).resolve().parent.parent / "net_build_report.txt").read_text()


def decide(request, start, n):
    if n == 1:
        print(REPORT, file=sys.stderr, end="", flush=True)
    return botlib.honest(request, start, n)


botlib.run("net_build", decide)

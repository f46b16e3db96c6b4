"""Plays the first legal action and, at the first decision of every game, prints the report
its build step wrote (build.py): what a build given the network could reach."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.tell_build_report("net_build", "net_build_report.txt")

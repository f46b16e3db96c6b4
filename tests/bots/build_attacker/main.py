"""Plays the first legal action and, at the first decision of every game, prints the report
its build step wrote (build.py): what the build could read, write and reach."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.tell_build_report("build_attacker", "build_report.txt")

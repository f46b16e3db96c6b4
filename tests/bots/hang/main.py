"""Reads every message and never answers a decision request (each one times out)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.run("hang", lambda request, start, n: [])

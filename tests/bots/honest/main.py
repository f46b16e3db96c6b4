"""A well-behaved bot: always the first legal action."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.run("honest")

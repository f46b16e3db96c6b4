"""Never runs: build_hang's build never ends (build.py). Were it to, it would play honestly."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.run("build_hang", botlib.honest)

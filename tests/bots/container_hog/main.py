"""A container bot that goes over its container's limits, chosen by $HOG_MODE:

* `memory`: at its first decision it touches memory (16 MB at a time) without end, so the
  container's memory cgroup (`memory_mb`, swap included) kills it: the request it left open,
  and the rest of the game, are crash strikes (at most 2 GB when nothing stops it);
* `fork`: before it listens it forks sleeping children until the pids cgroup
  (`max_processes`) refuses, ends `SPARE` of them for its own threads, keeps the rest, and
  plays honestly; it reports `HOLD: holding <n> children after <error>` at each game's start.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

MODE = os.environ.get("HOG_MODE", "memory")
CHUNK = 16 * 1024 * 1024
SPARE = 12
REPORT = ""


if MODE == "fork":
    REPORT = botlib.hold_processes(SPARE)
    print(REPORT, file=sys.stderr, flush=True)


def decide(request, start, n):
    if MODE == "fork" and n == 1:
        print(REPORT, file=sys.stderr, flush=True)
    if MODE == "memory":
        print("MEMORY: touching memory until the container is killed", file=sys.stderr,
              flush=True)
        hoard = []
        while len(hoard) < 128:
            hoard.append(bytearray(CHUNK))   # zero-filled: the pages are touched
        print("MEMORY: no limit hit at 2 GB; exiting", file=sys.stderr, flush=True)
        os._exit(6)
    return botlib.honest(request, start, n)


botlib.run("container_hog", decide, max_games=2)

"""Plays honestly, but each decision exits the process (os._exit) with probability 5%.

The draw for a decision depends only on the game id, the seat and the decision's number in the
game, so a league with the same seed crashes at the same decisions. The exit ends every game the
process is playing at that moment, not only the one that drew it.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402
import random  # noqa: E402

import botlib  # noqa: E402

CRASH_PROBABILITY = 0.05


def decide(request, start, n):
    draw = random.Random(f"{start.game_id}/{start.your_seat}/{n}").random()
    if draw < CRASH_PROBABILITY:
        print(f"CRASH: exiting at decision {n} of game {start.game_id} seat {start.your_seat}",
              file=sys.stderr, flush=True)
        os._exit(5)
    return botlib.honest(request, start, n)


botlib.run("random_crasher", decide)

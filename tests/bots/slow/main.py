"""Answers its first two decisions of each game after the deadline, then plays honestly.

The late answers are sent anyway: the referee must drop them without a second strike, so a
game gives exactly two timeouts. Each answer is late by a tenth of the deadline: the requests
queue behind the sleeps (the next one is sent as soon as the referee gives up), so the third
is read two tenths late and still has eight tenths of its deadline (1.6 s) for an honest answer,
however busy the machine.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import time  # noqa: E402

import botlib  # noqa: E402

LATE = 2


def decide(request, start, n):
    if n <= LATE:
        deadline_s = (start.time_control.decision_ms + request.time_bank_ms) / 1000
        time.sleep(deadline_s * 1.1)
    return botlib.honest(request, start, n)


botlib.run("slow", decide)

"""Answers a well-formed but illegal action: a face 1..6 that is not legal now (not rolled, or
the slot when it is not allowed)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    legal = {(a.value, a.slot) for a in request.legal}
    for slot in (False, True):
        for value in range(1, 7):
            if (value, slot) not in legal:
                return [botlib.answer(request, value, slot)]
    return botlib.honest(request, start, n)  # every action is legal: nothing illegal to say


botlib.run("illegal", decide)

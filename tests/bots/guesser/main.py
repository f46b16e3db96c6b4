"""Answers every request honestly, then at once sends a decision for the request id it expects
next: the last id plus the number of players, which is what consecutive ids per game would
give its next turn. It writes every id it was asked and every id it guessed to stderr
(`asked ID`, `guessed ID`), so a test can see that no guess was ever asked, and that the
referee never took a guess (read before its request, at ~0 us) as a move."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    first = request.legal[0]
    guess = request.request_id + len(start.seats)
    print(f"asked {request.request_id}", file=sys.stderr, flush=True)
    print(f"guessed {guess}", file=sys.stderr, flush=True)
    ahead = botlib.pb.DecisionRequest(request_id=guess)
    return [botlib.answer(request, first.value, first.slot),
            botlib.answer(ahead, first.value, first.slot)]


botlib.run("guesser", decide)

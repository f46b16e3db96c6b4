"""Answers every request honestly, and with each of its first three answers sends one decision
that answers nothing: a second decision for the same request (sent when no request is
outstanding), then one for the request it answered before (a stale id), then one for a request
never sent. Each must be a protocol strike and none may be taken as the answer to a later
request: every move the referee accepts from this bot is its honest answer.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

previous: dict[tuple[str, int], int] = {}   # (game id, seat) -> the last request id answered


def decide(request, start, n):
    key = (start.game_id, start.your_seat)
    honest = botlib.honest(request, start, n)
    first = request.legal[0]
    extra = []
    if n == 1:
        extra = [botlib.answer(request, first.value, first.slot)]
    elif n == 2:
        stale = pb_request(previous[key])
        extra = [botlib.answer(stale, first.value, first.slot)]
    elif n == 3:
        extra = [botlib.answer(pb_request(request.request_id + 10_000), first.value, first.slot)]
    previous[key] = request.request_id
    return honest + extra


def pb_request(request_id):
    from referee.protocol import pb

    return pb.DecisionRequest(request_id=request_id)


botlib.run("chatter", decide)

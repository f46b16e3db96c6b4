"""Answers with garbage, in turn: an empty BotMessage, a Decision without an action (both
malformed), a Decision for a request id that was never sent (protocol)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

from referee.protocol import pb  # noqa: E402


def decide(request, start, n):
    kind = (n - 1) % 3
    if kind == 0:
        return [pb.BotMessage()]
    if kind == 1:
        return [pb.BotMessage(decision=pb.Decision(request_id=request.request_id))]
    legal = request.legal[0]
    return [pb.BotMessage(decision=pb.Decision(
        request_id=request.request_id + 1000, action=pb.Action(value=legal.value,
                                                               slot=legal.slot)))]


botlib.run("garbage", decide)

"""Sends 16 values with every decision, each under a name it never used before (the game, the
decision and the value's number): a league that kept every name would grow its tables and
report by every move. A league keeps the first 16 names per bot and counts the rest."""

import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    message = botlib.answer(request, request.legal[0].value, request.legal[0].slot)
    game = zlib.crc32(start.game_id.encode())
    message.decision.values.update({f"v{game:08x}-s{start.your_seat}-{n:03}-{i:02}": float(i)
                                    for i in range(16)})
    return [message]


botlib.run("namer", decide)

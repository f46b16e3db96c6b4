"""Answers with its first legal action padded to about 1 MB by a field BotMessage does not
have (a real message of another type serialized after it: protobuf keeps it as unknown
fields). The referee must refuse messages this big before reading them into memory, and keep
nothing of them: its memory stays flat over many games.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

from referee.protocol import pb  # noqa: E402

# GameStart.seats is field 3: BotMessage has no field 3, so it parses as an unknown field.
PADDING = pb.GameStart(seats=[pb.SeatInfo(bot_name="x" * 1_000_000)]).SerializeToString()


def decide(request, start, n):
    honest = botlib.honest(request, start, n)[0].SerializeToString()
    return [pb.BotMessage.FromString(honest + PADDING)]


botlib.run("bloat", decide)

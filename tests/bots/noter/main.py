"""Sends notes with every decision, some within the limits, some far over them: a long text
(500 bytes, multi-byte characters at the cut), 20 numbers, an over-long name and a NaN."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    message = botlib.answer(request, request.legal[0].value, request.legal[0].slot)
    decision = message.decision
    if n % 2:
        decision.note = "\x1b[31mred\x1b[0m " + "é" * 250
        decision.values.update({f"v{i:02}": float(i) for i in range(20)})
        decision.values["x" * 40] = 1.0
        decision.values["nan"] = math.nan
    else:
        decision.note = f"decision {n}"
        decision.values.update({"n": float(n), "half": n / 2})
    return [message]


botlib.run("noter", decide)

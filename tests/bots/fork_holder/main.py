"""Exhausts its process budget and keeps it exhausted: before it listens it forks sleeping
children until fork fails, then ends only `SPARE` of them (room for its own gRPC threads) and
keeps the rest alive while it plays honestly. It reports `HOLD: holding <n> children after
<error>` on stderr at start and at the first decision of every game.

With every bot under one uid, the kernel's per-uid count (RLIMIT_NPROC, `max_processes`) made
this bot's budget everyone's: a bot started next could not start its threads. Each sandboxed
instance now has a uid of its own, so the others start and play as usual. The children exit
when their parent does (PR_SET_PDEATHSIG) and the referee's guard ends them anyway.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

SPARE = 40
REPORT = botlib.hold_processes(SPARE)
print(REPORT, file=sys.stderr, flush=True)


def decide(request, start, n):
    if n == 1:
        print(REPORT, file=sys.stderr, flush=True)
    return botlib.honest(request, start, n)


botlib.run("fork_holder", decide, max_games=2)

"""Before it listens, forks sleeping children until fork fails (at most 2000 attempts), kills
and reaps them, then plays honestly. It reports `FORK: <n> forks succeeded in <m> attempts, then
<error>` on stderr at start and again at the first decision of every game, so that each game
record shows it.

Under the sandbox's `max_processes` (RLIMIT_NPROC) fork fails with EAGAIN (BlockingIOError)
once the sandbox uid has that many processes and threads. The bomb runs before gRPC is imported:
while the children live, the process could not start a thread either. The children sleep at
most 60 s; the referee's guard would end them anyway when the bot stops.
"""

import os
import signal
import sys
import time
from pathlib import Path

MAX_ATTEMPTS = 2000


def bomb() -> str:
    children: list[int] = []
    failure = "no failure"
    attempts = 0
    while attempts < MAX_ATTEMPTS:
        attempts += 1
        try:
            pid = os.fork()
        except OSError as exc:
            failure = f"{type(exc).__name__}: {exc.strerror}"
            break
        if pid == 0:   # the child: sleep (bounded) and exit
            try:
                time.sleep(60)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    return f"FORK: {len(children)} forks succeeded in {attempts} attempts, then {failure}"


REPORT = bomb()
print(REPORT, file=sys.stderr, flush=True)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


def decide(request, start, n):
    if n == 1:
        print(REPORT, file=sys.stderr, flush=True)
    return botlib.honest(request, start, n)


botlib.run("fork_bomb", decide)

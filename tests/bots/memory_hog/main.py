"""Allocates (and touches) another 25 MB at every decision and keeps it all, then answers.

Under the sandbox's address-space limit (`memory_mb`) an allocation fails with MemoryError;
the bot then reports how far it got and exits, as a process killed for its memory would. The
growth is bounded (3 GB at most) so that the bot stays harmless when run without a sandbox.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402
import threading  # noqa: E402

import botlib  # noqa: E402

CHUNK = 25 * 1000 * 1000
MAX_CHUNKS = 120               # 3 GB: stop there even if nothing stops us
hoard: list[bytearray] = []
lock = threading.Lock()


def decide(request, start, n):
    with lock:
        if len(hoard) >= MAX_CHUNKS:
            print(f"MEMORY: no limit hit at {len(hoard) * CHUNK // 10**6} MB; exiting",
                  file=sys.stderr, flush=True)
            os._exit(6)
        try:
            hoard.append(bytearray(CHUNK))   # zero-filled: the pages are touched
        except MemoryError:
            print(f"MEMORY: MemoryError after {len(hoard) * CHUNK // 10**6} MB; exiting",
                  file=sys.stderr, flush=True)
            os._exit(7)
    return botlib.honest(request, start, n)


botlib.run("memory_hog", decide)

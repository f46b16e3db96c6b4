"""Maps another 64 MB of memory at every decision and keeps it all, then answers. Under the
sandbox's address-space limit (`memory_mb`) a mapping fails at once (the limit is on address
space, so the pages need not be touched: the failure does not depend on how busy the machine
is); the bot then reports how far it got and exits, as a process killed for its memory would.
The growth is bounded (3 GB at most) so that the bot stays harmless when run without a sandbox.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mmap  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402

import botlib  # noqa: E402

CHUNK = 64 * 1024 * 1024
MAX_CHUNKS = 48               # 3 GB: stop there even if nothing stops us
hoard: list[mmap.mmap] = []
lock = threading.Lock()


def decide(request, start, n):
    with lock:
        if len(hoard) >= MAX_CHUNKS:
            print(f"MEMORY: no limit hit at {len(hoard) * CHUNK >> 20} MB; exiting",
                  file=sys.stderr, flush=True)
            os._exit(6)
        try:
            hoard.append(mmap.mmap(-1, CHUNK))
        except (MemoryError, OSError) as exc:   # ENOMEM from mmap under RLIMIT_AS
            print(f"MEMORY: {type(exc).__name__} after {len(hoard) * CHUNK >> 20} MB more; "
                  "exiting", file=sys.stderr, flush=True)
            os._exit(7)
    return botlib.honest(request, start, n)


botlib.run("memory_hog", decide)

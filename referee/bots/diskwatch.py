"""A bound on what a build (or a bot) writes to disk, all its files together.

`RLIMIT_FSIZE` bounds each file a process writes, not their number: a build that writes many
files, or many processes that each write one, still fill the disk. As root a size-limited
tmpfs bounds them (`referee.bots.scratch`); where none can be mounted (an ordinary user, a
mount refused), and for a build run without the sandbox, a `DiskWatch` measures the folders a
confined program may write (its own folder and its private /tmp) from a thread, and calls
`stop` as soon as they hold more than the limit beyond what they held at the start. What it
counts is what fills a disk: the blocks each file takes, and at least one block
(`ENTRY_BYTES`) for every file, folder or link, so that a million empty files (inodes) count
too. Each file is bounded as well (the
sandbox's `RLIMIT_FSIZE` at the same limit), so a program passes the limit by at most what it
writes between two measurements before it is stopped.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from referee.util.numbers import is_whole

MIB = 1024 * 1024
DEFAULT_WRITE_MAX_MB = 512   # what a build, or a bot's /tmp, may add when nobody says
WRITE_MAX_ENV = "REFEREE_WRITE_MAX_MB"   # the season's limit, set by its runner for its children
ENTRY_BYTES = 4096           # the least a file, folder or link counts: an inode and a block
EVERY_S = 0.02               # the shortest time between two measurements of a build
BOT_EVERY_S = 0.1            # ... of a bot's /tmp (a thread per bot instance, beside its games)


def write_max_mb() -> int:
    """The write limit in MiB: $REFEREE_WRITE_MAX_MB (the season runner sets it from the
    season's `write_max_mb` for every process it starts) or DEFAULT_WRITE_MAX_MB."""
    given = os.environ.get(WRITE_MAX_ENV, "")
    return int(given) if is_whole(given) and int(given) > 0 else DEFAULT_WRITE_MAX_MB


def disk_use(folders: Iterable[Path]) -> int:
    """The bytes `folders` take on disk, each file, folder or link at least ENTRY_BYTES, a
    file with several names once; symlinks are not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            for name in (".", *dirnames, *filenames):
                try:
                    st = os.lstat(os.path.join(dirpath, name))
                except OSError:      # gone meanwhile
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                total += max(st.st_blocks * 512, ENTRY_BYTES)
    return total


class DiskWatch:
    """Measures `folders` from a thread until `close`; calls `stop` once when they have grown
    by more than `limit_mb` MiB since `start` (then `over` is True)."""

    def __init__(self, folders: Iterable[Path], limit_mb: int, stop: Callable[[], None],
                 every: float = EVERY_S) -> None:
        self.folders = list(folders)
        self.limit_mb = limit_mb
        self.stop = stop
        self.every = every
        self.over = False
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._base = 0

    def start(self) -> DiskWatch:
        """Take the folders' size now as the base, and start measuring."""
        self._base = disk_use(self.folders)
        self._thread = threading.Thread(target=self._run, name="disk-watch", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        limit = self.limit_mb * MIB
        wait = self.every
        while not self._closed.wait(wait):
            began = time.monotonic()
            if disk_use(self.folders) - self._base > limit:
                self.over = True
                self.stop()
                return
            # A big tree takes a while to walk: measuring takes at most a fifth of the time,
            # so that a build of many small files is not slowed down much.
            wait = max(self.every, 4 * (time.monotonic() - began))

    def close(self) -> None:
        """Stop measuring (idempotent)."""
        self._closed.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> DiskWatch:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

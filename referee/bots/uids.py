"""A host uid of its own for every sandboxed bot instance (and every sandboxed build).

The kernel counts `RLIMIT_NPROC` (a bot's `max_processes`) per real uid: when every bot ran as
uid 65534, one bot that used up the budget stopped the next bot from starting its threads, and
the honest bot was struck. Each instance therefore runs as a uid leased from a pool that no
account uses (`POOL_START` .. `POOL_START + POOL_SIZE`); its processes, threads and files are its
own, and one instance's fork bomb cannot touch another's budget.

A lease is an exclusive `flock` on `LOCK_DIR/<uid>` (the file is removed on release): referees
running side by side on one host never hand out the same uid, and the kernel drops the lock
when the referee dies, even by SIGKILL (the bot processes die with it: see
`referee.bots.guard`). Only root can switch to another uid; as an ordinary user bots run in a
user namespace and count against the caller's own limit (see `referee.bots.sandbox`), and
`lease()` returns None.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import threading
from dataclasses import dataclass
from pathlib import Path

from referee.errors import UserError

POOL_START = 1_900_000_000    # far above login accounts and the usual subuid ranges (100000+)
POOL_SIZE = 1_000_000
LOCK_DIR = Path("/run/referee/uids")
_random = random.SystemRandom()
_lock = threading.Lock()


class UidPoolError(UserError, RuntimeError):
    """No uid could be leased (the lock directory cannot be created, or the pool is full)."""


@dataclass
class UidLease:
    """One uid (also used as the gid) held until `release()`."""

    uid: int
    _fd: int

    @property
    def gid(self) -> int:
        """The gid that goes with the uid (the same number; no group of that id exists)."""
        return self.uid

    def release(self) -> None:
        """Give the uid back (idempotent); call it once the instance's processes are gone."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(LOCK_DIR / str(self.uid))   # while locked: nothing is left behind
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def _sweep(most: int = 8) -> None:
    """Remove a few lock files nobody holds (left by a referee killed by SIGKILL), so that the
    directory does not grow without bound."""
    with contextlib.suppress(OSError), os.scandir(LOCK_DIR) as entries:
        for entry, _ in zip(entries, range(most), strict=False):
            with contextlib.suppress(OSError):
                fd = os.open(entry.path, os.O_RDWR | os.O_CLOEXEC)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    if os.fstat(fd).st_ino == os.stat(entry.path).st_ino:
                        os.unlink(entry.path)   # held by nobody: stale
                finally:
                    os.close(fd)


def lease(attempts: int = 64) -> UidLease | None:
    """A free uid of the pool, or None when the referee is not root (no uid switch possible).

    Raises UidPoolError if the lock directory cannot be used or `attempts` random uids were all
    taken."""
    if os.geteuid() != 0:
        return None
    with _lock:
        try:
            LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise UidPoolError(f"cannot create {LOCK_DIR}: {exc.strerror}") from None
        for _ in range(attempts):
            uid = POOL_START + _random.randrange(POOL_SIZE)
            fd = os.open(LOCK_DIR / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                # The holder unlinks the file on release: a lock on an unlinked file is no lease.
                if os.fstat(fd).st_ino != os.stat(LOCK_DIR / str(uid)).st_ino:
                    raise BlockingIOError
            except (BlockingIOError, FileNotFoundError):
                os.close(fd)
                continue
            _sweep()
            return UidLease(uid, fd)
    raise UidPoolError(f"no free uid in {attempts} tries (pool {POOL_START}+{POOL_SIZE})")

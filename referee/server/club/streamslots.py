"""Live-stream slots per viewer, shared by every web process (issue "open internet", item 4).

Each web process caps its own open streams (views.live.WATCHERS); without a cap per viewer one
student could hold all of them and everyone else, the big screen included, got 503. A viewer
(a signed-in student by id, anyone else by address) holds at most `cap` streams across all
the web processes at once: stream slot i of viewer K is the file DATA/run/streams/K.i, held by
an open-file-description lock (F_OFD_SETLK) for as long as the stream is open. The kernel
drops the lock when the stream's file is closed, or when its process dies, so a crashed worker
never leaves a slot taken. The organiser's page reads who holds what with F_OFD_GETLK, which
looks without taking.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
from collections import Counter
from pathlib import Path

from referee.server.shared.clubfolder import ClubFolder

# struct flock on Linux: l_type, l_whence (short), l_start, l_len (off_t), l_pid (pid_t).
_FLOCK = "hhqqi4x"


def _flock(kind: int) -> bytes:
    return struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0)


def slots_folder() -> Path:
    """Where the slot files are (made on first use)."""
    folder = ClubFolder.of_django().streams
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def viewer_key(user_id: int | None, address: str) -> str:
    """The slot files' name for a viewer: `user-ID`, or `addr-` and the address in file-name
    characters for one not signed in."""
    if user_id is not None:
        return f"user-{user_id}"
    return "addr-" + (re.sub(r"[^0-9A-Za-z.]", "_", address)[:64] or "unknown")


class Slot:
    """One stream slot, held until `release` (or until the object is collected)."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def release(self) -> None:
        """Give the slot back (closing the file drops its lock); again is a no-op."""
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        self.release()


def take(key: str, cap: int) -> Slot | None:
    """One of viewer `key`'s `cap` slots, or None when they hold them all."""
    folder = slots_folder()
    for index in range(cap):
        fd = os.open(folder / f"{key}.{index}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _flock(fcntl.F_WRLCK))
        except OSError:   # EAGAIN/EACCES: another stream holds this slot
            os.close(fd)
            continue
        return Slot(fd)
    return None


def _held(path: Path) -> bool:
    """True when some stream holds the slot file `path` (looked at, not taken)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        # GETLK with a write lock asks "who would stop me?": F_UNLCK back means nobody.
        answer = fcntl.fcntl(fd, fcntl.F_OFD_GETLK, _flock(fcntl.F_WRLCK))
        return struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK
    finally:
        os.close(fd)


def in_use() -> Counter[str]:
    """Open streams per viewer key, across every web process, now."""
    held: Counter[str] = Counter()
    for path in slots_folder().iterdir():
        key, dot, index = path.name.rpartition(".")
        if dot and index.isascii() and index.isdecimal() and _held(path):
            held[key] += 1
    return held

"""Idle database connections of one web process, for whichever request comes next.

Django's ASGI handler runs each request's view in a thread of its own, so a connection kept
per thread (Django's own, or the pages' read-only one to the season's store) lives one request:
every page opened the club's database (about 0.85 ms of CPU: SQLite's file, Django's functions,
the pragmas) and the season's store anew. A `Pool` keeps a few idle connections of one file and
hands one to the next thread that opens that file; a connection is used by one thread at a time
(taken, then given back), so SQLite's own rule for sharing one holds.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

Connection = TypeVar("Connection")

IDLE_LIMIT = 16   # idle connections kept per file: more than a worker's requests at once


class Pool(Generic[Connection]):
    """Idle connections by file. A file replaced on disk (another inode), or changed by
    other than SQLite's appends to its log (its change time: a checkpoint, or a new file on a
    reused inode), drops its idle connections: a kept one never reads a file that is gone."""

    def __init__(self, close: Callable[[Connection], object], limit: int = IDLE_LIMIT) -> None:
        self._close = close
        self._limit = limit
        self._idle: dict[str, tuple[tuple[int, int, int], list[Connection]]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _identity(path: str) -> tuple[int, int, int] | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return found.st_dev, found.st_ino, found.st_ctime_ns

    def take(self, path: str) -> Connection | None:
        """An idle connection to the file at `path`, or None (open a new one)."""
        identity = self._identity(path)
        with self._lock:
            kept = self._idle.get(path)
            if kept is None:
                return None
            if kept[0] != identity:   # the file was replaced: its connections are stale
                del self._idle[path]
                stale = kept[1]
            else:
                return kept[1].pop() if kept[1] else None
        for connection in stale:
            self._close(connection)
        return None

    def give(self, path: str, connection: Connection) -> None:
        """Keep `connection` for the next request, or close it if enough are idle."""
        identity = self._identity(path)
        with self._lock:
            kept = self._idle.get(path)
            if identity is not None and (kept is None or kept[0] != identity):
                kept = self._idle[path] = (identity, [])
            if identity is not None and kept is not None and len(kept[1]) < self._limit:
                kept[1].append(connection)
                return
        self._close(connection)

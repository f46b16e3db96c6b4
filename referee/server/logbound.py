"""A web worker's log, bounded: what anonymous requests make it write cannot fill the disk.

Every 404 is logged by Django (`Not Found: /the/path`), a malformed request by uvicorn, a
failed accept by asyncio; with the path or the message chosen by whoever sends the request.
One handler on the root logger takes every record of the worker (Django's, uvicorn's,
asyncio's, the server's own), and:

- a line's message is cut at LINE_MAX characters, a whole record (its traceback included) at
  RECORD_MAX;
- records of one kind (the same logger, level, message pattern and HTTP status: every 404 is
  one kind, whatever its path) are written once per WINDOW_S: the first is written, the next
  ones within the window are counted, and the first one after it says how many were left out;
- whatever the kinds, at most LINES_MAX records are written per WINDOW_S (a message written
  with its text in its pattern is a kind of its own), the others counted the same way.

The worker writes to its standard error, the server's log (a terminal, or the journal of the
service that runs it); at most one line per kind per minute reaches it.
"""

from __future__ import annotations

import logging
import sys
import time

LINE_MAX = 300            # characters of one record's message
RECORD_MAX = 4000         # characters of one record, traceback included
WINDOW_S = 60.0           # one record of a kind per window
KINDS_MAX = 1000          # kinds remembered (then the oldest windows are forgotten)
LINES_MAX = 100           # records of all kinds together per window: the rest are counted


def cut(text: str, most: int) -> str:
    """`text`, or its first `most` characters and how long it was."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text)} characters)"


class Collapse(logging.Filter):
    """Lets one record of each kind through per WINDOW_S, cut to LINE_MAX characters; the
    next one let through says how many were left out meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: dict[tuple[object, ...], tuple[float, int]] = {}
        self.budget = (-WINDOW_S, 0, 0)   # (window opened, records written, records left out)

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.levelno, str(record.msg), getattr(record, "status_code", None))
        now = time.monotonic()
        opened, left_out = self.windows.get(key, (-WINDOW_S, 0))
        if now - opened < WINDOW_S:
            self.windows[key] = (opened, left_out + 1)
            return False
        others = self.spend(now)
        if others < 0:
            return False
        self.windows.pop(key, None)
        if len(self.windows) >= KINDS_MAX:
            del self.windows[next(iter(self.windows))]
        self.windows[key] = (now, 0)
        message = cut(record.getMessage(), LINE_MAX)
        if left_out:
            message += f" (and {left_out} more like it in the last {now - opened:.0f} s)"
        if others:
            message += f" ({others} other records left out: more than {LINES_MAX} a minute)"
        record.msg, record.args = message, None
        return True

    def spend(self, now: float) -> int:
        """Take one record from the window's budget: -1 when it is spent (the record is
        counted), else how many were left out since the last record written."""
        opened, written, left_out = self.budget
        if now - opened >= WINDOW_S:
            opened, written = now, 0
        if written >= LINES_MAX:
            self.budget = (opened, written, left_out + 1)
            return -1
        self.budget = (opened, written + 1, 0)
        return left_out


class BoundedFormatter(logging.Formatter):
    """The standard format, each record cut at RECORD_MAX characters."""

    def format(self, record: logging.LogRecord) -> str:
        return cut(super().format(record), RECORD_MAX)


def install(level: int = logging.WARNING) -> logging.Handler:
    """Route every logger of this process to one bounded handler on standard error (the
    handlers Django and uvicorn configured are removed, their loggers' levels stay; a logger
    they silenced, uvicorn's access log, stays silent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level)
    handler.addFilter(Collapse())
    handler.setFormatter(BoundedFormatter("%(levelname)s %(name)s: %(message)s"))
    for logger in logging.root.manager.loggerDict.values():
        if isinstance(logger, logging.Logger) and logger.handlers:
            for old in list(logger.handlers):
                logger.removeHandler(old)
            logger.propagate = True
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler

"""Each web worker's watch over its connections: none may hold a file descriptor for long
without sending a request, and the worker never runs out of descriptors for the pages.

uvicorn's HTTP protocol (h11) has no time limit on a request's head: a connection that sends
nothing, or a byte now and then (each byte restarts its keep-alive timer), stays open for
ever, and a few thousand of them take every file descriptor the worker may open, after which
no page is served. Here, for every connection of the worker:

- its request head must be complete within HEAD_TIMEOUT_S of the moment the connection began
  waiting for one (its opening, or the end of its previous answer), however it trickles;
- a request's body must arrive at BODY_MIN_RATE bytes a second on average once BODY_GRACE_S
  have passed (the time the application does not read it is not counted);
- the worker keeps at most `connection_cap()` connections: past it, the oldest connection
  that is waiting for a request head (idle, or its head partial) is closed to make room for the
  newcomer, so a flood of idle connections cannot keep a student's request out;
- an accept that fails for want of descriptors (EMFILE) is logged once a minute with a count,
  not a traceback per try (asyncio's own handler logs each, up to the accept batch every
  loop turn).

A connection closed for these reasons gets no answer: its client sees the connection end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import time
from pathlib import Path
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 15.0     # a whole request head, from the moment one is awaited
BODY_GRACE_S = 10.0       # a body's first seconds, before its rate counts
BODY_MIN_RATE = 1024      # bytes a second, on average, of a body after the grace
SWEEP_S = 1.0             # how often each connection's deadlines are looked at
RESERVE_FDS = 64          # the database, the log, templates, a check's files, the loop's own
ACCEPT_BATCH = 32         # connections asyncio accepts at one loop turn (its `backlog`)
# Accepted sockets reach the protocol (and the cap) two loop turns after accept(), closed ones
# free their descriptor a turn after close(): room for a few batches in between.
IN_FLIGHT_FDS = 4 * ACCEPT_BATCH
ACCEPT_REPORT_S = 60.0    # failed accepts are reported at most this often, with their count
ACCEPT_FAILURE = "socket.accept() out of system resource"   # asyncio's message

log = logging.getLogger("referee.server.connections")


def open_files_target() -> int:
    """The open-file soft limit this process may raise itself to: its hard limit (no higher
    than the kernel's nr_open), or its soft limit as it is when the hard one is unlimited."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return soft
    with contextlib.suppress(OSError, ValueError):   # not Linux: the hard limit as it is
        hard = min(hard, int(Path("/proc/sys/fs/nr_open").read_text()))
    return max(soft, hard)


def raise_open_files() -> int:
    """Raise this process's open-file soft limit to open_files_target(); the soft limit now.
    Only the web workers do: the supervisor, the runner and the bots keep theirs."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = open_files_target()
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(open_files: int | None = None) -> int:
    """The most connections one web worker keeps open under its open-file limit."""
    if open_files is None:
        open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(16, open_files - RESERVE_FDS - IN_FLIGHT_FDS)


class Watch:
    """The worker's open connections, oldest first, and the sweep that closes overdue ones."""

    def __init__(self, loop: asyncio.AbstractEventLoop, cap: int) -> None:
        self.loop = loop
        self.cap = cap
        self.open: dict[GuardedH11, None] = {}   # insertion order: oldest first
        self.accept_failures = 0
        self.accept_reported = -ACCEPT_REPORT_S
        self.accept_error = ""
        loop.set_exception_handler(self.on_loop_error)
        loop.call_later(SWEEP_S, self.sweep)

    def joined(self, conn: GuardedH11) -> None:
        """A new connection: past the cap, the oldest one waiting for a request head goes."""
        self.open[conn] = None
        while len(self.open) > self.cap:
            waiting = next((c for c in self.open if c is not conn and c.awaiting_head()), None)
            if waiting is None:
                break   # all busy with requests: the cap's margin absorbs the excess
            waiting.shut()

    def left(self, conn: GuardedH11) -> None:
        self.open.pop(conn, None)

    def sweep(self) -> None:
        """Close the connections past a deadline; report failed accepts when due."""
        self.loop.call_later(SWEEP_S, self.sweep)   # first: a fault here stops no later sweep
        now = time.monotonic()
        for conn in list(self.open):
            if conn.overdue(now):
                conn.shut()
        if self.accept_failures and now - self.accept_reported >= ACCEPT_REPORT_S:
            self.report_accepts(now)

    def on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio's exception handler: failed accepts are counted, the rest logged as
        asyncio logs them."""
        if context.get("message") != ACCEPT_FAILURE:
            loop.default_exception_handler(context)
            return
        self.accept_failures += 1
        self.accept_error = str(context.get("exception", ""))
        now = time.monotonic()
        if now - self.accept_reported >= ACCEPT_REPORT_S:
            self.report_accepts(now)

    def report_accepts(self, now: float) -> None:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        log.warning("accept() failed %d time(s) in the last %d s: %s (open-file limit %d, %d "
                    "connections open); accepting again 1 s after each",
                    self.accept_failures, ACCEPT_REPORT_S, self.accept_error, soft,
                    len(self.open))
        self.accept_failures = 0
        self.accept_reported = now


_watch: Watch | None = None


def watch_for(loop: asyncio.AbstractEventLoop) -> Watch:
    """The worker's one Watch (made on the first connection, on the server's loop)."""
    global _watch
    if _watch is None or _watch.loop is not loop:
        _watch = Watch(loop, connection_cap())
    return _watch


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with deadlines for a request's head and body (see the module)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.received = 0
        self.head_since: float | None = time.monotonic()
        self.body_since: float | None = None
        self.body_from = 0
        self.watch = watch_for(self.loop)
        self.watch.joined(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.watch.left(self)
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.head_since = time.monotonic()   # the next request's head is awaited from now

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        super().data_received(data)

    def awaiting_head(self) -> bool:
        """True while the connection has no request under way (idle, or its head partial)."""
        return self.conn.their_state is h11.IDLE and self.cycle_done()

    def cycle_done(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def overdue(self, now: float) -> bool:
        """True when the request head or body is late (a head is awaited from the opening or
        the end of the previous answer; a body's time starts when the sweep first sees it
        coming, at most SWEEP_S late)."""
        if self.awaiting_head():
            self.body_since = None
            if self.head_since is None:
                self.head_since = now
            return now - self.head_since > HEAD_TIMEOUT_S
        self.head_since = None
        if self.conn.their_state is not h11.SEND_BODY:
            self.body_since = None
            return False
        if self.body_since is None:
            self.body_since, self.body_from = now, self.received
        elif self.flow.read_paused:
            self.body_since += SWEEP_S   # the application is not reading: not the client's time
        late = now - self.body_since - BODY_GRACE_S
        return late > 0 and self.received - self.body_from < BODY_MIN_RATE * late

    def shut(self) -> None:
        """Close the connection (a request in flight sees its client gone)."""
        self.watch.left(self)
        if not self.transport.is_closing():
            self.transport.close()

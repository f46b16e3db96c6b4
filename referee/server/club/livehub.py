"""Live files read once per web process, however many watch them (issue "Play and watch").

Every stream of a game in play used to poll and parse its live file on its own: twenty watchers
of one game read each line twenty times. A `Tail` reads one file for all of them: one poll every
`POLL_S` while anyone watches, each line parsed and written as a server-sent event once, and the
watchers woken when lines come. A watcher keeps only its place in the tail's list of steps, so a
reconnecting EventSource (Last-Event-ID) and a late watcher replay from memory, not from disk.

Everything here runs on the web process's event loop (one thread: no locks). A tail lives while
someone watches it; the last watcher to leave stops its poll and removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any

from referee.engine import RuleSet
from referee.game.livefile import LiveReader, public_step

POLL_S = 0.1              # how often a tail looks for new lines: well inside 300 ms
KEEPALIVE_S = 15.0        # a comment line this often keeps proxies from closing a stream
GONE_CHECK_S = 2.0        # how often a quiet tail checks that its file is still there
IDLE_S = 3600.0           # a file silent this long: a referee killed without removing it
KEEPALIVE = ": still playing\n\n"


def event(name: str, data: dict[str, Any], ident: int | str | None = None) -> str:
    """One server-sent event (JSON has no raw newline: one data line)."""
    head = f"id: {ident}\n" if ident is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def hand_of(rules: RuleSet, players: int) -> list[int]:
    """The dice one seat holds at a round's start: its own, its big ones, the neutral ones
    it rolls (the viewer's data-hand)."""
    return [rules.dice, rules.big_dice, rules.neutral_per_player(players)]


class Tail:
    """One live file as its watchers in this process see it: its header, its public steps (as
    JSON, in order) and, once read, how it ended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: dict[str, Any] | None = None
        self.steps: list[str] = []          # each step's data line, public_step as JSON
        self.finished: bool | None = None   # None while in play; then played out or not
        self.watchers = 0
        self._woken = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def done(self) -> bool:
        return self.finished is not None

    def start_data(self) -> dict[str, Any] | None:
        """The start event's data: players, rules (and their preset's name), seats' names,
        schedule index, and the dice a seat holds at a round's start (the viewer's hand)."""
        if self.header is None:
            return None
        players, rules = self.header["players"], self.header["rules"]
        ruleset = RuleSet.from_dict(rules)
        return {"players": players, "rules": rules, "bots": self.header["bots"],
                "index": self.header.get("index"), "preset": ruleset.preset,
                "hand": hand_of(ruleset, players)}

    async def changed(self, timeout: float) -> None:
        """Return when lines come or the game ends, or after `timeout` s."""
        woken = self._woken
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(woken.wait(), timeout)

    def _wake(self) -> None:
        woken, self._woken = self._woken, asyncio.Event()
        woken.set()

    def _take(self, lines: list[dict[str, Any]]) -> None:
        for line in lines:
            if "players" in line and self.header is None:
                self.header = line
            elif line.get("end"):
                self.finished = bool(line.get("finished"))
            else:
                self.steps.append(json.dumps(public_step(line), separators=(",", ":")))

    async def _poll(self) -> None:
        """Read the file until its end line, its removal without one (its referee was
        stopped) or until nobody watches."""
        try:
            file: IO[str] = self.path.open(encoding="utf-8")
        except OSError:
            self.finished = False
            self._wake()
            return
        with file:
            reader, gone = LiveReader(file), False
            while self.watchers > 0 and not self.done:
                lines = reader.ready()
                self._take(lines)
                if reader.ended and not self.done:   # not a live file
                    self.finished = False
                if lines or self.done:
                    self._wake()
                    continue
                if gone:   # read once more after it went: lines written before are there
                    self.finished = False
                    self._wake()
                    break
                await asyncio.sleep(POLL_S)
                quiet_for = reader.quiet_for()
                gone = (quiet_for >= GONE_CHECK_S and not self.path.exists()) \
                    or quiet_for >= IDLE_S

    def join(self) -> None:
        self.watchers += 1
        if self._task is None and not self.done:
            self._task = asyncio.get_running_loop().create_task(self._poll())


class Tails:
    """The tails of this process, by path."""

    def __init__(self) -> None:
        self.by_path: dict[Path, Tail] = {}

    def join(self, path: Path) -> Tail:
        """The tail of `path`, started if nobody watched it yet; leave it with `leave`."""
        tail = self.by_path.get(path)
        if tail is None:
            tail = self.by_path[path] = Tail(path)
        tail.join()
        return tail

    def leave(self, tail: Tail) -> None:
        tail.watchers -= 1
        if tail.watchers <= 0 and self.by_path.get(tail.path) is tail:
            del self.by_path[tail.path]   # its poll sees no watcher and stops


TAILS = Tails()


async def game_events(tail: Tail, page_url: str, seen: int,
                      ident: Callable[[int], int | str] = int,
                      unseen_end: bool = True) -> AsyncIterator[str]:
    """The events of `tail`'s game: its start (when `seen` is 0), its steps after step `seen`
    (each with id `ident(step)`), keep-alive comments while it is quiet, and its end:
    {"finished", "url": page_url}. A game gone before its header was read ends with nothing
    at all when `unseen_end` is false (a stream that moves on to the next game)."""
    sent_start = seen > 0
    while True:
        # What is ready goes out as one chunk: a wake after a poll finds every step written
        # since the last one (a fast game writes dozens in 100 ms), and one send for all of
        # them costs the web process a fraction of one send each.
        ready: list[str] = []
        if not sent_start and tail.header is not None:
            sent_start = True
            ready.append(event("start", tail.start_data() or {}))
        if sent_start:
            ready.extend(f"id: {ident(step)}\nevent: step\ndata: {tail.steps[step - 1]}\n\n"
                         for step in range(seen + 1, len(tail.steps) + 1))
            seen = max(seen, len(tail.steps))   # a reconnection may be ahead of a new tail
        if tail.done and (sent_start or tail.header is None):
            if sent_start or unseen_end:
                ready.append(event("end", {"finished": bool(tail.finished), "url": page_url}))
            if ready:
                yield "".join(ready)
            return
        if ready:
            yield "".join(ready)
        if not tail.done:
            before = len(tail.steps), tail.header is None
            await tail.changed(KEEPALIVE_S)
            if (len(tail.steps), tail.header is None) == before and not tail.done:
                yield KEEPALIVE


async def follow_file(path: Path, page_url: str, seen: int) -> AsyncIterator[str]:
    """The events of the game of live file `path`, from step `seen` + 1 on, read through this
    process's shared tail of it."""
    tail = TAILS.join(path)
    try:
        async for text in game_events(tail, page_url, seen):
            yield text
    finally:
        TAILS.leave(tail)

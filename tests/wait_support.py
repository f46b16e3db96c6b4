"""Waiting in a test for something to happen: the one helper every test uses, a check polled
until it holds, with a generous bound for a busy machine (a bound for a broken run, not a
timing the test depends on)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")

BOUND_S = 900.0   # a busy machine: checks, games, builds and refits take their time


class Watched(Protocol):
    """A process a wait watches (RunnerProcess, ServerProcess): the wait ends at once when it
    stops, with its output."""

    def alive(self) -> None:
        """Raise AssertionError, with the process's output, once it has stopped."""

    def output(self) -> str:
        """What the process printed so far."""


def wait_for(what: str, test: Callable[[], T], watched: Watched | None = None, *,
             timeout: float = BOUND_S, every: float = 0.2) -> T:
    """Call `test()` every `every` s until it gives something true, and return that.

    AssertionError naming `what` once `timeout` s have passed; at once when `watched` stops
    or `test` itself raises one (say, because the process it waits on has ended)."""
    deadline = time.monotonic() + timeout
    while True:
        found = test()
        if found:
            return found
        if watched is not None:
            watched.alive()
        if time.monotonic() > deadline:
            shown = f":\n{watched.output()}" if watched is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{shown}")
        time.sleep(every)

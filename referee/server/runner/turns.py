"""The competitions' turns at the season runner's machines: round-robin, a share at a time.

Each competition's loop plays its pending games in a turn (`turn`); the turns are granted in
the order asked (first come, first served, so a competition that just had one waits behind
every other that asked meanwhile), and a turn is over once its competition started `share`
games while another competition waits (`over`): alone, a competition plays on. The games in
flight when a turn is over finish in it. So with two competitions open each plays about half
the games, whatever their paces, bots or table sizes; a paused or closed one asks for none.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

SHARE = 8   # games a competition starts in its turn while another waits


class Turns:
    """One competition at a time plays; the others wait their turn in the order they asked."""

    def __init__(self, share: int = SHARE) -> None:
        self.share = share
        self.lock = asyncio.Lock()   # fair: a waiter is served before a later acquire
        self.waiting: dict[int, int] = {}   # competition id -> its loops waiting (0 or 1)
        self.holder: int | None = None
        self.turns: dict[int, int] = {}    # competition id -> turns it had (for the log)

    @contextlib.asynccontextmanager
    async def turn(self, competition: int) -> AsyncIterator[None]:
        """Wait for the competition's turn, and hold it for the block."""
        self.waiting[competition] = self.waiting.get(competition, 0) + 1
        try:
            await self.lock.acquire()
        finally:
            self.waiting[competition] -= 1
        self.holder = competition
        self.turns[competition] = self.turns.get(competition, 0) + 1
        try:
            yield
        finally:
            self.holder = None
            self.lock.release()

    def over(self, started: int) -> bool:
        """True when the holder, having started `started` games in its turn, must give way:
        another competition waits and the holder had its share."""
        others = any(count for key, count in self.waiting.items() if key != self.holder)
        return others and started >= self.share

"""The season runner's handle on the club's database: one thread for every ORM call, so a
write waiting for SQLite's lock never holds up the event loop that plays games (and a bot's
clock)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# What the runner's queues are handed: call a synchronous ORM function on the database thread.
Db = Callable[..., Awaitable[Any]]


class Database:
    """The runner's one thread for the club's database: ORM calls never block the games."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="club-db")

    async def __call__(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    def close(self) -> None:
        self.pool.shutdown(wait=True)

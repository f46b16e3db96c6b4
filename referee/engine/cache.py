"""A bounded memo for hot paths that encode or decode the same few values again and again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CACHE_LIMIT = 4096  # entries per cache; a full cache is simply cleared (its values recur)


class BoundedCache(dict):
    """A dict that makes a missing value with `make(key)` and keeps it, up to CACHE_LIMIT
    entries: `cache[key]` costs a dict lookup once the key has been seen."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        if len(self) >= CACHE_LIMIT:
            self.clear()
        value = self[key] = self.make(key)
        return value

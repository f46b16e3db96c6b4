"""A rate limit counted per hour keeps its count for the hour: the club's cache keeps a counter
that django-ratelimit increments for longer than the hour (the file cache's default timeout of
300 s reset every hourly limit after five quiet minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner_support import Club


@pytest.mark.slow
def test_a_counter_outlives_the_hour_it_counts(tmp_path: Path) -> None:
    club = Club(tmp_path / "data")
    try:
        left = club("""
            import pickle, time
            from django.core.cache import cache
            cache.add("uploads:ann", 0, 3600)
            cache.incr("uploads:ann")          # what django-ratelimit does on each attempt
            with open(cache._key_to_file("uploads:ann"), "rb") as f:
                expires = pickle.load(f)
            result = expires - time.time()
        """)
    finally:
        club.close()
    assert left >= 3600 - 60, f"a counter incremented now expires in {left:.0f} s"

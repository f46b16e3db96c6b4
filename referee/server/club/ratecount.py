"""Every rate limit of the club server: one counter per key and fixed window, in the server's
database, shared by every web worker and kept across restarts.

A request is counted by ONE statement (an upsert that adds 1 and returns the new count), and
the limit is decided on the count that statement returned: two workers answering at once can
never both read 29 and both let a 30th through, which a read and a later write (django-ratelimit
over Django's file cache) did. A counter is deleted only once its window has ended (when some
counter of a new window is made), never to make room: filling the table with other keys resets
nothing, where the file cache deleted a third of its entries once it held 300.

The windows are fixed (an hour from the full hour, a minute from the full minute): a client may
spend a window's allowance at its end and the next one's at its start.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F

from referee.errors import UserError
from referee.server.club.models import RateCounter

HOUR = 3600

_BUMP = (f"INSERT INTO {RateCounter._meta.db_table} (key, window_start, window_end, count) "
         "VALUES (%s, %s, %s, 1) ON CONFLICT (key, window_start) DO UPDATE "
         "SET count = count + 1 RETURNING count")


class TooMany(UserError):
    """A request over a rate limit: the one line its client gets, with status 429."""


@dataclass(frozen=True)
class Bucket:
    """One counter a request is counted in: its key, the most it lets through in a window, the
    window's length in seconds, and the line a refused client reads."""

    key: str
    most: int
    window_s: int = HOUR
    why: str = "too many requests of this kind; wait a while and try again"


def key(kind: str, *who: str) -> str:
    """A counter's key: the kind of request, and a hash of who makes it (any text, bounded)."""
    digest = hashlib.sha256("\0".join(who).encode()).hexdigest()[:40]
    return f"{kind[:30]}:{digest}"


def _window(window_s: int, now: float) -> tuple[int, int]:
    start = int(now // window_s) * window_s
    return start, start + window_s


def bump(bucket: Bucket, now: float | None = None) -> int:
    """Count one request in `bucket`'s current window; the count with it (1 for the first)."""
    moment = time.time() if now is None else now
    start, end = _window(bucket.window_s, moment)
    with connection.cursor() as cursor:
        cursor.execute(_BUMP, [bucket.key, start, end])
        count = int(cursor.fetchone()[0])
    if count == 1:   # a new window's counter: the ended ones go now, and only those
        RateCounter.objects.filter(window_end__lte=int(moment)).delete()
    return count


def give_back(bucket: Bucket, now: float | None = None) -> None:
    """Take back one request counted by `bump` in the current window (one that turned out not
    to count, as a right password does for the limits on failed sign-ins)."""
    start, _end = _window(bucket.window_s, time.time() if now is None else now)
    RateCounter.objects.filter(key=bucket.key, window_start=start, count__gt=0).update(
        count=F("count") - 1)   # computed by the database: no read in Python between


def take(buckets: Sequence[Bucket]) -> None:
    """Count one request in every bucket at once, or in none: TooMany (the first full bucket's
    line) if any is full. One transaction, which takes SQLite's write lock at BEGIN
    (IMMEDIATE), so no other worker counts between the counts of one request."""
    with transaction.atomic():
        for bucket in buckets:
            if bump(bucket) > bucket.most:
                raise TooMany(bucket.why.format(most=bucket.most))   # rolls every count back


def over(bucket: Bucket) -> bool:
    """Count one request in `bucket`; True if it is over the bucket's limit (refuse it)."""
    return bump(bucket) > bucket.most


def refuse_if_over(bucket: Bucket) -> None:
    """Count one request in `bucket`; TooMany (its line) if it is over the limit."""
    if over(bucket):
        raise TooMany(bucket.why.format(most=bucket.most))

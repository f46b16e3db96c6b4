"""A bot's rating over the season: the points the runner keeps as it stores each standing, and
the chart its page draws of them.

A standing is a snapshot of the whole table, and only the newest few are kept (STANDINGS_KEPT),
so the story of one bot lives in a row of its own (RatingHistory): one point per version and
refit that rated new games of it. The row stays small however long the season runs: past
HISTORY_POINTS, every other older point is dropped (the chart keeps its shape, with half the
detail in the past).

The chart is an inline SVG drawn on the server (the pages' Content-Security-Policy runs no
script but the club's own files, and no library is needed for a line and a band): the strength
as a line with a dot per point, its 95% interval as a band, one colour per version; its colours
come from club.css (no style attribute). The runner draws it when a standing adds points (a
few ms for 200 points), and pages show it as drawn: no request draws it.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString

from referee.league.tables import Row
from referee.server.shared.timehtml import local_time

HISTORY_POINTS = 200     # at most this many points per bot
WIDTH, HEIGHT = 360, 176   # the chart's drawing units; it scales down to a phone's 390 px
# margins: the strength axis' labels on the left, the time axis' labels below
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 8, 24
VERSION_COLOURS = 4      # versions cycle through the classes v0..v3 of club.css

Point = list[float]   # [time, version, games, strength, low, high]


def _number(value: Any) -> float | None:
    """A finite number, or None (a standing keeps None where the fit had no value)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def grown(points: list[Point], rows: list[tuple[int | None, Row]], when: float) -> list[Point]:
    """`points` with a point at `when` for each of the bot's standing `rows` (version number
    and table row, one per version) that rated games its last point did not have; thinned to
    HISTORY_POINTS."""
    last_games = {int(p[1]): p[2] for p in points}   # a version's latest point wins
    added = []
    for version, row in rows:
        games = _number(row.games)
        strength, lo, hi = (_number(value) for value in
                            (row.strength, row.strength_low, row.strength_high))
        if not isinstance(version, int) or games is None or strength is None or lo is None \
                or hi is None:
            continue
        if games > 0 and last_games.get(version) != games:
            added.append([when, version, games, strength, lo, hi])
    return thinned(points + sorted(added, key=lambda p: p[1])) if added else points


def thinned(points: list[Point]) -> list[Point]:
    """At most HISTORY_POINTS points: while more, every other point but the newest is dropped
    (the old ones thin out, the newest stays)."""
    while len(points) > HISTORY_POINTS:
        points = points[:-1][::2] + points[-1:]
    return points


def rating_chart(points: list[Point]) -> str:
    """The chart of `points` with a line saying from when to when (times for club/times.js),
    or "" without points: what a bot page shows under "Rating over the season"."""
    valid = _valid(points)
    if not valid:
        return ""
    return str(format_html('{}<p class="hint">Strength (line) and its 95% interval (band) at '
                           'each refit, one colour per version, from {} to {}.</p>',
                           chart_svg(valid), local_time(valid[0][0]),
                           local_time(valid[-1][0])))


def chart_svg(points: list[Point]) -> SafeString:
    """The chart of a bot's points as an inline <svg> (empty without points): per version, its
    interval as a band and its strength as a line with a dot (and a tooltip) per point. Only
    numbers reach it (`_valid`), so it is written without escaping, for speed."""
    points = _valid(points)
    if not points:
        return SafeString("")
    t0, t1 = points[0][0], points[-1][0]
    low = min(min(p[4] for p in points), 0.0)
    high = max(max(p[5] for p in points), 0.0)
    pad = max((high - low) * 0.05, 1.0)
    low, high = low - pad, high + pad

    def x(t: float) -> float:
        span = WIDTH - LEFT - RIGHT
        return LEFT + (span / 2 if t1 == t0 else (t - t0) / (t1 - t0) * span)

    def y(value: float) -> float:
        return TOP + (high - value) / (high - low) * (HEIGHT - TOP - BOTTOM)

    parts = [_axis(y, low, high), _time_axis(x, t0, t1)]
    versions = sorted({int(p[1]) for p in points})
    for n, version in enumerate(versions):
        mine = [p for p in points if int(p[1]) == version]
        parts.append(_version(mine, version, f"v{n % VERSION_COLOURS}", x, y))
    return SafeString(f'<svg class="chart" id="rating-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
                      f'role="img" aria-label="strength over the season, with its 95% '
                      f'interval">{"".join(parts)}</svg>')


def _valid(points: Any) -> list[Point]:
    """The well-formed points of a stored history, as finite floats, in time order (a row
    written by anything but `grown` loses what is not a point, never reaching the page as
    text: only numbers formatted as numbers are written)."""
    kept = []
    for point in points if isinstance(points, list) else []:
        try:
            values = [float(v) for v in point]
        except (TypeError, ValueError):
            continue
        if len(values) == 6 and math.isfinite(sum(values)):
            kept.append(values)
    return sorted(kept, key=lambda p: p[0])


def _axis(y: Any, low: float, high: float) -> str:
    """The zero line and the strength axis' labels (its ends, rounded)."""
    marks = [(math.floor(high), "edge"), (0, "zero"), (math.ceil(low), "edge")]
    return "".join(f'<line class="{kind}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" '
                   f'y2="{y(v):.1f}"/><text class="axis" x="{LEFT - 3}" y="{y(v) + 3:.1f}" '
                   f'text-anchor="end">{v:+d}</text>' for v, kind in marks)


def _time_axis(x: Any, t0: float, t1: float) -> str:
    """The time axis: a baseline and ticks at the first point, the middle and the last point
    (one tick when they are one moment), each labelled with its day and time: in UTC as
    drawn, rewritten into the reader's zone by club/times.js (its `data-datetime`)."""
    base = HEIGHT - BOTTOM + 2
    moments = [t0] if t1 == t0 else [t0, (t0 + t1) / 2, t1]
    anchors = ["middle"] if t1 == t0 else ["start", "middle", "end"]
    parts = [f'<line class="edge" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}"/>']
    for moment, anchor in zip(moments, anchors, strict=True):
        at = datetime.fromtimestamp(moment, tz=UTC)
        px = x(moment)
        parts.append(f'<line class="edge" x1="{px:.1f}" x2="{px:.1f}" y1="{base}" '
                     f'y2="{base + 3}"/><text class="axis local" x="{px:.1f}" '
                     f'y="{base + 13}" text-anchor="{anchor}" '
                     f'data-datetime="{at:%Y-%m-%dT%H:%M:%SZ}">{at:%m-%d %H:%M} UTC</text>')
    return "".join(parts)


def _version(points: list[Point], version: int, colour: str, x: Any, y: Any) -> str:
    """One version's band, line and dots."""
    xs = [f"{x(p[0]):.1f}" for p in points]
    ys = [f"{y(p[3]):.1f}" for p in points]
    band = " ".join(f"{px},{y(p[5]):.1f}" for px, p in zip(xs, points, strict=True))
    band += " " + " ".join(f"{px},{y(p[4]):.1f}"
                           for px, p in zip(reversed(xs), reversed(points), strict=True))
    line = " ".join(f"{px},{py}" for px, py in zip(xs, ys, strict=True))
    dots = "".join(f'<circle class="point" cx="{px}" cy="{py}" r="2.5"><title>v{version}: '
                   f'{p[2]:.0f} games, {p[3]:+.0f} [{p[4]:+.0f}, {p[5]:+.0f}]</title></circle>'
                   for px, py, p in zip(xs, ys, points, strict=True))
    return (f'<g class="version {colour}" data-version="{version}"><polygon class="band" '
            f'points="{band}"/><polyline class="line" points="{line}"/>{dots}</g>')

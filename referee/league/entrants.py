"""Growing a league after it started: more blocks of games, and bots that join late.

* `more_games` appends a block of games between all the league's bots: a balanced schedule of
  its own (schedule.py), seeded one-way from the league secret and the block's number, with
  indexes and groups after the stored ones. `--until-settled` plays such blocks until every
  pair of neighbours in the table is separated.
* `newcomer_games` schedules games for bots added to a league (`--add`): each newcomer gets
  about as many games as the average bot already has, at tables with bots of the field (least
  met first), its seat cycling through every seat. Stored games are never touched; the league
  is then re-rated with all of them.

`entrant_tables` is the table-maker both this and the gauntlet use.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterator, Sequence

from referee.league.schedule import ScheduledGame, make_schedule, table_sizes
from referee.util.seeds import keyed_seed


def entrant_tables(entrant: str, field: Sequence[str], sizes: Sequence[int],
                   rng: random.Random, used: dict[str, int]) -> Iterator[tuple[str, ...]]:
    """Endless tables (bot per seat) for `entrant` against `field`: sizes in turn; opponents
    the entrant has met least, then those `used` least (shared between entrants, updated),
    seeded tie-breaks; opponents in a seeded seat order; the entrant's seat cycles through every
    seat of each table size."""
    met = dict.fromkeys(field, 0)
    turn = dict.fromkeys(sizes, 0)
    for table in range(2**63):
        size = sizes[table % len(sizes)]
        noise = {name: rng.random() for name in field}
        opponents = sorted(field, key=lambda n: (met[n], used[n], noise[n]))[: size - 1]  # noqa: B023
        rng.shuffle(opponents)
        for name in opponents:
            met[name] += 1
            used[name] += 1
        seat = turn[size] % size
        turn[size] += 1
        yield (*opponents[:seat], entrant, *opponents[seat:])


def _after(schedule: Sequence[ScheduledGame]) -> tuple[int, int]:
    """The next free index and group of a stored schedule."""
    return len(schedule), max((g.group for g in schedule), default=-1) + 1


def more_games(schedule: Sequence[ScheduledGame], bots: Sequence[str], games: int,
               players: tuple[int, int], secret: int, duplicate: bool,
               block: int) -> list[ScheduledGame]:
    """Block number `block` (1, 2, ... after the first schedule) of `games` games between
    `bots`, numbered after `schedule`."""
    index, group = _after(schedule)
    fresh = make_schedule(bots, games, players, keyed_seed(secret, "block", block), duplicate)
    return [dataclasses.replace(game, index=index + game.index, group=group + game.group)
            for game in fresh]


def newcomer_games(schedule: Sequence[ScheduledGame], field: Sequence[str],
                   newcomers: Sequence[str], players: tuple[int, int], secret: int,
                   duplicate: bool, addition: int,
                   share: float | None = None) -> list[ScheduledGame]:
    """Games for `newcomers` against `field` (the bots already in the league), numbered after
    `schedule`: each newcomer gets about the average number of games a field bot has (or
    `share` games, when given; at least one table). Newcomers take turns table by table. With
    `duplicate`, each table is played in every rotation of its seats with one seed.
    `addition` numbers the call (seeds differ)."""
    seats = sum(len(game.bots) for game in schedule)
    average = share if share is not None else seats / len(field) if field else 0
    sizes = table_sizes(len(field) + 1, players)
    mean_size = sum(sizes) / len(sizes)
    tables = max(1, math.ceil(average / mean_size) if duplicate else round(average))
    rng = random.Random(keyed_seed(secret, "add", addition, "schedule"))
    used = dict.fromkeys(field, 0)
    makers = [entrant_tables(name, field, sizes, rng, used) for name in newcomers]
    index, group = _after(schedule)
    games: list[ScheduledGame] = []
    for _ in range(tables):
        for maker in makers:
            seated = list(next(maker))
            seed = keyed_seed(secret, "add", addition, "game", group)
            rotations = ([seated[k:] + seated[:k] for k in range(len(seated))] if duplicate
                         else [seated])
            for rotation, bots in enumerate(rotations):
                games.append(ScheduledGame(index, tuple(bots), seed, group, rotation))
                index += 1
            group += 1
    return games

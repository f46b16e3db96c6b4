"""Where a league's games are played: a pool on this machine, or a dask.distributed cluster.

An executor starts (or checks) the bots, then plays scheduled games and hands back each result
as it arrives; the one loop that calls them (referee/league/playing.py) stores each result,
and the league, season or gauntlet keeps the schedule and the ratings. `make_executor` picks
one: the dask one (and dask itself) is imported only for a league with a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from referee.bots.errors import BotStartError
from referee.bots.spec import BotSpec
from referee.engine import RuleSet
from referee.game.match import MatchOptions, MatchResult
from referee.league.schedule import ScheduledGame

GameId = Callable[[ScheduledGame], str]
Save = Callable[[ScheduledGame, MatchResult], None]
Stop = Callable[[], bool]


class Executor(Protocol):
    """Plays a league's games; used as `async with executor:` (stopping bots at the end)."""

    async def start(self, skip_broken: bool) -> tuple[dict[str, str], list[BotStartError]]:
        """Start or check every bot: the versions of those that can play, and the broken ones
        (raising the first BotStartError unless `skip_broken`)."""
        ...

    async def play(self, games: Sequence[ScheduledGame], rules: RuleSet, options: MatchOptions,
                   game_id: GameId, save: Save, stop: Stop | None = None) -> None:
        """Play `games` (submitted in this order) and `save` each result as it arrives. When
        `stop()` turns true no further game starts; the games in flight finish and are saved."""
        ...

    async def __aenter__(self) -> Executor: ...

    async def __aexit__(self, *exc: object) -> None: ...


def make_executor(specs: list[BotSpec], *, concurrency: int, sandbox: bool | None,
                  cluster: str | None = None, versions: dict[str, str] | None = None,
                  league: str = "", connection: Any = None,
                  live: Path | None = None) -> Executor:
    """The executor for a league: local, or on `cluster` (an address or "local:N"), through
    `connection` if given (a dask.Cluster already entered, which the executor leaves open).

    `versions` are the league's stored bot versions when it is resumed: a cluster refuses to
    play a bot whose files no longer match them; `league` (its output directory) names the
    league's bots on the workers, so a resumed league replaces what the killed one left.
    `live` is the folder where games played on this machine write their live files for
    watchers (referee.game.livefile); games on a cluster's workers write none."""
    if cluster:
        from referee.util.extras import require

        require("distributed", "--cluster")
        from referee.league.executors.dask import DaskExecutor

        return DaskExecutor(cluster, specs, concurrency=concurrency,
                            sandbox=sandbox, versions=versions, league=league,
                            cluster=connection)
    from referee.league.executors.local import LocalExecutor

    return LocalExecutor(specs, concurrency=concurrency, sandbox=sandbox, live=live)

"""Games on this machine: one roster of bots, J games in flight on one event loop."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.bots.errors import BotStartError
from referee.bots.runtime import Lease, Roster
from referee.bots.spec import BotSpec, Limits
from referee.engine import RuleSet
from referee.game.livefile import LiveFolder
from referee.game.match import AbsentBot, MatchOptions, MatchResult, Observer, play_match
from referee.league.executors import GameId, Save, Stop
from referee.league.schedule import ScheduledGame


async def play_on_roster(roster: Roster, rules: RuleSet, game: ScheduledGame, game_id: str,
                         options: MatchOptions,
                         versions: dict[str, str] | None = None,
                         observer: Observer | None = None,
                         absent: Mapping[str, str] | None = None) -> MatchResult:
    """Lease a place for every seat of `game`, play it, and give the places back.

    Each rotation of a duplicate table is played by instances of its own pool, so no bot
    process sees one deal twice (R51). A bot that died and cannot be restarted (or was left out
    on --resume --skip-broken) takes its seat as an AbsentBot: it forfeits the game from the
    start, with the reason. With `versions`, a seat whose instance runs another
    version than the league's raises BotStartError before the game starts. `observer` hears
    each step of the game (play_match's). The bots named in `absent` (bot -> why) forfeit
    from the start without being asked to start (a cluster's bot that no worker can run)."""
    leases: list[Lease] = []
    seats: list[Lease | AbsentBot] = []
    try:
        for name in game.bots:
            runner = roster.runners.get(name)
            if absent and name in absent:
                seats.append(AbsentBot(name, runner.version if runner else "", Limits(),
                                       absent[name]))
                continue
            if runner is None:   # skipped on --resume --skip-broken: it did not start
                seats.append(AbsentBot(name, "", Limits(), "it did not start for this run"))
                continue
            try:
                lease = await runner.lease(pool=game.rotation)
            except BotStartError as exc:   # it died and cannot be restarted: it forfeits
                seats.append(AbsentBot(name, runner.version, runner.spec.limits, exc.reason))
                continue
            leases.append(lease)
            seats.append(lease)
            if versions is not None and lease.version != versions[name]:
                raise BotStartError(name, f"runs version {lease.version}, the league's is "
                                          f"{versions[name]}")
        return await play_match(rules, seats, game.seed, game_id, options, observer)
    finally:
        for lease in leases:
            await lease.runner.release(lease)


class LocalExecutor:
    """The bots run here, started once and reused; `concurrency` games at once."""

    def __init__(self, specs: list[BotSpec], *, concurrency: int, sandbox: bool | None,
                 live: Path | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.sandbox = sandbox
        self.roster = self._roster(specs)
        self.absent: dict[str, str] = {}   # bots that could not start -> why: they forfeit
        # Each game in play has a file there that watchers follow (referee.game.livefile).
        self.live = LiveFolder(live) if live is not None else None
        if self.live is not None:
            self.live.clear()

    def _roster(self, specs: list[BotSpec]) -> Roster:
        roster = Roster(specs, sandbox=self.sandbox)
        for runner in roster.runners.values():
            runner.max_instances = max(runner.max_instances, self.concurrency)
        return roster

    async def add(self, specs: list[BotSpec]) -> list[BotStartError]:
        """Start bots that join while the others stay up (a season's entrants); those that
        cannot start are returned and left out (their seats forfeit)."""
        joining = self._roster(specs)
        broken = await joining.start(skip_broken=True)
        self.roster.runners.update(joining.runners)
        self.absent.update((error.bot, error.reason) for error in broken)
        return broken

    async def start(self, skip_broken: bool) -> tuple[dict[str, str], list[BotStartError]]:
        """Start every bot here."""
        broken = await self.roster.start(skip_broken=skip_broken)
        self.absent.update((error.bot, error.reason) for error in broken)
        return {name: runner.version for name, runner in self.roster.runners.items()}, broken

    async def play(self, games: Sequence[ScheduledGame], rules: RuleSet, options: MatchOptions,
                   game_id: GameId, save: Save, stop: Stop | None = None) -> None:
        """Play `games` `concurrency` at a time, in schedule order as places free up, until
        `stop()` (asked before each game) turns true."""
        pending = deque(games)

        async def worker() -> None:
            while pending and not (stop and stop()):
                game = pending.popleft()
                await self._play_one(game, rules, options, game_id(game), save)

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    async def _play_one(self, game: ScheduledGame, rules: RuleSet, options: MatchOptions,
                        game_id: str, save: Save) -> None:
        """Play one game, its steps written to its live file, and save it; the live file
        goes once the record is saved (or the game is stopped)."""
        live = (self.live.game(game_id, list(game.bots), game.index)
                if self.live is not None else None)
        saved = False
        try:
            result = await play_on_roster(self.roster, rules, game, game_id, options,
                                          observer=live.observe if live is not None else None,
                                          absent=self.absent)
            save(game, result)
            saved = True
        finally:
            if live is not None:
                live.finish(saved)

    async def __aenter__(self) -> LocalExecutor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.roster.stop()

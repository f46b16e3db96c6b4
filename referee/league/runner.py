"""Running a league: start the bots once, play the scheduled games J at a time, store each one.

Results never depend on the order games finish in: every game is determined by its schedule
entry (bots per seat, seed), and ratings are applied in schedule order (ratings.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.errors import BotStartError
from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec, load_spec
from referee.config import ConfigError
from referee.engine import RuleSet
from referee.league.config import LeagueSettings
from referee.league.intervals import Standings, standings
from referee.league.progress import Progress
from referee.league.ratings import RatingParams, Ratings, rate_games
from referee.league.results import PlayedGame
from referee.league.schedule import Balance, ScheduledGame, balance, make_schedule
from referee.league.store import LeagueStore
from referee.league.tables import Row, head_to_head, league_table, write_tables
from referee.match import MatchOptions, play_match

DB_NAME = "league.db"


@dataclass
class LeagueOutcome:
    """What a league run produced (also rebuilt from the store by `load_outcome`)."""

    out: Path
    bots: list[str]
    schedule: list[ScheduledGame]
    games: list[PlayedGame]
    ratings: Ratings
    rows: list[Row]
    h2h: dict
    balance: Balance
    rules: dict                 # the league's rule set, as stored
    played_now: int = 0
    broken: list[BotStartError] = field(default_factory=list)
    standings: Standings | None = None     # the global fit with its intervals

    @property
    def pairwise(self) -> dict[tuple[str, str], float]:
        """P(a finishes ahead of b) from the global fit, in table order."""
        if self.standings is None:
            return {}
        order, ahead = self.standings.order, self.standings.ahead
        return {(a, b): ahead[a, b] for a in order for b in order if (a, b) in ahead}

    @property
    def finished(self) -> bool:
        """True when every scheduled game is recorded."""
        return len(self.games) == len(self.schedule)


class LeagueStateError(ConfigError):
    """The output directory holds a league that this command cannot continue as asked."""


def _with_limits(spec: BotSpec, overrides: dict[str, int]) -> BotSpec:
    if not overrides:
        return spec
    try:
        return dataclasses.replace(spec, limits=dataclasses.replace(spec.limits, **overrides))
    except TypeError as exc:
        raise ConfigError(f"league limits: {exc}") from None


def open_store(out: Path) -> LeagueStore:
    """The store of the league in `out`."""
    return LeagueStore(out / DB_NAME)


def load_outcome(store: LeagueStore, played_now: int = 0) -> LeagueOutcome:
    """Ratings and tables of the league in `store`, from its records alone."""
    settings = store.settings()
    if settings is None:
        raise LeagueStateError(f"{store.path}: no league here")
    bots = settings["bot_names"]
    schedule = store.schedule()
    games = store.played()
    params = RatingParams(**settings["ratings"])
    ratings = rate_games(games, bots, params)
    fit = league_standings(games, bots, schedule, settings["seed"])
    rows = league_table(games, bots, ratings, fit)
    return LeagueOutcome(store.path.parent, bots, schedule, games, ratings, rows,
                         head_to_head(games, bots), balance(schedule, bots), settings["rules"],
                         played_now, standings=fit)


def league_standings(games: list[PlayedGame], bots: list[str], schedule: list[ScheduledGame],
                     seed: int) -> Standings:
    """The global fit of a league's games with bootstrap intervals: the rotations of one
    duplicate table are resampled together (their schedule group)."""
    groups = {game.index: game.group for game in schedule}
    return standings(games, bots, seed, groups)


def write_outputs(outcome: LeagueOutcome) -> None:
    """Write the tables (Markdown, CSV, JSON) next to the database."""
    extra = {"rules": outcome.rules.get("preset"), "games_recorded": len(outcome.games),
             "games_scheduled": len(outcome.schedule)}
    write_tables(outcome.out, outcome.rows, outcome.h2h, extra, outcome.pairwise)


async def run_league(settings: LeagueSettings, progress: Progress | None = None,
                     resume: bool = False) -> LeagueOutcome:
    """Create (or, with `resume`, continue) the league in `settings.out`, play it, and write
    its tables there."""
    progress = progress or Progress()
    store = open_store(settings.out)
    try:
        stored = store.settings()
        if stored is not None:
            specs, rules, options = _resume_setup(store, stored, settings, resume)
            if store.done() >= {g.index for g in store.schedule()}:
                outcome = load_outcome(store)
                write_outputs(outcome)
                return outcome
        else:
            specs = [_with_limits(load_spec(path), settings.limits) for path in settings.bots]
            rules = settings.rules
            options = MatchOptions(settings.strikes_to_forfeit, settings.autoplay_forced)
        return await _play(store, settings, specs, rules, options, progress, stored is None)
    finally:
        store.close()


def _resume_setup(store: LeagueStore, stored: dict, settings: LeagueSettings,
                  resume: bool) -> tuple[list[BotSpec], RuleSet, MatchOptions]:
    finished = store.done() >= {g.index for g in store.schedule()}
    if not finished and not resume:
        raise LeagueStateError(f"{settings.out} holds an unfinished league: add --resume to "
                               f"continue it, or choose another --out")
    rules = RuleSet.from_dict(stored["rules"])
    options = MatchOptions(stored["strikes_to_forfeit"], stored["autoplay_forced"])
    specs = []
    for name, (_, path) in store.bots().items():
        if name not in stored["bot_names"]:
            continue
        if path is None or not Path(path).exists():
            raise LeagueStateError(f"bot {name!r}: its spec {path} is gone; cannot resume")
        specs.append(_with_limits(load_spec(path), stored["limits"]))
    return specs, rules, options


async def _play(store: LeagueStore, settings: LeagueSettings, specs: list[BotSpec],
                rules: RuleSet, options: MatchOptions, progress: Progress,
                new: bool) -> LeagueOutcome:
    if new:
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise ConfigError(f"two bot specs share a name: {sorted(names)}")
        low, high = settings.table_sizes(len(specs))
        concurrency = settings.concurrency or settings.default_concurrency(high)
    else:
        concurrency = settings.concurrency or settings.default_concurrency(
            max(len(g.bots) for g in store.schedule()))
    roster = Roster(specs, sandbox=settings.sandbox)
    for runner in roster.runners.values():
        runner.max_instances = max(runner.max_instances, concurrency)
    async with roster:
        broken = await roster.start(skip_broken=settings.skip_broken and new)
        if new:
            working = [spec.name for spec in specs if spec.name in roster.runners]
            low, high = settings.table_sizes(len(working))
            schedule = make_schedule(working, settings.game_count(len(working)), (low, high),
                                     settings.seed, settings.duplicate)
            defining = {**settings.defining(), "bot_names": working,
                        "games": len(schedule), "players": [low, high]}
            store.create(defining, {r.name: (r.version, str(r.spec.path))
                                    for r in roster.runners.values()}, schedule)
        else:
            for runner in roster.runners.values():
                store.update_bot(runner.name, runner.version, str(runner.spec.path))
        schedule = store.schedule()
        done = store.done()
        pending = deque(game for game in schedule if game.index not in done)
        progress.start(len(schedule), len(done))
        prefix = f"s{store.settings()['seed']}"  # type: ignore[index]

        async def worker() -> None:
            while pending:
                game = pending.popleft()
                leases = []
                try:
                    for name in game.bots:
                        leases.append(await roster.runners[name].lease())
                    result = await play_match(rules, leases, game.seed,
                                              f"{prefix}-g{game.index}", options)
                finally:
                    for lease in leases:
                        await lease.runner.release(lease)
                store.save(game, result)
                progress.game_done(result)

        try:
            await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
        finally:
            progress.close()
    outcome = load_outcome(store, progress.played)
    outcome.broken = broken
    write_outputs(outcome)
    return outcome

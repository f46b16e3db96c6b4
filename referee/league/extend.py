"""Leagues that grow: `--until-settled` (more blocks until the table is separated) and `--add`
(bots that join a league already started). The schedules come from entrants.py; the games
are played by the ordinary league runner, so resuming, determinism and tables work as usual.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.lineup import refusals
from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec, load_spec
from referee.league.config import LeagueSettings
from referee.league.entrants import more_games, newcomer_games
from referee.league.folder import LeagueFolder
from referee.league.outcome import (
    LeagueOutcome,
    LeagueStateError,
    load_outcome,
    read_settings,
    separation_rule,
)
from referee.league.progress import Progress
from referee.league.runner import Publish, open_store, run_league
from referee.league.stored import GAUNTLET, read_league, store_changes
from referee.ratings.intervals import Standings

BLOCKS = 10   # default budget of --until-settled: this many blocks of --games


@dataclass
class Settled:
    """A league played until settled: its outcome and the neighbours still not separated."""

    outcome: LeagueOutcome
    unresolved: list[tuple[str, str]] = field(default_factory=list)
    blocks: int = 1
    looks: int = 1      # the most blocks the budget allows: the looks the test allows for


async def run_until_settled(settings: LeagueSettings, progress: Progress | None = None,
                            max_games: int | None = None, resume: bool = False,
                            accept_changed: bool = False,
                            announce: Callable[[str], None] | None = None,
                            publish: Publish | None = None) -> Settled:
    """Play the league, then further blocks of games (each a balanced schedule of the league's
    game count) until every pair of neighbours in the table is separated or the schedule
    holds `max_games` games (default: 10 blocks).

    The table is looked at after every block, so two equal bots would be separated by luck at
    one look or another far more often than 5% of the time at 95% per look: the stopping rule
    allows for every look the budget permits (intervals.py, `looks`), and the table's marks
    use the same rule. `announce` is told, before each new block, why it is played."""
    progress = progress or Progress()
    announce = announce or (lambda _line: None)
    publish = publish or (lambda _outcome: None)   # it is called here too
    outcome = await run_league(settings, progress, resume=resume, accept_changed=accept_changed,
                               publish=publish)
    blocks = 1
    while True:
        store = open_store(outcome.out)
        try:
            stored = read_settings(store)
            block = stored.games_asked or stored.games
            budget = max_games if max_games is not None else BLOCKS * block
            looks = max(1, math.ceil(budget / block))
            if stored.looks != looks:   # the first check: rate as the rule does
                looked = dataclasses.replace(stored, looks=looks)
                store_changes(store, stored, looked)
                stored = looked
                reloaded = load_outcome(store, outcome.played_now)
                reloaded.broken, reloaded.notes = outcome.broken, outcome.notes
                outcome = reloaded
                publish(outcome)
            assert outcome.standings is not None
            unresolved = outcome.standings.unresolved()
            schedule = store.schedule()
            room = budget - len(schedule)
            blocks = stored.blocks
            if not unresolved or room <= 0:
                return Settled(outcome, unresolved, blocks, looks)
            blocks += 1
            games = more_games(schedule, list(stored.bot_names), min(block, room),
                               stored.players, stored.secret, stored.duplicate, blocks - 1)
            announce(block_reason(outcome.standings, unresolved, blocks, looks, len(games),
                                  len(schedule)))
            store_changes(store, stored, dataclasses.replace(
                stored, blocks=blocks, games=len(schedule) + len(games)), games=games)
        finally:
            store.close()
        outcome = await run_league(settings, progress, resume=True,
                                   accept_changed=accept_changed, publish=publish)


def block_reason(fit: Standings, unresolved: list[tuple[str, str]], block: int, looks: int,
                 games: int, played: int) -> str:
    """Why block `block` is played: the neighbours not yet separated, with their gaps."""
    rule = separation_rule(fit)
    pairs = []
    for upper, lower in unresolved:
        gap = fit.gap_z(upper, lower)
        pairs.append(f"{upper} ~ {lower}" + (f" (z {gap:.2f})" if gap is not None else ""))
    return (f"block {block} of at most {looks}: {games} more games after {played}, because "
            f"not separated ({rule}): {', '.join(pairs)}")


async def add_bots(settings: LeagueSettings, paths: list[Path],
                   progress: Progress | None = None,
                   accept_changed: bool = False,
                   publish: Publish | None = None) -> LeagueOutcome:
    """Add the bots of `paths` to the league in `settings.out` (finished or not), schedule
    their games against the bots already there, and play every game not yet recorded.

    A bot whose spec file is already in the league is refused; a new bot whose name is taken
    (a new version of a bot) becomes a separate entry named NAME-2, NAME-3, ... Newcomers are
    started once before anything is stored, so a bot that cannot start changes nothing.
    """
    out = settings.out
    folder = LeagueFolder(out)
    if not folder.store_path.exists():
        raise LeagueStateError(f"--add: {out} holds no league ({folder.store_path.name}); "
                               f"start one first")
    store = folder.open_store()
    try:
        stored = read_league(store)
        if stored is None or stored.kind == GAUNTLET:
            raise LeagueStateError(f"--add: {out} holds no league")
        known = store.bots()
        newcomers = _entries(paths, known)
        # A newcomer may not share or hold the folder of a bot already in the league.
        present = [dataclasses.replace(load_spec(path), name=name)
                   for name, (_, path) in known.items() if path and Path(path).exists()]
        refused = refusals([*present, *newcomers], settings.shared_folders)
        if refused:
            raise refused[0][1]
        versions = await _versions(newcomers, settings.sandbox)
        schedule = store.schedule()
        additions = stored.additions + 1
        names = [spec.name for spec in newcomers]
        games = newcomer_games(schedule, list(stored.bot_names), names, stored.players,
                               stored.secret, stored.duplicate, additions)
        store_changes(store, stored, dataclasses.replace(
            stored, bot_names=(*stored.bot_names, *names), additions=additions,
            games=len(schedule) + len(games)),
            {spec.name: (versions[spec.name], str(spec.path)) for spec in newcomers}, games)
    finally:
        store.close()
    resumed = LeagueSettings(bots=[], out=out, concurrency=settings.concurrency,
                             sandbox=settings.sandbox, cluster=settings.cluster)
    return await run_league(resumed, progress, resume=True, accept_changed=accept_changed,
                            publish=publish)


def _entries(paths: list[Path], known: dict[str, tuple[str, str | None]]) -> list[BotSpec]:
    """The newcomers' specs under the names they will have in the league."""
    taken = set(known)
    given = {str(Path(path).resolve()): name for name, (_, path) in known.items() if path}
    specs = []
    for path in paths:
        spec = load_spec(path)
        if str(Path(path).resolve()) in given:
            raise LeagueStateError(f"--add {path}: already in the league as "
                                   f"{given[str(Path(path).resolve())]!r}")
        name, n = spec.name, 2
        while name in taken:
            name, n = f"{spec.name}-{n}", n + 1
        taken.add(name)
        given[str(Path(path).resolve())] = name
        specs.append(dataclasses.replace(spec, name=name))
    return specs


async def _versions(specs: list[BotSpec], sandbox: bool | None) -> dict[str, str]:
    """Start the newcomers once (so that one that cannot start stops `--add` before anything
    is stored) and return their versions."""
    roster = Roster(specs, sandbox=sandbox)
    async with roster:
        await roster.start()
        return {runner.name: runner.version for runner in roster.runners.values()}

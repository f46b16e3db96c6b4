"""Playing a single game between bot specs (what `referee match` does)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec
from referee.engine import RuleSet
from referee.game.match import MatchOptions, MatchResult, Observer, play_match
from referee.util.seeds import keyed_seed, opaque_id


async def play_one(
    specs: Sequence[BotSpec],
    rules: RuleSet,
    seed: int,
    *,
    observer: Observer | None = None,
    options: MatchOptions | None = None,
    sandbox: bool | None = None,
) -> MatchResult:
    """Start the bots, play one game with specs[i] in seat i, stop the bots."""
    # R51: the game seed and id come one-way from the secret `seed`; neither reveals it.
    return await play_seeded(specs, rules, keyed_seed(seed, "match"), opaque_id(seed, "match"),
                             observer=observer, options=options, sandbox=sandbox)


async def play_seeded(
    specs: Sequence[BotSpec],
    rules: RuleSet,
    game_seed: int,
    game_id: str,
    *,
    observer: Observer | None = None,
    options: MatchOptions | None = None,
    sandbox: bool | None = None,
) -> MatchResult:
    """`play_one` of a game whose seed and id are drawn already (a scheduled game's)."""
    rules.check_players(len(specs))
    async with Roster(list(specs), sandbox=sandbox) as roster:
        await roster.start()
        leases = [await roster.runners[spec.name].lease() for spec in specs]
        try:
            return await play_match(rules, leases, game_seed, game_id, options, observer)
        finally:
            for lease in leases:
                await lease.runner.release(lease)


def run_match(specs: Sequence[BotSpec], rules: RuleSet, seed: int, *,
              observer: Observer | None = None, replay: Path | None = None,
              options: MatchOptions | None = None, sandbox: bool | None = None) -> MatchResult:
    """Synchronous `play_one`; with `replay`, write the game record (JSON) there."""
    result = asyncio.run(play_one(specs, rules, seed, observer=observer, options=options,
                                  sandbox=sandbox))
    if replay is not None:
        replay.write_text(json.dumps(result.record.to_json(), indent=1) + "\n", encoding="utf-8")
    return result

"""The gauntlet: is a candidate bot better than its baseline, against a field of opponents?

Games come in pairs (referee/ratings/sprt.py): pair k is one table of opponents from the field,
in fixed seats, with one game seed derived one-way from the gauntlet's secret seed; game 2k
seats the candidate in the tested seat, game 2k+1 the baseline in the same seat, and both
have the same (opaque) game id. The opponents of the two games are separate bot instances, so
no process sees one deal twice (R51). Opponents are chosen so that each field bot plays about
equally often, and the tested seat cycles through every seat.

Like a league, a gauntlet lives in one SQLite store (`LeagueFolder.gauntlet_store`) written a
game at a time, and `--resume` continues it. Its games play through the league's one loop
(referee/league/playing.py) on an executor: this machine's pool, or a dask cluster with
`--cluster`. The verdict is taken over the pairs in schedule order, stopping at the first pair
that crosses a bound: games that finished after that (still in flight when the test stopped)
are kept but never change it, so the verdict is the same at any concurrency, on a cluster and
after any interruption.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.bots.lineup import refusals
from referee.bots.spec import BotSpec, load_spec
from referee.engine import RuleSet, preset
from referee.game.match import MatchOptions, MatchResult
from referee.league.config import LeagueSettings
from referee.league.entrants import entrant_tables
from referee.league.executors import make_executor
from referee.league.folder import LeagueFolder
from referee.league.playing import play_schedule
from referee.league.schedule import ScheduledGame, table_sizes
from referee.league.store import LeagueStore, remove_database
from referee.league.stored import (
    GAUNTLET,
    LimitCeiling,
    StoredGauntlet,
    StoredLeague,
    read_league,
    store_league,
)
from referee.ratings.plackett import finishing_groups
from referee.ratings.results import PlayedGame
from referee.ratings.sprt import (
    TEST_NAME,
    Pair,
    SequentialTest,
    SprtParams,
    SprtState,
    delta_by_size,
    elo_gap,
    seat_results,
    trail,
)
from referee.ratings.trueskill import RatingParams
from referee.util.config import ConfigError
from referee.util.extras import require
from referee.util.outdir import missing_folders, remove_if_empty
from referee.util.seeds import draw_secret, keyed_seed, opaque_id

DEFAULT_OUT = Path("gauntlet-out")
_TESTED = "\0tested"   # the tested seat while tables are made (no bot has this name)


@dataclass
class GauntletSettings:
    """Everything that defines a gauntlet and how it is run."""

    candidate: Path
    baseline: Path
    field: list[Path]
    rules: RuleSet = dataclasses.field(default_factory=lambda: preset("classic"))
    players: tuple[int, int] | None = None    # table sizes; default min(4, field + 1)
    seed: int | None = None                   # the secret; drawn when not given
    concurrency: int | None = None
    out: Path = DEFAULT_OUT
    params: SprtParams = dataclasses.field(default_factory=SprtParams)
    strikes_to_forfeit: int = 3
    sandbox: bool | None = None
    cluster: str | None = None                # a dask scheduler's address, or local:N


@dataclass
class GauntletOutcome:
    """Where a gauntlet stands: the test over the pairs so far, and what was played."""

    out: Path
    candidate: str
    baseline: str
    field: list[str]
    params: SprtParams
    state: SprtState
    games_stored: int
    played_now: int = 0
    # dataclasses.field in full: in this class `field` is the attribute above
    trail: list[SprtState] = dataclasses.field(default_factory=list)   # the test after each pair
    sizes: list[SizeResult] = dataclasses.field(default_factory=list)  # pairs per table size
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)  # played as -> spec's name
    delta_at: dict[int, float] = dataclasses.field(default_factory=dict)  # --delta per size (Elo)

    def to_json(self) -> dict[str, Any]:
        """The outcome as plain data (written to the folder's `gauntlet_result`)."""
        return {
            "candidate": self.candidate, "baseline": self.baseline, "field": self.field,
            "renamed": self.renamed,
            "params": self.params.to_dict(), "verdict": self.state.verdict,
            "delta_elo_by_table_size": {str(k): v for k, v in self.delta_at.items()},
            "state": self.state.to_dict(), "games_stored": self.games_stored,
            "by_table_size": [dataclasses.asdict(size) for size in self.sizes],
            "trail": [{"pairs": s.pairs, "mean": s.mean, "evidence": s.evidence,
                       "against": s.against} for s in self.trail],
        }


@dataclass(frozen=True)
class SizeResult:
    """The candidate against the baseline at one table size, over the pairs the test used."""

    players: int
    pairs: int
    mean: float            # score difference per game
    low: float             # its 95% interval (normal approximation)
    high: float
    elo: float             # the gain in Elo at this table size (from the mean scores)


def by_table_size(pairs: Sequence[Pair]) -> list[SizeResult]:
    """The pairs summarised per table size, so that a candidate is compared at the sizes it
    played."""
    per_size: dict[int, list[tuple[float, float]]] = {}
    for pair in pairs:
        per_size.setdefault(pair.players, []).append((pair.candidate, pair.baseline))
    results = []
    for players, scores in sorted(per_size.items()):
        diffs = [c - b for c, b in scores]
        n = len(diffs)
        mean = sum(diffs) / n
        sd = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5 if n > 1 else 0.0
        half = 1.96 * sd / n ** 0.5 if n > 1 else float("inf")
        base = (sum(b for _, b in scores) + 0.5) / (n + 1)
        results.append(SizeResult(players, n, mean, mean - half, mean + half,
                                  elo_gap(base + mean, base)))
    return results


def gauntlet_schedule(candidate: str, baseline: str, field_bots: Sequence[str], pairs: int,
                      players: tuple[int, int], seed: int) -> list[ScheduledGame]:
    """The games of `pairs` pairs: game 2k has the candidate in the tested seat, game 2k+1 the
    baseline; both share the opponents, their seats and the seed. Deterministic from `seed`."""
    names = list(field_bots)
    if not names:
        raise ValueError("a gauntlet needs at least one field bot")
    sizes = table_sizes(len(names) + 1, players)
    rng = random.Random(keyed_seed(seed, "gauntlet-schedule"))
    tables = entrant_tables(_TESTED, names, sizes, rng, dict.fromkeys(names, 0))
    games: list[ScheduledGame] = []
    for pair in range(pairs):
        seated = next(tables)
        game_seed = keyed_seed(seed, "gauntlet", pair)
        for rotation, tested in enumerate((candidate, baseline)):
            bots = tuple(tested if name == _TESTED else name for name in seated)
            games.append(ScheduledGame(len(games), bots, game_seed, pair, rotation))
    return games


def pair_game_id(secret: int, game: ScheduledGame) -> str:
    """The opaque game id both games of a pair share: opponents that seed their choices from it
    play the same way in both, so that only the tested bot differs."""
    return opaque_id(secret, "gauntlet", game.group)


def pair_scores(games: dict[int, PlayedGame], candidate: str, baseline: str) -> list[Pair]:
    """Each complete pair from the first on, stopping at the first pair with a game missing
    (so the list depends only on the schedule order)."""
    pairs: list[Pair] = []
    while 2 * len(pairs) in games and 2 * len(pairs) + 1 in games:
        index = 2 * len(pairs)
        pairs.append(game_pair(games[index], games[index + 1], candidate, baseline))
    return pairs


def game_pair(first: PlayedGame, second: PlayedGame, candidate: str, baseline: str) -> Pair:
    """The pair of `first` (the candidate's game) and `second` (the baseline's): what each
    made of every opponent seated at the table."""
    mine, theirs = tested_results(first, candidate), tested_results(second, baseline)
    opponents = tuple(mine)
    return Pair(first.players, opponents, tuple(mine[name] for name in opponents),
                tuple(theirs[name] for name in opponents))


def tested_results(game: PlayedGame, bot: str) -> dict[str, float]:
    """What `bot` made of each opponent in `game` (1 ahead, 1/2 shared place, 0 behind)."""
    seats = {name: seat for seat, name in enumerate(game.bots)}
    groups = [[seats[name] for name in group] for group in finishing_groups(game)]
    return {game.bots[seat]: result for seat, result in seat_results(groups, seats[bot]).items()}


def unique_names(specs: Sequence[tuple[str, BotSpec]]) -> list[BotSpec]:
    """The specs with names made unique: a name already taken gets its role appended
    ('greedy-baseline' when a bot is tested against itself, 'greedy-field' when the baseline
    also plays in the field: a separate instance of the same spec)."""
    taken: set[str] = set()
    renamed = []
    for role, spec in specs:
        name = spec.name
        if name in taken:
            name = f"{spec.name}-{role}"
        if name in taken:
            raise ConfigError(f"bot name {name!r} is given twice")
        taken.add(name)
        renamed.append(dataclasses.replace(spec, name=name))
    return renamed


def load_gauntlet(store: LeagueStore, played_now: int = 0) -> GauntletOutcome:
    """Where the gauntlet in `store` stands, from its records alone."""
    gauntlet = stored_gauntlet(store)
    params = stored_params(gauntlet, store.path)
    games = {game.index: game for game in store.played()}
    pairs = pair_scores(games, gauntlet.candidate, gauntlet.baseline)
    delta_at = schedule_deltas(store.schedule(), params)
    states = trail(pairs, params, delta_at)
    current = states[-1] if states else SprtState(0, 0.0, 0.0, 0.0, None)
    return GauntletOutcome(store.path.parent, gauntlet.candidate, gauntlet.baseline,
                           list(gauntlet.field), params, current, len(games), played_now,
                           states, by_table_size(pairs[:current.pairs]), gauntlet.renamed,
                           delta_at)


def schedule_deltas(schedule: Sequence[ScheduledGame], params: SprtParams) -> dict[int, float]:
    """--delta as Elo at each table size of the gauntlet's whole schedule (fixed before any
    game is played, as the test's bets must be)."""
    return delta_by_size(params.delta, [len(game.bots) for game in schedule[::2]])


def stored_gauntlet(store: LeagueStore) -> StoredGauntlet:
    """The gauntlet's own settings in `store`; ConfigError if it holds no gauntlet."""
    stored = read_league(store)
    if stored is None or stored.gauntlet is None:
        raise ConfigError(f"{store.path}: no gauntlet here")
    return stored.gauntlet


def stored_params(gauntlet: StoredGauntlet, where: Path) -> SprtParams:
    """The test's parameters of a stored gauntlet; ConfigError for one made with another test,
    whose verdict this version cannot reproduce."""
    if gauntlet.test != TEST_NAME:
        made_with = f" ({gauntlet.test})" if gauntlet.test else " (--delta in score)"
        raise ConfigError(f"{where}: this gauntlet was made by an older referee with another "
                          f"sequential test{made_with}; it cannot be resumed: start a new one")
    assert gauntlet.params is not None   # read whenever the test is this referee's
    return gauntlet.params


def write_result(outcome: GauntletOutcome) -> Path:
    """Write the result (`LeagueFolder.gauntlet_result`) beside the store."""
    path = LeagueFolder(outcome.out).gauntlet_result
    path.write_text(json.dumps(outcome.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


async def run_gauntlet(settings: GauntletSettings,
                       report: Callable[[SprtState], None] | None = None,
                       resume: bool = False,
                       start: Callable[[GauntletOutcome], None] | None = None
                       ) -> GauntletOutcome:
    """Create (or, with `resume`, continue) the gauntlet in `settings.out` and play it until
    the test decides or the budget is spent. `start` is called once the gauntlet is created or
    found (never before a refusal), with where it stands; `report` with the test after each
    pair (in schedule order) as results come in."""
    report = report or (lambda _state: None)
    if settings.cluster:   # before anything is created, as a league's --cluster
        require("distributed", "--cluster")
    created = missing_folders(settings.out)
    store = LeagueFolder(settings.out).open_gauntlet_store()
    try:
        stored = read_league(store)
        new = stored is None
        if stored is None:
            try:
                specs = _create(store, settings)
            except BaseException:   # a gauntlet that never started leaves nothing behind
                _remove(store, created)
                raise
        else:
            if stored.kind != GAUNTLET:
                raise ConfigError(f"{settings.out} holds a league, not a gauntlet")
            if not resume:
                raise ConfigError(f"{settings.out} holds a gauntlet already: add --resume to "
                                  f"continue it (or reprint its verdict), or choose another "
                                  f"--out")
            outcome = load_gauntlet(store)
            if outcome.state.verdict is not None:
                write_result(outcome)
                return outcome
            specs = _stored_specs(store)
        if start is not None:
            start(load_gauntlet(store))
        stored = read_league(store)
        assert stored is not None
        try:
            played = await _play(store, stored, specs, settings, report)
        except BaseException:
            # a gauntlet made now that could not play (a bot that cannot start, a cluster out
            # of reach) leaves nothing behind, as a league's failed start; one with games stays
            if new and store.count() == 0:
                _remove(store, created)
            raise
        outcome = load_gauntlet(store, played)
        write_result(outcome)
        return outcome
    finally:
        store.close()


def _remove(store: LeagueStore, created: list[Path]) -> None:
    """Remove a gauntlet that holds no game: its database, and the folders made for it."""
    store.close()
    remove_database(store.path)
    remove_if_empty(created)


def _create(store: LeagueStore, settings: GauntletSettings) -> list[BotSpec]:
    roles = [("candidate", settings.candidate), ("baseline", settings.baseline),
             *(("field", path) for path in settings.field)]
    loaded = [(role, load_spec(path)) for role, path in roles]
    # one folder per submission (lineup.py); names are made unique below
    refused = refusals([spec for _, spec in loaded], names=False)
    if refused:
        raise refused[0][1]
    specs = unique_names(loaded)
    candidate, baseline, *field_specs = specs
    field_names = [spec.name for spec in field_specs]
    low, high = settings.players or (min(4, len(field_names) + 1),) * 2
    if low < settings.rules.min_players or min(high, len(field_names) + 1) > \
            settings.rules.max_players:
        raise ConfigError(f"tables of {low}-{high} players do not fit rules "
                          f"{settings.rules.preset!r}")
    secret = draw_secret() if settings.seed is None else settings.seed
    schedule = gauntlet_schedule(candidate.name, baseline.name, field_names,
                                 settings.params.max_pairs, (low, high), secret)
    renamed = {spec.name: original.name for spec, (_, original) in
               zip(specs, loaded, strict=True) if spec.name != original.name}
    gauntlet = StoredGauntlet(test=TEST_NAME, params=settings.params,
                              candidate=candidate.name, baseline=baseline.name,
                              field=tuple(field_names), renamed=renamed)
    # A gauntlet schedules no games by count and rates nothing: those settings stay defaults.
    defining = StoredLeague(
        kind=GAUNTLET, rules=settings.rules,
        options=MatchOptions(settings.strikes_to_forfeit, False), secret=secret,
        duplicate=False, limits=LimitCeiling(), ratings=RatingParams(), players=(low, high),
        players_asked=(low, high), bot_names=tuple(spec.name for spec in specs),
        bots_given=tuple(spec.name for spec in specs), games=0, games_asked=0, started=None,
        gauntlet=gauntlet)
    store_league(store, defining, {spec.name: ("", str(spec.path)) for spec in specs},
                 schedule)
    return specs


def _stored_specs(store: LeagueStore) -> list[BotSpec]:
    specs = []
    for name, (_, path) in store.bots().items():
        if path is None or not Path(path).exists():
            raise ConfigError(f"bot {name!r}: its spec {path} is gone; cannot resume")
        specs.append(dataclasses.replace(load_spec(path), name=name))
    return specs


async def _play(store: LeagueStore, stored: StoredLeague, specs: list[BotSpec],
                settings: GauntletSettings, report: Callable[[SprtState], None]) -> int:
    """Play pending games in schedule order until the test decides; the number played."""
    gauntlet = stored.gauntlet
    assert gauntlet is not None
    params = stored_params(gauntlet, store.path)
    secret = stored.secret
    candidate, baseline = gauntlet.candidate, gauntlet.baseline
    games = {game.index: game for game in store.played()}
    pending = [game for game in store.schedule() if game.index not in games]
    size = max(stored.players)
    concurrency = settings.concurrency or LeagueSettings(bots=[]).default_concurrency(size)
    test = SequentialTest(params, schedule_deltas(store.schedule(), params))
    for pair in pair_scores(games, candidate, baseline):
        test.add(pair)

    def decided() -> bool:
        return test.current.verdict is not None

    def judge(game: ScheduledGame, result: MatchResult) -> None:
        games[game.index] = _played(game, result)
        if decided():
            return   # a game that was in flight when the test decided: stored, not judged
        # the pairs completed from the next untested one on, in schedule order
        while not decided() and all(2 * test.n + k in games for k in (0, 1)):
            index = 2 * test.n
            report(test.add(game_pair(games[index], games[index + 1], candidate, baseline)))

    executor = make_executor(specs, concurrency=concurrency, sandbox=settings.sandbox,
                             cluster=settings.cluster, league=str(settings.out.resolve()))
    async with executor:
        versions, _ = await executor.start(skip_broken=False)
        paths = {spec.name: str(spec.path) for spec in specs}
        for name, version in versions.items():
            store.update_bot(name, version, paths[name])
        return await play_schedule(executor, store, stored, pending,
                                   game_id=lambda game: pair_game_id(secret, game),
                                   on_saved=judge, stop=decided)


def _played(game: ScheduledGame, result: MatchResult) -> PlayedGame:
    n = len(game.bots)
    return PlayedGame(game.index, game.bots, tuple(result.places), tuple(result.money),
                      tuple(seat.forfeited for seat in result.seats), ({},) * n, ((),) * n)

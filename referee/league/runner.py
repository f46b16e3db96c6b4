"""Running a league: start the bots once, play the scheduled games J at a time, store each one.

Results never depend on the order games finish in: every game is determined by its schedule
entry (bots per seat, seed), and ratings are applied in schedule order
(referee/ratings/trueskill.py).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from referee.bots.errors import BotStartError
from referee.bots.lineup import refusals
from referee.bots.spec import BotSpec, BotSpecError, capped_limits, load_spec
from referee.league.config import LeagueSettings
from referee.league.executors import Executor, make_executor
from referee.league.folder import LeagueFolder
from referee.league.live import LiveTable
from referee.league.outcome import LeagueOutcome, LeagueStateError, load_outcome, read_settings
from referee.league.playing import play_schedule
from referee.league.progress import Progress
from referee.league.resume import differences
from referee.league.schedule import ScheduledGame, balance, make_schedule
from referee.league.store import LeagueStore, remove_database
from referee.league.stored import StoredLeague, read_league, store_league
from referee.util.config import ConfigError
from referee.util.outdir import missing_folders, remove_if_empty
from referee.util.seeds import draw_secret

# What the caller does with an outcome whenever the league has one ready (at the end of play,
# and when `--until-settled` re-rates): the CLI and the club write its table files
# (referee.report.table_files.write_outputs). The league shows and writes nothing itself.
Publish = Callable[[LeagueOutcome], None]


def _with_limits(spec: BotSpec, ceiling: Mapping[str, int]) -> BotSpec:
    """`spec` under the league's [limits]: the smaller of each and the bot's own."""
    try:
        return capped_limits(spec, ceiling)
    except BotSpecError as exc:
        raise ConfigError(f"league {exc}") from None


def open_store(out: Path) -> LeagueStore:
    """The store of the league in `out`."""
    return LeagueFolder(out).open_store()


async def run_league(settings: LeagueSettings, progress: Progress | None = None,
                     resume: bool = False, accept_changed: bool = False,
                     publish: Publish | None = None) -> LeagueOutcome:
    """Create (or, with `resume`, continue) the league in `settings.out`, play it, and hand
    its outcome to `publish` (the caller's table files; none by default).

    When `settings.out` already holds a league, every setting that was given must agree with
    the stored one (LeagueStateError naming each difference); the others take the stored
    values. A bot whose files changed since the league started stops it unless
    `accept_changed`. A start that fails leaves no league behind.
    """
    progress = progress or Progress()
    publish = publish or (lambda _outcome: None)
    settings.validate()
    folder = LeagueFolder(settings.out)
    if folder.store_path.exists():
        store = folder.open_store()
        try:
            stored = read_league(store)
            if stored is not None:
                return await _continue(store, stored, settings, progress, resume,
                                       accept_changed, publish)
        finally:
            store.close()
    if resume:
        raise LeagueStateError(f"--resume: {settings.out} holds no league to resume (no "
                               f"{folder.store_path.name}); leave out --resume to start one")
    return await _start(settings, progress, publish)


def _writable_out(out: Path) -> list[Path]:
    """Create `out` if needed (returning the folders created); ConfigError naming it if it
    cannot be created or written."""
    created = missing_folders(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot create it: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out}: cannot write there (permission denied)")
    return created


def _remove_failed_start(out: Path, created: list[Path]) -> None:
    """Remove what a failed start left: the database files, and the folders it created that
    are empty."""
    remove_database(LeagueFolder(out).store_path)
    remove_if_empty(created)


def _load_specs(settings: LeagueSettings) -> tuple[list[BotSpec], list[BotStartError]]:
    """The league's specs; with `skip_broken`, a spec that cannot be used is left out and
    returned as an error (named by its file's stem), like a bot that cannot start."""
    specs, skipped = [], []
    for path in settings.bots:
        try:
            specs.append(_with_limits(load_spec(path), settings.limits))
        except BotSpecError as exc:
            if not settings.skip_broken:
                raise
            skipped.append(BotStartError(Path(path).stem, str(exc)))
    # Two specs with one name, or sharing a folder (referee.bots.lineup): the same policy.
    refused = refusals(specs, settings.shared_folders)
    if refused and not settings.skip_broken:
        raise refused[0][1]
    left_out = {id(spec) for spec, _ in refused}
    skipped += [BotStartError(spec.name, str(error)) for spec, error in refused]
    return [spec for spec in specs if id(spec) not in left_out], skipped


async def _start(settings: LeagueSettings, progress: Progress,
                 publish: Publish) -> LeagueOutcome:
    specs, skipped = _load_specs(settings)
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ConfigError(f"a bot spec is listed twice: {sorted(names)}")
    low, high = settings.table_sizes(len(specs))
    notes = []
    if settings.seed is None:
        settings.seed = draw_secret()
    created = _writable_out(settings.out)
    concurrency = settings.concurrency or settings.default_concurrency(high)
    store: LeagueStore | None = None
    try:
        executor = make_executor(specs, concurrency=concurrency, sandbox=settings.sandbox,
                                 cluster=settings.cluster, league=str(settings.out.resolve()),
                                 live=LeagueFolder(settings.out).live)
        async with executor:
            versions, broken = await executor.start(skip_broken=settings.skip_broken)
            working = [spec.name for spec in specs if spec.name in versions]
            low, high = settings.table_sizes(len(working))
            asked = settings.game_count(len(working))
            schedule = make_schedule(working, asked, (low, high), settings.seed,
                                     settings.duplicate)
            if len(schedule) != asked:
                notes.append(f"--duplicate: {asked} games asked, {len(schedule)} scheduled "
                             f"(every table is played in all rotations of its seats)")
            progress.announce(intro(settings, working, schedule, asked, (low, high)))
            store = open_store(settings.out)
            paths = {spec.name: str(spec.path) for spec in specs}
            store_league(store, league_definition(settings, working, names, len(schedule),
                                                  asked, (low, high)),
                         {name: (versions[name], paths[name]) for name in working}, schedule)
            outcome = await _play(store, read_settings(store), executor, progress, publish)
    except BaseException:
        if store is None or not store.holds_league():
            if store is not None:
                store.close()
                store = None
            _remove_failed_start(settings.out, created)
        raise
    finally:
        if store is not None:
            store.close()
    outcome.broken = [*skipped, *broken]
    outcome.notes = notes + outcome.notes
    return outcome


def league_definition(settings: LeagueSettings, bots: list[str], given: list[str],
                      scheduled: int, asked: int, sizes: tuple[int, int]) -> StoredLeague:
    """The settings a new league stores, typed (referee.league.stored): those that define its
    games, its entries `bots` (of the specs `given`), the games `scheduled` of the `asked`,
    and the table `sizes` it plays."""
    return settings.definition(bots, given, scheduled, asked, sizes)


def intro(settings: LeagueSettings, bots: list[str], schedule: list[ScheduledGame],
          asked: int, sizes: tuple[int, int]) -> list[str]:
    """What a new league says before its first game: where it plays, its seed, its schedule's
    balance, and what --duplicate does to that balance (pairs meet a whole table at a time)."""
    low, high = sizes
    tables = f"{low}" if low == high else f"{low}-{high}"
    lines = [f"league in {settings.out}: {len(bots)} bots, {len(schedule)} games at tables of "
             f"{tables}", f"seed {settings.seed} (stored in "
             f"{LeagueFolder(settings.out).store_path.name})",
             f"schedule: {len(schedule)} games; {balance(schedule, bots).describe()}"]
    if settings.duplicate:
        assert settings.seed is not None
        plain = balance(make_schedule(bots, asked, sizes, settings.seed), bots)
        lines.append(f"--duplicate: bots meet a whole table (all its seat rotations) at a "
                     f"time; without it: {plain.describe()}")
    return lines


async def _continue(store: LeagueStore, stored: StoredLeague, settings: LeagueSettings,
                    progress: Progress, resume: bool, accept_changed: bool,
                    publish: Publish) -> LeagueOutcome:
    out = settings.out
    given_names = [spec.name for spec in _load_specs(settings)[0]]
    found = differences(settings, stored, given_names)
    if found:
        raise LeagueStateError(
            f"{out} holds a league with other settings: {'; '.join(found)}. Leave these "
            f"settings out to use the stored ones, or start a new league with another --out "
            f"(e.g. --out {_free_name(out)})")
    schedule = store.schedule()
    finished = store.done() >= {g.index for g in schedule}
    if finished:
        outcome = load_outcome(store)
        publish(outcome)
        return outcome
    if not resume:
        raise LeagueStateError(f"{out} holds an unfinished league: add --resume to "
                               f"continue it, or choose another --out")
    specs = []
    for name, (_, path) in store.bots().items():
        if name not in stored.bot_names:
            continue
        if path is None or not Path(path).exists():
            raise LeagueStateError(f"bot {name!r}: its spec {path} is gone; cannot resume")
        # by its stored name: a late entry may be a new version of a bot ("alice-2")
        specs.append(_with_limits(dataclasses.replace(load_spec(path), name=name),
                                  stored.limits))
    concurrency = settings.concurrency or settings.default_concurrency(
        max(len(g.bots) for g in schedule))
    known = store.bots()
    # On a cluster the workers check each bot's files against its stored version and refuse
    # a changed one, unless the organiser accepts the change.
    league_versions = None if accept_changed else {name: known[name][0] for name in known}
    executor = make_executor(specs, concurrency=concurrency, sandbox=settings.sandbox,
                             cluster=settings.cluster, versions=league_versions,
                             league=str(settings.out.resolve()),
                             live=LeagueFolder(settings.out).live)
    async with executor:
        # With --skip-broken, a bot that no longer starts forfeits its remaining games.
        versions, broken = await executor.start(skip_broken=settings.skip_broken)
        changed = [f"{name!r} (started as {known[name][0]}, now {version})"
                   for name, version in versions.items() if known[name][0] != version]
        if changed and not accept_changed:
            raise LeagueStateError(
                f"bot files changed since the league started: {', '.join(changed)}; add "
                f"--accept-changed to continue with the new versions (the records keep both), "
                f"or start a new league with another --out")
        paths = {spec.name: str(spec.path) for spec in specs}
        for name, version in versions.items():
            store.update_bot(name, version, paths[name])
        outcome = await _play(store, stored, executor, progress, publish)
        outcome.broken = broken
        return outcome


def _free_name(out: Path) -> Path:
    """`out` with the first free numeric suffix: a new --out to suggest."""
    n = 2
    while out.with_name(f"{out.name}-{n}").exists():
        n += 1
    return out.with_name(f"{out.name}-{n}")


async def _play(store: LeagueStore, stored: StoredLeague, executor: Executor,
                progress: Progress, publish: Publish) -> LeagueOutcome:
    """Play the schedule's games that have no record yet, storing each as it arrives."""
    schedule = store.schedule()
    done = store.done()
    pending = [game for game in schedule if game.index not in done]
    progress.start(len(schedule), len(done))
    if progress.wants_live_table:
        progress.live = LiveTable(list(stored.bot_names), stored.ratings,
                                           [game.index for game in schedule], store.played())
    try:
        await play_schedule(executor, store, stored, pending,
                            on_saved=lambda game, result: progress.game_done(result, game.index))
    finally:
        progress.close()
    outcome = load_outcome(store, progress.played)
    publish(outcome)
    return outcome

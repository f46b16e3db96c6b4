"""A competition's games: entries and rounds from the database, games on the league's
executors. One SeasonLoop plays one competition (the first: the club's season in DIR/season;
another: in its own folder with its own settings); the runner's competitions take turns at
its machines (turns.Turns); what differs between the two kinds is their book (books.py).

Between rounds the loop enters the versions that passed their check (retiring the bot's older
version) and appends the next round; while games play, a watcher stops new games from starting
as soon as the organiser pauses or closes the season or a bot (or its owner) is disabled. The
league library does the scheduling and the storing (referee.league.season); this is the
orchestration only.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from referee.bots.spec import BotSpecError, load_spec
from referee.errors import FailureKind
from referee.game.match import MatchResult
from referee.league.executors import Executor, make_executor
from referee.league.folder import LeagueFolder
from referee.league.outcome import LeagueOutcome
from referee.league.schedule import ScheduledGame
from referee.league.season import ACTIVE, DISABLED, Season, play_pending, season_specs
from referee.report.table_files import write_outputs
from referee.server.runner import clubdb
from referee.server.runner.books import Book, FirstBook
from referee.server.runner.logline import log
from referee.server.runner.turns import Turns
from referee.server.shared.confinement import confinement
from referee.server.shared.database import Db
from referee.server.shared.diskuse import remove_folders
from referee.server.shared.seasonfile import changes, pace_words
from referee.server.shared.seasonkeys import (
    START_FAILURES_OUT,
    RunnerSettings,
    load_runner_settings,
)
from referee.util.config import ConfigError

RUNNING, PAUSED, CLOSED = "running", "paused", "closed"


class SeasonLoop:
    """Plays the season in `data`/season until it is closed."""

    def __init__(self, db: Db, data: Path, season: Season, settings: RunnerSettings,
                 cluster: str | None, poll: float = 1.0, connection: Any = None,
                 season_file: Path | None = None, book: Book | None = None,
                 turns: Turns | None = None,
                 elsewhere: Callable[[], set[str]] = set,
                 other_house: Callable[[], list[Path]] = list) -> None:
        """`connection`: the runner's dask.Cluster when it has one (the executors use it);
        `season_file`: the file `settings` came from, read again when it changes (the first
        competition's); `book`: the competition's database side (default the first's);
        `turns`: the turns it takes with the other competitions at the runner's machines;
        `elsewhere`: the league names active in the other competitions (their folders are
        not pruned); `other_house`: the house bots the other competitions name (the season
        file's changes keep them)."""
        self.db, self.data, self.season, self.settings = db, data, season, settings
        self.book: Book = book or FirstBook()
        self.turns = turns or Turns()
        self.elsewhere, self.other_house = elsewhere, other_house
        self.first = isinstance(self.book, FirstBook)
        self.said = "" if self.first else f"{self.book.name}: "   # its log lines' start
        self.season_file = season_file
        self.file_stamp = file_stamp(season_file)
        # The season's [limits] as the checks and test games read them: updated in place when
        # the organiser changes them, so every queue applies the change from its next item.
        self.limits: dict[str, int] = dict(season.stored.limits)
        self.waiting_told = -1               # the round whose pace wait was said
        self.cluster = cluster or settings.league.cluster
        self.connection = connection
        self.poll = poll
        self.executor: Executor | None = None
        self.names: frozenset[str] = frozenset()
        self.stop = False
        self.saved = 0                       # games stored by this process
        self.told: set[tuple[str, str]] = set()   # (league name, what) already noticed
        self.notices: list[tuple[str, str]] = []  # (league name, text) to write
        self.game_saved = asyncio.Event()    # set when a game is stored
        self.refit_now = False               # a table is wanted now, not at the next game
        self.starts = 0                      # executors opened: each starts the bots anew
        self.unstarted: dict[str, int] = {}  # league name -> its failed starts in a row
        self.forfeiting: dict[str, int] = {}  # league name -> its started games forfeited in a row
        self.counted: dict[str, int] = {}    # league name -> the start its failure counted
        self.taking_out: dict[str, str] = {}  # league name -> why it leaves the season
        self.start_again = False             # a bot failed to start: start them all anew
        self.state = RUNNING
        # Without a sandbox (and without unconfined_uploads) no upload runs: nor do season
        # games, which would seat uploads (referee.server.shared.confinement).
        self.uploads_run = confinement(settings).uploads_run

    async def run(self) -> None:
        """Enter, schedule and play until the season is closed; then write its report."""
        try:
            while True:
                state = await self.db(self.book.state)
                await self.leave_disabled()
                if state != self.state:
                    await self.changed(state)
                if state == CLOSED:
                    await self.close_executor()
                    await self.close_season()
                    return
                if state == PAUSED or not self.uploads_run:
                    await self.close_executor()   # paused may be long: the bots stop
                    await asyncio.sleep(self.poll)
                    continue
                house = await self.db(clubdb.house_bot_names, self.settings.house_bots)
                if not self.season.pending() and not await self.db(clubdb.house_checking,
                                                                   house):
                    await self.reread()   # between rounds: the organiser's changes
                    await self.enter_waiting()   # newcomers' first games are never held back
                    await self.prune()
                    if self.pace_wait() <= 0:
                        self.season.next_round()
                pending = self.season.pending()
                if not pending:
                    await asyncio.sleep(self.poll)
                    continue
                await self.play(pending)
        finally:
            await self.close_executor()

    async def changed(self, state: str) -> None:
        """The organiser paused, resumed or closed the season: say so once play has stopped
        (the games that were in flight are stored by now)."""
        self.state = state
        count = self.season.store.count()
        words = {PAUSED: "paused", RUNNING: "resumed", CLOSED: "closed"}
        log(f"{self.said}play {words[state]} with {count} games recorded")
        if state != CLOSED:
            await self.db(self.book.notify, f"play is {words[state]}: {count} games "
                                            f"recorded")

    # ------------------------------------------------------------------ the season file

    async def reread(self) -> None:
        """Read the season file again if it changed since it was read; apply what the runner
        applies between rounds (the pace, the limits, the house bots) and say in one line
        what changed. A file the runner cannot use changes nothing: one line says why."""
        stamp = file_stamp(self.season_file)
        if stamp == self.file_stamp or self.season_file is None:
            return
        self.file_stamp = stamp
        try:
            if stamp is None:   # gone (or being replaced by hand): no reason to go back to
                raise ConfigError(f"{self.season_file}: no such file")   # the defaults
            new = load_runner_settings(self.season_file)
        except ConfigError as exc:
            text = f"season file not applied, the settings stay as they were: {exc}"
            log(text)
            await self.db(clubdb.notify, None, text)
            return
        said = changes(self.settings, new)
        old, self.settings = self.settings, new
        await self.apply_limits()
        if [str(p) for p in old.house_bots] != [str(p) for p in new.house_bots]:
            await self.db(clubdb.sync_house_bots, new.house_bots + self.other_house())
        if said:
            text = "season file changed: " + "; ".join(said)
            log(text)
            await self.db(clubdb.notify, None, text)

    async def apply_limits(self) -> None:
        """Make the season file's `[limits]` the season's from its next game on (a runner
        started after the file changed applies it too)."""
        wanted = dict(self.settings.league.limits)
        if wanted == self.season.stored.limits:
            return
        self.season.set_limits(wanted)
        self.limits.clear()
        self.limits.update(wanted)
        await self.close_executor()   # the bots start again under the new limits

    def pace_wait(self) -> float:
        """Seconds before the next round may start at the season's pace (0: now). A round
        gives each active bot `round_games` games, so at P games per bot per hour rounds start
        at least round_games * 3600 / P seconds apart. Says once per round that it waits."""
        per_hour = self.settings.games_per_bot_per_hour
        started = self.season.round_started()
        if per_hour <= 0 or started is None:
            return 0.0
        part = self.season.part
        gap = part.round_games * 3600 / per_hour
        wait = started + gap - time.time()
        rounds = self.season.rounds()
        limit = part.max_rounds
        if wait > 0 and self.waiting_told != rounds and not (limit and rounds >= limit):
            self.waiting_told = rounds
            when = time.strftime("%H:%M:%S", time.localtime(started + gap))
            log(f"pace: round {rounds} done with {self.season.store.count()} games recorded; "
                f"round {rounds + 1} starts at {when}, in {wait:.0f} s "
                f"({pace_words(per_hour)})")
        return wait

    # ------------------------------------------------------------------ entrants

    async def enter_waiting(self) -> None:
        """Enter every version that passed and waits (the season is between rounds)."""
        house = await self.db(clubdb.house_bot_names, self.settings.house_bots)
        for entry in await self.db(self.book.waiting, self.data, self.season.states(), house):
            try:
                version = load_spec(entry.spec).files_hash()
            except (BotSpecError, OSError) as exc:
                await self.db(self.book.mark_disabled, entry.version_id,
                              f"its spec cannot be read: {exc}", False)
                continue
            state = self.season.states().get(entry.league_name)
            if state is None:
                self.season.enter(entry.league_name, version, str(entry.spec),
                                  retire=entry.retire)
                if entry.retire:
                    self.ranked_changed()
            elif state == DISABLED:   # taken out, and put back by the organiser
                self.season.restore(entry.league_name)
                self.forget_rows(entry.league_name)
                self.ranked_changed()
            # else: entered, then the runner was killed before it said so
            await self.db(self.book.mark_entered, entry)

    def ranked_changed(self) -> None:
        """A version that was ranked left the ranks (retired or disabled): the board's rank
        ranges are among the versions ranked at the last refit, so refit now rather than at
        the next game (a paused season plays none)."""
        if self.season.store.count():
            self.refit_now = True
            self.game_saved.set()

    async def prune(self) -> None:
        """Between rounds (no season game in play): remove the built folders of replaced,
        failed and retired versions that no test or browser game in play names (the
        retention rule of referee.server.shared.diskuse; their archives and reports stay)."""
        if not self.first:
            return   # the first competition's loop prunes for all
        folders = await self.db(clubdb.prune_folders, self.data, self.elsewhere())
        if folders:
            await asyncio.to_thread(remove_folders, folders)
            log(f"removed the built folders of {len(folders)} replaced, failed or retired "
                f"version{'' if len(folders) == 1 else 's'}")

    async def leave_disabled(self) -> bool:
        """Disable the versions of disabled bots and inactive owners; True if one was
        playing (active) in the season."""
        states = self.season.states()
        playing = False
        for version_id, name, why in await self.db(self.book.to_disable, states):
            was_active = states.get(name) == ACTIVE
            if name in states and states[name] != DISABLED:
                self.season.disable(name)
            playing |= was_active
            await self.db(self.book.mark_disabled, version_id, why, was_active)
        if playing:
            self.ranked_changed()
        return playing

    # ------------------------------------------------------------------ games

    async def play(self, pending: list[ScheduledGame]) -> None:
        """Play the pending games, in the competition's turn at the runner's machines, until
        they are done, the watcher says stop, or the turn is over (another competition has
        games waiting and this one started its share: the rest wait for its next turn)."""
        async with self.turns.turn(self.book.id):
            await self.play_turn(pending)

    async def play_turn(self, pending: list[ScheduledGame]) -> None:
        need = frozenset(bot for game in pending for bot in game.bots)
        add = getattr(self.executor, "add", None)
        if self.executor is not None and add is not None and not need <= self.names:
            # Here the bots already up stay up; newcomers start beside them.
            for error in await add(season_specs(self.season, sorted(need - self.names))):
                self.note(error.bot, "start", f"could not start: {error.detail}")
            self.names |= need
        elif self.executor is None or not need <= self.names:
            await self.close_executor()   # a cluster's workers get the bots anew
            await self.open_executor(need)
        assert self.executor is not None
        self.stop = False
        started = 0

        def stop() -> bool:   # asked before each game starts
            nonlocal started
            if self.stop or self.turns.over(started):
                return True
            started += 1
            return False

        watcher = asyncio.create_task(self.watch())
        try:
            await play_pending(self.season, self.executor, stop, self.heard)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await self.take_out()
            await self.flush_notices()
            if self.start_again:   # the next games start every bot anew
                self.start_again = False
                await self.close_executor()

    async def open_executor(self, names: frozenset[str]) -> None:
        league = self.settings.league
        specs = season_specs(self.season, sorted(names))
        high = max(len(game.bots) for game in self.season.pending())
        concurrency = league.concurrency or league.default_concurrency(high)
        executor = make_executor(specs, concurrency=concurrency, sandbox=league.sandbox,
                                 cluster=self.cluster, league=str(self.season.store.path.parent),
                                 connection=self.connection,
                                 live=LeagueFolder(self.season.store.path.parent).live)
        await executor.__aenter__()
        try:
            _, broken = await executor.start(skip_broken=True)
        except BaseException:
            await executor.__aexit__(None, None, None)
            raise
        for error in broken:   # its games are forfeits: its seat plays the substitute
            self.note(error.bot, "start", f"could not start: {error.detail}")
        self.executor, self.names = executor, names
        self.starts += 1

    async def close_executor(self) -> None:
        if self.executor is not None:
            executor, self.executor, self.names = self.executor, None, frozenset()
            await executor.__aexit__(None, None, None)

    async def watch(self) -> None:
        """Stop new games as soon as the season is paused or closed, or a playing bot is
        disabled (checked every `poll` seconds; notices are written meanwhile)."""
        while True:
            await asyncio.sleep(self.poll)
            await self.flush_notices()
            state = await self.db(self.book.state)
            gone = {name for _, name, _ in await self.db(self.book.to_disable,
                                                         self.season.states())}
            if state != RUNNING or gone & self.names:
                self.stop = True
                return

    def heard(self, game: ScheduledGame, result: MatchResult) -> None:
        """A game was stored: count it, and note what its owners must be told."""
        self.saved += 1
        self.game_saved.set()
        for seat in result.seats:
            self.count_start(seat.bot, seat.not_started, seat.reason)
            if not seat.not_started:
                self.count_forfeit(seat.bot, seat.forfeited, game.index, seat.reason)
            if seat.forfeited:
                self.note(seat.bot, "forfeit", f"forfeited game {game.index}: {seat.reason}")
            elif seat.strikes.get(FailureKind.CRASH):
                self.note(seat.bot, "crash", f"crashed in game {game.index} (restarted)")

    def count_start(self, name: str, failed: bool, reason: str) -> None:
        """Count `name`'s failed starts in a row (a game it forfeited because its bot could
        not be started counts once per start of the bots; a game it played ends the row).
        Below START_FAILURES_OUT no new game starts and the bots start anew; at it, the
        version is taken out (take_out)."""
        if not failed:
            self.unstarted[name] = 0
            return
        if self.counted.get(name) == self.starts or name in self.taking_out:
            return
        self.counted[name] = self.starts
        self.unstarted[name] = self.unstarted.get(name, 0) + 1
        self.stop = True
        if self.unstarted[name] < START_FAILURES_OUT:
            self.start_again = True
            return
        why = reason.removeprefix("the bot could not be started: ")
        self.taking_out[name] = (f"taken out of the season: its bot could not be started "
                                 f"{START_FAILURES_OUT} times in a row: {why}")

    def count_forfeit(self, name: str, forfeited: bool, index: int, reason: str) -> None:
        """Count `name`'s forfeits in a row of games its bot started in (a game it finished,
        won or lost, ends the row). At the season file's `forfeits_to_take_out` no new game
        starts and the version is taken out (take_out): a bot that fails every game (a runtime
        that changed under it, say) stops losing on the table until it is fixed."""
        if not forfeited:
            self.forfeiting[name] = 0
            return
        if name in self.taking_out:
            return
        row = self.forfeiting[name] = self.forfeiting.get(name, 0) + 1
        if row < self.settings.forfeits_to_take_out:
            return
        self.stop = True
        self.taking_out[name] = (f"taken out of the season: it forfeited {row} season games in "
                                 f"a row; the last, game {index}: {reason or 'forfeited'}")

    def forget_rows(self, name: str) -> None:
        """Start `name`'s counts of failed starts and forfeits in a row afresh (its next
        failed start counts, whichever start of the bots it comes in)."""
        self.unstarted.pop(name, None)
        self.counted.pop(name, None)
        self.forfeiting.pop(name, None)

    async def take_out(self) -> None:
        """Take the versions counted out of the season: their unplayed games are cancelled
        and their owners read why (My bots, the bot's page, a notice)."""
        leaving, self.taking_out = self.taking_out, {}
        states = self.season.states()
        for name, why in leaving.items():
            if states.get(name) not in (None, DISABLED):
                self.season.disable(name)
                self.ranked_changed()
            self.forget_rows(name)
            log(f"{self.said}{name} {why}")
            await self.db(self.book.take_out, name, why)

    def note(self, name: str, what: str, text: str) -> None:
        """Tell `name`'s owner once per kind of trouble while this runner runs."""
        if (name, what) not in self.told:
            self.told.add((name, what))
            self.notices.append((name, text))

    async def flush_notices(self) -> None:
        notices, self.notices = self.notices, []
        for name, text in notices:
            await self.db(self.book.notify_owner, name, text)

    # ------------------------------------------------------------------ closing

    async def close_season(self) -> None:
        """Write the final tables and the static report into DIR/season (once)."""
        from referee.report.site import build_report

        if await self.db(self.book.report_written):
            return
        if not self.season.store.count():   # nothing was played: there is nothing to rate
            await self.db(self.book.notify, "closed before its first game: no report")
            return
        # One ranked row per bot (its version that plays now), ranked among those shown.
        house: set[str] = set() if self.settings.house_in_final_table else \
            set(await self.db(clubdb.house_names))
        outcome = self.season.outcome(unranked=house)
        if house:
            outcome = without_entrants(outcome, house)
        write_outputs(outcome)
        await asyncio.to_thread(build_report, self.season.store.path.parent, None, outcome)
        report = await self.db(self.book.set_report, self.data)
        self.refit_now = True
        self.game_saved.set()
        await self.db(self.book.notify, f"{'the season' if self.first else 'it'} is closed: "
                                        f"{len(outcome.games)} games; its report is {report}")


def without_entrants(outcome: LeagueOutcome, names: set[str]) -> LeagueOutcome:
    """The outcome with the rows of `names` left out of its tables (the organiser's choice for
    house bots): the others keep their fitted strengths and intervals, are ranked 1, 2, 3...
    and marked `~` against their new next row by the same rule. Games stay as played. Rank
    ranges are the fit's: left out of its ranked bots too (`Season.outcome(unranked=...)`),
    they stay within the rows left."""
    standings = outcome.standings
    if standings is not None:
        standings = dataclasses.replace(
            standings, order=[bot for bot in standings.order if bot not in names],
            unranked=[bot for bot in standings.unranked if bot not in names])
        separated = standings.separated_from_next()
    kept = [row for row in outcome.rows if row.bot not in names]
    rows = [dataclasses.replace(row, rank=rank, separated_from_next=separated[row.bot]
                                if standings is not None else row.separated_from_next)
            for rank, row in enumerate(kept, start=1)]
    h2h = {pair: record for pair, record in outcome.h2h.items() if not set(pair) & names}
    unranked = [row for row in outcome.unranked if row.bot not in names]
    return dataclasses.replace(outcome, rows=rows, h2h=h2h, standings=standings,
                               unranked=unranked)


def file_stamp(path: Path | None) -> tuple[int, int] | None:
    """What tells that the season file changed: its mtime and size (None: no file)."""
    try:
        info = path.stat() if path is not None else None
    except OSError:
        return None
    return None if info is None else (info.st_mtime_ns, info.st_size)


"""The competitions beside the first: one season loop each, started as the organiser opens
them, taking turns with the first at the runner's machines (turns.Turns).

Each plays in its own league folder under the club's (DIR/competitions/<slug>, ClubFolder)
with its own settings: its keys over the season file's club-wide ones
(shared.seasonkeys.competition_settings). A paused one plays nothing (its bots stop); a
closed one writes its final tables and report, is refitted once more, and its loop ends.
A competition whose settings the runner cannot use plays nothing; one line says why, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path
from typing import Any

from referee.league.season import SeasonError, open_season
from referee.league.stored import ACTIVE
from referee.server.runner import books, clubdb
from referee.server.runner.books import EntryBook
from referee.server.runner.logline import log
from referee.server.runner.refitloop import refit_loop, refit_once
from referee.server.runner.seasonloop import SeasonLoop
from referee.server.runner.turns import Turns
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.database import Database
from referee.server.shared.seasonkeys import RunnerSettings, competition_settings
from referee.util.config import ConfigError


class Competitions:
    """The runner's competitions other than the first, and the turns all of them take."""

    def __init__(self, db: Database, data: Path, season_file: Path, cluster: str | None,
                 connection: Any, poll: float = 1.0) -> None:
        self.db, self.data, self.season_file = db, data, season_file
        self.cluster, self.connection, self.poll = cluster, connection, poll
        self.turns = Turns()
        self.books: dict[int, EntryBook] = {}
        self.settings: dict[int, RunnerSettings] = {}
        self.loops: dict[int, SeasonLoop] = {}
        self.tasks: dict[int, asyncio.Task] = {}
        self.refused: dict[int, str] = {}   # competition id -> why it cannot play (told)

    async def read(self) -> None:
        """The competitions to play, with their settings as the runner reads them now."""
        from referee.server.shared.seasonread import season_read

        table = season_read().table
        for book in await self.db(books.open_books, self.data):
            if book.id in self.settings or book.id in self.refused:
                continue
            own = await self.db(books.competition_table, book.id)
            try:
                self.settings[book.id] = competition_settings(table, own, self.season_file)
            except ConfigError as exc:
                await self.refuse(book, f"its settings cannot be used: {exc}")
                continue
            self.books[book.id] = book

    async def refuse(self, book: EntryBook, why: str) -> None:
        self.refused[book.id] = why
        log(f"{book.name}: plays nothing: {why}")
        await self.db(book.notify, f"plays nothing: {why}")

    def house_bots(self) -> list[Path]:
        """The house bots the competitions name (the season file's changes keep them)."""
        return [spec for settings in self.settings.values() for spec in settings.house_bots]

    def active_names(self) -> set[str]:
        """The league names active in these competitions now (their built folders stay)."""
        return {name for loop_ in self.loops.values()
                for name, state in loop_.season.states().items() if state == ACTIVE}

    async def run(self) -> None:
        """Start each competition's loop as it comes; a loop that failed stops the runner
        with its error, as the first's does."""
        try:
            while True:
                await self.read()
                for key in sorted(set(self.books) - set(self.tasks)):
                    await self.start(self.books[key])
                for task in [task for task in self.tasks.values() if task.done()]:
                    task.result()
                await asyncio.sleep(self.poll)
        finally:
            for task in self.tasks.values():
                task.cancel()
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    async def start(self, book: EntryBook) -> None:
        """Open the competition's season in its folder and start its loop and refits."""
        settings = self.settings[book.id]
        added = await self.db(books.enter_house_bots, book.id, settings.house_bots)
        if added:
            log(f"{book.name}: house bots queued for their checks: {', '.join(added)}")
        try:
            season = open_season(ClubFolder(self.data).competition(book.folder),
                                 dataclasses.replace(settings.league), settings.round_games,
                                 settings.max_rounds or None, settings.max_catch_up)
        except (SeasonError, ConfigError) as exc:
            await self.refuse(book, str(exc))
            del self.books[book.id]
            return
        season.relocate(await self.db(clubdb.spec_paths, self.data))
        loop_ = SeasonLoop(self.db, self.data, season, settings, self.cluster,
                           connection=self.connection, book=book, turns=self.turns,
                           poll=self.poll)
        self.loops[book.id] = loop_
        log(f"{book.name}: plays in {season.store.path.parent} "
            f"(rules {settings.league.rules.preset})")

        async def play() -> None:
            refits = asyncio.create_task(refit_loop(self.db, loop_, settings.refit_games,
                                                    settings.refit_seconds))
            try:
                await loop_.apply_limits()
                await loop_.run()   # until it is closed and its report written
            except Exception as exc:   # noqa: BLE001 - one line for the organiser
                # One competition's failure (a report that cannot be written, a folder gone)
                # stops it, not the runner and the others: one line says why.
                await self.refuse(book, f"stopped: {type(exc).__name__}: {exc}")
                season.close()
                return
            finally:
                refits.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await refits
                await loop_.close_executor()
                self.loops.pop(book.id, None)
            await refit_once(self.db, loop_)   # its final table on the board
            season.close()

        self.tasks[book.id] = asyncio.create_task(play(), name=f"competition {book.name}")

"""The club's data folder and every path in it: the one place that spells them.

    DIR/server.sqlite3           the club's database (accounts, bots, queues, standings)
    DIR/season.toml              the season file (unless --season names another)
    DIR/season.last-good.toml    the last season file that could be used (seasonread)
    DIR/season/                  the first competition's league folder (its store, tables,
                                 live files): the club's one season before competitions
    DIR/competitions/<slug>/     another competition's league folder
    DIR/uploads/<bot>/<n>/       the students' uploads: `archive` and the `bot` folder
    DIR/testgames/<id>.json      a test game's record; testgames/live/<id>/: while it plays
    DIR/humangames/<id>.json     a browser game's record
    DIR/run/streams/             the live streams' slots, across web processes
    DIR/tmp/                     uploads spooled, bots' instance and build folders
    DIR/runner.lock              held by the one season runner
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from referee.bots.confinement import UPLOADS as UPLOADS_NAME  # the bots room knows it too
from referee.bots.sandbox import DATA_ENV  # the sandbox keeps every bot out of it
from referee.game.livefile import SUFFIX
from referee.league.folder import REPORT_NAME, LeagueFolder

DEFAULT_DATA = Path("club-data")
SEASON_FILE_ENV = "REFEREE_SEASON_FILE"   # the season file, when not DIR/season.toml


def data_dir() -> Path:
    """The club's data folder: $REFEREE_SERVER_DATA, or ./club-data."""
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA).resolve()


@dataclass(frozen=True)
class ClubFolder:
    """The club's data folder `root` and the paths in it (see the module's list)."""

    root: Path

    DATABASE = "server.sqlite3"
    SEASON_FILE = "season.toml"
    LAST_GOOD = "season.last-good.toml"
    SEASON = "season"
    COMPETITIONS = "competitions"
    UPLOADS = UPLOADS_NAME
    TEST_GAMES = "testgames"
    HUMAN_GAMES = "humangames"
    TMP = "tmp"
    RUNNER_LOCK = "runner.lock"

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @classmethod
    def of_django(cls) -> ClubFolder:
        """The folder of the web process (and of the runner once it set Django up)."""
        from django.conf import settings

        return cls(Path(settings.DATA_DIR))

    @property
    def database(self) -> Path:
        return self.root / self.DATABASE

    def season_file(self) -> Path:
        """The season file: $REFEREE_SEASON_FILE, or DIR/season.toml."""
        return Path(os.environ.get(SEASON_FILE_ENV) or self.root / self.SEASON_FILE)

    @property
    def default_season_file(self) -> Path:
        return self.root / self.SEASON_FILE

    @property
    def last_good(self) -> Path:
        return self.root / self.LAST_GOOD

    @property
    def season(self) -> Path:
        """The season's league folder (referee.league.season)."""
        return self.root / self.SEASON

    @property
    def season_league(self) -> LeagueFolder:
        return LeagueFolder(self.season)

    @property
    def season_report(self) -> str:
        """The closed season's static report, relative to DIR (as the database keeps it)."""
        return f"{self.SEASON}/{REPORT_NAME}/index.html"

    @classmethod
    def competition_folder(cls, slug: str) -> str:
        """A new competition's league folder relative to DIR (as the database keeps it)."""
        return f"{cls.COMPETITIONS}/{slug}"

    def competition(self, folder: str) -> Path:
        """A competition's league folder from its `folder` (relative to DIR: `season` for the
        first competition, competitions/<slug> for the others)."""
        return self.root / folder

    def competition_league(self, folder: str) -> LeagueFolder:
        return LeagueFolder(self.competition(folder))

    @classmethod
    def competition_report(cls, folder: str) -> str:
        """A closed competition's static report, relative to DIR (as the database keeps it)."""
        return f"{folder}/{REPORT_NAME}/index.html"

    @property
    def uploads(self) -> Path:
        return self.root / self.UPLOADS

    def bot_uploads(self, bot_name: str) -> Path:
        """Every version a student's bot uploaded: DIR/uploads/<bot>/."""
        return self.uploads / bot_name

    def version_upload(self, bot_name: str, number: int) -> Path:
        """One uploaded version: DIR/uploads/<bot>/<n>/ (its `archive` and `bot` folder)."""
        return self.bot_uploads(bot_name) / str(number)

    @classmethod
    def version_folder(cls, bot_name: str, number: int) -> str:
        """A version's `bot` folder relative to DIR, as the database keeps it."""
        return f"{cls.UPLOADS}/{bot_name}/{number}/bot"

    @property
    def incoming(self) -> Path:
        """Where an upload is unpacked before it becomes a version."""
        return self.uploads / ".incoming"

    @classmethod
    def test_game_record(cls, game_id: int | str) -> str:
        """A test game's record file, relative to DIR (as the database keeps it)."""
        return f"{cls.TEST_GAMES}/{game_id}.json"

    @classmethod
    def human_game_record(cls, game_id: int | str) -> str:
        """A browser game's record file, relative to DIR (as the database keeps it)."""
        return f"{cls.HUMAN_GAMES}/{game_id}.json"

    @property
    def test_games(self) -> Path:
        """The test games' record files, and their live folders while they play."""
        return self.root / self.TEST_GAMES

    def test_game_live(self, game_id: int) -> Path:
        """The live folder of test game `game_id`: its executor's own, cleared on its start."""
        return self.test_games / "live" / str(game_id)

    def test_game_live_file(self, game_id: int) -> Path:
        """The live file of test game `game_id` while it is played (referee.game.livefile);
        a path that does not exist when the game is not in play."""
        folder = self.test_game_live(game_id)
        found = sorted(folder.glob(f"*{SUFFIX}"))
        return found[0] if found else folder / f"none{SUFFIX}"

    @property
    def streams(self) -> Path:
        """The live streams' slots, shared by every web process (club.streamslots)."""
        return self.root / "run" / "streams"

    @property
    def tmp(self) -> Path:
        return self.root / self.TMP

    @property
    def runner_lock(self) -> Path:
        return self.root / self.RUNNER_LOCK

"""A league's folder: the one place that names what a league keeps on disk.

A league (or a season, which is a league that grows) lives in one folder: its store
(`league.db`, the one truth), the table files written from it, and the report built from it.
Every part of the referee (the runner, `referee table/show/export/verify/report`, the club
server's pages and runner) finds these through `LeagueFolder`, so a name is decided here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# The store (SQLite, game records) is loaded when one is opened: the CLI names these paths
# before it needs a store.
if TYPE_CHECKING:
    from referee.league.store import LeagueStore

STORE_NAME = "league.db"
LIVE_NAME = "live"        # the live files of the games in play (referee.game.livefile)
REPORT_NAME = "report"


@dataclass(frozen=True)
class LeagueFolder:
    """The folder `root` of one league and every path in it."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def store_path(self) -> Path:
        """The league's store (SQLite; its -wal and -shm files sit beside it)."""
        return self.root / STORE_NAME

    @property
    def store_parts(self) -> tuple[Path, Path]:
        """The store and its write-ahead log: what the store takes on disk between checkpoints."""
        return self.store_path, self.store_path.with_name(STORE_NAME + "-wal")

    @property
    def tables(self) -> Path:
        """Where the table files (table.md, table.csv, table.json, ...) are written."""
        return self.root

    @property
    def live(self) -> Path:
        """Where the games in play write their live files (`referee watch` follows them)."""
        return self.root / LIVE_NAME

    @property
    def report(self) -> Path:
        """The default folder of the league's HTML report."""
        return self.root / REPORT_NAME

    def has_store(self) -> bool:
        """True when the folder holds a store file (which may still hold no league)."""
        return self.store_path.is_file()

    def open_store(self) -> LeagueStore:
        """The league's store, created if missing (StoreVersionError for a store of another
        schema version)."""
        from referee.league.store import LeagueStore

        return LeagueStore(self.store_path)

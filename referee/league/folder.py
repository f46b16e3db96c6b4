"""A league's folder: the one place that names what a league keeps on disk.

A league (or a season, which is a league that grows) lives in one folder: its store (the one
truth), the table files written from it, the live files of the games in play, the report built
from it, and for a season the state its refits resume from. A gauntlet lives in a folder of the
same kind, with a store and a result of its own. Every part of the referee (the runner, the
gauntlet, `referee table/show/export/verify/report`, the club server's pages and runner) finds
these through `LeagueFolder`, so each name is spelled here once and nowhere else.
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
# The table files, written from the store (referee.report.table_files and .worker_tables).
TABLE_MD = "table.md"
TABLE_CSV = "table.csv"
TABLE_JSON = "table.json"
HEAD_TO_HEAD_CSV = "head_to_head.csv"
PAIRWISE_CSV = "pairwise.csv"
WORKERS_CSV = "workers.csv"   # only when games were played on remote workers
# A season's TrueSkill state after its settled games (referee.server.runner.refit).
REFIT_STATE_NAME = "refit-state.json"
# A gauntlet's store and its result (referee.league.gauntlet).
GAUNTLET_STORE_NAME = "gauntlet.db"
GAUNTLET_RESULT_NAME = "gauntlet.json"
# What SQLite keeps beside a store while it is open (write-ahead log, shared memory).
SQLITE_SIDES = ("-wal", "-shm")


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
        """Where the table files (`table_md`, `table_csv`, `table_json`, ...) are written."""
        return self.root

    @property
    def table_md(self) -> Path:
        """The league table in Markdown (the settings, the table, head to head, workers)."""
        return self.tables / TABLE_MD

    @property
    def table_csv(self) -> Path:
        """The league table as CSV, a row per bot."""
        return self.tables / TABLE_CSV

    @property
    def table_json(self) -> Path:
        """The league table as JSON, at full precision."""
        return self.tables / TABLE_JSON

    @property
    def head_to_head_csv(self) -> Path:
        """Head to head as CSV, a row per pair of bots."""
        return self.tables / HEAD_TO_HEAD_CSV

    @property
    def pairwise_csv(self) -> Path:
        """The global fit's pairwise chances as CSV (when the league was fitted)."""
        return self.tables / PAIRWISE_CSV

    @property
    def workers_csv(self) -> Path:
        """The workers' table as CSV (when games were played on remote workers)."""
        return self.tables / WORKERS_CSV

    @property
    def table_files(self) -> tuple[Path, ...]:
        """Every table file a league may write (which of them exist depends on the league)."""
        return (self.table_md, self.table_csv, self.table_json, self.head_to_head_csv,
                self.pairwise_csv, self.workers_csv)

    @property
    def refit_state(self) -> Path:
        """A season's TrueSkill state after its settled games, that the next refit resumes."""
        return self.root / REFIT_STATE_NAME

    @property
    def gauntlet_store(self) -> Path:
        """A gauntlet's store (SQLite, as a league's)."""
        return self.root / GAUNTLET_STORE_NAME

    @property
    def gauntlet_result(self) -> Path:
        """A gauntlet's verdict and where its test stands, as JSON."""
        return self.root / GAUNTLET_RESULT_NAME

    @property
    def live(self) -> Path:
        """Where the games in play write their live files (`referee watch` follows them)."""
        return self.root / LIVE_NAME

    @property
    def report(self) -> Path:
        """The default folder of the league's HTML report."""
        return self.root / REPORT_NAME

    def paths(self) -> tuple[Path, ...]:
        """Every path this folder names: its files (the stores with what SQLite keeps beside
        them while open) and its two folders (the live files, the report)."""
        stores = (self.store_path, self.gauntlet_store)
        sides = tuple(store.with_name(store.name + side)
                      for store in stores for side in SQLITE_SIDES)
        return (*stores, *sides, *self.table_files, self.refit_state, self.gauntlet_result,
                self.live, self.report)

    def has_store(self) -> bool:
        """True when the folder holds a store file (which may still hold no league)."""
        return self.store_path.is_file()

    def open_store(self) -> LeagueStore:
        """The league's store, created if missing (StoreVersionError for a store of another
        schema version)."""
        from referee.league.store import LeagueStore

        return LeagueStore(self.store_path)

    def open_gauntlet_store(self) -> LeagueStore:
        """The gauntlet's store, created if missing (as `open_store`)."""
        from referee.league.store import LeagueStore

        return LeagueStore(self.gauntlet_store)

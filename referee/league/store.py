"""The league store: one SQLite database (WAL) per league, written one game at a time.

A game is committed the moment it ends, so a referee killed at any point (SIGKILL included)
loses at most the games in flight; `--resume` plays exactly the games with no row yet.
Seeds are stored as text because they are unsigned 64-bit numbers. The store carries its
schema version (SQLite's `user_version`), checked on every open.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import time
import zlib
from collections.abc import Callable, Collection, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from referee.errors import StoreError
from referee.game.match import MatchResult
from referee.league.schedule import ScheduledGame
from referee.ratings.results import PlayedGame

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL               -- JSON
);
CREATE TABLE IF NOT EXISTS bots (
    name      TEXT PRIMARY KEY,
    version   TEXT NOT NULL,          -- hash of the bot's files, its address or image
    spec_path TEXT
);
CREATE TABLE IF NOT EXISTS bot_versions (
    name       TEXT NOT NULL,         -- every version a bot played the league with
    version    TEXT NOT NULL,
    first_seen REAL NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS schedule (
    idx       INTEGER PRIMARY KEY,    -- schedule order: ratings are applied in this order
    grp       INTEGER NOT NULL,       -- duplicate group (same table and seed)
    bots      TEXT NOT NULL,          -- JSON list, seat order
    seed      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    idx          INTEGER PRIMARY KEY REFERENCES schedule(idx),
    game_id      TEXT NOT NULL,
    bots         TEXT NOT NULL,       -- JSON list, seat order
    seed         TEXT NOT NULL,
    places       TEXT NOT NULL,       -- JSON list per seat
    money        TEXT NOT NULL,
    forfeited    TEXT NOT NULL,
    strikes      TEXT NOT NULL,       -- JSON list of {type: count} per seat
    latencies_us TEXT NOT NULL,       -- JSON list of lists per seat
    versions     TEXT NOT NULL,       -- JSON list of bot versions per seat
    seconds      REAL NOT NULL,
    finished_at  REAL NOT NULL,
    record       BLOB NOT NULL,       -- zlib-compressed JSON game record (docs/replay-format.md),
                                      -- with the preset dictionary record.zdict since round 4
    note_values  TEXT NOT NULL DEFAULT '[]'  -- JSON per seat: {name: [sum, count]} of its notes
);
CREATE TABLE IF NOT EXISTS game_seats (
    name  TEXT NOT NULL,              -- a bot that sat at the game (any seat)
    idx   INTEGER NOT NULL,           -- the game's schedule index
    PRIMARY KEY (name, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS game_strikes (
    idx   INTEGER NOT NULL,           -- the game's schedule index
    seat  INTEGER NOT NULL,
    move  INTEGER NOT NULL,           -- the placement it happened at, from 1 (record `decisions`)
    kind  TEXT NOT NULL,              -- a strike type, or "forfeit" (at the strike that caused
                                      -- it; move 0 for a seat that never played)
    PRIMARY KEY (idx, seat, move, kind)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS game_workers (
    idx          INTEGER PRIMARY KEY REFERENCES games(idx),
    worker       TEXT NOT NULL        -- the cluster worker that played the game (cluster.md)
);
"""


# The schema this referee reads and writes, kept in SQLite's `user_version`. A store written
# before the version was kept says 0; its tables are this schema's (what was added since came
# with a migration on open, below), so it is read as version 1 and marked so when opened to write.
SCHEMA_VERSION = 1


class StoreVersionError(StoreError):
    """A store written by a referee with another schema: this one cannot say what it holds."""


class StoreUnreadable(StoreError):
    """A file where a league store should be that SQLite cannot read: not a database, or a
    damaged one (a disk that failed, a copy cut short)."""


def check_version(db: sqlite3.Connection, path: Path) -> int:
    """The schema version of the store open in `db` (0: none kept yet); StoreVersionError
    naming `path` for a store of another version, StoreUnreadable for a file SQLite cannot
    read as a database."""
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute("SELECT count(*) FROM sqlite_schema").fetchone()   # reads the first pages
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise
        raise StoreUnreadable(f"{path}: not a league store this referee can read ({exc}); "
                              f"restore it from a copy, or start a new league in another "
                              f"folder") from None
    if version not in (0, SCHEMA_VERSION):
        raise StoreVersionError(f"{path}: a league store of schema version {version}; this "
                                f"referee reads version {SCHEMA_VERSION} (use the referee that "
                                f"wrote it, or start a new league)")
    return version


def is_damaged(exc: sqlite3.DatabaseError) -> bool:
    """True if SQLite says the file itself is not a database or is damaged (a fault of the data
    on disk, the user's to repair), rather than a query or lock problem."""
    return getattr(exc, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


# A new store's page size: a compressed record (about 1.5-2.5 KB) and its row's other columns
# share 8 KB pages two or three at a time; on 4 KB pages every such row filled a page alone.
PAGE_SIZE = 8192
# The write-ahead log is cut back to this after a checkpoint rather than keeping its largest size.
WAL_LIMIT_BYTES = 1 << 20
RECORD_DICT = "record.zdict"   # never change it: stored records name it by its checksum
RECORD_LEVEL = 9


@functools.cache
def record_dictionaries() -> dict[int, bytes]:
    """The preset dictionaries records may be compressed with, by their Adler-32 (the id a zlib
    stream that used one carries in its header)."""
    data = resources.files("referee.league").joinpath(RECORD_DICT).read_bytes()
    return {zlib.adler32(data): data}


def pack_record(text: bytes) -> bytes:
    """A game record's JSON text as the store keeps it: zlib with the preset dictionary (the
    record's usual keys and events), about 40% smaller than plain zlib on a record of a few KB."""
    (dictionary,) = record_dictionaries().values()
    packer = zlib.compressobj(RECORD_LEVEL, zdict=dictionary)
    return packer.compress(text) + packer.flush()


def unpack_record(blob: bytes) -> bytes:
    """The JSON text of a stored record: plain zlib (stores written before the dictionary) or
    zlib with a preset dictionary named in its header (ValueError if it is not one we know)."""
    if len(blob) >= 6 and blob[1] & 0x20:   # FDICT: a dictionary id follows the 2-byte header
        dictionary = record_dictionaries().get(int.from_bytes(blob[2:6], "big"))
        if dictionary is None:
            raise ValueError("a game record compressed with an unknown dictionary")
        unpacker = zlib.decompressobj(zdict=dictionary)
        return unpacker.decompress(blob) + unpacker.flush()
    return zlib.decompress(blob)


def load_record(blob: bytes) -> dict[str, Any]:
    """A stored record's JSON data."""
    return json.loads(unpack_record(blob))


class GameAlreadyStored(StoreError, ValueError):
    """A second record for one schedule index: a league stores each game once."""


class HumanGameRefused(StoreError, ValueError):
    """A game with a person's seat (`"human": true`, referee.game.human): a league rates every
    game it stores, and a human game is never rated, so none is stored."""


def remove_database(path: Path) -> None:
    """Remove an SQLite database and its journal files (what a failed start left)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


def games_stored(path: Path) -> int:
    """How many games the league database at `path` holds, 0 while there is none yet: for
    watching a league from another process (opened read-only, so nothing is created)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro",
                                                uri=True)) as db:
            return db.execute("SELECT count(*) FROM games").fetchone()[0]
    except sqlite3.Error:
        return 0


class LeagueStore:
    """A league's database at `path` (created if missing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
        try:
            version = check_version(self.db, path)   # before anything is written to it
        except BaseException:
            self.db.close()
            raise
        self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")   # only a new, empty file takes it
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
        # In one transaction: a reader beside a new store sees all its tables or none.
        self.db.executescript(f"BEGIN;\n{SCHEMA}\nCOMMIT;")
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(games)")}
        if "note_values" not in columns:   # a league stored before bots sent notes
            self.db.execute("ALTER TABLE games ADD COLUMN note_values TEXT NOT NULL DEFAULT '[]'")
        if version == 0:   # a new store, or one written before versions: now says what it is
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._index_seats()

    def _index_seats(self) -> None:
        """Fill game_seats for games stored before it existed (once: a store whose index
        already covers its last game is left alone)."""
        last = self.db.execute("SELECT max(idx) FROM games").fetchone()[0]
        if last is None or self.db.execute("SELECT 1 FROM game_seats WHERE idx = ? LIMIT 1",
                                           (last,)).fetchone():
            return
        with self._transaction():
            for idx, bots in self.db.execute("SELECT idx, bots FROM games").fetchall():
                self.db.executemany("INSERT OR IGNORE INTO game_seats VALUES (?, ?)",
                                    [(name, idx) for name in set(json.loads(bots))])

    @classmethod
    def open_readonly(cls, path: Path) -> LeagueStore:
        """The store at `path` opened for reading only (the club server's pages): nothing is
        created or changed, and a missing file is an error (sqlite3.OperationalError);
        StoreVersionError for a store of another schema version."""
        store = cls.__new__(cls)
        store.path = path
        store.db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                   isolation_level=None, check_same_thread=False)
        try:
            check_version(store.db, path)
        except BaseException:
            store.db.close()
            raise
        return store

    @classmethod
    def open_made(cls, path: Path) -> LeagueStore | None:
        """The store at `path` opened for reading only, or None while there is none to read: no
        file yet, or a file whose writer has not made its tables yet (a reader that starts
        beside a new league, `referee league --watch` or a club's page, finds it so)."""
        if not path.exists():
            return None
        store = cls.open_readonly(path)
        if store.db.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'games'"
                            ).fetchone() is None:
            store.close()
            return None
        return store

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    # ---------------------------------------------------------------- settings and schedule

    def settings(self) -> dict[str, Any] | None:
        """The stored league settings as stored (JSON values by key), or None for a new store.
        Code reads them typed, through referee.league.stored.read_league."""
        rows = self.db.execute("SELECT key, value FROM settings").fetchall()
        return {key: json.loads(value) for key, value in rows} or None

    def holds_league(self) -> bool:
        """True once a league's settings are stored (False for a new store)."""
        return self.db.execute("SELECT 1 FROM settings LIMIT 1").fetchone() is not None

    def create(self, settings: dict[str, Any], bots: dict[str, tuple[str, str | None]],
               schedule: list[ScheduledGame]) -> None:
        """Store a new league's settings, bots (name -> (version, spec path)) and schedule."""
        self.extend(settings, bots, schedule)

    def extend(self, settings: dict[str, Any], bots: dict[str, tuple[str, str | None]],
               schedule: list[ScheduledGame]) -> None:
        """Grow a stored league in one transaction: settings to change, bots to add (name ->
        (version, spec path)) and games to append to the schedule. Stored games are untouched."""
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in settings.items()])
            self.db.executemany("INSERT OR REPLACE INTO bots VALUES (?, ?, ?)",
                                [(name, v, p) for name, (v, p) in bots.items()])
            self.db.executemany("INSERT OR IGNORE INTO bot_versions VALUES (?, ?, ?)",
                                [(name, v, time.time()) for name, (v, _) in bots.items()])
            self.db.executemany(
                "INSERT INTO schedule VALUES (?, ?, ?, ?)",
                [(g.index, g.group, json.dumps(list(g.bots)), str(g.seed)) for g in schedule],
            )

    def update_bot(self, name: str, version: str, spec_path: str | None) -> None:
        """Record a bot's current version (its earlier versions stay in `versions`)."""
        with self._transaction():
            self.db.execute("INSERT OR REPLACE INTO bots VALUES (?, ?, ?)",
                            (name, version, spec_path))
            self.db.execute("INSERT OR IGNORE INTO bot_versions VALUES (?, ?, ?)",
                            (name, version, time.time()))

    def versions(self) -> dict[str, list[str]]:
        """name -> every version the bot played this league with, oldest first."""
        rows = self.db.execute("SELECT name, version FROM bot_versions ORDER BY first_seen, "
                               "rowid").fetchall()
        found: dict[str, list[str]] = {}
        for name, version in rows:
            found.setdefault(name, []).append(version)
        for name, (version, _) in self.bots().items():   # leagues stored before versions
            found.setdefault(name, [version])
        return found

    def bots(self) -> dict[str, tuple[str, str | None]]:
        """name -> (version, spec path)."""
        rows = self.db.execute("SELECT name, version, spec_path FROM bots").fetchall()
        return {name: (version, path) for name, version, path in rows}

    def schedule(self) -> list[ScheduledGame]:
        """The whole schedule, in order."""
        rows = self.db.execute(
            "SELECT idx, grp, bots, seed FROM schedule ORDER BY idx").fetchall()
        seen: dict[int, int] = {}   # group -> games of it so far: a game's rotation
        games = []
        parsed = json_rows([bots for _, _, bots, _ in rows])
        for (idx, grp, bots, seed), names in zip(rows, parsed, strict=True):
            rotation = seen[grp] = seen.get(grp, -1) + 1
            names = json.loads(bots) if names is None else names
            games.append(ScheduledGame(idx, tuple(names), int(seed), grp, rotation))
        return games

    # ---------------------------------------------------------------- games

    def count(self) -> int:
        """Games recorded."""
        return self.db.execute("SELECT count(*) FROM games").fetchone()[0]

    def done(self) -> set[int]:
        """Schedule indexes of the games already recorded."""
        return {idx for (idx,) in self.db.execute("SELECT idx FROM games")}

    def save(self, game: ScheduledGame, result: MatchResult) -> None:
        """Record a finished game (one transaction: all of it or nothing). HumanGameRefused
        for a game with a human seat: whatever plays it, no league or season rates it."""
        human = [bot.get("name") for bot in result.record.meta.get("bots", ())
                 if isinstance(bot, dict) and bot.get("human")]
        if human:
            raise HumanGameRefused(f"{self.path}: game {game.index} has a human seat "
                                   f"({', '.join(map(str, human))}); human games are never "
                                   f"stored or rated")
        seats = result.seats
        record = pack_record(result.record.to_json_text().encode())
        row = (
            game.index, result.game_id, json.dumps(list(game.bots)), str(game.seed),
            json.dumps(result.places), json.dumps(result.money),
            json.dumps([s.forfeited for s in seats]), json.dumps([s.strikes for s in seats]),
            json.dumps([s.latencies_us for s in seats]),
            json.dumps([s.version for s in seats]), result.seconds, time.time(), record,
            json.dumps(_note_values(result.record.meta.get("decisions", ()), len(seats))),
        )
        worker = result.record.meta.get("worker")
        with self._transaction():
            if self.db.execute("SELECT 1 FROM games WHERE idx = ?", (game.index,)).fetchone():
                raise GameAlreadyStored(f"{self.path}: game {game.index} is recorded already; "
                                        f"a second record of it is refused")
            self.db.execute(f"INSERT INTO games VALUES ({', '.join('?' * len(row))})", row)
            self.db.executemany("INSERT OR IGNORE INTO game_seats VALUES (?, ?)",
                                [(name, game.index) for name in set(game.bots)])
            self.db.executemany("INSERT OR IGNORE INTO game_strikes VALUES (?, ?, ?, ?)",
                                [(game.index, *mark) for mark in strike_moves(
                                    result.record.meta.get("decisions", ()),
                                    result.record.meta.get("forfeits", ()))])
            if worker is not None:
                self.db.execute("INSERT INTO game_workers VALUES (?, ?)", (game.index, worker))

    def workers(self) -> dict[int, str]:
        """Schedule index -> the cluster worker that played it (games played on a cluster)."""
        return dict(self.db.execute("SELECT idx, worker FROM game_workers"))

    def played(self) -> list[PlayedGame]:
        """Every recorded game, in schedule order."""
        # One JSON document per row, not one per column: the refit of a big season reads
        # every game, and json.loads's fixed cost per call was most of the reading. Strikes
        # are decoded once per distinct text: most games have none, so their text repeats.
        joined = " || ',' || ".join(PLAYED_COLUMNS)
        rows = self.db.execute(
            f"SELECT idx, '[' || {joined} || ']', strikes FROM games ORDER BY idx").fetchall()
        strikes: dict[str, list[dict[str, int]]] = {}
        parsed = json_rows([text for _, text, _ in rows], len(PLAYED_COLUMNS))
        try:
            return [_played(idx, text, marks, strikes, values)
                    for (idx, text, marks), values in zip(rows, parsed, strict=True)]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"{self.path}: a recorded game is not readable ({exc})") from None

    def record(self, index: int) -> dict[str, Any] | None:
        """The stored game record (JSON data) of schedule index `index`."""
        row = self.db.execute("SELECT record FROM games WHERE idx = ?", (index,)).fetchone()
        return load_record(row[0]) if row else None

    def games_of(self, names: Collection[str], limit: int = 50,
                 keep: Callable[[dict[str, Any]], bool] | None = None,
                 before: int | None = None) -> list[dict[str, Any]]:
        """The newest recorded games (newest first, at most `limit`, with an index below
        `before` if given) in which any of `names` sat and that `keep` accepts: index,
        game_id, bots, places, money, strikes and forfeited (per seat) and finished_at
        (seconds since the epoch). For pages: the games are found in the game_seats index,
        newest first, and only their short columns are read, never records."""
        wanted = set(names)
        if not wanted:
            return []
        found: list[dict[str, Any]] = []
        for idx in self._indexes_of(sorted(wanted), before):
            row = self.db.execute("SELECT game_id, bots, places, money, strikes, forfeited, "
                                  "finished_at FROM games WHERE idx = ?", (idx,)).fetchone()
            if row is None:
                continue
            game_id, bots, places, money, strikes, forfeited, finished = row
            game = {"index": idx, "game_id": game_id, "bots": json.loads(bots),
                    "places": json.loads(places), "money": json.loads(money),
                    "strikes": json.loads(strikes), "forfeited": json.loads(forfeited),
                    "finished_at": finished}
            if wanted.intersection(game["bots"]) and (keep is None or keep(game)):
                found.append(game)
                if len(found) >= limit:
                    break
        return found

    def strikes_in(self, indexes: Collection[int]) -> dict[int, list[tuple[int, int, str]]]:
        """Game index -> its strikes and forfeits as (seat, move, kind), each seat's in move
        order, for these games (an index search each; none for games stored before the marks
        were kept, or in a store written before them that is open read-only)."""
        wanted = sorted(set(indexes))
        if not wanted or not self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'game_strikes'").fetchone():
            return {}
        found: dict[int, list[tuple[int, int, str]]] = {}
        # In the primary key's order (idx, seat, move): a seat's marks come in move order.
        rows = self.db.execute(f"SELECT idx, seat, move, kind FROM game_strikes WHERE idx IN "
                               f"({', '.join('?' * len(wanted))})", wanted)
        for idx, seat, move, kind in rows:
            found.setdefault(idx, []).append((seat, move, kind))
        return found

    def spans(self, names: Collection[str]) -> dict[str, tuple[int, int]]:
        """League name -> (first, last) schedule index of the games it sat at, for those of
        `names` that played (two index searches each, in game_seats)."""
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'game_seats'").fetchone():
            return {}
        found = {}
        for name in names:
            # Two queries: SQLite answers a lone min() or max() from the index's ends.
            first = self.db.execute("SELECT min(idx) FROM game_seats WHERE name = ?",
                                    (name,)).fetchone()[0]
            if first is not None:
                last = self.db.execute("SELECT max(idx) FROM game_seats WHERE name = ?",
                                       (name,)).fetchone()[0]
                found[name] = (first, last)
        return found

    def _indexes_of(self, names: list[str], before: int | None = None) -> Iterator[int]:
        """Schedule indexes (below `before`, if given) of the games any of `names` sat at,
        newest first: from game_seats (an index search per name), or, in a store written before
        it that is open read-only, from a scan of the games table."""
        marks = ", ".join("?" * len(names))
        below = 2**63 - 1 if before is None else before
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'game_seats'").fetchone():
            rows = self.db.execute(f"SELECT DISTINCT idx FROM game_seats WHERE name IN ({marks}) "
                                   f"AND idx < ? ORDER BY idx DESC", [*names, below])
        else:
            where = " OR ".join("bots LIKE ?" for _ in names)   # JSON text; exact test after
            rows = self.db.execute(f"SELECT idx FROM games WHERE ({where}) AND idx < ? "
                                   f"ORDER BY idx DESC",
                                   [*(f"%{json.dumps(n)}%" for n in names), below])
        for (idx,) in rows:
            yield idx

    def records(self) -> Iterator[dict[str, Any]]:
        """Every stored game record, in schedule order."""
        for (blob,) in self.db.execute("SELECT record FROM games ORDER BY idx"):
            yield load_record(blob)

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if kind else "COMMIT")


def strike_moves(decisions: Any, forfeits: Any) -> list[tuple[int, int, str]]:
    """(seat, move, kind) of each strike in a record's `decisions` (move: the placement, from
    1) and of each seat's forfeit in its `forfeits`: at the seat's last strike (the one that
    made it forfeit), else at its first move played for it, else 0 (it never had a move)."""
    marks: list[tuple[int, int, str]] = []
    last_strike: dict[int, int] = {}
    first_auto: dict[int, int] = {}
    for move, decision in enumerate(decisions, start=1):
        seat = decision.get("seat")
        if not isinstance(seat, int):
            continue
        if decision.get("strike"):
            marks.append((seat, move, str(decision["strike"])))
            last_strike[seat] = move
        elif decision.get("auto") == "forfeited":
            first_auto.setdefault(seat, move)
    for forfeit in forfeits:
        seat = forfeit.get("seat")
        if isinstance(seat, int):
            marks.append((seat, last_strike.get(seat, first_auto.get(seat, 0)), "forfeit"))
    return marks


def _note_values(decisions: Any, seats: int) -> list[dict[str, list[float]]]:
    """Per seat, name -> [sum, count] of the numbers its decisions carried (record `values`)."""
    sums: list[dict[str, list[float]]] = [{} for _ in range(seats)]
    for decision in decisions:
        for name, value in decision.get("values", {}).items():
            entry = sums[decision["seat"]].setdefault(name, [0.0, 0])
            entry[0] += value
            entry[1] += 1
    return sums if any(sums) else []


#: The columns of a played game that ratings and tables read, but strikes, in PlayedGame's order.
PLAYED_COLUMNS = ("bots", "places", "money", "forfeited", "latencies_us", "note_values")


def json_rows(texts: list[str], width: int | None = None) -> list[Any]:
    """The JSON list in each of `texts`, parsed as one document: a big season's refit reads
    100,000 games, and json.loads's fixed cost per call was a third of reading them. Where that
    does not give one list (of `width` values, if given) per text, a text is not one JSON list
    (or not JSON): all are None then, for the caller to parse each alone and name the one."""
    try:
        values = json.loads("[" + ",".join(texts) + "]")
    except (ValueError, TypeError):      # TypeError: a NULL column
        return [None] * len(texts)
    if len(values) != len(texts) or not all(
            isinstance(value, list) and (width is None or len(value) == width)
            for value in values):
        return [None] * len(texts)
    return values


def _played(idx: int, text: str, marks: str, decoded: dict[str, Any],
            values: Any = None) -> PlayedGame:
    """The PlayedGame of game `idx` from its columns but strikes joined into one JSON list
    (`text`, or `values` when they were parsed already) and its strikes column (`marks`,
    decoded through `decoded`: text -> value; each game gets dicts of its own). ValueError
    naming the game if a column is not JSON."""
    try:
        values = json.loads(text) if values is None else values
        strikes = decoded[marks] if marks in decoded else decoded.setdefault(
            marks, json.loads(marks))
    except ValueError as exc:
        raise ValueError(f"game {idx}: {exc}") from None
    if not isinstance(values, list) or len(values) != len(PLAYED_COLUMNS):
        raise ValueError(f"game {idx}: its stored columns are not one JSON value each")
    bots, places, money, forfeited, latencies, notes = values
    return PlayedGame(
        index=idx,
        bots=tuple(bots),
        places=tuple(places),
        money=tuple(money),
        forfeited=tuple(forfeited),
        strikes=tuple(dict(seat) for seat in strikes),
        latencies_us=tuple(tuple(x) for x in latencies),
        note_values=tuple({name: (total, count) for name, (total, count) in seat.items()}
                          for seat in notes),
    )

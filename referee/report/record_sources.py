"""Where records come from: a league directory's store, or record files (JSON or JSON Lines),
and the game selections the commands accept (`3`, `0-9,12`, `g3f9c0a1b2c3d4e5f`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import UserError
from referee.league.folder import LeagueFolder
from referee.league.store import LeagueStore
from referee.util.numbers import is_whole


class RecordSourceError(UserError, ValueError):
    """A league directory, record file or game selection that cannot be read."""


@dataclass(frozen=True)
class StoredRecord:
    """One record and where it came from (a schedule index for a league's games)."""

    source: str                 # "DIR game 12" or "FILE line 3": for messages
    data: dict[str, Any]
    index: int | None = None    # schedule index, for records from a store
    row: dict[str, Any] | None = None   # the store's own columns (places, money) for the game


def open_league(directory: Path) -> LeagueStore:
    """The store of the league in `directory`; RecordSourceError if there is none
    (StoreVersionError for a store of another schema version, StoreUnreadable for a damaged
    one)."""
    folder = LeagueFolder(Path(directory))
    name = folder.store_path.name
    if not folder.has_store():
        raise RecordSourceError(f"{directory}: no league here ({name} missing)")
    store = folder.open_store()
    if not store.holds_league():
        store.close()
        raise RecordSourceError(f"{directory}: {name} holds no league")
    return store


def parse_selection(text: str) -> list[int | str]:
    """`0-9,12,g3f9c0a1b2c3d4e5f` -> [0, 1, ..., 9, 12, "g3f9c0a1b2c3d4e5f"]: schedule indexes,
    ranges and game ids."""
    items: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        low, dash, high = part.partition("-")
        if is_whole(part):
            items.append(int(part))
        elif dash and is_whole(low) and is_whole(high):
            if int(high) < int(low):
                raise RecordSourceError(f"game range {part!r} runs backwards")
            items.extend(range(int(low), int(high) + 1))
        else:
            items.append(part)
    if not items:
        raise RecordSourceError(f"no games in the selection {text!r}")
    return items


def resolve(store: LeagueStore, wanted: list[int | str] | None) -> list[int]:
    """Schedule indexes of the stored games a selection names (all of them for None), in
    schedule order; RecordSourceError naming the first game that is not stored."""
    ids = dict(store.db.execute("SELECT game_id, idx FROM games"))
    stored = set(ids.values())
    if wanted is None:
        return sorted(stored)
    chosen: list[int] = []
    for item in wanted:
        index = ids.get(item) if isinstance(item, str) else item
        if index is None or index not in stored:
            raise RecordSourceError(f"{store.path.parent}: no recorded game {item!r}")
        if index not in chosen:
            chosen.append(index)
    return chosen


def league_records(directory: Path, wanted: list[int | str] | None = None
                   ) -> Iterator[StoredRecord]:
    """The records of a league's stored games (a selection, or all), with the store's own
    places and money for each."""
    store = open_league(directory)
    try:
        for index in resolve(store, wanted):
            places, money = store.db.execute(
                "SELECT places, money FROM games WHERE idx = ?", (index,)).fetchone()
            data = store.record(index)
            assert data is not None
            yield StoredRecord(f"{directory} game {index}", data, index,
                               {"places": json.loads(places), "money": json.loads(money)})
    finally:
        store.close()


def file_records(path: Path) -> Iterator[StoredRecord]:
    """The records in a file: one JSON record, a JSON array of records, or JSON Lines (one
    record per line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordSourceError(f"{path}: {exc}") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(whole, list):      # a JSON array of records (`export --out FILE.json`)
            for number, data in enumerate(whole, start=1):
                where = f"{path} record {number}"
                yield StoredRecord(where, _record_object(data, where))
        else:
            yield StoredRecord(str(path), _record_object(whole, str(path)))
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordSourceError(f"{where}: not JSON ({exc.msg})") from None
        yield StoredRecord(where, _record_object(data, where))


def pick_record(path: Path, game: str | None) -> StoredRecord:
    """The record of a file that `game` names: its game id, or its number in the file (1 = the
    first); with no `game`, the file's only record. RecordSourceError saying what the file
    holds otherwise."""
    found = list(file_records(path))
    if not found:
        raise RecordSourceError(f"{path}: holds no game record")
    if game is None:
        if len(found) > 1:
            raise RecordSourceError(f"{path} holds {len(found)} records: give GAME, a number "
                                    f"from 1 to {len(found)} or a game id")
        return found[0]
    if is_whole(game):
        if not 1 <= int(game) <= len(found):
            raise RecordSourceError(f"{path}: no record {game} (it holds {len(found)}, "
                                    f"numbered from 1)")
        return found[int(game) - 1]
    for stored in found:
        if stored.data.get("game_id") == game:
            return stored
    raise RecordSourceError(f"{path}: no game {game!r}")


def _record_object(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RecordSourceError(f"{where}: not a game record (a JSON object)")
    return data


def records_from(source: Path) -> Iterator[StoredRecord]:
    """Records of a league directory or of a record file."""
    if Path(source).is_dir():
        return league_records(source)
    return file_records(source)

"""`referee export`: a league's stored records as plain files other tools can read without
SQLite or zlib (docs/replay-format.md): one JSON file per game, one JSON Lines file, or one
JSON array."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from referee.report.record_sources import StoredRecord


def record_file_name(data: dict) -> str:
    """A file name for a record: its game id where that is a safe name, else its seed."""
    game_id = str(data.get("game_id", ""))
    safe = game_id and all(ch.isalnum() or ch in "-_." for ch in game_id) and \
        not game_id.startswith(".")
    return f"{game_id if safe else 'seed-' + str(data.get('seed'))}.json"


FILE_SUFFIXES = (".jsonl", ".json")   # an --out ending so is one file, anything else a folder


def export_records(records: Iterable[StoredRecord], out: Path) -> int:
    """Write `records` to `out`: JSON Lines (a record per line) when `out` ends in `.jsonl`,
    one JSON array of records when it ends in `.json`, else one indented JSON file per game
    inside the directory `out`. Returns the number of records written."""
    out = Path(out)
    records = iter(records)
    first = next(records, None)      # a source that cannot be read fails before any writing
    chosen = [] if first is None else itertools.chain([first], records)
    if out.suffix in FILE_SUFFIXES:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as stream:
            return _write_lines(chosen, stream) if out.suffix == ".jsonl" \
                else _write_array(chosen, stream)
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for stored in chosen:
        path = out / record_file_name(stored.data)
        path.write_text(json.dumps(stored.data, indent=1) + "\n", encoding="utf-8")
        count += 1
    return count


def _write_lines(records: Iterable[StoredRecord], stream: TextIO) -> int:
    count = 0
    for stored in records:
        stream.write(json.dumps(stored.data, separators=(",", ":")) + "\n")
        count += 1
    return count


def _write_array(records: Iterable[StoredRecord], stream: TextIO) -> int:
    """A JSON array written a record at a time (a league's records need not fit in memory)."""
    count = 0
    stream.write("[")
    for stored in records:
        stream.write(("," if count else "") + "\n" + json.dumps(stored.data, separators=(",", ":")))
        count += 1
    stream.write("\n]\n")
    return count

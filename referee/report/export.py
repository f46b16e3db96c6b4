"""`referee export`: a league's stored records as plain files other tools can read without
SQLite or zlib (docs/replay-format.md): one JSON file per game, or one JSON Lines file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from referee.report.records import StoredRecord


def record_file_name(data: dict) -> str:
    """A file name for a record: its game id where that is a safe name, else its seed."""
    game_id = str(data.get("game_id", ""))
    safe = game_id and all(ch.isalnum() or ch in "-_." for ch in game_id) and \
        not game_id.startswith(".")
    return f"{game_id if safe else 'seed-' + str(data.get('seed'))}.json"


def export_records(records: Iterable[StoredRecord], out: Path) -> int:
    """Write `records` to `out`: JSON Lines when `out` ends in `.jsonl`, else one indented JSON
    file per game inside the directory `out`. Returns the number of records written."""
    out = Path(out)
    count = 0
    if out.suffix == ".jsonl":
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as lines:
            for stored in records:
                lines.write(json.dumps(stored.data, separators=(",", ":")) + "\n")
                count += 1
        return count
    out.mkdir(parents=True, exist_ok=True)
    for stored in records:
        path = out / record_file_name(stored.data)
        path.write_text(json.dumps(stored.data, indent=1) + "\n", encoding="utf-8")
        count += 1
    return count

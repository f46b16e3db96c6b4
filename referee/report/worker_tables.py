"""The workers' table of a league played on a cluster as text: the cells the terminal and the
Markdown table share, and what is written beside a league's tables (the workers' CSV, a section
of the Markdown table, "workers" in the JSON table). The numbers are
`referee.league.worker_health`'s.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from referee.bots.errors import STRIKE_TYPES
from referee.league.folder import LeagueFolder
from referee.league.worker_health import WorkerRow

MARKDOWN_TITLE = "## Workers"


def worker_cells(row: WorkerRow) -> list[str]:
    """A worker's line as the tables print it (the terminal's and the Markdown table's)."""
    strikes = " ".join(f"{kind}:{n}" for kind, n in row.strikes.items() if n) or "-"

    def fmt(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return [row.worker, str(row.games), strikes, str(row.forfeits), fmt(row.think_p50_ms, 1),
            fmt(row.think_p95_ms, 1), fmt(row.think_ratio, 2)]


HEADERS = ["worker", "games", "strikes", "forfeits", "think p50 ms", "think p95 ms",
           "p50 vs all"]


def to_markdown(rows: Sequence[WorkerRow]) -> str:
    """The worker table as a Markdown section."""
    lines = [MARKDOWN_TITLE, "", "| " + " | ".join(HEADERS) + " |",
             "| " + " | ".join(["---"] * len(HEADERS)) + " |"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in worker_cells(row)) + " |"
              for row in rows]
    return "\n".join(lines) + "\n"


def to_csv(rows: Sequence[WorkerRow]) -> str:
    """The worker table as CSV (strikes_KIND columns, full precision, empty where undefined)."""
    columns = ["worker", "games", *(f"strikes_{kind}" for kind in STRIKE_TYPES), "forfeits",
               "think_p50_ms", "think_p95_ms", "think_ratio"]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        flat: dict[str, Any] = {**asdict(row), **{f"strikes_{k}": v
                                                  for k, v in row.strikes.items()}}
        writer.writerow({key: "" if value is None else value for key, value in flat.items()})
    return out.getvalue()


def write_worker_tables(folder: LeagueFolder, rows: Sequence[WorkerRow]) -> None:
    """Add the worker table to a league's written tables: the folder's workers CSV, a section
    at the end of its Markdown table and "workers" in its JSON table (call after
    `write_tables`)."""
    if not rows:
        return
    folder.workers_csv.write_text(to_csv(rows), encoding="utf-8")
    markdown = folder.table_md
    markdown.write_text(markdown.read_text(encoding="utf-8") + "\n" + to_markdown(rows),
                        encoding="utf-8")
    path = folder.table_json
    data = json.loads(path.read_text(encoding="utf-8"))
    data["workers"] = [asdict(row) for row in rows]
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")

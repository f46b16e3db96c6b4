"""Helpers shared by the tests that watch a league or gauntlet while it plays."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def games_recorded(db_path: Path) -> int:
    """How many games the store at `db_path` holds (0 while it does not exist yet)."""
    try:
        db = sqlite3.connect(db_path)
        try:
            return db.execute("SELECT count(*) FROM games").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0

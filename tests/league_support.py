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


TEST_BOTS = Path(__file__).resolve().parent / "bots"


def install_test_bot(base: Path, name: str, source: str | None = None,
                     env: dict[str, str] | None = None) -> Path:
    """Test bot `source` (default `name`) laid out as a league wants it: its code and botlib.py
    in base/NAME, world-readable (sandboxed bots run as uids of their own), and its spec
    base/NAME.toml beside that folder (a league refuses two specs that share a folder)."""
    import shutil

    source = source or name
    folder = base / name
    (folder / source).mkdir(parents=True)
    shutil.copy(TEST_BOTS / "botlib.py", folder / "botlib.py")
    shutil.copy(TEST_BOTS / source / "main.py", folder / source / "main.py")
    for path in (folder, folder / source, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    lines = [f'name = "{name}"', f'command = ["{{python}}", "{source}/main.py"]',
             f'workdir = "{name}"']
    if env:
        lines += ["[env]", *(f'{key} = "{value}"' for key, value in env.items())]
    path = base / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path

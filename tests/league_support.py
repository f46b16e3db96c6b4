"""Where the test bots live, and how to lay one out for a league."""

from __future__ import annotations

import os
from pathlib import Path

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


def hide_files(base: Path, folder: Path) -> None:
    """Files in `folder` its sandboxed bot cannot read (the peeker test bot's): a root-only
    file, a hard link to the organiser's root-only file in `base`, a file in a closed folder."""
    (folder / "secret.txt").write_text("the organiser's note\n")
    (folder / "secret.txt").chmod(0o600)
    organiser = base / "organiser-secret"
    organiser.write_text("root only\n")
    organiser.chmod(0o600)
    os.link(organiser, folder / "linked.txt")
    (folder / "closed").mkdir()
    (folder / "closed" / "inner.txt").write_text("inside a closed folder\n")
    (folder / "closed" / "inner.txt").chmod(0o644)
    (folder / "closed").chmod(0o700)

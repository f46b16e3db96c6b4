"""Output folders that a failed command does not leave behind.

A command that writes into a folder it creates (a league's or gauntlet's `--out`, an export, a
report, a match's `--replay`) and then fails must not leave that folder empty: the next try
would find it, and the user would wonder what it holds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path


def missing_folders(path: Path) -> list[Path]:
    """`path` and those of its parents that do not exist yet, deepest first."""
    path = Path(path)
    return [folder for folder in (path, *path.parents) if not folder.exists()]


def remove_if_empty(folders: Sequence[Path]) -> None:
    """Remove each of `folders` (deepest first) that is empty; leave the others alone."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


@contextlib.contextmanager
def no_empty_folders(path: Path) -> Iterator[None]:
    """If the block raises, remove the folders of `path` it created that it left empty
    (`path` itself and any parent that did not exist before)."""
    created = missing_folders(path)
    try:
        yield
    except BaseException:
        remove_if_empty(created)
        raise

"""A running club's data folder copied whole, and brought back (`referee backup`, `restore`).

A backup is one tar.gz archive: every SQLite database of the folder (the club's accounts and
bots, the season's games) through SQLite's online backup, so each is a consistent snapshot while
the web workers and the runner go on writing, and then every other file (uploads, the season
file, test games, the secret key). The databases are copied first: a version or a game that a
snapshot names had its files written before its row, so they are in the archive too. What a
running club only uses while it runs (its temporary folder with the bots' instance folders, the
runner's lock, SQLite's journals) is left out, and so is anything mounted inside the folder.

The archive holds passwords' hashes, tokens' hashes and the secret key: it is written 0600.
Nothing here imports Django: the same code runs whether or not a server is up.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import stat
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from referee import __version__
from referee.errors import UserError
from referee.server.shared.clubfolder import ClubFolder

MANIFEST = "referee-backup.json"
FORMAT = 1
SQLITE_HEADER = b"SQLite format 3\x00"
# What a running club uses only while it runs, by its path in the data folder.
LEFT_OUT_NAMES = frozenset({ClubFolder.TMP, ClubFolder.RUNNER_LOCK})
LEFT_OUT_SUFFIXES = ("-wal", "-shm", "-journal")


class BackupError(UserError):
    """A backup that cannot be written or an archive that cannot be restored (one line)."""


@dataclass(frozen=True)
class BackupSummary:
    """What an archive holds: its databases (by path in the folder), how many other files,
    and their bytes."""

    databases: tuple[str, ...]
    files: int
    bytes: int

    def line(self, verb: str, folder: Path, archive: Path) -> str:
        """One line for the organiser: what was copied where."""
        return (f"{verb} {folder} {'to' if verb == 'backed up' else 'from'} {archive}: "
                f"{len(self.databases)} databases ({', '.join(self.databases)}), "
                f"{self.files} other files, {self.bytes / 1e6:.1f} MB")


def is_database(path: Path) -> bool:
    """True for a file that starts as every SQLite database does."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _members(data: Path) -> tuple[list[Path], list[Path]]:
    """The databases and the other regular files of `data` (relative paths), walking neither
    into links nor into another file system, leaving out what only a running club uses."""
    device = data.stat().st_dev
    databases: list[Path] = []
    files: list[Path] = []
    for top, folders, names in os.walk(data, followlinks=False):
        here = Path(top)
        kept = []
        for name in sorted(folders):
            path = here / name
            with contextlib.suppress(OSError):
                if path.relative_to(data).as_posix() not in LEFT_OUT_NAMES and \
                        not path.is_symlink() and path.stat().st_dev == device:
                    kept.append(name)
        folders[:] = kept
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(data)
            if relative.as_posix() in LEFT_OUT_NAMES or name.endswith(LEFT_OUT_SUFFIXES):
                continue
            try:
                mode = path.lstat().st_mode
            except FileNotFoundError:
                continue   # removed while we walked (a retention rule, a finished test game)
            if not stat.S_ISREG(mode):
                continue   # links, sockets and pipes: nothing a club needs back
            (databases if is_database(path) else files).append(relative)
    return databases, files


def _snapshot(source: Path, target: Path) -> None:
    """A consistent copy of the database `source` in `target`, taken while others write."""
    with contextlib.closing(sqlite3.connect(source, timeout=60)) as live, \
            contextlib.closing(sqlite3.connect(target)) as copy:
        live.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")   # one file, no -wal beside it


def backup_club(data: Path, archive: Path) -> BackupSummary:
    """Write the club in `data` to the tar.gz `archive` (replaced whole only once complete),
    while the club may be running; what it holds."""
    data = Path(data)
    if not ClubFolder(data).database.is_file():
        raise BackupError(f"{data}: not a club's data folder (no {ClubFolder.DATABASE} in it)")
    databases, files = _members(data)
    archive = Path(archive)
    if archive.resolve().is_relative_to(data.resolve()):
        raise BackupError(f"{archive}: inside the data folder it backs up; write it elsewhere")
    total = 0
    with tempfile.TemporaryDirectory(prefix="referee-backup-") as scratch:
        partial = archive.with_name(f".{archive.name}.partial")
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
                for index, relative in enumerate(databases):
                    copy = Path(scratch) / f"{index}.sqlite3"
                    _snapshot(data / relative, copy)
                    info = tar.gettarinfo(copy, arcname=relative.as_posix())
                    info.mode = (data / relative).stat().st_mode & 0o7777   # as it was
                    with copy.open("rb") as handle:
                        tar.addfile(info, handle)
                    total += info.size
                kept = 0
                for relative in files:
                    with contextlib.suppress(FileNotFoundError):
                        info = tar.gettarinfo(data / relative, arcname=relative.as_posix())
                        with (data / relative).open("rb") as handle:
                            tar.addfile(info, handle)
                        total += info.size
                        kept += 1
                summary = BackupSummary(tuple(p.as_posix() for p in databases), kept, total)
                manifest = json.dumps({"format": FORMAT, "referee": __version__,
                                       "written": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                time.gmtime()),
                                       "databases": list(summary.databases),
                                       "files": kept}, indent=1).encode()
                info = tarfile.TarInfo(MANIFEST)
                info.size, info.mode, info.mtime = len(manifest), 0o600, int(time.time())
                tar.addfile(info, io.BytesIO(manifest))
            os.replace(partial, archive)
        except sqlite3.Error as exc:
            raise BackupError(f"{data}: a database could not be copied ({exc})") from None
        except OSError as exc:
            raise BackupError(f"{archive}: cannot be written ({exc.strerror or exc})") from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
    return summary


def _open_archive(archive: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(archive, mode="r:gz")
    except (OSError, tarfile.TarError) as exc:
        raise BackupError(f"{archive}: not a backup of a club ({exc})") from None


def restore_club(archive: Path, data: Path) -> BackupSummary:
    """Bring the club saved in `archive` back into the new folder `data` (which must not hold
    anything yet); what it held. A server started there shows the same pages, tokens and
    passwords."""
    data = Path(data)
    if data.exists() and (not data.is_dir() or any(data.iterdir())):
        raise BackupError(f"{data}: already holds something; restore into a new folder")
    parent = data.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    with _open_archive(archive) as tar, \
            tempfile.TemporaryDirectory(prefix=".referee-restore-", dir=parent) as scratch:
        try:
            manifest = json.loads(tar.extractfile(MANIFEST).read())   # type: ignore[union-attr]
        except (KeyError, AttributeError, ValueError, tarfile.TarError):
            raise BackupError(f"{archive}: not a backup of a club (no {MANIFEST})") from None
        if manifest.get("format") != FORMAT:
            raise BackupError(f"{archive}: a backup of format {manifest.get('format')}; this "
                              f"referee restores format {FORMAT}")
        target = Path(scratch) / "data"
        try:
            # The "data" filter refuses absolute paths, links out of the folder and devices.
            tar.extractall(target, filter="data")
        except (OSError, tarfile.TarError) as exc:
            raise BackupError(f"{archive}: cannot be restored ({exc})") from None
        (target / MANIFEST).unlink()
        for name in manifest["databases"]:
            with contextlib.closing(sqlite3.connect(target / name)) as db:
                if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                    raise BackupError(f"{archive}: its copy of {name} is damaged")
        size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
        target.chmod(0o700)   # as `referee serve` keeps a data folder
        if data.exists():
            data.rmdir()
        os.replace(target, data)
    return BackupSummary(tuple(manifest["databases"]), manifest["files"], size)

"""Bot files by content: packed on the coordinator, unpacked into a worker's cache by version.

A pack holds exactly the files a command bot's version hash covers (`bot_files`), read once,
so the pack and its version always agree; each file and folder keeps its mode, and a file
the bot's sandbox could not read here is sent empty (`pack_tree`). A worker unpacks a pack
into a directory named after the league's version of the bot and checks the files against that
version before use: a worker never runs files other than the ones the league is about.

A container bot handed in as an image archive travels as the archive file's bytes with their
SHA-256; a worker stores them under that digest after checking it (`place_archive`), and the
bot's container runtime loads the file there, as it would locally.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from referee.bots.archive import file_digest
from referee.bots.errors import BotStartError
from referee.bots.spec import (
    bot_files,
    check_bot_files,
    hash_entries,
    hash_tree,
    private,
    read_or_none,
)


@dataclass(frozen=True)
class Pack:
    """A bot's files as a gzipped tar, and their version (as `BotSpec.files_hash`)."""

    data: bytes
    version: str


def version_of(digest: str) -> str:
    """The version string of a `hash_tree`/`hash_entries` digest."""
    return "sha256:" + digest[:16]


def pack_tree(root: Path, leave_out: Collection[Path] = ()) -> Pack:
    """Pack the files below `root` that its version covers, and their folders, each with its
    mode (times zeroed). A file the bot's sandbox cannot read here (`spec.private`: not
    readable by others, or in a folder others cannot enter; a hard link to a root-only file)
    is packed empty, with its mode: on a worker the bot finds it as unreadable as here, and
    its contents never leave this machine. The files `leave_out` (an image archive, sent
    aside) are not packed."""
    check_bot_files(root, leave_out=leave_out)   # bounded before anything is read
    entries: list[tuple[str, bytes | None]] = []
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        files = sorted(path for path in bot_files(root) if path not in leave_out)
        folders = sorted({folder for path in files
                          for folder in path.relative_to(root).parents[:-1]})
        for folder in folders:
            info = tarfile.TarInfo(str(folder))
            info.type = tarfile.DIRTYPE
            info.mode = stat.S_IMODE(os.stat(root / folder).st_mode)
            tar.addfile(info)
        for path in files:
            relative = str(path.relative_to(root))
            hidden = private(path, root)
            data = None if hidden else read_or_none(path)
            entries.append((relative, data))
            if data is None and not hidden:
                continue   # unreadable even here: its version says so, nothing to send
            info = tarfile.TarInfo(relative)
            info.size = len(data or b"")
            info.mode = stat.S_IMODE(os.stat(path).st_mode)
            tar.addfile(info, io.BytesIO(data or b""))
    return Pack(buffer.getvalue(), version_of(hash_entries(entries)))


def pack_version(pack: bytes) -> str:
    """The version of the files in a pack, computed as `hash_tree` would over them unpacked
    (a file a sandboxed bot could not read there counts by its path only)."""
    entries = []
    with tarfile.open(fileobj=io.BytesIO(pack), mode="r:gz") as tar:
        members = tar.getmembers()
        closed = {PurePosixPath(m.name) for m in members
                  if m.isdir() and not m.mode & stat.S_IXOTH}
        for member in members:
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                name = PurePosixPath(member.name)
                hidden = not member.mode & stat.S_IROTH or bool(closed & set(name.parents))
                entries.append((name, None if hidden else handle.read()))
    return version_of(hash_entries((str(name), data) for name, data in sorted(entries)))


def unpack(pack: bytes, version: str, cache: Path, bot: str) -> Path:
    """The directory holding `bot`'s files at `version`, unpacked from `pack` into `cache`
    unless a checked copy is there already. BotStartError if the pack is not that version
    (the bot changed since the league began)."""
    found = pack_version(pack)
    if found != version:
        raise BotStartError(bot, f"its files are version {found}, not the league's {version}: "
                                 f"the bot changed since the league began")
    target = cache / version.replace(":", "-")
    if target.is_dir() and version_of(hash_tree(target)) == version:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(pack), mode="r:gz") as tar:
            tar.extractall(fresh, filter="data")
            # The "data" filter keeps files' modes but not folders': a folder others cannot
            # enter here must not be one they can enter on a worker.
            for member in tar.getmembers():
                if member.isdir():
                    os.chmod(fresh / member.name, member.mode & 0o755)
        os.chmod(fresh, 0o755)   # sandboxed bots run as another user
        if target.exists():      # a stale or damaged copy (another worker may race us: fine)
            shutil.rmtree(target, ignore_errors=True)
        with contextlib.suppress(OSError):
            fresh.rename(target)
        if version_of(hash_tree(target)) != version:
            raise BotStartError(bot, f"could not place its files in {target}")
        return target
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


@contextlib.contextmanager
def version_lock(cache: Path, version: str) -> Iterator[None]:
    """Hold the lock of one version's folder in `cache`: workers on one machine share the
    cache, so one unpacks and builds while the others wait for it (two builds in one folder
    would trip over each other)."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{version.replace(':', '-')}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def place_archive(data: bytes, digest: str, name: str, cache: Path, bot: str) -> Path:
    """The image archive `data` as the file `cache`/<digest>/`name`, after checking that its
    SHA-256 is `digest` ("sha256:<hex>", as the coordinator read it): BotStartError if not.
    A checked copy already there is reused; a new one is written aside and renamed."""
    found = "sha256:" + hashlib.sha256(data).hexdigest()
    if found != digest:
        raise BotStartError(bot, f"its image archive arrived as {found[:19]}, not the "
                                 f"{digest[:19]} the league read: it is not played")
    folder = cache / digest.replace(":", "-")
    target = folder / PurePosixPath(name).name
    if target.is_file() and file_digest(target) == digest:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=".archive-", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(partial, 0o644)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return target


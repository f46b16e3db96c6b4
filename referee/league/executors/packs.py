"""Bot files by content: packed on the coordinator, unpacked into a worker's cache by version.

A pack holds exactly the files a command bot's version hash covers (`bot_files`), read once,
so the pack and its version always agree. A worker unpacks a pack into a directory named after
the league's version of the bot and checks the files against that version before use: a
worker never runs files other than the ones the league is about.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from referee.bots.errors import BotStartError
from referee.bots.spec import bot_files, hash_entries, hash_tree, read_or_none


@dataclass(frozen=True)
class Pack:
    """A bot's files as a gzipped tar, and their version (as `BotSpec.files_hash`)."""

    data: bytes
    version: str


def version_of(digest: str) -> str:
    """The version string of a `hash_tree`/`hash_entries` digest."""
    return "sha256:" + digest[:16]


def pack_tree(root: Path) -> Pack:
    """Pack the files below `root` that its version covers (modes kept, times zeroed)."""
    entries: list[tuple[str, bytes | None]] = []
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(bot_files(root)):
            relative = str(path.relative_to(root))
            data = read_or_none(path)
            entries.append((relative, data))
            if data is None:
                continue
            info = tarfile.TarInfo(relative)
            info.size = len(data)
            info.mode = 0o755 if os.stat(path).st_mode & stat.S_IXUSR else 0o644
            tar.addfile(info, io.BytesIO(data))
    return Pack(buffer.getvalue(), version_of(hash_entries(entries)))


def pack_version(pack: bytes) -> str:
    """The version of the files in a pack, computed as `hash_tree` would over them unpacked."""
    entries = []
    with tarfile.open(fileobj=io.BytesIO(pack), mode="r:gz") as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isfile() else None
            if handle is not None:
                entries.append((PurePosixPath(member.name), handle.read()))
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

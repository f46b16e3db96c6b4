"""Size-limited scratch folders: what a confined bot or build writes, bounded by the kernel.

A sandboxed bot may write in its instance folder (its Unix socket, and `tmp/`, bound at its
`/tmp`); a build in its copy of the bot's folder and its private `/tmp`. As root, each of these
is a tmpfs of its own mounted with `size=` and `nr_inodes=` (`mount_bounded`): the kernel
counts every byte and every inode of it, whether the file is unlinked but held open, lies
below a path too long to name, is sparse, or has several names (tmpfs counts each extra hard
link as an inode). At the limit a write fails with ENOSPC; nothing reaches the host's disk
(tmpfs lives in memory and swap, up to its size). Mounting needs root (CAP_SYS_ADMIN): as an
ordinary user, or where the mount is refused, the callers fall back to measuring the folders
(`referee.bots.diskwatch`).

`release_instance_dir` undoes such a folder whatever state a run left it in (the instance
stopped, the referee killed): it unmounts it (lazily, never through a symbolic link) and then
removes what is left, never entering another mount.

`copy_in` and `copy_back` move a bot's folder into a build's tmpfs and the build's result
back, normalised: only folders, regular files and symbolic links, each file with one name,
no setuid, setgid or sticky bit, all owned by the folder's owner (or the build's uid inside);
a path longer than the kernel can name (`PATH_MAX`) is refused (`TreeError`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from referee.errors import BotFailure

MIB = 1024 * 1024
PAGE = 4096
ENTRY_BYTES = 4096          # budget per file, folder or link: one inode per 4 KiB of the limit
MIN_INODES = 64
PATH_MAX = 4096             # bytes of a path the kernel takes, its NUL included
MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH, UMOUNT_NOFOLLOW = 2, 8
FULL_NOTE = ("[referee: the bot ran out of its write limit of {mib} MiB (its /tmp and its "
             "socket folder together): its writes failed with \"No space left on device\"]\n")


class TreeError(BotFailure):
    """A folder that cannot be copied whole (a path longer than the kernel can name)."""


class WrittenTooMuch(BotFailure):
    """A build's result would take more than its budget once copied back."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def inodes_for(limit_bytes: int) -> int:
    """The inodes a scratch folder of `limit_bytes` may hold: one per ENTRY_BYTES."""
    return max(MIN_INODES, limit_bytes // ENTRY_BYTES)


def mount_bounded(path: Path, limit_bytes: int, inodes: int | None = None, *, uid: int = 0,
                  gid: int = 0, mode: int = 0o700) -> bool:
    """Mount a tmpfs of `limit_bytes` (and `inodes`, by default `inodes_for`) on the empty
    folder `path`, its root owned by uid:gid with `mode`; no setuid, no devices. False if it
    cannot be mounted here (not root, or the mount refused): the caller falls back."""
    if os.geteuid() != 0:
        return False
    size = max(PAGE, -(-limit_bytes // PAGE) * PAGE)
    options = (f"size={size},nr_inodes={inodes or inodes_for(limit_bytes)},"
               f"mode={mode:o},uid={uid},gid={gid}")
    done = _libc().mount(b"tmpfs", os.fsencode(path), b"tmpfs", MS_NOSUID | MS_NODEV,
                         options.encode())
    return done == 0


def bounded(path: Path | str) -> bool:
    """Whether `path` (not a symbolic link) is a mount point: a scratch tmpfs of ours."""
    return os.path.ismount(path) and not os.path.islink(path)


def full(path: Path | str) -> bool:
    """Whether the scratch tmpfs at `path` has no byte or no inode left (a write failed, or
    would fail, with ENOSPC). False for a folder that is not a mount point."""
    if not bounded(path):
        return False
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bfree == 0 or st.f_ffree == 0


def limit_mib(path: Path | str) -> int:
    """The size in MiB of the scratch tmpfs at `path`."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize // MIB


def full_note(path: Path | str) -> str:
    """The line a bot's log gets when its instance folder at `path` is full, or ""."""
    return FULL_NOTE.format(mib=limit_mib(path)) if full(path) else ""


def release_instance_dir(path: Path | str) -> None:
    """Unmount the scratch folder at `path`, and any mounted below it (a build's, in the folder
    of a run that was killed), lazily (whatever still holds one open keeps it until it lets
    go) and never through a symbolic link; then remove what is left, without entering any
    other mount. Never raises; a missing `path` is fine."""
    # As the kernel names mount points: the folders above resolved, the last name as it is.
    named = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))),
                         os.path.basename(os.path.abspath(path)))
    for mount in [*_mounts_below(named), os.fspath(path)]:
        for _ in range(16):   # mounts stacked on one by a run that mounted twice: each goes
            if _libc().umount2(os.fsencode(mount), MNT_DETACH | UMOUNT_NOFOLLOW) != 0:
                break
    with contextlib.suppress(OSError):
        _remove_tree(os.fspath(path))


def _mounts_below(folder: str) -> list[str]:
    """This process's mount points strictly below `folder`, deepest first."""
    found = []
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", "rb") as info:
        for line in info:
            # The mount point is the fifth field; space, tab, newline, backslash are \ooo.
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]),
                           line.split()[4])
            if point.startswith(os.fsencode(folder.rstrip("/")) + b"/"):
                found.append(os.fsdecode(point))
    return sorted(set(found), key=lambda mount: mount.count("/"), reverse=True)


def _remove_tree(path: str) -> None:
    """Remove `path` and what is below it on its own file system, walking with one open
    folder at a time (any depth, any path length): a mount point below is left, and so is
    the folder holding it."""
    try:
        top = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(top.st_mode):
        os.unlink(path)
        return
    here = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    names: list[str] = []          # the folders descended into, from `path` down
    kept: set[tuple[int, int]] = set()   # folders that could not go (a mount below)
    try:
        while True:
            sub = _next_folder(here, top.st_dev, kept)
            if sub is not None:
                child = os.open(sub, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW |
                                os.O_CLOEXEC, dir_fd=here)
                os.close(here)
                here, names = child, [*names, sub]
                continue
            if not names:
                break
            mine = os.fstat(here)
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=here)
            os.close(here)
            here, name, names = parent, names[-1], names[:-1]
            try:
                os.rmdir(name, dir_fd=here)
            except OSError:
                kept.add((mine.st_dev, mine.st_ino))
    finally:
        os.close(here)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _next_folder(fd: int, dev: int, kept: set[tuple[int, int]]) -> str | None:
    """Unlink every non-folder in the folder `fd`; return a sub-folder on device `dev` still
    to empty (not in `kept`), or None when none is left."""
    found = None
    for entry in os.scandir(fd):
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.name, dir_fd=fd)
        elif found is None and st.st_dev == dev and (st.st_dev, st.st_ino) not in kept:
            found = entry.name
    return found


def entries(root: str, longest: int) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry below `root` as (relative path, lstat), each folder before what it holds;
    TreeError if a relative path is longer than `longest` bytes. Iterative: any depth."""
    stack = [""]
    while stack:
        rel = stack.pop()
        with os.scandir(os.path.join(root, rel) if rel else root) as found:
            for entry in found:
                sub = os.path.join(rel, entry.name)
                if len(os.fsencode(sub)) > longest:
                    raise TreeError(f"a path longer than {PATH_MAX - 1} bytes: "
                                    f"{os.fsdecode(os.fsencode(sub)[:60])}...")
                st = entry.stat(follow_symlinks=False)
                yield sub, st
                if stat.S_ISDIR(st.st_mode):
                    stack.append(sub)


def _longest(*roots: Path | str) -> int:
    """The longest relative path that stays below PATH_MAX under each of `roots`."""
    return PATH_MAX - 2 - max(len(os.fsencode(root)) for root in roots)


def _bytes(st: os.stat_result) -> int:
    """What a regular file may take when copied: its length (holes filled), in whole pages."""
    return -(-max(st.st_size, st.st_blocks * 512) // PAGE) * PAGE


def measure(root: Path, *others: Path) -> tuple[int, int]:
    """(bytes, entries) of the tree at `root`, each name of a file counted in full (see
    `_bytes`); TreeError if a path below it could not be named under `root` or `others`."""
    total, count = 0, 0
    for _rel, st in entries(str(root), _longest(root, *others)):
        count += 1
        if stat.S_ISREG(st.st_mode):
            total += _bytes(st)
        elif stat.S_ISLNK(st.st_mode):   # a long target takes a page of a tmpfs
            total += PAGE
    return total, count


def _plain(st: os.stat_result) -> int:
    """Permission bits without setuid, setgid or sticky."""
    return stat.S_IMODE(st.st_mode) & 0o777


def _copy_file(src: str, dest: str, st: os.stat_result, uid: int, gid: int) -> None:
    """Copy the regular file `src` to the new name `dest` (never through a link), owned by
    uid:gid with `st`'s plain mode and times."""
    flags = os.O_NOFOLLOW | os.O_CLOEXEC
    source = os.open(src, os.O_RDONLY | flags)
    try:
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, 0o600)
        try:
            while os.sendfile(out, source, None, 1 << 20):
                pass
            os.fchown(out, uid, gid)
            os.fchmod(out, _plain(st))
            os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(source)


# What `copy_in` copied: each relative path, with what `_key` says of it.
Given = dict[str, tuple[object, ...]]


def _key(path: str, st: os.stat_result) -> tuple[object, ...]:
    """What tells whether a build changed an entry it was given: the kind, and for a file its
    length, time and plain mode, for a link its target."""
    if stat.S_ISREG(st.st_mode):
        return ("file", st.st_size, st.st_mtime_ns, _plain(st))
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    return ("folder",) if stat.S_ISDIR(st.st_mode) else ("other",)


def copy_in(src: Path, dest: Path, uid: int, gid: int) -> Given:
    """Copy the folder `src` to the new folder `dest` (a build's scratch tmpfs), owned by
    uid:gid: folders, regular files (each name a file of its own; one with several names keeps
    its owner) and symbolic links; other files are left out. Returns what it copied (for
    `copy_back`). TreeError if a path is too long."""
    folders = [("", os.lstat(src))]
    given: Given = {}
    _make_folder(str(dest), uid, gid)
    for rel, st in entries(str(src), _longest(src, dest)):
        into, source = os.path.join(dest, rel), os.path.join(src, rel)
        if stat.S_ISDIR(st.st_mode):
            _make_folder(into, uid, gid)
            folders.append((rel, st))
        elif stat.S_ISREG(st.st_mode):
            # A file with several names may be a file outside the folder: the build reads it
            # only if its owner lets others read it, as it would the file itself.
            owner = (st.st_uid, st.st_gid) if st.st_nlink > 1 else (uid, gid)
            _copy_file(source, into, st, *owner)
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(source), into)
            os.chown(into, uid, gid, follow_symlinks=False)
        else:
            continue
        given[rel] = _key(source, st)
    for rel, st in reversed(folders):   # once nothing more is made in them
        os.chmod(os.path.join(dest, rel) if rel else dest, _plain(st) | stat.S_IRWXU)
    return given


def _make_folder(path: str, uid: int, gid: int) -> None:
    os.mkdir(path, 0o700)
    os.chown(path, uid, gid)


def copy_back(result: Path, folder: Path, given: Given, budget: int) -> None:
    """Make `folder` hold what the build left in `result`, normalised (see the module
    docstring) and owned by `folder`'s owner: what the build made or changed is put in place
    (a new file under a fresh name, renamed over the old), what it removed of what it was
    `given` is removed; what it left as it was given stays in `folder` as it is there (and so
    does what was added to `folder` meanwhile). TreeError, with `folder` untouched, if a path
    is too long; WrittenTooMuch if the result takes more than `budget` bytes when copied
    (several names of a file, holes in a file: each counted in full)."""
    size, _count = measure(result, folder)
    if size > budget:
        raise WrittenTooMuch(size)
    top = os.lstat(folder)
    uid, gid = top.st_uid, top.st_gid
    kept = {""}
    folders = []
    for rel, st in entries(str(result), _longest(result, folder)):
        source = os.path.join(result, rel)
        if not stat.S_ISDIR(st.st_mode) and given.get(rel) == _key(source, st):
            kept.add(rel)   # as it was given: the folder's own stays
        elif _place(source, os.path.join(folder, rel), st, uid, gid):
            kept.add(rel)
            if stat.S_ISDIR(st.st_mode):
                folders.append((rel, st))
    for rel in given:   # parents first: what is below a removed folder goes with it
        if rel not in kept and os.path.dirname(rel) in kept:
            _remove_tree(os.path.join(folder, rel))
    for rel, st in reversed(folders):
        os.chmod(os.path.join(folder, rel), _plain(st) | stat.S_IRWXU)


def _place(src: str, dest: str, st: os.stat_result, uid: int, gid: int) -> bool:
    """Put the entry `src` (lstat `st`) at `dest`, replacing what is there unless it is the
    same; False for a kind of file that is left out (a fifo, a socket, a device)."""
    try:
        there: os.stat_result | None = os.lstat(dest)
    except FileNotFoundError:
        there = None
    if stat.S_ISDIR(st.st_mode):
        if there is not None and not stat.S_ISDIR(there.st_mode):
            os.unlink(dest)
            there = None
        if there is None:
            os.mkdir(dest, 0o700)
        os.chown(dest, uid, gid, follow_symlinks=False)
        return True
    if stat.S_ISREG(st.st_mode):
        if there is not None and stat.S_ISREG(there.st_mode) and there.st_nlink == 1 and \
                (there.st_size, there.st_mtime_ns, stat.S_IMODE(there.st_mode), there.st_uid,
                 there.st_gid) == (st.st_size, st.st_mtime_ns, _plain(st), uid, gid):
            return True
        _replace(dest, there, lambda new: _copy_file(src, new, st, uid, gid))
        return True
    if stat.S_ISLNK(st.st_mode):
        link = os.readlink(src)

        def make(new: str) -> None:
            os.symlink(link, new)
            os.chown(new, uid, gid, follow_symlinks=False)

        if there is None or not stat.S_ISLNK(there.st_mode) or os.readlink(dest) != link:
            _replace(dest, there, make)
        else:
            os.chown(dest, uid, gid, follow_symlinks=False)
        return True
    return False


def _replace(dest: str, there: os.stat_result | None, make: Callable[[str], None]) -> None:
    """Make the entry anew under a fresh name beside `dest`, then rename it over `dest`: what
    was there (a file with other names, say) is never written through."""
    if there is not None and stat.S_ISDIR(there.st_mode):
        _remove_tree(dest)
    new = os.path.join(os.path.dirname(dest), f".referee-copy-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(new)
    make(new)
    os.replace(new, dest)


def no_space(text: str) -> bool:
    """Whether a program's output says a write failed for want of space (ENOSPC)."""
    return os.strerror(errno.ENOSPC) in text or "ENOSPC" in text

"""Bot instance folders left behind by a runner that was killed (SIGKILL, a power cut).

A bot's instance folder (`referee-*` in the runner's TMPDIR: its socket and private /tmp) is
removed by the bot's guard when the bot ends; a guard killed with everything else leaves it.
The next runner removes those of its data folder before it starts any bot: each one unmounted
first where something is mounted inside it, and removed without ever following a link or
entering another file system.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
from pathlib import Path

PREFIX = "referee-"   # the instance, check and build folders (tempfile.mkdtemp prefixes)


def mount_points_under(path: Path) -> list[Path]:
    """The mount points at or below `path` (this process's mount namespace), deepest first."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) < 5:
            continue
        # The kernel writes a space, tab, newline or backslash in a path as \ooo.
        point = Path(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
        if point == path or path in point.parents:
            found.append(point)
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def remove_leftover(path: Path) -> None:
    """Remove the left-over folder `path`: first `umount -l` every mount point inside it (a
    tmpfs on an instance folder), then its files, never entering another file system (what
    could not be unmounted stays, with the folders that hold it) nor following a link."""
    for point in mount_points_under(path):
        subprocess.run(["umount", "-l", str(point)], stdin=subprocess.DEVNULL,
                       capture_output=True, check=False, timeout=60)
    try:
        device = os.lstat(path).st_dev
    except OSError:
        return
    _remove_tree(path, device)


def _remove_tree(path: Path, device: int) -> None:
    try:
        info = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(OSError):
            path.unlink()
        return
    if info.st_dev != device:   # another file system mounted here: not ours to empty
        return
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)   # a bot may have left its folders unreadable
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        _remove_tree(Path(entry.path), device)
    with contextlib.suppress(OSError):
        path.rmdir()


def clean_leftovers(folder: Path) -> list[str]:
    """Remove every `referee-*` folder in `folder` (the data folder's tmp: no runner uses
    them any more when this runs); the names removed."""
    try:
        entries = sorted(folder.glob(f"{PREFIX}*"))
    except OSError:
        return []
    removed = []
    for path in entries:
        if path.is_dir() and not path.is_symlink():
            remove_leftover(path)
            removed.append(path.name)
    return removed

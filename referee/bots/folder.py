"""What a sandboxed bot may read of its own folder, whatever umask made its files.

`referee serve` creates everything owner-only (umask 077): its data folder is the server's
alone. A sandboxed bot runs as a uid of its own (`referee.bots.uids`) and must still read its
folder, which the sandbox binds in at its real path; `open_to_bot` gives that folder's tree
the modes a reader needs (folders r-x, files r--, programs r-x for group and others, never
write). The folders above it stay owner-only: on the host nobody but the server can reach the
folder, and inside a sandbox only the bot's own folder is mounted.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

READ = stat.S_IRGRP | stat.S_IROTH
ENTER = stat.S_IXGRP | stat.S_IXOTH
WRITE = stat.S_IWGRP | stat.S_IWOTH


def reader_mode(mode: int) -> int:
    """The permission bits `mode` gets so that any uid can read (and run, or enter, what its
    owner can) but not write."""
    wanted = (mode | READ) & ~WRITE
    if stat.S_ISDIR(mode) or mode & stat.S_IXUSR:
        wanted |= ENTER
    return stat.S_IMODE(wanted)


def open_to_bot(folder: Path) -> None:
    """Make the tree at `folder` readable by a bot's sandbox uid (see the module docstring).
    Symlinks are left alone and so is a file with several hard links (it may be a file outside
    the folder)."""
    for dirpath, _dirnames, filenames in os.walk(folder):   # symlinked folders not followed
        _open(dirpath)
        for name in filenames:
            _open(os.path.join(dirpath, name))


def _open(path: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or (st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode)):
        return
    mode = reader_mode(st.st_mode)
    if mode != stat.S_IMODE(st.st_mode):
        os.chmod(path, mode, follow_symlinks=False)

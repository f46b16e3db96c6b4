"""Bot instance folders left behind by a runner that was killed (SIGKILL, a power cut).

A bot's instance folder (`referee-*` in the runner's TMPDIR: its socket and private /tmp) is
removed by the bot's guard when the bot ends; a guard killed with everything else leaves it.
The next runner removes those of its data folder before it starts any bot, the way a guard
would (`referee.bots.scratch.release_instance_dir`): each one unmounted first where something
is mounted on or inside it, and removed without ever following a link or entering another
file system.
"""

from __future__ import annotations

from pathlib import Path

from referee.bots.scratch import release_instance_dir

PREFIX = "referee-"   # the instance, check and build folders (tempfile.mkdtemp prefixes)


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
            release_instance_dir(path)
            removed.append(path.name)
    return removed

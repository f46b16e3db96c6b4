"""Whether an uploaded bot may run: on a club server, an upload runs in the sandbox or, only
where the season file says `unconfined_uploads = true`, without it; never unconfined by chance.

The club server's runner decides this once at its start (referee.server.shared.confinement) and does
not start what it may not run; this is the backstop where every bot's confinement is decided
(`referee.bots.process.use_sandbox`), in the runner and in every process it starts (a check,
a cluster's worker): they inherit the environment that says where the uploads are
(`DATA_ENV`, the server's data folder) and whether they may run unconfined.
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.bots.sandbox import DATA_ENV

# Set to "1" by the runner where the season file says `unconfined_uploads = true` and there is
# no working sandbox: only then does an upload run unconfined.
UNCONFINED_ENV = "REFEREE_UNCONFINED_UPLOADS"
UPLOADS = "uploads"   # the uploads' folder in the server's data folder
# What a student reads where their upload's code cannot run (its check's one line).
NO_SANDBOX = "this server has no working sandbox; the organiser must install bubblewrap"


def is_upload(workdir: Path | None) -> bool:
    """Whether a bot whose folder is `workdir` is a club server's upload: this process runs for
    a server (`DATA_ENV` set) and the folder lies in its data folder's uploads."""
    data = os.environ.get(DATA_ENV)
    if not data or workdir is None:
        return False
    return Path(workdir).resolve().is_relative_to((Path(data) / UPLOADS).resolve())


def unconfined_allowed() -> bool:
    """Whether the organiser said uploads may run without the sandbox (`UNCONFINED_ENV`)."""
    return os.environ.get(UNCONFINED_ENV) == "1"

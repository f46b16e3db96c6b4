"""The club server: accounts, submissions, checks and a season that never stops.

The web process (Django on ASGI, `referee.server.asgi`) reads and writes the club's database and
never plays a game or runs a build; the season runner (`referee.server.runner`) does those.
Both find their data folder through the environment variable REFEREE_SERVER_DATA.
"""

from __future__ import annotations

import os
from pathlib import Path

from referee.bots.sandbox import DATA_ENV  # the sandbox keeps every bot out of it

DEFAULT_DATA = Path("club-data")


def data_dir() -> Path:
    """The club's data folder: $REFEREE_SERVER_DATA, or ./club-data."""
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA).resolve()

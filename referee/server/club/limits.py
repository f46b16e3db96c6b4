"""The season file's server keys the web process needs (caps on uploads, bots, test games;
whether spectators see the leaderboard).

The season file ($REFEREE_SEASON_FILE, default DIR/season.toml) holds the league's keys and
these top-level server keys; a missing file or key means the default here.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from django.conf import settings

SEASON_FILE_ENV = "REFEREE_SEASON_FILE"


@dataclass(frozen=True)
class ServerLimits:
    max_bots_per_student: int = 3
    test_games_per_hour: int = 10
    upload_max_bytes: int = 50 * 1024 * 1024
    unpacked_max_bytes: int = 200 * 1024 * 1024
    max_files: int = 5000
    uploads_per_hour: int = 30
    # All a student's uploads take on disk, archives and built folders (MiB): an upload
    # past it is refused, a build that takes it past fails its check (club.diskuse).
    student_disk_mb: int = 2048
    # Failed sign-ins an hour (referee.server.club.signin): from one address, for one name
    # from one address, and for one name from browsers that never signed in as it.
    sign_in_failures_per_address: int = 30
    sign_in_failures_per_name_and_address: int = 10
    sign_in_failures_per_name: int = 50


def season_file() -> Path:
    """Where the season file is: $REFEREE_SEASON_FILE, or DIR/season.toml."""
    return Path(os.environ.get(SEASON_FILE_ENV) or settings.DATA_DIR / "season.toml")


def season_table() -> dict:
    """The season file's keys ({} for a missing file). ValueError, one line naming the file,
    for a file that cannot be read as TOML."""
    path = season_file()
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None


def server_limits() -> ServerLimits:
    """The server keys of the season file (defaults where it has none). ValueError, one line,
    for a key that is not a positive whole number."""
    data = season_table()
    values = {}
    for item in fields(ServerLimits):
        if item.name in data:
            value = data[item.name]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{season_file()}: key {item.name!r} must be a whole number "
                                 f"above 0")
            values[item.name] = value
    return ServerLimits(**values)


def public_leaderboard() -> bool:
    """The organiser's switch `public_leaderboard` (default false): whether the leaderboard,
    its page and its JSON, is open to anyone, signed in or not. Read at each request, so
    turning it on or off applies at once. ValueError, one line, for a value not true/false."""
    value = season_table().get("public_leaderboard", False)
    if not isinstance(value, bool):
        raise ValueError(f"{season_file()}: key 'public_leaderboard' must be true or false")
    return value


def play_against_students() -> bool:
    """The organiser's switch `play_against_students` (default false): whether a student may
    play in the browser against other students' current bots. Read at each request.
    ValueError, one line, for a value not true/false."""
    value = season_table().get("play_against_students", False)
    if not isinstance(value, bool):
        raise ValueError(f"{season_file()}: key 'play_against_students' must be true or false")
    return value

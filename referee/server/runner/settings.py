"""The runner's part of the season file: the league's keys plus the keys of the check queue,
the rounds and the refits (the web process reads the upload and rate keys itself)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB
from referee.config import ConfigError, read_toml
from referee.league.config import LeagueSettings, league_from_table

# Keys the web process reads (referee.server.club.limits): known here so that they are no typo.
WEB_KEYS = frozenset({"max_bots_per_student", "test_games_per_hour", "upload_max_bytes",
                      "unpacked_max_bytes", "max_files", "uploads_per_hour", "name",
                      "sign_in_failures_per_address", "sign_in_failures_per_name_and_address",
                      "sign_in_failures_per_name", "public_leaderboard"})


@dataclass
class RunnerSettings:
    """What the runner needs from the season file (defaults for a file or key left out)."""

    league: LeagueSettings = field(default_factory=lambda: LeagueSettings(bots=[]))
    check_concurrency: int = 1        # checks at once
    check_timeout_s: int = 600        # a check (its build included) is killed after this
    round_games: int = 4              # games per active bot in each round
    max_rounds: int = 0               # 0: rounds go on until the season is closed
    max_catch_up: int = 40            # most games a newcomer is given before the next round
    refit_games: int = 50             # refit after this many new games...
    refit_seconds: int = 30           # ...or this long after the last refit with new games
    test_game_timeout_s: int = 600    # a test game (its bots' start-up included)
    write_max_mb: int = DEFAULT_WRITE_MAX_MB   # what a check's build may write, in MiB


RUNNER_KEYS = frozenset(f.name for f in fields(RunnerSettings) if f.name != "league")


def load_runner_settings(path: Path) -> RunnerSettings:
    """The runner's settings from the season file at `path` (all defaults if it is missing);
    ConfigError naming the file and the key for a bad value."""
    if not path.exists():
        return RunnerSettings()
    data: dict[str, Any] = read_toml(path)
    league = league_from_table(data, path, RUNNER_KEYS | WEB_KEYS)
    if not isinstance(data.get("public_leaderboard", False), bool):
        raise ConfigError(f"{path}: key 'public_leaderboard': expected true or false, got "
                          f"{data['public_leaderboard']!r}")
    values = {}
    for key in RUNNER_KEYS & set(data):
        value = data[key]
        low = 0 if key == "max_rounds" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{path}: key {key!r}: expected a whole number of at least {low}, "
                              f"got {value!r}")
        values[key] = value
    return RunnerSettings(league=league, **values)

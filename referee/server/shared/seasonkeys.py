"""The season file's keys, typed, with their defaults: the league's keys (LeagueSettings), the
runner's (`RunnerSettings`: the check queue, the rounds, the refits, the house bots) and the web
process's (`ServerLimits` and two switches), and when a changed key applies (LIVE, AT_START).

The file's words for each key and the file `referee serve` writes are `seasonfile`'s; reading
the file as a process uses it at each request is `seasonread`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB
from referee.league.config import LeagueSettings, league_from_table
from referee.league.season import season_table_sizes
from referee.util.config import ConfigError, read_toml
from referee.util.resources import sample_bots

DEFAULT_PACE = 60   # games per bot per hour
# Starts in a row that fail (here, or on every worker of a cluster) before a version is taken
# out of the season (a new upload or the organiser brings it back). Each failed start is tried
# again with the bots started anew, so a start that failed once (a busy machine) costs a few
# forfeits, not the season. (Forfeits in a row: the season file's forfeits_to_take_out.)
START_FAILURES_OUT = 3
ZERO_ALLOWED = frozenset({"max_rounds", "games_per_bot_per_hour"})   # 0: no bound

@dataclass(frozen=True)
class ServerLimits:
    """The season file's keys the web process reads at each request: caps on uploads, bots,
    test games, sign-ins and streams (defaults for a file or key left out)."""

    max_bots_per_student: int = 3
    test_games_per_hour: int = 10
    upload_max_bytes: int = 50 * 1024 * 1024
    unpacked_max_bytes: int = 200 * 1024 * 1024
    max_files: int = 5000
    uploads_per_hour: int = 30
    # All a student's uploads take on disk, archives and built folders (MiB): an upload
    # past it is refused, a build that takes it past fails its check (shared.diskuse).
    student_disk_mb: int = 2048
    # Failed sign-ins an hour (referee.server.club.signin): from one address, for one name
    # from one address, and for one name from browsers that never signed in as it.
    sign_in_failures_per_address: int = 30
    sign_in_failures_per_name_and_address: int = 10
    sign_in_failures_per_name: int = 50
    # Live games one viewer (a student; anyone else by address) watches at once, across
    # every web process (referee.server.club.streamslots); the organiser is not held to it.
    streams_per_student: int = 4
    # Requests an hour with one API token: one a second on average (`referee submit` polls
    # once a second while a check runs).
    api_requests_per_hour: int = 3600


# The web process's true/false keys (default false), read at each request.
SWITCHES = ("public_leaderboard", "play_against_students")
# Keys the web process reads: known to the runner so that they are no typo.
WEB_KEYS = frozenset({"name", *SWITCHES, *(item.name for item in fields(ServerLimits))})


def server_limits_of(data: dict[str, Any], path: Path) -> ServerLimits:
    """The server keys of the season table `data` read from `path`. ValueError, one line, for
    a key that is not a positive whole number."""
    values = {}
    for item in fields(ServerLimits):
        if item.name in data:
            value = data[item.name]
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{path}: key {item.name!r} must be a whole number above 0")
            values[item.name] = value
    return ServerLimits(**values)


def switch(data: dict[str, Any], path: Path, key: str) -> bool:
    """The true/false key `key` of the season table `data` (default false); ValueError, one
    line, for another value."""
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{path}: key {key!r} must be true or false")
    return value


# A server's ceiling on every bot limit (a spec's [limits] key): the season file's [limits]
# key, or this where the file leaves it out. A spec asks for less, never for more. Generous for
# an honest bot (a Python or Node bot needs a few hundred MiB and a dozen threads), small
# enough that one upload cannot take the machine or hold its table for minutes.
CEILINGS: dict[str, int] = {
    "decision_ms": 5_000,        # a decision; the samples ask 1,000
    "game_bank_ms": 60_000,      # a game's bank over its deadlines
    "startup_ms": 60_000,        # launch to Hello (a slow machine, a JIT)
    "memory_mb": 2_048,          # address space of each process (RLIMIT_AS)
    "cpu_seconds": 3_600,        # CPU of each process (RLIMIT_CPU); a bot is restarted past it
    "max_processes": 128,        # processes and threads of the bot's uid (RLIMIT_NPROC)
    "build_seconds": 600,        # the whole build (the check's own limit is check_timeout_s)
}


def with_ceilings(limits: dict[str, int]) -> dict[str, int]:
    """The season's [limits] as the server applies them: each key the file leaves out is its
    default ceiling (CEILINGS), never the spec's own value."""
    return {**CEILINGS, **limits}


SAMPLES = sample_bots()
DEFAULT_HOUSE = ("random", "greedy", "montecarlo")


@dataclass
class RunnerSettings:
    """What the runner needs from the season file (defaults for a file or key left out)."""

    league: LeagueSettings = field(default_factory=lambda: LeagueSettings(
        bots=[], limits=dict(CEILINGS)))
    check_concurrency: int = 1        # checks at once
    check_timeout_s: int = 600        # a check (its build included) is killed after this
    round_games: int = 4              # games per active bot in each round
    # The pace: rounds start no faster than this (0: at once). An evening of 3 hours with 30
    # bots at 60 stores about 30 * 60 * 3 / 4 = 1,350 games of four (docs/server.md).
    games_per_bot_per_hour: int = DEFAULT_PACE
    max_rounds: int = 0               # 0: rounds go on until the season is closed
    max_catch_up: int = 40            # most games a newcomer is given before the next round
    # A version that starts but forfeits this many season games in a row is taken out of the
    # season (a finished game ends the row): a bot broken for good stops losing on the table.
    forfeits_to_take_out: int = 5
    refit_games: int = 50             # refit after this many new games...
    refit_seconds: int = 30           # ...or this long after the last refit with new games
    test_game_timeout_s: int = 600    # a test game (its bots' start-up included)
    write_max_mb: int = DEFAULT_WRITE_MAX_MB   # what a check's build may write, in MiB
    # The house bots' specs (absolute): they enter at the season's first start, so that nobody
    # waits alone. Default: the Python sample bots (no network needed to check them).
    house_bots: list[Path] = field(default_factory=lambda: [
        SAMPLES / f"{name}.toml" for name in DEFAULT_HOUSE])
    house_in_final_table: bool = True  # False: the tables written at close leave them out
    # A person's seat in a game in the browser: time per move and bank (HUMAN_LIMITS), and
    # how many such games the runner plays at once (each mostly waits for its player).
    human_move_seconds: int = 300
    human_bank_seconds: int = 1800
    human_games_at_once: int = 4
    human_idle_seconds: int = 180
    human_game_seconds: int = 3600
    # True: where the sandbox does not work, uploads run without it (shared.confinement); by
    # default they are then stored but not built or run.
    unconfined_uploads: bool = False


SPECIAL = {"league", "house_bots", "house_in_final_table", "unconfined_uploads"}   # not numbers
RUNNER_KEYS = frozenset(f.name for f in fields(RunnerSettings) if f.name != "league")


def load_runner_settings(path: Path) -> RunnerSettings:
    """The runner's settings from the season file at `path` (all defaults if it is missing);
    ConfigError naming the file and the key for a bad value."""
    if not path.exists():
        return RunnerSettings()
    return runner_settings_from_table(read_toml(path), path)


def runner_settings_from_table(data: dict[str, Any], path: Path) -> RunnerSettings:
    """The runner's settings from the parsed season file `data` (read from `path`: house bots'
    specs are relative to its folder); ConfigError naming the file and the key for a bad
    value."""
    league = league_from_table(data, path, RUNNER_KEYS | WEB_KEYS)
    if not isinstance(data.get("public_leaderboard", False), bool):
        raise ConfigError(f"{path}: key 'public_leaderboard': expected true or false, got "
                          f"{data['public_leaderboard']!r}")
    league.limits = with_ceilings(league.limits)
    values: dict[str, Any] = {}
    if "house_bots" in data:
        values["house_bots"] = house_specs(data["house_bots"], path)
    if "house_in_final_table" in data:
        if not isinstance(data["house_in_final_table"], bool):
            raise ConfigError(f"{path}: key 'house_in_final_table': expected true or false, "
                              f"got {data['house_in_final_table']!r}")
        values["house_in_final_table"] = data["house_in_final_table"]
    if "unconfined_uploads" in data:
        if not isinstance(data["unconfined_uploads"], bool):
            raise ConfigError(f"{path}: key 'unconfined_uploads': expected true or false, got "
                              f"{data['unconfined_uploads']!r}")
        values["unconfined_uploads"] = data["unconfined_uploads"]
    for key in (RUNNER_KEYS - SPECIAL) & set(data):
        value = data[key]
        low = 0 if key in ZERO_ALLOWED else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{path}: key {key!r}: expected a whole number of at least {low}, "
                              f"got {value!r}")
        values[key] = value
    return RunnerSettings(league=league, **values)


def house_specs(value: Any, path: Path) -> list[Path]:
    """The spec files a `house_bots` list names: a sample bot's name (`greedy`: the spec
    sample_bots/greedy.toml) or a spec file's path (relative to the season file's folder).
    ConfigError naming the file, the key and the entry otherwise."""
    where = f"{path}: key 'house_bots'"
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of sample bot names or spec files, got "
                          f"{value!r}")
    specs = []
    for item in value:
        spec = SAMPLES / f"{item}.toml" if "/" not in item and not item.endswith(".toml") \
            else path.parent / item
        if not spec.is_file():
            raise ConfigError(f"{where}: {item!r} is neither a sample bot "
                              f"({', '.join(DEFAULT_HOUSE)}, greedy-js) nor a spec file")
        specs.append(spec.resolve())
    return specs


# Keys the runner applies between rounds; the others of the runner wait for its next start or,
# those that define the season's games, for the next season.
LIVE = frozenset({"games_per_bot_per_hour", "limits", "house_bots", "house_in_final_table",
                  "forfeits_to_take_out"})
AT_START = frozenset({"check_concurrency", "check_timeout_s", "write_max_mb",
                      "test_game_timeout_s", "refit_games", "refit_seconds", "concurrency",
                      "sandbox", "cluster", "human_move_seconds", "human_bank_seconds",
                      "human_games_at_once", "human_idle_seconds",
                      "human_game_seconds", "unconfined_uploads"})


# The keys a competition other than the first sets for itself (its row's `settings`, a table
# of the season file's shape); every other key (the sandbox, the checks, the cluster...) is the
# season file's, for the whole club. A key it leaves out has its default, not the season
# file's: a competition's rules never leak from the first's.
COMPETITION_KEYS = frozenset({
    "rules", "players", "seed", "strikes_to_forfeit", "limits", "games_per_bot_per_hour",
    "round_games", "max_rounds", "max_catch_up", "forfeits_to_take_out", "house_bots",
    "house_in_final_table"})


def competition_settings(season: dict[str, Any], own: dict[str, Any], path: Path
                         ) -> RunnerSettings:
    """A competition's settings: its own keys (`own`, COMPETITION_KEYS only) over the club's
    keys of the season file's table `season` (read from `path`, whose folder house bots'
    paths are relative to). ConfigError, one line, for a key it may not set or a bad value."""
    foreign = sorted(set(own) - COMPETITION_KEYS)
    if foreign:
        raise ConfigError(f"a competition sets only {', '.join(sorted(COMPETITION_KEYS))}; "
                          f"not {foreign[0]!r}")
    table = {key: value for key, value in season.items() if key not in COMPETITION_KEYS}
    table.setdefault("house_bots", [])   # a competition has only the house bots it names
    settings = runner_settings_from_table({**table, **own}, path)
    rules = settings.league.rules   # what the season's store refuses when it is made, now
    low, high = season_table_sizes(settings.league)
    if low < rules.min_players or high > rules.max_players or low > high:
        raise ConfigError(f"tables of {low}-{high} players do not fit rules {rules.preset!r} "
                          f"({rules.min_players}-{rules.max_players})")
    return settings

"""League settings: from command-line options or a league TOML file."""

from __future__ import annotations

import dataclasses
import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.config import ConfigError, read_toml, rules_from_value
from referee.engine import RuleSet, preset
from referee.league.ratings import RatingParams

DEFAULT_OUT = Path("league-out")
LEAGUE_KEYS = {"bots", "rules", "games", "players", "seed", "concurrency", "duplicate", "out",
               "strikes_to_forfeit", "autoplay_forced", "limits", "ratings", "skip_broken",
               "sandbox"}


@dataclass
class LeagueSettings:
    """Everything that defines a league and how it is run."""

    bots: list[Path]
    rules: RuleSet = field(default_factory=lambda: preset("classic"))
    games: int | None = None                 # default: 25 per bot
    players: tuple[int, int] | None = None   # table sizes; default: min(4, bots) within the rules
    seed: int = 1
    concurrency: int | None = None           # games in flight; default from cores and table size
    duplicate: bool = False
    out: Path = DEFAULT_OUT
    strikes_to_forfeit: int = 3
    autoplay_forced: bool = False
    limits: dict[str, int] = field(default_factory=dict)   # overrides every bot's [limits]
    ratings: RatingParams = field(default_factory=RatingParams)
    skip_broken: bool = False
    sandbox: bool | None = None              # None: wherever bubblewrap works

    def table_sizes(self, bot_count: int) -> tuple[int, int]:
        """The table sizes to schedule, checked against the rules and the number of bots."""
        low, high = self.players or (min(4, bot_count),) * 2
        high = min(high, bot_count)
        low = min(low, high)
        if low < self.rules.min_players or high > self.rules.max_players:
            raise ConfigError(
                f"tables of {low}-{high} players do not fit rules {self.rules.preset!r}: "
                f"players must be between {self.rules.min_players} and {self.rules.max_players}")
        if bot_count < self.rules.min_players:
            raise ConfigError(f"a league needs at least {self.rules.min_players} bots, got "
                              f"{bot_count}")
        return low, high

    def game_count(self, bot_count: int) -> int:
        """How many games to schedule."""
        return self.games if self.games is not None else 25 * bot_count

    def default_concurrency(self, table_size: int) -> int:
        """Games in flight: enough to keep the cores busy, few enough that bots keep their time.

        Each game waits on one bot at a time, so about two games per core keep a machine busy;
        bigger tables hold more bot processes per game.
        """
        cores = os.cpu_count() or 1
        return max(1, min(16, (8 * cores) // max(2, table_size)))

    def defining(self) -> dict[str, Any]:
        """The settings that define the league's games (stored; compared on resume)."""
        return {
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "duplicate": self.duplicate,
            "strikes_to_forfeit": self.strikes_to_forfeit,
            "autoplay_forced": self.autoplay_forced,
            "limits": self.limits,
            "ratings": dataclasses.asdict(self.ratings),
        }


def parse_players(value: Any, where: str) -> tuple[int, int]:
    """`4`, `"2-5"` or `[2, 5]` as an inclusive range of table sizes."""
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            return value, value
        if isinstance(value, str):
            low, _, high = value.partition("-")
            return int(low), int(high or low)
        if isinstance(value, list) and len(value) == 2:
            return int(value[0]), int(value[1])
    except ValueError:
        pass
    raise ConfigError(f"{where}: players must be a number like 4 or a range like \"2-5\", "
                      f"got {value!r}")


def expand_bots(patterns: list[str], base: Path) -> list[Path]:
    """Bot spec paths from file names and glob patterns (relative to `base`), sorted, unique."""
    found: list[Path] = []
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else str(base / pattern)
        matches = sorted(glob.glob(full)) if glob.has_magic(pattern) else [full]
        if not matches:
            raise ConfigError(f"no bot spec matches {pattern!r}")
        for match in matches:
            path = Path(match)
            if path not in found:
                found.append(path)
    return found


def is_league_file(path: Path) -> bool:
    """True if the TOML file at `path` is a league file (it has a `bots` key)."""
    try:
        return "bots" in read_toml(path)
    except ConfigError:
        return False


def load_league_file(path: Path) -> LeagueSettings:
    """League settings from a league TOML file (paths in it are relative to the file)."""
    data = read_toml(path)
    where = str(path)
    unknown = sorted(set(data) - LEAGUE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known keys: "
                          f"{', '.join(sorted(LEAGUE_KEYS))}")
    base = path.parent
    bots = data["bots"]
    if isinstance(bots, str):
        bots = [bots]
    if not isinstance(bots, list) or not all(isinstance(b, str) for b in bots):
        raise ConfigError(f"{where}: key 'bots': expected a list of spec files or globs")
    settings = LeagueSettings(bots=expand_bots(bots, base))
    if "rules" in data:
        settings.rules = rules_from_value(data["rules"], f"{where}: key 'rules'")
    if "players" in data:
        settings.players = parse_players(data["players"], where)
    for key in ("games", "seed", "concurrency", "strikes_to_forfeit"):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{where}: key {key!r}: expected a whole number, got {value!r}")
            setattr(settings, key, value)
    for key in ("duplicate", "autoplay_forced", "skip_broken", "sandbox"):
        if key in data:
            if not isinstance(data[key], bool):
                raise ConfigError(f"{where}: key {key!r}: expected true or false")
            setattr(settings, key, data[key])
    if "out" in data:
        settings.out = base / str(data["out"])
    if "limits" in data:
        if not isinstance(data["limits"], dict):
            raise ConfigError(f"{where}: key 'limits': expected a table")
        settings.limits = dict(data["limits"])
    if "ratings" in data:
        try:
            settings.ratings = RatingParams(**data["ratings"])
        except TypeError as exc:
            raise ConfigError(f"{where}: key 'ratings': {exc}") from None
    return settings

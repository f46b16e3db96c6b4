"""League settings: from command-line options or a league TOML file."""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.bots.spec import LIMIT_NAMES
from referee.engine import RuleSet, preset
from referee.game.match import MatchOptions
from referee.league.stored import LEAGUE, LimitCeiling, StoredLeague, stored_league
from referee.ratings.trueskill import RatingParams
from referee.util.config import ConfigError, read_toml, rules_from_value
from referee.util.seeds import parse_secret

DEFAULT_OUT = Path("league-out")
LEAGUE_KEYS = {"bots", "rules", "games", "players", "seed", "concurrency", "duplicate", "out",
               "strikes_to_forfeit", "autoplay_forced", "limits", "ratings", "skip_broken",
               "sandbox", "cluster", "shared_folders"}
# Settings that define a league's games: compared with the stored ones when --out holds a league.
DEFINING_KEYS = ("bots", "rules", "games", "players", "seed", "duplicate", "strikes_to_forfeit",
                 "autoplay_forced", "limits", "ratings")
TIME_LIMITS = ("decision_ms", "game_bank_ms", "startup_ms")


@dataclass
class LeagueSettings:
    """Everything that defines a league and how it is run."""

    bots: list[Path]
    rules: RuleSet = field(default_factory=lambda: preset("classic"))
    games: int | None = None                 # default: 25 per bot
    players: tuple[int, int] | None = None   # table sizes; default: min(4, bots) within the rules
    seed: int | None = None                  # the league secret; None: drawn when it starts
    concurrency: int | None = None           # games in flight; default from cores and table size
    duplicate: bool = False
    out: Path = DEFAULT_OUT
    strikes_to_forfeit: int = 3
    autoplay_forced: bool = False
    limits: dict[str, int] = field(default_factory=dict)   # a ceiling on every bot's [limits]
    ratings: RatingParams = field(default_factory=RatingParams)
    skip_broken: bool = False
    sandbox: bool | None = None              # None: wherever bubblewrap works
    # Where each setting was given ("--games", "season.toml: key 'games'"): the keys given at
    # all are compared with a stored league's, and errors name where a bad value came from.
    given: dict[str, str] = field(default_factory=dict)
    cluster: str | None = None               # a dask scheduler address or "local:N" (cluster.md)
    # Groups of spec files (resolved) that are one submission under several settings: they
    # may share folders (referee.bots.lineup).
    shared_folders: list[frozenset[Path]] = field(default_factory=list)

    def give(self, key: str, value: Any, where: str) -> None:
        """Set `key` to `value`, remembering that it was given (and where)."""
        setattr(self, key, value)
        self.given[key] = where

    def where(self, key: str) -> str:
        """Where `key` was given, for error messages ("--players", "f.toml: key 'players'")."""
        return self.given.get(key, key)

    def table_sizes(self, bot_count: int) -> tuple[int, int]:
        """The table sizes to schedule, checked against the rules and the number of bots."""
        if bot_count < 2:
            raise ConfigError(f"a league needs at least 2 bots, got {bot_count}")
        if bot_count < self.rules.min_players:
            raise ConfigError(f"a league needs at least {self.rules.min_players} bots under "
                              f"rules {self.rules.preset!r}, got {bot_count}")
        if self.players is None:
            high = min(4, bot_count, self.rules.max_players)
            return high, high
        low, high = self.players
        where = self.where("players")
        if low > high:
            raise ConfigError(f"{where}: the range {low}-{high} is not in order")
        if low < self.rules.min_players or high > self.rules.max_players:
            raise ConfigError(
                f"{where}: tables of {_sizes(low, high)} players do not fit rules "
                f"{self.rules.preset!r}: players must be between {self.rules.min_players} and "
                f"{self.rules.max_players}")
        if high > bot_count:
            raise ConfigError(f"{where}: tables of {high} players need at least {high} bots, "
                              f"the league has {bot_count}")
        return low, high

    def validate(self) -> None:
        """ConfigError naming the option or file key of the first setting out of range."""
        for key in ("games", "concurrency", "strikes_to_forfeit"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ConfigError(f"{self.where(key)}: expected a whole number of at least 1, "
                                  f"got {value!r}")
        if self.players is not None and self.players[0] > self.players[1]:
            raise ConfigError(f"{self.where('players')}: the range "
                              f"{self.players[0]}-{self.players[1]} is not in order")
        check_limits(self.limits, self.where("limits"))
        check_ratings(self.ratings, self.where("ratings"))
        if self.cluster:
            from referee.util.extras import require

            require("distributed", self.where("cluster"))

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

    def definition(self, bots: Sequence[str], given: Sequence[str], scheduled: int,
                   asked: int, sizes: tuple[int, int]) -> StoredLeague:
        """The league these settings define, as its store keeps it (referee.league.stored):
        the settings that define its games (compared on resume), its entries `bots` (of the
        specs `given`), the games `scheduled` of the `asked`, the table `sizes` it plays, and
        when it started. The seed must be drawn by now."""
        if self.seed is None:
            raise ValueError("a league is stored with its seed drawn")
        return StoredLeague(
            kind=LEAGUE, rules=self.rules,
            options=MatchOptions(self.strikes_to_forfeit, self.autoplay_forced),
            secret=self.seed, duplicate=self.duplicate, limits=LimitCeiling.of(self.limits),
            ratings=self.ratings, players=sizes, players_asked=self.players,
            bot_names=tuple(bots), bots_given=tuple(given), games=scheduled, games_asked=asked,
            started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def _sizes(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def check_limits(limits: dict[str, Any], where: str) -> None:
    """ConfigError unless every key is a bot limit and each value a whole number, time limits
    at least 1 ms."""
    known = list(LIMIT_NAMES)
    for key, value in limits.items():
        if key not in known:
            raise ConfigError(f"{where}: unknown limit {key!r}; known limits: {', '.join(known)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            unit = " ms" if key in TIME_LIMITS else ""
            raise ConfigError(f"{where}: {key} must be a whole number of at least 1{unit}, "
                              f"got {value!r}")


def check_ratings(params: RatingParams, where: str) -> None:
    """ConfigError unless mu is a number, sigma and beta are positive, tau is not negative and
    the draw probability is below 1."""
    for key in ("mu", "sigma", "beta", "tau", "draw_probability"):
        value = getattr(params, key)
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                not math.isfinite(value):
            raise ConfigError(f"{where}: {key} must be a number, got {value!r}")
    for key in ("sigma", "beta"):
        if getattr(params, key) <= 0:
            raise ConfigError(f"{where}: {key} must be positive, got {getattr(params, key)!r}")
    if params.tau < 0:
        raise ConfigError(f"{where}: tau must be 0 or more, got {params.tau!r}")
    if not 0 <= params.draw_probability < 1:
        raise ConfigError(f"{where}: draw_probability must be from 0 to below 1, got "
                          f"{params.draw_probability!r}")


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
            if path.is_dir():
                raise ConfigError(f"{pattern}: {path} is a directory; give its bot spec file "
                                  f"(NAME.toml)")
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
    return league_from_table(read_toml(path), path)


def league_from_table(data: dict[str, Any], path: Path,
                      extra_keys: frozenset[str] = frozenset()) -> LeagueSettings:
    """League settings from the parsed TOML of the file at `path`. `extra_keys` are keys the
    caller reads itself (a season file's server keys); a file with such keys may leave out
    `bots`. ConfigError naming the file and key on anything else."""
    where = str(path)
    known = LEAGUE_KEYS | extra_keys
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known keys: "
                          f"{', '.join(sorted(known))}")
    base = path.parent
    bots = data.get("bots", [] if extra_keys else None)
    if isinstance(bots, str):
        bots = [bots]
    if not isinstance(bots, list) or not all(isinstance(b, str) for b in bots):
        raise ConfigError(f"{where}: key 'bots': expected a list of spec files or globs")
    settings = LeagueSettings(bots=expand_bots(bots, base))
    if "bots" in data:
        settings.given["bots"] = f"{where}: key 'bots'"

    def key(name: str) -> str:
        return f"{where}: key {name!r}"

    if "rules" in data:
        settings.give("rules", rules_from_value(data["rules"], key("rules")), key("rules"))
    if "players" in data:
        settings.give("players", parse_players(data["players"], key("players")), key("players"))
    if "seed" in data:
        try:
            settings.give("seed", parse_secret(data["seed"], key("seed")), key("seed"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    for name in ("games", "concurrency", "strikes_to_forfeit"):
        if name in data:
            value = data[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key(name)}: expected a whole number of at least 1, "
                                  f"got {value!r}")
            settings.give(name, value, key(name))
    for name in ("duplicate", "autoplay_forced", "skip_broken", "sandbox"):
        if name in data:
            if not isinstance(data[name], bool):
                raise ConfigError(f"{key(name)}: expected true or false, got {data[name]!r}")
            settings.give(name, data[name], key(name))
    if "cluster" in data:
        if not isinstance(data["cluster"], str) or not data["cluster"]:
            raise ConfigError(f"{key('cluster')}: expected an address such as "
                              f"\"tcp://host:8786\" or \"local:2\"")
        settings.give("cluster", data["cluster"], key("cluster"))
    if "shared_folders" in data:
        settings.give("shared_folders", _shared_folders(data["shared_folders"], base,
                                                        settings.bots, key("shared_folders")),
                      key("shared_folders"))
    if "out" in data:
        if not isinstance(data["out"], str) or not data["out"]:
            raise ConfigError(f"{key('out')}: expected a directory name")
        settings.give("out", base / data["out"], key("out"))
    if "limits" in data:
        if not isinstance(data["limits"], dict):
            raise ConfigError(f"{key('limits')}: expected a table")
        check_limits(data["limits"], key("limits"))
        settings.give("limits", dict(data["limits"]), key("limits"))
    if "ratings" in data:
        table = data["ratings"]
        parameters = [f.name for f in dataclasses.fields(RatingParams)]
        if not isinstance(table, dict):
            raise ConfigError(f"{key('ratings')}: expected a table")
        unknown = sorted(set(table) - set(parameters))
        if unknown:
            raise ConfigError(f"{key('ratings')}: unknown parameter {unknown[0]!r}; known "
                              f"parameters: {', '.join(parameters)}")
        params = RatingParams(**table)
        check_ratings(params, key("ratings"))
        settings.give("ratings", params, key("ratings"))
    return settings


def _shared_folders(value: Any, base: Path, bots: list[Path], where: str
                    ) -> list[frozenset[Path]]:
    """`shared_folders = [["a.toml", "b.toml"], ...]`: groups of the league's spec files
    (relative to the league file) that are one submission and may share folders."""
    if not isinstance(value, list) or not all(
            isinstance(group, list) and len(group) >= 2
            and all(isinstance(name, str) for name in group) for group in value):
        raise ConfigError(f"{where}: expected a list of groups of spec files, such as "
                          f"[[\"bots/alice-fast.toml\", \"bots/alice-deep.toml\"]]")
    known = {Path(path).resolve() for path in bots}
    groups = []
    for group in value:
        paths = frozenset((base / name).resolve() for name in group)
        stray = sorted(str(p) for p in paths - known)
        if stray:
            raise ConfigError(f"{where}: {stray[0]} is not one of the league's bots")
        groups.append(paths)
    return groups


def league_file_text(stored: StoredLeague | Mapping[str, Any]) -> str:
    """A stored league (or its settings as stored, `LeagueStore.settings()`) as the league
    file an organiser writes (docs/league.md): the keys of LEAGUE_KEYS that define its games,
    with the table sizes as written (`players = 4`, `players = "2-5"`) and the rating
    parameters rounded as one types them. The bots and the secret seed are left out."""
    import tomli_w

    if not isinstance(stored, StoredLeague):
        stored = stored_league(stored)
    low, high = stored.players
    text: dict[str, Any] = {
        "games": stored.games, "players": low if low == high else f"{low}-{high}",
        "duplicate": stored.duplicate, "strikes_to_forfeit": stored.strikes_to_forfeit,
        "autoplay_forced": stored.autoplay_forced,
    }
    for table, values in (("rules", stored.rules_table), ("limits", stored.limits),
                          ("ratings", stored.ratings_table)):
        if values:
            text[table] = {k: round(v, 3) if isinstance(v, float) else v
                           for k, v in values.items()}
    return tomli_w.dumps(text)

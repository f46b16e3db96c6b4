"""A league's settings as its store holds them: one typed object, read and written.

The store keeps a league's settings as JSON values by key (referee/league/store.py, table
`settings`): what the league runner, `--until-settled`, `--add`, a season and a gauntlet wrote
when they made or grew it. `StoredLeague` is their one typed form, both ways: `stored_league`
(`read_league`) is the one reader of those keys, `StoredLeague.to_stored` the one writer, and
the writers change a league only by building a new `StoredLeague` (`store_league`,
`store_changes`). So no writer can spell a key the reader does not know, and a store holding a
key this referee does not know is refused in one line rather than read as a default. Keys an
older referee did not store yet read as what they meant then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.bots.spec import LIMIT_NAMES
from referee.engine import RuleSet
from referee.errors import StoreError
from referee.game.match import MatchOptions
from referee.league.schedule import ScheduledGame
from referee.league.store import LeagueStore
from referee.ratings.sprt import TEST_NAME, SprtParams
from referee.ratings.trueskill import RatingParams
from referee.util.config import ConfigError

LEAGUE, SEASON, GAUNTLET = "league", "season", "gauntlet"


# A season entrant's state: scheduled and ranked; replaced by a newer version (fitted, not
# ranked); taken out (fitted, not ranked, never scheduled again).
ACTIVE, RETIRED, DISABLED = "active", "retired", "disabled"


class StoredSettingsError(StoreError, ValueError):
    """A store's settings this referee cannot read: a key it does not know (written by another
    referee, or by hand), or a value of the wrong kind. The message names the store and key."""


@dataclass(frozen=True, eq=False)
class LimitCeiling(Mapping[str, int]):
    """A league's or a season's `[limits]`: a ceiling on every bot's own limits. A limit left
    unset (None) is no ceiling. It reads as the mapping of the limits set, in this order (what
    `referee.bots.spec.capped_limits` takes and what the tables show)."""

    decision_ms: int | None = None
    game_bank_ms: int | None = None
    startup_ms: int | None = None
    memory_mb: int | None = None
    cpu_seconds: int | None = None
    max_processes: int | None = None
    build_seconds: int | None = None

    @classmethod
    def of(cls, limits: Mapping[str, Any]) -> LimitCeiling:
        """The ceiling `limits` sets; ConfigError naming a key that is no bot limit."""
        unknown = sorted(set(limits) - set(LIMIT_NAMES))
        if unknown:
            raise ConfigError(f"limits: unknown limit {unknown[0]!r}; known limits: "
                              f"{', '.join(LIMIT_NAMES)}")
        return cls(**limits)

    def to_dict(self) -> dict[str, int]:
        """The limits set, as stored and as a league file writes them."""
        return dict(self.items())

    def __getitem__(self, key: str) -> int:
        value = getattr(self, key, None) if key in LIMIT_NAMES else None
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in LIMIT_NAMES if getattr(self, name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __hash__(self) -> int:
        return hash(tuple(self.items()))


@dataclass(frozen=True)
class StoredSeason:
    """The season's own settings and state (a store of kind "season")."""

    states: dict[str, str]          # every entrant in order of entry -> active/retired/disabled
    cancelled: frozenset[int]       # schedule indexes never to be played
    rounds: int                     # rounds appended so far
    entries: int                    # entrants so far
    round_games: int                # games per active bot in a round
    max_rounds: int | None          # None: rounds until the season is closed
    max_catch_up: int | None        # None: stored before it was kept (the default applies)
    round_started: float | None     # when the last round was appended; None before the first

    def active(self) -> list[str]:
        """The entrants that play now (one version per bot), in order of entry."""
        return [name for name, state in self.states.items() if state == ACTIVE]


@dataclass(frozen=True)
class StoredGauntlet:
    """The gauntlet's own settings (a store of kind "gauntlet")."""

    test: str | None                # the sequential test it was made with (ratings/sprt.py)
    params: SprtParams | None       # that test's parameters; None when the test is not this
                                    # referee's (gauntlet.stored_params says so)
    candidate: str
    baseline: str
    field: tuple[str, ...]
    renamed: dict[str, str]         # played as -> the spec's own name


@dataclass(frozen=True)
class StoredLeague:
    """A league's settings as its store holds them (`read_league`; written by `to_stored`)."""

    kind: str                       # LEAGUE, SEASON or GAUNTLET
    rules: RuleSet
    options: MatchOptions           # strikes to forfeit, forced moves played for the bot
    secret: int                     # the league's secret seed
    duplicate: bool
    # The ceiling on every bot's [limits]: a LimitCeiling as read; the club's season runner
    # hands its games a live mapping instead (changed in place when the season file changes).
    limits: Mapping[str, int]
    ratings: RatingParams
    players: tuple[int, int]        # the table sizes scheduled
    players_asked: tuple[int, int] | None   # as given (None: the default was asked for)
    bot_names: tuple[str, ...]      # the league's entries, in order
    bots_given: tuple[str, ...]     # the names of the specs given when it started
    games: int                      # games scheduled
    games_asked: int                # games asked for when it started
    started: str | None             # "2026-01-31T18:00:00Z"; None if not stored
    looks: int = 1                  # blocks the --until-settled budget allows
    blocks: int = 1                 # blocks scheduled by --until-settled
    additions: int = 0              # times bots were added (--add)
    season: StoredSeason | None = None
    gauntlet: StoredGauntlet | None = None

    @property
    def strikes_to_forfeit(self) -> int:
        """Strikes after which a bot forfeits its game."""
        return self.options.strikes_to_forfeit

    @property
    def autoplay_forced(self) -> bool:
        """True when a bot's forced moves are made for it."""
        return self.options.autoplay_forced

    @property
    def rules_table(self) -> dict[str, Any]:
        """The rules as stored (and as the tables and the report list them)."""
        return self.rules.to_dict()

    @property
    def ratings_table(self) -> dict[str, float]:
        """The rating parameters as stored (and as the tables list them)."""
        return dataclasses.asdict(self.ratings)

    def to_stored(self) -> dict[str, Any]:
        """The settings as the store keeps them (JSON values by key): the inverse of
        `stored_league`, the one place that spells the keys a writer stores."""
        stored: dict[str, Any] = {
            "kind": self.kind, "rules": self.rules_table, "seed": str(self.secret),
            "strikes_to_forfeit": self.strikes_to_forfeit,
            "autoplay_forced": self.autoplay_forced, "duplicate": self.duplicate,
            "limits": LimitCeiling.of(self.limits).to_dict(), "ratings": self.ratings_table,
            "players": list(self.players),
            "players_asked": None if self.players_asked is None else list(self.players_asked),
            "bot_names": list(self.bot_names), "bots_given": list(self.bots_given),
            "games": self.games, "games_asked": self.games_asked, "started": self.started,
            "looks": self.looks, "blocks": self.blocks, "additions": self.additions,
        }
        if self.season is not None:
            part = self.season
            stored.update({
                "season_states": dict(part.states), "season_cancelled": sorted(part.cancelled),
                "season_rounds": part.rounds, "season_entries": part.entries,
                "season_round_games": part.round_games, "season_max_rounds": part.max_rounds,
                "season_max_catch_up": part.max_catch_up,
                "season_round_started": part.round_started})
        if self.gauntlet is not None:
            gauntlet = self.gauntlet
            stored.update({
                "test": gauntlet.test, "candidate": gauntlet.candidate,
                "baseline": gauntlet.baseline, "field": list(gauntlet.field),
                "renamed": dict(gauntlet.renamed)})
            if gauntlet.params is not None:
                stored["params"] = gauntlet.params.to_dict()
        return stored


# Every key a referee has stored: the league's own, a season's and a gauntlet's.
LEAGUE_KEYS = frozenset({
    "kind", "rules", "seed", "strikes_to_forfeit", "autoplay_forced", "duplicate", "limits",
    "ratings", "players", "players_asked", "bot_names", "bots_given", "games", "games_asked",
    "started", "looks", "blocks", "additions"})
SEASON_KEYS = frozenset({
    "season_states", "season_cancelled", "season_rounds", "season_entries",
    "season_round_games", "season_max_rounds", "season_max_catch_up", "season_round_started"})
GAUNTLET_KEYS = frozenset({"test", "params", "candidate", "baseline", "field", "renamed"})
STORED_KEYS = LEAGUE_KEYS | SEASON_KEYS | GAUNTLET_KEYS


def read_league(store: LeagueStore) -> StoredLeague | None:
    """The league in `store`, typed; None for a store that holds no league yet.
    StoredSettingsError (one line, naming the store) for settings this referee cannot read."""
    settings = store.settings()
    return None if settings is None else stored_league(settings, str(store.path))


def store_league(store: LeagueStore, league: StoredLeague,
                 bots: Mapping[str, tuple[str, str | None]],
                 schedule: Sequence[ScheduledGame]) -> None:
    """Store a new league: its typed settings, its bots (name -> (version, spec path)) and its
    schedule."""
    store.create(league.to_stored(), dict(bots), list(schedule))


def store_changes(store: LeagueStore, before: StoredLeague, after: StoredLeague,
                  bots: Mapping[str, tuple[str, str | None]] | None = None,
                  games: Sequence[ScheduledGame] = ()) -> None:
    """Grow the league stored as `before` into `after` in one transaction, with bots to add
    and games to append: only the keys whose stored value changed are written, so keys an
    older referee left out stay out (and read as they did)."""
    old, new = before.to_stored(), after.to_stored()
    changed = {key: value for key, value in new.items() if key not in old or old[key] != value}
    store.extend(changed, dict(bots or {}), list(games))


def stored_league(stored: Mapping[str, Any], where: str = "the store") -> StoredLeague:
    """The typed form of a store's settings (`LeagueStore.settings()`): the one place that reads
    their keys. A gauntlet stores no games, duplicate, limits or ratings: it reads as none (the
    defaults); keys a league stored before they were kept read as what they meant then.
    StoredSettingsError naming `where` and the key for a key no referee wrote, a required key
    missing or a value of the wrong kind."""
    unknown = sorted(set(stored) - STORED_KEYS)
    if unknown:
        raise StoredSettingsError(
            f"{where}: unknown setting {unknown[0]!r} in the store (written by another "
            f"referee, or by hand): this referee cannot read it")
    try:
        return _league(stored, where)
    except KeyError as exc:
        raise StoredSettingsError(f"{where}: the store holds no setting {exc.args[0]!r}"
                                  ) from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):   # the rules' own one line (RulesError)
            raise
        raise StoredSettingsError(f"{where}: the stored settings cannot be read: {exc}"
                                  ) from None


def _league(stored: Mapping[str, Any], where: str) -> StoredLeague:
    players = _pair(stored["players"])
    bot_names = tuple(stored["bot_names"])
    games = int(stored.get("games", 0))
    kind = stored.get("kind", LEAGUE)
    return StoredLeague(
        kind=kind,
        rules=RuleSet.from_dict(stored["rules"]),
        options=MatchOptions(stored["strikes_to_forfeit"], stored["autoplay_forced"]),
        secret=int(stored["seed"]),
        duplicate=bool(stored.get("duplicate", False)),
        limits=_limits(stored.get("limits", {}), where),
        ratings=_params(RatingParams, stored.get("ratings", {}), where, "ratings"),
        players=players,
        # Present but null: the default table size was asked for; missing: stored before the
        # asked value was kept, when the scheduled one was the asked one.
        players_asked=(_pair(stored["players_asked"]) if stored.get("players_asked")
                       else None) if "players_asked" in stored else players,
        bot_names=bot_names,
        bots_given=tuple(stored.get("bots_given", bot_names)),
        games=games,
        games_asked=int(stored.get("games_asked", games)),
        started=stored.get("started"),
        looks=int(stored.get("looks", 1)),
        blocks=int(stored.get("blocks", 1)),
        additions=int(stored.get("additions", 0)),
        season=_season(stored) if kind == SEASON else None,
        gauntlet=_gauntlet(stored, where) if kind == GAUNTLET else None,
    )


def _pair(value: Any) -> tuple[int, int]:
    low, high = value
    return int(low), int(high)


def _limits(value: Any, where: str) -> LimitCeiling:
    if not isinstance(value, dict):
        raise StoredSettingsError(f"{where}: the stored limits are not a table: {value!r}")
    unknown = sorted(set(value) - set(LIMIT_NAMES))
    if unknown:
        raise StoredSettingsError(f"{where}: unknown limit {unknown[0]!r} in the stored limits; "
                                  f"known limits: {', '.join(LIMIT_NAMES)}")
    for key, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int):
            raise StoredSettingsError(f"{where}: the stored limit {key} is not a whole "
                                      f"number: {number!r}")
    return LimitCeiling(**value)


def _params(kind: type[Any], value: Any, where: str, key: str) -> Any:
    """`kind` (a dataclass of parameters) from the stored table `value`, refusing keys it has
    not."""
    if not isinstance(value, dict):
        raise StoredSettingsError(f"{where}: the stored {key} are not a table: {value!r}")
    known = [f.name for f in dataclasses.fields(kind)]
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise StoredSettingsError(f"{where}: unknown parameter {unknown[0]!r} in the stored "
                                  f"{key}; known parameters: {', '.join(known)}")
    return kind(**value)


def _season(stored: Mapping[str, Any]) -> StoredSeason:
    started = stored.get("season_round_started")
    catch_up = stored.get("season_max_catch_up")
    return StoredSeason(
        states=dict(stored["season_states"]),
        cancelled=frozenset(stored["season_cancelled"]),
        rounds=int(stored["season_rounds"]),
        entries=int(stored["season_entries"]),
        round_games=int(stored["season_round_games"]),
        max_rounds=stored.get("season_max_rounds"),
        max_catch_up=None if catch_up is None else int(catch_up),
        round_started=None if started is None else float(started),
    )


def _gauntlet(stored: Mapping[str, Any], where: str) -> StoredGauntlet:
    test = stored.get("test")
    # Another test's parameters mean other things: they are not read (stored_params says so).
    params = _params(SprtParams, stored.get("params", {}), where, "params") \
        if test == TEST_NAME else None
    return StoredGauntlet(
        test=test,
        params=params,
        candidate=stored["candidate"],
        baseline=stored["baseline"],
        field=tuple(stored["field"]),
        renamed=dict(stored.get("renamed", {})),
    )

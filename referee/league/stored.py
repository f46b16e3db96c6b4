"""A league's settings as its store holds them, read back once and typed.

The store keeps a league's settings as JSON values by key (referee/league/store.py, table
`settings`): what the league runner, `--until-settled`, `--add`, a season and a gauntlet wrote
when they made or grew it. `read_league` is the one reader of those keys; everything else (the
runner's loop, the resume check, the tables, the report, the club server) uses the typed
`StoredLeague` it makes. Writes still go through `LeagueStore.create` and `.extend`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.engine import RuleSet
from referee.game.match import MatchOptions
from referee.league.store import LeagueStore
from referee.ratings.trueskill import RatingParams

LEAGUE, SEASON, GAUNTLET = "league", "season", "gauntlet"


# A season entrant's state: scheduled and ranked; replaced by a newer version (fitted, not
# ranked); taken out (fitted, not ranked, never scheduled again).
ACTIVE, RETIRED, DISABLED = "active", "retired", "disabled"


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
    params: dict[str, Any]          # that test's parameters, as stored (read once the test
                                    # is known to be this referee's: gauntlet.stored_params)
    candidate: str
    baseline: str
    field: tuple[str, ...]
    renamed: dict[str, str]         # played as -> the spec's own name


@dataclass(frozen=True)
class StoredLeague:
    """A league's settings read back from its store (`read_league`)."""

    kind: str                       # LEAGUE, SEASON or GAUNTLET
    rules: RuleSet
    rules_table: dict[str, Any]     # the rules as stored, for the tables and the report
    options: MatchOptions           # strikes to forfeit, forced moves played for the bot
    secret: int                     # the league's secret seed
    duplicate: bool
    limits: dict[str, int]          # the ceiling on every bot's [limits]
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
    def ratings_table(self) -> dict[str, float]:
        """The rating parameters as stored (and as the tables list them)."""
        return dataclasses.asdict(self.ratings)


def read_league(store: LeagueStore) -> StoredLeague | None:
    """The league in `store`, typed; None for a store that holds no league yet."""
    settings = store.settings()
    return None if settings is None else stored_league(settings)


def stored_league(stored: Mapping[str, Any]) -> StoredLeague:
    """The typed form of a store's settings (`LeagueStore.settings()`): the one place that reads
    their keys. A gauntlet stores no games, duplicate, limits or ratings: it reads as none (the
    defaults); keys a league stored before they were kept read as what they meant then."""
    players = _pair(stored["players"])
    bot_names = tuple(stored["bot_names"])
    games = int(stored.get("games", 0))
    return StoredLeague(
        kind=stored.get("kind", LEAGUE),
        rules=RuleSet.from_dict(stored["rules"]),
        rules_table=dict(stored["rules"]),
        options=MatchOptions(stored["strikes_to_forfeit"], stored["autoplay_forced"]),
        secret=int(stored["seed"]),
        duplicate=bool(stored.get("duplicate", False)),
        limits=dict(stored.get("limits", {})),
        ratings=RatingParams(**stored.get("ratings", {})),
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
        season=_season(stored) if stored.get("kind") == SEASON else None,
        gauntlet=_gauntlet(stored) if stored.get("kind") == GAUNTLET else None,
    )


def _pair(value: Any) -> tuple[int, int]:
    low, high = value
    return int(low), int(high)


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


def _gauntlet(stored: Mapping[str, Any]) -> StoredGauntlet:
    return StoredGauntlet(
        test=stored.get("test"),
        params=dict(stored.get("params", {})),
        candidate=stored["candidate"],
        baseline=stored["baseline"],
        field=tuple(stored["field"]),
        renamed=dict(stored.get("renamed", {})),
    )

"""The reader of every league's outcome: ratings, tables and facts rebuilt from a store's
records alone (`load_outcome`), whoever played them (a league, `--until-settled`, `--add`, a
season), and how to read the global fit's numbers (`fit_facts`, `separation_rule`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from referee import __version__
from referee.bots.errors import BotStartError
from referee.league.schedule import Balance, ScheduledGame, balance
from referee.league.store import LeagueStore
from referee.league.stored import StoredLeague, read_league
from referee.league.tables import Row, head_to_head, league_rows
from referee.league.worker_health import WorkerRow, worker_health
from referee.ratings.intervals import Standings, standings
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import Ratings, RatingState, rate_games
from referee.util.config import ConfigError


@dataclass
class LeagueOutcome:
    """What a league run produced (also rebuilt from the store by `load_outcome`)."""

    out: Path
    bots: list[str]
    schedule: list[ScheduledGame]
    games: list[PlayedGame]
    ratings: Ratings
    rows: list[Row]             # the ranked bots' rows, ranked 1, 2, 3...
    h2h: dict
    balance: Balance
    rules: dict                 # the league's rule set, as stored
    played_now: int = 0
    broken: list[BotStartError] = field(default_factory=list)
    standings: Standings | None = None     # the global fit with its intervals
    workers: list[WorkerRow] = field(default_factory=list)   # games played on a cluster

    @property
    def pairwise(self) -> dict[tuple[str, str], float]:
        """P(a finishes ahead of b) from the global fit, in table order."""
        if self.standings is None:
            return {}
        order, ahead = self.standings.order, self.standings.ahead
        return {(a, b): ahead[a, b] for a in order for b in order if (a, b) in ahead}
    facts: dict = field(default_factory=dict)       # the league's settings, for the tables
    notes: list[str] = field(default_factory=list)  # things the organiser should be told
    # the fitted bots not ranked (a season's retired and disabled versions), strongest first
    unranked: list[Row] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        """True when every scheduled game is recorded."""
        return len(self.games) == len(self.schedule)


class LeagueStateError(ConfigError):
    """The output directory holds a league that this command cannot continue as asked."""


def read_settings(store: LeagueStore) -> StoredLeague:
    """The league in `store`; LeagueStateError if it holds none."""
    stored = read_league(store)
    if stored is None:
        raise LeagueStateError(f"{store.path}: no league here")
    return stored


def league_facts(store: LeagueStore, stored: StoredLeague) -> dict:
    """The facts of a league for its table files: everything needed to read the table and to
    reproduce the league (the seed is the league's secret: tables are for the organiser)."""
    versions = store.versions()
    low, high = stored.players
    return {
        "seed": str(stored.secret),
        "rules": stored.rules_table,
        "table_sizes": list(range(low, high + 1)),
        "games_scheduled": stored.games,
        "duplicate": stored.duplicate,
        "strikes_to_forfeit": stored.strikes_to_forfeit,
        "autoplay_forced": stored.autoplay_forced,
        "limits": dict(stored.limits),
        "ratings": stored.ratings_table,
        "bots": {name: versions.get(name, ["?"])[-1] for name in stored.bot_names},
        "bot_versions": {name: versions[name] for name in stored.bot_names
                         if len(versions.get(name, [])) > 1},
        "started": stored.started or "",
        "referee_version": __version__,
    }


def load_outcome(store: LeagueStore, played_now: int = 0, resume: RatingState | None = None,
                 cancelled: Collection[int] | None = None,
                 ranked: Collection[str] | None = None) -> LeagueOutcome:
    """Ratings and tables of the league in `store`, from its records alone. TrueSkill resumes
    from `resume` when it still holds (the same ratings, sooner) and, given the `cancelled`
    games (a season's; () for a league), keeps its state after the `settled` games in
    `outcome.ratings.state` for the next call to resume from (rate_games). `ranked` names the
    bots the table ranks (`ranked_entrants` by default); the others are fitted on every game
    and kept in `outcome.unranked`."""
    stored = read_settings(store)
    bots = list(stored.bot_names)
    schedule = store.schedule()
    games = store.played()
    checkpoint = None if cancelled is None else settled(schedule, games, cancelled)
    ratings = rate_games(games, bots, stored.ratings, resume, checkpoint)
    fit = league_standings(games, bots, schedule, stored.secret, stored.looks,
                           ranked_entrants(stored) if ranked is None else ranked)
    rows, unranked = league_rows(games, bots, ratings, fit)
    outcome = LeagueOutcome(store.path.parent, bots, schedule, games, ratings, rows,
                            head_to_head(games, bots), balance(schedule, bots),
                            stored.rules_table, played_now, standings=fit,
                            workers=worker_health(games, store.workers()), unranked=unranked)
    outcome.facts = league_facts(store, stored)
    return outcome


def settled(schedule: Sequence[ScheduledGame], games: Sequence[PlayedGame],
            cancelled: Collection[int]) -> int:
    """The last schedule index up to which every game is recorded or cancelled (-1: none):
    later refits find the same games there, while games after it may still come in any
    order."""
    skip = {game.index for game in games} | set(cancelled)
    last = -1
    for game in sorted(schedule, key=lambda game: game.index):
        if game.index not in skip:
            break
        last = game.index
    return last


def ranked_entrants(stored: StoredLeague) -> list[str] | None:
    """The bots a league's table ranks: in a season its active entrants, one version per bot
    (a retired or disabled version keeps its games in the fit, as its opponents' opponent, but
    no rank); None (every bot) in a league."""
    return None if stored.season is None else stored.season.active()


def league_standings(games: list[PlayedGame], bots: list[str], schedule: list[ScheduledGame],
                     seed: int, looks: int = 1,
                     ranked: Collection[str] | None = None) -> Standings:
    """The global fit of a league's games with its intervals; in its bootstrap (rank ranges,
    gaps) the rotations of one duplicate table are resampled together (their schedule group).
    `looks` > 1 for a league checked after each block (`--until-settled`). `ranked`: the bots
    ranked (default all; `standings`)."""
    groups = {game.index: game.group for game in schedule}
    return standings(games, bots, seed, groups, looks=looks, ranked=ranked)


#: Where a league of several table sizes reads its strengths (plackett.py).
TYPICAL_TABLE = ("the league's typical table: the geometric mean of the scales over its games "
                 "is 1")


def fit_facts(fit: Standings | None) -> dict:
    """How to read the global fit's numbers: the rule behind the separation marks and, with
    several table sizes, the scale of the strengths at each (plackett.py)."""
    if fit is None:
        return {}
    facts: dict = {"separation": separation_rule(fit)}
    if len(fit.scale) > 1:
        facts["strength_read_at"] = TYPICAL_TABLE
        facts["strength_scale_by_table_size"] = {str(k): c for k, c in sorted(fit.scale.items())}
    test = fit.size_test
    if test is not None:
        facts["size_model_test"] = {"likelihood_ratio": test.statistic, "df": test.df,
                                    "p": test.p,
                                    "one_scale_per_size": "rejected" if test.rejected else "fits"}
        if test.rejected:
            facts["size_model_test"]["strength_at_each_size_alone"] = {
                str(k): by_bot for k, by_bot in sorted(test.by_size.items())}
    return facts


def separation_rule(fit: Standings) -> str:
    """The rule that separates two neighbours, in words."""
    if fit.z is None:
        return "95% intervals apart"
    return f"gap z > {fit.z:.2f}, 95% over {fit.looks} looks"

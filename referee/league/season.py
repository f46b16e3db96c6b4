"""A season: a league that runs for as long as its organiser wants, with bots coming and going.

A season lives in an ordinary league folder (its store is the one truth, so `referee
table/show/export/verify/report` work on it) and grows in two ways:

* **entries** — a bot that enters while the season runs is given its fair share of games
  against the active field at once (as `--add` does: least-met opponents first, its seat
  cycling through every seat); an entry may *retire* older entrants (a student's newer version
  takes the older one's place: from then on only the newer one is scheduled, the older keeps
  its games and its row);
* **rounds** — when every scheduled game is played, `next_round` appends a balanced block of
  `round_games` games per active bot between the active entrants.

A *disabled* entrant keeps its recorded games; its games not yet played are cancelled (stored,
so they are never played) and it is never scheduled again. Every change is a function of the
stored season and the call, seeded one-way from the season's secret: the same entries and
rounds in the same order with the same seed give the same schedule, and so the same games.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.bots.spec import BotSpec, capped_limits, load_spec
from referee.game.match import MatchResult
from referee.league.config import LeagueSettings
from referee.league.entrants import more_games, newcomer_games
from referee.league.executors import Executor, Stop
from referee.league.folder import LeagueFolder
from referee.league.outcome import LeagueOutcome, load_outcome
from referee.league.playing import play_schedule
from referee.league.schedule import ScheduledGame, table_sizes
from referee.league.store import LeagueStore
from referee.league.stored import (
    ACTIVE,
    DISABLED,
    RETIRED,
    SEASON,
    LimitCeiling,
    StoredLeague,
    StoredSeason,
    read_league,
    store_changes,
    store_league,
)
from referee.league.tables import Row
from referee.ratings.trueskill import RatingState
from referee.util.config import ConfigError
from referee.util.seeds import draw_secret

KIND = SEASON
ROUND_GAMES = 4   # default games per active bot in a round
# Default cap on a newcomer's first games: a late entrant of a long season would otherwise hold
# up every round until it had played them all.
MAX_CATCH_UP = 40


class SeasonError(ConfigError):
    """A season call that cannot be done as asked; the message says why in one line."""


class Season:
    """The season stored in `out` (see `open_season`)."""

    def __init__(self, store: LeagueStore) -> None:
        self.store = store
        stored = read_league(store)
        if stored is None or stored.season is None:
            raise SeasonError(f"{store.path}: holds no season")

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> Season:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading

    @property
    def stored(self) -> StoredLeague:
        """The stored settings, read now (the league's, with the season's in `.season`)."""
        stored = read_league(self.store)
        assert stored is not None and stored.season is not None
        return stored

    @property
    def part(self) -> StoredSeason:
        """The season's own stored settings and state, read now."""
        season = self.stored.season
        assert season is not None
        return season

    def states(self) -> dict[str, str]:
        """Every entrant in order of entry -> active, retired or disabled."""
        return dict(self.part.states)

    def active(self) -> list[str]:
        """The entrants scheduled in new rounds, in order of entry."""
        return [name for name, state in self.states().items() if state == ACTIVE]

    def cancelled(self) -> set[int]:
        """Schedule indexes of the games cancelled (they are never played)."""
        return set(self.part.cancelled)

    def pending(self) -> list[ScheduledGame]:
        """The scheduled games neither recorded nor cancelled, in schedule order."""
        skip = self.store.done() | self.cancelled()
        return [game for game in self.store.schedule() if game.index not in skip]

    def rounds(self) -> int:
        """Rounds appended so far."""
        return self.part.rounds

    def round_started(self) -> float | None:
        """When the last round was appended (seconds since the epoch); None before the first."""
        return self.part.round_started

    def set_limits(self, limits: Mapping[str, int]) -> None:
        """A new `[limits]` ceiling for the games from now on (the games played keep theirs)."""
        stored = self.stored
        store_changes(self.store, stored,
                      dataclasses.replace(stored, limits=LimitCeiling.of(limits)))

    def outcome(self, unranked: Collection[str] = ()) -> LeagueOutcome:
        """Ratings and tables of every recorded game (the league's own `load_outcome`): the
        active entrants ranked (one version per bot) except those in `unranked`, every entrant
        fitted on every game."""
        leave = set(unranked)
        return load_outcome(self.store, ranked=[name for name in self.active()
                                                if name not in leave])

    # ------------------------------------------------------------------ changing

    def enter(self, name: str, version: str, spec_path: str | None,
              retire: Sequence[str] = ()) -> list[ScheduledGame]:
        """Enter `name` (its files' `version`, its spec at `spec_path`), retiring the active
        entrants in `retire` first, and schedule its fair share of games against the active
        field: as many as the rounds so far gave each bot there from the start (`round_games`
        per round), at most `max_catch_up` (none before the first round). Returns the games
        added."""
        stored = self.stored
        part = self._part(stored)
        states = dict(part.states)
        if name in states:
            raise SeasonError(f"{name!r} has entered this season already")
        for old in retire:
            if states.get(old) == ACTIVE:
                states[old] = RETIRED
        field = [bot for bot, state in states.items() if state == ACTIVE]
        states[name] = ACTIVE
        schedule = self.store.schedule()
        entries = part.entries + 1
        games: list[ScheduledGame] = []
        catch_up = MAX_CATCH_UP if part.max_catch_up is None else part.max_catch_up
        share = min(part.rounds * part.round_games, catch_up)
        if field and share > 0 and self._playable(len(field) + 1):
            games = newcomer_games(schedule, field, [name], stored.players, stored.secret,
                                   stored.duplicate, entries, share)
        store_changes(self.store, stored, dataclasses.replace(
            stored, bot_names=(*stored.bot_names, name), games=len(schedule) + len(games),
            season=dataclasses.replace(part, states=states, entries=entries)),
            {name: (version, spec_path)}, games)
        return games

    def relocate(self, paths: Mapping[str, str]) -> list[str]:
        """Store the spec path `paths` gives for each entrant whose stored path differs (a data
        folder moved or restored elsewhere: the club's own records say where each spec is now);
        the names moved. Nothing else of the season changes."""
        moved = []
        for name, (version, stored) in sorted(self.store.bots().items()):
            if name in paths and paths[name] != stored:
                self.store.update_bot(name, version, paths[name])
                moved.append(name)
        return moved

    def disable(self, name: str) -> list[int]:
        """Disable `name`: its recorded games stay, its unplayed games are cancelled, and it is
        never scheduled again. Returns the cancelled indexes."""
        stored = self.stored
        part = self._part(stored)
        states = dict(part.states)
        if name not in states:
            raise SeasonError(f"{name!r} is not in this season")
        states[name] = DISABLED
        gone = [game.index for game in self.pending() if name in game.bots]
        self._change(stored, dataclasses.replace(part, states=states,
                                                 cancelled=part.cancelled | frozenset(gone)))
        return gone

    def restore(self, name: str) -> None:
        """Make the disabled `name` active again: it is scheduled from the next round on (its
        recorded games stay; the games cancelled when it was disabled stay cancelled)."""
        stored = self.stored
        part = self._part(stored)
        states = dict(part.states)
        if states.get(name) != DISABLED:
            raise SeasonError(f"{name!r} is not disabled in this season")
        states[name] = ACTIVE
        self._change(stored, dataclasses.replace(part, states=states))

    def next_round(self) -> list[ScheduledGame]:
        """Append a round between the active entrants (`round_games` games per bot, balanced
        as a league's schedule) and return it; nothing while games are pending, fewer entrants
        are active than a table needs, or the season's `max_rounds` are played."""
        stored = self.stored
        assert stored.season is not None
        limit = stored.season.max_rounds
        active = self.active()
        if self.pending() or not self._playable(len(active)) or \
                (limit is not None and self.rounds() >= limit):
            return []
        sizes = table_sizes(len(active), stored.players)
        mean_size = sum(sizes) / len(sizes)
        count = math.ceil(stored.season.round_games * len(active) / mean_size)
        schedule = self.store.schedule()
        number = self.rounds() + 1
        games = more_games(schedule, active, count, stored.players, stored.secret,
                           stored.duplicate, number)
        # When it started: a paced season's next round waits for it (the club's runner).
        store_changes(self.store, stored, dataclasses.replace(
            stored, games=len(schedule) + len(games),
            season=dataclasses.replace(stored.season, rounds=number,
                                       round_started=time.time())), games=games)
        return games

    @staticmethod
    def _part(stored: StoredLeague) -> StoredSeason:
        assert stored.season is not None
        return stored.season

    def _change(self, stored: StoredLeague, part: StoredSeason) -> None:
        """Store the season's own settings and state `part` (nothing else changes)."""
        store_changes(self.store, stored, dataclasses.replace(stored, season=part))

    def _playable(self, bots: int) -> bool:
        """True when `bots` entrants can fill a table under the season's rules."""
        return bots >= max(2, self.stored.rules.min_players)


def open_season(out: Path, settings: LeagueSettings | None = None,
                round_games: int = ROUND_GAMES, max_rounds: int | None = None,
                max_catch_up: int = MAX_CATCH_UP) -> Season:
    """The season in `out`, created from `settings` (its league keys: rules, players, seed,
    duplicate, strikes, limits, ratings; its bots are ignored) if `out` holds none yet. An
    existing season keeps its stored settings. SeasonError if `out` holds a plain league."""
    folder = LeagueFolder(out)
    store = folder.open_store()
    try:
        if not store.holds_league():
            if settings is None:
                raise SeasonError(f"{folder.store_path}: no season here")
            _create(store, settings, round_games, max_rounds, max_catch_up)
        return Season(store)
    except BaseException:
        store.close()
        raise


def season_table_sizes(settings: LeagueSettings) -> tuple[int, int]:
    """The table sizes a season plays: its settings' `players`, else tables of 4 (of fewer
    where the rules allow fewer)."""
    return settings.players or (min(4, settings.rules.max_players),) * 2


def _create(store: LeagueStore, settings: LeagueSettings, round_games: int,
            max_rounds: int | None, max_catch_up: int) -> None:
    settings.validate()
    if round_games < 1:
        raise SeasonError(f"round_games: expected a whole number of at least 1, got "
                          f"{round_games!r}")
    if settings.seed is None:
        settings.seed = draw_secret()
    rules = settings.rules
    low, high = season_table_sizes(settings)
    if low < rules.min_players or high > rules.max_players or low > high:
        raise SeasonError(f"{settings.where('players')}: tables of {low}-{high} players do not "
                          f"fit rules {rules.preset!r} ({rules.min_players}-"
                          f"{rules.max_players})")
    season = StoredSeason(states={}, cancelled=frozenset(), rounds=0, entries=0,
                          round_games=round_games, max_rounds=max_rounds,
                          max_catch_up=max_catch_up, round_started=None)
    league = settings.definition([], [], 0, 0, (low, high))
    store_league(store, dataclasses.replace(league, kind=KIND, players_asked=(low, high),
                                            season=season), {}, [])


# ---------------------------------------------------------------------- playing

def season_specs(season: Season, names: Sequence[str]) -> list[BotSpec]:
    """The specs of entrants `names`, under their season names and with the season's limits."""
    bots = season.store.bots()
    limits = season.stored.limits
    specs = []
    for name in names:
        path = bots[name][1]
        if path is None or not Path(path).exists():
            raise SeasonError(f"entrant {name!r}: its spec {path} is gone")
        specs.append(capped_limits(dataclasses.replace(load_spec(path), name=name), limits))
    return specs


async def play_pending(season: Season, executor: Executor, stop: Stop | None = None,
                       saved: Callable[[ScheduledGame, MatchResult], None] | None = None) -> int:
    """Play the season's pending games on `executor` (started, holding every bot they need)
    in schedule order, storing each as it ends, until they are done or `stop()` turns true
    (the games in flight finish). `saved` hears of each stored game. Returns games stored."""
    return await play_schedule(executor, season.store, season.stored, season.pending(),
                               on_saved=saved, stop=stop)


# ---------------------------------------------------------------------- the table

@dataclass(frozen=True)
class SeasonRow:
    """A row of the season's snapshot: an entrant's line of the table (the league's `Row`,
    its `bot` the entrant's season name) and the entrant's state in the season."""

    state: str     # ACTIVE, RETIRED or DISABLED
    table: Row

    def to_json(self) -> dict[str, Any]:
        """The row as JSON-ready data: `state` and `table` (the table row's one JSON form)."""
        return {"state": self.state, "table": self.table.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeasonRow:
        """The row `to_json` gave, or a row of an older release's snapshot (a club upgraded
        keeps its standings: flat, under the names in _OLDER_NAMES); ValueError, one line,
        when it is neither."""
        state = str(data.get("state") or ACTIVE)
        table = data.get("table")
        if isinstance(table, Mapping):
            return cls(state, Row.from_json(table))
        if "league_name" not in data:
            raise ValueError("a season row without its table row")
        older = {**_OLDER_DEFAULTS, **{key: value for key, value in data.items()
                                       if key not in _OLDER_NAMES and key != "strikes"}}
        older.update({new: data[old] for old, new in _OLDER_NAMES.items() if old in data})
        return cls(state, Row.from_json(older))


# An older release's snapshot rows: flat, these keys for the table row's fields ("strikes" was
# their total, "strike_kinds" the counts by kind), and some fields missing.
_OLDER_NAMES = {"league_name": "bot", "lo": "strength_low", "hi": "strength_high",
                "rank_lo": "rank_low", "rank_hi": "rank_high",
                "separated": "separated_from_next", "strike_kinds": "strikes"}
_OLDER_DEFAULTS: dict[str, Any] = {
    "rank": None, "mu": None, "sigma": None, "conservative": None, "games": 0, "wins": 0,
    "win_pct": None, "avg_place": None, "avg_money": None, "seat_win_pct": [], "strikes": {},
    "forfeits": 0, "think_p50_ms": None, "think_p95_ms": None}


def snapshot(season: Season) -> dict[str, Any]:
    """The season's table as JSON-ready data: `rows` (`SeasonRow`s: the active entrants in
    rank order of the global fit, each with its 95% interval and rank range among them; then
    the retired and disabled versions, strongest first, with `rank` and the rank range None;
    without the bots' note values, which are their owners' alone), `facts` and `head_to_head`
    (bot -> opponent -> games, ahead, behind).
    The fit runs here: call it away from anything that must stay responsive."""
    return refit(season)[0]


def refit(season: Season, resume: RatingState | None = None
          ) -> tuple[dict[str, Any], RatingState | None]:
    """The season's `snapshot`, with TrueSkill resumed from `resume` (the state the previous
    refit returned) where it still holds, and the state to resume the next refit from: the
    same table as from scratch, without rating the old games again."""
    outcome = load_outcome(season.store, resume=resume, cancelled=season.cancelled())
    return _snapshot(season, outcome), outcome.ratings.state


def _snapshot(season: Season, outcome: LeagueOutcome) -> dict[str, Any]:
    states = season.states()
    # The values a bot sends with its decisions are its owner's alone (docs/security.md), and
    # the snapshot is what the club shows everyone: its rows keep none.
    rows = [SeasonRow(states.get(row.bot, ACTIVE), dataclasses.replace(
        row, note_values={}, note_names_dropped=0)).to_json()
            for row in (*outcome.rows, *outcome.unranked)]
    h2h: dict[str, dict[str, dict[str, int]]] = {}
    for (a, b), (games, ahead, behind) in outcome.h2h.items():
        if games:
            h2h.setdefault(a, {})[b] = {"games": games, "ahead": ahead, "behind": behind}
    facts = {key: value for key, value in outcome.facts.items() if key != "seed"}
    facts.update(games_recorded=len(outcome.games), games_scheduled=len(outcome.schedule),
                 games_cancelled=len(season.cancelled()), rounds=season.rounds())
    return {"rows": rows, "facts": facts, "head_to_head": h2h}

"""One loop plays a schedule: the league, the season, the gauntlet and the club's test games
all play through it.

`play_schedule` hands the pending games to an executor (this machine's pool or a dask cluster,
referee.league.executors) and writes each result through `record_result`, the one result
handler: it stores the game in the caller's store (a league's: its row, all of it or nothing;
the club's test games: the game's record file). What follows a stored game is each caller's
hook (`on_saved`): the league's progress line and live table, the season's count and notices,
the gauntlet's sequential test, the test game's file for its page. `stop` is asked before each
game starts; once it is true no further game starts, and the games in flight finish and are
stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from referee.game.match import MatchResult
from referee.league.executors import Executor, GameId, Stop
from referee.league.schedule import ScheduledGame
from referee.league.stored import StoredLeague

OnSaved = Callable[[ScheduledGame, MatchResult], None]


class ResultStore(Protocol):
    """Where games' results are stored: a league's LeagueStore, the club's test games."""

    def save(self, game: ScheduledGame, result: MatchResult) -> None:
        """Store the result of `game` (refused if it is stored already)."""
        ...


def record_result(store: ResultStore, game: ScheduledGame, result: MatchResult) -> None:
    """Write the result of `game` in `store` (a league's: its row, refused if stored already)."""
    store.save(game, result)


async def play_schedule(executor: Executor, store: ResultStore, stored: StoredLeague,
                        games: Sequence[ScheduledGame], *, game_id: GameId | None = None,
                        on_saved: OnSaved | None = None, stop: Stop | None = None) -> int:
    """Play `games` (in schedule order) on `executor` (started, holding every bot they need)
    under the rules and options of `stored`, recording each result in `store` as it arrives,
    then telling `on_saved`. Each game's id is `game_id(game)` (by default the league's opaque
    id from its secret). Returns the number of games stored."""
    secret = stored.secret
    count = 0

    def save(game: ScheduledGame, result: MatchResult) -> None:
        nonlocal count
        record_result(store, game, result)
        count += 1
        if on_saved is not None:
            on_saved(game, result)

    await executor.play(games, stored.rules, stored.options,
                        game_id or (lambda game: game.game_id(secret)), save, stop)
    return count

"""The league table as it stands while a league runs, for the live display under the bar.

Games are rated in schedule order, never in the order they finish (as `rate_games` does): a
finished game waits until every game before it in the schedule is recorded. So the standings
shown are always those of a prefix of the schedule, and at the end they equal the final
TrueSkill ratings (the live table is ordered by mu - 3 sigma).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.game.match import MatchResult
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import RatingParams


@dataclass(frozen=True)
class Standing:
    """One bot's line of the live table."""

    bot: str
    mu: float
    sigma: float
    games: int
    wins: int

    @property
    def conservative(self) -> float:
        """mu - 3 sigma, the league table's sort key."""
        return self.mu - 3 * self.sigma


def played_game(index: int, result: MatchResult) -> PlayedGame:
    """The facts ratings consume of one finished match at schedule index `index`."""
    return PlayedGame(
        index=index, bots=tuple(seat.bot for seat in result.seats),
        places=tuple(result.places), money=tuple(result.money),
        forfeited=tuple(seat.forfeited for seat in result.seats),
        strikes=tuple(dict(seat.strikes) for seat in result.seats),
        latencies_us=tuple(tuple(seat.latencies_us) for seat in result.seats),
    )


class LiveTable:
    """TrueSkill ratings over the longest recorded prefix of the schedule."""

    def __init__(self, bots: Sequence[str], params: RatingParams, schedule: Iterable[int],
                 recorded: Iterable[PlayedGame] = ()) -> None:
        self.env = params.environment()
        self.ratings = {bot: self.env.create_rating() for bot in bots}
        self.games = dict.fromkeys(bots, 0)
        self.wins = dict.fromkeys(bots, 0)
        self.order = sorted(schedule)
        self.rated = 0                        # games of `order` rated so far
        self.waiting: dict[int, PlayedGame] = {}
        for game in recorded:
            self.add(game)

    def add(self, game: PlayedGame) -> None:
        """A game is recorded: rate it, and any games it was holding back, in schedule order."""
        self.waiting[game.index] = game
        while self.rated < len(self.order) and self.order[self.rated] in self.waiting:
            self._rate(self.waiting.pop(self.order[self.rated]))
            self.rated += 1

    def _rate(self, game: PlayedGame) -> None:
        if any(bot not in self.ratings for bot in game.bots):
            return   # a bot left out of the league; the final table reports it
        groups = [(self.ratings[bot],) for bot in game.bots]
        updated = self.env.rate(groups, ranks=list(game.places))  # equal ranks: draws (R26)
        for seat, (bot, (rating,)) in enumerate(zip(game.bots, updated, strict=True)):
            self.ratings[bot] = rating
            self.games[bot] += 1
            self.wins[bot] += game.places[seat] == 1

    def top(self, count: int) -> list[Standing]:
        """The best `count` bots by mu - 3 sigma (ties by name)."""
        rows = [Standing(bot, r.mu, r.sigma, self.games[bot], self.wins[bot])
                for bot, r in self.ratings.items()]
        rows.sort(key=lambda row: (-row.conservative, row.bot))
        return rows[:count]

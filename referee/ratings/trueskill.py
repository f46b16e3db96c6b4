"""TrueSkill ratings of a league, from its played games in schedule order.

Each game is a free-for-all of one-bot teams ranked by the game's places (R26): shared places
are draws, and forfeited seats already share the last place. A game where every seat
forfeited rates nobody. Updates are applied in schedule
order (`PlayedGame.index`), never in the order games finished, so the same games always give
bit-identical ratings however concurrently they were played.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import trueskill

from referee.ratings.results import PlayedGame


@dataclass(frozen=True)
class RatingParams:
    """The TrueSkill environment: the package defaults, except tau.

    tau is the skill drift TrueSkill adds before every game (the package's 25/300 assumes
    players who change between games). A bot is the same program from one game to the next,
    so a league's default is 0: sigma then keeps shrinking as games come in, instead of
    stopping at a floor that no number of games gets below (bench/fairness.py measures
    both). A bot that learns between games is what tau is for: set it in `[ratings]`.
    """

    mu: float = 25.0
    sigma: float = 25 / 3
    beta: float = 25 / 6
    tau: float = 0.0
    draw_probability: float = 0.10

    def environment(self) -> trueskill.TrueSkill:
        """A private TrueSkill environment with these parameters (never the global one)."""
        return trueskill.TrueSkill(
            mu=self.mu, sigma=self.sigma, beta=self.beta, tau=self.tau,
            draw_probability=self.draw_probability,
        )


@dataclass
class Ratings:
    """Ratings after a set of games: current mu and sigma per bot, and every step."""

    mu: dict[str, float]
    sigma: dict[str, float]
    games: dict[str, int] = field(default_factory=dict)      # games rated per bot
    # (game index, bot, mu, sigma) after each game, for each bot of the game, in schedule order
    history: list[tuple[int, str, float, float]] = field(default_factory=list)

    def conservative(self, bot: str) -> float:
        """mu - 3 sigma: a rating the bot is very likely to be above."""
        return self.mu[bot] - 3 * self.sigma[bot]

    def bots(self) -> list[str]:
        """The bots, best conservative rating first (ties by name)."""
        return sorted(self.mu, key=lambda bot: (-self.conservative(bot), bot))


def rate_games(
    games: Iterable[PlayedGame],
    bots: Sequence[str],
    params: RatingParams | None = None,
) -> Ratings:
    """Rate `bots` from `games`, applied in schedule order (sorted by index).

    Every bot starts at the environment's prior; bots without games keep it. Raises ValueError
    for two games with one index, a bot outside `bots`, a bot twice at one table, or a game
    whose places do not match its seats.
    """
    params = params or RatingParams()
    env = params.environment()
    current = {bot: env.create_rating() for bot in bots}
    played = dict.fromkeys(current, 0)
    history: list[tuple[int, str, float, float]] = []
    ordered = sorted(games, key=lambda game: game.index)
    for before, game in zip(ordered, ordered[1:], strict=False):
        if before.index == game.index:
            raise ValueError(f"two games with index {game.index}")
    for game in ordered:
        _check(game, current)
        if game.void:  # every seat forfeited: no result to learn from
            continue
        groups = [(current[bot],) for bot in game.bots]
        # Lower rank is better; equal ranks are draws (R26 shared places).
        updated = env.rate(groups, ranks=list(game.places))
        for bot, (rating,) in zip(game.bots, updated, strict=True):
            current[bot] = rating
            played[bot] += 1
            history.append((game.index, bot, rating.mu, rating.sigma))
    return Ratings(
        mu={bot: rating.mu for bot, rating in current.items()},
        sigma={bot: rating.sigma for bot, rating in current.items()},
        games=played,
        history=history,
    )


def _check(game: PlayedGame, known: dict[str, object]) -> None:
    if len(game.bots) < 2 or len(game.places) != len(game.bots):
        raise ValueError(f"game {game.index}: needs 2+ seats and one place per seat")
    if len(set(game.bots)) != len(game.bots):
        raise ValueError(f"game {game.index}: a bot sits twice at the table")
    unknown = [bot for bot in game.bots if bot not in known]
    if unknown:
        raise ValueError(f"game {game.index}: unknown bots {unknown}")

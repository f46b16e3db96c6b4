"""TrueSkill ratings of a league, from its played games in schedule order.

Each game is a free-for-all of one-bot teams ranked by the game's places (R26): shared places
are draws, and forfeited seats already share the last place. A game where every seat
forfeited rates nobody. Updates are applied in schedule
order (`PlayedGame.index`), never in the order games finished, so the same games always give
bit-identical ratings however concurrently they were played.

Because the updates are sequential, the ratings after game N are all a later rating needs of
the games up to N: `rate_games` can resume from a `RatingState` (the exact TrueSkill state after
the games up to a schedule index, with a digest of those games) and rate only the games after
it. The result is bit-identical to rating every game from the first; a state whose games are
not exactly the ones now recorded up to its index (or whose parameters differ) is not used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import trueskill
from trueskill.mathematics import Gaussian

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


@dataclass(frozen=True)
class RatingState:
    """TrueSkill's exact state after every recorded game with a schedule index up to `through`:
    per bot the precision `pi` and precision-adjusted mean `tau` TrueSkill keeps (mu and sigma
    are derived from them, so storing those would not give the same floats back), its games
    rated, and a digest of the parameters and games it covers."""

    through: int                    # the last schedule index covered (-1: none)
    digest: str                     # _Digest of the parameters and the games covered
    pi: dict[str, float]
    tau: dict[str, float]
    games: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready data (floats round-trip exactly through JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> RatingState:
        """The state in `data` (ValueError if it is not one)."""
        try:
            state = cls(int(data["through"]), str(data["digest"]),
                        {str(k): float(v) for k, v in data["pi"].items()},
                        {str(k): float(v) for k, v in data["tau"].items()},
                        {str(k): int(v) for k, v in data["games"].items()})
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(f"not a TrueSkill state: {exc}") from None
        if set(state.pi) != set(state.tau) or set(state.pi) != set(state.games):
            raise ValueError("not a TrueSkill state: its bots differ between fields")
        return state


class _Digest:
    """A digest of the parameters and of what TrueSkill reads of the first games of
    `ordered` (in that order), for growing counts of them: a refit
    checks the state it resumes from and then digests a longer run of the same games for the
    next one, hashing each game once (a shorter run than the last one asked starts again)."""

    def __init__(self, params: RatingParams, ordered: Sequence[PlayedGame]) -> None:
        self.ordered = ordered
        self.start = hashlib.sha256(repr(sorted(asdict(params).items())).encode())
        self.hash, self.hashed = self.start.copy(), 0

    def through(self, count: int | None = None) -> str:
        """The digest of the first `count` games (all by default)."""
        count = len(self.ordered) if count is None else count
        if count < self.hashed:
            self.hash, self.hashed = self.start.copy(), 0
        for game in self.ordered[self.hashed:count]:
            self.hash.update(repr((game.index, game.bots, game.places, game.forfeited)).encode())
        self.hashed = count
        return self.hash.copy().hexdigest()


@dataclass
class Ratings:
    """Ratings after a set of games: current mu and sigma per bot, and every step."""

    mu: dict[str, float]
    sigma: dict[str, float]
    games: dict[str, int] = field(default_factory=dict)      # games rated per bot
    # (game index, bot, mu, sigma) after each game, for each bot of the game, in schedule order
    # (after a resumed state: of the games rated after it only)
    history: list[tuple[int, str, float, float]] = field(default_factory=list)
    # the state after the games up to the `checkpoint` index asked of rate_games
    state: RatingState | None = None

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
    resume: RatingState | None = None,
    checkpoint: int | None = None,
) -> Ratings:
    """Rate `bots` from `games`, applied in schedule order (sorted by index).

    Every bot starts at the environment's prior; bots without games keep it. With `resume`, the
    games up to its index are not rated again when they are exactly the games it covers (else
    every game is rated from the first): the ratings are the same either way. With
    `checkpoint`, `Ratings.state` is the state after the games up to that index, for a later
    call to resume from. Raises ValueError for two games with one index, a bot outside `bots`,
    a bot twice at one table, or a game whose places do not match its seats.
    """
    params = params or RatingParams()
    env = params.environment()
    ordered = sorted(games, key=lambda game: game.index)
    for before, game in zip(ordered, ordered[1:], strict=False):
        if before.index == game.index:
            raise ValueError(f"two games with index {game.index}")
    current = {bot: env.create_rating() for bot in bots}
    played = dict.fromkeys(current, 0)
    if resume is not None and checkpoint is not None and resume.through > checkpoint:
        resume = None     # the state asked for lies before it
    digest = _Digest(params, ordered)
    done = _resume(resume, params, ordered, current, played, digest)
    history: list[tuple[int, str, float, float]] = []
    state = None
    for position in range(done, len(ordered) + 1):
        if checkpoint is not None and state is None and (
                position == len(ordered) or ordered[position].index > checkpoint):
            state = _state(digest.through(position), checkpoint, current, played)
        if position == len(ordered):
            break
        game = ordered[position]
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
        state=state,
    )


def _resume(resume: RatingState | None, params: RatingParams, ordered: list[PlayedGame],
            current: dict[str, trueskill.Rating], played: dict[str, int],
            digest: _Digest) -> int:
    """Put `resume`'s ratings into `current` and `played` and return how many of `ordered`
    it covers, when it covers exactly the first games of `ordered` with these parameters;
    else change nothing and return 0."""
    if resume is None or not set(resume.pi) <= set(current):
        return 0
    covered = 0
    while covered < len(ordered) and ordered[covered].index <= resume.through:
        covered += 1
    if digest.through(covered) != resume.digest:
        return 0
    for bot in resume.pi:
        rating = trueskill.Rating(params.mu, params.sigma)
        Gaussian.__init__(rating, pi=resume.pi[bot], tau=resume.tau[bot])
        current[bot] = rating
        played[bot] = resume.games[bot]
    return covered


def _state(digest: str, through: int, current: dict[str, trueskill.Rating],
           played: dict[str, int]) -> RatingState:
    return RatingState(through, digest,
                       {bot: rating.pi for bot, rating in current.items()},
                       {bot: rating.tau for bot, rating in current.items()}, dict(played))


def _check(game: PlayedGame, known: dict[str, object]) -> None:
    if len(game.bots) < 2 or len(game.places) != len(game.bots):
        raise ValueError(f"game {game.index}: needs 2+ seats and one place per seat")
    if len(set(game.bots)) != len(game.bots):
        raise ValueError(f"game {game.index}: a bot sits twice at the table")
    unknown = [bot for bot in game.bots if bot not in known]
    if unknown:
        raise ValueError(f"game {game.index}: unknown bots {unknown}")

"""In-process stand-ins for bots: leagues and gauntlets of engine policies, no gRPC.

Used to check the statistics (bench/fairness.py, tests/test_gauntlet.py) on thousands of games in
seconds. Bench support, not part of the installed package.

A *policy* here is a function from a seed to a chooser (a function from a Game to an action):
each seat of each game gets a chooser seeded from the game seed, the seat and the policy's own
salt, so a game is a pure function of its schedule entry, as in a league of real bots.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from referee.engine import Action, Game, RuleSet
from referee.engine.policies import greedy_policy
from referee.league.gauntlet import game_pair, gauntlet_schedule, schedule_deltas
from referee.league.schedule import ScheduledGame
from referee.ratings.plackett import Design, to_elo, typical
from referee.ratings.results import PlayedGame
from referee.ratings.sprt import Pair, SequentialTest, SprtParams, SprtState
from referee.util.seeds import derive_seed

Chooser = Callable[[Game], Action]
Policy = Callable[[int], Chooser]


def noisy_greedy(randomness: float, salt: str = "") -> Policy:
    """Greedy play, except that each decision is, with probability `randomness`, a uniformly
    random legal action: 0 is greedy, 1 is random, and strength falls as randomness rises.
    Two policies with different `salt` are equally strong but make different random choices."""

    def make(seed: int) -> Chooser:
        rng = random.Random(derive_seed(seed, "noisy", salt))

        def choose(game: Game) -> Action:
            if rng.random() < randomness:
                legal = game.legal_actions()
                return legal[rng.randrange(len(legal))]
            return greedy_policy(game.view(game.current_seat))

        return choose

    return make


def hashed_greedy(randomness: float, salt: str = "") -> Policy:
    """Like `noisy_greedy`, but a deterministic bot: whether a decision is random, and which
    action it takes, is a hash of what the bot sees (round, money, roll, cards left) and `salt`,
    not a draw from a stream. All the luck is then in the dice and the deck, which duplicate
    seating deals to every bot alike."""

    def make(seed: int) -> Chooser:
        def choose(game: Game) -> Action:
            seen = (salt, game.round, tuple(game.money), game.roll_faces(), game.deck_size())
            draw = derive_seed(0, repr(seen))
            legal = game.legal_actions()
            if (draw >> 11) / 2**53 < randomness:
                return legal[draw % len(legal)]
            return greedy_policy(game.view(game.current_seat))

        return choose

    return make


def play_scheduled(rules: RuleSet, game: ScheduledGame,
                   policies: Mapping[str, Policy]) -> PlayedGame:
    """Play one scheduled game in process with each seat's policy."""
    board = Game(rules, len(game.bots), game.seed, record=False)
    choosers = [policies[bot](derive_seed(game.seed, "seat", seat))
                for seat, bot in enumerate(game.bots)]
    while not board.is_over:
        board.apply(choosers[board.current_seat](board))
    n = len(game.bots)
    return PlayedGame(game.index, game.bots, tuple(board.ranking()), tuple(board.money),
                      (False,) * n, ({},) * n, ((),) * n)


def simulate_gauntlet(rules: RuleSet, policies: Mapping[str, Policy], candidate: str,
                      baseline: str, field: Sequence[str], players: tuple[int, int],
                      seed: int, params: SprtParams) -> SprtState:
    """A gauntlet played in process: its final test state (verdict, estimate, pairs)."""
    schedule = gauntlet_schedule(candidate, baseline, field, params.max_pairs, players, seed)
    test = SequentialTest(params, schedule_deltas(schedule, params))
    for first, second in zip(schedule[::2], schedule[1::2], strict=True):
        current = test.add(game_pair(play_scheduled(rules, first, policies),
                                     play_scheduled(rules, second, policies),
                                     candidate, baseline))
        if current.verdict is not None:
            return current
    return test.current


def pair_pool(rules: RuleSet, policies: Mapping[str, Policy], candidate: str, baseline: str,
              field: Sequence[str], players: tuple[int, int], pairs: int,
              seed: int) -> list[Pair]:
    """`pairs` gauntlet pairs played in process: a pool that a bench resamples into many
    gauntlets."""
    schedule = gauntlet_schedule(candidate, baseline, field, pairs, players, seed)
    return [game_pair(play_scheduled(rules, first, policies),
                      play_scheduled(rules, second, policies), candidate, baseline)
            for first, second in zip(schedule[::2], schedule[1::2], strict=True)]


def synthetic_league(rng: np.random.Generator, strengths: Sequence[float], per_bot: int,
                     sizes: Sequence[int], scale: Mapping[int, float]) -> list[PlayedGame]:
    """A league drawn from the Plackett-Luce model with per-size scales, whose answer is known:
    bot i (named 'b<i>') has theta `strengths[i]`; each game's size is drawn from `sizes`, its
    seats go to the bots with the fewest games so far (ties at random), and at a table of k
    the bots finish in the order of `scale[k]` theta plus Gumbel noise. About `per_bot` games
    per bot."""
    theta = np.asarray(strengths, dtype=np.float64)
    n = len(theta)
    usable = [k for k in sizes if k <= n]
    played = np.zeros(n, dtype=np.int64)
    games: list[PlayedGame] = []
    while played.sum() < n * per_bot:
        k = int(rng.choice(usable))
        seated = np.lexsort((rng.random(n), played))[:k]
        utility = scale[k] * theta[seated] + rng.gumbel(size=k)
        places = np.empty(k, dtype=np.int64)
        places[np.argsort(-utility)] = np.arange(1, k + 1)
        games.append(PlayedGame(len(games), tuple(f"b{i}" for i in seated),
                                tuple(int(p) for p in places), (0,) * k, (False,) * k,
                                ({},) * k, ((),) * k))
        played[seated] += 1
    return games


def true_typical(games: Sequence[PlayedGame], strengths: Sequence[float],
                 scale: Mapping[int, float]) -> dict[str, float]:
    """The strengths a fit of `games` should report (Elo, centred, at the league's typical
    table: the true scales' geometric mean over the games is 1; plackett.py)."""
    theta = np.asarray(strengths, dtype=np.float64)
    shift = float(np.mean([np.log(scale[g.players]) for g in games]))
    elo = (theta - theta.mean()) * np.exp(shift) * 400 / np.log(10)
    return {f"b{i}": float(v) for i, v in enumerate(elo)}


@dataclasses.dataclass(frozen=True)
class GlobalFit:
    """Strengths of the bots from one fit, on the Elo scale, averaging 0 over the bots that
    played; None for a bot without games."""

    strength: dict[str, float | None]
    # table size -> scale (typical 1)
    scale: dict[int, float] = dataclasses.field(default_factory=dict)

    def ahead(self, a: str, b: str, players: int | None = None) -> float | None:
        """The model's probability that `a` finishes ahead of `b` at a table they share (of
        `players`, default the league's typical table)."""
        sa, sb = self.strength[a], self.strength[b]
        if sa is None or sb is None:
            return None
        scale = self.scale.get(players, 1.0) if players is not None else 1.0
        return 1 / (1 + 10 ** (scale * (sb - sa) / 400))


def fit_games(games: Iterable[PlayedGame], bots: Sequence[str]) -> GlobalFit:
    """The global Plackett-Luce fit of `games` (any order) for `bots`, at the league's typical
    table."""
    design = Design(games, bots)
    theta, log_scale = typical(design, *design.fit_scaled())
    elo = to_elo(theta, design.played)
    return GlobalFit({bot: float(elo[i]) if design.played[i] else None
                      for i, bot in enumerate(design.bots)},
                     {k: float(c) for k, c in zip(design.sizes, np.exp(log_scale), strict=True)})

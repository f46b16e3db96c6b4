"""In-process games between built-in policies: quick statistics about a rule set."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from referee.engine import Action, Game, RuleSet
from referee.util.seeds import derive_seed

POLICIES = ("random", "greedy")


@dataclass
class SeatStats:
    """What one seat achieved over a simulation."""

    seat: int
    wins: float = 0.0   # a shared first place counts as 1/k of a win for each of the k sharers
    money: int = 0
    places: int = 0

    def to_json(self, games: int) -> dict[str, Any]:
        """Per-seat figures as plain data."""
        return {
            "seat": self.seat,
            "win_rate": round(self.wins / games, 6),
            "mean_money": round(self.money / games, 2),
            "mean_place": round(self.places / games, 4),
        }


@dataclass
class Simulation:
    """The result of `simulate`."""

    rules: RuleSet
    players: int
    games: int
    seed: int
    policy: str
    seats: list[SeatStats] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The whole result as plain data."""
        return {
            "rules": self.rules.preset,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "policy": self.policy,
            "seats": [s.to_json(self.games) for s in self.seats],
        }


def _chooser(policy: str, seed: int) -> Callable[[Game], Action]:
    if policy == "random":
        rng = random.Random(seed)
        return lambda game: rng.choice(game.legal_actions())
    if policy == "greedy":
        from referee.engine.policies import greedy_policy

        return lambda game: greedy_policy(game.view(game.current_seat))
    raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")


def play_games(
    rules: RuleSet, players: int, games: int, seed: int, policy: str = "random"
) -> Iterator[Game]:
    """Play `games` games with every seat using `policy`; yield each finished game."""
    rules.check_players(players)
    choose = _chooser(policy, derive_seed(seed, "policy"))
    for index in range(games):
        game = Game(rules, players, derive_seed(seed, "game", index))
        while not game.is_over:
            game.apply(choose(game))
        yield game


def simulate(
    rules: RuleSet,
    players: int,
    games: int,
    seed: int,
    policy: str = "random",
    replay: IO[str] | None = None,
) -> Simulation:
    """Play `games` in-process games and gather per-seat statistics.

    With `replay`, each game's record is written to it as one JSON line.
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    result = Simulation(rules, players, games, seed, policy,
                        [SeatStats(s) for s in range(players)])
    for game in play_games(rules, players, games, seed, policy):
        places = game.ranking()
        winners = places.count(1)
        for stats, place, money in zip(result.seats, places, game.money, strict=True):
            stats.places += place
            stats.money += money
            if place == 1:
                stats.wins += 1 / winners
        if replay is not None:
            replay.write(game.record().to_json_text() + "\n")
    return result

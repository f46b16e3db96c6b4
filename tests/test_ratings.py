"""TrueSkill ratings: schedule order, shared places as draws (R26), forfeits, parameters."""

from __future__ import annotations

import json
import random

import pytest
import trueskill

from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import RatingParams, Ratings, rate_games

BOTS = ["ann", "bob", "cat", "dan"]


def game(index: int, bots: tuple[str, ...], places: tuple[int, ...],
         forfeited: tuple[bool, ...] | None = None) -> PlayedGame:
    n = len(bots)
    return PlayedGame(
        index=index, bots=bots, places=places, money=(0,) * n,
        forfeited=forfeited or (False,) * n, strikes=({},) * n, latencies_us=((),) * n,
    )


def rotated(index: int, bots: list[str]) -> tuple[str, ...]:
    shift = index % len(bots)
    return tuple(bots[shift:] + bots[:shift])


def random_games(count: int, seed: int) -> list[PlayedGame]:
    """Random tables of 2-4 of BOTS with random places, shared ones included."""
    rng = random.Random(seed)
    games = []
    for index in range(count):
        bots = tuple(rng.sample(BOTS, rng.randint(2, 4)))
        places = tuple(rng.randint(1, len(bots)) for _ in bots)
        games.append(game(index, bots, places))
    return games


def by_place(index: int, order: dict[str, int]) -> PlayedGame:
    """A game of every bot in `order`, seats rotated by index, with the given places."""
    bots = rotated(index, sorted(order))
    return game(index, bots, tuple(order[bot] for bot in bots))


def test_order_of_the_games_does_not_matter():
    games = random_games(80, seed=1)
    expected = rate_games(games, BOTS)
    for seed in range(3):
        shuffled = games[:]
        random.Random(seed).shuffle(shuffled)
        got = rate_games(iter(shuffled), BOTS)
        assert got.mu == expected.mu            # bit-identical floats
        assert got.sigma == expected.sigma
        assert got.history == expected.history


def test_history_is_in_schedule_order_and_ends_at_the_current_rating():
    games = random_games(30, seed=2)
    ratings = rate_games(reversed(games), BOTS)
    assert len(ratings.history) == sum(g.players for g in games)
    assert [step[0] for step in ratings.history] == sorted(step[0] for step in ratings.history)
    for bot in BOTS:
        _, _, mu, sigma = [step for step in ratings.history if step[1] == bot][-1]
        assert (mu, sigma) == (ratings.mu[bot], ratings.sigma[bot])
    assert sum(ratings.games.values()) == len(ratings.history)


def test_shared_first_place_is_a_draw():
    # R26: ann and bob always share first place.
    games = [by_place(i, {"ann": 1, "bob": 1, "cat": 3, "dan": 4}) for i in range(40)]
    ratings = rate_games(games, BOTS)
    # Equal up to TrueSkill's message passing (at most 10 sweeps per game, in seat order):
    # measured 7e-4 apart in mu and 3e-4 in sigma after 40 games.
    assert ratings.mu["ann"] == pytest.approx(ratings.mu["bob"], abs=0.01)
    assert ratings.sigma["ann"] == pytest.approx(ratings.sigma["bob"], abs=0.01)
    assert ratings.mu["bob"] > ratings.mu["cat"] > ratings.mu["dan"]


def test_one_draw_moves_equal_ratings_together():
    ratings = rate_games([game(0, ("ann", "bob"), (1, 1))], ["ann", "bob"])
    assert ratings.mu["ann"] == pytest.approx(25.0) == pytest.approx(ratings.mu["bob"])
    assert ratings.sigma["ann"] < 25 / 3


def test_a_dominant_bot_rises_above_the_others():
    rng = random.Random(3)
    games = []
    for index in range(60):
        others = ["bob", "cat", "dan"]
        rng.shuffle(others)
        order = {"ann": 1, others[0]: 2, others[1]: 3, others[2]: 4}
        games.append(by_place(index, order))
    ratings = rate_games(games, BOTS)
    assert ratings.bots()[0] == "ann"
    assert ratings.conservative("ann") > max(ratings.mu[b] for b in BOTS if b != "ann")
    assert ratings.conservative("ann") == ratings.mu["ann"] - 3 * ratings.sigma["ann"]


def test_forfeits_count_as_last():
    # dan forfeits every game: the table gives him the (shared) last place.
    games = []
    for index in range(30):
        bots = rotated(index, BOTS)
        places = tuple(4 if bot == "dan" else 1 + (index + i) % 3 for i, bot in enumerate(bots))
        forfeited = tuple(bot == "dan" for bot in bots)
        games.append(game(index, bots, places, forfeited))
    ratings = rate_games(games, BOTS)
    assert ratings.bots()[-1] == "dan"
    assert ratings.mu["dan"] < min(ratings.mu[b] for b in BOTS if b != "dan") - 5


def test_parameters_and_bots_without_games():
    params = RatingParams(mu=1000.0, sigma=300.0, beta=150.0, tau=3.0, draw_probability=0.2)
    ratings = rate_games([game(0, ("ann", "bob"), (1, 2))], BOTS, params)
    assert ratings.mu["cat"] == 1000.0 and ratings.sigma["cat"] == 300.0
    assert ratings.games == {"ann": 1, "bob": 1, "cat": 0, "dan": 0}
    assert ratings.mu["ann"] > 1000.0 > ratings.mu["bob"]
    assert trueskill.global_env().mu == 25.0       # the global environment is untouched
    empty = rate_games([], BOTS)
    assert isinstance(empty, Ratings) and empty.history == []
    assert empty.mu == dict.fromkeys(BOTS, 25.0)


def test_bad_games_are_refused():
    with pytest.raises(ValueError, match="two games"):
        rate_games([game(3, ("ann", "bob"), (1, 2)), game(3, ("cat", "dan"), (1, 2))], BOTS)
    with pytest.raises(ValueError, match="unknown"):
        rate_games([game(0, ("ann", "eve"), (1, 2))], BOTS)
    with pytest.raises(ValueError, match="twice"):
        rate_games([game(0, ("ann", "ann"), (1, 2))], BOTS)
    with pytest.raises(ValueError, match="place"):
        rate_games([game(0, ("ann", "bob"), (1,))], BOTS)


@pytest.mark.slow
def test_trueskill_resumed_from_a_state_is_bit_identical_and_rates_only_new_games() -> None:
    from referee.ratings.trueskill import RatingState

    games = random_games(120, seed=11)
    games[7] = game(7, ("ann", "bob", "cat"), (1, 1, 3))                    # a shared place
    games[9] = game(9, ("ann", "bob"), (2, 2), forfeited=(True, True))      # void: rates no one
    whole = rate_games(games, BOTS)
    # The state after the games up to index 79, through JSON as a refit stores it.
    first = rate_games(games[:80], BOTS, checkpoint=79)
    assert first.state is not None and first.state.through == 79
    state = RatingState.from_dict(json.loads(json.dumps(first.state.to_dict())))
    resumed = rate_games(reversed(games), BOTS, resume=state, checkpoint=100)
    assert (resumed.mu, resumed.sigma, resumed.games) == (whole.mu, whole.sigma, whole.games)
    assert {index for index, *_ in resumed.history} == set(range(80, 120))   # only new games
    assert resumed.state == rate_games(games, BOTS, checkpoint=100).state
    # A state whose games are not the ones recorded up to its index, or whose parameters
    # differ, is not used: every game is rated again, with the same result as from scratch.
    changed = list(games)
    changed[30] = game(30, changed[30].bots, tuple(reversed(changed[30].places)))
    again = rate_games(changed, BOTS, resume=state)
    assert again.history[0][0] == 0
    assert (again.mu, again.sigma) == (rate_games(changed, BOTS).mu,
                                      rate_games(changed, BOTS).sigma)
    params = RatingParams(tau=0.5)
    other = rate_games(games, BOTS, params, resume=state)
    assert other.history[0][0] == 0 and other.mu == rate_games(games, BOTS, params).mu
    with pytest.raises(ValueError, match="not a TrueSkill state"):
        RatingState.from_dict({"through": 3, "pi": []})

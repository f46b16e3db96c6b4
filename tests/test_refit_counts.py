"""The refit's counting in bulk (numpy tables, one JSON document per stored game, one digest
pass) against the plain per-seat and per-column way it replaced, on leagues with forfeits,
void games, shared places, mixed table sizes, strikes, latencies and notes."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import sqlite3
from pathlib import Path

import pytest

from referee.bots.errors import STRIKE_TYPES
from referee.errors import StoreError
from referee.league.folder import LeagueFolder
from referee.league.schedule import ScheduledGame, balance
from referee.league.store import LeagueStore
from referee.league.tables import head_to_head, league_table, percentile
from referee.ratings.intervals import resampling_units
from referee.ratings.plackett import canonical_key
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import Ratings, RatingState, rate_games

BOTS = [f"b{n}" for n in range(7)]


def random_league(count: int, seed: int) -> list[PlayedGame]:
    """Games of 2-5 of BOTS: shared places, forfeits (now and then every seat: void), strikes
    (an unknown kind with 0 too), latencies and notes on some seats."""
    rng = random.Random(seed)
    games = []
    for index in range(count):
        bots = tuple(rng.sample(BOTS, rng.randint(2, 5)))
        size = len(bots)
        places = tuple(rng.randint(1, size) for _ in bots)
        every = rng.random() < 0.05
        forfeited = tuple(every or rng.random() < 0.1 for _ in bots)
        strikes = tuple(
            {**dict.fromkeys(STRIKE_TYPES, 0), "timeout": rng.randint(0, 2) * (rng.random() < .2)}
            if rng.random() < 0.8 else {"odd": 0} for _ in bots)
        latencies = tuple(tuple(rng.randint(100, 9000) for _ in range(rng.randint(0, 3)))
                          for _ in bots)
        notes = (tuple({f"n{rng.randint(0, 9)}": (rng.random(), rng.randint(1, 3))}
                       for _ in bots) if rng.random() < 0.3 else ())
        games.append(PlayedGame(index, bots, places, tuple(rng.randint(0, 500) for _ in bots),
                                forfeited, strikes, latencies, notes))
    return games


def per_seat(games: list[PlayedGame], bot: str) -> dict:
    """What league_table shows of `bot`, counted seat by seat (the way it was counted)."""
    mine = [(game, seat) for game in games for seat, name in enumerate(game.bots) if name == bot]
    scored = [(game, seat) for game, seat in mine if not game.void]
    seats = max(game.players for game in games)
    strikes: dict[str, int] = dict.fromkeys(STRIKE_TYPES, 0)
    for game, seat in mine:
        for kind, count in game.strikes[seat].items():
            strikes[kind] = strikes.get(kind, 0) + count
    latencies = [value for game, seat in mine for value in game.latencies_us[seat]]

    def win_pct(at: list[tuple[PlayedGame, int]]) -> float | None:
        wins = sum(game.places[seat] == 1 for game, seat in at)
        return 100 * wins / len(at) if at else None

    sizes = sorted({game.players for game, _ in scored})
    return {
        "games": len(scored), "wins": sum(game.places[seat] == 1 for game, seat in scored),
        "forfeits": sum(game.forfeited[seat] for game, seat in mine),
        "all_forfeit": len(mine) - len(scored),
        "avg_place": (sum(game.places[seat] for game, seat in scored) / len(scored)
                      if scored else None),
        "avg_money": (sum(game.money[seat] for game, seat in scored) / len(scored)
                      if scored else None),
        "seat_win_pct": [win_pct([(g, s) for g, s in scored if s == at])
                         for at in range(seats)],
        "seat_win_pct_by_size": {size: [win_pct([(g, s) for g, s in scored
                                                 if s == at and g.players == size])
                                        for at in range(size)] for size in sizes},
        "strikes": strikes,
        "think_p50_ms": None if not latencies else percentile(latencies, 50) / 1000,
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_table_counted_with_numpy_is_the_table_counted_seat_by_seat(seed: int) -> None:
    games = random_league(300, seed)
    ratings = Ratings({bot: 25.0 + n for n, bot in enumerate(BOTS + ["idle"])},
                      dict.fromkeys(BOTS + ["idle"], 1.0))
    rows = {row.bot: row for row in league_table(games, BOTS + ["idle"], ratings)}
    for bot in BOTS:
        row = rows[bot]
        assert {key: getattr(row, key) for key in per_seat(games, bot)} == per_seat(games, bot)
    assert rows["idle"].games == 0 and rows["idle"].avg_place is None
    first = next(game.index for game in games if "b0" in game.bots)
    with pytest.raises(ValueError, match=f"game {first}: unknown bot 'b0'"):
        league_table(games, BOTS[1:], ratings)


def test_head_to_head_and_balance_counted_with_numpy_are_those_counted_pair_by_pair() -> None:
    games = random_league(400, seed=4)
    expected = {(a, b): [0, 0, 0] for a in BOTS for b in BOTS if a != b}
    for game in games:
        if game.void:
            continue
        for (i, a), (j, b) in itertools.permutations(enumerate(game.bots), 2):
            cell = expected[a, b]
            cell[0] += 1
            cell[1] += game.places[i] < game.places[j]
            cell[2] += game.places[j] < game.places[i]
    assert head_to_head(games, BOTS) == {pair: tuple(c) for pair, c in expected.items()}
    schedule = [ScheduledGame(game.index, game.bots, game.index, game.index) for game in games]
    names = BOTS + ["idle"]
    seats = {(b, k, s): 0 for b in names for k in range(2, 6) for s in range(k)}
    pairs = {pair: 0 for pair in itertools.combinations(sorted(names), 2)}
    for game in schedule:
        for s, bot in enumerate(game.bots):
            seats[bot, len(game.bots), s] += 1
        for pair in itertools.combinations(sorted(game.bots), 2):
            pairs[pair] += 1
    counted = balance(schedule, names)
    per_bot = [sum(bot in game.bots for game in schedule) for bot in names]
    assert counted.games == (min(per_bot), max(per_bot)) == (0, max(per_bot))
    assert counted.pairs == (min(pairs.values()), max(pairs.values()))
    assert counted.seats == (min(seats.values()), max(seats.values()))


COLUMNS = ("bots", "places", "money", "forfeited", "strikes", "latencies_us", "note_values")


def stored(tmp_path: Path, games: list[PlayedGame]) -> LeagueStore:
    """A store holding `games` (their columns as LeagueStore.save writes them)."""
    store = LeagueFolder(tmp_path).open_store()
    store.db.executemany(
        "INSERT INTO games VALUES (?, 'g', ?, '1', ?, ?, ?, ?, ?, '[]', 0.0, 0.0, x'', ?)",
        [(g.index, json.dumps(list(g.bots)), json.dumps(g.places), json.dumps(g.money),
          json.dumps(g.forfeited), json.dumps(g.strikes),
          json.dumps(g.latencies_us),
          json.dumps([{name: list(v) for name, v in seat.items()} for seat in g.note_values]))
         for g in games])
    return store


def test_played_games_read_in_bulk_are_those_read_column_by_column(tmp_path: Path) -> None:
    games = random_league(300, seed=5)
    store = stored(tmp_path, games)
    rows = store.db.execute(f"SELECT idx, {', '.join(COLUMNS)} FROM games ORDER BY idx")
    by_column = [PlayedGame(
        index=idx, bots=tuple(json.loads(bots)), places=tuple(json.loads(places)),
        money=tuple(json.loads(money)), forfeited=tuple(json.loads(forfeited)),
        strikes=tuple(json.loads(strikes)),
        latencies_us=tuple(tuple(x) for x in json.loads(latencies)),
        note_values=tuple({name: (t, c) for name, (t, c) in seat.items()}
                          for seat in json.loads(values)))
        for idx, bots, places, money, forfeited, strikes, latencies, values in rows]
    played = store.played()
    assert played == by_column == games
    # games with the same strikes text still get dicts of their own
    first, second = (g for g in played if g.strikes[0] == {"odd": 0}).__next__(), played[-1]
    first.strikes[0]["odd"] = 5
    assert all(g.strikes[0].get("odd") in (None, 0) for g in played if g is not first)
    assert second.strikes[0] is not first.strikes[0]
    store.close()


@pytest.mark.parametrize("column, text", [("places", "[1, 2"), ("money", "1, 2"),
                                          ("strikes", "{not json")])
def test_a_recorded_game_that_is_not_readable_is_one_line_naming_store_and_game(
        tmp_path: Path, column: str, text: str) -> None:
    store = stored(tmp_path, random_league(10, seed=6))
    store.close()
    with sqlite3.connect(LeagueFolder(tmp_path).store_path) as db:
        db.execute(f"UPDATE games SET {column} = ? WHERE idx = 7", (text,))
    store = LeagueFolder(tmp_path).open_store()
    with pytest.raises(StoreError, match=r"league\.db: a recorded game is not readable "
                                         r"\(game 7: ") as caught:
        store.played()
    assert "\n" not in str(caught.value)
    store.close()


def test_a_state_of_other_games_gives_the_state_and_table_of_a_rating_from_scratch() -> None:
    """The refit's state after the settled games, when the state it resumed from is of other
    games (the store replaced by another) or of fewer (games added): as from scratch."""
    games = random_league(120, seed=7)
    other = random_league(120, seed=8)
    state = rate_games(other, BOTS, checkpoint=90).state
    assert state is not None
    # replaced: the state's games are not these (the checkpoint before, at or after its index)
    for checkpoint in (60, 90, 119):
        resumed = rate_games(games, BOTS, resume=state, checkpoint=checkpoint)
        scratch = rate_games(games, BOTS, checkpoint=checkpoint)
        assert resumed == scratch     # every game rated again, the same state for the next
    # added: the state of the first 60 games, resumed after 60 more
    early = rate_games(games[:60], BOTS, checkpoint=59).state
    assert early is not None
    again = RatingState.from_dict(json.loads(json.dumps(early.to_dict())))
    resumed = rate_games(games, BOTS, resume=again, checkpoint=119)
    scratch = rate_games(games, BOTS, checkpoint=119)
    assert resumed.history == [step for step in scratch.history if step[0] >= 60]
    assert (resumed.mu, resumed.sigma, resumed.state) == (scratch.mu, scratch.sigma,
                                                          scratch.state)


@pytest.mark.parametrize("seed", [6, 7])
def test_games_put_in_canonical_order_by_numpy_are_in_the_order_sorted_gives(seed: int) -> None:
    from referee.ratings.plackett import canonical_order

    # names that sort differently as text and by length, tables of 2-5 (a shorter table whose
    # seats are a prefix of a longer one's first), shared places, forfeits, repeated games
    games = random_league(400, seed)
    games += [dataclasses.replace(game, index=1000 + n) for n, game in enumerate(games[:40])]
    games = [dataclasses.replace(game, bots=tuple(name.replace("b1", "b10") for name in game.bots))
             for game in games]
    games += [dataclasses.replace(games[0], index=2000, bots=games[0].bots[:2],
                                  places=games[0].places[:2], forfeited=(False, False))]
    expected = sorted(range(len(games)), key=lambda i: canonical_key(games[i]))
    assert canonical_order(games) == expected
    units = resampling_units(games)
    assert units == sorted(([game] for game in games), key=lambda unit: canonical_key(unit[0]))
    odd = [dataclasses.replace(games[0], places=(1.5, 1, 2, 3)[:games[0].players])] + games
    assert canonical_order(odd) == sorted(range(len(odd)), key=lambda i: canonical_key(odd[i]))


def test_the_games_and_schedule_are_parsed_as_one_json_document(tmp_path: Path,
                                                                monkeypatch) -> None:
    """json.loads's fixed cost is paid once for all games, not once per game (strikes are
    decoded once per distinct text, as before), and the same games and schedule come out."""
    from referee.league import store as store_module

    games = random_league(300, seed=9)
    store = stored(tmp_path, games)
    store.db.executemany("INSERT INTO schedule VALUES (?, ?, ?, ?)",
                         [(g.index, g.index // 2, json.dumps(list(g.bots)), g.index)
                          for g in games])
    texts = {text for (text,) in store.db.execute("SELECT strikes FROM games")}
    calls = {"count": 0}
    loads = json.loads

    def counted(*args, **kwargs):
        calls["count"] += 1
        return loads(*args, **kwargs)

    monkeypatch.setattr(store_module.json, "loads", counted)
    assert store.played() == games
    assert calls["count"] == 1 + len(texts)
    calls["count"] = 0
    schedule = store.schedule()
    assert calls["count"] == 1
    assert [(s.index, s.bots, s.group, s.rotation) for s in schedule] == [
        (g.index, g.bots, g.index // 2, g.index % 2) for g in games]
    store.close()

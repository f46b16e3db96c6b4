"""The gauntlet: paired schedule, the sequential test, in-process error rates, the real CLI."""

from __future__ import annotations

import json
import math
import random
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli_support import referee, start_referee
from wait_support import wait_for

from referee.engine import preset
from referee.league.folder import LeagueFolder
from referee.league.gauntlet import gauntlet_schedule, pair_scores
from referee.league.store import games_stored
from referee.ratings.results import PlayedGame
from referee.ratings.sprt import (
    BETTER,
    CAUTION,
    INCONCLUSIVE,
    MAX_STAKE,
    NOT_BETTER,
    Pair,
    SequentialTest,
    SprtParams,
    ahead_chance,
    delta_by_size,
    seat_results,
    seat_score,
    state,
    trail,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))   # bench/simulated.py: engine policies in process
from simulated import noisy_greedy, simulate_gauntlet  # noqa: E402

GREEDY, RANDOM = ROOT / "sample_bots" / "greedy.toml", ROOT / "sample_bots" / "random.toml"


def pair_differences(games: dict[int, PlayedGame], candidate: str, baseline: str) -> list[float]:
    """Candidate's score minus baseline's, for each complete pair (as `pair_scores`)."""
    return [pair.candidate - pair.baseline for pair in pair_scores(games, candidate, baseline)]


def test_pairs_share_table_seats_and_seed_with_the_two_swapped():
    field = ["f1", "f2", "f3", "f4", "f5"]
    games = gauntlet_schedule("new", "old", field, 30, (3, 4), seed=2)
    assert len(games) == 60
    seats = Counter()
    for first, second in zip(games[::2], games[1::2], strict=True):
        assert first.group == second.group and first.seed == second.seed
        seat = first.bots.index("new")
        assert second.bots.index("old") == seat and "old" not in first.bots
        assert first.bots[:seat] + first.bots[seat + 1:] == \
            second.bots[:seat] + second.bots[seat + 1:]
        seats[len(first.bots), seat] += 1
    assert {size for size, _ in seats} == {3, 4}
    assert sorted(seats.values()) == [3, 4, 4, 4, 5, 5, 5]   # the tested seat cycles
    uses = Counter(bot for game in games[::2] for bot in game.bots if bot in field)
    assert max(uses.values()) - min(uses.values()) <= 1
    assert len({game.seed for game in games}) == 30
    assert games == gauntlet_schedule("new", "old", field, 30, (3, 4), seed=2)


def test_scores_count_opponents_beaten_and_ties_half():
    assert seat_score([[0], [1], [2], [3]], 0) == 1.0
    assert seat_score([[0], [1], [2], [3]], 3) == 0.0
    assert seat_score([[1, 2], [0]], 1) == 0.75
    assert seat_score([[0, 1, 2]], 2) == 0.5
    assert seat_results([[1, 2], [0], [3]], 1) == {0: 1.0, 2: 0.5, 3: 1.0}   # mean 0.833
    # pair differences use only complete pairs from the start, forfeits last
    def game(index, bots, places, forfeited=(False, False)):
        return PlayedGame(index, bots, places, (0, 0), forfeited, ({}, {}), ((), ()))

    games = {0: game(0, ("new", "x"), (1, 2)), 1: game(1, ("old", "x"), (2, 1)),
             3: game(3, ("x", "old"), (1, 1)),
             4: game(4, ("new", "x"), (1, 2), (True, False)), 5: game(5, ("old", "x"), (1, 2))}
    assert pair_differences(games, "new", "old") == [1.0]
    games[2] = game(2, ("x", "new"), (1, 1))
    assert pair_differences(games, "new", "old") == [1.0, 0.0, -1.0]
    assert [(pair.candidate, pair.baseline) for pair in pair_scores(games, "new", "old")] == \
        [(1.0, 0.0), (0.5, 0.5), (0.0, 1.0)]
    assert pair_scores(games, "new", "old")[1] == Pair(2, ("x",), (0.5,), (0.5,))


def elo_shift(p, elo):
    """A chance p of finishing ahead, for a bot `elo` better (odds times 10^(elo/400))."""
    odds = p / (1 - p) * 10 ** (elo / 400)
    return odds / (1 + odds)


def logistic(x):
    return 1 / (1 + math.exp(-x))


def pooled_edge(counts):
    """The baseline's log-odds against one opponent on the league table's scale and its standard
    error, from (factor, offset, ahead, games) at each table size (offset: the candidate's
    games, read at delta better), one game level at factor 1 as the prior: the root of the
    likelihood's slope by bisection, and one over the root of its curvature there."""
    counts = [*counts, (1.0, 0.0, 0.5, 1)]

    def slope(r):
        return sum(a * (ahead - games * logistic(a * (r + off))) for a, off, ahead, games in counts)

    low, high = -40.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if slope(mid) > 0 else (low, mid)
    edge = (low + high) / 2
    curve = sum(a * a * games * logistic(a * (edge + off)) * (1 - logistic(a * (edge + off)))
                for a, off, _, games in counts)
    return edge, 1 / math.sqrt(curve)


def gain_at(x, delta_elo):
    """The gain in the chance to finish ahead from log-odds x for a bot delta_elo better."""
    return elo_shift(logistic(x), delta_elo) - logistic(x)


def wealth(pairs, params, delta_at, caution=CAUTION):
    """The two gamblers' log wealth, written out from the docstring of sprt.py."""
    evidence = against = total = square = 0.0
    versus = {}   # (opponent, size, offset) -> (ahead, games): the baseline's and the candidate's
    offset = params.delta * math.log(10) / 400
    for n, pair in enumerate(pairs):
        mean = total / n if n else 0.0
        var = (square - n * mean * mean + 0.25) / (n + 1)
        points, cautious = [], []
        factor = delta_at[pair.players] / params.delta
        for opponent in pair.opponents:
            counts = [(delta_at[k] / params.delta, off, ahead, games)
                      for (name, k, off), (ahead, games) in versus.items() if name == opponent]
            edge, se = pooled_edge(counts)
            points.append(gain_at(factor * edge, delta_at[pair.players]))
            cautious.append(min(gain_at(factor * (edge + side * caution * se),
                                        delta_at[pair.players]) for side in (-1, 1)))
        point, gain = sum(points) / len(points), sum(cautious) / len(cautious)
        stake = min(MAX_STAKE, point / (var + point * point))
        diff = pair.candidate - pair.baseline
        evidence += math.log(1 + stake * diff)
        against += math.log(1 + stake * (gain - diff))
        total, square = total + diff, square + diff * diff
        for results, off in ((pair.baseline_results, 0.0), (pair.candidate_results, offset)):
            for opponent, result in zip(pair.opponents, results, strict=True):
                ahead, games = versus.get((opponent, pair.players, off), (0.0, 0))
                versus[opponent, pair.players, off] = (ahead + result, games + 1)
    return evidence, against


def test_the_gain_comes_from_the_opponents_seated_and_earlier_pairs_only():
    params = SprtParams(delta=100)
    test = SequentialTest(params, {3: 100.0, 4: 60.0})
    # first pair: nothing known, every opponent level (1/2) with the prior's standard error, 2
    # (one level game: curvature 1/4): the stake's gain at 1/2, the bet's at log-odds -+1
    first = Pair(3, ("weak", "strong"), (1.0, 0.5), (1.0, 0.0))
    point, cautious = test.gains(first)
    assert point == pytest.approx(elo_shift(0.5, 100) - 0.5)
    assert cautious == pytest.approx(min(gain_at(1.0, 100), gain_at(-1.0, 100)))
    assert cautious < point and test.gain(first) == cautious
    test.add(first)
    # "weak": the baseline and the candidate ahead once each; "strong": the baseline behind,
    # the candidate level: both feed the estimate, the candidate's read 100 Elo better
    later = Pair(3, ("strong", "weak"), (0.0, 1.0), (0.0, 1.0))
    offset = 100 * math.log(10) / 400
    expected = {name: pooled_edge([(1.0, 0.0, mine, 1), (1.0, offset, theirs, 1)])
                for name, mine, theirs in (("weak", 1.0, 1.0), ("strong", 0.0, 0.5))}
    assert test._edge("weak") == pytest.approx(expected["weak"])
    assert test._edge("strong") == pytest.approx(expected["strong"])
    assert expected["weak"][0] > 0 > expected["strong"][0]
    # at tables of 4 gaps are 0.6 times those at 3 (delta 60 Elo there); "new" is level
    at_4 = test.gains(Pair(4, ("strong", "weak", "new"), (1.0,) * 3, (1.0,) * 3))
    assert at_4[0] == pytest.approx(sum(
        gain_at(0.6 * edge, 60) for edge, _ in (*expected.values(), (0.0, 2.0))) / 3)
    # an opponent not seated does not count; a shared place counts half
    alone = Pair(3, ("weak", "other"), (0.5, 0.5), (0.5, 0.5))
    assert test.gains(alone)[0] == pytest.approx(
        (gain_at(expected["weak"][0], 100) + gain_at(0.0, 100)) / 2)
    got = test.add(later)
    assert (got.evidence, got.against) == \
        pytest.approx(wealth([first, later], params, {3: 100.0, 4: 60.0}))
    # games at two sizes make one estimate per opponent: the bets as written out
    mixed = [first, later, Pair(4, ("weak", "strong", "new"), (1.0, 0.0, 1.0), (1.0, 1.0, 0.0)),
             Pair(4, ("new", "weak", "strong"), (0.5, 1.0, 0.0), (0.5, 0.0, 0.0)), alone]
    test = SequentialTest(params, {3: 100.0, 4: 60.0})
    for pair in mixed:
        got = test.add(pair)
    assert (got.evidence, got.against) == pytest.approx(wealth(mixed, params, {3: 100.0,
                                                                               4: 60.0}))


def model_pair(rng, size, seated, edge, factor, gap):
    """A pair at a table of `size` drawn from the model: the baseline finishes ahead of
    opponent o with log-odds factor * edge[o], the candidate with factor * (edge[o] + gap)."""
    def results(shift):
        return tuple(float(rng.random() < logistic(factor[size] * (edge[o] + shift)))
                     for o in seated)
    return Pair(size, seated, results(gap), results(0.0))


def test_at_mixed_table_sizes_the_gain_converges_to_the_true_gain():
    """Pairs from the model at tables of 2 and 5 against opponents of known strength, the
    candidate delta better: after many pairs both the stake's and the bet's gain are the
    candidate's true expected gain at each size, for an opponent met at one size only too (the
    pooled estimate carries over)."""
    params = SprtParams(delta=50)
    delta_at = delta_by_size(50, [2, 5])
    factor = {k: delta_at[k] / 50 for k in (2, 5)}
    gap = 50 * math.log(10) / 400
    edge = {"strong": -1.0, "weak": 1.2, "level": 0.0}   # baseline's log-odds, league table
    rng = random.Random(4)
    test = SequentialTest(params, delta_at)
    for n in range(6000):
        size = 2 if n % 2 else 5
        seated = ("level",) if size == 2 else ("strong", "weak", "level", "strong")
        # recorded without the bets (a verdict would stop the adding)
        test._record(model_pair(rng, size, seated, edge, factor, gap))
    for name, truth in edge.items():       # each estimate within 3 of its standard errors
        estimate, se = test._edge(name)
        assert abs(estimate - truth) < 3 * se < 0.2
    # the gains at a size the opponents were (or were not) met at; at tables of 2 an error in
    # the estimate from tables of 5 is magnified 3.4 times
    for size, seated, within in ((2, ("strong", "weak"), 0.08), (5, ("weak", "level"), 0.03)):
        true = sum(gain_at(factor[size] * edge[o], delta_at[size]) for o in seated) / len(seated)
        point, cautious = test.gains(Pair(size, seated, (0.5,) * 2, (0.5,) * 2))
        assert point == pytest.approx(true, rel=within)
        assert cautious == pytest.approx(true, rel=within) and cautious < point


FIELD_300 = {f"o{i}": -300 + 120 * i for i in range(6)}    # +-300 league-table Elo


def early_gains(kind, runs, pairs, seed):
    """The mean over `runs` gauntlets of the first `pairs` pairs at tables of 2-5 against
    FIELD_300 of the gain bet against, over the candidate's true expected gain (a candidate 50
    Elo better, drawn from the model)."""
    params = SprtParams(delta=50)
    sizes = [2, 3, 4, 5]
    delta_at = delta_by_size(50, sizes)
    factor = {k: delta_at[k] / 50 for k in sizes}
    edge = {o: -elo * math.log(10) / 400 for o, elo in FIELD_300.items()}
    gap = 50 * math.log(10) / 400
    rng = random.Random(seed)
    bet = true = 0.0
    for _ in range(runs):
        test = kind(params, delta_at)
        for _ in range(pairs):
            size = rng.choice(sizes)
            seated = tuple(rng.sample(sorted(edge), size - 1))
            bet += test.gain(Pair(size, seated, (0.5,) * len(seated), (0.5,) * len(seated)))
            true += sum(gain_at(factor[size] * edge[o], delta_at[size])
                        for o in seated) / len(seated)
            test._record(model_pair(rng, size, seated, edge, factor, gap))
    return bet / true


class BaselineOnly(SequentialTest):
    """The estimate before: the baseline's games alone, the gain bet against at the estimate."""

    caution = 0.0
    from_both = False


def test_the_early_gain_is_not_overstated_on_a_field_of_known_chances():
    """At tables of 2-5 against +-300 Elo, the gain the first pairs bet against over the
    candidate's true gain (summed over 40 gauntlets, seed fixed): the estimate before (the
    baseline's games, at the estimate) overstated it (1.053 over the first 20 pairs), which
    called a candidate 50 Elo better "not better" too often; the cautious gain from both bots'
    games stays below it (0.766) and comes closer with more pairs (0.892 over 150)."""
    assert early_gains(BaselineOnly, 40, 20, seed=1) > 1.03
    assert early_gains(SequentialTest, 40, 20, seed=1) < 0.8
    assert 0.85 < early_gains(SequentialTest, 40, 150, seed=1) < 1.0


def test_the_same_pairs_give_the_same_decisions():
    """Model pairs at tables of 2-5 from a seed: the same seed gives the same pairs and so the
    same states pair by pair and the same verdict; another seed other pairs."""
    sizes = [2, 3, 4, 5]
    delta_at = delta_by_size(50, sizes)
    factor = {k: delta_at[k] / 50 for k in sizes}
    edge = {o: -elo * math.log(10) / 400 for o, elo in FIELD_300.items()}

    def run(seed):
        rng = random.Random(seed)
        pairs = []
        for _ in range(2000):
            size = rng.choice(sizes)
            seated = tuple(rng.sample(sorted(edge), size - 1))
            pairs.append(model_pair(rng, size, seated, edge, factor, 50 * math.log(10) / 400))
        return trail(pairs, SprtParams(delta=50), delta_at)

    first, again, other = run(8), run(8), run(9)
    assert first == again and first[-1].verdict in (BETTER, NOT_BETTER)
    assert other != first


def test_delta_in_league_table_elo_becomes_elo_at_each_size():
    # one size: the league table of those games is at that size
    assert delta_by_size(50, [4] * 10) == {4: pytest.approx(50)}
    # tables of 3 and 5 in equal numbers: the scales 0.40 and 0.29 against a typical table
    # at their geometric mean
    typical = math.sqrt(0.40 * 0.29)
    got = delta_by_size(50, [3, 5] * 7)
    assert got == {3: pytest.approx(50 * 0.40 / typical), 5: pytest.approx(50 * 0.29 / typical)}
    assert math.sqrt(got[3] * got[5]) == pytest.approx(50)
    # larger tables take the scale of 5
    assert delta_by_size(50, [5, 6]) == {5: pytest.approx(50), 6: pytest.approx(50)}
    assert ahead_chance(0) == 0.5 and ahead_chance(400) == pytest.approx(10 / 11)


def test_the_test_bets_bounds_and_budget():
    params = SprtParams(delta=100, alpha=0.05, beta=0.1, max_games=200, min_pairs=4)
    assert params.better_at == pytest.approx(math.log(1 / (0.7 * 0.05)))
    assert params.not_better_at == pytest.approx(math.log(1 / (0.7 * 0.1)))

    def pair(candidate, baseline):
        return Pair(2, ("x",), (candidate,), (baseline,))

    pairs = [pair(1.0, 0.0), pair(1.0, 1.0), pair(1.0, 0.0), pair(0.5, 0.5)]
    got = state(pairs[:3], params)
    assert got.baseline_score == pytest.approx((1.0 + 0.5) / 4)
    assert (got.evidence, got.against) == pytest.approx(wealth(pairs[:3], params, {2: 100}))
    assert got.verdict is None                                # before min_pairs
    decided = state(pairs * 10, params)
    steps = trail(pairs * 10, params)
    assert decided.verdict == BETTER and steps[-1] == decided and len(steps) == decided.pairs
    assert decided.evidence >= params.better_at
    assert all(s.evidence < params.better_at and s.against < params.not_better_at
               for s in steps[params.min_pairs - 1:-1])
    assert state(pairs * 10 + [pair(0.0, 1.0)] * 50, params) == decided  # later: no change
    assert state([pair(0.5, 0.5)] * 60, params).verdict == NOT_BETTER   # identical results
    noisy = [pair(1.0, 0.0), pair(0.0, 1.0), pair(1.0, 1.0), pair(0.5, 0.0)] * 60
    short = SprtParams(delta=100, max_games=40, min_pairs=4)   # undecided within 20 pairs
    assert state(noisy, short).verdict == INCONCLUSIVE and state(noisy, short).pairs == 20
    low, high = decided.interval
    assert low < decided.mean < high
    with pytest.raises(ValueError):
        SprtParams(alpha=0.7)


RULES = preset("classic")
POLICIES = {"strong": noisy_greedy(0.0), "weak": noisy_greedy(1.0),
            **{f"f{i}": noisy_greedy(0.5, f"f{i}") for i in range(3)},
            "twin-a": noisy_greedy(0.5, "a"), "twin-b": noisy_greedy(0.5, "b")}
FIELD = ["f0", "f1", "f2"]


def test_a_clearly_stronger_candidate_is_found_better():
    params = SprtParams(delta=100, max_games=200)
    verdicts = [simulate_gauntlet(RULES, POLICIES, "strong", "weak", FIELD, (4, 4), seed,
                                  params).verdict for seed in range(4)]
    assert verdicts == [BETTER] * 4


def test_an_equal_candidate_is_rarely_called_better():
    # Equally strong, different random choices: alpha = 0.1 bounds the false "better" rate.
    params = SprtParams(delta=150, alpha=0.1, beta=0.1, max_games=160)
    results = [simulate_gauntlet(RULES, POLICIES, "twin-a", "twin-b", FIELD, (4, 4), seed,
                                 params) for seed in range(20)]
    verdicts = Counter(result.verdict for result in results)
    # P(4 or more of 20 at a true rate of 0.1) = 13%; of 6 or more 1.1%.
    assert verdicts[BETTER] <= 5, verdicts
    assert verdicts[NOT_BETTER] >= 12, verdicts


def test_the_same_seed_gives_the_same_verdict_after_the_same_pairs():
    params = SprtParams(delta=100, max_games=300)
    runs = [simulate_gauntlet(RULES, POLICIES, "strong", "twin-a", FIELD, (3, 4), seed, params)
            for seed in (5, 5, 6)]
    assert runs[0] == runs[1] and runs[0].verdict is not None
    assert runs[2] != runs[0]          # another seed, other games


def verdict_of(out: Path) -> dict:
    data = json.loads(LeagueFolder(out).gauntlet_result.read_text())
    return {"verdict": data["verdict"], "state": data["state"], "trail": data["trail"]}


def test_cli_greedy_is_better_than_random_and_not_better_than_itself(tmp_path: Path) -> None:
    better = referee("gauntlet", GREEDY, "--baseline", RANDOM, "--field", RANDOM, GREEDY,
                     "--players", "3", "--out", tmp_path / "better", "-j", "2")
    assert "verdict: better" in better.stdout
    assert "pairs   20" in better.stdout                      # progress while it runs
    lines = better.stdout.splitlines()
    # within 80 columns, but for lines naming the (long) temporary directory
    assert all(len(line) <= 80 for line in lines if str(tmp_path) not in line), lines
    assert "-0.000" not in better.stdout
    first_pair = next(i for i, line in enumerate(lines) if line.startswith("  pairs"))
    explained = " ".join(" ".join(lines[:first_pair]).split())
    assert "no decision before 20 pairs" in explained
    assert "--delta 50 (league-table Elo) = 50 Elo at tables of 3 (57%)" in explained
    # random is the baseline and in the field: one line says so
    assert "note: random plays twice; the field's copy (its own process) is random-field" \
        in lines
    assert "at tables of 3:" in better.stdout                 # compared at the size played
    same = referee("gauntlet", GREEDY, "--baseline", GREEDY, "--field", RANDOM, GREEDY,
                   "--players", "3", "--out", tmp_path / "same", "--quiet")
    assert "verdict: not better" in same.stdout and "pairs" not in same.stdout.split(":")[0]
    data = json.loads(LeagueFolder(tmp_path / "same").gauntlet_result.read_text())
    assert data["candidate"] == "greedy" and data["baseline"] == "greedy-baseline"
    assert data["state"]["mean"] == 0.0                         # deterministic twins
    bad = referee("gauntlet", GREEDY, "--field", RANDOM, check=False)
    assert bad.returncode != 0 and "--baseline" in bad.stderr and "Traceback" not in bad.stderr


def test_killed_gauntlet_resumes_to_the_same_verdict(tmp_path: Path) -> None:
    args = [GREEDY, "--baseline", RANDOM, "--field", RANDOM, GREEDY, "--players", "3",
            "--seed", "4"]
    straight = tmp_path / "straight"
    referee("gauntlet", *args, "--out", straight, "-j", "1", "--quiet")
    out = tmp_path / "killed"
    store = LeagueFolder(out).gauntlet_store
    proc = start_referee("gauntlet", *args, "--out", out, "-j", "3", "--quiet",
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        recorded = wait_for("eight recorded games",
                            lambda: (n := games_stored(store)) >= 8 and n,
                            timeout=240, every=0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert recorded >= 8 and not LeagueFolder(out).gauntlet_result.exists()
    unfinished = referee("gauntlet", *args, "--out", out, "--quiet", check=False)
    assert unfinished.returncode != 0 and "--resume" in unfinished.stderr
    assert unfinished.stdout == ""                            # no header before refusing
    resumed = referee("gauntlet", "--resume", "--out", out, "--quiet")
    assert verdict_of(out) == verdict_of(straight)
    assert "verdict: better" in resumed.stdout
    again = referee("gauntlet", "--resume", "--out", out)
    assert "played now: 0" in again.stdout


def test_a_gauntlet_of_the_test_before_is_refused_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "old"
    referee("gauntlet", GREEDY, "--baseline", RANDOM, "--field", RANDOM, GREEDY, "--players",
            "3", "--max-games", "4", "--out", out, "--quiet")
    # as the referee before stored it
    with sqlite3.connect(LeagueFolder(out).gauntlet_store) as db:
        db.execute("UPDATE settings SET value = ? WHERE key = 'test'",
                   (json.dumps("test by betting, delta in Elo"),))
    db.close()
    refused = referee("gauntlet", "--resume", "--out", out, check=False)
    assert refused.returncode != 0 and refused.stdout == ""
    assert "Traceback" not in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert "cannot be resumed" in refused.stderr and "test by betting, delta in Elo" in \
        refused.stderr and str(out) in refused.stderr

"""The order-free global fit (Plackett-Luce) and its bootstrap intervals, from simulated games."""

from __future__ import annotations

import dataclasses
import io
import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from referee.cli.tables import render_terminal
from referee.league.tables import league_rows, league_table
from referee.ratings.intervals import resampling_units, standings
from referee.ratings.plackett import finishing_groups
from referee.ratings.results import PlayedGame
from referee.ratings.trueskill import rate_games
from referee.report.table_files import rank_text, to_csv, to_markdown

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from simulated import fit_games, synthetic_league, true_typical  # noqa: E402

BOTS = ["a", "b", "c", "d", "e"]
TRUE = {"a": 1.2, "b": 0.6, "c": 0.0, "d": -0.6, "e": -1.2}   # theta: a strongest


def game(index: int, bots: tuple[str, ...], places: tuple[int, ...],
         forfeited: tuple[bool, ...] | None = None) -> PlayedGame:
    n = len(bots)
    return PlayedGame(index, bots, places, (0,) * n, forfeited or (False,) * n, ({},) * n,
                      ((),) * n)


def plackett_luce_games(count: int, seed: int, strengths: dict[str, float] = TRUE,
                        size: int = 3) -> list[PlayedGame]:
    """Tables of `size` random bots whose order is drawn from the Plackett-Luce model."""
    rng = random.Random(seed)
    names = sorted(strengths)
    games = []
    for index in range(count):
        seats = rng.sample(names, size)
        left, order = seats[:], []
        while left:
            pick = rng.choices(left, [math.exp(strengths[b]) for b in left])[0]
            order.append(pick)
            left.remove(pick)
        games.append(game(index, tuple(seats), tuple(order.index(b) + 1 for b in seats)))
    return games


def test_recovers_the_known_order_and_spacing():
    fit = fit_games(plackett_luce_games(1500, seed=1), BOTS)
    order = sorted(BOTS, key=lambda bot: -fit.strength[bot])
    assert order == BOTS
    elo_step = 0.6 * 400 / math.log(10)   # 104 Elo between neighbours
    for upper, lower in zip(BOTS, BOTS[1:], strict=False):
        assert fit.strength[upper] - fit.strength[lower] == pytest.approx(elo_step, rel=0.25)
    assert sum(fit.strength.values()) == pytest.approx(0, abs=1e-9)   # centred on the field
    assert fit.ahead("a", "e") > 0.9
    assert fit.ahead("a", "e") + fit.ahead("e", "a") == pytest.approx(1, abs=1e-15)


def test_shuffled_and_reindexed_games_give_bit_identical_fits():
    games = plackett_luce_games(300, seed=2)
    expected = standings(games, BOTS, seed=5, resamples=60)
    for seed in range(3):
        shuffled = games[:]
        random.Random(seed).shuffle(shuffled)
        reindexed = [dataclasses.replace(g, index=i) for i, g in enumerate(shuffled)]
        assert fit_games(reindexed, BOTS) == fit_games(games, BOTS)
        got = standings(reindexed, BOTS, seed=5, resamples=60)
        assert (got.strength, got.low, got.high) == (expected.strength, expected.low,
                                                     expected.high)
        assert (got.rank_low, got.rank_high, got.order) == (expected.rank_low,
                                                            expected.rank_high, expected.order)
    # TrueSkill, by contrast, depends on the order the games are fed in.
    moved = rate_games(reindexed, BOTS).mu != rate_games(games, BOTS).mu
    assert moved


def test_shared_places_are_ties():
    # R26: a and b always share first place; c second, d last.
    games = [game(i, tuple(rotate), tuple({"a": 1, "b": 1, "c": 3, "d": 4}[x] for x in rotate))
             for i, rotate in enumerate([["a", "b", "c", "d"], ["b", "c", "d", "a"],
                                         ["c", "d", "a", "b"], ["d", "a", "b", "c"]] * 10)]
    fit = fit_games(games, ["a", "b", "c", "d"])
    assert fit.strength["a"] == pytest.approx(fit.strength["b"], abs=1e-9)
    assert fit.strength["b"] > fit.strength["c"] > fit.strength["d"]
    assert finishing_groups(games[0]) == [["a", "b"], ["c"], ["d"]]
    # A game where everyone shares a place says the bots are level: it pulls them together.
    level = [game(i, ("a", "b"), (1, 1)) for i in range(20)]
    split = [game(100 + i, ("a", "b"), (1, 2)) for i in range(5)]
    gap = fit_games(split, ["a", "b"]).strength
    pulled = fit_games(split + level, ["a", "b"]).strength
    assert 0 < pulled["a"] - pulled["b"] < gap["a"] - gap["b"]


def test_forfeits_are_last_and_all_forfeit_games_are_left_out():
    # A forfeit counts last whatever place was recorded for it.
    odd = game(0, ("a", "b", "c"), (1, 2, 3), (True, False, False))
    assert finishing_groups(odd) == [["b"], ["c"], ["a"]]
    both = game(1, ("a", "b", "c"), (2, 1, 2), (True, False, True))
    assert finishing_groups(both) == [["b"], ["a", "c"]]
    games = plackett_luce_games(200, seed=3)
    all_forfeit = [game(1000 + i, ("a", "b", "c"), (1, 1, 1), (True,) * 3) for i in range(30)]
    assert fit_games(games + all_forfeit, BOTS) == fit_games(games, BOTS)
    with_them = standings(games + all_forfeit, BOTS, seed=1, resamples=40)
    assert with_them.games == standings(games, BOTS, seed=1, resamples=40).games
    # Nothing but all-forfeit games: no strength for anyone.
    assert set(fit_games(all_forfeit, BOTS).strength.values()) == {None}


def test_an_unbeaten_bot_gets_a_finite_rating():
    games = [game(i, ("a", "b"), (1, 2)) for i in range(10)]
    fit = fit_games(games, ["a", "b", "c"])
    assert math.isfinite(fit.strength["a"]) and fit.strength["a"] > fit.strength["b"]
    assert fit.strength["c"] is None   # no games


def test_bootstrap_is_seeded():
    games = plackett_luce_games(200, seed=4)
    one = standings(games, BOTS, seed=9, resamples=80)
    again = standings(list(reversed(games)), BOTS, seed=9, resamples=80)
    other = standings(games, BOTS, seed=10, resamples=80)
    assert (one.low, one.high, one.gap_sd) == (again.low, again.high, again.gap_sd)
    assert one.gap_sd != other.gap_sd       # the bootstrap (rank ranges, gaps) is seeded
    # the point fit and its intervals (from the fit's curvature) do not depend on the seed
    assert (one.strength, one.low) == (other.strength, other.low)


def test_intervals_rank_ranges_and_separation():
    clear = standings(plackett_luce_games(1500, seed=5), BOTS, seed=1, resamples=100)
    assert clear.order == BOTS
    for bot in BOTS:
        assert clear.low[bot] < clear.strength[bot] < clear.high[bot]
    assert rank_text(clear.rank_low["a"], clear.rank_high["a"]) == "1" and clear.unresolved() == []
    close = {"a": 0.0, "b": 0.0, "c": 0.0, "d": -2.0, "e": -2.0}
    fuzzy = standings(plackett_luce_games(300, seed=6, strengths=close), BOTS, seed=1,
                      resamples=100)
    assert fuzzy.order[3:] == ["d", "e"] or fuzzy.order[3:] == ["e", "d"]
    unresolved = {frozenset(pair) for pair in fuzzy.unresolved()}
    assert frozenset(fuzzy.order[2:4]) not in unresolved      # the big gap is separated
    assert frozenset(fuzzy.order[3:5]) in unresolved          # d and e are not
    top = fuzzy.order[0]
    assert fuzzy.rank_low[top] == 1 and fuzzy.rank_high[top] >= 2
    assert rank_text(fuzzy.rank_low[top], fuzzy.rank_high[top]) == f"1-{fuzzy.rank_high[top]}"


def test_only_the_ranked_bots_hold_ranks_and_the_others_stay_in_the_fit():
    """A season's retired versions (here b and d) are fitted on every game but not ranked: the
    rank ranges, order and separation are among the three current versions alone."""
    even = dict.fromkeys(BOTS, 0.0)   # equal bots: wide rank ranges
    games = plackett_luce_games(300, seed=8, strengths=even)
    current = ["a", "c", "e"]
    everyone = standings(games, BOTS, seed=3, resamples=60)
    fit = standings(games, BOTS, seed=3, resamples=60, ranked=current)
    assert max(everyone.rank_high[bot] or 0 for bot in current) > len(current)  # the old way
    assert sorted(fit.order) == current and sorted(fit.unranked) == ["b", "d"]
    for bot in current:
        low, high = fit.rank_low[bot], fit.rank_high[bot]
        assert low is not None and high is not None and 1 <= low <= high <= len(current)
    assert max(fit.rank_high[bot] or 0 for bot in current) == len(current)
    assert fit.rank_low["b"] is None and fit.rank_high["d"] is None
    # Every bot keeps its strength and interval: the fit is the same, only the ranking differs.
    assert (fit.strength, fit.low, fit.high) == (everyone.strength, everyone.low, everyone.high)
    # Neighbours are the ranked rows': a retired version between two of them separates none.
    separated = fit.separated_from_next()
    assert list(separated) == fit.order and separated[fit.order[-1]] is None
    for upper, lower in zip(fit.order, fit.order[1:], strict=False):
        assert separated[upper] == fit.separated(upper, lower)
    ranked, unranked = league_rows(games, BOTS, rate_games(games, BOTS), fit)
    assert [(row.rank, row.bot) for row in ranked] == list(enumerate(fit.order, start=1))
    assert [(row.rank, row.rank_low, row.bot) for row in unranked] == \
        [(None, None, bot) for bot in fit.unranked]
    assert ranked[-1].separated_from_next is None and unranked[0].strength is not None
    # The same seed gives the same table.
    assert standings(games, BOTS, seed=3, resamples=60, ranked=current) == fit


def test_duplicate_rotations_are_resampled_together():
    games = plackett_luce_games(12, seed=7)
    groups = {g.index: g.index // 3 for g in games}
    units = resampling_units(games, groups)
    assert len(units) == 4 and sorted(len(u) for u in units) == [3, 3, 3, 3]
    assert {g.index // 3 for g in units[0]} == {units[0][0].index // 3}
    assert len(resampling_units(games)) == 12


def test_table_shows_intervals_and_marks_overlaps():
    close = {"a": 0.0, "b": 0.0, "c": 0.0, "d": -2.0, "e": -2.0}
    games = plackett_luce_games(300, seed=6, strengths=close)
    fit = standings(games, BOTS, seed=1, resamples=60)
    rows = league_table(games, BOTS, rate_games(games, BOTS), fit)
    assert [row.bot for row in rows] == fit.order
    third = rows[2]
    assert third.separated_from_next is True and rows[3].separated_from_next is False
    assert rows[-1].separated_from_next is None
    assert third.strength_low < third.strength < third.strength_high
    console = Console(file=io.StringIO(), width=260, color_system=None)
    render_terminal(rows, {}, console, pairwise=fit.ahead)
    text = console.file.getvalue()
    assert "95% interval" in text and "~" in text and "finishes ahead" in text
    assert f"{rows[0].rank_low}-{rows[0].rank_high}" in text
    assert "separated_from_next" in to_csv(rows).splitlines()[0]
    markdown = to_markdown(rows, {}, fit.ahead)
    assert "Chance of finishing ahead" in markdown and "| no |" in markdown
    narrow = Console(file=io.StringIO(), width=80, color_system=None)
    render_terminal(rows, {}, narrow, pairwise=fit.ahead)
    text = narrow.file.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for heading in ("strength", "95% interval", "ranks", "games", "wins"):
        assert heading in text
    assert "~" in text.split("strength: global fit")[0]   # the mark is in the table itself


SCALES = {2: 1.0, 3: 0.4, 4: 0.35, 5: 0.3}    # unequal true scales, near the engine's


def mixed_leagues(count: int, bots: int, per_bot: int, sizes=(2, 3, 4, 5)):
    """`count` synthetic leagues (bench/simulated.py) of `bots` bots spread over +-3 theta
    (+-520 Elo) at tables of 2, with their true strengths at each league's typical table."""
    rng = np.random.default_rng(2032)
    strengths = np.linspace(-3.0, 3.0, bots)
    for _ in range(count):
        games = synthetic_league(rng, strengths, per_bot, sizes, SCALES)
        yield games, true_typical(games, strengths, SCALES)


@pytest.mark.slow
def test_intervals_cover_the_known_strengths_at_mixed_table_sizes():
    """6 bots x 60 games at tables of 2-5 with unequal scales: the percentile bootstrap's 95%
    intervals (read at the most played size, with the scale prior centred on 1) held the true
    strength 182 times of these 240 (the two extremes 53 of 80); the curvature with the
    priors' in 230 (75); the games' curvature 231 (76); the profile-likelihood bounds at the
    games' width 230 (76), with the scale prior's sd at 0.7 now 231 (76). At least 88%
    must cover (a 95% rate falls below that with a chance of about 1 in 10,000), the extremes
    85%, and each interval holds its own estimate."""
    names = [f"b{i}" for i in range(6)]
    covered = extremes = 0
    for games, truth in mixed_leagues(40, 6, 60):
        fit = standings(games, names, seed=1, resamples=20)
        for bot in names:
            assert fit.low[bot] <= fit.strength[bot] <= fit.high[bot]
            inside = fit.low[bot] <= truth[bot] <= fit.high[bot]
            covered += inside
            extremes += inside and bot in ("b0", "b5")
    assert covered >= 0.88 * 240, covered
    assert extremes >= 0.85 * 80, extremes


@pytest.mark.slow
def test_small_mixed_leagues_intervals_cover_their_extremes():
    """8 bots x 20 games at tables of 2-5 with unequal scales, where the weak priors'
    curvature is a large share of what is known about a scale: the intervals that counted it
    held the true strength 1115 times of these 1200 (0.929) and the strongest and weakest bots
    only 272 of 300 (0.907). Read from the games' curvature alone they must cover 0.93-0.97,
    the extremes too (1142, 0.952, and 287, 0.957, symmetric; the profile-likelihood bounds
    at the games' width, 1151, 0.959, and 291, 0.970; with the scale prior's sd at 0.7,
    1148, 0.957, and 291, 0.970). With the scale prior centred on the measured scales the
    extremes are no longer pulled in and cover 293 (0.977): above 0.97, on the safe side (the
    width is the games' alone; with the scale prior's curvature in it, the extremes of wide
    leagues of 12 bots covered 0.925, too narrow)."""
    names = [f"b{i}" for i in range(8)]
    covered = extremes = 0
    for games, truth in mixed_leagues(150, 8, 20):
        fit = standings(games, names, seed=1, resamples=10)
        for bot in names:
            assert fit.low[bot] <= fit.strength[bot] <= fit.high[bot]
            inside = fit.low[bot] <= truth[bot] <= fit.high[bot]
            covered += inside
            extremes += inside and bot in ("b0", "b7")
    assert 0.93 * 1200 <= covered <= 0.97 * 1200, (covered, extremes)
    assert 0.93 * 300 <= extremes <= 0.98 * 300, (covered, extremes)


@pytest.mark.slow
def test_narrow_mixed_leagues_of_twelve_bots_cover_their_strengths():
    """12 bots x 20 games at tables of 2-5, the bots close (spread over 100-400 Elo at tables
    of 2): 20 games per bot barely tell the sizes' scales apart, and under a looser scale
    prior (sd 1) they wandered further than the games' curvature says: these 1,200 intervals
    held the true strength 1,103 times (0.919), the extremes 183 of 200. With the prior's sd
    at 0.7, 1,122 (0.935), the extremes 181 (bench/fairness.py measures every bot and the
    extremes of such leagues at every width: 0.93-0.97)."""
    from referee.ratings.intervals import fit_with_interval
    from referee.ratings.plackett import ELO, Design

    rng = np.random.default_rng(7)
    names = [f"b{i}" for i in range(12)]
    covered = extremes = 0
    for _ in range(100):
        width = rng.uniform(100, 400) / ELO
        strengths = np.linspace(-width / 2, width / 2, 12)
        games = synthetic_league(rng, strengths, 20, (2, 3, 4, 5), SCALES)
        truth = true_typical(games, strengths, SCALES)
        design = Design(games, names)
        point, low, high = fit_with_interval(design, *design.fit_scaled())
        assert low is not None and high is not None
        inside = [low[i] <= truth[bot] <= high[i] for i, bot in enumerate(names)]
        covered += sum(inside)
        extremes += int(inside[0]) + int(inside[-1])
    assert 0.93 * 1200 <= covered <= 0.97 * 1200, covered
    assert extremes >= 0.88 * 200, extremes


def wide_league_readings(scales: dict[int, float], seed: int, leagues: int = 40
                         ) -> tuple[np.ndarray, float]:
    """12 bots x 20 games at tables of 2-5, strengths spread over 1,000 Elo at tables of 2:
    the fitted scales of 3, 4 and 5 against 2 (geometric mean over the leagues), and the mean
    slope of the reported
    strengths on the true ones (1: no shrinking)."""
    from referee.ratings.plackett import ELO, Design, to_elo, typical

    rng = np.random.default_rng(seed)
    names = [f"b{i}" for i in range(12)]
    ratios, slopes = [], []
    for _ in range(leagues):
        strengths = np.linspace(-500, 500, 12) / ELO
        games = synthetic_league(rng, strengths, 20, (2, 3, 4, 5), scales)
        truth = true_typical(games, strengths, scales)
        design = Design(games, names)
        theta, log_scale = typical(design, *design.fit_scaled())
        scale = dict(zip(design.sizes, np.exp(log_scale), strict=True))
        ratios.append([scale[k] / scale[2] for k in (3, 4, 5)])
        point = to_elo(theta, design.played)
        slopes.append(np.polyfit([truth[bot] for bot in names], point, 1)[0])
    return np.exp(np.mean(np.log(ratios), axis=0)), float(np.mean(slopes))


@pytest.mark.slow
def test_few_games_at_mixed_sizes_keep_the_scales_apart_and_the_strengths_unshrunk():
    """With the scale prior centred on one scale for every size, 20 games per bot (40 leagues
    of 12 bots, 1,000 Elo apart) fitted the scales of 3/4/5 against 2 at 0.80/0.66/0.59
    where they are 0.40/0.35/0.30, and the strengths came out 8% short (slope 0.919): the
    strongest and weakest bots' intervals missed on the outer side. Centred on the measured
    scales the fit reads 0.45/0.37/0.31, slope 0.997. Where the truth is one scale for every
    size, away from the prior's centre, the games pull the scales up to 0.70/0.74/0.76 and
    the strengths are not shrunk either (slope 1.027; with the prior at 1, 0.944)."""
    ratios, slope = wide_league_readings(SCALES, 45)
    assert np.all(np.abs(ratios - [0.40, 0.35, 0.30]) < 0.1), ratios
    assert 0.96 <= slope <= 1.05, slope
    ratios, slope = wide_league_readings({2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0}, 46)
    assert np.all(ratios > 0.6), ratios
    assert 0.96 <= slope <= 1.08, slope
    # the same seed, the same leagues and readings
    assert wide_league_readings(SCALES, 45, 2)[1] == wide_league_readings(SCALES, 45, 2)[1]


def test_the_size_test_reads_the_model_at_its_maximum_without_the_scale_prior(monkeypatch):
    """The fit holds each size's log scale towards the reference's (the scale prior); the
    size test compares the model's best likelihood with that of free strengths per size, so
    it reads the model where that prior is left out: the maximum a fit without the prior
    finds, and above the likelihood at the fit."""
    from referee.ratings import plackett

    # the scale prior centred away from these leagues' scales, so that the fit's maximum and
    # the size test's (without the prior) are apart
    monkeypatch.setattr(plackett, "CENTRED_SCALE_PRIOR", False)
    names = [f"b{i}" for i in range(6)]
    rng = np.random.default_rng(2032)
    for _ in range(3):
        games = synthetic_league(rng, np.linspace(-1.5, 1.5, 6), 60, (2, 3, 4, 5), SCALES)
        design = plackett.Design(games, names)
        theta, log_scale = design.fit_scaled()
        at_fit = design.log_likelihood(theta, log_scale)
        read = plackett._joint_log_likelihood(design, theta, log_scale)
        with monkeypatch.context() as patch:
            patch.setattr(plackett, "_SCALE_PRECISION", 0.0)
            best = design.log_likelihood(*design.fit_scaled(start=theta,
                                                            start_scale=log_scale))
        assert read > at_fit + 0.01
        assert read == pytest.approx(best, abs=1e-6)
        test = plackett.size_test(design, theta, log_scale)
        assert test is not None
        free = test.statistic / 2 + read
        assert free > best


def test_the_same_seed_gives_the_same_table_at_mixed_sizes():
    names = [f"b{i}" for i in range(5)]
    games, _ = next(mixed_leagues(1, 5, 30))
    first, again = (standings(games, names, seed=9, resamples=30) for _ in range(2))
    assert first == again
    assert sum(fit_share * math.log(c) for fit_share, c in
               ((sum(g.players == k for g in games) / len(games), c)
                for k, c in first.scale.items())) == pytest.approx(0.0, abs=1e-12)


def scaled_games(count: int, seed: int, size: int, scale: float, start: int,
                 bots: list[str] = BOTS) -> list[PlayedGame]:
    """Plackett-Luce games at tables of `size` whose strengths are `scale` times TRUE's."""
    games = plackett_luce_games(count, seed, {b: scale * TRUE[b] for b in bots}, size)
    return [dataclasses.replace(g, index=start + g.index) for g in games]


@pytest.mark.slow
def test_each_table_size_gets_its_scale_and_a_late_entry_is_read_at_its_sizes():
    # the same bots, at tables of 2 with the strengths TRUE and at tables of 4 with 0.4 x TRUE
    games = scaled_games(1500, 31, 2, 1.0, 0) + scaled_games(1000, 32, 4, 0.4, 1500)
    fit = fit_games(games, BOTS)
    assert set(fit.scale) == {2, 4}
    # read at the typical table: the scales' geometric mean over the games (1500 : 1000) is 1
    assert fit.scale[2] ** 0.6 * fit.scale[4] ** 0.4 == pytest.approx(1.0)
    assert fit.scale[4] / fit.scale[2] == pytest.approx(0.4, rel=0.15)
    elo = 400 / math.log(10)
    typical = 0.4 ** 0.4               # TRUE at the typical table
    assert fit.strength["a"] - fit.strength["e"] == pytest.approx(2.4 * elo * typical, rel=0.15)
    assert fit.ahead("a", "e", 4) == pytest.approx(1 / (1 + math.exp(-0.4 * 2.4)), abs=0.05)
    # one strength per bot for every size does not fit: it lands between the two
    single = fit_games([g for g in games if g.players == 2], BOTS)
    assert single.scale == {2: 1.0}
    # "late" plays only at tables of 2: the table shows it at that size alone
    late = [dataclasses.replace(g, index=5000 + g.index)
            for g in plackett_luce_games(300, 13, {"late": 0.0, "c": 0.0, "a": 1.2}, 2)]
    everyone = [*BOTS, "late"]
    table = standings(games + late, everyone, seed=3, resamples=30)
    rows = league_table(games + late, everyone, rate_games(games + late, everyone), table)
    by_bot = {row.bot: row for row in rows}
    assert set(by_bot["late"].games_by_size) == {2} and set(by_bot["late"].strength_by_size) == {2}
    assert set(by_bot["a"].strength_by_size) == {2, 4}
    assert by_bot["a"].strength_by_size[4] == pytest.approx(table.scale[4] * by_bot["a"].strength)
    assert "strength_at_4" in to_csv(rows).splitlines()[0]
    console = Console(file=io.StringIO(), width=200)
    render_terminal(rows, {}, console, scale=table.scale)
    printed = console.file.getvalue()
    assert "by size" in printed and "strength is read at this league's typical table" in printed


def test_the_fit_reaches_the_maximum_with_shared_places_forfeits_and_sizes():
    """Newton's stopping rules (a whole step below 1e-6, the Hessian reused once steps are
    tiny) leave the fit at the maximum: the gradient vanishes and any start gives the same
    strengths and scales, resampled weights included."""

    from referee.ratings.plackett import Design

    rng = random.Random(9)
    games = []
    for index in range(900):
        size = rng.choice((2, 3, 4, 5))
        seats = tuple(rng.sample(BOTS, size))
        places = tuple(rng.randint(1, size) for _ in seats)       # shared places often
        forfeited = tuple(rng.random() < 0.05 for _ in seats)
        games.append(game(index, seats, places, forfeited))
    design = Design(games, BOTS)
    weights = np.random.default_rng(3).integers(0, 4, len(design.games)).astype(float)
    theta, log_scale = design.fit_scaled(weights)
    grad, _ = design._joint_newton(theta, weights, log_scale)
    assert np.max(np.abs(grad)) < 1e-7
    other, other_scale = design.fit_scaled(weights, start=np.linspace(-2, 2, len(BOTS)),
                                           start_scale=np.full(len(log_scale), 0.3) * [0, 1, 1, 1])
    assert np.max(np.abs(other - theta)) < 1e-9 and np.max(np.abs(other_scale - log_scale)) < 1e-9


def exact_resample_fits(design, weight_rows, start, start_scale):
    """The bootstrap's fits the way they were made before `fit_resamples`: each resample by
    `fit_scaled` (Newton with a line search) from the point estimate."""
    for row in weight_rows:
        yield design.fit_scaled(row, start=start, start_scale=start_scale)


@pytest.mark.parametrize("sizes", [(2,), (3,), (4,), (2, 3, 4, 5)])
@pytest.mark.slow
def test_resample_fits_give_the_exact_fits_and_intervals(sizes, monkeypatch):
    """The bootstrap's resamples, fitted with one Hessian each (`Design.fit_resamples`), land
    on the maximum the exact fit finds (within 1e-8 of a strength, 2e-6 Elo) at tables of 2,
    3, 4 and mixed sizes, and the table's intervals and rank ranges are the exact ones."""

    from referee.ratings.plackett import ELO, Design

    games = []
    for k, size in enumerate(sizes):
        games += scaled_games(600 // len(sizes), 40 + size, size, 1.0 - 0.1 * k, 1000 * size)
    design = Design(games, BOTS)
    theta, log_scale = design.fit_scaled()
    rows = np.random.default_rng(7).multinomial(len(games), np.full(len(games), 1 / len(games)),
                                                size=60).astype(np.float64)
    fast = list(design.fit_resamples(rows, theta, log_scale))
    assert design.fallbacks == 0           # every resample took the one-Hessian way
    for (got, got_scale), (want, want_scale) in zip(
            fast, exact_resample_fits(design, rows, theta, log_scale), strict=True):
        assert np.max(np.abs(got - want)) < 1e-8
        assert np.max(np.abs(got_scale - want_scale)) < 1e-8
    table = standings(games, BOTS, seed=4, resamples=120)
    monkeypatch.setattr(Design, "fit_resamples", exact_resample_fits)
    exact = standings(games, BOTS, seed=4, resamples=120)
    assert table.order == exact.order and table.strength == exact.strength
    for bot in BOTS:
        assert table.low[bot] == pytest.approx(exact.low[bot], abs=1e-8 * ELO)
        assert table.high[bot] == pytest.approx(exact.high[bot], abs=1e-8 * ELO)
    assert (table.rank_low, table.rank_high) == (exact.rank_low, exact.rank_high)
    assert table.separated_from_next() == exact.separated_from_next()


def test_a_resample_far_from_the_point_estimate_gets_the_exact_fit():
    """A tiny league whose resamples move strengths a lot: the steps that do not settle hand
    the resample to the exact fit, and the result is still the exact one."""

    from referee.ratings.plackett import Design

    games = [game(i, ("a", "b"), (1, 2) if i % 5 else (2, 1)) for i in range(10)]
    design = Design(games, ["a", "b"])
    theta, log_scale = design.fit_scaled()
    # one game weighted 1000 times: its winner's strength goes from 0.6 to about 3.5
    rows = np.array([[1.0] * 8 + [2.0, 0.0], [1000.0] + [0.0] * 9, [0.0] * 9 + [1000.0]])
    fast = list(design.fit_resamples(rows, theta, log_scale))
    assert design.fallbacks == 2
    for (got, _), (want, _) in zip(fast, exact_resample_fits(design, rows, theta, log_scale),
                                   strict=True):
        assert np.max(np.abs(got - want)) < 1e-8


def test_the_bootstrap_takes_one_hessian_per_resample(monkeypatch):
    """The bootstrap's work is bounded: beyond the point fit's, one Hessian shared by every
    resample and one of each resample's own (counted, so that the bound does not depend on
    the machine's speed)."""
    from referee.ratings.plackett import Design

    games = plackett_luce_games(3000, seed=11, size=4)
    hessians = {"count": 0}
    newton = Design._theta_newton

    def counted(self, *args, **kwargs):
        hessians["count"] += 1
        return newton(self, *args, **kwargs)

    monkeypatch.setattr(Design, "_theta_newton", counted)
    fit_games(games, BOTS)
    point_fit = hessians["count"]
    hessians["count"] = 0
    standings(games, BOTS, seed=2, resamples=50)
    # the point fit, one for the intervals' curvature (and their bounds), one shared by the
    # resamples, one each
    assert hessians["count"] <= point_fit + 2 + 50


def test_the_size_model_is_tested_and_the_table_says_when_the_games_reject_it():
    """One scale per table size against free strengths per size: games drawn from the model
    pass; games where the order at tables of 2 is the reverse of that at tables of 4 fail, and
    the table then shows each size's own strengths."""
    names = [f"b{i}" for i in range(5)]
    rng = np.random.default_rng(5)
    strengths = np.linspace(-1.5, 1.5, 5)
    fits = synthetic_league(rng, strengths, 120, (2, 4), SCALES)
    held = standings(fits, names, seed=1, resamples=20).size_test
    assert held is not None and not held.rejected and held.df == (2 - 1) * (5 - 2)
    at_two = synthetic_league(rng, strengths, 60, (2,), SCALES)
    at_four = synthetic_league(rng, strengths[::-1], 60, (4,), SCALES)
    games = at_two + [dataclasses.replace(g, index=len(at_two) + g.index) for g in at_four]
    fit = standings(games, names, seed=1, resamples=20)
    # the reverse order's best per-size model has no scale at tables of 4 (it tends to 0), so
    # the statistic is where the climb to it stops: about 30 on 3 df, p about 1e-6
    assert fit.size_test is not None and fit.size_test.rejected and fit.size_test.p < 1e-5
    by_size = fit.size_test.by_size
    assert by_size[2]["b4"] > 0 > by_size[4]["b4"]        # the reversal, at each size alone
    rows = league_table(games, names, rate_games(games, names), fit)
    console = Console(file=io.StringIO(), width=200)
    render_terminal(rows, {}, console, scale=fit.scale, size_test=fit.size_test)
    printed = console.file.getvalue()
    assert "one scale per table size does NOT fit these games" in printed
    assert f"b4: 2p {by_size[2]['b4']:+.0f}, 4p {by_size[4]['b4']:+.0f}" in printed
    one_size = standings(at_two, names, seed=1, resamples=20)
    assert one_size.size_test is None


def test_chi_square_tail():
    from referee.ratings.plackett import chi2_sf

    assert chi2_sf(3.841459, 1) == pytest.approx(0.05, abs=1e-6)
    assert chi2_sf(18.307038, 10) == pytest.approx(0.05, abs=1e-6)
    assert chi2_sf(0.0, 3) == 1.0 and chi2_sf(200.0, 3) < 1e-40


def test_the_bootstrap_draws_one_resample_at_a_time_with_equal_chances():
    """The resamples' draws are multinomial with equal chances per unit (their mean and
    variance), seeded, and made one resample at a time: the bootstrap of many games never
    holds a count per unit and resample (8 bytes each: 240 MB at 100,000 games, 300 resamples)."""
    import inspect

    from referee.ratings.intervals import unit_draws

    draws = np.array(list(unit_draws(400, 500, seed=3)))
    assert draws.shape == (500, 400) and (draws.sum(axis=1) == 400).all()
    assert abs(draws.mean() - 1) < 1e-12 and abs(draws.var() - (1 - 1 / 400)) < 0.03
    assert (np.array(list(unit_draws(400, 500, seed=3))) == draws).all()
    assert not (np.array(list(unit_draws(400, 500, seed=4))) == draws).all()
    lazy = unit_draws(100_000, 300, seed=3)      # one resample's counts when asked for
    assert inspect.isgenerator(lazy) and next(lazy).shape == (100_000,)

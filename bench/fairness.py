"""Benchmark: do the ratings keep their promises?

Everything is simulated in process (engine bots, no gRPC), so that thousands of gauntlets and
leagues run in minutes. Each section prints its counts; the last lines are the promises (of
issues 24 and 32), each alone on its line ("not met" where a target is not):

1. **Gauntlet false positives.** A pool of real gauntlet pairs of two equally strong bots
   (greedy with 30% random moves, different random choices, against a field of three such
   bots, tables of 4) is played once; each simulated gauntlet draws its pairs from the pool
   with replacement and swaps candidate and baseline with probability 1/2 (two equal bots are
   exchangeable, so this is exactly "equal bots"). The test at the defaults (--delta 50,
   alpha 0.05) is run on each; beside it, on the very same pairs, the test before it (the same
   bets, with the gain to detect from the baseline's mean score), the normal approximation
   with one variance for both hypotheses and Wald's bounds used before that, and a GSPRT with a
   normal profile likelihood.
2. **Gauntlet errors on spread fields and table mixes.** Bots exactly --delta Elo apart cannot
   be made from engine policies, so gauntlets are drawn from the model the delta is defined
   on: at each table (its size drawn from the mix: 4, 2-5, 3-5 or 2) k - 1 of six opponents,
   evenly spread over -S..+S league-table Elo around the baseline (S = 0 at tables of 4, 100,
   200, 300), are seated at random, and they and the tested bot finish in the order of
   strength (times the size's scale of sprt.py's TABLE_SCALES over the mix's typical one, as
   --delta is read) plus Gumbel noise (which is Plackett-Luce); the opponents' noise is the
   same in both games of a pair and the tested seat's with probability 0.3 (the pairing), so
   that a pair's difference varies about as much as with the engine bots. Per mix and S, the
   test now (each opponent's chance from both tested bots' games, the gain bet against at the
   cautious end of its estimate) and the test before (from the baseline's games, at the
   estimate): false "not better" for a candidate --delta better and false "better" for an
   equal one, with the median pairs of each, and a verdict against the test's own bounds
   (margin x beta and margin x alpha, 0.035 at the defaults). Then the games
   two identical deterministic bots (greedy against itself, field random and greedy, tables
   of 3, as in tests/test_gauntlet.py) need to settle "not better", now and before.
3. **--until-settled with two equal bots.** A pool of real games at tables of 3 of a strong
   bot (greedy) and two equal ones (greedy with 60% random moves) is played once; each run
   plays blocks of 75 games drawn from it (the twins' names swapped with probability 1/2 per
   game) and stops, as --until-settled does, when every pair of neighbours is separated, after
   at most 10 blocks. A run that stops has declared the twins separated. The rule of the
   league (a gap of z bootstrap standard deviations, z for 10 looks) is measured beside the
   rule before (95% intervals apart at every look), on the same games and fits.
4. **Duplicate seating.** For each seed a plain league and a --duplicate league of four bots
   of known order (greedy with 0, 40, 70 and 100% random moves) play 128 games at tables of
   4; the variance over seeds of each fitted gap between neighbours, duplicate over plain,
   summed over the three gaps, with a 95% bootstrap interval over seeds, for two kinds of
   bot: with random streams of their own (noisy) and deterministic ones whose "random" moves
   are a hash of what they see (hashed), so that all their luck is in the dice.

5. **Intervals against known strengths.** Synthetic leagues drawn from the
   Plackett-Luce model with unequal per-size scales (1, 0.4, 0.35, 0.3 at tables of 2, 3, 4,
   5, near the engine's; "2-5=": tables of 2-5 with one scale for all, away from the scales
   the fit's prior is centred on), strengths evenly spread over 200 (narrow), 500 (middling)
   or 1000 Elo (wide) at tables of 2, each spread a cell of its own: for 4, 8 and 12 bots at
   20, 60 and 200 games per bot, at tables of 4 and of 2-5, how often the 95% interval holds
   the true strength (at the league's typical table), for every bot and beside it for the
   strongest and weakest alone; at least 2400 intervals per cell (+-0.009; of them at least
   400 extremes, +-0.021), each cell with its verdict against 0.93-0.97 (both rates).
   The symmetric intervals of the games' curvature are measured beside them on the same
   leagues (--scale-prior-at-one: the fit's scale prior centred on one scale for
   every size, as before). Beside it, how
   often the size model's likelihood-ratio test rejects leagues drawn from the model (target
   0.05; "not met" above 0.08).

Besides: the correlation of the two scores of a gauntlet pair (how much pairing can cancel),
the goodness of fit of the global fit per table size (observed against predicted
finishing-ahead rates, one scale per size against one strength for all sizes), TrueSkill with
the league default tau = 0 beside tau = 25/300 and the global fit (games until settled), and
the global fit's independence of the order of the games.

Run: python bench/fairness.py            (the full run, some minutes on a quiet 2-core machine)
     python bench/fairness.py --quick    (small counts: checks that it runs; no claims)
     python bench/fairness.py --only settled,duplicate   (some sections, e.g. side by side)
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulated import (  # noqa: E402
    GlobalFit,
    fit_games,
    hashed_greedy,
    noisy_greedy,
    pair_pool,
    play_scheduled,
    synthetic_league,
    true_typical,
)

from referee.engine import preset  # noqa: E402
from referee.league.schedule import make_schedule  # noqa: E402
from referee.ratings import plackett  # noqa: E402
from referee.ratings.intervals import (  # noqa: E402
    fit_with_interval,
    look_z,
    standings,
    wald_interval,
)
from referee.ratings.plackett import (  # noqa: E402
    ELO,
    Design,
    size_test,
    strength_sd,
    to_elo,
)
from referee.ratings.results import PlayedGame  # noqa: E402
from referee.ratings.sprt import (  # noqa: E402
    BETTER,
    INCONCLUSIVE,
    NOT_BETTER,
    Pair,
    SequentialTest,
    SprtParams,
    delta_by_size,
    logistic,
    logit,
)
from referee.ratings.trueskill import RatingParams, rate_games  # noqa: E402

RULES = preset("classic")
PER_ELO = math.log(10) / 400


# --- 1 and 2: the gauntlet -----------------------------------------------------------------

def run_test(pairs: Iterable[Pair], params: SprtParams) -> tuple[str, int]:
    """The gauntlet's test on `pairs` (one table size: --delta in Elo at it): its verdict and
    the pairs it took."""
    test = SequentialTest(params)
    for pair in pairs:
        state = test.add(pair)
        if state.verdict is not None:
            return state.verdict, state.pairs
    return test.current.verdict or INCONCLUSIVE, test.current.pairs


def gain_before(params: SprtParams, baseline_score: float) -> float:
    """The gain the test before this one bet on: from the baseline's mean score alone."""
    return logistic(logit(baseline_score) + params.delta * PER_ELO) - baseline_score


def run_before(pairs: Iterable[Pair], params: SprtParams) -> tuple[str, int]:
    """The test by betting as it was before (referee 8c74e58): the same bets, but d from the
    baseline's mean score over all its opponents instead of from the opponents seated."""
    evidence = against = total = square = base = 0.0
    n = 0
    for n, pair in enumerate(pairs, start=1):
        k = n - 1
        mean = total / k if k else 0.0
        var = (square - k * mean * mean + 0.25) / n
        gain = gain_before(params, (base + 0.5) / n)
        stake = min(0.5, gain / (var + gain * gain))
        diff = pair.candidate - pair.baseline
        evidence += math.log1p(stake * diff)
        against += math.log1p(stake * (gain - diff))
        total, square, base = total + diff, square + diff * diff, base + pair.baseline
        if n >= params.min_pairs:
            if evidence >= params.better_at:
                return BETTER, n
            if against >= params.not_better_at:
                return NOT_BETTER, n
        if n >= params.max_pairs:
            break
    return INCONCLUSIVE, n


def run_normal(pairs: Iterable[Pair], params: SprtParams, profile: bool) -> tuple[str, int]:
    """The GSPRTs tried before: a normal likelihood, one variance for both hypotheses and
    Wald's bounds (var floor 0.01), or (`profile`) a variance per hypothesis,
    LLR = n/2 log(sum D^2 / sum (D - d)^2), with bounds log(1/alpha) and log(beta); both with
    d from the baseline's mean score (`gain_before`)."""
    total = square = base = 0.0
    upper = math.log(1 / params.alpha) if profile else math.log((1 - params.beta) / params.alpha)
    lower = math.log(params.beta) if profile else math.log(params.beta / (1 - params.alpha))
    n = 0
    for n, pair in enumerate(pairs, start=1):
        diff = pair.candidate - pair.baseline
        total, square, base = total + diff, square + diff * diff, base + pair.baseline
        gain = gain_before(params, (base + 0.5) / (n + 1))
        if profile:
            llr = n / 2 * math.log((square + n * 1e-3)
                                   / (square - 2 * gain * total + n * gain * gain + n * 1e-3))
        else:
            mean = total / n
            var = max((square - n * mean * mean) / (n - 1), 0.01) if n > 1 else 0.01
            llr = n * gain * (2 * mean - gain) / (2 * var)
        if n >= params.min_pairs:
            if llr >= upper:
                return BETTER, n
            if llr <= lower:
                return NOT_BETTER, n
        if n >= params.max_pairs:
            break
    return INCONCLUSIVE, n


def equal_pool(pairs: int, seed: int) -> list[Pair]:
    """Real gauntlet pairs of two equal bots (greedy with 30% random moves)."""
    policies = {name: noisy_greedy(0.3, name) for name in ("twin-a", "twin-b", "f0", "f1", "f2")}
    return pair_pool(RULES, policies, "twin-a", "twin-b", ["f0", "f1", "f2"], (4, 4), pairs,
                     seed)


def resampled(pool: list[Pair], count: int, rng: random.Random) -> list[Pair]:
    """`count` pairs drawn from `pool`, each swapped with probability 1/2 (equal bots)."""
    drawn = []
    for _ in range(count):
        pair = pool[rng.randrange(len(pool))]
        drawn.append(pair if rng.random() < 0.5 else pair.swapped())
    return drawn


def model_field(spread: float) -> dict[str, float]:
    """Six opponents evenly spread over -spread..+spread Elo around the baseline (0)."""
    return {f"o{i}": float(x) for i, x in enumerate(np.linspace(-spread, spread, 6))}


def model_pairs(rng: np.random.Generator, gap_elo: float, field: dict[str, float],
                rho: float = 0.3, chunk: int = 100,
                sizes: Sequence[int] = (4,)) -> Iterator[Pair]:
    """Gauntlet pairs from the Plackett-Luce model with the per-size scales the test assumes
    (`TABLE_SCALES`), made as they are needed: each pair's table size drawn from `sizes`, the
    candidate `gap_elo` league-table Elo above the baseline (strength 0), k - 1 opponents of
    `field` (league-table Elo) seated at random; at a table of k every gap is its league-table
    value times the size's scale over the mix's typical one (as `delta_by_size` reads --delta).
    The opponents' Gumbel noise is shared by both games of a pair, the tested seat's with
    probability `rho` (the pairing)."""
    names = list(field)
    strengths = np.asarray([field[name] for name in names]) / ELO
    at = delta_by_size(1.0, list(sizes))      # each size's scale over the typical one
    widest = max(sizes) - 1
    while True:
        size = rng.choice(np.asarray(sizes), size=chunk)
        factor = np.asarray([at[int(k)] for k in size])
        seated = np.argsort(rng.random((chunk, len(names))), axis=1)[:, :widest]
        others = factor[:, None] * strengths[seated] + rng.gumbel(size=(chunk, widest))
        mine = rng.gumbel(size=chunk)
        theirs = np.where(rng.random(chunk) < rho, mine, rng.gumbel(size=chunk))
        candidate = (factor * gap_elo / ELO + mine)[:, None] > others
        baseline = theirs[:, None] > others
        for row in range(chunk):
            seats = int(size[row]) - 1
            yield Pair(seats + 1, tuple(names[j] for j in seated[row, :seats]),
                       tuple(candidate[row, :seats].astype(float).tolist()),
                       tuple(baseline[row, :seats].astype(float).tolist()))


TESTS = {"now": ("by betting, d from the seated opponents (now)", run_test),
         "before": ("by betting, d from the mean score (before)", run_before),
         "normal": ("normal, one variance, Wald bounds (earlier)",
                    lambda pairs, params: run_normal(pairs, params, profile=False)),
         "profile": ("normal profile likelihood",
                     lambda pairs, params: run_normal(pairs, params, profile=True))}
SPREADS = (0.0, 100.0, 200.0, 300.0)


def gauntlet_section(args) -> dict[str, tuple[int, int]]:
    params = SprtParams()
    print(f"\n1. gauntlet, equal bots: {args.gauntlets} gauntlets resampled from "
          f"{args.pool} real pairs (greedy 30% random twins, field of 3, tables of 4); "
          f"--delta {params.delta:g}, alpha {params.alpha}, beta {params.beta}, budget "
          f"{params.max_games} games", flush=True)
    pool = equal_pool(args.pool, 2024)
    diffs = [pair.candidate - pair.baseline for pair in pool]
    scores = [x for pair in pool for x in (pair.candidate, pair.baseline)]
    print(f"   pool: mean difference {statistics.fmean(diffs):+.4f}, sd "
          f"{statistics.stdev(diffs):.3f}; correlation of the two scores of a pair "
          f"{np.corrcoef([p.candidate for p in pool], [p.baseline for p in pool])[0, 1]:.2f}; "
          f"mean score {statistics.fmean(scores):.3f}")
    rng = random.Random(1)
    results: dict[str, list[tuple[str, int]]] = {key: [] for key in TESTS}
    for _ in range(args.gauntlets):
        pairs = resampled(pool, params.max_pairs, rng)
        for key, (_, test) in TESTS.items():
            results[key].append(test(pairs, params))
    print(f"   {'test':<48} {'better':>7} {'rate':>6} {'median pairs':>13}")
    for key, (label, _) in TESTS.items():
        better = sum(verdict == BETTER for verdict, _ in results[key])
        pairs_taken = statistics.median(n for _, n in results[key])
        print(f"   {label:<48} {better:>7} {better / args.gauntlets:>6.3f} {pairs_taken:>13.0f}")
    new_fp = sum(v == BETTER for v, _ in results["now"])
    outcome = {"fp": (new_fp, args.gauntlets)}
    outcome.update(model_section(args, params))
    outcome.update(identical_section(params))
    return outcome


GAUNTLET_MIXES = {"4": (4,), "2-5": (2, 3, 4, 5), "3-5": (3, 4, 5), "2": (2,)}
MIX_NAMES = ", ".join(GAUNTLET_MIXES)


class PooledTest(SequentialTest):
    """The test before (referee e742e89): the baseline's chance against each opponent from its
    own games alone, pooled over table sizes, and the gain bet against at that estimate."""

    caution = 0.0
    from_both = False


def run_mixed(pairs: Iterable[Pair], params: SprtParams, sizes: Sequence[int],
              kind: type[SequentialTest] = SequentialTest) -> tuple[str, int]:
    """The gauntlet's test (or `kind`) on `pairs` of a gauntlet at table sizes `sizes`, with
    --delta read at each size as the CLI reads it (`delta_by_size`)."""
    test = kind(params, delta_by_size(params.delta, list(sizes)))
    for pair in pairs:
        state = test.add(pair)
        if state.verdict is not None:
            return state.verdict, state.pairs
    return test.current.verdict or INCONCLUSIVE, test.current.pairs


def model_section(args, params: SprtParams) -> dict[str, tuple[int, int]]:
    """Section 2: false "not better" for a candidate --delta better and false "better" for an
    equal one, on model fields of each spread and at each table mix, now and before; each line
    judged against the test's own bounds (margin * beta and margin * alpha)."""
    miss_at, fp_at = params.margin * params.beta, params.margin * params.alpha
    print(f"\n2. gauntlet on the Plackett-Luce model: {args.power_runs} gauntlets per line "
          f"and candidate; each pair's table size drawn from the mix, k - 1 of six opponents "
          f"spread evenly over +-S league-table Elo around the baseline seated at random, every "
          f"gap at a table of k its league-table value times the size's scale (TABLE_SCALES) "
          f"over the mix's typical one; the tested seat's noise shared with probability 0.3; "
          f"the candidate {params.delta:g} league-table Elo better (false 'not better') or "
          f"equal (false 'better'). now: each opponent's chance from both tested bots' games, "
          f"the gain bet against at the cautious end of +-{SequentialTest.caution:g} standard "
          f"errors; before: from the baseline's games, at the estimate. Verdict against the "
          f"test's own bounds, {miss_at:.3f} and {fp_at:.3f} (it promises {params.beta:g} and "
          f"{params.alpha:g})", flush=True)
    model = np.random.default_rng(7)
    worst = {"miss": (0, 1), "model_fp": (0, 1)}
    print(f"   {'tables':>6} {'S':>4} {'test':<7} {'+delta: not better':>19} {'better':>7} "
          f"{'median pairs':>12} {'equal: better':>14} {'median pairs':>12}  verdict")
    tests: dict[str, type[SequentialTest]] = {"now": SequentialTest, "before": PooledTest}
    mixes = args.gauntlet_mixes.split(",") if args.gauntlet_mixes else list(GAUNTLET_MIXES)
    for mix in mixes:
        if mix not in GAUNTLET_MIXES:
            raise SystemExit(f"--gauntlet-mixes: {mix!r} not one of {MIX_NAMES}")
    spreads = [float(x) for x in args.gauntlet_spreads.split(",")] if args.gauntlet_spreads \
        else SPREADS
    for mix in mixes:
        sizes = GAUNTLET_MIXES[mix]
        for spread in spreads:
            if spread == 0 and mix != "4":
                continue
            field = model_field(spread)
            for key, kind in tests.items():
                if key == "before" and args.no_before:
                    continue
                good = [run_mixed(model_pairs(model, params.delta, field, sizes=sizes), params,
                                  sizes, kind) for _ in range(args.power_runs)]
                equal = [run_mixed(model_pairs(model, 0.0, field, sizes=sizes), params, sizes,
                                   kind) for _ in range(args.power_runs)]
                found = Counter(verdict for verdict, _ in good)
                missed = found[NOT_BETTER]
                fp = sum(verdict == BETTER for verdict, _ in equal)
                runs = args.power_runs
                # by counts: 14/400 is at a bound of 0.035, not above it in floating point
                fails = [f"not better {missed / runs:.3f}"] if missed > miss_at * runs + 1e-9 \
                    else []
                fails += [f"better {fp / runs:.3f}"] if fp > fp_at * runs + 1e-9 else []
                print(f"   {mix:>6} {spread:>4.0f} {key:<7} {missed:>5}/{runs} "
                      f"{missed / runs:.3f}      {found[BETTER]:>7} "
                      f"{statistics.median(n for _, n in good):>12.0f} {fp:>5}/{runs} "
                      f"{fp / runs:.3f} {statistics.median(n for _, n in equal):>12.0f}  "
                      f"{'MISS ' + ', '.join(fails) if fails else 'ok'}", flush=True)
                if key == "now":
                    if missed / runs >= worst["miss"][0] / worst["miss"][1]:
                        worst["miss"] = (missed, runs)
                    if fp / runs >= worst["model_fp"][0] / worst["model_fp"][1]:
                        worst["model_fp"] = (fp, runs)
    return worst


def identical_section(params: SprtParams) -> dict[str, tuple[int, int]]:
    """Pairs two identical deterministic bots need to settle "not better", before and now:
    greedy against greedy, field random and greedy, tables of 3 (as in the CLI's test)."""
    policies = {"greedy": noisy_greedy(0.0), "greedy-baseline": noisy_greedy(0.0),
                "random": noisy_greedy(1.0, "r"), "greedy-field": noisy_greedy(0.0)}
    pool = pair_pool(RULES, policies, "greedy", "greedy-baseline", ["random", "greedy-field"],
                     (3, 3), params.max_pairs // 4, 11)
    now, before = run_test(pool, params), run_before(pool, params)
    print(f"\n   identical bots (greedy against itself, field random and greedy, tables of 3): "
          f"'{now[0]}' after {now[1]} pairs ({2 * now[1]} games); before: '{before[0]}' after "
          f"{before[1]} pairs ({2 * before[1]} games)")
    return {"identical": (2 * now[1], 2 * before[1])}


def mark(ok: bool) -> str:
    """'' where a target is met, ' not met' where it is not."""
    return "" if ok else " not met"


def pairing_section(args) -> None:
    """How much of the luck pairing can cancel: the correlation of the two scores of a pair,
    for twins with many random moves and for two versions that mostly play alike."""
    print(f"\nPairing: correlation of the candidate's and the baseline's score in "
          f"{args.pool // 2} pairs (field of 3 greedy-30%, tables of 4)", flush=True)
    kinds = {
        "greedy 30% random twins": (noisy_greedy(0.3, "a"), noisy_greedy(0.3, "b")),
        "greedy 90% random twins": (noisy_greedy(0.9, "a"), noisy_greedy(0.9, "b")),
        "greedy against greedy 5% random (hashed)": (noisy_greedy(0.0), hashed_greedy(0.05)),
    }
    for label, (candidate, baseline) in kinds.items():
        policies = {"c": candidate, "b": baseline,
                    **{f"f{i}": noisy_greedy(0.3, f"f{i}") for i in range(3)}}
        pool = pair_pool(RULES, policies, "c", "b", ["f0", "f1", "f2"], (4, 4),
                         args.pool // 2, 99)
        corr = np.corrcoef([p.candidate for p in pool], [p.baseline for p in pool])[0, 1]
        print(f"   {label:<44} {corr:.2f}")


# --- 3: --until-settled --------------------------------------------------------------------

SETTLE_BOTS = ["strong", "twin-a", "twin-b"]


def settle_pool(games: int, seed: int) -> list[PlayedGame]:
    policies = {"strong": noisy_greedy(0.0, "s"), "twin-a": noisy_greedy(0.6, "a"),
                "twin-b": noisy_greedy(0.6, "b")}
    return [play_scheduled(RULES, game, policies)
            for game in make_schedule(SETTLE_BOTS, games, 3, seed, False)]


def swapped(game: PlayedGame, index: int, swap: bool) -> PlayedGame:
    names = {"twin-a": "twin-b", "twin-b": "twin-a"} if swap else {}
    return dataclasses.replace(game, index=index,
                               bots=tuple(names.get(bot, bot) for bot in game.bots))


def settled_section(args) -> tuple[int, int]:
    looks = args.blocks
    print(f"\n3. --until-settled, two equal bots and a strong one: {args.settled_runs} runs, "
          f"blocks of {args.block} games at tables of 3 (drawn from {args.settle_pool} real "
          f"games), at most {looks} blocks; {args.resamples} bootstrap resamples per look; "
          f"z = {look_z(looks):.2f}", flush=True)
    pool = settle_pool(args.settle_pool, 77)
    rng = random.Random(5)
    stopped = {"now": [], "before": []}
    for run in range(args.settled_runs):
        games: list[PlayedGame] = []
        decided: dict[str, int | None] = {"now": None, "before": None}
        for block in range(1, looks + 1):
            for _ in range(args.block):
                games.append(swapped(pool[rng.randrange(len(pool))], len(games),
                                     rng.random() < 0.5))
            fit = standings(games, SETTLE_BOTS, run, resamples=args.resamples, looks=looks)
            if decided["now"] is None and not fit.unresolved():
                decided["now"] = block
            apart = all(fit.low[a] > fit.high[b] for a, b in zip(fit.order, fit.order[1:],
                                                                strict=False))
            if decided["before"] is None and apart:
                decided["before"] = block
            if None not in decided.values():
                break
        for key in stopped:
            stopped[key].append(decided[key])
    for key, label in (("now", f"gap z > {look_z(looks):.2f} (the league's rule)"),
                       ("before", "95% intervals apart at each look (before)")):
        count = sum(block is not None for block in stopped[key])
        blocks = Counter(block for block in stopped[key] if block is not None)
        print(f"   {label:<44} twins separated in {count}/{args.settled_runs}; at blocks "
              f"{dict(sorted(blocks.items()))}")
    return sum(b is not None for b in stopped["now"]), args.settled_runs


# --- 4: duplicate seating ------------------------------------------------------------------

LEVELS = {"p0.0": 0.0, "p0.4": 0.4, "p0.7": 0.7, "p1.0": 1.0}   # strongest first
BOTS = list(LEVELS)


def fitted_gaps(games: list[PlayedGame]) -> list[float]:
    fit = fit_games(games, BOTS)
    return [fit.strength[a] - fit.strength[b]  # type: ignore[operator]
            for a, b in zip(BOTS, BOTS[1:], strict=False)]


def variance_ratio(plain: np.ndarray, duplicate: np.ndarray,
                   rng: np.random.Generator, draws: int = 2000) -> tuple[float, float, float]:
    """sum of the gaps' variances over seeds, duplicate / plain, with a 95% percentile
    bootstrap interval over seeds."""
    def ratio(rows: np.ndarray) -> float:
        return float(np.var(duplicate[rows], axis=0, ddof=1).sum()
                     / np.var(plain[rows], axis=0, ddof=1).sum())

    seeds = len(plain)
    with np.errstate(divide="ignore", invalid="ignore"):   # a draw of one seed repeated
        boot = [ratio(rng.integers(0, seeds, seeds)) for _ in range(draws)]
    low, high = np.percentile([b for b in boot if math.isfinite(b)], [2.5, 97.5])
    return ratio(np.arange(seeds)), float(low), float(high)


def duplicate_section(args) -> tuple[float, float, float, int]:
    print(f"\n4. duplicate seating: {args.duplicate_seeds} seeds x {args.duplicate_games} games "
          f"per seating, tables of 4; variance over seeds of the fitted gaps between "
          f"neighbours (Elo^2), duplicate / plain", flush=True)
    worst = None
    for kind, family in (("noisy", noisy_greedy), ("hashed", hashed_greedy)):
        policies = {name: family(p, name) for name, p in LEVELS.items()}
        gaps: dict[bool, list[list[float]]] = {False: [], True: []}
        for seed in range(1, args.duplicate_seeds + 1):
            for duplicate in (False, True):
                schedule = make_schedule(BOTS, args.duplicate_games, 4, 1000 + seed, duplicate)
                gaps[duplicate].append(fitted_gaps(
                    [play_scheduled(RULES, game, policies) for game in schedule]))
        plain, dup = np.array(gaps[False]), np.array(gaps[True])
        ratio, low, high = variance_ratio(plain, dup, np.random.default_rng(3))
        print(f"   {kind:<7} plain sd {' '.join(f'{v:5.1f}' for v in plain.std(0, ddof=1))}; "
              f"duplicate sd {' '.join(f'{v:5.1f}' for v in dup.std(0, ddof=1))}; "
              f"ratio {ratio:.2f} [{low:.2f}, {high:.2f}]", flush=True)
        if worst is None or ratio > worst[0]:
            worst = (ratio, low, high)
    assert worst is not None
    return (*worst, args.duplicate_seeds)


# --- 5: interval coverage at any table mix --------------------------------------------------

TRUE_SCALES = {2: 1.0, 3: 0.4, 4: 0.35, 5: 0.3}   # unequal, near the engine's (section "sizes")
MIXES = {"4": (4,), "2-5": (2, 3, 4, 5), "2-5=": (2, 3, 4, 5)}
#: each mix's true scales: "2-5=" is tables of 2-5 whose bots are as far apart at every size,
#: away from the scales the fit's prior is centred on (plackett.py, CENTRED_SCALE_PRIOR)
MIX_SCALES = {"4": TRUE_SCALES, "2-5": TRUE_SCALES, "2-5=": {2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0}}
COVER_BOTS = (4, 8, 12)
COVER_GAMES = (20, 60, 200)
#: the spread of strengths (Elo at tables of 2, strongest to weakest) of each league shape:
#: cells of their own, so that the wide leagues' misses are not averaged away
COVER_SPREADS = {"narrow": 200.0, "middling": 500.0, "wide": 1000.0}


#: the coverage the 95% intervals must reach in every cell
COVER_TARGET = (0.93, 0.97)
#: the interval kinds measured side by side on the same leagues
COVER_KINDS = {"now": "profile-likelihood bounds at the games' width",
               "before": "the games' curvature, symmetric"}


@dataclasses.dataclass
class Cell:
    """How often each kind of interval held the true strength in one cell: per kind, (covered,
    intervals) over every bot and over the extremes (the strongest and the weakest)."""

    every: dict[str, list[int]]
    extremes: dict[str, list[int]]

    def verdict(self, kind: str = "now") -> str:
        """'ok' when both rates are within COVER_TARGET, else what is off."""
        low, high = COVER_TARGET
        misses = [f"{label} {rate:.3f}" for label, (hit, n) in
                  (("all", self.every[kind]), ("extremes", self.extremes[kind]))
                  if not low <= (rate := hit / n) <= high]
        return "ok" if not misses else "MISS " + ", ".join(misses)


def coverage_cell(rng: np.random.Generator, bots: int, per_bot: int, sizes: Sequence[int],
                  intervals: int, spread: float,
                  scales: dict[int, float] = TRUE_SCALES) -> Cell:
    """Synthetic leagues (Plackett-Luce with the per-size `scales`; strengths evenly
    spread over `spread` Elo at tables of 2) until `intervals` intervals are in, each kind of
    COVER_KINDS (intervals.py's `fit_with_interval`, and the
    Wald interval of plackett.py's `strength_sd`) on the same leagues."""
    names = [f"b{i}" for i in range(bots)]
    cell = Cell({kind: [0, 0] for kind in COVER_KINDS}, {kind: [0, 0] for kind in COVER_KINDS})
    while cell.every["now"][1] < intervals:
        width = spread / ELO
        strengths = np.linspace(-width / 2, width / 2, bots)
        games = synthetic_league(rng, strengths, per_bot, sizes, scales)
        truth = np.array([true_typical(games, strengths, scales)[bot] for bot in names])
        design = Design(games, names)
        theta, log_scale = design.fit_scaled()
        point, profiled_low, profiled_high = fit_with_interval(design, theta, log_scale)
        for kind in COVER_KINDS:
            if kind == "now":
                low, high = profiled_low, profiled_high
            else:
                sd = strength_sd(design, theta, log_scale)
                assert sd is not None
                low, high = wald_interval(point, sd)
            assert low is not None and high is not None
            inside = (low <= truth) & (truth <= high)
            for counts, hits in ((cell.every[kind], inside), (cell.extremes[kind],
                                                              inside[[0, bots - 1]])):
                counts[0] += int(hits.sum())
                counts[1] += len(hits)
    return cell


def cover_cells(text: str | None) -> set[tuple[str, int, int, str]] | None:
    """`--cover-cells` ('2-5:8:20,2-5:12:20:wide': tables:bots:games per bot[:spread], every
    spread where none is named) as a set; None for every cell."""
    if not text:
        return None
    cells = set()
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) not in (3, 4) or not parts[1].isdigit() or not parts[2].isdigit():
            raise SystemExit(f"--cover-cells: {item!r} is not tables:bots:games[:spread]")
        mix, bots, games = parts[:3]
        if mix not in MIXES:
            raise SystemExit(f"--cover-cells: tables {mix!r} not one of {', '.join(MIXES)}")
        spreads = parts[3:] or list(COVER_SPREADS)
        for spread in spreads:
            if spread not in COVER_SPREADS:
                raise SystemExit(f"--cover-cells: spread {spread!r} not one of "
                                 f"{', '.join(COVER_SPREADS)}")
            cells.add((mix, int(bots), int(games), spread))
    return cells


def coverage_section(args) -> dict[str, tuple[int, int]]:
    """The 95% intervals' coverage of the true strength, per number of bots, games
    per bot and table mix, now and before: returns the worst cell's and the extremes' worst
    counts (now)."""
    print(f"\n5. 95% intervals against known strengths: synthetic leagues of "
          f"{'/'.join(map(str, COVER_BOTS))} bots x {'/'.join(map(str, COVER_GAMES))} games per "
          f"bot, at tables of 4 and of 2-5 (true scales "
          + ", ".join(f"{k}: {c:g}" for k, c in TRUE_SCALES.items())
          + "; at 2-5= all 1"
          + "; strengths evenly spread over "
          + ", ".join(f"{e:g} Elo ({name})" for name, e in COVER_SPREADS.items())
          + f" at tables of 2); at least {args.cover_intervals} intervals per cell; target "
          f"{COVER_TARGET[0]}-{COVER_TARGET[1]} for every bot and for the extremes; now: "
          f"{COVER_KINDS['now']}, before: {COVER_KINDS['before']} (the same leagues)",
          flush=True)
    rng = np.random.default_rng(32)
    print(f"   {'tables':>6} {'bots':>4} {'games':>5} {'spread':>8} {'now: covered':>19} "
          f"{'extremes':>18} {'before: covered':>19} {'extremes':>18}  verdict (now)")
    cells: list[Cell] = []

    def rate(counts: list[int]) -> str:
        return f"{counts[0] / counts[1]:.3f} ({counts[0]}/{counts[1]})"

    chosen = cover_cells(args.cover_cells)
    for mix, sizes in MIXES.items():
        for bots in COVER_BOTS:
            for per_bot in COVER_GAMES:
                for spread, elo in COVER_SPREADS.items():
                    if chosen is not None and (mix, bots, per_bot, spread) not in chosen:
                        continue
                    cell = coverage_cell(rng, bots, per_bot, sizes, args.cover_intervals, elo,
                                         MIX_SCALES[mix])
                    cells.append(cell)
                    print(f"   {mix:>6} {bots:>4} {per_bot:>5} {spread:>8} "
                          f"{rate(cell.every['now']):>19} {rate(cell.extremes['now']):>18} "
                          f"{rate(cell.every['before']):>19} "
                          f"{rate(cell.extremes['before']):>18}  {cell.verdict()}", flush=True)
    for kind in COVER_KINDS:
        good = sum(c.verdict(kind) == "ok" for c in cells)
        hit = sum(c.every[kind][0] for c in cells)
        n = sum(c.every[kind][1] for c in cells)
        print(f"   {kind}: {hit / n:.3f} ({hit}/{n}) of all intervals; {good} of {len(cells)} "
              f"cells within {COVER_TARGET[0]}-{COVER_TARGET[1]} for every bot and the extremes")
    names = [f"b{i}" for i in range(6)]
    rejected = 0
    for _ in range(args.size_tests):
        strengths = np.linspace(-1.5, 1.5, 6)
        games = synthetic_league(rng, strengths, 60, MIXES["2-5"], TRUE_SCALES)
        design = Design(games, names)
        test = size_test(design, *design.fit_scaled())
        rejected += test is not None and test.rejected
    if args.size_tests:
        print(f"   the size model's likelihood-ratio test on {args.size_tests} leagues drawn from "
              f"it (6 bots x 60 games, tables of 2-5): rejected {rejected} "
              f"({rejected / args.size_tests:.3f}; at p < 0.05 it should be about 0.05)")
    now = [(tuple(c.every["now"]), tuple(c.extremes["now"])) for c in cells]
    low = min(now, key=lambda c: c[0][0] / c[0][1])[0]
    high = max(now, key=lambda c: c[0][0] / c[0][1])[0]
    edge = min(now, key=lambda c: c[1][0] / c[1][1])[1]
    edge_high = max(now, key=lambda c: c[1][0] / c[1][1])[1]
    return {"low": low, "high": high, "edge": edge, "edge_high": edge_high,
            "all": (sum(c[0][0] for c in now), sum(c[0][1] for c in now)),
            "cells": (len(cells), sum(c.verdict() == "ok" for c in cells)),
            "size_test": (rejected, args.size_tests)}


# --- goodness of fit per table size --------------------------------------------------------

FIT_LEVELS = {"p0.0": 0.0, "p0.15": 0.15, "p0.3": 0.3, "p0.6": 0.6, "p1.0": 1.0}


def size_section(args) -> None:
    names = list(FIT_LEVELS)
    policies = {name: noisy_greedy(p, name) for name, p in FIT_LEVELS.items()}
    games: list[PlayedGame] = []
    for size in (2, 3, 4, 5):
        for game in make_schedule(names, args.size_games, size, 500 + size, False):
            games.append(dataclasses.replace(play_scheduled(RULES, game, policies),
                                             index=len(games)))
    print(f"\nTable sizes: {args.size_games} games at each of 2, 3, 4, 5 players, 5 bots "
          f"(greedy with 0, 15, 30, 60, 100% random moves)", flush=True)
    scaled = fit_games(games, names)
    design = Design(games, names)
    single = GlobalFit({bot: float(e) for bot, e in
                        zip(names, to_elo(design.fit(), design.played), strict=True)})
    per_size = {size: fit_games([g for g in games if g.players == size], names)
                for size in (2, 3, 4, 5)}
    print("   scale per size (strengths read at the typical table, geometric mean 1): "
          + ", ".join(f"{k}: {c:.2f}" for k, c in sorted(scaled.scale.items()))
          + "; against tables of 2: "
          + ", ".join(f"{k}: {c / scaled.scale[2]:.2f}" for k, c in sorted(scaled.scale.items())))
    test = standings(games, names, 1, resamples=20).size_test
    assert test is not None
    print(f"   likelihood ratio test of one scale per size against free strengths per size: "
          f"{test.statistic:.1f} on {test.df} df, p = {test.p:.3f}"
          f"{' (rejected)' if test.rejected else ''}")
    print("   strength fitted at each size alone (Elo):")
    for bot in names:
        print(f"     {bot:<6} " + "  ".join(f"{k}p {per_size[k].strength[bot]:+5.0f}"
                                           for k in (2, 3, 4, 5)))
    print("   observed share of games a finished ahead of b (ties half) against the model, "
          "per pair and size:")
    print(f"   {'size':>6} {'scale per size: within 95%':>28} {'one strength: within 95%':>26}")
    for size in (2, 3, 4, 5):
        inside = {"scaled": 0, "single": 0}
        pairs = list(itertools.combinations(names, 2))
        for a, b in pairs:
            shared = [g for g in games if g.players == size and a in g.bots and b in g.bots]
            ahead = 0.0
            for g in shared:
                pa, pb = g.places[g.bots.index(a)], g.places[g.bots.index(b)]
                ahead += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
            observed = ahead / len(shared)
            for key, predicted in (("scaled", scaled.ahead(a, b, size)),
                                   ("single", single.ahead(a, b))):
                assert predicted is not None
                half = 1.96 * math.sqrt(predicted * (1 - predicted) / len(shared))
                inside[key] += abs(observed - predicted) <= half
        print(f"   {size:>6} {inside['scaled']:>22}/{len(pairs)} "
              f"{inside['single']:>20}/{len(pairs)}")


# --- TrueSkill beside the global fit -------------------------------------------------------

def trueskill_settled(games: list[PlayedGame], params: RatingParams) -> bool:
    ratings = rate_games(games, BOTS, params)
    if sorted(BOTS, key=lambda bot: -ratings.mu[bot]) != BOTS:
        return False
    return all(ratings.mu[a] - 1.96 * ratings.sigma[a] > ratings.mu[b] + 1.96 * ratings.sigma[b]
               for a, b in zip(BOTS, BOTS[1:], strict=False))


def trueskill_section(args) -> None:
    checks: dict[str, Callable[[list[PlayedGame]], bool]] = {
        "global fit": lambda games: (lambda fit: fit.order == BOTS and not fit.unresolved())(
            standings(games, BOTS, 1, resamples=args.resamples)),
        "TrueSkill tau 0 (default)": lambda games: trueskill_settled(games, RatingParams()),
        "TrueSkill tau 25/300": lambda games: trueskill_settled(
            games, RatingParams(tau=25 / 300)),
    }
    print(f"\nTrueSkill and the global fit: {args.ts_seeds} plain leagues of the 4 bots of "
          f"section 4 (hashed), tables of 4, checked every {args.ts_block} games up to "
          f"{args.ts_budget}: games until the order is right with neighbours' 95% intervals "
          f"apart (TrueSkill: mu +- 1.96 sigma)", flush=True)
    policies = {name: hashed_greedy(p, name) for name, p in LEVELS.items()}
    needed: dict[str, list[int | None]] = {key: [] for key in checks}
    for seed in range(1, args.ts_seeds + 1):
        schedule = make_schedule(BOTS, args.ts_budget, 4, seed, False)
        games: list[PlayedGame] = []
        found: dict[str, int | None] = dict.fromkeys(checks)
        for game in schedule:
            games.append(play_scheduled(RULES, game, policies))
            if len(games) % args.ts_block:
                continue
            for key, check in checks.items():
                if found[key] is None and check(games):
                    found[key] = len(games)
            if None not in found.values():
                break
        for key in checks:
            needed[key].append(found[key])
    for key in checks:
        values = needed[key]
        settled = [v for v in values if v is not None]
        median = statistics.median(v if v is not None else args.ts_budget for v in values)
        span = f"{min(settled)}-{max(settled)}" if settled else "-"
        print(f"   {key:<26} settled {len(settled)}/{len(values)}, in {span} games; median "
              f"{median:.0f} (not settled counts as {args.ts_budget})")


def shuffle_section(args) -> None:
    policies = {name: noisy_greedy(p, name) for name, p in LEVELS.items()}
    schedule = make_schedule(BOTS, args.shuffle_games, 4, 12345, False)
    games = [play_scheduled(RULES, game, policies) for game in schedule]
    base_ts, base_fit = rate_games(games, BOTS), standings(games, BOTS, 1, resamples=50)
    ts_move = fit_move = 0.0
    for k in range(args.shuffles):
        order = games[:]
        random.Random(k).shuffle(order)
        again = [dataclasses.replace(g, index=i) for i, g in enumerate(order)]
        ts, fit = rate_games(again, BOTS), standings(again, BOTS, 1, resamples=50)
        for bot in BOTS:
            ts_move = max(ts_move, abs(ts.mu[bot] - base_ts.mu[bot]))
            fit_move = max(fit_move, abs(fit.strength[bot] - base_fit.strength[bot]),  # type: ignore[operator]
                           abs(fit.low[bot] - base_fit.low[bot]))  # type: ignore[operator]
    print(f"\nShuffled game order ({args.shuffles} shuffles of a {len(games)}-game league): "
          f"TrueSkill mu moved up to {ts_move:.3f}; the global fit and its intervals up to "
          f"{fit_move:.3g} Elo")


# --- the promises --------------------------------------------------------------------------

SECTIONS = ("gauntlet", "pairing", "settled", "duplicate", "coverage", "sizes", "trueskill",
            "shuffle")


def promise_lines(gauntlet: dict[str, tuple[int, int]] | None,
                  settled: tuple[int, int] | None,
                  duplicate: tuple[float, float, float, int] | None,
                  coverage: dict[str, tuple[int, int]] | None = None,
                  mixes: str = MIX_NAMES) -> list[str]:
    """The four lines of the first audit and the intervals' coverage line (of the sections run),
    with 'not met' where a target is not."""
    params = SprtParams()
    # the field of spread 0 is played at tables of 4 only
    least = "0" if "4" in mixes.split(", ") else f"+-{min(s for s in SPREADS if s):.0f}"

    lines = []
    if gauntlet is not None:
        fp, runs = gauntlet["fp"]
        model_fp, model_runs = gauntlet["model_fp"]
        missed, miss_runs = gauntlet["miss"]
        now, before = gauntlet["identical"]
        lines += [f"gauntlet false-positive rate: {fp / runs:.3f} ({fp}/{runs}) at alpha "
                  f"{params.alpha:g}{mark(fp / runs <= params.alpha)}",
                  f"gauntlet false 'better' on fields of {least} to +-{max(SPREADS):.0f} Elo "
                  f"at tables of {mixes}: at most "
                  f"{model_fp / model_runs:.3f} ({model_fp}/{model_runs}) at alpha "
                  f"{params.alpha:g}{mark(model_fp / model_runs <= params.alpha)}",
                  f"gauntlet false 'not better' at +{params.delta:g} Elo, fields of {least} to "
                  f"+-{max(SPREADS):.0f} Elo at tables of {mixes}: at most "
                  f"{missed / miss_runs:.3f} "
                  f"({missed}/{miss_runs}) at beta {params.beta:g}"
                  f"{mark(missed / miss_runs <= params.beta)}",
                  f"gauntlet, identical bots: 'not better' in {now} games (before {before})"
                  f"{mark(now < before)}"]
    if settled is not None:
        separated, settled_runs = settled
        lines.append(f"until-settled false separation: {separated / settled_runs:.3f} "
                     f"({separated}/{settled_runs}){mark(separated / settled_runs <= 0.05)}")
    if duplicate is not None:
        ratio, low, high, seeds = duplicate
        lines.append(f"duplicate variance ratio: {ratio:.2f} [{low:.2f}, {high:.2f}] "
                     f"({seeds} seeds){mark(ratio <= 0.7 and high < 1)}")
    if coverage is not None:
        (lo, lo_n), (hi, hi_n) = coverage["low"], coverage["high"]
        (edge, edge_n), (inside, total) = coverage["edge"], coverage["all"]
        top, top_n = coverage["edge_high"]
        cells, good = coverage["cells"]
        lines.append(f"interval coverage: {inside / total:.3f} ({inside}/{total}); cells "
                     f"{lo / lo_n:.3f} ({lo}/{lo_n}) to {hi / hi_n:.3f} ({hi}/{hi_n}); extremes "
                     f"{edge / edge_n:.3f} ({edge}/{edge_n}) to {top / top_n:.3f} ({top}/{top_n}); "
                     f"{good} of {cells} cells within 0.93-0.97{mark(good == cells)}")
        rejected, leagues = coverage["size_test"]
        if leagues:
            lines.append(f"size model false rejection: {rejected / leagues:.3f} "
                         f"({rejected}/{leagues}) "
                         f"at p < 0.05{mark(rejected / leagues <= 0.08)}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--only", help=f"comma-separated sections of {', '.join(SECTIONS)} "
                                       f"(default all; the promise lines of those run)")
    parser.add_argument("--gauntlets", type=int, default=2000)
    parser.add_argument("--pool", type=int, default=3000, help="real pairs in the pool")
    parser.add_argument("--power-runs", type=int, default=1000)
    parser.add_argument("--gauntlet-mixes",
                        help=f"only these table mixes in section 2, e.g. 2-5,3-5 (of "
                             f"{MIX_NAMES}; the promise lines then cover only these)")
    parser.add_argument("--gauntlet-spreads",
                        help="only these field spreads in section 2, e.g. 200,300 (of "
                             "0,100,200,300)")
    parser.add_argument("--no-before", action="store_true",
                        help="section 2 without the test before beside the test now")
    parser.add_argument("--settled-runs", type=int, default=200)
    parser.add_argument("--settle-pool", type=int, default=3000)
    parser.add_argument("--block", type=int, default=75)
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=300, help="bootstrap resamples")
    parser.add_argument("--duplicate-seeds", type=int, default=100)
    parser.add_argument("--duplicate-games", type=int, default=128)
    parser.add_argument("--size-games", type=int, default=600)
    parser.add_argument("--size-tests", type=int, default=400,
                        help="synthetic leagues for the size model's test")
    parser.add_argument("--cover-intervals", type=int, default=2400,
                        help="intervals per coverage cell (2400: +-0.009 at 95%%; the "
                             "extremes, at least 400: +-0.021)")
    parser.add_argument("--cover-cells",
                        help="only these coverage cells, e.g. 2-5:8:20,2-5:12:20 "
                             "(tables:bots:games per bot; they draw other leagues than a whole "
                             "run's)")
    parser.add_argument("--scale-prior-at-one", action="store_true",
                        help="the fit's scale prior centred on one scale for every size (as "
                             "before), not on the measured scales: to compare")
    parser.add_argument("--ts-seeds", type=int, default=8)
    parser.add_argument("--ts-budget", type=int, default=512)
    parser.add_argument("--ts-block", type=int, default=16)
    parser.add_argument("--shuffles", type=int, default=5)
    parser.add_argument("--shuffle-games", type=int, default=400)
    args = parser.parse_args()
    if args.quick:
        quick = {"gauntlets": 40, "pool": 200, "power_runs": 20, "settled_runs": 4,
                 "settle_pool": 150, "block": 30, "blocks": 3, "resamples": 30,
                 "duplicate_seeds": 5, "duplicate_games": 32, "size_games": 40,
                 "cover_intervals": 24, "size_tests": 10,
                 "ts_seeds": 1, "ts_budget": 64, "shuffles": 1, "shuffle_games": 40}
        for key, value in quick.items():
            if getattr(args, key) == parser.get_default(key):
                setattr(args, key, value)
    started = time.monotonic()
    if args.scale_prior_at_one:
        plackett.CENTRED_SCALE_PRIOR = False
    only = set(args.only.split(",")) if args.only else set(SECTIONS)
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown section {sorted(unknown)[0]!r}; "
                     f"sections: {', '.join(SECTIONS)}")
    print(f"bench/fairness.py{' --quick' if args.quick else ''}"
          f"{' --scale-prior-at-one' if args.scale_prior_at_one else ''}"
          f"{f' --only {args.only}' if args.only else ''}: in-process engine bots, "
          f"classic rules")
    gauntlet = gauntlet_section(args) if "gauntlet" in only else None
    if "pairing" in only:
        pairing_section(args)
    settled = settled_section(args) if "settled" in only else None
    duplicate = duplicate_section(args) if "duplicate" in only else None
    coverage = coverage_section(args) if "coverage" in only else None
    for name, section in (("sizes", size_section), ("trueskill", trueskill_section),
                          ("shuffle", shuffle_section)):
        if name in only:
            section(args)
    print(f"\n{time.monotonic() - started:.0f} s")
    mixes = ", ".join(args.gauntlet_mixes.split(",")) if args.gauntlet_mixes else MIX_NAMES
    for line in promise_lines(gauntlet, settled, duplicate, coverage, mixes):
        print(line)


if __name__ == "__main__":
    main()

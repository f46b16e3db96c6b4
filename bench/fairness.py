"""Benchmark: how many games a league needs before its table is right and settled.

Bots of known strength order play in process (no gRPC): `noisy_greedy` policies that play the
greedy move except, with probability p, a random one (p = 0 < 0.4 < 0.7 < 1: the strongest
first). For each seed, two leagues of the same bots are played on the league's own schedules
(`make_schedule`, tables of 4): plain seating and `--duplicate` (every table in its 4 seat
rotations with one seed). After every block of games the benchmark asks, for each league:

* global fit: is the order of the fit right, with every pair of neighbours separated (their 95%
  bootstrap intervals, resampled as a league does: whole rotation sets under duplicate, apart)?
* TrueSkill: is the order by mu right, with every pair of neighbours' mu +- 1.96 sigma apart?

and records the games played when that first holds (or the budget, counted as not settled).
It prints the median over seeds for each of the four, and the ratios: duplicate / plain
(target: at most 0.5 for the global fit) and global fit / TrueSkill.

A second measure needs no stopping rule: over several seeds, leagues of a fixed number of games
are fitted and the spread (standard deviation over seeds) of each fitted gap between neighbours
is printed for plain and duplicate seating, with the mean bootstrap interval width: if duplicate
seating cancelled most of the luck, its spread would be well below plain's.

Finally it shuffles the order of one plain league's games (re-indexed, as if played in another
order) a few times and prints how far each rating moves: TrueSkill's mu (in TrueSkill points and
in its own sigma) and the global fit's strength (Elo), which should not move at all.

Run: python bench/fairness.py [--seeds 4] [--max-games 512] [--block 16] [--policies noisy]
The default run takes a few minutes on a busy 2-core machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.engine import preset  # noqa: E402
from referee.league.schedule import make_schedule  # noqa: E402
from referee.league.simulated import hashed_greedy, noisy_greedy, play_scheduled  # noqa: E402
from referee.ratings.intervals import standings  # noqa: E402
from referee.ratings.trueskill import rate_games  # noqa: E402

LEVELS = {"p0.0": 0.0, "p0.4": 0.4, "p0.7": 0.7, "p1.0": 1.0}   # strongest first
BOTS = list(LEVELS)


def global_settled(games, groups, seed: int, resamples: int) -> bool:
    fit = standings(games, BOTS, seed, groups, resamples)
    return fit.order == BOTS and not fit.unresolved()


def trueskill_settled(games) -> bool:
    ratings = rate_games(games, BOTS)
    order = sorted(BOTS, key=lambda bot: -ratings.mu[bot])
    if order != BOTS:
        return False
    return all(ratings.mu[a] - 1.96 * ratings.sigma[a] > ratings.mu[b] + 1.96 * ratings.sigma[b]
               for a, b in zip(BOTS, BOTS[1:], strict=False))


def league_run(seed: int, duplicate: bool, args) -> dict[str, int | None]:
    """Games needed until settled, for the global fit and for TrueSkill (None: not within the
    budget)."""
    rules = preset("classic")
    family = hashed_greedy if args.policies == "hashed" else noisy_greedy
    policies = {name: family(p, name) for name, p in LEVELS.items()}
    schedule = make_schedule(BOTS, args.max_games, 4, seed, duplicate)
    groups = {game.index: game.group for game in schedule}
    needed: dict[str, int | None] = {"global": None, "trueskill": None}
    games = []
    for game in schedule:
        games.append(play_scheduled(rules, game, policies))
        if len(games) % args.block and len(games) != len(schedule):
            continue
        if needed["global"] is None and global_settled(games, groups, seed, args.resamples):
            needed["global"] = len(games)
        if needed["trueskill"] is None and trueskill_settled(games):
            needed["trueskill"] = len(games)
        if None not in needed.values():
            break
    return needed


def median_games(runs: list[dict[str, int | None]], key: str, budget: int) -> tuple[float, int]:
    """The median games needed (a run that never settled counts as the budget) and how many
    runs settled."""
    values = [run[key] if run[key] is not None else budget for run in runs]
    return statistics.median(values), sum(run[key] is not None for run in runs)


def spread_check(args) -> None:
    rules = preset("classic")
    policies = {name: hashed_greedy(p, name) if args.policies == "hashed"
                else noisy_greedy(p, name) for name, p in LEVELS.items()}
    print(f"\nSpread over {args.spread_seeds} seeds of the fitted gap between neighbours "
          f"(Elo), leagues of {args.spread_games} games:")
    print(f"{'seating':<10} " + " ".join(f"{f'{a}-{b}':>11}" for a, b in zip(BOTS, BOTS[1:],
                                                                          strict=False))
          + f" {'mean 95% width':>15}")
    for duplicate in (False, True):
        gaps, widths = [], []
        for seed in range(1, args.spread_seeds + 1):
            schedule = make_schedule(BOTS, args.spread_games, 4, 1000 + seed, duplicate)
            games = [play_scheduled(rules, game, policies) for game in schedule]
            fit = standings(games, BOTS, seed, {g.index: g.group for g in schedule},
                            args.resamples)
            gaps.append([fit.strength[a] - fit.strength[b]
                         for a, b in zip(BOTS, BOTS[1:], strict=False)])
            widths.extend(fit.high[bot] - fit.low[bot] for bot in BOTS)
        spread = [statistics.stdev(column) for column in zip(*gaps, strict=True)]
        print(f"{'duplicate' if duplicate else 'plain':<10} "
              + " ".join(f"{value:>11.1f}" for value in spread)
              + f" {statistics.mean(widths):>15.1f}", flush=True)


def shuffle_check(args) -> None:
    rules = preset("classic")
    policies = {name: noisy_greedy(p, name) for name, p in LEVELS.items()}
    schedule = make_schedule(BOTS, args.shuffle_games, 4, 12345, False)   # noisy: more churn
    games = [play_scheduled(rules, game, policies) for game in schedule]
    base_ts = rate_games(games, BOTS)
    base_fit = standings(games, BOTS, 1, resamples=args.resamples)
    ts_moves = {bot: 0.0 for bot in BOTS}
    fit_moves = {bot: 0.0 for bot in BOTS}
    interval_moves = 0.0
    for k in range(args.shuffles):
        order = games[:]
        random.Random(k).shuffle(order)
        reindexed = [dataclasses.replace(g, index=i) for i, g in enumerate(order)]
        ts = rate_games(reindexed, BOTS)
        fit = standings(reindexed, BOTS, 1, resamples=args.resamples)
        for bot in BOTS:
            ts_moves[bot] = max(ts_moves[bot], abs(ts.mu[bot] - base_ts.mu[bot]))
            fit_moves[bot] = max(fit_moves[bot], abs(fit.strength[bot] - base_fit.strength[bot]))
            interval_moves = max(interval_moves, abs(fit.low[bot] - base_fit.low[bot]),
                                 abs(fit.high[bot] - base_fit.high[bot]))
    print(f"\nShuffled game order: {args.shuffles} shuffles of one plain league of "
          f"{len(games)} games; the largest move of each rating")
    print(f"{'bot':<6} {'TrueSkill mu':>13} {'(in sigma)':>11} {'global fit (Elo)':>17}")
    for bot in BOTS:
        print(f"{bot:<6} {ts_moves[bot]:>13.3f} {ts_moves[bot] / base_ts.sigma[bot]:>11.2f} "
              f"{fit_moves[bot]:>17.3g}")
    print(f"global fit 95% interval ends: largest move {interval_moves:.3g} Elo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--max-games", type=int, default=512)
    parser.add_argument("--block", type=int, default=16, help="games between checks")
    parser.add_argument("--spread-seeds", type=int, default=6)
    parser.add_argument("--spread-games", type=int, default=128)
    parser.add_argument("--resamples", type=int, default=100, help="bootstrap resamples")
    parser.add_argument("--shuffles", type=int, default=5)
    parser.add_argument("--shuffle-games", type=int, default=400)
    parser.add_argument("--policies", choices=["hashed", "noisy"], default="hashed",
                        help="deterministic bots (noise hashed from what they see) or bots "
                             "with a random stream of their own")
    args = parser.parse_args()
    started = time.monotonic()
    runs: dict[str, list[dict[str, int | None]]] = {"plain": [], "duplicate": []}
    print(f"bots (strongest first): {', '.join(BOTS)} ({args.policies} greedy); tables of 4, "
          f"classic rules; checks every {args.block} games, budget {args.max_games}, "
          f"{args.resamples} resamples")
    print(f"{'seed':>4} {'seating':<10} {'global fit':>10} {'TrueSkill':>10}")
    for seed in range(1, args.seeds + 1):
        for mode in ("plain", "duplicate"):
            needed = league_run(seed, mode == "duplicate", args)
            runs[mode].append(needed)
            shown = {k: "-" if v is None else str(v) for k, v in needed.items()}
            print(f"{seed:>4} {mode:<10} {shown['global']:>10} {shown['trueskill']:>10}",
                  flush=True)
    print(f"\nMedian games until the order is right and neighbours are separated at 95% "
          f"(not settled counts as {args.max_games}):")
    medians = {}
    for mode in ("plain", "duplicate"):
        for key in ("global", "trueskill"):
            medians[mode, key], settled = median_games(runs[mode], key, args.max_games)
            print(f"  {mode:<10} {key:<10} {medians[mode, key]:>7.1f}  "
                  f"(settled in {settled}/{args.seeds})")
    print(f"ratio duplicate / plain, global fit: "
          f"{medians['duplicate', 'global'] / medians['plain', 'global']:.2f} (target <= 0.5)")
    print(f"ratio duplicate / plain, TrueSkill:  "
          f"{medians['duplicate', 'trueskill'] / medians['plain', 'trueskill']:.2f}")
    for mode in ("plain", "duplicate"):
        print(f"ratio global fit / TrueSkill, {mode}: "
              f"{medians[mode, 'global'] / medians[mode, 'trueskill']:.2f}")
    spread_check(args)
    shuffle_check(args)
    print(f"\n{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()

"""Benchmark: a league's closing standings (the global fit with its profile-likelihood
intervals and bootstrap rank ranges) at 40, 200 and 500 bots, against a baseline commit.

After its last game a league computes `referee.ratings.intervals.standings` of all its games
(`referee.league.outcome.league_standings`; a season's refit the same). Its intervals are
profile-likelihood bounds (referee/ratings/profiled.py): a held fit per bound of every bot
whose objective is not a parabola, which is every bot of a league where each played a game or
so. This bench draws such leagues from the Plackett-Luce model (bench/simulated.py's
`synthetic_league`, seeded: the same games for both trees) and times `standings` on each, in a
subprocess per tree and league (this tree, and with `--against REV` a `git worktree` of REV,
alternated ABBA), and prints the CPU and wall seconds of each, their ratio, and whether both
trees give the same table: the same order, every interval the same at the printed precision
(whole Elo), the same `~` marks (neighbours not separated), and the largest difference.

    python bench/standings.py [--against e742e89] [--reps 2] [--rows 40x1@4,200x1@4,...]

A row `BOTSxGAMES@SIZES` is BOTS bots with about GAMES games each at tables of SIZES (sizes
joined by '-': 2-3-4-5). The baseline is skipped on rows of more than `--baseline-max-bots`
bots (default 200: the code before this bench took minutes there). BLAS runs in one thread on
both sides (as the season's refit runs it, referee/server/runner/refit.py): on a shared 2-core
machine a second BLAS thread only spins.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
from against import AgainstError, Tree, baseline_tree, working_tree  # noqa: E402

DEFAULT_ROWS = "40x1@4,200x1@4,200x2@2-3-4-5,500x1@4"
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SCALES = {2: 1.0, 3: 0.5, 4: 0.4, 5: 0.3}


def parse_row(text: str) -> tuple[int, float, tuple[int, ...]]:
    """'200x1@4' -> (200, 1.0, (4,)); '200x2@2-3-4-5' -> (200, 2.0, (2, 3, 4, 5))."""
    try:
        shape, sizes = text.split("@")
        bots, games = shape.split("x")
        return int(bots), float(games), tuple(int(k) for k in sizes.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a row is BOTSxGAMES@SIZES, "
                                         "as 200x1@4 or 200x2@2-3-4-5") from None


def one(row: str, seed: int) -> dict[str, Any]:
    """The standings of the row's league by the `referee` first on sys.path (the tree under
    test): CPU and wall seconds, and the table as printed."""
    import numpy as np
    from simulated import synthetic_league

    from referee.ratings.intervals import standings

    bots, per_bot, sizes = parse_row(row)
    rng = np.random.default_rng(seed)
    strengths = np.linspace(-1.5, 1.5, bots)
    games = synthetic_league(rng, strengths, per_bot, sizes, SCALES)
    names = [f"b{i}" for i in range(bots)]
    cpu, wall = time.process_time(), time.perf_counter()
    table = standings(games, names, seed)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    marks = table.separated_from_next()
    return {"cpu": cpu, "wall": wall, "games": len(games), "order": table.order,
            "low": [table.low[b] for b in table.order],
            "high": [table.high[b] for b in table.order],
            "strength": [table.strength[b] for b in table.order],
            "marks": [marks[b] for b in table.order]}


def run_side(tree: Tree, row: str, seed: int) -> dict[str, Any]:
    """One league's standings by `tree`'s package, in a subprocess of its own."""
    env = {**tree.env, **ONE_THREAD}
    done = subprocess.run([tree.python, str(Path(__file__).resolve()), "--one", row,
                           "--seed", str(seed)], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise SystemExit(f"standings of {row} by {tree.label} failed: {last}")
    return json.loads(done.stdout)


def same_table(mine: dict[str, Any], theirs: dict[str, Any]) -> tuple[bool, float]:
    """Whether the two tables print the same (order, whole-Elo intervals, `~` marks), and the
    largest difference of any interval bound or strength."""
    if mine["order"] != theirs["order"]:
        return False, float("inf")
    worst = 0.0
    printed = mine["marks"] == theirs["marks"]
    for key in ("low", "high", "strength"):
        for a, b in zip(mine[key], theirs[key], strict=True):
            if a is None or b is None:
                printed = printed and a is b
                continue
            worst = max(worst, abs(a - b))
            printed = printed and round(a) == round(b)
    return printed, worst


def spread(values: list[float]) -> str:
    """The median and the range: '1.23 [1.20-1.31]'."""
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=DEFAULT_ROWS,
                        help=f"leagues, BOTSxGAMES@SIZES joined by commas ({DEFAULT_ROWS})")
    parser.add_argument("--reps", type=int, default=2, help="runs per tree and row (2)")
    parser.add_argument("--seed", type=int, default=1, help="the leagues' seed (1)")
    parser.add_argument("--against", metavar="REV", help="also time the code of commit REV")
    parser.add_argument("--baseline-max-bots", type=int, default=200,
                        help="time the baseline only on rows of at most this many bots (200)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.seed)))
        return 0
    rows = [row for row in args.rows.split(",") if row]
    try:
        for row in rows:
            parse_row(row)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    mine = working_tree(ROOT)
    try:
        with _baseline(args.against) as theirs:
            report(rows, args, mine, theirs)
    except AgainstError as exc:
        print(f"bench/standings.py: {exc}", file=sys.stderr)
        return 2
    return 0


def _baseline(revision: str | None):  # noqa: ANN202  (a context manager of a Tree or None)
    import contextlib
    if revision is None:
        return contextlib.nullcontext(None)
    return baseline_tree(ROOT, revision)


def report(rows: list[str], args: argparse.Namespace, mine: Tree, theirs: Tree | None) -> None:
    """Run every row on both trees (alternated ABBA) and print the table and the verdict."""
    load = os.getloadavg()
    print(f"bench/standings.py: closing standings (referee.ratings.intervals.standings, "
          f"300 resamples), {args.reps} rep(s) per tree, seed {args.seed}, BLAS in one thread")
    print(f"load average at the start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if theirs is not None:
        print(f"baseline: {theirs.label} (a git worktree), alternated with this tree")
    lines = []
    verdicts = []
    for row in rows:
        bots = parse_row(row)[0]
        base = theirs if theirs is not None and bots <= args.baseline_max_bots else None
        runs: dict[str, list[dict[str, Any]]] = {"mine": [], "base": []}
        for rep in range(args.reps):
            order = [("mine", mine), ("base", base)]
            for side, tree in (order if rep % 2 == 0 else order[::-1]):
                if tree is not None:
                    runs[side].append(run_side(tree, row, args.seed))
                    print(f"  {row} {tree.label}: {runs[side][-1]['cpu']:.2f} s CPU",
                          file=sys.stderr, flush=True)
        first = runs["mine"][0]
        cpu = [r["cpu"] for r in runs["mine"]]
        wall = [r["wall"] for r in runs["mine"]]
        line = [row, str(first["games"]), spread(cpu), spread(wall)]
        if runs["base"]:
            base_cpu = [r["cpu"] for r in runs["base"]]
            base_wall = [r["wall"] for r in runs["base"]]
            ratio = statistics.median(base_cpu) / statistics.median(cpu)
            printed, worst = same_table(first, runs["base"][0])
            line += [spread(base_cpu), spread(base_wall), f"{ratio:.1f}x",
                     "same" if printed else "DIFFERENT", f"{worst:.1e}"]
            verdicts.append((row, ratio, printed))
        else:
            line += ["-"] * 5 if theirs is not None else []
        lines.append(line)
    headers = ["league", "games", "CPU s", "wall s"]
    if theirs is not None:
        headers += [f"{theirs.label} CPU s", "wall s", "faster", "table", "max diff"]
    widths = [max(len(r[i]) for r in [headers, *lines]) for i in range(len(headers))]
    print()
    for line in [headers, *lines]:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)))
    load = os.getloadavg()
    print(f"\nload average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if verdicts:
        worse = [row for row, ratio, _ in verdicts if ratio < 1]
        differ = [row for row, _, printed in verdicts if not printed]
        print("verdict: " + ("; ".join(filter(None, [
            f"slower than the baseline on {', '.join(worse)}" if worse else "",
            f"tables differ on {', '.join(differ)}" if differ else ""]))
            or f"this tree is faster on every row (CPU {min(r for _, r, _ in verdicts):.1f}x"
               f"-{max(r for _, r, _ in verdicts):.1f}x) and prints the same tables"))


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: one league played locally, on `--cluster local:1` and on `--cluster local:2`.

The same league (4 trivial Python SDK bots, each in a directory of its own, 4-player `classic`
tables, N games, J games in flight in all) is run through `referee.league.runner.run_league`
three ways in ONE run, interleaved rep by rep (A B C, C B A, ...):

* local     - the bots run in this process's roster (the default executor);
* local:1   - a dask LocalCluster of one worker process (resources games=J) plays the games;
* local:2   - two worker processes (games=J/2 each).

Measured over the playing phase only (from the first game submitted to the last one stored;
starting workers and bots is not counted): games per second, each game's own duration
(MatchResult.seconds, timed where it is played) and the slot time per game: wall x J / games,
how long one of the J places is taken per game. The slot time minus the game's own time is
what a game costs besides being played (submitting, shipping the result back, storing it).

The cluster path's per-game overhead share = (slot time on local:1 - slot time locally) /
a local game's own time, for the two runs of each rep (next to each other in time), median
over reps. Target: <= 5%. Throughput growth with workers = games/s on local:2 /
games/s on local:1; it can only grow where there are spare cores (the cores seen are printed).

Usage:
    python bench/cluster.py                  # 60 games x 3 reps, J = 4
    python bench/cluster.py --quick          # 24 games x 1 rep
    python bench/cluster.py --games 100 --reps 5 -j 8

Exit status: 0 when the benchmark ran (whether or not the target is met), 1 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from protocol import BenchError, make_workdir, print_table, write_sdk_bots

from referee.bots.errors import BotStartError
from referee.engine import preset
from referee.game.match import MatchResult
from referee.league.config import LeagueSettings
from referee.league.progress import Progress
from referee.league.runner import run_league

TARGET_SHARE = 0.05
PLAYERS = 4
RULES = "classic"
SIDES = ("local", "local:1", "local:2")


def log(message: str) -> None:
    """Progress output, on stderr so that stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


class TimingProgress(Progress):
    """A quiet Progress that times the playing phase and keeps each game's own duration."""

    def __init__(self) -> None:
        super().__init__()
        self.began = self.ended = 0.0
        self.seconds: list[float] = []

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
        self.began = time.perf_counter()

    def game_done(self, result: MatchResult, index: int | None = None) -> None:
        super().game_done(result, index)
        self.seconds.append(result.seconds)

    def close(self) -> None:
        self.ended = time.perf_counter()
        super().close()


@dataclass
class Run:
    """One league run's numbers."""

    games: int
    concurrency: int
    wall: float
    game_seconds: list[float]

    @property
    def games_per_s(self) -> float:
        return self.games / self.wall

    @property
    def slot(self) -> float:
        """Seconds one of the J places is taken per game."""
        return self.wall * self.concurrency / self.games

    @property
    def game(self) -> float:
        """Mean seconds of a game's own play."""
        return statistics.fmean(self.game_seconds)


@dataclass
class Side:
    name: str
    runs: list[Run] = field(default_factory=list)

    def median(self, what: str) -> float:
        return statistics.median(getattr(run, what) for run in self.runs)


async def league_run(root: Path, specs: list[Path], side: str, args: argparse.Namespace,
                     rep: int) -> Run:
    """Run the league once, on `side`, in a fresh out directory."""
    out = make_workdir("out-", root)
    settings = LeagueSettings(bots=specs, rules=preset(RULES), games=args.games,
                              players=(PLAYERS, PLAYERS), seed=rep + 1, concurrency=args.j,
                              out=out, sandbox=False if args.no_sandbox else None,
                              cluster=None if side == "local" else side)
    progress = TimingProgress()
    outcome = await run_league(settings, progress)
    if len(outcome.games) != args.games or not outcome.finished:
        raise BenchError(f"{side}: the league stored {len(outcome.games)} of {args.games} games")
    strikes = sum(sum(s.values()) for game in outcome.games for s in game.strikes)
    if strikes:
        raise BenchError(f"{side}: the trivial bots got {strikes} strikes: the machine is too "
                         f"loaded")
    shutil.rmtree(out, ignore_errors=True)
    return Run(args.games, args.j, progress.ended - progress.began, progress.seconds)


async def measure(root: Path, args: argparse.Namespace) -> dict[str, Side]:
    specs = write_sdk_bots(root, 4)
    sides = {name: Side(name) for name in SIDES}
    for rep in range(args.reps):
        order = SIDES if rep % 2 == 0 else tuple(reversed(SIDES))
        for name in order:
            run = await league_run(root, specs, name, args, rep)
            sides[name].runs.append(run)
            log(f"rep {rep + 1}/{args.reps} {name:8}: {run.games_per_s:6.2f} games/s, "
                f"slot {run.slot * 1000:7.1f} ms, game {run.game * 1000:7.1f} ms")
    return sides


def report(sides: dict[str, Side], args: argparse.Namespace) -> dict[str, object]:
    cores = os.cpu_count() or 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    local = sides["local"]
    rows = []
    for side in sides.values():
        rows.append([side.name, f"{side.median('games_per_s'):.2f}",
                     f"{side.median('slot') * 1000:.1f}", f"{side.median('game') * 1000:.1f}",
                     f"{(side.median('slot') - side.median('game')) * 1000:.1f}",
                     f"{side.median('games_per_s') / local.median('games_per_s'):.2f}"])
    print(f"League of 4 trivial bots, {PLAYERS}-player {RULES} tables, {args.games} games, "
          f"J = {args.j}, {args.reps} reps (medians); cores seen: {cores} "
          f"({usable} usable by this process)")
    print_table(["side", "games/s", "slot ms/game", "game ms", "besides play ms",
                 "vs local"], rows)
    # Paired within each rep (the two runs are next to each other in time, so a change in the
    # machine's load touches both), then the median over reps.
    overhead = statistics.median(
        (cluster.slot - alone.slot) / alone.game
        for cluster, alone in zip(sides["local:1"].runs, local.runs, strict=True))
    # The part of it spent outside the game itself (games played in the worker process also
    # run slower or faster with the machine's load, which the slot difference includes).
    besides = statistics.median(
        ((cluster.slot - cluster.game) - (alone.slot - alone.game)) / alone.game
        for cluster, alone in zip(sides["local:1"].runs, local.runs, strict=True))
    growth = sides["local:2"].median("games_per_s") / sides["local:1"].median("games_per_s")
    verdict = "met" if overhead <= TARGET_SHARE else "NOT met"
    print(f"cluster per-game overhead, median over reps of (local:1 slot - local slot) / "
          f"local game: "
          f"{overhead * 100:.1f}% (target <= {TARGET_SHARE * 100:.0f}%: {verdict})")
    print(f"of which outside the game's own play (submitting, shipping, storing): "
          f"{besides * 100:.1f}% of a local game")
    print(f"throughput growth local:1 -> local:2: x{growth:.2f} with {usable} usable cores")
    return {"cores": cores, "usable_cores": usable, "games": args.games, "j": args.j,
            "reps": args.reps, "overhead_share": overhead, "outside_play_share": besides,
            "growth_1_to_2": growth,
            "sides": {name: {"games_per_s": side.median("games_per_s"),
                             "slot_s": side.median("slot"), "game_s": side.median("game")}
                      for name, side in sides.items()}}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("-j", type=int, default=4, help="games in flight in all (default 4)")
    parser.add_argument("--quick", action="store_true", help="24 games x 1 rep")
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.reps = 24, 1
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = make_workdir("bench-cluster-")
    try:
        sides = asyncio.run(measure(root, args))
    except (BenchError, BotStartError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    data = report(sides, args)
    if args.json:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

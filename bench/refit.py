"""Benchmark: the season's refit of a big season, the old way against the new.

A season of R bots and G games is stored as bench/server.py stores it (places drawn from a
Plackett-Luce model with spread strengths at seeded random tables of 4: what the fit reads).
Each refit runs exactly as the runner runs it, `python -m referee.server.runner.refit DIR` in a
subprocess, and is timed (wall and CPU):

* old way: the refit of the code at `--baseline-rev` (default: the commit before the refit was
  made incremental), extracted with `git archive` into a temporary folder; every refit of the
  old code rated every game from the first, so one run stands for all of them;
* first refit: the new code with no state yet, on the season without its last N games
  (`--new-games`, default 50: the runner refits after every 50 new games);
* next refit: the new code after those N games came in (the refits the runner runs back to
  back): the time that counts, against the target of 30 s;
* the next refit of the code at `--against` (default: main before the bootstrap's draws and
  the canonical order were made cheaper), from the same state on the same season, right after
  the new code's: the side-by-side baseline of the verdict's ratio (the machine is shared, so
  only times taken in the same run compare);
* the check that the next refit gives the same table as a refit from scratch (every printed
  number and rank identical, and the largest difference of any number): against the old way's
  table, or with `--no-baseline` against the new code run on the whole season with no state.

    python bench/refit.py [--bots 100] [--games 100000] [--new-games 50] [--baseline-rev REV]
                          [--no-baseline] [--no-scratch] [--against REV] [--keep DIR]

`--no-scratch` (with `--no-baseline`) leaves out the check against a refit from scratch (over
150 s of CPU at 100,000 games): the verdict then says the table was not checked.

`--keep DIR` keeps what does not depend on the code under test in DIR and reuses it in later
runs: the stored season, the old way's snapshot and times, and the first refit's state (its
times are then those of the run that made it). The next refit is always run and timed anew.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from referee.league.folder import LeagueFolder  # noqa: E402  (this checkout's, as above)

TARGET_S = 30.0
BASELINE_REV = "cfbdebf"   # main before the incremental refit
AGAINST_REV = "8c74e58"    # main before the bootstrap's draws were counted uniform draws


def timed_refit(out: Path, source: Path = ROOT) -> tuple[float, float, dict]:
    """Wall seconds, CPU seconds and the snapshot of one refit of the season in `out`, run
    from the source tree `source`."""
    from referee.server.runner.refit import refit_env

    # as the runner runs it (BLAS in one thread), the old way too: that is not what changed
    env = {**refit_env(), "PYTHONPATH": str(source)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "referee.server.runner.refit", str(out)],
                          capture_output=True, env=env, cwd=source)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench: the refit failed: {done.stderr.decode()[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, json.loads(done.stdout)


def without_last(out: Path, copy: Path, count: int) -> None:
    """A copy of the season in `out` in `copy`, less its last `count` recorded games."""
    copy.mkdir(parents=True)
    shutil.copy(LeagueFolder(out).store_path, LeagueFolder(copy).store_path)
    with sqlite3.connect(LeagueFolder(copy).store_path) as db:
        db.execute("DELETE FROM games WHERE idx >= (SELECT max(idx) FROM games) - ?",
                   (count - 1,))


def old_tree(rev: str, into: Path) -> Path:
    """The source tree of `rev` (git archive), for the old way."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "referee"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def printed(data: dict) -> list[tuple]:
    """What the leaderboard prints of each row: rank, name, strength, interval, rank range,
    separation, mu, sigma, mu - 3 sigma (to the digits shown)."""
    def show(value: float | None, digits: int = 0) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return [(row.rank, row.bot, show(row.strength), show(row.strength_low),
             show(row.strength_high), row.rank_low, row.rank_high, row.separated_from_next,
             show(row.mu, 2), show(row.sigma, 2), show(row.conservative, 2))
            for row in table_rows(data)]


def table_rows(data: dict) -> list:
    """A snapshot's table rows, from this code's snapshot or an older revision's."""
    from referee.league.season import SeasonRow

    return [SeasonRow.from_json(row).table for row in data["rows"]]


def largest_difference(one: dict, two: dict) -> float:
    """The largest difference between two snapshots' numbers, row by row."""
    worst = 0.0
    for row_a, row_b in zip(table_rows(one), table_rows(two), strict=True):
        a, b = row_a.to_json(), row_b.to_json()
        for key, value in a.items():
            other = b[key]
            if isinstance(value, float) and isinstance(other, float):
                worst = max(worst, abs(value - other))
    return worst


def prime(out: Path, new_games: int, earlier: Path) -> tuple[float, float, dict]:
    """The first refit, on a copy of the season in `out` less its last `new_games` games (in
    `earlier`), its state put in `out` as if those games came in since; its (wall, CPU,
    snapshot)."""
    without_last(out, earlier, new_games)
    first = timed_refit(earlier)
    shutil.copy(LeagueFolder(earlier).refit_state, LeagueFolder(out).refit_state)
    return first


def measure(out: Path, new_games: int, work: Path) -> dict:
    """Time the first refit (on the season less its last `new_games` games, unless `work`
    holds its state from an earlier run) and the next one (after them); returns their (wall,
    CPU, snapshot), the first as None when reused."""
    earlier = work / "earlier"
    if LeagueFolder(earlier).refit_state.exists():
        shutil.copy(LeagueFolder(earlier).refit_state, LeagueFolder(out).refit_state)
        first = None
    else:
        shutil.rmtree(earlier, ignore_errors=True)
        first = prime(out, new_games, earlier)
    return {"first": first, "next": timed_refit(out)}


def cached(path: Path, make: Callable[[], tuple]) -> tuple:
    """`make()` (JSON data), kept in `path` and read from there when it is."""
    if path.exists():
        return tuple(json.loads(path.read_text()))
    made = make()
    path.write_text(json.dumps(made))
    return made


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bots", type=int, default=100)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--new-games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--no-scratch", action="store_true",
                        help="with --no-baseline: no refit from scratch to check the table")
    parser.add_argument("--against", default=AGAINST_REV,
                        help="time this revision's next refit beside the new code's ('' not)")
    parser.add_argument("--keep", type=Path, help="keep and reuse the season etc. here")
    args = parser.parse_args()
    from server import big_season  # bench/server.py: the same simulated season

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-refit-"))
    try:
        out = work / "season"
        if LeagueFolder(out).has_store():
            print(f"season: {args.bots} bots, {args.games} games, kept in {out}", flush=True)
        else:
            made = time.monotonic()
            big_season(out, args.bots, args.games, args.seed)
            print(f"season: {args.bots} bots, {args.games} games (4-player tables, simulated "
                  f"places), stored in {time.monotonic() - made:.0f} s", flush=True)
        old = None
        if not args.no_baseline:
            def old_way() -> tuple:
                shutil.rmtree(work / "old", ignore_errors=True)
                return timed_refit(out, old_tree(args.baseline_rev, work / "old"))

            old = cached(work / f"old-{args.baseline_rev}.json", old_way)
            print(f"old way ({args.baseline_rev}, every refit from the first game): "
                  f"{old[0]:.1f} s wall, {old[1]:.1f} s CPU", flush=True)
        runs = measure(out, args.new_games, work)
        if runs["first"] is None:
            print(f"first refit: its state kept in {work / 'earlier'} (not timed in this run)")
        else:
            print(f"first refit (no state yet, {args.new_games} games fewer): "
                  f"{runs['first'][0]:.1f} s wall, {runs['first'][1]:.1f} s CPU")
        wall, cpu, data = runs["next"]
        print(f"next refit ({args.new_games} new games): {wall:.1f} s wall, {cpu:.1f} s CPU",
              flush=True)
        prior = None
        if args.against:
            # the same state as the new code's next refit resumed from
            shutil.copy(LeagueFolder(work / "earlier").refit_state, LeagueFolder(out).refit_state)
            shutil.rmtree(work / "against", ignore_errors=True)
            prior = timed_refit(out, old_tree(args.against, work / "against"))
            print(f"next refit of {args.against} (the same state and games): {prior[0]:.1f} s "
                  f"wall, {prior[1]:.1f} s CPU; its printed table "
                  f"{'identical' if printed(prior[2]) == printed(data) else 'DIFFERENT'}, "
                  f"largest difference of a number {largest_difference(prior[2], data):.2g}",
                  flush=True)
        same: bool | None = None
        if old is None and not args.no_scratch:
            LeagueFolder(out).refit_state.unlink()
            scratch = timed_refit(out)
            reference, name = scratch[2], "the new code from scratch"
            print(f"refit from scratch (no state): {scratch[0]:.1f} s wall, "
                  f"{scratch[1]:.1f} s CPU")
        elif old is not None:
            reference, name = old[2], "the old way (from scratch)"
        if old is not None or not args.no_scratch:
            same = printed(data) == printed(reference)
            print(f"next refit against {name}: printed table "
                  f"{'identical' if same else 'DIFFERENT'}, largest difference of a number "
                  f"{largest_difference(data, reference):.2g}")
        if prior is not None:
            base, base_name = prior, f"next refit of {args.against}"
        elif old is not None:
            base, base_name = old, f"old way {args.baseline_rev}"
        elif not args.no_scratch:
            base, base_name = scratch, "the new code from scratch"
        else:
            raise SystemExit("bench: --no-baseline --no-scratch needs --against")
        print(f"ratio {base_name} / next refit: {base[0] / wall:.1f} wall, "
              f"{base[1] / cpu:.1f} CPU")
        verdict = ("NOT met" if wall > TARGET_S or same is False else
                   "met" if same else "met in time, the table not checked")
        checked = {True: "yes", False: "no", None: "not checked in this run"}[same]
        print(f"verdict: a refit of {args.bots} bots and {args.games} games in {wall:.1f} s "
              f"wall, {cpu:.1f} s CPU (target <= {TARGET_S:.0f} s wall; baseline "
              f"{base_name}: {base[0]:.1f} s wall, {base[1]:.1f} s CPU), same table as from "
              f"scratch: {checked}: {verdict}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

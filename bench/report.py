"""Benchmark: the size of the league report and the time to build it, beside the league itself.

Three figures, printed and never asserted (targets the report was built to):

1. A 5-player `classic` replay's data: the JSON the viewer page embeds for one game (its
   record as stored: events, decisions, bot output; the viewer rebuilds the board from the
   events). Target: under 30 KB. Also the whole replay page.
2. The report of a 1,000-game league, all files: target under 50 MB.
3. Building that report vs playing the league: the league runs first (`referee league
   --no-report`, real bot processes over gRPC), then `referee.report.site.build_report` is timed
   as the league command calls it, with the league's outcome (ratings and fit) in hand (median
   of --reps builds). Target: under 5% of the league's wall time. `referee report` on a stored
   league rates and fits it again first: that time is printed too.

The bots are copies of the sample `greedy` and `random` bots (distinct names), tables of
--players seats (default 2-5, so every size is in the report).

Usage:
    python bench/report.py                   # 1000 games, 3 report builds
    python bench/report.py --games 200 --reps 2   # quicker
    python bench/report.py --json out.json   # also write the figures as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from referee.league.folder import LeagueFolder  # noqa: E402
from referee.league.outcome import load_outcome  # noqa: E402
from referee.report.site import build_report, script_text  # noqa: E402

SAMPLE = REPO_ROOT / "sample_bots"
KB, MB = 1024, 1024 * 1024
SEED = 2**127 + 2026   # a full-size league secret (a short one draws a warning)


def bot_specs(directory: Path, count: int) -> list[Path]:
    """`count` specs alternating the sample greedy and random bots, each with its own name."""
    specs = []
    for source in ("greedy", "random"):   # a spec's workdir must lie in the spec's folder
        shutil.copytree(SAMPLE / source, directory / source)
    for n in range(count):
        source = ("greedy", "random")[n % 2]
        text = (SAMPLE / f"{source}.toml").read_text()
        text = text.replace(f'name = "{source}"', f'name = "{source}-{n}"')
        path = directory / f"{source}-{n}.toml"
        path.write_text(text)
        specs.append(path)
    return specs


def play(specs: list[Path], out: Path, games: int, players: str, seed: int) -> float:
    """Play a league with the real CLI; return its wall time in seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "referee.cli", "league", *map(str, specs),
                    "--games", str(games), "--players", players, "--seed", str(seed),
                    "--out", str(out), "--quiet", "--no-report"],
                   check=True, stdout=subprocess.DEVNULL, env={**os.environ})
    return time.perf_counter() - started


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games in the big league")
    parser.add_argument("--players", default="2-5", help="table sizes of the big league")
    parser.add_argument("--bots", type=int, default=6)
    parser.add_argument("--reps", type=int, default=3, help="report builds to time")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        root = Path(tmp)
        specs = bot_specs(root, max(args.bots, 5))

        # 1. Replay data of 5-player classic games.
        five = root / "five"
        play(specs[:5], five, 20, "5", SEED)
        store = LeagueFolder(five).open_store()
        records = list(store.records())
        store.close()
        data = [len(script_text(json.dumps(r, separators=(",", ":")).encode()).encode())
                for r in records]
        build_report(five)
        pages = [p.stat().st_size for p in (five / "report" / "games").glob("*.html")]
        figures.update(replay_data_kb_median=statistics.median(data) / KB,
                       replay_data_kb_max=max(data) / KB,
                       replay_page_kb_median=statistics.median(pages) / KB)
        print(f"5-player classic replay data ({len(data)} games): median "
              f"{figures['replay_data_kb_median']:.1f} KB, max {figures['replay_data_kb_max']:.1f}"
              f" KB (target < 30 KB); whole page median {figures['replay_page_kb_median']:.1f} KB")

        # 2 and 3. A big league, then its report.
        big = root / "big"
        league_s = play(specs, big, args.games, args.players, SEED + 1)
        # At the end of a league the runner hands its outcome (ratings, fit) to the report.
        store = LeagueFolder(big).open_store()
        outcome = load_outcome(store)
        store.close()
        builds, standalone = [], []
        for _ in range(args.reps):
            started = time.perf_counter()
            build_report(big, outcome=outcome)
            builds.append(time.perf_counter() - started)
            started = time.perf_counter()
            build_report(big)
            standalone.append(time.perf_counter() - started)
        build_s = statistics.median(builds)
        size = folder_bytes(big / "report")
        figures.update(games=args.games, league_s=league_s, build_s_median=build_s,
                       build_s_min=min(builds), build_s_max=max(builds),
                       build_pct_of_league=100 * build_s / league_s, report_mb=size / MB,
                       standalone_s_median=statistics.median(standalone),
                       report_files=sum(1 for p in (big / "report").rglob("*") if p.is_file()))
        print(f"{args.games}-game league ({len(specs)} bots, tables {args.players}): played in "
              f"{league_s:.1f} s")
        print(f"report: {figures['report_mb']:.1f} MB in {figures['report_files']} files "
              f"(target < 50 MB)")
        print(f"report build: median {build_s:.2f} s [{min(builds):.2f}-{max(builds):.2f}] over "
              f"{args.reps} builds = {figures['build_pct_of_league']:.1f}% of the league's time "
              f"(target < 5%)")
        print(f"referee report (rates and fits the league again first): median "
              f"{figures['standalone_s_median']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

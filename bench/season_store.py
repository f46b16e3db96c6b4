"""Benchmark: what a season's games take on disk, for docs/server.md's table.

Plays G real games (the sample random and greedy bots, two copies each, at tables of 4, as a
club season plays them) into a league store with `referee league`, then prints the store's
size on disk, the bytes per game of what grows with the games (bench/server.py's dbstat
measure: the games' rows, their seats' index, the schedule) and what an evening and a season
of 100,000 games take at that rate.

    python bench/season_store.py [--games 400]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from server import bytes_per_game  # noqa: E402

from referee.league.folder import LeagueFolder  # noqa: E402


def bots(folder: Path) -> list[Path]:
    """Four bots: copies of the sample random and greedy bots under names of their own."""
    specs = []
    for name, sample in (("r1", "random"), ("r2", "random"), ("g1", "greedy"),
                         ("g2", "greedy")):
        shutil.copytree(ROOT / "sample_bots" / sample, folder / name)
        spec = folder / f"{name}.toml"
        spec.write_text(f'name = "{name}"\ncommand = ["{{python}}", "main.py"]\n'
                        f'workdir = "{name}"\n')
        specs.append(spec)
    return specs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=400)
    args = parser.parse_args()
    top = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        out = top / "season"
        done = subprocess.run([sys.executable, "-m", "referee.cli", "league",
                               *map(str, bots(top)), "--games", str(args.games),
                               "--players", "4", "--seed", "1", "--out", str(out), "--quiet"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench: the league failed:\n{done.stderr[-2000:]}")
        store = LeagueFolder(out).store_path
        size = sum(p.stat().st_size for p in out.glob(f"{store.name}*"))   # with -wal, -shm
        per_game = bytes_per_game(out)
        print(f"{args.games} games at tables of 4: {store.name} {size / 1e6:.2f} MB on disk "
              f"({size / args.games:.0f} bytes a game, all in); the games' own pages: "
              f"{per_game:.0f} bytes a game")
        evening = 30 * 60 * 3 // 4   # 30 bots, 60 games per bot per hour, 3 hours, 4 a game
        for what, games in ((f"an evening (30 bots, 3 h at 60 games per bot per hour): "
                             f"{evening} games", evening),
                            ("a season of 100,000 games", 100_000)):
            print(f"  {what}: about {games * size / args.games / 1e6:.0f} MB")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()

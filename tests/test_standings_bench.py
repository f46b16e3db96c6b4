"""bench/standings.py: a small league's closing standings by this tree and by a baseline
worktree (here HEAD itself), the same table on both, the worktree gone afterwards, and a bad
row refused in one line. The figures themselves are the bench's (bench/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "standings.py"


def worktrees() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout


def test_both_trees_time_the_standings_and_print_the_same_table() -> None:
    before = worktrees()
    done = subprocess.run([sys.executable, str(BENCH), "--rows", "12x1@4,8x3@2-3",
                           "--reps", "1", "--against", "HEAD"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()
            if line.strip().startswith(("12x1@4", "8x3@2-3"))}
    assert set(rows) == {"12x1@4", "8x3@2-3"}
    assert rows["12x1@4"][1] == "3"                  # 12 bots, a game each at tables of 4
    for cells in rows.values():
        assert cells[-2] == "same"                   # the same code prints the same table
        assert float(cells[-1]) == 0.0
    assert "verdict:" in done.stdout
    assert worktrees() == before


def test_a_bad_row_is_one_line() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--rows", "200by1"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "a row is BOTSxGAMES@SIZES" in done.stderr.splitlines()[-1]

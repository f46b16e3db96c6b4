"""A small league of real bots shared by the report tests (played once per test session)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEAGUE_BOTS = [ROOT / "sample_bots" / "greedy.toml", ROOT / "sample_bots" / "random.toml",
               ROOT / "tests" / "bots" / "honest.toml", ROOT / "tests" / "bots" / "illegal.toml"]


def referee(*args: str | Path, timeout: float = 300,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real CLI; AssertionError with its output when `check` and it fails."""
    env = {**os.environ, "REFEREE_RUN_ID": uuid.uuid4().hex[:12]}
    done = subprocess.run([sys.executable, "-m", "referee.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"referee {args} failed:\n{done.stdout}\n{done.stderr}")
    return done


def play_league(out: Path, *extra: str) -> Path:
    """A 12-game league of 4 bots at tables of 2-4 (one bot always strikes) in `out`."""
    referee("league", *LEAGUE_BOTS, "--games", "12", "--players", "2-4", "--seed", "3",
            "--out", out, "--quiet", *extra)
    return out

"""The season's refit, away from the games: `python -m referee.server.runner.refit OUT` prints
the season's snapshot (referee.league.season.snapshot) as JSON, and `refit` runs it as a
subprocess so that the fit's CPU never stalls the event loop that keeps bots' time.

Each refit leaves TrueSkill's state after the season's settled games in OUT's refit state
(`LeagueFolder.refit_state`); the next one rates only the games after them
(referee.ratings.trueskill: the same ratings as from the first game). A missing, unreadable or
outdated state file costs only time.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from referee.league.folder import LeagueFolder
from referee.ratings.trueskill import RatingState
from referee.util.blas import ONE_THREAD
from referee.util.trusted import TRUSTED_CWD, python_module, trusted_env


def refit_env() -> dict[str, str]:
    """The environment of the refit's subprocess: this process's, BLAS in one thread
    (`referee.util.blas`: its matrices are small, a second thread only busy-waits)."""
    return trusted_env(ONE_THREAD)


async def refit(out: Path) -> dict[str, Any]:
    """The snapshot of the season in `out`, computed in a subprocess (RuntimeError with the
    subprocess's last line if it fails)."""
    process = await asyncio.create_subprocess_exec(
        *python_module("referee.server.runner.refit", str(out)), env=refit_env(), cwd=TRUSTED_CWD,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        stdout, stderr = await process.communicate()
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        lines = stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"the refit failed: {lines[-1] if lines else process.returncode}")
    return json.loads(stdout)


def load_state(path: Path) -> RatingState | None:
    """The TrueSkill state a refit left at `path`; None (with a line on stderr if the file is
    there but unreadable) when there is none to resume from."""
    try:
        return RatingState.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        print(f"refit: {path}: ignored, rating every game again ({exc})", file=sys.stderr)
        return None


def save_state(path: Path, state: RatingState) -> None:
    """Write `state` to `path` whole or not at all (a refit killed midway leaves the old)."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(state.to_dict()), encoding="utf-8")
    os.replace(part, path)


def main(argv: list[str]) -> int:
    """Print the snapshot of the season in argv[0], resuming from and updating its state."""
    from referee.league.season import Season, refit

    folder = LeagueFolder(Path(argv[0]))
    with Season(folder.open_store()) as season:
        data, state = refit(season, load_state(folder.refit_state))
    if state is not None:
        save_state(folder.refit_state, state)
    # json.dumps, not json.dump: dump encodes in Python, chunk by chunk (seconds for the
    # head-to-head of 100 bots), dumps in C
    sys.stdout.write(json.dumps(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

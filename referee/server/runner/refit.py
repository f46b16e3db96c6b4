"""The season's refit, away from the games: `python -m referee.server.runner.refit OUT` prints
the season's snapshot (referee.league.season.snapshot) as JSON, and `refit` runs it as a
subprocess so that the fit's minutes of CPU never stall the event loop that keeps bots' time.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from referee.league.runner import DB_NAME


async def refit(out: Path) -> dict[str, Any]:
    """The snapshot of the season in `out`, computed in a subprocess (RuntimeError with the
    subprocess's last line if it fails)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "referee.server.runner.refit", str(out),
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


def main(argv: list[str]) -> int:
    """Print the snapshot of the season in argv[0]."""
    from referee.league.season import Season, snapshot
    from referee.league.store import LeagueStore

    with Season(LeagueStore(Path(argv[0]) / DB_NAME)) as season:
        json.dump(snapshot(season), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

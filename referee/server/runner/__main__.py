"""`python -m referee.server.runner --data DIR [--season FILE] [--cluster URL|local:N]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from referee.errors import StoreError
from referee.present.text import safe_line
from referee.util.config import ConfigError


def cli(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m referee.server.runner",
                                     description="The club server's season runner.")
    parser.add_argument("--data", type=Path, default=Path("club-data"),
                        help="the data folder (default ./club-data)")
    parser.add_argument("--season", type=Path, help="the season file (default DIR/season.toml)")
    parser.add_argument("--cluster", help="play the games on dask: an address or local:N")
    args = parser.parse_args(argv)
    from referee.server.runner import main

    try:
        main(args.data, args.season, args.cluster)
    except (ConfigError, StoreError) as exc:   # the organiser's to fix: one line
        print(f"error: {safe_line(str(exc), limit=2000)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(cli())

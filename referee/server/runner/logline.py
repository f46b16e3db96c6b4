"""The season runner's lines for the organiser's terminal (`referee serve` shows its stderr)."""

from __future__ import annotations

import sys
import time


def log(message: str) -> None:
    """A line for the organiser's terminal, with the time of day."""
    print(f"runner {time.strftime('%H:%M:%S')}: {message}", file=sys.stderr, flush=True)

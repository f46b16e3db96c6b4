"""What runs now, read from /proc: for the tests that check that nothing is left running."""

from __future__ import annotations

from pathlib import Path


def running(*pids: int) -> set[int]:
    """Those of `pids` that still run (a zombie does not)."""
    found = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.add(pid)
    return found

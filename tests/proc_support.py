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


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, theirs, ...), read from /proc's children lists."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


def module_below(pid: int, module: str) -> int:
    """The process below `pid` that runs `python -m module` (e.g. uvicorn)."""
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[1:3] == [b"-m", module.encode()]:
            return child
    raise AssertionError(f"no `python -m {module}` below {pid}")


def rss_kib(pid: int) -> int:
    """The resident memory of process `pid` (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")

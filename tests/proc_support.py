"""What runs now, read from /proc: for the tests that check that nothing is left running."""

from __future__ import annotations

import os
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


def descendants(pid: int) -> dict[int, str]:
    """The processes below `pid` (children, their children...), each with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text()
                                               .rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                try:
                    raw = (Path("/proc") / str(child) / "cmdline").read_bytes()
                except OSError:
                    continue
                found[child] = raw.replace(b"\0", b" ").decode(errors="replace").strip()
                frontier.append(child)
    return found


def parent_of(pid: int) -> int | None:
    """The parent of process `pid`, or None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def modules_below(pid: int, module: str) -> list[int]:
    """The processes below `pid` that run the referee's module `module` (e.g.
    referee.server.web), as `python -I -c BOOT ROOTS module ...` (referee.util.trusted)."""
    found = []
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[1:3] == [b"-I", b"-c"] and argv[5:6] == [module.encode()]:
            found.append(child)
    return found


def module_below(pid: int, module: str) -> int:
    """The process below `pid` that runs `python -m module` (the first, if several do)."""
    found = modules_below(pid, module)
    if not found:
        raise AssertionError(f"no process of {module} below {pid}")
    return found[0]


LISTEN, ESTABLISHED = "0A", "01"    # TCP states as /proc/net/tcp writes them


def tcp_sockets(port: int) -> dict[int, str]:
    """The TCP sockets of this network namespace whose local port is `port`: inode -> state
    (LISTEN, ESTABLISHED, ...)."""
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                found[int(fields[9])] = fields[3]
    return found


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets process `pid` holds open (none once it is gone)."""
    found = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(int(target[len("socket:["):-1]))
    return found


def rss_kib(pid: int) -> int:
    """The resident memory of process `pid` (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def runs_module(command_line: str, module: str) -> bool:
    """Whether a process's command line (as `descendants` gives it) is the referee's Python
    module `module` itself (started as `python -I -c ... module`, referee.util.trusted), not
    the guard above it nor another module."""
    words = command_line.split()
    return words[1:3] == ["-I", "-c"] and module in words

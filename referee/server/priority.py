"""Who gets the CPU: the pages first, then the season.

The web server's processes run in a cgroup of the highest weight (cgroup v2's 10,000, a hundred
times an ordinary group's), and the season's runner with everything it starts (bots, checks,
builds, refits) in one cgroup of ordinary weight. The kernel shares the CPU between groups
first, so a page gets a core as soon as it asks, however many bots the season runs: where two
cores cannot give both, the server chooses the pages. The pages ask for a bounded share (their
workers, their requests' CPU), so the season keeps the rest; when the pages are idle it has
every core, and it weighs as much as any other busy program on the machine (its bots' time
limits are wall-clock: a check whose bot could not answer Hello in time on a loaded machine
failed when the season's group had a tenth of an ordinary weight, so the season is not lowered
below an ordinary program; the web is raised above them).

Measured with `bench/server.py` (50 students on the pages beside a season of 50 bots, an idle
machine otherwise): with the web at four times the season's weight the pages' p95s were
0.33-1.6 s and the season kept 0.46 of its idle pace; at a hundred times, 0.06-0.16 s with the
season at 0.44 (bench/README.md).

`nice` alone does nothing here: every child the club starts leads a session of its own (the
guard's), and with the kernel's autogroup the CPU is shared between sessions' groups first,
whatever the nice value inside them. Two ways, the first that works:

* **cgroups** (`cpu.weight`, or `cpu.shares` in cgroup v1): made beside the server's own; the
  web server and the runner each enter theirs before they run anything, and every descendant
  stays in it, new sessions and sandboxes included (a bot cannot leave it: the cgroup files are
  not in its sandbox). It needs write access to the cgroup tree (root, or a delegated systemd
  unit).
* **autogroup nice 5** for the season, when no cgroup can be made: the runner's session gets it,
  and the guard gives it to each session it leads under the runner (REFEREE_AUTOGROUP_NICE). A
  bot's own session inside bubblewrap (--new-session) is not covered, nor a process that resets
  its autogroup's nice: the cgroup is the guarantee, this is the best an unprivileged server can
  do. The web server keeps its ordinary session then.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
SEASON_CPU_WEIGHT = 100     # cgroup v2: an ordinary group's (one group for the whole season)
WEB_CPU_WEIGHT = 10000      # cgroup v2's highest: the pages first (100 times an ordinary group)
# Without a cgroup the season is several sessions (the runner, each bot's and check's guard),
# each an autogroup: at nice 5 each weighs a third of the web's, so a few busy ones leave the
# pages their share without starving the bots.
SEASON_NICE = 5
AUTOGROUP_NICE_ENV = "REFEREE_AUTOGROUP_NICE"
CGROUP_ENV = "REFEREE_SEASON_CGROUP"   # "off": do not try a cgroup (autogroup nice only)
SEASON_PREFIX = "referee-season-"
WEB_PREFIX = "referee-web-"


@dataclass(frozen=True)
class CpuGroup:
    """Where a part of the server runs: a cgroup (or None), how it was set in one line, and
    the autogroup nice its sessions take (None: left as it is)."""

    cgroup: Path | None
    how: str
    nice: int | None = SEASON_NICE

    def join(self) -> None:
        """Put the calling process in the group (in a child before it runs anything: the
        `preexec_fn` of the runner's Popen, after its setsid). Never raises."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))
        if self.nice is not None:
            lower_own_autogroup(self.nice)

    def remove(self) -> None:
        """Remove the cgroup once nothing runs in it (it is left if something still does)."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()


def lower_own_autogroup(nice: int) -> bool:
    """Give this process's session group (autogroup) a nice of `nice`, if this process leads
    its session (a session led by another process is that one's business); True if done."""
    if os.getsid(0) != os.getpid():
        return False
    try:
        Path("/proc/self/autogroup").write_text(str(nice))
    except OSError:   # no autogroup in this kernel, or not allowed
        return False
    return True


def _own_cgroup_dirs() -> list[tuple[Path, str]]:
    """(folder of this process's cgroup, version) for the CPU controller: v2, then v1."""
    found = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers and (CGROUP_ROOT / "cgroup.controllers").is_file():
            found.append((CGROUP_ROOT / path.lstrip("/"), "v2"))
        elif "cpu" in controllers.split(","):
            for mount in (controllers, "cpu", "cpu,cpuacct"):
                if (CGROUP_ROOT / mount / "cpu.shares").is_file():
                    found.append((CGROUP_ROOT / mount / path.lstrip("/"), "v1"))
                    break
    return found


def v1_shares(weight: int) -> int:
    """cgroup v1's `cpu.shares` for a cgroup v2 `cpu.weight` (1024 is v1's ordinary, 100 v2's)."""
    return weight * 1024 // 100


def _make_cgroup(base: Path, version: str, prefix: str, weight: int) -> Path:
    """A new cgroup under `base` named `prefix` and this process's id, with the CPU `weight`
    of cgroup v2 (v1's shares are 1024 per 100 of it); OSError if it can't be made."""
    if version == "v2" and "cpu" not in (base / "cgroup.subtree_control").read_text().split():
        raise OSError("the cpu controller is not delegated here")
    group = base / f"{prefix}{os.getpid()}"
    group.mkdir(exist_ok=True)
    try:
        if version == "v2":
            (group / "cpu.weight").write_text(str(weight))
        else:
            (group / "cpu.shares").write_text(str(v1_shares(weight)))
    except OSError:
        group.rmdir()
        raise
    return group


def _remove_stale(base: Path, prefix: str) -> None:
    """Remove the empty cgroups of servers that died without removing theirs."""
    for old in base.glob(f"{prefix}*"):
        pid = old.name.removeprefix(prefix)
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                old.rmdir()


def new_cgroup(prefix: str, weight: int) -> tuple[Path, str] | None:
    """A new cgroup beside this process's own, named `prefix` and this process's id, of CPU
    `weight` (cgroup v2's scale), and that weight in words; None where none can be made."""
    if os.environ.get(CGROUP_ENV, "") == "off":
        return None
    try:
        candidates = _own_cgroup_dirs()
    except (OSError, ValueError):
        candidates = []
    for base, version in candidates:
        try:
            _remove_stale(base, prefix)
            group = _make_cgroup(base, version, prefix, weight)
        except OSError:
            continue
        return group, (f"cpu.weight {weight}" if version == "v2" else
                       f"cpu.shares {v1_shares(weight)}")
    return None


def season_group() -> CpuGroup:
    """The season's scheduling group: a new cgroup of ordinary weight where one can be made,
    else autogroup nice only."""
    made = new_cgroup(SEASON_PREFIX, SEASON_CPU_WEIGHT)
    if made is not None:
        group, weight = made
        return CpuGroup(group, f"the season's processes run in cgroup {group} ({weight}) "
                               f"and autogroup nice {SEASON_NICE}")
    return CpuGroup(None, f"the season's processes run at autogroup nice {SEASON_NICE} "
                          f"(no cgroup could be made: see docs/server.md)")


def web_group() -> CpuGroup:
    """The web server's scheduling group: a new cgroup of the highest weight where one can be
    made, else none (its session as it is)."""
    made = new_cgroup(WEB_PREFIX, WEB_CPU_WEIGHT)
    if made is not None:
        group, weight = made
        return CpuGroup(group, f"the web server runs in cgroup {group} ({weight})", None)
    return CpuGroup(None, "the web server runs in its own session", None)

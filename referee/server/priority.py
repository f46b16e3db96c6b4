"""Who gets the CPU: the season's processes yield it to the pages.

The season runner, and everything it starts (bots, checks, builds, refits), share one
scheduling group, so that the pages compete with the season as one group, not with each of its
dozens of sessions; when the pages are idle the season has every core to itself. The group's
weight is an ordinary one: a lower one would also give the season's bots less than any other
busy process on the machine, and their time limits are wall-clock (a check whose bot could not
answer Hello in time on a loaded machine failed with a tenth of the weight).

`nice` alone does nothing here: every child the club starts leads a session of its own (the
guard's), and with the kernel's autogroup the CPU is shared between sessions' groups first,
whatever the nice value inside them. Two ways, the first that works:

* **a cgroup** (`cpu.weight` 100 in cgroup v2, `cpu.shares` 1024 in v1): made beside the server's
  own, the runner enters it before it runs anything, and every descendant stays in it, new
  sessions and sandboxes included (a bot cannot leave it: the cgroup files are not in its
  sandbox). It needs write access to the cgroup tree (root, or a delegated systemd unit).
* **autogroup nice 5**, when no cgroup can be made: the runner's session gets it, and the
  guard gives it to each session it leads under the runner (REFEREE_AUTOGROUP_NICE). A bot's
  own session inside bubblewrap (--new-session) is not covered, nor a process that resets its
  autogroup's nice: the cgroup is the guarantee, this is the best an unprivileged server can do.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
SEASON_CPU_WEIGHT = 100     # cgroup v2: an ordinary group's (one group for the whole season)
SEASON_CPU_SHARES = 1024    # cgroup v1: the same
# Without a cgroup the season is several sessions (the runner, each bot's and check's guard),
# each an autogroup: at nice 5 each weighs a third of the web's, so a few busy ones leave the
# pages their share without starving the bots.
SEASON_NICE = 5
AUTOGROUP_NICE_ENV = "REFEREE_AUTOGROUP_NICE"
CGROUP_ENV = "REFEREE_SEASON_CGROUP"   # "off": do not try a cgroup (autogroup nice only)
PREFIX = "referee-season-"


@dataclass(frozen=True)
class SeasonGroup:
    """Where the season's processes run: a cgroup (or None) and how it was set, in one line."""

    cgroup: Path | None
    how: str

    def join(self) -> None:
        """Put the calling process in the group (in a child before it runs anything: the
        `preexec_fn` of the runner's Popen, after its setsid). Never raises."""
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))
        lower_own_autogroup(SEASON_NICE)

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


def _make_cgroup(base: Path, version: str) -> Path:
    """A new cgroup for the season under `base` with a low CPU weight (OSError if it can't)."""
    if version == "v2" and "cpu" not in (base / "cgroup.subtree_control").read_text().split():
        raise OSError("the cpu controller is not delegated here")
    group = base / f"{PREFIX}{os.getpid()}"
    group.mkdir(exist_ok=True)
    try:
        if version == "v2":
            (group / "cpu.weight").write_text(str(SEASON_CPU_WEIGHT))
        else:
            (group / "cpu.shares").write_text(str(SEASON_CPU_SHARES))
    except OSError:
        group.rmdir()
        raise
    return group


def _remove_stale(base: Path) -> None:
    """Remove the empty season cgroups of servers that died without removing theirs."""
    for old in base.glob(f"{PREFIX}*"):
        pid = old.name.removeprefix(PREFIX)
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                old.rmdir()


def season_group() -> SeasonGroup:
    """The season's scheduling group: a new cgroup where one can be made, else autogroup nice
    only."""
    if os.environ.get(CGROUP_ENV, "") != "off":
        try:
            candidates = _own_cgroup_dirs()
        except (OSError, ValueError):
            candidates = []
        for base, version in candidates:
            try:
                _remove_stale(base)
                group = _make_cgroup(base, version)
            except OSError:
                continue
            weight = (f"cpu.weight {SEASON_CPU_WEIGHT}" if version == "v2"
                      else f"cpu.shares {SEASON_CPU_SHARES}")
            return SeasonGroup(group, f"the season's processes run in cgroup {group} ({weight}) "
                                      f"and autogroup nice {SEASON_NICE}")
    return SeasonGroup(None, f"the season's processes run at autogroup nice {SEASON_NICE} "
                             f"(no cgroup could be made: see docs/server.md)")

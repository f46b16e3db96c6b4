"""What this host lacks for the bots students bring: checked when `referee serve` starts.

Each missing piece is one line that says which bots will fail and what to install; the server
prints them at start and keeps them in the data folder (`HOST_CHECK_FILE`) for the organiser's
page. The programs a bot or its build runs are looked for where the sandbox looks for them
(its `PATH`), not on the organiser's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

HOST_CHECK_FILE = "host-check.json"
# Everything the three guides (Python, JavaScript, C++), the build network and container bots
# need on Debian 12, in one command (docs/server.md, "Install and start").
INSTALL_ALL = ("apt-get install bubblewrap slirp4netns iptables iproute2 nodejs npm g++ make "
               "pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler "
               "protobuf-compiler-grpc podman")


@dataclass(frozen=True)
class Missing:
    """A piece this host lacks: what, which bots fail without it, and what installs it."""

    piece: str
    fails: str
    install: str

    def line(self) -> str:
        """One line for the organiser."""
        return f"missing {self.piece}: {self.fails} will fail ({self.install})"


def _bot_path() -> str:
    from referee.bots.sandbox import default_env

    return default_env()["PATH"]


def _lacking(programs: tuple[str, ...], path: str) -> list[str]:
    return [name for name in programs if shutil.which(name, path=path) is None]


def _sandbox() -> Missing | None:
    from referee.bots.sandbox import sandbox_available

    if sandbox_available():
        return None
    return Missing("a working sandbox (bubblewrap)", "every upload's check and games",
                   "apt-get install bubblewrap")


def _build_network() -> Missing | None:
    from referee.bots.netns import TOOLS
    from referee.util.trusted import SYSTEM_PATH

    lacking = _lacking(tuple(TOOLS), SYSTEM_PATH)
    if os.geteuid() != 0:
        lacking.insert(0, "root")
    if not lacking:
        return None
    return Missing(f"the build network ({', '.join(lacking)})",
                   "builds with build_network = true (the JavaScript guide's npm ci)",
                   "run the server as root; apt-get install slirp4netns iptables iproute2")


def _node(path: str) -> Missing | None:
    lacking = _lacking(("node", "npm"), path)
    if not lacking:
        return None
    return Missing(f"Node.js ({', '.join(lacking)} in {path})",
                   "JavaScript bots (the JavaScript guide, the greedy-js house bot)",
                   "apt-get install nodejs npm")


def _cpp(path: str) -> Missing | None:
    lacking = _lacking(("g++", "make", "pkg-config", "protoc", "grpc_cpp_plugin"), path)
    if (pkg_config := shutil.which("pkg-config", path=path)) is not None:
        found = subprocess.run([pkg_config, "--exists", "grpc++", "protobuf"],
                               env={"PATH": path}, capture_output=True, check=False, timeout=30)
        if found.returncode != 0:
            lacking.append("the gRPC and protobuf libraries")
    if not lacking:
        return None
    return Missing(f"the C++ tool chain ({', '.join(lacking)})", "C++ bots (the C++ guide)",
                   "apt-get install g++ make pkg-config libgrpc++-dev libprotobuf-dev "
                   "protobuf-compiler protobuf-compiler-grpc")


def _podman() -> Missing | None:
    from referee.bots.container import runtime_problem

    problem = runtime_problem("podman")
    if problem is None:
        return None
    return Missing(f"a container runtime (podman: {problem})", "container bots (image_archive)",
                   "apt-get install podman; docs/containers.md sets it up")


def host_problems(bot_path: str | None = None) -> list[Missing]:
    """What this host lacks, worst first (the sandbox: without it no upload runs at all).
    Bots' programs are looked for on `bot_path`, by default the sandbox's PATH."""
    path = bot_path or _bot_path()
    found = (_sandbox(), _build_network(), _node(path), _cpp(path), _podman())
    return [missing for missing in found if missing is not None]


def save(data: Path, problems: list[Missing]) -> None:
    """Keep the start's findings for the organiser's page."""
    (data / HOST_CHECK_FILE).write_text(json.dumps([asdict(p) for p in problems]))


def saved(data: Path) -> list[Missing] | None:
    """The findings of the server's last start; None if it left none (an older server)."""
    try:
        return [Missing(**item) for item in json.loads((data / HOST_CHECK_FILE).read_text())]
    except (OSError, ValueError, TypeError):
        return None

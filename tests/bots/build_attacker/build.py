"""The build step of build_attacker: everything a hostile `npm ci` or Makefile might try, each
result written to build_report.txt in the bot's own folder (the only place a build may write),
which the bot prints when it plays. Lines are `BUILD: <what> <verdict>`.

Tries: to learn whether it is root; to read /etc/shadow and the paths in $BUILD_READ_PATHS
(other bots' code, the league database, the referee's files); to find the referee's environment
(any variable named in $BUILD_SECRET_NAMES); to write into each folder of $BUILD_WRITE_PATHS; to
reach the host at 127.0.0.1:$BUILD_PROBE_PORT; and it leaves a daemon behind (setsid, 60 s)."""

import os
import socket
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
who = "root" if os.geteuid() == 0 else "not-root"
lines = [f"BUILD: uid {os.getuid()} euid {os.geteuid()} {who}"]


def probe_read(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        lines.append(f"BUILD: read {path} READ")
    except OSError as exc:
        lines.append(f"BUILD: read {path} denied ({type(exc).__name__})")


for path in ["/etc/shadow", *filter(None, os.environ.get("BUILD_READ_PATHS", "").split(":"))]:
    probe_read(path)
for name in filter(None, os.environ.get("BUILD_SECRET_NAMES", "").split(":")):
    lines.append(f"BUILD: env {name} {'FOUND' if name in os.environ else 'absent'}")
lines.append(f"BUILD: env count {len(os.environ)} names {' '.join(sorted(os.environ))}")
for folder in filter(None, os.environ.get("BUILD_WRITE_PATHS", "").split(":")):
    target = Path(folder, f"build-attack-{os.getpid()}")
    try:
        target.write_text("owned\n")
        lines.append(f"BUILD: write {folder} WROTE")
    except OSError as exc:
        lines.append(f"BUILD: write {folder} denied ({type(exc).__name__})")
port = int(os.environ.get("BUILD_PROBE_PORT", "9"))
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    lines.append(f"BUILD: connect 127.0.0.1:{port} OPEN")
except OSError as exc:
    lines.append(f"BUILD: connect 127.0.0.1:{port} blocked ({type(exc).__name__})")
(HERE / "build_report.txt").write_text("\n".join(lines) + "\n")
lines.append("BUILD: own folder WROTE")
(HERE / "build_report.txt").write_text("\n".join(lines) + "\n")

if os.fork() == 0:   # a daemon that would outlive the build: the guard must end it
    os.setsid()
    if os.fork() == 0:
        os.environ["BUILD_DAEMON"] = "1"
        time.sleep(60)
    os._exit(0)
print("build_attacker: build done", file=sys.stderr)

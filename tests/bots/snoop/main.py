"""At the first decision of each game, tries to read what a bot must not see, reports each
attempt on stderr, then plays honestly. It never prints what it read, only how much.

* files: $LEAGUE_DB_GUESS, every path in $SNOOP_PATHS (':'-separated; e.g. another bot's
  main.py), /etc/shadow, and the usual dotfiles of /root
  -> `SNOOP: <path> denied (<error>)` or `SNOOP: <path> READ (<n> bytes)`;
* the directory /root -> `SNOOP: /root denied (<error>)` or `SNOOP: /root lists <entries>`;
* other processes: any /proc entry whose command line mentions the referee
  -> `SNOOP: referee process denied` or `SNOOP: referee process READ (pid <pid>)`;
* other bots' sockets: `/tmp/referee-*/bot.sock` other than its own address
  -> `SNOOP: other bot sockets denied` or `SNOOP: other bot sockets READ (<paths>)`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import glob  # noqa: E402
import os  # noqa: E402

import botlib  # noqa: E402

ROOT_FILES = ("/root/.bashrc", "/root/.profile", "/root/.bash_history", "/root/.ssh/id_rsa",
              "/root/.gitconfig")


def try_read(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            size = len(handle.read())
    except OSError as exc:
        return f"SNOOP: {path} denied ({type(exc).__name__})"
    return f"SNOOP: {path} READ ({size} bytes)"


def list_dir(path: str) -> str:
    try:
        entries = sorted(os.listdir(path))
    except OSError as exc:
        return f"SNOOP: {path} denied ({type(exc).__name__})"
    return f"SNOOP: {path} lists {' '.join(entries) or '(nothing)'}"


def referee_processes() -> str:
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"referee.cli" in cmdline or b"referee.bots.guard" in cmdline:
            found.append(entry)
    if found:
        return f"SNOOP: referee process READ (pid {' '.join(found)})"
    return "SNOOP: referee process denied (not visible)"


def other_sockets() -> str:
    own = os.environ.get("REFEREE_BOT_ADDRESS", "").removeprefix("unix:")
    others = [p for p in glob.glob("/tmp/referee-*/bot.sock") if p != own]
    if others:
        return f"SNOOP: other bot sockets READ ({' '.join(others)})"
    return "SNOOP: other bot sockets denied (none visible)"


def decide(request, start, n):
    if n == 1:
        paths = [os.environ.get("LEAGUE_DB_GUESS", ""),
                 *os.environ.get("SNOOP_PATHS", "").split(":"), "/etc/shadow", *ROOT_FILES]
        lines = [try_read(p) for p in paths if p]
        lines += [list_dir("/root"), referee_processes(), other_sockets()]
        print("\n".join(lines), file=sys.stderr, flush=True)
    return botlib.honest(request, start, n)


botlib.run("snoop", decide)

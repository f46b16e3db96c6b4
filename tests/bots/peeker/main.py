"""Tries, at the first decision of each game, to read the files of its own folder named in
$PEEK_PATHS (colon-separated, relative to its folder), and prints one line per file:
`PEEK: NAME: read N bytes` or `PEEK: NAME: denied (ERROR)`. If it could read any of them it
answers every request with an illegal move (strikes), else honestly: the same league locally
and on a cluster must give it the same strikes, so a file it cannot read at home must stay
unreadable on a worker."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

FOLDER = Path(__file__).resolve().parent.parent
read_any = False


def peek() -> None:
    global read_any
    for name in filter(None, os.environ.get("PEEK_PATHS", "").split(":")):
        try:
            data = (FOLDER / name).read_bytes()
        except OSError as exc:
            print(f"PEEK: {name}: denied ({type(exc).__name__})", file=sys.stderr, flush=True)
            continue
        read_any = True
        print(f"PEEK: {name}: read {len(data)} bytes", file=sys.stderr, flush=True)


def decide(request, start, n):
    if n == 1:
        peek()
    if read_any:
        return [botlib.answer(request, 0)]   # value 0 is never legal
    return botlib.honest(request, start, n)


botlib.run("peeker", decide)

"""Tries to drive the organiser's terminal with everything it controls: its Hello name and
version, its stderr (colour, clear screen, window title, cursor moves, a carriage return that
overwrites the line, a bidi override), and the details of a gRPC error status. It plays the
first legal action, except that its third decision of each game fails the stream."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

NASTY = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\rOVERWRITE\u202eevil\x9b6n"


def decide(request, start, n):
    print(f"ESCAPE: decision {n} {NASTY}", file=sys.stderr, flush=True)
    if n == 3:
        raise RuntimeError(f"status {NASTY}")
    return botlib.honest(request, start, n)


botlib.run(f"escaper{NASTY}", decide, version=f"1.0{NASTY}")

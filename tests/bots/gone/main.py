"""Starts once: exits at its first decision request, and every later start of it fails at once.

It remembers that it started by a marker file in $GONE_MARKER_DIR (default: its own folder). In
a sandbox its folder is read-only: give it a writable GONE_MARKER_DIR there, or it cannot leave
the marker and, like crash_mid, can be restarted.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

import botlib  # noqa: E402

MARKER = Path(os.environ.get("GONE_MARKER_DIR") or Path(__file__).resolve().parent) / "started"

if MARKER.exists():
    print("gone: started before, refusing to start again", file=sys.stderr, flush=True)
    sys.exit(1)
with contextlib.suppress(OSError):
    MARKER.touch()


def decide(request, start, n):
    print("gone: exiting for good", file=sys.stderr, flush=True)
    os._exit(3)


botlib.run("gone", decide)

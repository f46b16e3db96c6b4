"""Forks a child that starts a session of its own (os.setsid) and sleeps forever, then plays
honestly. The referee must still end the child when it stops the bot."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402
import time  # noqa: E402

if os.fork() == 0:   # the child: a session of its own, and a grandchild in it
    os.setsid()
    os.fork()
    while True:
        time.sleep(3600)

import botlib  # noqa: E402

botlib.run("forker")

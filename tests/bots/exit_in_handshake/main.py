"""Listens, then exits as soon as Hello is called."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402

import botlib  # noqa: E402


def hello():
    print("exit_in_handshake: bye", file=sys.stderr, flush=True)
    os._exit(4)


botlib.run("exit_in_handshake", on_hello=hello)

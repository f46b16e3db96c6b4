"""Private folders for Unix sockets, whose paths the kernel caps at 107 bytes.

A bot instance's socket, and the human seat's socket of a terminal or browser game, live in a
folder made for them in TMPDIR. `referee serve` and a club's check put TMPDIR deep in the data
folder, where the socket's path can pass the limit (gRPC then cannot listen, and the referee
sees a bot that never answers); such a folder is made in the system's /tmp instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

SOCKET_PATH_MAX = 107   # bytes of a Unix socket's path (sun_path, less its NUL)


def socket_folder(prefix: str, socket: str) -> Path:
    """A new private folder (`prefix` + random) in TMPDIR, or in /tmp when the path of
    `socket` inside it would pass the kernel's limit."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    if len(os.fsencode(folder / socket)) <= SOCKET_PATH_MAX:
        return folder
    folder.rmdir()
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


@contextlib.contextmanager
def socket_address(prefix: str, socket: str = "human.sock") -> Iterator[str]:
    """A gRPC address (`unix:<folder>/<socket>`) in a `socket_folder`, removed afterwards."""
    folder = socket_folder(prefix, socket)
    try:
        yield f"unix:{folder / socket}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)

"""The Django SECRET_KEY of one club, kept in DIR/secret_key (mode 0600)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from referee.errors import InputError


def secret_key(directory: Path) -> str:
    """Read DIR/secret_key, writing a new random one (mode 0600) on the first start.

    The web process and the runner may start at the same moment: the key is written to a
    temporary file and linked into place, so neither ever reads a half-written key.
    """
    path = directory / "secret_key"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".secret_key.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # the other process was first: its key counts
        finally:
            tmp.unlink()
    key = path.read_text().strip()
    if len(key) < 32:
        raise InputError(f"{path}: the secret key is too short; delete the file to make a new one")
    return key

"""At the first decision of each game, tries to create a file in places a bot must not write
to, and in its private /tmp (which must work), reports each attempt on stderr as
`WRITE: <path> denied (<error>)` or `WRITE: <path> WROTE`, then plays honestly.

Places: its own directory (a new file, and its own main.py opened for writing without writing
anything), /etc, /usr, /, /dev/shm, /tmp/.. escapes, every directory in $WRITER_PATHS
(':'-separated), and /tmp. Every file it manages to create is removed at once, so the bot does
no harm when run without a sandbox.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402

import botlib  # noqa: E402

HERE = Path(__file__).resolve().parent


def try_create(path: str) -> str:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        return f"WRITE: {path} denied ({type(exc).__name__})"
    try:
        os.write(fd, b"written by the writer test bot\n")
    finally:
        os.close(fd)
        os.unlink(path)
    return f"WRITE: {path} WROTE"


def try_open_for_writing(path: str) -> str:
    try:
        fd = os.open(path, os.O_WRONLY)   # no O_TRUNC, nothing written
    except OSError as exc:
        return f"WRITE: {path} denied ({type(exc).__name__})"
    os.close(fd)
    return f"WRITE: {path} WROTE (opened for writing)"


def decide(request, start, n):
    if n == 1:
        name = f"writer-probe-{os.getpid()}-{start.game_id}-{start.your_seat}"
        dirs = [str(HERE), os.getcwd(), "/etc", "/usr", "/", "/dev/shm", "/tmp/..",
                "/tmp/../etc", "/tmp/../../root",
                *(d for d in os.environ.get("WRITER_PATHS", "").split(":") if d), "/tmp"]
        lines = [try_open_for_writing(str(HERE / "main.py"))]
        lines += [try_create(f"{d.rstrip('/')}/{name}") for d in dirs]
        print("\n".join(lines), file=sys.stderr, flush=True)
    return botlib.honest(request, start, n)


botlib.run("writer", decide)

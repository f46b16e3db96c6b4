"""A command run in a pseudo-terminal, as a person at a terminal runs it: what it printed so
far (the text of the screen, without the \\r a terminal adds), typing a line, Ctrl-C."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import subprocess
import termios
import time
from collections.abc import Sequence


def _take_terminal() -> None:
    """In the child, after its new session began: make its stdin (the pty) its controlling
    terminal, so that the pty's ^C is a SIGINT to it."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`argv` started on a new pseudo-terminal (stdin, stdout and stderr) of 100 columns."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str) -> None:
        leader, follower = pty.openpty()
        self.fd = leader
        # start_new_session + the terminal as stdin: the command is its foreground process
        # group, so Ctrl-C reaches it as a terminal's would.
        self.process = subprocess.Popen(
            list(argv), stdin=follower, stdout=follower, stderr=follower, env=env, cwd=cwd,
            start_new_session=True, preexec_fn=_take_terminal)
        os.close(follower)
        self.screen = ""
        self.seen = 0   # how much of `screen` expect() has consumed

    def read_some(self, timeout: float) -> bool:
        """Read what the command printed within `timeout` s; False once it closed the pty."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:   # EIO: every writer closed the terminal
            return False
        if not data:
            return False
        self.screen += data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        return True

    def expect(self, pattern: str, timeout: float = 120) -> re.Match[str]:
        """Wait until the text printed since the last match matches `pattern` (a regex)."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.screen, self.seen)
            if found:
                self.seen = found.end()
                return found
            left = deadline - time.monotonic()
            if left <= 0 or not self.read_some(min(left, 1.0)):
                tail = self.screen[self.seen:][-2000:]
                raise AssertionError(f"{pattern!r} not printed; after the last match:\n{tail}")

    def type(self, line: str) -> None:
        """Type `line` and Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def ctrl_c(self) -> None:
        """Press Ctrl-C (the terminal sends SIGINT to its foreground process group)."""
        os.write(self.fd, b"\x03")

    def wait(self, timeout: float = 120) -> int:
        """Read everything up to the end and return the command's exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.read_some(1.0):
            pass
        code = self.process.wait(max(1.0, deadline - time.monotonic()))
        os.close(self.fd)
        return code

    def close(self) -> None:
        """Stop the command if it still runs (a failed test)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

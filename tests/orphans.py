"""Child processes of the tests that stop when pytest stops, however it stops."""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1


def stops_with_pytest() -> None:
    """A `preexec_fn`: the kernel sends the child SIGTERM when pytest dies (even by SIGKILL or a
    timeout), so a server or runner a stopped run started does not keep the machine busy. Its
    own SIGTERM handling then stops its bots."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:   # pytest already died between fork and prctl
        os.kill(os.getpid(), signal.SIGTERM)

"""gRPC's fork handlers off, before anything imports grpc.

With its fork support on (the default), gRPC restarts its poller thread in a child made by
fork(); `subprocess.Popen` with a `preexec_fn` forks (`referee serve` starts its workers and
runner so), and the child then closes its descriptors before exec: the poller finds its epoll
descriptor closed and aborts the child (SIGABRT, "epoll_wait error: Bad file descriptor";
grpc/grpc#43055). Here 36 of 300 such children aborted with it on, none with it off. No
referee process uses gRPC in a forked child that does not exec, so the handlers serve nothing.
"""

from __future__ import annotations

import os

__all__ = ["no_grpc_fork_handlers"]

FORK_SUPPORT = "GRPC_ENABLE_FORK_SUPPORT"


def no_grpc_fork_handlers() -> None:
    """Turn gRPC's fork support off in this process and its children (unless the user set it).
    The C core reads the setting when grpc is first imported."""
    os.environ.setdefault(FORK_SUPPORT, "false")

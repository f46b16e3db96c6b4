"""Keep gRPC's own log lines off the organiser's terminal.

gRPC's C core writes lines such as `E1201 23:34:55.92 add_port.cc:83] Failed to add port ...`
(and absl's `WARNING: All log messages before absl::InitializeLog() ...`) straight to stderr,
and its Python modules log through `logging`, whose last-resort handler prints warnings. What
they report reaches the organiser as one-line errors and strikes anyway; the raw lines only
garble the progress display. `quiet_transport()` silences both unless `REFEREE_DEBUG` is set
(or the organiser set `GRPC_VERBOSITY` themselves). The C core reads `GRPC_VERBOSITY` when grpc
is first imported: call this before anything imports grpc.
"""

from __future__ import annotations

import logging
import os

__all__ = ["quiet_transport"]


class _NotFromGrpc(logging.Filter):
    """Drops asyncio's reports of exceptions raised inside grpc's own callbacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        tb = exc.__traceback__ if exc is not None else None
        while tb is not None:
            if "/grpc/" in tb.tb_frame.f_code.co_filename:
                return False
            tb = tb.tb_next
        return "grpc" not in str(record.msg)


def quiet_transport() -> None:
    """Silence gRPC's C-core and Python logging unless REFEREE_DEBUG asks for it."""
    if os.environ.get("REFEREE_DEBUG"):
        return
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    logging.getLogger("grpc").setLevel(logging.CRITICAL + 1)
    logging.getLogger("asyncio").addFilter(_NotFromGrpc())

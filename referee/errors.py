"""The referee's errors: one root, and a branch for whose fault each one is.

Every error the library raises on purpose is a `RefereeError`, in one of four branches:

- `UserError`: the user's input cannot be used (a config or spec file, a command-line
  argument, an archive or upload, an output folder); the message says what and where, in one
  line, and the command line prints just that line.
- `BotFailure`: a bot failed (it did not start, sent a malformed message, broke the rules);
  during a game such failures are strikes of a `FailureKind`, not exceptions.
- `StoreError`: a store of results cannot be used as asked (unreadable, a wrong version,
  a conflicting write).
- `InternalError`: a fault of the referee itself, to be reported.

Anything else that escapes (a bare ValueError from deep inside, a KeyError...) is a fault of the
referee too: the command line reports it as an internal error with where to report it.
Existing classes keep their old bases beside these (ConfigError is still a ValueError), so
code that catches them by the old base goes on working.
"""

from __future__ import annotations

from enum import StrEnum


class RefereeError(Exception):
    """Root of the errors the referee raises on purpose."""


class UserError(RefereeError):
    """The user's input cannot be used; the message names what and where, in one line."""


class InputError(UserError, ValueError):
    """A value the user gave (an argument, an option, a path) that cannot be used; still a
    ValueError for code that catches one."""


class BotFailure(RefereeError):
    """A bot failed: it could not start, or it broke the protocol or the rules."""


class StoreError(RefereeError):
    """A store of results that cannot be used as asked: unreadable, of another version, or
    holding something else already."""


class InternalError(RefereeError):
    """A fault of the referee itself (a bug), not of its user or a bot."""


class FailureKind(StrEnum):
    """The kinds of failure a bot's answer can be struck for (docs/protocol.md, "Failure
    policy"). Each member is its own string ("timeout", ...), so records, stored tables and
    JSON hold the same bytes as plain strings would."""

    TIMEOUT = "timeout"        # no decision before the deadline (decision time + bank left)
    ILLEGAL = "illegal"        # a well-formed decision the rules do not allow
    MALFORMED = "malformed"    # a message without an action or with out-of-range values
    PROTOCOL = "protocol"      # a wrong request id, a closed stream, an unexpected message
    CRASH = "crash"            # the process died or the connection was lost


def is_users_error(exc: BaseException) -> bool:
    """True if `exc` is the user's to fix, to be told in one line: a RefereeError other than an
    InternalError, or an OSError about a file (it names one: a path the user gave, or the folder
    their command writes to)."""
    if isinstance(exc, InternalError):
        return False
    if isinstance(exc, RefereeError):
        return True
    return isinstance(exc, OSError) and exc.filename is not None

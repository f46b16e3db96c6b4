"""The bots layer's exceptions and the kinds of strike a bot can earn."""

from __future__ import annotations

from typing import NamedTuple

from referee.errors import BotFailure, FailureKind
from referee.present.text import safe_line

# Strike types (docs/protocol.md, "Failure policy"): the members of FailureKind, by their
# older names.
TIMEOUT = FailureKind.TIMEOUT
ILLEGAL = FailureKind.ILLEGAL
MALFORMED = FailureKind.MALFORMED
PROTOCOL = FailureKind.PROTOCOL
CRASH = FailureKind.CRASH
# Typed as strings: tables count strikes by the kind strings that stores and records hold.
STRIKE_TYPES: tuple[str, ...] = tuple(FailureKind)
REASON_LIMIT = 1000   # characters kept of an error's reason


class Failure(NamedTuple):
    """What a bot did wrong in answer to one request: the strike's kind and why (the detail may
    quote the bot)."""

    kind: FailureKind
    detail: str


class BotError(BotFailure):
    """Base class of the errors about one bot; `bot` names it."""

    def __init__(self, bot: str, message: str) -> None:
        # The message may quote the bot (its output, gRPC status details): shown escaped.
        message = safe_line(message, limit=REASON_LIMIT)
        super().__init__(f"bot {safe_line(bot)!r}: {message}")
        self.bot = bot
        self.reason = message


class BotStartError(BotError):
    """A bot could not be built, launched or made ready."""

"""The bots layer's exceptions and the kinds of strike a bot can earn."""

from __future__ import annotations

from referee.text import safe_line

# Strike types (docs/protocol.md, "Failure policy").
TIMEOUT = "timeout"        # no decision before the deadline (decision time + bank left)
ILLEGAL = "illegal"        # a well-formed decision the rules do not allow
MALFORMED = "malformed"    # a message without an action or with out-of-range values
PROTOCOL = "protocol"      # a wrong request id, a closed stream, an unexpected message
CRASH = "crash"            # the process died or the connection was lost
STRIKE_TYPES = (TIMEOUT, ILLEGAL, MALFORMED, PROTOCOL, CRASH)
REASON_LIMIT = 1000   # characters kept of an error's reason


class BotError(Exception):
    """Base class of the errors about one bot; `bot` names it."""

    def __init__(self, bot: str, message: str) -> None:
        # The message may quote the bot (its output, gRPC status details): shown escaped.
        message = safe_line(message, limit=REASON_LIMIT)
        super().__init__(f"bot {safe_line(bot)!r}: {message}")
        self.bot = bot
        self.reason = message


class BotStartError(BotError):
    """A bot could not be built, launched or made ready."""

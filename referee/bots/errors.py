"""The bots layer's exceptions and the kinds of strike a bot can earn."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from referee.errors import BotFailure, FailureKind
from referee.present.text import safe_line

# The strike kinds (docs/protocol.md, "Failure policy") are FailureKind's members, named only
# there. Typed as strings here: tables count strikes by the kind strings stores and records hold.
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


def told(exc: BaseException, owned: Collection[str], limit: int = 300) -> str:
    """`exc` as one line for a reader who owns the bots `owned`: a bot's start-up output is
    shown to its owner only (BotStartError.told_to), any other error as it says itself."""
    if isinstance(exc, BotStartError):
        return safe_line(exc.told_to(exc.bot in owned), limit=limit)
    return safe_line(str(exc), limit=limit)


class BotStartError(BotError):
    """A bot could not be built, launched or made ready. `reason` says why without the bot's
    output; `output` is the tail of what it printed, private to its owner: the message
    (`str`) holds both, for the operator of a local run who owns every bot, while the club
    shows the output only to the bot's owner (`told_to`)."""

    def __init__(self, bot: str, message: str, output: str = "",
                 lines: Sequence[str] = ()) -> None:
        # `lines`: a tool's own lines (a compiler's errors), shown as lines where a report
        # has room (referee check) and joined after `message` where one line must do.
        self.lines = tuple(safe_line(line, limit=REASON_LIMIT) for line in lines)
        joined = " | ".join(line.strip() for line in self.lines)
        whole = f"{message}: {joined}" if self.lines else message
        output = safe_line(output, limit=REASON_LIMIT) if output else ""
        super().__init__(bot, f"{whole}; its output: {output}" if output else whole)
        self.reason = safe_line(whole, limit=REASON_LIMIT)
        self.head = safe_line(message, limit=REASON_LIMIT)
        self.output = output
        self.message = message

    def __reduce__(self) -> tuple[type[BotStartError], tuple[str, str, str, tuple[str, ...]]]:
        # Pickled (to and from a cluster's workers) with its parts, not its formatted text.
        return type(self), (self.bot, self.message, self.output, self.lines)

    @property
    def detail(self) -> str:
        """The reason with the bot's output: for its owner only (a check, a local run)."""
        return f"{self.reason}; its output: {self.output}" if self.output else self.reason

    def told_to(self, owner: bool) -> str:
        """The error as one line for a reader: with the bot's output for its `owner`, the
        reason alone for anyone else."""
        if owner:
            return str(self)
        return f"bot {safe_line(self.bot)!r}: {self.reason}"

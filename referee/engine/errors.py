"""The engine's exceptions: one base class, one subclass per kind of mistake, each also in
the branch of referee.errors for whose mistake it is."""

from referee.errors import BotFailure, InternalError, RefereeError, UserError


class EngineError(RefereeError):
    """Base class of every error the engine raises."""


class RulesError(EngineError, UserError, ValueError):
    """A rule set, option or player count that is not valid; the message names the valid range.
    The user's: rules come from a preset name, a rules file or a command's options."""


class IllegalActionError(EngineError, BotFailure, ValueError):
    """An action that the rules do not allow in the current state; the message says why. The
    player's (a bot's) mistake; the referee strikes it before the engine sees it."""


class RecordError(EngineError, UserError, ValueError):
    """A game record that cannot be read: not a record, of another version, or holding an
    unknown or incomplete event. The user's: records come from the files they name."""


class GameOverError(EngineError, InternalError):
    """An action was applied to a game that has ended: the caller's fault."""

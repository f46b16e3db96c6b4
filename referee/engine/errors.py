"""The engine's exceptions: one base class, one subclass per kind of mistake."""


class EngineError(Exception):
    """Base class of every error the engine raises."""


class RulesError(EngineError, ValueError):
    """A rule set, option or player count that is not valid; the message names the valid range."""


class IllegalActionError(EngineError, ValueError):
    """An action that the rules do not allow in the current state; the message says why."""


class GameOverError(EngineError):
    """An action was applied to a game that has ended."""

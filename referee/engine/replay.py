"""Replaying a game record through the engine: does every recorded event follow from the rules,
the seed and the placements? (docs/replay-format.md, "Replay and divergences")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.engine.errors import IllegalActionError
from referee.engine.game import Game
from referee.engine.record import GameRecord, event_to_dict


@dataclass(frozen=True)
class Divergence:
    """Where a replay first disagrees with a record."""

    index: int                      # index of the first differing event
    expected: dict[str, Any] | None  # the recorded event (None: the record ends early)
    actual: dict[str, Any] | None    # the re-derived event (None: the replay ends early)
    reason: str

    def __str__(self) -> str:
        return f"event {self.index}: {self.reason}"


def replay(record: GameRecord) -> Divergence | None:
    """Replay a record's placements through the engine; return the first divergence, or None.

    Every event is re-derived from the rules, the seed and the placements: funding, rolls,
    scoring, leftovers and the final ranking must all match the record.
    """
    game = Game(record.rules, record.players, record.seed)
    assert game.events is not None
    illegal: str | None = None
    for action in record.actions():
        if game.is_over:
            illegal = "the record places dice after the game ended"
            break
        try:
            game.apply(action)
        except IllegalActionError as exc:
            illegal = f"recorded placement {action} is illegal here: {exc}"
            break
    derived = game.events
    for i, recorded in enumerate(record.events):
        expected = event_to_dict(recorded)
        actual = event_to_dict(derived[i]) if i < len(derived) else None
        if actual != expected:
            differs = f"the recorded {expected['type']!r} event differs from the replay"
            if actual is not None:
                reason = differs
            else:
                reason = illegal or "the replay ends before this event"
            return Divergence(i, expected, actual, reason)
    if illegal:
        return Divergence(len(record.events), None, None, illegal)
    if record.final() is None and game.is_over:
        return Divergence(len(record.events), None, event_to_dict(derived[len(record.events)]),
                          "the record stops before the game's end")
    return None

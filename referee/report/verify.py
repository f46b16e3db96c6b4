"""Checking records against the engine: every event, score and standing that differs.

`referee.engine.replay` stops at the first divergence; a published league is checked here in
full, so its reader sees each changed event, not just the first one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from referee.engine import Game, GameRecord, IllegalActionError
from referee.engine.record import event_to_dict
from referee.game.match import final_places
from referee.report.record_sources import StoredRecord


@dataclass(frozen=True)
class Difference:
    """One thing a record says that its replay does not."""

    where: str          # "event 41 (score)", "places", "store money"
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return (f"{self.where}: recorded {_short(self.recorded)}, "
                f"replay gives {_short(self.replayed)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def differences(stored: StoredRecord) -> list[Difference]:
    """Every difference between a record and the game its rules, seed and placements give.

    Each recorded event is compared with the event the engine derives at the same index; the
    match metadata's `places` with the R26 places of the replay (forfeited seats last); and,
    for a league's game, the store's own places and money columns with the replay's.
    Raises ValueError when the data is not a readable record at all.
    """
    record = GameRecord.from_json(stored.data)
    game = Game(record.rules, record.players, record.seed)
    found: list[Difference] = []
    for number, action in enumerate(record.actions(), start=1):
        if game.is_over:
            found.append(Difference(f"placement {number}", list(action), "the game is over"))
            break
        try:
            game.apply(action)
        except IllegalActionError as exc:
            found.append(Difference(f"placement {number}", list(action), f"illegal: {exc}"))
            break
    derived = [event_to_dict(e) for e in game.events or []]
    recorded = [event_to_dict(e) for e in record.events]
    for i in range(max(len(derived), len(recorded))):
        mine = recorded[i] if i < len(recorded) else None
        theirs = derived[i] if i < len(derived) else None
        if mine == theirs:
            continue
        if mine is None and not game.is_over:
            break   # a record of a game in progress may stop anywhere
        kind = (mine or theirs or {}).get("type")
        found.append(Difference(f"event {i} ({kind})", _fields(mine, theirs),
                                _fields(theirs, mine)))
    if game.is_over:
        found += _standings(stored, record, game)
    return found


def _fields(event: dict | None, other: dict | None) -> Any:
    """The fields of `event` that differ from `other` (all of it if `other` is missing)."""
    if event is None or other is None or event.get("type") != other.get("type"):
        return event
    return {key: value for key, value in event.items() if other.get(key) != value}


def _standings(stored: StoredRecord, record: GameRecord, game: Game) -> list[Difference]:
    found = []
    forfeited = [False] * record.players
    for forfeit in record.meta.get("forfeits", []):
        if isinstance(forfeit, dict) and forfeit.get("seat") in range(record.players):
            forfeited[forfeit["seat"]] = True
    places = final_places(game, forfeited)
    if "places" in record.meta and record.meta["places"] != places:
        found.append(Difference("places", record.meta["places"], places))
    if stored.row is not None:
        if stored.row["places"] != places:
            found.append(Difference("store places", stored.row["places"], places))
        if stored.row["money"] != list(game.money):
            found.append(Difference("store money", stored.row["money"], list(game.money)))
    return found

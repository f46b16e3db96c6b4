"""Game records: every event of a game, as data that can be stored, shared and replayed.

In memory an event is a tuple whose first item names its type; `EVENT_FIELDS` names the rest.
On disk (JSON) each event is an object with a "type" key and those fields. Participant indexes
in "counts", "cancelled" and "payouts" are seats, and `players` stands for the neutral player.
The format is documented in docs/replay-format.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.engine.actions import Action
from referee.engine.cache import BoundedCache
from referee.engine.errors import RecordError
from referee.engine.rules import RuleSet

RECORD_FORMAT = "referee-game-record"
RECORD_VERSION = 1
RESERVED_KEYS = frozenset({"format", "version", "rules", "players", "seed", "events"})

EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "round": ("round", "start_seat", "casinos"),
    "preroll": ("faces",),
    "roll": ("seat", "own", "big", "neutral"),
    "place": ("seat", "value", "slot", "own", "big", "neutral"),
    "score": ("target", "counts", "cancelled", "payouts", "leaving"),
    "end": ("money", "notes", "places"),
}


def event_to_dict(event: tuple) -> dict[str, Any]:
    """The JSON form of one event."""
    if event[0] == "roll":  # held in memory as (seat, faces, ordinary count, big count)
        _, seat, faces, a, b = event
        return {"type": "roll", "seat": seat, "own": list(faces[:a]),
                "big": list(faces[a:a + b]), "neutral": list(faces[a + b:])}
    kind, *values = event
    out: dict[str, Any] = {"type": kind}
    for name, value in zip(EVENT_FIELDS[kind], values, strict=True):
        out[name] = _to_lists(value)
    if kind == "place":
        out["slot"] = bool(out["slot"])
    return out


_COMPACT = (",", ":")
_dumps = json.JSONEncoder(separators=_COMPACT).encode
_NUMBERS = [str(n) for n in range(256)]   # dice faces, seats, counts


def _faces(faces: bytes) -> str:
    return ",".join([_NUMBERS[f] for f in faces])


def _ints(values: Sequence[int]) -> str:
    return ",".join(map(str, values))


def event_json(event: tuple) -> str:
    """The compact JSON text of one event, `json.dumps(event_to_dict(event),
    separators=(",", ":"))`, written directly: a league writes one record per game."""
    kind = event[0]
    if kind == "place":
        _, seat, value, slot, own, big, neutral = event
        return (f'{{"type":"place","seat":{seat},"value":{value},'
                f'"slot":{"true" if slot else "false"},"own":{own},"big":{big},'
                f'"neutral":{neutral}}}')
    if kind == "roll":
        _, seat, faces, a, b = event
        if a == len(faces):  # ordinary dice only
            return f'{{"type":"roll","seat":{seat},"own":[{_faces(faces)}],"big":[],"neutral":[]}}'
        return (f'{{"type":"roll","seat":{seat},"own":[{_faces(faces[:a])}],'
                f'"big":[{_faces(faces[a:a + b])}],"neutral":[{_faces(faces[a + b:])}]}}')
    if kind == "score":
        _, target, counts, cancelled, payouts, leaving = event
        paid = ",".join([f"[{who},{amount}]" for who, amount in payouts])
        return (f'{{"type":"score","target":{target},"counts":[{_ints(counts)}],'
                f'"cancelled":[{_ints(cancelled)}],"payouts":[{paid}],'
                f'"leaving":[{_ints(leaving)}]}}')
    # The other kinds hold ints and (nested) lists and tuples, which JSON writes alike.
    return _dumps({"type": kind, **dict(zip(EVENT_FIELDS[kind], event[1:], strict=True))})


# The JSON texts of place events by event: a game's placements are a hundred or so distinct
# tuples, repeated game after game.
_PLACE_TEXTS = BoundedCache(event_json)


def event_texts(events: Sequence[tuple]) -> str:
    """The JSON texts of `events`, comma-separated (the inside of a JSON list)."""
    texts = _PLACE_TEXTS
    return ",".join([texts[e] if e[0] == "place" else event_json(e) for e in events])


def event_from_dict(data: dict[str, Any]) -> tuple:
    """The tuple form of one JSON event; RecordError (a ValueError) if it is not a known event."""
    kind = data.get("type")
    if kind not in EVENT_FIELDS:
        raise RecordError(f"unknown event type {kind!r}")
    try:
        if kind == "roll":
            own, big, neutral = data["own"], data["big"], data["neutral"]
            return ("roll", data["seat"], bytes(own + big + neutral), len(own), len(big))
        return (kind, *(_to_tuples(data[name]) for name in EVENT_FIELDS[kind]))
    except KeyError as missing:
        raise RecordError(f"event {kind!r} lacks the field {missing}") from None


def _to_lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_to_lists(v) for v in value]
    return value


def _to_tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_to_tuples(v) for v in value)
    return value


@dataclass
class GameRecord:
    """A complete game: rules, seats, seed, every event, and free-form `meta` from the match
    (bots and their versions, latencies, strikes)."""

    rules: RuleSet
    players: int
    seed: int
    events: list[tuple]
    meta: dict[str, Any] = field(default_factory=dict)

    def actions(self) -> list[Action]:
        """The placements of the game, in order: all a replay needs besides the seed."""
        return [Action(e[2], e[3]) for e in self.events if e[0] == "place"]

    def final(self) -> tuple | None:
        """The game-end event, or None if the record stops before the end."""
        return self.events[-1] if self.events and self.events[-1][0] == "end" else None

    def _header(self) -> dict[str, Any]:
        """Everything of `to_json` but the events, in the same order."""
        clash = RESERVED_KEYS & set(self.meta)
        if clash:
            raise ValueError(f"record metadata may not use the key {sorted(clash)[0]!r}")
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules": self.rules.to_dict(),
            "players": self.players,
            "seed": self.seed,
            **self.meta,
        }

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data (see docs/replay-format.md)."""
        return {**self._header(), "events": [event_to_dict(e) for e in self.events]}

    def to_json_text(self) -> str:
        """The record as compact JSON text, `json.dumps(self.to_json(), separators=(",", ":"))`
        made several times faster: a league stores one per game."""
        header = _dumps(self._header())
        return f'{header[:-1]},"events":[{event_texts(self.events)}]}}'

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        """Read a record; RecordError (a ValueError) naming the problem if it is not a valid one."""
        if data.get("format") != RECORD_FORMAT:
            raise RecordError(f"not a game record (format {data.get('format')!r})")
        if data.get("version") != RECORD_VERSION:
            raise RecordError(f"unsupported record version {data.get('version')!r}")
        reserved = RESERVED_KEYS
        return cls(
            rules=RuleSet.from_dict(data["rules"]),
            players=data["players"],
            seed=data["seed"],
            events=[event_from_dict(e) for e in data["events"]],
            meta={k: v for k, v in data.items() if k not in reserved},
        )

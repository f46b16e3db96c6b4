"""Conversions between the engine's objects and the protocol messages (proto/lasvegas/v1).

Used by both sides of the wire. The referee turns a `View` into a decision request and a bot's
`Decision` back into an engine `Action`; the SDK rebuilds the `View` from the request, so a
Python bot sees what the referee's engine sees:

    data = request_bytes(game.view(seat), request_id=7, time_bank_ms=5000)  # a RefereeMessage
    decode_request(rules, players, seat, data).view == canonical_view(game.view(seat))

The hot paths (`request_bytes` on the referee side, `decode_message` / `decode_request` and
`decision_bytes` on the bot side) run once per decision, so they work on the wire format
directly: a decision request is mostly unchanged casinos and seats from the previous one, and
their encodings (and, on the bot side, their decoded `CasinoView`/`SeatView`) are cached. The
message-object functions (`decision_request`, `view_from_request`, `action_from_pb`, ...) give
the same results for callers that hold `pb` messages; the tests check both paths against
messages built field by field.

bot.proto's orders apply: roll faces ascending, slot placements by ascending value. The engine's
`View` keeps rolls in stream order and slot placements in placement order, so the view a bot
rebuilds equals `canonical_view(view)` (the same view in the protocol's order; nothing a rule
depends on differs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import compress
from operator import attrgetter, not_
from typing import Any, NamedTuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message

from referee import cache
from referee.cache import BoundedCache
from referee.engine.actions import CASINO_ACTIONS, SLOT_ACTIONS, Action, Roll
from referee.engine.errors import RulesError
from referee.engine.game import Game
from referee.engine.rules import RuleSet
from referee.engine.view import (
    CasinoView,
    SeatView,
    SlotPlacement,
    View,
    make_frozen,
    public_parts,
)
from referee.protocol import pb

__all__ = [
    "Decoded", "DecodedRequest", "MalformedAction", "MalformedMessage", "PLAY_METHOD",
    "action_from_pb", "action_to_pb", "canonical_view", "decision_bytes", "decision_message",
    "decision_request", "decode_message", "decode_request", "game_end", "game_request_bytes",
    "game_start", "quick_decision", "request_bytes", "rules_from_pb", "rules_to_pb",
    "view_from_request",
]

#: The full method name of Bot.Play, for callers that send pre-encoded bytes
#: (`channel.stream_stream(PLAY_METHOD)` without a request serializer).
PLAY_METHOD = "/lasvegas.v1.Bot/Play"


class MalformedMessage(ValueError):
    """A protocol message that does not decode or lacks a required part (docs/protocol.md,
    "malformed")."""


class MalformedAction(MalformedMessage):
    """A Decision without an action, or an action whose value is not a face from 1 to 6 (the
    "malformed" strike). A well-formed action that is not legal now is not malformed: compare it
    with the legal actions (the "illegal" strike)."""


# ------------------------------------------------------------------------------------ rules

_FUNDING = {"threshold": pb.FUNDING_THRESHOLD, "notes": pb.FUNDING_NOTES}
_NEUTRAL = {"none": pb.NEUTRAL_NONE, "white": pb.NEUTRAL_WHITE, "grey": pb.NEUTRAL_GREY}
_LEFTOVERS = {"bottom": pb.LEFTOVERS_BOTTOM, "discard": pb.LEFTOVERS_DISCARD}
_FUNDING_BACK = {v: k for k, v in _FUNDING.items()}
_NEUTRAL_BACK = {v: k for k, v in _NEUTRAL.items()}
_LEFTOVERS_BACK = {v: k for k, v in _LEFTOVERS.items()}


def rules_to_pb(rules: RuleSet) -> pb.Rules:
    """The `Rules` message of a rule set. Every option is sent as it is, including those the
    funding mode does not use (threshold, notes_per_casino), so `rules_from_pb` gives back an
    equal rule set."""
    return pb.Rules(
        preset=rules.preset,
        min_players=rules.min_players,
        max_players=rules.max_players,
        rounds=rules.rounds,
        dice=rules.dice,
        big_dice=rules.big_dice,
        funding=_FUNDING[rules.funding],
        threshold=rules.threshold,
        scaled_threshold=rules.scaled_threshold,
        notes_per_casino=rules.notes_per_casino,
        hundred_k=rules.hundred_k,
        slot=rules.slot,
        neutral=_NEUTRAL[rules.neutral],
        leftovers=_LEFTOVERS[rules.leftovers],
    )


def rules_from_pb(msg: pb.Rules) -> RuleSet:
    """The rule set of a `Rules` message; RulesError (a ValueError) naming the problem if it is
    not a valid one (an unspecified enum, a value out of range)."""
    return _RULES[msg.SerializeToString()]


def _rules_from_pb(msg: pb.Rules) -> RuleSet:
    try:
        funding = _FUNDING_BACK[msg.funding]
        neutral = _NEUTRAL_BACK[msg.neutral]
        leftovers = _LEFTOVERS_BACK[msg.leftovers]
    except KeyError as bad:
        raise RulesError(f"the Rules message has an unspecified or unknown enum value {bad}"
                         ) from None
    return RuleSet(
        preset=msg.preset or "custom",
        min_players=msg.min_players,
        max_players=msg.max_players,
        rounds=msg.rounds,
        dice=msg.dice,
        big_dice=msg.big_dice,
        funding=funding,
        threshold=msg.threshold,
        scaled_threshold=msg.scaled_threshold,
        notes_per_casino=msg.notes_per_casino,
        hundred_k=msg.hundred_k,
        slot=msg.slot,
        neutral=neutral,
        leftovers=leftovers,
    )


# ------------------------------------------------------------------------------------ start/end


def game_start(
    game_id: str,
    rules: RuleSet | pb.Rules,
    bot_names: Sequence[str],
    your_seat: int,
    *,
    decision_ms: int,
    game_bank_ms: int = 0,
    autoplay_forced: bool = False,
) -> pb.RefereeMessage:
    """The first message of a Play stream: a `RefereeMessage` holding a `GameStart`. `rules` may
    be a `Rules` message already (to convert a rule set once for all seats)."""
    return pb.RefereeMessage(start=pb.GameStart(
        game_id=game_id,
        rules=rules if isinstance(rules, pb.Rules) else rules_to_pb(rules),
        seats=[pb.SeatInfo(seat=s, bot_name=name) for s, name in enumerate(bot_names)],
        your_seat=your_seat,
        time_control=pb.TimeControl(decision_ms=decision_ms, game_bank_ms=game_bank_ms),
        autoplay_forced=autoplay_forced,
    ))


def game_end(
    game_id: str,
    places: Sequence[int],
    money: Sequence[int],
    notes: Sequence[int],
    *,
    forfeited_seats: Sequence[bool] = (),
    forfeited: bool = False,
    reason: str = "",
    strikes: int = 0,
) -> pb.RefereeMessage:
    """The last message of a Play stream: a `RefereeMessage` holding a `GameEnd` with every
    seat's standing in seat order, and this bot's own forfeit and strikes."""
    gave_up = forfeited_seats or (False,) * len(places)
    return pb.RefereeMessage(end=pb.GameEnd(
        game_id=game_id,
        standings=[
            pb.Standing(seat=s, place=p, money=m, notes=k, forfeited=f)
            for s, (p, m, k, f) in enumerate(zip(places, money, notes, gave_up, strict=True))
        ],
        forfeited=forfeited,
        reason=reason,
        strikes=strikes,
    ))


# ------------------------------------------------------------------------------------ wire format
#
# Protobuf wire format, just what the hot paths need. A field's key is (number << 3 | type),
# type 0 for varints and 2 for length-delimited data (messages, packed repeated varints). Every
# field number here is below 16, so keys are one byte. proto3 omits scalars equal to zero.

_BYTE = [bytes((i,)) for i in range(256)]


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _BYTE[n]
    if n < 0x4000:  # sizes, latencies
        return bytes(((n & 0x7F) | 0x80, n >> 7))
    if n < 0x200000:  # time banks, notes
        return bytes(((n & 0x7F) | 0x80, ((n >> 7) & 0x7F) | 0x80, n >> 14))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Varints below 4096 (sizes, request ids, dice, most latencies) by table: a list index instead
# of a function call, on paths that run per decision.
_VARINTS = [_varint(n) for n in range(4096)]


def _field(key: int, data: bytes) -> bytes:
    """A length-delimited field with one-byte key `key`."""
    size = len(data)
    return _BYTE[key] + (_VARINTS[size] if size < 4096 else _varint(size)) + data


def _packed(key: int, values: Sequence[int]) -> bytes:
    """A packed repeated varint field (empty if there are no values)."""
    if not values:
        return b""
    return _field(key, b"".join(map(_LARGE.__getitem__, values)))   # note values recur


def _scalar(key: int, value: int) -> bytes:
    return _BYTE[key] + _varint(value) if value else b""


def _encode_seat_dice(key: tuple[int, int, int]) -> bytes:
    seat, ordinary, big = key
    # Casino.dice = 3; SeatDice.seat = 1, ordinary = 2, big = 3. A repeated message is written
    # even when all its fields are zero.
    return _field(0x1A, _scalar(0x08, seat) + _scalar(0x10, ordinary) + _scalar(0x18, big))


# A bot sees the same few rule sets game after game: convert each once, by its encoding.
_RULES = BoundedCache(lambda data: _rules_from_pb(pb.Rules.FromString(data)))
_SEAT_DICE_BYTES = BoundedCache(_encode_seat_dice)
_NOTES_BYTES = BoundedCache(lambda notes: _packed(0x12, notes))  # Casino.notes = 2


def _encode_dice(key: tuple[tuple[int, ...], tuple[int, ...]]) -> bytes:
    """Casino.dice of a casino's (ordinary, big) dice by seat: one SeatDice per seat."""
    ordinary, big = key
    return b"".join([_SEAT_DICE_BYTES[seat, own, bigs]
                     for seat, (own, bigs) in enumerate(zip(ordinary, big, strict=True))])


# A placement changes one casino's dice; the same few spreads of dice over the seats recur.
_DICE_BYTES = BoundedCache(_encode_dice)
_TARGET_BYTES = [b"\x08" + _BYTE[t] for t in range(128)]   # Casino.target = 1 (1..7)


def _encode_casino(c: CasinoView) -> bytes:
    # Casino.target = 1 (never 0), notes = 2, dice = 3 (one per seat), neutral_dice = 4.
    body = _TARGET_BYTES[c.target] + _NOTES_BYTES[c.notes] + _DICE_BYTES[c.ordinary, c.big]
    if c.neutral:
        body += b"\x20" + _VARINTS[c.neutral]   # at most a few dozen dice
    return _field(0x2A, body)  # State.casinos = 5


def _encode_seat(s: SeatView) -> bytes:
    # SeatState fields 1..6 in order; proto3 writes nothing for 0. Counts are small; money is
    # a few distinct round sums.
    varints = _VARINTS
    body = b""
    if s.seat:
        body += b"\x08" + varints[s.seat]
    if s.dice:
        body += b"\x10" + varints[s.dice]
    if s.big_dice:
        body += b"\x18" + varints[s.big_dice]
    if s.neutral_dice:
        body += b"\x20" + varints[s.neutral_dice]
    if s.money:
        body += b"\x28" + _LARGE[s.money]
    if s.notes:
        body += b"\x30" + varints[s.notes]
    return b"\x32" + _BYTE[len(body)] + body  # State.seats = 6; at most 6 x 11 bytes


def _encode_slot(p: SlotPlacement) -> bytes:
    msg = pb.SlotDice(value=p.value, seat=p.seat, ordinary=p.ordinary, big=p.big,
                      neutral=p.neutral)
    return _field(0x4A, msg.SerializeToString())  # State.slot_dice = 9


def _part_bytes(parts: Sequence[Any], encode: Callable[[Any], bytes]) -> list[bytes]:
    """The encodings of view parts (casinos, seats, a deck), from `_PART_BYTES` by id; parts
    not seen before are encoded and kept there."""
    found = list(map(_PART_BYTES_GET, map(id, parts)))
    if None in found:
        if len(_PART_BYTES) >= cache.CACHE_LIMIT:
            _PART_BYTES.clear()
            _PARTS_KEPT.clear()
        # Usually one or two parts changed: visit only their indexes (`not` is True for None
        # alone, an encoding is never empty).
        for i in compress(range(len(found)), map(not_, found)):
            part = parts[i]
            found[i] = _PART_BYTES[id(part)] = encode(part)
            _PARTS_KEPT[id(part)] = part
    return found


def _encode_deck(notes: tuple[int, ...]) -> bytes:
    return _packed(0x3A, notes)  # State.deck_notes = 7


#: Encodings of view parts (casinos, seats, decks) by id: `make_view` hands out the same part
#: object for as long as it is unchanged, so a request re-encodes only what the last move
#: changed. `_PARTS_KEPT` keeps each part alive while its entry exists, so an id in
#: `_PART_BYTES` stands for one object (ids are reused only after an object is freed).
_PART_BYTES: dict[int, bytes] = {}
_PART_BYTES_GET = _PART_BYTES.get
_PARTS_KEPT: dict[int, Any] = {}
_SLOT_BYTES = BoundedCache(_encode_slot)
# Small scalars of State (round, rounds, start seat, current seat: all below 128, the rules
# allow at most 100 rounds) with their keys: proto3 writes nothing for 0.
_SMALL = {key: [b""] + [_BYTE[key] + _BYTE[v] for v in range(1, 128)]
          for key in (0x08, 0x10, 0x18, 0x20)}
# DecisionRequest.legal = 4; Action.value = 1, Action.slot = 2.
_LEGAL_BYTES = {a: _field(0x22, _BYTE[0x08] + _BYTE[a.value] + (b"\x10\x01" if a.slot else b""))
                for table in (CASINO_ACTIONS, SLOT_ACTIONS) for a in table.values()}
# Decision.action = 2.
_ACTION_BYTES = {a: _field(0x12, _BYTE[0x08] + _BYTE[a.value] + (b"\x10\x01" if a.slot else b""))
                 for table in (CASINO_ACTIONS, SLOT_ACTIONS) for a in table.values()}
_by_value = attrgetter("value")
# Varints of 4096 and more that recur: note values (a deck's are written once a round), money
# (sums of a few note values) and time banks (they change only when a decision overruns its
# allowance).
_LARGE = BoundedCache(_varint)


def _request_body(view: View, request_id: int, time_bank_ms: int,
                  last_latency_us: int) -> bytearray:
    """The encoded DecisionRequest of `view` (fields in number order, as protobuf writes them)."""
    return _encode_request(view.round, view.rules.rounds, view.start_seat, view.current_seat,
                           view.casinos, view.seats, view.deck_notes, view.slot, *view.roll,
                           view.legal, request_id, time_bank_ms, last_latency_us)


def _encode_request(round_: int, rounds: int, start_seat: int, current_seat: int,
                    casinos: Sequence[CasinoView], seats: Sequence[SeatView],
                    deck: tuple[int, ...], slot: Sequence[SlotPlacement], own: Sequence[int],
                    big: Sequence[int], neutral: Sequence[int], legal: Sequence[Action],
                    request_id: int, time_bank_ms: int, last_latency_us: int) -> bytearray:
    """The encoded DecisionRequest of these parts. This runs once per decision, so it is
    written flat: few function calls, one buffer."""
    state = bytearray()
    state += _SMALL[0x08][round_]
    state += _SMALL[0x10][rounds]
    state += _SMALL[0x18][start_seat]
    state += _SMALL[0x20][current_seat]
    state += b"".join(_part_bytes(casinos, _encode_casino))
    state += b"".join(_part_bytes(seats, _encode_seat))
    state += _PART_BYTES_GET(id(deck)) or _part_bytes((deck,), _encode_deck)[0]
    if slot:
        if len(slot) > 1:
            slot = sorted(slot, key=_by_value)
        state += _field(0x42, bytes([p.value for p in slot]))  # State.slot_values = 8
        for placement in slot:
            state += _SLOT_BYTES[placement]
    # Roll: faces are below 128, so a packed list of faces is its bytes; at most 127 dice.
    roll = bytearray()
    if own:
        roll += b"\x0a" + _BYTE[len(own)] + bytes(sorted(own))
    if big:
        roll += b"\x12" + _BYTE[len(big)] + bytes(sorted(big))
    if neutral:
        roll += b"\x1a" + _BYTE[len(neutral)] + bytes(sorted(neutral))
    varints = _VARINTS
    body = bytearray()
    if request_id:
        body += b"\x08" + (varints[request_id] if request_id < 4096 else _varint(request_id))
    size = len(state)
    body += b"\x12" + (varints[size] if size < 4096 else _varint(size))
    body += state
    body += b"\x1a" + _BYTE[len(roll)]
    body += roll
    legal_bytes = _LEGAL_BYTES
    for action in legal:
        body += legal_bytes[action]
    if time_bank_ms:
        body += b"\x28" + (varints[time_bank_ms] if time_bank_ms < 4096
                            else _LARGE[time_bank_ms])
    if last_latency_us:
        body += b"\x30" + (varints[last_latency_us] if last_latency_us < 4096
                            else _varint(last_latency_us))
    return body


def request_bytes(
    view: View, request_id: int, time_bank_ms: int = 0, last_latency_us: int = 0
) -> bytes:
    """The serialized `RefereeMessage` asking `view.current_seat` to choose (R13-R16), from the
    referee's view of that seat: what the referee writes on a Play stream opened without a
    request serializer (`channel.stream_stream(PLAY_METHOD, response_deserializer=...)`; then
    send the other messages as `msg.SerializeToString()` too)."""
    body = _request_body(view, request_id, time_bank_ms, last_latency_us)
    return _field(0x12, body)  # RefereeMessage.decision = 2


def game_request_bytes(
    game: Game, request_id: int, time_bank_ms: int = 0, last_latency_us: int = 0
) -> bytes:
    """`request_bytes(game.view(game.current_seat), ...)` without building the view: the
    referee's per-decision path."""
    casinos, seats, deck, slot = public_parts(game)
    body = _encode_request(game.round, game.rules.rounds, game.start_seat, game.seat, casinos,
                           seats, deck, slot, *game.roll_faces(), game.legal_actions(),
                           request_id, time_bank_ms, last_latency_us)
    return _field(0x12, body)  # RefereeMessage.decision = 2


def decision_request(
    view: View, request_id: int, time_bank_ms: int = 0, last_latency_us: int = 0
) -> pb.DecisionRequest:
    """The `DecisionRequest` message of `view` (see `request_bytes` for the faster form); wrap it
    as `pb.RefereeMessage(decision=...)` to send it."""
    return pb.DecisionRequest.FromString(
        bytes(_request_body(view, request_id, time_bank_ms, last_latency_us)))


# ------------------------------------------------------------------------------------ bot side


class DecodedRequest(NamedTuple):
    """A decoded DecisionRequest: the rebuilt view and the request's own fields."""

    view: View
    request_id: int
    time_bank_ms: int
    last_latency_us: int


class Decoded(NamedTuple):
    """One decoded RefereeMessage: exactly one of the three is set (none for an unknown kind)."""

    start: pb.GameStart | None = None
    request: DecodedRequest | None = None
    end: pb.GameEnd | None = None


def _fields(buf: bytes) -> list[tuple[int, Any]]:
    """The (key, value) pairs of an encoded message: ints for varints, bytes for
    length-delimited fields (fixed-width fields are returned as bytes too)."""
    out = []
    append = out.append
    i, end = 0, len(buf)
    while i < end:
        key = buf[i]
        i += 1
        if key & 0x80:
            key, i = _read_varint(buf, i - 1)
        kind = key & 7
        if kind == 0:
            value = buf[i]
            i += 1
            if value & 0x80:
                value, i = _read_varint(buf, i - 1)
        elif kind == 2:
            size = buf[i]
            i += 1
            if size & 0x80:
                size, i = _read_varint(buf, i - 1)
            if i + size > end:
                raise MalformedMessage("a length-delimited field runs past the end of its message")
            value = buf[i:i + size]
            i += size
        elif kind == 1:
            value, i = buf[i:i + 8], i + 8
        elif kind == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise MalformedMessage(f"unsupported wire type {kind}")
        append((key, value))
    if i != end:
        raise MalformedMessage("the message ends inside a field")
    return out


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise MalformedMessage("a varint is longer than 10 bytes")


def _decode_casino(data: bytes) -> CasinoView:
    msg = pb.Casino.FromString(data)
    dice = msg.dice
    return CasinoView(msg.target, tuple(msg.notes), tuple([d.ordinary for d in dice]),
                      tuple([d.big for d in dice]), msg.neutral_dice)


def _decode_seat(data: bytes) -> SeatView:
    s = pb.SeatState.FromString(data)
    return SeatView(s.seat, s.dice_ordinary, s.dice_big, s.dice_neutral, s.money, s.notes)


def _decode_slot(data: bytes) -> SlotPlacement:
    p = pb.SlotDice.FromString(data)
    return SlotPlacement(p.value, p.seat, p.ordinary, p.big, p.neutral)


_CASINO_VIEWS = BoundedCache(_decode_casino)
_SEAT_VIEWS = BoundedCache(_decode_seat)
_SLOT_VIEWS = BoundedCache(_decode_slot)
_DECKS = BoundedCache(lambda data: tuple(pb.State.FromString(_field(0x3A, data)).deck_notes))


def _decode_roll(data: bytes) -> Roll:
    roll = pb.Roll.FromString(data)
    return Roll(tuple(roll.ordinary), tuple(roll.big), tuple(roll.neutral))


# Rolls by their encoding: reading three repeated fields costs four times as much as
# re-encoding the Roll and looking it up, and a game has few distinct rolls.
_ROLLS = BoundedCache(_decode_roll)


_STATE_FIELDS = frozenset(
    {"round", "start_seat", "current_seat", "casinos", "seats", "deck_notes", "slot"})


class LazyView(View):
    """A `View` whose state (round, seats, casinos, deck, slot) is decoded from the request the
    first time any of it is read: a bot that looks only at the roll and the legal actions does
    not pay for the rest. It compares, hashes and prints as the `View` it stands for, and turns
    into one (its class becomes `View`) once decoded. A state that does not decode raises
    MalformedMessage when it is first read."""

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not set: the state fields, until they are decoded.
        if name not in _STATE_FIELDS:
            raise AttributeError(f"'View' object has no attribute {name!r}")
        self._decode()
        return self.__dict__[name]

    def _decode(self) -> None:
        fields = self.__dict__
        if "_state" in fields:   # the request's encoded State
            fields.update(_decode_state(fields["_state"], fields["players"]))
            del fields["_state"]
        object.__setattr__(self, "__class__", View)

    def __eq__(self, other: object) -> bool:
        self._decode()
        return self == other

    def __hash__(self) -> int:
        self._decode()
        return hash(self)

    def __repr__(self) -> str:
        self._decode()
        return repr(self)


def _decode_state(state: bytes, players: int) -> dict[str, Any]:
    """The View fields of an encoded `State`; MalformedMessage if it does not fit the table."""
    round_ = start_seat = current_seat = 0
    casinos, seats, slot = [], [], []
    deck: tuple[int, ...] = ()
    try:
        for key, value in _fields(state):
            if key == 0x2A:
                casinos.append(_CASINO_VIEWS[value])
            elif key == 0x32:
                seats.append(_SEAT_VIEWS[value])
            elif key == 0x3A:
                deck = _DECKS[value]
            elif key == 0x4A:
                slot.append(_SLOT_VIEWS[value])
            elif key == 0x08:
                round_ = value
            elif key == 0x18:
                start_seat = value
            elif key == 0x20:
                current_seat = value
    except (IndexError, DecodeError) as exc:
        raise MalformedMessage(f"the DecisionRequest's state does not decode: {exc}") from None
    if len(seats) != players:
        raise MalformedMessage(f"the state lists {len(seats)} seats, the game has {players}")
    for c in casinos:
        if len(c.ordinary) != players:
            raise MalformedMessage(
                f"casino {c.target} lists dice for {len(c.ordinary)} seats, the game has {players}")
    return {"round": round_, "start_seat": start_seat, "current_seat": current_seat,
            "casinos": tuple(casinos), "seats": tuple(seats), "deck_notes": deck,
            "slot": tuple(slot)}


def _wire_types() -> tuple[type[Message], type[Message]]:
    """Message types that read the RefereeMessage and DecisionRequest wire format with their
    submessages left as bytes: protobuf then copies the state, the roll, each legal action and
    GameStart/GameEnd instead of parsing them, and the decoder below takes from those bytes
    what it needs (mostly from caches) or parses them with the real types. Same field numbers
    and wire types as bot.proto; a test keeps them in step."""
    field = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="referee/protocol/wire_decode.proto", package="referee.wire", syntax="proto3")
    request = file.message_type.add(name="DecisionRequest")
    for name, number, kind, label in (
            ("request_id", 1, field.TYPE_UINT64, field.LABEL_OPTIONAL),
            ("state", 2, field.TYPE_BYTES, field.LABEL_OPTIONAL),
            ("roll", 3, field.TYPE_BYTES, field.LABEL_OPTIONAL),
            ("legal", 4, field.TYPE_BYTES, field.LABEL_REPEATED),
            ("time_bank_ms", 5, field.TYPE_UINT32, field.LABEL_OPTIONAL),
            ("last_latency_us", 6, field.TYPE_UINT32, field.LABEL_OPTIONAL)):
        request.field.add(name=name, number=number, type=kind, label=label)
    message = file.message_type.add(name="RefereeMessage")
    message.oneof_decl.add(name="kind")
    for name, number, kind in (("start", 1, field.TYPE_BYTES), ("decision", 2, field.TYPE_MESSAGE),
                               ("end", 3, field.TYPE_BYTES)):
        added = message.field.add(name=name, number=number, type=kind,
                                  label=field.LABEL_OPTIONAL, oneof_index=0)
        if kind == field.TYPE_MESSAGE:
            added.type_name = ".referee.wire.DecisionRequest"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName(
                "referee.wire.RefereeMessage")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName(
                "referee.wire.DecisionRequest")))


_WIRE_MESSAGE, _WIRE_REQUEST = _wire_types()
# Legal actions by their encoding (as protobuf writes them: value, then slot if set).
_ACTIONS_BY_BYTES = {data[2:]: action for action, data in _LEGAL_BYTES.items()}
_ACTION_OF_BYTES = _ACTIONS_BY_BYTES.__getitem__
# Builds a NamedTuple from a tuple of all its fields without the Python-level __new__ (the
# bot's hot path builds two per request).
_new_tuple = tuple.__new__


def _legal_action(data: bytes) -> Action:
    """A legal action written some other way (field order, unknown fields): parse it."""
    a = pb.Action.FromString(data)
    action = (SLOT_ACTIONS if a.slot else CASINO_ACTIONS).get(a.value)
    if action is None:
        raise MalformedMessage(f"a legal action has the value {a.value}, not a face 1..6")
    return action


def decode_request(rules: RuleSet, players: int, your_seat: int, data: bytes,
                   *, lazy: bool = False) -> DecodedRequest:
    """Decode a serialized `DecisionRequest` into the engine `View` it describes and the
    request's fields. `rules`, `players` and `your_seat` come from the game's `GameStart`.
    Unknown fields are ignored (forward compatibility); MalformedMessage if it does not decode
    or does not fit the table. With `lazy`, the view is a `LazyView`: its state is decoded (and
    checked) when first read."""
    try:
        request = _WIRE_REQUEST.FromString(data)
    except DecodeError as exc:
        raise MalformedMessage(f"the DecisionRequest does not decode: {exc}") from None
    return _decoded_request(rules, players, your_seat, request, lazy)


def _decoded_request(rules: RuleSet, players: int, your_seat: int, request: Message,
                     lazy: bool) -> DecodedRequest:
    """The DecodedRequest of a parsed wire-format request (see `_wire_types`)."""
    try:
        legal_bytes = request.legal
        try:
            legal = tuple(map(_ACTION_OF_BYTES, legal_bytes))
        except KeyError:   # an action written some other way: parse those
            by_bytes = _ACTIONS_BY_BYTES
            legal = tuple([by_bytes.get(data) or _legal_action(data) for data in legal_bytes])
        roll = _ROLLS[request.roll]
    except DecodeError as exc:
        raise MalformedMessage(f"the DecisionRequest does not decode: {exc}") from None
    state = request.state
    if lazy:
        view: View = make_frozen(LazyView, rules=rules, players=players, seat=your_seat,
                                 roll=roll, legal=legal, is_over=False, _state=state)
    else:
        view = make_frozen(View, rules=rules, players=players, seat=your_seat, roll=roll,
                           legal=legal, is_over=False, **_decode_state(state, players))
    return _new_tuple(DecodedRequest, (view, request.request_id, request.time_bank_ms,
                                       request.last_latency_us))


def decode_message(
    rules: RuleSet | None, players: int, your_seat: int, data: bytes, *, lazy: bool = False
) -> Decoded:
    """Decode a serialized `RefereeMessage` (what a bot reads on its Play stream). A decision
    request needs the game's `rules`, `players` and `your_seat` (from its GameStart; before it,
    pass rules=None and a request is MalformedMessage). A message of an unknown kind gives an
    empty `Decoded`. `lazy` is passed on to `decode_request`."""
    try:
        message = _WIRE_MESSAGE.FromString(data)
        kind = message.WhichOneof("kind")
        if kind == "decision":
            if rules is None:
                raise MalformedMessage("a DecisionRequest came before the GameStart")
            return _new_tuple(Decoded, (None, _decoded_request(
                rules, players, your_seat, message.decision, lazy), None))
        if kind == "start":
            return Decoded(pb.GameStart.FromString(message.start))
        if kind == "end":
            return Decoded(None, None, pb.GameEnd.FromString(message.end))
    except DecodeError as exc:
        raise MalformedMessage(f"the RefereeMessage does not decode: {exc}") from None
    return Decoded()


def view_from_request(
    rules: RuleSet, players: int, your_seat: int, request: pb.DecisionRequest
) -> View:
    """The engine `View` a `DecisionRequest` message describes (the bot side): equal to the
    referee's `canonical_view(game.view(your_seat))`. `rules`, `players` and `your_seat` come
    from the game's `GameStart`."""
    return decode_request(rules, players, your_seat, request.SerializeToString()).view


def canonical_view(view: View) -> View:
    """`view` in bot.proto's order: roll faces ascending, slot placements by ascending value.
    Nothing any rule depends on differs (only counts and sums of faces matter), and
    `determinize` plays the same game from either."""
    roll = view.roll
    ordered = Roll(tuple(sorted(roll.own)), tuple(sorted(roll.big)), tuple(sorted(roll.neutral)))
    slot = tuple(sorted(view.slot, key=_by_value))
    if ordered == roll and slot == view.slot:
        return view
    return replace(view, roll=ordered, slot=slot)


# ------------------------------------------------------------------------------------ actions


def action_to_pb(action: Action | tuple[int, bool]) -> pb.Action:
    """The `Action` message of an engine action (or of a `(value, slot)` pair)."""
    value, slot = action
    return pb.Action(value=value, slot=slot)


def action_from_pb(msg: pb.Decision | pb.Action) -> Action:
    """The engine action of a `Decision` (or of a bare `Action` message).

    MalformedAction if a Decision carries no action, or the value is not a face 1..6. The result
    is not checked against the legal actions: that is the referee's "illegal" strike."""
    if type(msg) is pb.Decision:
        if not msg.HasField("action"):
            raise MalformedAction("the Decision carries no action")
        msg = msg.action
    action = (SLOT_ACTIONS if msg.slot else CASINO_ACTIONS).get(msg.value)
    if action is None:
        raise MalformedAction(f"the action's value must be a face from 1 to 6, got {msg.value}")
    return action


def decision_message(request_id: int, action: Action | tuple[int, bool] | None
                     ) -> pb.BotMessage:
    """The `BotMessage` answering request `request_id` with `action`. None sends a Decision
    without an action: the referee counts it as malformed and plays a substitute move."""
    decision = pb.Decision(request_id=request_id)
    if action is not None:
        value, slot = action
        decision.action.value = value
        decision.action.slot = slot
    return pb.BotMessage(decision=decision)


def _read_decision(data: bytes) -> tuple[int, Action] | None:
    """(request id, action) of a serialized BotMessage in the shape bots write (a Decision
    with a request id below 2**14, then one of the 12 actions as protobuf encodes it), read
    without parsing; None for anything else."""
    size = len(data)
    if size < 7 or data[0] != 0x0A or data[1] != size - 2 or data[2] != 0x08:
        return None
    request_id, i = data[3], 4
    if request_id & 0x80:
        if data[4] & 0x80:
            return None
        request_id, i = (request_id & 0x7F) | (data[4] << 7), 5
    if data[i] != 0x12 or data[i + 1] != size - i - 2:
        return None
    action = _ACTIONS_BY_BYTES.get(data[i + 2:])
    return None if action is None else (request_id, action)


#: quick_decision(data) -> (request id, action) of a serialized BotMessage in the shape bots
#: write (see `_read_decision`), or None for anything else, which the caller then parses in
#: full. The referee reads every answer with it: a game's answers repeat (a few dozen request
#: ids times 12 actions), so each is looked up by its bytes and read only the first time.
quick_decision: Callable[[bytes], tuple[int, Action] | None] = (
    BoundedCache(_read_decision).__getitem__)


def decision_bytes(request_id: int, action: Action | None) -> bytes:
    """The serialized form of `decision_message(request_id, action)` (the bot's hot path).
    `action` must be an engine `Action` (or None)."""
    if request_id:
        body = b"\x08" + (_VARINTS[request_id] if request_id < 4096 else _varint(request_id))
    else:
        body = b""
    if action is not None:
        encoded = _ACTION_BYTES.get(action)
        if encoded is None:  # not one of the 12 actions: let protobuf encode (or reject) it
            return decision_message(request_id, action).SerializeToString()
        body += encoded
    return b"\x0a" + _BYTE[len(body)] + body  # BotMessage.decision = 1 (at most 17 bytes)

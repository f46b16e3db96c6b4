"""Conversions between the engine's objects and the protocol messages (proto/lasvegas/v1).

Used by both sides of the wire, always through the generated message classes (`pb`): the
referee turns a `View` (or a `Game`) into a `DecisionRequest` and a bot's `Decision` back into
an engine `Action`; the SDK rebuilds the `View` from the request, so a Python bot sees what the
referee's engine sees:

    message = request_message(game.view(seat), request_id=7, time_bank_ms=5000)
    decode_message(rules, players, seat, message).request.view == canonical_view(game.view(seat))

gRPC serializes and parses the messages. The per-decision paths keep objects, never bytes:
a request is mostly unchanged casinos and seats from the previous one, so the referee reuses
one request message per game and changes in place only the casinos and seats the last moves
changed (`GameRequests`; view parts are shared between views while unchanged, see
`public_parts`), and a bot converts a request's state only when its `choose` looks at it
(`LazyView`).

bot.proto's orders apply: roll faces ascending, slot placements by ascending value. The engine's
`View` keeps rolls in stream order and slot placements in placement order, so the view a bot
rebuilds equals `canonical_view(view)` (the same view in the protocol's order; nothing a rule
depends on differs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any, NamedTuple

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
)
from referee.errors import BotFailure
from referee.protocol import pb

__all__ = [
    "Decoded", "DecodedRequest", "LazyView", "MalformedAction", "MalformedMessage",
    "action_from_pb", "action_to_pb", "canonical_view", "decision_message", "decision_request",
    "decode_message", "decode_request", "game_end", "game_start", "GameRequests", "read_decision",
    "request_message", "rules_from_pb", "rules_to_pb", "view_from_request",
]


class MalformedMessage(BotFailure, ValueError):
    """A protocol message that lacks a required part or does not fit the table
    (docs/protocol.md, "malformed")."""


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


# ------------------------------------------------------------------------------------ requests


def _casino_pb(c: CasinoView) -> pb.Casino:
    return pb.Casino(target=c.target, notes=c.notes, neutral_dice=c.neutral, dice=[
        pb.SeatDice(seat=s, ordinary=own, big=big)
        for s, (own, big) in enumerate(zip(c.ordinary, c.big, strict=True))])


def _seat_pb(s: SeatView) -> pb.SeatState:
    return pb.SeatState(seat=s.seat, dice_ordinary=s.dice, dice_big=s.big_dice,
                        dice_neutral=s.neutral_dice, money=s.money, notes=s.notes)


_by_value = attrgetter("value")
# The Action message of each of the 12 actions, shared by every request that offers it.
_ACTION_PB: dict[tuple[int, bool], pb.Action] = {a: pb.Action(value=a.value, slot=a.slot)
              for table in (CASINO_ACTIONS, SLOT_ACTIONS) for a in table.values()}


def _request(round_: int, rounds: int, start_seat: int, current_seat: int,
             casinos: Sequence[CasinoView], seats: Sequence[SeatView], deck: Sequence[int],
             slot: Sequence[SlotPlacement], own: Sequence[int], big: Sequence[int],
             neutral: Sequence[int], legal: Sequence[Action], request_id: int,
             time_bank_ms: int, last_latency_us: int) -> pb.DecisionRequest:
    """The DecisionRequest of these parts (bot.proto's orders: faces ascending, the slot's
    placements by value)."""
    placements = sorted(slot, key=_by_value)
    state = pb.State(
        round=round_, rounds=rounds, start_seat=start_seat, current_seat=current_seat,
        casinos=[_casino_pb(c) for c in casinos], seats=[_seat_pb(s) for s in seats],
        deck_notes=deck,
        slot_values=[p.value for p in placements],
        slot_dice=[pb.SlotDice(value=p.value, seat=p.seat, ordinary=p.ordinary, big=p.big,
                               neutral=p.neutral) for p in placements])
    return pb.DecisionRequest(
        request_id=request_id, state=state,
        roll=pb.Roll(ordinary=sorted(own), big=sorted(big), neutral=sorted(neutral)),
        legal=[_ACTION_PB[a] for a in legal],
        time_bank_ms=time_bank_ms, last_latency_us=last_latency_us)


def decision_request(
    view: View, request_id: int, time_bank_ms: int = 0, last_latency_us: int = 0
) -> pb.DecisionRequest:
    """The `DecisionRequest` asking `view.current_seat` to choose (R13-R16), from the referee's
    view of that seat."""
    return _request(view.round, view.rules.rounds, view.start_seat, view.current_seat,
                    view.casinos, view.seats, view.deck_notes, view.slot, *view.roll,
                    view.legal, request_id, time_bank_ms, last_latency_us)


def request_message(
    view: View, request_id: int, time_bank_ms: int = 0, last_latency_us: int = 0
) -> pb.RefereeMessage:
    """`decision_request(...)` in the `RefereeMessage` a Play stream carries."""
    return pb.RefereeMessage(
        decision=decision_request(view, request_id, time_bank_ms, last_latency_us))


class GameRequests:
    """The decision requests of one game, built in one `RefereeMessage` that is reused: each
    request changes in place only the parts of the state the last moves changed (casinos and
    seats by identity, as `Game.public_parts` shares unchanged parts between calls), so the
    referee's per-decision work does not grow with the table.

    The message `build` returns is the same object every time: serialize it (or copy it)
    before the next call. `GameStream.send` serializes what it is given at once."""

    def __init__(self) -> None:
        self.message = pb.RefereeMessage()
        self._request = self.message.decision
        self._casinos: list[CasinoView] = []
        self._seats: list[SeatView] = []
        self._deck: object = None
        self._slot: object = None
        self._legal: object = None

    def build(self, game: Game, request_id: int, time_bank_ms: int = 0,
              last_latency_us: int = 0) -> pb.RefereeMessage:
        """The RefereeMessage asking `game.current_seat` to choose, as `request_message` of
        that seat's view gives it."""
        casinos, seats, deck, slot = game.public_parts()
        request = self._request
        state = request.state
        state.round = game.round
        state.rounds = game.rules.rounds
        state.start_seat = game.start_seat
        state.current_seat = game.seat
        if len(self._casinos) != len(casinos) or len(self._seats) != len(seats):
            del state.casinos[:]
            state.casinos.extend([_casino_pb(c) for c in casinos])
            del state.seats[:]
            state.seats.extend([_seat_pb(s) for s in seats])
            self._casinos, self._seats = list(casinos), list(seats)
        else:
            _update_casinos(state.casinos, self._casinos, casinos)
            _update_seats(state.seats, self._seats, seats)
        if deck is not self._deck:
            self._deck = deck
            del state.deck_notes[:]
            state.deck_notes.extend(deck)
        if slot is not self._slot:
            self._slot = slot
            placements = sorted(slot, key=_by_value)
            del state.slot_values[:]
            state.slot_values.extend([p.value for p in placements])
            del state.slot_dice[:]
            for p in placements:
                state.slot_dice.add(value=p.value, seat=p.seat, ordinary=p.ordinary, big=p.big,
                                    neutral=p.neutral)
        own, big, neutral = game.roll_faces()
        roll = request.roll
        roll.ordinary[:] = sorted(own)
        if big or roll.big:   # most rules roll no big or neutral dice: nothing to change
            roll.big[:] = sorted(big)
        if neutral or roll.neutral:
            roll.neutral[:] = sorted(neutral)
        legal = game.legal_actions()
        if legal is not self._legal:   # the engine shares the tuples of recurring choices
            self._legal = legal
            del request.legal[:]
            request.legal.extend([_ACTION_PB[a] for a in legal])
        request.request_id = request_id
        request.time_bank_ms = time_bank_ms
        request.last_latency_us = last_latency_us
        return self.message


def _update_casinos(messages: Any, built: list[CasinoView], casinos: Sequence[CasinoView]
                    ) -> None:
    """Bring the Casino messages of the casinos that changed since `built` up to date, in
    place: within a round a move changes one casino's dice; its notes change between rounds."""
    for i, casino in enumerate(casinos):
        was = built[i]
        if casino is was:
            continue
        built[i] = casino
        message = messages[i]
        if casino.target != was.target:
            message.target = casino.target
        if casino.notes != was.notes:
            del message.notes[:]
            message.notes.extend(casino.notes)
        # A move changes one seat's dice here: only the seats whose counts differ are set.
        ordinary, big, was_ordinary, was_big = casino.ordinary, casino.big, was.ordinary, was.big
        for seat in range(len(ordinary)):
            if ordinary[seat] != was_ordinary[seat] or big[seat] != was_big[seat]:
                dice = message.dice[seat]
                dice.ordinary = ordinary[seat]
                dice.big = big[seat]
        if casino.neutral != was.neutral:
            message.neutral_dice = casino.neutral


def _update_seats(messages: Any, built: list[SeatView], seats: Sequence[SeatView]) -> None:
    """Bring the SeatState messages of the seats that changed since `built` up to date."""
    for i, seat in enumerate(seats):
        if seat is not built[i]:
            built[i] = seat
            message = messages[i]
            message.dice_ordinary = seat.dice
            message.dice_big = seat.big_dice
            message.dice_neutral = seat.neutral_dice
            message.money = seat.money
            message.notes = seat.notes


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


_STATE_FIELDS = frozenset(
    {"round", "start_seat", "current_seat", "casinos", "seats", "deck_notes", "slot"})


class LazyView(View):
    """A `View` whose state (round, seats, casinos, deck, slot) is converted from the request's
    `State` message the first time any of it is read: a bot that looks only at the roll and the
    legal actions does not pay for the rest. It compares, hashes and prints as the `View` it
    stands for, and turns into one (its class becomes `View`) once converted. A state that does
    not fit the table raises MalformedMessage when it is first read."""

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not set: the state fields, until they are converted.
        if name not in _STATE_FIELDS:
            raise AttributeError(f"'View' object has no attribute {name!r}")
        self._decode()
        return self.__dict__[name]

    def _decode(self) -> None:
        fields = self.__dict__
        if "_state" in fields:   # the request's State message
            fields.update(_state_fields(fields["_state"], fields["players"]))
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


def _state_fields(state: pb.State, players: int) -> dict[str, Any]:
    """The View fields of a `State` message; MalformedMessage if it does not fit the table."""
    seats = tuple([SeatView(s.seat, s.dice_ordinary, s.dice_big, s.dice_neutral, s.money,
                            s.notes) for s in state.seats])
    if len(seats) != players:
        raise MalformedMessage(f"the state lists {len(seats)} seats, the game has {players}")
    casinos = []
    for c in state.casinos:
        dice = c.dice
        if len(dice) != players:
            raise MalformedMessage(
                f"casino {c.target} lists dice for {len(dice)} seats, the game has {players}")
        casinos.append(CasinoView(c.target, tuple(c.notes), tuple([d.ordinary for d in dice]),
                                  tuple([d.big for d in dice]), c.neutral_dice))
    return {"round": state.round, "start_seat": state.start_seat,
            "current_seat": state.current_seat, "casinos": tuple(casinos), "seats": seats,
            "deck_notes": tuple(state.deck_notes),
            "slot": tuple([SlotPlacement(p.value, p.seat, p.ordinary, p.big, p.neutral)
                           for p in state.slot_dice])}


#: The engine action of each well-formed (value, slot) pair.
_ACTIONS = {(a.value, a.slot): a for table in (CASINO_ACTIONS, SLOT_ACTIONS)
            for a in table.values()}


def _legal_actions(request: pb.DecisionRequest) -> tuple[Action, ...]:
    try:
        return tuple([_ACTIONS[a.value, a.slot] for a in request.legal])
    except KeyError as bad:
        raise MalformedMessage(f"a legal action has the value {bad.args[0][0]}, not a face "
                               f"1..6") from None


def decode_request(rules: RuleSet, players: int, your_seat: int, request: pb.DecisionRequest,
                   *, lazy: bool = False) -> DecodedRequest:
    """The engine `View` a `DecisionRequest` describes and the request's fields. `rules`,
    `players` and `your_seat` come from the game's `GameStart`. MalformedMessage if it does not
    fit the table. With `lazy`, the view is a `LazyView`: its state is converted (and checked)
    when first read."""
    r = request.roll
    roll = Roll(tuple(r.ordinary[:]), tuple(r.big[:]), tuple(r.neutral[:]))
    legal = _legal_actions(request)
    if lazy:
        view: View = make_frozen(LazyView, rules=rules, players=players, seat=your_seat,
                                 roll=roll, legal=legal, is_over=False, _state=request.state)
    else:
        view = make_frozen(View, rules=rules, players=players, seat=your_seat, roll=roll,
                           legal=legal, is_over=False,
                           **_state_fields(request.state, players))
    return DecodedRequest(view, request.request_id, request.time_bank_ms,
                          request.last_latency_us)


def decode_message(rules: RuleSet | None, players: int, your_seat: int,
                   message: pb.RefereeMessage, *, lazy: bool = False) -> Decoded:
    """What a bot reads on its Play stream, converted. A decision request needs the game's
    `rules`, `players` and `your_seat` (from its GameStart; before it, pass rules=None and a
    request is MalformedMessage). A message of an unknown kind gives an empty `Decoded`. `lazy`
    is passed on to `decode_request`."""
    kind = message.WhichOneof("kind")
    if kind == "decision":
        if rules is None:
            raise MalformedMessage("a DecisionRequest came before the GameStart")
        return Decoded(None, decode_request(rules, players, your_seat, message.decision,
                                            lazy=lazy))
    if kind == "start":
        return Decoded(message.start)
    if kind == "end":
        return Decoded(None, None, message.end)
    return Decoded()


def view_from_request(
    rules: RuleSet, players: int, your_seat: int, request: pb.DecisionRequest
) -> View:
    """The engine `View` a `DecisionRequest` message describes (the bot side): equal to the
    referee's `canonical_view(game.view(your_seat))`."""
    return decode_request(rules, players, your_seat, request).view


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
    if isinstance(msg, pb.Decision):
        if not msg.HasField("action"):
            raise MalformedAction("the Decision carries no action")
        msg = msg.action
    action = _ACTIONS.get((msg.value, msg.slot))
    if action is None:
        raise MalformedAction(f"the action's value must be a face from 1 to 6, got {msg.value}")
    return action


def decision_message(request_id: int, action: Action | tuple[int, bool] | None
                     ) -> pb.BotMessage:
    """The `BotMessage` answering request `request_id` with `action`. None sends a Decision
    without an action: the referee counts it as malformed and plays a substitute move."""
    if action is None:
        return pb.BotMessage(decision=pb.Decision(request_id=request_id))
    message = _ACTION_PB.get(action)   # one of the 12 actions: its shared message
    if message is None:
        value, slot = action
        message = pb.Action(value=value, slot=slot)
    return pb.BotMessage(decision=pb.Decision(request_id=request_id, action=message))


def read_decision(message: pb.BotMessage) -> tuple[int, Action] | None:
    """(request id, action) of a BotMessage holding a Decision with a well-formed action; None
    for anything else (the caller then finds out which strike it is)."""
    if message.WhichOneof("kind") != "decision":
        return None
    decision = message.decision
    if not decision.HasField("action"):
        return None
    a = decision.action
    action = _ACTIONS.get((a.value, a.slot))
    return None if action is None else (decision.request_id, action)

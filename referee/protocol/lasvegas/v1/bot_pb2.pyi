from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Funding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FUNDING_UNSPECIFIED: _ClassVar[Funding]
    FUNDING_THRESHOLD: _ClassVar[Funding]
    FUNDING_NOTES: _ClassVar[Funding]

class Neutral(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NEUTRAL_UNSPECIFIED: _ClassVar[Neutral]
    NEUTRAL_NONE: _ClassVar[Neutral]
    NEUTRAL_WHITE: _ClassVar[Neutral]
    NEUTRAL_GREY: _ClassVar[Neutral]

class Leftovers(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEFTOVERS_UNSPECIFIED: _ClassVar[Leftovers]
    LEFTOVERS_BOTTOM: _ClassVar[Leftovers]
    LEFTOVERS_DISCARD: _ClassVar[Leftovers]
FUNDING_UNSPECIFIED: Funding
FUNDING_THRESHOLD: Funding
FUNDING_NOTES: Funding
NEUTRAL_UNSPECIFIED: Neutral
NEUTRAL_NONE: Neutral
NEUTRAL_WHITE: Neutral
NEUTRAL_GREY: Neutral
LEFTOVERS_UNSPECIFIED: Leftovers
LEFTOVERS_BOTTOM: Leftovers
LEFTOVERS_DISCARD: Leftovers

class HelloRequest(_message.Message):
    __slots__ = ("protocol_version", "referee_version")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REFEREE_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    referee_version: str
    def __init__(self, protocol_version: _Optional[int] = ..., referee_version: _Optional[str] = ...) -> None: ...

class HelloReply(_message.Message):
    __slots__ = ("bot_name", "bot_version", "protocol_version", "max_concurrent_games")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_GAMES_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    bot_version: str
    protocol_version: int
    max_concurrent_games: int
    def __init__(self, bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[int] = ..., max_concurrent_games: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("start", "decision", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: GameStart
    decision: DecisionRequest
    end: GameEnd
    def __init__(self, start: _Optional[_Union[GameStart, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., end: _Optional[_Union[GameEnd, _Mapping]] = ...) -> None: ...

class BotMessage(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_id", "rules", "seats", "your_seat", "time_control", "autoplay_forced")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    YOUR_SEAT_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    AUTOPLAY_FORCED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    rules: Rules
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    your_seat: int
    time_control: TimeControl
    autoplay_forced: bool
    def __init__(self, game_id: _Optional[str] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., your_seat: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., autoplay_forced: _Optional[bool] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("preset", "min_players", "max_players", "rounds", "dice", "big_dice", "funding", "threshold", "scaled_threshold", "notes_per_casino", "hundred_k", "slot", "neutral", "leftovers")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    MIN_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    MAX_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DICE_FIELD_NUMBER: _ClassVar[int]
    BIG_DICE_FIELD_NUMBER: _ClassVar[int]
    FUNDING_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    SCALED_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    NOTES_PER_CASINO_FIELD_NUMBER: _ClassVar[int]
    HUNDRED_K_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    LEFTOVERS_FIELD_NUMBER: _ClassVar[int]
    preset: str
    min_players: int
    max_players: int
    rounds: int
    dice: int
    big_dice: int
    funding: Funding
    threshold: int
    scaled_threshold: bool
    notes_per_casino: int
    hundred_k: bool
    slot: bool
    neutral: Neutral
    leftovers: Leftovers
    def __init__(self, preset: _Optional[str] = ..., min_players: _Optional[int] = ..., max_players: _Optional[int] = ..., rounds: _Optional[int] = ..., dice: _Optional[int] = ..., big_dice: _Optional[int] = ..., funding: _Optional[_Union[Funding, str]] = ..., threshold: _Optional[int] = ..., scaled_threshold: _Optional[bool] = ..., notes_per_casino: _Optional[int] = ..., hundred_k: _Optional[bool] = ..., slot: _Optional[bool] = ..., neutral: _Optional[_Union[Neutral, str]] = ..., leftovers: _Optional[_Union[Leftovers, str]] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "bot_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bot_name: str
    def __init__(self, seat: _Optional[int] = ..., bot_name: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "game_bank_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    GAME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    game_bank_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., game_bank_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "state", "roll", "legal", "time_bank_ms", "last_latency_us")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ROLL_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    state: State
    roll: Roll
    legal: _containers.RepeatedCompositeFieldContainer[Action]
    time_bank_ms: int
    last_latency_us: int
    def __init__(self, request_id: _Optional[int] = ..., state: _Optional[_Union[State, _Mapping]] = ..., roll: _Optional[_Union[Roll, _Mapping]] = ..., legal: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., time_bank_ms: _Optional[int] = ..., last_latency_us: _Optional[int] = ...) -> None: ...

class State(_message.Message):
    __slots__ = ("round", "rounds", "start_seat", "current_seat", "casinos", "seats", "deck_notes", "slot_values", "slot_dice")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    CURRENT_SEAT_FIELD_NUMBER: _ClassVar[int]
    CASINOS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    DECK_NOTES_FIELD_NUMBER: _ClassVar[int]
    SLOT_VALUES_FIELD_NUMBER: _ClassVar[int]
    SLOT_DICE_FIELD_NUMBER: _ClassVar[int]
    round: int
    rounds: int
    start_seat: int
    current_seat: int
    casinos: _containers.RepeatedCompositeFieldContainer[Casino]
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    deck_notes: _containers.RepeatedScalarFieldContainer[int]
    slot_values: _containers.RepeatedScalarFieldContainer[int]
    slot_dice: _containers.RepeatedCompositeFieldContainer[SlotDice]
    def __init__(self, round: _Optional[int] = ..., rounds: _Optional[int] = ..., start_seat: _Optional[int] = ..., current_seat: _Optional[int] = ..., casinos: _Optional[_Iterable[_Union[Casino, _Mapping]]] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., deck_notes: _Optional[_Iterable[int]] = ..., slot_values: _Optional[_Iterable[int]] = ..., slot_dice: _Optional[_Iterable[_Union[SlotDice, _Mapping]]] = ...) -> None: ...

class Casino(_message.Message):
    __slots__ = ("target", "notes", "dice", "neutral_dice")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    DICE_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_DICE_FIELD_NUMBER: _ClassVar[int]
    target: int
    notes: _containers.RepeatedScalarFieldContainer[int]
    dice: _containers.RepeatedCompositeFieldContainer[SeatDice]
    neutral_dice: int
    def __init__(self, target: _Optional[int] = ..., notes: _Optional[_Iterable[int]] = ..., dice: _Optional[_Iterable[_Union[SeatDice, _Mapping]]] = ..., neutral_dice: _Optional[int] = ...) -> None: ...

class SeatDice(_message.Message):
    __slots__ = ("seat", "ordinary", "big")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ORDINARY_FIELD_NUMBER: _ClassVar[int]
    BIG_FIELD_NUMBER: _ClassVar[int]
    seat: int
    ordinary: int
    big: int
    def __init__(self, seat: _Optional[int] = ..., ordinary: _Optional[int] = ..., big: _Optional[int] = ...) -> None: ...

class SlotDice(_message.Message):
    __slots__ = ("value", "seat", "ordinary", "big", "neutral")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ORDINARY_FIELD_NUMBER: _ClassVar[int]
    BIG_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    value: int
    seat: int
    ordinary: int
    big: int
    neutral: int
    def __init__(self, value: _Optional[int] = ..., seat: _Optional[int] = ..., ordinary: _Optional[int] = ..., big: _Optional[int] = ..., neutral: _Optional[int] = ...) -> None: ...

class SeatState(_message.Message):
    __slots__ = ("seat", "dice_ordinary", "dice_big", "dice_neutral", "money", "notes")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DICE_ORDINARY_FIELD_NUMBER: _ClassVar[int]
    DICE_BIG_FIELD_NUMBER: _ClassVar[int]
    DICE_NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    MONEY_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    seat: int
    dice_ordinary: int
    dice_big: int
    dice_neutral: int
    money: int
    notes: int
    def __init__(self, seat: _Optional[int] = ..., dice_ordinary: _Optional[int] = ..., dice_big: _Optional[int] = ..., dice_neutral: _Optional[int] = ..., money: _Optional[int] = ..., notes: _Optional[int] = ...) -> None: ...

class Roll(_message.Message):
    __slots__ = ("ordinary", "big", "neutral")
    ORDINARY_FIELD_NUMBER: _ClassVar[int]
    BIG_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    ordinary: _containers.RepeatedScalarFieldContainer[int]
    big: _containers.RepeatedScalarFieldContainer[int]
    neutral: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ordinary: _Optional[_Iterable[int]] = ..., big: _Optional[_Iterable[int]] = ..., neutral: _Optional[_Iterable[int]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("value", "slot")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    value: int
    slot: bool
    def __init__(self, value: _Optional[int] = ..., slot: _Optional[bool] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action", "note", "values")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: Action
    note: str
    values: _containers.ScalarMap[str, float]
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., note: _Optional[str] = ..., values: _Optional[_Mapping[str, float]] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("game_id", "standings", "forfeited", "reason", "strikes")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    forfeited: bool
    reason: str
    strikes: int
    def __init__(self, game_id: _Optional[str] = ..., standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ..., forfeited: _Optional[bool] = ..., reason: _Optional[str] = ..., strikes: _Optional[int] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("seat", "place", "money", "notes", "forfeited")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    MONEY_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    place: int
    money: int
    notes: int
    forfeited: bool
    def __init__(self, seat: _Optional[int] = ..., place: _Optional[int] = ..., money: _Optional[int] = ..., notes: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

"""One game between bots: the engine plus one Play stream per seat, with the failure policy.

A bot's timeout, malformed or illegal answer, protocol error or crash becomes a strike of that
type, and the referee plays a legal substitute move for it from a separate seeded stream, so the
other seats' game goes on unchanged (R50). After `strikes_to_forfeit` strikes in one game the
bot forfeits it: it is no longer asked, the substitute plays its dice, and it ranks last.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from referee.bots.client import GameStream
from referee.bots.errors import ILLEGAL, MALFORMED, STRIKE_TYPES
from referee.bots.spec import Limits
from referee.engine import Game, GameRecord, RuleSet
from referee.protocol import convert
from referee.seeds import derive_seed


class SeatBot(Protocol):
    """What a seat needs from a bot: identity, limits and a Play stream per game."""

    name: str
    version: str
    limits: Limits

    def open_game(self) -> GameStream: ...

    def output(self) -> str: ...


@dataclass(frozen=True)
class MatchOptions:
    """Tournament options for a game (not rules)."""

    strikes_to_forfeit: int = 3
    autoplay_forced: bool = False   # R15: do not ask a bot whose only choice is forced


@dataclass
class SeatResult:
    """How one seat's bot behaved in a game."""

    bot: str
    version: str
    strikes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STRIKE_TYPES, 0))
    forfeited: bool = False
    reason: str = ""
    latencies_us: list[int] = field(default_factory=list)
    output: str = ""

    @property
    def strike_count(self) -> int:
        """All strikes of this game."""
        return sum(self.strikes.values())


@dataclass
class MatchResult:
    """A finished game: its record, the final places (forfeits last) and each seat's result."""

    game_id: str
    record: GameRecord
    places: list[int]
    money: list[int]
    seats: list[SeatResult]
    seconds: float


Observer = Callable[[Game, list[tuple], dict[str, Any] | None], None]


def final_places(game: Game, forfeited: Sequence[bool]) -> list[int]:
    """R26 places among the seats still playing; forfeited seats share the places after them."""
    keys = [(m, len(n)) for m, n in zip(game.money, game.notes_won, strict=True)]
    playing = [s for s, out in enumerate(forfeited) if not out]
    places = []
    for seat, out in enumerate(forfeited):
        if out:
            places.append(len(playing) + 1)
        else:
            places.append(1 + sum(keys[o] > keys[seat] for o in playing))
    return places


async def play_match(
    rules: RuleSet,
    bots: Sequence[SeatBot],
    seed: int,
    game_id: str,
    options: MatchOptions | None = None,
    observer: Observer | None = None,
) -> MatchResult:
    """Play one game with `bots[i]` in seat i and return its result; never raises for a bot."""
    started = time.monotonic()
    options = options or MatchOptions()
    players = len(bots)
    game = Game(rules, players, seed)
    seats = [SeatResult(bot.name, bot.version) for bot in bots]
    substitute = [random.Random(derive_seed(seed, "substitute", s)) for s in range(players)]
    bank_ms = [float(bot.limits.game_bank_ms) for bot in bots]
    last_latency = [0] * players
    decisions: list[dict[str, Any]] = []
    names = [bot.name for bot in bots]
    rules_pb = convert.rules_to_pb(rules)
    streams = [bot.open_game() for bot in bots]
    await asyncio.gather(*(
        stream.send(convert.game_start(game_id, rules_pb, names, seat,
                                       decision_ms=bots[seat].limits.decision_ms,
                                       game_bank_ms=bots[seat].limits.game_bank_ms,
                                       autoplay_forced=options.autoplay_forced))
        for seat, stream in enumerate(streams)
    ))
    request_id = 0
    seen = 0
    if observer is not None:
        observer(game, list(game.events or []), None)
        seen = len(game.events or [])
    while not game.is_over:
        seat = game.current_seat
        legal = game.legal_actions()
        result = seats[seat]
        decision: dict[str, Any] = {"seat": seat}
        if result.forfeited or (options.autoplay_forced and len(legal) == 1):
            action = legal[0] if len(legal) == 1 else substitute[seat].choice(legal)
            decision["auto"] = "forfeited" if result.forfeited else "forced"
        else:
            request_id += 1
            limits = bots[seat].limits
            message = convert.request_bytes(game.view(seat), request_id, int(bank_ms[seat]),
                                            last_latency[seat])
            reply = await streams[seat].decide(message, request_id,
                                               (limits.decision_ms + bank_ms[seat]) / 1000)
            latency_ms = reply.latency_us / 1000
            bank_ms[seat] = max(0.0, bank_ms[seat] - max(0.0, latency_ms - limits.decision_ms))
            last_latency[seat] = reply.latency_us
            result.latencies_us.append(reply.latency_us)
            decision["latency_us"] = reply.latency_us
            strike, detail = reply.strike, reply.detail
            action = None
            if strike is None and reply.action is not None:
                try:
                    action = convert.action_from_pb(reply.action)
                except convert.MalformedMessage as exc:
                    strike, detail = MALFORMED, str(exc)
                if action is not None and action not in legal:
                    strike = ILLEGAL
                    detail = f"{action} is not legal here (legal: {', '.join(map(str, legal))})"
                    action = None
            if strike is not None:
                result.strikes[strike] += 1
                decision["strike"] = strike
                decision["detail"] = detail
                if result.strike_count >= options.strikes_to_forfeit:
                    result.forfeited = True
                    result.reason = (f"{result.strike_count} strikes; the last: {strike}: "
                                     f"{detail}")
                action = substitute[seat].choice(legal)
            assert action is not None
        decision["action"] = [action.value, action.slot]
        decisions.append(decision)
        game.apply(action)
        if observer is not None:
            events = game.events or []
            observer(game, events[seen:], decision)
            seen = len(events)
    forfeited = [s.forfeited for s in seats]
    places = final_places(game, forfeited)
    notes = [len(n) for n in game.notes_won]
    for s, stream in enumerate(streams):   # the streams close in the background
        stream.end_game(convert.game_end(
            game_id, places, game.money, notes, forfeited_seats=forfeited,
            forfeited=seats[s].forfeited, reason=seats[s].reason,
            strikes=seats[s].strike_count).end)
    for seat, bot in enumerate(bots):
        seats[seat].output = bot.output()
    record = game.record(
        game_id=game_id,
        bots=[{"seat": s, "name": r.bot, "version": r.version} for s, r in enumerate(seats)],
        places=places,
        forfeits=[{"seat": s, "reason": r.reason} for s, r in enumerate(seats) if r.forfeited],
        strikes=[r.strikes for r in seats],
        decisions=decisions,
        output=[r.output for r in seats],
    )
    return MatchResult(game_id, record, places, list(game.money), seats,
                       time.monotonic() - started)

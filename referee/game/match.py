"""One game between bots: the engine plus one Play stream per seat, with the failure policy.

A bot's timeout, malformed or illegal answer, protocol error or crash becomes a strike of that
type, and the referee plays a legal substitute move for it from a separate seeded stream, so the
other seats' game goes on unchanged (R50). After `strikes_to_forfeit` strikes in one game the
bot forfeits it: it is no longer asked, the substitute plays its dice, and it ranks last.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import grpc

from referee.bots.client import END, GameStream, Handler, Reply, answer_notes, describe
from referee.bots.errors import STRIKE_TYPES
from referee.bots.spec import Limits
from referee.engine import Game, GameRecord, RuleSet
from referee.errors import FailureKind
from referee.present.text import safe_line
from referee.protocol import convert, pb
from referee.protocol.convert import read_decision
from referee.util.seeds import RequestIds, derive_seed


class SeatBot(Protocol):
    """What a seat needs from a bot: identity, limits and a Play stream per game."""

    # Read-only: a Lease answers them with properties, a plain object with attributes.
    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def limits(self) -> Limits: ...

    def open_game(self, handler: Handler | None = None) -> GameStream: ...

    def output(self) -> str: ...


@dataclass(frozen=True)
class AbsentBot:
    """A seat whose bot could not be started for this game (it died and does not restart): it
    forfeits the game from the start, with `reason`, and its dice are played by the substitute."""

    name: str
    version: str
    limits: Limits
    reason: str

    def open_game(self, handler: Handler | None = None) -> None:
        return None

    def output(self) -> str:
        return ""


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
    not_started: bool = False   # forfeited because the bot could not be started for it
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


_NO_STRIKE: dict[str, str] = {}   # the strike fields of a decision without one

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


@dataclass(eq=False)
class _Pending:
    """The decision request a game is waiting on."""

    seat: int
    request_id: int
    legal: tuple
    started: float                   # time.perf_counter() when it was sent
    deadline: float                  # time.perf_counter() by which the answer must be in
    watched: bool = True             # False once its deadline no longer applies


class _Match:
    """The state of one game in play. The game moves forward in whichever task learns the
    answer to the outstanding request: the reader of that seat's stream (its handler), or a
    task started by the request's deadline timer. Only one request is outstanding at a time,
    and `pending` says which: whoever resolves it first clears it, anyone later drops out."""

    def __init__(self, rules: RuleSet, bots: Sequence[SeatBot | AbsentBot], seed: int,
                 options: MatchOptions, observer: Observer | None) -> None:
        self.options = options
        self.observer = observer
        players = len(bots)
        self.game = Game(rules, players, seed)
        self.seats = [SeatResult(bot.name, bot.version) for bot in bots]
        self.substitute = [random.Random(derive_seed(seed, "substitute", s))
                           for s in range(players)]
        self.limits = [bot.limits for bot in bots]
        self.bank_ms = [float(limits.game_bank_ms) for limits in self.limits]
        self.last_latency = [0] * players
        self.decisions: list[dict[str, Any]] = []
        self.seed = seed
        self.request_id = RequestIds(seed)
        self.asked = 0   # decision requests sent so far (their ids: seeds.request_id)
        self.seen = 0
        self.pending: _Pending | None = None
        self.requests = convert.GameRequests()
        self.timer: asyncio.TimerHandle | None = None   # see watch()
        self.timer_due = 0.0                              # when it fires (perf_counter)
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = self.loop.create_future()
        self.tasks: set[asyncio.Task[None]] = set()
        # An AbsentBot's seat (None here) is forfeited below, before play: its stream is never
        # read, so the list is typed as the live seats' streams.
        self.streams = cast("list[GameStream]", [
            bot.open_game(functools.partial(self.on_item, seat)) for seat, bot in enumerate(bots)])
        for seat, bot in enumerate(bots):
            if isinstance(bot, AbsentBot):
                self.seats[seat].forfeited = self.seats[seat].not_started = True
                self.seats[seat].reason = f"the bot could not be started: {bot.reason}"

    def fail(self, exc: BaseException) -> None:
        """A bug in the referee: end play_match with it."""
        if not self.done.done():
            self.done.set_exception(exc)

    def observe(self, decision: dict[str, Any] | None) -> None:
        if self.observer is not None:
            events = self.game.events or []
            self.observer(self.game, events[self.seen:], decision)
            self.seen = len(events)

    async def advance(self) -> None:
        """Play until a bot must be asked, ask it and return; or end the game."""
        game, seats, options = self.game, self.seats, self.options
        while not game.is_over:
            seat = game.current_seat
            legal = game.legal_actions()
            result = seats[seat]
            if result.forfeited or (options.autoplay_forced and len(legal) == 1):
                action = legal[0] if len(legal) == 1 else self.substitute[seat].choice(legal)
                decision = {"seat": seat, "auto": "forfeited" if result.forfeited else "forced"}
                self.play(seat, action, decision)
                continue
            self.asked += 1
            rid = self.request_id(self.asked)
            bank_ms = self.bank_ms[seat]
            limits = self.limits[seat]
            stream = self.streams[seat]
            # What the bot sent while nothing was asked of it is judged first, in order: a
            # late answer is dropped, anything else is a strike for this request, which is
            # then not sent (read before it, nothing can be its answer).
            if stream.inbox:
                reply = await stream.judge_held(rid)
                if reply is not None:
                    self.resolve(_Pending(seat, rid, legal, 0.0, 0.0), reply)
                    continue
            message = self.requests.build(game, rid, int(bank_ms), self.last_latency[seat])
            started = time.perf_counter()
            pending = self.pending = _Pending(seat, rid, legal, started,
                                              started + (limits.decision_ms + bank_ms) / 1000)
            if self.timer is None or self.timer_due > pending.deadline:
                self.watch(pending)
            error = await stream.send(message, pending.deadline - time.perf_counter())
            if error is not None and self.pending is pending:
                # Telling a crash from a protocol error takes a while: not in this task,
                # which may be another seat's reader (its answers must not wait for it).
                pending.watched = False
                self.spawn(functools.partial(self._broken_stream, pending, error))
            return   # the answer will come to on_item, or the deadline to on_deadline
        if not self.done.done():
            self.done.set_result(None)

    async def on_item(self, seat: int, item: object) -> None:
        """Seat `seat`'s stream read `item` (see GameStream): judge it and go on with the game.

        One clock decides whether an answer is in time: time.perf_counter() read here, as the
        reader hands the answer over, against the request's deadline on the same clock (the
        deadline timer uses it too). An answer read after the deadline is a timeout, whichever
        of the two runs first."""
        received = time.perf_counter()
        try:
            pending = self.pending
            if (pending is not None and pending.seat == seat and type(item) is pb.BotMessage
                    and received <= pending.deadline):
                # The usual case, first and without a Reply: the awaited answer, legal.
                answer = read_decision(item)
                if (answer is not None and answer[0] == pending.request_id
                        and answer[1] in pending.legal):
                    self.pending = None
                    self.accept(seat, answer[1], int((received - pending.started) * 1e6),
                                _NO_STRIKE, answer_notes(item.decision))
                    self.spawn(self.advance)   # not in this reader (see the end of on_item)
                    return
            stream = self.streams[seat]
            ended = item is END or isinstance(item, grpc.aio.AioRpcError)
            if pending is None or pending.seat != seat:
                if ended:
                    stream.broken = stream.broken or describe(item)
                else:
                    stream.hold(item)   # judged when this seat is asked next
                return
            if not ended and received > pending.deadline:
                self.on_deadline(pending)   # read too late: a timeout, as the timer would say
                stream.hold(item)           # and, if it is the late answer, dropped at once
                return
            if ended:
                pending.watched = False   # telling a crash from a protocol error takes a while
            reply = await stream.judge(item, pending.request_id, pending.started, received)
            if reply is None or self.pending is not pending:
                return   # a late answer to an earlier request, or already timed out
            self.resolve(pending, reply)
            # The game goes on in a task of its own, never in this seat's reader: asking the
            # next seat may wait on its write (a bot that does not read its stream holds it up
            # to WRITE_GRACE_S), and this seat's next answer must be read meanwhile.
            self.spawn(self.advance)
        except Exception as exc:
            self.fail(exc)

    def watch(self, pending: _Pending) -> None:
        """Arm the deadline timer for `pending` (advance calls this only when no timer is armed
        or the armed one fires after `pending`'s deadline). One timer serves a whole game:
        requests follow each other far faster than their deadlines pass, so the timer armed for
        an earlier request is usually still early enough and is kept, instead of a timer made
        and cancelled per request."""
        if self.timer is not None:
            self.timer.cancel()
        self.timer_due = pending.deadline
        self.timer = self.loop.call_later(pending.deadline - time.perf_counter(), self.on_timer)

    def on_timer(self) -> None:
        """The timer fired: time out the outstanding request if its deadline has passed, else
        wait on for it."""
        self.timer = None
        pending = self.pending
        if pending is None or not pending.watched:
            return
        if time.perf_counter() <= pending.deadline:
            self.watch(pending)
            return
        self.on_deadline(pending)

    def on_deadline(self, pending: _Pending) -> None:
        """The deadline of `pending` passed: a timeout strike, and the game goes on."""
        if self.pending is not pending:
            return
        elapsed = int((time.perf_counter() - pending.started) * 1e6)
        allowed_ms = (pending.deadline - pending.started) * 1000
        self.streams[pending.seat].given_up.add(pending.request_id)   # its answer is dropped
        self.resolve(pending, Reply(None, FailureKind.TIMEOUT,
                                    f"no decision within {allowed_ms:.0f} ms", elapsed))
        self.spawn(self.advance)

    def spawn(self, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Go on with the game in a task of its own, running `step()` (a bug in it ends
        play_match)."""
        self.tasks.add(self.loop.create_task(self._guarded(step)))

    async def _guarded(self, step: Callable[[], Coroutine[Any, Any, None]]) -> None:
        # The task leaves `tasks` itself as it ends: a done callback would cost the loop
        # one more turn per decision.
        try:
            await step()
        except Exception as exc:
            self.fail(exc)
        finally:
            self.tasks.discard(asyncio.current_task())

    async def _broken_stream(self, pending: _Pending, error: str) -> None:
        """The request `pending` could not be sent: strike it as the broken stream's failure
        (crash, protocol error or timeout) and go on."""
        strike, detail = await self.streams[pending.seat].failure(error)
        if self.pending is pending:
            self.resolve(pending, Reply(None, strike, detail, 0))
            await self.advance()

    def resolve(self, pending: _Pending, reply: Reply) -> None:
        """Apply the answer to `pending` (or the substitute move a strike calls for)."""
        self.pending = None
        seat, legal = pending.seat, pending.legal
        strike, detail, action = reply.strike, reply.detail, reply.action
        if strike is None and action not in legal:
            strike = FailureKind.ILLEGAL
            detail = f"{action} is not legal here (legal: {', '.join(map(str, legal))})"
        if strike is None:
            self.accept(seat, action, reply.latency_us, _NO_STRIKE, reply.notes)
            return
        detail = safe_line(detail)   # may quote the bot (gRPC status details)
        result = self.seats[seat]
        result.strikes[strike] += 1
        if result.strike_count >= self.options.strikes_to_forfeit:
            result.forfeited = True
            result.reason = f"{result.strike_count} strikes; the last: {strike}: {detail}"
        self.accept(seat, self.substitute[seat].choice(legal), reply.latency_us,
                    {"strike": strike, "detail": detail}, reply.notes)

    def accept(self, seat: int, action: Any, latency_us: int, strike: dict[str, str],
               notes: dict[str, Any] | None = None) -> None:
        """Play `action` for `seat`, whose answer took `latency_us`: charge the overrun to its
        time bank, keep the latency and record the decision (with the strike's type and detail
        when `action` is a substitute, and the bot's notes if its answer had any)."""
        overrun = latency_us / 1000 - self.limits[seat].decision_ms
        if overrun > 0:
            self.bank_ms[seat] = max(0.0, self.bank_ms[seat] - overrun)
        self.last_latency[seat] = latency_us
        self.seats[seat].latencies_us.append(latency_us)
        decision = {"seat": seat, "latency_us": latency_us, **strike}
        if notes:
            decision.update(notes)
        self.play(seat, action, decision)

    def play(self, seat: int, action: Any, decision: dict[str, Any]) -> None:
        decision["action"] = [action.value, action.slot]
        self.decisions.append(decision)
        self.game.apply(action)
        self.observe(decision)

    def close(self) -> None:
        """Stop waiting: cancel the deadline and any task still moving the game."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.pending = None
        for task in self.tasks:
            task.cancel()


async def play_match(
    rules: RuleSet,
    bots: Sequence[SeatBot | AbsentBot],
    seed: int,
    game_id: str,
    options: MatchOptions | None = None,
    observer: Observer | None = None,
) -> MatchResult:
    """Play one game with `bots[i]` in seat i and return its result; never raises for a bot."""
    started = time.monotonic()
    match = _Match(rules, bots, seed, options or MatchOptions(), observer)
    game, seats, streams = match.game, match.seats, match.streams
    names = [bot.name for bot in bots]
    rules_pb = convert.rules_to_pb(rules)
    finished = False
    live = [(seat, stream) for seat, stream in enumerate(streams) if stream is not None]
    try:
        # Every write is bounded by the bot's deadline (a bot that does not read its stream
        # holds it back): this one by the first decision's.
        await asyncio.gather(*(
            stream.send(convert.game_start(game_id, rules_pb, names, seat,
                                           decision_ms=bots[seat].limits.decision_ms,
                                           game_bank_ms=bots[seat].limits.game_bank_ms,
                                           autoplay_forced=match.options.autoplay_forced),
                        (bots[seat].limits.decision_ms + bots[seat].limits.game_bank_ms) / 1000)
            for seat, stream in live
        ))
        if observer is not None:
            observer(game, list(game.events or []), None)
            match.seen = len(game.events or [])
        await match.advance()
        await match.done
        finished = True
    finally:
        match.close()
        if not finished:   # a bug or a cancellation: close the streams without a GameEnd
            for _, stream in live:
                stream.end_game(None)
    forfeited = [s.forfeited for s in seats]
    places = final_places(game, forfeited)
    notes = [len(n) for n in game.notes_won]
    for s, stream in live:   # the streams close in the background
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
        decisions=match.decisions,
        output=[r.output for r in seats],
    )
    return MatchResult(game_id, record, places, list(game.money), seats,
                       time.monotonic() - started)

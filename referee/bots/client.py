"""The referee's gRPC client for one bot: handshake, and one Play stream per game with deadlines.

`GameStream.decide` never raises for anything a bot does: it returns a `Reply` that holds either
the action the bot chose or the strike it earned (timeout, malformed, protocol, crash).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from referee import __version__
from referee.bots.errors import BotStartError, Failure
from referee.engine.actions import Action
from referee.errors import FailureKind
from referee.present.notes import record_notes
from referee.present.text import safe_line
from referee.protocol import PROTOCOL_VERSION, pb, rpc
from referee.protocol.convert import MalformedMessage, action_from_pb

#: The largest message the referee takes from a bot. A decision is a few bytes (with a note and
#: values, well under 2 KiB); anything bigger ends the stream as a protocol strike before it is
#: read into memory.
MAX_ANSWER_BYTES = 64 * 1024
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_ANSWER_BYTES),
    ("grpc.enable_retries", 0),
    # No keepalive pings: default servers of every language (C-core, Go, Java) allow a client
    # a ping without data only every 5 minutes and answer more with GOAWAY too_many_pings,
    # which would break every stream of an honest bot that waits while another seat thinks.
    # A silent bot is found by its request's deadline instead.
    ("grpc.keepalive_time_ms", 2**31 - 1),
    # A bot is dialled before it listens: gRPC's reconnect backoff (1 s, growing 1.6x to
    # 2 min) would leave a bot that started listening after 10 s of a loaded machine unheard
    # until after its start-up limit. Retry at least every second, as the handshake asks.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]
END = object()   # the stream ended
UNDECODABLE = object()   # an answer that is not a BotMessage
#: The full method name of Bot.Play, from bot.proto's descriptor.
PLAY_METHOD = f"/{pb.DESCRIPTOR.services_by_name['Bot'].full_name}/Play"
HELLO = pb.HelloRequest(protocol_version=PROTOCOL_VERSION, referee_version=__version__)
PROBE_S = 2.0          # how long a broken stream waits for the bot to answer Hello
CRASH_SETTLE_S = 1.0   # then how long a crash waits to see the bot's process end (wording only)
FINISH_S = 1.0         # how long a finished game's stream waits for the bot to end it
#: Why a stream is broken when a write did not complete within its deadline: the bot does not
#: read its stream (gRPC's flow control holds the write back). A timeout, not a protocol error.
STALLED = "the bot does not read its stream (a write did not complete within its deadline)"
#: Messages a stream keeps while nothing is asked of its bot (a bot may answer late once per
#: timed-out request); one more and the stream is cut off as FLOODED.
INBOX_LIMIT = 16
#: A write is given up at its deadline, but never sooner than this: a referee slowed down by
#: its own load must not take that for a bot that does not read (giving a write up ends the
#: stream). The request's own deadline still strikes a timeout on time.
WRITE_GRACE_S = 5.0
FLOODED = f"the bot sent more than {INBOX_LIMIT} messages while nothing was asked of it"


class _Deadline:
    """Put in a stream's inbox when the request it names runs out of time."""

    __slots__ = ("request_id",)

    def __init__(self, request_id: int) -> None:
        self.request_id = request_id


@dataclass(frozen=True)
class Hello:
    """What a bot said about itself in the handshake."""

    name: str
    version: str
    protocol_version: int
    max_concurrent_games: int


@dataclass
class Reply:
    """The outcome of one decision request."""

    action: Action | None         # the bot's action, if it answered in time and well formed
    strike: FailureKind | None    # the strike's kind otherwise
    detail: str                   # why, for a strike
    latency_us: int               # measured by the referee, from send to receive
    notes: dict[str, Any] | None = None   # the answer's notes as the record keeps them


class BotClient:
    """A gRPC channel to one bot instance."""

    def __init__(self, name: str, address: str, alive: Callable[[], bool] | None = None) -> None:
        self.name = name
        self.address = address
        self.channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        self.stub = rpc.BotStub(self.channel)
        # Requests are serialized by `GameStream.send` as it is called (a game reuses one request
        # message, see `convert.GameRequests`); an answer that does not parse is a strike
        # judged by GameStream.judge, not a broken call.
        self._play = self.channel.stream_stream(PLAY_METHOD, response_deserializer=parse_answer)
        self._alive = alive or (lambda: True)
        self.has_process = alive is not None   # False for a bot at an address
        self.hello: Hello | None = None
        self.lost = False   # a stream saw the bot crash: do not start new games on this client
        self.closing: set[asyncio.Task[None]] = set()   # streams ending in the background

    def process_alive(self) -> bool:
        """False once the bot's process is known to have ended."""
        return self._alive()

    async def answers_hello(self, timeout: float) -> bool:
        """Whether the bot answers a Hello within `timeout` seconds: it is up and serving."""
        try:
            await self.stub.Hello(HELLO, timeout=timeout, wait_for_ready=False)
        except grpc.aio.AioRpcError:
            return False
        return True

    async def handshake(self, timeout: float) -> Hello:
        """Call Hello until it answers or `timeout` seconds pass; BotStartError if it never does."""
        deadline = time.monotonic() + timeout
        last_error = "no answer"
        while True:
            if not self._alive():
                raise BotStartError(self.name, "exited during start-up")
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotStartError(self.name, f"no answer to Hello within {timeout:g} s "
                                               f"({last_error})")
            try:
                reply = await self.stub.Hello(HELLO, timeout=min(left, 1.0),
                                              wait_for_ready=False)
                break
            except grpc.aio.AioRpcError as exc:
                last_error = exc.code().name.lower()
                await asyncio.sleep(min(0.02, max(left, 0)))
        if reply.protocol_version != PROTOCOL_VERSION:
            raise BotStartError(self.name, f"speaks protocol {reply.protocol_version}, the "
                                           f"referee speaks {PROTOCOL_VERSION}")
        self.hello = Hello(safe_line(reply.bot_name or self.name), safe_line(reply.bot_version),
                           reply.protocol_version, max(1, reply.max_concurrent_games))
        return self.hello

    def play(self) -> grpc.aio.StreamStreamCall:
        """A Play call: it writes serialized RefereeMessages and reads BotMessages (or
        UNDECODABLE, see `parse_answer`)."""
        return self._play()

    def open_game(self, handler: Handler | None = None) -> GameStream:
        """Open the Play stream of one game (see `GameStream` for `handler`)."""
        return GameStream(self, handler)

    async def close(self) -> None:
        """Let streams that are ending finish (each gives up within about a second), then close
        the channel."""
        if self.closing:
            await asyncio.gather(*self.closing, return_exceptions=True)
        await self.channel.close(grace=None)


def parse_answer(data: bytes) -> object:
    """A bot's answer as a BotMessage, or UNDECODABLE (a "malformed" strike, not a broken
    stream)."""
    try:
        return pb.BotMessage.FromString(data)
    except DecodeError:
        return UNDECODABLE


def answer_notes(decision: pb.Decision) -> dict[str, Any] | None:
    """A decision's note and values as the record keeps them (`referee.present.notes`), or None."""
    if decision.note or decision.values:
        return record_notes(decision.note, decision.values)
    return None


#: Called by a stream's reader with each item it reads: an answer (a BotMessage or
#: UNDECODABLE), an AioRpcError, or END.
Handler = Callable[[object], Awaitable[None]]


class GameStream:
    """One game's Play stream: the referee writes requests, a reader task takes the answers.

    Without a handler the reader puts what it reads in the inbox, where `decide` waits for it.
    With one, the reader awaits `handler(item)` for each answer, AioRpcError and finally
    END: the handler can judge the answer and go on with the game in the reader's own task,
    which saves a hand-over between tasks per decision (`referee.game.match` works this way).
    """

    def __init__(self, client: BotClient, handler: Handler | None = None) -> None:
        self.client = client
        self.handler = handler
        self.call = client.play()
        # Answers, stream errors, END and deadline markers, in arrival order. A deque and one
        # future to wake `decide` cost less than an asyncio.Queue, and this runs per decision.
        self.inbox: deque[object] = deque()
        # Requests given up before their answer came (timed out, or struck for another
        # message): each one's answer is dropped once, without a strike, if it comes.
        self.given_up: set[int] = set()
        self._waiter: asyncio.Future[None] | None = None
        self.broken: str | None = None     # why the stream can no longer be used
        self._settled = False              # failure waited for a dying process once
        self._writing = False              # a write is in flight (see send)
        self._write_waiters: deque[asyncio.Future[None]] = deque()
        # The bound of the write in flight when no other write waits (see send): one timer
        # per stream watches them all, instead of a timer made and cancelled per write.
        self._loop = asyncio.get_running_loop()
        self._write_due: float | None = None   # loop.time() by which that write must complete
        self._write_watch: asyncio.TimerHandle | None = None
        self._watch_due = 0.0                  # when the watch timer fires
        self._stalled = False                  # the watch gave a write up: the stream is STALLED
        # The reader task owns the stream's reads: a read cancelled on a timeout would cancel
        # the whole RPC, so `decide` waits on the inbox instead.
        self.reader = asyncio.create_task(self._read())

    def hold(self, item: object) -> None:
        """Keep a message read while nothing is asked of the bot (judged when it is asked
        next); a stream that holds more than INBOX_LIMIT is cut off as FLOODED."""
        if len(self.inbox) >= INBOX_LIMIT and item is not END:
            if self.broken is None:
                self.broken = FLOODED
                self.inbox.clear()
                self.call.cancel()
            return
        self.inbox.append(item)

    def _deliver(self, item: object) -> None:
        self.hold(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _next(self) -> object:
        """The next item of the inbox, waiting for one."""
        inbox = self.inbox
        while not inbox:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return inbox.popleft()

    async def _read(self) -> None:
        handler = self.handler
        deliver = self._deliver
        read = self.call.read
        item: object = END
        try:
            while True:
                message = await read()
                if message is grpc.aio.EOF:
                    break
                if handler is None:
                    deliver(message)
                else:
                    await handler(message)
        except asyncio.CancelledError:
            if cancelled_task():   # `finish` stops the reader
                deliver(END)
                raise
            # The call was cancelled (a flood, a stalled write): the stream has ended.
        except (grpc.aio.AioRpcError, grpc.aio.UsageError) as exc:
            if isinstance(exc, grpc.aio.AioRpcError):
                item = exc
        if handler is None:
            if item is not END:
                deliver(item)
            deliver(END)
        else:
            await handler(item)

    async def failure(self, detail: str) -> Failure:
        """Classify a broken stream: a crash if the bot's process ended or the connection to
        it is gone, a protocol error if the bot is up and serving (it broke the stream itself).

        A dying bot breaks its streams (often as `internal` or `unknown`) before its process is
        known to have ended (the guard and the kernel take a while to report it, longer on a
        loaded machine), so what decides is whether the bot still answers a Hello.
        """
        if detail == STALLED:
            return Failure(FailureKind.TIMEOUT, detail)
        if detail == FLOODED:
            return Failure(FailureKind.PROTOCOL, detail)
        client = self.client
        connection_lost = "unavailable" in detail or "connect" in detail
        if (client.process_alive() and not connection_lost
                and await client.answers_hello(PROBE_S)):
            return Failure(FailureKind.PROTOCOL, detail)
        client.lost = True
        if client.has_process and not self._settled:
            # Only the record's wording depends on this: "process ended" tells a bot's author
            # more than "connection gone", and a process is usually reaped within milliseconds.
            self._settled = True
            deadline = time.monotonic() + CRASH_SETTLE_S
            while client.process_alive() and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        if not client.process_alive():
            return Failure(FailureKind.CRASH, f"the bot's process ended ({detail})")
        return Failure(FailureKind.CRASH, f"the connection to the bot is gone ({detail})")

    async def send(self, message: pb.RefereeMessage, timeout: float = 0.0) -> str | None:
        """Write a message; return None, or why the stream is broken. The message is serialized
        at once, so the caller may change it as soon as this is called. A write that does not
        complete within `timeout` seconds (its deadline; at least WRITE_GRACE_S) breaks the
        stream as STALLED and cancels the call: a bot that does not read its stream holds
        writes back."""
        if self.broken is not None:
            return self.broken
        data = message.SerializeToString()
        limit = max(WRITE_GRACE_S, timeout)
        if self._writing:
            # Another write of this stream is in flight (rare, see _write): this one waits its
            # turn, and the wait and the write are bounded together.
            try:
                async with asyncio.timeout(limit):
                    await self._write(data)
            except TimeoutError:
                self.broken = self.broken or STALLED
                self.call.cancel()
            return self.broken
        # The usual case, once per decision: the write starts at once, and the stream's one
        # watch timer bounds it (a timer per write cost more than the rest of this method).
        due = self._write_due = self._loop.time() + limit
        if self._write_watch is None or self._watch_due > due:
            self._watch_writes(due)
        try:
            await self._write(data)
        finally:
            self._write_due = None
        return self.broken

    def _watch_writes(self, due: float) -> None:
        """Arm the stream's watch timer to fire at `due`. Writes complete far sooner than their
        bound, so a timer armed for an earlier write usually finds none in flight and stops;
        the next write arms it again."""
        if self._write_watch is not None:
            self._write_watch.cancel()
        self._watch_due = due
        self._write_watch = self._loop.call_at(due, self._on_write_watch)

    def _on_write_watch(self) -> None:
        """The watch timer fired: give the write in flight up if its bound has passed (the
        stream is STALLED, and cancelling the call ends the write), else wait on for it."""
        self._write_watch = None
        due = self._write_due
        if due is None:
            return
        if self._loop.time() < due:
            self._watch_writes(due)
            return
        self._stalled = True
        self.broken = self.broken or STALLED
        self.call.cancel()

    async def _write(self, data: bytes) -> None:
        # gRPC takes one write at a time per call. Writes can overlap: a fast bot's answer can
        # reach the reader (which then asks this bot again when it moves twice in a row) before
        # the write of the request it answers has completed here. Then the later write waits
        # its turn (a flag and a queue of waiters: an asyncio.Lock costs more per write).
        if self._writing:
            waiter = asyncio.get_running_loop().create_future()
            self._write_waiters.append(waiter)
            try:
                await waiter   # handed the turn by the write before it
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._next_writer()   # the turn came, but this send is given up: pass it
                raise
            if self.broken is not None:
                self._next_writer()
                return
        self._writing = True
        try:
            await self.call.write(data)
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError) as exc:
            failure = await self._write_failure(exc)
            if not self._stalled:   # a write the watch gave up ends as the call's cancel says
                self.broken = failure
        except asyncio.CancelledError:
            if cancelled_task():
                raise
            self.broken = self.broken or "the stream was cancelled"   # see cancelled_task
        finally:
            self._next_writer()

    def _next_writer(self) -> None:
        """End a write: hand the turn to the first waiting writer, if any."""
        waiters = self._write_waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)   # _writing stays True: the turn passes to it
                return
        self._writing = False

    async def _write_failure(self, exc: Exception) -> str:
        """Why a write failed. A write to a call that has already ended (the bot crashed while
        the referee was not reading) only says "RPC already finished": use the call's status
        (e.g. `unavailable: Socket closed`), so that a crash is not taken for a protocol error."""
        if not isinstance(exc, grpc.aio.AioRpcError) and self.call.done():
            with contextlib.suppress(Exception):
                code = await self.call.code()
                details = ((await self.call.details()) or "").strip()
                return f"{code.name.lower()}: {details}" if details else code.name.lower()
        return describe(exc)

    async def decide(self, message: pb.RefereeMessage, request_id: int, timeout_s: float
                     ) -> Reply:
        """Send a decision request (a RefereeMessage) and wait for the decision
        answering `request_id`, at most `timeout_s` seconds."""
        early = await self.judge_held(request_id)
        if early is not None:
            return early
        started = time.perf_counter()
        error = await self.send(message, timeout_s)
        if error is not None:
            strike, detail = await self.failure(error)
            return Reply(None, strike, detail, 0)
        # One timer per request puts a deadline marker in the inbox: cheaper than wrapping
        # every wait in a timeout context (no cancellation, no extra task).
        expired = _Deadline(request_id)
        timer = asyncio.get_running_loop().call_later(timeout_s, self._deliver, expired)
        try:
            while True:
                item = self.inbox.popleft() if self.inbox else await self._next()
                if isinstance(item, _Deadline):
                    if item is not expired:
                        continue   # the marker of an earlier request that was answered
                    elapsed = int((time.perf_counter() - started) * 1e6)
                    self.given_up.add(request_id)
                    return Reply(None, FailureKind.TIMEOUT,
                                 f"no decision within {timeout_s * 1000:.0f} ms", elapsed)
                reply = await self.judge(item, request_id, started)
                if reply is not None:
                    return reply
        finally:
            timer.cancel()

    async def judge_held(self, request_id: int) -> Reply | None:
        """Judge what the bot sent while nothing was asked of it, before request `request_id`
        is sent: late answers to requests given up are dropped; anything else (an answer
        nobody asked for, one for an id the bot guessed, the end of the stream) makes the
        reply to this request, which is then not sent: read before the request, it cannot
        be its answer. None: nothing held stands against the request, send it."""
        inbox = self.inbox
        while inbox:
            item = inbox.popleft()
            if isinstance(item, _Deadline):
                continue   # the marker of an earlier request that was answered
            now = time.perf_counter()
            reply = await self.judge(item, request_id, now, now, early=True)
            if reply is not None:
                return reply
        return None

    async def judge(self, item: object, request_id: int, started: float,
                    received: float | None = None, early: bool = False) -> Reply | None:
        """The reply to request `request_id` that `item` (read at `received`, by
        time.perf_counter) makes, or None to keep waiting (the late answer to a request given
        up before). A decision for any other request (answered already, never sent, or given
        up and answered already) is a protocol strike for this one, never its answer; so is
        a decision for this very request that was read before it was sent (`early`: the bot
        guessed its id). This request's own answer is then dropped when it comes."""
        latency = int(((time.perf_counter() if received is None else received) - started) * 1e6)
        if item is END or isinstance(item, grpc.aio.AioRpcError):
            self.broken = self.broken or describe(item)   # the referee's own reason first
            self._deliver(END)  # later requests see the end at once
            strike, detail = await self.failure(self.broken)
            return Reply(None, strike, detail, latency)
        if item is UNDECODABLE:
            return Reply(None, FailureKind.MALFORMED, "a message that does not decode", latency)
        assert isinstance(item, pb.BotMessage)
        if item.WhichOneof("kind") != "decision":
            return Reply(None, FailureKind.MALFORMED, "a message without a decision", latency)
        decision = item.decision
        answered = decision.request_id
        if answered != request_id or early:
            if answered in self.given_up:
                self.given_up.discard(answered)
                return None   # a late answer to a timed-out request: dropped, already struck
            self.given_up.add(request_id)
            if answered == request_id:
                return Reply(None, FailureKind.PROTOCOL, f"a decision for request {answered}, "
                             "read before that request was sent", latency)
            return Reply(None, FailureKind.PROTOCOL, f"a decision for request {answered}, which "
                         f"is not outstanding (the request asked is {request_id})", latency)
        try:
            action = action_from_pb(decision)
        except MalformedMessage as exc:
            return Reply(None, FailureKind.MALFORMED, str(exc), latency)
        return Reply(action, None, "", latency, answer_notes(decision))

    def end_game(self, end: pb.GameEnd | None) -> None:
        """`finish` in the background: the game's result does not wait on the bot to take its
        GameEnd and close the stream. `BotClient.close` waits for it."""
        task = asyncio.get_running_loop().create_task(self.finish(end))
        closing = self.client.closing
        closing.add(task)
        task.add_done_callback(closing.discard)

    async def finish(self, end: pb.GameEnd | None) -> None:
        """Send GameEnd (if the stream still works), close our side and let the bot end the
        stream, as the protocol has it; a stream not ended within FINISH_S is cancelled."""
        if end is not None and self.broken is None:
            await self.send(pb.RefereeMessage(end=end))
        if self.broken is None:
            # Waiting for the bot's end costs less than cancelling: no reset for either side.
            with contextlib.suppress(Exception):   # TimeoutError, or the stream broke
                async with asyncio.timeout(FINISH_S):
                    with call_cancelled():
                        await self.call.done_writing()
                    await self.reader
        self.call.cancel()
        self.reader.cancel()
        if self._write_watch is not None:
            self._write_watch.cancel()
            self._write_watch = None
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.reader


def cancelled_task() -> bool:
    """Whether a CancelledError just caught means that this task is being cancelled. grpc
    also raises CancelledError from a read or a write on a call that was cancelled (the
    referee cancels a stream that floods it or stalls a write, from another task): that only
    means the stream has ended."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


@contextlib.contextmanager
def call_cancelled() -> Iterator[None]:
    """Let a CancelledError from a cancelled call pass (see `cancelled_task`); a cancellation
    of this task goes on."""
    try:
        yield
    except asyncio.CancelledError:
        if cancelled_task():
            raise


def describe(error: object) -> str:
    """A stream error (or END) in a few words, for a strike's detail."""
    if error is END:
        return "the bot ended the stream"
    if isinstance(error, grpc.aio.AioRpcError):
        details = (error.details() or "").strip()
        return f"{error.code().name.lower()}: {details}" if details else error.code().name.lower()
    return str(error) or type(error).__name__

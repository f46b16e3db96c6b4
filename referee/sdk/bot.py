"""The Python SDK: a `Bot` base class and `run()`, which serves the bot protocol (docs/protocol.md).
A whole bot is shown in the docstring of `referee.sdk`.

`run` reads the listen address (`--address ADDR` or the environment variable
`REFEREE_BOT_ADDRESS`), serves `Hello` and one `Play` stream per game with grpc.aio, calls
`choose` in the event loop for every decision request, and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from referee.engine.actions import Action
from referee.engine.rules import RuleSet
from referee.engine.view import View
from referee.protocol import PROTOCOL_VERSION, pb, rpc
from referee.protocol.convert import (
    DecodedRequest,
    decision_message,
    decode_message,
    rules_from_pb,
)

log = logging.getLogger("referee.sdk")

ADDRESS_ENV = "REFEREE_BOT_ADDRESS"
STOP_GRACE_S = 0.25  # how long open streams get to finish after SIGTERM


@dataclass(frozen=True)
class GameInfo:
    """One game this bot plays, from its GameStart message."""

    game_id: str
    rules: RuleSet
    players: int
    seat: int                       # this bot's seat
    bot_names: tuple[str, ...]      # the tournament's name for the bot in each seat
    decision_ms: int                # per-decision allowance (TimeControl)
    game_bank_ms: int               # game time bank (0: none)
    autoplay_forced: bool
    #: Free per-game storage for the bot (a bot process can play several games at once).
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class GameResult:
    """How a game ended, from its GameEnd message (R26). Lists are in seat order."""

    game: GameInfo
    places: tuple[int, ...]
    money: tuple[int, ...]
    notes: tuple[int, ...]
    forfeited_seats: tuple[bool, ...]
    forfeited: bool                 # this bot forfeited (3 strikes)
    reason: str
    strikes: int                    # strikes this bot received in the game

    @property
    def place(self) -> int:
        """This bot's place (1-based, shared places possible)."""
        return self.places[self.game.seat]


class Bot:
    """Subclass it and implement `choose`. Class attributes describe the bot in `Hello`.

    While `choose` runs, `self.game` is the GameInfo of the game being played and
    `self.request` the request being answered (`request_id`, `time_bank_ms`,
    `last_latency_us`, `view`); `self.time_left()` is the time until its deadline. One process
    may play up to `max_concurrent_games` games at once, each on its own stream, so keep
    per-game state in `self.game.memo`, not in plain attributes.
    """

    name: str = "bot"
    version: str = "0"
    max_concurrent_games: int = 8

    game: GameInfo | None = None
    request: DecodedRequest | None = None
    _received: float = 0.0
    _note: tuple[str, dict[str, float]] | None = None

    def choose(self, view: View) -> Action:
        """Return one of `view.legal` (R15, R16). Called once per decision request."""
        raise NotImplementedError

    def note(self, text: str = "", /, **values: float) -> None:
        """Send notes with the move `choose` is about to return: a short text and named
        numbers, e.g. `self.note("safe", playouts=120, eval=0.6)`. The referee records them
        beside the move (a text over 256 bytes and more than 16 numbers are cut, never a
        strike; docs/protocol.md, "Notes"). A later call in the same `choose` replaces the
        text (if given) and adds to the numbers."""
        if self.request is None:
            raise RuntimeError("note() is meant for use inside choose()")
        numbers = {str(name): float(value) for name, value in values.items()}
        if self._note is None:
            self._note = (str(text), numbers)
        else:
            old_text, old_values = self._note
            self._note = (str(text) or old_text, {**old_values, **numbers})

    def on_game_start(self, game: GameInfo) -> None:
        """Called when a game starts (its GameStart arrived)."""

    def on_game_end(self, result: GameResult) -> None:
        """Called when a game ends (its GameEnd arrived)."""

    def time_left(self) -> float:
        """Seconds left before the current decision's deadline, by this process's clock
        (the referee's own measure adds transport: keep a margin)."""
        if self.game is None or self.request is None:
            return float("inf")
        allowed = (self.game.decision_ms + self.request.time_bank_ms) / 1000
        return allowed - (time.perf_counter() - self._received)

    def run(self, argv: Sequence[str] | None = None) -> None:
        """Serve this bot until SIGTERM (see `referee.sdk.run`)."""
        run(self, argv)


# ------------------------------------------------------------------------------------ serving


def _game_info(start: pb.GameStart) -> GameInfo:
    return GameInfo(
        game_id=start.game_id,
        rules=rules_from_pb(start.rules),
        players=len(start.seats),
        seat=start.your_seat,
        bot_names=tuple(s.bot_name for s in start.seats),
        decision_ms=start.time_control.decision_ms,
        game_bank_ms=start.time_control.game_bank_ms,
        autoplay_forced=start.autoplay_forced,
    )


def _game_result(game: GameInfo, end: pb.GameEnd) -> GameResult:
    standings = end.standings
    return GameResult(
        game=game,
        places=tuple(s.place for s in standings),
        money=tuple(s.money for s in standings),
        notes=tuple(s.notes for s in standings),
        forfeited_seats=tuple(s.forfeited for s in standings),
        forfeited=end.forfeited,
        reason=end.reason,
        strikes=end.strikes,
    )


def _hook(bot: Bot, name: str, arg: Any) -> None:
    try:
        getattr(bot, name)(arg)
    except Exception:
        log.error("%s raised:\n%s", name, traceback.format_exc())


class _Service(rpc.BotServicer):
    """The Bot service of bot.proto, served with the generated code."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.hello = pb.HelloReply(
            bot_name=str(bot.name), bot_version=str(bot.version),
            protocol_version=PROTOCOL_VERSION,
            max_concurrent_games=max(1, int(bot.max_concurrent_games)),
        )

    async def Hello(self, request: pb.HelloRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> pb.HelloReply:
        return self.hello

    async def Play(self, requests: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        bot = self.bot
        read, write = context.read, context.write
        clock = time.perf_counter
        EOF = grpc.aio.EOF  # noqa: N806
        game: GameInfo | None = None
        rules: RuleSet | None = None
        players = seat = 0
        while True:
            message = await read()
            if message is EOF:
                return
            received = clock()
            try:
                decoded = decode_message(rules, players, seat, message, lazy=True)
            except ValueError as exc:  # MalformedMessage, RulesError
                log.error("ignoring a message from the referee: %s", exc)
                continue
            request = decoded.request
            if request is not None:
                bot.game, bot.request, bot._received = game, request, received
                view = request.view
                try:
                    action = bot.choose(view)
                    answer = decision_message(request.request_id, action)
                    if bot._note is not None:
                        text, values = bot._note
                        answer.decision.note = text
                        answer.decision.values.update(values)
                except Exception:
                    log.error("choose raised; answering without an action:\n%s",
                              traceback.format_exc())
                    answer = decision_message(request.request_id, None)
                else:
                    if action not in view.legal:
                        log.warning("choose returned %r, not one of the legal actions %s",
                                    action, view.legal)
                finally:
                    bot.game = bot.request = bot._note = None
                await write(answer)
            elif decoded.start is not None:
                try:
                    game = _game_info(decoded.start)
                except ValueError as exc:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"bad GameStart: {exc}")
                    return   # abort raises: no game to start
                rules, players, seat = game.rules, game.players, game.seat
                _hook(bot, "on_game_start", game)
            elif decoded.end is not None:
                if game is not None:
                    _hook(bot, "on_game_end", _game_result(game, decoded.end))
                return


def _remove_stale_socket(address: str) -> None:
    if not address.startswith("unix:"):
        return
    path = address[len("unix:"):]
    with contextlib.suppress(OSError):
        if stat.S_ISSOCK(os.stat(path).st_mode):
            os.unlink(path)


async def serve(bot: Bot, address: str, *, stop: asyncio.Event | None = None) -> None:
    """Serve `bot` at `address` (`unix:/path` or `127.0.0.1:PORT`) until `stop` is set (or,
    without `stop`, until SIGTERM or SIGINT), then stop with a short grace period."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    rpc.add_BotServicer_to_server(_Service(bot), server)
    _remove_stale_socket(address)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {address}: {exc}") from None
    if not port:
        raise OSError(f"cannot listen on {address}")
    loop = asyncio.get_running_loop()
    signals: tuple[signal.Signals, ...] = ()
    if stop is None:
        stop = asyncio.Event()
        signals = (signal.SIGTERM, signal.SIGINT)
        for sig in signals:
            loop.add_signal_handler(sig, stop.set)
    await server.start()
    log.info("%s %s listening on %s", bot.name, bot.version, address)
    try:
        await stop.wait()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
        await server.stop(STOP_GRACE_S)


def parse_address(argv: Sequence[str] | None = None) -> str:
    """The listen address: `--address ADDR` from `argv` (default sys.argv[1:]), else the
    environment variable REFEREE_BOT_ADDRESS. SystemExit with a message if there is none."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--address")
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    address = args.address or os.environ.get(ADDRESS_ENV)
    if not address:
        raise SystemExit(f"no address: pass --address unix:/path/to.sock (or 127.0.0.1:PORT) "
                         f"or set {ADDRESS_ENV}")
    return address


def run(bot: Bot, argv: Sequence[str] | None = None) -> None:
    """Serve `bot` at the address the referee gives (`--address ADDR` or REFEREE_BOT_ADDRESS)
    until SIGTERM or SIGINT, then return. Logs go to stderr."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(name)s %(levelname)s %(message)s")
    address = parse_address(argv)
    try:
        asyncio.run(serve(bot, address))
    except OSError as exc:
        raise SystemExit(str(exc)) from None

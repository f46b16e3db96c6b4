"""Shared plumbing of the test bots: a plain grpcio server speaking referee.protocol.

Each bot directory's `main.py` imports this module (from the parent directory) and calls
`run(decide, ...)`. `decide(request, start, n)` returns the BotMessages to send for the n-th
decision request of the stream (an empty list: send nothing); it may sleep or exit.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent import futures
from pathlib import Path

import grpc

from referee.protocol import PROTOCOL_VERSION, pb, rpc

Decide = Callable[[pb.DecisionRequest, pb.GameStart, int], Iterable[pb.BotMessage]]

decisions_in_process = 0          # decision requests this process received, all games
_lock = threading.Lock()


def answer(request: pb.DecisionRequest, value: int, slot: bool = False) -> pb.BotMessage:
    """A Decision for `request` with the given action."""
    return pb.BotMessage(decision=pb.Decision(request_id=request.request_id,
                                              action=pb.Action(value=value, slot=slot)))


def honest(request: pb.DecisionRequest, start: pb.GameStart, n: int) -> list[pb.BotMessage]:
    """The first legal action."""
    first = request.legal[0]
    return [answer(request, first.value, first.slot)]


def tell_build_report(name: str, report: str) -> None:
    """Play the first legal action and, at the first decision of every game, print on stderr
    the report file `report` (beside the bot folders) that the bot's build step wrote."""
    text = (Path(__file__).resolve().parent / report).read_text()

    def decide(request: pb.DecisionRequest, start: pb.GameStart, n: int) -> list[pb.BotMessage]:
        if n == 1:
            print(text, file=sys.stderr, end="", flush=True)
        return honest(request, start, n)

    run(name, decide)


def hold_processes(spare: int, most: int = 2000) -> str:
    """Fork sleeping children until fork fails (at most `most`), end `spare` of them (room for
    this process's own threads) and keep the rest until this process dies (PR_SET_PDEATHSIG).
    Call it before `run` starts the server's threads. Returns a `HOLD: ...` report line."""
    import ctypes
    import signal
    import time

    libc = ctypes.CDLL(None)
    children: list[int] = []
    failure = "no failure"
    while len(children) < most:
        try:
            pid = os.fork()
        except OSError as exc:
            failure = f"{type(exc).__name__}: {exc.strerror}"
            break
        if pid == 0:
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG: die with the bot
            while True:
                time.sleep(3600)
        children.append(pid)
    for pid in children[:spare]:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return f"HOLD: holding {len(children[spare:])} children after {failure}"


def address_from_argv(argv: list[str]) -> str:
    """The listen address: `--address ADDR`, else $REFEREE_BOT_ADDRESS."""
    if "--address" in argv:
        return argv[argv.index("--address") + 1]
    return os.environ["REFEREE_BOT_ADDRESS"]


class Servicer(rpc.BotServicer):
    def __init__(self, name: str, decide: Decide, on_hello: Callable[[], None] | None,
                 max_games: int, version: str = "test-1") -> None:
        self.name = name
        self.version = version
        self.decide = decide
        self.on_hello = on_hello
        self.max_games = max_games

    def Hello(self, request, context):  # noqa: N802 (gRPC method name)
        if self.on_hello is not None:
            self.on_hello()
        return pb.HelloReply(bot_name=self.name, bot_version=self.version,
                             protocol_version=PROTOCOL_VERSION,
                             max_concurrent_games=self.max_games)

    def Play(self, request_iterator, context):  # noqa: N802
        global decisions_in_process
        start = pb.GameStart()
        n = 0
        for message in request_iterator:
            kind = message.WhichOneof("kind")
            if kind == "start":
                start = message.start
            elif kind == "decision":
                n += 1
                with _lock:
                    decisions_in_process += 1
                yield from self.decide(message.decision, start, n)
            elif kind == "end":
                return


def run(name: str, decide: Decide = honest, *, on_hello: Callable[[], None] | None = None,
        max_games: int = 8, version: str = "test-1", servicer: type[Servicer] | None = None,
        options: list[tuple[str, int]] | None = None) -> None:
    """Serve until SIGTERM (the default action ends the process). `servicer` replaces the
    Servicer class, `options` are the gRPC server's channel arguments."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_games + 4),
                         options=options or [])
    make = servicer or Servicer
    rpc.add_BotServicer_to_server(make(name, decide, on_hello, max_games, version), server)
    server.add_insecure_port(address_from_argv(sys.argv))
    server.start()
    server.wait_for_termination()

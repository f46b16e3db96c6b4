"""The Python SDK (referee/sdk): sample bots served as real processes, driven by a small engine
client over gRPC; hooks, errors and concurrency in process."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from cli_support import free_port

from referee.bots.client import PLAY_METHOD
from referee.engine import Action, Game, preset
from referee.protocol import PROTOCOL_VERSION, pb, rpc
from referee.protocol.convert import (
    action_from_pb,
    decision_request,
    game_end,
    game_start,
    request_message,
)
from referee.sdk import ADDRESS_ENV, Bot, GameInfo, GameResult, parse_address, serve

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots"


def _start(bot: str, address: str, *, via_env: bool = False) -> subprocess.Popen:
    argv = [sys.executable, "main.py"]
    env = dict(os.environ)
    env.pop(ADDRESS_ENV, None)
    if via_env:
        env[ADDRESS_ENV] = address
    else:
        argv += ["--address", address]
    return subprocess.Popen(argv, cwd=SAMPLES / bot, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


async def _hello(address: str, timeout: float = 20.0) -> pb.HelloReply:
    """Hello, retried until the bot answers (the referee's readiness probe)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                return await rpc.BotStub(channel).Hello(
                    pb.HelloRequest(protocol_version=PROTOCOL_VERSION, referee_version="test"),
                    timeout=1)
        except grpc.aio.AioRpcError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def _play(address: str, rules_name: str, players: int, seed: int, *,
                raw: bool = False) -> tuple[Game, list[int]]:
    """One game with every seat played by the bot at `address`, each seat on its own Play
    stream (so the bot serves `players` games' streams at once). Checks every answer."""
    rules = preset(rules_name)
    game = Game(rules, players, seed, record=False)
    names = [f"seat{s}" for s in range(players)]
    request_ids: list[int] = []
    async with grpc.aio.insecure_channel(address) as channel:
        if raw:  # the referee's way: serialized requests
            play = channel.stream_stream(PLAY_METHOD, request_serializer=None,
                                         response_deserializer=pb.BotMessage.FromString)
        else:
            play = rpc.BotStub(channel).Play
        calls = [play() for _ in range(players)]

        async def send(call, message: pb.RefereeMessage) -> None:
            await call.write(message.SerializeToString() if raw else message)

        for seat, call in enumerate(calls):
            await send(call, game_start(f"g{seed}", rules, names, seat, decision_ms=1000,
                                        game_bank_ms=5000))
        request_id = 0
        while not game.is_over:
            seat = game.current_seat
            view = game.view(seat)
            request_id += 3
            if raw:
                await calls[seat].write(
                    request_message(view, request_id, 5000, 100).SerializeToString())
            else:
                await send(calls[seat], pb.RefereeMessage(
                    decision=decision_request(view, request_id, 5000, 100)))
            reply = await asyncio.wait_for(calls[seat].read(), 10)
            assert reply.WhichOneof("kind") == "decision"
            assert reply.decision.request_id == request_id
            action = action_from_pb(reply.decision)
            assert action in view.legal
            request_ids.append(request_id)
            game.apply(action)
        notes = [len(n) for n in game.notes_won]
        for call in calls:
            await send(call, game_end(f"g{seed}", game.ranking(), game.money, notes))
            await call.done_writing()
            # The bot ends its side after GameEnd: nothing more, then a clean OK status.
            assert await asyncio.wait_for(call.read(), 10) is grpc.aio.EOF
            assert await call.code() == grpc.StatusCode.OK
    return game, request_ids


# How long a bot may take to exit after SIGTERM or SIGINT: far more than it needs (it stops at
# once), so that a loaded machine cannot fail the test; a bot that hangs still fails it.
STOP_S = 15.0


def _stop(proc: subprocess.Popen) -> float:
    """SIGTERM, and how long the bot took to exit (generous: a busy machine slows any exit;
    a bot that does not stop fails with TimeoutExpired)."""
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=STOP_S)
    return time.monotonic() - start


@pytest.mark.parametrize("transport", ["unix", "tcp"])
def test_sample_bot_process_plays_a_game_and_stops(tmp_path: Path, transport: str) -> None:
    if transport == "unix":
        address = f"unix:{tmp_path / 'greedy.sock'}"
    else:
        address = f"127.0.0.1:{free_port()}"
    proc = _start("greedy", address, via_env=transport == "tcp")
    try:
        hello = asyncio.run(_hello(address))
        assert (hello.bot_name, hello.bot_version) == ("greedy", "1.0")
        assert hello.protocol_version == PROTOCOL_VERSION
        assert hello.max_concurrent_games == 8
        game, ids = asyncio.run(_play(address, "classic", 3, 11, raw=transport == "unix"))
        assert game.is_over and len(ids) >= 3 * 4
        game, _ = asyncio.run(_play(address, "boulevard", 4, 12, raw=transport == "tcp"))
        assert game.is_over
        assert proc.poll() is None  # still serving after the games
    finally:
        if proc.poll() is None:
            took = _stop(proc)
        out, err = proc.communicate()
    assert took < STOP_S, f"took {took:.2f}s to exit after SIGTERM"
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err, err.decode()


@pytest.mark.parametrize("bot", ["random", "montecarlo"])
def test_other_sample_bots_answer_legal_moves(tmp_path: Path, bot: str) -> None:
    address = f"unix:{tmp_path / f'{bot}.sock'}"
    env_rollouts = os.environ.get("MC_ROLLOUTS")
    os.environ["MC_ROLLOUTS"] = "16"  # keep the test quick; same code path
    try:
        proc = _start(bot, address)
    finally:
        if env_rollouts is None:
            os.environ.pop("MC_ROLLOUTS")
        else:
            os.environ["MC_ROLLOUTS"] = env_rollouts
    try:
        assert asyncio.run(_hello(address)).bot_name == bot
        game, _ = asyncio.run(_play(address, "biggy-slot", 2, 5, raw=True))
        assert game.is_over
    finally:
        took = _stop(proc)
        _, err = proc.communicate()
    assert took < STOP_S
    assert proc.returncode == 0, err.decode()


def test_sigint_also_stops(tmp_path: Path) -> None:
    address = f"unix:{tmp_path / 'b.sock'}"
    proc = _start("random", address)
    try:
        asyncio.run(_hello(address))
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=STOP_S)
        assert time.monotonic() - start < STOP_S
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_stale_socket_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "stale.sock"
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()  # the file stays behind, as after a crash
    proc = _start("random", f"unix:{path}")
    try:
        assert asyncio.run(_hello(f"unix:{path}")).bot_name == "random"
    finally:
        _stop(proc)
        proc.communicate()


def test_no_address_is_a_clear_error() -> None:
    env = {k: v for k, v in os.environ.items() if k != ADDRESS_ENV}
    result = subprocess.run([sys.executable, "main.py"], cwd=SAMPLES / "greedy", env=env,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "--address" in result.stderr and ADDRESS_ENV in result.stderr


def test_parse_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADDRESS_ENV, "unix:/tmp/from-env.sock")
    assert parse_address([]) == "unix:/tmp/from-env.sock"
    assert parse_address(["--address", "127.0.0.1:5000", "--mine", "x"]) == "127.0.0.1:5000"
    assert parse_address(["--address=unix:/a.sock"]) == "unix:/a.sock"
    monkeypatch.delenv(ADDRESS_ENV)
    with pytest.raises(SystemExit):
        parse_address([])


# ------------------------------------------------------------------------------------ in process


def _load_sample(bot: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"sample_{bot}", SAMPLES / bot / "main.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recorder(Bot):
    """Records its hooks; raises in choose on request 6 and answers garbage on request 9."""

    name = "recorder"
    version = "7"
    max_concurrent_games = 3

    def __init__(self) -> None:
        self.starts: list[GameInfo] = []
        self.ends: list[GameResult] = []
        self.seen: list[tuple[str, int, float]] = []

    def on_game_start(self, game: GameInfo) -> None:
        game.memo["decisions"] = 0
        self.starts.append(game)

    def on_game_end(self, result: GameResult) -> None:
        self.ends.append(result)
        raise RuntimeError("a broken hook is logged, not fatal")

    def choose(self, view):
        assert self.game is not None and self.request is not None
        self.game.memo["decisions"] += 1
        self.seen.append((self.game.game_id, self.request.request_id, self.time_left()))
        if self.request.request_id == 6:
            raise ValueError("bug in the bot")
        if self.request.request_id == 9:
            return "nonsense"
        return view.legal[-1]


async def _in_process(bot: Bot, address: str, client) -> object:
    stop = asyncio.Event()
    server = asyncio.create_task(serve(bot, address, stop=stop))
    try:
        await _hello(address, timeout=10)
        return await client()
    finally:
        stop.set()
        await server


def test_hooks_errors_and_request_context(tmp_path: Path) -> None:
    bot = Recorder()
    address = f"unix:{tmp_path / 'rec.sock'}"
    rules = preset("classic")

    async def client():
        answers = {}
        async with grpc.aio.insecure_channel(address) as channel:
            hello = await rpc.BotStub(channel).Hello(pb.HelloRequest(protocol_version=1))
            assert (hello.bot_name, hello.bot_version, hello.max_concurrent_games) == (
                "recorder", "7", 3)
            call = rpc.BotStub(channel).Play()
            await call.write(game_start("G", rules, ["a", "b"], 1, decision_ms=200,
                                        game_bank_ms=800))
            game = Game(rules, 2, 3, record=False)
            while game.current_seat != 1:
                game.apply(game.legal_actions()[0])
            view = game.view(1)
            for rid in (3, 6, 9, 12):
                await call.write(pb.RefereeMessage(decision=decision_request(view, rid, 800)))
                answers[rid] = (await call.read()).decision
            await call.write(game_end("G", [1, 2], [100, 50], [2, 1]))
            await call.done_writing()
            assert await call.read() is grpc.aio.EOF
            return answers, view

    answers, view = asyncio.run(_in_process(bot, address, client))
    assert action_from_pb(answers[3]) == view.legal[-1]
    assert action_from_pb(answers[12]) == view.legal[-1]
    # A failing choose answers without an action: the referee's "malformed", the game goes on.
    for rid in (6, 9):
        assert answers[rid].request_id == rid and not answers[rid].HasField("action")
    [info] = bot.starts
    assert (info.game_id, info.players, info.seat, info.bot_names) == ("G", 2, 1, ("a", "b"))
    assert (info.decision_ms, info.game_bank_ms, info.rules) == (200, 800, rules)
    assert info.memo["decisions"] == 4
    [result] = bot.ends
    assert result.game is info and result.place == 2 and result.money == (100, 50)
    assert [rid for _, rid, _ in bot.seen] == [3, 6, 9, 12]
    assert all(0 < left <= 1.0 for _, _, left in bot.seen)  # 200 ms + 800 ms bank
    assert bot.game is None and bot.request is None  # only set while choose runs


def test_concurrent_games_keep_their_own_context(tmp_path: Path) -> None:
    random_bot = _load_sample("random").RandomBot()
    address = f"unix:{tmp_path / 'rand.sock'}"

    async def client():
        return await asyncio.gather(*(_play(address, "classic-white", 3, seed) for seed in
                                      (1, 2, 1)))

    results = asyncio.run(_in_process(random_bot, address, client))
    # Same game id and request ids: the same moves, whatever else runs at the same time.
    assert results[0][0].money == results[2][0].money
    assert results[0][1] == results[2][1]


def test_random_bot_is_seeded_by_game_and_request() -> None:
    module = _load_sample("random")
    bot = module.RandomBot()
    game = Game(preset("classic"), 2, 9, record=False)
    view = game.view(game.current_seat)
    assert len(view.legal) > 2
    info = GameInfo("G1", view.rules, 2, 0, ("a", "b"), 100, 0, False)

    def choose(game_id: str, request_id: int) -> Action:
        bot.game = GameInfo(game_id, info.rules, 2, 0, info.bot_names, 100, 0, False)
        bot.request = type("R", (), {"request_id": request_id})()
        return bot.choose(view)

    first = [choose("G1", rid) for rid in range(40)]
    assert first == [choose("G1", rid) for rid in range(40)]
    assert len(set(first)) > 1
    assert first != [choose("G2", rid) for rid in range(40)]
    assert module.decision_seed("G1", 3) == module.decision_seed("G1", 3) < 2**64


def test_choose_returning_tuples_is_accepted(tmp_path: Path) -> None:
    class Tuples(Bot):
        def choose(self, view):
            a = random.Random(0).choice(view.legal)
            return (a.value, a.slot)

    address = f"unix:{tmp_path / 't.sock'}"
    asyncio.run(_in_process(Tuples(), address, lambda: _play(address, "biggy-slot", 3, 2)))

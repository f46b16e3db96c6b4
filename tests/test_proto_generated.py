"""The generated gRPC code is current, importable as a package, and works over a real channel."""

from __future__ import annotations

import asyncio
import pickle
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from referee.protocol import PROTOCOL_VERSION, pb, rpc

ROOT = Path(__file__).resolve().parent.parent
GEN_SCRIPT = ROOT / "scripts" / "gen_proto.py"
COMMITTED = ROOT / "referee" / "protocol"


def _tree(base: Path) -> dict[str, bytes]:
    """Every file of the generated ``lasvegas`` package under ``base``, by relative path."""
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted((base / "lasvegas").rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_committed_code_matches_proto(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(GEN_SCRIPT), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = _tree(tmp_path)
    committed = _tree(COMMITTED)
    assert set(fresh) == {
        "lasvegas/__init__.py",
        "lasvegas/v1/__init__.py",
        "lasvegas/v1/bot_pb2.py",
        "lasvegas/v1/bot_pb2.pyi",
        "lasvegas/v1/bot_pb2_grpc.py",
    }
    assert set(committed) == set(fresh)
    stale = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert not stale, f"out of date, run `python scripts/gen_proto.py`: {stale}"


def test_check_mode_passes_on_committed_code() -> None:
    result = subprocess.run(
        [sys.executable, str(GEN_SCRIPT), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_generated_code_is_package_relative() -> None:
    grpc_src = (COMMITTED / "lasvegas" / "v1" / "bot_pb2_grpc.py").read_text("utf-8")
    assert "from lasvegas" not in grpc_src
    assert "from . import bot_pb2 as" in grpc_src
    assert pb.Rules.__module__ == "referee.protocol.lasvegas.v1.bot_pb2"
    # The right __module__ makes messages picklable (e.g. for shipping records to workers).
    msg = pb.Decision(request_id=7, action=pb.Action(value=3, slot=True))
    assert pickle.loads(pickle.dumps(msg)) == msg


# --- round trip over a real grpc.aio channel ------------------------------------------------


class EchoBot(rpc.BotServicer):
    """Answers Hello, and each DecisionRequest with its last legal action."""

    def __init__(self) -> None:
        self.received: list[pb.RefereeMessage] = []
        self.hello: pb.HelloRequest | None = None

    async def Hello(self, request, context):  # noqa: N802 (gRPC method name)
        self.hello = request
        return pb.HelloReply(
            bot_name="echo",
            bot_version="1.2.3",
            protocol_version=PROTOCOL_VERSION,
            max_concurrent_games=4,
        )

    async def Play(self, request_iterator, context):  # noqa: N802 (gRPC method name)
        async for msg in request_iterator:
            self.received.append(msg)
            if msg.WhichOneof("kind") == "decision":
                req = msg.decision
                yield pb.BotMessage(
                    decision=pb.Decision(request_id=req.request_id, action=req.legal[-1])
                )


def _game_start() -> pb.GameStart:
    return pb.GameStart(
        game_id="test-g1",
        rules=pb.Rules(
            preset="boulevard",
            min_players=2,
            max_players=8,
            rounds=4,
            dice=7,
            big_dice=1,
            funding=pb.FUNDING_THRESHOLD,
            threshold=50_000,
            scaled_threshold=True,
            notes_per_casino=2,
            hundred_k=True,
            slot=True,
            neutral=pb.NEUTRAL_WHITE,
            leftovers=pb.LEFTOVERS_BOTTOM,
        ),
        seats=[pb.SeatInfo(seat=0, bot_name="echo"), pb.SeatInfo(seat=1, bot_name="other")],
        your_seat=0,
        time_control=pb.TimeControl(decision_ms=100, game_bank_ms=5_000),
        autoplay_forced=False,
    )


def _decision_request(request_id: int) -> pb.DecisionRequest:
    casinos = [
        pb.Casino(
            target=t,
            notes=[90_000, 10_000] if t == 7 else [60_000],
            dice=[pb.SeatDice(seat=0, ordinary=1, big=0), pb.SeatDice(seat=1, ordinary=0, big=1)],
            neutral_dice=1 if t == 2 else 0,
        )
        for t in range(1, 8)
    ]
    return pb.DecisionRequest(
        request_id=request_id,
        state=pb.State(
            round=1,
            rounds=4,
            start_seat=1,
            current_seat=0,
            casinos=casinos,
            seats=[
                pb.SeatState(
                    seat=0, dice_ordinary=3, dice_big=1, dice_neutral=2, money=70_000, notes=2
                ),
                pb.SeatState(seat=1, dice_ordinary=5, dice_big=0, dice_neutral=1, money=0, notes=0),
            ],
            deck_notes=[10_000, 10_000, 20_000, 100_000],
            slot_values=[4],
            slot_dice=[pb.SlotDice(value=4, seat=1, ordinary=0, big=1, neutral=1)],
        ),
        roll=pb.Roll(ordinary=[1, 3, 3], big=[6], neutral=[3, 5]),
        legal=[
            pb.Action(value=1),
            pb.Action(value=1, slot=True),
            pb.Action(value=3),
            pb.Action(value=3, slot=True),
            pb.Action(value=5),
            pb.Action(value=5, slot=True),
            pb.Action(value=6),
            pb.Action(value=6, slot=True),
        ],
        time_bank_ms=4_321,
        last_latency_us=987 if request_id > 1 else 0,
    )


def _game_end() -> pb.GameEnd:
    return pb.GameEnd(
        game_id="test-g1",
        standings=[
            pb.Standing(seat=0, place=1, money=310_000, notes=6),
            pb.Standing(seat=1, place=2, money=120_000, notes=3, forfeited=True),
        ],
        forfeited=False,
        reason="",
        strikes=1,
    )


async def _round_trip(bind: str, target: str) -> tuple[EchoBot, pb.HelloReply, list]:
    bot = EchoBot()
    server = grpc.aio.server()
    rpc.add_BotServicer_to_server(bot, server)
    port = server.add_insecure_port(bind)
    if bind.endswith(":0"):
        target = f"127.0.0.1:{port}"
    await server.start()
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = rpc.BotStub(channel)
            hello = await stub.Hello(
                pb.HelloRequest(protocol_version=PROTOCOL_VERSION, referee_version="0.1.0"),
                timeout=5,
            )
            call = stub.Play(timeout=10)
            await call.write(pb.RefereeMessage(start=_game_start()))
            answers = []
            for request_id in (1, 2, 5):
                await call.write(pb.RefereeMessage(decision=_decision_request(request_id)))
                answers.append(await call.read())
            await call.write(pb.RefereeMessage(end=_game_end()))
            await call.done_writing()
            assert await call.read() is grpc.aio.EOF
            assert await call.code() == grpc.StatusCode.OK
    finally:
        await server.stop(grace=None)
    return bot, hello, answers


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_round_trip(transport: str, tmp_path: Path) -> None:
    if transport == "tcp":
        bind = target = "127.0.0.1:0"
    else:
        bind = target = f"unix:{tmp_path / 'bot.sock'}"
    bot, hello, answers = asyncio.run(_round_trip(bind, target))

    assert bot.hello == pb.HelloRequest(protocol_version=1, referee_version="0.1.0")
    assert hello.bot_name == "echo"
    assert hello.bot_version == "1.2.3"
    assert hello.protocol_version == PROTOCOL_VERSION
    assert hello.max_concurrent_games == 4

    for request_id, answer in zip((1, 2, 5), answers, strict=True):
        assert answer.WhichOneof("kind") == "decision"
        assert answer.decision.request_id == request_id
        assert answer.decision.action == pb.Action(value=6, slot=True)

    kinds = [m.WhichOneof("kind") for m in bot.received]
    assert kinds == ["start", "decision", "decision", "decision", "end"]
    assert bot.received[0].start == _game_start()
    assert bot.received[0].start.rules.neutral == pb.NEUTRAL_WHITE
    assert bot.received[0].start.time_control.game_bank_ms == 5_000
    assert bot.received[1].decision == _decision_request(1)
    state = bot.received[3].decision.state
    assert [c.target for c in state.casinos] == list(range(1, 8))
    assert list(state.casinos[6].notes) == [90_000, 10_000]
    assert state.casinos[1].neutral_dice == 1
    assert list(state.deck_notes) == [10_000, 10_000, 20_000, 100_000]
    assert state.slot_dice[0] == pb.SlotDice(value=4, seat=1, ordinary=0, big=1, neutral=1)
    assert list(bot.received[3].decision.roll.neutral) == [3, 5]
    assert bot.received[3].decision.last_latency_us == 987
    assert bot.received[4].end == _game_end()
    assert [s.place for s in bot.received[4].end.standings] == [1, 2]

"""The bots layer against misbehaving bots: real subprocesses, real gRPC, real files.

Every test bot lives in tests/bots/ (a directory with main.py and a spec NAME.toml). Each plays
against the `honest` bot; the failure policy (docs/protocol.md) must turn its misbehaviour into
strikes of the right type, finish the game, leave the honest seat alone, and leave no process
behind (every process the referee starts carries REFEREE_RUN_ID in its environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import start_referee
from wait_support import wait_for

from referee.bots.client import GameStream
from referee.bots.errors import STRIKE_TYPES, BotStartError
from referee.bots.process import GAME_LOG_CAP, RUN_ID
from referee.bots.runtime import BotRunner, Roster
from referee.bots.spec import BotSpec, BotSpecError, load_spec
from referee.checking.conformance import processes_with_run_id
from referee.engine import Game, preset, replay
from referee.game.match import MatchResult, final_places, play_match

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")

BOTS = Path(__file__).parent / "bots"
CLASSIC = preset("classic")


def spec(name: str) -> BotSpec:
    return load_spec(BOTS / f"{name}.toml")


def leftovers(run_id: str = RUN_ID, wait: float = 10.0) -> list[int]:
    """Processes still carrying the run id after up to `wait` seconds (they go at once; a busy
    machine may take a while to reap them: the test is that none stays, not how fast)."""
    with contextlib.suppress(AssertionError):   # the caller says what is left
        wait_for(f"the processes of run {run_id} to end",
                 lambda: not processes_with_run_id(run_id), timeout=wait)
    return processes_with_run_id(run_id)


def bot_dirs(pids: list[int]) -> set[Path]:
    """The instance directories (where each bot's socket lives) named in these processes'
    environments."""
    found = set()
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
            for entry in handle.read().split(b"\0"):
                if entry.startswith(b"REFEREE_BOT_ADDRESS=unix:"):
                    found.add(Path(entry.split(b":", 1)[1].decode()).parent)
    return found


def sessions(pids: list[int]) -> dict[int, int]:
    """The session id of each pid that still exists."""
    found = {}
    for pid in pids:
        with contextlib.suppress(OSError), open(f"/proc/{pid}/stat", "rb") as handle:
            found[pid] = int(handle.read().rsplit(b")", 1)[-1].split()[3])
    return found


@dataclasses.dataclass
class Outcome:
    results: list[MatchResult]
    pids: list[list[int | None]]        # per game, the guard pid of each seat's instance
    usable: list[list[bool]]            # per game, whether each seat's instance takes new games
    restarts: dict[str, int]
    written: dict[str, int]             # bytes each bot's last instance wrote
    running: dict[int, int]             # run-id processes seen in the first game: pid -> session
    left: list[int]                     # run-id processes left after the roster stopped


async def _play(names: list[str], games: int, rules: Any, seed: int,
                sandbox: bool | None = None) -> Outcome:
    specs = [spec(name) for name in names]
    pids: list[list[int | None]] = []
    running: dict[int, int] = {}
    usable: list[list[bool]] = []
    results = []
    async with Roster(specs, sandbox=sandbox) as roster:
        await roster.start()
        for game in range(games):
            leases = [await roster.runners[name].lease() for name in names]
            pids.append([lease.instance.process.pid if lease.instance.process else None
                         for lease in leases])
            if game == 0:
                running = sessions(processes_with_run_id(RUN_ID))
            try:
                results.append(await play_match(rules, leases, seed + game, f"test-{game}"))
            finally:
                for lease in leases:
                    await lease.runner.release(lease)
            usable.append([lease.instance.free > 0 for lease in leases])
        restarts = {name: runner.restarts for name, runner in roster.runners.items()}
        written = {name: sum(i.process.log.written for i in runner.instances if i.process)
                   for name, runner in roster.runners.items()}
    return Outcome(results, pids, usable, restarts, written, running, leftovers())


def play(names: list[str], games: int = 1, rules: Any = CLASSIC, seed: int = 7,
         sandbox: bool | None = None) -> Outcome:
    return asyncio.run(_play(names, games, rules, seed, sandbox))


@functools.cache
def duel(name: str) -> Outcome:
    """`name` in seat 0 against `honest`, one classic game (cached: several tests look at it)."""
    return play([name, "honest"])


def strikes(**counts: int) -> dict[str, int]:
    return {kind: counts.get(kind, 0) for kind in STRIKE_TYPES}


EXPECTED = {   # bot: (strikes, forfeited)
    "hang": (strikes(timeout=3), True),
    "slow": (strikes(timeout=2), False),   # the late answers are dropped, not struck again
    "illegal": (strikes(illegal=3), True),
    "garbage": (strikes(malformed=2, protocol=1), True),
    "crash_mid": (strikes(crash=3), True),
    "raiser": (strikes(protocol=3), True),   # fails its stream, but the process serves on
    "forker": (strikes(), False),
    "stderr_flood": (strikes(), False),
}


def assert_complete(result: MatchResult) -> None:
    """The game ran to its end, every die placed, and the record replays exactly."""
    record = result.record
    assert record.final() is not None
    assert replay(record) is None
    placed: Counter[tuple[int, int]] = Counter()
    round_index = -1
    for event in record.events:
        if event[0] == "round":
            round_index = event[1]
        elif event[0] == "place":
            _, seat, _value, _slot, own, big, _neutral = event
            placed[round_index, seat] += own + big
    rules = record.rules
    assert placed == {(r, s): rules.dice + rules.big_dice
                      for r in range(rules.rounds) for s in range(record.players)}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_misbehaviour_gives_its_strikes(name: str) -> None:
    expected, forfeited = EXPECTED[name]
    outcome = duel(name)
    result = outcome.results[0]
    bot, honest = result.seats
    assert bot.strikes == expected, [d for d in result.record.meta["decisions"] if "strike" in d]
    assert bot.forfeited is forfeited
    # The record tells the same story, decision by decision.
    meta = result.record.meta
    assert meta["strikes"][0] == expected
    struck = Counter(d["strike"] for d in meta["decisions"] if d["seat"] == 0 and "strike" in d)
    assert struck == {k: v for k, v in expected.items() if v}
    assert all(d["detail"] for d in meta["decisions"] if "strike" in d)
    if forfeited:
        assert meta["forfeits"] == [{"seat": 0, "reason": bot.reason}]
        assert bot.reason.startswith("3 strikes")
        assert result.places == [2, 1]
        # Once forfeited the bot is not asked again: the referee plays its dice.
        asked = [d for d in meta["decisions"] if d["seat"] == 0 and "auto" not in d]
        assert len(asked) == 3 + (3 if name == "crash_mid" else 0)
    else:
        assert meta["forfeits"] == []
    # The game went on to the end and the other seat was unaffected.
    assert_complete(result)
    assert honest.strike_count == 0 and not honest.forfeited
    assert max(honest.latencies_us) < 500_000
    assert outcome.left == []


@contextlib.asynccontextmanager
async def honest_stream() -> AsyncIterator[GameStream]:
    """A Play stream to a started `honest` bot; afterwards the stream is finished (a no-op for
    one the test finished itself) and the bot released."""
    async with Roster([spec("honest")]) as roster:
        await roster.start()
        lease = await roster.runners["honest"].lease()
        stream = lease.open_game()
        try:
            yield stream
        finally:
            await stream.finish(None)
            await lease.runner.release(lease)


def test_overlapping_sends_on_one_stream_are_written_one_after_another() -> None:
    """Regression: a bot that moves twice in a row can answer the first request before its write
    has completed on the referee's side, and the game then sends the next request at once. gRPC
    allows one write at a time per call: the stream must queue the second, not break."""
    from referee.protocol import convert

    async def overlap() -> list[str | None]:
        async with honest_stream() as stream:
            start = convert.game_start("overlap", CLASSIC, ["honest", "other"], 0,
                                       decision_ms=1000, game_bank_ms=0)
            game = Game(CLASSIC, 2, 3)
            request = convert.request_message(game.view(0), 1)
            return list(await asyncio.gather(stream.send(start),
                                             *(stream.send(request) for _ in range(5))))

    assert asyncio.run(overlap()) == [None] * 6


def test_a_finished_games_stream_is_ended_by_the_bot_not_reset() -> None:
    """After GameEnd the bot ends its stream (docs/protocol.md): the referee waits for that
    instead of cancelling, so the call ends with the bot's own status, not CANCELLED."""
    import grpc

    from referee.protocol import convert

    async def finish() -> grpc.StatusCode:
        async with honest_stream() as stream:
            start = convert.game_start("ending", CLASSIC, ["honest", "other"], 0,
                                       decision_ms=1000, game_bank_ms=0)
            assert await stream.send(start) is None
            await stream.finish(convert.game_end("ending", [1, 2], [0, 0], [0, 0]).end)
            return await stream.call.code()

    assert asyncio.run(finish()) == grpc.StatusCode.OK


def test_a_broken_stream_is_a_crash_unless_the_bot_still_answers_hello() -> None:
    """Regression: a dying bot breaks its streams (`internal`, or "RPC already finished" on a
    write) before the referee learns that its process ended, later still on a loaded machine.
    A broken stream is a protocol error only if the bot still answers Hello."""
    from referee.bots.client import BotClient

    async def classify(alive: bool) -> tuple[str, str]:
        client = BotClient("dying", "unix:/nonexistent/bot.sock", alive=lambda: alive)
        stream = client.open_game()
        try:
            return await stream.failure("internal: Internal error from Core")
        finally:
            await stream.finish(None)
            await client.close()

    strike, detail = asyncio.run(classify(False))
    assert strike == "crash" and "process ended" in detail
    # The process is never reported ended (as when its guard is slow to exit), but nothing
    # answers at its address: still a crash.
    strike, detail = asyncio.run(classify(True))
    assert strike == "crash" and "connection to the bot is gone" in detail, detail

    async def live_bot() -> tuple[str, str]:
        async with honest_stream() as stream:
            return await stream.failure("internal: Internal error from Core")

    strike, detail = asyncio.run(live_bot())   # the bot serves on: it broke the stream
    assert (strike, detail) == ("protocol", "internal: Internal error from Core")


def test_late_answers_are_dropped_without_a_second_strike() -> None:
    result = duel("slow").results[0]
    mine = [d for d in result.record.meta["decisions"] if d["seat"] == 0]
    assert [d.get("strike") for d in mine[:3]] == ["timeout", "timeout", None]
    assert all("strike" not in d for d in mine[2:])


def test_forfeited_seat_ranks_last_in_a_bigger_game() -> None:
    outcome = play(["honest", "hang", "illegal"], rules=CLASSIC)
    result = outcome.results[0]
    assert [s.forfeited for s in result.seats] == [False, True, True]
    assert result.places == [1, 2, 2]
    assert result.seats[0].strike_count == 0
    assert_complete(result)
    assert outcome.left == []


def test_final_places_put_forfeits_last_whatever_their_money() -> None:
    game = Game(CLASSIC, 3, 1)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    richest = max(range(3), key=lambda s: (game.money[s], len(game.notes_won[s])))
    forfeited = [s == richest for s in range(3)]
    places = final_places(game, forfeited)
    assert places[richest] == 3
    assert sorted(p for s, p in enumerate(places) if s != richest)[0] == 1


def test_crashed_instance_is_restarted_for_the_next_game() -> None:
    outcome = play(["crash_mid", "honest"], games=2)
    for result in outcome.results:
        mine = [d for d in result.record.meta["decisions"] if d["seat"] == 0]
        # A fresh process each game: three good answers, then the crash strikes.
        assert [d.get("strike") for d in mine[:6]] == [None] * 3 + ["crash"] * 3
        assert result.seats[0].forfeited
        assert_complete(result)
        assert result.seats[1].strike_count == 0
    # Right after the crash the instance takes no new game, even if its process has not been
    # reaped yet: the next game must not start on a dead bot.
    assert outcome.usable[0] == [False, True]
    first, second = outcome.pids
    assert first[0] != second[0]           # crash_mid was restarted
    assert first[1] == second[1]           # honest kept its process
    assert outcome.restarts == {"crash_mid": 1, "honest": 0}
    assert "exiting on purpose" in outcome.results[0].seats[0].output
    assert outcome.left == []


def test_forker_children_are_killed_when_the_roster_stops() -> None:
    outcome = play(["forker", "honest"], sandbox=False)  # the guard alone, no sandbox
    # While playing: two guards, two bots, and forker's child and grandchild, which started a
    # session of their own (so a process-group kill alone would miss them).
    assert len(outcome.running) >= 6
    guards = {pid for pid in outcome.pids[0] if pid}
    escaped = [pid for pid, session in outcome.running.items() if session not in guards]
    assert len(escaped) == 2, outcome.running
    assert outcome.left == []


@pytest.mark.sandbox
def test_forker_children_are_killed_in_the_sandbox_too() -> None:
    outcome = play(["forker", "honest"], sandbox=True)
    assert len(outcome.running) >= 6
    assert outcome.results[0].seats[0].strike_count == 0
    assert outcome.left == []


def test_output_per_game_is_capped() -> None:
    outcome = duel("stderr_flood")
    assert outcome.written["stderr_flood"] > 1_000_000
    flood, honest = outcome.results[0].record.meta["output"]
    assert len(flood.encode()) <= GAME_LOG_CAP + 64
    assert flood.startswith("[") and "bytes dropped" in flood.splitlines()[0]
    assert flood.rstrip().endswith("x")
    assert honest == ""


START_FAILURES = {
    "exit_at_start": ["exited during start-up", "exit status 1",
                      "cannot find my model file weights.bin"],
    "exit_in_handshake": ["exited during start-up", "exit status 4", "exit_in_handshake: bye"],
    "missing_command": ["command not found: no-such-binary-xyz"],
}


def test_a_build_runs_again_when_its_output_is_gone(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The build stamp covers the bot's directory as the build left it: deleting the build's
    output, or a fresh clone at the same path, builds again; an unchanged directory does not."""
    from referee.bots.build import ensure_built

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "main.py").write_text("print('hi')\n")
    (tmp_path / "bot.toml").write_text(
        'name = "built"\ncommand = ["{python}", "main.py"]\nworkdir = "bot"\n'
        'build = ["{python}", "-c", "import os; os.makedirs(\'node_modules/dep\')"]\n')
    built = load_spec(tmp_path / "bot.toml")
    assert ensure_built(built) is True
    assert ensure_built(built) is False            # stamped: the output is there
    shutil.rmtree(bot / "node_modules")
    assert ensure_built(built) is True             # the output is gone: build again
    assert (bot / "node_modules" / "dep").is_dir()
    shutil.rmtree(bot)                             # a fresh clone at the same path
    bot.mkdir()
    (bot / "main.py").write_text("print('hi')\n")
    assert ensure_built(built) is True
    assert ensure_built(built) is False


@pytest.mark.parametrize("name", list(START_FAILURES))
def test_start_failures_raise_one_line_errors(name: str) -> None:
    async def start() -> None:
        async with Roster([spec("honest"), spec(name)]) as roster:
            await roster.start()

    with pytest.raises(BotStartError) as info:
        asyncio.run(start())
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"bot {name!r}: ")
    for part in START_FAILURES[name]:
        assert part in message
    assert leftovers() == []   # the honest bot started alongside was stopped too


def test_a_crashed_start_can_be_retried_by_a_runner() -> None:
    async def twice() -> list[str]:
        runner = BotRunner(spec("exit_at_start"))
        errors = []
        for _ in range(2):
            with pytest.raises(BotStartError) as info:
                await runner.start()
            errors.append(info.value.reason)
        await runner.stop()
        return errors

    first, second = asyncio.run(twice())
    assert first == second
    assert leftovers() == []


SPEC_ERRORS = {
    "bad_syntax": "invalid TOML",
    "bad_unknown_key": "unknown key 'timeout_ms'",
    "bad_command": "key 'command'",
    "bad_no_name": "key 'name'",
}


@pytest.mark.parametrize("name", list(SPEC_ERRORS))
def test_malformed_specs_name_the_file_and_the_key(name: str) -> None:
    with pytest.raises(BotSpecError) as info:
        spec(name)
    message = str(info.value)
    assert message.startswith(str(BOTS / f"{name}.toml") + ": ")
    assert SPEC_ERRORS[name] in message
    assert "\n" not in message
    if name == "bad_syntax":
        assert "line 3" in message


def test_cli_reports_each_failure_on_one_line() -> None:
    cases = {**{name: START_FAILURES[name][0] for name in START_FAILURES},
             **{name: SPEC_ERRORS[name] for name in SPEC_ERRORS},
             "does_not_exist": "no such file"}
    runs = {name: start_referee("match", f"{name}.toml", "honest.toml", cwd=BOTS,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for name in cases}
    for name, run in runs.items():
        out, err = run.communicate(timeout=60)
        assert run.returncode == 1, (name, out, err)
        assert "Traceback" not in out + err
        lines = (out + err).strip().splitlines()
        assert len(lines) == 1, (name, lines)
        assert lines[0].startswith("Error: ") and cases[name] in lines[0], (name, lines)
        assert name in lines[0]


def test_cli_match_shows_strikes_and_forfeits() -> None:
    run = start_referee("match", "hang.toml", "honest.toml", cwd=BOTS, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert "hang: 3 decisions" in out and "strikes: timeout 3; forfeited" in out
    assert "honest:" in out and "strikes: none" in out


# A process under the guard that ignores SIGTERM and would run for an hour; the guard's grace
# is ten minutes, and the test waits for it far less.
_GUARDED_BY_A_DOOMED_PARENT = """
import os, subprocess, sys
from referee.bots.guard import guarded

child = [sys.executable, "-c", "import os, signal, time; "
         "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
         "print('child', os.getpid(), flush=True); time.sleep(3600)"]
argv, env = guarded(child, os.environ, grace=600)
guard = subprocess.Popen(argv, env=env, start_new_session=True)
print("guard", guard.pid, flush=True)
guard.wait()
"""


def test_a_guard_whose_referee_died_kills_at_once_without_its_grace() -> None:
    """When the process that started the guard dies, the guard kills what it runs at once: its
    grace is for a referee that waits, and nobody watches (a build's disk use, say) any more.
    The guarded process ignores SIGTERM; it is gone long before the grace of 600 s."""
    from proc_support import running

    parent = subprocess.Popen([sys.executable, "-c", _GUARDED_BY_A_DOOMED_PARENT],
                              stdout=subprocess.PIPE, text=True)
    guard = child = 0
    try:
        assert parent.stdout is not None
        pids = dict(parent.stdout.readline().split() for _ in range(2))
        guard, child = int(pids["guard"]), int(pids["child"])
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=60)
        wait_for("the guarded process and its guard gone", lambda: not running(guard, child),
                 timeout=120)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in running(guard, child):   # never leak processes from a failed test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_no_bot_survives_a_sigkilled_referee(tmp_path: Path) -> None:
    from league_support import install_test_bot

    # In a folder of its own that its sandbox uid may read (pytest's tmp_path is root's alone).
    hang_long = install_test_bot(tmp_path, "hang_long", "hang")
    with hang_long.open("a") as spec_file:
        spec_file.write("[limits]\ndecision_ms = 600000\n")
    run_id = "t" + uuid.uuid4().hex[:12]
    ref = start_referee("match", hang_long, "forker.toml", run_id=run_id,
                        cwd=BOTS, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def bots() -> list[int]:
            assert ref.poll() is None, ref.communicate()
            return [pid for pid in processes_with_run_id(run_id) if pid != ref.pid]

        # Two guards, two bots, forker's child and grandchild.
        wait_for("both bots and forker's children", lambda: len(bots()) >= 6, timeout=120)

        def listening() -> set[Path]:
            """The instance directories, once both bots listen on their sockets (the game is
            on: hang_long sits on its first decision)."""
            dirs = bot_dirs(bots())
            return dirs if sum((d / "bot.sock").exists() for d in dirs) >= 2 else set()

        dirs = wait_for("both bots listening on their sockets", listening, timeout=120)
        assert dirs and all(d.is_dir() for d in dirs), dirs
        if os.geteuid() == 0:   # as root each is a size-limited tmpfs (referee.bots.scratch)
            assert all(os.path.ismount(d) for d in dirs), dirs
        ref.send_signal(signal.SIGKILL)
        ref.wait(timeout=10)
        assert leftovers(run_id, wait=15.0) == []
        # The guards removed each instance's directory (socket, sandbox /tmp) on their way out,
        # unmounted first.
        wait_for("the instance directories removed",
                 lambda: not [d for d in dirs if d.exists()], timeout=60)
        mounts = Path("/proc/self/mountinfo").read_text()
        assert not [d for d in dirs if f" {d} " in mounts], mounts
    finally:
        if ref.poll() is None:
            ref.kill()
            ref.wait()
        for pid in processes_with_run_id(run_id):   # never leak processes from a failed test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("kind", ["command", "container"])
def test_a_bots_socket_fits_the_kernels_limit_however_deep_tmpdir_is(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A club's check runs with TMPDIR deep in its data folder: a bot's socket there could pass
    the 107 bytes of a Unix socket's path (gRPC then cannot listen); the instance folder goes
    to the system's /tmp instead, a container bot's as a command bot's. A shallow TMPDIR is
    kept."""
    import tempfile

    from referee.bots.container import ContainerProcess
    from referee.bots.process import instance_dir
    from referee.bots.spec import BotSpec
    from referee.util.sockets import SOCKET_PATH_MAX

    def made() -> Path:
        if kind == "command":
            return instance_dir()
        return ContainerProcess(BotSpec(name="c", image="localhost/none"))._prepare_dir()

    shallow = Path(tempfile.mkdtemp(prefix="s-", dir="/tmp"))
    for deep, kept in ((shallow, True),
                       (tmp_path.joinpath(*["a-rather-long-folder"] * 12), False)):
        deep.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv("TMPDIR", str(deep))
        monkeypatch.setattr(tempfile, "tempdir", None)   # read TMPDIR again
        folder = made()
        try:
            assert len(os.fsencode(folder / "bot.sock")) <= SOCKET_PATH_MAX
            assert folder.parent == (deep if kept else Path("/tmp")), folder
        finally:
            folder.rmdir()
    shallow.rmdir()

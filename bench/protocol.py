"""Benchmark: the referee's per-decision round trip vs a bare gRPC ping-pong, same processes.

The referee side plays 2-player `classic` games between two trivial Python SDK bots (a
`referee.sdk.Bot` answering `view.legal[0]`), started as real subprocesses by the referee's own
runtime (`Roster` / `BotRunner`: guard, bubblewrap sandbox where available, Unix socket, Hello
handshake) and played by `referee.game.match.play_match`, one game at a time.

The bare side replays exactly the same message traffic with nothing but grpc.aio: two echo
server subprocesses, launched the same way (`referee.bots.process.BotProcess`: same guard, same
sandbox, same interpreter, a Unix socket), each serving one bidirectional-stream method through
a generic handler with no (de)serializers, so neither side parses anything. For each referee
game the bare client opens one stream per server, writes the very bytes the referee writes for
each DecisionRequest of that game (captured by replaying the game with the engine:
`convert.request_message`, same seed, same first-legal choices, same seat order) and reads back
a real serialized BotMessage (`convert.decision_message`) of the size the bot answers with.

Both sides are measured in ONE run, interleaved rep by rep (ABBA), and the report gives
per-decision medians in microseconds:

* wall / decision: a game's wall time (opening the streams to closing them) / its decisions;
  for the referee this includes everything it does per decision (engine, request building,
  the bot's decoding, strikes bookkeeping) and per game (GameStart, GameEnd, the record).
* round trip: one decision's send-to-receive latency, as the referee records it
  (`MatchResult.seats[i].latencies_us`) and as the bare client times write() to read().
* CPU client / CPU bots: CPU time per decision (user + system, all threads) of this process
  (the referee, or the bare client) and of the two server process trees (SDK bots, or echo
  servers, with their guard and sandbox), from /proc. On a 2-core machine shared with other
  work, CPU per decision is steadier than wall time and says where the time goes.

The bare side sends no GameStart or GameEnd (one-way messages of the real protocol, 2 per seat
and game); the referee's wall time includes them, they are part of its per-decision cost.

Target: wall / decision ratio referee / bare <= 1.25.

Usage:
    python bench/protocol.py                # 40 games x 9 reps per side
    python bench/protocol.py --quick        # 10 games x 3 reps
    python bench/protocol.py --no-sandbox   # bots and echo servers without bubblewrap
    python bench/protocol.py --against 9af52b9   # and the referee of commit 9af52b9, same run

Exit status: 0 when the benchmark ran (whether or not the target is met), 1 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A baseline checkout runs this file with its own interpreter and BENCH_REPO set to its root
# (see RefereeWorker): then its `referee` package, SDK bots included, is the one measured.
REPO_ROOT = Path(os.environ.get("BENCH_REPO") or Path(__file__).resolve().parent.parent)
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import grpc  # noqa: E402
from against import (  # noqa: E402
    AgainstError,
    Tree,
    baseline_tree,
    imports,
    tree_env,
    working_tree,
)

from referee.bots.client import CHANNEL_OPTIONS  # noqa: E402
from referee.bots.errors import BotStartError  # noqa: E402
from referee.bots.process import BotProcess, use_sandbox  # noqa: E402
from referee.bots.runtime import Roster  # noqa: E402
from referee.bots.spec import Limits, load_spec  # noqa: E402
from referee.engine import Game, preset  # noqa: E402
from referee.protocol import convert, pb  # noqa: E402

# referee.match before the game package (a baseline of --against may be that old)
MatchResult = imports("MatchResult", "referee.game.match", "referee.match")
play_match = imports("play_match", "referee.game.match", "referee.match")

#: Bot.Play's method path, from bot.proto's descriptor (the same in every checkout).
PLAY_METHOD = f"/{pb.DESCRIPTOR.services_by_name['Bot'].full_name}/Play"

TARGET_RATIO = 1.25
DEFAULT_GAMES = 40
DEFAULT_REPS = 9
QUICK_GAMES = 10
QUICK_REPS = 3
PLAYERS = 2
RULES = "classic"
SIDES = ("referee", "bare")
READY_TIMEOUT = 30.0
TYPICAL_LATENCY_US = 400   # last_latency_us put in captured requests (2 varint bytes, as real)

# A trivial SDK bot: what a Python bot author writes. The repository root is put on sys.path
# explicitly so that it also runs where `referee` is not installed (in the sandbox the referee
# binds it read-only and sets PYTHONPATH anyway).
BOT_SCRIPT = '''\
import sys
sys.path.insert(0, {repo!r})
from referee.sdk import Bot, run


class First(Bot):
    name = "first"
    version = "bench"

    def choose(self, view):
        return view.legal[0]


if __name__ == "__main__":
    run(First())
'''

# The bare echo server: grpc.aio, one stream-stream method, generic handler without
# (de)serializers (the handler sees bytes), the same read/write loop the SDK's Play runs, and the
# same server options; it answers every request with the fixed reply bytes from $BENCH_REPLY.
ECHO_SCRIPT = '''\
import asyncio
import os
import signal

import grpc


async def main():
    address = os.environ["REFEREE_BOT_ADDRESS"]
    reply = bytes.fromhex(os.environ["BENCH_REPLY"])
    EOF = grpc.aio.EOF

    async def play(requests, context):
        read, write = context.read, context.write
        while True:
            data = await read()
            if data is EOF:
                return
            await write(reply)

    # The same method path as a bot's Play, so HTTP/2 headers are the same size.
    handler = grpc.method_handlers_generic_handler(
        "lasvegas.v1.Bot", {"Play": grpc.stream_stream_rpc_method_handler(play)})
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((handler,))
    if not server.add_insecure_port(address):
        raise SystemExit("cannot listen on " + address)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0.1)


asyncio.run(main())
'''


class BenchError(Exception):
    """Something prevented the benchmark from running (exit status 1)."""


def log(message: str) -> None:
    """Progress output, on stderr so that stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------- bots on disk


def make_workdir(prefix: str, parent: Path | None = None) -> Path:
    """A temp directory (in `parent`, default the system's) that sandboxed bots can read (they
    run as uid 65534 when the referee runs as root)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(path, 0o755)
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    os.chmod(path, 0o644)
    return path


def write_sdk_bots(root: Path, count: int, prefix: str = "first") -> list[Path]:
    """`count` bot specs (names prefix-0, prefix-1, ...) running the trivial SDK bot, each in a
    directory of its own as in a real league (the referee hashes a bot's directory for its
    version)."""
    specs = []
    for i in range(count):
        name = f"{prefix}-{i}"
        workdir = root / name
        workdir.mkdir(mode=0o755)
        os.chmod(workdir, 0o755)
        _write(workdir / "bot.py", BOT_SCRIPT.format(repo=str(REPO_ROOT)))
        specs.append(_write(root / f"{name}.toml",
                            f'name = "{name}"\n'
                            f'command = ["{{python}}", "bot.py"]\n'
                            f'workdir = "{name}"\n'))
    return specs


def write_echo_spec(workdir: Path, reply: bytes) -> Path:
    """The spec of the bare echo server (the referee's launcher runs it like a bot)."""
    _write(workdir / "echo_server.py", ECHO_SCRIPT)
    return _write(workdir / "echo.toml",
                  'name = "echo"\n'
                  'command = ["{python}", "echo_server.py"]\n'
                  'workdir = "."\n'
                  f'env = {{ BENCH_REPLY = "{reply.hex()}" }}\n')


def sandbox_note(spec_path: Path, sandbox: bool | None) -> str:
    """How the bot processes of `spec_path` run, for the report."""
    if use_sandbox(load_spec(spec_path), sandbox):
        return "bubblewrap sandbox (the referee's default here; --no-sandbox to turn it off)"
    return "no sandbox (" + ("--no-sandbox" if sandbox is False else "bubblewrap unavailable") + ")"


# ------------------------------------------------------------------------------- traffic


@dataclass
class GameTraffic:
    """The decision requests of one game as the referee writes them: (seat, bytes) in order."""

    seed: int
    requests: list[tuple[int, bytes]]
    replies: list[bytes]


def capture_game(players: int, seed: int, rules_name: str = RULES,
                 bank_ms: int = Limits().game_bank_ms) -> GameTraffic:
    """Replay a game of first-legal bots with the engine and keep every request's wire bytes
    (what `play_match` sends: request ids from 1, the bank, the last latency) and the bytes of
    the bot's answer to it."""
    game = Game(preset(rules_name), players, seed)
    requests: list[tuple[int, bytes]] = []
    replies: list[bytes] = []
    last = [0] * players
    request_id = 0
    while not game.is_over:
        seat = game.current_seat
        legal = game.legal_actions()
        request_id += 1
        view = game.view(seat)
        requests.append((seat, convert.request_message(view, request_id, bank_ms, last[seat])
                               .SerializeToString()))
        replies.append(convert.decision_message(request_id, legal[0]).SerializeToString())
        last[seat] = TYPICAL_LATENCY_US
        game.apply(legal[0])
    return GameTraffic(seed, requests, replies)


def typical_reply(traffic: Sequence[GameTraffic]) -> bytes:
    """The most common size of the bots' answers, as one real answer of that size."""
    sizes: dict[int, bytes] = {}
    counts: dict[int, int] = {}
    for game in traffic:
        for reply in game.replies:
            sizes.setdefault(len(reply), reply)
            counts[len(reply)] = counts.get(len(reply), 0) + 1
    return sizes[max(counts, key=counts.__getitem__)]


# ------------------------------------------------------------------------------- CPU time

def tree_pids(roots: Iterable[int | None]) -> list[int]:
    """The live processes `roots` and all their descendants, from /proc."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                ppid = int(handle.read().decode(errors="replace").rsplit(")", 1)[-1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children[ppid].append(int(entry))
    found, stack = [], [pid for pid in roots if pid is not None]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children[pid])
    return found


def threads_cpu_seconds(pids: Iterable[int]) -> float:
    """CPU time used so far by every live thread of `pids`, in nanosecond resolution from
    /proc/PID/task/TID/schedstat (the tick-based counters of /proc/PID/stat are too coarse to
    time one game). 0 without /proc."""
    total = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                    total += int(handle.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total / 1e9


def tree_cpu_seconds(roots: Iterable[int | None]) -> float:
    """CPU time used so far by the live threads of `roots` and of all their descendants."""
    return threads_cpu_seconds(tree_pids(roots))


class CpuMeter:
    """CPU seconds of this process (time.process_time) and of the threads of `pids`."""

    def __init__(self, pids: Iterable[int]) -> None:
        self.pids = list(pids)
        self.client = self.servers = 0.0

    def __enter__(self) -> CpuMeter:
        self._servers = threads_cpu_seconds(self.pids)
        self._client = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.client = time.process_time() - self._client
        self.servers = threads_cpu_seconds(self.pids) - self._servers


# ------------------------------------------------------------------------------- echo servers


class EchoServers:
    """N bare echo server processes launched by the referee's launcher, and a channel to each."""

    def __init__(self, spec_path: Path, count: int, sandbox: bool | None) -> None:
        self.spec = load_spec(spec_path)
        self.count = count
        self.sandbox = sandbox
        self.processes: list[BotProcess] = []
        self.channels: list[grpc.aio.Channel] = []
        self.methods: list[Any] = []

    async def start(self) -> None:
        async def one(i: int) -> tuple[BotProcess, grpc.aio.Channel]:
            process = BotProcess(self.spec, i, sandbox=self.sandbox)
            self.processes.append(process)
            address = await process.start()
            path = Path(address.removeprefix("unix:"))
            deadline = time.monotonic() + READY_TIMEOUT
            while not path.exists():
                if not process.alive or time.monotonic() > deadline:
                    raise BenchError(f"echo server {i} did not start: {process.log.tail()}")
                await asyncio.sleep(0.01)
            channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
            try:
                await asyncio.wait_for(channel.channel_ready(), READY_TIMEOUT)
            except TimeoutError:
                raise BenchError(f"echo server {i} never became ready") from None
            return process, channel

        started = await asyncio.gather(*(one(i) for i in range(self.count)))
        self.channels = [channel for _, channel in started]
        self.methods = [channel.stream_stream(PLAY_METHOD) for channel in self.channels]

    async def stop(self) -> None:
        for channel in self.channels:
            with contextlib.suppress(Exception):
                await channel.close(grace=None)
        await asyncio.gather(*(p.stop() for p in self.processes), return_exceptions=True)


async def bare_game(servers: EchoServers, traffic: GameTraffic,
                    latencies: list[int]) -> float:
    """Replay one game's decision traffic over bare streams (one per seat, as in a game);
    append each round trip (µs) to `latencies`; return the game's wall time in seconds."""
    clock = time.perf_counter
    seats = {seat for seat, _ in traffic.requests}
    started = clock()
    calls = {seat: servers.methods[seat]() for seat in seats}
    for seat, payload in traffic.requests:
        call = calls[seat]
        sent = clock()
        await call.write(payload)
        reply = await call.read()
        latencies.append(int((clock() - sent) * 1e6))
        if reply is grpc.aio.EOF:
            raise BenchError("an echo server ended its stream")
    for call in calls.values():
        await call.done_writing()
        if await call.read() is not grpc.aio.EOF:
            raise BenchError("an echo server answered after the end")
    return clock() - started


# ------------------------------------------------------------------------------- measurement


@dataclass
class Side:
    """All measurements of one side."""

    name: str
    wall_per_decision: list[float] = field(default_factory=list)   # µs, one per rep
    latency: list[float] = field(default_factory=list)             # µs, median per rep
    client_cpu: list[float] = field(default_factory=list)          # µs per decision, per rep
    server_cpu: list[float] = field(default_factory=list)          # µs per decision, per rep
    decisions: int = 0


async def referee_game(rules: Any, roster: Roster, seed: int, game_id: str) -> Any:
    """One game through the referee, as a league plays it: leases, play_match, release; and,
    inside the caller's window, the GameEnd messages and the closing of the streams (which
    play_match leaves to the background)."""
    leases = [await runner.lease() for runner in roster.runners.values()]
    try:
        result = await play_match(rules, leases, seed, game_id)
        await asyncio.gather(*(task for lease in leases for task in list(lease.client.closing)),
                             return_exceptions=True)
        return result
    finally:
        for lease in leases:
            await lease.runner.release(lease)


@dataclass
class RepTotals:
    """One side's sums over the games of one rep."""

    wall: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    decisions: int = 0
    latencies: list[int] = field(default_factory=list)


async def worker(workdir: Path, sandbox: bool | None, warm_seeds: list[int]) -> None:
    """`--worker`: serve one referee side over stdin/stdout, one JSON line per game: read
    {"seed", "game_id"}, play it (bots started once, at the beginning) and write its wall time,
    CPU times (this process; the bots) and the latencies the referee recorded."""
    rules = preset(RULES)
    specs = write_sdk_bots(workdir, PLAYERS)
    roster = Roster([load_spec(p) for p in specs], sandbox=sandbox)
    await roster.start()
    try:
        for g, seed in enumerate(warm_seeds):
            await referee_game(rules, roster, seed, f"warm-{g}")
        pids = tree_pids(i.process.pid for r in roster.runners.values() for i in r.instances
                         if i.process is not None)
        print(json.dumps({"ready": True, "sandbox": sandbox_note(specs[0], sandbox)}),
              flush=True)
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            ask = json.loads(line)
            with CpuMeter(pids) as meter:
                started = time.perf_counter()
                result = await referee_game(rules, roster, ask["seed"], ask["game_id"])
                wall = time.perf_counter() - started
            print(json.dumps({
                "wall": wall, "client_cpu": meter.client, "server_cpu": meter.servers,
                "latencies": [lat for seat in result.seats for lat in seat.latencies_us],
                "strikes": [seat.strikes for seat in result.seats if seat.strike_count],
            }), flush=True)
    finally:
        await roster.stop()


class RefereeWorker:
    """A referee side in a process of its own (`--worker`), run by the interpreter of a
    checkout (this one, or a baseline with its own venv) with BENCH_REPO set to that checkout:
    its referee, its SDK bots. Each side of the run pays the same process costs. Given a
    `tree` (--against), its interpreter and environment instead."""

    def __init__(self, name: str, checkout: Path, workdir: Path, sandbox: bool | None,
                 warm_seeds: list[int], tree: Tree | None = None) -> None:
        self.name = name
        self.checkout = checkout
        self.tree = tree
        self.workdir = workdir
        self.sandbox = sandbox
        self.warm_seeds = warm_seeds
        self.process: asyncio.subprocess.Process | None = None
        self.sandbox_note = ""

    def python(self) -> str:
        if self.tree is not None:
            return self.tree.python
        if self.checkout == REPO_ROOT:
            return sys.executable
        venv = self.checkout / ".venv" / "bin" / "python"
        if not venv.exists():
            raise BenchError(f"{self.checkout}: no .venv (python3 -m venv .venv && "
                             f".venv/bin/pip install -e .)")
        return str(venv)

    async def start(self) -> None:
        argv = [self.python(), str(Path(__file__).resolve()), "--worker", str(self.workdir),
                "--warm", ",".join(map(str, self.warm_seeds))]
        if self.sandbox is False:
            argv.append("--no-sandbox")
        # The checkout first on PYTHONPATH too: a caller's PYTHONPATH must not shadow it.
        env = self.tree.env if self.tree is not None else tree_env(self.checkout)
        self.process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=env, limit=1 << 24)
        ready = await self._line()
        self.sandbox_note = ready["sandbox"]

    async def _line(self) -> dict[str, Any]:
        assert self.process is not None and self.process.stdout is not None
        line = await self.process.stdout.readline()
        if not line:
            raise BenchError(f"the {self.name} worker ended (exit {await self.process.wait()})")
        return json.loads(line)

    async def game(self, game: GameTraffic, game_id: str, totals: RepTotals) -> None:
        """Play one game of `traffic` in the worker and add it to `totals`."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write((json.dumps({"seed": game.seed, "game_id": game_id}) + "\n")
                                 .encode())
        await self.process.stdin.drain()
        done = await self._line()
        played = done["latencies"]
        if len(played) != len(game.requests) or done["strikes"]:
            raise BenchError(f"{self.name}, game {game.seed}: the referee asked {len(played)} "
                             f"decisions (expected {len(game.requests)}), strikes "
                             f"{done['strikes']}")
        totals.wall += done["wall"]
        totals.client_cpu += done["client_cpu"]
        totals.server_cpu += done["server_cpu"]
        totals.latencies.extend(played)
        totals.decisions += len(played)

    async def stop(self) -> None:
        if self.process is None:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


async def bare_once(servers: EchoServers, game: GameTraffic, totals: RepTotals) -> None:
    """Replay one game's traffic over bare streams and add it to `totals`."""
    with CpuMeter(tree_pids(p.pid for p in servers.processes)) as meter:
        totals.wall += await bare_game(servers, game, totals.latencies)
    totals.client_cpu += meter.client
    totals.server_cpu += meter.servers
    totals.decisions += len(game.requests)


async def measure(workdir: Path, games: int, reps: int, sandbox: bool | None,
                  seed: int, baseline: Path | None,
                  against: Tree | None = None) -> dict[str, Any]:
    """Start the referee workers (bots) and echo servers, warm up, and time `reps` x `games`
    games per side.

    The sides take turns game by game (referee, baseline, bare, bare, baseline, referee, ...),
    so that a burst of load from elsewhere on the machine falls on all alike; each rep sums
    its games per side. With `against` (a baseline commit's worktree) the baseline side runs
    this file against that tree, and this tree's side is run the same way.
    """
    traffic = [capture_game(PLAYERS, seed + g) for g in range(games)]
    reply = typical_reply(traffic)
    warm = [traffic[g].seed for g in range(min(3, games))]
    mine = working_tree(REPO_ROOT) if against is not None else None
    workers = {"referee": RefereeWorker("referee", REPO_ROOT, make_workdir("ref-", workdir),
                                        sandbox, warm, mine)}
    if against is not None:
        workers["baseline"] = RefereeWorker("baseline", against.root,
                                            make_workdir("base-", workdir), sandbox, warm,
                                            against)
    elif baseline is not None:
        workers["baseline"] = RefereeWorker("baseline", baseline,
                                            make_workdir("base-", workdir), sandbox, warm)
    names = [*workers, "bare"]
    servers = EchoServers(write_echo_spec(workdir, reply), PLAYERS, sandbox)
    sides = {name: Side(name) for name in names}
    try:
        log(f"starting {len(workers)} referee worker(s) with 2 SDK bots each and 2 bare echo "
            f"servers")
        await asyncio.gather(*(w.start() for w in workers.values()))
        await servers.start()
        for g in range(len(warm)):   # warm-up, untimed (first streams, imports)
            await bare_game(servers, traffic[g], [])
        for rep in range(reps):
            totals = {name: RepTotals() for name in names}
            for g, game in enumerate(traffic):
                for name in names if (rep + g) % 2 == 0 else names[::-1]:
                    if name == "bare":
                        await bare_once(servers, game, totals[name])
                    else:
                        await workers[name].game(game, f"r{rep}-g{g}", totals[name])
            for name in names:
                side, rep_totals = sides[name], totals[name]
                decisions = rep_totals.decisions
                side.client_cpu.append(rep_totals.client_cpu / decisions * 1e6)
                side.server_cpu.append(rep_totals.server_cpu / decisions * 1e6)
                side.wall_per_decision.append(rep_totals.wall / decisions * 1e6)
                side.latency.append(statistics.median(rep_totals.latencies))
                side.decisions = decisions
            log(f"rep {rep + 1}/{reps}  wall/decision " + ", ".join(
                f"{name} {sides[name].wall_per_decision[-1]:6.0f} us" for name in names))
    finally:
        await servers.stop()
        await asyncio.gather(*(w.stop() for w in workers.values()), return_exceptions=True)
    sizes = [len(p) for game in traffic for _, p in game.requests]
    return {
        "sides": sides,
        "sandbox": workers["referee"].sandbox_note,
        "baseline": against.label if against else str(baseline) if baseline else None,
        "request_bytes": (min(sizes), statistics.mean(sizes), max(sizes)),
        "reply_bytes": len(reply),
        "decisions_per_game": statistics.mean(len(g.requests) for g in traffic),
    }


# ------------------------------------------------------------------------------- report


def fmt(values: Sequence[float]) -> str:
    """'median [min-max]' in whole units."""
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}-{max(values):,.0f}]"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """Right-aligned columns, two spaces apart."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))


def report(measured: dict[str, Any], games: int, reps: int) -> dict[str, Any]:
    """Print the tables and the verdict; return the numbers as a dict."""
    sides: dict[str, Side] = measured["sides"]
    ref, bare = sides["referee"], sides["bare"]
    low, mean, high = measured["request_bytes"]
    note = measured["sandbox"]
    print()
    print(f'Per-decision round trip: {PLAYERS}-player "{RULES}" games between two first-legal '
          f"SDK bots (referee: Roster + play_match, GameEnd and stream close included) vs a "
          f"bare grpc.aio echo of the same bytes; {games} games x {reps} reps per side, "
          f"interleaved.")
    if measured["baseline"]:
        print(f"baseline: the referee and SDK of {measured['baseline']}, in the same run.")
    print(f"Unix sockets; bot and echo processes: {note}.")
    print(f"Requests {low}-{high} bytes (mean {mean:.0f}), replies {measured['reply_bytes']} "
          f"bytes, {measured['decisions_per_game']:.1f} decisions per game.")
    print("us per decision: median [min-max] over reps; ratio = median / median.")
    print()
    results: dict[str, Any] = {"games": games, "reps": reps, "sandbox": note,
                               "baseline": measured["baseline"], "rows": {}}
    pairs = [("referee", ref, "bare", bare)]
    if "baseline" in sides:
        pairs.append(("referee", ref, "baseline", sides["baseline"]))
    for a_name, a_side, b_name, b_side in pairs:
        rows = []
        for label, attr in (("wall / decision", "wall_per_decision"),
                            ("round trip", "latency"), ("CPU client", "client_cpu"),
                            ("CPU bots", "server_cpu")):
            a, b = getattr(a_side, attr), getattr(b_side, attr)
            ratio = statistics.median(a) / statistics.median(b)
            paired = [x / y for x, y in zip(a, b, strict=True)]
            rows.append([label, fmt(a), fmt(b), f"{ratio:.2f}x",
                         f"{min(paired):.2f}-{max(paired):.2f}",
                         f"{statistics.median(a) - statistics.median(b):+,.0f}"])
            results["rows"].setdefault(attr, {})[a_name] = a
            results["rows"][attr][b_name] = b
            results["rows"][attr][f"ratio_{b_name}"] = ratio
        print_table(["us per decision", a_name, b_name, "ratio", "paired ratios",
                     f"{a_name} - {b_name}"], rows)
        print()
    ratio = results["rows"]["wall_per_decision"]["ratio_bare"]
    met = ratio <= TARGET_RATIO
    results["target_met"] = met
    print(f"target (wall / decision ratio referee / bare <= {TARGET_RATIO:g}): "
          f"{'MET' if met else 'NOT MET'} ({ratio:.2f}x)")
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Per-decision round trip: referee + SDK bots vs bare grpc.aio ping-pong.")
    parser.add_argument("--games", type=int, help=f"games per rep (default {DEFAULT_GAMES})")
    parser.add_argument("--reps", type=int, help=f"reps per side (default {DEFAULT_REPS})")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_GAMES} games x {QUICK_REPS} reps unless given")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run bots and echo servers without bubblewrap (default: the "
                             "referee's default, bubblewrap wherever it works)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game (default 1)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="also measure the referee of another checkout (with its own .venv), "
                             "e.g. a `git worktree` of an earlier commit, in the same run")
    parser.add_argument("--against", metavar="REV",
                        help="also measure the referee of commit REV (e.g. 9af52b9), checked "
                             "out in a temporary git worktree, alternated with this tree in "
                             "the same run; prints both and their ratio")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--warm", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.games = args.games or (QUICK_GAMES if args.quick else DEFAULT_GAMES)
    args.reps = args.reps or (QUICK_REPS if args.quick else DEFAULT_REPS)
    if args.games < 1 or args.reps < 1:
        parser.error("--games and --reps must be at least 1")
    if args.against is not None and args.baseline is not None:
        parser.error("--against and --baseline: one baseline at a time")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sandbox = False if args.no_sandbox else None
    if args.worker is not None:
        warm = [int(s) for s in args.warm.split(",") if s]
        asyncio.run(worker(args.worker, sandbox, warm))
        return 0
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
    workdir = make_workdir("bench-protocol-")
    try:
        with contextlib.ExitStack() as stack:
            against = None
            if args.against is not None:
                against = stack.enter_context(baseline_tree(REPO_ROOT, args.against))
                log(f"baseline: {against.label} checked out in {against.root}")
            measured = asyncio.run(measure(workdir, args.games, args.reps, sandbox, args.seed,
                                           args.baseline, against))
        results = report(measured, args.games, args.reps)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    except (BenchError, BotStartError, AgainstError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

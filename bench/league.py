"""Benchmark: a league's decisions per second vs the capacity of bare gRPC streams.

Part 1, throughput. The referee side runs `referee.league.runner.run_league` (quiet, a temp out
directory) with 4 trivial Python SDK bots (a `referee.sdk.Bot` answering `view.legal[0]`, each
in a directory of its own, started by the league's runtime: guard, bubblewrap sandbox where
available, Unix sockets), 4-player `classic` tables, N games, J games at a time. Decisions per
second = the decisions recorded in the stored games / the wall time of the playing phase (from
the first game started to the last one stored; starting and stopping the bots is not counted).

The bare side measures what gRPC bidirectional streams alone can carry between the same number
and kind of processes: 4 echo server processes launched like the bots (the referee's launcher,
same guard, sandbox and interpreter; a grpc.aio generic handler without (de)serializers that
answers each request with a fixed real serialized BotMessage) and one client process (this one,
like the referee). J x 4 streams run at once, stream (lane, seat) going to server `seat` and
replaying seat `seat`'s real DecisionRequest bytes of the games of its lane (captured from
4-player games of first-legal bots with the engine), one stream per game as in the protocol,
each stream a ping-pong (write, read the reply, write the next). Capacity = exchanges / wall.

A third side explains the gap: the same echo servers fed the league's traffic pattern ("bare,
game-like": J games at once, one stream per seat and game, one request in flight per game, the
seats asked in the game's order). It is reported beside the others; the target does not use it.

All sides are measured in ONE run, interleaved rep by rep (ABC, CBA, ...). Target: league >= 50%
of bare.

Part 2, scaling. Leagues of 4, 10, 20, 40 and 200 trivial bots (4-player tables, the same
number of games each, the same J), each in a process of its own: mean seconds per game (a
game's own duration, MatchResult.seconds, and the playing phase's wall time per game), CPU per
decision, and the ratio to the 4-bot league. The referee does the same work per game whatever
the number of bots; what grows is waking more bot processes (bench/README.md, issue 44).

`--against REV` runs every league of both parts also with the referee of commit REV (a
temporary git worktree, bench/against.py), alternated with this tree's, and prints the ratios.

Usage:
    python bench/league.py                  # 120 games x 5 reps; scaling 40 games x 2 reps
    python bench/league.py --quick          # 40 games x 2 reps; scaling 20 games x 1 rep
    python bench/league.py --no-sandbox     # bots and echo servers without bubblewrap
    python bench/league.py --against 9af52b9   # and the same leagues with commit 9af52b9

Exit status: 0 when the benchmark ran (whether or not the target is met), 1 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
from against import AgainstError, Tree, baseline_tree, tree_env, working_tree
from protocol import (  # bench/protocol.py: the same bots, echo servers and traffic capture
    REPO_ROOT,
    BenchError,
    CpuMeter,
    EchoServers,
    GameTraffic,
    capture_game,
    make_workdir,
    print_table,
    sandbox_note,
    tree_cpu_seconds,
    tree_pids,
    typical_reply,
    write_echo_spec,
    write_sdk_bots,
)

from referee.bots.errors import BotStartError
from referee.engine import preset
from referee.league.config import LeagueSettings
from referee.league.progress import Progress
from referee.league.runner import run_league

if TYPE_CHECKING:   # a baseline of --against may have it as referee.match
    from referee.game.match import MatchResult

TARGET_SHARE = 0.50
PLAYERS = 4
RULES = "classic"
DEFAULT_GAMES, DEFAULT_REPS = 120, 5
QUICK_GAMES, QUICK_REPS = 40, 2
DEFAULT_SCALE_GAMES, DEFAULT_SCALE_REPS = 40, 2
QUICK_SCALE_GAMES, QUICK_SCALE_REPS = 20, 1
SCALE_BOTS = (4, 10, 20, 40, 200)
MAX_SCALE_BOTS = 400
CAPTURED_GAMES = 24   # distinct captured games the bare side cycles through


def log(message: str) -> None:
    """Progress output, on stderr so that stdout holds only the report."""
    print(message, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------- league side


class TimingProgress(Progress):
    """A quiet Progress that times the playing phase and keeps each game's duration and
    decisions; it also meters CPU from the first game to the last (this process and the bots,
    which are this process's other descendants)."""

    def __init__(self, exclude: Sequence[int] = ()) -> None:
        super().__init__()
        self.exclude = set(exclude)
        self.began = self.ended = 0.0
        self.seconds: list[float] = []
        self.warm_seconds: list[float] = []
        self.bots_seen: set[str] = set()
        self.decisions = 0
        self.cpu_client = self.cpu_bots = 0.0

    def _bots(self) -> list[int]:
        me = os.getpid()
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in self.exclude:
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    ppid = int(handle.read().rsplit(b")", 1)[-1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == me:
                pids.append(int(entry))
        return pids

    def start(self, total: int, done: int) -> None:
        super().start(total, done)
        self._bot_pids = self._bots()
        self._bots_cpu = tree_cpu_seconds(self._bot_pids)
        self._client_cpu = time.process_time()
        self.began = time.perf_counter()

    def game_done(self, result: MatchResult, index: int | None = None) -> None:
        # A baseline checkout's Progress may not take the index yet.
        super().game_done(*((result,) if index is None else (result, index)))
        self.seconds.append(result.seconds)
        # A bot's first game also pays for its process warming up (first stream, first
        # decode); games where every bot had played before show the referee's own scaling.
        bots = {seat.bot for seat in result.seats}
        if bots <= self.bots_seen:
            self.warm_seconds.append(result.seconds)
        self.bots_seen |= bots
        self.decisions += sum(len(seat.latencies_us) for seat in result.seats)

    def close(self) -> None:
        self.ended = time.perf_counter()
        self.cpu_client = time.process_time() - self._client_cpu
        self.cpu_bots = tree_cpu_seconds(self._bot_pids) - self._bots_cpu
        super().close()


@dataclass
class LeagueRun:
    """One league run's numbers."""

    bots: int
    games: int
    decisions: int
    wall: float                      # seconds of the playing phase
    game_seconds: list[float]        # each game's own duration
    warm_seconds: list[float]        # the same, of games where every bot had played before
    cpu_client: float                # seconds
    cpu_bots: float

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.wall

    @property
    def games_per_s(self) -> float:
        return self.games / self.wall


async def league_run(root: Path, specs: list[Path], games: int, concurrency: int,
                     sandbox: bool | None, seed: int, exclude: Sequence[int]) -> LeagueRun:
    """Run one league in a fresh out directory and return its numbers."""
    out = make_workdir("out-", root)
    settings = LeagueSettings(bots=specs, rules=preset(RULES), games=games,
                              players=(PLAYERS, PLAYERS), seed=seed, concurrency=concurrency,
                              out=out, sandbox=sandbox)
    progress = TimingProgress(exclude)
    outcome = await run_league(settings, progress)
    stored = sum(len(lat) for game in outcome.games for lat in game.latencies_us)
    if len(outcome.games) != games or not outcome.finished:
        raise BenchError(f"the league stored {len(outcome.games)} of {games} games")
    if outcome.broken:
        raise BenchError(f"bots failed to start: {outcome.broken[0]}")
    strikes = sum(sum(s.values()) for game in outcome.games for s in game.strikes)
    if strikes:
        raise BenchError(f"the trivial bots got {strikes} strikes: the machine is too loaded")
    if stored != progress.decisions:
        raise BenchError(f"stored games hold {stored} decisions, the games played "
                         f"{progress.decisions}")
    shutil.rmtree(out, ignore_errors=True)
    return LeagueRun(len(specs), games, stored, progress.ended - progress.began,
                     progress.seconds, progress.warm_seconds, progress.cpu_client,
                     progress.cpu_bots)


def venv_tree(checkout: Path) -> Tree:
    """A checkout with its own .venv (--baseline): its interpreter, the checkout first on
    PYTHONPATH and in BENCH_REPO."""
    python = checkout / ".venv" / "bin" / "python"
    if not python.exists():
        raise BenchError(f"{checkout}: no .venv (python3 -m venv .venv && "
                         f".venv/bin/pip install -e .)")
    return Tree(str(checkout), checkout, str(python), tree_env(checkout))


async def league_in(tree: Tree, root: Path, games: int, concurrency: int,
                    sandbox: bool | None, seed: int, bots: int = PLAYERS) -> LeagueRun:
    """`league_run` of `bots` SDK bots in a process of its own, run by the interpreter and in
    the environment of `tree` (this checkout, a baseline with its own .venv, or a worktree of
    --against): its referee and its SDK bots, measured by this file. Every league of a run is
    measured this way, so that each pays the same process costs."""
    workdir = make_workdir("side-", root)
    argv = [tree.python, str(Path(__file__).resolve()), "--one-league", str(workdir),
            "--games", str(games), "--concurrency", str(concurrency), "--seed", str(seed),
            "--one-league-bots", str(bots)]
    if sandbox is False:
        argv.append("--no-sandbox")
    process = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE,
                                                   env=tree.env)
    out, _ = await process.communicate()
    shutil.rmtree(workdir, ignore_errors=True)
    if process.returncode != 0:
        raise BenchError(f"the league of {bots} bots of {tree.label} failed "
                         f"(exit {process.returncode})")
    return LeagueRun(**json.loads(out))


async def one_league(workdir: Path, args: argparse.Namespace) -> None:
    """`--one-league`: run one league of SDK bots and print its LeagueRun as JSON.

    The league's closing global fit (the standings with their profile-likelihood intervals,
    after the timed phase) is left out: it is no part of what a game costs, and with 200 bots
    that played a game or so each it takes longer than the whole benchmark (a constrained
    refit per bound of every bot). The league's tables then rank by TrueSkill."""
    # This side's tree: the baseline's (its runner read the outcome) or this one's (outcome.py).
    try:
        import referee.league.outcome as reader
    except ImportError:
        import referee.league.runner as reader  # type: ignore[no-redef]

    reader.league_standings = lambda *_args, **_kwargs: None  # type: ignore[assignment]
    specs = write_sdk_bots(workdir, args.one_league_bots)
    run = await league_run(workdir, specs, args.games, args.concurrency, args.sandbox,
                           args.seed, [])
    print(json.dumps(dataclasses.asdict(run)))


# ------------------------------------------------------------------------------- bare side


@dataclass
class BareRun:
    """One bare capacity run's numbers."""

    exchanges: int
    wall: float
    cpu_client: float
    cpu_servers: float

    @property
    def per_s(self) -> float:
        return self.exchanges / self.wall


def seat_traffic(traffic: Sequence[GameTraffic]) -> list[list[list[bytes]]]:
    """[game][seat] -> that seat's request bytes in order."""
    out = []
    for game in traffic:
        seats: list[list[bytes]] = [[] for _ in range(PLAYERS)]
        for seat, payload in game.requests:
            seats[seat].append(payload)
        out.append(seats)
    return out


async def bare_run(servers: EchoServers, traffic: list[list[list[bytes]]], games: int,
                   lanes: int) -> BareRun:
    """`lanes` x 4 streams at once: stream (lane, seat) replays seat `seat` of games lane,
    lane + lanes, ... (a fresh stream per game) against echo server `seat`."""
    counts = [0] * (lanes * PLAYERS)

    async def stream(lane: int, seat: int) -> None:
        method = servers.methods[seat]
        done = 0
        for g in range(lane, games, lanes):
            call = method()
            for payload in traffic[g % len(traffic)][seat]:
                await call.write(payload)
                if await call.read() is grpc.aio.EOF:
                    raise BenchError("an echo server ended its stream")
                done += 1
            await call.done_writing()
            await call.read()
        counts[lane * PLAYERS + seat] = done

    with CpuMeter(tree_pids(p.pid for p in servers.processes)) as meter:
        began = time.perf_counter()
        await asyncio.gather(*(stream(lane, seat) for lane in range(lanes)
                               for seat in range(PLAYERS)))
        wall = time.perf_counter() - began
    return BareRun(sum(counts), wall, meter.client, meter.servers)


async def gamelike_run(servers: EchoServers, traffic: Sequence[GameTraffic], games: int,
                       lanes: int) -> BareRun:
    """The same bytes as a league sends them: `lanes` games at once, each with one stream per
    seat (server `seat`) and one request in flight, the seats asked in the game's own order.
    Bare gRPC with a league's traffic pattern: what is left of the ping-pong capacity before
    any referee work."""
    counts = [0] * lanes

    async def lane(index: int) -> None:
        done = 0
        for g in range(index, games, lanes):
            calls = [method() for method in servers.methods]
            for seat, payload in traffic[g % len(traffic)].requests:
                await calls[seat].write(payload)
                if await calls[seat].read() is grpc.aio.EOF:
                    raise BenchError("an echo server ended its stream")
                done += 1
            for call in calls:
                await call.done_writing()
                await call.read()
        counts[index] = done

    with CpuMeter(tree_pids(p.pid for p in servers.processes)) as meter:
        began = time.perf_counter()
        await asyncio.gather(*(lane(index) for index in range(lanes)))
        wall = time.perf_counter() - began
    return BareRun(sum(counts), wall, meter.client, meter.servers)


# ------------------------------------------------------------------------------- measurement


@dataclass
class Results:
    league: list[LeagueRun] = field(default_factory=list)
    baseline: list[LeagueRun] = field(default_factory=list)
    bare: list[BareRun] = field(default_factory=list)
    gamelike: list[BareRun] = field(default_factory=list)
    scaling: dict[int, list[LeagueRun]] = field(default_factory=dict)
    baseline_scaling: dict[int, list[LeagueRun]] = field(default_factory=dict)
    baseline_label: str = ""
    request_bytes: tuple[int, float, int] = (0, 0.0, 0)
    reply_bytes: int = 0
    sandbox: str = ""


async def measure(root: Path, args: argparse.Namespace, against: Tree | None = None) -> Results:
    """Both parts, every side alternated with the others rep by rep. The baseline, if any, is
    `against` (a worktree of --against) or the checkout of --baseline."""
    results = Results()
    trees = {"league": working_tree(REPO_ROOT)}
    if against is not None:
        trees["baseline"] = against
    elif args.baseline is not None:
        trees["baseline"] = venv_tree(args.baseline)
    if "baseline" in trees:
        results.baseline_label = trees["baseline"].label
    traffic = [capture_game(PLAYERS, args.seed + g) for g in range(CAPTURED_GAMES)]
    reply = typical_reply(traffic)
    sizes = [len(p) for game in traffic for _, p in game.requests]
    results.request_bytes = (min(sizes), statistics.mean(sizes), max(sizes))
    results.reply_bytes = len(reply)
    by_seat = seat_traffic(traffic)
    specs = write_sdk_bots(root, 1)
    results.sandbox = sandbox_note(specs[0], args.sandbox)
    servers = EchoServers(write_echo_spec(root, reply), PLAYERS, args.sandbox)
    try:
        log(f"starting {PLAYERS} bare echo servers")
        await servers.start()
        log("warm-up: one short league and one bare run (untimed)")
        await league_in(trees["league"], root, min(8, args.games), args.concurrency,
                        args.sandbox, args.seed)
        await bare_run(servers, by_seat, min(8, args.games), args.concurrency)
        await gamelike_run(servers, traffic, min(8, args.games), args.concurrency)
        sides = (*trees, "bare", "game-like")
        for rep in range(args.reps):
            for side in sides if rep % 2 == 0 else sides[::-1]:
                if side in trees:
                    run = await league_in(trees[side], root, args.games, args.concurrency,
                                          args.sandbox, args.seed + rep)
                    (results.league if side == "league" else results.baseline).append(run)
                    log(f"rep {rep + 1}/{args.reps}  {side:10} {run.decisions_per_s:7,.0f} "
                        f"decisions/s  {run.games_per_s:5.2f} games/s")
                elif side == "bare":
                    bare = await bare_run(servers, by_seat, args.games, args.concurrency)
                    results.bare.append(bare)
                    log(f"rep {rep + 1}/{args.reps}  bare       {bare.per_s:7,.0f} exchanges/s")
                else:
                    like = await gamelike_run(servers, traffic, args.games, args.concurrency)
                    results.gamelike.append(like)
                    log(f"rep {rep + 1}/{args.reps}  game-like  {like.per_s:7,.0f} exchanges/s")
    finally:
        await servers.stop()
    # Every league in a process of its own, this tree's and the baseline's in turn (ABBA).
    order = [(bots, side) for bots in args.scale_bots for side in trees]
    for rep in range(args.scale_reps):
        for bots, side in order if rep % 2 == 0 else order[::-1]:
            run = await league_in(trees[side], root, args.scale_games, args.concurrency,
                                  args.sandbox, args.seed + 100 + rep, bots)
            into = results.scaling if side == "league" else results.baseline_scaling
            into.setdefault(bots, []).append(run)
            log(f"scaling rep {rep + 1}/{args.scale_reps}  {side:8} {bots:3d} bots  "
                f"{statistics.mean(run.game_seconds):.3f} s per game  "
                f"{run.wall / run.games:.3f} s wall per game")
    return results


# ------------------------------------------------------------------------------- report


def med(values: Sequence[float]) -> float:
    return statistics.median(values)


def fmt(values: Sequence[float], spec: str = ",.0f") -> str:
    """'median [min-max]'."""
    return (f"{med(values):{spec}} [{min(values):{spec}}-{max(values):{spec}}]")


def report(results: Results, args: argparse.Namespace) -> dict[str, Any]:
    league, bare = results.league, results.bare
    low, mean, high = results.request_bytes
    print()
    print(f'League throughput: {PLAYERS} first-legal SDK bots, {PLAYERS}-player "{RULES}", '
          f"{args.games} games per league, {args.concurrency} games at a time (run_league, "
          f"quiet) vs {args.concurrency * PLAYERS} bare grpc.aio echo streams into "
          f"{PLAYERS} server processes; {args.reps} reps per side, interleaved.")
    print(f"Unix sockets; bot and echo processes: {results.sandbox}.")
    print(f"Requests {low}-{high} bytes (mean {mean:.0f}), replies {results.reply_bytes} bytes; "
          f"{med([r.decisions / r.games for r in league]):.1f} decisions per game.")
    print("median [min-max] over reps; share = median league / median bare; CPU in us per "
          "decision (exchange).")
    print()
    like = results.gamelike
    dps = [r.decisions_per_s for r in league]
    eps = [b.per_s for b in bare]
    lps = [g.per_s for g in like]
    share = med(dps) / med(eps)
    paired = [a / b for a, b in zip(dps, eps, strict=True)]
    rows = [
        ["decisions/s", fmt(dps), fmt(eps), f"{share:.0%}",
         f"{min(paired):.0%}-{max(paired):.0%}", fmt(lps), f"{med(lps) / med(eps):.0%}"],
        ["games/s", fmt([r.games_per_s for r in league], ".2f"), "", "", "", "", ""],
        ["CPU referee/client", fmt([r.cpu_client / r.decisions * 1e6 for r in league]),
         fmt([b.cpu_client / b.exchanges * 1e6 for b in bare]), "", "",
         fmt([g.cpu_client / g.exchanges * 1e6 for g in like]), ""],
        ["CPU bots/servers", fmt([r.cpu_bots / r.decisions * 1e6 for r in league]),
         fmt([b.cpu_servers / b.exchanges * 1e6 for b in bare]), "", "",
         fmt([g.cpu_servers / g.exchanges * 1e6 for g in like]), ""],
    ]
    print_table(["", "league", "bare", "share", "paired", "bare, game-like", "of bare"], rows)
    print("bare, game-like: the league's traffic pattern without the referee (one request in "
          "flight per game, seats in turn).")
    base = results.baseline
    if base:
        bps = [r.decisions_per_s for r in base]
        paired_base = [a / b for a, b in zip(dps, bps, strict=True)]
        print()
        print(f"Against the baseline {results.baseline_label} (the same league, its referee "
              f"and SDK, alternated with this tree's):")
        print_table(["", "league", "baseline", "ratio", "paired"], [
            ["decisions/s", fmt(dps), fmt(bps), f"{med(dps) / med(bps):.2f}x",
             f"{min(paired_base):.2f}-{max(paired_base):.2f}"],
            ["CPU referee", fmt([r.cpu_client / r.decisions * 1e6 for r in league]),
             fmt([r.cpu_client / r.decisions * 1e6 for r in base]), "", ""],
            ["CPU bots", fmt([r.cpu_bots / r.decisions * 1e6 for r in league]),
             fmt([r.cpu_bots / r.decisions * 1e6 for r in base]), "", ""],
        ])
    print()
    met = share >= TARGET_SHARE
    print(f"target (league >= {TARGET_SHARE:.0%} of bare capacity): "
          f"{'MET' if met else 'NOT MET'} ({share:.0%})")
    out: dict[str, Any] = {
        "games": args.games, "reps": args.reps, "concurrency": args.concurrency,
        "sandbox": results.sandbox, "league_decisions_per_s": dps, "bare_exchanges_per_s": eps,
        "gamelike_exchanges_per_s": lps,
        "league_games_per_s": [r.games_per_s for r in league], "share": share,
        "target_met": met, "scaling": {},
        "baseline": results.baseline_label or None,
        "baseline_decisions_per_s": [r.decisions_per_s for r in results.baseline],
    }
    if results.scaling:
        print()
        print(f"Scaling: leagues of {', '.join(map(str, results.scaling))} bots, "
              f"{args.scale_games} games each, {args.concurrency} at a time, "
              f"{args.scale_reps} rep(s), each league in a process of its own; seconds per "
              f"game: median over reps of the mean.")
        print()
        out["scaling"] = scaling_table(results.scaling)
        print("warm: games in which every bot had already played (a bot's first game also "
              "warms up its process). CPU: us per decision.")
        if results.baseline_scaling:
            print()
            print(f"The same leagues with the baseline {results.baseline_label}, alternated "
                  f"with the ones above:")
            print()
            out["baseline_scaling"] = scaling_table(results.baseline_scaling)
            print()
            print(f"This tree / the baseline {results.baseline_label}, ratio of the medians:")
            print()
            rows = []
            for bots, runs in results.scaling.items():
                base = results.baseline_scaling[bots]
                rows.append([str(bots)] + [
                    f"{med([metric(r) for r in runs]) / med([metric(r) for r in base]):.2f}x"
                    for metric in (mean_game, lambda r: r.wall / r.games,
                                   lambda r: r.cpu_client / r.decisions,
                                   lambda r: r.cpu_bots / r.decisions)])
            print_table(["bots", "s/game", "wall s/game", "CPU referee", "CPU bots"], rows)
    return out


def mean_game(run: LeagueRun) -> float:
    """Mean duration of a league's games (MatchResult.seconds)."""
    return statistics.mean(run.game_seconds)


def scaling_table(scaling: dict[int, list[LeagueRun]]) -> dict[int, dict[str, float]]:
    """Print one side's scaling table (each size against the smallest); return its figures."""
    base = scaling[min(scaling)]
    base_game = med([mean_game(r) for r in base])
    base_wall = med([r.wall / r.games for r in base])
    base_warm = med([warm_mean(r) for r in base])
    base_cpu = med([r.cpu_client / r.decisions for r in base])
    rows, figures = [], {}
    for bots, runs in scaling.items():
        game_s = med([mean_game(r) for r in runs])
        warm_s = med([warm_mean(r) for r in runs])
        wall_s = med([r.wall / r.games for r in runs])
        cpu = med([r.cpu_client / r.decisions for r in runs])
        rows.append([str(bots), f"{game_s:.3f}", f"{game_s / base_game:.2f}x",
                     f"{warm_s:.3f}", f"{warm_s / base_warm:.2f}x",
                     f"{wall_s:.3f}", f"{wall_s / base_wall:.2f}x",
                     f"{med([r.decisions_per_s for r in runs]):,.0f}",
                     f"{cpu * 1e6:,.0f}", f"{cpu / base_cpu:.2f}x",
                     f"{med([r.cpu_bots / r.decisions * 1e6 for r in runs]):,.0f}"])
        figures[bots] = {"mean_game_s": game_s, "warm_game_s": warm_s, "wall_per_game_s": wall_s,
                         "cpu_referee_us": cpu * 1e6,
                         "cpu_bots_us": med([r.cpu_bots / r.decisions * 1e6 for r in runs])}
    vs = f"vs {min(scaling)}"
    print_table(["bots", "s/game", vs, "warm s/game", vs, "wall s/game", vs, "decisions/s",
                 "CPU referee", vs, "CPU bots"], rows)
    return figures


def warm_mean(run: LeagueRun) -> float:
    """Mean duration of a league's warm games (all its games if none is warm)."""
    return statistics.mean(run.warm_seconds or run.game_seconds)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="League decisions/s vs bare gRPC stream capacity; time per game vs bots.")
    parser.add_argument("--games", type=int, help=f"games per league (default {DEFAULT_GAMES})")
    parser.add_argument("--reps", type=int, help=f"reps per side (default {DEFAULT_REPS})")
    parser.add_argument("--concurrency", "-j", type=int,
                        help="games at a time, J (default: the league's default for 4-player "
                             "tables on this machine)")
    parser.add_argument("--scale-games", type=int,
                        help=f"games per scaling league (default {DEFAULT_SCALE_GAMES})")
    parser.add_argument("--scale-reps", type=int,
                        help=f"reps of the scaling leagues (default {DEFAULT_SCALE_REPS}; "
                             "0 skips them)")
    parser.add_argument("--scale-bots", default=",".join(map(str, SCALE_BOTS)),
                        help="bot counts of the scaling leagues (default "
                             f"{','.join(map(str, SCALE_BOTS))})")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_GAMES} games x {QUICK_REPS} reps, scaling "
                             f"{QUICK_SCALE_GAMES} games x {QUICK_SCALE_REPS} rep, unless given")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run bots and echo servers without bubblewrap (default: the "
                             "referee's default, bubblewrap wherever it works)")
    parser.add_argument("--seed", type=int, default=1, help="league seed (default 1)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write results as JSON")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="also run the league with the referee of another checkout (with its "
                             "own .venv), e.g. a `git worktree` of an earlier commit, in the same "
                             "run")
    parser.add_argument("--against", metavar="REV",
                        help="also run every league with the referee of commit REV (e.g. "
                             "9af52b9), checked out in a temporary git worktree, alternated "
                             "with this tree in the same run; prints both and their ratio")
    parser.add_argument("--one-league", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--one-league-bots", type=int, default=PLAYERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
    quick = args.quick
    args.games = args.games or (QUICK_GAMES if quick else DEFAULT_GAMES)
    args.reps = args.reps or (QUICK_REPS if quick else DEFAULT_REPS)
    args.scale_games = args.scale_games or (QUICK_SCALE_GAMES if quick else DEFAULT_SCALE_GAMES)
    if args.scale_reps is None:
        args.scale_reps = QUICK_SCALE_REPS if quick else DEFAULT_SCALE_REPS
    try:
        args.scale_bots = sorted({int(b) for b in args.scale_bots.split(",")})
    except ValueError:
        parser.error("--scale-bots: comma-separated numbers")
    if any(b < PLAYERS or b > MAX_SCALE_BOTS for b in args.scale_bots):
        parser.error(f"--scale-bots: from {PLAYERS} to {MAX_SCALE_BOTS}")
    if args.against is not None and args.baseline is not None:
        parser.error("--against and --baseline: one baseline at a time")
    if args.games < 1 or args.reps < 1 or args.scale_games < 1 or args.scale_reps < 0:
        parser.error("--games, --reps and --scale-games must be at least 1")
    args.sandbox = False if args.no_sandbox else None
    if args.concurrency is None:
        args.concurrency = LeagueSettings(bots=[]).default_concurrency(PLAYERS)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one_league is not None:
        asyncio.run(one_league(args.one_league, args))
        return 0
    root = make_workdir("bench-league-")
    try:
        with contextlib.ExitStack() as stack:
            against = None
            if args.against is not None:
                against = stack.enter_context(baseline_tree(REPO_ROOT, args.against))
                log(f"baseline: {against.label} checked out in {against.root}")
            results = asyncio.run(measure(root, args, against))
        data = report(results, args)
        if args.json:
            args.json.write_text(json.dumps(data, indent=2) + "\n")
    except (BenchError, BotStartError, AgainstError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

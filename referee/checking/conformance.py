"""`referee check BOT.toml`: a conformance report for bot authors.

The check runs a bot the way a tournament does and reports, one line per check, whether it
behaves: the spec loads, the build step and the start-up work, the handshake is complete, the bot
plays clean games under every preset at its smallest and largest table (against the sample bots,
or the `honest` test bot where they are missing), it copes with edge states crafted directly on a
Play stream (a single legal choice, values shown only by neutral dice, the slot rule R31, opaque
63-bit request ids), it serves several games at once if it says it can, and it exits promptly on
SIGTERM. Strikes (illegal moves, timeouts, crashes, malformed answers, protocol errors) fail the
check that saw them, with the first one's reason. Decision latencies are summarised as
p50/p95/p99.

    report = run_check(Path("mybot.toml"))
    print("\\n".join(report.lines()))
    sys.exit(0 if report.ok else 1)
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import grpc

from referee import __version__
from referee.bots.build import ensure_built
from referee.bots.errors import (
    REASON_LIMIT,
    STRIKE_TYPES,
    BotError,
    BotStartError,
)
from referee.bots.process import GRACE_SECONDS, RUN_ID, use_sandbox
from referee.bots.runtime import BotRunner, Lease
from referee.bots.spec import (
    BotSpec,
    BotSpecError,
    capped_limits,
    check_bot_files,
    check_unique_names,
    load_spec,
)
from referee.engine import PRESETS, Action, Game, RuleSet, preset
from referee.errors import FailureKind
from referee.game.match import MatchOptions, MatchResult, play_match
from referee.present.render import fit
from referee.present.text import safe_line
from referee.protocol import PROTOCOL_VERSION, convert, pb
from referee.util.resources import sample_bots
from referee.util.seeds import derive_seed, request_id

ROOT = Path(__file__).resolve().parent.parent
PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
# Strikes whose latency is the referee's waiting, not the bot's.
UNANSWERED = (FailureKind.TIMEOUT, FailureKind.CRASH)


def default_opponents() -> list[Path]:
    """The sample bots random and greedy if both exist, else the `honest` test bot."""
    samples = [sample_bots() / "random.toml", sample_bots() / "greedy.toml"]
    if all(path.is_file() for path in samples):
        return samples
    honest = ROOT / "tests" / "bots" / "honest.toml"
    return [honest] if honest.is_file() else []


# The default opponents are the referee's own sample bots: how long they take to start on a
# busy machine says nothing of the bot under check, so they get this much (a check failed when
# a loaded machine took the sample bot past its 15 s).
DEFAULT_OPPONENT_STARTUP_MS = 120_000

NAME_COLUMN = 30   # the check's name is padded to this; longer names push the detail along
HANG = 8           # indent of a report line's continuation (under the name)


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: str          # PASS, FAIL or SKIP
    detail: str          # one line: what was seen, or why it failed
    data: dict[str, Any] = field(default_factory=dict)
    below: tuple[str, ...] = ()   # a tool's own lines under it (a compiler's errors)

    def line(self) -> str:
        """The check as a report line (without the lines below it)."""
        return (f"{self.status}  {self.name:<{NAME_COLUMN}} "
                f"{safe_line(self.detail, limit=REASON_LIMIT)}")

    def text_lines(self) -> list[str]:
        """The report line and the lines below it, each indented under the name as it was
        written (a compiler's caret under its column)."""
        return [self.line(), *(" " * HANG + safe_line(line, limit=REASON_LIMIT)
                               for line in self.below)]

    def lines(self, width: int | None) -> list[str]:
        """The report line wrapped to `width` columns (None: the terminal's, or no wrapping),
        continuations indented under the name; then the lines below it, each its own."""
        return [*fit(self.line(), width, hang=HANG), *self.text_lines()[1:]]

    def to_json(self) -> dict[str, Any]:
        """The check as JSON-ready data (`lines`: the lines below the detail, if any)."""
        below = {"lines": list(self.below)} if self.below else {}
        return {"name": self.name, "status": self.status, "detail": self.detail, **below,
                **self.data}


@dataclass
class Report:
    """Every check of one bot, its latencies and the tail of its output."""

    spec: str
    bot: str | None = None
    checks: list[Check] = field(default_factory=list)
    latencies_us: list[int] = field(default_factory=list)
    hello: dict[str, Any] | None = None
    output_tail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True if no check failed."""
        return all(check.status != FAIL for check in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The failed checks."""
        return [check for check in self.checks if check.status == FAIL]

    def latency(self) -> dict[str, float] | None:
        """p50, p95, p99 and max decision latency in ms (None without decisions)."""
        return latency_summary(self.latencies_us)

    def summary(self) -> str:
        """The last line of the report."""
        counts = {status: sum(c.status == status for c in self.checks)
                  for status in (PASS, FAIL, SKIP)}
        verdict = "conforms" if self.ok else "does NOT conform"
        skipped = f", {counts[SKIP]} skipped" if counts[SKIP] else ""
        return (f"{self.bot or self.spec} {verdict}: {counts[PASS]} passed, {counts[FAIL]} "
                f"failed{skipped} ({self.seconds:.1f} s)")

    def lines(self) -> list[str]:
        """The whole readable report (the header, one line per check, the summary)."""
        out = [header_line(self)]
        out += [line for check in self.checks for line in check.text_lines()]
        if self.failures and self.output_tail:
            out.append(f"bot output (last lines): {self.output_tail}")
        out.append(self.summary())
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data (`referee check --json`)."""
        return {
            "spec": self.spec,
            "bot": self.bot,
            "ok": self.ok,
            "referee_version": __version__,
            "hello": self.hello,
            "latency_ms": self.latency(),
            "decisions": len(self.latencies_us),
            "checks": [check.to_json() for check in self.checks],
            "output_tail": self.output_tail,
            "seconds": round(self.seconds, 3),
        }


def header_line(report: Report) -> str:
    """The report's first line."""
    return f"referee check {report.spec}" + (f" (bot {report.bot})" if report.bot else "")


def latency_summary(latencies_us: Sequence[int]) -> dict[str, float] | None:
    """Nearest-rank p50, p95, p99 and the maximum, in milliseconds."""
    if not latencies_us:
        return None
    ordered = sorted(latencies_us)

    def rank(p: float) -> float:
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] / 1000

    return {"p50": rank(50), "p95": rank(95), "p99": rank(99), "max": ordered[-1] / 1000}


@dataclass(frozen=True)
class CheckOptions:
    """What to check."""

    seed: int = 1
    games: int = 1                                # per preset and player count
    presets: tuple[str, ...] = tuple(PRESETS)
    opponents: tuple[Path, ...] | None = None     # None: default_opponents()
    probes: bool = True
    sandbox: bool | None = None
    on_build_line: Callable[[str, str], None] | None = None   # each build output line, live
    write_max_mb: int | None = None   # what the build may write (None: the season's/default)
    ceiling: Mapping[str, int] = field(default_factory=dict)  # a season's [limits] (capped_limits)


Listener = Callable[[Check], None]


class Checker:
    """Runs the checks of one bot spec, reporting each to `listener` as it completes."""

    def __init__(self, path: Path, options: CheckOptions, listener: Listener | None) -> None:
        self.path = path
        self.options = options
        self.listener = listener
        self.report = Report(str(path))
        self.spec: BotSpec | None = None
        self.runner: BotRunner | None = None
        self.opponents: list[BotRunner] = []
        self.started = False

    def add(self, name: str, status: str, detail: str, **data: Any) -> Check:
        return self.record(Check(name, status, detail, data))

    def record(self, check: Check) -> Check:
        """Add `check` to the report (and tell the listener)."""
        self.report.checks.append(check)
        if self.listener is not None:
            self.listener(check)
        return check

    # ------------------------------------------------------------------ the sequence

    async def run(self) -> Report:
        started = time.monotonic()
        try:
            if await self.prepare():
                await self.play_all()
        finally:
            await self.shutdown()
            self.report.seconds = time.monotonic() - started
        return self.report

    async def prepare(self) -> bool:
        """Spec, build, start, opponents, handshake; False if nothing more can be checked."""
        try:
            spec = self.spec = capped_limits(load_spec(self.path), self.options.ceiling)
            if spec.kind == "command" and spec.workdir is not None:
                check_bot_files(spec.workdir)   # before a build or a hash reads them
        except BotSpecError as exc:
            self.add("spec", FAIL, str(exc))
            return False
        self.report.bot = spec.name
        limits = spec.limits
        sandboxed = "".join(f", {label} {value}" for label, value in (
            ("memory MB", limits.memory_mb), ("processes", limits.max_processes),
            ("CPU seconds", limits.cpu_seconds)) if value is not None)
        self.add("spec", PASS, f"{spec.kind} bot; decision {limits.decision_ms} ms, bank "
                               f"{limits.game_bank_ms} ms, start-up {limits.startup_ms} ms"
                               f"{sandboxed}")
        if spec.kind == "command" and spec.build:
            began = time.monotonic()
            try:
                confined = use_sandbox(spec, self.options.sandbox, warn=False)
                ran = await asyncio.to_thread(ensure_built, spec, sandbox=confined,
                                              on_line=self.options.on_build_line,
                                              write_max_mb=self.options.write_max_mb)
            except BotStartError as exc:   # the compiler's lines under the verdict's
                self.record(Check("build", FAIL, exc.head if exc.lines else exc.detail,
                                  below=exc.lines))
                return False
            took = time.monotonic() - began
            how = f"ran in {took:.1f} s" if ran else "cached (files unchanged)"
            self.add("build", PASS, f"{' '.join(spec.build)}: {how}")
        else:
            self.add("build", PASS, "no build step")
        self.runner = BotRunner(spec, sandbox=self.options.sandbox)
        began = time.monotonic()
        try:
            await self.runner.start()
        except BotStartError as exc:
            self.add("start", FAIL, exc.detail)
            return False
        self.started = True
        self.add("start", PASS, f"Hello answered {1000 * (time.monotonic() - began):.0f} ms "
                                f"after launch")
        self.collect_output()
        await self.check_hello()
        return await self.start_opponents()

    async def start_opponents(self) -> bool:
        assert self.spec is not None and self.runner is not None
        paths = list(self.options.opponents) if self.options.opponents is not None else (
            default_opponents())
        runners: list[BotRunner] = []
        try:
            for path in paths:
                spec = load_spec(path)
                if spec.path == self.spec.path or (spec.name == self.spec.name
                                                   and self.options.opponents is None):
                    continue
                if self.options.opponents is None:
                    spec = replace(spec, limits=replace(spec.limits, startup_ms=max(
                        spec.limits.startup_ms, DEFAULT_OPPONENT_STARTUP_MS)))
                check_unique_names([self.spec, spec])
                runners.append(BotRunner(spec, sandbox=self.options.sandbox))
            results = await asyncio.gather(*(r.start() for r in runners), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    raise result
        except (BotError, BotSpecError) as exc:
            self.opponents = runners
            self.add("opponents", FAIL, f"cannot run the opponents: {exc}")
            return False
        self.opponents = runners or [self.runner]
        names = ", ".join(r.name for r in self.opponents)
        self.add("opponents", PASS, names if runners else f"none given: {names} plays itself")
        return True

    async def check_hello(self) -> None:
        """The handshake's fields, from a fresh Hello call."""
        assert self.runner is not None and self.spec is not None
        client = self.runner.instances[0].client
        began = time.monotonic()
        try:
            reply = await client.stub.Hello(
                pb.HelloRequest(protocol_version=PROTOCOL_VERSION, referee_version=__version__),
                timeout=2.0)
        except grpc.aio.AioRpcError as exc:
            self.add("hello", FAIL, f"a second Hello failed: {exc.code().name.lower()}")
            return
        took_ms = 1000 * (time.monotonic() - began)
        bot_name, bot_version = safe_line(reply.bot_name), safe_line(reply.bot_version)
        self.report.hello = {"bot_name": bot_name, "bot_version": bot_version,
                             "protocol_version": reply.protocol_version,
                             "max_concurrent_games": reply.max_concurrent_games}
        if bot_name:
            same = "" if bot_name == self.spec.name else (
                f" (the spec names it {self.spec.name!r}; tournaments use the spec's name)")
            self.add("hello: bot_name", PASS, f"'{bot_name}'{same}")
        else:
            self.add("hello: bot_name", FAIL, "empty: answer with your bot's name")
        if bot_version:
            self.add("hello: bot_version", PASS, f"'{bot_version}'")
        else:
            self.add("hello: bot_version", FAIL, "empty: answer with a version such as '1.0' "
                                                 "or a git hash")
        self.add("hello: protocol_version", PASS, f"{reply.protocol_version} (the referee "
                                                  f"speaks {PROTOCOL_VERSION})")
        games = reply.max_concurrent_games
        self.add("hello: max_concurrent_games", PASS,
                 f"{games} (means 1)" if games == 0 else str(games))
        if took_ms <= 1000:
            self.add("hello: repeated call", PASS, f"answered again in {took_ms:.1f} ms")
        else:
            self.add("hello: repeated call", FAIL, f"took {took_ms:.0f} ms: keep Hello cheap")

    async def play_all(self) -> None:
        options = self.options
        for name in options.presets:
            rules = preset(name)
            for players in sorted({rules.min_players, rules.max_players}):
                for game in range(options.games):
                    seat = 0 if players == rules.min_players else players - 1
                    seat = (seat + game) % players
                    if not await self.play_game(rules, players, seat, game):
                        return
        await self.check_concurrency()
        if options.probes:
            await self.run_probes()
        self.check_latency()

    # ------------------------------------------------------------------ games

    async def leases(self, players: int, seat: int) -> list[Lease]:
        """The bot in `seat`, opponents (in turn) in the other seats."""
        assert self.runner is not None
        leases = []
        try:
            for s in range(players):
                runner = self.runner if s == seat else self.opponents[s % len(self.opponents)]
                leases.append(await runner.lease())
        except BaseException:
            await self.release(leases)
            raise
        return leases

    async def release(self, leases: Sequence[Lease]) -> None:
        for lease in leases:
            await lease.runner.release(lease)

    async def play_game(self, rules: RuleSet, players: int, seat: int, index: int) -> bool:
        """One game; False if the bot can no longer be started."""
        name = f"game {rules.preset} {players}p seat {seat}"
        game_id = f"check-{rules.preset}-{players}p-{index}"
        seed = derive_seed(self.options.seed, "check", rules.preset, players, index)
        try:
            leases = await self.leases(players, seat)
        except BotStartError as exc:
            self.add(name, FAIL, f"could not (re)start the bot: {exc.detail}")
            return False
        try:
            result = await play_match(rules, leases, seed, game_id, MatchOptions())
        finally:
            await self.release(leases)
        self.collect_output()
        self.judge_game(name, result, seat)
        return True

    def judge_game(self, name: str, result: MatchResult, seat: int) -> None:
        mine = result.seats[seat]
        self.add_latencies(result, seat)
        decisions = len(mine.latencies_us)
        place = f"place {result.places[seat]} of {len(result.places)}"
        data = {"seed": result.record.seed, "decisions": decisions,
                "strikes": {k: v for k, v in mine.strikes.items() if v}}
        if mine.strike_count == 0:
            self.add(name, PASS, f"{decisions} decisions, no strikes, {place}", **data)
            return
        first = next(d for d in result.record.meta["decisions"]
                     if d["seat"] == seat and "strike" in d)
        forfeit = ", forfeited" if mine.forfeited else ""
        self.add(name, FAIL, f"{describe_strikes(mine.strikes)}{forfeit}; first: "
                             f"{first['strike']}: {first['detail']}", **data)

    def add_latencies(self, result: MatchResult, seat: int) -> None:
        """Keep the latencies of the seat's answers (not of requests it never answered)."""
        self.report.latencies_us += [
            d["latency_us"] for d in result.record.meta["decisions"]
            if d["seat"] == seat and "latency_us" in d and d.get("strike") not in UNANSWERED]

    async def check_concurrency(self) -> None:
        """Several games at once on one process, if the bot says it can."""
        assert self.runner is not None
        if not self.runner.instances or not self.runner.instances[0].alive:
            return
        declared = self.runner.instances[0].hello.max_concurrent_games
        name = "concurrent games"
        if declared <= 1:
            self.add(name, SKIP, "max_concurrent_games is 1: one game at a time")
            return
        count = min(declared, 4)
        rules = preset("classic")
        tables = []
        try:
            for index in range(count):
                tables.append(await self.leases(2, index % 2))
        except BotStartError as exc:
            for leases in tables:
                await self.release(leases)
            self.add(name, FAIL, f"could not lease {count} games: {exc.detail}")
            return
        bot_seats = [index % 2 for index in range(count)]
        processes = {id(leases[seat].instance) for leases, seat in zip(tables, bot_seats,
                                                                       strict=True)}
        try:
            results = await asyncio.gather(*(
                play_match(rules, leases, derive_seed(self.options.seed, "concurrent", index),
                           f"check-concurrent-{index}", MatchOptions())
                for index, leases in enumerate(tables)))
        finally:
            for leases in tables:
                await self.release(leases)
        self.collect_output()
        bad = [(r, s) for r, s in zip(results, bot_seats, strict=True)
               if r.seats[s].strike_count]
        for result, seat in zip(results, bot_seats, strict=True):
            self.add_latencies(result, seat)
        where = "one process" if len(processes) == 1 else f"{len(processes)} processes"
        if not bad:
            self.add(name, PASS, f"{count} games at once on {where}, no strikes")
            return
        result, seat = bad[0]
        first = next(d for d in result.record.meta["decisions"]
                     if d["seat"] == seat and "strike" in d)
        self.add(name, FAIL, f"{len(bad)} of {count} simultaneous games had strikes; first: "
                             f"{first['strike']}: {first['detail']}")

    # ------------------------------------------------------------------ probes

    async def run_probes(self) -> None:
        for probe in PROBES:
            found = find_state(preset(probe.preset), probe.players, probe.wanted,
                               self.options.seed)
            if found is None:  # pragma: no cover - the searches succeed for the presets
                self.add(f"probe: {probe.name}", SKIP, "no such state found")
                continue
            await self.probe(probe, found)

    async def probe(self, probe: Probe, game: Game) -> None:
        """Ask the bot about a crafted state, on a Play stream of its own."""
        assert self.runner is not None
        name = f"probe: {probe.name}"
        try:
            lease = await self.runner.lease()
        except BotStartError as exc:
            self.add(name, FAIL, f"could not (re)start the bot: {exc.detail}")
            return
        try:
            problem, latencies = await self.ask(lease, probe, game)
        finally:
            await lease.runner.release(lease)
        self.collect_output()
        self.report.latencies_us += latencies
        if problem:
            self.add(name, FAIL, problem)
        else:
            self.add(name, PASS, probe.passed)

    async def ask(self, lease: Lease, probe: Probe, game: Game) -> tuple[str, list[int]]:
        """Send the probe's requests; the first problem ('' if none) and the latencies."""
        limits = lease.limits
        seat = game.current_seat
        names = [lease.name if s == seat else f"probe-{s}" for s in range(game.players)]
        stream = lease.open_game()
        seed = derive_seed(self.options.seed, "probe", probe.name)
        rng = random.Random(seed)
        latencies: list[int] = []
        problem = await stream.send(convert.game_start(
            f"check-probe-{probe.name}", game.rules, names, seat,
            decision_ms=limits.decision_ms, game_bank_ms=limits.game_bank_ms))
        problem = f"could not start the game: {problem}" if problem else ""
        for asked in range(probe.requests):
            if problem:
                break
            while not game.is_over and game.current_seat != seat:
                game.apply(rng.choice(game.legal_actions()))
            if game.is_over:
                break
            view = game.view(seat)
            rid = request_id(seed, asked + 1)   # opaque, as in a game (seeds.request_id)
            message = convert.request_message(
                view, rid, limits.game_bank_ms, latencies[-1] if latencies else 0)
            reply = await stream.decide(message, rid,
                                        (limits.decision_ms + limits.game_bank_ms) / 1000)
            if reply.strike not in UNANSWERED:
                latencies.append(reply.latency_us)
            action, problem = judge_reply(reply, view.legal)
            if problem:
                problem = f"request {asked + 1}: {problem} ({probe.describe(view)})"
            game.apply(action or view.legal[0])
        n = game.players
        await stream.finish(convert.game_end(f"check-probe-{probe.name}", [1] * n,
                                             game.money, [0] * n).end)
        return problem, latencies

    # ------------------------------------------------------------------ latency, shutdown

    def check_latency(self) -> None:
        assert self.spec is not None
        summary = latency_summary(self.report.latencies_us)
        if summary is None:
            self.add("latency", SKIP, "no decision was answered in time")
            return
        limit = self.spec.limits.decision_ms
        note = "" if summary["p99"] <= limit else (
            f"; p99 is above decision_ms ({limit} ms): the bot lives on its time bank")
        self.add("latency", PASS, f"p50 {summary['p50']:.2f} ms, p95 {summary['p95']:.2f} ms, "
                                  f"p99 {summary['p99']:.2f} ms, max {summary['max']:.2f} ms "
                                  f"over {len(self.report.latencies_us)} decisions{note}",
                 **{"latency_ms": summary})

    async def shutdown(self) -> None:
        """Stop the opponents, then the bot, timing how long it takes to exit on SIGTERM."""
        opponents = [r for r in self.opponents if r is not self.runner]
        await asyncio.gather(*(r.stop() for r in opponents), return_exceptions=True)
        runner, self.runner = self.runner, None
        if runner is None:
            return
        self.collect_output(runner)
        processes = [i.process for i in runner.instances if i.process is not None]
        alive = [p for p in processes if p.alive]
        began = time.monotonic()
        await runner.stop()
        took = time.monotonic() - began
        if self.spec is None or self.spec.kind != "command" or not self.started:
            return
        if runner.restarts:
            self.add("restarts", FAIL, f"the bot's process ended {runner.restarts} time(s) "
                                       "during the check and had to be restarted")
        if not alive:
            self.add("shutdown", SKIP, "the bot's process had already ended")
            return
        for process in processes:
            self.report.output_tail = process.log.tail() or self.report.output_tail
        left = await asyncio.to_thread(leftover_processes, RUN_ID)
        if left:
            self.add("shutdown", FAIL, f"{len(left)} process(es) left running after the stop "
                                       f"(pids {', '.join(map(str, left))})")
        elif took >= GRACE_SECONDS:
            self.add("shutdown", FAIL, f"still running {GRACE_SECONDS:g} s after SIGTERM: "
                                       "killed (exit promptly on SIGTERM)")
        else:
            self.add("shutdown", PASS, f"exited {1000 * took:.0f} ms after SIGTERM, no process "
                                       "left")

    def collect_output(self, runner: BotRunner | None = None) -> None:
        runner = runner or self.runner
        for instance in runner.instances if runner else []:
            if instance.process is not None and instance.process.log.written:
                self.report.output_tail = instance.process.log.tail()


def describe_strikes(strikes: dict[str, int]) -> str:
    """'3 strikes (illegal 2, timeout 1)'."""
    total = sum(strikes.values())
    parts = ", ".join(f"{kind} {strikes[kind]}" for kind in STRIKE_TYPES if strikes.get(kind))
    return f"{total} strike{'s' if total != 1 else ''} ({parts})"


def judge_reply(reply: Any, legal: Sequence[Action]) -> tuple[Action | None, str]:
    """The action of a reply and '' if it is legal, else (None, what went wrong)."""
    if reply.strike is not None:
        return None, f"{reply.strike}: {reply.detail}"
    action = reply.action
    if action not in legal:
        return None, (f"{FailureKind.ILLEGAL}: {action} is not legal here (legal: "
                      f"{', '.join(map(str, legal))})")
    return action, ""


# ---------------------------------------------------------------------- probe states


@dataclass(frozen=True)
class Probe:
    """An edge state to ask the bot about, found by playing seeded random games."""

    name: str
    preset: str
    players: int
    wanted: Callable[[Game], bool]
    passed: str
    requests: int = 1

    def describe(self, view: Any) -> str:
        roll = view.roll
        parts = [f"roll {list(roll.own)}"]
        if roll.big:
            parts.append(f"big {list(roll.big)}")
        if roll.neutral:
            parts.append(f"neutral {list(roll.neutral)}")
        if view.slot:
            parts.append(f"on the slot {sorted(p.value for p in view.slot)}")
        return ", ".join(parts)


def _neutral_only_value(game: Game) -> bool:
    roll = game.roll
    return bool(roll.own) and bool(set(roll.neutral) - set(roll.own) - set(roll.big))


def _slot_blocked(game: Game) -> bool:
    """Slot rules, several values rolled, and every one of them already on the slot."""
    legal = game.legal_actions()
    return game.rules.slot and len(legal) > 1 and not any(a.slot for a in legal)


PROBES = (
    Probe("single legal action", "classic", 2, lambda g: len(g.legal_actions()) == 1,
          "answered the only legal action"),
    Probe("value shown only by neutral dice", "classic-white", 2, _neutral_only_value,
          "legal answer when a legal value shows only on neutral dice (R16)"),
    Probe("only neutral dice left", "classic-white", 2,
          lambda g: bool(g.roll.neutral) and not g.roll.own and not g.roll.big,
          "legal answer with only neutral dice in the roll (R16)"),
    Probe("slot rule R31", "biggy-slot", 2, _slot_blocked,
          "did not use the slot for values already on it (R31)"),
    Probe("opaque 63-bit request ids", "classic", 3, lambda g: g.round == 0,
          "copied request ids above 2^62 that follow no order", requests=3),
)


def find_state(rules: RuleSet, players: int, wanted: Callable[[Game], bool], seed: int,
               tries: int = 500) -> Game | None:
    """The first state of seeded random games where `wanted(game)` holds (None if none)."""
    for index in range(tries):
        game_seed = derive_seed(seed, "probe-state", rules.preset, index)
        game = Game(rules, players, game_seed, record=False)
        rng = random.Random(game_seed)
        while not game.is_over:
            if wanted(game):
                return game
            game.apply(rng.choice(game.legal_actions()))
    return None


# ---------------------------------------------------------------------- helpers, entry points


def leftover_processes(run_id: str, wait: float = 1.0) -> list[int]:
    """Pids (other than ours) whose environment carries REFEREE_RUN_ID=`run_id`, after giving
    them up to `wait` seconds to go."""
    deadline = time.monotonic() + wait
    while True:
        found = processes_with_run_id(run_id)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def processes_with_run_id(run_id: str) -> list[int]:
    """Live processes (not zombies, not this one) started with REFEREE_RUN_ID=`run_id`."""
    marker = f"REFEREE_RUN_ID={run_id}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in environ and state != b"Z":
            found.append(int(entry))
    return found


async def check_bot(path: str | Path, options: CheckOptions | None = None,
                    listener: Listener | None = None) -> Report:
    """Check the bot spec at `path`; `listener` sees each check as it completes."""
    return await Checker(Path(path), options or CheckOptions(), listener).run()


def run_check(path: str | Path, options: CheckOptions | None = None,
              listener: Listener | None = None) -> Report:
    """Synchronous `check_bot`."""
    return asyncio.run(check_bot(path, options, listener))

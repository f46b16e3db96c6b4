"""The worker side of a league on a dask cluster: a plugin owning one roster of bots per worker.

Each worker unpacks the league's bots (packs.py), builds and starts them as the local runner
does, keeps them across games and stops them when the worker leaves or the league ends. The
games run on an event loop of the plugin's own (a thread), so a dask task thread only waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from distributed import WorkerPlugin, get_worker

from referee.bots.build import cache_dir, ensure_built
from referee.bots.errors import BotStartError
from referee.bots.process import use_sandbox
from referee.bots.runtime import Roster
from referee.bots.spec import BotSpec, BotSpecError, moved_to
from referee.engine import RuleSet
from referee.errors import BotFailure
from referee.game.match import MatchOptions, MatchResult
from referee.league.executors.local import play_on_roster
from referee.league.executors.packs import place_archive, unpack, version_lock
from referee.league.schedule import ScheduledGame

STOP_SECONDS = 30.0


@dataclass(frozen=True)
class ShippedBot:
    """A bot as the coordinator sends it: its spec, the league's version, its files if any
    (a command bot's pack, or an image archive's bytes and their digest)."""

    spec: BotSpec
    version: str
    pack: bytes | None = None
    archive: bytes | None = None
    archive_digest: str = ""

    @property
    def name(self) -> str:
        """The bot's name."""
        return self.spec.name

    def local_spec(self, sandbox: bool | None) -> BotSpec:
        """The spec to run here: a command bot's workdir is its unpacked, checked and built
        files (`version_lock`: workers on one machine share the cache), its programs inside
        its folder those of this copy (`moved_to`); an image archive is
        the checked copy of its bytes on this machine."""
        cache = cache_dir() / "cluster" / self.name
        if self.archive is not None:   # the worker's runtime loads it, by its digest
            assert self.spec.image_archive is not None
            path = place_archive(self.archive, self.archive_digest, self.spec.image_archive.name,
                                 cache / "archives", self.name)
            return dataclasses.replace(self.spec, image_archive=path)
        if self.pack is None:
            return self.spec
        with version_lock(cache, self.version):
            workdir = unpack(self.pack, self.version, cache, self.name)
            try:   # its programs are the coordinator's paths: run this copy's
                spec = moved_to(self.spec, workdir)
            except BotSpecError as exc:
                raise BotStartError(self.name, str(exc)) from None
            ensure_built(spec, sandbox=use_sandbox(spec, sandbox, warn=False))
        return spec


class BotUnavailable(BotFailure):
    """A bot cannot start (or run the league's version) on a worker."""

    def __init__(self, bot: str, worker: str, reason: str) -> None:
        super().__init__(bot, worker, reason)   # the arguments survive pickling
        self.bot, self.worker, self.reason = bot, worker, reason

    def __str__(self) -> str:
        return f"bot {self.bot!r} cannot start on worker {self.worker}: {self.reason}"


def worker_label(worker: Any) -> str:
    """How records and tables name a worker: its --name (by default its address); the workers
    of a LocalCluster, numbered, are worker-0, worker-1..."""
    if isinstance(worker.name, int):
        return f"worker-{worker.name}"
    return str(worker.name or worker.address)


class LeaguePlugin(WorkerPlugin):
    """One league's bots on one worker (registered by the coordinator under one name)."""

    def __init__(self, bots: list[ShippedBot], sandbox: bool | None, games: int) -> None:
        self.bots, self.sandbox, self.games = bots, sandbox, games
        self.versions = {bot.name: bot.version for bot in bots}

    def setup(self, worker: Any) -> None:
        """Start the plugin's event loop and, on it, the bots (without waiting for them)."""
        self.name = worker_label(worker)
        # The worker's statistical profiler samples every thread's stack 100 times a second,
        # holding the GIL: it slowed the games here by about half. Nothing here needs it.
        for name in ("profile", "profile-cycle"):
            callback = worker.periodic_callbacks.pop(name, None)
            if callback is not None:
                callback.stop()
        self.errors: dict[str, str] = {}    # bot -> why it cannot run here (no output)
        self.outputs: dict[str, str] = {}   # bot -> its start-up output: its owner's only
        self.roster: Roster | None = None
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="referee-games",
                                       daemon=True)
        self.thread.start()
        self.ready: Future[dict[str, str]] = asyncio.run_coroutine_threadsafe(
            self._start(), self.loop)

    async def _start(self) -> dict[str, str]:
        # Every bot unpacked and built at once, as a local league builds them: one bot's slow
        # build (up to its limits.build_seconds) does not hold up the others'.
        built = await asyncio.gather(*(asyncio.to_thread(bot.local_spec, self.sandbox)
                                       for bot in self.bots), return_exceptions=True)
        specs = []
        for bot, spec in zip(self.bots, built, strict=True):
            if isinstance(spec, BotStartError):
                self.errors[bot.name], self.outputs[bot.name] = spec.reason, spec.output
            elif isinstance(spec, BaseException):
                raise spec
            else:
                specs.append(spec)
        self.roster = Roster(specs, sandbox=self.sandbox)
        for runner in self.roster.runners.values():
            runner.max_instances = max(runner.max_instances, self.games)
            if runner.spec.kind == "command":
                runner.pinned_version = self.versions[runner.name]
        for error in await self.roster.start(skip_broken=True):
            self.errors[error.bot], self.outputs[error.bot] = error.reason, error.output
        for name, runner in self.roster.runners.items():
            if runner.version != self.versions[name]:
                self.errors[name] = (f"runs version {runner.version} here, the league's is "
                                     f"{self.versions[name]}")
        return self.errors

    def status(self) -> tuple[dict[str, str], dict[str, str]]:
        """Bot name -> why it cannot run here, for the bots that cannot, and bot name -> its
        start-up output where it printed any (waits for startup)."""
        return dict(self.ready.result()), dict(self.outputs)

    def play(self, game: ScheduledGame, rules: RuleSet, options: MatchOptions,
             game_id: str, absent: dict[str, str] | None = None) -> MatchResult:
        """Play one game here (called from a dask task thread); BotUnavailable if a bot of it
        cannot run on this worker. The bots in `absent` (bot -> why: no worker can run them)
        forfeit the game from the start."""
        absent = absent or {}
        errors = self.ready.result()
        for name in game.bots:
            if name in errors and name not in absent:
                raise BotUnavailable(name, self.name, errors[name])
        assert self.roster is not None
        try:
            result = asyncio.run_coroutine_threadsafe(
                play_on_roster(self.roster, rules, game, game_id, options, self.versions,
                               absent=absent), self.loop).result()
        except BotStartError as exc:   # a restart failed, or another version turned up
            self.errors[exc.bot] = exc.reason
            raise BotUnavailable(exc.bot, self.name, exc.reason) from None
        result.record.meta["worker"] = self.name
        return result

    def teardown(self, worker: Any) -> None:
        """Stop this league's bots on the worker (the worker leaves, or the league ends)."""
        async def stop() -> None:
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(self.ready)
            if self.roster is not None:
                await self.roster.stop()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(STOP_SECONDS)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STOP_SECONDS)


def _plugin(name: str) -> LeaguePlugin:
    plugin = get_worker().plugins.get(name)
    if not isinstance(plugin, LeaguePlugin):
        raise RuntimeError(f"this worker has no league {name!r} (it joined after the league "
                           f"ended?)")
    return plugin


def play_game(plugin: str, game: ScheduledGame, rules: RuleSet, options: MatchOptions,
              game_id: str, absent: dict[str, str] | None = None) -> MatchResult:
    """The dask task of one game: play it with this worker's bots of league `plugin`, those
    in `absent` forfeiting it."""
    return _plugin(plugin).play(game, rules, options, game_id, absent)


def bot_status(plugin: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """The dask task that asks a worker which bots of league `plugin` it cannot run, why, and
    what they printed."""
    league = _plugin(plugin)
    return league.name, *league.status()

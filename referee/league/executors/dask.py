"""Games on a dask.distributed cluster: the coordinator submits, workers play whole games.

The coordinator (this process) keeps the schedule, the store and the ratings. It ships the bots
by content in a worker plugin (worker.py) and submits one task per game in schedule order, at
most as many at once as the workers' `games` resources allow. Each result is handed back as it
arrives; the runner stores it and rates in schedule order, so the tables match a local league.
A worker that dies takes its games with it: dask runs them again on another worker. A bot that
cannot start on a worker sends its games to the workers that can run it; a bot that no worker
can run forfeits its games (its seat plays the substitute, as a local league's bot that cannot
start), so a bot's start failure is its forfeit, never the league's end.

Whoever can talk to the scheduler can run code as its workers (dask's `client.run`), so the
league's dask traffic is authenticated and encrypted where the referee can make it so: `local:N`
makes TLS credentials of its own for its scheduler, its workers and its client (mutual TLS, a
fresh CA per league), and a `tls://` scheduler is reached with the credentials of dask's own
configuration (`distributed.comm.tls.*`, docs/cluster.md). A `tcp://` scheduler is warned about.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import os
import sys
from collections import deque
from collections.abc import Sequence
from typing import Any

import dask
from distributed import Client, Future, KilledWorker, LocalCluster, Security, as_completed

from referee.bots.archive import ArchiveError, archive_image_id
from referee.bots.container import detect_runtime, image_id
from referee.bots.errors import BotStartError
from referee.bots.spec import BotSpec
from referee.engine import RuleSet
from referee.game.match import MatchOptions
from referee.league.executors import GameId, Save, Stop
from referee.league.executors.packs import pack_tree
from referee.league.executors.worker import (
    BotUnavailable,
    LeaguePlugin,
    ShippedBot,
    bot_status,
    play_game,
)
from referee.league.schedule import ScheduledGame
from referee.util.config import ConfigError
from referee.util.numbers import is_whole

RESOURCE = "games"            # the dask resource a worker offers: games it plays at once
WORKER_WAIT_SECONDS = 120.0   # how long to wait for a first worker that offers it
CONNECT_SECONDS = 30.0
QUEUED = 2                    # games submitted per place a worker offers (see _capacity)
RETRIES = 3                   # times a game is resubmitted after its workers died


# dask starts an HTTP server in its scheduler and every worker whatever the dashboard setting
# (the scheduler's on port 8787 by default, with its info pages, JSON and proxy routes, open to
# anyone): a local:N cluster's serve no routes, on a free loopback port (dask has no "none").
NO_HTTP: dict[str, list[str]] = {"distributed.scheduler.http.routes": [],
                                 "distributed.worker.http.routes": []}
LOOPBACK_ANY = "127.0.0.1:0"


def referee_env() -> dict[str, str]:
    """The referee's per-process settings (REFEREE_* variables, the season's write limit
    among them) that a local:N cluster's workers get from the process that starts them."""
    return {key: value for key, value in os.environ.items() if key.startswith("REFEREE_")}


def parse_local(address: str) -> int | None:
    """N of "local:N" (a LocalCluster of N worker processes), None for a scheduler address."""
    if not address.startswith("local:"):
        return None
    count = address.removeprefix("local:")
    if not is_whole(count) or not 1 <= int(count) <= 256:
        raise ConfigError(f"--cluster {address}: expected local:N with N from 1 to 256 "
                          f"worker processes, or a scheduler address such as tcp://host:8786")
    return int(count)


def security_for(address: str) -> Security:
    """The credentials to reach the scheduler at `address` (not local:N): dask's own
    configuration for a `tls://` address, where they must be complete (ConfigError otherwise);
    for any other address a warning, once, that the cluster is open to whoever reaches it."""
    security = Security()   # distributed.comm.tls.* from dask's config files or environment
    if address.startswith("tls://"):
        # Security sets its tls_* attributes from dask's config at run time: its types lack them.
        ca_file = security.tls_ca_file  # type: ignore[attr-defined]
        client_cert = security.tls_client_cert  # type: ignore[attr-defined]
        missing = [key for key, value in (("ca-file", ca_file), ("client.cert", client_cert))
                   if not value]
        if missing:
            raise ConfigError(
                f"--cluster {address}: no TLS credentials for the client: set "
                f"{' and '.join(f'distributed.comm.tls.{key}' for key in missing)} in dask's "
                f"configuration (e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
                f"DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT; docs/cluster.md)")
    else:
        _warn(f"--cluster {address} is plain TCP, neither authenticated nor encrypted: anyone "
              f"who can reach the scheduler runs code as its workers (use tls:// with "
              f"credentials, docs/cluster.md)")
    return security


def ship(spec: BotSpec, version: str | None) -> ShippedBot:
    """A bot as workers get it: a command bot's files packed, an image archive's bytes with
    their digest, an image bot pinned to the image id this machine has. `version` is the
    league's (on resume); else it is the pack's, or the archive's image."""
    if spec.image_archive is not None:
        return ship_archive(spec, version)
    if spec.kind == "command":
        assert spec.workdir is not None
        pack = pack_tree(spec.workdir)
        return ShippedBot(spec, version or pack.version, pack.data)
    if spec.kind == "image" and version is None:
        assert spec.image is not None
        try:
            ident = image_id(detect_runtime(spec.runtime), spec.image)
        except RuntimeError as exc:
            raise BotStartError(spec.name, str(exc)) from None
        if ident is None:
            raise BotStartError(spec.name, f"image {spec.image} is not stored on the "
                                           f"coordinator, so its digest is unknown: build or "
                                           f"load it here and on every worker")
        version = f"image:{spec.image}@sha256:{ident}"
    return ShippedBot(spec, version or spec.files_hash())


def ship_archive(spec: BotSpec, version: str | None) -> ShippedBot:
    """An image archive bot as workers get it: the file's bytes and their SHA-256, its version
    that of the image the file holds (read from the file: the coordinator needs no container
    runtime). A worker checks the digest, loads the file and plays that image by its id."""
    path = spec.image_archive
    assert path is not None
    try:
        data = path.read_bytes()
        ident = archive_image_id(path)
    except OSError as exc:
        raise BotStartError(spec.name, f"cannot read its image archive {path.name}: "
                                       f"{exc.strerror}") from None
    except ArchiveError as exc:
        raise BotStartError(spec.name, f"image archive {path.name}: {exc}") from None
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    version = version or f"image-archive:{path.name}@sha256:{ident}"
    return ShippedBot(spec, version, archive=data, archive_digest=digest)


class Cluster:
    """A connection to a dask cluster: "local:N" starts one here (with TLS credentials of its
    own), any other address is a scheduler's. Used as `async with`; the league's executors,
    the club's checks and its test games can share one."""

    def __init__(self, address: str, concurrency: int) -> None:
        self.address, self.concurrency = address, concurrency
        self.local = parse_local(address)
        self.cluster: LocalCluster | None = None
        self.security: Security | None = None
        self.client: Client | None = None

    async def __aenter__(self) -> Cluster:
        address = self.address
        if self.local is not None:
            per_worker = max(1, math.ceil(self.concurrency / self.local))
            # Mutual TLS with a CA of its own: nothing without these credentials gets in.
            self.security = Security.temporary()
            with dask.config.set(NO_HTTP):   # the nannies hand their config to the workers
                self.cluster = await LocalCluster(
                    n_workers=self.local, threads_per_worker=per_worker, processes=True,
                    resources={RESOURCE: per_worker}, dashboard_address=None,
                    scheduler_kwargs={"dashboard": False, "dashboard_address": LOOPBACK_ANY},
                    env=referee_env(),   # the nannies start their workers with it
                    silence_logs=logging.ERROR, asynchronous=True, protocol="tls://",
                    host="127.0.0.1", security=self.security)
            address = self.cluster.scheduler_address
        else:
            self.security = security_for(address)
        try:
            self.client = await Client(address, asynchronous=True, timeout=CONNECT_SECONDS,
                                       security=self.security)
        except (OSError, TimeoutError, TypeError, ValueError) as exc:
            await self._close_cluster()
            raise ConfigError(f"cannot reach the dask scheduler at {address}: {exc}") from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()
        await self._close_cluster()

    async def _close_cluster(self) -> None:
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                closing = self.cluster.close()   # an awaitable: the cluster is asynchronous
                if closing is not None:
                    await closing


class DaskExecutor:
    """A league's games on the dask cluster at `address` ("local:N" starts one here), or on
    the `cluster` already connected (which it leaves open)."""

    def __init__(self, address: str, specs: list[BotSpec], *, concurrency: int,
                 sandbox: bool | None, versions: dict[str, str] | None = None,
                 league: str = "", cluster: Cluster | None = None) -> None:
        self.address, self.specs = address, specs
        self.concurrency, self.sandbox, self.versions = concurrency, sandbox, versions
        key = hashlib.sha256(f"{league}|{','.join(s.name for s in specs)}".encode())
        self.plugin = f"referee-league-{key.hexdigest()[:12]}"
        self.shared = cluster is not None
        self.connection = cluster or Cluster(address, concurrency)
        self.client: Client | None = None
        self.unable: dict[str, dict[str, str]] = {}    # worker address -> bot -> reason
        self.absent: dict[str, str] = {}               # bot no worker can run -> why
        self.labels: dict[str, str] = {}               # worker address -> its name
        self._info: dict[str, dict[str, Any]] = {}     # the scheduler's workers
        self._refreshed = 0.0
        self._registered = False

    async def __aenter__(self) -> DaskExecutor:
        if not self.shared:
            await self.connection.__aenter__()
        self.client = self.connection.client
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.client is not None and self._registered:
            # Its teardown stops the bots on every worker.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.unregister_worker_plugin(self.plugin), 60)
        if not self.shared:
            await self.connection.__aexit__(*exc)

    async def _refresh(self, now: bool = False) -> None:
        """Ask the scheduler for its workers (at most once a second unless `now`)."""
        assert self.client is not None
        loop = asyncio.get_running_loop()
        if now or loop.time() - self._refreshed > 1.0:
            identity = await self.client.scheduler.identity(n_workers=-1)
            self._info = identity.get("workers", {})
            self._refreshed = loop.time()

    def _workers(self) -> dict[str, dict[str, Any]]:
        """The scheduler's workers that offer the games resource (as last refreshed)."""
        return {address: info for address, info in self._info.items()
                if info.get("resources", {}).get(RESOURCE, 0) >= 1}

    async def _wait_for_workers(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WORKER_WAIT_SECONDS
        await self._refresh(now=True)
        while not self._workers():
            if loop.time() > deadline:
                raise ConfigError(
                    f"no dask worker at {self.address} offers the '{RESOURCE}' resource after "
                    f"{WORKER_WAIT_SECONDS:.0f} s: start workers with `dask worker ADDRESS "
                    f"--nthreads J --resources {RESOURCE}=J`")
            await asyncio.sleep(0.5)
            await self._refresh(now=True)

    async def start(self, skip_broken: bool) -> tuple[dict[str, str], list[BotStartError]]:
        """Ship the bots to every worker, start them there, and ask each worker which it could
        not start: a bot is broken when no worker can run it."""
        assert self.client is not None
        versions = self.versions or {}
        shipped = []
        broken: list[BotStartError] = []
        for spec in self.specs:
            try:
                shipped.append(await asyncio.to_thread(ship, spec, versions.get(spec.name)))
            except BotStartError as exc:
                broken.append(exc)
        await self._wait_for_workers()
        games = max(info["resources"][RESOURCE] for info in self._workers().values())
        plugin = LeaguePlugin(shipped, self.sandbox, int(games))
        await self.client.register_plugin(plugin, name=self.plugin)
        self._registered = True
        workers = list(self._workers())
        statuses = await self.client.gather([
            self.client.submit(bot_status, self.plugin, workers=[address], pure=False,
                               key=f"{self.plugin}-status-{n}")
            for n, address in enumerate(workers)])
        outputs: dict[str, dict[str, str]] = {}   # worker label -> bot -> start-up output
        for address, (label, errors, printed) in zip(workers, statuses, strict=True):
            self.labels[address] = label
            self.unable[address] = errors
            outputs[label] = printed
        for bot in shipped:
            reasons = {self.labels[a]: errors[bot.name] for a, errors in self.unable.items()
                       if bot.name in errors}
            said = {label: outputs[label][bot.name] for label in reasons
                    if outputs[label].get(bot.name)}
            if len(reasons) == len(workers):   # the output apart: its owner's only
                broken.append(BotStartError(bot.name, "cannot start on any worker: " + "; ".join(
                    f"{label}: {reason}" for label, reason in reasons.items()), "; ".join(
                    f"{label}: {output}" for label, output in said.items())))
            for label, reason in reasons.items():
                if len(reasons) < len(workers):   # the organiser's terminal: all of it
                    output = f"; its output: {said[label]}" if label in said else ""
                    _warn(f"bot {bot.name!r} cannot start on worker {label}: {reason}{output}; "
                          f"its games go to the other workers")
        if broken and not skip_broken:
            raise broken[0]
        self.absent.update((error.bot, error.reason) for error in broken)   # they forfeit
        names = {error.bot for error in broken}
        return {bot.name: bot.version for bot in shipped if bot.name not in names}, broken

    def _allowed(self, game: ScheduledGame) -> list[str] | None:
        """The workers that may play `game` (None: any, including workers yet to join). When
        no worker can run all its bots, the bot most workers refuse becomes absent: it
        forfeits this game and its others from the start, and the game is played."""
        bots = set(game.bots) - set(self.absent)
        refused = {address for address, errors in self.unable.items() if bots & set(errors)}
        if not refused:
            return None
        allowed = [address for address in self._workers() if address not in refused]
        if allowed:
            return allowed
        counts = {bot: sum(bot in self.unable[a] for a in refused) for bot in bots}
        bot = max(sorted(counts), key=lambda name: counts[name])
        self.absent[bot] = "cannot start on any worker: " + "; ".join(
            f"{self.labels.get(a, a)}: {self.unable[a][bot]}" for a in sorted(refused)
            if bot in self.unable[a])
        _warn(f"bot {bot!r} {self.absent[bot]}; it forfeits its games")
        return self._allowed(game)

    def _capacity(self) -> int:
        """Games to have submitted at once: twice what the workers can play at once now (at
        least one). A worker plays at most its `games` at a time; the others wait there, so a
        place that frees up starts the next game at once instead of after a round trip through
        the coordinator."""
        return max(1, QUEUED * int(sum(info["resources"][RESOURCE]
                                       for info in self._workers().values())))

    async def play(self, games: Sequence[ScheduledGame], rules: RuleSet, options: MatchOptions,
                   game_id: GameId, save: Save, stop: Stop | None = None) -> None:
        """Submit `games` in order, at most `capacity` in flight; save each result as it
        arrives (a game whose workers died or could not run a bot is submitted again). Once
        `stop()` is true nothing more is submitted; the games submitted finish."""
        client = self.client
        assert client is not None
        queue = deque(games)
        running: dict[Future, ScheduledGame] = {}
        attempts: dict[int, int] = {}
        saved: set[int] = set()
        completed = as_completed()

        async def fill() -> None:
            await self._refresh()
            while queue and len(running) < self._capacity() and not (stop and stop()):
                game = queue.popleft()
                attempt = attempts[game.index] = attempts.get(game.index, 0) + 1
                workers = self._allowed(game)   # first: it may find a bot absent
                absent = {bot: self.absent[bot] for bot in game.bots if bot in self.absent}
                future = client.submit(
                    play_game, self.plugin, game, rules, options, game_id(game), absent,
                    pure=False, key=f"{self.plugin}-g{game.index}-{attempt}",
                    resources={RESOURCE: 1}, workers=workers, allow_other_workers=False)
                running[future] = game
                completed.add(future)

        await fill()
        async for future in completed:
            game = running.pop(future)
            try:
                result = await future
            except BotUnavailable as exc:
                self._refuse(exc)
                queue.appendleft(game)
            except KilledWorker:
                if attempts[game.index] > RETRIES:
                    raise
                queue.appendleft(game)
            else:
                if game.index not in saved:   # never twice (the store refuses it, too)
                    saved.add(game.index)
                    save(game, result)
            finally:
                future.release()
            await fill()

    def _refuse(self, exc: BotUnavailable) -> None:
        address = next((a for a, label in self.labels.items() if label == exc.worker),
                       exc.worker)
        self.labels.setdefault(address, exc.worker)
        self.unable.setdefault(address, {})[exc.bot] = exc.reason
        _warn(f"{exc}; its games go to the other workers")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)

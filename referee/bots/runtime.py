"""Running bots for many games: instances started once and reused, restarted after a crash.

A `BotRunner` owns every running instance of one bot spec. `lease()` hands out a place at a
table on an instance with spare capacity (the bot's `max_concurrent_games`), starting another
instance when all are full, and replacing instances whose process has died.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from referee.bots.build import ensure_built
from referee.bots.client import BotClient, GameStream, Handler, Hello
from referee.bots.container import ContainerProcess, remove_run_containers
from referee.bots.errors import BotStartError
from referee.bots.process import RUN_ID, BotProcess, use_sandbox
from referee.bots.spec import BotFilesTooLarge, BotSpec, Limits, check_unique_names


@dataclass(eq=False)
class Instance:
    """One running copy of a bot (a process, a container, or a bot already at an address)."""

    client: BotClient
    process: BotProcess | ContainerProcess | None
    hello: Hello
    in_use: int = 0
    pool: int = 0       # instances only ever serve games of their own pool (see lease)

    @property
    def alive(self) -> bool:
        """False once the process has ended, or a game lost its connection to the bot (the
        process may not have been reaped yet: a new game must not start on it)."""
        if self.client.lost:
            return False
        return self.process is None or self.process.alive

    @property
    def free(self) -> int:
        """Games it can take on now."""
        return self.hello.max_concurrent_games - self.in_use if self.alive else 0


@dataclass(eq=False)
class Lease:
    """A seat's claim on an instance for one game; give it back with `BotRunner.release`."""

    runner: BotRunner
    instance: Instance
    log_offset: int = 0

    @property
    def client(self) -> BotClient:
        """The instance's gRPC client."""
        return self.instance.client

    @property
    def name(self) -> str:
        """The bot's name."""
        return self.runner.name

    @property
    def version(self) -> str:
        """The bot's version (a hash of its files; for a container, the image id it runs)."""
        if isinstance(self.instance.process, ContainerProcess):
            return self.instance.process.image_version or self.runner.version
        return self.runner.version

    @property
    def limits(self) -> Limits:
        """The bot's limits."""
        return self.runner.spec.limits

    def open_game(self, handler: Handler | None = None) -> GameStream:
        """Open the Play stream of one game on this instance (see `GameStream`)."""
        return self.instance.client.open_game(handler)

    def output(self) -> str:
        """What the bot's process wrote since this lease began (capped), or ''."""
        process = self.instance.process
        return process.log.since(self.log_offset) if process else ""


@dataclass(eq=False)
class BotRunner:
    """All instances of one bot spec."""

    spec: BotSpec
    sandbox: bool | None = None
    max_instances: int = 8
    instances: list[Instance] = field(default_factory=list)
    restarts: int = 0
    failed: BotStartError | None = None   # a start after the first failed: no more attempts
    _started: int = 0
    _image_version: str | None = None   # image bots: the image id of the latest instance
    _archive_digest: str | None = None  # image archive bots: the file the first instance loaded
    _changed: asyncio.Condition | None = None
    _files_version: str | None = None
    # A cluster worker checks a bot's files against the league's version before building it,
    # and reports that version (a build may add files that the coordinator never hashed).
    pinned_version: str | None = None

    @property
    def name(self) -> str:
        """The bot's name (from its spec)."""
        return self.spec.name

    @property
    def version(self) -> str:
        """The bot's version: a hash of its files, its address, or its image and image id.

        Computed once, when the bot starts (hashing a large bot directory takes a while)."""
        if self.pinned_version:
            return self.pinned_version
        if self._image_version:
            return self._image_version
        if self._files_version is None:
            self._files_version = self.spec.files_hash()
        return self._files_version

    async def start(self) -> Hello:
        """Build the bot if needed and start its first instance; BotStartError if it cannot."""
        if self.spec.kind == "command":
            confined = use_sandbox(self.spec, self.sandbox, warn=False)
            await asyncio.to_thread(ensure_built, self.spec, sandbox=confined)
            try:
                self._files_version = await asyncio.to_thread(self.spec.files_hash)
            except BotFilesTooLarge as exc:
                raise BotStartError(self.spec.name, str(exc)) from None
        instance = await self._launch()
        return instance.hello

    async def _launch(self) -> Instance:
        spec = self.spec
        process: BotProcess | ContainerProcess | None = None
        if spec.kind == "address":
            assert spec.address is not None
            client = BotClient(spec.name, spec.address)
        elif spec.kind == "image":
            container = process = ContainerProcess(spec, self._started,
                                                   archive_digest=self._archive_digest)
            address = await container.start()
            self._image_version = container.image_version
            self._archive_digest = container.archive_digest
            client = BotClient(spec.name, address, alive=lambda: container.alive)
        else:
            process = BotProcess(spec, self._started, sandbox=self.sandbox)
            address = await process.start()
            client = BotClient(spec.name, address, alive=lambda: process.alive)
        self._started += 1
        try:
            hello = await client.handshake(spec.limits.startup_ms / 1000)
        except BotStartError as exc:
            await client.close()
            detail, output = exc.reason, ""
            if process is not None:
                exited = not process.alive
                await process.stop()
                if exited and process.exit_status is not None:
                    detail = f"{detail} with exit status {process.exit_status}"
                output = process.log.tail()
            # The output apart from the reason: only the bot's owner may read it.
            raise BotStartError(spec.name, detail, output) from None
        instance = Instance(client, process, hello)
        self.instances.append(instance)
        return instance

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def lease(self, pool: int = 0) -> Lease:
        """A place for one game on an instance of `pool` with spare capacity (starting one if
        needed). Instances of different pools share nothing (process, writable directory): a
        duplicate league gives each seat rotation its own pool, so no instance sees one deal
        twice (R51). `max_instances` counts per pool."""
        changed = self._condition()
        async with changed:
            while True:
                await self._drop_dead()
                mine = [instance for instance in self.instances if instance.pool == pool]
                for instance in mine:
                    if instance.free > 0:
                        instance.in_use += 1
                        offset = instance.process.log.written if instance.process else 0
                        return Lease(self, instance, offset)
                if len(mine) < self.max_instances:
                    if self.failed is not None:
                        raise self.failed
                    try:
                        instance = await self._launch()
                    except BotStartError as exc:
                        # Once a (re)start failed, the bot's later games do not wait for more
                        # start-ups: each is forfeited at once (see referee.game.match.AbsentBot).
                        self.failed = exc
                        raise
                    instance.pool = pool
                    instance.in_use += 1
                    offset = instance.process.log.written if instance.process else 0
                    return Lease(self, instance, offset)
                await changed.wait()

    async def _drop_dead(self) -> None:
        """Forget instances whose process died and that no game uses any more."""
        for instance in list(self.instances):
            if not instance.alive and instance.in_use == 0:
                self.instances.remove(instance)
                self.restarts += 1
                await instance.client.close()
                if instance.process is not None:
                    await instance.process.stop()

    async def release(self, lease: Lease) -> None:
        """Give a place back."""
        changed = self._condition()
        async with changed:
            lease.instance.in_use -= 1
            changed.notify_all()

    async def stop(self) -> None:
        """Stop every instance."""
        instances, self.instances = self.instances, []
        for instance in instances:
            with contextlib.suppress(Exception):
                await instance.client.close()
        await asyncio.gather(*(i.process.stop() for i in instances if i.process is not None),
                             return_exceptions=True)


class Roster:
    """The runners of a set of bot specs, started together and stopped together."""

    def __init__(self, specs: list[BotSpec], *, sandbox: bool | None = None) -> None:
        check_unique_names(specs)
        self.runners: dict[str, BotRunner] = {}
        for spec in specs:
            if spec.name not in self.runners:
                self.runners[spec.name] = BotRunner(spec, sandbox=sandbox)

    async def start(self, skip_broken: bool = False) -> list[BotStartError]:
        """Start every bot; raise the first BotStartError, or drop broken bots if `skip_broken`."""
        results = await asyncio.gather(*(r.start() for r in self.runners.values()),
                                       return_exceptions=True)
        broken = []
        for name, result in zip(list(self.runners), results, strict=True):
            if isinstance(result, BotStartError):
                broken.append(result)
                del self.runners[name]
            elif isinstance(result, BaseException):
                broken.append(BotStartError(name, f"{type(result).__name__}: {result}"))
                del self.runners[name]
        if broken and not skip_broken:
            await self.stop()
            raise broken[0]
        return broken

    async def stop(self) -> None:
        """Stop every bot process; remove any container of these bots still left."""
        await asyncio.gather(*(r.stop() for r in self.runners.values()), return_exceptions=True)
        images = [r.name for r in self.runners.values() if r.spec.kind == "image"]
        if images:
            await asyncio.to_thread(remove_run_containers, RUN_ID, images)

    async def __aenter__(self) -> Roster:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

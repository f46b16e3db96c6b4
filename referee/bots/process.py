"""Launching command bots: build step, listen address, readiness, output capture, shutdown.

Every bot process runs under `referee.bots.guard` in a process group of its own, so that
stopping a bot (or the referee dying, even by SIGKILL) ends the bot and all its descendants.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import uuid
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from referee.bots import scratch, uids
from referee.bots.diskwatch import BOT_EVERY_S, DiskWatch, write_max_mb
from referee.bots.errors import BotStartError
from referee.bots.guard import guarded
from referee.bots.sandbox import SandboxError
from referee.bots.spec import BotSpec, resolve_inside
from referee.present.text import safe_block
from referee.util.resources import proto_file, resource
from referee.util.sockets import socket_folder
from referee.util.trusted import TRUSTED_CWD, bot_command

GRACE_SECONDS = 2.0
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def referee_paths() -> list[Path]:
    """What every sandbox (a bot's and its build's) shows of the referee, read-only: the
    `referee` package (the Python SDK) and `proto/` (bot.proto, for bots that load or compile
    it; inside the package when installed from a wheel), those of them that exist."""
    return [path for path in (PACKAGE_ROOT / "referee", resource("proto")) if path.exists()]


# The protocol file, which every sandbox shows (`referee_paths`): a bot that loads it at run
# time (JavaScript with @grpc/proto-loader) finds it at $LASVEGAS_PROTO wherever its folder is.
PROTO_FILE = proto_file()


def protocol_env() -> dict[str, str]:
    """LASVEGAS_PROTO for a command bot, when the referee's tree has bot.proto (a spec's own
    `env` overrides it)."""
    return {"LASVEGAS_PROTO": str(PROTO_FILE)} if PROTO_FILE.exists() else {}
# Sandbox limits when a spec sets none. The memory bound is on address space (RLIMIT_AS): Node
# needs about 1 GiB of it to start. The process bound counts every process and thread of the
# instance's own uid (`referee.bots.uids`; as an ordinary user, of the caller's uid).
SANDBOX_MEMORY_MB = 2048
SANDBOX_MAX_PROCESSES = 512     # per instance: below pid_max (32768 here) for dozens of bots
LOG_KEEP_BYTES = 256 * 1024      # output kept per process, newest last
GAME_LOG_CAP = 16 * 1024         # output kept per game in records


def _run_id() -> str:
    """This referee's run id: $REFEREE_RUN_ID if set to a plain token, else a random one."""
    given = os.environ.get("REFEREE_RUN_ID", "")
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", given):
        return given
    return uuid.uuid4().hex[:12]


RUN_ID = _run_id()   # marks every process this referee starts (env REFEREE_RUN_ID)


_warned_no_sandbox = False


def use_sandbox(spec: BotSpec, requested: bool | None, warn: bool = True) -> bool:
    """Whether to confine this bot with bubblewrap.

    `requested` is the organiser's choice: False (--no-sandbox) never, True always (an error
    where bubblewrap does not work), None (the default) wherever bubblewrap works, unless the
    bot's spec says `sandbox = "none"`. Without bubblewrap, a warning is printed once. A club
    server's upload that would run unconfined is refused (BotStartError) unless the organiser
    allowed it (referee.bots.confinement): whatever the caller asked, it fails closed.
    """
    from referee.bots.confinement import NO_SANDBOX, is_upload, unconfined_allowed

    confined = _use_sandbox(spec, requested, warn)
    if not confined and is_upload(spec.workdir) and not unconfined_allowed():
        raise BotStartError(spec.name, NO_SANDBOX)
    return confined


def _use_sandbox(spec: BotSpec, requested: bool | None, warn: bool) -> bool:
    """`use_sandbox` but for the uploads' backstop."""
    global _warned_no_sandbox
    if requested is False:
        return False
    if spec.sandbox == "none":
        if warn:
            print(f"warning: bot {spec.name!r} runs without a sandbox (sandbox = \"none\" "
                  f"in {spec.path}); only do this for bots you trust", file=sys.stderr)
        return False
    from referee.bots.sandbox import sandbox_available

    if sandbox_available():
        return True
    if requested:
        raise BotStartError(spec.name, "a sandbox was asked for, but bubblewrap (bwrap) is "
                                       "not installed or does not work here")
    if not _warned_no_sandbox:
        _warned_no_sandbox = True
        print("warning: bubblewrap (bwrap) is not available: bots run without a sandbox "
              "(apt-get install bubblewrap)", file=sys.stderr)
    return False


class OutputLog:
    """A process's merged stdout and stderr, bounded; games take the part written during them."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.kept = 0
        self.written = 0   # total bytes ever written

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.kept += len(data)
        self.written += len(data)
        while self.kept > LOG_KEEP_BYTES and len(self.chunks) > 1:
            self.kept -= len(self.chunks.popleft())

    def since(self, offset: int, cap: int = GAME_LOG_CAP) -> str:
        """Text written since `offset` (a value of `written`), at most `cap` bytes (the tail)."""
        want = self.written - offset
        if want <= 0:
            return ""
        data = b"".join(self.chunks)[-min(want, self.kept):]
        dropped = want - len(data)
        if len(data) > cap:
            dropped += len(data) - cap
            data = data[-cap:]
        text = safe_block(data.decode("utf-8", errors="replace"))
        return f"[{dropped} bytes dropped]\n{text}" if dropped else text

    def tail(self, lines: int = 3) -> str:
        """The last few lines, joined with ' | ' (for one-line error messages)."""
        text = safe_block(b"".join(self.chunks)[-4096:].decode("utf-8", errors="replace"))
        return " | ".join(line.strip() for line in text.strip().split("\n")[-lines:])



def instance_dir() -> Path:
    """A bot instance's own folder (its socket and private /tmp), in TMPDIR, or in the
    system's /tmp when TMPDIR is so deep that the socket's path would pass the kernel's limit
    (a club's check runs with TMPDIR in its data folder)."""
    return socket_folder("referee-", "bot.sock")


@dataclass
class Launch:
    """Where a launched bot listens and what runs it."""

    address: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path


class GuardedProcess:
    """A bot's process tree under `referee.bots.guard`, in a process group of its own, with
    its merged output captured in `log`. Subclasses build the command and clean up."""

    def __init__(self) -> None:
        self.log = OutputLog()
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._dir: Path | None = None

    @property
    def pid(self) -> int | None:
        """The guard's pid (also the process group id), or None before start."""
        return self.proc.pid if self.proc else None

    @property
    def alive(self) -> bool:
        """True while the bot's process runs."""
        return self.proc is not None and self.proc.returncode is None

    @property
    def exit_status(self) -> int | None:
        """The exit status once the process ended."""
        return self.proc.returncode if self.proc else None

    async def _spawn(self, guard_options: list[str], argv: list[str],
                     extra_env: dict[str, str] | None = None) -> None:
        """Start `argv` (a trusted program: bwrap, `env` from `bot_command`, a container
        client) under the guard, from a fixed working directory with the referee's own
        environment and `extra_env`, and begin capturing its output (OSError if it cannot)."""
        # The guard also removes the instance's directory once the bot has ended: `stop` does
        # too, but a referee killed by SIGKILL cannot.
        cleanup = ["--remove-dir", str(self._dir)] if self._dir is not None else []
        command, env = guarded(argv, extra_env, GRACE_SECONDS, [*cleanup, *guard_options])
        self.proc = await asyncio.create_subprocess_exec(
            *command, cwd=TRUSTED_CWD, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )
        self._reader = asyncio.create_task(self._read_output())

    async def _read_output(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            data = await self.proc.stdout.read(65536)
            if not data:
                return
            self.log.add(data)

    async def _terminate(self, whole_group: bool, wait: float) -> bool:
        """SIGTERM the guard (or its whole group), SIGKILL the group if it is not gone within
        `wait` seconds, then stop capturing output. True if the guard ended by itself."""
        proc = self.proc
        clean = True
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                if whole_group:
                    os.killpg(proc.pid, signal.SIGTERM)
                else:
                    os.kill(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), wait)
            except TimeoutError:
                clean = False
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        if proc is not None:
            if proc.returncode is not None and proc.returncode < 0:
                clean = False   # the guard itself was killed before it could clean up
            # The guard has ended its descendants; make sure nothing is left in the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 1.0)
        return clean

    def _remove_dir(self) -> None:
        if self._dir is not None:
            scratch.release_instance_dir(self._dir)
            self._dir = None


class BotProcess(GuardedProcess):
    """One running instance of a command bot."""

    def __init__(self, spec: BotSpec, instance: int = 0, *, sandbox: bool | None = None) -> None:
        if spec.kind != "command":
            raise ValueError(f"{spec.name}: only command bots have processes")
        super().__init__()
        self.spec = spec
        self.instance = instance
        self.sandbox = use_sandbox(spec, sandbox)
        self._uid: uids.UidLease | None = None
        self._watch: DiskWatch | None = None
        self._bounded = False   # the instance folder is a size-limited tmpfs

    def _prepare(self) -> Launch:
        argv = self.spec.argv()
        assert self.spec.workdir is not None
        program = argv[0]
        if os.sep in program:
            resolved = Path(self.spec.workdir, program)
            if not (resolved.exists() and os.access(resolved, os.X_OK)):
                raise BotStartError(self.spec.name, f"command not found: {program}")
            # The spec was checked before the build ran: what the build left must not lead out.
            if Path(os.path.normpath(program)).is_relative_to(self.spec.workdir) and resolve_inside(
                    self.spec.workdir, program) is None:
                raise BotStartError(self.spec.name, f"{program} leads outside the bot's folder "
                                                    f"(to {resolved.resolve()})")
            # Absolute, so that the sandbox looks for it in the bot's directory too, not in
            # the referee's working directory.
            argv[0] = str(resolved)
        elif shutil.which(program, path=self.spec.env.get("PATH", os.environ.get("PATH"))) is None:
            raise BotStartError(self.spec.name, f"command not found: {program}")
        self._dir = instance_dir()
        address = f"unix:{self._dir / 'bot.sock'}"
        env = {**os.environ, **protocol_env(), **self.spec.env, "REFEREE_BOT_ADDRESS": address,
               "REFEREE_RUN_ID": RUN_ID, "PYTHONUNBUFFERED": "1"}
        return Launch(address, [*argv, "--address", address], env, self.spec.workdir)

    async def start(self) -> str:
        """Start the process; return the address it must listen on."""
        launch = self._prepare()
        try:
            # The spec's variables and the bot's folder reach only the bot's own program
            # (`bot_command`, inside the sandbox when there is one).
            argv = self._sandboxed(launch) if self.sandbox else \
                bot_command(launch.argv, launch.env, launch.cwd)
            await self._spawn([], argv, {"REFEREE_RUN_ID": RUN_ID})
            if self.sandbox and not self._bounded:   # no kernel bound here: measured instead
                self._watch_writes()
        except OSError as exc:
            self._remove_dir()
            raise BotStartError(self.spec.name, f"cannot start: {exc.strerror}") from None
        except (uids.UidPoolError, SandboxError) as exc:
            self._remove_dir()
            raise BotStartError(self.spec.name, f"cannot start: {exc}") from None
        except BaseException:
            self._remove_dir()   # no instance directory is left behind by a failed start
            raise
        return launch.address

    def _bound_dir(self, uid: int, gid: int) -> None:
        """As root, make the instance folder (socket and private /tmp) a tmpfs of
        `write_max_mb()` MiB owned by the instance's uid: the kernel bounds every byte and
        inode the bot writes there (`referee.bots.scratch`). Where it cannot be mounted the
        folder stays a plain one, and `_watch_writes` measures it instead."""
        assert self._dir is not None
        limit = write_max_mb() * scratch.MIB
        self._bounded = scratch.mount_bounded(self._dir, limit, uid=uid, gid=gid)

    def _say_if_full(self) -> None:
        """Add to the bot's log that it ran out of its write limit, if its instance folder is
        full now (and the guard has not said so already)."""
        note = scratch.full_note(self._dir) if self._bounded and self._dir else ""
        if note and note.encode() not in b"".join(self.log.chunks)[-4096:]:
            self.log.add(note.encode())

    def _watch_writes(self) -> None:
        """Where the instance folder is no tmpfs (`_bound_dir`), bound what the confined bot
        writes by measuring: its instance folder (socket and private /tmp) may grow by
        `write_max_mb()` MiB; past it the bot is killed, every process of it (the guard's
        group, and the sandbox dies with the guard), and its log says why."""
        assert self._dir is not None and self.proc is not None
        pid, limit, loop = self.proc.pid, write_max_mb(), asyncio.get_running_loop()
        said = (f"[referee: the bot ran out of its write limit of {limit} MiB (its /tmp and "
                f"its socket folder together) and was stopped]\n")

        def kill() -> None:   # on the watch's thread
            # The line first: the loop adds it to the log before it hears of the bot's end.
            with contextlib.suppress(RuntimeError):   # the log is the event loop's
                loop.call_soon_threadsafe(self.log.add, said.encode())
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

        self._watch = DiskWatch([self._dir], limit, kill, every=BOT_EVERY_S).start()

    def _sandboxed(self, launch: Launch) -> list[str]:
        from referee.bots.sandbox import NOBODY, bwrap_argv, default_env, prepare_dirs

        assert self._dir is not None
        self._uid = self._uid or uids.lease()
        uid, gid = (self._uid.uid, self._uid.gid) if self._uid else (NOBODY, NOBODY)
        # The instance's own uid owns its socket directory and private /tmp; nobody else may
        # enter them (the referee, as root, connects all the same).
        tmp = self._dir / "tmp"
        if os.geteuid() == 0:
            self._bound_dir(uid, gid)
            prepare_dirs(self._dir, tmp, uid=uid, gid=gid)
        else:   # in a user namespace the caller's own directories are the bot's
            tmp.mkdir()
        limits = self.spec.limits
        env = {**default_env(), **protocol_env(), **self.spec.env,
               "REFEREE_BOT_ADDRESS": launch.env["REFEREE_BOT_ADDRESS"],
               "REFEREE_RUN_ID": RUN_ID, "PYTHONPATH": str(PACKAGE_ROOT)}
        return bwrap_argv(launch.argv, bot_dir=launch.cwd, tmp_dir=tmp, socket_dir=self._dir,
                          env=env, memory_mb=limits.memory_mb or SANDBOX_MEMORY_MB,
                          cpu_seconds=limits.cpu_seconds,
                          max_processes=limits.max_processes or SANDBOX_MAX_PROCESSES,
                          uid=uid, gid=gid, max_file_mb=write_max_mb(),
                          ro_paths=referee_paths())

    def _remove_dir(self) -> None:
        if self._watch is not None:   # before the folder goes: its removal is no write
            self._watch.close()
            self._watch = None
        self._say_if_full()   # the guard, killed, could not
        super()._remove_dir()
        self._bounded = False
        if self._uid is not None:   # the instance's processes are gone: its uid is free
            self._uid.release()
            self._uid = None

    async def stop(self) -> None:
        """SIGTERM the bot and its descendants, SIGKILL after the grace period; clean up."""
        if self.alive:   # while its processes, and the files they hold open, are there
            self._say_if_full()
        await self._terminate(whole_group=True, wait=GRACE_SECONDS + 1.0)
        self._remove_dir()

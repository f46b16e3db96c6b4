"""Container bots: a spec with `image = "NAME:TAG"` runs as a locked-down podman/docker container.

`ContainerProcess` has the interface the runner uses for `BotProcess` (`start()` returns the
address, `alive`, `exit_status`, `log`, `stop()`), plus `image_version`, the bot's version in
records: `image:NAME@sha256:<image id>`. The container runs with

* no network, a read-only root with a size-limited tmpfs `/tmp`, a small `/dev/shm`;
* every capability dropped, no-new-privileges, uid/gid 65534 whatever the image says;
* `limits.memory_mb` (default 512) as the memory limit with swap included, one CPU
  (`--cpus=1`), `limits.max_processes` (default 64) as the pids limit, `--init` as pid 1;
* `--pull=never` (the referee never contacts a registry), `--rm`, a unique name and the labels
  `referee.run=<RUN_ID>` and `referee.bot=<name>`;
* its gRPC address on a Unix socket in a host directory bind-mounted at `/run/referee` and
  owned by the container user: the bot gets `--address unix:/run/referee/bot.sock` and
  `REFEREE_BOT_ADDRESS`, the referee connects to the host side of the same socket.

The attached `podman run` client runs under `referee.bots.guard` like a command bot; its
stdout/stderr (the bot's output) fill the log. A container is not a child of its client (conmon
owns it), so killing the client does not stop it: stopping sends SIGTERM to the guard, the
client passes it on into the container (`--init` hands it to the bot), and the guard then runs
`podman rm -f -t 0 NAME` and removes the socket directory (`--on-exit`), also when the referee
itself dies. As backstops,
`remove_run_containers()` removes every container labelled with a run id: the roster calls it
when it stops, and it runs at exit for containers this process started.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shlex
import shutil
import subprocess
import threading
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path

from referee.bots.archive import ArchiveError, load_archive, runtime_program
from referee.bots.errors import BotStartError
from referee.bots.process import GRACE_SECONDS, RUN_ID, GuardedProcess
from referee.bots.spec import BotSpec
from referee.util.sockets import socket_folder
from referee.util.trusted import SYSTEM_PATH, TRUSTED_CWD

RUNTIMES = ("podman", "docker")       # tried in this order when a spec names none
SOCKET_MOUNT = "/run/referee"         # where the socket directory appears in the container
CONTAINER_ADDRESS = f"unix:{SOCKET_MOUNT}/bot.sock"
CONTAINER_USER = (65534, 65534)       # nobody:nogroup
DEFAULT_MEMORY_MB = 512
DEFAULT_MAX_PROCESSES = 64
DEFAULT_CPUS = 1.0
TMP_SIZE_MB = 64
SHM_SIZE_MB = 16
ON_EXIT_TIMEOUT = 10.0                # bound on the guard's `podman rm` after the client ends
COMMAND_TIMEOUT = 60.0                # bound on inspect / info / ps / rm calls

_lock = threading.Lock()
_problems: dict[str, str | None] = {}   # runtime -> None if it works, else why not (cached)
_live: set[tuple[str, str]] = set()     # (runtime, name) of containers started and not stopped
_atexit_registered = False


def _run(argv: list[str], timeout: float = COMMAND_TIMEOUT) -> subprocess.CompletedProcess[str]:
    # The runtime by its path in the system's folders, run from a fixed folder.
    argv = [runtime_program(argv[0]), *argv[1:]]
    return subprocess.run(argv, cwd=TRUSTED_CWD, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def runtime_problem(runtime: str) -> str | None:
    """None if `runtime` (podman or docker) works here, else why not; checked once, cached."""
    with _lock:
        if runtime in _problems:
            return _problems[runtime]
        problem: str | None = None
        if shutil.which(runtime, path=SYSTEM_PATH) is None:
            problem = "not installed"
        else:
            try:
                done = _run([runtime, "info"], timeout=30.0)
                if done.returncode != 0:
                    problem = _last_line(done.stderr or done.stdout) or f"exit {done.returncode}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                problem = str(exc)
        _problems[runtime] = problem
        return problem


def detect_runtime(preferred: str | None = None) -> str:
    """The runtime to use: `preferred` if given, else the first of podman, docker that works.

    Raises RuntimeError, with each runtime's reason, when none works.
    """
    candidates = [preferred] if preferred else list(RUNTIMES)
    reasons = []
    for runtime in candidates:
        problem = runtime_problem(runtime)
        if problem is None:
            return runtime
        reasons.append(f"{runtime}: {problem}")
    what = f"container runtime '{preferred}' does not work here" if preferred else \
        "no container runtime works here"
    raise RuntimeError(f"{what} ({'; '.join(reasons)})")


def image_id(runtime: str, image: str) -> str | None:
    """The local image's id (64 hex digits, no 'sha256:'), or None if it is not stored here."""
    done = _run([runtime, "image", "inspect", "--format", "{{.Id}}", image])
    if done.returncode != 0:
        return None
    ident = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
    return ident.removeprefix("sha256:") or None


def remove_argv(runtime: str, names: Iterable[str]) -> list[str]:
    """The command that removes containers at once, running or not, missing ones ignored."""
    if runtime == "podman":
        return [runtime_program("podman"), "rm", "-f", "-i", "-t", "0", *names]
    return [runtime_program(runtime), "rm", "-f", *names]


def remove_containers(runtime: str, names: Iterable[str]) -> None:
    """Remove containers by name (kill them first if running); errors are ignored."""
    names = list(names)
    if names:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            _run(remove_argv(runtime, names))
    with _lock:
        for name in names:
            _live.discard((runtime, name))


def run_containers(run_id: str, runtime: str, bots: Iterable[str] | None = None) -> list[str]:
    """Names of the containers (running or not) labelled with `run_id` (and one of `bots`)."""
    filters = [f"label=referee.run={run_id}"]
    names: list[str] = []
    for bot in (list(bots) if bots is not None else [None]):
        argv = [runtime, "ps", "-a", "--format", "{{.Names}}"]
        for item in filters + ([f"label=referee.bot={bot}"] if bot else []):
            argv += ["--filter", item]
        try:
            done = _run(argv)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            names += [n.strip() for n in done.stdout.splitlines() if n.strip()]
    return sorted(set(names))


def remove_run_containers(run_id: str = RUN_ID, bots: Iterable[str] | None = None) -> list[str]:
    """Remove every container labelled `referee.run=<run_id>` (only those of `bots` if given).

    Looks with each runtime this process used, or with every working one if it used none.
    Returns the names removed.
    """
    with _lock:
        used = sorted({runtime for runtime, _ in _live})
    runtimes = used or [r for r in RUNTIMES if shutil.which(r) and runtime_problem(r) is None]
    bots = list(bots) if bots is not None else None
    removed = []
    for runtime in runtimes:
        names = run_containers(run_id, runtime, bots)
        remove_containers(runtime, names)
        removed += names
    return removed


def _remove_at_exit() -> None:
    with _lock:
        live = sorted(_live)
    if live:
        remove_run_containers(RUN_ID)


def _register_atexit() -> None:
    global _atexit_registered
    with _lock:
        if not _atexit_registered:
            atexit.register(_remove_at_exit)
            _atexit_registered = True


def run_argv(runtime: str, image: str, name: str, socket_dir: Path, *, bot: str,
             memory_mb: int, cpus: float, max_processes: int,
             env: Mapping[str, str] | None = None) -> list[str]:
    """The `podman run` / `docker run` command for one bot container (attached, removed on exit)."""
    uid, gid = CONTAINER_USER
    argv = [runtime_program(runtime), "run", "--rm", "--pull=never", "--name", name,
            "--label", f"referee.run={RUN_ID}", "--label", f"referee.bot={bot}",
            "--network=none", "--read-only"]
    if runtime == "podman":
        # Without it --read-only adds writable, unsized tmpfs mounts on /run and /var/tmp.
        argv.append("--read-only-tmpfs=false")
    argv += ["--tmpfs", f"/tmp:rw,size={TMP_SIZE_MB}m,mode=1777", f"--shm-size={SHM_SIZE_MB}m",
             "--cap-drop=all", "--security-opt=no-new-privileges", "--user", f"{uid}:{gid}",
             f"--memory={memory_mb}m", f"--memory-swap={memory_mb}m", f"--cpus={cpus:g}",
             f"--pids-limit={max_processes}", "--init", "--log-driver=none",
             "-v", f"{socket_dir}:{SOCKET_MOUNT}:rw",
             "-e", f"REFEREE_BOT_ADDRESS={CONTAINER_ADDRESS}", "-e", f"REFEREE_RUN_ID={RUN_ID}"]
    for key, value in (env or {}).items():
        argv += ["-e", f"{key}={value}"]
    return [*argv, image, "--address", CONTAINER_ADDRESS]


class ContainerProcess(GuardedProcess):
    """One running instance of a container bot."""

    def __init__(self, spec: BotSpec, instance: int = 0, *,
                 archive_digest: str | None = None) -> None:
        """`archive_digest`: for a bot handed in as an image archive, the file digest its
        first instance loaded; the start is refused if the file no longer has it."""
        if spec.kind != "image":
            raise ValueError(f"{spec.name}: only image bots run in containers")
        super().__init__()
        self.spec = spec
        self.instance = instance
        self.runtime: str | None = None
        self.image_id: str | None = None
        self.archive_digest = archive_digest
        self.name = f"referee-{RUN_ID}-{spec.name}-{instance}-{uuid.uuid4().hex[:6]}"

    @property
    def image_version(self) -> str | None:
        """`image:NAME@sha256:<id>`, the bot's version, once started."""
        if self.image_id is None:
            return None
        if self.spec.image_archive is not None:
            return f"image-archive:{self.spec.image_archive.name}@sha256:{self.image_id}"
        return f"image:{self.spec.image}@sha256:{self.image_id}"

    def _load_archive(self, runtime: str) -> str:
        """Load the spec's image archive (refusing a changed file); return its image id."""
        spec = self.spec
        assert spec.image_archive is not None
        tag = f"localhost/referee-archive/{spec.name.lower()}:latest"
        try:
            loaded = load_archive(runtime, spec.image_archive, tag, expect=self.archive_digest)
        except ArchiveError as exc:
            raise BotStartError(spec.name, f"image archive {spec.image_archive}: {exc}") from None
        self.archive_digest = loaded.digest
        return loaded.image_id

    def _prepare_dir(self) -> Path:
        """A fresh host directory for the socket, owned by the container user."""
        path = socket_folder("referee-ctr-", "bot.sock")
        try:
            os.chown(path, *CONTAINER_USER)
            os.chmod(path, 0o700)
        except PermissionError:   # not root (rootless runtime): let any uid create the socket
            os.chmod(path, 0o777)
        return path

    async def start(self) -> str:
        """Start the container; return the (host) address it will listen on."""
        spec = self.spec
        try:
            runtime = await asyncio.to_thread(detect_runtime, spec.runtime)
        except RuntimeError as exc:
            raise BotStartError(spec.name, str(exc)) from None
        if spec.image_archive is not None:
            ident: str | None = await asyncio.to_thread(self._load_archive, runtime)
        else:
            assert spec.image is not None
            ident = await asyncio.to_thread(image_id, runtime, spec.image)
        if ident is None:
            raise BotStartError(spec.name, f"image {spec.image} is not stored in {runtime} here "
                                           "(the referee never pulls: build or load it first)")
        self.runtime, self.image_id = runtime, ident
        self._dir = self._prepare_dir()
        limits = spec.limits
        argv = run_argv(runtime, ident, self.name, self._dir, bot=spec.name,
                        memory_mb=limits.memory_mb or DEFAULT_MEMORY_MB, cpus=DEFAULT_CPUS,
                        max_processes=limits.max_processes or DEFAULT_MAX_PROCESSES,
                        env=spec.env)
        # When the client ends (the container ended, was stopped, or the referee died): make
        # sure the container is gone (the guard then removes its socket directory too).
        on_exit = remove_argv(runtime, [self.name])
        guard_options = ["--no-subreaper", "--on-exit", shlex.join(on_exit),
                         "--on-exit-timeout", str(ON_EXIT_TIMEOUT)]
        _register_atexit()
        with _lock:
            _live.add((runtime, self.name))
        address = f"unix:{self._dir / 'bot.sock'}"
        try:
            await self._spawn(guard_options, argv, {"REFEREE_RUN_ID": RUN_ID})
        except OSError as exc:
            self._remove_dir()
            raise BotStartError(spec.name, f"cannot start {runtime}: {exc.strerror}") from None
        return address

    async def stop(self) -> None:
        """SIGTERM into the container, SIGKILL after the grace period; remove it; clean up."""
        # The guard SIGTERMs the client, which passes the signal into the container; after the
        # grace it kills the client, then removes the container by name (its --on-exit).
        sure = await self._terminate(whole_group=False,
                                     wait=GRACE_SECONDS + ON_EXIT_TIMEOUT + 2.0)
        if self.runtime is not None:
            if sure:
                with _lock:
                    _live.discard((self.runtime, self.name))
            else:
                await asyncio.to_thread(remove_containers, self.runtime, [self.name])
        self._remove_dir()

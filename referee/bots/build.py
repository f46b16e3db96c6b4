"""A command bot's build step, cached by a hash of its files, run in the bot's sandbox.

A spec's `build` is code the bot's author controls (`npm ci` runs a package's install scripts,
`make` runs a Makefile), so where bubblewrap works it runs confined like the bot itself
(`referee.bots.sandbox`): as a uid of its own (`referee.bots.uids`), without the referee's
environment, seeing only the system, the interpreter, the referee's SDK and `proto/`, and its
own folder, the only place it may write besides a private `/tmp`. It has no network unless
the spec says `build_network = true`. As root, the build writes in a copy of the bot's folder
in a size-limited tmpfs (with its `/tmp`), bound at the folder's own path, copied back
normalised if it succeeds (`referee.bots.scratch`). Where no tmpfs can be mounted, the bot's
folder is lent to the build's uid (chowned) and given back to its owner afterwards, files the
build created included (a file with several hard links is never chowned: it could be a link to
a file outside the folder), and what it writes is measured (`referee.bots.diskwatch`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from referee.bots import diskwatch, scratch, uids
from referee.bots.diskwatch import DEFAULT_WRITE_MAX_MB, DiskWatch
from referee.bots.errors import BotStartError
from referee.bots.folder import open_to_bot
from referee.bots.guard import guarded
from referee.bots.netns import NetworkUnavailable, isolated_network
from referee.bots.sandbox import SandboxError
from referee.bots.spec import BotFilesTooLarge, BotSpec, hash_tree
from referee.errors import BotFailure
from referee.util.trusted import TRUSTED_CWD, bot_command

BUILD_MEMORY_MB = 8192       # address space per process: compilers and npm need far more than bots
BUILD_MAX_PROCESSES = 512
BUILD_GRACE = 2.0
FAILURE_LINES = 10           # lines of a failed build's output its error shows

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where build stamps live ($XDG_CACHE_HOME/referee or ~/.cache/referee)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "referee")


def _build_stamp(spec: BotSpec, sandbox: bool) -> Path:
    """The stamp of a build of `spec` as its directory is now: the bot's files, the build
    command, and the names in the workdir itself, skipped directories included, so that a
    fresh clone without `node_modules` (or one deleted) builds again; and what it is built
    under (`built_under`), so that a build made without the sandbox, or by another
    interpreter, is never reused under a new one."""
    assert spec.workdir is not None and spec.build
    key = hashlib.sha256("\0".join([
        str(spec.workdir), *spec.build, hash_tree(spec.workdir),
        *sorted(os.listdir(spec.workdir)), f"network={spec.build_network}",
        *built_under(sandbox),
    ]).encode()).hexdigest()[:24]
    return cache_dir() / "builds" / f"{spec.name}-{key}"


def built_under(sandbox: bool) -> list[str]:
    """What a build depends on besides the bot's files: confined or not (a confined build's
    files belong to the bot's uid; an unconfined one's to the referee's), and the runtime the
    bot runs on (the interpreter and its version)."""
    return [f"sandbox={sandbox}", f"python={sys.executable}", f"version={sys.version}"]


KEPT_LINES = 400   # lines of each output stream a build keeps for its failure message

# Told each line of a build's output as it comes: ("stdout" | "stderr", the line).
OutputListener = Callable[[str, str], None]


class WriteLimitReached(BotFailure):
    """A build ran out of its write limit (or wrote more than it, and was stopped, every
    process of it, where the limit is measured)."""


class BuildResultRefused(BotFailure):
    """What a build left cannot be kept (the message says why)."""


def ensure_built(spec: BotSpec, timeout: float | None = None, *, sandbox: bool = False,
                 on_line: OutputListener | None = None,
                 write_max_mb: int | None = None) -> bool:
    """Run the spec's build command (confined when `sandbox`) unless a stamp shows it ran for
    the bot's directory as it is now (see `_build_stamp`).

    `timeout` (by default the spec's `limits.build_seconds`) bounds everything: waiting for
    another process's build of the same folder, then this build, all its processes included.
    Returns True if it ran, False if a stamp showed it already ran. Raises BotStartError with
    the tail of the build's output if it fails, or the other process's failure if the build
    this one waited for failed. `on_line`, if given, hears each line of the build's output as
    the build writes it (the output is captured all the same). The build may add at most
    `write_max_mb` MiB (by default the season's, `referee.bots.diskwatch.write_max_mb`) to its
    folder and its private /tmp, all files together (measured by `referee.bots.diskwatch`;
    each file at most that too): at the limit it is killed whole and fails.
    """
    write_max_mb = write_max_mb or diskwatch.write_max_mb()
    if not spec.build or spec.workdir is None:
        return False
    try:
        return _ensure_built(spec, timeout, sandbox, on_line, write_max_mb)
    except BotFilesTooLarge as exc:   # before the build, or what the build left (its stamp)
        raise BotStartError(spec.name, str(exc)) from None


def _ensure_built(spec: BotSpec, timeout: float | None, sandbox: bool,
                  on_line: OutputListener | None, write_max_mb: int) -> bool:
    """`ensure_built` once its arguments are settled (BotFilesTooLarge passes through)."""
    assert spec.workdir is not None
    if _build_stamp(spec, sandbox).exists():
        return False
    limit = float(spec.limits.build_seconds if timeout is None else timeout)
    deadline = time.monotonic() + limit
    # One build of a folder at a time, across processes (dask workers, referees side by side,
    # whatever their build caches): a second build would find the folder lent to the first
    # one's uid, and give it back to that uid. The lock is on the folder itself.
    failed = _build_stamp(spec, sandbox).with_suffix(".failed")
    asked = time.time()
    folder = os.open(spec.workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _lock_until(folder, deadline, spec, limit)
        if _build_stamp(spec, sandbox).exists():   # built by another process meanwhile
            return False
        with contextlib.suppress(OSError):
            if failed.stat().st_mtime >= asked:   # the build waited for failed: so does this
                raise BotStartError(spec.name, failed.read_text().strip())
        # Said before a wait that can be long and silent (npm ci, a C++ compile).
        log.info("building %s: %s (a first build can take minutes)", spec.name,
                 " ".join(spec.build))
        try:
            return _build(spec, max(deadline - time.monotonic(), 1.0), sandbox, limit,
                          on_line, write_max_mb)
        except BotStartError as exc:
            failed.parent.mkdir(parents=True, exist_ok=True)
            failed.write_text(exc.reason + "\n")
            raise
    finally:
        os.close(folder)


def _lock_until(lock: int, deadline: float, spec: BotSpec, limit: float) -> None:
    """Take the folder's build lock, waiting for another process's build no later than
    `deadline`: a stuck build elsewhere cannot hold this one up beyond its own time limit."""
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise BotStartError(spec.name, f"build timed out after {limit:.0f} s waiting "
                                               f"for another build of {spec.workdir}") from None
            time.sleep(0.1)


def _build(spec: BotSpec, timeout: float, sandbox: bool, limit: float,
           on_line: OutputListener | None = None,
           write_max_mb: int = DEFAULT_WRITE_MAX_MB) -> bool:
    assert spec.workdir is not None
    argv = [sys.executable if part == "{python}" else part for part in spec.build]
    search = spec.env.get("PATH", os.environ.get("PATH"))
    if shutil.which(argv[0], path=search) is None and not Path(spec.workdir, argv[0]).exists():
        raise BotStartError(spec.name, f"build command not found: {argv[0]}")
    from referee.bots.process import protocol_env

    try:
        if sandbox:
            done = _run_confined(spec, argv, timeout, on_line, write_max_mb)
        else:   # --no-sandbox or sandbox = "none": the organiser trusts this bot
            unconfined = bot_command(argv, {**os.environ, **protocol_env(), **spec.env},
                                     spec.workdir)
            done = _run_guarded(unconfined, timeout, on_line=on_line, watched=[spec.workdir],
                                write_max_mb=write_max_mb)
    except WriteLimitReached:
        raise BotStartError(spec.name, f"build failed: it ran out of its write limit of "
                                       f"{write_max_mb} MiB (what a build may write in its "
                                       f"folder and /tmp together)") from None
    except BuildResultRefused as exc:
        raise BotStartError(spec.name, f"build failed: {exc}") from None
    except subprocess.TimeoutExpired:
        raise BotStartError(spec.name, f"build timed out after {limit:.0f} s "
                                       f"(limits.build_seconds)") from None
    except (uids.UidPoolError, SandboxError) as exc:
        raise BotStartError(spec.name, f"cannot build: {exc}") from None
    except NetworkUnavailable as exc:   # never the host's network instead
        raise BotStartError(spec.name, f"cannot build with build_network = true: no isolated "
                                       f"network for the build: {exc}") from None
    if done.returncode != 0:
        offline = " (it ran without network: `build_network = true` in the spec gives it " \
            "one)" if sandbox and not spec.build_network and wanted_network(done) else ""
        raise BotStartError(spec.name, f"build {' '.join(argv)} failed with exit "
                                       f"{done.returncode}{offline}",
                            lines=failure_tail(done, sandbox))
    # Stamped as the build leaves the directory (with its output), which the next start finds.
    stamp = _build_stamp(spec, sandbox)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(" ".join(argv) + "\n")
    return True


# What a build's output says when it needed a network it did not have: resolver and connection
# errors as npm (EAI_AGAIN), pip (NewConnectionError), Python (gaierror), curl, git, cargo and go
# word them. A compile error says none of these.
_OFFLINE = re.compile(r"EAI_AGAIN|ENOTFOUND|ENETUNREACH|ECONNREFUSED|ETIMEDOUT|getaddrinfo|"
                      r"gaierror|name resolution|resolve host|could not resolve|network is "
                      r"unreachable|no route to host|dial tcp|NewConnectionError|failed to "
                      r"establish a new connection|connection refused|unable to access "
                      r"'https?:", re.I)


def wanted_network(done: subprocess.CompletedProcess[str]) -> bool:
    """Whether a failed build's output looks like a failure to reach the network (then, and
    only then, its error says how to give the build one)."""
    return any(_OFFLINE.search(text or "") for text in (done.stderr, done.stdout))


# A path inside the build's private /tmp: gone with the build, and never the user's to open.
_PRIVATE_TMP = re.compile(r"(?<![\w./-])/tmp(?:/[^\s'\"]*)?")


def failure_tail(done: subprocess.CompletedProcess[str], confined: bool) -> list[str]:
    """The last lines of a failed build's output (its stderr, or its stdout when it wrote no
    errors), ["no output"] for none: the build tool's own error lines (npm's `code
    EAI_AGAIN`, a compiler's message), shown as lines by `referee check`. A confined build's
    paths into its private /tmp (npm's "complete log ... in /tmp/.npm/_logs/...") are said to
    be gone rather than shown."""
    text = done.stderr if (done.stderr or "").strip() else done.stdout or ""
    # Kept as indented as written: a compiler's caret stays under its column.
    lines = [line.rstrip() for line in text.splitlines() if line.strip()][-FAILURE_LINES:]
    if confined:
        # What the sandbox showed in place (its bot folder, bot.proto) may lie under the
        # host's /tmp: such a path is the user's own and stays.
        from referee.bots.sandbox import shown_in_place

        shown = shown_in_place(list(done.args))

        def private(found: re.Match[str]) -> str:
            path = found.group(0)
            if any(path == place or path.startswith(place.rstrip("/") + "/")
                   for place in shown):
                return path
            return "(the build's private /tmp, removed)"

        lines = [_PRIVATE_TMP.sub(private, line) for line in lines]
    return lines or ["no output"]


def _run_confined(spec: BotSpec, argv: list[str], timeout: float,
                  on_line: OutputListener | None = None,
                  write_max_mb: int = DEFAULT_WRITE_MAX_MB) -> subprocess.CompletedProcess[str]:
    """Run the build under the guard in bubblewrap as a uid of its own: as root, in a copy of
    the bot's folder in a size-limited tmpfs, copied back if it succeeds (`_scratch`);
    otherwise in the folder itself (lent to that uid as root), its writes measured."""
    from referee.bots.process import RUN_ID, protocol_env, referee_paths
    from referee.bots.sandbox import NOBODY, bwrap_argv, default_env, prepare_dirs

    assert spec.workdir is not None
    root = os.geteuid() == 0
    lease = uids.lease()
    uid, gid = (lease.uid, lease.gid) if lease else (NOBODY, NOBODY)
    work = Path(tempfile.mkdtemp(prefix="referee-build-"))
    lent: list[tuple[str, int, int]] = []
    try:
        with contextlib.ExitStack() as stack:
            # The network first: if it cannot be isolated, nothing of the bot's runs.
            net = stack.enter_context(isolated_network(work)) if spec.build_network else None
            copied = _scratch(spec.workdir, work, write_max_mb, uid, gid) if root else None
            scratch_dir = copied[0] if copied else None
            tmp = (scratch_dir or work) / "tmp"
            if root:
                prepare_dirs(tmp, uid=uid, gid=gid)
                if scratch_dir is None:
                    lent = _lend(spec.workdir, uid, gid)
            else:
                tmp.mkdir()
            env = {**default_env(), **protocol_env(), **spec.env, "REFEREE_RUN_ID": RUN_ID}
            confined = bwrap_argv(argv, bot_dir=spec.workdir, tmp_dir=tmp, socket_dir=None,
                                  env=env, memory_mb=BUILD_MEMORY_MB, cpu_seconds=None,
                                  max_processes=BUILD_MAX_PROCESSES, uid=uid, gid=gid,
                                  max_file_mb=write_max_mb,
                                  writable_bot_dir=True, ro_paths=referee_paths(),
                                  netns=net.path if net else None,
                                  resolv_conf=net.resolv_conf if net else None,
                                  bot_source=scratch_dir / "bot" if scratch_dir else None)
            done = _run_guarded(confined, timeout, env={"REFEREE_RUN_ID": RUN_ID},
                                on_line=on_line,
                                watched=None if scratch_dir else [spec.workdir, tmp],
                                write_max_mb=write_max_mb)
            if copied is not None:
                _take_result(spec.workdir, *copied, done)
            return done
    finally:
        if root and lent:
            _give_back(spec.workdir, lent)
        if root:
            open_to_bot(spec.workdir)   # what the build made, under any umask, for the bot
        scratch.release_instance_dir(work / "scratch")
        shutil.rmtree(work, ignore_errors=True)
        if lease:
            lease.release()


def _scratch(folder: Path, work: Path, write_max_mb: int, uid: int,
             gid: int) -> tuple[Path, scratch.Given] | None:
    """A tmpfs at `work`/scratch the size of the bot's folder plus `write_max_mb` MiB (and as
    many inodes as its entries plus one per 4 KiB of the limit), holding a copy of the folder
    in `bot/` owned by the build's uid, and what was copied; None where it cannot be mounted
    (the caller falls back to measuring). BuildResultRefused if the folder cannot be copied
    whole (a path too long)."""
    place = work / "scratch"
    place.mkdir()
    try:
        size, count = scratch.measure(folder, place / "bot")
    except scratch.TreeError as exc:
        raise BuildResultRefused(f"the bot's folder holds {exc}") from None
    limit = write_max_mb * diskwatch.MIB
    if not scratch.mount_bounded(place, size + limit, count + scratch.inodes_for(limit) + 16):
        return None
    return place, scratch.copy_in(folder, place / "bot", uid, gid)


def _take_result(folder: Path, place: Path, given: scratch.Given,
                 done: subprocess.CompletedProcess[str]) -> None:
    """After a build in the scratch tmpfs `place`: WriteLimitReached if it filled it (or
    failed saying it had no space left); else, if it succeeded, its folder copied back
    (`scratch.copy_back`, normalised). A failed build leaves the bot's folder as it was."""
    if scratch.full(place) or (done.returncode != 0 and
                               scratch.no_space(f"{done.stdout}\n{done.stderr}")):
        raise WriteLimitReached
    if done.returncode != 0:
        return
    st = os.statvfs(place)
    try:
        scratch.copy_back(place / "bot", folder, given, st.f_blocks * st.f_frsize)
    except scratch.WrittenTooMuch:
        raise WriteLimitReached from None
    except scratch.TreeError as exc:
        raise BuildResultRefused(f"the build left {exc}") from None


def _run_guarded(argv: list[str], timeout: float, *, env: dict[str, str] | None = None,
                 on_line: OutputListener | None = None, watched: list[Path] | None = None,
                 write_max_mb: int = DEFAULT_WRITE_MAX_MB) -> subprocess.CompletedProcess[str]:
    """Run `argv` (a trusted program, by its absolute path; `env` holds the referee's settings
    for it, never a spec's variables) under the guard, from a fixed working directory, for at
    most `timeout` seconds, every process it starts
    included: at the limit the guard is told to stop (SIGTERM: it ends every descendant, then
    SIGKILLs what is left after BUILD_GRACE), and is killed itself if it does not. (The disk
    watch goes on meanwhile; if this process dies, the guard kills the build at once.)
    Each output line goes to `on_line` as it is written. TimeoutExpired if the limit was
    reached; WriteLimitReached (after the same stop) if the `watched` folders grew by more
    than `write_max_mb` MiB."""
    command, guard_env = guarded(argv, env, BUILD_GRACE)
    with subprocess.Popen(command, cwd=TRUSTED_CWD, env=guard_env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", start_new_session=True) as process:
        # The last lines only: a build that floods its output cannot fill the referee's memory.
        captured: dict[str, deque[str]] = {"stdout": deque(maxlen=KEPT_LINES),
                                           "stderr": deque(maxlen=KEPT_LINES)}

        def read(name: str, stream: IO[str]) -> None:
            for line in iter(lambda: stream.readline(8192), ""):   # a long line in pieces
                captured[name].append(line)
                if on_line is not None:
                    on_line(name, line.rstrip("\n"))

        readers = [threading.Thread(target=read, args=(name, stream), daemon=True)
                   for name, stream in (("stdout", process.stdout), ("stderr", process.stderr))]
        for reader in readers:
            reader.start()
        # At the write limit every process of the build is killed at once, no grace: each
        # moment more is written. The guard's process group goes, and with the guard the
        # sandbox (bwrap dies with its parent, and its pid namespace with it).
        watch = DiskWatch(watched or [], write_max_mb, lambda: _kill_group(process.pid))
        if watched is not None:   # no kernel bound on these folders: measured
            watch.start()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=BUILD_GRACE + 10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            raise
        finally:
            # The guard is gone, and with it every process that held the pipes: they end.
            for reader in readers:
                reader.join(timeout=BUILD_GRACE + 10)
            watch.close()
    if watch.over:
        raise WriteLimitReached
    return subprocess.CompletedProcess(argv, process.returncode, "".join(captured["stdout"]),
                                       "".join(captured["stderr"]))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _tree(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every path below `folder` (itself included) with its lstat; symlinks are not followed."""
    yield str(folder), os.lstat(folder)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in (*dirnames, *filenames):
            path = os.path.join(dirpath, name)
            try:
                yield path, os.lstat(path)
            except FileNotFoundError:
                continue


def _shared(st: os.stat_result) -> bool:
    """A non-directory with more than one hard link: it may be a file outside the folder."""
    return st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode)


def _lend(folder: Path, uid: int, gid: int) -> list[tuple[str, int, int]]:
    """Chown the folder's tree to the build's uid; return each path's previous owner."""
    lent = []
    for path, st in _tree(folder):
        if _shared(st):
            continue
        os.chown(path, uid, gid, follow_symlinks=False)
        lent.append((path, st.st_uid, st.st_gid))
    return lent


def _give_back(folder: Path, lent: list[tuple[str, int, int]]) -> None:
    """Chown what was lent back to its owner, and what the build created to the folder's."""
    before = {path: (owner, group) for path, owner, group in lent}
    default = before.get(str(folder), (os.getuid(), os.getgid()))
    for path, st in _tree(folder):
        owner = before.get(path, default)
        if (st.st_uid, st.st_gid) != owner and not (_shared(st) and path not in before):
            os.chown(path, *owner, follow_symlinks=False)

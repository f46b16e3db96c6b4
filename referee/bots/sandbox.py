"""Build bubblewrap (``bwrap``) command lines that confine an untrusted command bot.

The sandbox gives the bot:

* no network: a private network namespace holding only a down loopback
  interface.  The referee talks to the bot only through a Unix socket that the bot
  creates in ``socket_dir``, which is bind-mounted read-write at the same path;
* a read-only view of the system (``/usr`` plus merged-usr symlinks, a small
  subset of ``/etc``), of the referee's own interpreter prefixes (its venv and,
  for example, a pyenv Python under ``/root/.pyenv``, without exposing the rest
  of ``/root``), of any ``ro_paths`` given, and of the bot's own directory (at its
  real path). These are fixed: nothing a spec says (its program, its ``PATH``)
  adds a bind, and every bind source is refused (`SandboxError`) if it is reached
  through a symbolic link or overlaps the club server's data folder (but for the
  bot's own folder, which lies in it);
* a private writable ``/tmp`` (``tmp_dir`` bound there) and nothing else writable
  but ``socket_dir``;
* fresh PID, IPC, UTS and cgroup namespaces, a minimal ``/dev`` and a ``/proc``
  that shows only the sandbox's processes; a new session (no TTY injection) and
  death when its parent dies;
* an unprivileged uid/gid (65534 by default) with every capability dropped and
  ``no_new_privs`` set;
* resource limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_NPROC``,
  ``RLIMIT_FSIZE``, ``RLIMIT_CORE=0``) set by ``prlimit`` just before the bot runs;
* its environment (a spec's variables) set by ``env -i`` as the very last step, so that
  neither bwrap nor setpriv nor prlimit ever sees a spec's ``LD_PRELOAD`` or ``PATH``; every
  program of those steps is named by its absolute path in the system's folders.

How the uid is dropped depends on who runs the referee:

* **as root** (CI, the tournament host): bwrap runs in its "privileged" mode
  *without* a user namespace, and ``setpriv`` switches to the real (host) uid
  ``uid``.  This matters for ``RLIMIT_NPROC``: the kernel counts it per real uid
  and never enforces it for processes whose real uid is host root.  With
  ``--unshare-all`` (which, as root, adds a user namespace mapping the sandbox uid
  to host uid 0) a fork bomb is *not* stopped by ``--nproc``.  Because the count
  is per host uid, give concurrently running bots distinct uids if they must not
  share one process budget.
* **as an ordinary user**: ``--unshare-all`` with ``--uid``/``--gid`` inside a
  user namespace (the only way bwrap can work unprivileged).  The bot's processes
  then count against the calling user's ``RLIMIT_NPROC`` total.

The caller prepares the directories: ``tmp_dir`` and ``socket_dir`` must be
writable by ``uid`` (e.g. ``os.chown`` them; see :func:`prepare_dirs`) and the
bot's files readable by it.  Unix socket paths are limited to 107 bytes, so keep
``socket_dir`` short.

``--die-with-parent`` uses ``PR_SET_PDEATHSIG``, which fires when the *thread*
that started bwrap exits: spawn sandboxes from a long-lived thread (e.g. the main
thread or the event loop thread), not from a short-lived worker thread.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from referee.errors import UserError
from referee.util.trusted import ProgramMissing, bot_command, system_program

__all__ = [
    "NOBODY",
    "SandboxError",
    "bwrap_argv",
    "bwrap_program",
    "default_env",
    "prepare_dirs",
    "sandbox_available",
]

NOBODY = 65534
# The club server's data folder (`referee serve` sets it for its runner and all it starts): no
# bot may see it. Defined here, where it is enforced; the server reads it from here.
DATA_ENV = "REFEREE_SERVER_DATA"
# The organiser's choice of the bubblewrap program (a path), for a machine where the one on
# PATH is not the one to use; set by whoever starts the referee, never by a spec.
BWRAP_ENV = "REFEREE_BWRAP"

# Top-level directories that are (on merged-usr systems) symlinks into /usr, or
# real directories on older layouts.
_USR_ALIASES = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# The part of /etc that a Python or Node program may reasonably look at.  Missing
# entries are skipped (``--ro-bind-try``).  /etc/shadow and friends are absent.
_ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/alternatives",
    "/etc/python3",
    "/etc/python3.11",
)

# The environment of the sandbox's own steps before the bot's program (setpriv, prlimit, env).
STEP_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

# Paths already visible through the /usr bind (or the aliases above).
_SYSTEM_PREFIXES = ("/usr", *_USR_ALIASES)


def default_env(**extra: str) -> dict[str, str]:
    """A minimal environment for a sandboxed bot (``HOME`` is the private /tmp)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        # glibc reserves 64 MiB of address space per malloc arena (up to 8 per
        # core); with many gRPC threads that eats an RLIMIT_AS budget quickly.
        "MALLOC_ARENA_MAX": "2",
    }
    env.update(extra)
    return env


def bwrap_program() -> str:
    """The bubblewrap program: $REFEREE_BWRAP (the organiser's choice) if set, else `bwrap`.
    A path that does not exist or cannot start means no sandbox (`sandbox_available`)."""
    return os.environ.get(BWRAP_ENV) or "bwrap"


def prepare_dirs(*dirs: Path, uid: int = NOBODY, gid: int = NOBODY, mode: int = 0o700) -> None:
    """Make ``dirs`` (a bot's tmp and socket directories) owned by the sandbox user."""
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
        os.chown(d, uid, gid)
        os.chmod(d, mode)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _is_system_path(path: str) -> bool:
    return any(_under(path, p) for p in _SYSTEM_PREFIXES)


class SandboxError(UserError):
    """A bind the sandbox refuses: its source is reached through a symbolic link, is not a
    folder or file, or lies in (or holds) the server's data folder (the message says which)."""


def runtime_prefixes() -> list[str]:
    """The referee's own interpreter prefixes outside /usr (a venv and the Python it was made
    from, e.g. under ``/root/.pyenv``), symlinks resolved: chosen by the host that runs the
    referee, never by a spec. With /usr and its aliases they are the system's runtime."""
    out: list[str] = []
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        real = os.path.realpath(prefix)
        if real != "/" and not _is_system_path(real) and real not in out:
            out.append(real)
    return out


def in_runtime(path: str) -> bool:
    """Whether the absolute `path` lies in the system's runtime (/usr and its aliases, the
    referee's interpreter prefixes) both as written and with every symlink resolved: a link
    (or a `..`) cannot lead a path that looks like the runtime's elsewhere, nor the reverse."""
    roots = [*_SYSTEM_PREFIXES, *runtime_prefixes()]
    lexical = os.path.normpath(path)
    return os.path.isabs(path) and any(_under(lexical, r) for r in roots) and \
        any(_under(os.path.realpath(path), r) for r in roots)


def protected_folder() -> str | None:
    """The club server's data folder ($REFEREE_SERVER_DATA, set by `referee serve` for its
    runner and everything it starts), or None outside a server."""
    given = os.environ.get(DATA_ENV)
    return os.path.realpath(given) if given else None


def checked_source(path: str, what: str, *, may_be_in_data: bool = False) -> str:
    """`path` (absolute) if the sandbox may bind it; SandboxError otherwise. A bind source must
    be a folder or file reached without any symbolic link (bwrap follows links in sources, and
    a link in a bot's folder is the bot's to make), and must neither lie in nor hold the
    server's data folder, but for the bot's own folder and the referee's private /tmp and
    socket folders (`may_be_in_data`), which lie in it on a club server."""
    real = os.path.realpath(path)
    if real != path:
        raise SandboxError(f"{what} {path} is reached through a symbolic link (to {real}): "
                           f"not shown in the sandbox")
    if not (os.path.isdir(path) or os.path.isfile(path)):
        raise SandboxError(f"{what} {path} is not a folder or a file")
    data = protected_folder()
    if data is not None and (_under(data, path) or (_under(path, data) and not may_be_in_data)):
        raise SandboxError(f"{what} {path} overlaps the server's data folder: not shown in "
                           f"the sandbox")
    return path


def _mount_order_key(dest: str) -> int:
    # Parents before children so that later binds are not hidden by earlier ones.
    return dest.rstrip("/").count("/")


def shown_in_place(cmd: list[str]) -> list[str]:
    """The host paths a command line made by `bwrap_argv` shows at the same path inside (its
    binds, the private /tmp aside): the bot's folder, the interpreter, the referee's files."""
    shown = []
    for at, word in enumerate(cmd):
        if word == "--chdir":          # the last option before the confined command
            break
        # (a build's folder is bound from its copy in a scratch tmpfs, at the folder's path)
        if word in ("--bind", "--ro-bind", "--ro-bind-try") and cmd[at + 2] != "/tmp" \
                and (cmd[at + 1] == cmd[at + 2] or word == "--bind"):
            shown.append(cmd[at + 2])
    return shown


def bwrap_argv(
    argv: Sequence[str],
    *,
    bot_dir: Path,
    tmp_dir: Path,
    socket_dir: Path | None,
    env: Mapping[str, str],
    memory_mb: int | None,
    cpu_seconds: int | None,
    max_processes: int | None,
    uid: int = NOBODY,
    gid: int = NOBODY,
    ro_paths: Sequence[Path] = (),
    max_file_mb: int | None = None,
    privileged: bool | None = None,
    bwrap: str | None = None,
    writable_bot_dir: bool = False,
    netns: str | None = None,
    resolv_conf: Path | None = None,
    bot_source: Path | None = None,
) -> list[str]:
    """Return a command line that runs ``argv`` confined by bubblewrap.

    ``memory_mb`` limits the address space (``RLIMIT_AS``) of each process,
    ``cpu_seconds`` the CPU time of each process (SIGXCPU at the limit, SIGKILL one
    second later), ``max_processes`` the number of processes *and threads* of the
    sandbox uid (``RLIMIT_NPROC``; gRPC servers use a dozen threads or more).
    ``max_file_mb`` bounds the size of any single file written.  ``None`` leaves a
    limit unset.  ``ro_paths`` are extra host paths exposed read-only at the same
    path (e.g. a shared ``node_modules`` or an SDK package directory).

    ``privileged`` selects how the uid is dropped (see the module docstring); by
    default it is ``True`` when the caller is root.

    For a build (``referee.bots.build``): ``writable_bot_dir`` binds the bot's directory
    read-write, ``socket_dir`` may be None, and ``netns`` (the path of a network namespace
    made by ``referee.bots.netns.isolated_network``, root only) runs the sandbox in that
    namespace instead of a new empty one, showing ``resolv_conf`` as ``/etc/resolv.conf``.
    The sandbox never shares the host's network namespace. ``bot_source``, if given, is
    bound at ``bot_dir``'s path instead of ``bot_dir`` itself (a build's copy of the folder in
    a size-limited scratch tmpfs, ``referee.bots.scratch``).
    """
    if not argv:
        raise ValueError("argv must not be empty")
    if privileged is None:
        privileged = os.geteuid() == 0
    bot = os.path.abspath(bot_dir)
    source = os.path.abspath(bot_source) if bot_source is not None else bot
    tmp = os.path.abspath(tmp_dir)
    sock = os.path.abspath(socket_dir) if socket_dir is not None else None

    bwrap = system_program(bwrap or bwrap_program())
    cmd: list[str] = [bwrap]
    if netns is not None:
        if not privileged:
            raise ValueError("a network namespace of its own needs the privileged mode (root)")
        cmd = [system_program("nsenter"), f"--net={netns}", "--", bwrap]
    if privileged:
        # Every namespace but the user one: as root, --unshare-all would add a user
        # namespace mapping the sandbox uid to host root, which defeats
        # RLIMIT_NPROC and makes setpriv unable to switch to a real host uid.
        cmd += [] if netns is not None else ["--unshare-net"]
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-uts"]
        cmd += ["--unshare-cgroup-try"]
    else:
        cmd += ["--unshare-all", "--unshare-user", "--uid", str(uid), "--gid", str(gid)]
        cmd += ["--disable-userns"]
    cmd += ["--die-with-parent", "--new-session", "--hostname", "bot"]

    # The sandbox's own steps (setpriv, prlimit; setpriv as root) run with a fixed environment
    # of the referee's; `env` (a spec's variables among them) is set only for the bot's
    # program, by `env -i` after them (`bot_command`).
    cmd += ["--clearenv"]
    for key, value in STEP_ENV.items():
        cmd += ["--setenv", key, value]

    # System, read-only.
    cmd += ["--ro-bind", "/usr", "/usr"]
    for alias in _USR_ALIASES:
        if os.path.islink(alias):
            cmd += ["--symlink", os.readlink(alias), alias]
        elif os.path.isdir(alias):
            cmd += ["--ro-bind", alias, alias]
    # Missing parents of mount points are created 0700 by bwrap: make /etc 0755.
    cmd += ["--perms", "0755", "--dir", "/etc"]
    for path in _ETC_FILES:
        cmd += ["--ro-bind-try", path, path]
    if resolv_conf is not None:
        cmd += ["--ro-bind", os.path.abspath(resolv_conf), "/etc/resolv.conf"]
    cmd += ["--proc", "/proc", "--dev", "/dev"]

    # Private writable /tmp first: the binds below may live under /tmp on the host
    # and must be mounted on top of it, not hidden by it.
    cmd += ["--bind", tmp, "/tmp"]

    # Only fixed, trusted paths are shown besides the bot's folder: nothing a spec names (its
    # program, its PATH) decides a bind, and every source is checked (`checked_source`).
    ro: list[str] = []
    for p in (*runtime_prefixes(), *(os.path.abspath(x) for x in ro_paths)):
        if p not in ro and not _is_system_path(p) and not _under(p, bot):
            ro.append(checked_source(p, "the read-only path"))
    if bot == "/":
        raise SandboxError("the bot's folder is the host's root: not shown in the sandbox")
    checked_source(bot, "the bot's folder", may_be_in_data=True)
    if source != bot:
        checked_source(source, "the copy of the bot's folder", may_be_in_data=True)
    # The referee makes these (mkdtemp), in its TMPDIR, which `referee serve` puts in its data
    # folder: they may lie in it, never hold it.
    checked_source(tmp, "the private /tmp", may_be_in_data=True)
    if sock is not None:
        checked_source(sock, "the socket folder", may_be_in_data=True)
    # bwrap creates missing parents of a mount point with mode 0700, which the
    # sandbox user could not traverse: create them 0755 first.
    read_only = ["/usr", *_USR_ALIASES, "/etc"]
    made: set[str] = {"/tmp", "/proc", "/dev"}

    def parents(dest: str) -> list[str]:
        out: list[str] = []
        for anc in reversed(Path(dest).parents):
            a = str(anc)
            if a == "/" or a in made or any(_under(a, r) for r in read_only):
                continue
            made.add(a)
            out += ["--perms", "0755", "--dir", a]
        return out

    for p in sorted(ro, key=_mount_order_key):
        cmd += [*parents(p), "--ro-bind", p, p]
        read_only.append(p)
    cmd += [*parents(bot), "--bind" if writable_bot_dir else "--ro-bind", source, bot]
    read_only.append(bot)
    if sock is not None:
        cmd += [*parents(sock), "--bind", sock, sock]
    cmd += ["--chdir", bot]
    cmd += ["--"]

    if privileged:
        cmd += [
            system_program("setpriv"),
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    limits = ["--core=0"]
    if memory_mb is not None:
        limits.append(f"--as={memory_mb * 1024 * 1024}")
    if cpu_seconds is not None:
        limits.append(f"--cpu={cpu_seconds}:{cpu_seconds + 1}")
    if max_processes is not None:
        limits.append(f"--nproc={max_processes}")
    if max_file_mb is not None:
        limits.append(f"--fsize={max_file_mb * 1024 * 1024}")
    cmd += [system_program("prlimit"), *limits, "--", *bot_command(argv, env)]
    return cmd


@functools.cache
def sandbox_available() -> bool:
    """True if bwrap is installed and a trivial sandbox actually runs here (cached)."""
    privileged = os.geteuid() == 0
    needed = [bwrap_program(), "prlimit", "env", *(["setpriv"] if privileged else [])]
    try:
        for program in needed:
            system_program(program)
    except ProgramMissing:
        return False
    with tempfile.TemporaryDirectory(prefix="sbx-probe-") as root:
        base = Path(root)
        os.chmod(base, 0o755)
        bot, tmp, sock = base / "bot", base / "tmp", base / "sock"
        bot.mkdir(mode=0o755)
        if privileged:
            prepare_dirs(tmp, sock)
        else:
            tmp.mkdir()
            sock.mkdir()
        cmd = bwrap_argv(
            ["true"],
            bot_dir=bot,
            tmp_dir=tmp,
            socket_dir=sock,
            env=default_env(),
            memory_mb=256,
            cpu_seconds=5,
            max_processes=64,
        )
        try:
            res = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return False
        return res.returncode == 0

"""Build bubblewrap (``bwrap``) command lines that confine an untrusted command bot.

The sandbox gives the bot:

* no network: a private network namespace holding only a down loopback
  interface.  The referee talks to the bot only through a Unix socket that the bot
  creates in ``socket_dir``, which is bind-mounted read-write at the same path;
* a read-only view of the system (``/usr`` plus merged-usr symlinks, a small
  subset of ``/etc``), of the interpreter prefix the bot is started with (for
  example a pyenv Python under ``/root/.pyenv``, without exposing the rest of
  ``/root``), of any ``ro_paths`` given, and of the bot's own directory (at its
  real path);
* a private writable ``/tmp`` (``tmp_dir`` bound there) and nothing else writable
  but ``socket_dir``;
* fresh PID, IPC, UTS and cgroup namespaces, a minimal ``/dev`` and a ``/proc``
  that shows only the sandbox's processes; a new session (no TTY injection) and
  death when its parent dies;
* an unprivileged uid/gid (65534 by default) with every capability dropped and
  ``no_new_privs`` set;
* resource limits (``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_NPROC``,
  ``RLIMIT_FSIZE``, ``RLIMIT_CORE=0``) set by ``prlimit`` just before the bot runs.

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
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "NOBODY",
    "bwrap_argv",
    "default_env",
    "prepare_dirs",
    "sandbox_available",
]

NOBODY = 65534

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


def _interpreter_paths(argv0: str, search_path: str | None) -> list[str]:
    """Directories to expose read-only so that ``argv0`` can run inside the sandbox.

    For an executable outside /usr (e.g. ``/root/.pyenv/versions/3.11.7/bin/python``)
    this is its installation prefix (the parent of its ``bin`` directory), taken
    both for the path as given and for its symlink-resolved target; for a venv
    interpreter also the venv directory (found by its ``pyvenv.cfg``).  pyenv's
    shims are bash scripts that need all of ``~/.pyenv``: pass the real interpreter
    (``sys.executable``) instead.
    """
    exe = argv0 if "/" in argv0 else shutil.which(argv0, path=search_path)
    if exe is None:
        return []
    exe = os.path.abspath(exe)
    out: list[str] = []
    for candidate in (exe, os.path.realpath(exe)):
        if _is_system_path(candidate):
            continue
        parent = os.path.dirname(candidate)
        prefix = os.path.dirname(parent) if os.path.basename(parent) == "bin" else parent
        if prefix in ("", "/"):
            prefix = parent
        if prefix not in out and prefix != "/":
            out.append(prefix)
    return out


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
        if word in ("--bind", "--ro-bind", "--ro-bind-try") and cmd[at + 1] == cmd[at + 2] \
                and cmd[at + 2] != "/tmp":
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
    bwrap: str = "bwrap",
    writable_bot_dir: bool = False,
    netns: str | None = None,
    resolv_conf: Path | None = None,
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
    The sandbox never shares the host's network namespace.
    """
    if not argv:
        raise ValueError("argv must not be empty")
    if privileged is None:
        privileged = os.geteuid() == 0
    bot = os.path.abspath(bot_dir)
    tmp = os.path.abspath(tmp_dir)
    sock = os.path.abspath(socket_dir) if socket_dir is not None else None

    cmd: list[str] = [bwrap]
    if netns is not None:
        if not privileged:
            raise ValueError("a network namespace of its own needs the privileged mode (root)")
        cmd = ["nsenter", f"--net={netns}", "--", bwrap]
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

    cmd += ["--clearenv"]
    for key, value in env.items():
        if not key or "=" in key:
            raise ValueError(f"invalid environment variable name: {key!r}")
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

    ro: list[str] = []
    for p in (
        *_interpreter_paths(argv[0], env.get("PATH")),
        *(os.path.abspath(x) for x in ro_paths),
    ):
        if p not in ro and not _is_system_path(p) and not _under(p, bot):
            ro.append(p)
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
    cmd += [*parents(bot), "--bind" if writable_bot_dir else "--ro-bind", bot, bot]
    read_only.append(bot)
    if sock is not None:
        cmd += [*parents(sock), "--bind", sock, sock]
    cmd += ["--chdir", bot]
    cmd += ["--"]

    if privileged:
        cmd += [
            "setpriv",
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
    cmd += ["prlimit", *limits, "--", *argv]
    return cmd


@functools.cache
def sandbox_available() -> bool:
    """True if bwrap is installed and a trivial sandbox actually runs here (cached)."""
    if shutil.which("bwrap") is None or shutil.which("prlimit") is None:
        return False
    privileged = os.geteuid() == 0
    if privileged and shutil.which("setpriv") is None:
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

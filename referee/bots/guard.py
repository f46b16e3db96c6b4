"""A tiny supervisor between the referee and a bot process: no bot process outlives the referee.

Run as `python -I .../referee/bots/guard.py [--grace S] [--remove-dir DIR] [--on-exit CMD]
[--no-subreaper] -- COMMAND...` (`guarded` makes that command line: an isolated interpreter, from
a fixed working directory, with the referee's own environment; a bot's folder, program lookup
and variables reach only the COMMAND, through `referee.util.trusted.bot_command`). The guard

* asks the kernel to send it SIGTERM when the referee dies (PR_SET_PDEATHSIG), even by SIGKILL;
* becomes a child subreaper, so every descendant of the bot that is orphaned becomes its child
  (a bot cannot escape by double-forking or by starting a new session);
* on SIGTERM, or when the bot's main process exits, sends SIGTERM to every remaining
  descendant, waits `--grace` seconds (none when the referee is gone: nothing watches them
  any more), sends SIGKILL to what is left and reaps it all, so that
  when the guard exits nothing below it runs (but a process stuck in the kernel for more than
  KILL_WAIT seconds);
* then, with `--remove-dir DIR`, unmounts DIR if it is a size-limited scratch folder and removes
  it (`referee.bots.scratch.release_instance_dir`; the bot instance's socket directory), after
  any `--on-exit` command: so nothing is left in the temp directory even when the referee is
  killed and cannot remove it itself. When the bot ended by itself with DIR full, its output
  gets a line saying it ran out of its write limit.

Options for a COMMAND that is a container client (`podman run`, `docker run`), whose container
lives on outside this process tree:

* `--on-exit CMD` runs CMD (split like a shell would, no shell) once everything is terminated,
  for at most `--on-exit-timeout` seconds (default 10), with its stdout discarded; e.g.
  `podman rm -f -t 0 NAME`, so that the container goes too when the referee dies;
* `--no-subreaper` does not make the guard a subreaper: podman's conmon daemonises, and as a
  subreaper the guard would adopt it and SIGTERM it along with the client.

It exits with the bot's exit status (128 + signal number if the bot was killed by a signal).
It imports only the standard library and starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
KILL_WAIT = 5.0     # seconds the guard waits at most for SIGKILLed descendants to go
PARENT_ENV = "REFEREE_GUARD_PARENT"   # the pid the guard watches: if it is gone, nothing runs
# The autogroup nice of a session the guard leads (referee.server.priority: the club's season
# runs below its pages; a new session would otherwise start again at nice 0).
AUTOGROUP_NICE_ENV = "REFEREE_AUTOGROUP_NICE"


class _Stop(Exception):
    pass


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def _children() -> list[int]:
    """Pids of this process's children (descendants re-parented to us included)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == me:
            found.append(int(entry))
    return found


def _lower_session(nice: str) -> None:
    """Set the autogroup nice of the session this process leads (if it leads one)."""
    if nice and os.getsid(0) == os.getpid():
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as handle:
            handle.write(nice)


def _reap() -> tuple[int, int] | None:
    """Reap one exited child without blocking: (pid, status), or None."""
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return None
    return (pid, status) if pid else None


def _signal_all(sig: int, skip: set[int] | None = None) -> set[int]:
    """Send `sig` to every child not in `skip`; return the pids signalled."""
    sent = set()
    for pid in _children():
        if skip is not None and pid in skip:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        sent.add(pid)
    return sent


def terminate_descendants(grace: float) -> None:
    """SIGTERM every descendant, wait up to `grace` seconds, SIGKILL the rest, reap them all."""
    termed = _signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        while _reap():
            pass
        if not _children():
            return
        # Descendants orphaned since (a bot's daemon whose parent just died, re-parented to us
        # as the subreaper) get their SIGTERM now rather than a SIGKILL after the whole grace.
        termed |= _signal_all(signal.SIGTERM, skip=termed)
        time.sleep(0.02)
    # Until every descendant is reaped (re-parented ones are caught on a later pass): whoever
    # waits for the guard knows then that nothing of it runs. Bounded, for a process stuck in
    # the kernel that no signal ends.
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline:
        _signal_all(signal.SIGKILL)
        while _reap():
            pass
        if not _children():
            return
        time.sleep(0.01)


def orphaned(parent: int) -> bool:
    """Whether `parent`, the process whose death ends the guard, is gone (we were re-parented).
    Then nobody waits for a graceful end, and whatever the guarded processes did meanwhile
    (write to disk, say) nobody watches: they are killed at once, without the grace."""
    return bool(parent) and os.getppid() != parent


def run_on_exit(command: str, timeout: float) -> None:
    """Run `command` (shell-like words, no shell) for at most `timeout` seconds; never raise."""
    try:
        subprocess.run(shlex.split(command), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       timeout=timeout, check=False)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        os.write(2, f"guard: --on-exit {command!r} failed: {exc}\n".encode())


def guarded(argv: list[str], extra_env: Mapping[str, str] | None = None, grace: float = 2.0,
            options: Sequence[str] = ()) -> tuple[list[str], dict[str, str]]:
    """`argv` (a trusted program by its absolute path: bwrap, `env`, the referee) run under the
    guard, with `grace` and guard `options`: (command, environment). Start it with its working
    directory at `referee.util.trusted.TRUSTED_CWD`. The environment is the referee's own
    (`trusted_env`) with `extra_env` (the referee's settings, never a spec's variables) and
    what tells the guard that this process is the one whose death ends it."""
    from referee.util.trusted import python_script, trusted_env  # not in the guard's own start

    command = python_script(__file__, "--grace", str(grace), *options, "--", *argv)
    return command, trusted_env({**(extra_env or {}), PARENT_ENV: str(os.getpid())})


USAGE = ("usage: python -m referee.bots.guard [--grace S] [--remove-dir DIR] [--on-exit CMD] "
         "[--on-exit-timeout S] [--no-subreaper] -- COMMAND...")


def main(argv: list[str]) -> int:
    grace = 2.0
    on_exit = ""
    on_exit_timeout = 10.0
    remove_dir = ""
    subreaper = True
    try:
        while argv and argv[0] != "--" and argv[0].startswith("--"):
            option = argv.pop(0)
            if option == "--no-subreaper":
                subreaper = False
            elif option == "--grace":
                grace = float(argv.pop(0))
            elif option == "--on-exit":
                on_exit = argv.pop(0)
            elif option == "--on-exit-timeout":
                on_exit_timeout = float(argv.pop(0))
            elif option == "--remove-dir":
                remove_dir = argv.pop(0)
            else:
                raise ValueError(option)
    except (IndexError, ValueError):
        print(USAGE, file=sys.stderr)
        return 2
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    parent = int(os.environ.pop(PARENT_ENV, "0") or 0)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent and os.getppid() != parent:  # the referee died before we could watch it
        return 1
    if subreaper:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _lower_session(os.environ.get(AUTOGROUP_NICE_ENV, "").strip())

    def stop(signum: int, frame: object) -> None:
        # Once: a second signal must not raise again while the bot is being cleaned up.
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        raise _Stop()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    status = 0
    stopped = False
    try:
        child = os.fork()
        if child == 0:  # the bot: dies with the guard even if the guard is SIGKILLed
            try:
                for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                os.execvp(argv[0], argv)
            except OSError as exc:
                os.write(2, f"cannot run {argv[0]!r}: {exc.strerror}\n".encode())
            os._exit(127)
        while True:
            pid, wait_status = os.waitpid(-1, 0)
            if pid == child:
                status = os.waitstatus_to_exitcode(wait_status)
                break
    except _Stop:
        stopped = True
    except ChildProcessError:
        pass
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    if remove_dir and not stopped:
        _say_if_full(remove_dir)
    terminate_descendants(0.0 if orphaned(parent) else grace)
    if on_exit:
        run_on_exit(on_exit, on_exit_timeout)
    if remove_dir:
        # Here, not at the top: the guard starts on every bot start. Unmounted first (a
        # size-limited instance folder), then removed.
        _own_package_importable()
        from referee.bots.scratch import release_instance_dir

        release_instance_dir(remove_dir)
    return 128 - status if status < 0 else status


def _own_package_importable() -> None:
    """Put the folder that holds this file's `referee` package on the module path: the guard
    runs isolated (`python -I`), and takes the referee's modules from where it lies itself,
    never from its working directory or the environment."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.insert(0, root)


def _say_if_full(folder: str) -> None:
    """Tell the bot's log (this process's stdout) that the bot ended with its size-limited
    instance folder full: its writes failed for want of space. (When the referee stops the
    bot, the referee says it, before the bot's processes and the files they hold go.)"""
    _own_package_importable()
    from referee.bots.scratch import full_note

    note = full_note(folder)
    if note:
        with contextlib.suppress(OSError):
            os.write(1, note.encode())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

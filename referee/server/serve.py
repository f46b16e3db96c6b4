"""`referee serve`: the club server's processes, the web workers and the season runner.

The supervisor prepares the data folder (migrations, the organiser's account on the first
start), then runs the web workers (uvicorn serving the ASGI app, each on a listening socket of
its own: referee.server.web) and the runner as child processes in sessions of their own,
restarts the runner when it dies, and on Ctrl-C or SIGTERM asks them all to stop and waits for
them. It never plays a game or serves a page itself.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from referee.bots.guard import AUTOGROUP_NICE_ENV, guarded
from referee.bots.sandbox import DATA_ENV
from referee.errors import UserError
from referee.server.connections import HEAD_TIMEOUT_S, connection_cap, open_files_target
from referee.server.hostcheck import INSTALL_ALL, host_problems
from referee.server.hostcheck import save as save_host_check
from referee.server.priority import CpuGroup, season_group, web_group
from referee.server.shared.clubfolder import ClubFolder
from referee.server.shared.seasonfile import write_default
from referee.util.trusted import python_module

STOP_WAIT_S = 120          # games in flight may finish; then the children are killed
RESTART_DELAYS_S = (1, 2, 5, 10, 30)
ORGANISER = "organiser"
RUNNER_REFUSED = 2   # the runner's status for a season file it cannot use: restarting won't help


@dataclass
class ServeOptions:
    data: Path
    season: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    cluster: str | None = None
    behind_proxy: bool = False
    trusted_origins: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    workers: int = field(default_factory=lambda: default_workers())

    @property
    def season_file(self) -> Path:
        return (self.season or ClubFolder(self.data).default_season_file).resolve()

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def default_workers() -> int:
    """Web worker processes: one per core (each serves one page at a time: Django's views run
    on one thread per process), at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0))))


class ServeError(UserError, RuntimeError):
    """A reason the server cannot start, in one line."""


def environment(options: ServeOptions) -> dict[str, str]:
    """The environment every child (and this process's Django) runs with."""
    # The loopback names always work (a proxy on this machine, the organiser's own browser).
    hosts = (["*"] if options.host in ("0.0.0.0", "::") and not options.allowed_hosts else
             [*options.allowed_hosts, options.host, "127.0.0.1", "localhost", "[::1]"])
    env = dict(os.environ)
    env.update({
        DATA_ENV: str(options.data),
        "DJANGO_SETTINGS_MODULE": "referee.server.settings",
        "REFEREE_SEASON_FILE": str(options.season_file),
        "REFEREE_ALLOWED_HOSTS": ",".join(hosts),
        "REFEREE_CSRF_TRUSTED_ORIGINS": ",".join(options.trusted_origins),
        "REFEREE_BEHIND_TLS_PROXY": "1" if options.behind_proxy else "0",
        "TMPDIR": str(ClubFolder(options.data).tmp),   # request bodies spool on the data disk
    })
    return env


def owner_only_top(data: Path) -> None:
    """Take group and other permissions off what lies at the top of the data folder (the
    organiser's season.toml, an older server's files), not following links. Below uploads/ a
    version's bot folder stays open to its bot's sandbox (referee.bots.folder)."""
    for entry in os.scandir(data):
        mode = entry.stat(follow_symlinks=False).st_mode
        if not entry.is_symlink() and mode & 0o077:
            os.chmod(entry.path, mode & 0o7700, follow_symlinks=False)


def prepare(options: ServeOptions) -> str | None:
    """Make the data folder and its database; on the first start make the organiser and
    return their password (None later)."""
    options.data.mkdir(parents=True, exist_ok=True)
    # The server's alone, an older data folder's too: nobody else may even pass through. A
    # sandboxed bot reads its own folder through the sandbox's bind mount, which the server
    # (root) makes; inside, that folder is opened to the bot (referee.bots.folder).
    options.data.chmod(0o700)
    owner_only_top(options.data)
    ClubFolder(options.data).tmp.mkdir(exist_ok=True, mode=0o700)
    os.environ.update(environment(options))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    ClubFolder(options.data).database.chmod(0o600)   # made so by the umask; an older one too
    from django.contrib.auth.models import User

    if User.objects.filter(is_superuser=True).exists():
        return None
    password = secrets.token_urlsafe(12)
    User.objects.create_superuser(ORGANISER, password=password)
    return password


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror}; pick another "
                             f"with --host/--port") from None


def runner_available() -> bool:
    return importlib.util.find_spec("referee.server.runner") is not None


def how_it_ended(code: int) -> str:
    """A child's exit status as the guard reports it (128 + N: killed by signal N)."""
    if code > 128 and (code - 128) in signal.valid_signals():
        return f"killed by {signal.Signals(code - 128).name}"
    return f"status {code}"


class Supervisor:
    """The children (web workers and the runner) and what to do when one stops."""

    def __init__(self, options: ServeOptions, say: Callable[[str], None]) -> None:
        self.options = options
        self.say = say
        self.env = environment(options)
        self.web: list[subprocess.Popen] = []
        self.runner: subprocess.Popen | None = None
        self.stop_signal: int | None = None
        self.restarts = 0
        self.season_group: CpuGroup | None = None
        self.web_group: CpuGroup | None = None

    def _start(self, argv: list[str], group: CpuGroup | None = None) -> subprocess.Popen:
        # In the organiser's working directory (relative paths they give, such as a cluster's
        # TLS files in DASK_* variables, stay theirs; python -I keeps it off the module path).
        # Under the guard (referee.bots.guard), which the kernel tells when this process dies,
        # SIGKILL included: the child then gets SIGTERM (and its STOP_WAIT_S to finish) instead
        # of living on unseen, holding the port and playing the season beside the next start.
        command, env = guarded(argv, self.env, STOP_WAIT_S)
        if group is None:
            return subprocess.Popen(command, env=env, start_new_session=True)
        # The child enters its group before it runs anything (after its setsid), so nothing
        # it starts ever runs outside it.
        if group.nice is not None:
            env[AUTOGROUP_NICE_ENV] = str(group.nice)
        return subprocess.Popen(command, env=env, start_new_session=True,
                                preexec_fn=group.join)

    def start_web(self) -> None:
        """Start the web workers, each listening on the server's address with a socket of
        its own (referee.server.web), all in the web server's scheduling group."""
        o = self.options
        argv = python_module("referee.server.web", "--host", o.host, "--port", str(o.port))
        if o.behind_proxy:
            argv.append("--behind-proxy")
        if self.web_group is None:
            self.web_group = web_group()
        self.web = [self._start(argv, self.web_group) for _ in range(o.workers)]

    def stopped_web_worker(self) -> subprocess.Popen | None:
        """A web worker that has stopped (the server cannot go on without it), or None."""
        return next((proc for proc in self.web if proc.poll() is not None), None)

    def start_runner(self) -> None:
        o = self.options
        argv = python_module("referee.server.runner", "--data", str(o.data),
                             "--season", str(o.season_file))
        if o.cluster:
            argv += ["--cluster", o.cluster]
        if self.season_group is None:
            self.season_group = season_group()
            web = self.web_group.how if self.web_group is not None else "the web server"
            self.say(f"scheduling: {self.season_group.how}; {web}, with {o.workers} worker "
                     f"process(es)")
        self.runner = self._start(argv, self.season_group)

    def on_signal(self, signum: int, _frame: object) -> None:
        self.stop_signal = self.stop_signal or signum

    def run(self) -> int:
        """Supervise until a signal or a web worker stops; the exit status."""
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self.on_signal)
        self.start_web()
        if runner_available():
            self.start_runner()
        else:
            self.say("note: the season runner (referee.server.runner) is not installed here; "
                     "checks and games wait until it runs")
        next_runner_start = None
        status = 0
        while self.stop_signal is None:
            time.sleep(0.2)
            if (worker := self.stopped_web_worker()) is not None:
                self.say(f"error: a web worker (pid {worker.pid}) stopped "
                         f"({how_it_ended(worker.returncode)}); stopping the server")
                status = 1
                break
            if self.runner is not None and self.runner.poll() is not None:
                code = self.runner.returncode
                if code == RUNNER_REFUSED:
                    self.say("error: the season runner refused its settings (the line above); "
                             "fix the season file and start again")
                    status = 2
                    break
                delay = RESTART_DELAYS_S[min(self.restarts, len(RESTART_DELAYS_S) - 1)]
                self.say(f"the season runner stopped ({how_it_ended(code)}); starting it again in "
                         f"{delay} s")
                self.runner = None
                self.restarts += 1
                next_runner_start = time.monotonic() + delay
            if self.runner is None and next_runner_start is not None \
                    and time.monotonic() >= next_runner_start:
                next_runner_start = None
                self.start_runner()
        self.stop()
        if self.stop_signal == signal.SIGINT:
            return 130
        return status

    def stop(self) -> None:
        """Ask every child to stop (SIGTERM), wait, and kill what is left."""
        children = [p for p in (*self.web, self.runner) if p is not None and p.poll() is None]
        if children:
            self.say("stopping: the web server and the runner (games in flight finish or are "
                     "played again on the next start)")
        for proc in children:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT_S
        for proc in children:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say(f"a child (pid {proc.pid}) did not stop in {STOP_WAIT_S} s; killing it")
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for group in (self.season_group, self.web_group):
            if group is not None:
                group.remove()


OWNER_ONLY = 0o077   # the umask of `referee serve` and every process it starts


def confinement_line(season_file: Path) -> str:
    """The one line saying that uploads are not run, or run unconfined, on this machine under
    the season file (referee.server.shared.confinement); "" when they run in the sandbox, or
    when the file cannot be read (the runner then says why in its own line)."""
    from referee.server.shared.confinement import confinement
    from referee.server.shared.seasonkeys import load_runner_settings
    from referee.util.config import ConfigError

    try:
        settings = load_runner_settings(season_file)
    except ConfigError:
        return ""
    return confinement(settings).line


def open_files_line(open_files: int) -> str:
    """The one line saying what the open-file limit lets each web worker hold."""
    return (f"open files: {open_files} per web worker; each keeps at most "
            f"{connection_cap(open_files)} connections and closes one that sends no complete "
            f"request head within {HEAD_TIMEOUT_S:.0f} s")


def serve(options: ServeOptions, say: Callable[[str], None]) -> int:
    """Run the club server until stopped; the exit status (0 on SIGTERM, 130 on Ctrl-C)."""
    # Before anything is created: SQLite's -wal and -shm files, uploads, test games, the
    # season's files are then owner-only from their first byte (the children inherit it).
    os.umask(OWNER_ONLY)
    options.data = options.data.resolve()
    _check_port(options.host, options.port)
    password = prepare(options)
    say(f"club server at {options.address} (data {options.data}, season "
        f"{options.season_file}); Ctrl-C stops it")
    say(open_files_line(open_files_target()))   # what each web worker raises its own to
    missing = host_problems()
    for problem in missing:
        say(problem.line())
    if missing:
        say(f"everything the guides need, at once (Debian 12): {INSTALL_ALL}")
    save_host_check(options.data, missing)
    if write_default(options.season_file):
        say(f"first start: wrote the season file {options.season_file} with every key at its "
            f"default, each explained (the season page shows them; change them there or in "
            f"the file)")
    if (line := confinement_line(options.season_file)):
        print(line, file=sys.stderr, flush=True)   # an error or a warning: on stderr
    if password is not None:
        say(f"first start: sign in at {options.address}login/ as '{ORGANISER}' with password "
            f"{password} (change it in the admin: {options.address}admin/password_change/)")
    else:
        say(f"the organiser signs in as before at {options.address}login/")
    return Supervisor(options, say).run()

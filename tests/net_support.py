"""Things on the host that a build given the network must not reach: a real dask scheduler on
loopback, and listeners that record every connection they were offered."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wait_support import wait_for

from referee.bots.guard import guarded


def dies_with_pytest(argv: list[str], **popen: Any) -> subprocess.Popen:
    """`argv` started under the referee's guard, which the kernel tells when this test process
    dies: no cluster is left behind by a killed pytest. (A preexec_fn doing the same could
    hang the child between fork and exec: the test process has gRPC's threads.) SIGTERM to
    the returned process stops the command; SIGKILL kills it too."""
    command, env = guarded(argv, popen.pop("env", os.environ))
    return subprocess.Popen(command, env=env, **popen)


DASK = str(Path(sys.executable).parent / "dask")
START_SECONDS = 300   # a bound for a broken install, not a timing


@contextlib.contextmanager
def dask_scheduler(base: Path, *options: str) -> Iterator[str]:
    """A real `dask scheduler` on 127.0.0.1 (plain TCP unless `options` say otherwise, e.g.
    `--protocol tls --tls-ca-file ...`): its address while the context lasts."""
    file = base / "scheduler.json"
    with open(base / "scheduler.log", "w") as log:
        process = dies_with_pytest(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(file), *options],
            stdout=log, stderr=subprocess.STDOUT, cwd=base)
    def written() -> bool:
        assert process.poll() is None, (base / "scheduler.log").read_text()
        return file.exists() and bool(file.read_text().strip())

    try:
        wait_for("the scheduler's file", written, timeout=START_SECONDS)
        yield json.loads(file.read_text())["address"]
    finally:
        process.terminate()
        process.wait(60)


@contextlib.contextmanager
def dask_worker(base: Path, address: str, name: str, *options: str) -> Iterator[None]:
    """A real `dask worker` offering 2 games, registered with the scheduler at `address`."""
    log_path = base / f"{name}.log"
    with open(log_path, "w") as log:
        process = dies_with_pytest(
            [DASK, "worker", address, "--name", name, "--nthreads", "2", "--resources",
             "games=2", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
             "--local-directory", str(base / name), *options],
            stdout=log, stderr=subprocess.STDOUT, cwd=base)
    def registered() -> bool:
        assert process.poll() is None, log_path.read_text()
        return "Registered to" in log_path.read_text()

    try:
        wait_for(f"worker {name} to register", registered, timeout=START_SECONDS)
        yield
    finally:
        process.terminate()
        process.wait(60)


def scheduler_clients(address: str) -> list[str]:
    """The clients that ever connected to the scheduler at `address`, but the one asking."""
    from distributed import Client

    with Client(address, timeout=60) as client:
        events = client.get_events("all")
        return [msg["client"] for _, msg in events if msg.get("action") == "add-client"
                and msg["client"] != client.id]


def accepted(listener: socket.socket) -> list[str]:
    """Every connection `listener` has accepted so far (its backlog, read without waiting)."""
    listener.setblocking(False)
    peers = []
    try:
        while True:
            conn, peer = listener.accept()
            peers.append(f"{peer[0]}:{peer[1]}")
            conn.close()
    except BlockingIOError:
        return peers


def tls_credentials(base: Path) -> tuple[list[str], dict[str, str]]:
    """Credentials of a CA of their own (distributed.Security.temporary, as `local:N` makes
    them) written into `base`: the `--tls-*` options of `dask scheduler` and `dask worker`,
    and the environment that gives a client (the coordinator) the same in dask's config."""
    from distributed import Security

    security = Security.temporary()
    files = {"ca.pem": security.tls_ca_file, "cert.pem": security.tls_client_cert,
             "key.pem": security.tls_client_key}
    for name, text in files.items():
        (base / name).write_text(text)
        (base / name).chmod(0o600)
    options = ["--tls-ca-file", str(base / "ca.pem"), "--tls-cert", str(base / "cert.pem"),
               "--tls-key", str(base / "key.pem")]
    env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(base / "ca.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(base / "cert.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(base / "key.pem")}
    return options, env

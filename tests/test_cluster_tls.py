"""The league's dask traffic is authenticated and encrypted: `--cluster local:N` makes TLS
credentials of its own, a real `tls://` cluster is reached with the credentials of dask's
configuration as docs/cluster.md shows them, and a plain `tcp://` cluster is warned about. Real
`dask scheduler` and `dask worker` processes on loopback, the real CLI as the coordinator."""

from __future__ import annotations

import asyncio
import re
import shlex
import socket
import ssl
import subprocess
from pathlib import Path

from cli_support import referee
from net_support import dask_scheduler, dask_worker

from referee.league.executors.dask import DaskExecutor

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = [ROOT / "sample_bots" / f"{name}.toml" for name in ("random", "greedy")]
WARNING = "anyone who can reach the scheduler runs code as its workers"


def league(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`referee league` through the CLI, with `env` added to the environment."""
    return referee("league", *args, env=env, timeout=600, check=False)


def refusals(address: str) -> dict[str, str]:
    """How the scheduler at `address` (tls://) answers clients without its credentials: a
    plain TCP dask client, a dask client with a certificate of another CA, and a TLS client
    that shows no certificate. Each value is the error (or "CONNECTED")."""
    from distributed import Client, Security

    hostport = address.removeprefix("tls://")
    host, port = hostport.rsplit(":", 1)
    found = {}

    async def dask_client(url: str, security: Security | None) -> str:
        try:
            async with Client(url, security=security, asynchronous=True, timeout=30):
                return "CONNECTED"
        except Exception as exc:  # noqa: BLE001 - the refusal is what is looked at
            return f"{type(exc).__name__}: {exc}"

    found["plain tcp"] = asyncio.run(dask_client(f"tcp://{hostport}", None))
    found["other CA"] = asyncio.run(dask_client(address, Security.temporary()))
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE      # trusts any server, shows no certificate
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        try:
            with context.wrap_socket(sock) as tls:
                tls.sendall(b"\0" * 8)
                found["no certificate"] = f"CONNECTED, read {tls.recv(64)!r}"
        except (ssl.SSLError, OSError) as exc:
            found["no certificate"] = f"{type(exc).__name__}: {exc}"
    return found


def assert_refused(found: dict[str, str]) -> None:
    assert set(found) == {"plain tcp", "other CA", "no certificate"}
    assert not any(answer.startswith("CONNECTED") for answer in found.values()), found


def test_a_local_cluster_refuses_every_client_without_its_credentials() -> None:
    """`local:N` (the executor `--cluster local:1` uses): its scheduler speaks TLS on 127.0.0.1
    and its own client works; a plain client, one of another CA and one without a certificate
    are refused."""
    async def start() -> tuple[str, int, dict[str, str]]:
        async with DaskExecutor("local:1", [], concurrency=1, sandbox=False) as executor:
            cluster = executor.connection.cluster
            assert cluster is not None and executor.client is not None
            address = cluster.scheduler_address
            identity = await executor.client.scheduler.identity(n_workers=-1)
            found = await asyncio.to_thread(refusals, address)
            return address, len(identity["workers"]), found

    address, workers, found = asyncio.run(start())
    assert address.startswith("tls://127.0.0.1:"), address
    assert workers == 1
    assert_refused(found)


def tls_commands() -> list[list[str]]:
    """The commands of docs/cluster.md's block after `<!-- tls-commands -->`."""
    text = (ROOT / "docs" / "cluster.md").read_text()
    block = re.search(r"<!-- tls-commands -->\n```sh\n(.*?)```", text, re.DOTALL)
    assert block, "docs/cluster.md has no tls-commands block"
    return [shlex.split(line) for line in block[1].splitlines() if line.strip()]


def credentials_of(command: list[str]) -> list[str]:
    """The --tls-* options (with their values) of a documented dask command."""
    options = []
    for flag, value in zip(command, command[1:], strict=False):
        if flag.startswith("--tls-"):
            options += [flag, value]
    return options


def test_a_tls_cluster_with_the_documented_credentials_plays_and_refuses_strangers(
        tmp_path: Path) -> None:
    """The openssl commands of docs/cluster.md make the credentials; a `dask scheduler` and a
    `dask worker` started with the documented TLS options play a league whose coordinator has
    them in dask's configuration (the documented variables); the scheduler refuses clients
    without them; a coordinator without them stops with one line."""
    commands = tls_commands()
    openssl = [c for c in commands if c[0] == "openssl"]
    scheduler_cmd = next(c for c in commands if c[:2] == ["dask", "scheduler"])
    worker_cmd = next(c for c in commands if c[:2] == ["dask", "worker"])
    assert "--protocol" in scheduler_cmd and "tls" in scheduler_cmd
    for command in openssl:
        subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    scheduler_tls = [tmp_path / v if not v.startswith("-") else v
                     for v in credentials_of(scheduler_cmd)]
    worker_tls = [tmp_path / v if not v.startswith("-") else v
                  for v in credentials_of(worker_cmd)]
    assert len(scheduler_tls) == len(worker_tls) == 6
    env = {"DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(tmp_path / "ca.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(tmp_path / "cluster.pem"),
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(tmp_path / "cluster.key")}
    docs = (ROOT / "docs" / "cluster.md").read_text()
    assert all(f"export {key}=" in docs for key in env)
    with dask_scheduler(tmp_path, "--protocol", "tls", *map(str, scheduler_tls)) as address, \
            dask_worker(tmp_path, address, "t1", *map(str, worker_tls)):
        assert address.startswith("tls://127.0.0.1:"), address
        out = tmp_path / "out"
        done = league(*SAMPLES, "--games", "6", "--seed", "5", "--quiet", "--out", out,
                      "--cluster", address, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "6/6 games recorded, finished" in done.stdout
        assert WARNING not in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert_refused(refusals(address))
        bare = league(*SAMPLES, "--games", "2", "--quiet", "--out", tmp_path / "bare",
                      "--cluster", address)
        assert bare.returncode != 0
        lines = bare.stderr.strip().splitlines()
        assert len(lines) == 1, bare.stderr
        assert "no TLS credentials" in lines[0] and "distributed.comm.tls.ca-file" in lines[0]


def test_a_plain_tcp_cluster_is_warned_about_once(tmp_path: Path) -> None:
    with dask_scheduler(tmp_path) as address, dask_worker(tmp_path, address, "p1"):
        done = league(*SAMPLES, "--games", "4", "--seed", "5", "--quiet", "--out",
                      tmp_path / "out", "--cluster", address)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4/4 games recorded, finished" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if WARNING in line]
    assert warnings == [f"warning: --cluster {address} is plain TCP, neither authenticated nor "
                        f"encrypted: {WARNING} (use tls:// with credentials, "
                        f"docs/cluster.md)"], done.stderr


def test_a_local_cluster_league_plays_over_tls_without_a_warning(tmp_path: Path) -> None:
    done = league(*SAMPLES, "--games", "6", "--seed", "5", "--quiet", "--out",
                  tmp_path / "out", "--cluster", "local:2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6/6 games recorded, finished" in done.stdout
    assert WARNING not in done.stderr

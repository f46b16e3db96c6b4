"""The build step of net_build, a spec with `build_network = true`: it tries to reach the host,
as a build that hunts for the dask scheduler or the referee's ports would, and records each
attempt in net_build_report.txt in its own folder (which the bot prints when it plays). Lines
are `NETBUILD: <what> <verdict>`.

Tries: a TCP connection to each `host:port` of $NET_BUILD_TARGETS (the test listens there on
the host: its loopback, its other addresses, a dask scheduler), also through slirp4netns's
gateway and resolver addresses (10.0.2.2, 10.0.2.3: the host, seen from a slirp network); a
dask client to each address of $NET_BUILD_SCHEDULERS that runs code on the scheduler and its
workers (it would write build-attack-* files into $NET_BUILD_MARK); and, to show that names
resolve and registries are reached, a connection to each `host:port` of $NET_BUILD_PUBLIC."""

import os
import socket
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
lines: list[str] = []


def split(name: str) -> list[str]:
    return [item for item in os.environ.get(name, "").split(",") if item]


def connect(host: str, port: int, label: str = "connect") -> None:
    try:
        with socket.create_connection((host, port), timeout=5):
            lines.append(f"NETBUILD: {label} {host}:{port} OPEN")
    except OSError as exc:
        lines.append(f"NETBUILD: {label} {host}:{port} blocked ({type(exc).__name__})")


def mark(path: str) -> None:   # run on the scheduler and its workers, if ever reached
    Path(path, f"build-attack-{os.getpid()}").write_text("owned\n")


for target in split("NET_BUILD_TARGETS"):
    host, _, port = target.rpartition(":")
    connect(host, int(port))
    for gateway in ("10.0.2.2", "10.0.2.3"):
        connect(gateway, int(port), "via-slirp")
for address in split("NET_BUILD_SCHEDULERS"):
    try:
        from distributed import Client

        with Client(address, timeout=10) as client:
            client.run_on_scheduler(mark, os.environ.get("NET_BUILD_MARK", "/tmp"))
            client.run(mark, os.environ.get("NET_BUILD_MARK", "/tmp"))
        lines.append(f"NETBUILD: dask {address} OPEN")
    except Exception as exc:  # noqa: BLE001 - any failure to drive the cluster is the point
        lines.append(f"NETBUILD: dask {address} blocked ({type(exc).__name__})")
for target in split("NET_BUILD_PUBLIC"):
    host, _, port = target.rpartition(":")
    try:
        addresses = sorted({info[4][0] for info in socket.getaddrinfo(host, int(port),
                                                                     socket.AF_INET)})
        lines.append(f"NETBUILD: resolve {host} {' '.join(addresses)}")
    except OSError as exc:
        lines.append(f"NETBUILD: resolve {host} failed ({type(exc).__name__})")
    connect(host, int(port), "public")
(HERE / "net_build_report.txt").write_text("\n".join(lines) + "\n")
print("net_build: build done", file=sys.stderr)

"""At the first decision of each game, tries to open TCP connections and reports each attempt on
stderr as `NET: <target> blocked (<error>)` or `NET: <target> OPEN`, then plays honestly.

Targets: the host's loopback on port $NET_PROBE_PORT (a test listens there outside the
sandbox), and 192.0.2.1:80 (TEST-NET-1, RFC 5737: reserved for documentation, never routed),
with a 1 s timeout. Only connection attempts: no data is sent anywhere. It also reports the
network interfaces it can see (`NET: interfaces ...`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os  # noqa: E402
import socket  # noqa: E402

import botlib  # noqa: E402


def probe(host: str, port: int) -> str:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            pass
    except OSError as exc:
        return f"NET: {host}:{port} blocked ({type(exc).__name__}: {exc.strerror or exc})"
    return f"NET: {host}:{port} OPEN"


def interfaces() -> str:
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError as exc:
        return f"NET: interfaces unknown ({exc.strerror})"
    return "NET: interfaces " + " ".join(sorted(line.split(":")[0].strip() for line in lines))


def decide(request, start, n):
    if n == 1:
        port = int(os.environ.get("NET_PROBE_PORT", "9"))
        lines = [probe("127.0.0.1", port), probe("192.0.2.1", 80), interfaces()]
        print("\n".join(lines), file=sys.stderr, flush=True)
    return botlib.honest(request, start, n)


botlib.run("net_probe", decide)

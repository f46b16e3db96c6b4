"""One web worker of the club server: uvicorn serving `referee.server.asgi` on a listening
socket of its own.

`referee serve` starts one of these per worker (`python -m referee.server.web --host H --port
P`), each in the web server's scheduling group. Each opens its own socket on the same address
with SO_REUSEPORT, and the kernel spreads new connections across the sockets of the group by
their addresses. uvicorn's `--workers` shares one listening socket instead: the worker that
wakes first accepts a whole burst of connections, and with browsers keeping theirs alive one
worker held most of the students' (up to 45 of 50) while another had few (bench/README.md,
"server").

Only processes of the same user can join a SO_REUSEPORT group (the kernel's rule), so no other
user's program can take a share of the club's connections; the bots run in sandboxes with no
network of the host's (docs/security.md).
"""

from __future__ import annotations

import argparse
import gc
import socket
import tempfile

import uvicorn

from referee.server import connections, logbound

APP = "referee.server.asgi:application"
BACKLOG = 2048                  # uvicorn's own default: the kernel's queue of connections
GRACEFUL_SHUTDOWN_S = 20        # requests in flight may finish after SIGTERM


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port) that shares the port with the server's other
    workers (SO_REUSEPORT): the kernel gives each new connection to one of them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def config(behind_proxy: bool) -> uvicorn.Config:
    """uvicorn's settings for one worker (the ones `referee serve` always gave it)."""
    proxy = {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1,::1"} if behind_proxy \
        else {"proxy_headers": False}
    # asyncio accepts up to `backlog` connections at each loop turn: a small batch keeps the
    # descriptors taken before the connection cap sees them few (referee.server.connections).
    return uvicorn.Config(APP, log_level="warning", access_log=False,
                          http=connections.GuardedH11, backlog=connections.ACCEPT_BATCH,
                          timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S, **proxy)


class Server(uvicorn.Server):
    """uvicorn's server, its listening sockets keeping the kernel's queue of BACKLOG
    connections (asyncio's create_server sets it to the accept batch)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for sock in sockets or []:
            sock.listen(BACKLOG)


def warmed_server(behind_proxy: bool) -> uvicorn.Server:
    """The worker's server with its application loaded and warmed (referee.server.club.warm)
    before the kernel can give it a connection."""
    server = Server(config(behind_proxy))
    server.config.load()    # imports the application: Django is set up after this
    from referee.server.club.warm import warm

    warm()
    from django.conf import settings

    # Django spools a request's body past FILE_UPLOAD_MAX_MEMORY_SIZE to an unnamed temporary
    # file: in the data folder's tmp, on the disk whose filling the server reports (507), not
    # the host's /tmp. Set here, in the web worker only (importing the application, as tests
    # do, changes no other process's temporary folder).
    tempfile.tempdir = settings.FILE_UPLOAD_TEMP_DIR
    # What the worker holds now (Django, the routes, the templates, the first board: about
    # 90,000 objects) lives as long as the worker: moved out of the collector's reach, a full
    # collection scans only what requests made since, 3-9 ms instead of 36-60 ms of every
    # thread of the worker standing still (bench/README.md, "Pauses").
    gc.collect()
    gc.freeze()
    logbound.install()   # after Django's and uvicorn's logging settings, which it replaces
    return server


def main(argv: list[str] | None = None) -> int:
    """Serve the club's pages on HOST:PORT until SIGTERM or SIGINT (uvicorn's own handling:
    stop accepting, let requests in flight finish)."""
    parser = argparse.ArgumentParser(prog="python -m referee.server.web")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--behind-proxy", action="store_true")
    args = parser.parse_args(argv)
    connections.raise_open_files()   # this worker only: the runner and bots keep theirs
    server = warmed_server(args.behind_proxy)
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as exc:
        print(f"error: a web worker cannot listen on {args.host}:{args.port}: {exc.strerror}",
              flush=True)
        return 1
    with sock:
        server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

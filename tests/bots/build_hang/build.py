"""The build step of build_hang, a spec with `build_network = true` and a small
`limits.build_seconds`: it scans every TCP port of its loopback (once, a bounded loop: what a
build hunting for the dask scheduler or the referee's ports does), leaves a child that ignores
SIGTERM, and then never ends. The referee must stop all of it at the time limit, and the league
goes on without the bot."""

import os
import signal
import socket
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
found = []
for port in range(1, 65536):
    with socket.socket() as probe:
        probe.settimeout(0.2)
        # A connection to itself (source port = the port tried) is no listener.
        if probe.connect_ex(("127.0.0.1", port)) == 0 and \
                probe.getsockname() != probe.getpeername():
            found.append(port)
(HERE / "build_hang_report.txt").write_text(f"BUILDHANG: open ports {found}\n")
if os.fork() == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)
while True:
    time.sleep(3600)

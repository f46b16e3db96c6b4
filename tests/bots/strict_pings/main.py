"""Plays honestly on a server with gRPC's default keepalive enforcement (a client may ping
without data at most every 5 minutes, as C-core, Go and Java servers require by default) and the
least tolerance (one strike; 0 would mean unlimited): the third ping within 5 minutes ends the
connection with GOAWAY too_many_pings.

A referee that pings its bots while they wait for their turn would lose this bot's streams
whenever another seat thinks long (docs/protocol.md, "Connections").
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

botlib.run("strict_pings", options=[("grpc.http2.max_ping_strikes", 1)])

"""Never reads its Play stream: each Play call just waits until the referee ends it.

Its server announces a 1 KiB HTTP/2 stream window and never grows it (no BDP probing), so after
the GameStart and a request or two gRPC's flow control holds the referee's next write back for
as long as the bot does not read: every write to a bot must be bounded by its deadline.
"""

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402


class NoReader(botlib.Servicer):
    def Play(self, request_iterator, context):  # noqa: N802 (gRPC method name)
        ended = threading.Event()
        context.add_callback(ended.set)
        ended.wait()
        yield from ()


botlib.run("no_reader", servicer=NoReader,
           options=[("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)])

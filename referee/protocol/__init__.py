"""Protocol glue: the generated gRPC code for proto/lasvegas/v1/bot.proto.

``pb`` holds the messages (``pb.GameStart``, ``pb.DecisionRequest``, ...) and ``rpc`` the service
stubs (``rpc.BotStub``, ``rpc.BotServicer``, ``rpc.add_BotServicer_to_server``). The generated
modules live in ``referee.protocol.lasvegas.v1`` and are rewritten by ``scripts/gen_proto.py``.
"""

from referee.protocol.lasvegas.v1 import bot_pb2 as pb
from referee.protocol.lasvegas.v1 import bot_pb2_grpc as rpc

#: The protocol version described by proto/lasvegas/v1/bot.proto (HelloRequest.protocol_version).
PROTOCOL_VERSION = 1

__all__ = ["PROTOCOL_VERSION", "pb", "rpc"]

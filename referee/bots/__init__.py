"""Bots: specs, processes, sandboxes, the gRPC client and the runners that keep bots alive."""

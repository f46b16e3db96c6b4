"""Exits at once with a message on stderr, before listening."""

import sys

print("exit_at_start: cannot find my model file weights.bin", file=sys.stderr)
sys.exit(1)

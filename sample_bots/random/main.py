"""Sample bot: a uniformly random legal action, seeded from the game and the request, so the
same game replayed gives the same moves (never seeded from the clock)."""

import hashlib
import random

from referee.engine.policies import random_policy
from referee.sdk import Bot, run


def decision_seed(game_id: str, request_id: int) -> int:
    """A 64-bit seed from the game id and the request id (stable across runs and machines)."""
    digest = hashlib.sha256(f"{game_id}/{request_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def choose(self, view):
        rng = random.Random(decision_seed(self.game.game_id, self.request.request_id))
        return random_policy(view, rng)


if __name__ == "__main__":
    run(RandomBot())

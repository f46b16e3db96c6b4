"""The `random` sample bot: a uniformly random legal action, reproducible from the game id."""

import random
import zlib

from referee.engine.policies import random_policy
from referee.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def choose(self, view):
        # Seeded from the game and the request, never from the clock: the same game plays the
        # same way again, as league determinism needs.
        seed = zlib.crc32(f"{self.game.game_id}/{self.request.request_id}".encode())
        return random_policy(view, random.Random(seed))


if __name__ == "__main__":
    run(RandomBot())

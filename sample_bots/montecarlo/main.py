"""The `montecarlo` sample bot: rollouts with the engine from determinized games."""

import zlib

from referee.engine.policies import montecarlo_policy
from referee.sdk import Bot, run

ROLLOUTS = 120  # a fixed budget, not a clock: the bot stays deterministic


class MonteCarloBot(Bot):
    name = "montecarlo"
    version = "1.0"
    max_concurrent_games = 4

    def choose(self, view):
        seed = zlib.crc32(f"{self.game.game_id}/{self.request.request_id}".encode())
        return montecarlo_policy(view, rollouts=ROLLOUTS, seed=seed)


if __name__ == "__main__":
    run(MonteCarloBot())

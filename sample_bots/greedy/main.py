"""The `greedy` sample bot: the best immediate gain if the round ended now, ties cancelling."""

from referee.engine.policies import greedy_policy
from referee.sdk import Bot, run


class GreedyBot(Bot):
    name = "greedy"
    version = "1.0"

    def choose(self, view):
        return greedy_policy(view)


if __name__ == "__main__":
    run(GreedyBot())

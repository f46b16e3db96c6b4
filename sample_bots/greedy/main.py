"""Sample bot: the best immediate gain if the round ended now, with ties cancelling (R21) and
the slot's tie-break (R32), plus a bonus for taking money from the richest opponent."""

from referee.engine.policies import greedy_policy
from referee.sdk import Bot, run


class GreedyBot(Bot):
    name = "greedy"
    version = "1.0"

    def choose(self, view):
        return greedy_policy(view)


if __name__ == "__main__":
    run(GreedyBot())

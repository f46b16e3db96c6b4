"""Sample bot: Monte Carlo look-ahead with the engine (`determinize` + greedy playouts to the end
of the round). Deterministic: the playouts are seeded from the game and the request, and the
budget is a fixed number of playouts, never a clock. Each move carries notes: the playouts run
and the money the chosen action is expected to leave this seat with at the end of the round."""

import hashlib
import os

from referee.engine.policies import montecarlo_search
from referee.sdk import Bot, run

# Playouts per decision: ~15-25 ms a decision on a 2-core machine. Slot-machine games have
# about twice the actions and dearer playouts, so they get fewer. MC_ROLLOUTS overrides both.
ROLLOUTS = int(os.environ.get("MC_ROLLOUTS", "0")) or None


def decision_seed(game_id: str, request_id: int) -> int:
    """A 64-bit seed from the game id and the request id (stable across runs and machines)."""
    digest = hashlib.sha256(f"{game_id}/{request_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class MonteCarloBot(Bot):
    name = "montecarlo"
    version = "1.0"
    max_concurrent_games = 1  # CPU-bound: one game per process, the league starts more processes

    def choose(self, view):
        rollouts = ROLLOUTS or (80 if view.rules.slot else 120)
        seed = decision_seed(self.game.game_id, self.request.request_id)
        search = montecarlo_search(view, rollouts=rollouts, seed=seed)
        if search.value is not None:   # the notes the referee records beside the move
            self.note(f"{search.action}: ${search.value:,.0f} expected at round end",
                      playouts=search.playouts, eval=round(search.value))
        return search.action


if __name__ == "__main__":
    run(MonteCarloBot())

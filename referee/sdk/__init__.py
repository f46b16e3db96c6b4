"""What a Python bot author imports: a `Bot` base class with one method, and `run()`.

    from referee.sdk import Bot, run

    class First(Bot):
        name = "first"

        def choose(self, view):
            return view.legal[0]

    if __name__ == "__main__":
        run(First())

The engine is available for look-ahead: `referee.engine.determinize(view, seed)` gives a
playable game consistent with the view, and `referee.engine.policies` has ready-made policies.
"""

from referee.engine.actions import Action
from referee.engine.view import View
from referee.sdk.bot import ADDRESS_ENV, Bot, GameInfo, GameResult, parse_address, run, serve

__all__ = [
    "ADDRESS_ENV", "Action", "Bot", "GameInfo", "GameResult", "View", "parse_address", "run",
    "serve",
]

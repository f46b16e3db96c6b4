"""The Las Vegas engine: pure rules, no I/O (docs/rules.md, R1..R51).

    from referee.engine import Game, preset
    game = Game(preset("classic"), players=3, seed=42)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    game.ranking()
"""

from referee.engine.actions import SLOT, Action, Roll
from referee.engine.errors import EngineError, GameOverError, IllegalActionError, RulesError
from referee.engine.game import Game, determinize
from referee.engine.record import GameRecord
from referee.engine.replay import Divergence, replay
from referee.engine.rules import PRESET_NOTES, PRESETS, RuleSet, preset
from referee.engine.view import CasinoView, SeatView, SlotPlacement, View

__all__ = [
    "SLOT", "Action", "CasinoView", "Divergence", "EngineError", "Game", "GameOverError",
    "GameRecord", "IllegalActionError", "PRESETS", "PRESET_NOTES", "Roll", "RuleSet", "RulesError",
    "SeatView", "SlotPlacement", "View", "determinize", "preset", "replay",
]

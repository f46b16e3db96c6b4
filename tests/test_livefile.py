"""A live file's step lines (referee.game.livefile) are written by the record's own event encoder
(`referee.engine.record.event_texts`); they must read exactly as `json.dumps` of the step's
data wrote them before, byte for byte, for every kind of event of real games."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from referee.engine import Game, preset
from referee.engine.record import event_to_dict
from referee.game.livefile import LiveFile, decision_json


@pytest.mark.parametrize(("rules", "players", "seed"),
                         [("classic", 2, 1), ("classic", 5, 2), ("classic", 4, 3)])
def test_step_lines_are_the_json_of_their_data(tmp_path: Path, rules: str, players: int,
                                               seed: int) -> None:
    game = Game(preset(rules), players, seed)
    live = LiveFile(tmp_path / "live" / "g1.jsonl", "g1", [f"b{i}" for i in range(players)], 3)
    steps: list[tuple[list[tuple], dict | None]] = []
    live.observe(game, list(game.events or []), None)
    steps.append((list(game.events or []), None))
    seen = len(game.events or [])
    choose = random.Random(seed)
    move = 0
    while not game.is_over:
        move += 1
        seat = game.current_seat
        action = choose.choice(game.legal_actions())
        # Strikes, notes and latency: every key a decision may carry.
        decision = {"seat": seat, "latency_us": 1234 + move, "action": [action.value,
                                                                        action.slot]}
        if move % 7 == 0:
            decision.update({"strike": "timeout", "detail": "no decision within 1000 ms",
                             "note": "é \"quoted\"", "values": {"x": 0.5}})
        game.apply(action)
        events = (game.events or [])[seen:]
        seen = len(game.events or [])
        live.observe(game, events, decision)
        steps.append((events, decision))
    lines = live.path.read_text(encoding="utf-8").splitlines()
    live.finish(True)
    assert not live.path.exists()
    assert len(lines) == 1 + len(steps)
    kinds = set()
    for line, (events, decision) in zip(lines[1:], steps, strict=True):
        t = json.loads(line)["t"]
        kinds |= {event[0] for event in events}
        assert line == json.dumps({"events": [event_to_dict(e) for e in events],
                                   "decision": decision, "t": t}, separators=(",", ":"))
    assert kinds >= {"round", "roll", "place", "score", "end"}


@pytest.mark.parametrize("decision", [
    None,
    {"seat": 0, "latency_us": 812, "action": [3, False]},
    {"seat": 3, "latency_us": 0, "action": [6, True]},
    {"latency_us": 812, "seat": 0, "action": [3, False]},   # another order: json's own
    {"seat": 1, "latency_us": 812, "action": [3, 1]},       # not a bool: json's own
    {"seat": 1, "auto": "forced", "action": [2, False]},
    {"seat": 2, "latency_us": 9, "strike": "timeout", "detail": "x", "action": [1, False]},
    {"seat": 2, "latency_us": 9, "note": "é", "action": [1, False]},
])
def test_a_decision_reads_as_its_json(decision: dict | None) -> None:
    """The usual decision, written directly, and every other shape read exactly as json.dumps
    writes them."""
    assert decision_json(decision) == json.dumps(decision, separators=(",", ":"))

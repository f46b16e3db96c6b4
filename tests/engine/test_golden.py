"""Golden records: whole games for fixed seeds, stored as JSON in tests/engine/golden/.

Each game is played with a deterministic policy: "first" always takes the first legal action
(the lowest value, on its casino); "cycle" takes legal action number k mod (number of legal
actions) at the k-th placement of the game (k = 0, 1, ...), which also reaches the slot. The test
re-plays each game from scratch and compares the full event list, and replays the stored record.
Any change of the engine that changes a game (rules, random streams, event format) shows here.

If such a change is intended, regenerate the files and review the diff:

    python tests/engine/test_golden.py --regenerate
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.engine import Game, GameRecord, preset, replay
from referee.engine.record import event_to_dict

GOLDEN = Path(__file__).parent / "golden"

# name: (preset, players, seed, policy)
CASES = {
    "classic-2p": ("classic", 2, 1, "first"),
    "classic-white-3p": ("classic-white", 3, 2, "cycle"),
    "biggy-slot-3p": ("biggy-slot", 3, 3, "cycle"),
    "boulevard-5p": ("boulevard", 5, 4, "cycle"),
    "classic-neutral-discard-4p": ("classic-neutral-discard", 4, 5, "cycle"),
}


def play_golden(name: str) -> Game:
    rules, players, seed, policy = CASES[name]
    game = Game(preset(rules), players, seed)
    placements = 0
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(legal[0] if policy == "first" else legal[placements % len(legal)])
        placements += 1
    return game


def dump(record: dict) -> str:
    """JSON with one event per line, so that a changed game gives a readable diff."""
    head = {k: v for k, v in record.items() if k != "events"}
    lines = [json.dumps(head, indent=1)[:-2] + ',\n "events": [']
    lines += [" " + json.dumps(e) + "," for e in record["events"]]
    lines[-1] = lines[-1][:-1]
    lines.append(" ]\n}\n")
    return "\n".join(lines)


def load(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_game_replays_identically(name):
    stored = load(name)
    game = play_golden(name)
    assert [event_to_dict(e) for e in game.events] == stored["events"]
    assert game.record().to_json() == stored
    assert replay(GameRecord.from_json(stored)) is None


def test_golden_files_cover_the_intended_features():
    def events(name: str, kind: str) -> list[dict]:
        return [e for e in load(name)["events"] if e["type"] == kind]

    assert len(events("classic-white-3p", "preroll")) == 4  # R41: every round
    assert all(not events(name, "preroll") for name in CASES if name != "classic-white-3p")
    for name in ("biggy-slot-3p", "boulevard-5p"):
        assert any(e["slot"] for e in events(name, "place"))  # R31
        assert any(e["big"] for e in events(name, "place"))  # R3 big die
        assert len(events(name, "score")) == 7 * load(name)["rules"]["rounds"]
    for name, players in (("classic-white-3p", 3), ("classic-neutral-discard-4p", 4)):
        paid = [p for e in events(name, "score") for p, _ in e["payouts"]]
        assert players in paid  # the neutral player wins notes (R40)
    assert load("classic-neutral-discard-4p")["rules"]["leftovers"] == "discard"
    assert load("boulevard-5p")["rules"]["hundred_k"] is True
    assert all(any(e["cancelled"] for e in events(name, "score")) for name in CASES)  # R21


def test_golden_classic_2p_first_round_scoring_by_hand():
    """Classic, 2 players, seed 1, first legal action: round 1 checked against the rules.

    The numbers below were read from the record, then each one was verified by hand.
    """
    events = load("classic-2p")["events"]
    end = next(i for i, e in enumerate(events) if e["type"] == "round" and e["round"] == 1)
    first_round = events[:end]
    # R10: casinos are funded in order from the top of the deck until each holds $50,000. The
    # deck of seed 1 starts 20k 30k 50k 30k 60k 10k 70k 90k 50k: casino 1 takes 20k (< 50k)
    # and then 30k (50k reached); casino 2 takes 50k; casino 3 30k + 60k; casino 4 10k + 70k;
    # casino 5 90k; casino 6 50k. Nine notes drawn.
    assert first_round[0] == {"type": "round", "round": 0, "start_seat": 0, "casinos": [
        [20_000, 30_000], [50_000], [30_000, 60_000], [10_000, 70_000], [90_000], [50_000]]}
    # R12/R13: seat 0 starts, then the seats alternate; both always hold dice until the end.
    # "First legal action" takes the lowest value shown and R16 puts every die showing it:
    #   seat 0 rolls 1 4 5 6 5 1 2 3 -> two 1s on casino 1      (seat 0 now has 6 dice)
    #   seat 1 rolls 4 6 3 2 5 4 3 6 -> one 2 on casino 2       (7)
    #   seat 0 rolls 2 4 3 3 3 2     -> two 2s on casino 2      (4)
    #   seat 1 rolls 2 6 1 5 5 4 3   -> one 1 on casino 1       (6)
    #   seat 0 rolls 1 5 6 6         -> one 1 on casino 1       (3)
    #   seat 1 rolls 2 5 1 6 1 1     -> three 1s on casino 1    (3)
    #   seat 0 rolls 3 4 6           -> one 3 on casino 3       (2)
    #   seat 1 rolls 2 2 4           -> two 2s on casino 2      (1)
    #   seat 0 rolls 1 5             -> one 1 on casino 1       (1)
    #   seat 1 rolls 4               -> one 4 on casino 4       (0)
    #   seat 0 rolls 2               -> one 2 on casino 2       (0): all 16 dice placed
    assert [e["type"] for e in first_round[1:]] == ["roll", "place"] * 11 + ["score"] * 6
    rolls = [e for e in first_round if e["type"] == "roll"]
    places = [e for e in first_round if e["type"] == "place"]
    assert all(r["seat"] == p["seat"] for r, p in zip(rolls, places, strict=True))
    turns = [(r["seat"], r["own"], p["value"], p["own"])
             for r, p in zip(rolls, places, strict=True)]
    assert turns == [
        (0, [1, 4, 5, 6, 5, 1, 2, 3], 1, 2),
        (1, [4, 6, 3, 2, 5, 4, 3, 6], 2, 1),
        (0, [2, 4, 3, 3, 3, 2], 2, 2),
        (1, [2, 6, 1, 5, 5, 4, 3], 1, 1),
        (0, [1, 5, 6, 6], 1, 1),
        (1, [2, 5, 1, 6, 1, 1], 1, 3),
        (0, [3, 4, 6], 3, 1),
        (1, [2, 2, 4], 2, 2),
        (0, [1, 5], 1, 1),
        (1, [4], 4, 1),
        (0, [2], 2, 1),
    ]
    # So the dice are: casino 1 seat 0: 2+1+1 = 4, seat 1: 1+3 = 4; casino 2 seat 0: 2+1 = 3,
    # seat 1: 1+2 = 3; casino 3 seat 0: 1; casino 4 seat 1: 1; casinos 5 and 6 empty.
    # R20 counts (the last entry is the neutral player, absent in classic):
    scores = {e["target"]: e for e in first_round if e["type"] == "score"}
    assert [scores[t]["counts"] for t in range(1, 7)] == [
        [4, 4, 0], [3, 3, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0]]
    # Casino 1: 4 against 4 -> both cancel (R21); its 30k and 20k leave, highest first (R23).
    assert scores[1] == {"type": "score", "target": 1, "counts": [4, 4, 0], "cancelled": [0, 1],
                         "payouts": [], "leaving": [30_000, 20_000]}
    # Casino 2: 3 against 3 -> both cancel; its 50k leaves.
    assert scores[2] == {"type": "score", "target": 2, "counts": [3, 3, 0], "cancelled": [0, 1],
                         "payouts": [], "leaving": [50_000]}
    # Casino 3: seat 0 alone takes the highest note, 60k (R22); one note each, 30k is left.
    assert scores[3] == {"type": "score", "target": 3, "counts": [1, 0, 0], "cancelled": [],
                         "payouts": [[0, 60_000]], "leaving": [30_000]}
    # Casino 4: seat 1 alone takes 70k; 10k is left.
    assert scores[4] == {"type": "score", "target": 4, "counts": [0, 1, 0], "cancelled": [],
                         "payouts": [[1, 70_000]], "leaving": [10_000]}
    # Casinos 5 and 6: no dice, nobody is paid; 90k and 50k are left.
    assert scores[5]["payouts"] == [] and scores[5]["leaving"] == [90_000]
    assert scores[6]["payouts"] == [] and scores[6]["leaving"] == [50_000]
    # Money after round 1 (R24): seat 0 60k, seat 1 70k.
    money = [0, 0]
    for score in scores.values():
        for seat, note in score["payouts"]:
            money[seat] += note
    assert money == [60_000, 70_000]
    # R23: the seven leftovers went under the deck in the order 30k 20k 50k 30k 10k 90k 50k
    # (casino by casino, highest first). 45 notes were still above them, so round 2 (start
    # seat 1, R12) is funded from fresh notes: 40k + 30k, 20k + 10k + 60k, 20k + 40k, 60k, 90k,
    # 70k, each casino stopping at $50,000 or more.
    assert events[end] == {"type": "round", "round": 1, "start_seat": 1, "casinos": [
        [40_000, 30_000], [20_000, 10_000, 60_000], [20_000, 40_000], [60_000], [90_000],
        [70_000]]}
    assert events[-1]["type"] == "end"


def regenerate() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name in CASES:
        text = dump(play_golden(name).record().to_json())
        (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN / name}.json")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(f"usage: python {sys.argv[0]} --regenerate")
    regenerate()

"""Plays honestly and tries to break R51 with everything the referee sends it.

From every number in what it receives (the game id read as decimal and as hex, the seat
numbers, the bot names' digits) and from small numbers, it derives candidate game seeds the
ways the project documents or once documented (the number itself; SHA-512 `derive_seed` of it
for a league game or a match; keyed BLAKE2b `keyed_seed` of it, the league derivation) and
checks whether one of them predicts both its own first roll and the notes funded on the casinos
(a seed found is a seed that predicts everything; requiring both keeps chance matches out). It
also remembers every deal it saw (the casinos' notes at the start, in memory and in a file of
its writable /tmp), so it would notice a duplicate rotation of a game it already played.

It writes what it found to stderr, which the referee keeps in the game record:
`SPY start ...` (the time control it was given, and a token of its process),
`SPY PREDICTED ...`, `SPY REPEATED DEAL`.
"""

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import botlib  # noqa: E402

from referee.engine import preset  # noqa: E402
from referee.engine.rng import DiceStream, shuffled_deck  # noqa: E402
from referee.util.seeds import derive_seed, keyed_seed  # noqa: E402

SMALL = range(0, 40)          # seeds and game indexes an organiser might plausibly use
SEEN_FILE = Path("/tmp/spy-deals.txt")
seen: set[str] = set()
PROCESS = os.urandom(6).hex()   # tells this process apart from every other instance


def numbers_in(start) -> set[int]:
    """Every number the GameStart holds."""
    text = " ".join([start.game_id, *(s.bot_name for s in start.seats)])
    found = {int(run) for run in re.findall(r"\d+", text)}
    found |= {int(run, 16) for run in re.findall(r"[0-9a-fA-F]{4,}", text)}
    found |= {s.seat for s in start.seats} | {start.your_seat}
    return found


def candidates(start) -> set[int]:
    """Game seeds a bot could derive from what it was sent and from small numbers."""
    numbers = numbers_in(start)
    bases = (numbers | set(SMALL))
    indexes = {n for n in numbers if n < 10_000} | set(SMALL)
    seeds = {n for n in numbers if n < 2**64}
    for base in bases:
        seeds.add(derive_seed(base, "match"))
        seeds.add(keyed_seed(base % 2**256, "match"))
        for index in indexes:
            seeds.add(derive_seed(base, "game", index))
            seeds.add(keyed_seed(base % 2**256, "game", index))
    return seeds


def funded(deck: list[int], casinos: int, threshold: int) -> list[list[int]]:
    """Round 1 funding of threshold rules from a deck order (R10)."""
    notes, position = [], 0
    for _ in range(casinos):
        got, total = [], 0
        while total < threshold and position < len(deck):
            got.append(deck[position])
            total += deck[position]
            position += 1
        notes.append(sorted(got))
    return notes


def spy(request, start, n):
    if n == 1:
        tc = start.time_control
        print(f"SPY start decision_ms={tc.decision_ms} game_bank_ms={tc.game_bank_ms} "
              f"autoplay_forced={start.autoplay_forced} process={PROCESS}", file=sys.stderr,
              flush=True)
        state = request.state
        deal = ";".join(",".join(map(str, sorted(c.notes))) for c in state.casinos)
        remembered = SEEN_FILE.read_text().splitlines() if SEEN_FILE.exists() else []
        if deal in seen or deal in remembered:
            print("SPY REPEATED DEAL", file=sys.stderr, flush=True)
        seen.add(deal)
        with SEEN_FILE.open("a") as out:
            out.write(deal + "\n")
        if state.round == 0 and not request.roll.neutral and not request.roll.big:
            observed_roll = bytes(request.roll.ordinary)
            observed_notes = [sorted(c.notes) for c in state.casinos[:6]]
            rules = preset("classic")
            for seed in candidates(start):
                # A seed counts as found only when it gives both the roll (as a multiset: the
                # protocol sends faces sorted) and the funded notes: thousands of candidates
                # would otherwise match eight dice by chance now and then.
                roll = DiceStream(seed, f"dice/{start.your_seat}").take(len(observed_roll))
                if sorted(roll) != sorted(observed_roll):
                    continue
                deck = shuffled_deck(seed, rules.deck())
                if funded(deck, 6, start.rules.threshold or 50_000) == observed_notes:
                    print(f"SPY PREDICTED roll and notes from seed {seed}", file=sys.stderr,
                          flush=True)
                    break
    return botlib.honest(request, start, n)


botlib.run("spy", spy)

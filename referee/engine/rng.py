"""Seeded randomness (R50): independent streams derived from the game seed with SHA-512.

Every random draw of a game comes from SHA-512, so any third party can reproduce a game in any
language, and no Python or platform version changes a result. A *stream* named `label` is the
concatenation of SHA-512("lasvegas/v1/{seed}/{label}/{block}") for block = 0, 1, 2, ... where
`seed` is the game seed in decimal (0 <= seed < 2**64).

* **Dice.** Seat `s` rolls from the stream labelled `dice/{s}`; the neutral pre-roll (R41) from
  `dice/neutral`. A stream byte b < 252 gives the face (b mod 6) + 1; bytes 252..255 are
  skipped. Each roll takes the next faces of its stream in order: first the seat's ordinary
  dice, then its big dice, then the neutral dice it holds.
* **Deck.** The starting deck in canonical order (ascending value, R2) is sorted by one key per
  note: note i's key is the big-endian unsigned 32-bit integer at bytes 4i..4i+3 of the stream
  labelled `deck`; ties keep canonical order. The first note after sorting is the top of the deck.

Each seat's dice depend only on the seed and that seat's own placements, never on what another
seat does: duplicate play (R50) replays a seed with the bots in other seats and every seat
position sees the same dice.
"""

from __future__ import annotations

import struct
from hashlib import sha512

# Byte -> face table for bytes.translate; bytes 252..255 are deleted (rejection sampling).
_FACES = bytes((b % 6) + 1 if b < 252 else 0 for b in range(256))
_REJECTED = bytes(range(252, 256))
SEED_LIMIT = 2**64


def check_seed(seed: int) -> int:
    """Return `seed` if it is a valid game seed (0 <= seed < 2**64), else raise ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"a game seed must be a whole number from 0 to 2**64-1, got {seed!r}")
    return seed


def stream_block(seed: int, label: str, block: int) -> bytes:
    """Block `block` (64 bytes) of the stream `label`."""
    return sha512(f"lasvegas/v1/{seed}/{label}/{block}".encode()).digest()


class DiceStream:
    """The faces (1..6) of one dice stream, produced block by block as rolls need them."""

    __slots__ = ("seed", "label", "faces", "blocks")

    def __init__(self, seed: int, label: str) -> None:
        self.seed, self.label = seed, label
        self.faces = b""  # produced but not yet used
        self.blocks = 0

    def take(self, count: int) -> bytes:
        """The next `count` faces, as a bytes object of values 1..6."""
        faces = self.faces if len(self.faces) >= count else self.extend(count)
        self.faces = faces[count:]
        return faces[:count]

    def extend(self, count: int) -> bytes:
        """Produce blocks until at least `count` unused faces are ready; return them all."""
        faces = self.faces
        while len(faces) < count:
            faces += stream_block(self.seed, self.label, self.blocks).translate(_FACES, _REJECTED)
            self.blocks += 1
        self.faces = faces
        return faces


def shuffled_deck(seed: int, canonical: list[int]) -> list[int]:
    """The deck order for `seed`: `canonical` sorted by its stream keys, top of deck first."""
    n = len(canonical)
    prefix = f"lasvegas/v1/{seed}/deck/"
    blocks = range((4 * n + 63) // 64)
    stream = b"".join([sha512(f"{prefix}{b}".encode()).digest() for b in blocks])
    keys = struct.unpack(f">{n}I", stream[: 4 * n])
    return [canonical[i] for i in sorted(range(n), key=keys.__getitem__)]

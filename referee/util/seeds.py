"""Seed derivation.

Two kinds of seed live here:

* `derive_seed` turns a public number and labels into a 64-bit seed with SHA-512. Anyone who
  knows the number can compute the result: fine for the referee's own substitute moves and for
  `referee check`, not for the dice of a game a bot takes part in.
* A **secret** (a league's, or `referee match`'s) is a number of at least `SECRET_BITS` random
  bits, drawn by `draw_secret` unless the organiser gives one. Game seeds and game ids come from
  it through keyed BLAKE2b (`keyed_seed`, `opaque_id`), a one-way function: a bot that sees game
  ids and plays games learns nothing that leads back to the secret or to another game's seed
  (R51). The derivation is documented in docs/replay-format.md so that a league can be
  reproduced from its stored secret.
"""

from __future__ import annotations

import secrets
from hashlib import blake2b, sha512

from referee.util.numbers import is_whole

SECRET_BITS = 128            # bits drawn for a new secret
WEAK_SECRET_LIMIT = 2**64    # a given secret below this could be found by trying them all
SECRET_LIMIT = 2**256        # secrets are keys of 32 bytes


def derive_seed(base: int, *labels: object) -> int:
    """A 64-bit seed derived from `base` and `labels`, stable on every platform (public:
    anyone who knows `base` can compute it).

    The seed is the first 8 bytes (big-endian) of SHA-512("referee/{base}/{label}/...").
    """
    text = "/".join(["referee", str(base), *map(str, labels)])
    return int.from_bytes(sha512(text.encode()).digest()[:8], "big")


def draw_secret() -> int:
    """A new secret of `SECRET_BITS` random bits from the operating system."""
    return secrets.randbits(SECRET_BITS)


def check_secret(secret: int) -> int:
    """Return `secret` if it is a whole number from 0 to 2**256-1, else raise ValueError."""
    if isinstance(secret, bool) or not isinstance(secret, int) or not 0 <= secret < SECRET_LIMIT:
        raise ValueError(f"a seed must be a whole number from 0 to 2**256-1, got {secret!r}")
    return secret


def weak_secret_warning(secret: int) -> str | None:
    """A warning for a secret small enough to be searched, else None."""
    if secret < WEAK_SECRET_LIMIT:
        return (f"warning: seed {secret} has fewer than 64 bits: a bot could try every seed "
                f"up to it and rebuild the deck and the dice; leave --seed out to draw a "
                f"secret one")
    return None


def _keyed(secret: int, labels: tuple[object, ...], size: int) -> bytes:
    """BLAKE2b keyed with the 32-byte big-endian secret, of "lasvegas/secret/v1/{labels}"."""
    key = check_secret(secret).to_bytes(32, "big")
    text = "/".join(["lasvegas/secret/v1", *map(str, labels)])
    return blake2b(text.encode(), key=key, digest_size=size).digest()


def keyed_seed(secret: int, *labels: object) -> int:
    """A 64-bit seed from `secret` and `labels` that reveals nothing about the secret."""
    return int.from_bytes(_keyed(secret, labels, 8), "big")


def opaque_id(secret: int, *labels: object) -> str:
    """A game id ("g" and 16 hex digits) from `secret` and `labels`, independent of every seed
    derived from the same secret."""
    return "g" + _keyed(secret, ("id", *labels), 8).hex()


def request_id(seed: int, index: int) -> int:
    """The id of a game's `index`-th decision request, from the game's seed: keyed BLAKE2b
    (key: the seed) of the index, 62 bits of it with bit 62 set, so every id is in
    [2**62, 2**63). Ids a bot has seen say nothing about the next one, yet a game played again
    from its seed asks with the same ids (bots may seed their own randomness from them)."""
    bits = int.from_bytes(_keyed(seed, ("request", index), 8), "big")
    return (1 << 62) | (bits >> 2)


class RequestIds:
    """`request_id(seed, index)` of one game's seed, its key made once: the referee asks for
    one per decision."""

    __slots__ = ("_key",)

    def __init__(self, seed: int) -> None:
        self._key = check_secret(seed).to_bytes(32, "big")

    def __call__(self, index: int) -> int:
        text = f"lasvegas/secret/v1/request/{index}"   # _keyed's text of ("request", index)
        bits = int.from_bytes(blake2b(text.encode(), key=self._key, digest_size=8).digest(),
                              "big")
        return (1 << 62) | (bits >> 2)


def parse_secret(value: object, where: str) -> int:
    """A secret from an int or a decimal string (TOML integers stop at 2**63-1)."""
    if isinstance(value, str) and is_whole(value.strip(), digits=78):
        value = int(value.strip())
    try:
        return check_secret(value)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None

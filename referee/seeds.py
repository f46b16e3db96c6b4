"""Seed derivation: every game seed of a run comes from one user-given seed and a label."""

from __future__ import annotations

from hashlib import sha512


def derive_seed(base: int, *labels: object) -> int:
    """A 64-bit game seed derived from `base` and `labels`, stable on every platform.

    The seed is the first 8 bytes (big-endian) of SHA-512("referee/{base}/{label}/...").
    """
    text = "/".join(["referee", str(base), *map(str, labels)])
    return int.from_bytes(sha512(text.encode()).digest()[:8], "big")

"""Deterministic chance derived from a game's secret seed and the position of the decision in its history.

Every draw is HMAC-SHA256(seed, "<position>:<counter>"), so the same seed and history give the same outcomes
on every machine and Python version (no ``hash()``, no ``random`` module state). Outcomes are always written
into events; ``evolve`` never draws.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def seed_hash(seed: bytes) -> str:
    """What is published at creation: sha256 of the seed, hex."""
    return hashlib.sha256(seed).hexdigest()


class Chance:
    """A source of chance outcomes for one decision of one game."""

    __slots__ = ("_seed", "_position", "_counter")

    def __init__(self, seed: bytes, position: int) -> None:
        self._seed = seed
        self._position = position
        self._counter = 0

    @property
    def seed(self) -> bytes:
        return self._seed

    def _next64(self) -> int:
        msg = f"{self._position}:{self._counter}".encode()
        self._counter += 1
        return int.from_bytes(hmac.new(self._seed, msg, hashlib.sha256).digest()[:8], "big")

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self._next64()
            if x < limit:
                return x % n

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        return tuple(1 + self.below(sides) for _ in range(count))

    def shuffled(self, items: Sequence[T]) -> tuple[T, ...]:
        """Fisher-Yates over a copy."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return tuple(out)

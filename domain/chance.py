"""Deterministic chance derived from a game's secret seed and the position of the decision in its history.

Every draw is HMAC-SHA256(seed, "<position>:<counter>"), so the same seed and history give the same outcomes
on every machine and Python version (no ``hash()``, no ``random`` module state). Outcomes are always written
into events; ``evolve`` never draws.

Fair chance (issue #10; README, Fair chance): the seed every draw after the start uses is ``game_seed``, the
server's secret seed (committed by ``seed_hash`` at creation) mixed with every seat's entropy (given when it
joined, published in its ``SeatJoined``), fixed when the game starts; ``GameStarted`` commits to it
(``chance_hash``). Once the game ends and its server seed is revealed, anyone recomputes it (``check_mix``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


SEED_BYTES = 32  # the server's seeds (secrets.token_bytes): no one finds one from its sha256 by trying values
ENTROPY_BYTES = 32  # a seat's entropy: 64 hex digits
_MIX = b"souk.chance.v1"


def seed_hash(seed: bytes) -> str:
    """What is published at creation: sha256 of the seed, hex."""
    return hashlib.sha256(seed).hexdigest()


def game_seed(server_seed: bytes, entropies: Sequence[str]) -> bytes:
    """The seed of a game's chance: HMAC-SHA256 keyed by the server's seed over every seat's entropy (hex, in seat
    order, "" for a seat that gave none). When no seat gave any, it is the server's seed itself (as in every game
    before fair chance): there is nothing to mix. Derived once per seed and entropies (every decision of a game
    asks for it again: ``_mixed``)."""
    if not any(entropies):
        return server_seed
    return _mixed(server_seed, tuple(entropies))


@functools.lru_cache(maxsize=4096)
def _mixed(server_seed: bytes, entropies: tuple[str, ...]) -> bytes:
    return hmac.new(server_seed, _MIX + b"|" + "|".join(entropies).encode(), hashlib.sha256).digest()


def chance_hash(server_seed: bytes, entropies: Sequence[str]) -> str:
    """What ``GameStarted`` publishes: sha256 of ``game_seed``, hex; "" when no seat gave entropy (the chance is
    then the server's seed, whose hash GameCreated published)."""
    return seed_hash(game_seed(server_seed, entropies)) if any(entropies) else ""


def check_mix(server_seed: bytes, committed: str, entropies: Sequence[str], published: str) -> list[str]:
    """The problems (none: it holds) of a game's chance, from what its events publish: the server seed revealed
    at the end against its commitment at creation (``committed``), and the game's seed it gives with the seats'
    entropy against the commitment of ``GameStarted`` (``published``)."""
    problems = []
    if seed_hash(server_seed) != committed:
        problems.append("the server seed does not match the commitment published at creation")
    if chance_hash(server_seed, entropies) != published:
        problems.append("the game's chance is not the server seed mixed with the seats' entropy it started with")
    return problems


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

    def mixed(self, entropies: Sequence[str]) -> Chance:
        """The same decision's chance from ``game_seed(self.seed, entropies)``."""
        return Chance(game_seed(self._seed, entropies), self._position)

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

"""A bounded map that forgets the least recently used entry: the engine's and the projector's game caches."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        self._items.pop(key, None)

    def keys(self) -> list[K]:
        return list(self._items)

    def drop(self, unwanted: Callable[[K], bool]) -> None:
        """Forgets every entry whose key is ``unwanted`` (an engine's or a projector's games of a partition it
        takes: ``services.store.leases``)."""
        for key in [k for k in self._items if unwanted(k)]:
            del self._items[key]

    def clear(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

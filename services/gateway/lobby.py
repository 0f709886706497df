"""The lobby's reads: one lobby per partition in the read store (``keys.lobby``, ``keys.lobby_index``: each in its
partition's slot, written by the projector's script with the game's read models), merged here into one listing, in
the order one index would give: newest first (the creation time, the index's score, descending), then the game id
descending for games created at the same instant (as ZREVRANGEBYSCORE orders them).

A page of ``limit`` games reads at most ``limit + 1`` past the cursor from each partition's index (one pipeline of
P reads, more only when a partition holds more games created at the cursor's instant than a read takes), merges
them and keeps the first ``limit + 1``: the one past the page says there is a next one. Its entries are read in
one pipeline too, one HMGET per partition they are in.
"""

from __future__ import annotations

from typing import Any

from services.store import keys

EXTRA = 16  # read a few more than the page from each index: the cursor's own games (its instant) are skipped


async def listed(views: Any, status: str | None, game: str | None, top: str, after: str | None,
                 limit: int) -> list[tuple[bytes, float]]:
    """Up to ``limit + 1`` listed games (id, creation time) with this status and game (None: any), newest first,
    from ``top`` (a score, or "+inf") down, those at ``top`` with an id of at least ``after`` (the cursor's game
    and those before it) left out."""
    want, num = limit + 1, limit + EXTRA
    found: dict[int, list[tuple[bytes, float]]] = {p: [] for p in keys.PARTITIONS}
    offsets = dict.fromkeys(keys.PARTITIONS, 0)
    pending = list(keys.PARTITIONS)
    while pending:
        pipe = views.pipeline(transaction=False)
        for p in pending:
            pipe.zrevrangebyscore(keys.lobby_index(p, status, game), top, "-inf", start=offsets[p], num=num,
                                  withscores=True)
        more = []
        for p, batch in zip(pending, await pipe.execute()):
            full = len(batch) == num
            offsets[p] += len(batch)
            if after is not None:  # the games listed up to the cursor share its score: skip them
                batch = [(g, sc) for g, sc in batch if not (repr(sc) == top and g.decode() >= after)]
            found[p] += batch
            if full and len(found[p]) < want:
                more.append(p)  # a full read, and not enough yet: the next one
        pending = more
    merged = [entry for batch in found.values() for entry in batch]
    if len(found) > 1:
        merged.sort(key=lambda entry: (entry[1], entry[0]), reverse=True)
    return merged[:want]


async def entries(views: Any, game_ids: list[bytes]) -> list[bytes | None]:
    """The lobby entries (JSON) of these games, in their order (None: not there), from their partitions' lobbies."""
    if not game_ids:
        return []
    by_partition: dict[int, list[int]] = {}
    for i, game_id in enumerate(game_ids):
        by_partition.setdefault(keys.partition(game_id.decode()), []).append(i)
    pipe = views.pipeline(transaction=False)
    for p, places in by_partition.items():
        pipe.hmget(keys.lobby(p), [game_ids[i] for i in places])
    out: list[bytes | None] = [None] * len(game_ids)
    for places, raws in zip(by_partition.values(), await pipe.execute()):
        for i, raw in zip(places, raws):
            out[i] = raw
    return out
